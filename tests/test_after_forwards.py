"""The work after the forwards (the maps compared, a new text's original maps pooled)
is told as counted steps with their time left, against a made-up clock: a 6,123-token
text's status stood on "layer 4 of 4 (forward 2 of 2)" for 39 of its 75 s."""
from __future__ import annotations

import numpy as np

from posviz.analysis.engine import Engine
from posviz.analysis.symmetry import COMPARING
from posviz.document.session import Session
from posviz.models import after, reached
from posviz.models.builtin.backend import BuiltinBackend
from posviz.models.config import ModelConfig
from posviz.views import pooling


def _reversed(layers: int = 3, heads: int = 2,
              text: str = "the cat sat on the mat because it was warm"):
    backend = BuiltinBackend(ModelConfig(pe="alibi", layers=layers, heads=heads,
                                         d_model=16))
    session = Session(backend, text)
    session.reverse()
    return backend, session


class Recording:
    """A MapsSink that records the step told as each layer's comparison ends."""

    def __init__(self):
        self.told = []

    def heads(self, layer, heads, original, aligned, difference):
        return None

    def layer_done(self, layer):
        now = after.latest_after()
        self.told.append((now.what, now.unit, now.done, now.total))


def test_the_maps_comparison_after_the_forward_is_told_layer_by_layer():
    backend, session = _reversed(layers=3)
    sink = Recording()
    Engine(backend).evaluate(session.seq, session.order, session.positions, sinks=(sink,))
    assert sink.told == [(COMPARING, "layer", k, 3) for k in range(3)], sink.told
    assert after.latest_after() is None              # nothing told once it is over


def test_a_new_text_s_original_maps_are_pooled_map_by_map(monkeypatch):
    backend, session = _reversed(layers=2, heads=2)
    ev = Engine(backend).evaluate(session.seq, session.order, session.positions)
    told = []

    def pool(maps, block):
        now = after.latest_after()
        told.append((now.what, now.unit, now.done, now.total))
        return np.zeros((1, 1), maps.dtype)
    monkeypatch.setattr(pooling, "pool_signed_max", pool)
    pooling._original_tiles(ev.reference)
    assert told == [(pooling.POOLING, "map", k, 4) for k in range(4)], told
    assert after.latest_after() is None


def _status(qtbot, session=None):
    from PySide6.QtWidgets import QLabel

    from posviz.gui.status import StatusLine
    label = QLabel()
    qtbot.addWidget(label)
    line = StatusLine(label, session=lambda: session)
    line._since = 0.0
    return line


def test_the_status_line_tells_the_step_after_the_forwards_and_its_time_left(
        qtbot, monkeypatch):
    """Past the last block the line tells the pooling, which map of how many, and the
    time its maps left take at the pace of those pooled (4 maps in 8 s: 12 left, 24 s)."""
    clock = [100.0]
    monkeypatch.setattr(after, "clock", lambda: clock[0])
    last_block = reached.Reached(layer=4, layers=4, forward=2, at=99.0, began=90.0,
                                 done=0.9, nth=2, planned=2)
    monkeypatch.setattr(reached, "latest", lambda: last_block)
    line = _status(qtbot)
    with after.after_steps(pooling.POOLING, 16, "map") as step:
        assert line._layer() == f": {pooling.POOLING}, map 1 of 16"
        clock[0] = 108.0
        step(4)
        said = line._layer()
    assert said == f": {pooling.POOLING}, map 5 of 16, about 24 s left", said
    # over: the forward's last block, stale by now, is not told again
    assert not line._layer().startswith(": layer 4 of 4"), line._layer()


def test_a_new_text_s_forwards_say_their_time_left_is_theirs_and_the_pooling_follows(
        qtbot, monkeypatch):
    """A new text's time left told during its forwards is theirs, not the pooling's;
    the pooling is said to follow only for a text longer than a mosaic's tile (a
    shorter one's maps are the tiles: nothing is pooled)."""
    from posviz.gui.status import POOLING_AFTER
    from posviz.views.pooling import MOSAIC_TILE
    backend, session = _reversed(text=" ".join(["the cat sat"] * MOSAIC_TILE))
    line = _status(qtbot, session)
    now = reached.Reached(layer=3, layers=4, forward=2, at=108.0, began=100.0,
                          done=0.5, nth=1, planned=2)
    monkeypatch.setattr(reached, "latest", lambda: now)
    monkeypatch.setattr(after, "latest_after", lambda: None)
    runs, _ = line._running()                # a text never evaluated: its original too
    assert runs.startswith("the original order") and session.selection.mosaic
    assert line._layer() == (": layer 3 of 4 (forward 1 of 2), about 24 s left of the "
                             f"forwards{POOLING_AFTER}")
    backend, session = _reversed()           # 10 tokens: the tiles are the maps
    line = _status(qtbot, session)
    line._running()
    assert session.selection.mosaic and POOLING_AFTER not in line._layer()


def test_a_reorder_s_how_far_is_told_from_the_first_tick_not_from_2_s(qtbot, monkeypatch):
    """A 2.4 s reorder of SmolLM2's read only "Computing the new order…": how far came
    at 2 s. At the first tick (1.2 s in), the block on its way is told to the veil and
    the status line."""
    from posviz.gui import status
    backend, session = _reversed()
    line = _status(qtbot, session)
    clock = [100.0]
    monkeypatch.setattr(status, "clock", lambda: clock[0])
    monkeypatch.setattr(after, "latest_after", lambda: None)
    line.asked()
    now = reached.Reached(layer=2, layers=30, forward=5, at=101.0, began=100.2,
                          done=1 / 30, nth=1, planned=1)
    monkeypatch.setattr(reached, "latest", lambda: now)
    veil = []
    line.far.connect(veil.append)
    clock[0] = 101.2
    line._tick()
    assert veil and veil[-1].startswith("layer 2 of 30"), veil
    assert "layer 2 of 30" in line.label.text(), line.label.text()


def test_a_long_input_s_original_order_is_compared_layer_by_layer_told(monkeypatch):
    """A long input in its original order (a new text) is compared after its one forward
    a layer at a time: 5-7 s of a 4,000-token text stood on "layer 4 of 4", untold."""
    from posviz.models import maps as layer_maps
    monkeypatch.setattr(layer_maps, "KEEP_ALL", 0)          # every input a long one
    backend, session = _reversed(layers=3)
    sink = Recording()
    Engine(backend).evaluate(session.seq, np.arange(len(session.seq)), session.positions,
                             sinks=(sink,))
    assert sink.told == [(COMPARING, "layer", k, 3) for k in range(3)], sink.told
    assert after.latest_after() is None


def test_the_views_built_after_the_pooling_are_told_part_by_part(monkeypatch):
    """After the pooling, building the views (1-1.5 s of a 4,000-token text) said
    nothing: the status stood on the pooling's last map. Each part is told as it
    begins, and nothing once it is over."""
    from posviz.views import shown
    backend, session = _reversed(layers=2)
    ev = Engine(backend).evaluate(session.seq, session.order, session.positions)
    told = []
    real = shown.positions_view

    def positions(ev):
        now = after.latest_after()
        told.append((now.what, now.unit, now.done, now.total))
        return real(ev)
    monkeypatch.setattr(shown, "positions_view", positions)
    shown.build_views(ev, None, head=(0, 0))
    assert told == [(shown.BUILDING, "part", 1, len(shown.BUILDING_PARTS))], told
    assert after.latest_after() is None
