"""PlotsPanel: every figure of one Evaluation, the view selection, and export.

The panel only shows: it never runs a model, and its figures only draw what
posviz.views.shown computed (``show(Shown)``, cheap enough to call on every reorder).
It holds the one Shown on screen and the Selection (layer, head, mosaic mode,
difference range, tab); a change made by the user is reported as a new Selection
(``selectionEdited``), one applied by the program (``set_selection``) is not.

The mosaic comes coloured in the Shown. When the selection asks for another mode or
difference range, the panel tells ``lookChanged`` and keeps drawing the mosaic it has
until a Shown in the new ``look()`` arrives (the controller prepares it on the worker:
Controller.watch_look). Without a controller, build the views with ``look()`` before
``show``.
"""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import numpy as np
from PySide6 import QtCore, QtWidgets

from . import style
from .base import Figure
from .exporting import add_export_actions, ask_export_path, export_settings, writing
from .figures import FIGURE_TYPES, FIGURES, tab_figures
from .mosaic_figure import MOSAIC_MODES, mosaic_look
from .tabs import TABS
from posviz.document.files import FIGURE_FORMATS, IMAGE_FORMATS, check_folder, check_width
from posviz.document.provenance import record
from posviz.document.spec import DIFFERENCE_RANGES, Selection
from posviz.errors import PosvizInputError
from posviz.views.mosaic import MosaicLook
from posviz.views.shown import Shown

TAB_FIGURES = tuple(map(tab_figures, TABS))     # the names of each tab's figures


