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


def fit_columns(dialog) -> None:
    """Qt's own file dialog (``dialog``, a QFileDialog) with its Size, Type and Date
    columns as wide as what they hold, the names the rest, each time it lists a folder:
    at 1024 and at 1920 they read "115…KiB", "SV…ge", "7 Dec …:52:18" with most of the
    dialog's width empty. A native dialog (no tree view of Qt's) is left as it is."""
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QFileSystemModel, QHeaderView, QTreeView

    def fit(*_) -> None:
        view = dialog.findChild(QTreeView, "treeView")
        if view is None:
            return
        header = view.header()
        header.setStretchLastSection(False)
        for column in range(1, header.count()):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
    model = dialog.findChild(QFileSystemModel)
    if model is not None:
        model.directoryLoaded.connect(lambda _: QTimer.singleShot(0, fit))
    fit()
