"""The one error type a user can cause, bad input told in one line, and how any error
is told in one line (a call Python itself would refuse too: ``takes``).

A message names what the user gave as they gave it: a flag on the command line
(``--device cuda``), an argument in Python (``device='cuda'``). ``argument`` writes
either, as the entry point running now (``spoken_as``) speaks."""
from __future__ import annotations

import functools
import inspect
import signal
import threading
from contextlib import contextmanager


class PosvizInputError(ValueError):
    """Input that cannot be computed (bad text, order, configuration or model folder).

    The message is one readable line meant for the user: the GUI shows it next to the
    field, the command line prints it and exits with status 2.
    """


class Refused(PosvizInputError):
    """A request refused by posviz.models.limits.guard before anything large was loaded or
    allocated; ``reason`` says which check: "memory", "positions", "device" or
    "count". ``offset``: as TextRefused's."""

    def __init__(self, message: str = "", reason: str = "", offset: int | None = None):
        super().__init__(message)
        self.reason = reason
        self.offset = offset


class TextRefused(PosvizInputError):
    """The one text given refused as it is: empty, no tokens to show, more tokens than
    the model has positions. An entry point that took the text names it (naming_text);
    ``offset``: the first position, when the text alone fits the model's positions and it
    is the offset that pushes it past them: the offset is named instead."""

    def __init__(self, message: str = "", offset: int | None = None):
        super().__init__(message)
        self.offset = offset


class Cancelled(Exception):
    """A computation stopped early because a newer request superseded it."""


def one_line(error: BaseException, width: int = 200) -> str:
    """The first line of an error's message (its type's name if it has none), another
    library's at most ``width`` characters (cut with "…"): short enough for a status
    line. posviz's own is kept whole: the window cut an unsupported model's list of
    families at "…llama, mistral, mode" with no mark of the cut."""
    text = str(error).strip().splitlines()
    line = text[0] if text else type(error).__name__
    if isinstance(error, PosvizInputError) or len(line) <= width:
        return line
    return line[:width - 1] + "…"


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


