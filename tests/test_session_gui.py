"""Sessions in the window: save and open, the modified mark, asking before losing work,
bad files told inline, the last session restored at start, a missing model replaced."""
from __future__ import annotations

import json

import numpy as np
import pytest
from PySide6.QtWidgets import QMessageBox
from test_session_file import BAD_FILES

from posviz.analysis.engine import Engine
from posviz.document import session_file
from posviz.document.scenarios import scenario_paths
from posviz.document.spec import ModelSpec, Selection
from posviz.gui import documents
from posviz.gui.folders import recent_files
from posviz.gui.settings import make_settings
from posviz.gui.window import MainWindow
from posviz.models.config import ModelConfig
from conftest import on_screen

TIMEOUT = 30_000


def _answer(monkeypatch, button):
    asked = []
    monkeypatch.setattr(documents, "ask_unsaved",
                        lambda parent, name: asked.append(name) or button)
    return asked


# Collect closed windows between tests, never beside a worker (see conftest).
pytestmark = pytest.mark.usefixtures("collect_between_tests")


@pytest.fixture
def window(window, qtbot):
    """The shared window, left only once its newest evaluation is painted: a worker
    still computing while the window is torn down is not what these tests are about."""
    yield window
    if window.isVisible() and window.session is not None:
        _settle(qtbot, window)


def _settle(qtbot, w):
    """Wait until the evaluation shown is the session's current order."""
    qtbot.waitUntil(lambda: w.controller.last_shown is not None and np.array_equal(
        w.controller.last_shown.evaluation.order, w.session.order)
        and w.controller.generation_painted(), timeout=TIMEOUT)


def test_save_then_open_brings_the_session_back(qtbot, window, tmp_path, monkeypatch):
    w, s = window, window.session
    s.set_order([2, 0, 1] + list(range(3, len(s.order))))
    s.select(s.selection.replace(layer=2, head=1, tab=1))
    saved_order, saved_selection = s.order.tolist(), s.selection
    path = tmp_path / "mine.posviz"
    assert w.files.save_to(path)
    assert "mine.posviz" in w.windowTitle() and not w.isWindowModified()
    assert recent_files(w.settings)[0] == str(path.resolve())
    s.reverse()
    assert w.isWindowModified()
    asked = _answer(monkeypatch, QMessageBox.Discard)
    assert w.files.open_file(path)
    assert asked == ["mine.posviz"]
    assert s.order.tolist() == saved_order and s.selection == saved_selection
    assert not w.isWindowModified() and w.files.path == path
    _settle(qtbot, w)
    ev = w.controller.last_shown.evaluation
    expected = Engine(s.backend).evaluate(s.seq, s.order, s.positions).comparison
    np.testing.assert_allclose(ev.comparison.hidden_equivariance,
                               expected.hidden_equivariance, rtol=1e-6, atol=1e-12)


def test_cancel_keeps_the_work_and_the_window(qtbot, window, tmp_path, monkeypatch):
    w = window
    w.files.save_to(tmp_path / "a.posviz")
    w.session.rotate()
    _answer(monkeypatch, QMessageBox.Cancel)
    order = w.session.order.tolist()
    assert not w.files.open_file(tmp_path / "a.posviz")
    assert w.session.order.tolist() == order
    w.close()
    assert w.isVisible()                       # quitting was cancelled
    _answer(monkeypatch, QMessageBox.Discard)
    w.close()
    assert not w.isVisible()


def test_save_from_the_question_writes_the_file(qtbot, window, tmp_path, monkeypatch):
    w, path = window, tmp_path / "a.posviz"
    w.files.save_to(path)
    w.session.rotate()
    _answer(monkeypatch, QMessageBox.Save)
    w.close()
    assert session_file.read(path).order == tuple(w.session.order.tolist())


def _other_tokens() -> str:
    doc = session_file.SessionDocument("a b c", (2, 1, 0), ModelSpec.builtin(),
                                       ("a", "b", "x"))
    return session_file.dumps(doc)


