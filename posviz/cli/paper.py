"""``posviz paper``: a published claim about positions, checked on the built-in model.

    posviz paper NAME [--weights random|trained] [--json]
        NAME: haviv2022, chi2023, rope-decay, alibi-slopes, sinha2022 (random weights:
        what follows from the architecture); press2022, haviv2022 --weights trained (the
        shipped trained checkpoints)
"""
from __future__ import annotations

import json
import textwrap

from ..analysis.experiments.papers import PAPERS, PRESETS, TRAINED_PRESETS


def add_command(subparsers) -> None:
    parser = subparsers.add_parser(
        "paper", help="check a paper's claim: its citation, what it reports, what posviz "
                      "measures")
    parser.add_argument("name", metavar="NAME", help=f"one of {', '.join(PAPERS)}")
    parser.add_argument("--weights", choices=("random", "trained"), default=None,
                        help=f"the built-in model's weights: random (seeded: "
                             f"{', '.join(PRESETS)}) or the shipped trained checkpoints "
                             f"({', '.join(TRAINED_PRESETS)}) (default: random where the "
                             f"paper's check has it)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def wrap(label: str, text: str) -> str:
    return textwrap.fill(text, 88, initial_indent=label, subsequent_indent=" " * len(label))


def run(args) -> int:
    from ..analysis.experiments.papers import check_paper
    check = check_paper(args.name, weights=args.weights)
    if args.json:
        print(json.dumps(check.to_dict(), indent=2))
        return 0
    print("\n".join([wrap("paper:    ", check.citation), wrap("reports:  ", check.reports),
                     wrap("measures: ", check.measures), f"weights:  {check.weights}",
                     wrap("values:   ", json.dumps(check.values)),
                     f"holds here: {'yes' if check.holds else 'NO'}"]))
    return 0
