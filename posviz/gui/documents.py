"""The window's files: New, Open, Save, Save As, Open Recent, and the last session.

A document is read and checked (document.session_file) before anything changes; when
it names another model, that model loads through the controller's usual path first and
the rest of the document follows once it runs (gui.opening: the built-in model stands in,
keeping the text, for a model that cannot be loaded).

The last session is written to ``<settings>-last-session.posviz`` beside the settings
file (``posviz-last-session.posviz`` in ~/.config/posviz on Linux) a few seconds after
each edit and when the window closes, and opened again at the next start (gui.last_session);
once the changes to a file are discarded, it is the file as saved. Edits to the
text, order, positions or model mark the document modified (the title's ``*``); what is
looked at (layer, head, tab) is saved with it but marks nothing. A document that would not
fit in memory (models.limits.memory) is shown at start, not computed (``held``): the file keeps
its model, and one click runs it anyway or opens the built-in model (gui.held_start).
"""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QFileDialog, QMessageBox

from .folders import (forget_recent, recent_files, remember_folder, remember_recent,
                      start_folder)
from .held_start import HoldsStart, too_large
from .last_session import (autosave_path, bound_file, read_quietly, remember_last,
                           restored_modified)
from .opening import OpensDocuments, Pending

AUTOSAVE_MS = 3000                    # quiet time after an edit before the autosave
FILTER = "posviz sessions (*.posviz);;All files (*)"


def ask_unsaved(parent, name: str) -> QMessageBox.StandardButton:
    """Save, Discard or Cancel for a modified document (tests replace this)."""
    return QMessageBox.question(
        parent, "Unsaved changes", f"Save the changes to {name}?",
        QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel, QMessageBox.Save)


