"""``posviz probe``: per layer, how well absolute position is read off the hidden states.

    posviz probe [model options] [--texts FILE] [--folds K] [--features linear|quadratic|mlp]
                 [--json]
"""
from __future__ import annotations

import json

from ..analysis.experiments.probe import FEATURES
from ..errors import PosvizInputError
from ..models.trace import layer_label
from .options import progress
from .sweep import (add_experiment_arguments, experiment_model, experiment_texts, hide,
                    refuse_order, refuse_seed)


def add_command(subparsers) -> None:
    parser = subparsers.add_parser(
        "probe",
        help="a ridge probe of absolute position per layer, held out by text")
    add_experiment_arguments(parser, "a file of texts, one a line ('-': standard input; "
                                     "default: generated texts of made-up words, enough "
                                     "for the features)")
    parser.add_argument("--folds", type=int, default=5,
                        help="how many groups of texts are held out in turn (default: 5)")
    parser.add_argument("--features", choices=FEATURES, default="linear",
                        help="what reads position: a ridge regression of the hidden "
                             "state, or also of its squares (which lets it read a norm), "
                             "or a small MLP (one hidden layer of 64) (default: linear)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    hide(parser, "order", "text", "text_file", "literal")      # refused below
    parser.set_defaults(func=run)


def run(args) -> int:
    from ..api.runs import refuse_literal
    refuse_order(args)
    refuse_seed(args)
    refuse_literal(args.literal, "probe")
    if args.text is not None:
        raise PosvizInputError("the probe holds whole texts out, so it needs several: "
                               "give --texts FILE (one a line) instead of --text")
    if args.folds < 2:
        raise PosvizInputError(f"--folds must be at least 2 (got {args.folds})")
    texts = None if args.texts is None else experiment_texts(args)
    model, where = experiment_model(args, texts, folds=args.folds)
    from ..api import probe
    result = probe(texts, model=model, features=args.features, folds=args.folds,
                   positions=where.mode, offset=where.offset, literal=where.literal,
                   progress=lines(args), say=progress(args))
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
        return 0
    from ..document.provenance import made_by
    print(made_by(result.provenance))
    print(f"position probe ({result.features}, {result.width:,} features): {result.tokens:,} "
          f"tokens of {result.texts:,} texts, {result.folds} folds held out by text")
    if result.generated:
        print(f"texts: generated, {result.generated}")
    if result.note:
        print(f"note: {result.note}")
    print("\nheld out: R² and mean absolute error of the predicted position\n")
    print("layer      R²     MAE  chance MAE")
    for row in result.layers:             # layer 0, the input to block 1, is "in" as
        print(f"{layer_label(row.layer):>5} {row.r2:>7.3f} {row.mae:>7.2f} "   # the plots say
              f"{row.chance_mae:>11.2f}")
    print(f"\n{result.verdict}")             # the sentence under the GUI's probe plot
    return 0


def lines(args):
    """The probe's steps on a terminal (runtime.run_lines.RunLines): each stage (the
    texts run, then the fits) at its own pace ("step 12 of 16, about 1 s left" was
    told 2.7 s before the end, the fits timed at the forwards' pace), or None."""
    if progress(args) is None:
        return None
    from ..runtime.run_lines import RunLines
    return RunLines(unit="step")
