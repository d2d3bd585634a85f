"""Every function and method of the Python API takes its arguments as the command line
takes its flags: an unknown keyword, one too many by position or one missing is refused
in one line naming what the function takes (errors.PosvizInputError, as ``posviz sweep
--colour 1`` is refused with status 2), never Python's own TypeError from inside."""
from __future__ import annotations

import functools
import inspect
import os

from ..errors import PosvizInputError, argument

_ROLES = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def takes(*, options: tuple[str, ...] = (), also: tuple[str, ...] = ()):
    """Refuse the calls Python would refuse with a TypeError, in the API's words.

    ``options``: the keywords a function's ``**options`` takes (the built-in model's
    settings), listed after its own arguments; ``also``: keywords its body refuses in
    words of its own (``order`` of a sweep, ``seed`` of a probe), let through."""
    def wrap(function):
        signature = inspect.signature(function)
        params = [p for p in signature.parameters.values() if p.name != "self"]
        named = [p.name for p in params if p.kind not in _ROLES]
        by_position = [p.name for p in params if p.kind in (
            inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        needed = [p.name for p in params if p.default is p.empty and p.kind not in _ROLES]
        method = next(iter(signature.parameters), "") == "self"
        known = set(named) | set(options) | set(also)
        listed = ", ".join(named) + (f", and the built-in model's {', '.join(options)}"
                                     if options else "") or "no arguments"

        @functools.wraps(function)
        def checked(*args, **kwargs):
            call = (f"{type(args[0]).__name__}.{function.__name__}" if method and args
                    else f"posviz.{function.__name__}")
            given = args[1:] if method else args
            if len(given) > len(by_position):
                most = (f"at most {len(by_position)} by position ("
                        f"{', '.join(by_position)}), got {len(given)}: give the others by "
                        f"name" if by_position else f"no arguments by position (got "
                        f"{len(given)})")
                raise PosvizInputError(f"{call} takes {most}")
            unknown = [name for name in kwargs if name not in known]
            if unknown:
                raise PosvizInputError(f"unknown option {unknown[0]!r} of {call} (it takes "
                                       f"{listed})")
            twice = [name for name in by_position[:len(given)] if name in kwargs]
            if twice:
                raise PosvizInputError(f"{call} was given {twice[0]} twice: by position "
                                       f"and by name")
            missing = [name for name in needed
                       if name not in kwargs and name not in by_position[:len(given)]]
            if missing:
                raise PosvizInputError(f"{call} needs {', '.join(missing)}")
            return function(*args, **kwargs)
        return checked
    return wrap


def checks_calls(cls):
    """``cls`` with each of its public methods checking its call (``takes``): a class
    of the API's results, as the functions that return it."""
    for name, value in list(vars(cls).items()):
        if inspect.isfunction(value) and not name.startswith("_") and not hasattr(
                value, "__wrapped__"):
            setattr(cls, name, takes()(value))
    return cls


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


def check_weights(weights) -> None:
    """The built-in model's ``weights``: "random", "trained" or a checkpoint folder."""
    check_type("weights", weights, (str, os.PathLike), "random, trained or a checkpoint "
               "folder")


def check_say(say) -> None:
    """``say``: None or a callable told each stage."""
    if say is not None and not callable(say):
        raise PosvizInputError(f"{argument('say')} must be None or a callable told each "
                               f"stage (got {say!r})")
