"""The last session at the next start: changes discarded at quit stay discarded, and a
restored session that differs from its file is marked modified whatever the flag says."""
from __future__ import annotations

import numpy as np
import pytest
from PySide6.QtWidgets import QMessageBox

from posviz.document import session_file
from posviz.gui import documents
from posviz.gui.settings import make_settings
from posviz.gui.window import MainWindow

TIMEOUT = 30_000

pytestmark = pytest.mark.usefixtures("collect_between_tests")


@pytest.fixture(autouse=True)
def _discard_when_asked(monkeypatch):
    """Closing a modified window at the end of a test asks nothing on screen."""
    monkeypatch.setattr(documents, "ask_unsaved", lambda parent, name: QMessageBox.Discard)


def _restarted(qtbot) -> MainWindow:
    """A new window on the same settings, started as ``posviz`` with no arguments."""
    w = MainWindow(make_settings())
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.controller.ready, timeout=TIMEOUT):
        w.start()
    qtbot.waitUntil(lambda: w.files.path is not None, timeout=TIMEOUT)
    return w


def _saved_reversed(window, path):
    s = window.session
    s.set_order(np.arange(len(s.order))[::-1])
    assert window.files.save_to(path)
    return tuple(s.order.tolist())


def test_changes_discarded_at_quit_do_not_come_back(qtbot, window, tmp_path, monkeypatch):
    path = tmp_path / "lecture.posviz"
    saved = _saved_reversed(window, path)
    window.session.set_order(np.random.default_rng(0).permutation(len(saved)))
    window.files.autosave()                  # the timer's copy of the shuffled order
    asked = []
    monkeypatch.setattr(documents, "ask_unsaved",
                        lambda parent, name: asked.append(name) or QMessageBox.Discard)
    window.close()
    assert asked == ["lecture.posviz"] and not window.isVisible()
    window.files.autosave()                  # a late write still holds the file as saved
    assert session_file.read(window.files.autosave_path()).order == saved
    again = _restarted(qtbot)
    assert tuple(again.session.order.tolist()) == saved == session_file.read(path).order
    assert again.files.path == path and not again.isWindowModified()
    assert again.windowTitle().startswith("lecture.posviz[*]")


@pytest.mark.parametrize("how", ["flag lost", "file changed"])
def test_a_restored_session_unlike_its_file_is_modified(qtbot, window, tmp_path, how):
    path = tmp_path / "lecture.posviz"
    saved = _saved_reversed(window, path)
    if how == "flag lost":                   # a crash before the modified flag was kept
        window.session.rotate()
        window.files.autosave()
        window.settings.setValue("files/modified", False)
    else:                                    # the file was saved again elsewhere since
        window.files.autosave()
        doc = session_file.read(path)
        session_file.write(path, doc.replace(order=tuple(range(len(saved)))))
    restored = tuple(window.session.order.tolist())
    window.settings.sync()                   # no close: nothing is asked or written
    again = _restarted(qtbot)
    assert tuple(again.session.order.tolist()) == restored
    assert session_file.read(path).order != restored
    assert again.files.path == path and again.isWindowModified()
    assert again.windowTitle().startswith("lecture.posviz[*]")   # shown as "*"


def test_a_restored_session_equal_to_its_file_is_not_modified(qtbot, window, tmp_path):
    path = tmp_path / "lecture.posviz"
    _saved_reversed(window, path)
    window.session.select(window.session.selection.replace(layer=2))   # looked at only
    window.files.autosave()
    window.settings.sync()
    again = _restarted(qtbot)
    assert again.session.selection.layer == 2
    assert again.files.path == path and not again.isWindowModified()


OPTIONS_SET = {"pe": "alibi", "mask": "causal", "residual": False, "norm": "post",
               "layers": 3}


def _set_options(panel) -> None:
    """The built-in model's options as a user sets them in the model panel."""
    for name, value in OPTIONS_SET.items():
        field = panel.field(name)
        if name in ("residual",):
            field.setChecked(value)
        elif name in ("layers",):
            field.setValue(value)
        else:
            field.setCurrentIndex(field.findData(value))


