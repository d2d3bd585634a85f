"""The model panel's dock beside the plots: a placeholder until the core is in, then the
panel, wired to the controller, the edits and the files; a fifth of the window wide at
first, and narrowed (not the plots) when the window is made smaller."""
from __future__ import annotations

from PySide6.QtCore import QByteArray, Qt
from PySide6.QtWidgets import QDockWidget, QFrame, QLabel, QScrollArea

DOCK_MIN_WIDTH = 200              # the model panel's narrowest: its rows wrap, then scroll
DOCK_MAX_SHARE = 0.25             # of a window being made narrower


def dock_width(window_width: int) -> int:
    """The model panel's first width: a fifth of the window, within 220-330 pixels, so
    at 1024 pixels the plots keep almost 800."""
    return max(220, min(330, round(window_width * 0.2)))


def build_dock(window) -> QDockWidget:
    """The dock on the window's right, saying the model loads until the panel comes."""
    dock = QDockWidget("Model", window)
    dock.setObjectName("model_dock")
    dock.setFeatures(QDockWidget.DockWidgetClosable | QDockWidget.DockWidgetMovable |
                     QDockWidget.DockWidgetFloatable)
    loading = QLabel("Loading model…", alignment=Qt.AlignTop | Qt.AlignHCenter)
    loading.setMinimumWidth(DOCK_MIN_WIDTH)
    loading.setWordWrap(True)
    loading.setTextInteractionFlags(Qt.TextSelectableByMouse)
    dock.setWidget(loading)
    window.addDockWidget(Qt.RightDockWidgetArea, dock)
    window.controller.evaluationFailed.connect(
        lambda text: window.session is None and start_failed(loading, text))
    return dock


def start_failed(loading: QLabel, text: str) -> None:
    """The start built no model (``text``: why): the dock says so instead of "Loading
    model…", which it said for good after such a start."""
    loading.setAlignment(Qt.AlignTop | Qt.AlignLeft)
    loading.setStyleSheet("color: #b00020; padding: 6px;")
    loading.setText(f"No model is loaded: {text}")


def attach_panel(window, session):
    """The model panel of ``session`` in the window's dock, its requests sent to the
    controller, the edits and the files; the dock as the window last had it."""
    from .model_panel.panel import ModelPanel
    panel = ModelPanel(lambda: session.spec, session.positions)
    panel.modelRequested.connect(window.controller.load)
    panel.cancelRequested.connect(window.controller.cancel_load)
    panel.cancelRequested.connect(window.status.settle)
    panel.cancelRequested.connect(window.files.load_cancelled)
    panel.positionsChanged.connect(window.edits.positions_edited)
    window.edits.positionsRefused.connect(panel.show_positions_error)
    panel.downloadAccepted.connect(window.controller.load_confirmed)
    window.files.opened.connect(lambda _: panel.load.clear_error())   # the status says it
    window.controller.evaluated.connect(lambda *_: panel.load.shown())
    window.controller.downloadAsked.connect(panel.ask_download)
    panel.set_offline(not window.controller.online)
    panel.load.echo = window.status.load_step        # "Loading …" stood there 2.9 s
    scroll = QScrollArea()
    scroll.setWidget(panel)
    scroll.setWidgetResizable(True)
    scroll.setFrameShape(QFrame.NoFrame)
    scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarAsNeeded)
    scroll.setMinimumWidth(DOCK_MIN_WIDTH)
    window.model_dock.setWidget(scroll)
    state = window.settings.value("window/state")
    restored = isinstance(state, QByteArray) and window.restoreState(state)
    dock = window.model_dock
    # a state saved in a narrower window (220 px at 1024) kept the panel that narrow at
    # 1366, its facts wrapped word by word and the model's name cut; one saved at 1920
    # (330 px) kept a third of a 1024 window, the plots squeezed
    if dock.isFloating() and window.screen() is not None:     # left on a larger screen
        from .remembered import fit_on_screen
        fit_on_screen(dock, window.screen().availableGeometry())
    docked = dock.isVisible() and not dock.isFloating()
    if not restored or (docked and not dock_width(window.width()) <= dock.width()
                        <= max(DOCK_MAX_SHARE * window.width(), dock_width(window.width()))):
        window.resizeDocks([dock], [dock_width(window.width())], Qt.Horizontal)
    return panel


def narrow_dock(window, event) -> None:
    """A window made smaller (onto a projector) shrinks the panel, not the plots."""
    width, dock = event.size().width(), window.model_dock
    if (0 < width < event.oldSize().width() and dock.isVisible() and not dock.isFloating()
            and dock.width() > DOCK_MAX_SHARE * width):
        window.resizeDocks([dock], [dock_width(width)], Qt.Horizontal)
