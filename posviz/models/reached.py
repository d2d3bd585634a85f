"""How far the forward on its way has got: the block a Recorder (models.hooks) has
entered, read by the window's status line while it waits and told to the command
line's and the API's listeners (api.steps.layer_ticks). A pretrained model's forward
took 20-50 s on a busy machine; its status said only how long it had waited."""
from __future__ import annotations

import contextvars
import dataclasses
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable

from ..errors import Cancelled


@dataclass(frozen=True)
class Reached:
    """Block ``layer`` (1-based) of ``layers`` entered at ``at`` by forward number
    ``forward`` of this process, which entered its first block at ``began``; ``run``
    names the forward when its caller did (``named``), as the noise floor's run."""

    layer: int
    layers: int
    forward: int
    at: float
    began: float
    run: str = ""
    part: int = 0           # 0: the block entered, MAPS, FEED_FORWARD: its parts after
    done: float = 0.0       # the share of this forward done when it got here
    nth: int = 0            # this forward's place among the ``planned`` (0: none planned)
    planned: int = 0        # the forwards its caller planned (``planning``)
    took: float | None = None   # seconds the plan's last forward done took, maps aside
    keeping: float = 0.0        # seconds this forward has spent keeping its maps
    after: float = 0.0          # seconds of work planned after the forwards (afterwards)
    beyond: int = 0             # forwards run after the plan's, timed, not counted (afterwards)
    within: tuple = ()          # (head, heads) of the maps being kept, while they are
    costs: tuple = ()           # seconds each forward of the last plan alike took (_costs)
    before: float = 0.0         # seconds the plan's forwards before this one took

    def seconds_left(self) -> float | None:
        """This forward's time left at its blocks' pace so far (None before one has)."""
        if self.done <= 0 or self.at <= self.began:
            return None
        return (self.at - self.began) / self.done * (1 - self.done)

    def whole_left(self) -> float | None:
        """The time left of all the forwards planned (``planning``): this one's, and
        those after it at the pace of the plan's forwards done, else of this one."""
        left, scale = self.seconds_left(), self._scale()
        if scale is not None:       # each forward at its cost in the last plan alike
            left = max(self.costs[self.nth - 1] * scale - (self.at - self.began), 0.0) \
                if left is None else left
            return left + (sum(self.costs[self.nth:]) + self.beyond * max(self.costs)) \
                * scale + self.after
        if left is None and self.took is not None:    # the last forward's time, so far
            left = max(self.took - (self.at - self.began), 0.0)
        if left is None or self.nth >= self.planned + self.beyond:
            return left if left is None else left + self.after
        spent = self.at - self.began
        if self.took is None or self.done >= 0.25:
            # its own pace once a quarter is done, the maps it keeps aside: the forwards
            # after keep none (the original's took 1.8-4.2 s a block keeping them)
            each = spent / self.done * (1 - min(self.keeping / spent, 1.0))
        else:
            each = self.took
        # the runs after keep maps as the first did: not a floor's pace ("88 s" of 273 s)
        done = self.before / (self.nth - 1) if self.nth > 1 and self.before > 0 else 0.0
        return left + each * (self.planned - self.nth) + self.beyond * max(each, done) \
            + self.after

    def _scale(self) -> float | None:
        """This plan's pace over the last alike's (``costs``: SmolLM2's forwards took 12,
        5.3 and 8.2 s; at the second's pace "17 s left" was 26 s): the forwards done's (one
        forward's pace swung 2x at load 9), else the first's once a tenth is done."""
        if len(self.costs) != self.planned or not 0 < self.nth <= self.planned:
            return None
        if self.nth > 1:
            past = sum(self.costs[:self.nth - 1])
            return self.before / past if past > 0 and self.before > 0 else None
        ok = self.done >= 0.1 and self.at > self.began and self.costs[0] > 0
        return (self.at - self.began) / self.done / self.costs[0] if ok else None