def check_whole_number(name: str, value) -> None:
    """PosvizInputError unless ``value`` is a whole number (an int, not a bool): what the
    command line says of a flag's value that is not one ("--folds must be a whole number
    (got '2.5')"), before its range is checked, so both say the same of 2.5 or "3"."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise PosvizInputError(f"{argument(name)} must be a whole number (got {value!r})")


# -- a call Python itself would refuse, refused in one line -----------------------------
_ROLES = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def takes(*, options: tuple[str, ...] = (), also: tuple[str, ...] = ()):
    """Refuse the calls Python would refuse with a TypeError, in the API's words: an
    unknown keyword (naming what the function takes), too many by position, one given
    twice, one missing; as the command line refuses an unknown flag (posviz.cli).

    ``options``: the keywords a function's ``**options`` takes (the built-in model's
    settings), listed after its own arguments; ``also``: keywords its body refuses in
    words of its own (``order`` of a sweep, ``seed`` of a probe), let through. Which
    argument is given twice or missing is inspect.Signature.bind_partial's reading."""
    def wrap(function):
        signature = inspect.signature(function)
        params = [p for p in signature.parameters.values() if p.name != "self"]
        own = signature.replace(parameters=[p for p in params if p.kind not in _ROLES])
        by_position = [p.name for p in params if p.kind in (
            inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        method = next(iter(signature.parameters), "") == "self"
        known = set(own.parameters) | set(options) | set(also)
        listed = ", ".join(own.parameters) + (
            f", and the built-in model's {', '.join(options)}" if options else "") \
            or "no arguments"

        @functools.wraps(function)
        def checked(*args, **kwargs):
            call = (f"{type(args[0]).__name__}.{function.__name__}" if method and args
                    else f"posviz.{function.__name__}")
            given = args[1:] if method else args
            if len(given) > len(by_position):       # Python's words do not say how many
                most = (f"at most {len(by_position)} by position ("
                        f"{', '.join(by_position)}), got {len(given)}: give the others by "
                        f"name" if by_position else f"no arguments by position (got "
                        f"{len(given)})")
                raise PosvizInputError(f"{call} takes {most}")
            unknown = [name for name in kwargs if name not in known]
            if unknown:
                raise PosvizInputError(f"unknown option {unknown[0]!r} of {call} (it takes "
                                       f"{listed})")
            try:
                bound = own.bind_partial(*given, **{name: value for name, value in
                                                    kwargs.items() if name in own.parameters})
            except TypeError as error:  # left: one given by position and by name
                twice = next((name for name in by_position[:len(given)] if name in kwargs),
                             None)
                raise PosvizInputError(f"{call} was given {twice} twice: by position and "
                                       f"by name" if twice else f"{call}: {error}") from None
            missing = [p.name for p in own.parameters.values()
                       if p.default is p.empty and p.name not in bound.arguments]
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


# -- Ctrl+C raised where it is safe: not inside Qt --------------------------------------
class HeldInterrupt:
    """A Ctrl+C (SIGINT) held while Qt draws off screen (held_interrupt); ``check``
    raises it where raising is safe, between one figure and the next."""

    def __init__(self):
        self.got = False

    def hold(self, signum, frame) -> None:
        self.got = True

    def check(self) -> None:
        if self.got:
            self.got = False
            raise KeyboardInterrupt


_holding: list[HeldInterrupt] = []     # the held_interrupt blocks holding, innermost last


def raise_held() -> None:
    """Raise a Ctrl+C the innermost held_interrupt holds, now: between parts of a long
    write that are not Qt's (a CSV table's rows, a PNG drawn before it is encoded), so
    a stopped save ends within a part, not once its file is whole (fig.save of a 25 MB
    table answered 5.6 s late, then left the file: a user's run). Only on the
    main thread, whose blocks hold it: another thread's save leaves it to them."""
    if _holding and threading.current_thread() is threading.main_thread():
        _holding[-1].check()


@contextmanager
def held_interrupt():
    """Ctrl+C held while Qt loads or draws, raised once it is done (or at ``check``): a
    KeyboardInterrupt raised inside Qt's layout left it broken, and a later save crashed
    the interpreter; ``posviz export`` crashed or lost the Ctrl+C (a user's run).
    Off the main thread, or under a handler not Python's, nothing is held. A block that
    ends in another exception with a Ctrl+C held raises the KeyboardInterrupt, from it."""
    held = HeldInterrupt()
    previous = signal.getsignal(signal.SIGINT)
    if threading.current_thread() is not threading.main_thread() or previous is None:
        yield held
        return
    signal.signal(signal.SIGINT, held.hold)
    _holding.append(held)
    try:
        yield held
    except Exception as error:
        if held.got:                        # the Ctrl+C is not lost to the error
            held.got = False
            raise KeyboardInterrupt from error
        raise
    finally:
        _holding.remove(held)
        signal.signal(signal.SIGINT, previous)
    held.check()


@contextmanager
def naming_text(given: str | None):
    """Refusals of the text inside (TextRefused, or Refused for positions, before or
    after a model's load) led by ``given``, the text's argument as the user wrote it
    ("--text-file long.txt", "text='the cat…'"); None: no text was given, none named.
    A refusal the offset caused (its ``offset`` set: the text alone fits) names the
    offset instead ("--offset 1020", "offset=1020"), given a text or not."""
    try:
        yield
    except PosvizInputError as error:
        offset = getattr(error, "offset", None)
        about = isinstance(error, TextRefused) or getattr(error, "reason", "") == "positions"
        name = argument("offset", offset) if offset is not None else given if about else None
        if name and not str(error).startswith(name):
            error.args = (f"{name}: {error}",)
        raise


def text_argument(text) -> str | None:
    """The text's argument as Python writes it (its start: a text can be long), or None
    on the command line, whose main names --text or --text-file itself."""
    if speaks_flags() or not isinstance(text, str):
        return None
    return argument("text", text if len(text) <= 24 else text[:23] + "…")


def names_text(function):
    """``function``'s refusals of its ``text`` argument name it (naming_text)."""
    signature = inspect.signature(function)

    @functools.wraps(function)
    def named(*args, **kwargs):
        try:
            text = signature.bind_partial(*args, **kwargs).arguments.get("text")
        except TypeError:               # the call itself refuses its arguments
            text = None
        with naming_text(text_argument(text)):
            return function(*args, **kwargs)
    return named
