"""The Experiments tab's status: two lines of one fixed height while a run goes on (its
progress wrapped to three or four lines at 1024 pixels, moving the figure down and the
page's scroll bar in and out each second; on one line the stage's words were cut to a
few letters, "metho…: 1 of 4 done"): what runs on the first, how far and the time left
on the second, each elided only past the whole width; an error in as many lines as it
needs (it stays until the inputs change)."""
from __future__ import annotations

import re

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QSizePolicy

from posviz.runtime.time_left import LATE, MEASURED, duration_text, left_words

from ..status import ElidedLabel, forward_words
from .stage_words import fewer_stage_words

LINES = 2
JOINERS = " :;,"          # between the stage's words and how far it is

# the counts at a line's end, kept whole when its words are cut: "(length 2 of 3)",
# "(model 3 of 5)", ": 4 lengths", ", 9 texts"
COUNTED = re.compile(r"(\s*\([^()]*\d+ of \d+[^()]*\)|[:,;]\s*\d+ [^\W\d]+)$")


def counted_tail(line: str) -> str:
    """The counts ending ``line`` (COUNTED, one after another, then a stage's "…"
    as it starts), or ""."""
    tail = "…" if line.endswith("…") else ""
    while match := COUNTED.search(line[:len(line) - len(tail)]):
        tail = match.group(1) + tail
    return "" if tail == "…" else tail


# how far's time left in all ending a line ("; about 14-17 min left in all (an
# estimate)"), kept whole when the words before it are cut: at 1024 pixels "this step
# is taking longer than the…" and "(an…" lost it
LEFT_IN_ALL = re.compile(r"; (?:about|up to|estimating) [^;]*$")


def left_tail(line: str) -> str:
    """The run's time left ending ``line`` (LEFT_IN_ALL), or ""."""
    match = LEFT_IN_ALL.search(line)
    return match.group(0) if match else ""


def elided(metrics, line: str, room: int) -> str:
    """``line`` within ``room`` pixels: its words cut before the counts or the time
    left in all ending it (at 1024 pixels "... (Chen et al. 2023): 4 lengt…" lost how
    many lengths), else at its end. (A line exactly as wide as ``room`` is cut by Qt too: "... 4 lengt…".)"""
    tail, share = counted_tail(line), 0.5       # the share of the room a tail may take
    if not tail:
        tail, share = left_tail(line), 0.8
    if metrics.horizontalAdvance(line) < room or not tail or \
            metrics.horizontalAdvance("…" + tail) > room * share:
        return word_elided(metrics, line, room)
    return word_elided(metrics, line[:-len(tail)],
                       room - metrics.horizontalAdvance(tail)) + tail


def word_elided(metrics, line: str, room: int) -> str:
    """``line`` within ``room`` pixels, cut after its last whole word that fits, "…"
    after it (at 1024 pixels "... per layer, 5 f…: 14 of 25 done" cut a word); a
    first word wider than the room is cut inside it, as Qt cuts."""
    if metrics.horizontalAdvance(line) < room:
        return line
    words = line.split(" ")
    for k in range(len(words) - 1, 0, -1):
        cut = " ".join(words[:k]).rstrip(" ,;:") + "…"
        if cut != "…" and metrics.horizontalAdvance(cut) < room:
            return cut
    return metrics.elidedText(line, Qt.TextElideMode.ElideRight, room)


def marked_dropped(metrics, shown: list[str], line: str, room: int) -> None:
    """``line`` appended to ``shown`` with the words left out before it marked: "… "
    before it where it fits whole so, else "…" ending the line before (the mark's room
    cut "69 of 120 done" to "69 of 120…")."""
    marked = f"… {line}"
    if metrics.horizontalAdvance(marked) < room or not shown or \
            metrics.horizontalAdvance(line) >= room:
        shown.append(elided(metrics, marked, room))
        return
    before = shown[-1].rstrip(" …")
    shown[-1] = before + "…" if metrics.horizontalAdvance(before + "…") < room else \
        word_elided(metrics, before + " …", room)
    shown.append(line)


def ends_at_a_word(line: str, shown: str) -> bool:
    """Does ``shown`` (``line`` cut, "…" where) keep at least its first word whole,
    cut only after a word?"""
    stem = shown.split("…")[0]
    return shown == line or "…" not in shown or (
        stem.strip() != "" and line.startswith(stem)
        and line[len(stem):len(stem) + 1] in (" ", ",", ";", ":", "…"))


