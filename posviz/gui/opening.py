"""Opening a document whose model must run first: it waits (a Pending) while that model
loads through the controller's usual path, then its text, order, positions and view are
applied; when the model cannot be loaded the built-in model stands in, keeping the text
(and the order, when it fits the built-in model's tokens)."""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from .folders import remember_recent

UNTITLED_BACK = ("Your untitled session is back as you left it (File › Save As keeps it "
                 "in a file)")


@dataclass(frozen=True)
class Pending:
    """A document waiting for its model to run before it is shown."""

    doc: object                       # document.session_file.SessionDocument
    path: Path | None                 # the file it is bound to (None: untitled)
    fallback: str | None = None       # why the built-in model stands in for its own
    scenario: bool = False            # a scenario: not bound, not in the recent list
    modified: bool = False            # restored with unsaved changes (the last session)
    loaded: bool = False              # its model was loaded for it (already running)


class OpensDocuments:
    """The part of gui.documents.Documents that opens a document once its model runs
    (``_pending``: the Pending whose model is loading), with the built-in model standing
    in when that model cannot be loaded."""

    def _open(self, pending: Pending) -> bool:
        self._pending = pending
        if pending.doc.spec == self.session.spec or (pending.fallback and
                                                     self.session.spec.is_builtin):
            return self._apply_pending()
        self._pending = replace(pending, loaded=True)
        self._controller.load(pending.doc.spec)   # the usual path: progress, cancel, errors
        return True

    def model_loaded(self, spec) -> None:
        if self._held is not None and self._pending is None:
            self._release()               # another model was chosen: the hold is over
            self._controller.request()
        pending = self._pending
        if pending is not None and (self.session.spec == pending.doc.spec or (
                pending.fallback and self.session.spec.is_builtin)):
            self._apply_pending()         # its model, or the built-in stand-in, runs
        self.awaiting.emit("")

    def model_failed(self, message: str) -> None:
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
            self.awaiting.emit("")
        else:
            self._controller.load(ModelSpec.builtin())

    def load_cancelled(self) -> None:
        """The load of a document's model was cancelled: the document is not opened."""
        self.awaiting.emit("")
        if self._pending is not None:
            self._pending = None
            self._status.say("Opening cancelled: the session shown is unchanged")

    def _apply_pending(self) -> bool:
        from ..document.session_file import model_mismatch
        from ..errors import PosvizInputError
        pending, self._pending = self._pending, None
        doc, path, fallback = pending.doc, pending.path, pending.fallback
        s = self.session
        self._edits.record_drag(ends=True)
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
                self._status.say(message, error=True)
                return False
            try:       # its model runs already: its text then, in the original order
                s.restore(doc.text, range(len(s.backend.tokenize(doc.text))),
                          doc.positions, doc.selection)
            except PosvizInputError:
                self._status.say(message, error=True)
                return False
            fallback = f"{error}: opened the text in its original order"
        finally:
            self._applying = False
        self._stack.clear()
        self.path = path if fallback is None else None
        self.set_modified(pending.modified)
        if path is not None and fallback is None and not pending.scenario:
            remember_recent(self.settings, path)
        self.renamed.emit()
        problem = fallback or model_mismatch(doc)
        if pending.scenario or path is not None:     # not the model's "original order"
            from .edits import opened_remark, short_title
            self._status.remark = opened_remark(
                f"scenario '{short_title(doc.title)}'" if pending.scenario and doc.title else
                path.name if path is not None else "the scenario", s.seq.tokens, s.order)
        elif pending.modified:         # the untitled edits the last quit kept, said before
            self._status.remark = UNTITLED_BACK          # the evaluation's line
        if self.kept_remark:           # the last run's unsaved edits, kept in a file
            self._status.remark = " · ".join(filter(None, (self.kept_remark,
                                                           self._status.remark)))
            self.kept_remark = ""
        self._status.notice = problem or ""
        if problem:
            self._status.say(problem, error=True)
        elif path is not None:
            self._status.say(f"Opened {path.name}")
        self._texts = (doc.title, doc.note)
        self.opened.emit(doc)
        return True
