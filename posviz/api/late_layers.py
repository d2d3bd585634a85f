"""A run's layers told again on a terminal while a block is late: a report's forward
on 3,000 words with the T5 bias was 7.7 s in its first block, and 5.2 s keeping its
last block's maps, without a line. runtime.run_lines.Retelling's thread asks, each
quarter second, as it does a RunLines'."""
from __future__ import annotations

import dataclasses
from contextlib import contextmanager

from ..runtime.run_lines import RETELL_S, TICK_S, Retelling, terminal
from ..runtime.time_left import duration_text


class LateLayers:
    """StepPrinter's part: ``during()`` a run's forwards (models.reached, told by
    api.steps.layer_ticks), the line of the block running told again once ``TICK_S``
    less half of ``retell`` seconds have passed without a line, its time left at the
    pace so far (the wait included)."""

    retell, retelling = 0.0, None
    said_at = 0.0                       # when the last line was told
    plain = (None, 0.0)                 # the last step told without a count, and when

    @contextmanager
    def during(self):
        if not terminal(self.stream) or self.retelling is not None:
            yield
            return
        self.retell = RETELL_S
        self.retelling = Retelling(self)
        try:
            yield
        finally:
            self.retelling.end()
            self.retelling = None

    def retold(self) -> bool:
        """Tells the block running again, or a step told since any block (a forward's
        first block not entered yet: "running the chosen order (3 s)", as
        models.reached.Ticks tells a wait), when it is late."""
        from ..models import reached
        now, forward = reached.clock(), reached.latest()
        step, _, (layer, part), parts = self._run
        plain, plain_at = self.plain
        if plain is not None and plain_at > (self._at or -1.0):   # no block since it
            began, words = plain_at, None
        elif (step is None or self._at is None or forward is None
              or (forward.layer, forward.part) != (layer, part)):
            return False
        else:
            began = self._at
            words = f"layer {layer}'s {reached.PART_WORDS[part]}" if part else f"layer {layer}"
        if now - self.said_at < TICK_S - self.retell / 2 or now - began < self.retell / 2:
            return False                # (boundaries untold 1 s apart left 3.2 s silent)
        if words is None:
            self._print(f"{reached.short(plain)} ({now - began:.0f} s)")
            return True
        self._run = (step, now, (layer, part), parts)
        line = self._line(step, dataclasses.replace(forward, at=now), layer,
                          forward.layers, "")
        self._print(f"{line} ({duration_text(now - began)} since {words} began)")
        return True