class ProgressLine(ElidedLabel):
    """Two lines, each elided to the width, the whole text in its tooltip when cut;
    ``kept``: the end of the text (how far, the time left), on the second line, the
    words before it (what runs) on the first. A text without one flows over the two
    lines. A wrapped label of its own height only while it says an error
    (``say(..., wrap=True)``). ``shorts``: the text in fewer words, longest first, each
    ending in ``kept``: the first shown whole is shown (no word cut, the whole text in
    the tooltip)."""

    def __init__(self):
        super().__init__()
        self.kept = ""
        self.shorts: tuple[str, ...] = ()
        self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Fixed)

    def say(self, text: str, kept: str = "", wrap: bool = False,
            shorts: tuple[str, ...] = ()) -> None:
        """Show ``text``, whose end ``kept`` goes on the second line; wrapped when
        ``wrap``; ``shorts``: it in fewer words, longest first."""
        self.kept = kept if kept and text.endswith(kept) else ""
        self.shorts = tuple(s for s in shorts if s != text and s.endswith(self.kept))
        if wrap != self.wordWrap():
            self.setWordWrap(wrap)
            self.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred
                               if wrap else QSizePolicy.Policy.Fixed)
            self.updateGeometry()
        self.setText(text)
        self.update()

    def _two_lines_high(self) -> int:
        margins = self.contentsMargins()
        return LINES * self.fontMetrics().lineSpacing() + margins.top() + margins.bottom()

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        return hint if self.wordWrap() else QSize(hint.width(), self._two_lines_high())

    def minimumSizeHint(self) -> QSize:
        hint = super().minimumSizeHint()
        return hint if self.wordWrap() else QSize(hint.width(), self._two_lines_high())

    def lines(self, text: str | None = None) -> list[str]:
        """The two lines as the text (or ``text``) is split over them, before eliding."""
        return [before + after for before, after in self._parts(text)]

    def _parts(self, text: str | None = None) -> list[tuple[str, str]]:
        """Each line as (words that may be cut, words kept whole): what runs, then how
        far. What runs, wider than a line, flows on to the second line before how far
        (at 1024 pixels "held-out perplexity of the 6 checkpoints at 128 t… (length 1
        of 3)" lost its words in the middle with the second line's room unused)."""
        text, kept = self.text() if text is None else text, self.kept
        metrics, room = self.fontMetrics(), max(self.contentsRect().width(), 0)
        if kept and len(kept) < len(text):
            head, tail = text[:-len(kept)].rstrip(JOINERS), kept.lstrip(JOINERS)
            if metrics.horizontalAdvance(head) <= room:
                return [("", head), ("", tail)]
            joiner = text[len(head):len(text) - len(tail)]
            # the stage's own count ("(checkpoint 2 of 6)") is how far too: it goes
            # whole before the run's, never cut ("... 512 tokens (checkpoint 2…")
            count = counted_tail(head)
            count = count if count.lstrip().startswith("(") and len(count) < len(head) else ""
            if count:
                head = head[:-len(count)].rstrip(" ")
                if metrics.horizontalAdvance(count.lstrip(" ") + joiner + tail) > room:
                    # not on the run's line too: it ends the first, its words cut
                    return [(head, " " + count.lstrip(" ")), ("", tail)]
                joiner = " " + count.lstrip(" ") + joiner
            first = self._first_line(head, metrics, room)
            rest = head[len(first):].lstrip(" ")
            return [("", first), (rest, joiner + tail) if rest
                    else ("", (joiner + tail).lstrip(" ") if count else tail)]
        if kept:
            return [("", ""), ("", kept.lstrip(JOINERS))]
        first = self._first_line(text, metrics, room)
        return [("", first), ("", text[len(first):].lstrip(" "))]

    @staticmethod
    def _first_line(text: str, metrics, room: int) -> str:
        """The most whole words of ``text`` the first line holds (one at least)."""
        words, first = text.split(" "), ""
        for k in range(len(words), 0, -1):
            first = " ".join(words[:k])
            whole = first.count("(") <= first.count(")") or k == len(words)
            if whole and metrics.horizontalAdvance(first) <= room or k == 1:
                break               # never inside a count: "(length 1" / "of 3)"
        return first

    def shown_lines(self) -> list[str]:
        """What is painted on each line: the text or the first of its shorts that shows
        whole, else the shortest elided (elided_lines)."""
        shown = []
        for text in (self.text(), *self.shorts):
            shown = self.elided_lines(text)
            if shown == self.lines(text):
                break
        return shown

    def elided_lines(self, text: str) -> list[str]:
        """``text`` on each line, elided to the width, its counts whole (the words
        flowed on before how far are cut, how far never)."""
        metrics, room = self.fontMetrics(), max(self.contentsRect().width(), 0)
        shown = []
        for cut, whole in self._parts(text):
            if not cut:
                shown.append(elided(metrics, whole, room))
                continue
            left = room - metrics.horizontalAdvance(whole)
            words = cut
            cut = elided(metrics, cut, left) if left >= metrics.horizontalAdvance("… ") \
                else ""                                   # its counts whole if they fit
            if not cut or not ends_at_a_word(words, cut):
                # the words flowed on dropped, marked: how far after "…", never led by
                # its joiner (": 44 of 192 done"); unmarked, Haviv's "fitting per / 6 of
                # 25 done" read as a sentence (the whole is in the tooltip)
                marked_dropped(metrics, shown, whole.lstrip(JOINERS), room)
                continue
            shown.append(cut + (whole[1:] if cut.endswith("…") and
                                whole.startswith("…") else whole))
        return shown

    def shown_text(self) -> str:
        """What is painted, its lines joined by a newline."""
        return "\n".join(line for line in self.shown_lines() if line)

    def heightForWidth(self, width: int) -> int:
        return super().heightForWidth(width) if self.wordWrap() else -1

    def paintEvent(self, event) -> None:
        if self.wordWrap():                         # an error: whole, as QLabel lays it out
            self.setToolTip("")
            return super(ElidedLabel, self).paintEvent(event)
        shown = self.shown_lines()
        tip = self.text() if shown != self.lines() else ""
        if tip != self.toolTip():
            self.setToolTip(tip)
        area, step = self.contentsRect(), self.fontMetrics().lineSpacing()
        with QPainter(self) as painter:               # ended even if a call raises
            painter.setPen(self.palette().color(QPalette.ColorRole.WindowText))
            for k, line in enumerate(shown):
                painter.drawText(QRect(area.left(), area.top() + k * step, area.width(),
                                       step), int(Qt.AlignmentFlag.AlignLeft
                                                  | Qt.AlignmentFlag.AlignVCenter), line)


