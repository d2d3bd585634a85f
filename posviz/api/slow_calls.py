"""The default progress of a call from Python: nothing while it is quick, and once its
wait passes 1 s (held_lines.HOLD_S) what it is doing and how far, on stderr, in the command line's lines
(runtime.held_lines holds them until then). ``progress=False`` silences a call,
``progress=True`` tells from its start; a call posviz makes inside another, or runs for
the command line, keeps its own default (the outer call's lines, or the flags')."""
from __future__ import annotations

import functools
import inspect
import threading
import weakref
from contextlib import contextmanager, nullcontext

from ..errors import speaks_flags
from ..runtime.held_lines import held_now, holding

_calls = threading.local()              # .depth: the API calls running on this thread


def told_when_slow(function):
    """``function``'s ``progress`` None (for a Model's method: its model's, when that
    is None too), in a call from Python: True, its lines held until HOLD_S (1 s) have passed."""
    signature = inspect.signature(function)

    @functools.wraps(function)
    def called(*args, **kwargs):
        depth = getattr(_calls, "depth", 0)
        bound = signature.bind_partial(*args, **kwargs)
        model = bound.arguments.get("self")
        progress = bound.arguments.get("progress")
        if progress is None and model is not None:
            progress = getattr(model, "progress", None)
        _calls.depth = depth + 1
        try:
            if depth or progress is not None or speaks_flags():
                return function(*args, **kwargs)
            bound.arguments["progress"] = True
            with holding():
                return function(*bound.args, **bound.kwargs)
        finally:
            _calls.depth = depth
    return called


def kept(progress):
    """A load's ``progress`` as its model's runs' default: None where the call's own
    default made it True (each run then holds its lines anew)."""
    return None if progress is True and held_now() else progress


def import_torch(say) -> None:
    """torch imported, told each second while it loads (1-4.3 s here, 2.6 s silent
    under load in a user's run: benchmarks/README.md,
    "Time left learned from the last run"); nothing when it is already imported."""
    import sys
    if "torch" not in sys.modules:
        from ..boot import before_torch
        with told_import(say, "importing torch"):
            before_torch()
            import torch  # noqa: F401


@contextmanager
def told_import(say, step: str):
    """Inside, ``step`` told at once and again each second (models.reached.ticking),
    from the ticks' thread and from this one at each module it imports: the ticks'
    thread waits for Python's lock behind them (2.76 s to torch's first line, load 8)."""
    from ..models.hf.beats import beating
    from ..models.reached import ticking
    with ticking(say, step) as ticks, beating(ticks):
        yield


@contextmanager
def told_removal(nbytes: int):
    """A script's maps kept on disk (models.maps: ``removal_told``) removed as their
    report goes, told as the command line tells them (cli.report.remove_maps) once the
    removal passes the hold: 6.3 GB went in 3.2 s after a script's last line, untold."""
    from ..models.maps import REMOVAL_TOLD
    if nbytes < REMOVAL_TOLD or speaks_flags():
        yield
        return
    from ..models.limits.memory import size_text
    from ..models.reached import ticking
    from .steps import StepPrinter
    with holding() if not held_now() else nullcontext(), \
            ticking(StepPrinter(), f"removing the attention maps kept on disk "
                                   f"({size_text(nbytes)})"):
        yield


def remove_maps_at_exit() -> None:
    """A script's runs released and maps still on disk removed at its end, before the
    interpreter's teardown (the models' original order's runs among them;
    models.maps.kept_on_disk), told as told_removal tells them: SmolLM2's compare of
    2,000 words (4.8 GB of maps) ended 4.8 s after them in silence, freeing its runs
    in the teardown; released here, 1.3 s (a bare load's teardown: 1.1 s)."""
    import gc

    from ..models.maps import kept_on_disk
    kept_maps = kept_on_disk()
    if kept_maps:
        with told_removal(sum(maps.on_disk for maps in kept_maps)):
            for model in list(LOADED):
                model.release()
            gc.collect()                            # the runs, and their maps, freed
            for maps in kept_on_disk():             # those a script's results hold
                maps.close()


LOADED: "weakref.WeakSet" = weakref.WeakSet()   # every api.Model alive (remove_maps_at_exit)
