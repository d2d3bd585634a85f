"""Every function and method of the Python API takes its arguments as the command line
takes its flags: an unknown keyword, one too many by position or one missing is refused
in one line naming what the function takes (errors.takes, as ``posviz sweep --colour 1``
is refused with status 2), and an argument of the wrong type in one line naming it
(errors.PosvizInputError), never Python's own TypeError from inside."""
from __future__ import annotations

import os

from ..errors import PosvizInputError, argument, checks_calls, takes

__all__ = ["takes", "checks_calls", "check_type", "check_whole", "check_weights",
           "check_say"]


def check_type(name: str, value, kinds, what: str) -> None:
    """PosvizInputError unless ``value`` is one of ``kinds`` (None among them when None
    is taken), in one line naming the argument and ``what`` it takes."""
    if not isinstance(value, kinds) or isinstance(value, bool) and bool not in kinds:
        raise PosvizInputError(f"{argument(name)} must be {what} (got "
                               f"{type(value).__name__})")


def check_whole(name: str, value, low: int = 0) -> None:
    """PosvizInputError unless ``value`` is a whole number of at least ``low``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < low:
        raise PosvizInputError(f"{argument(name)} must be a whole number of at least "
                               f"{low} (got {value!r})")


def check_flag(name: str, value) -> None:
    """PosvizInputError unless ``value`` is True or False, in the words an option of the
    built-in model (``literal``, ``residual``) is refused in: ``offline="no"`` read as
    true."""
    if not isinstance(value, bool):
        raise PosvizInputError(f"{argument(name)} must be true or false (got {value!r})")


def check_weights(weights) -> None:
    """The built-in model's ``weights``: "random", "trained" or a checkpoint folder."""
    check_type("weights", weights, (str, os.PathLike), "random, trained or a checkpoint "
               "folder")


def check_say(say) -> None:
    """``say``: None or a callable told each stage."""
    if say is not None and not callable(say):
        raise PosvizInputError(f"{argument('say')} must be None or a callable told each "
                               f"stage (got {say!r})")
