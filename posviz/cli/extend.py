"""``posviz extend``: the context-extension lab (analysis.experiments.extension).

    posviz extend [--weights trained|PATH] [--factors 1,2,4,8] [--json]
        the trained RoPE checkpoint past its training length (position interpolation,
        NTK-aware scaling, YaRN, DroPE) beside ALiBi, T5 and NoPE as trained
"""
from __future__ import annotations

import json

from ..errors import PosvizInputError


def add_command(subparsers) -> None:
    parser = subparsers.add_parser(
        "extend", help="the context-extension lab: the trained RoPE checkpoint past its "
                       "training length (PI, NTK-aware, YaRN, DroPE) beside ALiBi, T5 "
                       "and NoPE as trained: perplexity, retrieval, where attention goes",
        description="Run the trained RoPE checkpoint past its training length with "
                    "position interpolation, NTK-aware scaling, YaRN and DroPE, beside "
                    "the ALiBi, T5 and NoPE checkpoints as trained, at lengths from the "
                    "training length up: held-out perplexity, what a window's far half "
                    "adds to the prediction of its end (retrieval, nats a token), the "
                    "copying of a repeated random span, and the attention mass against "
                    "distance.")
    parser.add_argument("--weights", default="trained", metavar="trained|PATH",
                        help="trained: the shipped checkpoints; or a folder holding "
                             "checkpoints of the same kinds (rope, alibi, t5, none and "
                             "drope, as scripts/train-zoo writes them) (default: trained)")
    parser.add_argument("--factors", default="1,2,4,8", metavar="F,F,...",
                        help="the lengths, in training lengths (default: 1,2,4,8)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.set_defaults(func=run)


def factors_of(text: str) -> tuple[int, ...]:
    """``--factors`` as numbers (analysis.experiments.extension.check_factors checks
    them)."""
    try:
        return tuple(int(f) for f in text.split(","))
    except ValueError:
        raise PosvizInputError(f"--factors takes whole numbers such as 1,2,4,8 (got "
                               f"{text!r})") from None


def text_lines(result: dict) -> list[str]:
    """The lab's numbers as aligned tables, a row a method: perplexity, retrieval (with
    its standard error) and copy."""
    from .paper import table
    lengths = [str(n) for n in result["lengths"]]
    header = ["", *(f"{n} (trained)" if int(n) == result["train_length"] else n
                    for n in lengths)]
    methods = result["methods"]
    lines = [f"trained at {result['train_length']} tokens; {result['tokens']} held-out "
             f"predictions per length; {result['ran_on']}", "held-out perplexity:"]
    lines += table(header, [[name, *(row["perplexity"][n] for n in lengths)]
                            for name, row in methods.items()])
    lines.append("retrieval: what the window's far half adds to the prediction of its "
                 "last eighth, nats a token ± its standard error (0: far context unused):")
    lines += table(header, [[name, *(f"{row['retrieval'][n]:+.3f} ± "
                                     f"{row['retrieval_se'][n]:.3f}" for n in lengths)]
                            for name, row in methods.items()])
    lines.append(f"copy: share of a repeated {result['span']}-token random span "
                 f"predicted exactly:")
    lines += table(header, [[name, *(f"{row['copy'][n]:.3f}" for n in lengths)]
                            for name, row in methods.items()])
    return lines


def run(args) -> int:
    from ..api import extend
    from .options import progress
    result = extend(args.weights, factors=factors_of(args.factors),
                    say=progress(args)).to_dict()
    print(json.dumps(result, indent=2) if args.json else "\n".join(text_lines(result)))
    return 0
