"""The main window: text and token strip on top, plots in the middle, model on the side.

The window is built in two steps so it appears at once: ``MainWindow()`` needs only Qt
(the strip, toolbar, menus and status line); ``controller.ready`` arrives once the core
has been imported on a worker, and then the model panel and the plots are added.

The session holds the document; the window observes its events and shows them, and
sends every edit to one of its methods. The evaluation shown is the controller's.
"""
from __future__ import annotations

import json

from PySide6.QtCore import QByteArray, QSettings, QSize, Qt, QTimer, Slot
from PySide6.QtGui import QUndoStack
from PySide6.QtWidgets import (QAbstractSpinBox, QDockWidget, QFrame, QHBoxLayout, QLabel,
                               QLineEdit, QMainWindow, QPushButton, QScrollArea,
                               QStackedWidget, QVBoxLayout, QWidget)

from .actions import UndoPassesThrough, build_actions, icon
from .commands import history_fits
from .controller import Controller
from .documents import WindowDocuments
from .edits import WindowEdits
from .help import WindowHelp
from .token_strip import TokenStrip

ERROR_STYLE = "color: #c62828;"
TEXT_DEBOUNCE_MS = 700
COMPUTING_AFTER_MS = 150          # an evaluation slower than this says "computing…"
STRIP_MAX_HEIGHT = 143            # about three rows of chips; more rows scroll,
                                  # so a long text leaves the plots room
DOCK_MIN_WIDTH = 200              # the model panel's narrowest: its rows wrap, then scroll
DOCK_MAX_SHARE = 0.25             # of a window being made narrower
PLOTS_MIN_WIDTH = 600             # the plots never get narrower for the model panel
PLOTS_MIN_HEIGHT = 760            # below this the plots scroll rather than squash a
                                  # figure to a sliver (two rows of figures need it)
SHORT_WINDOW = 820                # a window shorter than this drops the hint line


def dock_width(window_width: int) -> int:
    """The model panel's first width: a fifth of the window, within 220-330 pixels, so
    at 1024 pixels the plots keep almost 800."""
    return max(220, min(330, round(window_width * 0.2)))


def default_size(available=None) -> QSize:
    """1440 x 900, or a little less than the screen when the screen is smaller."""
    width, height = 1440, 900
    if available is not None and available.width() > 0:
        width = min(width, int(available.width() * 0.96))
        height = min(height, int(available.height() * 0.94))
    return QSize(width, height)


