"""The controller: session events become requests, outcomes reach the GUI thread.

Offscreen Qt, no window. The views are stood in for, so what the controller hands the
views (the look) and what it hands on (the Shown) can be checked; waits are on signals.
"""
from __future__ import annotations

import os
import threading

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from posviz.document.events import SelectionChanged  # noqa: E402
from posviz.document.spec import ModelSpec, Selection  # noqa: E402
from posviz.errors import PosvizInputError  # noqa: E402
from posviz.gui.controller import Controller  # noqa: E402
from posviz.models.builtin.backend import BuiltinBackend  # noqa: E402
from posviz.models.config import ModelConfig, Positions  # noqa: E402
from posviz.views.mosaic import MosaicLook  # noqa: E402

TIMEOUT = 30_000
SMALL = ModelConfig(layers=2, heads=2, d_model=16)
THE_LOOK = MosaicLook("difference", (-1.0, 1.0), np.zeros(256, np.uint32))


@pytest.fixture
def controller(qtbot, views):
    c = Controller()
    c.set_look(lambda selection: THE_LOOK)
    with qtbot.waitSignal(c.evaluated, timeout=TIMEOUT):
        c.start("one two three four", ModelSpec.builtin(SMALL), Positions())
    yield c
    c.shutdown()


def test_start_builds_the_session_and_shows_it_reversed(controller, views):
    c = controller
    assert c.session.tokens == ("one", "two", "three", "four")
    assert c.session.order.tolist() == [3, 2, 1, 0]
    assert c.last_shown.evaluation.order.tolist() == [3, 2, 1, 0]
    assert c.last_shown.views == ("views of", (3, 2, 1, 0)) and c.generation_painted()
    look, thread = views.calls[-1][1], views.threads[-1]
    assert look == THE_LOOK and thread is not threading.main_thread()


def test_the_heap_is_trimmed_once_evaluations_stop_not_after_each(qtbot, controller,
                                                                    monkeypatch):
    from posviz.gui import heap_trim as module
    trims = []
    monkeypatch.setattr(module, "TRIM_FROM", 4)          # the 4-token text counts as large
    monkeypatch.setattr(module, "trim_heap", trims.append)
    c = controller
    c._heap.timer.setInterval(60_000)                     # a quiet time no drag reaches
    for _ in range(3):                                    # a drag: one evaluation after another
        with qtbot.waitSignal(c.evaluated, timeout=TIMEOUT):
            c.session.rotate()
        assert c._heap.timer.isActive() and c._heap.timer.remainingTime() > 50_000
    assert trims == []                                    # the next one reuses the pages
    c._heap.timer.setInterval(100)                        # the window goes quiet
    c._heap.timer.start()
    qtbot.waitUntil(lambda: trims == [4], timeout=TIMEOUT)
    qtbot.wait(300)
    assert trims == [4]                                   # once


def test_start_takes_settings_as_they_are_kept(qtbot, views):
    c = Controller()
    with qtbot.waitSignal(c.evaluated, timeout=TIMEOUT):
        c.start("a b", ModelSpec.builtin(SMALL), Positions("token", 1), order="original")
    assert c.session.backend.config == SMALL and c.session.positions == Positions("token", 1)
    assert c.session.order.tolist() == [0, 1]
    c.shutdown()


def test_a_session_change_is_computed(qtbot, controller):
    c = controller
    said = []
    c.computing.connect(lambda: said.append(1))
    with qtbot.waitSignal(c.computing, timeout=TIMEOUT):
        c.session.rotate()
    assert not c.generation_painted()
    with qtbot.waitSignal(c.evaluated, timeout=TIMEOUT) as shown:
        pass
    assert said == [1]                  # said once, when the request was queued
    assert shown.args[0].evaluation.order.tolist() == c.session.order.tolist()
    assert c.generation_painted() and shown.args[1] == c.last_ms


def test_only_the_newest_of_many_changes_is_shown(qtbot, controller):
    c = controller
    painted = []
    c.evaluated.connect(lambda shown, ms: painted.append(
        (shown.evaluation.order.tolist(), c.session.order.tolist())))
    for _ in range(5):
        c.session.rotate()
    qtbot.waitUntil(c.generation_painted, timeout=TIMEOUT)
    assert painted and all(shown == current for shown, current in painted)
    assert painted[-1][0] == c.session.order.tolist()


def test_a_selection_computes_nothing(qtbot, controller):
    c = controller
    computing = []
    c.computing.connect(lambda: computing.append(1))
    c._on_session_event(SelectionChanged(Selection(layer=2)))
    assert computing == [] and c.generation_painted()


def test_a_failed_evaluation_is_told_in_one_line(qtbot, controller, monkeypatch):
    from posviz.analysis.engine import Engine

    def refuse(*args, **kwargs):
        raise PosvizInputError("no room\nfor details")
    monkeypatch.setattr(Engine, "evaluate", refuse)
    with qtbot.waitSignal(controller.evaluationFailed, timeout=TIMEOUT) as failed:
        controller.request()
    assert failed.args == ["no room"] and not controller.generation_painted()


