"""The seconds the window's evaluation works after its forwards (the maps compared,
a new text's original maps pooled, the views built), expected before the forwards
start, so the time left told during them holds that work too: a 4,000-token text was
told "about 4 s left" in its forwards and took 13 s more, the time left jumping up as
each step after them began.

Each step's seconds are a rate times the cells of the maps it passes (L·h·n², the same
operations whatever the model): this machine's, learned from its last evaluation of a
long text (kept beside the stage times, runtime.stage_times), else RATES. Imported on
the worker only (numpy)."""
from __future__ import annotations

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


def rates(times: StageTimes | None) -> dict[str, float]:
    learned = times.read(KEY, len(STEPS)) if times is not None else None
    if learned is None:
        return dict(RATES)
    return dict(zip(STEPS, learned["stages"]))


def expected(steps, cells: int, times: StageTimes | None) -> dict[str, float]:
    """{what: seconds} of ``steps`` over ``cells`` (L·h·n²), in their order."""
    rate = rates(times)
    return {what: rate[what] * cells * 1e-9 for what in steps}


LEARNED_S = 0.5         # a step this long or longer teaches its rate


def learn(took: dict[str, float], cells: int, times: StageTimes | None) -> None:
    """Move the rates of the steps an evaluation of ``cells`` ``took`` {what: seconds}
    halfway (geometrically) to theirs, when the text was long enough (LEARNED_CELLS)
    and the step at least LEARNED_S; the others' as they were. Taken whole, one run's
    swung the next's 2-4 × (pooling 31, 7, then 15 ns a cell at load 3-5)."""
    if times is None or cells < LEARNED_CELLS:
        return
    rate = rates(times)
    timed = {what: 1e9 * seconds / cells for what, seconds in took.items()
             if what in rate and seconds >= LEARNED_S}
    if not timed:
        return
    rate.update({what: (rate[what] * measured) ** 0.5 for what, measured in timed.items()})
    times.write(KEY, [rate[what] for what in STEPS], [None] * len(STEPS))
