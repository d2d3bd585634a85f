"""The text a command reads: ``--text TEXT`` or ``--text-file FILE`` ('-': standard
input), each given once (the order's ``--order`` too)."""
from __future__ import annotations

import argparse
import sys

from ..analysis.experiments.texts import read_utf8
from ..errors import PosvizInputError


class Once(argparse._StoreAction):
    """The text or the order, refused when given twice: argparse kept the last of two
    --order silently. (The model's flags keep argparse's way, the last given wins, so a
    command line can override a flag given before it.)"""

    _in = None                                # the namespace it was last given to

    def __call__(self, parser, namespace, values, option_string=None):
        if self._in is namespace:
            raise PosvizInputError(f"{option_string} was given twice: give it once")
        self._in = namespace
        super().__call__(parser, namespace, values, option_string)


def add_text_arguments(parser, text_help: str = "the sentence to tokenize (default: the "
                       "example sentence the window opens with)") -> None:
    """--text TEXT, or --text-file FILE ('-': standard input) holding it whole."""
    parser.add_argument("--text", action=Once, help=text_help)
    parser.add_argument("--text-file", metavar="FILE", action=Once,
                        help="read the text from FILE, whole ('-': standard input), "
                             "instead of --text: for texts too long for a command line")


def text_flag(args: argparse.Namespace) -> str | None:
    """The flag that gave the text as written ("--text", "--text-file FILE"), which its
    refusals name; None when the command took none (the example sentence, --texts)."""
    if getattr(args, "text_file", None) is not None:
        return f"--text-file {args.text_file}"
    return "--text" if getattr(args, "text", None) is not None else None


def read_text_file(args: argparse.Namespace) -> None:
    """--text-file FILE (or '-') read into ``args.text``; refused beside --text."""
    path = getattr(args, "text_file", None)
    if path is None:
        return
    if args.text is not None:
        raise PosvizInputError("give --text or --text-file, not both")
    if path == "-":
        args.text = standard_input("--text-file")
    try:
        if path != "-":
            with open(path, "rb") as handle:
                args.text = read_utf8(handle, f"--text-file {path}")
    except UnicodeDecodeError:
        raise PosvizInputError(f"--text-file {path} is not UTF-8 text") from None
    except OSError as error:          # named by its flag, as --texts FILE is
        raise PosvizInputError(f"--text-file {path}: {error.strerror or error}") from None
    if not args.text.strip():
        raise PosvizInputError(f"--text-file {path} holds no text")


def standard_input(flag: str) -> str:
    """Standard input, whole, for ``flag -``; refused when it is a terminal (nothing
    piped in: the command would wait without a word) or not UTF-8 text."""
    isatty = getattr(sys.stdin, "isatty", None)
    if sys.stdin is None or (isatty and isatty()):
        raise PosvizInputError(f"{flag} - reads standard input, which is a terminal here: "
                               f"pipe the text in (... | posviz ... {flag} -) or give a file")
    try:                # its bytes, decoded strictly: the locale's reading kept an
        # undecodable byte as a lone surrogate, a traceback deep in the model
        raw = getattr(sys.stdin, "buffer", None)
        return read_utf8(raw, f"{flag} -") if raw is not None else sys.stdin.read()
    except UnicodeDecodeError:
        raise PosvizInputError(f"{flag} - is not UTF-8 text") from None
