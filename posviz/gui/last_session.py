"""The last session: where it is kept, and what it is when read back at start.

The window writes the document shown to ``<settings>-last-session.posviz`` beside the
settings file, with the file it is bound to (``files/current``) and whether it was
modified (``files/modified``). Read back, a session that differs from its file on disk
is modified whatever the flag says (a crash before the flag was written, a file changed
since), so its ``*`` and Save come back with it. An untitled session's edits come back
the same way: quitting asks nothing of them (they are kept), and the next start says so.
A start that does not open it (--text, --model, --reset-settings, a FILE.posviz) first
copies a last session holding unsaved work to ``<settings>-recovered/`` (keep_unsaved),
so no edit is lost: File › Open Recent lists the copy and the status line says where.
"""
from __future__ import annotations

import shutil
import time
from pathlib import Path

CURRENT_KEY = "files/current"
MODIFIED_KEY = "files/modified"


def autosave_path(settings) -> Path:
    """Beside the settings file and named after it, so two settings files in one folder
    (POSVIZ_SETTINGS) never share a last session."""
    path = Path(settings.fileName())
    return path.with_name(f"{path.stem}-last-session.posviz")


def read_quietly(path):
    """The checked document at ``path``, or None (no file, or one that does not read)."""
    from ..document.session_file import read
    from ..errors import PosvizInputError
    try:
        return read(path) if path is not None and Path(path).is_file() else None
    except PosvizInputError:
        return None


def remember_last(settings, path: Path | None, modified: bool) -> None:
    """What the last session written is bound to, and whether it holds unsaved work."""
    settings.setValue(CURRENT_KEY, str(path or ""))
    settings.setValue(MODIFIED_KEY, modified)


def bound_file(settings) -> Path | None:
    """The file the last session is bound to (None: untitled)."""
    current = str(settings.value(CURRENT_KEY, "") or "")
    return Path(current) if current else None


def restored_modified(settings, doc) -> bool:
    """Whether the last session ``doc`` comes back modified: the flag written with it
    (an untitled session's edits keep their mark: File › New or Open asks before they
    go), or a difference from its file (which is missing or unreadable counts)."""
    from ..document.session_file import same_content
    path = bound_file(settings)
    if settings.value(MODIFIED_KEY, False) in (True, "true"):
        return True
    if path is None:
        return False
    saved = read_quietly(path)
    return saved is None or not same_content(doc, saved)


def keep_unsaved(settings, when: float | None = None) -> Path | None:
    """The last session, when it holds unsaved work (restored_modified), copied to
    ``<settings>-recovered/`` beside it, named after its file (or "untitled") and the
    time ``when`` (default: now); the copy's path, or None when there is nothing unsaved
    (or the copy could not be written)."""
    source = autosave_path(settings)
    doc = read_quietly(source)
    if doc is None or not restored_modified(settings, doc):
        return None
    bound = bound_file(settings)
    stamp = time.strftime("%Y-%m-%d-%H%M%S", time.localtime(when))
    folder = source.with_name(f"{Path(settings.fileName()).stem}-recovered")
    target = folder / f"{bound.stem if bound else 'untitled'}-unsaved-{stamp}.posviz"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
    except OSError:
        return None
    return target


def kept_remark(path: Path) -> str:
    """The status line's words for a copy keep_unsaved made."""
    return (f"The unsaved session of the last run is kept as {path} (File › Open Recent "
            f"lists it)")
