"""The session: the whole document, and the one source of truth for it.

It holds the text and its tokens, their current order, the position options, which model
runs (its spec and backend) and what the user looks at (the view selection). Widgets
observe a Session and change it only through its methods (a drop is one
``move(src, dst)``); undo commands call the same methods. Every change tells the
listeners one typed event (``events.py``); a change to the value already held changes
nothing and tells nothing, so calling a setter again is always safe. Computing is
separate (``engine.Engine``). The Session never imports Qt.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..errors import PosvizInputError
from ..models.limits import guard
from ..models.backend import Backend, truncate_sequence
from ..models.builtin.backend import BuiltinBackend
from ..models.config import Positions
from ..models.orders import check_permutation
from .events import (Event, ModelChanged, OrderChanged, PositionsChanged, SelectionChanged,
                     TextChanged)
from .spec import ModelSpec, Selection

__all__ = ["DEFAULT_TEXT", "Session"]

DEFAULT_TEXT = "the cat sat on the mat because it was warm"


def spec_of(backend: Backend) -> ModelSpec:
    """The spec that builds this backend again: its config, or the pretrained model's
    source (a bundled or hub name, a folder or a GGUF file) at the hub commit it came
    from, labelled with its name."""
    if isinstance(backend, BuiltinBackend):
        return ModelSpec(config=backend.config, weights=backend.weights)
    return ModelSpec(config=None, source=getattr(backend, "source", "") or backend.path,
                     label=backend.name, revision=getattr(backend, "revision", ""))


def differ(now, saved) -> str:
    """Where two token lists part, in words: "8 tokens now, 9 saved" or "token 3 is
    'sa' now, 'sat' saved"."""
    if len(now) != len(saved):
        return f"{len(now)} tokens now, {len(saved)} saved"
    k = next(i for i, (a, b) in enumerate(zip(now, saved)) if a != b)
    return f"token {k} is {now[k]!r} now, {saved[k]!r} saved"


