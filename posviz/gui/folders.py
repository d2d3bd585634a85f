"""The folder the user last chose a file in (a session saved or opened, a figure
exported, a model or a file of texts opened): where the next file dialog starts; and
the sessions opened or saved last (File › Open Recent)."""
from __future__ import annotations

from pathlib import Path

LAST_FOLDER = "files/last_folder"
RECENT_KEY = "files/recent"
RECENT_MAX = 10


def start_folder(settings) -> Path:
    """The last folder used, while it exists; else the home folder."""
    folder = Path(str(settings.value(LAST_FOLDER, "") or "")) if settings is not None else None
    return folder if folder is not None and str(folder) != "." and folder.is_dir() \
        else Path.home()


def remember_folder(settings, path) -> None:
    """``path`` (a file, or a folder chosen as such) was just used: start there next."""
    if settings is None or not path:
        return
    path = Path(path)
    settings.setValue(LAST_FOLDER, str(path if path.is_dir() else path.parent))


def recent_files(settings) -> list[str]:
    """The sessions opened or saved last, newest first."""
    value = settings.value(RECENT_KEY, [])
    files = [value] if isinstance(value, str) else list(value or [])
    return [f for f in files if f][:RECENT_MAX]


def remember_recent(settings, path) -> None:
    path = str(Path(path).resolve())
    files = [path] + [f for f in recent_files(settings) if f != path]
    settings.setValue(RECENT_KEY, files[:RECENT_MAX])


def forget_recent(settings) -> None:
    settings.setValue(RECENT_KEY, [])
