"""``posviz order-use``: does a causal language model use the order of its context?

    posviz order-use [--model NAME|PATH | [--weights trained|PATH] --pe KIND] [--windows N]
                     [--length N] [--json]

The last token's perplexity on held-out windows, in their order and with the context
before it shuffled (analysis.experiments.order_use).
"""
from __future__ import annotations

import json

from ..errors import PosvizInputError
from ..models.training.order_use import KEPT, WINDOWS
from .options import add_model_arguments, builtin_config, check_model_flags, load_model


NOT_APPLYING = {"--text": "text", "--text-file": "text_file", "--order": "order",
                "--positions": "mode", "--offset": "offset", "--literal": "literal"}


def add_command(subparsers) -> None:
    parser = subparsers.add_parser(
        "order-use", help="does a causal language model use token order: the last "
                          "token's perplexity with its context shuffled, against the "
                          "original order, on the zoo's held-out text",
        description="The perplexity of the last token of held-out windows (the trained "
                    "checkpoints' held-out books of the King James Bible), in their "
                    "order and with every token before it shuffled (all but the last; "
                    "all but the last two); their ratio is the model's use of order. "
                    "A trained built-in model (its --pe; --weights trained, the "
                    "default, or a checkpoint folder) or a causal --model.")
    add_model_arguments(parser)
    parser.set_defaults(weights=None)        # trained for the built-in model, as the API
    parser.add_argument("--windows", type=int, default=None,
                        help=f"held-out windows measured (default: {WINDOWS}, or all the "
                             f"held-out text makes if fewer; more is refused)")
    parser.add_argument("--length", type=int, default=None,
                        help="slots a window holds (default: the checkpoint's training "
                             "length; 128 for a --model)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    # given or not, as set here: a text, an order and the positions it would run them at
    parser.set_defaults(func=run, **{name: None for name in NOT_APPLYING.values()})


def run(args) -> int:
    given = [flag for flag, value in NOT_APPLYING.items() if vars(args).get(value) is not None
             and not (flag == "--text" and args.text_file is not None)]  # read into text
    if given:
        raise PosvizInputError(f"{', '.join(given)} {'does' if len(given) == 1 else 'do'} "
                               f"not apply to order-use, which reads the held-out text and "
                               f"shuffles the context of its windows: it takes no text, "
                               f"order or positions")
    from ..api import order_use
    from ..api.experiments import check_order_use
    check_order_use(args.model, args.windows, args.length, args.weights)
    args.weights = args.weights or ("random" if args.model else "trained")
    check_model_flags(args)
    if not args.model and "mask" not in vars(args):
        args.mask = "causal"                 # the zoo's checkpoints are causal
    model = load_model(args, None if args.model else builtin_config(args))
    used = order_use(model, windows=args.windows, length=args.length)
    use, result = used.result, used.to_dict()
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    from ..document.provenance import made_by
    print(made_by(result["provenance"]))
    print(f"{result['model']}: the last token's perplexity over {use.windows} held-out "
          f"windows of {use.length} slots" + (" (a start token at slot 0)"
                                                if use.start_token else "")
          + (", all the held-out text makes" if args.windows is None
             and use.windows < WINDOWS else ""))
    print(f"  in order:                      {use.original:8.2f}")
    for name in KEPT:
        print(f"  shuffled, {name.replace('_', ' ') + ':':<21}{use.shuffled[name]:8.2f} "
              f"(× {use.shuffled[name] / use.original:.3f})")
    return 0