def status_row(tab) -> QHBoxLayout:
    """The Experiments tab's row under its controls: Run, Cancel, how long a long run
    takes here (``tab.takes``, controls.takes_words), the bar (``tab.progress``,
    hidden until a run) and the progress line (``tab.status``: two lines while it runs)."""
    row = QHBoxLayout()
    row.addWidget(tab.run_button)
    row.addWidget(tab.cancel_button)
    tab.takes = QLabel()           # how long a long run takes here, before Run
    tab.takes.setToolTip("How long this experiment took on this machine the last time "
                         "(or, before it ran here, an estimate from its runs elsewhere)")
    tab.takes.hide()
    row.addWidget(tab.takes)
    tab.progress = QProgressBar()
    tab.progress.setFixedWidth(200)
    tab.progress.setTextVisible(True)
    tab.progress.hide()
    tab.status = ProgressLine()
    row.addWidget(tab.progress)
    row.addWidget(tab.status, 1)
    return row


def untimed(tab, clock) -> tuple[str, float | None]:
    """"; about 14-17 min left in all (an estimate)" before the run has timed each kind
    of its work to come over a stage of it (RunClock.timed_whole; its last run's shares
    here: at once): the range of its runs elsewhere (or its last run here), less the
    time spent; "; up to 5 min left in all (an estimate)" once the time spent passes its
    low end (not "1 s to 5 min"); else "; estimating the time left in all". With the
    seconds the bar goes by, the range's middle (None: no range). (Haviv 2022 with
    trained weights told no time left for 105 s, press2022 first told a third of what
    its run then took.)"""
    from .controls import job_key, took_range
    told = took_range(tab.settings, job_key(tab._submitted))
    spent = clock.now() - clock.began
    if told is None or told[1] - spent < 1:
        return "; estimating the time left in all", None
    low, high = (seconds - spent for seconds in told)
    middle = (max(low, 0.0) + high) / 2
    if low < 1:
        return f"; up to {duration_text(high)} left in all (an estimate)", middle
    span = duration_text(low) if round(low) == round(high) else range_text(low, high)
    return f"; about {span} left in all (an estimate)", middle


