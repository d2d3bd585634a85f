"""The window and hub names: a determinate download bar, the question before a large
download, Cancel that leaves no partial model, the chooser's hub name, the setting that
turns downloads off. Against the stand-in hub of tests/hub_stub.py."""
from __future__ import annotations

import threading

import pytest

pytest.importorskip("transformers")
pytest.importorskip("huggingface_hub")

from test_hub import NAME, online, saved, stub  # noqa: E402,F401,F811  (fixtures)

from posviz.document.session_file import document_of  # noqa: E402
from posviz.document.spec import ModelSpec  # noqa: E402
from posviz.models.hf import cache  # noqa: E402

TIMEOUT = 60_000


def loader_idle() -> bool:
    return not any(t.name == "posviz-load" and t.is_alive() for t in threading.enumerate())


def test_a_hub_name_downloads_with_a_determinate_bar_and_is_pinned(qtbot, online, window):
    c, panel = window.controller, window.model_panel
    shown = []
    c.modelCount.connect(lambda step, done, total: shown.append(
        (step, done, total, panel.load.busy.maximum(), panel.load.busy.value(),
         panel.load.busy.text(), panel.load.status.text())))
    with qtbot.waitSignal(c.modelLoaded, timeout=TIMEOUT):
        c.load(ModelSpec.pretrained(NAME))
    downloads = [row for row in shown if row[0].startswith("downloading file")]
    total = downloads[0][2]
    assert [row[0][:24] for row in downloads][-1] == "downloading file 4 of 4 "
    assert [row[1] for row in downloads] == sorted(row[1] for row in downloads)
    assert downloads[-1][1] == total and downloads[-1][3:6] == (1000, 1000, "100%")
    for step, done, _, maximum, value, text, status in downloads:
        assert value == 1000 * done // total and text == f"{value // 10}%"
        assert status.startswith(f"{NAME}: {step}: ") and status.endswith("%)…")
    assert panel.load.status.text() == f"Using {NAME}."
    commit = online.repos[NAME].refs["main"]
    assert c.session.backend.revision == commit
    assert document_of(c.session).spec == ModelSpec.pretrained(NAME, revision=commit)
    assert panel.chooser.currentText() == NAME


def test_a_large_download_is_asked_for_and_cancel_starts_nothing(qtbot, online, window,
                                                                monkeypatch):
    from posviz.gui import controller
    monkeypatch.setattr(controller, "ASK_ABOVE_BYTES", 1000)
    c, panel = window.controller, window.model_panel
    backend = c.session.backend
    with qtbot.waitSignal(c.downloadAsked, timeout=TIMEOUT) as asked:
        c.load(ModelSpec.pretrained(NAME))
    assert asked.args[0] == ModelSpec.pretrained(NAME)
    assert panel.load.download.isVisible() and panel.load.cancel.isVisible()
    assert not panel.load.busy.isVisible()
    question = panel.load.status.text()
    assert question.startswith(f"{NAME} at ") and ": 4 files, 0.2 MB to download into " \
        in question and question.endswith(". Download it?")
    assert online.files_fetched() == ["config.json"] and cache.cached_models() == {}
    panel.load.cancel.click()
    assert panel.load.status.text().startswith("Download not started")
    assert not panel.load.download.isVisible() and c.session.backend is backend

    with qtbot.waitSignal(c.downloadAsked, timeout=TIMEOUT):
        c.load(ModelSpec.pretrained(NAME))
    with qtbot.waitSignal(c.modelLoaded, timeout=TIMEOUT):
        panel.load.download.click()                          # yes: whatever its size
    assert c.session.spec == ModelSpec.pretrained(NAME)
    assert list(cache.cached_models()) == [NAME]


@pytest.mark.asynchronous
def test_cancel_halfway_leaves_nothing_a_later_load_trusts(qtbot, online, window):
    from PySide6.QtCore import Qt
    c, panel = window.controller, window.model_panel
    backend = c.session.backend
    clicked, reached = threading.Event(), []

    def on_worker(token, step, done, total):     # on the loading thread: wait for Cancel
        if step.startswith("downloading file 3 "):
            reached.append(step)
            clicked.wait(30)
    c._bridge.progress.connect(on_worker, Qt.DirectConnection)
    c.load(ModelSpec.pretrained(NAME))
    qtbot.waitUntil(lambda: bool(reached) and panel.load.busy.isVisible(), timeout=TIMEOUT)
    panel.load.cancel.click()
    clicked.set()
    qtbot.waitUntil(loader_idle, timeout=TIMEOUT)
    assert c.session.backend is backend and not c.loading
    assert "cancelled" in panel.load.status.text()
    repo = cache.repo_folder(NAME)
    assert not (repo / "snapshots").exists() or not any((repo / "snapshots").iterdir())
    assert cache.cached_models() == {} and not (repo / "refs").exists()
    assert "model.safetensors" in online.files_fetched()     # it got that far
    assert "config.json" not in online.files_fetched()[1:]   # (read aside first only)


