"""The window's status line: what the last evaluation took, "computing…" when one takes
a while (and past 2 s what it runs and for how long), errors, and what an opened
document says until the next edit."""
from __future__ import annotations

import re
import time

from PySide6.QtCore import QEvent, QObject, QSize, Qt, QTimer, Signal
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import QLabel, QSizePolicy, QStatusBar

from ..models import after, reached
from ..runtime.jobs import START_STEPS, start_step
from ..runtime.time_left import duration_text
from ..views.pooling import pool_block

ERROR_STYLE = "color: #c62828;"
# a QLineEdit keeps 32,767 characters unless told otherwise, and cuts a longer paste
# without a word: every field of the window takes the user's text whole, and what is
# too long (for the model: posviz.models.limits.guard) is told by the check that refuses it
WHOLE_TEXT = 2**31 - 1
COMPUTING_AFTER_MS = 150          # an evaluation slower than this says "computing…"
SAY_SECONDS_AFTER = 2.0           # ... and from then on what it runs and for how long
clock = time.monotonic            # (a test's own clock)
# a new text's original maps are pooled for the mosaic after the forwards, when longer
# than a tile (views.pooling)
POOLING_AFTER = ", then the original order's maps are pooled"


class ElidedLabel(QLabel):
    """One line of the status bar: its text elided to the width it gets (at the right,
    or as ``elide`` says), whole in its tooltip when cut (a long line ran off a
    1024-pixel window). ``keeps``:
    it asks for its text's width (the hover's value) and gives way only past that; else
    it takes what is left (the status line's stretch)."""

    def __init__(self, text: str = "", keeps: bool = False,
                 elide: Qt.TextElideMode = Qt.TextElideMode.ElideRight):
        super().__init__(text)
        self.elide = elide        # the status line's: in the middle, its end (how long
                                  # a wait has run) kept in sight at 1024 pixels
        self.shorts: tuple[str, ...] = ()   # the text in fewer words, longest first:
        # the first that fits is shown whole, not the text cut ("built-in on 30…")
        self.setSizePolicy(QSizePolicy.Policy.Preferred if keeps else
                           QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)

    def minimumSizeHint(self) -> QSize:
        return QSize(20, super().minimumSizeHint().height())

    def shown_text(self) -> str:
        """What is painted: the text, else the first of ``shorts`` that fits the width
        whole, else the shortest elided."""
        metrics, room = self.fontMetrics(), max(self.contentsRect().width(), 0)
        texts = (self.text(), *self.shorts)
        return next((text for text in texts if metrics.horizontalAdvance(text) <= room),
                    metrics.elidedText(texts[-1], self.elide, room))

    def paintEvent(self, event) -> None:
        shown = self.shown_text()
        tip = self.text() if shown != self.text() else ""
        if tip != self.toolTip():
            self.setToolTip(tip)
        with QPainter(self) as painter:               # ended even if a call raises
            painter.setPen(self.palette().color(QPalette.ColorRole.WindowText))
            painter.drawText(self.contentsRect(), int(Qt.AlignmentFlag.AlignLeft
                                                      | Qt.AlignmentFlag.AlignVCenter), shown)


def forward_words(now: reached.Reached, nth: int = 0, then: str = "") -> str:
    """": layer 16 of 30 (forward 1 of 3), about 40 s left": the block the forward on
    its way has entered, its place among the forwards planned (else ``nth``, when not
    0) and the time left of them all (models.reached), not of the one on its way
    ("about 2 s left in it" was told again at each of SmolLM2's three), with the work
    after them where it is expected (Reached.after: "in all"); ``then``: the work
    after them, told by name."""
    nth, of = (now.nth, f" of {now.planned}") if now.planned else (nth, "")
    which = f" (forward {nth}{of})" if nth and (of != " of 1") else ""
    left = now.whole_left() if now.planned else now.seconds_left()
    # with the work after them expected (runtime.after_left): the time left in all
    whose = " in all" if now.after else " of the forwards" if then else ""
    left = (f", about {duration_text(left)} left{whose}"
            if left is not None and left >= 1 else "")
    return f": layer {now.layer} of {now.layers}{which}{left}{then}"


def after_words(now: after.After) -> str:
    """": comparing the two orders' maps, layer 2 of 4, about 3 s left": the step after
    the forwards on its way and the time its steps have left at their pace so far."""
    left = now.seconds_left(after.clock())          # counted down between its steps
    left = f", about {duration_text(left)} left" if left is not None and left >= 1 else ""
    return f": {now.what}, {now.unit} {min(now.done + 1, now.total)} of {now.total}{left}"


