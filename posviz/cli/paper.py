"""``posviz paper``: a published claim about positions, checked on weights it names.

    posviz paper NAME [--weights random|trained] [--json]
        NAME: one of papers.CATALOGUE; random weights test what the architecture
        implies, trained ones (the shipped checkpoints, the bundled pretrained models)
        the paper's claim about trained models
"""
from __future__ import annotations

import json
import textwrap

from ..analysis.experiments.papers import CATALOGUE, PRESETS, TRAINED_PRESETS


def add_command(subparsers) -> None:
    parser = subparsers.add_parser(
        "paper", help="check a paper's claim: its citation, what it reports, the weights "
                      "it ran on, the claim tested there, what posviz measures")
    parser.add_argument("name", metavar="NAME", help="one of: " + "; ".join(
        f"{p.name} ({p.title})" for p in CATALOGUE))
    parser.add_argument("--weights", choices=("random", "trained"), default=None,
                        help=f"random: the built-in model untrained, from its seed (what "
                             f"the architecture implies: {', '.join(PRESETS)}); trained: "
                             f"the shipped checkpoints and bundled pretrained models "
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
                     wrap("ran on:   ", f"{check.weights} weights: {check.ran_on}"),
                     wrap("tests:    ", check.tests),
                     wrap("measures: ", check.measures),
                     wrap("values:   ", json.dumps(check.values)),
                     f"holds here: {check.verdict}, for the claim under tests"]))
    return 0
