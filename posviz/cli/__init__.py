"""Headless commands over the same core as the window, one module per command.

    posviz report [model options] --text TEXT [--order I,J,...] [--json]
    posviz export [model options] --text TEXT --order I,J,... --out DIR [...]

Bad input exits with status 2 and one line on stderr, never a traceback. Building the
parser (``--help``, a usage error) imports neither torch nor Qt.
"""
from __future__ import annotations

import argparse
import sys

from ..core.errors import PosvizInputError
from . import export, report

EXIT_BAD_INPUT = 2
COMMANDS = (report, export)          # each adds its subparser; its ``run`` does the work


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line (status 2), without the usage."""

    def error(self, message: str):
        raise PosvizInputError(message)


def make_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="posviz",
        description="See how positional encodings break the permutation symmetry of "
                    "self-attention. Without a command, posviz opens its window "
                    "(options: --text TEXT, --reset-settings).",
        epilog="Run 'posviz report -h' or 'posviz export -h' for a command's options.")
    parser.add_argument("--version", action="version",
                        version=f"posviz {__import__('posviz').__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    for command in COMMANDS:
        command.add_command(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = make_parser().parse_args(argv)
        return args.func(args)
    except PosvizInputError as error:
        print(f"posviz: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as error:
        print(f"posviz: error: {error.strerror or error}: {error.filename or ''}".rstrip(": "),
              file=sys.stderr)
        return EXIT_BAD_INPUT
