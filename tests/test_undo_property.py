"""Undo and redo never leave the document out of step with the undo stack.

A seeded random walk drives a Session through the same edits and commands the window
pushes onto its QUndoStack (gui/commands.py): text edits from a small pool (some too
long for the model, applied whole, refused or cut to fit), offset and mode changes,
reorders (move, swap, shuffle, reverse, rotate, reset), undos and redos, and new models
with fewer or more positions. After every step the session must equal a fresh session
that replays the stack's done commands from where the history begins.
"""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtGui import QUndoStack  # noqa: E402

from posviz.document.events import ModelChanged  # noqa: E402
from posviz.document.session import Session  # noqa: E402
from posviz.document.spec import ModelSpec  # noqa: E402
from posviz.errors import PosvizInputError  # noqa: E402
from posviz.gui.commands import (PositionsCommand, TextCommand, edit_order,  # noqa: E402
                                 edit_positions, edit_text, history_fits)
from posviz.models.backend import TokenSequence  # noqa: E402
from posviz.models.builtin.backend import BuiltinBackend  # noqa: E402
from posviz.models.config import ModelConfig, Positions  # noqa: E402

TEXTS = ("the cat sat on the mat",
         "a b",
         "positions break the symmetry",
         "one two three four five six seven eight nine ten eleven twelve",
         "attention is all you need , or is it ? the order of words matters here a lot",
         "x")
STEPS_PER_SEED = 700
SEEDS = (0, 1, 2)


class PinnedBackend(BuiltinBackend):
    """The built-in model with [CLS] ... [SEP] around the words, pinned like a BERT's."""

    def tokenize(self, text):
        seq = super().tokenize(text)
        tokens = ("[CLS]",) + seq.tokens + ("[SEP]",)
        return TokenSequence(tokens, tokens, (True,) + seq.pinned + (True,))


_BACKENDS: dict = {}


def backend(kind: str, max_len: int | None):
    """A small built-in model: learned positions when max_len is given (that many)."""
    key = (kind, max_len)
    if key not in _BACKENDS:
        config = ModelConfig(layers=1, heads=2, d_model=8,
                             pe="learned" if max_len else "sinusoidal", max_len=max_len or 1024)
        _BACKENDS[key] = (PinnedBackend if kind == "pinned" else BuiltinBackend)(config)
    return _BACKENDS[key]


MODELS = [("plain", 8), ("plain", 12), ("plain", 20), ("plain", None), ("pinned", 10),
          ("pinned", 16)]


def state(session) -> tuple:
    return (session.text, session.seq, tuple(session.order.tolist()), session.positions)


