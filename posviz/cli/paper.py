"""``posviz paper``: a published claim about positions, checked on the built-in model.

    posviz paper NAME [--json]       NAME: haviv2022, chi2023, rope-decay, alibi-slopes,
                                     sinha2022
"""
from __future__ import annotations

import json
import textwrap

PAPERS = ("haviv2022", "chi2023", "rope-decay", "alibi-slopes", "sinha2022")


def add_command(subparsers) -> None:
    parser = subparsers.add_parser(
        "paper", help="check a paper's claim: its citation, what it reports, what posviz "
                      "measures")
    parser.add_argument("name", metavar="NAME", help=f"one of {', '.join(PAPERS)}")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def wrap(label: str, text: str) -> str:
    return textwrap.fill(text, 88, initial_indent=label, subsequent_indent=" " * len(label))


def run(args) -> int:
    from ..analysis.experiments.papers import check_paper
    check = check_paper(args.name)
    if args.json:
        print(json.dumps(check.to_dict(), indent=2))
        return 0
    print("\n".join([wrap("paper:    ", check.citation), wrap("reports:  ", check.reports),
                     wrap("measures: ", check.measures),
                     wrap("values:   ", json.dumps(check.values)),
                     f"holds here: {'yes' if check.holds else 'NO'}"]))
    return 0