@pytest.mark.parametrize("name", [*BAD_FILES, "other tokens"])
def test_a_bad_file_is_told_inline_and_changes_nothing(qtbot, window, tmp_path, name):
    content, words = BAD_FILES.get(name) or (_other_tokens(), "other tokens")
    w, path = window, tmp_path / "bad.posviz"
    path.write_text(content, encoding="utf-8")
    before = (w.session.text, w.session.order.tolist(), w.session.spec, w.files.path)
    assert not w.files.open_file(path)
    assert words in w.state_label.text() and "\n" not in w.state_label.text()
    assert (w.session.text, w.session.order.tolist(), w.session.spec, w.files.path) == before


def test_opening_a_file_of_another_model_loads_it_first(qtbot, window, tmp_path):
    config = ModelConfig(layers=2, heads=2, d_model=16, pe="alibi", seed=5)
    doc = session_file.SessionDocument("a b c d", (3, 1, 2, 0), ModelSpec.builtin(config),
                                       ("a", "b", "c", "d"), selection=Selection(layer=2))
    path = session_file.write(tmp_path / "alibi.posviz", doc)
    with qtbot.waitSignal(window.controller.modelLoaded, timeout=TIMEOUT):
        window.files.open_file(path)
    s = window.session
    assert s.spec == doc.spec and s.order.tolist() == [3, 1, 2, 0]
    assert s.selection.layer == 2 and not window.isWindowModified()


def test_the_last_session_is_restored_at_start(qtbot, window):
    s = window.session
    s.set_order(np.roll(np.arange(len(s.order)), 2))
    s.select(s.selection.replace(layer=3, tab=2))
    order = s.order.tolist()
    window.close()                             # untitled: autosaved, nothing asked
    again = MainWindow(make_settings())
    qtbot.addWidget(again)
    with qtbot.waitSignal(again.controller.ready, timeout=TIMEOUT):
        again.start()
    assert again.session.order.tolist() == order
    assert again.session.selection.layer == 3 and again.session.selection.tab == 2
    assert again.plots is None or again.plots.tabs.currentIndex() == 2


def test_a_session_whose_model_is_missing_opens_with_the_built_in_one(qtbot, tmp_path):
    text = "where is my model today"
    doc = session_file.SessionDocument(text, (4, 3, 2, 1, 0),
                                       ModelSpec.pretrained(str(tmp_path / "gone"), "gone"),
                                       tuple(text.split()))
    path = session_file.write(tmp_path / "gone.posviz", doc)
    w = MainWindow(make_settings())
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.controller.modelFailed, timeout=TIMEOUT):
        w.start(str(path))
    s = w.session
    assert s.spec.is_builtin and s.text == text and s.order.tolist() == [4, 3, 2, 1, 0]
    qtbot.waitUntil(lambda: "built-in model, keeping the text and the order"
                    in w.state_label.text(), timeout=TIMEOUT)
    _settle(qtbot, w)                      # the evaluation that follows keeps saying so
    assert "keeping the text and the order" in w.state_label.text()


def test_a_restored_real_model_loads_through_the_usual_path(qtbot, tmp_path, monkeypatch):
    from posviz.models import hf
    from posviz.models.backend import TokenSequence
    from posviz.models.builtin.backend import BuiltinBackend

    class Pinned(BuiltinBackend):
        name = "fake-bert"

        def tokenize(self, text):
            seq = super().tokenize(text)
            tokens = ("[CLS]",) + seq.tokens + ("[SEP]",)
            return TokenSequence(tokens, tokens, (True,) + seq.pinned + (True,))
    monkeypatch.setattr(hf, "load_backend", lambda spec, *args, **kwargs: Pinned())
    doc = session_file.SessionDocument(
        "a b c", (0, 3, 1, 2, 4), ModelSpec.pretrained("fake-bert"),
        ("[CLS]", "a", "b", "c", "[SEP]"), selection=Selection(layer=2))
    path = session_file.write(tmp_path / "real.posviz", doc)
    w = MainWindow(make_settings())
    qtbot.addWidget(w)
    w.show()
    from posviz.gui.controller import Controller
    loads, original = [], Controller.load
    monkeypatch.setattr(Controller, "load",
                        lambda self, spec: loads.append(spec) or original(self, spec))
    with qtbot.waitSignal(w.controller.modelLoaded, timeout=TIMEOUT):
        w.start(str(path))
    assert loads == [doc.spec]
    s = w.session
    assert s.spec == doc.spec and s.order.tolist() == [0, 3, 1, 2, 4]
    assert s.selection.layer == 2 and w.files.path == path and not w.isWindowModified()