def how_far(since: float, nth=lambda now: 0, then: str = "") -> str:
    """What the wait begun at ``since`` runs now: the steps after the forwards
    (after_words) once newer than the forward's last block, else that block
    (forward_words, ``nth(now)`` its forward's number, ``then`` its words of the work
    after); "" before either."""
    now, step = reached.latest(), after.latest_after()
    if step is not None and step.began >= since and (now is None or step.at >= now.at):
        return after_words(step)
    if now is None or now.began < since or now is after.ended_after():
        return ""                       # (a forward told before the steps after it)
    return forward_words(now, nth(now), then)


def fewer_words(text: str) -> tuple[str, ...]:
    """A load's ``text`` in fewer words, longest first, for a line too short for it (at
    1024 pixels SmolLM2's conversion was cut in its middle): past what loads (up to the
    first ": "), without its asides in brackets, then without the folder it names, then
    without what a step does once (": de-quantizing it ..."), its time left kept, then
    without the aside naming what loads ("(bundled GGUF)"), then with its name alone."""
    what, colon, rest = text.partition(": ")
    bare = what + colon + re.sub(r" \([^()]*\)", "", rest)
    short = re.sub(r" in (?:/|~|[A-Za-z]:\\)[^,]*", "", bare)
    shorter = re.sub(r"(?<= once): [^,]*(?=,)", "", short)
    plain = re.sub(r" \([^()]*\)", "", shorter)        # what loads, without its aside
    named = re.sub(r"^([^,:]*),[^:]*:", r"\1:", plain)   # ... and but its name
    return tuple(dict.fromkeys(t for t in (bare, short, shorter, plain, named) if t != text))


