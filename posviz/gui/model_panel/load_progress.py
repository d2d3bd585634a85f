"""What a model load is doing, under the model chooser: a progress bar (step k of N when
the load tells its steps, the bytes of a download, else busy), Download and Cancel
buttons, and a line of text that says what is loading, which step and how far, or why
a change was refused. The bar holds no text of its own: in a narrow panel its text was
cut ("tep 1 of 4"); the line under it says it whole."""
from __future__ import annotations

import re
import time

from PySide6.QtCore import QRect, Qt
from PySide6.QtWidgets import (QHBoxLayout, QLabel, QProgressBar, QPushButton, QVBoxLayout,
                               QWidget)

from ...models.hf.converted import CONVERTING
from ...models.hf.hub import DOWNLOAD_STEP, count_text, count_unit
from ...models.hf.loading import IMPORTING
from ...models.hf.workarounds import MATCHING, READING, READING_AGAIN
from ...runtime.conversion_left import ConversionLeft
from .fields import ERROR_STYLE, STATUS_STYLE

# The steps a pretrained load tells (models.hf.load_backend), numbered: the bar shows
# "step k of N"; a step not listed here shows a busy bar with its text.
LOAD_STEPS = {"reading config": 1, "loading tokenizer": 2, IMPORTING: 3,
              "loading weights": 3, "de-quantizing weights": 3, READING: 3, READING_AGAIN: 3,
              MATCHING: 3, "ready": 4}
LOAD_STEP_COUNT = 4
TICK = re.compile(r"(.+) \((\d+) s\)")  # a step told again each second it lasts (Ticks)
clock = time.monotonic            # (a test's own clock)
BAR = 1000                        # the bar's range in a load: a share of the whole load
# the conversion's estimate in its announcement (hf.converted.conversion_time): "about
# 20 s-2 min on 2 cores", said in the window too (the command line said it; the window only the
# seconds each step had run, 60-90 s in all)
CONVERSION_TAKES = re.compile(r", (about [^,()]+?) \(later loads")


def time_left(started: tuple[float, int], done: int, total: int, now: float) -> str:
    """", about N s left" from the pace since ``started`` (time, count then), once
    two items and a second have passed and a second or more is left; else ""."""
    seconds, counted = now - started[0], done - started[1]
    if counted < 2 or seconds < 1:
        return ""
    left = seconds / counted * (total - done)
    if left < 1:
        return ""
    return f", about {left:.0f} s left" if left < 90 else f", about {left / 60:.0f} min left"


class WrappedLabel(QLabel):
    """A word-wrapped label as tall as its text at its width: in a group box of a
    scrolled panel the layout gave a wrapped second line no room and drew the next group
    over it."""

    def __init__(self):
        super().__init__(wordWrap=True)

    def setText(self, text: str) -> None:
        super().setText(text)
        self._fit()

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        tall = self.wrapped_height() if self.width() > 0 else -1
        if tall > 0 and tall != self.minimumHeight():
            self.setMinimumHeight(tall)


    def wrapped_height(self) -> int:
        """The text's height wrapped at the label's width, margins in (heightForWidth
        is no measure: it is never below the minimum height this label sets itself,
        so the label grew as its dock narrowed and never shrank back)."""
        self.ensurePolished()                         # the style sheet's font size
        margins, inner = self.contentsMargins(), self.contentsRect().width()
        box = QRect(0, 0, max(inner - 2 * self.margin(), 1), 1 << 20)
        text = self.fontMetrics().boundingRect(box, int(Qt.TextFlag.TextWordWrap),
                                               self.text())
        return text.height() + margins.top() + margins.bottom() + 2 * self.margin()


