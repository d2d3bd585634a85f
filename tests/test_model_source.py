"""The model panel opens a model folder or a single .gguf file (as --model PATH does),
and its dialogs start where the last model was opened from."""
import pytest

pytest.importorskip("PySide6")

from posviz.document.spec import ModelSpec  # noqa: E402
from posviz.gui.model_panel import model_source  # noqa: E402
from posviz.gui.model_panel.panel import ModelPanel  # noqa: E402
from posviz.models.config import ModelConfig, Positions  # noqa: E402


@pytest.fixture
def panel(qtbot):
    widget = ModelPanel(lambda: ModelSpec.builtin(ModelConfig()), Positions())
    qtbot.addWidget(widget)
    return widget


def choose(panel, kind):
    index = next(i for i in range(panel.chooser.count())
                 if panel.chooser.itemData(i) == (kind, ""))
    panel.chooser.setCurrentIndex(index)
    panel._model_chosen(index)


def test_a_gguf_file_can_be_opened(panel, monkeypatch, tmp_path):
    model = tmp_path / "models" / "tiny.gguf"
    model.parent.mkdir()
    model.write_bytes(b"GGUF")
    starts = []

    def pick(parent, caption, start, filters):
        starts.append(start)
        assert "*.gguf" in filters
        return str(model), filters.split(";;")[0]

    monkeypatch.setattr(model_source.QFileDialog, "getOpenFileName", staticmethod(pick))
    asked = []
    panel.modelRequested.connect(asked.append)
    choose(panel, "gguf")
    assert [spec.source for spec in asked] == [str(model)]
    choose(panel, "gguf")                              # starts where the last one was
    assert starts[-1] == str(model.parent)


def test_a_folder_still_opens_and_a_cancel_changes_nothing(panel, monkeypatch, tmp_path):
    folders = [str(tmp_path), ""]
    monkeypatch.setattr(model_source.QFileDialog, "getExistingDirectory",
                        staticmethod(lambda parent, caption, start: folders.pop(0)))
    asked = []
    panel.modelRequested.connect(asked.append)
    choose(panel, "open")
    choose(panel, "open")                              # cancelled
    assert [spec.source for spec in asked] == [str(tmp_path)]
    assert panel.chooser.currentIndex() == 0           # the running built-in model again


def test_a_file_that_is_not_gguf_is_named_with_the_real_problem(qtbot, window, monkeypatch,
                                                                 tmp_path):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(bytes(range(256)))
    monkeypatch.setattr(model_source.QFileDialog, "getOpenFileName",
                        staticmethod(lambda *args: (str(bad), "GGUF models (*.gguf)")))
    with qtbot.waitSignal(window.controller.modelFailed, timeout=60_000) as failed:
        choose(window.model_panel, "gguf")
    said = f"{bad} is not a GGUF file (it does not start with the GGUF magic bytes)"
    assert failed.args[0] == said and "tokenizer" not in failed.args[0]
    assert window.status.label.text() == said and window.status.is_error()


def test_the_command_line_names_a_file_that_is_not_gguf_in_one_line(capsys, tmp_path):
    from posviz.cli import main
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"")
    assert main(["report", "--model", str(bad)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == (f"posviz: error: {bad} is not a GGUF file (it does not "
                                 "start with the GGUF magic bytes)\n")


def test_a_gguf_file_of_a_version_no_reader_reads_is_refused_before_any_conversion(capsys,
                                                                                  tmp_path):
    """"GGUF" and zeros was announced as "converting bad.gguf once: ... about 0-0 s",
    then refused as a tokenizer of its folder (a user's run)."""
    from posviz.cli import main
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF" + bytes(60))
    assert main(["report", "--model", str(bad), "--progress"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "converting" not in err and "tokenizer" not in err, err
    assert err.splitlines()[-1] == (f"posviz: error: {bad} is GGUF version 0 (a damaged "
                                    "file?): posviz reads versions 2 and 3")


def test_a_refused_sources_message_goes_when_another_source_is_chosen(panel):
    panel.model_failed("no model folder at /tmp/no-such-model")
    assert panel.load.status.isVisibleTo(panel)
    panel.chooser.setCurrentIndex(0)
    panel._model_chosen(0)                             # the built-in model, running
    assert not panel.load.status.isVisibleTo(panel) and panel.load.status.text() == ""


def test_a_session_whose_model_folder_is_missing_leaves_no_message_in_the_panel(
        qtbot, window, tmp_path):
    """The built-in model stands in; the status line says why until the next edit, the
    panel (which shows the built-in model) keeps no stale red line."""
    from dataclasses import replace

    from posviz.document import session_file
    path, missing = tmp_path / "s.posviz", tmp_path / "no-such-model"
    session_file.write(path, replace(window.files.document(),
                                     spec=ModelSpec.pretrained(str(missing))))
    with qtbot.waitSignal(window.controller.modelFailed, timeout=60_000):
        window.files.open_file(path)
    qtbot.waitUntil(lambda: window.files.path is None and not window.controller.loading)
    assert f"no model folder at {missing}" in window.state_label.text()
    assert not window.model_panel.load.status.isVisibleTo(window.model_panel)