def test_a_scenario_opens_with_its_explanation(qtbot, window):
    from posviz.gui.scenarios import open_scenario
    path = next(p for p in scenario_paths() if "alibi" in p.name)
    doc = session_file.read(path)
    with qtbot.waitSignal(window.controller.modelLoaded, timeout=TIMEOUT):
        open_scenario(window.files, path, doc)
    assert window.session.spec == doc.spec and window.files.path is None
    panel = window.scenario_panel
    assert panel.isVisible() and panel.windowTitle() == "Scenario"   # the tab's words
    assert panel.browser.toPlainText().startswith(doc.title)
    assert "What to expect" in panel.browser.toPlainText()
    panel.close()
    assert not panel.isVisible()


def test_report_of_a_session_equals_what_the_window_shows(qtbot, window, tmp_path, capsys):
    import json

    from posviz.cli import main as cli
    s = window.session
    s.set_order(np.roll(np.arange(len(s.order)), 3))
    _settle(qtbot, window)
    path = tmp_path / "shown.posviz"
    window.files.save_to(path)
    capsys.readouterr()
    assert cli(["report", "--session", str(path), "--json", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    shown = window.controller.last_shown.evaluation
    assert report["order"] == shown.order.tolist()
    assert metrics_of(report["layers"]) == shown.comparison.rows()


def test_save_session_from_the_command_line_opens_in_the_window(qtbot, window, tmp_path,
                                                                 capsys, monkeypatch):
    import json

    from posviz.cli import main as cli
    path = tmp_path / "cli.posviz"
    assert cli(["report", "--text", "one two three four five", "--order", "4,2,0,1,3",
                "--pe", "rope", "--layers", "3", "--heads", "2", "--d-model", "16",
                "--json", "--save-session", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    with qtbot.waitSignal(window.controller.modelLoaded, timeout=TIMEOUT):
        window.files.open_file(path)
    _settle(qtbot, window)
    shown = window.controller.last_shown.evaluation
    assert shown.order.tolist() == [4, 2, 0, 1, 3]
    assert metrics_of(report["layers"]) == shown.comparison.rows()


def test_export_of_a_session_draws_its_view(tmp_path, capsys):
    from posviz.cli import main as cli
    doc = session_file.SessionDocument(
        "a b c d", (3, 2, 1, 0), ModelSpec.builtin(ModelConfig(layers=2, heads=2,
                                                               d_model=16)),
        ("a", "b", "c", "d"), selection=Selection(layer=2, head=1))
    path = session_file.write(tmp_path / "s.posviz", doc)
    again = tmp_path / "again.posviz"
    assert cli(["export", "--session", str(path), "--out", str(tmp_path / "out"),
                "--format", "png", "--no-csv", "--save-session", str(again)]) == 0
    assert (tmp_path / "out" / "attention.png").is_file()
    saved = session_file.read(again)
    assert saved.order == doc.order and saved.spec == doc.spec
    assert (saved.selection.layer, saved.selection.head) == (2, 1)


@pytest.mark.parametrize("args, words", [
    (["--session", "{bad}"], "not valid JSON"),
    (["--session", "{good}", "--text", "x y"], "--text cannot be given with --session"),
    (["--session", "{good}", "--pe", "rope"], "--pe cannot be given with --session"),
    (["--session", "{missing}"], "no such file"),
])
def test_a_bad_session_on_the_command_line_is_one_line(tmp_path, capsys, args, words):
    from posviz.cli import main as cli
    bad = tmp_path / "bad.posviz"
    bad.write_text("{")
    good = session_file.write(tmp_path / "good.posviz", session_file.SessionDocument(
        "a b", (1, 0), ModelSpec.builtin()))
    files = {"{bad}": str(bad), "{good}": str(good), "{missing}": str(tmp_path / "no.posviz")}
    assert cli(["report", *[files.get(a, a) for a in args]]) == 2
    err = capsys.readouterr().err
    assert words in err and len(err.strip().splitlines()) == 1


def test_new_and_the_recent_list(qtbot, window, tmp_path, monkeypatch):
    from posviz.document.session import DEFAULT_TEXT
    w = window
    for k in range(12):
        w.files.save_to(tmp_path / f"s{k}.posviz")
    recent = recent_files(w.settings)
    assert len(recent) == 10 and recent[0].endswith("s11.posviz")
    w.files.fill_recent_menu(w.recent_menu)
    names = [a.text() for a in w.recent_menu.actions() if a.text()]
    assert names[0] == "&1 s11.posviz" and "Clear list" in names
    w.session.rotate()
    _answer(monkeypatch, QMessageBox.Discard)
    w.files.new_document()
    s = w.session
    assert s.text == DEFAULT_TEXT and s.order.tolist() == list(range(len(s.order)))
    assert w.files.path is None and "untitled" in w.windowTitle()


def test_splitter_sizes_and_the_tab_come_back(qtbot, window):
    from PySide6.QtWidgets import QSplitter
    splitter = window.plots.tabs.widget(0).findChildren(QSplitter)[0]
    total = sum(splitter.sizes())
    splitter.setSizes([total // 4, total - total // 4])
    wanted = splitter.sizes()
    window.session.select(window.session.selection.replace(tab=1))
    window.close()
    again = on_screen(qtbot, MainWindow(make_settings()), 1200, 800)
    with qtbot.waitSignal(again.controller.ready, timeout=TIMEOUT):
        again.start()
    assert again.plots.tabs.currentIndex() == 1
    again.plots.tabs.setCurrentIndex(0)
    restored = again.plots.tabs.widget(0).findChildren(QSplitter)[0].sizes()
    assert abs(restored[0] / sum(restored) - wanted[0] / sum(wanted)) < 0.02


def test_help_scenarios_lists_every_scenario_and_opens_the_chosen(qtbot, window,
                                                                   monkeypatch):
    from PySide6.QtWidgets import QDialog

    from posviz.gui import scenarios as gui_scenarios
    shown = []

    def choose_the_third(dialog):
        shown.append([dialog.list.item(k).text() for k in range(dialog.list.count())])
        dialog.list.setCurrentRow(2)
        return QDialog.Accepted
    monkeypatch.setattr(gui_scenarios.ScenarioDialog, "exec", choose_the_third)
    paths = scenario_paths()
    third = session_file.read(paths[2])
    with qtbot.waitSignal(window.controller.modelLoaded, timeout=TIMEOUT):
        window.scenarios_action.trigger()      # its model (float64) loads first
    assert shown[0] == [session_file.read(p).title for p in paths]
    assert window.session.spec == third.spec
    assert window.session.order.tolist() == list(third.order)
    assert window.scenario_panel.isVisible()


@pytest.mark.asynchronous
def test_cancelling_the_load_of_a_files_model_opens_nothing(qtbot, window, slow_model_file):
    path, _, release = slow_model_file
    s = window.session
    before = (s.text, s.order.tolist(), s.spec)
    assert window.files.open_file(path)
    window.model_panel.cancelRequested.emit()
    release.set()
    assert "cancelled" in window.state_label.text()
    assert (s.text, s.order.tolist(), s.spec) == before and window.files.path is None
    s.rotate()
    assert window.isWindowModified()           # edits count again


def test_an_edit_is_autosaved_a_moment_later(qtbot, window):
    window.files.autosave_timer.setInterval(10)
    path = window.files.autosave_path()
    window.session.rotate()
    qtbot.waitUntil(path.exists, timeout=TIMEOUT)
    assert session_file.read(path).order == tuple(window.session.order.tolist())


def test_a_file_whose_model_now_splits_the_text_otherwise_keeps_its_text(
        qtbot, window, tmp_path, monkeypatch):
    from posviz.models import hf
    from posviz.models.builtin.backend import BuiltinBackend
    monkeypatch.setattr(hf, "load_backend", lambda spec, *a, **k: BuiltinBackend())
    doc = session_file.SessionDocument("p q r", (2, 0, 1), ModelSpec.pretrained("retrained"),
                                       ("p", "q", "x"))     # saved with other tokens
    path = session_file.write(tmp_path / "old.posviz", doc)
    with qtbot.waitSignal(window.controller.modelLoaded, timeout=TIMEOUT):
        assert window.files.open_file(path)
    s = window.session
    assert s.spec == doc.spec and s.text == "p q r" and s.order.tolist() == [0, 1, 2]
    assert "original order" in window.state_label.text()
    assert window.files.path is None            # a save does not overwrite the old file


def test_the_tab_saved_is_the_tab_open_experiments_too(qtbot, window, tmp_path):
    """Experiments open when saving: the file says so (it said Outputs), and reopens it."""
    tabs = window.plots.tabs
    tabs.setCurrentWidget(window.experiments)
    index = tabs.currentIndex()
    assert window.files.save_to(tmp_path / "lecture.posviz")
    saved = json.loads((tmp_path / "lecture.posviz").read_text())
    assert saved["view"]["tab"] == index
    tabs.setCurrentIndex(0)
    assert window.session.selection.tab == 0
    window.files.open_file(tmp_path / "lecture.posviz")
    qtbot.waitUntil(lambda: tabs.currentWidget() is window.experiments, timeout=TIMEOUT)


@pytest.mark.parametrize("change", ["text", "model"])
def test_a_scenarios_title_and_note_let_go_once_its_text_or_model_changes(
        qtbot, window, tmp_path, change):
    from posviz.document.scenarios import resources_dir
    from posviz.gui.scenarios import open_scenario
    path = resources_dir() / "scenarios" / "01-nope-equivariance.posviz"
    doc = session_file.read(path)
    with qtbot.waitSignal(window.controller.evaluated, timeout=TIMEOUT):
        open_scenario(window.files, path, doc)
    panel = window.scenario_panel
    assert window.files.document().title == doc.title
    assert panel.browser.toPlainText().startswith(doc.title)
    with qtbot.waitSignal(window.controller.evaluated, timeout=TIMEOUT):
        if change == "text":
            window.session.set_text("two thousand other words")
        else:
            window.model_panel.field("layers").setValue(window.session.spec.config.layers + 1)
    saved = window.files.document()
    assert (saved.title, saved.note) == ("", "")
    assert window.files.save_to(tmp_path / "mine.posviz")
    assert session_file.read(tmp_path / "mine.posviz").title == ""
    assert panel.windowTitle() == "Scenario — changed"          # "(left)" read as a place
    assert f"You changed the {change}" in panel.browser.toPlainText()
    assert doc.title in panel.browser.toPlainText()       # what it was, still there


def metrics_of(layers: list[dict]) -> list[dict]:
    """report --json's rows without the spread over tokens (views.reading): the metrics
    a Comparison holds."""
    from posviz.analysis.symmetry import METRICS
    return [{key: row[key] for key in ("layer", *METRICS)} for row in layers]


def test_the_timers_autosave_writes_while_the_window_goes_on(qtbot, window, monkeypatch):
    import threading
    release, wrote = threading.Event(), []
    real_write = session_file.write

    def slow_write(path, doc):                  # a disk that takes its time to sync
        release.wait(10)
        wrote.append(threading.current_thread() is threading.main_thread())
        return real_write(path, doc)

    monkeypatch.setattr(session_file, "write", slow_write)
    path = window.files.autosave_path()
    window.session.rotate()
    window.files.autosave(background=True)      # returns before the write is done
    assert not wrote and not path.exists()
    release.set()
    qtbot.waitUntil(path.exists, timeout=TIMEOUT)
    assert wrote == [False]
    assert session_file.read(path).order == tuple(window.session.order.tolist())


def test_a_scenario_s_line_says_what_opened_not_the_original_order(qtbot, window,
                                                                     monkeypatch):
    """Opening "The causal mask leaks position: swap [A, B] to [B, A]" said "New tokens:
    back to the original order, undo starts here" while the strip showed the swap (a
    teacher's run): the line names the scenario and the order it opened in."""
    from PySide6.QtWidgets import QDialog

    from posviz.gui import scenarios as gui_scenarios
    path = next(p for p in scenario_paths() if "causal-prefix-swap" in p.name)
    doc = session_file.read(path)

    def choose_it(dialog):
        dialog.list.setCurrentRow(scenario_paths().index(path))
        return QDialog.Accepted
    monkeypatch.setattr(gui_scenarios.ScenarioDialog, "exec", choose_it)
    with qtbot.waitSignal(window.controller.modelLoaded, timeout=TIMEOUT):
        window.scenarios_action.trigger()
    _settle(qtbot, window)
    line = window.state_label.text()
    words = [doc.text.split()[i] for i in doc.order]
    assert line.startswith(f"Opened scenario '{doc.title.split(':')[0]}': "
                           f"{', '.join(words[:3])}, "), line
    assert "undo starts here" in line and "original order" not in line, line
