"""The seconds the window's evaluation works after its forwards (the maps compared,
a new text's original maps pooled, the views built), expected before the forwards
start, so the time left told during them holds that work too: a 4,000-token text was
told "about 4 s left" in its forwards and took 13 s more, the time left jumping up as
each step after them began.

Each step's seconds are a rate times the cells of the maps it passes (L·h·n²): this
machine's for the model at that size (``key``), learned from its last evaluation of a
long text (kept beside the stage times, runtime.stage_times), else RATES. One rate for
the machine, learned from another model or size, told a 4,000-token text's comparison
"5 s left" with 10-11 s to go. Imported on the worker only (numpy)."""
from __future__ import annotations

import math

from ..analysis.symmetry import COMPARING
from ..views.pooling import POOLING
from ..views.shown import BUILDING
from .stage_times import StageTimes

STEPS = (COMPARING, POOLING, BUILDING)              # in the order they run
# nanoseconds a cell, measured in the window at 4,000 tokens (load 4.3): comparing 5 s,
# pooling 2 s, the views 0.5-1 s, of 4 × 4 × 4,000² cells
RATES = {COMPARING: 20.0, POOLING: 8.0, BUILDING: 3.0}
LEARNED_CELLS = 16 * 1000 ** 2      # an evaluation this large teaches the rates
KEY = "window: the work after the forwards, nanoseconds a cell"


def steps_after(identity: bool, whole: bool, new_text: bool, mosaic: bool) -> tuple:
    """The steps an evaluation runs after its forwards: the comparison unless a long
    input's reorder compared it during its forward (not ``whole``, not the original
    order), the pooling of a ``new_text``'s original maps for a ``mosaic``, the views."""
    return tuple(what for what, runs in ((COMPARING, identity or whole),
                                         (POOLING, new_text and mosaic),
                                         (BUILDING, True)) if runs)


def key(model: str, cells: int) -> str:
    """The rates' key of ``model`` at ``cells``' size class: each 4 × LEARNED_CELLS a
    class up (4 × 4 heads: 1,000-1,999 tokens class 0, 2,000-3,999 class 1, ...)."""
    size = max(int(math.log(max(cells, 1) / LEARNED_CELLS, 4)), 0)
    return f"{KEY} ({model or 'a model'}, size class {size})"


def rates(times: StageTimes | None, model: str = "", cells: int = 0) -> dict[str, float]:
    """{what: nanoseconds a cell} of ``model`` at ``cells``' size (key)."""
    learned = times.read(key(model, cells), len(STEPS)) if times is not None else None
    if learned is None:
        return dict(RATES)
    return dict(zip(STEPS, learned["stages"]))


def expected(steps, cells: int, times: StageTimes | None,
             model: str = "") -> dict[str, float]:
    """{what: seconds} of ``steps`` of ``model`` over ``cells`` (L·h·n²), in their order."""
    rate = rates(times, model, cells)
    return {what: rate[what] * cells * 1e-9 for what in steps}


LEARNED_S = 0.5         # a step this long or longer teaches its rate


def learn(took: dict[str, float], cells: int, times: StageTimes | None,
          model: str = "") -> None:
    """Move the rates of the steps ``model``'s evaluation of ``cells`` ``took``
    {what: seconds} halfway (geometrically) to theirs, when the text was long enough (LEARNED_CELLS)
    and the step at least LEARNED_S; the others' as they were. Taken whole, one run's
    swung the next's 2-4 × (pooling 31, 7, then 15 ns a cell at load 3-5)."""
    if times is None or cells < LEARNED_CELLS:
        return
    rate = rates(times, model, cells)
    timed = {what: 1e9 * seconds / cells for what, seconds in took.items()
             if what in rate and seconds >= LEARNED_S}
    if not timed:
        return
    rate.update({what: (rate[what] * measured) ** 0.5 for what, measured in timed.items()})
    times.write(key(model, cells), [rate[what] for what in STEPS], [None] * len(STEPS))
