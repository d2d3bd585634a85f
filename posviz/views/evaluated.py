"""An order evaluated together with the mosaic's tiles of it.

The engine (analysis) runs the model and hands each layer's maps, as the comparison
passes them, to the sinks it is given (analysis.symmetry.MapsSink, declared there);
the mosaic's tiles (views.pooling.MosaicTiles) are one, so a long input's maps are
pooled without being held whole. The runtime asks here, and calls and data run one
way: runtime → views → analysis → models, the maps coming back through the sink.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ..models.reached import planning
from .pooling import MosaicTiles

if TYPE_CHECKING:
    from ..analysis.engine import Engine, Evaluation


def evaluated(engine: Engine, seq, order, positions,
              should_stop: Callable[[], bool] | None = None,
              keep: tuple[int, int] | None = None, mode: str | None = None):
    """(Evaluation, MosaicTiles) of ``order``: the tiles of ``mode`` (None: none besides
    the original's) pooled as the comparison passes; ``keep`` as Engine.evaluate's. Its
    forwards are planned (models.reached.planning): the time left the window tells is
    theirs in all, not the one forward's on its way (a SmolLM2 text's three forwards
    each said "about 2 s left in it")."""
    with planning(engine.forwards(seq, order, positions), size=len(seq)):
        tiles = MosaicTiles(engine.reference(seq, positions, should_stop), (mode,))
        ev = engine.evaluate(seq, order, positions, should_stop, sinks=(tiles,), keep=keep)
    return ev, tiles


def in_mode(engine: Engine, ev: Evaluation, tiles: MosaicTiles | None, mode: str | None,
            should_stop: Callable[[], bool] | None = None):
    """(ev, tiles) whose tiles hold ``mode``: as they are, or from the aligned maps kept
    whole (views.shown.build_views pools them), or else by running the order again."""
    if (mode is None or (tiles is not None and tiles.has(mode))
            or ev.comparison.attention_aligned is not None):
        return ev, tiles
    keep = None if ev.kept is None else ev.kept[:2]
    return evaluated(engine, ev.seq, ev.order, ev.positions, should_stop, keep, mode)
