"""How a figure is written to a file from its context menu, and what a failed write says."""
from __future__ import annotations

from pathlib import Path

import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from posviz.core.errors import PosvizInputError
from posviz.core.files import FIGURE_FORMATS

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


def ask_export_path(parent: QtWidgets.QWidget, name: str, fmt: str) -> Path | None:
    """A file chosen by the user for figure ``name`` in ``fmt``, or None."""
    path, _ = QtWidgets.QFileDialog.getSaveFileName(parent, f"Export {name}",
                                                    f"{name}.{fmt}", FILTERS[fmt])
    if not path:
        return None
    if not path.lower().endswith("." + fmt):
        path += "." + fmt
    return Path(path)
