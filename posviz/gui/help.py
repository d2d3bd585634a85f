"""Help: the keyboard shortcuts (read from the window's actions), About with versions,
the guide to every plot and metric (F1), and copying a plot to the clipboard."""
from __future__ import annotations

from importlib import metadata

from PySide6 import __version__ as PYSIDE_VERSION
from PySide6.QtCore import Qt, qVersion
from PySide6.QtGui import QAction, QCursor, QKeySequence
from PySide6.QtWidgets import (QApplication, QDialog, QDialogButtonBox, QHeaderView,
                               QMessageBox, QTableWidget, QTableWidgetItem, QTextBrowser,
                               QVBoxLayout)

GUIDE_NOTATION = """
## The plots and their metrics

Notation: the original order runs first and gives hidden states **H** (n tokens × d
width) at every layer ℓ = 0 (the input to block 1) … L, and attention maps **A** (one n × n
map per head). A reorder is a permutation *order*: slot j holds original token order[j].
The reordered run gives **H′** and **A′**.
"""
GUIDE_TRY = """
## What to try

Help > Scenarios opens prepared states, each with what to do, what to expect and why.
Drag chips (or use the Edit menu's reorders); switch positions between *slot* (the usual
input) and *travel with tokens* in the model panel.
"""


def guide() -> str:
    """The guide (markdown): the notation, then each tab's figures as they describe
    themselves (their title and ``guide``), then what to try."""
    from .plots.figures import FIGURE_TYPES
    from .plots.tabs import TABS
    parts = [GUIDE_NOTATION]
    for tab in TABS:
        parts.append(f"### {tab.title} tab\n")
        parts += [f"**{figure.title}**: {figure.guide}\n"
                  for figure in FIGURE_TYPES.values() if figure.tab is tab]
    return "\n".join(parts + [GUIDE_TRY])


def action_shortcuts(window) -> list[tuple[str, str]]:
    """(action, shortcuts) for every action of the window that has a shortcut, each once,
    in menu order first."""
    seen, rows = set(), []
    for action in window.findChildren(QAction):
        keys = [k.toString(QKeySequence.NativeText) for k in action.shortcuts() if not k.isEmpty()]
        if not keys or id(action) in seen:
            continue
        seen.add(id(action))
        text = action.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
        rows.append((text.rstrip("…").strip(), ", ".join(keys)))
    return sorted(rows, key=lambda row: row[0].lower())


def show_shortcuts(window) -> QDialog:
    rows = action_shortcuts(window)
    dialog = QDialog(window)
    dialog.setWindowTitle("Keyboard shortcuts")
    table = QTableWidget(len(rows), 2)
    table.setHorizontalHeaderLabels(["Action", "Shortcut"])
    table.verticalHeader().hide()
    table.setEditTriggers(QTableWidget.NoEditTriggers)
    for row, (text, keys) in enumerate(rows):
        table.setItem(row, 0, QTableWidgetItem(text))
        table.setItem(row, 1, QTableWidgetItem(keys))
    table.horizontalHeader().setSectionResizeMode(0, QHeaderView.Stretch)
    table.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeToContents)
    buttons = QDialogButtonBox(QDialogButtonBox.Close, rejected=dialog.reject)
    layout = QVBoxLayout(dialog)
    layout.addWidget(table)
    layout.addWidget(buttons)
    dialog.table = table
    dialog.resize(460, 560)
    dialog.show()
    return dialog


def versions() -> dict[str, str]:
    """posviz and the libraries it runs on, read from the installed metadata (nothing
    heavy is imported)."""
    from .. import __version__

    def installed(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"
    import platform
    return {"posviz": __version__, "torch": installed("torch"),
            "transformers": installed("transformers"), "Qt": qVersion(),
            "PySide6": PYSIDE_VERSION, "pyqtgraph": installed("pyqtgraph"),
            "Python": platform.python_version()}


def about_text() -> str:
    rows = "".join(f"<tr><td>{k}</td><td>&nbsp;{v}</td></tr>" for k, v in versions().items())
    return ("<h3>posviz</h3><p>See how positional encodings break the permutation "
            "symmetry of self-attention, layer by layer.</p><p>Drag the token chips into "
            "a new order: the model is run again and the plots show which outputs "
            "changed and which stayed invariant or equivariant.</p>"
            f"<table>{rows}</table>")


def show_about(parent) -> None:
    QMessageBox.about(parent, "About posviz", about_text())


def show_guide(window) -> QDialog:
    dialog = getattr(window, "_guide", None)
    if dialog is None:
        dialog = window._guide = QDialog(window)
        dialog.setWindowTitle("posviz guide")
        browser = QTextBrowser()
        browser.setMarkdown(guide())
        layout = QVBoxLayout(dialog)
        layout.addWidget(browser)
        layout.addWidget(QDialogButtonBox(QDialogButtonBox.Close, rejected=dialog.reject))
        dialog.resize(720, 640)
    dialog.show()
    dialog.raise_()
    return dialog


# -- copying a plot -----------------------------------------------------------------
def figure_to_copy(panel):
    """The figure under the mouse, else the one holding the focus, else the first of the
    tab on screen (None before the plots exist)."""
    figures = panel.current_figures()

    def owner(widget):
        while widget is not None:
            for figure in figures.values():
                if widget is figure:
                    return figure
            widget = widget.parentWidget()
        return None
    return (owner(QApplication.widgetAt(QCursor.pos())) or owner(QApplication.focusWidget())
            or next(iter(figures.values()), None))


def copy_figure(figure) -> bool:
    if figure is None:
        return False
    QApplication.clipboard().setImage(figure.render_image())
    return True


COPY_ACTION = "copy_plot"


def copy_action(figure):
    """The figure's 'Copy plot' action, or None before it is added."""
    return figure.findChild(QAction, COPY_ACTION, Qt.FindDirectChildrenOnly)


def add_copy_to_menus(figures, copy) -> None:
    """'Copy plot' in each figure's context menus (once per figure); ``copy(figure)``
    runs when it is chosen."""
    import pyqtgraph as pg
    for figure in figures:
        if copy_action(figure) is not None:
            continue
        action = QAction("Copy plot to clipboard (Ctrl+C)", figure)
        action.setObjectName(COPY_ACTION)
        # the figure is found through the action's parent: no reference cycle between
        # Python wrappers of widgets, which the collector would have to break
        action.triggered.connect(lambda _=False, a=action: copy(a.parent()))
        for label in (figure.heading, figure.message, figure.note):
            label.addAction(action)
        for item in figure.canvas.scene().items():
            if isinstance(item, pg.ViewBox) and item.menu is not None:
                item.menu.addAction(action)


class WindowHelp:
    """The Help menu's and Copy plot's slots, a mixin of MainWindow."""

    def show_shortcuts(self) -> QDialog:
        return show_shortcuts(self)

    def show_guide(self) -> QDialog:
        return show_guide(self)

    def about(self) -> None:
        show_about(self)

    def choose_scenario(self) -> None:
        from .scenarios import choose_scenario
        choose_scenario(self)

    def copy_plot(self) -> bool:
        """Copy the plot under the mouse (or the tab's first) to the clipboard."""
        if self.plots is None:
            return False
        return self.copy_figure(figure_to_copy(self.plots))

    def copy_figure(self, figure) -> bool:
        if not copy_figure(figure):
            return False
        self._state(f"Copied the {type(figure).__name__.removesuffix('Figure').lower()} "
                    f"plot to the clipboard")
        return True

    def _menus_for_copy(self) -> None:
        if self.plots is not None:
            add_copy_to_menus(self.plots.current_figures().values(), self.copy_figure)
