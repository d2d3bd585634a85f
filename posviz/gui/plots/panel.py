"""PlotsPanel: every figure of one Evaluation, the layer/head selection, and export.

The panel only shows: it never runs a model. ``show_evaluation`` refreshes the items
that exist (setImage / setData) and is cheap enough to call on every reorder.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtGui, QtWidgets
import pyqtgraph as pg

from posviz.core.errors import PosvizInputError
from posviz.core.files import check_folder

from . import style
from .attention import MOSAIC_MODES, AttentionFigure, MosaicFigure
from .base import Figure
from .layers import BranchNormsFigure, SymmetryFigure, TokenChangeFigure
from .positions import EncodingFigure, RelativeProfileFigure, SimilarityFigure

FORMATS = ("png", "svg", "csv")
# Stable figure names (file names are <name>.png / .svg / .csv), in display order.
FIGURE_TYPES = {
    "attention": AttentionFigure, "attention_mosaic": MosaicFigure,
    "symmetry": SymmetryFigure, "token_change": TokenChangeFigure,
    "branch_norms": BranchNormsFigure, "encoding": EncodingFigure,
    "encoding_similarity": SimilarityFigure, "relative_profile": RelativeProfileFigure,
}
FIGURES = tuple(FIGURE_TYPES)          # every figure's name, in the order of the tabs
_V, _H = QtCore.Qt.Orientation.Vertical, QtCore.Qt.Orientation.Horizontal
# (title, tooltip, its figures, arrange: {name: figure} -> the tab's widget), in order
TABS = (
    ("Attention", "The selected head before and after the reorder, all heads at once, "
                  "and the symmetry metrics per layer",
     ("attention", "attention_mosaic", "symmetry"),
     lambda f: _split(_V, f["attention"], _split(_H, f["attention_mosaic"], f["symmetry"],
                                                  sizes=(1, 1)), sizes=(1, 1))),
    ("Tokens and norms", "Which tokens changed at the selected layer, and how large the "
                         "residual stream and its branches are",
     ("token_change", "branch_norms"),
     lambda f: _split(_V, f["token_change"], f["branch_norms"])),
    ("Positions", "The positional encoding itself: its table, the similarity between "
                  "positions and its effect against distance",
     ("encoding", "encoding_similarity", "relative_profile"),
     lambda f: _split(_V, _split(_H, f["encoding"], f["encoding_similarity"]),
                      f["relative_profile"])),
)
TAB_FIGURES = tuple(names for _, _, names, _ in TABS)
assert sum(TAB_FIGURES, ()) == FIGURES


class PlotsPanel(QtWidgets.QWidget):
    """All plots for one Evaluation, in three tabs, with a layer/head selection."""

    selectionChanged = QtCore.Signal(int, int)   # (layer 1..L, head 0..h-1) chosen by the user
    hoverMessage = QtCore.Signal(str)            # the value under the mouse, for a status line

    def __init__(self, parent=None):
        super().__init__(parent)
        self._layer, self._head = 1, 0
        self._ev = None
        self._stale: set[str] = set()          # figures not yet showing self._ev
        self._figures: dict[str, Figure] = {}  # the figures built so far
        self.tabs = QtWidgets.QTabWidget()
        self.tabs.setDocumentMode(True)
        self._pages: list[QtWidgets.QWidget] = []
        for title, tip, _, _ in TABS:
            page = QtWidgets.QWidget()
            QtWidgets.QVBoxLayout(page).setContentsMargins(0, 0, 0, 0)
            self._pages.append(page)
            self.tabs.setTabToolTip(self.tabs.addTab(page, title), tip)
        self._build_tab(0)      # the others when first opened: ~0.15 s less at start-up
        self.tabs.currentChanged.connect(self._tab_opened)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._controls())
        layout.addWidget(self.tabs, 1)

    def _build_tab(self, index: int) -> None:
        """Create the figures of one tab, once."""
        page = self._pages[index]
        if page.layout().count():
            return
        _, _, names, arrange = TABS[index]
        made = {name: FIGURE_TYPES[name]() for name in names}
        for name, figure in made.items():
            if hasattr(figure, "hovered"):
                figure.hovered.connect(self.hoverMessage)
            if name == "attention_mosaic":
                figure.tileClicked.connect(self._tile_clicked)
            self._add_export_actions(name, figure)
        self._figures.update(made)
        page.layout().addWidget(arrange(made))

    def _build_all(self) -> None:
        for index in range(len(TABS)):
            self._build_tab(index)

    def _tab_opened(self, index: int) -> None:
        self._build_tab(index)
        self._refresh(self._visible())

    # -- controls -------------------------------------------------------------------
    def _controls(self) -> QtWidgets.QHBoxLayout:
        row = QtWidgets.QHBoxLayout()
        row.setContentsMargins(4, 2, 4, 2)
        self.layer_box = QtWidgets.QSpinBox(minimum=1, maximum=1)
        self.layer_box.setToolTip("Layer (block) whose attention and token changes are shown")
        self.head_box = QtWidgets.QSpinBox(minimum=0, maximum=0)
        self.head_box.setToolTip("Attention head shown in the large maps "
                                 "(or click a tile of the mosaic)")
        self.mosaic_box = QtWidgets.QComboBox()
        for mode, text in MOSAIC_MODES.items():
            self.mosaic_box.addItem(text, mode)
        self.mosaic_box.setToolTip("What each mosaic tile shows")
        self.range_box = QtWidgets.QComboBox()
        for r in style.DIFFERENCE_RANGES:
            self.range_box.addItem(f"±{r:g}", r)
        self.range_box.setCurrentIndex(style.DIFFERENCE_RANGES.index(style.DEFAULT_DIFFERENCE_RANGE))
        self.range_box.setToolTip("Colour range of the difference maps; fixed across "
                                  "reorders so colours compare")
        for label, widget in (("Layer", self.layer_box), ("Head", self.head_box),
                              ("Mosaic", self.mosaic_box), ("Difference range", self.range_box)):
            text = QtWidgets.QLabel(label)
            text.setBuddy(widget)
            row.addWidget(text)
            row.addWidget(widget)
            row.addSpacing(8)
        row.addStretch(1)
        self.layer_box.valueChanged.connect(self._boxes_changed)
        self.head_box.valueChanged.connect(self._boxes_changed)
        self.mosaic_box.currentIndexChanged.connect(
            lambda: self._figures["attention_mosaic"].set_mode(self.mosaic_box.currentData()))
        self.range_box.currentIndexChanged.connect(self._range_changed)
        return row

    def _boxes_changed(self) -> None:
        self._select(self.layer_box.value(), self.head_box.value(), user=True)

    def _tile_clicked(self, layer: int, head: int) -> None:
        self._select(layer, head, user=True)

    def _range_changed(self) -> None:
        r = self.range_box.currentData()
        self._figures["attention"].set_difference_range(r)
        self._figures["attention_mosaic"].set_difference_range(r)

    # -- the contract ---------------------------------------------------------------
    def show_evaluation(self, ev) -> None:
        """Repaint the visible figures for this Evaluation; the others refresh when
        their tab is opened, exported or asked for ``displayed()``."""
        self._ev = ev
        L, h = ev.reference.n_layers, ev.reference.n_heads
        for box, top in ((self.layer_box, L), (self.head_box, h - 1)):
            if box.maximum() != top:
                box.blockSignals(True)
                box.setMaximum(top)
                box.blockSignals(False)
        self._layer, self._head = min(self._layer, L), min(self._head, h - 1)
        self._sync_boxes()
        self._stale = set(FIGURES)
        self._refresh(self._visible())

    def set_selection(self, layer: int, head: int) -> None:
        """Select a layer (1..L) and head (0..h-1); does not emit selectionChanged."""
        self._select(layer, head, user=False)

    def selection(self) -> tuple[int, int]:
        return self._layer, self._head

    def evaluation(self):
        return self._ev

    def current_figures(self) -> dict[str, QtWidgets.QWidget]:
        """The figures of the tab on screen, by name."""
        return {name: self._figures[name] for name in self._visible() if name in self._figures}

    def figures(self) -> dict[str, QtWidgets.QWidget]:
        """Every figure, by name (building those of tabs not yet opened)."""
        self._build_all()
        return {name: self._figures[name] for name in FIGURES}

    def displayed(self) -> dict[str, dict[str, np.ndarray]]:
        figures = self.figures()
        self._refresh(FIGURES)
        return {name: figure.displayed() for name, figure in figures.items()}

    def export_figure(self, name: str, path: Path, width: int | None = None) -> Path:
        """Write one figure as .png (at ``width`` pixels), .svg or .csv, by suffix."""
        figure = self._figure(name)
        self._refresh([name])
        path = Path(path)
        suffix = path.suffix.lower().lstrip(".")
        if suffix not in FORMATS:
            raise PosvizInputError(f"cannot export {path.name}: the file name must end in "
                                   f"{', '.join('.' + f for f in FORMATS)}")
        if width is not None and not 16 <= width <= 20000:
            raise PosvizInputError(f"the width must be from 16 to 20000 pixels (got {width})")
        if suffix == "csv":
            return self._writing(path, lambda: figure.export_csv(path))
        self._bring_forward(figure)
        if suffix == "png":
            return self._writing(path, lambda: figure.export_png(path, width))
        return self._writing(path, lambda: figure.export_svg(path))

    def export_all(self, folder: Path, formats=("png", "svg"), width: int | None = None,
                   csv: bool = True) -> list[Path]:
        """Write every figure as <folder>/<name>.<format> (and <name>.csv); returns paths."""
        folder = Path(folder)
        formats = [f.lower().lstrip(".") for f in formats]
        unknown = [f for f in formats if f not in ("png", "svg")]
        if unknown:
            raise PosvizInputError(f"unknown figure format {unknown[0]!r} (use png, svg)")
        check_folder(folder)
        current = self.tabs.currentIndex()
        written = []
        try:
            for name in FIGURES:
                for fmt in formats + (["csv"] if csv else []):
                    written.append(self.export_figure(name, folder / f"{name}.{fmt}", width))
        finally:
            self.tabs.setCurrentIndex(current)
        return written

    # -- helpers --------------------------------------------------------------------
    def _figure(self, name: str) -> Figure:
        for index, names in enumerate(TAB_FIGURES):
            if name in names:
                self._build_tab(index)
                return self._figures[name]
        raise PosvizInputError(f"no figure named {name!r} (one of {', '.join(FIGURES)})")

    def _select(self, layer: int, head: int, user: bool) -> None:
        L, h = ((self._ev.reference.n_layers, self._ev.reference.n_heads)
                if self._ev is not None else (max(layer, 1), max(head + 1, 1)))
        layer, head = int(np.clip(layer, 1, L)), int(np.clip(head, 0, h - 1))
        if (layer, head) == (self._layer, self._head):
            self._sync_boxes()
            return
        self._layer, self._head = layer, head
        self._sync_boxes()
        if self._ev is not None:
            self._stale |= {"attention", "token_change"}
            self._refresh(self._visible())
            self._figures["attention_mosaic"].set_selection(layer, head)
        if user:
            self.selectionChanged.emit(layer, head)

    def _visible(self) -> list[str]:
        """Figures on the current tab (the only ones worth repainting now)."""
        return list(TAB_FIGURES[self.tabs.currentIndex()])

    def _refresh(self, names) -> None:
        """Bring stale figures among ``names`` up to date with the current Evaluation."""
        if self._ev is None:
            return
        for name in names:
            if name in self._stale and name in self._figures:
                self._stale.discard(name)
                self._figures[name].update_from(self._ev, self._layer, self._head)

    def _sync_boxes(self) -> None:
        for box, value in ((self.layer_box, self._layer), (self.head_box, self._head)):
            if box.value() != value:
                box.blockSignals(True)
                box.setValue(value)
                box.blockSignals(False)

    def _bring_forward(self, figure: Figure) -> None:
        """Make the figure's tab current and laid out: a hidden widget renders at a
        stale size. A panel that was never shown is shown first (headless export)."""
        if not self.window().isVisible():
            self.window().show()
        for index in range(self.tabs.count()):
            if self.tabs.widget(index).isAncestorOf(figure):
                if self.tabs.currentIndex() != index:
                    self.tabs.setCurrentIndex(index)
                break
        QtWidgets.QApplication.processEvents()

    @staticmethod
    def _writing(path: Path, write) -> Path:
        try:
            return write()
        except OSError as error:
            raise PosvizInputError(f"cannot write {path}: "
                                   f"{error.strerror or 'permission denied or no such folder'}") \
                from None

    def _add_export_actions(self, name: str, figure: Figure) -> None:
        """'Export figure as PNG/SVG/CSV…' in the figure's context menus."""
        actions = []
        for fmt in FORMATS:
            what = "data as CSV" if fmt == "csv" else f"as {fmt.upper()}"
            action = QtGui.QAction(f"Export figure {what}…", figure)
            action.setToolTip(f"Save '{name}' as a .{fmt} file")
            action.triggered.connect(lambda _=False, n=name, f=fmt: self._export_dialog(n, f))
            actions.append(action)
        for label in (figure.heading, figure.message, figure.note):
            label.setContextMenuPolicy(QtCore.Qt.ContextMenuPolicy.ActionsContextMenu)
            label.addActions(actions)
        for item in figure.canvas.scene().items():
            if isinstance(item, pg.ViewBox) and item.menu is not None:
                item.menu.addSeparator()
                for action in actions:
                    item.menu.addAction(action)

    def _export_dialog(self, name: str, fmt: str) -> None:
        filters = {"png": "PNG image (*.png)", "svg": "SVG drawing (*.svg)",
                   "csv": "CSV table (*.csv)"}
        path, _ = QtWidgets.QFileDialog.getSaveFileName(self, f"Export {name}",
                                                        f"{name}.{fmt}", filters[fmt])
        if not path:
            return
        if not path.lower().endswith("." + fmt):
            path += "." + fmt
        try:
            self.export_figure(name, Path(path))
        except PosvizInputError as error:
            QtWidgets.QMessageBox.warning(self, "Export failed", str(error))
        else:
            self.hoverMessage.emit(f"saved {path}")


def _split(orientation, *widgets, sizes=None) -> QtWidgets.QSplitter:
    splitter = QtWidgets.QSplitter(orientation)
    splitter.setChildrenCollapsible(False)
    for widget in widgets:
        splitter.addWidget(widget)
    if sizes:
        for index, stretch in enumerate(sizes):
            splitter.setStretchFactor(index, stretch)
    return splitter
