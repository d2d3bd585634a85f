"""The session as the one source of truth: edits, pinned tokens, the cached reference."""
from __future__ import annotations

import numpy as np
import pytest
from conftest import CountingBackend

from posviz.analysis.engine import Engine
from posviz.document.events import (ModelChanged, OrderChanged, PositionsChanged,
                                    SelectionChanged, TextChanged)
from posviz.document.session import Session
from posviz.document.spec import ModelSpec, Selection
from posviz.errors import PosvizInputError
from posviz.models.backend import TokenSequence, truncate_sequence
from posviz.models.builtin.backend import BuiltinBackend
from posviz.models.config import ModelConfig, Positions


class PinnedBackend(BuiltinBackend):
    """The built-in model with [CLS] ... [SEP] around the words, pinned like a BERT's."""

    def tokenize(self, text):
        seq = super().tokenize(text)
        tokens = ("[CLS]",) + seq.tokens + ("[SEP]",)
        return TokenSequence(tokens, tokens, (True,) + seq.pinned + (True,))


def test_edits_change_the_order_and_notify():
    session = Session(text="a b c d")
    seen = []
    session.subscribe(seen.append)
    session.move(0, 2)
    assert session.current_tokens == ["b", "c", "a", "d"]
    session.swap(0, 3)
    assert session.current_tokens == ["d", "c", "a", "b"]
    session.reverse()
    assert session.current_tokens == ["b", "a", "c", "d"]
    session.rotate(1)
    assert session.current_tokens == ["d", "b", "a", "c"]
    session.reset()
    assert session.order.tolist() == [0, 1, 2, 3]
    assert [type(e) for e in seen] == [OrderChanged] * 5
    session.reset()                                 # no change, no notification
    assert len(seen) == 5
    first, last = seen[0], seen[-1]
    assert first.before.tolist() == [0, 1, 2, 3] and first.after.tolist() == [1, 2, 0, 3]
    assert (first.src, first.dst) == (0, 2)         # a single move names its slots
    assert (seen[1].src, seen[1].dst) == (None, None)
    assert last.after.tolist() == [0, 1, 2, 3]


def test_events_carry_what_changed_and_a_value_held_already_tells_nothing():
    session = Session(text="a b c")
    seen = []
    session.subscribe(seen.append)
    session.set_text("a b c")
    session.set_positions(Positions())
    session.select(Selection())
    session.set_order([0, 1, 2])
    session.set_model(session.spec, session.backend)
    assert seen == []
    session.reverse()
    session.set_text("a b c")                        # the same text keeps the order too
    assert session.order.tolist() == [2, 1, 0] and len(seen) == 1
    session.set_text("x y")
    session.set_positions(Positions("token", 2))
    session.select(Selection(layer=3, head=1))
    spec = ModelSpec.builtin(ModelConfig(pe="rope"))
    session.set_model(spec, BuiltinBackend(spec.config))
    assert [type(e) for e in seen] == [OrderChanged, TextChanged, PositionsChanged,
                                       SelectionChanged, ModelChanged]
    assert seen[1].text == "x y" and seen[2].positions == Positions("token", 2)
    assert seen[3].selection == session.selection == Selection(layer=3, head=1)
    assert seen[4].spec == session.spec == spec
    assert not seen[4].tokens_changed                 # word tokens are the same: order kept


def test_a_model_with_other_tokens_says_so_and_resets_the_order():
    session = Session(text="a b c")
    session.reverse()
    seen = []
    session.subscribe(seen.append)
    session.set_model(ModelSpec.pretrained("pinned"), PinnedBackend())
    assert seen[-1].tokens_changed and session.order.tolist() == list(range(len(session.seq)))


def test_a_spec_label_does_not_make_another_model():
    assert ModelSpec.pretrained("/models/bert", "BERT") == ModelSpec.pretrained("/models/bert")
    assert ModelSpec.pretrained("/models/bert") != ModelSpec.pretrained("/models/gpt2")


def test_the_spec_defaults_to_the_builtin_backends_config():
    config = ModelConfig(layers=2)
    session = Session(BuiltinBackend(config), text="a b")
    assert session.spec == ModelSpec.builtin(config) and session.spec.is_builtin
    named = Session(PinnedBackend(), text="a", spec=ModelSpec.pretrained("bert", "BERT"))
    assert named.spec.name == "BERT"


def test_a_refused_model_changes_nothing():
    session = Session(text="a b c d e f g h")
    seen = []
    session.subscribe(seen.append)
    spec = ModelSpec.builtin(ModelConfig(pe="learned", max_len=4))
    old = session.spec, session.backend
    with pytest.raises(PosvizInputError, match="positions"):
        session.set_model(spec, BuiltinBackend(spec.config))
    assert (session.spec, session.backend) == old and seen == []


def test_shuffle_is_a_permutation():
    session = Session(text="one two three four five six")
    session.shuffle(np.random.default_rng(1))
    assert sorted(session.order.tolist()) == list(range(6))


