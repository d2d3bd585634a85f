"""`posviz --model NAME`: the model loads as the Source menu loads one, its steps shown
with Cancel, while the built-in model runs; Cancel keeps the built-in model."""
from __future__ import annotations

import pytest
from test_gui_window import PinnedBackend, settled, slow_model  # noqa: F401

from posviz.document.spec import ModelSpec
from posviz.gui.settings import make_settings
from posviz.gui.window import MainWindow

TIMEOUT = 30_000

pytestmark = pytest.mark.usefixtures("collect_between_tests")


def _starting(qtbot, model: str) -> MainWindow:
    w = MainWindow(make_settings())
    qtbot.addWidget(w)
    w.resize(1024, 700)
    w.show()
    with qtbot.waitSignal(w.controller.ready, timeout=TIMEOUT):
        w.start(last=False, model=model)
    return w


def test_the_start_s_model_load_shows_its_step_and_cancel(qtbot, slow_model):
    w = _starting(qtbot, "fake")
    load = w.model_panel.load
    qtbot.waitUntil(lambda: load.busy.isVisible() and load.cancel.isVisible()
                    and load.busy.format() == "step 3 of 4", timeout=TIMEOUT)
    # the bar fills without text of its own (cut in a narrow panel: "tep 3 of 4"); the
    # line under it says the step whole, at the panel's narrowest width
    assert not load.busy.isTextVisible() and load.busy.value() == 3 * load.busy.maximum() // 4
    assert "loading weights (step 3 of 4)" in load.status.text()
    assert load.status.height() >= load.status.heightForWidth(load.status.width())
    assert w.session.spec.is_builtin and "Loading fake" in load.status.text()
    with qtbot.waitSignal(w.controller.modelLoaded, timeout=TIMEOUT):
        slow_model.release.set()
    assert w.session.spec == ModelSpec.pretrained("fake")
    assert isinstance(w.session.backend, PinnedBackend) and not load.cancel.isVisible()
    settled(qtbot, w)


def test_cancel_at_start_leaves_the_built_in_model(qtbot, slow_model):
    w = _starting(qtbot, "fake")
    load = w.model_panel.load
    qtbot.waitUntil(load.cancel.isVisible, timeout=TIMEOUT)
    load.cancel.click()
    assert not load.busy.isVisible() and not w.controller.loading
    slow_model.release.set()
    assert slow_model.done.wait(TIMEOUT / 1000)
    qtbot.wait(200)                                 # the cancelled result is discarded
    assert w.session.spec.is_builtin and not isinstance(w.session.backend, PinnedBackend)
    assert w.model_panel.chooser.currentIndex() == 0
    settled(qtbot, w)
    assert w.controller.last_shown.evaluation.seq == w.session.seq


def test_the_start_s_model_shows_its_own_tokens_reversed(qtbot, slow_model):
    """`posviz --model minilm` opens with the remembered text reversed (README), as a
    start of the built-in model does: once the model is in, its new tokens are reversed
    between its pinned [CLS] and [SEP], not back in their original order."""
    w = _starting(qtbot, "fake")
    assert list(w.session.order) == list(range(len(w.session.seq)))[::-1]
    with qtbot.waitSignal(w.controller.modelLoaded, timeout=TIMEOUT):
        slow_model.release.set()
    n = len(w.session.seq)
    assert w.session.seq.tokens[0] == "[CLS]" and n > 3
    assert list(w.session.order) == [0, *range(n - 2, 0, -1), n - 1]
    assert "original order" not in w.status.remark
    settled(qtbot, w)


def test_a_reorder_made_while_the_start_s_model_loads_is_not_reversed(qtbot, slow_model):
    w = _starting(qtbot, "fake")
    w.session.reset()                               # the user put them back meanwhile
    with qtbot.waitSignal(w.controller.modelLoaded, timeout=TIMEOUT):
        slow_model.release.set()
    assert list(w.session.order) == list(range(len(w.session.seq)))
    settled(qtbot, w)
