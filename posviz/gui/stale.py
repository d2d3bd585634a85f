"""A veil over the plots while a slow evaluation runs: the figures dimmed, and a line
saying which order they still show, until the new result arrives. At start, while the
session's own model loads, it says the plots are the built-in model's."""
from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from posviz.models.trace import and_joined

STALE_AFTER_MS = 400        # a quicker evaluation (a drag on a small model) never veils
DIM = QtGui.QColor(255, 255, 255, 150)
ORDER_CHARS = 90            # the order shown, elided past this many characters
FLAGS = QtCore.Qt.AlignmentFlag.AlignCenter | QtCore.Qt.TextFlag.TextWordWrap


def order_text(shown) -> str:
    """The tokens of a Shown in the order it was computed, e.g. "warm was it the", past
    ORDER_CHARS its first whole tokens and how many more ("w0 w1 … w24 and 676 more
    tokens": a long text's order read as a cut note, "w24…")."""
    ev = shown.evaluation
    tokens = [ev.seq.tokens[i] for i in ev.order]
    text = " ".join(tokens)
    if len(text) <= ORDER_CHARS:
        return text
    shown_tokens, length = [], 0
    for token in tokens:
        if length + len(token) + 1 > ORDER_CHARS and shown_tokens:
            break
        shown_tokens.append(token)
        length += len(token) + 1
    more = len(tokens) - len(shown_tokens)
    return f"{' '.join(shown_tokens)} and {more} more token{'s' * (more != 1)}"


def inputs(session) -> tuple:
    """What a session's evaluation is computed from: (text, spec, positions, order)."""
    return session.text, session.spec, session.positions, tuple(session.order)


def changes(before: tuple, session) -> list[str]:
    """What the session changed since ``before`` (inputs): the model's options by name
    (ModelSpec.changes_from), "text", "position ids", else "order" (a new text or model
    starts a new order anyway)."""
    text, spec, positions, order = before
    names = session.spec.changes_from(spec) + ["text"] * (session.text != text) \
        + ["position ids"] * (session.positions != positions)
    return names or ["order"] * (tuple(session.order) != order)