class Walk:
    """A session and its undo stack, edited the way the window edits them."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)
        self.session = Session(backend("plain", 12), text=TEXTS[0])
        self.stack = QUndoStack()
        self.session.subscribe(self.on_event)
        self.mark_base()
        self.counts = dict.fromkeys(("text", "positions", "order", "undo", "redo", "model",
                                     "refused", "cleared", "merged"), 0)
        self.deepest = 0                 # the most steps the stack held

    def mark_base(self) -> None:
        """Where the history begins (the stack was cleared): the replay starts here."""
        s = self.session
        self.base = (s.text, s.seq, s.order.copy(), s.positions)

    def on_event(self, event) -> None:
        # what the window does when a new model runs
        if isinstance(event, ModelChanged):
            if event.tokens_changed or not history_fits(self.stack,
                                                        self.session.backend.max_positions):
                self.stack.clear()
                self.counts["cleared"] += 1
                self.mark_base()

    def push(self, step) -> None:
        if step is not None:
            count = self.stack.count()
            self.stack.push(step)
            self.deepest = max(self.deepest, self.stack.count())
            self.counts["merged"] += self.stack.count() <= count

    def step(self) -> str:
        s, rng = self.session, self.rng
        kind = rng.choice(["text", "positions", "order", "order", "undo", "undo", "redo",
                           "model"], p=[.15, .15, .1, .1, .17, .1, .18, .05])
        try:
            if kind == "text":
                text = TEXTS[rng.integers(len(TEXTS))]
                self.push(edit_text(s, text, truncate=bool(rng.integers(2))))
            elif kind == "positions":
                mode = s.positions.mode if rng.random() < .8 else str(rng.choice(["slot",
                                                                                  "token"]))
                self.push(edit_positions(s, Positions(mode, int(rng.integers(0, 14)))))
            elif kind == "order":
                n = len(s.seq)
                method = str(rng.choice(["move", "swap", "shuffle", "reverse", "rotate",
                                         "reset"]))
                args = {"move": (int(rng.integers(n)), int(rng.integers(n))),
                        "swap": (int(rng.integers(n)), int(rng.integers(n))),
                        "shuffle": (rng,), "rotate": (int(rng.integers(-3, 4)),)}
                self.push(edit_order(s, method, *args.get(method, ())))
            elif kind == "undo":
                for _ in range(int(rng.integers(1, 4))):      # an undo chain
                    self.stack.undo()
            elif kind == "redo":
                for _ in range(int(rng.integers(1, 3))):
                    self.stack.redo()
            else:
                model = MODELS[rng.integers(len(MODELS))]
                b = backend(*model)
                s.set_model(ModelSpec.builtin(b.config) if model[0] == "plain"
                            else ModelSpec.pretrained(f"pinned-{model[1]}", "pinned"), b)
        except PosvizInputError:
            self.counts["refused"] += 1          # refused cleanly: checked by the replay
        self.counts[kind] += 1
        return str(kind)

    def replay(self) -> Session:
        """A fresh session at the history's beginning, then every done command's redo."""
        text, seq, order, positions = self.base
        fresh = Session(self.session.backend, text=text, positions=positions,
                        spec=self.session.spec)
        if fresh.seq != seq:                       # the base text had been cut to fit
            fresh.set_text(text, at_most=len(seq))
        fresh.set_order(order)
        for i in range(self.stack.index()):
            command = self.stack.command(i)
            live, command.session = command.session, fresh
            try:
                command.redo()
            finally:
                command.session = live
        return fresh


@pytest.mark.parametrize("seed", SEEDS)
def test_undo_and_redo_stay_in_step_with_the_document(qapp, seed):
    walk = Walk(seed)
    for number in range(STEPS_PER_SEED):
        kind = walk.step()
        s = walk.session
        assert len(s.order) == len(s.seq)
        room = s.room()
        assert room is None or len(s.seq) <= room, f"step {number} ({kind})"
        assert state(walk.replay()) == state(s), f"step {number} ({kind})"
    # the walk went everywhere it should
    c = walk.counts
    assert sum(c[k] for k in ("text", "positions", "order", "undo", "redo", "model")) \
        == STEPS_PER_SEED
    assert min(c.values()) > 0, c
    assert walk.deepest >= 10


def test_undoing_a_text_edit_after_a_higher_offset_undoes_the_offset_first(qapp):
    """The error seen in the window: edit the text, raise the offset, undo, undo."""
    s = Session(backend("plain", 12), text="one two three four five six seven eight nine")
    stack = QUndoStack()
    stack.push(edit_order(s, "reverse"))
    long_order = s.order.tolist()
    stack.push(edit_text(s, "a b c"))
    stack.push(edit_positions(s, Positions("slot", 6)))  # 9 tokens from 6 would need 15
    stack.undo()
    assert s.positions.offset == 0 and s.tokens == ("a", "b", "c")
    stack.undo()
    assert len(s.seq) == 9 and s.order.tolist() == long_order
    stack.undo()
    assert s.order.tolist() == list(range(9))
    for _ in range(3):
        stack.redo()
    assert s.tokens == ("a", "b", "c") and s.positions.offset == 6
    assert stack.index() == stack.count() == 3


def test_offset_steps_in_a_row_are_one_undo_step(qapp):
    s = Session(backend("plain", None), text="a b c")
    stack = QUndoStack()
    for offset in (1, 2, 3):
        stack.push(edit_positions(s, Positions("slot", offset)))
    assert stack.count() == 1 and isinstance(stack.command(0), PositionsCommand)
    stack.undo()
    assert s.positions.offset == 0
    stack.redo()
    stack.push(edit_positions(s, Positions("token", 3)))     # a mode change: its own step
    assert stack.count() == 2
    stack.push(edit_positions(s, Positions("token", 0)))
    stack.push(edit_positions(s, Positions("token", 3)))     # back where it started
    assert stack.count() == 2


def test_a_text_cut_to_fit_comes_back_cut_the_same_after_a_roomier_model(qapp):
    long = "one two three four five six seven eight nine ten eleven twelve"
    s = Session(backend("plain", 8), text="a b")
    stack = QUndoStack()
    stack.push(edit_text(s, long, truncate=True))
    assert len(s.seq) == 8
    stack.push(edit_order(s, "reverse"))
    stack.push(edit_text(s, "a b c"))
    roomy = backend("plain", 20)
    s.set_model(ModelSpec.builtin(roomy.config), roomy)     # the same tokens for "a b c"
    assert history_fits(stack, 20)
    stack.undo()
    assert isinstance(stack.command(0), TextCommand) and len(s.seq) == 8   # not 12
    assert s.order.tolist() == list(range(8))[::-1]
    stack.undo()
    stack.undo()
    stack.redo()
    stack.redo()
    assert s.order.tolist() == list(range(8))[::-1]
    assert not history_fits(stack, 6)      # a model with 6 positions could not undo it