def test_bad_edits_change_nothing():
    session = Session(text="a b c")
    session.move(0, 1)
    before = session.order.copy()
    for bad in (lambda: session.set_text("   "), lambda: session.move(0, 7),
                lambda: session.set_order([0, 0, 1]), lambda: session.set_positions(
                    Positions("slot", -1))):
        with pytest.raises(PosvizInputError):
            bad()
        assert session.order.tolist() == before.tolist() and session.text == "a b c"


def test_pinned_tokens_keep_their_slots():
    session = Session(PinnedBackend(), text="a b c")
    assert session.tokens == ("[CLS]", "a", "b", "c", "[SEP]")
    session.reverse()
    assert session.current_tokens == ["[CLS]", "c", "b", "a", "[SEP]"]
    session.rotate(1)
    assert session.current_tokens[0] == "[CLS]" and session.current_tokens[-1] == "[SEP]"
    for _ in range(5):
        session.shuffle()
        assert session.current_tokens[0] == "[CLS]" and session.current_tokens[-1] == "[SEP]"
    with pytest.raises(PosvizInputError, match="special tokens"):
        session.move(0, 2)
    assert session.movable_slots().tolist() == [False, True, True, True, False]
    assert TokenSequence(("a", "b"), ("a", "b"), (True, False)).movable().tolist() == [False, True]


def test_the_reference_run_is_cached():
    backend = CountingBackend(ModelConfig(pe="rope"))
    session = Session(backend, text="a b c d")
    engine = Engine(backend)
    for order in ([1, 0, 2, 3], [3, 2, 1, 0], [0, 1, 3, 2]):
        engine.evaluate(session.seq, order, session.positions)
    # the reference, and once more at shifted ids to measure RoPE's floor (analysis.floor)
    assert backend.runs == [[0, 1, 2, 3], [0, 1, 2, 3], [1, 0, 2, 3], [3, 2, 1, 0],
                            [0, 1, 3, 2]]
    engine.evaluate(session.seq, [0, 1, 2, 3], session.positions)   # the reference itself
    assert len(backend.runs) == 5
    engine.evaluate(session.seq, [1, 0, 2, 3], Positions("slot", 3))  # new reference
    assert backend.runs[-2:] == [[0, 1, 2, 3], [1, 0, 2, 3]]


def test_position_ids():
    order = np.array([2, 0, 1])
    assert Positions("slot", 5).ids(order).tolist() == [5, 6, 7]
    assert Positions("token", 5).ids(order).tolist() == [7, 5, 6]


def test_too_long_text_is_refused_or_truncated():
    backend = PinnedBackend(ModelConfig(pe="learned", max_len=6))
    session = Session(backend, text="a b")
    with pytest.raises(PosvizInputError, match="need 7 positions"):
        session.set_text("a b c d e")
    assert session.tokens == ("[CLS]", "a", "b", "[SEP]")
    session.set_text("a b c d e", truncate=True)
    assert session.tokens == ("[CLS]", "a", "b", "c", "d", "[SEP]")


def test_truncate_without_pinned_end():
    seq = TokenSequence(("a", "b", "c"), ("a", "b", "c"), (False,) * 3)
    assert truncate_sequence(seq, 2).tokens == ("a", "b")
    assert truncate_sequence(seq, None) is seq


def test_switching_model_keeps_the_order_when_tokens_agree():
    session = Session(text="a b c")
    session.reverse()
    session.set_model(ModelSpec.builtin(ModelConfig(pe="alibi")),
                      BuiltinBackend(ModelConfig(pe="alibi")))
    assert session.current_tokens == ["c", "b", "a"]
    session.set_model(ModelSpec.pretrained("pinned"), PinnedBackend())
    assert session.order.tolist() == list(range(5))


def test_a_superseded_evaluation_stops_between_layers():
    from posviz.errors import Cancelled
    backend = BuiltinBackend(ModelConfig(layers=6))
    seq = backend.tokenize("a b c d")
    engine = Engine(backend)
    asked = []

    def stop_after_two():
        asked.append(1)
        return len(asked) > 2

    with pytest.raises(Cancelled):
        engine.evaluate(seq, [3, 2, 1, 0], Positions(), should_stop=stop_after_two)
    assert len(asked) == 3                     # stopped at the third block, not the sixth
    ev = engine.evaluate(seq, [3, 2, 1, 0], Positions(), should_stop=lambda: False)
    assert ev.permuted.n_layers == 6


def test_a_evaluation_superseded_after_its_forward_stops_before_its_comparison():
    """A newer order asked for while the maps are compared (after the forward) need not
    wait for the comparison: the stop is asked again before each layer's gaps."""
    from posviz.errors import Cancelled
    backend = BuiltinBackend(ModelConfig(layers=3))
    seq = backend.tokenize("a b c d")
    engine = Engine(backend)
    engine.reference(seq, Positions())
    forward_done = []
    run = backend.run

    def run_and_note(*args):
        trace = run(*args)
        forward_done.append(True)
        return trace

    backend.run = run_and_note

    def stop_once_the_forward_is_done():
        return bool(forward_done)

    with pytest.raises(Cancelled):
        engine.evaluate(seq, [2, 3, 1, 0], Positions(),
                        should_stop=stop_once_the_forward_is_done)
    assert forward_done
