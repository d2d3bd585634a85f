"""The main window: text and token strip on top, plots in the middle, model on the side.

The window is built in two steps so it appears at once: ``MainWindow()`` needs only Qt
(the strip, toolbar, menus and status line); ``controller.ready`` arrives once the core
has been imported on a worker, and then the model panel is added and the plots (built
as soon as their modules are in) are shown.

The window owns its parts and wires them: the controller (the session and the
workers), the edits (widgets -> session calls and undo steps), the documents (files and
the last session), the model panel's dock (model_dock), the help and the status line.
It shows the session's events; the plots draw the session's view selection themselves.
"""
from __future__ import annotations

from PySide6.QtCore import QSettings, Qt, Slot
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import (QAbstractSpinBox, QFrame, QLabel, QMainWindow, QScrollArea,
                               QStackedWidget, QVBoxLayout, QWidget)

from .actions import UndoPassesThrough, build_actions, icon
from .controller import Controller
from .documents import Documents
from .edits import Edits
from .held_start import attach_held_notice
from .help import Help
from .model_dock import attach_panel, build_dock, narrow_dock
from .remembered import (builtin_remembered, keep_geometry, keep_on_screen, remember,
                         remembered, restore_geometry)
from .status import ElidedLabel, StatusLine
from .tokens.text_row import TextRow
from .tokens.strip import TokenStrip
from .window_size import default_size

STRIP_MAX_HEIGHT = 143            # about three rows of chips; more rows scroll,
                                  # so a long text leaves the plots room
PLOTS_MIN_WIDTH = 560             # the plots never get narrower for the model panel;
                                  # with its narrowest, they fit a 800-pixel screen
PLOTS_MIN_HEIGHT = 710            # below this the plots scroll rather than squash a
                                  # figure to a sliver (two rows of figures need it;
                                  # a tab showing one row, half); the least default
                                  # window (1440 x 900) shows both rows whole
SHORT_WINDOW = 820                # a window shorter than this drops the hint line


def import_plots() -> None:
    """The plots' modules (pyqtgraph with them): imported on the compute worker at
    start-up, so the window builds its plots as soon as they are in."""
    from . import plots  # noqa: F401


