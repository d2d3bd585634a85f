"""Headless commands over the same core as the window, one module per command.

    posviz report [model options] --text TEXT [--order I,J,...] [--quiet] [--json]
                  (--text-file FILE, or '-' for standard input, instead of --text)
    posviz export [model options] --text TEXT --order I,J,... --out DIR [...]
    posviz sweep [model options] (--text T | --texts FILE) --kind KIND --count K --seed S
    posviz probe [model options] [--texts FILE] [--json]
    posviz paper NAME [--weights random|trained] [--json]
    posviz compare --pe KIND,KIND,... [--weights random|trained] [model options]
                   [--text T] [--order I,J,...] [--json] [--out DIR]
    posviz train [built-in model options] --out DIR [--corpus kjv|FILE] [--steps N] [...]
    posviz extend [--weights trained|PATH] [--factors 1,2,4,8] [--json]
    posviz order-use [--model NAME|PATH | --weights trained --pe KIND] [--json]
    posviz report|export --session FILE.posviz [...] [--save-session FILE.posviz]

Bad input exits with status 2 and one line on stderr, never a traceback; Ctrl+C stops
a command with one line and status 130. Building the
parser (``--help``, a usage error) imports neither torch nor Qt. On a terminal, stderr
also tells the steps of a run (loading a model, running each order) unless --quiet;
--progress tells them on a pipe or a log too, one plain line each. stdout holds only
the results.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import textwrap

from ..errors import COMMAND_LINE, PosvizInputError, naming_text, spoken_as
from ..models.options import OPTIONS
from . import compare, export, extend, order, paper, probe, report, sweep, train
from .options import bundled_models
from .texts import read_text_file, text_flag

EXIT_BAD_INPUT = 2
EXIT_BROKEN_PIPE = 128 + 13     # as a shell reports a command ended by SIGPIPE
EXIT_STOPPED = 128 + 2          # as a shell reports a command ended by SIGINT (Ctrl+C)
STOPPED = "posviz: stopped (Ctrl+C)"
# each adds its subparser; its ``run`` does the work
COMMANDS = (report, export, sweep, probe, paper, compare, train, extend, order)


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line (status 2), without the usage,
    in the words the Python API uses for the same mistake (api.arguments, Option.problem):
    what a flag takes, what a command needs, an unknown option named. A flag is taken
    by its whole name only: argparse's abbreviations read ``report --layer 3`` as
    ``--layers 3`` (a model of 3 layers, the layer asked for silently lost)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **{"allow_abbrev": False, **kwargs})

    def error(self, message: str):
        needed = message.removeprefix("the following arguments are required: ")
        if needed != message:
            raise PosvizInputError(f"{self.prog} needs {needed}")
        valueless = re.fullmatch(r"argument (\S+?)(?:/\S+)?: expected one argument", message)
        if valueless:
            raise PosvizInputError(f"{valueless[1]} needs a value")
        both = re.fullmatch(r"argument (\S+?)(?:/\S+)?: not allowed with argument (\S+?)"
                            r"(?:/\S+)?", message)             # a group's flags, given both
        if both:
            raise PosvizInputError(f"give {both[2]} or {both[1]}, not both")
        raise PosvizInputError(message)

    def parse_args(self, args=None, namespace=None):
        parsed, extra = self.parse_known_args(args, namespace)
        if extra:
            command = f"{self.prog} {getattr(parsed, 'command', '')}".strip()
            word = extra[0]
            said = (f"unknown option {word.split('=')[0]} of {command}"
                    if word.startswith("-") else f"unexpected argument {word!r} of "
                    f"{command}: a value follows its flag")
            raise PosvizInputError(f"{said} ({command} -h lists what it takes)")
        return parsed

    def _get_value(self, action, arg_string):
        try:
            return super()._get_value(action, arg_string)
        except argparse.ArgumentError:
            if action.type not in (int, float):
                raise
        option = OPTIONS.get(action.dest)
        what = "a whole number" if action.type is int else "a number"
        if option is not None and option.kind is action.type and option.low is not None:
            low, high = ((option.low, option.high) if action.type is int else
                         (f"{option.low:g}", f"{option.high:g}"))
            what += f" from {low} to {high}"
        raise PosvizInputError(f"{action.option_strings[0]} must be {what} (got "
                               f"{arg_string!r})")

    def _check_value(self, action, value):
        if action.choices is None or value in action.choices:
            return
        choices = ", ".join(map(str, action.choices))
        if not action.option_strings:                       # the command itself
            raise PosvizInputError(f"unknown command {value!r} of {self.prog} (commands: "
                                   f"{choices})")
        raise PosvizInputError(f"{action.option_strings[0]} must be one of {choices} (got "
                               f"{value!r})")


def _wrapped(text: str) -> str:
    """``text`` in lines of 79, an option never cut at its hyphen ("--reset- settings")."""
    return textwrap.fill(text, 79, break_on_hyphens=False, break_long_words=False)


def make_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="posviz", formatter_class=argparse.RawDescriptionHelpFormatter,
        description=_wrapped(
            "See how positional encodings break the permutation symmetry of "
            "self-attention. Without a command, posviz opens its window "
            "(posviz [FILE.posviz] [--text TEXT] [--model NAME|PATH] [--offline] "
            "[--device {auto,cpu,cuda,mps}] [--reset-settings] "
            "[--install-desktop | --uninstall-desktop])."),
        epilog=_wrapped("Run 'posviz report -h' or 'posviz export -h' for a command's "
                        f"options. Bundled models for --model: {bundled_models()}."))
    parser.add_argument("--version", action="version",
                        version=f"posviz {__import__('posviz').__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    for command in COMMANDS:
        command.add_command(commands)
    for command in commands.choices.values():
        command.add_argument("--progress", action="store_true",
                             help="report the steps of a run on stderr even when it is "
                                  "not a terminal (a log, a pipe), one plain line each")
    return parser


# "--order -1,0,2": argparse takes a value that starts with a dash and is not a plain
# number for an option, and would say only "expected one argument".
NEGATIVE_START = re.compile(r"-\d")


def attach_order_values(argv: list[str]) -> list[str]:
    """Join "--order -1,..." into "--order=-1,...", so parse_order can say what is wrong."""
    joined: list[str] = []
    for word in argv:
        if joined and joined[-1] == "--order" and NEGATIVE_START.match(word):
            joined[-1] = f"--order={word}"
        else:
            joined.append(word)
    return joined


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    from .. import boot
    boot.keep_heap_pages()           # before the first forward allocates anything
    try:
        with spoken_as(COMMAND_LINE):            # messages name flags, not arguments
            args = make_parser().parse_args(attach_order_values(argv))
            if args.progress and getattr(args, "quiet", False):      # every command
                raise PosvizInputError("--progress and --quiet contradict each other: "
                                       "give one")
            read_text_file(args)
            with naming_text(text_flag(args)), report.maps_removal_told(args):
                status = args.func(args)
                report.remove_maps(args)     # every run's maps still on disk, told
            return status
    except PosvizInputError as error:
        print(f"posviz: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        # Ctrl+C: the user stopped it, wherever it was (a forward inside torch, a fit):
        # one line, not the stack it was interrupted in
        return stopped()
    except BrokenPipeError:
        # the reader stopped reading (`posviz ... --json | head`): stop quietly, as other
        # command-line tools do, with the shell's status for it; what is still buffered
        # goes nowhere, so that flushing it at exit raises nothing
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
    except OSError as error:
        print(f"posviz: error: {error.strerror or error}: {error.filename or ''}".rstrip(": "),
              file=sys.stderr)
        return EXIT_BAD_INPUT


def stopped() -> int:
    """Say in one line that Ctrl+C stopped the command; its status (130)."""
    print(STOPPED, file=sys.stderr)
    return EXIT_STOPPED