def _relaunched(qtbot, **start) -> MainWindow:
    """A new window on the same settings, started as ``posviz`` is (``start``: its
    command line's model or text)."""
    w = MainWindow(make_settings())
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.controller.evaluated, timeout=TIMEOUT):
        w.start(**start)
    return w


def _shows_options(w) -> None:
    config = w.model_panel.config().to_dict()
    assert {name: config[name] for name in OPTIONS_SET} == OPTIONS_SET


@pytest.mark.parametrize("how", ["built-in at quit", "pretrained at quit", "--text"])
def test_the_built_in_model_s_options_come_back_after_a_restart(qtbot, window, how,
                                                                 monkeypatch):
    """The options set in the model panel were lost once a pretrained model ran at quit
    (the next start ran and showed the defaults, and going back to the built-in model
    ran those) or the window started without its last session (--text)."""
    from test_gui_window import SlowModel

    from posviz.document.spec import ModelSpec
    from posviz.models import hf
    slow = SlowModel()
    slow.release.set()
    monkeypatch.setattr(hf, "load_backend", slow)
    panel = window.model_panel
    _set_options(panel)
    assert window.session.spec.config.to_dict()["pe"] == "alibi"     # it ran
    panel.field("literal").setChecked(True)                          # "Run as given"
    assert window.session.positions.literal
    if how == "pretrained at quit":
        window.controller.load(ModelSpec.pretrained("fake", "A fake model"))
        assert not window.session.spec.is_builtin
    window.close()
    if how == "--text":
        again = _relaunched(qtbot, last=False)
    else:
        again = _relaunched(qtbot)
    if how == "pretrained at quit":
        qtbot.waitUntil(lambda: not again.session.spec.is_builtin, timeout=TIMEOUT)
        _shows_options(again)                     # in the fields, though hidden now
        with qtbot.waitSignal(again.controller.modelLoaded, timeout=TIMEOUT):
            again.model_panel.chooser.setCurrentIndex(0)      # back to the built-in
            again.model_panel.chooser.activated.emit(0)
    config = again.session.spec.config.to_dict()
    assert {name: config[name] for name in OPTIONS_SET} == OPTIONS_SET
    _shows_options(again)
    assert again.session.positions.literal == (how != "--text")   # a session's, as mode


def test_an_untitled_session_s_edits_are_kept_at_quit_and_come_back_marked(
        qtbot, window, monkeypatch):
    """Quitting with an untitled session holding edits asks nothing: the edits are kept
    (the last session) and come back at the next start, which says so; they keep their
    modified mark, so File › New asks before they go (it replaced them silently)."""
    from posviz.gui.opening import UNTITLED_BACK
    asked = []
    monkeypatch.setattr(documents, "ask_unsaved",
                        lambda parent, name: asked.append(name) or QMessageBox.Cancel)
    s = window.session
    s.set_order(np.roll(np.arange(len(s.order)), 3))
    order = s.order.tolist()
    assert window.files.path is None and window.isWindowModified()
    window.close()
    assert asked == [] and not window.isVisible()            # kept, not asked about
    again = _relaunched(qtbot)
    qtbot.waitUntil(lambda: again.session.order.tolist() == order, timeout=TIMEOUT)
    assert again.files.path is None and again.isWindowModified()
    assert UNTITLED_BACK in again.state_label.text()
    again.files.new_document()                               # Cancel: nothing replaced
    assert asked == ["untitled"] and again.session.order.tolist() == order


def test_an_untitled_session_without_edits_comes_back_unmarked(qtbot, window):
    """Nothing changed since the start: the next start neither marks nor tells."""
    from posviz.gui.opening import UNTITLED_BACK
    assert not window.isWindowModified()
    window.close()
    again = _relaunched(qtbot)
    assert again.files.path is None and not again.isWindowModified()
    assert UNTITLED_BACK not in again.state_label.text()
