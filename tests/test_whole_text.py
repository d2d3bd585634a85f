"""A text pasted into any field of the window is kept whole: a QLineEdit cut 64,015
pasted characters to its default 32,767, mid-word and without a word to the user."""
import pytest

pytest.importorskip("PySide6")

from PySide6.QtCore import QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QInputDialog, QLineEdit  # noqa: E402

WORDS = ("the", "dog", "sat", "old", "fox", "ran")


def long_text(n_words: int = 12_000) -> str:
    """``n_words`` short words, more characters than a QLineEdit's default 32,767."""
    return " ".join(WORDS[i % len(WORDS)] + str(i % 7) for i in range(n_words))


def paste(edit: QLineEdit, text: str) -> None:
    """Paste ``text`` into ``edit`` through the clipboard, as a user does."""
    QApplication.clipboard().setText(text)
    edit.setFocus()
    edit.clear()
    edit.paste()


def test_the_text_field_takes_a_long_paste_whole_and_the_guard_tells_why_not(qtbot, window):
    from posviz.document.spec import ModelSpec
    from posviz.models.config import ModelConfig
    text = long_text()
    assert len(text) > 32_767
    s = window.controller.session
    with qtbot.waitSignal(window.controller.modelLoaded, timeout=30_000):
        window.controller.load(ModelSpec.builtin(ModelConfig(pe="learned", max_len=64)))
    old_tokens = s.tokens
    paste(window.text_edit, text)
    assert window.text_edit.text() == text                   # nothing cut, nothing lost
    window.apply_text()
    # the model has fewer positions than the 12,000 words: said inline, with Truncate
    assert window.text_error.isVisible() and "12,000 tokens" in window.text_error.text()
    assert window.truncate_button.isVisible()
    assert s.tokens == old_tokens and window.text_edit.text() == text


def test_the_export_folder_field_takes_a_long_paste_whole(qtbot, tmp_path):
    from PySide6.QtWidgets import QWidget
    from posviz.gui.export_dialog import ExportDialog
    parent = QWidget()
    qtbot.addWidget(parent)
    dialog = ExportDialog(parent, str(tmp_path))
    path = "/".join(["folder"] * 6000)
    paste(dialog.folder_edit, path)
    assert dialog.folder_edit.text() == path


def test_the_hub_name_dialog_takes_a_long_paste_whole(window):
    panel, name = window.model_panel, "org/" + "x" * 40_000

    def answer():
        dialog = next(w for w in QApplication.topLevelWidgets()
                      if isinstance(w, QInputDialog) and w.isVisible())
        paste(dialog.findChild(QLineEdit), name)
        dialog.accept()
    QTimer.singleShot(50, answer)
    assert panel.ask_hub_name() == (name, True)