class PlotsPanel(QtWidgets.QWidget):
    """All plots for one Evaluation, in three tabs, with the view selection."""

    selectionEdited = QtCore.Signal(object)      # a new Selection chosen by the user
    hoverMessage = QtCore.Signal(str)            # the value under the mouse, for a status line
    lookChanged = QtCore.Signal()                # the mosaic shown is not in look() any more

    def __init__(self, parent=None):
        super().__init__(parent)
        # The selection on screen; the session's is the one that counts (the window
        # applies it here with set_selection, and hears the user's in selectionEdited).
        self._selection = Selection()
        self._shown: Shown | None = None
        self._asked: MosaicLook | None = None  # the look asked for, until it arrives
        self._quiet = 0                        # > 0: tab changes are the program's own
        self._stale: set[str] = set()          # figures not yet showing self._shown
        self._figures: dict[str, Figure] = {}  # the figures built so far
        self._facts: dict[str, str] = {}       # set_provenance: what the Shown cannot say
        self.settings = None                   # QSettings for the export folder (None: the app's)
        self.tabs = QtWidgets.QTabWidget()
        self.tabs.setDocumentMode(True)
        self._pages: list[QtWidgets.QWidget] = []
        for tab in TABS:
            page = QtWidgets.QWidget()
            QtWidgets.QVBoxLayout(page).setContentsMargins(0, 0, 0, 0)
            self._pages.append(page)
            self.tabs.setTabToolTip(self.tabs.addTab(page, tab.title), tab.tip)
        self._build_tab(0)      # the others when first opened: ~0.15 s less at start-up
        from ..experiments import ExperimentsTab  # its own tab, outside the Selection
        self.experiments = ExperimentsTab()
        self.tabs.setTabToolTip(self.tabs.addTab(self.experiments, "Experiments"),
                                ExperimentsTab.TIP)
        self.tabs.currentChanged.connect(self._tab_changed)
        style.size_tabs_by_current_page(self.tabs)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._controls())
        layout.addWidget(self.tabs, 1)

    def _build_tab(self, index: int) -> None:
        """Create the figures of one tab, once."""
        page = self._pages[index]
        if page.layout().count():
            return
        made = {name: FIGURE_TYPES[name]() for name in TAB_FIGURES[index]}
        for name, figure in made.items():
            figure.hovered.connect(self.hoverMessage)
            figure.picked.connect(self._tile_clicked)
            figure.follow(self._selection)
            add_export_actions(name, figure, self._export_dialog)
        self._figures.update(made)
        page.layout().addWidget(arrange(list(made.values()), TABS[index].even))

    def _build_all(self) -> None:
        for index in range(len(TABS)):
            self._build_tab(index)

    def _tab_changed(self, index: int) -> None:
        experiments = index >= len(TABS)
        for widget in (self.layer_box, self.head_box, self.mosaic_box, self.range_box):
            widget.setEnabled(not experiments)        # they choose what the other tabs show
        if experiments:
            return
        self._build_tab(index)
        if self._quiet or index == self._selection.tab:
            self._refresh(self._visible())
        else:
            self._apply(self._selection.replace(tab=index), user=True)

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
        for r in DIFFERENCE_RANGES:
            self.range_box.addItem(f"±{r:g}", r)
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
        self._sync_controls()
        for box in (self.layer_box, self.head_box):
            box.valueChanged.connect(self._controls_edited)
        for box in (self.mosaic_box, self.range_box):
            box.currentIndexChanged.connect(self._controls_edited)
        return row

    def _controls_edited(self) -> None:
        self._apply(self._selection.replace(
            layer=self.layer_box.value(), head=self.head_box.value(),
            mosaic=self.mosaic_box.currentData(),
            difference_range=self.range_box.currentData()), user=True)

    def _tile_clicked(self, layer: int, head: int) -> None:
        self._apply(self._selection.replace(layer=layer, head=head), user=True)

    # -- the contract ---------------------------------------------------------------
    def show(self, shown: Shown | None = None) -> None:
        """Show an evaluation and its views: repaint the visible figures; the others
        refresh when their tab is opened, exported or asked for ``displayed()``.
        Without an argument, QWidget.show: put the panel on screen."""
        if shown is None:
            return super().show()
        self._shown = shown
        ref = shown.evaluation.reference
        L, h = ref.n_layers, ref.n_heads
        for box, top in ((self.layer_box, L), (self.head_box, h - 1)):
            if box.maximum() != top:
                box.blockSignals(True)
                box.setMaximum(top)
                box.blockSignals(False)
        self._selection = self._selection.clamped(L, h)
        self._sync_controls()
        self._stale = set(FIGURES)
        self._refresh(self._visible())
        self._ask_for_look(arrived=True)

    def shown(self) -> Shown | None:
        """The evaluation and views on screen (its mosaic in the look it was prepared
        in, which may be an older one than ``look()`` for a moment)."""
        return self._shown

    def look(self) -> MosaicLook:
        """The look the next mosaic should be coloured in (ask on the GUI thread only:
        the selection changes there)."""
        return mosaic_look(self._selection)

    def set_selection(self, selection: Selection) -> None:
        """Apply a selection (clamped to the evaluation shown); emits nothing."""
        self._apply(selection, user=False)

    def selection(self) -> Selection:
        return self._selection

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

    def set_provenance(self, facts: dict) -> None:
        """Facts about the figures' origin that the evaluation does not hold (e.g.
        ``text``, ``model``): they override the derived ones in every export."""
        self._facts = {str(key): str(value) for key, value in facts.items()}

    def provenance(self, name: str | None = None) -> dict[str, str]:
        """What produced the figures on screen (core.provenance.record), written into
        every exported file; empty before the first evaluation. The layer and head
        are the selection's for the figures that show one layer or head."""
        if self._shown is None:
            return {}
        sel, shows = self._selection, FIGURE_TYPES[name].selects if name else ("layer", "head")
        layer = sel.layer if "layer" in shows else None
        head = sel.head if "head" in shows else None
        facts = record(self._shown.evaluation, layer=layer, head=head,
                       text=self._facts.get("text"), model=self._facts.get("model"))
        facts.update({k: v for k, v in self._facts.items() if k not in ("text", "model")})
        if name is not None:
            facts["figure"] = name
        return facts

    def export_figure(self, name: str, path: Path, width: int | None = None,
                      dpi: int | None = None) -> Path:
        """Write one figure as .png (at ``width`` pixels, or ``dpi`` dots per inch of
        its size on screen), .svg or .csv, by suffix, each carrying its provenance."""
        figure = self._figure(name)
        self._refresh([name])
        path = Path(path)
        suffix = path.suffix.lower().lstrip(".")
        if suffix not in FIGURE_FORMATS:
            raise PosvizInputError(f"cannot export {path.name}: the file name must end in "
                                   f"{', '.join('.' + f for f in FIGURE_FORMATS)}")
        check_width(width)
        facts = self.provenance(name)
        if suffix == "csv":
            return writing(path, lambda: figure.export_csv(path, facts))
        self._bring_forward(figure)
        if suffix == "png":
            return writing(path, lambda: figure.export_png(path, width, dpi, facts))
        return writing(path, lambda: figure.export_svg(path, facts))

    def export_all(self, folder: Path, formats=("png", "svg"), width: int | None = None,
                   csv: bool = True, dpi: int | None = None) -> list[Path]:
        """Write every figure as <folder>/<name>.<format> (and <name>.csv); returns paths."""
        folder = Path(folder)
        formats = [f.lower().lstrip(".") for f in formats]
        unknown = [f for f in formats if f not in IMAGE_FORMATS]
        if unknown:
            raise PosvizInputError(f"unknown figure format {unknown[0]!r} "
                                   f"(use {', '.join(IMAGE_FORMATS)})")
        check_folder(folder)
        current = self.tabs.currentIndex()
        written = []
        try:
            for name in FIGURES:
                for fmt in formats + (["csv"] if csv else []):
                    written.append(self.export_figure(name, folder / f"{name}.{fmt}", width,
                                                      dpi))
        finally:
            with self._quietly():
                self.tabs.setCurrentIndex(current)
        return written

    # -- helpers --------------------------------------------------------------------
    def _figure(self, name: str) -> Figure:
        for index, names in enumerate(TAB_FIGURES):
            if name in names:
                self._build_tab(index)
                return self._figures[name]
        raise PosvizInputError(f"no figure named {name!r} (one of {', '.join(FIGURES)})")

    def _apply(self, selection: Selection, user: bool) -> None:
        """Make ``selection`` current: controls, tab and the figures it concerns."""
        if self._shown is not None:
            ref = self._shown.evaluation.reference
            selection = selection.clamped(ref.n_layers, ref.n_heads)
        if selection.mosaic not in MOSAIC_MODES:
            raise ValueError(f"unknown mosaic mode {selection.mosaic!r}")
        selection = selection.replace(tab=min(max(selection.tab, 0), len(TABS) - 1))
        old, self._selection = self._selection, selection
        self._sync_controls()
        if selection == old:
            return
        for name, figure in self._figures.items():
            figure.follow(selection)
            if any(getattr(selection, part) != getattr(old, part) for part in figure.selects):
                self._stale.add(name)
        if self.tabs.currentIndex() != selection.tab:
            with self._quietly():
                self.tabs.setCurrentIndex(selection.tab)    # refreshes the visible figures
        else:
            self._refresh(self._visible())
        if self.look() != mosaic_look(old):
            self._ask_for_look()
        if user:
            self.selectionEdited.emit(selection)

    def _ask_for_look(self, arrived: bool = False) -> None:
        """Tell ``lookChanged``, once, when the mosaic shown is not in the current look
        (mosaics are made on the compute worker), or is but another one was asked for
        since (that would replace it); ``arrived``: a new Shown is on screen."""
        if self._shown is None:
            return
        look, mosaic = self.look(), self._shown.views.mosaic
        if mosaic is not None and mosaic.look == look and (arrived or self._asked is None):
            self._asked = None
        elif look != self._asked:
            self._asked = look
            self.lookChanged.emit()

    @contextmanager
    def _quietly(self):
        """Tab changes made inside are the program's, not the user's."""
        self._quiet += 1
        try:
            yield
        finally:
            self._quiet -= 1

    def _visible(self) -> list[str]:
        """Figures on the current tab (the only ones worth repainting now)."""
        index = self.tabs.currentIndex()
        return list(TAB_FIGURES[index]) if index < len(TAB_FIGURES) else []

    def _refresh(self, names) -> None:
        """Bring stale figures among ``names`` up to date with the Shown."""
        if self._shown is None:
            return
        for name in names:
            if name in self._stale and name in self._figures:
                self._stale.discard(name)
                self._figures[name].update_from(self._shown, self._selection.layer,
                                                 self._selection.head)

    def _sync_controls(self) -> None:
        """Show the selection in the controls (without their signals)."""
        sel = self._selection
        for box, value in ((self.layer_box, sel.layer), (self.head_box, sel.head)):
            if box.value() != value:
                box.blockSignals(True)
                if value > box.maximum():        # no evaluation yet to bound it
                    box.setMaximum(value)
                box.setValue(value)
                box.blockSignals(False)
        for box, value in ((self.mosaic_box, sel.mosaic),
                           (self.range_box, sel.difference_range)):
            index = box.findData(value)
            if index >= 0 and box.currentIndex() != index:
                box.blockSignals(True)
                box.setCurrentIndex(index)
                box.blockSignals(False)

    def _bring_forward(self, figure: Figure) -> None:
        """Make the figure's tab current and laid out: a hidden widget renders at a
        stale size. A panel that was never shown is shown first (headless export)."""
        if not self.window().isVisible():
            self.window().show()
        for index in range(self.tabs.count()):
            if self.tabs.widget(index).isAncestorOf(figure):
                if self.tabs.currentIndex() != index:
                    with self._quietly():
                        self.tabs.setCurrentIndex(index)
                break
        QtWidgets.QApplication.processEvents()

    def _export_dialog(self, name: str, fmt: str) -> None:
        settings = self.settings if self.settings is not None else export_settings()
        chosen = ask_export_path(self, name, fmt, settings)
        if chosen is None:
            return
        path, width, dpi = chosen
        try:
            self.export_figure(name, path, width=width, dpi=dpi)
        except PosvizInputError as error:
            QtWidgets.QMessageBox.warning(self, "Export failed", str(error))
        else:
            self.hoverMessage.emit(f"saved {path}")


def arrange(figures: list[Figure], even: bool) -> QtWidgets.QWidget:
    """A tab's figures in their rows: the figures of a row side by side, the rows one
    under the other (splitters between them); ``even``: sharing the room evenly."""
    rows: dict[int, list[Figure]] = {}
    for figure in figures:
        rows.setdefault(figure.row, []).append(figure)
    lines = [_split(QtCore.Qt.Orientation.Horizontal, row, even) if len(row) > 1 else row[0]
             for _, row in sorted(rows.items())]
    return _split(QtCore.Qt.Orientation.Vertical, lines, even) if len(lines) > 1 else lines[0]


def _split(orientation, widgets, even: bool) -> QtWidgets.QSplitter:
    splitter = QtWidgets.QSplitter(orientation)
    splitter.setChildrenCollapsible(False)
    for index, widget in enumerate(widgets):
        splitter.addWidget(widget)
        if even:
            splitter.setStretchFactor(index, 1)
    return splitter
