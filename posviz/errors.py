"""The one error type a user can cause, bad input told in one line, and how any error
is told in one line.

A message names what the user gave as they gave it: a flag on the command line
(``--device cuda``), an argument in Python (``device='cuda'``). ``argument`` writes
either, as the entry point running now (``spoken_as``) speaks."""
from __future__ import annotations

from contextlib import contextmanager


class PosvizInputError(ValueError):
    """Input that cannot be computed (bad text, order, configuration or model folder).

    The message is one readable line meant for the user: the GUI shows it next to the
    field, the command line prints it and exits with status 2.
    """


class Refused(PosvizInputError):
    """A request refused by posviz.models.limits.guard before anything large was loaded or
    allocated; ``reason`` says which check: "memory", "positions", "device" or
    "count"."""

    def __init__(self, message: str = "", reason: str = ""):
        super().__init__(message)
        self.reason = reason


class Cancelled(Exception):
    """A computation stopped early because a newer request superseded it."""


def one_line(error: BaseException, width: int = 200) -> str:
    """The first line of an error's message (its type's name if it has none), at most
    ``width`` characters: short enough for a status line."""
    text = str(error).strip().splitlines()
    return (text[0] if text else type(error).__name__)[:width]


# -- naming what the user gave --------------------------------------------------------
PYTHON, COMMAND_LINE = "python", "command line"
_speaking = [PYTHON]                # the Python API's words unless an entry point says
# an argument whose flag is not its name with dashes
FLAG_OF = {"model_seed": "--model-seed", "encodings": "--pe", "positions": "--positions",
           "source": "--model"}


def speaks_flags() -> bool:
    """Do messages name command-line flags now (else Python arguments)?"""
    return _speaking[-1] == COMMAND_LINE


@contextmanager
def spoken_as(entry: str):
    """Messages inside name arguments as ``entry`` (PYTHON or COMMAND_LINE) writes them."""
    _speaking.append(entry)
    try:
        yield
    finally:
        _speaking.pop()


_UNSET = object()


def argument(name: str, value=_UNSET) -> str:
    """``name`` (a Python argument's name) with ``value`` as the user wrote it now:
    "--device cuda" on the command line, "device='cuda'" in Python."""
    if speaks_flags():
        flag = FLAG_OF.get(name, "--" + name.replace("_", "-"))
        return flag if value is _UNSET else f"{flag} {value}"
    return name if value is _UNSET else f"{name}={value!r}"