class Documents(HoldsStart, OpensDocuments, QObject):
    """File menu behaviour, the modified mark, and the autosaved last session, for
    ``window`` (the parent of its dialogs, which shows the modified mark)."""

    renamed = Signal()                # the document's file (or none) changed
    opened = Signal(object)           # the SessionDocument shown (its title and note)
    detached = Signal(str)            # its title and note no longer apply: "text", "model"
    held = Signal(str)                # the document started with is shown, not run: why
    released = Signal()               # ... and now runs (or the built-in model does)
    awaiting = Signal(str)            # its model, loading at start: its name; "" once over

    def __init__(self, window, settings, controller, undo_stack, edits, status):
        super().__init__(window)
        self._window = window
        self.settings = settings
        self._controller = controller     # its session, once the core is loaded
        self._stack = undo_stack
        self._edits = edits
        self._status = status
        self.path: Path | None = None     # the file the document is bound to
        self.modified = False
        self._discarded = False           # the file's changes were discarded, none since
        self._applying = False            # a document is being applied: no modified mark
        self._pending: Pending | None = None   # a document whose model is being loaded
        self._starting: tuple | None = None    # (document, path) to show once ready
        self._texts = ("", "")            # the open document's title and note
        self.kept_remark = ""             # where the last run's unsaved edits were kept
        self._held: Pending | None = None      # shown, not computed: it would not fit
        self._held_edited = False         # ... and edited since
        # the timer's autosave writes (and syncs) on a thread of its own, not holding the
        # window (benchmarks/README.md); one thread keeps the writes in order
        self._writer = ThreadPoolExecutor(1, thread_name_prefix="posviz-autosave")
        self.autosave_timer = QTimer(self, singleShot=True, interval=AUTOSAVE_MS,
                                     timeout=lambda: self.autosave(background=True))

    @property
    def session(self):
        return self._controller.session

    # -- names and marks --------------------------------------------------------------
    def name(self) -> str:
        return self.path.name if self.path else "untitled"

    def autosave_path(self) -> Path:
        return autosave_path(self.settings)

    def set_modified(self, modified: bool) -> None:
        self.modified = modified
        self._discarded = False
        self._window.setWindowModified(modified)

    def on_session_event(self, event) -> None:
        """A change of content marks the document modified; any change is autosaved a
        moment later, so a crash loses at most that moment. An edit ends the notice of
        the document opened."""
        from ..document.events import ModelChanged, SelectionChanged, TextChanged
        if not isinstance(event, SelectionChanged):
            if not self._applying:
                self._status.notice = ""
                self._held_edited = True
            if not self._applying and self._pending is None:
                self.set_modified(True)
                if isinstance(event, (TextChanged, ModelChanged)) and any(self._texts):
                    # the title and note spoke of the text and model the document had
                    self._texts = ("", "")
                    self.detached.emit("text" if isinstance(event, TextChanged)
                                       else "model")
        self.autosave_timer.start()

    def may_discard(self) -> bool:
        """True when the document may be replaced: unmodified, saved, or discarded."""
        if not self.modified or self.session is None:
            return True
        answer = ask_unsaved(self._window, self.name())
        if answer == QMessageBox.Save:
            return self.save()
        if answer == QMessageBox.Discard:
            self.set_modified(False)      # discarded: not asked again (a second close)
            self._discarded = True
            return True
        return False

    def close(self) -> bool:
        """At quit: False when the user cancels; else the last session is written for
        the next start (the file as saved, when its changes were discarded)."""
        if self.path is not None and not self.may_discard():
            return False
        self.autosave_timer.stop()
        self.autosave()
        self._writer.shutdown(wait=True)       # written before the process ends
        return True

    # -- reading ----------------------------------------------------------------------
    def read(self, path):
        """The checked document at ``path``, or None with the reason on the status line."""
        from ..document.session_file import read
        from ..errors import PosvizInputError
        try:
            return read(path)
        except PosvizInputError as error:
            self._status.say(str(error), error=True)
            return None

    def open_file(self, path=None) -> bool:
        """Open a .posviz file (asks for one when ``path`` is None)."""
        if self.session is None or not self.may_discard():
            return False
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self._window, "Open session",
                                                  self._folder(), FILTER)
            if not path:
                return False
            remember_folder(self.settings, path)
        doc = self.read(path)
        if doc is None:
            return False
        return self.open_document(doc, Path(path))

    def open_document(self, doc, path: Path | None, scenario: bool = False) -> bool:
        """Show ``doc``: its model loads first when it is not the one running. False
        when it was refused (told on the status line)."""
        return self._open(Pending(doc, path, scenario=scenario))

    def new_document(self) -> None:
        """The default sentence in the built-in model, untitled."""
        from ..document.session import DEFAULT_TEXT
        from ..document.session_file import SessionDocument
        from ..document.spec import ModelSpec
        if self.session is None or not self.may_discard():
            return
        n = len(DEFAULT_TEXT.split())
        spec = self.session.spec if self.session.spec.is_builtin else ModelSpec.builtin()
        self.open_document(SessionDocument(DEFAULT_TEXT, tuple(range(n)), spec), None)

    # -- writing ----------------------------------------------------------------------
    def document(self):
        """What Save writes: the session, with the open document's title and note; a
        document held at start keeps its model (and, unedited, all it holds)."""
        doc = self.session.to_document(*self._texts)
        if self._held is None:
            return doc
        held = self._held.doc
        return doc.replace(spec=held.spec, config_sha256=held.config_sha256) if (
            self._held_edited) else held

    def save(self) -> bool:
        if self.path is None:
            return self.save_as()
        return self.save_to(self.path)

    def save_as(self) -> bool:
        if self.session is None:
            return False
        start = str(self.path or Path(self._folder()) / "untitled.posviz")
        path, _ = QFileDialog.getSaveFileName(self._window, "Save session", start, FILTER)
        if not path:
            return False
        if not path.endswith(".posviz"):
            path += ".posviz"
        return self.save_to(Path(path))

    def save_to(self, path: Path) -> bool:
        from ..document.session_file import write
        from ..errors import PosvizInputError
        try:
            write(path, self.document())
        except PosvizInputError as error:
            self._status.say(str(error), error=True)
            return False
        self.path = Path(path)
        self.set_modified(False)
        remember_recent(self.settings, self.path)
        remember_folder(self.settings, self.path)
        self.renamed.emit()
        self._status.say(f"Saved {self.path.name}")
        return True

    def autosave(self, background: bool = False) -> None:
        """Write the last session beside the settings, after any write still under way;
        ``background`` returns at once. A failure only loses this copy."""
        from ..document.session_file import write
        from ..errors import PosvizInputError
        if self.session is None or self._pending is not None:
            return
        doc = (self._discarded and read_quietly(self.path)) or self.document()
        try:
            written = self._writer.submit(write, self.autosave_path(), doc)
        except RuntimeError:                    # after quit's last write: nothing more
            return
        if not background:
            try:
                written.result()
            except (PosvizInputError, OSError):
                return
        remember_last(self.settings, self.path, self.modified)

    def last_session(self):
        """The autosaved document, or None (no file, or one that no longer reads)."""
        return read_quietly(self.autosave_path())

    # -- recent files -----------------------------------------------------------------
    def fill_recent_menu(self, menu) -> None:
        menu.clear()
        files = recent_files(self.settings)
        for number, name in enumerate(files, 1):
            action = menu.addAction(f"&{number % 10} {Path(name).name}",
                                    lambda n=name: self.open_file(n))
            action.setToolTip(name)
            action.setStatusTip(name)
        if not files:
            menu.addAction("No recent sessions").setEnabled(False)
        else:
            menu.addSeparator()
            menu.addAction("Clear list", lambda: forget_recent(self.settings))

    def _folder(self) -> str:
        if self.path is not None:
            return str(self.path.parent)
        return str(start_folder(self.settings))

    # -- start-up ---------------------------------------------------------------------
    def start(self, path, last: bool) -> bool:
        """Start with the session file ``path``, else the last session (when ``last``);
        False when there is none to start with. A pretrained model is loaded once the
        window is ready (``show_started``); the built-in one runs until then."""
        from .remembered import builtin_remembered
        doc = self.read(path) if path else None
        if doc is not None:
            bound, modified = Path(path).absolute(), False   # from any folder next time
        else:
            doc = self.last_session() if last else None
            if doc is None:
                return False
            bound, modified = bound_file(self.settings), restored_modified(self.settings, doc)
        reason = too_large(doc)
        self._starting = (doc, bound, reason, modified)
        spec = doc.spec if doc.spec.is_builtin and not reason else \
            builtin_remembered(self.settings)     # the panel's, while its model loads
        self._controller.start(doc.text, spec, doc.positions, order="original",
                               held=reason is not None)
        return True

    def show_started(self) -> None:
        """Once the session exists: show the document the window started with. Its
        pretrained model loads now, through the usual path (the built-in model runs
        meanwhile, and stands in for it when it cannot be loaded)."""
        start, self._starting = self._starting, None
        if start is None:
            return
        doc, path, reason, modified = start
        if reason is not None:
            self._hold(Pending(doc, path, modified=modified), reason)
            return
        fallback = None
        if doc.spec.is_builtin and doc.spec != self.session.spec:
            fallback = ("the session's built-in model could not be built: opened with "
                        "the default one, keeping the text")
        self._open(Pending(doc, path, fallback, modified=modified))
        if self._pending is not None:     # its model loads: the plots are not its result
            self.awaiting.emit(doc.spec.name)

