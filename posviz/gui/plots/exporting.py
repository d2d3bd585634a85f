"""How a figure is written to a file from its context menu, and what a failed write says."""
from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from posviz.document.files import FIGURE_FORMATS
from posviz.errors import PosvizInputError

FILTERS = {"png": "PNG image (*.png)", "svg": "SVG drawing (*.svg)",
           "csv": "CSV table (*.csv)"}


def writing(path: Path, write) -> Path:
    """Run ``write()``; an OSError becomes a PosvizInputError naming the file."""
    try:
        return write()
    except OSError as error:
        raise PosvizInputError(f"cannot write {path}: "
                               f"{error.strerror or 'permission denied or no such folder'}") \
            from None


def add_export_actions(name: str, figure, export) -> None:
    """'Export figure as PNG/SVG/CSV…' in the figure's context menus; ``export(name,
    fmt)`` runs when one is chosen."""
    actions = []
    for fmt in FIGURE_FORMATS:
        what = "data as CSV" if fmt == "csv" else f"as {fmt.upper()}"
        action = QtGui.QAction(f"Export figure {what}…", figure)
        action.setToolTip(f"Save '{name}' as a .{fmt} file")
        action.triggered.connect(lambda _=False, n=name, f=fmt: export(n, f))
        actions.append(action)
    for label in (figure.heading, figure.message, figure.note):
        label.setContextMenuPolicy(QtCore.Qt.ContextMenuPolicy.ActionsContextMenu)
        label.addActions(actions)
    for item in figure.canvas.scene().items():
        if isinstance(item, pg.ViewBox) and item.menu is not None:
            item.menu.addSeparator()
            for action in actions:
                item.menu.addAction(action)


FOLDER_KEY = "export/folder"        # shared with File > Export figures
DPI_KEY = "export/dpi"
DEFAULT_DPI = 300


def export_settings():
    """The application's settings (POSVIZ_SETTINGS honoured), as the window keeps them."""
    from ..settings import make_settings
    return make_settings()


def last_folder(settings) -> Path:
    return Path(str(settings.value(FOLDER_KEY, str(Path.home() / "posviz"))))


def ask_export_path(parent: QtWidgets.QWidget, name: str, fmt: str,
                    settings=None) -> tuple[Path, int | None, int | None] | None:
    """A file chosen by the user for figure ``name`` in ``fmt``, offered in the last
    export folder (remembered in ``settings``), with the resolution asked for a PNG:
    (path, width or None, dpi or None), or None when cancelled."""
    settings = settings if settings is not None else export_settings()
    folder = last_folder(settings)
    start = folder / f"{name}.{fmt}" if folder.is_dir() else Path(f"{name}.{fmt}")
    path, _ = QtWidgets.QFileDialog.getSaveFileName(parent, f"Export {name}",
                                                    str(start), FILTERS[fmt])
    if not path:
        return None
    if not path.lower().endswith("." + fmt):
        path += "." + fmt
    path = Path(path)
    if not path.is_absolute():
        path = folder / path
    dpi = None
    if fmt == "png":
        remembered = int(settings.value(DPI_KEY, DEFAULT_DPI) or DEFAULT_DPI)
        dpi, ok = QtWidgets.QInputDialog.getInt(
            parent, f"Export {name} as PNG",
            "Resolution in dots per inch (96 = as on screen, 300 = print):",
            remembered, 50, 600, 10)
        if not ok:
            return None
        settings.setValue(DPI_KEY, dpi)
    settings.setValue(FOLDER_KEY, str(path.parent))
    return path, None, dpi