class StaleVeil(QtWidgets.QWidget):
    """Covers the pages of ``tabs`` (not its tab bar, nor the page ``spared``, which
    shows its own results) while the figures show an order that is no longer current."""

    def __init__(self, tabs: QtWidgets.QTabWidget, spared: QtWidgets.QWidget | None = None):
        super().__init__(tabs)
        self.tabs, self.spared = tabs, spared
        self.setAttribute(QtCore.Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.shown_order = ""           # the order the figures show
        self.shown_inputs = None        # and what they were computed from (inputs)
        self.session = lambda: None     # the session whose changes the label names
        self.text = ""
        self.stale = False              # a newer order is being computed (or failed)
        self.awaited = ""               # the session's model loading at start: its name
        self.loading = ""               # a model loading now (chosen, or a file's): its name
        self.on_its_way = False         # an evaluation was asked for and has not arrived
        self._names: list[str] = []     # what the veiled computation changed ("order")
        self.timer = QtCore.QTimer(self, singleShot=True, interval=STALE_AFTER_MS,
                                   timeout=self._veil)
        tabs.installEventFilter(self)
        tabs.currentChanged.connect(self._place)
        self.hide()

    # -- what the controller says ---------------------------------------------------
    def follow(self, controller) -> None:
        """Listen to ``controller`` (gui.controller.Controller): evaluations and loads."""
        self.session = lambda: controller.session
        controller.computing.connect(self.computing)
        controller.evaluated.connect(self.arrived)
        controller.evaluationFailed.connect(self.failed)
        controller.modelLoading.connect(self.model_loading)
        controller.modelLoaded.connect(self.model_loaded)
        controller.loadCancelled.connect(lambda: self.model_loading(""))
        # a failed load ends it unless another follows (a file's model: the built-in one)
        controller.modelFailed.connect(lambda _: controller.loading or self.model_loading(""))
    def computing(self) -> None:
        """A new evaluation was asked for: veil the figures if it takes a while."""
        self.on_its_way = True
        if not self.stale:
            self.timer.start()
        elif not (self.awaited or self.loading):
            self._veil()                # another change while veiled: named too

    def awaiting(self, name: str) -> None:
        """The session started with waits for its model ``name``: the figures are the
        built-in model's until it has run. "" once it is in (or given up)."""
        if name:
            self.timer.stop()
            self.awaited, self.stale = name, True
            self.text = (f"Loading {name}… these plots are the built-in model's, "
                         f"not this session's")
        elif self.awaited:
            self.awaited, self.stale = "", self.on_its_way
            self.text = "Computing this session… these plots are still the built-in model's"
        self._place()

    def model_loading(self, name: str) -> None:
        """Model ``name`` loads: if it takes a while, the figures are veiled as the
        running model's until it has run. "" when the load ends with no new model
        (failed or cancelled)."""
        self.loading = name
        if name:
            QtCore.QTimer.singleShot(STALE_AFTER_MS, self.timer,    # (none once the
                                     lambda: self._veil_load(name))  # window is gone)
        else:
            self.stale = bool(self.awaited)
            if self.on_its_way:                 # the running model's own new result
                self.timer.start()
            self._place()

    def _veil_load(self, name: str) -> None:
        if self.loading != name or self.awaited:   # loaded, or said at start already
            return
        self.timer.stop()
        self.stale = True
        self.text = (f"Loading {name}… these plots still show the model that ran before "
                     f"it{self._others()}" + (f": {self.shown_order}" if self.shown_order
                                               else ""))
        self._place()

    def model_loaded(self, spec) -> None:
        """The model loaded: a veiled figure stays veiled until its first result."""
        if self.loading and self.stale and not self.awaited:
            if "model" in self._changes():      # another model, named
                self.text = (f"Computing with {spec.name}… these plots still show the "
                             f"model that ran before it{self._others()}")
                self._place()
            else:                               # the built-in one's options, by name
                self._veil()
        self.loading = ""

    def _changes(self) -> list[str]:
        """What changed since the figures' result was computed (changes)."""
        session = self.session()
        if session is None or self.shown_inputs is None:
            return []
        return changes(self.shown_inputs, session)

    def _others(self) -> str:
        """Besides the model: ", and the previous text" (what else changed), or ""."""
        others = [name for name in self._changes() if name in ("text", "position ids")]
        return f", and the previous {and_joined(others)}" if others else ""

    def arrived(self, shown, *_) -> None:
        """The figures now show ``shown``: lift the veil (unless they are the built-in
        model's while the session's own loads)."""
        self.timer.stop()
        self.on_its_way = False
        self.shown_order = order_text(shown)
        session = self.session()
        self.shown_inputs = inputs(session) if session is not None else None
        self.stale = bool(self.awaited) or (self.stale and bool(self.loading))
        self._place()

    def failed(self, message: str) -> None:
        """The new order could not be computed: the figures keep the previous one."""
        self.timer.stop()
        self.on_its_way = False
        if self.shown_order and not self.awaited:
            self.stale = True
            self.text = (f"Not computed ({message}).\nThese plots still show the "
                         f"previous order: {self.shown_order}")
            self._place()

    def _veil(self) -> None:
        if not self.shown_order:
            return                      # nothing drawn yet: no figure to mark
        self.stale = True
        self._names = self._changes() or ["order"]
        self._computing("")

    def how_far(self, far: str) -> None:
        """While veiled for a new result: how far its forward has got (StatusLine.far:
        "layer 12 of 30, …"), said after what is computed."""
        if self.stale and self.on_its_way and self.text.startswith("Computing the new"):
            self._computing(far)

    def _computing(self, far: str) -> None:
        names = self._names
        self.text = (f"Computing the new {and_joined(names)}{': ' + far if far else ''}… "
                     f"these plots still show the previous "
                     f"{'ones' if len(names) > 1 else 'one'}: {self.shown_order}")
        self._place()

    # -- placement and painting -----------------------------------------------------
    def _place(self, *_) -> None:
        visible = self.stale and self.tabs.currentWidget() is not self.spared
        if visible:
            top = self.tabs.tabBar().height()
            self.setGeometry(0, top, self.tabs.width(), self.tabs.height() - top)
            self.raise_()
            self.setToolTip(self.text)
            self.update()
        self.setVisible(visible)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QtCore.QEvent.Type.Resize and self.isVisible():
            self._place()
        return False

    def titles(self) -> list[QtCore.QRect]:
        """Where the figures' titles (and the numbers beside them) lie on the veil."""
        page = self.tabs.currentWidget()
        if page is None:
            return []
        return [QtCore.QRect(label.mapTo(self.tabs, QtCore.QPoint(0, 0)) - self.pos(),
                             label.size())
                for figure in page.findChildren(QtWidgets.QWidget)
                if hasattr(figure, "heading") and figure.isVisible()
                for label in (figure.heading, figure.corner) if label.isVisible()]

    def label_box(self, font: QtGui.QFont | None = None) -> QtCore.QRect:
        """The label's box: near the top, under any title it would hide."""
        metrics = QtGui.QFontMetrics(font or self.label_font())
        room = self.rect().adjusted(40, 0, -40, 0)
        box = metrics.boundingRect(room, int(FLAGS), self.text).adjusted(-14, -8, 14, 8)
        box.moveTop(12)
        titles = self.titles()
        for _ in range(len(titles)):
            hidden = [title for title in titles if title.intersects(box)]
            if not hidden:
                break
            box.moveTop(max(title.bottom() for title in hidden) + 6)
        return box

    def label_font(self) -> QtGui.QFont:
        font = QtGui.QFont(self.font())
        font.setPointSizeF(font.pointSizeF() * 1.1)
        return font

    def paintEvent(self, event) -> None:
        with QtGui.QPainter(self) as painter:         # ended even if a call raises
            painter.fillRect(self.rect(), DIM)
            painter.setFont(self.label_font())
            box = self.label_box(painter.font())
            painter.setPen(QtGui.QPen(QtGui.QColor(120, 120, 120)))
            painter.setBrush(QtGui.QColor(255, 248, 225, 240))
            painter.drawRoundedRect(box, 6, 6)
            painter.setPen(QtGui.QColor(40, 40, 40))
            painter.drawText(box, int(FLAGS), self.text)
