"""The main window: text and token strip on top, plots in the middle, model on the side.

The window is built in two steps so it appears at once: ``MainWindow()`` needs only Qt
(the strip, toolbar, menus and status line); ``controller.ready`` arrives once the core
has been imported on a worker, and then the model panel and the plots are added.
"""
from __future__ import annotations

import json
from pathlib import Path

from PySide6.QtCore import QByteArray, QEvent, QSettings, QSize, Qt, QTimer, Slot
from PySide6.QtGui import QAction, QIcon, QKeySequence, QUndoStack
from PySide6.QtWidgets import (QButtonGroup, QCheckBox, QDialog, QDialogButtonBox, QDockWidget,
                               QFileDialog, QFormLayout, QFrame, QHBoxLayout, QLabel,
                               QLineEdit, QMainWindow, QMessageBox, QPushButton, QRadioButton,
                               QScrollArea, QSpinBox, QStackedWidget, QToolButton, QVBoxLayout,
                               QWidget)

from .collector import collect_in_gui_thread, freeze_start_up
from .commands import OrderCommand, TextCommand
from .controller import Controller
from .token_strip import TokenStrip

RESOURCES = Path(__file__).resolve().parents[1] / "resources"
ERROR_STYLE = "color: #c62828;"
TEXT_DEBOUNCE_MS = 700
COMPUTING_AFTER_MS = 150          # an evaluation slower than this says "computing…"
STRIP_MAX_HEIGHT = 143            # about three rows of chips; more rows scroll,
                                  # so a long text leaves the plots room


def icon(name: str) -> QIcon:
    path = RESOURCES / "icons" / f"{name}.svg"
    return QIcon(str(path)) if path.exists() else QIcon()


def example_sentences() -> list[str]:
    path = RESOURCES / "sentences.txt"
    if not path.exists():
        return []
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")]


def change_bars(change, floor: float) -> list[float]:
    """(n,) relative changes -> bar lengths in 0..1 on a log scale: 0 at the noise floor
    (rounding), 1 at a change as large as the value itself."""
    import numpy as np
    change = np.nan_to_num(np.asarray(change, dtype=np.float64), nan=0.0)
    bars = np.log10(np.maximum(change, floor) / floor) / np.log10(1.0 / floor)
    return np.clip(bars, 0.0, 1.0).tolist()


def default_size(available=None) -> QSize:
    """1440 x 900, or a little less than the screen when the screen is smaller."""
    width, height = 1440, 900
    if available is not None and available.width() > 0:
        width = min(width, int(available.width() * 0.96))
        height = min(height, int(available.height() * 0.94))
    return QSize(width, height)


