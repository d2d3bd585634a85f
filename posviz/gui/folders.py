"""The folder the user last chose a file in (a session saved or opened, a figure
exported, a model or a file of texts opened): where the next file dialog starts."""
from __future__ import annotations

from pathlib import Path

LAST_FOLDER = "files/last_folder"


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
