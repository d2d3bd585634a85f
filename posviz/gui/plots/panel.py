"""PlotsPanel: every figure of one Evaluation, the view selection's controls, and export.

The panel only shows: it never runs a model, and its figures only draw what
posviz.views.shown computed (``show_evaluation(Shown)``, cheap enough to call on every
reorder). What is looked at (layer, head, mosaic mode, difference range, tab) is the
session's Selection (``set_session``): the panel draws it, clamped to the evaluation
shown, and a choice made in its controls, tabs or mosaic is a ``Session.select`` call.
The mosaic comes coloured in the Shown; in which look is the controller's business
(Controller.set_look), so the panel draws the mosaic it is handed.
"""
from __future__ import annotations

from contextlib import contextmanager

import numpy as np
from PySide6 import QtCore, QtWidgets

from . import style
from .arrange import arrange, hidden_by_content, show_by_content
from .base import Figure
from .exporting import add_copy_action, add_export_actions, copy_figure, figure_to_copy
from .figures import FIGURE_TYPES, FIGURES, tab_figures
from .hover import wrapped
from .mosaic_modes import MOSAIC_MODES
from .page_scroll import ScrolledTabs
from .panel_files import PanelFiles
from .repaint import one_paint_pass
from .tabs import TABS
from posviz.document.events import SelectionChanged
from posviz.document.spec import DIFFERENCE_RANGES, Selection
from posviz.errors import PosvizInputError
from posviz.gui.model_panel.fields import ShortCombo
from posviz.views.shown import Shown

TAB_FIGURES = tuple(map(tab_figures, TABS))     # the names of each tab's figures