_lock = threading.Lock()
_latest: Reached | None = None
_forwards = 0
_listeners: list[Callable[[Reached], None]] = []
_named = threading.local()              # .run: the forward's name; .plan: its Plan
_block: dict = {}                       # the block running: "start", and each part's time
_offsets: dict[int, float] = {}         # each part's share into a block, as last timed
_costs: dict[tuple[int, int], tuple] = {}   # (forwards, layers): the last such plan's
clock = time.monotonic                  # (a test's own clock)
MAPS, FEED_FORWARD = 1, 2               # a block's parts after its scores' computing
PART_WORDS = {MAPS: "attention maps", FEED_FORWARD: "feed-forward"}


class Plan:
    """The forwards a caller is about to run (a report's original order, its noise
    floor's and the chosen order's): how many, and when each began."""

    def __init__(self, forwards: int, tokens: int = 0):
        self.forwards, self.tokens = forwards, tokens    # a forward's tokens (0: not said)
        self.began: list[float] = []
        self.keeping: list[float] = []      # each forward's seconds keeping its maps
        self.layers = 0                     # blocks a forward

    def finished(self, at: float) -> None:
        """Each forward's seconds up to the next one's start: the next plan alike's costs."""
        if len(self.began) == self.forwards > 1:
            _costs[(self.forwards, self.layers)] = (self.tokens, tuple(
                end - start for start, end in zip(self.began, self.began[1:] + [at])))

    def alike(self, layers: int, ratio: float = 1.5) -> tuple:
        """Each forward's seconds in the last plan of ``layers`` and its tokens within
        ``ratio``, or () (15 tokens' took 2.4 and 1.4 s, the first cold; 828's 15 and 15)."""
        tokens, costs = _costs.get((self.forwards, layers), (0, ()))
        return costs if max(tokens, self.tokens) <= ratio * min(tokens, self.tokens) else ()


def reach(layer: int, layers: int, part: int = 0, within: tuple = ()) -> None:
    """A forward enters block ``layer`` (0-based) of ``layers``, or (``part``) its
    attention maps' keeping (MAPS) or its feed-forward: block 0 starts a new one.
    ``within`` (head, heads): how far the keeping of its maps has got, told, not timed
    (a long input's layer of maps took 7.5 s to reach the disk)."""
    global _latest, _forwards, _offsets
    now = clock()
    plan = getattr(_named, "plan", None)
    if within:
        with _lock:
            if _latest is None:
                return
            _latest = told = dataclasses.replace(_latest, at=now, within=within,
                                                 done=_done_within(_latest, within))
            listeners = list(_listeners)
        for listener in listeners:
            listener(told)
        return
    with _lock:
        last = _latest
        anew = (layer == 0 and not part) or last is None
        if anew:
            _forwards += 1
            _offsets = {}               # a forward's parts are timed on its own blocks
            if plan is not None:
                plan.began.append(now)
                plan.keeping.append(0.0)
                plan.layers = layers
        if not part:                                   # a block entered: the last one's
            took = now - _block.get("start", now)      # parts as shares of its time
            if not anew and took > 0 and _block.get("parts"):
                _offsets = {p: (t - _block["start"]) / took
                            for p, t in _block["parts"].items()}
            _block.update(start=now, parts={})
        else:
            parts = _block.setdefault("parts", {})
            if part == FEED_FORWARD and MAPS in parts and plan is not None and plan.keeping:
                plan.keeping[-1] += now - parts[MAPS]
            parts[part] = now
        began = now if anew else last.began
        done = (layer + (_offsets.get(part, 0.0) if part else 0.0)) / layers
        nth = len(plan.began) if plan is not None else 0
        took = (plan.began[-1] - plan.began[-2] - plan.keeping[-2]
                if plan is not None and nth > 1 else None)
        keeping = plan.keeping[-1] if plan is not None and plan.keeping else 0.0
        _latest = Reached(layer + 1, layers, _forwards, now, began,
                          getattr(_named, "run", None) or "", part, done, nth,
                          plan.forwards if plan is not None else 0, took, keeping,
                          *(getattr(_named, "after", None) or (0.0, 0)),
                          costs=plan.alike(layers) if plan is not None else (),
                          before=plan.began[-1] - plan.began[0] if nth > 1 else 0.0)
        told, listeners = _latest, list(_listeners)
    for listener in listeners:          # on the forward's thread
        listener(told)