def range_text(low: float, high: float) -> str:
    """"40-70 s", "14-17 min", "50 s to 2 min": a span of seconds as a person reads it."""
    first, last = duration_text(low), duration_text(high)
    if first.split()[-1] == last.split()[-1]:
        return f"{first.split()[0]}-{last}"
    return f"{first} to {last}"


def tell_progress(tab) -> None:
    """The Experiments tab's bar and status while a run goes on (``tab._clock``, a
    RunClock; ``tab._stage``, the stage's words): the bar the share of the whole run
    as its time left "in all" tells it (RunClock.share_done: sinha2022's bar read 10 %
    then 50 % while the words said "about 6 s left in all" of 19), else the stage's
    steps, busy before the first; the words what runs (the stage's place where its words
    do not say it), how far, the time left of it and of the run (told each second)."""
    clock, stage = tab._clock, tab._stage
    # sinha2022's SmolLM2 load said "about 50 s left of the conversion …; about 1 s left
    # in all" beside a bar at 100 %: a stage telling its own time left is told the run's
    # as those seconds and the work after them (RunClock.own_run_left), its bar that
    # share; else none, its bar busy (a bar busy and no time left in all for 20 s)
    own = getattr(stage, "own_left", False)
    own_left = (clock.own_run_left(own) if own and own is not True and clock.count > 1
                else None)
    # the run's time left once a stage of it is timed whole, or its shares are this
    # machine's (press2022's first, its first checkpoint's steps timed, was a third);
    # with a range to say, once each kind of work to come ended a stage of it
    ranged = untimed(tab, clock) if clock.count > 1 else None
    timed = clock.learned is not None or clock.index > 1 and (
        clock.timed_whole() if ranged[1] is not None else clock.timed_past_warm_up())
    run_left = own_left if own else clock.run_left() if timed else None
    told = own_left is not None or not own
    in_all = ("" if clock.total and clock.index == clock.count or not told
              else left_words(run_left, " in all").replace(", ", "; ", 1)
              if run_left is not None or clock.count <= 1 else ranged[0])
    if clock.count > 1 and told:        # the bar: the share the words "in all" tell
        share = clock.share_done(own_left if own else ranged[1] if in_all == ranged[0]
                                 and ranged[1] is not None else MEASURED)
        tab.progress.setRange(0, 1000)
        tab.progress.setValue(round(1000 * share))
        tab.progress.setFormat(f"{round(100 * share)} %")
    elif clock.total and not own:
        tab.progress.setRange(0, clock.total)
        tab.progress.setValue(clock.done)
        tab.progress.setFormat(f"{clock.done} of {clock.total}")
    else:
        tab.progress.setRange(0, 0)
    if clock.count > 1:
        place = f"{clock.index} of {clock.count}"
        stage = stage if place in stage else f"stage {place}: {stage}"
    if not clock.total:                      # a stage starts: before its first step,
        # the block its own forward has entered (a SmolLM2 sweep's original order and
        # noise floor: 14 s of "running the sweep…")
        far = forward_words(tab._far) if tab._far is not None else ""
        if not clock.count and tab.scheduler.stopping():   # Run after Cancel: 3.6 s of
            far = ": waiting for the cancelled run to stop at the end of its step"  # "running…"
        far, end = (far if stage else far.removeprefix(': ')), f"…{in_all}"
        tab._say(f"{stage}{far}{end}", kept=in_all,
                 shorts=tuple(f"{s}{far}{end}" for s in fewer_stage_words(stage)))
        return
    stage_left = clock.stage_left()   # only where the run's is untold: both cut counts
    left = left_words(stage_left if not in_all or stage_left == LATE else None)
    how_far = f"{clock.done} of {clock.total} done{left}{in_all}"
    # at a small window the stage in fewer words (stage_words), never a word cut
    shorts = tuple(f"{s}: {how_far}" for s in fewer_stage_words(stage))
    stage = f"{stage}: " if stage else ""
    tab._say(f"{stage}{how_far}", kept=how_far, shorts=shorts)