class MainWindow(QMainWindow):
    def __init__(self, settings: QSettings | None = None):
        super().__init__()
        collect_in_gui_thread()      # never free Qt objects on the compute worker
        self.settings = settings or QSettings("posviz", "posviz")
        self.setWindowTitle("posviz")
        self.setWindowIcon(icon("posviz"))
        self.controller = Controller(self)
        self.undo_stack = QUndoStack(self)
        self.plots = None                 # the PlotsPanel, once the core is loaded
        self.model_panel = None
        self._described = None            # the trace the model panel describes
        self._real_model = False          # a pretrained model is in use
        self._build_editor()
        self._build_actions()
        self._build_status()
        self.resize(default_size(self.screen().availableGeometry() if self.screen() else None))
        geometry = self.settings.value("window/geometry")
        if isinstance(geometry, QByteArray):
            self.restoreGeometry(geometry)
        c = self.controller
        c.ready.connect(self._on_ready)
        c.sessionChanged.connect(self._on_session_changed)
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
        c.modelLoaded.connect(self._on_model_loaded)
        c.modelFailed.connect(self._on_model_failed)

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
        self.text_edit.installEventFilter(self)
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
        self.strip.hoverMessage.connect(self._hover)
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
        self.model_dock.setFeatures(QDockWidget.DockWidgetMovable |
                                    QDockWidget.DockWidgetFloatable)
        loading = QLabel("Loading model…", alignment=Qt.AlignTop | Qt.AlignHCenter)
        loading.setMinimumWidth(260)
        self.model_dock.setWidget(loading)
        self.addDockWidget(Qt.RightDockWidgetArea, self.model_dock)

    def eventFilter(self, watched, event) -> bool:
        """Ctrl+Z in the text field undoes the last step (text or reorder) once the
        field holds the session's text; while typing, it undoes the typing."""
        if (watched is self.text_edit and event.type() == QEvent.ShortcutOverride
                and (event.matches(QKeySequence.Undo) or event.matches(QKeySequence.Redo)
                     or event.keyCombination().toCombined() ==
                     QKeySequence("Ctrl+Shift+Z")[0].toCombined())
                and self.session is not None and self.text_edit.text() == self.session.text):
            return True            # not taken by the field: the window's action runs
        return super().eventFilter(watched, event)

    def _action(self, text: str, slot, shortcut=None, tip: str = "", name: str = "") -> QAction:
        action = QAction(icon(name) if name else QIcon(), text, self)
        if shortcut:
            action.setShortcuts(shortcut if isinstance(shortcut, list) else [shortcut])
            tip = f"{tip} ({QKeySequence(action.shortcut()).toString(QKeySequence.NativeText)})"
        action.setToolTip(tip or text)
        action.setStatusTip(tip or text)
        action.triggered.connect(slot)
        return action

    def _build_actions(self) -> None:
        self.undo_action = self.undo_stack.createUndoAction(self, "&Undo")
        self.undo_action.setShortcut(QKeySequence.Undo)
        self.undo_action.setIcon(icon("undo"))
        self.redo_action = self.undo_stack.createRedoAction(self, "&Redo")
        self.redo_action.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
        self.redo_action.setIcon(icon("redo"))
        a = self._action
        self.shuffle_action = a("Shuffle", lambda: self.reorder("Shuffle", "shuffle"),
                                QKeySequence("Ctrl+R"), "Put the movable tokens in a random "
                                "order", "shuffle")
        self.reverse_action = a("Reverse", lambda: self.reorder("Reverse", "reverse"),
                                QKeySequence("Ctrl+Shift+R"), "Reverse the order of the "
                                "movable tokens", "reverse")
        self.rotate_action = a("Rotate", lambda: self.reorder("Rotate", "rotate"),
                               QKeySequence("Ctrl+T"), "Move the last movable token to the "
                               "front, shifting the others right by one", "rotate")
        self.swap_action = a("Swap", self.swap_selected, QKeySequence("Ctrl+Shift+X"),
                             "Swap the two selected chips (Ctrl+click to select a second)",
                             "swap")
        self.reset_action = a("Original order", lambda: self.reorder("Reset", "reset"),
                              QKeySequence("Ctrl+0"), "Put every token back in its original "
                              "place", "reset")
        self.left_action = a("Move chip left", lambda: self.move_selected(-1),
                             QKeySequence("Alt+Left"), "Move the selected chip one slot left")
        self.right_action = a("Move chip right", lambda: self.move_selected(1),
                              QKeySequence("Alt+Right"), "Move the selected chip one slot right")
        self.export_action = a("&Export figures…", self.export_figures, QKeySequence("Ctrl+E"),
                               "Save every plot as PNG/SVG images (and CSV numbers)", "export")
        quit_action = a("&Quit", self.close, QKeySequence.Quit, "Quit posviz")
        quit_action.setShortcut(QKeySequence("Ctrl+Q"))
        reorders = [self.shuffle_action, self.reverse_action, self.rotate_action,
                    self.swap_action, self.reset_action]

        menu = self.menuBar().addMenu("&File")
        menu.addAction(self.export_action)
        menu.addSeparator()
        menu.addAction(quit_action)
        menu = self.menuBar().addMenu("&Edit")
        menu.addActions([self.undo_action, self.redo_action])
        menu.addSeparator()
        menu.addActions(reorders)
        menu.addSeparator()
        menu.addActions([self.left_action, self.right_action])
        self.examples_menu = self.menuBar().addMenu("E&xamples")
        for sentence in example_sentences():
            self.examples_menu.addAction(sentence, lambda s=sentence: self.use_example(s))
        self.view_menu = self.menuBar().addMenu("&View")
        self.view_menu.addAction(self.model_dock.toggleViewAction())
        menu = self.menuBar().addMenu("&Help")
        menu.addAction(a("&About posviz", self.about, tip="Version and what posviz shows"))

        bar = self.addToolBar("Order")
        bar.setObjectName("order_toolbar")
        bar.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
        bar.setMovable(False)
        bar.addActions(reorders)
        bar.addSeparator()
        bar.addActions([self.undo_action, self.redo_action, self.export_action])
        for action in (self.undo_action, self.redo_action):
            # the undo text names the step ("Undo Drag “cat”"): keep it to menus and tips
            bar.widgetForAction(action).setToolButtonStyle(Qt.ToolButtonIconOnly)
        for action in reorders + [self.left_action, self.right_action, self.export_action]:
            self.addAction(action)
            action.setEnabled(False)

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

    def _hover(self, text: str) -> None:
        self.hover_label.setText(text)

    # -- start-up ---------------------------------------------------------------------
    def start(self) -> None:
        """Import the core and compute (call once the window is on screen)."""
        s = self.settings
        try:
            config = json.loads(s.value("model/config", "{}") or "{}")
        except (TypeError, ValueError):
            config = {}
        positions = (str(s.value("positions/mode", "slot")), int(s.value("positions/offset", 0)))
        self.controller.start(str(s.value("text", "")), config, positions)

    @Slot()
    def _on_ready(self) -> None:
        from ..core.backend import BuiltinBackend
        from .model_panel import ModelPanel

        session = self.controller.session
        config = session.backend.config if isinstance(session.backend, BuiltinBackend) else None
        self.model_panel = ModelPanel(config, session.positions) if config else ModelPanel()
        panel = self.model_panel
        panel.configChanged.connect(self.controller.use_builtin)
        panel.builtinRequested.connect(self._builtin_requested)
        panel.modelRequested.connect(self.controller.load_model)
        panel.cancelRequested.connect(self.controller.cancel_load)
        panel.positionsChanged.connect(self._positions_edited)
        scroll = QScrollArea()
        scroll.setWidget(panel)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QFrame.NoFrame)
        scroll.setMinimumWidth(panel.sizeHint().width() + 20)
        self.model_dock.setWidget(scroll)
        state = self.settings.value("window/state")
        if isinstance(state, QByteArray):
            self.restoreState(state)
        try:
            from .plots import PlotsPanel
            self.plots = PlotsPanel()
        except ImportError as error:
            self.placeholder.setText(f"Plots are not available: {error}")
        else:
            self.plots_area.addWidget(self.plots)
            self.plots_area.setCurrentWidget(self.plots)
            self.plots.hoverMessage.connect(self._hover)
        self.text_edit.setText(session.text)
        self._refresh_tokens()
        self._update_title()
        freeze_start_up()            # what exists now lives as long as the window

    # -- session -> widgets -----------------------------------------------------------
    @property
    def session(self):
        return self.controller.session

    @Slot(str)
    def _on_session_changed(self, what: str) -> None:
        if what == "order":
            self.strip.set_order(self.session.order)
        elif what in ("text", "model"):
            if what == "model" and (self.strip.tokens != list(self.session.seq.tokens) or
                                    self.strip.pinned != list(self.session.seq.pinned)):
                self.undo_stack.clear()    # its steps belong to the previous tokens
            if self.text_edit.text() != self.session.text:
                self.text_edit.setText(self.session.text)
            self._show_text_error("")
            self._refresh_tokens()
            self._update_title()
        elif what == "positions" and self.model_panel is not None:
            self.model_panel.set_positions(self.session.positions)
        self._update_actions()

    def _refresh_tokens(self) -> None:
        s = self.session
        self.strip.set_tokens(s.seq.tokens, s.seq.pinned, s.order)
        self._update_actions()

    def _update_title(self) -> None:
        name = self.session.backend.name
        self.setWindowTitle(f"posviz — {name} — {len(self.session.seq)} tokens")

    def _update_actions(self) -> None:
        ready = self.session is not None
        for action in (self.shuffle_action, self.reverse_action, self.rotate_action,
                       self.reset_action, self.export_action):
            action.setEnabled(ready)
        self.swap_action.setEnabled(ready and len(self.strip.selected) == 2)
        self.left_action.setEnabled(ready and self.strip.movable_step(-1) is not None)
        self.right_action.setEnabled(ready and self.strip.movable_step(1) is not None)

    @Slot(str)
    def _on_evaluation_failed(self, message: str) -> None:
        self._computing.stop()
        self._state(message, error=True)

    @Slot(object, float)
    def _on_evaluated(self, ev, ms: float) -> None:
        self._computing.stop()
        layers, heads = ev.permuted.n_layers, ev.permuted.n_heads
        self._state(f"{len(ev.order)} tokens · {layers} layers × {heads} heads · "
                    f"computed in {ms:.0f} ms")
        if ev.seq == self.session.seq:
            self.strip.set_change(change_bars(ev.comparison.token_change[-1],
                                              ev.comparison.floor))
        if (self.model_panel is not None and self._real_model
                and ev.reference is not self._described):
            self._described = ev.reference        # once per reference run, not per reorder
            self.model_panel.describe(ev.reference)
        if self.plots is not None:
            self.plots.show_evaluation(ev)

    # -- edits: widgets -> session ----------------------------------------------------
    def apply_text(self, truncate: bool = False) -> None:
        """Turn the text field into tokens (one undo step); bad text is told inline."""
        from ..core.errors import PosvizInputError

        self._text_timer.stop()
        s = self.session
        if s is None:
            return
        text = self.text_edit.text()
        if text == s.text and not truncate:
            self._show_text_error("")
            return
        before_text, before_order = s.text, s.order.copy()
        try:
            s.set_text(text, truncate=truncate)
        except PosvizInputError as error:
            self._show_text_error(str(error), can_truncate=self._too_long(text))
            return
        self.undo_stack.push(TextCommand(s, before_text, before_order, text))

    def _too_long(self, text: str) -> bool:
        room = self.session.room()
        try:
            return room is not None and len(self.session.backend.tokenize(text)) > room
        except ValueError:
            return False

    def _show_text_error(self, message: str, can_truncate: bool = False) -> None:
        self.text_error.setText(message)
        self.text_error.setVisible(bool(message))
        if hasattr(self, "hint"):
            self.hint.setVisible(not message)
        self.truncate_button.setVisible(can_truncate)
        self.text_edit.setStyleSheet("QLineEdit { border: 1px solid #c62828; }"
                                     if message else "")

    def use_example(self, sentence: str) -> None:
        self.text_edit.setText(sentence)
        self.apply_text()

    def _live_move(self, src: int, dst: int) -> None:
        from ..core.errors import PosvizInputError
        try:
            self.session.move(src, dst)
        except PosvizInputError as error:
            self._state(str(error), error=True)

    def _drag_finished(self, before) -> None:
        token = self.session.tokens[self.strip.selected[0]] if self.strip.selected else "token"
        self.undo_stack.push(OrderCommand(self.session, before, self.session.order,
                                          f"Drag “{token}”"))

    def _drag_cancelled(self, before) -> None:
        self.session.set_order(before)

    def reorder(self, label: str, method: str) -> None:
        """Shuffle / reverse / rotate / reset as one undo step."""
        s = self.session
        before = s.order.copy()
        getattr(s, method)()
        if list(before) != list(s.order):
            self.undo_stack.push(OrderCommand(s, before, s.order, label))

    def swap_selected(self) -> None:
        slots = self.strip.selected_slots()
        if len(slots) != 2:
            return
        from ..core.errors import PosvizInputError
        before = self.session.order.copy()
        try:
            self.session.swap(*slots)
        except PosvizInputError as error:
            self._state(str(error), error=True)
            return
        self.undo_stack.push(OrderCommand(self.session, before, self.session.order, "Swap"))

    def move_selected(self, step: int) -> None:
        move = self.strip.movable_step(step)
        if move is None:
            return
        before = self.session.order.copy()
        self.session.move(*move)
        self.undo_stack.push(OrderCommand(self.session, before, self.session.order,
                                          "Move chip"))

    def _positions_edited(self, positions) -> None:
        from ..core.errors import PosvizInputError
        try:
            self.session.set_positions(positions)
        except PosvizInputError as error:
            self.model_panel.show_positions_error(str(error))

    def _builtin_requested(self) -> None:
        config = self.model_panel.config()
        problems = config.problems()
        if problems:
            self.model_panel.model_failed(next(iter(problems.values())))
            return
        self.controller.use_builtin(config)

    # -- models -----------------------------------------------------------------------
    def _on_model_loading(self, label: str) -> None:
        if self.model_panel is not None:
            self.model_panel.loading_started(label)
        self._state(f"Loading {label}…")

    def _on_model_loaded(self, name: str, real: bool) -> None:
        self._real_model, self._described = real, None
        self.model_panel.model_loaded(real=real, name=name)

    def _on_model_failed(self, message: str) -> None:
        self.model_panel.model_failed(message)
        self._state(message, error=True)

    # -- file and help ----------------------------------------------------------------
    def export_figures(self) -> None:
        if self.plots is None or self.controller.last_evaluation is None:
            self._state("Nothing to export yet", error=True)
            return
        dialog = ExportDialog(self, str(self.settings.value("export/folder",
                                                            str(Path.home() / "posviz"))))
        if dialog.exec() != QDialog.Accepted:
            return
        self.settings.setValue("export/folder", dialog.folder())
        self.export_to(dialog.folder(), dialog.formats(), dialog.width(self.plots),
                       dialog.csv.isChecked())

    def export_to(self, folder: str, formats, width, csv: bool) -> list:
        """Write the figures; tell what was written, or why not, without a traceback."""
        try:
            Path(folder).mkdir(parents=True, exist_ok=True)
            written = self.plots.export_all(folder, formats=tuple(formats), width=width,
                                            csv=csv)
        except (OSError, ValueError) as error:
            reason = getattr(error, "strerror", None) or str(error)
            QMessageBox.warning(self, "Export failed", f"Could not export to {folder}: "
                                                       f"{reason}")
            self._state(f"Export failed: {reason}", error=True)
            return []
        self._state(f"Exported {len(written)} files to {folder}")
        return written

    def about(self) -> None:
        from .. import __version__
        QMessageBox.about(self, "About posviz",
                          f"<h3>posviz {__version__}</h3><p>See how positional encodings "
                          "break the permutation symmetry of self-attention, layer by "
                          "layer.</p><p>Drag the token chips into a new order: the model is "
                          "run again and the plots show which outputs changed and which "
                          "stayed invariant or equivariant.</p>")

    def closeEvent(self, event) -> None:
        s = self.settings
        s.setValue("window/geometry", self.saveGeometry())
        s.setValue("window/state", self.saveState())
        if self.session is not None:
            s.setValue("text", self.session.text)
            s.setValue("positions/mode", self.session.positions.mode)
            s.setValue("positions/offset", self.session.positions.offset)
            config = getattr(self.session.backend, "config", None)
            if config is not None and hasattr(config, "to_dict"):
                s.setValue("model/config", json.dumps(config.to_dict()))
        s.sync()
        self.controller.shutdown()
        super().closeEvent(event)