def test_loading_a_builtin_model(qtbot, controller):
    c = controller
    spec = ModelSpec.builtin(ModelConfig(layers=1, heads=2, d_model=16))
    with qtbot.waitSignal(c.modelLoading, timeout=TIMEOUT) as loading:
        with qtbot.waitSignal(c.modelLoaded, timeout=TIMEOUT) as loaded:
            c.load(spec)
            assert c.loading
    assert loading.args == ["built-in transformer"] and loaded.args == [spec]
    assert not c.loading and c.session.backend.config == spec.config
    qtbot.waitUntil(lambda: c.generation_painted() and
                    c.last_shown.evaluation.reference.n_layers == 1, timeout=TIMEOUT)


def test_a_model_the_text_does_not_fit_is_refused(qtbot, controller):
    c = controller
    backend = c.session.backend
    spec = ModelSpec.builtin(ModelConfig(layers=1, heads=2, d_model=16, pe="learned",
                                         max_len=2))
    with qtbot.waitSignal(c.modelFailed, timeout=TIMEOUT) as failed:
        c.load(spec)
    assert "positions" in failed.args[0] and c.session.backend is backend


class GatedModel:
    """Stands in for hf.load_backend: tells a step, then waits until the test lets go."""

    def __init__(self):
        self.gate, self.returned = threading.Event(), threading.Event()
        self.threads = []

    def __call__(self, source, progress=None, **options):
        self.threads.append(threading.current_thread())
        progress("loading weights")
        assert self.gate.wait(TIMEOUT / 1000)
        self.returned.set()
        return BuiltinBackend(ModelConfig(layers=1, heads=2, d_model=16))


@pytest.fixture
def gated(monkeypatch):
    from posviz.models import hf
    model = GatedModel()
    monkeypatch.setattr(hf, "load_backend", model)
    return model


def test_a_pretrained_load_tells_its_progress(qtbot, controller, gated):
    c = controller
    spec = ModelSpec.pretrained("somewhere", "Some model")
    with qtbot.waitSignal(c.modelProgress, timeout=TIMEOUT) as step:
        c.load(spec)
    assert step.args == ["loading weights"]
    with qtbot.waitSignal(c.modelLoaded, timeout=TIMEOUT) as loaded:
        gated.gate.set()
    assert loaded.args == [spec] and c.session.backend.config.layers == 1


def test_a_cancelled_load_is_discarded_and_holds_up_nothing(qtbot, controller, gated):
    c = controller
    backend = c.session.backend
    loaded = []
    c.modelLoaded.connect(loaded.append)
    c.load(ModelSpec.pretrained("somewhere", "Some model"))
    c.cancel_load()
    assert not c.loading
    other = ModelSpec.builtin(ModelConfig(layers=3, heads=2, d_model=16))
    with qtbot.waitSignal(c.modelLoaded, timeout=TIMEOUT):
        c.load(other)                           # while the cancelled one still waits
    assert not gated.returned.is_set() and c.session.backend.config == other.config
    gated.gate.set()
    qtbot.waitUntil(gated.returned.is_set, timeout=TIMEOUT)
    for thread in gated.threads:
        thread.join(TIMEOUT / 1000)
    qtbot.wait(0)                               # anything queued for the GUI arrives
    assert loaded == [other] and c.session.backend is not backend
    assert c.session.backend.config == other.config


def test_after_shutdown_nothing_is_asked(qtbot, controller):
    c = controller
    computing = []
    c.computing.connect(lambda: computing.append(1))
    c.shutdown()
    c.session.rotate()
    c.load(ModelSpec.builtin(SMALL))
    assert computing == [] and not c.loading


TABLE = np.arange(256, dtype=np.uint32) | np.uint32(0xFF000000)
WIDE = MosaicLook("difference", (-0.3, 0.3), TABLE)


def look_of(selection):
    """A look for each selection, as the plots' mosaic_look gives one."""
    r = selection.difference_range
    levels = (-r, r) if selection.mosaic == "difference" else (0.0, 1.0)
    return MosaicLook(selection.mosaic, levels, TABLE)


class LookPanel:
    """Chooses a look as the plots' controls do: through the session's selection."""

    def __init__(self, controller):
        self.controller = controller

    def choose(self, look):
        s = self.controller.session
        s.select(s.selection.replace(mosaic=look.mode, difference_range=look.levels[1]))


@pytest.fixture
def watched(qtbot):
    """A controller with the real views, colouring the mosaic for the selection."""
    c = Controller()
    c.set_look(look_of)
    with qtbot.waitSignal(c.evaluated, timeout=TIMEOUT):
        c.start("one two three four", ModelSpec.builtin(SMALL), Positions())
    yield c, LookPanel(c)
    c.shutdown()


