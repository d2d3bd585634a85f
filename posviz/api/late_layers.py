"""A run's layers told again while a block is late (each second on a terminal, each
2 s on a pipe): a report's forward
on 3,000 words with the T5 bias was 7.7 s in its first block, and 5.2 s keeping its
last block's maps, without a line. runtime.run_lines.Retelling's thread asks, each
quarter second, as it does a RunLines'."""
from __future__ import annotations

from contextlib import contextmanager

from ..runtime.run_lines import Retelling
from ..runtime.time_left import duration_text


class LateLayers:
    """``during()`` a run's forwards (models.reached, told by api.steps.layer_ticks),
    the line of the block running told again once its printer's ``tick`` less half of
    ``retell`` seconds have passed without a line, its time left at the pace so far
    (the wait included); or a step told since any block, with its seconds.

    Its printer (api.steps.StepPrinter) tells it each line it prints (``said``) and
    each step without a count (``plain_step``), and gives it: ``stream``, ``tick``,
    ``lock`` (held while a line is told), ``block()`` (the block told last: step, when
    its part began, layer, part; None before one), ``block_line(forward)`` (that
    block's line at ``forward``'s time) and ``tell(line)``."""

    def __init__(self, printer):
        self.printer = printer
        self.retell, self.retelling = 0.0, None     # told again each ``retell`` s, by
        self.said_at = 0.0                          # a thread; when a line was told last
        self.plain = (None, 0.0)        # the last step told without a count, and when

    def said(self, now: float) -> None:
        self.said_at = now

    def plain_step(self, step: str, now: float) -> None:
        self.plain = (step, now)

    @contextmanager
    def during(self):
        from ..models import reached
        from ..runtime.run_lines import retell_every
        every = retell_every(self.printer.stream, self.printer.tick, reached.clock)
        if not every or self.retelling is not None:
            yield
            return
        self.retell = every
        self.retelling = Retelling(self)
        try:
            yield
        finally:
            self.retelling.end()
            self.retelling = None

    def retold(self) -> bool:
        """Tells the block running again, or a step told since any block (a forward's
        first block not entered yet: "running the chosen order (3 s)", as
        models.reached.Ticks tells a wait), when it is late; nothing when no block is
        known to run (models.reached.running: after the last block's feed-forward)."""
        from ..models import reached
        printer = self.printer
        with printer.lock:
            now, forward, block = reached.clock(), reached.latest(), printer.block()
            plain, plain_at = self.plain
            if plain is not None and plain_at > (block[1] if block else -1.0):
                began, words = plain_at, None           # no block since that step
            elif block is None or forward is None:
                return False
            elif reached.running(forward, block[2], forward.layers) != block[3]:
                if (block[2], block[3]) != (forward.layers, reached.FEED_FORWARD):
                    return False
                # its last block's feed-forward on, no mark ends it: the work after the
                # forward (the next one's T5 bias, 3,000 words: 2.2 s untold)
                began, words = block[1], ""
            else:
                _, began, layer, part = block
                words = (f"layer {layer}'s {reached.PART_WORDS[part]}" if part
                         else f"layer {layer}")
            # a terminal: 1.5 s untold; a pipe (a log): within ``tick``, the 2 s rule; a
            # part begun just now waits, unless the tick is near (parts 0.3-0.9 s long
            # each reset the wait: 2.1-2.6 s untold)
            quiet = now - self.said_at
            if (quiet < max(printer.tick - self.retell / 2, self.retell)
                    or now - began < self.retell / 2 and quiet < printer.tick - 0.5):
                return False            # (boundaries untold 1 s apart left 3.2 s silent)
            if words is None:
                printer.tell(f"{reached.short(plain)} ({now - began:.0f} s)")
                return True
            if not words:
                printer.tell(f"{reached.short(block[0])}, after its forward's last layer "
                             f"({duration_text(now - began)} since its feed-forward "
                             f"began)")
                return True
            line = printer.block_line(reached.moved_on(forward, now))
            printer.tell(f"{line} ({duration_text(now - began)} since {words} began)")
            return True