class PlotsPanel(PanelFiles, QtWidgets.QWidget):
    """All plots for one Evaluation, in tabs, with the view selection's controls, and
    their files (panel_files.PanelFiles)."""

    hoverMessage = QtCore.Signal(str)            # the value under the mouse, for a status line
    message = QtCore.Signal(str)                 # what a figure's menu did, for a status line

    def __init__(self, settings=None, parent=None):
        super().__init__(parent)
        self.settings = settings               # QSettings for the export folder (the window's)
        self._session = None                   # whose Selection is drawn (set_session)
        self._shown: Shown | None = None       # the evaluation drawn, as handed in
        self._generation = 0                   # counts the Shown handed in
        self._drawn: dict[str, tuple] = {}     # figure -> (generation, layer?, head?) drawn
        self._quiet = 0                        # > 0: tab changes are the program's own
        self._figures: dict[str, Figure] = {}  # the figures built so far
        self._facts: dict[str, str] = {}       # set_provenance: what the Shown cannot say
        self._row_height = 0                   # set_row_height: each row's least height
        self.tabs = ScrolledTabs()             # each page scrolls under the tab bar
        self.tabs.setDocumentMode(True)
        self._pages: list[QtWidgets.QWidget] = []
        for tab in TABS:
            page = QtWidgets.QWidget()
            QtWidgets.QVBoxLayout(page).setContentsMargins(0, 0, 0, 0)
            self._pages.append(page)
            self.tabs.setTabToolTip(self.tabs.addTab(page, tab.title), wrapped(tab.tip))
        self._build_tab(0)      # the others when first opened: a quicker start
        self.tabs.currentChanged.connect(self._tab_changed)
        style.size_tabs_by_current_page(self.tabs)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addLayout(self._controls())
        layout.addWidget(self.tabs, 1)

    def add_page(self, widget: QtWidgets.QWidget, title: str, tip: str) -> None:
        """A tab of its own after the figures' (the Experiments tab): the selection's
        controls are idle while it is open."""
        self.tabs.setTabToolTip(self.tabs.addTab(widget, title), wrapped(tip))
        style.size_tabs_by_current_page(self.tabs)   # its width too: only while open

    def _build_tab(self, index: int) -> None:
        """Create the figures of one tab, once."""
        page = self._pages[index]
        if page.layout().count():
            return
        made = {name: FIGURE_TYPES[name]() for name in TAB_FIGURES[index]}
        for name, figure in made.items():
            figure.hovered.connect(self.hoverMessage)
            figure.picked.connect(self._picked)
            figure.follow(self.selection())
            add_export_actions(name, figure, self._export_dialog)
            add_copy_action(figure, self._copy)
        self._figures.update(made)
        page.layout().addWidget(arrange(list(made.values()), TABS[index].even))

    def set_row_height(self, pixels: int) -> None:
        """Give each row of figures at least ``pixels`` of the panel's height (controls
        included): the panel scrolls rather than squash a figure (a tab laid out by
        content counts the rows it shows)."""
        self._row_height = pixels
        self._fit_height()

    def _fit_height(self) -> None:
        index = self.tabs.currentIndex()       # a page of its own (Experiments): one row
        rows = {FIGURE_TYPES[name].row for name in (TAB_FIGURES[index] if index < len(
            TABS) else ()) if not hidden_by_content(self._figures.get(name))}
        if self._row_height and index < len(TABS):   # a third row gets room of its own
            layout, margins = self.layout(), self.layout().contentsMargins()
            above = (margins.top() + layout.itemAt(0).sizeHint().height()  # the controls,
                     + layout.spacing() + self.tabs.tabBar().sizeHint().height()  # tab bar
                     + margins.bottom())
            self._pages[index].setMinimumHeight(
                self._row_height * max(len(rows), 1) - above)

    def _tab_changed(self, index: int) -> None:
        own_page = index >= len(TABS)
        for widget in (self.layer_box, self.head_box, self.mosaic_box, self.range_box):
            widget.setEnabled(not own_page)           # they choose what the other tabs show
        chosen = not self._quiet and self._session is not None
        if own_page:                                  # recorded, so a saved file reopens it
            self._fit_height()
            if chosen and index != self.selection().tab:
                self._select(tab=index)
            return
        self._build_tab(index)
        self._fit_height()
        if chosen and index != self.selection().tab:
            self._select(tab=index)                   # drawn once the session tells
        else:
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
        self.mosaic_box = ShortCombo()          # "difference" (the whole in its menu)
        for mode, text in MOSAIC_MODES.items():
            self.mosaic_box.add(text, mode, short=mode)
        self.mosaic_box.setToolTip("What each mosaic tile shows")
        self.range_box = QtWidgets.QComboBox()
        for r in DIFFERENCE_RANGES:
            self.range_box.addItem(f"±{r:g}", r)
        self.range_box.setToolTip("Colour range of the difference maps; fixed across "
                                  "reorders so colours compare")
        for label, widget in (("Layer", self.layer_box), ("Head", self.head_box),
                              ("Mosaic", self.mosaic_box),
                              ("Difference range", self.range_box)):
            text = QtWidgets.QLabel(label)
            text.setBuddy(widget)
            row.addWidget(text)
            row.addWidget(widget)
            row.addSpacing(8)
        row.addStretch(1)
        self._sync_controls(Selection())
        for box in (self.layer_box, self.head_box):
            box.valueChanged.connect(self._controls_edited)
        for box in (self.mosaic_box, self.range_box):
            box.currentIndexChanged.connect(self._controls_edited)
        return row

    def _controls_edited(self) -> None:
        self._select(layer=self.layer_box.value(), head=self.head_box.value(),
                     mosaic=self.mosaic_box.currentData(),
                     difference_range=self.range_box.currentData())

    def _picked(self, layer: int, head: int) -> None:
        self._select(layer=layer, head=head)

    def _select(self, **changes) -> None:
        """The user chose: the session's selection changes (and is drawn when it does)."""
        if self._session is not None:
            self._session.select(self.selection().replace(**changes))

    # -- the contract ---------------------------------------------------------------
    def set_session(self, session) -> None:
        """Draw this Session's view selection from now on, and send choices to it."""
        self._session = session
        session.subscribe(self._on_session_event)
        self._show_selection()

    def leave_session(self) -> None:
        """Stop drawing the session's selection (a panel about to be deleted)."""
        if self._session is not None:
            self._session.unsubscribe(self._on_session_event)
            self._session = None

    def show_evaluation(self, shown: Shown) -> None:
        """Show an evaluation and its views: repaint the visible figures; the others
        refresh when their tab is opened, exported or asked for ``displayed()``."""
        self._shown, self._generation = shown, self._generation + 1
        ref = shown.evaluation.reference
        for box, top in ((self.layer_box, ref.n_layers), (self.head_box, ref.n_heads - 1)):
            if box.maximum() != top:
                box.blockSignals(True)
                box.setMaximum(top)
                box.blockSignals(False)
        self._sync_controls(self.selection())
        visible = self._visible()
        self._refresh(visible)
        one_paint_pass(self.window(), [canvas for name in visible if (canvas := getattr(
            self._figures.get(name), "canvas", None)) is not None])

    def selection(self) -> Selection:
        """The session's selection as drawn: within the evaluation shown and the tabs."""
        selection = self._session.selection if self._session is not None else Selection()
        if self._shown is not None:
            ref = self._shown.evaluation.reference
            selection = selection.clamped(ref.n_layers, ref.n_heads)
        return selection.replace(tab=min(max(selection.tab, 0), self.tabs.count() - 1))

    def current_figures(self) -> dict[str, QtWidgets.QWidget]:
        """The figures of the tab on screen, by name."""
        return {name: self._figures[name] for name in self._visible() if name in self._figures}

    def figures(self) -> dict[str, QtWidgets.QWidget]:
        """Every figure, by name (building those of tabs not yet opened)."""
        for index in range(len(TABS)):
            self._build_tab(index)
        return {name: self._figures[name] for name in FIGURES}

    def displayed(self, *names: str) -> dict[str, dict[str, np.ndarray]]:
        """The arrays each figure of ``names`` (default: every one) draws, by name."""
        names = names or FIGURES
        figures = self.figures()
        self._refresh(names)
        return {name: figures[name].displayed() for name in names}

    def laid_out(self, name: str) -> Figure:
        """Figure ``name`` drawn and laid out in its tab (made current), as exported."""
        figure = self._figure(name)
        self._refresh([name])
        self._bring_forward(figure)
        return self.captioned(figure)

    def copy_plot(self) -> bool:
        """Copy the plot under the mouse (or holding the focus, or the tab's first) to
        the clipboard; False before there is one. A tab of its own copies its plot."""
        if self.tabs.currentIndex() >= len(TABS):
            return bool(getattr(self.tabs.currentWidget(), "copy_plot", lambda: False)())
        return self._copy(figure_to_copy(figure for figure in self.current_figures().values()
                                         if not hidden_by_content(figure)))

    # -- helpers --------------------------------------------------------------------
    def _on_session_event(self, event) -> None:
        if isinstance(event, SelectionChanged):
            self._show_selection()

    def _show_selection(self) -> None:
        """Draw the session's selection: controls, tab and the figures it concerns."""
        selection = self.selection()
        self._sync_controls(selection)
        for figure in self._figures.values():
            figure.follow(selection)
        if self.tabs.currentIndex() != selection.tab:
            with self._quietly():
                self.tabs.setCurrentIndex(selection.tab)    # refreshes the visible figures
        else:
            self._refresh(self._visible())

    def _figure(self, name: str) -> Figure:
        for index, names in enumerate(TAB_FIGURES):
            if name in names:
                self._build_tab(index)
                return self._figures[name]
        raise PosvizInputError(f"no figure named {name!r} (one of {', '.join(FIGURES)})")

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
        """Redraw the built figures among ``names`` that do not show the Shown and the
        parts of the selection they draw."""
        if self._shown is None:
            return
        selection = self.selection()
        for name in names:
            figure = self._figures.get(name)
            if figure is None:
                continue
            drawing = (self._generation, *(getattr(selection, p) for p in figure.selects))
            if self._drawn.get(name) != drawing:
                self._drawn[name] = drawing
                figure.update_from(self._shown, selection.layer, selection.head)
        for index, tab in enumerate(TABS):
            if tab.by_content and set(names) & set(TAB_FIGURES[index]):
                show_by_content([self._figures[n] for n in TAB_FIGURES[index]
                                 if n in self._figures])
                self._fit_height()

    def _sync_controls(self, selection: Selection) -> None:
        """Show the selection in the controls (without their signals)."""
        for box, value in ((self.layer_box, selection.layer), (self.head_box, selection.head)):
            if box.value() != value:
                box.blockSignals(True)
                if value > box.maximum():        # no evaluation yet to bound it
                    box.setMaximum(value)
                box.setValue(value)
                box.blockSignals(False)
        for box, value in ((self.mosaic_box, selection.mosaic),
                           (self.range_box, selection.difference_range)):
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

    def _copy(self, figure: Figure | None) -> bool:
        if not copy_figure(figure and self.captioned(figure)):
            return False
        self.message.emit(f"Copied the {figure.name.replace('_', ' ')} plot to the clipboard")
        return True