def _part_span(now: Reached) -> tuple[float, float] | None:
    """(first, last): the share of a block where ``now``'s part begins and ends, as the
    forward's blocks timed them (``_offsets``); None before they were."""
    part = now.part
    if not part and not _offsets:           # blocks without parts: the whole block,
        return (0.0, 1.0) if now.layer > 1 else None    # once one was timed
    first = _offsets.get(part, 0.0) if part else 0.0
    last = min([offset for p, offset in _offsets.items() if p > part] or [1.0])
    return None if part and part not in _offsets or last <= first else (first, last)


def _done_within(now: Reached, within: tuple) -> float:
    """The share of ``now``'s forward done with ``within`` (head, heads) of its part's
    maps kept: a time left read at the block's share alone grew as the heads passed
    (5,000 words: "15 s left", "24 s" at head 3 of 4, then "9 s" at the next block)."""
    span = _part_span(now)
    if span is None:
        return now.done
    (first, last), (head, heads) = span, within
    share = (now.layer - 1 + first + (last - first) * min((head - 0.5) / heads, 1.0)) \
        / now.layers                                 # told as each head is on its way
    return max(now.done, share)


def moved_on(now: Reached, at: float) -> Reached:
    """``now`` read at time ``at`` (a late block's line told again): its share done grown
    at the forward's pace so far, up to its part's end. Read at its share alone, the
    time left grew each second the part ran (forward 2 of 2: "2 s left", then "7 s
    left (1 s since layer 2 began)")."""
    span = _part_span(now)
    if span is None or now.done <= 0 or now.at <= now.began:
        return dataclasses.replace(now, at=at)
    pace = (now.at - now.began) / now.done                   # seconds a whole forward
    end = (now.layer - 1 + span[1]) / now.layers
    done = min(now.done + max(at - now.at, 0.0) / pace, end)
    return dataclasses.replace(now, at=at, done=max(done, now.done))


@contextmanager
def planning(forwards: int, tokens: int = 0, size: int = 0):
    """While inside, the forwards on this thread are counted as ``forwards`` planned
    (Reached.nth of .planned), the time left all of theirs (whole_left) and of those run
    after them at ``tokens`` (more_forwards), costed as one of ``size`` tokens (Plan.alike)."""
    before = getattr(_named, "plan", None)
    more = getattr(_named, "more", None)
    _named.plan = plan = Plan(forwards + (more(tokens) if more is not None and tokens else 0),
                              size or tokens)
    try:
        yield
        plan.finished(clock())
    finally:
        _named.plan = before


def more_forwards(count: Callable[[int], int]):
    """While inside, a plan of ``n`` tokens (planning) counts ``count(n)`` forwards more:
    those its caller runs after it (an export's head run again past models.maps.KEEP_ALL)."""
    return _set("more", count)


def afterwards(seconds: float, forwards: int = 0):
    """While inside, the time left told of the forwards on this thread adds ``seconds``
    of work their caller does after them (an export's drawing and writing) and
    ``forwards`` more at their pace, not counted among the plan's (a sweep's runs after
    its original order: SmolLM2's 3,000 words said "about 5 s left" with 136 s to go)."""
    return _set("after", (seconds, forwards))


def named(run: str):
    """While inside, the forwards on this thread are ``run`` ("the original order at
    shifted positions, for the noise floor"), as their listeners read them."""
    return _set("run", run)


@contextmanager
def _set(name: str, value):
    """While inside, this thread's ``_named.name`` is ``value``."""
    before = getattr(_named, name, None)
    setattr(_named, name, value)
    try:
        yield
    finally:
        setattr(_named, name, before)


@contextmanager
def listening(listener: Callable[[Reached], None]):
    """While inside, ``listener(Reached)`` each time a forward enters a block."""
    with _lock:
        _listeners.append(listener)
    try:
        yield
    finally:
        with _lock:
            _listeners.remove(listener)


def latest() -> Reached | None:
    return _latest


