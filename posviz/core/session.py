"""The session: one source of truth for tokens, order, model and positions.

Widgets observe a Session and change it only through its methods (a drop is one
``move(src, dst)``); undo commands call the same methods. Computing is separate
(``engine.Engine``). The Session never imports Qt.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from .backend import Backend, BuiltinBackend
from .config import Positions
from .engine import check_length, truncate_sequence
from .errors import PosvizInputError
from .symmetry import check_permutation

__all__ = ["DEFAULT_TEXT", "Session"]

DEFAULT_TEXT = "the cat sat on the mat because it was warm"


class Session:
    """Tokens, their current order, the backend and the position options.

    Every change goes through a method here, and each method notifies the listeners
    (``on_change(what)``, with what in {"text", "order", "model", "positions"}).
    Pinned tokens (a model's special tokens) keep their slots under every reorder.
    """

    def __init__(self, backend: Backend | None = None, text: str = DEFAULT_TEXT,
                 positions: Positions = Positions()):
        self.backend = backend or BuiltinBackend()
        self.positions = positions.validate()
        self.text = text
        self.seq = self.backend.tokenize(text)
        self.order = np.arange(len(self.seq))
        self._listeners: list[Callable[[str], None]] = []

    # -- observation ------------------------------------------------------------------
    def subscribe(self, listener: Callable[[str], None]) -> None:
        self._listeners.append(listener)

    def _changed(self, what: str) -> None:
        for listener in list(self._listeners):
            listener(what)

    @property
    def tokens(self) -> tuple[str, ...]:
        return self.seq.tokens

    @property
    def current_tokens(self) -> list[str]:
        """Tokens in the order currently shown."""
        return [self.seq.tokens[i] for i in self.order]

    def is_pinned(self, slot: int) -> bool:
        return bool(self.seq.pinned[self.order[slot]])

    # -- edits ------------------------------------------------------------------------
    def set_text(self, text: str, truncate: bool = False) -> None:
        """New text: new tokens in their original order. Bad text changes nothing.

        A text longer than the model's positions raises PosvizInputError, or with
        ``truncate`` is cut to fit (a final pinned token such as [SEP] is kept).
        """
        seq = self.backend.tokenize(text)
        if truncate:
            seq = truncate_sequence(seq, self.room())
        check_length(self.backend, len(seq), self.positions)
        self.text, self.seq = text, seq
        self.order = np.arange(len(seq))
        self._changed("text")

    def set_backend(self, backend: Backend) -> None:
        """Switch model; the text is re-tokenized and the order reset if tokens differ."""
        seq = backend.tokenize(self.text)
        check_length(backend, len(seq), self.positions)
        keep_order = seq.tokens == self.seq.tokens and seq.pinned == self.seq.pinned
        self.backend, self.seq = backend, seq
        if not keep_order:
            self.order = np.arange(len(seq))
        self._changed("model")

    def room(self) -> int | None:
        """How many tokens fit at the current offset, or None if unbounded."""
        limit = self.backend.max_positions
        return None if limit is None else max(limit - self.positions.offset, 0)

    def set_positions(self, positions: Positions) -> None:
        positions.validate()
        check_length(self.backend, len(self.seq), positions)
        self.positions = positions
        self._changed("positions")

    def set_order(self, order) -> None:
        """Show tokens[order]; pinned tokens must stay in their slots."""
        order = check_permutation(order, len(self.seq))
        pinned = np.flatnonzero(np.asarray(self.seq.pinned, dtype=bool))
        if pinned.size and not np.array_equal(order[pinned], pinned):
            raise PosvizInputError("special tokens keep their places; only the others move")
        if not np.array_equal(order, self.order):
            self.order = order
            self._changed("order")

    def move(self, src: int, dst: int) -> None:
        """Take the token at slot src out and insert it at slot dst."""
        n = len(self.order)
        if not (0 <= src < n and 0 <= dst < n):
            raise PosvizInputError(f"slots must lie in 0..{n - 1}")
        order = list(self.order)
        order.insert(dst, order.pop(src))
        self.set_order(order)

    def swap(self, i: int, j: int) -> None:
        order = self.order.copy()
        order[[i, j]] = order[[j, i]]
        self.set_order(order)

    def _permute_movable(self, rearrange: Callable[[np.ndarray], np.ndarray]) -> None:
        """Rearrange only the tokens in movable slots, leaving pinned ones in place."""
        slots = np.flatnonzero(~np.asarray(self.seq.pinned, dtype=bool)[self.order])
        order = self.order.copy()
        order[slots] = rearrange(order[slots])
        self.set_order(order)

    def reverse(self) -> None:
        self._permute_movable(lambda tokens: tokens[::-1])

    def rotate(self, steps: int = 1) -> None:
        self._permute_movable(lambda tokens: np.roll(tokens, steps))

    def shuffle(self, rng: np.random.Generator | None = None) -> None:
        rng = rng or np.random.default_rng()
        self._permute_movable(lambda tokens: rng.permutation(tokens))

    def reset(self) -> None:
        self.set_order(np.arange(len(self.seq)))
