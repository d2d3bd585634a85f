"""Each encoding declares whether a common shift of every position id leaves a model
unchanged (PositionalEncoding.shift_invariant), the declaration holds in the built-in
model, and the noise floor (analysis.floor) reads it, not the encoding's name or where
it acts."""
from __future__ import annotations

import numpy as np
import pytest

from posviz.analysis.engine import Engine
from posviz.analysis.floor import shift_invariant
from posviz.models.builtin.backend import BuiltinBackend
from posviz.models.config import ModelConfig, Positions
from posviz.models.encodings import ENCODINGS
from posviz.models.request import Request

TEXT = "the cat sat on the mat because the mat was warm"


def largest_change(a: np.ndarray, b: np.ndarray) -> float:
    """max over layers of ‖a − b‖_F / ‖b‖_F of hidden states (L+1, n, d)."""
    flat = lambda x: x.astype(np.float64).reshape(len(x), -1)          # noqa: E731
    return float((np.linalg.norm(flat(a) - flat(b), axis=1)
                  / np.linalg.norm(flat(b), axis=1)).max())


@pytest.mark.parametrize("kind", sorted(ENCODINGS))
def test_the_declaration_holds_in_the_built_in_model(kind):
    """float64, both masks: a shift by 37 moves a shift-invariant model's hidden states
    by rounding alone, and any other's by far more."""
    for mask in ("bidirectional", "causal"):
        backend = BuiltinBackend(ModelConfig(pe=kind, mask=mask, dtype="float64"))
        seq = backend.tokenize(TEXT)
        ids = np.arange(len(seq))
        near = backend.run(seq, Request(ids, ids)).hidden                          # (L+1, n, d)
        far = backend.run(seq, Request(ids, ids + 37)).hidden
        change = largest_change(far, near)
        if ENCODINGS[kind].shift_invariant:
            assert change < 1e-12, (kind, mask, change)
        else:
            assert change > 1e-3, (kind, mask, change)


class Counting(BuiltinBackend):
    """Counts its forwards."""

    runs = 0

    def run(self, *args, **kwargs):
        Counting.runs += 1
        return super().run(*args, **kwargs)


def test_the_floor_reads_the_declaration(monkeypatch):
    rope = Counting(ModelConfig(pe="rope"))
    learned = Counting(ModelConfig(pe="learned"))
    assert shift_invariant(rope) and not shift_invariant(learned)
    # a rotation (or a bias) that a shift changes, and a table that a shift does not:
    # the floor follows the declaration, whatever the encoding is called or where it acts
    monkeypatch.setattr(ENCODINGS["rope"], "shift_invariant", False)
    monkeypatch.setattr(ENCODINGS["learned"], "shift_invariant", True)
    assert not shift_invariant(rope) and shift_invariant(learned)
    seq = rope.tokenize(TEXT)
    for backend, forwards in ((rope, 1), (learned, 2)):   # the shifted run, or none
        Counting.runs = 0
        Engine(backend).reference(seq, Positions())
        assert Counting.runs == forwards