def test_a_new_look_prepares_the_views_again_without_evaluating(qtbot, watched, monkeypatch):
    c, panel = watched
    from posviz.analysis.engine import Engine
    first = c.last_shown
    assert first.views.mosaic.look == WIDE

    def again(*args, **kwargs):
        raise AssertionError("evaluated again")
    monkeypatch.setattr(Engine, "evaluate", again)
    narrow = MosaicLook("difference", (-0.01, 0.01), TABLE)
    with qtbot.waitSignal(c.evaluated, timeout=TIMEOUT) as shown:
        panel.choose(narrow)
    assert shown.args[0] is c.last_shown and c.generation_painted()
    assert c.last_shown.evaluation is first.evaluation
    assert c.last_shown.views.mosaic.look == narrow
    np.testing.assert_array_equal(c.last_shown.views.mosaic.tiles, first.views.mosaic.tiles)
    original = MosaicLook("original", (0.0, 1.0), TABLE)
    with qtbot.waitSignal(c.evaluated, timeout=TIMEOUT):
        panel.choose(original)
    np.testing.assert_array_equal(c.last_shown.views.mosaic.tiles,
                                  first.evaluation.reference.attention)
    with qtbot.assertNotEmitted(c.computing):
        c.restyle()                             # in that look already: nothing to do
        c.session.select(c.session.selection.replace(layer=2, tab=1))   # the same look


def test_a_look_asked_for_is_not_asked_again_while_on_its_way(qtbot, watched):
    c, panel = watched
    computing = []
    c.computing.connect(lambda: computing.append(1))
    narrow = MosaicLook("difference", (-0.01, 0.01), TABLE)
    panel.choose(narrow)
    c.session.select(c.session.selection.replace(head=1))    # the same look: not again
    assert len(computing) == 1
    qtbot.waitUntil(c.generation_painted, timeout=TIMEOUT)
    assert c.restyled and c.last_shown.views.mosaic.look == narrow


def test_a_new_look_during_an_evaluation_asks_for_that_evaluation(qtbot, watched):
    c, panel = watched
    painted = []
    c.evaluated.connect(lambda shown, ms: painted.append(shown))
    c.session.rotate()                          # an evaluation on its way
    narrow = MosaicLook("difference", (-0.01, 0.01), TABLE)
    panel.choose(narrow)
    qtbot.waitUntil(c.generation_painted, timeout=TIMEOUT)
    assert painted and painted[-1] is c.last_shown
    assert c.last_shown.evaluation.order.tolist() == c.session.order.tolist()
    assert c.last_shown.views.mosaic.look == narrow


def test_the_plots_and_the_controller_show_one_look(qtbot):
    """Wired as the window does: a mode chosen in the panel's controls is the session's
    selection, whose look the controller has the worker prepare; the panel draws the
    Shown that comes back."""
    from posviz.gui.plots import PlotsPanel, mosaic_look
    panel = PlotsPanel()
    qtbot.addWidget(panel)
    c = Controller()
    c.set_look(mosaic_look)
    c.ready.connect(lambda: panel.set_session(c.session))
    c.evaluated.connect(lambda shown, ms: panel.show_evaluation(shown))
    with qtbot.waitSignal(c.evaluated, timeout=TIMEOUT):
        c.start("one two three four", ModelSpec.builtin(SMALL), Positions())
    mosaic = panel.figures()["attention_mosaic"]
    assert mosaic.look == c.last_shown.views.mosaic.look
    with qtbot.waitSignal(c.evaluated, timeout=TIMEOUT):
        panel.mosaic_box.setCurrentIndex(panel.mosaic_box.findData("original"))
    assert c.session.selection.mosaic == "original" and c.restyled
    assert c.last_shown.views.mosaic.look == mosaic_look(c.session.selection)
    assert mosaic.look == c.last_shown.views.mosaic.look and mosaic.look.mode == "original"
    np.testing.assert_array_equal(panel.displayed()["attention_mosaic"]["original"],
                                  c.last_shown.evaluation.reference.attention)
    c.shutdown()


def test_inside_force_sync_an_edit_is_shown_on_the_gui_thread_and_a_load_at_once(
        qtbot, controller, views):
    """The tests' synchronous mode: the evaluation an edit asks for runs on the GUI
    thread at the request's turn of the event loop, a load in the call that asks."""
    c, shown = controller, []
    c.evaluated.connect(lambda s, ms: shown.append(s))
    with c.force_sync():
        c.session.rotate()
        assert not shown                                   # asked at the next turn
        qtbot.waitUntil(lambda: bool(shown), timeout=TIMEOUT)
        assert views.threads[-1] is threading.main_thread() and c.generation_painted()
        assert shown[-1].evaluation.order.tolist() == c.session.order.tolist()
        c.load(ModelSpec.builtin(SMALL.replace(pe="rope")))
        assert c.session.backend.config.pe == "rope" and not c.loading
    c.session.rotate()                                     # outside: on the worker again
    qtbot.waitUntil(lambda: views.threads[-1] is not threading.main_thread(),
                    timeout=TIMEOUT)
