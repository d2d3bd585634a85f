"""The window's files: New, Open, Save, Save As, Open Recent, and the last session.

A mixin of MainWindow. A document is read and checked (core.session_file) before
anything changes; when it names another model, that model loads through the
controller's usual path first and the rest of the document follows once it runs. A
document whose pretrained model cannot be loaded opens with the built-in model and
says so, keeping the text (and the order, when it fits the built-in model's tokens).

The last session is written to ``<settings>-last-session.posviz`` beside the settings
file (``posviz-last-session.posviz`` in ~/.config/posviz on Linux) a few seconds after
each edit and when the window closes, and opened again at the next start. Edits to the
text, order, positions or model mark the document modified (the title's ``*``); what is
looked at (layer, head, tab) is saved with it but marks nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QMessageBox, QSplitter

RECENT_KEY = "files/recent"
SPLITTERS_KEY = "window/splitters"    # JSON: tab index -> each splitter's sizes
RECENT_MAX = 10
AUTOSAVE_MS = 3000                    # quiet time after an edit before the autosave
FILTER = "posviz sessions (*.posviz);;All files (*)"


def ask_unsaved(parent, name: str) -> QMessageBox.StandardButton:
    """Save, Discard or Cancel for a modified document (tests replace this)."""
    return QMessageBox.question(
        parent, "Unsaved changes", f"Save the changes to {name}?",
        QMessageBox.Save | QMessageBox.Discard | QMessageBox.Cancel, QMessageBox.Save)


@dataclass(frozen=True)
class Pending:
    """A document waiting for its model to run before it is shown."""

    doc: object                       # core.session_file.SessionDocument
    path: Path | None                 # the file it is bound to (None: untitled)
    fallback: str | None = None       # why the built-in model stands in for its own
    scenario: bool = False            # a scenario: not bound, not in the recent list
    modified: bool = False            # restored with unsaved changes (the last session)
    loaded: bool = False              # its model was loaded for it (already running)


class WindowDocuments:
    """File menu behaviour, the modified mark, and the autosaved last session."""

    file_path: Path | None = None
    _dirty = False
    _applying = False                 # a document is being applied: no modified mark
    _notice = ""                      # what the opened document says (a model stood in),
                                      # shown until the next edit
    _pending: Pending | None = None   # a document whose model is being loaded
    scenario_panel = None

    # -- names and marks --------------------------------------------------------------
    def document_name(self) -> str:
        return self.file_path.name if self.file_path else "untitled"

    def autosave_path(self) -> Path:
        """Beside the settings file and named after it, so two settings files in one
        folder (POSVIZ_SETTINGS) never share a last session."""
        settings = Path(self.settings.fileName())
        return settings.with_name(f"{settings.stem}-last-session.posviz")

    def set_modified(self, modified: bool) -> None:
        self._dirty = modified
        self.setWindowModified(modified)

    def _document_event(self, event) -> None:
        """Session events: a change of content marks the document modified; any change
        is autosaved a moment later, so a crash loses at most that moment."""
        from ..document.events import SelectionChanged
        if not self._applying and self._pending is None and not isinstance(
                event, SelectionChanged):
            self.set_modified(True)
        timer = self.__dict__.get("_autosave_timer")
        if timer is None:
            from PySide6.QtCore import QTimer
            timer = self._autosave_timer = QTimer(self, singleShot=True,
                                                  interval=AUTOSAVE_MS,
                                                  timeout=self.autosave)
        timer.start()

    def may_discard(self) -> bool:
        """True when the document may be replaced: unmodified, saved, or discarded."""
        if not self._dirty or self.session is None:
            return True
        answer = ask_unsaved(self, self.document_name())
        if answer == QMessageBox.Save:
            return self.save()
        if answer == QMessageBox.Discard:
            self.set_modified(False)      # discarded: not asked again (a second close)
            return True
        return False

    # -- reading ----------------------------------------------------------------------
    def read_document(self, path):
        """The checked document at ``path``, or None with the reason on the status line."""
        from ..document.session_file import read
        from ..errors import PosvizInputError
        try:
            return read(path)
        except PosvizInputError as error:
            self._state(str(error), error=True)
            return None

    def open_file(self, path=None) -> bool:
        """Open a .posviz file (asks for one when ``path`` is None)."""
        if self.session is None or not self.may_discard():
            return False
        if path is None:
            path, _ = QFileDialog.getOpenFileName(self, "Open session", self._folder(),
                                                  FILTER)
            if not path:
                return False
        doc = self.read_document(path)
        if doc is None:
            return False
        return self.open_document(doc, Path(path))

    def open_document(self, doc, path: Path | None, scenario: bool = False) -> bool:
        """Show ``doc``: its model loads first when it is not the one running. False
        when it was refused (told on the status line)."""
        return self._open(Pending(doc, path, scenario=scenario))

    def _open(self, pending: Pending) -> bool:
        self._pending = pending
        if pending.doc.spec == self.session.spec or (pending.fallback and
                                                     self.session.spec.is_builtin):
            return self._apply_pending()
        self._pending = replace(pending, loaded=True)
        self.controller.load(pending.doc.spec)   # the usual path: progress, cancel, errors
        return True

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

    def _on_document_model_loaded(self, spec) -> None:
        pending = self._pending
        if pending is not None and (self.session.spec == pending.doc.spec or (
                pending.fallback and self.session.spec.is_builtin)):
            self._apply_pending()         # its model, or the built-in stand-in, runs

    def _on_document_model_failed(self, message: str) -> None:
        """The document's model cannot be loaded: the built-in model stands in."""
        from ..document.spec import ModelSpec
        pending = self._pending
        if pending is None or pending.fallback:
            return
        reason = (f"{pending.doc.spec.name} could not be loaded ({message}): opened with "
                  f"the built-in model, keeping the text")
        self._pending = replace(pending, fallback=reason)
        if self.session.spec.is_builtin:
            self._apply_pending()
        else:
            self.controller.load(ModelSpec.builtin())

    def _open_cancelled(self) -> None:
        """The load of a document's model was cancelled: the document is not opened."""
        if self._pending is not None:
            self._pending = None
            self._state("Opening cancelled: the session shown is unchanged")

    def _apply_pending(self) -> bool:
        from ..document.session_file import model_mismatch
        from ..errors import PosvizInputError
        pending, self._pending = self._pending, None
        doc, path, fallback = pending.doc, pending.path, pending.fallback
        s = self.session
        self._record_drag(ends=True)
        self._applying = True
        try:
            if fallback is None:
                s.restore(doc.text, doc.order, doc.positions, doc.selection, doc.tokens)
            else:
                try:                                # keep the order where it fits
                    s.restore(doc.text, doc.order, doc.positions, doc.selection)
                    fallback += " and the order"
                except PosvizInputError:
                    s.restore(doc.text, range(len(s.backend.tokenize(doc.text))),
                              doc.positions, doc.selection)
        except PosvizInputError as error:
            message = f"cannot open {path.name if path else 'the session'}: {error}"
            if not pending.loaded:                  # nothing has changed
                self._state(message, error=True)
                return False
            try:       # its model runs already: its text then, in the original order
                s.restore(doc.text, range(len(s.backend.tokenize(doc.text))),
                          doc.positions, doc.selection)
            except PosvizInputError:
                self._state(message, error=True)
                return False
            fallback = f"{error}: opened the text in its original order"
        finally:
            self._applying = False
        self.undo_stack.clear()
        self.file_path = path if fallback is None else None
        self.set_modified(pending.modified and self.file_path is not None)
        if path is not None and fallback is None and not pending.scenario:
            self.remember_recent(path)
        self._refresh_tokens()
        problem = fallback or model_mismatch(doc)
        self._notice = problem or ""
        if problem:
            self._state(problem, error=True)
        elif path is not None:
            self._state(f"Opened {path.name}")
        self.show_explanation(doc if (doc.title or doc.note) else None)
        return True

    # -- writing ----------------------------------------------------------------------
    def document(self):
        """What Save writes: the session, with the open document's title and note."""
        title, note = getattr(self, "_doc_text", ("", ""))
        return self.session.to_document(title, note)

    def save(self) -> bool:
        if self.file_path is None:
            return self.save_as()
        return self.save_to(self.file_path)

    def save_as(self) -> bool:
        if self.session is None:
            return False
        start = str(self.file_path or Path(self._folder()) / "untitled.posviz")
        path, _ = QFileDialog.getSaveFileName(self, "Save session", start, FILTER)
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
            self._state(str(error), error=True)
            return False
        self.file_path = Path(path)
        self.set_modified(False)
        self.remember_recent(self.file_path)
        self._refresh_tokens()
        self._state(f"Saved {self.file_path.name}")
        return True

    def autosave(self) -> None:
        """Write the last session beside the settings; a failure only loses this copy."""
        from ..document.session_file import write
        from ..errors import PosvizInputError
        if self.session is None or self._pending is not None:
            return
        try:
            write(self.autosave_path(), self.document())
        except (PosvizInputError, OSError):
            return
        self.settings.setValue("files/current", str(self.file_path or ""))
        self.settings.setValue("files/modified", self._dirty)

    def last_session(self):
        """The autosaved document, or None (no file, or one that no longer reads)."""
        from ..document.session_file import read
        from ..errors import PosvizInputError
        path = self.autosave_path()
        if not path.is_file():
            return None
        try:
            return read(path)
        except PosvizInputError:
            return None

    # -- recent files -----------------------------------------------------------------
    def recent_files(self) -> list[str]:
        value = self.settings.value(RECENT_KEY, [])
        files = [value] if isinstance(value, str) else list(value or [])
        return [f for f in files if f][:RECENT_MAX]

    def remember_recent(self, path: Path) -> None:
        path = str(Path(path).resolve())
        files = [path] + [f for f in self.recent_files() if f != path]
        self.settings.setValue(RECENT_KEY, files[:RECENT_MAX])

    def fill_recent_menu(self) -> None:
        menu = self.recent_menu
        menu.clear()
        files = self.recent_files()
        for number, name in enumerate(files, 1):
            action = menu.addAction(f"&{number % 10} {Path(name).name}",
                                    lambda n=name: self.open_file(n))
            action.setToolTip(name)
            action.setStatusTip(name)
        if not files:
            menu.addAction("No recent sessions").setEnabled(False)
        else:
            menu.addSeparator()
            menu.addAction("Clear list", lambda: self.settings.setValue(RECENT_KEY, []))

    def _folder(self) -> str:
        if self.file_path is not None:
            return str(self.file_path.parent)
        recent = self.recent_files()
        return str(Path(recent[0]).parent) if recent else str(Path.home())

    # -- the explanation --------------------------------------------------------------
    def show_explanation(self, doc) -> None:
        """A document with a title or note shows it in the side panel; one without
        closes the panel."""
        self._doc_text = (doc.title, doc.note) if doc is not None else ("", "")
        from .scenarios import ExplanationPanel
        if doc is None:
            if self.scenario_panel is not None:
                self.scenario_panel.hide()
            return
        if self.scenario_panel is None:
            self.scenario_panel = ExplanationPanel(self)
        self.scenario_panel.show_document(doc)

    def start_document(self, path, last: bool) -> bool:
        """Start with the session file ``path``, else the last session (when ``last``);
        False when there is none to start with. A pretrained model is loaded once the
        window is ready (``_start_document``); the built-in one runs until then."""
        from ..document.spec import ModelSpec
        doc = self.read_document(path) if path else None
        doc = doc or (self.last_session() if last else None)
        if doc is None:
            return False
        current = "" if path else str(self.settings.value("files/current", "") or "")
        self._starting = (doc, Path(path or current) if (path or current) else None)
        spec = doc.spec if doc.spec.is_builtin else ModelSpec.builtin()
        self.controller.start(doc.text, spec, doc.positions, order="original")
        return True

    def _start_document(self) -> None:
        """Once the session exists: show the document the window started with. Its
        pretrained model loads now, through the usual path (the built-in model runs
        meanwhile, and stands in for it when it cannot be loaded)."""
        start, self._starting = getattr(self, "_starting", None), None
        if start is None:
            return
        doc, path = start
        modified = path is not None and self.settings.value("files/modified", False) in (
            True, "true")
        fallback = None
        if doc.spec.is_builtin and doc.spec != self.session.spec:
            fallback = ("the session's built-in model could not be built: opened with "
                        "the default one, keeping the text")
        self._open(Pending(doc, path, fallback, modified=modified))

    # -- the plots' splitters ---------------------------------------------------------
    def _tab_opened(self, index: int) -> None:
        """A tab on screen (maybe just built): its splitters' sizes."""
        self.restore_splitters(index)

    def _tab_splitters(self, index: int) -> list:
        page = self.plots.tabs.widget(index) if self.plots is not None else None
        return page.findChildren(QSplitter) if page is not None else []

    def _saved_splitters(self) -> dict:
        import json
        try:
            saved = json.loads(self.settings.value(SPLITTERS_KEY, "{}") or "{}")
        except (TypeError, ValueError):
            return {}
        return saved if isinstance(saved, dict) else {}

    def save_splitters(self) -> None:
        """The sizes of every splitter in the tabs built so far (others keep theirs)."""
        import json
        if self.plots is None:
            return
        saved = self._saved_splitters()
        for index in range(self.plots.tabs.count()):
            splitters = self._tab_splitters(index)
            if splitters:
                saved[str(index)] = [splitter.sizes() for splitter in splitters]
        self.settings.setValue(SPLITTERS_KEY, json.dumps(saved))

    def restore_splitters(self, index: int) -> None:
        """Give a tab's splitters their remembered sizes, once, when it is first built."""
        done = self.__dict__.setdefault("_splitters_restored", set())
        splitters = self._tab_splitters(index)
        if index in done or not splitters:
            return
        done.add(index)
        sizes = self._saved_splitters().get(str(index))
        if isinstance(sizes, list) and len(sizes) == len(splitters):
            for splitter, each in zip(splitters, sizes):
                if isinstance(each, list) and len(each) == splitter.count() and all(
                        isinstance(size, int) and size >= 0 for size in each):
                    splitter.setSizes(each)
