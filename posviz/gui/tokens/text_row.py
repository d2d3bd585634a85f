"""The text to tokenize: a field applied on Enter or after a pause in typing, with its
error under it (and a Truncate button when the text is too long for the model)."""
from __future__ import annotations

from PySide6.QtCore import QEvent, QTimer, Signal
from PySide6.QtGui import QAction, QKeyEvent, QKeySequence
from PySide6.QtWidgets import QHBoxLayout, QLabel, QLineEdit, QPushButton, QVBoxLayout, QWidget

from ..status import ERROR_STYLE, WHOLE_TEXT

TEXT_DEBOUNCE_MS = 700
HINT = ("Drag the chips to reorder them · small numbers: original places · blue: in "
        "place · orange: moved · grey: special tokens that stay put")
SHORT_KEY = "chips: blue: in place · orange: moved · grey: special"


EDITING = (QKeySequence.StandardKey.Copy, QKeySequence.StandardKey.Cut,
           QKeySequence.StandardKey.Paste, QKeySequence.StandardKey.Undo,
           QKeySequence.StandardKey.Redo, QKeySequence.StandardKey.SelectAll)


class TextField(QLineEdit):
    """The text's field, which gives the window's shortcuts way: it took Ctrl+E (its end
    of line on X11) and Export figures never opened from a window that starts with the
    field in focus. The keys of editing (copy, paste, undo…) stay its own. It takes a
    pasted text whole (WHOLE_TEXT): the guard, in words and tokens, says when it is too long."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setMaxLength(WHOLE_TEXT)

    def event(self, event: QEvent) -> bool:
        if (event.type() == QEvent.Type.ShortcutOverride
                and self.windows_key(event)):
            event.ignore()                       # the shortcut fires, not the field's key
            return True
        return super().event(event)

    def windows_key(self, event: QKeyEvent) -> bool:
        """``event``'s keys are a shortcut of the window's, and no editing key."""
        if any(event.matches(key) for key in EDITING):
            return False
        pressed = QKeySequence(event.keyCombination())
        return any(pressed.matches(keys) == QKeySequence.SequenceMatch.ExactMatch
                   for action in self.window().findChildren(QAction)
                   for keys in action.shortcuts())


class TextRow(QWidget):
    """The field (``edit``), its error (``error``), ``truncate_button`` and a hint line;
    ``applyRequested(truncate)`` asks for the text to become tokens."""

    applyRequested = Signal(bool)

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(4)
        row = QHBoxLayout()
        caption = QLabel("Text")
        caption.setStyleSheet("font-weight: 600;")
        self.edit = TextField()
        self.edit.setPlaceholderText("Type a sentence; its tokens become chips below")
        self.edit.setToolTip("The sentence to tokenize. Press Enter (or pause typing) "
                             "to turn it into chips; edits can be undone with Ctrl+Z.")
        self.edit.setClearButtonEnabled(True)
        self.typing = QTimer(self, singleShot=True, interval=TEXT_DEBOUNCE_MS,
                             timeout=lambda: self.applyRequested.emit(False))
        self.edit.returnPressed.connect(lambda: self.applyRequested.emit(False))
        self.edit.textEdited.connect(lambda _: self.typing.start())
        # a short window's chip key: on the field's line, the hint's line going to the plots
        self.key = QLabel(SHORT_KEY)
        self.key.setStyleSheet("color: #6b7a8c; font-size: 11px;")
        self.key.setToolTip(HINT)
        row.addWidget(caption)
        row.addWidget(self.edit, 1)
        row.addWidget(self.key)
        layout.addLayout(row)
        error_row = QHBoxLayout()
        self.error = QLabel(wordWrap=True)
        self.error.setStyleSheet(ERROR_STYLE)
        self.truncate_button = QPushButton("Truncate")
        self.truncate_button.setToolTip("Keep only as many tokens as the model has positions")
        self.truncate_button.clicked.connect(lambda: self.applyRequested.emit(True))
        self.hint = QLabel(HINT)
        self.hint.setStyleSheet("color: #6b7a8c; font-size: 11px;")
        error_row.addWidget(self.error, 1)
        error_row.addWidget(self.truncate_button)
        error_row.addStretch(0)
        error_row.addWidget(self.hint)
        layout.addLayout(error_row)
        self.short = False        # a short window gives the plots the hint's line
        self.show_error("")

    def show_error(self, message: str, can_truncate: bool = False) -> None:
        """Tell what is wrong with the text ("" when nothing is)."""
        self.error.setText(message)
        self.error.setVisible(bool(message))
        self.hint.setVisible(not message and not self.short)
        self.key.setVisible(self.short)
        self.truncate_button.setVisible(can_truncate)
        self.edit.setStyleSheet("QLineEdit { border: 1px solid #c62828; }"
                                if message else "")

    def set_short(self, short: bool) -> None:
        """In a short window (a projector, a small laptop) the hint gives its line to
        the plots: the chips' colour key, short, goes beside the field (the whole hint
        in its tooltip and the strip's)."""
        self.short = short
        self.hint.setVisible(not self.error.text() and not short)
        self.key.setVisible(short)