class StatusLine(QObject):
    """Says things on ``label``; remembers the last evaluation's line (``settled``) to
    show again once an error or a load's message no longer applies. ``far``: how far
    the forward on its way has got ("layer 12 of 30, about 4 s left in it", or ""), each
    second it is said (the veil over the plots says it too: a user read "Computing the
    new order…" there for 13 s, the layers told only down here). While it computes, a
    control's hint under the pointer does not cover that line: a user clicked Reverse
    with the mouse and read the button's hint, not the layers, for all of SmolLM2's
    7 s (the pointer rests on the button)."""

    far = Signal(str)

    def __init__(self, label: QLabel, parent: QObject | None = None, session=lambda: None):
        super().__init__(parent)
        self.label = label
        self._session = session   # the window's session (what an evaluation runs)
        self._ran = None          # (model, tokens, positions) of the last evaluation shown
        self._since = 0.0         # when the evaluation on its way was asked for
        self._first = None        # the number of this wait's first forward (reached)
        self._ran_first = False   # this wait runs the original order too
        self.settled = ""         # the last evaluation's line
        self.notice = ""          # what the opened document says (a model stood in)
        self.remark = ""          # what an edit undid, before the evaluations' lines
        self._remarked = False    # the remark was shown: the next edit ends it
        # "computing…" only for an evaluation that takes a while: during a drag it would
        # flash at every slot (and re-lay the status bar out twice per reorder).
        self.computing = QTimer(self, singleShot=True, interval=COMPUTING_AFTER_MS,
                                timeout=self._computing)
        self.ticking = QTimer(self, interval=1000, timeout=self._tick)
        if parent is not None:
            parent.installEventFilter(self)      # the hints (status tips) it receives

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        """A control's hint waits while the line says how far a computation is."""
        return event.type() == QEvent.Type.StatusTip and self.ticking.isActive()

    def asked(self) -> None:
        """An evaluation was asked for: "computing…" if it takes a while. Its time runs
        from now: read when the timer fired, late behind a busy GUI thread, it began
        after SmolLM2's forward had and its layers were never shown."""
        self._since = clock()
        self._first = None        # the number of this wait's first forward (reached)
        self.computing.start()

    def _computing(self) -> None:
        bar = self.label.parentWidget()
        if isinstance(bar, QStatusBar):
            bar.clearMessage()                   # a hint shown before the click
        self.say("computing…")
        self.ticking.start()

    def _tick(self) -> None:
        """What the evaluation runs, how far it is and for how long now: from the first
        tick once a forward or a step after it is told, else past SAY_SECONDS_AFTER (a
        2.4 s reorder of SmolLM2's read only "Computing the new order…": how far came
        at 2 s, on the tick after)."""
        elapsed = clock() - self._since
        orders, model = self._running()
        layer = self._layer()
        if layer or elapsed >= SAY_SECONDS_AFTER:   # how far first: elided, it stays
            line = f"computing {orders}{layer}… {elapsed:.0f} s"
            # the model last, dropped before a word of what runs or how far is cut
            self.say(line + model, elide=Qt.TextElideMode.ElideRight,
                     shorts=(line + model.split(" on ")[0], line) if model else ())
            self.far.emit(layer.removeprefix(": "))

    def _layer(self) -> str:
        """Which block the forward on its way has entered, of which order, and the time
        that order has left (models.reached), when it started after this wait began."""
        s = self._session()
        pools = (self._ran_first and s is not None and s.selection.mosaic is not None
                 and pool_block(len(s.tokens)) > 1)
        return how_far(self._since, self._nth, POOLING_AFTER if pools else "")

    def _nth(self, now: reached.Reached) -> int:
        """The number of ``now``'s forward in this wait, when it runs the original order
        (its own, then (RoPE, T5) its noise floor's), else 0."""
        if self._first is None or now.forward < self._first:
            self._first = now.forward
        return now.forward - self._first + 1 if self._ran_first else 0

    def _running(self) -> tuple[str, str]:
        """Which orders run: the original order too the first time (it is computed once
        per text, model and positions); and " · the model on N tokens"."""
        s = self._session()
        if s is None:
            return "", ""
        first = self._ran_first = self._ran != (id(s.backend), s.seq, s.positions)
        runs = "the original order, then the new one" if first else "the new order"
        return runs, f" · {s.backend.name} on {len(s.seq)} tokens"

    def _stop(self) -> None:
        self.computing.stop()
        self.ticking.stop()

    def say(self, text: str, error: bool = False,
            elide: Qt.TextElideMode = Qt.TextElideMode.ElideMiddle,
            shorts: tuple[str, ...] = ()) -> None:
        """Show ``text``, elided in the middle when cut (its end, the time taken, kept)
        or as ``elide`` says (the computing line: how far first, the model last);
        ``shorts``: it in fewer words, longest first, the first that fits shown whole."""
        self.label.elide, self.label.shorts = elide, shorts
        self.label.setText(text)
        style = ERROR_STYLE if error else ""
        if self.label.styleSheet() != style:     # a style sheet re-polishes the label
            self.label.setStyleSheet(style)

    def load_step(self, text: str) -> None:
        """A load's line (the model panel's) while this one says the load: MiniLM's
        "Loading all-MiniLM-L6-v2 (bundled)…" stood here 2.9 s, its steps told there."""
        if self.label.text().startswith("Loading ") and text.startswith("Loading "):
            self.say(text, shorts=fewer_words(text))

    def is_error(self) -> bool:
        return self.label.styleSheet() == ERROR_STYLE

    def evaluated(self, text: str) -> None:
        """An evaluation was shown: its line, unless a notice stands."""
        self._stop()
        s = self._session()
        self._ran = (id(s.backend), s.seq, s.positions) if s is not None else None
        self.settled = f"{self.remark} · {text}" if self.remark else text
        self._remarked = bool(self.remark)
        self.say(self.notice or self.settled, error=bool(self.notice))

    def failed(self, text: str) -> None:
        self._stop()
        self.say(text, error=True)

    def settle(self) -> None:
        """Back to the last evaluation's line."""
        self.say(self.settled)

    def edited(self) -> None:
        """An edit went through: an error about an earlier, refused one no longer
        applies, nor a remark shown about it."""
        if self._remarked:
            self.remark, self._remarked = "", False
        if self.is_error():
            self.settle()


class StartSteps(QObject):
    """Start-up's steps told (``tell``) as each begins (``step``); the last, computing
    the first view, told again each second until start-up has ``finished`` (started or
    failed): the forward's layer, its place among the forwards planned and their time
    left, and the seconds so far (it stood on "step 4 of 4" for 12 s under load with
    nothing moving)."""

    def __init__(self, tell, parent: QObject | None = None):
        super().__init__(parent)
        self.tell, self.since = tell, 0.0
        self.timer = QTimer(self, interval=1000, timeout=self.tick)

    def step(self, step: str) -> None:
        self.since = clock()
        self.timer.stop()
        if step == START_STEPS[-1]:
            self.timer.start()
        self.tell(start_step(step))

    def finished(self) -> None:
        """Start-up is over, started or failed: no step is told again (a failed start's
        error stays shown)."""
        self.timer.stop()

    def tick(self) -> None:
        if not self.timer.isActive():   # finished, or a new step not yet the last
            return
        far, seconds = how_far(self.since), clock() - self.since
        told = reached.latest()                     # "" between the steps after it
        waits = far or ("" if told is after.ended_after() and told.began >= self.since
                        else ": waiting for the model's first forward")
        self.tell(start_step(START_STEPS[-1], f"{waits}, {seconds:.0f} s so far"))