class Session:
    """Text, tokens, their order, position options, model and view selection.

    Every change goes through a method here, and each method tells the listeners one
    event (``listener(event)``). Pinned tokens keep their slots (TokenSequence.movable).
    """

    def __init__(self, backend: Backend | None = None, text: str = DEFAULT_TEXT,
                 positions: Positions = Positions(), spec: ModelSpec | None = None):
        self.backend = backend or BuiltinBackend()
        self.spec = spec or spec_of(self.backend)
        self.positions = positions.validate()
        self.text = text
        self.seq = self.backend.tokenize(text)
        self.order = np.arange(len(self.seq))          # (n,) original index per slot
        self.selection = Selection()
        self._listeners: list[Callable[[Event], None]] = []

    # -- observation ------------------------------------------------------------------
    def subscribe(self, listener: Callable[[Event], None]) -> None:
        self._listeners.append(listener)

    def unsubscribe(self, listener: Callable[[Event], None]) -> None:
        self._listeners.remove(listener)

    def _tell(self, event: Event) -> None:
        for listener in list(self._listeners):
            listener(event)

    @property
    def tokens(self) -> tuple[str, ...]:
        return self.seq.tokens

    @property
    def current_tokens(self) -> list[str]:
        """Tokens in the order currently shown."""
        return [self.seq.tokens[i] for i in self.order]

    def movable_slots(self) -> np.ndarray:
        """(n,) bool: the slots a reorder may change (TokenSequence.movable)."""
        return self.seq.movable()

    def room(self) -> int | None:
        """How many tokens fit at the current offset, or None if unbounded."""
        limit = self.backend.max_positions
        return None if limit is None else max(limit - self.positions.offset, 0)

    # -- text, model, positions, view -------------------------------------------------
    def set_text(self, text: str, truncate: bool = False, at_most: int | None = None) -> None:
        """New text: new tokens in their original order. Bad text changes nothing.

        A text longer than the model's positions, or whose comparison would not fit in
        memory, raises PosvizInputError (errors.Refused: models.limits.guard), or with
        ``truncate`` is cut to fit (a final pinned token such as [SEP] is kept). ``at_most``
        cuts it to that many tokens the same way (an undo step brings back a text cut to
        fit exactly as it was cut, whatever room the model has now). The text already
        held (tokenized the same) changes nothing, not even the order.
        """
        seq = self.backend.tokenize(text)
        if at_most is not None:
            seq = truncate_sequence(seq, at_most)
        if truncate:
            seq = truncate_sequence(seq, self.room())
        if text == self.text and seq == self.seq:
            return
        guard.check(self.backend, len(seq), offset=self.positions.offset)
        self.text, self.seq = text, seq
        self.order = np.arange(len(seq))
        self._tell(TextChanged(text))

    def set_model(self, spec: ModelSpec, backend: Backend, reverse: bool = False) -> None:
        """Another model runs; the text is re-tokenized, the order reset if tokens differ
        (``reverse``: the new tokens reversed instead, pinned ones kept in place, as a
        start shows them).

        A text too long for the new model raises PosvizInputError and changes nothing."""
        if spec == self.spec and backend is self.backend:
            return
        seq = backend.tokenize(self.text)
        guard.check(backend, len(seq), offset=self.positions.offset, memory=False)
        keep_order = seq.tokens == self.seq.tokens and seq.pinned == self.seq.pinned
        reordered = bool(np.any(self.order != np.arange(len(self.order))))
        self.spec, self.backend, self.seq = spec, backend, seq
        if not keep_order:
            self.order = np.arange(len(seq))
            if reverse:
                slots = np.flatnonzero(self.movable_slots())
                self.order[slots] = self.order[slots][::-1]
        self._tell(ModelChanged(spec, tokens_changed=not keep_order,
                                order_reset=reordered and not keep_order and not reverse))

    def set_positions(self, positions: Positions) -> None:
        positions.validate()
        if positions == self.positions:
            return
        guard.check(self.backend, len(self.seq), offset=positions.offset, memory=False)
        self.positions = positions
        self._tell(PositionsChanged(positions))

    def select(self, selection: Selection) -> None:
        """What the plots show (layer, head, mosaic, range, tab): nothing to compute."""
        if selection == self.selection:
            return
        self.selection = selection
        self._tell(SelectionChanged(selection))

    # -- order ------------------------------------------------------------------------
    def set_order(self, order) -> None:
        """Show tokens[order]; pinned tokens must stay in their slots."""
        self._reorder(order)

    def _reorder(self, order, src: int | None = None, dst: int | None = None) -> None:
        order = check_permutation(order, len(self.seq))
        fixed = np.flatnonzero(~self.movable_slots())
        if fixed.size and not np.array_equal(order[fixed], fixed):
            raise PosvizInputError("special tokens keep their places; only the others move")
        if np.array_equal(order, self.order):
            return
        before, self.order = self.order, order
        self._tell(OrderChanged(before.copy(), order.copy(), src, dst))

    def move(self, src: int, dst: int) -> None:
        """Take the token at slot src out and insert it at slot dst."""
        n = len(self.order)
        if not (0 <= src < n and 0 <= dst < n):
            raise PosvizInputError(f"slots must lie in 0..{n - 1}")
        order = list(self.order)
        order.insert(dst, order.pop(src))
        self._reorder(order, src, dst)

    def swap(self, i: int, j: int) -> None:
        order = self.order.copy()
        order[[i, j]] = order[[j, i]]
        self.set_order(order)

    def _permute_movable(self, rearrange: Callable[[np.ndarray], np.ndarray]) -> None:
        """Rearrange only the tokens in movable slots, leaving pinned ones in place."""
        slots = np.flatnonzero(self.movable_slots())
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

    # -- documents (document.session_file) --------------------------------------------
    def to_document(self, title: str = "", note: str = ""):
        """The whole document as a session_file.SessionDocument (``.to_dict()`` is JSON)."""
        from .session_file import document_of
        return document_of(self, title, note)

    @classmethod
    def from_document(cls, doc, backend: Backend) -> "Session":
        """A session of ``doc`` (a SessionDocument) running ``backend``, built for
        ``doc.spec``; PosvizInputError when the document does not fit the model."""
        session = cls(backend, doc.text, doc.positions, spec=doc.spec)
        session.restore(doc.text, doc.order, doc.positions, doc.selection, doc.tokens)
        return session

    def restore(self, text: str, order, positions: Positions,
                selection: Selection | None = None, tokens=()) -> None:
        """Text, positions, order and view of a saved document at once.

        Everything is checked before anything changes: a text too long for the model,
        tokens other than ``tokens`` (when given: the model tokenizes the text
        differently from the one it was saved with), an order that is not a permutation
        of the tokens or moves a pinned one raise PosvizInputError and change nothing.
        The listeners are told what changed, text first, order last."""
        positions.validate()
        seq = self.backend.tokenize(text)
        if tokens and tuple(tokens) != seq.tokens:
            raise PosvizInputError(f"{self.backend.name} splits the text into other tokens "
                                   f"than the session holds: {differ(seq.tokens, tokens)}")
        guard.check(self.backend, len(seq), offset=positions.offset, memory=False)
        order = check_permutation(order, len(seq))
        fixed = np.flatnonzero(~seq.movable())
        if fixed.size and not np.array_equal(order[fixed], fixed):
            raise PosvizInputError("the order moves special tokens, which keep their places")
        text_changed = (text, seq) != (self.text, self.seq)
        positions_changed = positions != self.positions
        before = self.order
        self.text, self.seq, self.positions = text, seq, positions
        self.order = order
        if text_changed:
            self._tell(TextChanged(text))
        if positions_changed:
            self._tell(PositionsChanged(positions))
        if text_changed or not np.array_equal(before, order):
            self._tell(OrderChanged(before.copy() if len(before) == len(order) else order,
                                    order.copy()))
        if selection is not None:
            self.select(selection)
