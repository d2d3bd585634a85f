"""A start whose session would not fit in memory shows it without computing it: its text
and order, why (the memory check's words), one click to run it anyway and one to open the
built-in model; the session file keeps its model and its edits."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QMessageBox

from posviz.document import session_file
from posviz.document.spec import ModelSpec, Selection
from posviz.gui import documents
from posviz.gui.settings import make_settings
from posviz.gui.window import MainWindow
from posviz.models import hf
from posviz.models.limits import memory

TIMEOUT = 30_000
TINY_BUDGET = 10**5             # bytes counted as available: no model runs in them

pytestmark = pytest.mark.usefixtures("collect_between_tests")


def _started(qtbot, path=None) -> MainWindow:
    w = MainWindow(make_settings())
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    with qtbot.waitSignal(w.controller.ready, timeout=TIMEOUT):
        w.start(str(path) if path else None)
    return w


def _limit_text() -> str:
    return memory.size_text(int(TINY_BUDGET * memory.SAFETY))


def _no_evaluation(qtbot, w) -> None:
    qtbot.wait(300)                    # a request would have been on its way by now
    assert w.controller.held and w.controller.last_shown is None
    assert w.controller._runner._early is None          # not even at start


def test_a_last_session_that_would_not_fit_is_shown_not_computed(qtbot, window,
                                                                 monkeypatch):
    s = window.session
    s.set_order(np.roll(np.arange(len(s.order)), 2))
    s.select(s.selection.replace(layer=2))
    order, text = s.order.tolist(), s.text
    window.close()                                     # autosaved
    saved = window.files.autosave_path().read_bytes()
    monkeypatch.setattr(memory, "available_bytes", lambda: TINY_BUDGET)
    w = _started(qtbot)
    _no_evaluation(qtbot, w)
    assert w.session.text == text and w.session.order.tolist() == order
    assert w.session.selection.layer == 2
    shown = w.held_notice.message.text()
    assert w.held_notice.isVisible() and "Not computed" in shown
    assert f"but only {_limit_text()} are free" in shown and "this model needs about" in shown
    w.files.autosave()                                 # nothing edited: the file as it was
    assert w.files.autosave_path().read_bytes() == saved
    with qtbot.waitSignal(w.controller.evaluated, timeout=TIMEOUT):
        w.held_notice.run_button.click()               # run it anyway
    assert not w.controller.held and not w.held_notice.isVisible()
    assert w.controller.last_shown.evaluation.order.tolist() == order
    w.close()


def test_an_edit_while_held_is_autosaved_with_the_sessions_model(qtbot, tmp_path,
                                                                 monkeypatch):
    text = "one two three four five six"
    doc = session_file.SessionDocument(text, (5, 4, 3, 2, 1, 0),
                                       ModelSpec.pretrained(str(tmp_path / "big"), "big"),
                                       ("▁one",) + tuple(text.split()[1:]))
    loads = []
    monkeypatch.setattr(ModelSpec, "check_memory", lambda *args, **kwargs:   # a pretrained
                        memory.check_fits(ModelSpec.builtin().config, 10**5))  # one too large
    monkeypatch.setattr(hf, "load_backend", lambda *args, **kwargs: loads.append(args))
    w = _started(qtbot, session_file.write(tmp_path / "big.posviz", doc))
    _no_evaluation(qtbot, w)
    assert loads == [] and w.session.text == text      # its model was not loaded
    assert w.session.order.tolist() == list(range(6))  # its tokens are not the built-in's
    assert w.files.path == tmp_path / "big.posviz"
    w.session.set_order([1, 0, 2, 3, 4, 5])
    w.files.autosave()
    again = session_file.read(w.files.autosave_path())
    assert again.spec == doc.spec and again.text == text and again.order[:2] == (1, 0)
    monkeypatch.setattr(documents, "ask_unsaved", lambda parent, name: QMessageBox.Discard)
    w.close()


def test_open_with_the_built_in_model_instead(qtbot, tmp_path, monkeypatch):
    text = "the cat sat on the mat"
    doc = session_file.SessionDocument(text, (1, 0, 2, 3, 5, 4),
                                       ModelSpec.pretrained(str(tmp_path / "big"), "big"),
                                       tuple(text.split()), selection=Selection(layer=3))
    path = session_file.write(tmp_path / "big.posviz", doc)
    monkeypatch.setattr(memory, "available_bytes", lambda: TINY_BUDGET)
    monkeypatch.setattr(ModelSpec, "check_memory", lambda *args, **kwargs:
                        memory.check_fits(ModelSpec.builtin().config, 10**5))
    w = _started(qtbot, path)
    _no_evaluation(qtbot, w)
    assert w.session.order.tolist() == [1, 0, 2, 3, 5, 4]   # the same words: its order
    monkeypatch.setattr(memory, "available_bytes", lambda: 10**10)
    with qtbot.waitSignal(w.controller.evaluated, timeout=TIMEOUT):
        w.held_notice.builtin_button.click()
    assert w.session.spec.is_builtin and w.files.path is None
    assert w.controller.last_shown.evaluation.order.tolist() == [1, 0, 2, 3, 5, 4]
    assert "instead of big" in w.state_label.text()
    assert session_file.read(path) == doc                    # the file keeps its model
    w.close()


def test_a_session_that_fits_starts_as_before(qtbot, tmp_path):
    doc = session_file.SessionDocument("a b c d", (3, 2, 1, 0), ModelSpec.builtin())
    w = MainWindow(make_settings())
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.controller.evaluated, timeout=TIMEOUT):
        w.start(str(session_file.write(tmp_path / "small.posviz", doc)))
    assert not w.controller.held and w.held_notice is None
    w.close()


def test_while_the_sessions_model_loads_the_plots_say_they_are_the_built_in_ones(
        qtbot, slow_model_file):
    path, doc, release = slow_model_file
    w = _started(qtbot, path)
    qtbot.waitUntil(lambda: w.controller.last_shown is not None, timeout=TIMEOUT)
    assert w.session.spec.is_builtin                   # the built-in model's plots, drawn
    assert w.veil.isVisible()
    assert w.veil.text == ("Loading slow… these plots are the built-in model's, "
                           "not this session's")
    with qtbot.waitSignal(w.controller.modelLoaded, timeout=TIMEOUT):
        release.set()
    qtbot.waitUntil(lambda: not w.veil.isVisible(), timeout=TIMEOUT)
    assert w.session.spec == doc.spec
    assert w.controller.last_shown.evaluation.order.tolist() == [2, 1, 0]
    w.close()