class MainWindow(WindowEdits, WindowDocuments, WindowHelp, QMainWindow):
    def __init__(self, settings: QSettings | None = None):
        super().__init__()
        self.settings = settings or QSettings("posviz", "posviz")
        self.setWindowTitle("posviz")
        self.setWindowIcon(icon("posviz"))
        self.controller = Controller(self)
        self.undo_stack = QUndoStack(self)
        self.plots = None                 # the PlotsPanel, once the core is loaded
        self._plots_tried = False         # _build_plots ran (plots may be None: no pyqtgraph)
        self.model_panel = None
        self._described = None            # the reference trace the model panel describes
        self._settled_state = ""          # the last evaluation's status: shown again when
                                          # an error or a load's message no longer applies
        self._build_status()
        self._build_editor()
        build_actions(self)
        self.resize(default_size(self.screen().availableGeometry() if self.screen() else None))
        geometry = self.settings.value("window/geometry")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        c = self.controller
        c.ready.connect(self._on_ready)
        c.plotsImported.connect(self._build_plots)
        # "computing…" only for an evaluation that takes a while: during a drag it would
        # flash at every slot (and re-lay the status bar out twice per reorder).
        self._computing = QTimer(self, singleShot=True, interval=COMPUTING_AFTER_MS,
                                 timeout=lambda: self._state("computing…"))
        c.computing.connect(self._computing.start)
        c.evaluated.connect(self._on_evaluated)
        c.evaluationFailed.connect(self._on_evaluation_failed)
        c.modelLoading.connect(self._on_model_loading)
        c.modelProgress.connect(lambda text: self.model_panel and
                                self.model_panel.loading_progress(text))
        c.modelCount.connect(lambda step, done, total: self.model_panel and
                             self.model_panel.loading_count(step, done, total))
        c.modelLoaded.connect(self._on_model_loaded)
        c.modelFailed.connect(self._on_model_failed)
        c.modelLoaded.connect(self._on_document_model_loaded)
        c.modelFailed.connect(self._on_document_model_failed)

    # -- building ---------------------------------------------------------------------
    def _build_editor(self) -> None:
        central = QWidget()
        layout = QVBoxLayout(central)
        layout.setContentsMargins(8, 6, 8, 4)
        layout.setSpacing(4)
        row = QHBoxLayout()
        caption = QLabel("Text")
        caption.setStyleSheet("font-weight: 600;")
        self.text_edit = QLineEdit()
        self.text_edit.setPlaceholderText("Type a sentence; its tokens become chips below")
        self.text_edit.setToolTip("The sentence to tokenize. Press Enter (or pause typing) "
                                  "to turn it into chips; edits can be undone with Ctrl+Z.")
        self.text_edit.setClearButtonEnabled(True)
        self.text_edit.returnPressed.connect(self.apply_text)
        self._text_timer = QTimer(self, singleShot=True, interval=TEXT_DEBOUNCE_MS,
                                  timeout=self.apply_text)
        self.text_edit.textEdited.connect(lambda _: self._text_timer.start())
        self._undo_filter = UndoPassesThrough(
            self.text_edit, lambda: self.session is not None and
            self.text_edit.text() == self.session.text, self)
        row.addWidget(caption)
        row.addWidget(self.text_edit, 1)
        layout.addLayout(row)
        error_row = QHBoxLayout()
        self.text_error = QLabel(wordWrap=True)
        self.text_error.setStyleSheet(ERROR_STYLE)
        self.truncate_button = QPushButton("Truncate")
        self.truncate_button.setToolTip("Keep only as many tokens as the model has positions")
        self.truncate_button.clicked.connect(lambda: self.apply_text(truncate=True))
        self.hint = QLabel("Drag the chips to reorder them · small numbers: original "
                           "places · orange: moved · grey: special tokens that stay put")
        self.hint.setStyleSheet("color: #6b7a8c; font-size: 11px;")
        error_row.addWidget(self.text_error, 1)
        error_row.addWidget(self.truncate_button)
        error_row.addStretch(0)
        error_row.addWidget(self.hint)
        layout.addLayout(error_row)
        self._show_text_error("")
        self.strip = TokenStrip()
        self.strip_scroll = QScrollArea()
        self.strip_scroll.setWidget(self.strip)
        self.strip_scroll.setWidgetResizable(True)
        self.strip_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAlwaysOff)
        self.strip_scroll.setFrameShape(QFrame.StyledPanel)
        self.strip_scroll.setStyleSheet("QScrollArea { background: #fbfcfe; }")
        self.strip.heightChanged.connect(
            lambda h: self.strip_scroll.setFixedHeight(min(h, STRIP_MAX_HEIGHT) + 4))
        self.strip.moveRequested.connect(self._live_move)
        self.strip.dragFinished.connect(self._drag_finished)
        self.strip.dragCancelled.connect(self._drag_cancelled)
        self.strip.selectionChanged.connect(self._update_actions)
        self.strip.hoverMessage.connect(self.hover_label.setText)
        layout.addWidget(self.strip_scroll)
        self.plots_area = QStackedWidget()
        self.placeholder = QLabel("Loading model…", alignment=Qt.AlignCenter)
        self.placeholder.setStyleSheet("color: #777; font-size: 16px;")
        self.placeholder.setWordWrap(True)       # a long message must not widen the window
        self.plots_area.addWidget(self.placeholder)
        layout.addWidget(self.plots_area, 1)
        self.setCentralWidget(central)
        self.model_dock = QDockWidget("Model", self)
        self.model_dock.setObjectName("model_dock")
        self.model_dock.setFeatures(QDockWidget.DockWidgetClosable |
                                    QDockWidget.DockWidgetMovable |
                                    QDockWidget.DockWidgetFloatable)
        loading = QLabel("Loading model…", alignment=Qt.AlignTop | Qt.AlignHCenter)
        loading.setMinimumWidth(DOCK_MIN_WIDTH)
        central.setMinimumWidth(PLOTS_MIN_WIDTH)
        self.model_dock.setWidget(loading)
        self.addDockWidget(Qt.RightDockWidgetArea, self.model_dock)

    def _build_status(self) -> None:
        self.state_label = QLabel("Loading model…")
        self.hover_label = QLabel()
        self.hover_label.setStyleSheet("color: #445;")
        self.statusBar().addWidget(self.state_label, 1)
        self.statusBar().addPermanentWidget(self.hover_label)

    def _state(self, text: str, error: bool = False) -> None:
        self.state_label.setText(text)
        style = ERROR_STYLE if error else ""
        if self.state_label.styleSheet() != style:     # a style sheet re-polishes: ~1 ms
            self.state_label.setStyleSheet(style)

    # -- start-up ---------------------------------------------------------------------
    def start(self, path=None, last: bool = True, model: str | None = None) -> None:
        """Import the core and compute (call once the window is on screen): the session
        file ``path``, else the last session (unless not ``last``), else the remembered
        text and options, with the pretrained ``model`` (core.hf.load_backend's source)
        instead of the built-in one when given."""
        from ..document.spec import ModelSpec
        from ..models.config import ModelConfig, Positions

        if self.start_document(path, last):
            return
        s = self.settings
        try:
            config = ModelConfig(**json.loads(s.value("model/config", "{}") or "{}"))
            config.validate()
        except (TypeError, ValueError):
            config = ModelConfig()
        try:
            positions = Positions(str(s.value("positions/mode", "slot")),
                                  int(s.value("positions/offset", 0))).validate()
        except (TypeError, ValueError):
            positions = Positions()
        spec = ModelSpec.builtin(config) if model is None else ModelSpec.pretrained(model)
        self.controller.start(str(s.value("text", "")), spec, positions)

    @Slot()
    def _on_ready(self) -> None:
        from .model_panel import ModelPanel

        session = self.session
        session.subscribe(self._on_session_event)
        self.model_panel = panel = ModelPanel(lambda: self.session.spec, session.positions)
        panel.modelRequested.connect(self.controller.load)
        panel.cancelRequested.connect(self.controller.cancel_load)
        panel.cancelRequested.connect(lambda: self._state(self._settled_state))
        panel.cancelRequested.connect(self._open_cancelled)
        panel.positionsChanged.connect(self._positions_edited)
        scroll = QScrollArea()
        scroll.setWidget(panel)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAsNeeded)
        scroll.setMinimumWidth(DOCK_MIN_WIDTH)
        self.model_dock.setWidget(scroll)
        state = self.settings.value("window/state")
        if not (isinstance(state, QByteArray) and self.restoreState(state)):
            self.resizeDocks([self.model_dock], [dock_width(self.width())], Qt.Horizontal)
        self._build_plots()
        if self.plots is not None:
            self.plots_area.setCurrentWidget(self.plots_scroll)
            self.plots.tabs.currentChanged.connect(self._tab_opened)
            self.plots.set_selection(session.selection)
            self.plots.selectionEdited.connect(lambda selection: self.session.select(selection))
            self.controller.watch_look(self.plots)
            if self.controller.last_shown is not None:     # computed while we built
                self._on_evaluated(self.controller.last_shown, self.controller.last_ms)
        for box in self.findChildren(QAbstractSpinBox):   # a number is applied as typed:
            UndoPassesThrough(box, lambda: True, box)      # Ctrl+Z undoes the session's step
        self.text_edit.setText(session.text)
        self._refresh_tokens()
        self._start_document()
        self._tab_opened(self.plots.tabs.currentIndex() if self.plots is not None else 0)

    @Slot()
    def _build_plots(self) -> None:
        """The plots panel, once, hidden until ``ready``: built as soon as the worker has
        the plots' modules (torch's libraries load there meanwhile), else on ``ready``."""
        if self._plots_tried:
            return
        self._plots_tried = True
        try:
            from .plots import PlotsPanel
            self.plots = PlotsPanel()
        except ImportError as error:
            self.placeholder.setText(f"Plots are not available: {error}")
            return
        self.plots.setMinimumHeight(PLOTS_MIN_HEIGHT)
        self.plots_scroll = QScrollArea()
        self.plots_scroll.setWidget(self.plots)
        self.plots_scroll.setWidgetResizable(True)
        self.plots_scroll.setFrameShape(QFrame.NoFrame)
        # Narrower than the plots' minimum (both side panels open in a small window):
        # scroll sideways rather than cut the rightmost map off.
        self.plots_scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAsNeeded)
        self.plots_area.addWidget(self.plots_scroll)
        self.plots.hoverMessage.connect(self.hover_label.setText)

    # -- session -> widgets -----------------------------------------------------------
    @property
    def session(self):
        return self.controller.session

    def _on_session_event(self, event) -> None:
        from ..document.events import (ModelChanged, OrderChanged, PositionsChanged,
                                       SelectionChanged, TextChanged)
        self._document_event(event)
        if isinstance(event, OrderChanged):
            self.strip.set_order(event.after)
        elif isinstance(event, SelectionChanged):
            if self.plots is not None:
                self.plots.set_selection(event.selection)
            return
        elif isinstance(event, PositionsChanged):
            self.model_panel.set_positions(event.positions)
        elif isinstance(event, (TextChanged, ModelChanged)):
            s = self.session
            if isinstance(event, ModelChanged):
                self._record_drag(ends=True)  # the strip forgets a drag under way
                if event.tokens_changed or not history_fits(self.undo_stack,
                                                            s.backend.max_positions):
                    self.undo_stack.clear()    # its steps belong to the previous tokens,
                                               # or bring back a text the model cannot hold
                self._described = None
                self.model_panel.show_spec(event.spec)
            else:
                self._forget_drag()           # (apply_text recorded the drag before)
            if self.text_edit.text() != s.text:
                self.text_edit.setText(s.text)
            self._show_text_error("")
            self._refresh_tokens()
        self._change_went_through()
        self._update_actions()

    def _change_went_through(self) -> None:
        """An edit was made: an error about an earlier, refused one no longer applies
        (a load's message stays until the load ends)."""
        if not self._applying:
            self._notice = ""             # what an opened document said no longer applies
        if self.state_label.styleSheet() == ERROR_STYLE:
            self._state(self._settled_state)
        if self.model_panel is not None and not self.controller.loading:
            self.model_panel.clear_error()

    def _refresh_tokens(self) -> None:
        s = self.session
        self.strip.set_tokens(s.seq.tokens, s.seq.pinned, s.order, s.movable_slots())
        self.setWindowTitle(f"{self.document_name()}[*] — posviz — {s.backend.name} — "
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

    @Slot(str)
    def _on_evaluation_failed(self, message: str) -> None:
        self._computing.stop()
        self._state(message, error=True)

    @Slot(object, float)
    def _on_evaluated(self, shown, ms: float) -> None:
        self._computing.stop()
        s, ev = self.session, shown.evaluation
        layers, heads = ev.reference.n_layers, ev.reference.n_heads
        before = self.plots.shown() if self.plots is not None else None
        done = ("mosaic coloured" if before is not None and before.evaluation is ev
                else "computed")                  # a new look of the same evaluation
        self._settled_state = (f"{len(ev.order)} tokens · {layers} layers × {heads} "
                               f"heads · {done} in {ms:.0f} ms")
        self._state(self._notice or self._settled_state, error=bool(self._notice))
        if s is None or self.model_panel is None:
            return                    # the panels are not built yet: _on_ready shows it
        if ev.seq == s.seq:
            self.strip.set_change(shown.views.token_bars)
        if self.model_panel is not None and ev.reference is not self._described:
            self._described = ev.reference        # once per reference run, not per reorder
            self.model_panel.describe(shown)
        if self.plots is not None:
            self.plots.show(shown)
            self._menus_for_copy()
        s.select(s.selection.clamped(ev.reference.n_layers, ev.reference.n_heads))

    # -- models -----------------------------------------------------------------------
    def _on_model_loading(self, label: str) -> None:
        if self.model_panel is not None:
            self.model_panel.loading_started(label)
        self._state(f"Loading {label}…")

    def _on_model_loaded(self, spec) -> None:
        self.model_panel.model_loaded(spec)
        if self.state_label.text().startswith("Loading "):
            self._state(f"Loaded {spec.name}; computing…")

    def _on_model_failed(self, message: str) -> None:
        self.model_panel.model_failed(message)     # and shows the model still running
        self._state(message, error=True)

    def _short(self) -> bool:
        """A short window (a projector, a small laptop) gives the plots the hint's line;
        the hint stays in the strip's tooltip."""
        return self.height() < SHORT_WINDOW

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.hint.setVisible(not self.text_error.text() and not self._short())
        width = event.size().width()
        if (0 < width < event.oldSize().width() and self.model_dock.isVisible()
                and not self.model_dock.isFloating()
                and self.model_dock.width() > DOCK_MAX_SHARE * width):
            # a window made smaller (onto a projector) shrinks the panel, not the plots
            self.resizeDocks([self.model_dock], [dock_width(width)], Qt.Horizontal)

    # -- file and help ----------------------------------------------------------------
    # (the export dialog imports the plots, hence pyqtgraph: not before the first paint)
    def export_figures(self) -> None:
        from .export_dialog import export_figures
        export_figures(self)

    def export_to(self, folder: str, formats, width, csv: bool) -> list:
        from .export_dialog import export_to
        return export_to(self, folder, formats, width, csv)

    def closeEvent(self, event) -> None:
        if self.file_path is not None and not self.may_discard():
            event.ignore()                # a modified file: Cancel keeps the window
            return
        self.autosave()                   # the last session, restored at the next start
        self.save_splitters()
        s = self.settings
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/state", self.saveState())
        if self.session is not None:
            s.setValue("text", self.session.text)
            s.setValue("positions/mode", self.session.positions.mode)
            s.setValue("positions/offset", self.session.positions.offset)
            if self.session.spec.is_builtin:
                s.setValue("model/config", json.dumps(self.session.spec.config.to_dict()))
        s.sync()
        self.controller.shutdown()
        super().closeEvent(event)