class ExportDialog(QDialog):
    """Folder, formats, size and CSV for File > Export figures."""

    def __init__(self, parent: QWidget, folder: str):
        super().__init__(parent)
        self.setWindowTitle("Export figures")
        form = QFormLayout(self)
        row = QHBoxLayout()
        self.folder_edit = QLineEdit(folder)
        self.folder_edit.setMinimumWidth(360)         # room for a whole path
        self.folder_edit.setToolTip("Folder to write into (created if missing); each figure "
                                    "becomes <name>.png / .svg / .csv")
        browse = QToolButton(text="…")
        browse.setToolTip("Choose the folder")
        browse.clicked.connect(self._browse)
        row.addWidget(self.folder_edit, 1)
        row.addWidget(browse)
        form.addRow("Folder", row)
        formats = QHBoxLayout()
        self.png, self.svg = QCheckBox("PNG", checked=True), QCheckBox("SVG", checked=True)
        formats.addWidget(self.png)
        formats.addWidget(self.svg)
        formats.addStretch(1)
        form.addRow("Formats", formats)
        size = QVBoxLayout()
        self.as_shown = QRadioButton("as shown on screen", checked=True)
        self.by_width = QRadioButton("width in pixels")
        self.by_dpi = QRadioButton("dots per inch")
        self.width_spin = QSpinBox(minimum=100, maximum=20000, value=1600, suffix=" px")
        self.dpi_spin = QSpinBox(minimum=50, maximum=1200, value=300, suffix=" dpi")
        group = QButtonGroup(self)
        for button, spin in ((self.as_shown, None), (self.by_width, self.width_spin),
                             (self.by_dpi, self.dpi_spin)):
            group.addButton(button)
            line = QHBoxLayout()
            line.addWidget(button)
            if spin is not None:
                line.addWidget(spin)
            line.addStretch(1)
            size.addLayout(line)
        self.as_shown.setToolTip("Each figure at the size it has in the window")
        self.width_spin.setToolTip("Every figure scaled to this width; text and lines scale too")
        self.dpi_spin.setToolTip("Scale the on-screen size to this resolution (e.g. 300 for "
                                 "print)")
        self.svg.setToolTip("Vector images for papers and slides")
        self.png.setToolTip("Bitmap images")
        form.addRow("Size", size)
        self.csv = QCheckBox("also write the numbers as CSV", checked=True)
        self.csv.setToolTip("The values each figure shows, one CSV file per figure")
        form.addRow("", self.csv)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export to", self.folder_edit.text())
        if folder:
            self.folder_edit.setText(folder)

    def folder(self) -> str:
        return self.folder_edit.text().strip()

    def formats(self) -> list[str]:
        return [name for name, box in (("png", self.png), ("svg", self.svg)) if box.isChecked()]

    def width(self, panel: QWidget) -> int | None:
        """Pixels wide, or None for the on-screen size; DPI scales the screen size."""
        if self.by_width.isChecked():
            return self.width_spin.value()
        if self.by_dpi.isChecked():
            widths = [w.width() for w in panel.figures().values()] or [panel.width()]
            return round(max(widths) * self.dpi_spin.value() / panel.logicalDpiX())
        return None

    def accept(self) -> None:
        if not self.folder():
            QMessageBox.warning(self, "Export figures", "Choose a folder to export to.")
            return
        if not self.formats() and not self.csv.isChecked():
            QMessageBox.warning(self, "Export figures", "Choose at least one format.")
            return
        super().accept()