def test_the_chooser_takes_a_hub_name_with_its_revision(qtbot, online, window, monkeypatch):
    c, panel = window.controller, window.model_panel
    index = next(i for i in range(panel.chooser.count())
                 if panel.chooser.itemData(i) == ("hub", ""))
    monkeypatch.setattr(type(panel), "ask_hub_name", lambda _: ("not a name", True))
    panel._model_chosen(index)
    assert "'not a name' is not a hub name" in panel.load.status.text()
    assert c.session.spec.is_builtin
    monkeypatch.setattr(type(panel), "ask_hub_name", lambda _: (f" {NAME}@v1 ", True))
    with qtbot.waitSignal(c.modelLoaded, timeout=TIMEOUT) as loaded:
        panel._model_chosen(index)
    assert loaded.args[0] == ModelSpec.pretrained(NAME, revision="v1")
    assert panel.chooser.currentData() == ("real", f"{NAME}@v1")


def test_downloads_turned_off_load_only_what_is_cached(qtbot, online, window):
    from posviz.gui.settings import downloads_allowed
    c, panel = window.controller, window.model_panel
    assert panel.downloads.isChecked() and panel.downloads.isEnabled()
    panel.downloads.setChecked(False)
    assert not downloads_allowed()                      # kept in the settings
    with qtbot.waitSignal(c.modelFailed, timeout=TIMEOUT) as failed:
        c.load(ModelSpec.pretrained(NAME))
    assert failed.args[0].startswith(f"no model '{NAME}' in the local Hugging Face cache")
    assert online.requests == []
    panel.downloads.setChecked(True)
    panel.set_offline(True)                             # posviz --offline
    assert not panel.downloads.isEnabled() and "--offline" in panel.downloads.toolTip()
    assert not panel.downloads.isChecked()              # not "on" while greyed out
    assert downloads_allowed()                          # the next run's setting is kept


def test_a_hub_name_on_the_command_line_downloads_once_the_window_is_ready(
        qtbot, online, private_settings):
    from posviz.gui.settings import make_settings
    from posviz.gui.window import MainWindow
    w = MainWindow(make_settings())
    qtbot.addWidget(w)
    w.show()
    c = w.controller
    counted = []
    c.modelCount.connect(lambda step, done, total: counted.append(step))
    with qtbot.waitSignal(c.modelLoaded, timeout=TIMEOUT):      # posviz --model NAME
        w.start(model=NAME)
    assert any(step.startswith("downloading file 4 of 4 ") for step in counted)
    assert c.session.spec == ModelSpec.pretrained(NAME)
    assert w.model_panel.load.status.text() == f"Using {NAME}."


def test_a_pinned_session_opens_its_commit_on_another_computer(qtbot, online, saved, window,
                                                               tmp_path, monkeypatch):
    from posviz.document.session_file import read, write
    from posviz.models.hf import load_backend
    session = tmp_path / "pinned.posviz"
    with qtbot.waitSignal(window.controller.modelLoaded, timeout=TIMEOUT):
        window.controller.load(ModelSpec.pretrained(NAME))
    write(session, document_of(window.controller.session))
    commit = online.repos[NAME].refs["main"]
    online.add(NAME, saved / "bert")                         # main moves on
    monkeypatch.setenv("HF_HOME", str(tmp_path / "elsewhere"))
    doc = read(session)
    assert doc.spec.revision == commit
    with qtbot.waitSignal(window.controller.modelLoaded, timeout=TIMEOUT):
        window.files.open_document(doc, session)
    backend = window.controller.session.backend
    assert backend.revision == commit and backend.family.name == "gpt2"
    assert str(tmp_path / "elsewhere") in backend.path
    assert load_backend(NAME, online=True).family.name == "bert"   # the name alone: main