class LoadProgress(QWidget):
    """The bar, its buttons (``download``, ``cancel``: the owner connects them) and the
    ``status`` line."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self._loading = "the model"       # what is loading, told in ``started``
        self.echo = None                  # told each line too (the window's status line)
        self._note = ""                   # said after each step: the copy being written
        self._pace = ("", (0.0, 0))       # the counted step, (time, count) at its start
        self._shown = 0                   # the bar's value (of BAR): it only moves forward
        self._conversion: ConversionLeft | None = None   # a first load's conversion
        self._clear_when_shown = False    # the error line goes with the next result shown
        self._converted_from = 0          # the bar's value as the conversion began
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        row = QHBoxLayout()
        self.busy = QProgressBar(minimum=0, maximum=0, textVisible=False)
        self.busy.setToolTip("What is loading: step k of N when the load tells its steps, "
                             "the bytes of a download")
        self.download = QPushButton("Download")
        self.download.setToolTip("Download this model into the Hugging Face cache, then "
                                 "load it")
        self.cancel = QPushButton("Cancel")
        self.cancel.setToolTip("Stop waiting for this model; the current one stays in use "
                               "(a download stops and leaves nothing half done in the cache)")
        self.busy.setMinimumWidth(40)    # beside Cancel in a 200-pixel dock: its own
        row.addWidget(self.busy, 1)      # least (95) made the dock scroll sideways
        row.addWidget(self.download)
        row.addWidget(self.cancel)
        layout.addLayout(row)
        self.status = WrappedLabel()
        self.status.setStyleSheet(STATUS_STYLE)
        layout.addWidget(self.status)
        for widget in (self.busy, self.download, self.cancel, self.status):
            widget.hide()

    def say(self, text: str, error: bool = False) -> None:
        if self.echo is not None and not error:
            self.echo(text)
        self._clear_when_shown = False
        self.status.setText(text)
        self.status.setStyleSheet(ERROR_STYLE if error else STATUS_STYLE)
        self.status.setVisible(bool(text))

    def clear_error(self) -> None:
        """A change went through: an error about an earlier, refused one no longer applies."""
        if self.status.styleSheet() == ERROR_STYLE:
            self.say("")

    def clear_error_when_shown(self) -> None:
        """A change elsewhere (a reorder, a text) went through: an error about an earlier,
        refused one goes once that change's result is shown (``shown``), not at the
        click, so it is read meanwhile (a long text computes for seconds). Switching
        tabs or running an experiment changes nothing here: it stays."""
        if self.status.styleSheet() == ERROR_STYLE and not self.status.isHidden():
            self._clear_when_shown = True

    def shown(self) -> None:
        """A result was shown: a change asked for after the error is done (see above)."""
        if self._clear_when_shown:
            self.clear_error()

    def ask(self, size: str) -> None:
        """A large download is asked for (``size``: files, bytes, where to)."""
        self.busy.hide()
        self.download.show()
        self.cancel.show()
        self.say(f"{size}. Download it?")

    def started(self, label: str) -> None:
        self.download.hide()
        self._loading = label
        self._note = ""
        self._shown, self._conversion = 0, None
        self.busy.setRange(0, 0)                 # busy until a step says how far it is
        self.busy.setTextVisible(False)
        self.busy.show()
        self.cancel.show()
        self.say(f"Loading {label}…")

    def step(self, text: str) -> None:
        """A step of the load: a known one fills the bar (step k of N), another one
        leaves it busy; the line under it says what is loading, and which step."""
        label = self._loading
        if text.startswith(CONVERTING) and self._conversion is None:
            self._conversion = ConversionLeft(lambda: clock())
            self._converted_from = self._shown
        if self._conversion is not None:
            self._conversion.told(text)
        if text.startswith(CONVERTING):      # the whole conversion's time, as told
            takes = CONVERSION_TAKES.search(text)
            takes = f", {takes[1]} in all" if takes else ""
            self._note = (f" (its first load{takes}: de-quantized once and written into "
                          f"posviz's cache, read from there by later loads)")
        ticked = TICK.fullmatch(text)
        # the announcement says the conversion's time and its copy itself: the note is
        # for the steps after it (SmolLM2's line said "about 20 s-2 min on 2 cores" twice)
        note = "" if (ticked[1] if ticked else text).startswith(CONVERTING) else self._note
        if ticked is not None:           # the same step, longer: the bar stays as it is
            self.say(f"Loading {label}: {ticked[1]}, {ticked[2]} s so far"
                     f"{self._conversion_left()}…{note}")
            return
        if self._conversion is not None and not self._conversion.ended:
            # the conversion's steps, numbered load steps or not, are its own: "step 3
            # of 4" there, then "loading tokenizer (step 2 of 4)" from the copy, counted back
            self._fill(0, 1, "converting")    # where the conversion's steps have it
            self.say(f"Loading {label}: {text}{self._conversion_left()}…{note}")
            return
        step = LOAD_STEPS.get(text)
        if step is None:
            self.busy.setRange(0, 0)
            self.busy.setTextVisible(False)
            self.say(f"Loading {label}: {text}…")
            return
        self._fill(step, LOAD_STEP_COUNT, f"step {step} of {LOAD_STEP_COUNT}")
        self.say(f"Loading {label}: {text} (step {step} of {LOAD_STEP_COUNT})…{self._note}")

    def count(self, step: str, done: int, total: int) -> None:
        """How far a counted step is (tensors read of how many, or bytes downloaded of
        the whole download): the bar fills with it."""
        if step.startswith(DOWNLOAD_STEP):      # bytes: beyond a bar's int range
            self._fill(min(1000, 1000 * done // max(total, 1)), 1000, "%p%")
            self.say(f"{self._loading}: {count_text(step, done, total)}…")
            return
        if self._conversion is not None:
            self._conversion.told(step, done, total)
        now = clock()
        if self._pace[0] != step or done <= self._pace[1][1]:
            self._pace = (step, (now, done))
        left = time_left(self._pace[1], done, total, now) if done < total else ""
        left = self._conversion_left() or left
        self._fill(done, total, f"{done} of {total}")
        self.say(f"Loading {self._loading}: {step}, {done} of {total} "
                 f"{count_unit(step)}{left}…{self._note}")

    def _conversion_left(self) -> str:
        """", about N s left of the conversion" while one runs, else ""."""
        return "" if self._conversion is None else self._conversion.words()

    def _fill(self, value: int, maximum: int, text: str) -> None:
        """The bar ``value`` of ``maximum`` full; ``text`` (how far) in its tooltip, and
        said whole by the line under it. In a load's steps the bar only moves forward:
        a conversion fills it from where it began to step 3's end by its steps' measured
        seconds (STEPS); a count that starts again (the copy's tensors) leaves it where
        it is, its count said in words."""
        if text == "%p%":                     # a download: its bytes, alone
            self.busy.setRange(0, maximum)
            self.busy.setValue(value)
        else:
            share = BAR * value // max(maximum, 1)
            end = BAR * LOAD_STEPS[MATCHING] // LOAD_STEP_COUNT    # step 3's end
            if self._conversion is not None and not self._conversion.ended:
                start = min(self._converted_from, end)
                share = start + int((end - start) * self._conversion.share_done())
            elif self._conversion is not None and not text.startswith("step "):
                share = min(share, end)       # the copy's counts: step 3 until "ready"
            self._shown = max(self._shown, share)
            self.busy.setRange(0, BAR)
            self.busy.setValue(self._shown)
        self.busy.setFormat(text)
        shown = text.replace("%p%", f"{100 * value // max(maximum, 1)}%")
        self.busy.setToolTip(f"Loading {self._loading}: {shown}")

    def finished(self) -> None:
        self.busy.hide()
        self.download.hide()
        self.cancel.hide()
