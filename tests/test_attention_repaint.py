"""The attention maps' canvas repaints only the maps at a reorder (new pixels in the same
places), and whole when its items are laid out again (the token axes measured anew left
slivers of the first paint otherwise)."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6 import QtCore  # noqa: E402

from posviz.analysis.engine import Engine  # noqa: E402
from posviz.document.session import Session  # noqa: E402
from posviz.gui.plots import mosaic_look  # noqa: E402
from posviz.gui.plots.attention import AttentionFigure  # noqa: E402
from posviz.models.builtin.backend import BuiltinBackend  # noqa: E402
from posviz.models.config import ModelConfig  # noqa: E402
from posviz.views.shown import Shown, build_views  # noqa: E402

TEXT = "the cat sat on the mat because it was warm"


class Regions(QtCore.QObject):
    """The regions a widget was asked to paint, as fractions of its area."""

    def __init__(self, widget):
        super().__init__()
        self.widget, self.painted = widget, []
        widget.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QtCore.QEvent.Type.Paint:
            area = sum(r.width() * r.height() for r in event.region())
            self.painted.append(area / (self.widget.width() * self.widget.height()))
        return False


@pytest.fixture
def shown():
    backend = BuiltinBackend(ModelConfig(pe="learned", layers=2, heads=2, d_model=16))
    session = Session(backend, TEXT)
    engine = Engine(backend)

    def reorder() -> Shown:
        session.shuffle()
        ev = engine.evaluate(session.seq, session.order, session.positions)
        return Shown(ev, build_views(ev, mosaic_look(session.selection)))
    return reorder


def settle(qtbot, figure, regions) -> None:
    """Until the canvas has painted nothing for 0.3 s (a loaded machine lays out late)."""
    qtbot.waitUntil(lambda: figure.canvas.viewport().isVisible(), timeout=5000)
    for _ in range(30):
        regions.painted.clear()
        qtbot.wait(300)
        if not regions.painted:
            return
    raise AssertionError("the attention canvas never stopped repainting")


def test_a_reorder_repaints_the_maps_and_a_new_layout_the_whole_canvas(qtbot, shown):
    figure = AttentionFigure()
    qtbot.addWidget(figure)
    figure.resize(1100, 320)
    figure.update_from(shown(), 1, 0)
    figure.show()
    qtbot.waitExposed(figure)
    regions = Regions(figure.canvas.viewport())
    settle(qtbot, figure, regions)

    figure.update_from(shown(), 1, 1)               # same tokens, new maps
    qtbot.waitUntil(lambda: bool(regions.painted), timeout=5000)
    qtbot.wait(50)
    assert max(regions.painted) < 0.8, regions.painted     # the maps, not axes and bars

    regions.painted.clear()
    figure.resize(1000, 320)                        # every item laid out again
    qtbot.waitUntil(lambda: bool(regions.painted), timeout=5000)
    qtbot.wait(50)
    assert max(regions.painted) == pytest.approx(1.0), regions.painted

    settle(qtbot, figure, regions)
    plot = figure.original.plot                      # one item moved by its layout
    plot.setGeometry(plot.geometry().adjusted(0, 0, -3, 0))
    qtbot.waitUntil(lambda: bool(regions.painted), timeout=5000)
    assert max(regions.painted) == pytest.approx(1.0), regions.painted


class Passes(QtCore.QObject):
    """The window's paint passes (UpdateRequests delivered) and, for each, the canvases
    of ``canvases`` painted in it."""

    def __init__(self, window, canvases):
        super().__init__()
        self.viewports = {canvas.viewport(): name for name, canvas in canvases.items()}
        self.passes: list[set[str]] = []
        window.installEventFilter(self)
        for viewport in self.viewports:
            viewport.installEventFilter(self)

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QtCore.QEvent.Type.UpdateRequest:
            self.passes.append(set())
        elif event.type() == QtCore.QEvent.Type.Paint and obj in self.viewports:
            (self.passes or [set()])[-1].add(self.viewports[obj])
        return False

    def painting(self) -> list[set[str]]:
        return [names for names in self.passes if names]


def test_a_reorder_paints_every_figure_on_screen_in_one_pass(qtbot, window):
    window.resize(1440, 900)
    canvases = {name: figure.canvas for name, figure in window.plots.current_figures().items()
                if getattr(figure, "canvas", None) is not None}
    qtbot.waitUntil(lambda: all(c.viewport().isVisible() for c in canvases.values()),
                    timeout=5000)
    assert len(canvases) >= 3, sorted(canvases)     # the mosaic, the curves, the maps
    qtbot.wait(300)
    passes = Passes(window, canvases)
    for _ in range(3):
        passes.passes.clear()
        with qtbot.waitSignal(window.controller.evaluated, timeout=30_000):
            window.session.shuffle()
        qtbot.waitUntil(lambda: set().union(*passes.painting()) == set(canvases),
                        timeout=5000)
        qtbot.wait(100)
        assert passes.painting() == [set(canvases)], passes.painting()


def test_a_reorder_leaves_the_original_map_as_painted(qtbot, shown):
    """The original map is the reference run's: a reorder neither colours it again nor
    repaints it; another head or another reference run does."""
    figure = AttentionFigure()
    qtbot.addWidget(figure)
    first = shown()
    figure.update_from(first, 1, 0)
    painted = figure.original.image.image
    reference = first.evaluation.reference.attention
    aligned = figure.aligned.image.image
    second = shown()
    assert second.evaluation.reference is first.evaluation.reference
    figure.update_from(second, 1, 0)
    assert figure.original.image.image is painted                # left as it was
    assert (painted == reference[0, 0]).all()
    assert figure.aligned.image.image is not aligned              # the reorder's own
    assert (figure.aligned.image.image
            == second.evaluation.comparison.attention_aligned[0, 0]).all()
    figure.update_from(second, 1, 1)                               # another head
    assert figure.original.image.image is not painted
    assert (figure.original.image.image == reference[0, 1]).all()


def test_one_paint_pass_switched_off_leaves_each_scene_to_paint_on_its_own(qtbot, monkeypatch):
    """POSVIZ_WORKAROUNDS_OFF=one-paint-pass: the scenes take their changes in their own
    queued calls, as pyqtgraph has it; on, one_paint_pass delivers them at once."""
    import pyqtgraph as pg
    from PySide6 import QtWidgets

    from posviz.gui.plots.repaint import one_paint_pass

    for off, delivered in (("", True), ("one-paint-pass", False)):
        monkeypatch.setenv("POSVIZ_WORKAROUNDS_OFF", off)
        view = pg.GraphicsView()
        qtbot.addWidget(view)
        view.show()
        qtbot.waitExposed(view)
        item = QtWidgets.QGraphicsRectItem(0, 0, 10, 10)
        view.scene().addItem(item)
        qtbot.wait(50)
        changed = []
        view.scene().changed.connect(changed.append)
        item.setRect(0, 0, 20, 20)
        one_paint_pass(view.window(), [view])
        assert bool(changed) is delivered, off
        qtbot.waitUntil(lambda: bool(changed), timeout=5000)      # Qt delivers it anyway


def test_the_figure_keeps_no_reference_trace_it_no_longer_shows(qtbot, shown, monkeypatch):
    """A long input's next head is computed again (its maps not kept): the figure shows
    a message, and the reference trace it painted (maybe large) is not held by it."""
    import gc
    import weakref

    from posviz.gui.plots import attention
    def first_shown() -> Shown:          # a run of its own: no engine keeps its reference
        backend = BuiltinBackend(ModelConfig(pe="learned", layers=2, heads=2, d_model=16))
        session = Session(backend, TEXT)
        ev = Engine(backend).evaluate(session.seq, session.order, session.positions)
        return Shown(ev, build_views(ev, mosaic_look(session.selection)))
    figure = AttentionFigure()
    qtbot.addWidget(figure)
    first = first_shown()
    figure.update_from(first, 1, 0)
    reference = weakref.ref(first.evaluation.reference)
    monkeypatch.setattr(attention, "head_images", lambda *args: None)
    figure.update_from(shown(), 1, 1)               # its maps not kept: a message
    assert figure.shown_head is None
    del first
    gc.collect()
    assert reference() is None, [type(r).__name__ for r in gc.get_referrers(reference())]
