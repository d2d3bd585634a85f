"""A start that would not fit: the session is shown, not computed.

When the document the window starts with (a session file, or the last session) would
need more memory than the memory check allows (models.limits.memory), the window opens with
its text, and its order where the built-in model's tokens hold it, without loading its
model or computing anything. A notice in place of the plots says why, in the memory
check's words, with one click to run it anyway and one to open the built-in model
instead. Until then the file keeps its model: the autosave writes the document as it
was opened, or, once edited, the edits with its own model.
"""
from __future__ import annotations

from dataclasses import replace

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout

NOTICE_STYLE = ("QFrame#heldNotice { background: #fff8e1; border: 1px solid #f0c36d;"
                " border-radius: 4px; }")


def too_large(doc) -> str | None:
    """Why ``doc``'s model and length would not fit in memory (the memory check's words),
    or None when they fit."""
    from ..errors import PosvizInputError
    try:
        doc.spec.check_memory(len(doc.order))
    except PosvizInputError as error:     # too many positions: opening the file says so
        return None if getattr(error, "reason", "memory") == "positions" else str(error)
    return None


class HeldNotice(QFrame):
    """Why the session was not computed, and the two ways on."""

    runRequested = Signal()
    builtinRequested = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setObjectName("heldNotice")
        self.setStyleSheet(NOTICE_STYLE)
        self.message = QLabel(wordWrap=True, textInteractionFlags=Qt.TextSelectableByMouse)
        self.run_button = QPushButton("Run it anyway")
        self.run_button.setToolTip("Load its model and compute it: it may need more "
                                   "memory than is free")
        self.builtin_button = QPushButton("Open with the built-in model")
        self.builtin_button.setToolTip("Compute the text with the small built-in model "
                                       "instead; the session file keeps its model")
        self.run_button.clicked.connect(self.runRequested)
        self.builtin_button.clicked.connect(self.builtinRequested)
        buttons = QHBoxLayout()
        buttons.addWidget(self.run_button)
        buttons.addWidget(self.builtin_button)
        buttons.addStretch(1)
        layout = QVBoxLayout(self)
        layout.addWidget(self.message)
        layout.addLayout(buttons)

    def say(self, text: str) -> None:
        self.message.setText(text)


def attach_held_notice(window) -> None:
    """Show ``window.files``' held document as a notice in the plots' place (the page is
    built on the first such start: ``window.held_notice`` is None until then)."""
    window.held_notice = None

    def show(text: str) -> None:
        if window.held_notice is None:
            window.held_notice = _notice_page(window)
        window.held_notice.say(text)
        window.plots_area.setCurrentWidget(window.held_notice.parentWidget())

    def hide() -> None:
        window.plots_area.setCurrentWidget(window.plots_scroll or window.placeholder)
    window.files.held.connect(show)
    window.files.released.connect(hide)


def _notice_page(window) -> HeldNotice:
    from PySide6.QtWidgets import QWidget
    page = QWidget()
    notice = HeldNotice(page)
    layout = QVBoxLayout(page)
    layout.addWidget(notice)
    layout.addStretch(1)
    window.plots_area.addWidget(page)
    notice.runRequested.connect(window.files.run_held)
    notice.builtinRequested.connect(window.files.open_builtin)
    return notice


class HoldsStart:
    """The part of gui.documents.Documents that holds a start that would not fit
    (``_held``: the Pending shown, not computed; ``_held_edited``: edited since)."""

    def _hold(self, pending, reason: str) -> None:
        """Show the document's text (and order, where the built-in model's tokens hold
        it) without computing it, bound to its file, and say why (``held``)."""
        from ..errors import PosvizInputError
        doc = pending.doc
        self._held, self._held_edited = pending, False
        self._applying = True
        try:
            self.session.restore(doc.text, doc.order, doc.positions, doc.selection,
                                 doc.tokens)
        except PosvizInputError:
            pass                              # its model's tokens: the text in its order
        finally:
            self._applying = False
        self.path = pending.path
        self.set_modified(pending.modified and self.path is not None)
        self._texts = (doc.title, doc.note)
        self.renamed.emit()
        what = f"{doc.spec.name} on {len(doc.order)} tokens"
        self._status.say(f"Not computed: {what} would not fit in memory", error=True)
        self.held.emit(f"<b>Not computed:</b> {what}. The memory check says {reason}.")

    def _release(self):
        """The held document, as edited, once nothing is held any more."""
        pending = replace(self._held, doc=self.document())
        self._held = None
        self._controller.held = False
        self.released.emit()
        return pending

    def run_held(self) -> None:
        """Run the held document with its own model, whatever the memory check says."""
        if self._held is None:
            return
        pending = self._release()
        if pending.doc.spec == self.session.spec:
            self._apply_now(pending)
        else:
            self._pending = replace(pending, loaded=True)
            self._controller.load(pending.doc.spec, check_memory=False)

    def open_builtin(self) -> None:
        """Open the held document's text (and order, where it fits) with the built-in
        model instead of its own: untitled, its file unchanged."""
        if self._held is None:
            return
        pending = self._release()
        self._apply_now(replace(pending, fallback=(
            f"opened with the built-in model instead of {pending.doc.spec.name}, "
            f"keeping the text")))

    def _apply_now(self, pending) -> None:
        self._pending = pending
        self._apply_pending()
        self._controller.request()            # the text and order shown may be unchanged