class MainWindow(QMainWindow):
    def __init__(self, settings: QSettings | None = None):
        super().__init__()
        self.settings = settings or QSettings("posviz", "posviz")
        self.setWindowTitle("posviz")
        self.setWindowIcon(icon("posviz"))
        self.controller = c = Controller(self, import_plots=import_plots)
        self.undo_stack = QUndoStack(self)
        self.plots = None                 # the PlotsPanel, once its modules are in
        self.plots_scroll = None          # and the scroll area holding it
        self.experiments = None           # the Experiments tab, with the plots
        self.splitters = None             # the plots' splitter sizes, kept per tab
        self.veil = None                  # dims the plots while they show an old order
        self._plots_tried = False         # _build_plots ran (plots may be None: no pyqtgraph)
        self.model_panel = None           # once the core is loaded
        self.scenario_panel = None        # once a document with an explanation opens
        self._build_status()
        self._build_editor()
        self.edits = Edits(c, self.undo_stack, self.strip, self.status, self)
        self.files = Documents(self, self.settings, c, self.undo_stack, self.edits,
                               self.status)
        attach_held_notice(self)          # a start that would not fit: why, and what now
        self.help = Help(self)
        build_actions(self)
        self.resize(default_size(self.screen().availableGeometry() if self.screen() else None))
        restore_geometry(self, self.settings)
        self.strip.moveRequested.connect(self.edits.live_move)
        self.strip.dragFinished.connect(self.edits.drag_finished)
        self.strip.dragCancelled.connect(self.edits.drag_cancelled)
        self.edits.textChecked.connect(self.text_row.show_error)
        self.edits.undoWaits.connect(self._hold_undo)
        self.files.renamed.connect(self._refresh_title)
        self.files.opened.connect(self._explain)
        self.files.detached.connect(self._detach_explanation)
        c.ready.connect(self._on_ready)
        c.plotsImported.connect(self._build_plots)
        c.startStep.connect(lambda text: (self.placeholder.setText(text), self.status.say(text)))
        c.computing.connect(self.status.asked)
        self.status.far.connect(self._first_view_far)
        c.evaluated.connect(self._on_evaluated)
        c.evaluationFailed.connect(self.status.failed)
        c.evaluationFailed.connect(lambda text: self.plots_area.currentWidget() is
                                   self.placeholder and self.placeholder.setText(text))
        c.modelLoading.connect(self._on_model_loading)
        c.modelProgress.connect(lambda text: self.model_panel and
                                self.model_panel.load.step(text))
        c.modelCount.connect(lambda step, done, total: self.model_panel and
                             self.model_panel.load.count(step, done, total))
        c.modelLoaded.connect(self._on_model_loaded)
        c.modelFailed.connect(self._on_model_failed)
        c.modelLoaded.connect(self.files.model_loaded)
        c.modelFailed.connect(self.files.model_failed)

    # -- building ---------------------------------------------------------------------
    def _build_editor(self) -> None:
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(8, 6, 8, 4)
        layout.setSpacing(4)
        self.text_row = row = TextRow()
        self.text_edit, self.text_error = row.edit, row.error
        self.truncate_button = row.truncate_button
        row.applyRequested.connect(self.apply_text)
        UndoPassesThrough(self.text_edit, lambda: self.session is not None and
                          self.text_edit.text() == self.session.text, self)
        layout.addWidget(row)
        self.strip = TokenStrip()
        self.strip_scroll = QScrollArea()
        self.strip_scroll.setWidget(self.strip)
        self.strip_scroll.setWidgetResizable(True)
        self.strip_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.strip_scroll.setFrameShape(QFrame.StyledPanel)
        self.strip_scroll.setStyleSheet("QScrollArea { background: #fbfcfe; }")
        self.strip.heightChanged.connect(
            lambda h: self.strip_scroll.setFixedHeight(min(h, STRIP_MAX_HEIGHT) + 4))
        self.strip.selectionChanged.connect(self._update_actions)
        self.strip.hoverMessage.connect(self.hover_label.setText)
        layout.addWidget(self.strip_scroll)
        self.plots_area = QStackedWidget()      # the placeholder until a first result
        self.placeholder = QLabel("Loading model…", alignment=Qt.AlignCenter)
        self.placeholder.setStyleSheet("color: #777; font-size: 16px;")
        self.placeholder.setWordWrap(True)       # a long message must not widen the window
        self.plots_area.addWidget(self.placeholder)
        layout.addWidget(self.plots_area, 1)
        self.setCentralWidget(central)
        central.setMinimumWidth(PLOTS_MIN_WIDTH)
        self.model_dock = build_dock(self)

    def _build_status(self) -> None:
        self.state_label = ElidedLabel("Loading model…", elide=Qt.TextElideMode.ElideMiddle)
        self.hover_label = ElidedLabel(keeps=True)
        self.hover_label.setStyleSheet("color: #445;")
        self.statusBar().addWidget(self.state_label, 1)
        self.statusBar().addPermanentWidget(self.hover_label)
        self.status = StatusLine(self.state_label, self, lambda: self.session)

    # -- start-up ---------------------------------------------------------------------
    def start(self, path=None, last: bool = True, model: str | None = None) -> None:
        """Import the core and compute (call once the window is on screen): the session
        file ``path``, else the last session (unless not ``last``), else the remembered
        text and options, with the pretrained ``model`` (models.hf.load_backend's
        source) instead of the built-in one when given (and the default position ids and
        order when not ``last``)."""
        if not self.files.start(path, last):
            self.controller.start(*remembered(self.settings, model, fresh=not last),
                                  builtin=builtin_remembered(self.settings))

    @Slot()
    def _on_ready(self) -> None:
        session = self.session
        for listener in (self.files.on_session_event, self.edits.on_session_event,
                         self._on_session_event):
            session.subscribe(listener)
        self.model_panel = attach_panel(self, session)
        self._build_plots()
        if self.plots is not None:
            self.plots.set_session(session)    # shown with the first result, not empty
        for box in self.findChildren(QAbstractSpinBox):   # a number is applied as typed:
            UndoPassesThrough(box, lambda: True, box)      # Ctrl+Z undoes the session's step
        self.text_edit.setText(session.text)
        self._refresh_tokens()
        self.files.show_started()
        if self.plots is not None:
            self.splitters.restore(self.plots.tabs.currentIndex())
        keep_on_screen(self, shrink=False)    # laid out with its panels: still on screen

    def _first_view_far(self, far: str) -> None:
        """Until the first result the placeholder says how far its forward is."""
        if self.session is not None and self.plots_area.currentWidget() is self.placeholder:
            self.placeholder.setText(f"Computing the first view{': ' + far if far else ''}…")

    @Slot()
    def _build_plots(self) -> None:
        """The plots panel and the Experiments tab, once, hidden until ``ready``: built
        as soon as the worker has the plots' modules (torch's libraries load there
        meanwhile), else on ``ready``."""
        if self._plots_tried:
            return
        self._plots_tried = True
        try:
            from .experiments.tab import ExperimentsTab
            from .plots import PlotsPanel, mosaic_look
            from .splitters import TabSplitters
            from .stale import StaleVeil
            self.plots = PlotsPanel(self.settings)
        except ImportError as error:
            self.placeholder.setText(f"Plots are not available: {error}")
            return
        self.controller.set_look(mosaic_look)
        self.experiments = ExperimentsTab(lambda: self.session, self.settings)
        self.plots.add_page(self.experiments, "Experiments", ExperimentsTab.TIP)
        self.plots.set_row_height(PLOTS_MIN_HEIGHT // 2)
        self.plots_scroll = QScrollArea()
        self.plots_scroll.setWidget(self.plots)
        self.plots_scroll.setWidgetResizable(True)
        self.plots_scroll.setFrameShape(QFrame.NoFrame)
        # narrower than the plots' minimum: scroll sideways, not cut the rightmost map off
        self.plots_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAsNeeded)
        self.plots_area.addWidget(self.plots_scroll)
        self.plots.hoverMessage.connect(self.hover_label.setText)
        self.experiments.figure.hovered.connect(self.hover_label.setText)
        self.experiments.told.connect(self.status.say)   # not a stale line for 20 min
        self.plots.message.connect(self.status.say)
        self.splitters = TabSplitters(self.plots.tabs, self.settings)
        self.plots.tabs.currentChanged.connect(self.splitters.restore)
        self.veil = StaleVeil(self.plots.tabs, spared=self.experiments)
        self.veil.follow(self.controller)       # after the plots: they draw a result first
        self.status.far.connect(self.veil.how_far)
        self.files.awaiting.connect(self.veil.awaiting)

    # -- session -> widgets -----------------------------------------------------------
    @property
    def session(self):
        return self.controller.session

    def _on_session_event(self, event) -> None:
        from ..document.events import (ModelChanged, OrderChanged, PositionsChanged,
                                       SelectionChanged, TextChanged)
        if isinstance(event, SelectionChanged):
            return                        # the plots draw it
        if isinstance(event, OrderChanged):
            self.strip.set_order(event.after)
            if not self.strip.sliding():  # sliding, they are drawn where they were
                self.strip.repaint()      # now, before the controller's request starts
        elif isinstance(event, PositionsChanged):
            self.model_panel.set_positions(event.positions)
        elif isinstance(event, (TextChanged, ModelChanged)):
            self.hover_label.clear()      # it named tokens or values of what was shown
            if isinstance(event, ModelChanged):
                self.model_panel.show_spec(event.spec)
            if self.text_edit.text() != self.session.text:
                self.text_edit.setText(self.session.text)
            self.text_row.show_error("")
            self._refresh_tokens()
        if self.experiments is not None:     # its result may be of the previous inputs
            self.experiments.refresh_stale()
        self.status.edited()
        if self.model_panel is not None and not self.controller.loading:
            self.model_panel.load.clear_error_when_shown()
        self._update_actions()

    def _refresh_tokens(self) -> None:
        s = self.session
        self.strip.set_tokens(s.seq.tokens, s.seq.pinned, s.order, s.movable_slots())
        self._refresh_title()

    def _refresh_title(self) -> None:
        if (s := self.session) is not None:
            self.setWindowTitle(f"{self.files.name()}[*] — posviz — {s.backend.name} — "
                                f"{len(s.seq)} tokens")
        self._update_actions()

    def _update_actions(self) -> None:
        ready = self.session is not None
        for action in (self.shuffle_action, self.reverse_action, self.rotate_action,
                       self.reset_action, self.export_action, *self.file_actions,
                       self.scenarios_action):
            action.setEnabled(ready)
        self.swap_action.setEnabled(ready and len(self.strip.selected) == 2)
        self.left_action.setEnabled(ready and self.strip.movable_step(-1) is not None)
        self.right_action.setEnabled(ready and self.strip.movable_step(1) is not None)

    def _hold_undo(self, waits: bool) -> None:
        """Undo and redo wait while a drag is under way."""
        self.undo_action.setEnabled(not waits and self.undo_stack.canUndo())
        self.redo_action.setEnabled(not waits and self.undo_stack.canRedo())

    @Slot(object, float)
    def _on_evaluated(self, shown, ms: float) -> None:
        ev = shown.evaluation
        done = "mosaic coloured" if self.controller.restyled else "computed"
        self.status.evaluated(f"{len(ev.order)} tokens · {ev.reference.n_layers} layers × "
                              f"{ev.reference.n_heads} heads · {done} in {ms:.0f} ms")
        if self.model_panel is None:
            return                    # the panels are not built yet
        if ev.seq == self.session.seq:
            self.strip.set_change(shown.views.token_bars)
        self.model_panel.describe(shown)
        if self.plots is not None:
            if self.plots_area.currentWidget() is self.placeholder:
                self.plots_area.setCurrentWidget(self.plots_scroll)   # painted once, filled
            self.plots.show_evaluation(shown)

    # -- widgets -> edits -------------------------------------------------------------
    def apply_text(self, truncate: bool = False) -> None:
        """Turn the text field into tokens (one undo step); bad text is told inline."""
        self.text_row.typing.stop()
        self.edits.apply_text(self.text_edit.text(), truncate)

    def use_example(self, sentence: str) -> None:
        self.text_edit.setText(sentence)
        self.apply_text()

    # -- models -----------------------------------------------------------------------
    def _on_model_loading(self, label: str) -> None:
        if self.model_panel is not None:
            self.model_panel.loading_started(label)
        self.status.say(f"Loading {label}…")

    def _on_model_loaded(self, spec) -> None:
        self.model_panel.model_loaded(spec)
        if self.state_label.text().startswith("Loading "):
            self.status.say(f"Loaded {spec.name}; computing…")

    def _on_model_failed(self, message: str) -> None:
        self.model_panel.model_failed(message)     # and shows the model still running
        self.status.say(message, error=True)

    # -- the window -------------------------------------------------------------------
    def _explain(self, doc) -> None:
        """A document with a title or note shows it in a side panel; one without closes
        the panel."""
        from .scenarios import ExplanationPanel
        if not (doc.title or doc.note):
            if self.scenario_panel is not None:
                self.scenario_panel.hide()
            return
        if self.scenario_panel is None:
            self.scenario_panel = ExplanationPanel(self)
        self.scenario_panel.show_document(doc)

    def _detach_explanation(self, what: str) -> None:
        """The open scenario's text or model was changed: its explanation says so."""
        if self.scenario_panel is not None:
            self.scenario_panel.detach(what)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.text_row.set_short(self.height() < SHORT_WINDOW)
        narrow_dock(self, event)

    # (the export dialog imports the plots, hence pyqtgraph: not before the first paint)
    def export_figures(self) -> None:
        from .export_dialog import export_figures
        export_figures(self)

    def export_to(self, folder: str, formats, width, csv: bool) -> list:
        from .export_dialog import export_to
        return export_to(self, folder, formats, width, csv)

    def closeEvent(self, event) -> None:
        if not self.files.close():        # the last session, restored at the next start
            event.ignore()                # a modified file: Cancel keeps the window
            return
        if self.plots is not None:
            self.splitters.save()
        keep_geometry(self, self.settings)
        self.settings.setValue("window/state", self.saveState())
        if self.session is not None:
            remember(self.settings, self.session, getattr(self.model_panel, "builtin", None))
        self.settings.sync()
        self.controller.shutdown()
        super().closeEvent(event)