def running(now: Reached | None, layer: int, layers: int) -> int | None:
    """The part of block ``layer`` of ``layers`` (1-based) running as ``now`` (latest)
    tells it: 0 (the block entered), MAPS or FEED_FORWARD; None where ``now`` is another
    block's, or the last block's feed-forward: no mark ends it, so it would last as long
    as the work after its forward ("about 4 s left (1 s since layer 4's feed-forward
    began)", then "about 7 s left (2 s …)", between two forwards). The one rule of the
    lines told again (api.steps)."""
    if now is None or (now.layer, now.layers) != (layer, layers):
        return None
    return None if now.part == FEED_FORWARD and layer == layers else now.part


# -- a wait that nothing counts: its step told again each second, with its seconds
TICK_S = 1.0


class Ticks:
    """A ``say(step, done=None, total=None)`` that, when nothing was said for ``every``
    seconds (on ``clock``), says its last step again (``short``) with its seconds ("reading
    the GGUF file's header (3 s)"), from ``tick`` (on the posviz-ticks thread, outside the
    lock); an error ``say`` raises there (but Cancelled) is raised by the next step told."""

    def __init__(self, say, every: float = TICK_S, clock=time.monotonic):
        self.say, self.every, self.clock, self.lock = say, every, clock, threading.Lock()
        self.step, self.began = None, clock()
        self.last = self.began          # when anything was said last
        self.error: BaseException | None = None     # raised by say on the ticks' thread

    def __call__(self, step: str, done: int | None = None, total: int | None = None):
        with self.lock:
            error, self.error = self.error, None
            before, self.last = self.last, self.clock()
            # a counted step is the step running too: the plain one before it told
            # again after "loading weights: tensor 272 of 272" read as still running
            # a count of the plain step just told is that step's ("saving the converted
            # copy (538 MB, ...)" then its megabytes: "(0 s)" a second after it)
            if done is None and total is None or short(step) != short(self.step or ""):
                self.began = self.last
            self.step = step
            said_at = self.last
        if error is not None:
            raise error
        if done is None and total is None:
            return self.say(step)
        told = self.say(step, done, total)
        if told is False:       # a count its say kept back (StepPrinter: a line a tick):
            with self.lock:     # the silence goes on (a GGUF file's 397 modules matched
                if self.last == said_at:    # kept it 2.8 s untold, each count "said")
                    self.last = before
        return told

    def tick(self) -> None:
        with self.lock:
            now = self.clock()
            if self.step is None or now - self.last < self.every or self.error:
                return
            self.last = now
            told = f"{short(self.step)} ({now - self.began:.0f} s)"
        try:
            self.say(told)
        except Cancelled:               # a stopped load's: its own next step raises it
            pass
        except Exception as error:      # the caller's say failed: raised on its thread
            with self.lock:
                self.error = error


def short(step: str) -> str:
    """A step's words before its details (": ...", " (...)"): "saving the converted
    copy (538 MB, about 5 s) into ..." ticks as "saving the converted copy (2 s)"."""
    ends = [at for at in (step.find(": "), step.find(" (")) if at > 0]
    return step[:min(ends)] if ends else step


@contextmanager
def ticking(say, step: str | None = None, every: float = TICK_S, clock=time.monotonic):
    """Within the block, a step ``say`` told (``step`` at once, when given) is told
    again each ``every`` seconds nothing else is, with its seconds, by a thread of its
    own (``say`` is called from that thread too); the block gets that ``say`` (Ticks),
    and an error ``say`` raised there is raised at its end (silent waits of 2-7 s:
    benchmarks/README.md). A ``say`` of None: nothing is told."""
    if say is None:
        yield None
        return
    ticks, done = Ticks(say, every, clock), threading.Event()
    if step is not None:
        ticks(step)

    def run() -> None:
        while not done.wait(every / 4):
            ticks.tick()
    # run in the load's context: told where its thread tells (runtime.held_lines)
    thread = threading.Thread(target=contextvars.copy_context().run, args=(run,),
                              daemon=True, name="posviz-ticks")
    thread.start()
    try:
        yield ticks
    finally:
        done.set()
        thread.join()
    if ticks.error is not None:         # say failed on the ticks' thread, none since
        raise ticks.error
