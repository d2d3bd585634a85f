"""Help: the keyboard shortcuts (read from the window's actions), About with versions,
and the guide to every plot and metric (F1)."""
from __future__ import annotations

from PySide6 import __version__ as PYSIDE_VERSION
from PySide6.QtCore import qVersion
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import (QAbstractButton, QDialog, QDialogButtonBox, QHeaderView,
                               QMessageBox, QTableWidget, QTableWidgetItem, QTextBrowser, QVBoxLayout)

GUIDE_NOTATION = """
## The plots and their metrics

Notation: the original order runs first and gives hidden states **H** (n tokens × d
width) at every layer ℓ = 0 (the input to block 1) … L, and attention maps **A** (one n × n
map per head). A reorder is a permutation *order*: slot j holds original token order[j].
The reordered run gives **H′** and **A′**.
"""
GUIDE_EXPERIMENTS = """
### Experiments tab

Runs over many orders, texts or models: choose one and press Run (Ctrl+Return). Sweep
and Position probe run the window's model; the line under the title says what ran, the
note how to read it (as under every figure, in the lines the plot spares: hover it or
click it to read it whole).

- **Sweep**: many reorders of a kind (random, swap, prefix, reverse, all) of one or more
  texts; per layer the median of the chosen metric over the runs (line) and its 10th to
  90th percentile (shaded), on a log axis with the noise floor and the row marked 0.
- **Swap map** (Sweep, kind swap, "swap map (all pairs)"): the hidden-state change at one
  layer (named in the title) for every swap of two tokens i and j, brighter for more.
  Pairs of identical tokens are outlined, grey: that swap leaves the input as it was,
  and their value (how much the two slots' outputs differ in one run) is off the colour
  scale, on hover and in the CSV.
- **Position probe**: per layer, how well a ridge regression reads each token's position
  off its hidden state, fitted on some texts and scored on held-out ones: its mean
  absolute error against chance (always guessing the mean position); R² in the note.
- **Paper check**: a published claim checked here, drawn as the measurement it rests on
  (or listed as numbers); the title says whether it holds here, the note cites the paper
  and says on which model and weights it ran and what was measured.
- **Compare encodings**: the built-in model with each chosen encoding, one curve each
  (its own marker, smaller for each later one, so equal values nest) for the same text
  and the same reorder: the window's, carried word by word to the trained checkpoints'
  tokens when they read the text otherwise. The note names the curves equal to 0.1%
  (relative) at each layer, the same at every size of the plot.
"""
GUIDE_TRY = """
## What to try

Help > Scenarios opens prepared states, each with what to do, what to expect and why.
Drag chips (or use the Edit menu's reorders); switch Positions between *belong to slots*
(the usual input) and *travel with tokens* in the model panel.
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
    return "\n".join(parts + [GUIDE_EXPERIMENTS, GUIDE_TRY])


def action_shortcuts(window) -> list[tuple[str, str]]:
    """(action, shortcuts) for every action of the window that has a shortcut, each once,
    and every button that has one (Run: Ctrl+Return), named by its tooltip."""
    seen, rows = set(), []
    for action in window.findChildren(QAction):
        keys = [k.toString(QKeySequence.NativeText) for k in action.shortcuts() if not k.isEmpty()]
        if not keys or id(action) in seen:
            continue
        seen.add(id(action))
        text = action.text().replace("&&", "\0").replace("&", "").replace("\0", "&")
        rows.append((text.rstrip("…").strip(), ", ".join(keys)))
    for button in window.findChildren(QAbstractButton):
        keys = button.shortcut().toString(QKeySequence.NativeText)
        if keys:
            name = (button.toolTip() or button.text()).removesuffix(f" ({keys})")
            rows.append((name.replace("&", "").strip(), keys))
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
    heavy is imported; importlib.metadata only here, not before the window's first paint)."""
    from importlib import metadata

    from ..version import __version__

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


class Help:
    """The Help menu of ``window`` (the parent of its dialogs, whose actions the
    shortcut list reads): the shortcuts, the guide and About."""

    def __init__(self, window):
        self._window = window
        self._guide: QDialog | None = None

    def show_shortcuts(self) -> QDialog:
        return show_shortcuts(self._window)

    def show_guide(self) -> QDialog:
        if self._guide is None:
            self._guide = dialog = QDialog(self._window)
            dialog.setWindowTitle("posviz guide")
            browser = QTextBrowser()
            browser.setMarkdown(guide())
            layout = QVBoxLayout(dialog)
            layout.addWidget(browser)
            layout.addWidget(QDialogButtonBox(QDialogButtonBox.Close, rejected=dialog.reject))
            dialog.resize(720, 640)
        self._guide.show()
        self._guide.raise_()
        self._guide.activateWindow()        # the keyboard's: Esc closes it, not the window's
        return self._guide

    def about(self) -> None:
        QMessageBox.about(self._window, "About posviz", about_text())
