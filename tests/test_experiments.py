"""Sweeps and swap sensitivity against the symmetry argument (no Qt)."""
import numpy as np
import pytest
from conftest import CountingBackend

from posviz.analysis.engine import Engine
from posviz.analysis.experiments.runs import ALL_AT_MOST, make_orders, run_orders
from posviz.analysis.experiments.sweep import sweep
from posviz.analysis.experiments.texts import example_texts, read_texts
from posviz.analysis.symmetry import METRICS
from posviz.errors import Cancelled, PosvizInputError
from posviz.models.backend import TokenSequence
from posviz.models.builtin.backend import BuiltinBackend
from posviz.models.config import ModelConfig, Positions

TEXT = "the cat sat on the mat because it was warm"
SMALL = dict(layers=4, d_model=32, heads=4)


def engine(**config) -> Engine:
    return Engine(BuiltinBackend(ModelConfig(**{**SMALL, **config})))


def tokens(pinned) -> TokenSequence:
    """A sequence whose tokens are pinned as ``pinned`` says."""
    words = tuple(f"w{i}" for i in range(len(pinned)))
    return TokenSequence(words, words, tuple(pinned))


def pin_ends(seq: TokenSequence) -> TokenSequence:
    """The first and last tokens pinned, like [CLS] ... [SEP]."""
    return TokenSequence(seq.tokens, seq.ids, (True,) + (False,) * (len(seq) - 2) + (True,))


class PinningBackend(BuiltinBackend):
    def tokenize(self, text):
        return pin_ends(super().tokenize(text))


class CountingPinningBackend(CountingBackend):
    def tokenize(self, text):
        return pin_ends(super().tokenize(text))


@pytest.mark.parametrize("kind", ["random", "swap", "prefix", "reverse", "all"])
def test_orders_are_permutations_that_keep_pinned_tokens(kind):
    pinned = (True, False, False, False, False, True)
    orders = make_orders(kind, tokens(pinned), 5, np.random.default_rng(0))
    assert orders
    for order in orders:
        assert sorted(order.tolist()) == list(range(6))
        assert order[0] == 0 and order[5] == 5


def test_orders_of_each_kind():
    free = tokens((False,) * 5)
    rng = np.random.default_rng(1)
    assert [o.tolist() for o in make_orders("reverse", free, 9, rng)] == [[4, 3, 2, 1, 0]]
    swaps = make_orders("swap", free, 9, rng)
    assert len(swaps) == 4 and all(np.sum(o != np.arange(5)) == 2 for o in swaps)
    assert all(o[4] == 4 for o in make_orders("prefix", free, 20, rng))
    every = make_orders("all", free, 1, rng)
    assert len({tuple(o) for o in every}) == len(every) == 119       # 5! without identity
    assert len(make_orders("random", free, 7, rng)) == 7


@pytest.mark.parametrize("kind, count, pinned, words", [
    ("shuffle", 3, (False,) * 4, "one of"),
    ("random", 0, (False,) * 4, "at least 1"),
    ("all", 1, (False,) * (ALL_AT_MOST + 1), "at most 7"),
    ("random", 3, (False,), "at least 2"),
    ("prefix", 3, (False, False), "at least 2"),
])
def test_bad_sweeps_are_refused_in_one_line(kind, count, pinned, words):
    with pytest.raises(PosvizInputError, match=words) as caught:
        make_orders(kind, tokens(pinned), count, np.random.default_rng(0))
    assert "\n" not in str(caught.value)


def test_run_orders_runs_the_reference_once():
    backend = CountingBackend(ModelConfig(**SMALL))
    seq = backend.tokenize(TEXT)
    orders = make_orders("random", seq, 5, np.random.default_rng(0))
    comparisons = list(run_orders(Engine(backend), seq, orders, Positions()))
    identity = list(range(len(seq)))
    assert backend.runs.count(identity) == 1
    assert len(backend.runs) == 6 and len(comparisons) == 5
    assert [c.order.tolist() for c in comparisons] == [o.tolist() for o in orders]


def test_a_fixed_seed_gives_the_same_sweep_and_another_seed_another():
    one = sweep(engine(pe="rope"), [TEXT, "a b c d e"], "random", 6, seed=3).to_dict()
    again = sweep(engine(pe="rope"), [TEXT, "a b c d e"], "random", 6, seed=3).to_dict()
    other = sweep(engine(pe="rope"), [TEXT, "a b c d e"], "random", 6, seed=4).to_dict()
    assert one == again
    assert one != other
    assert one["runs"] == 12 and one["texts"] == [TEXT, "a b c d e"]
    row = one["layers"][2]
    assert set(row) == {"layer", *METRICS}
    assert row["hidden_equivariance"]["p10"] <= row["hidden_equivariance"]["median"] \
        <= row["hidden_equivariance"]["p90"]
    assert one["layers"][0]["attention_equivariance"]["median"] is None   # no attention


def test_nope_bidirectional_stays_equivariant_at_the_noise_floor():
    result = sweep(engine(pe="none"), [TEXT, "colorless green ideas sleep furiously"],
                   "random", 16, seed=0)
    p90 = result.bands["hidden_equivariance"].p90
    assert np.all(p90 <= result.floor)
    assert np.all(result.bands["pooled_change"].p90 <= result.floor)   # pooled: invariant


def test_nope_causal_prefix_leaks_position_from_the_second_layer():
    """Reordering the prefix leaves the last token's first block output alone (it
    attends to the same set), but from layer 2 the prefix tokens saw different prefixes."""
    result = sweep(engine(pe="none", mask="causal"), [TEXT], "prefix", 16, seed=0)
    last = result.bands["last_token_change"]
    assert np.all(last.p90[:2] <= result.floor)
    assert np.all(last.p10[2:] > 100 * result.floor)


def test_pinned_tokens_keep_their_slots_in_a_sweep():
    backend = CountingPinningBackend(ModelConfig(**SMALL))
    sweep(Engine(backend), [TEXT], "random", 8, seed=0)
    assert all(run[0] == 0 and run[-1] == 9 for run in backend.runs)


def test_progress_counts_every_run_and_cancel_stops():
    told, runner = [], engine()
    # 0 told once the original order and the floor are run: a run's pace is its own
    sweep(runner, [TEXT, "a b c"], "reverse", 1,
          progress=lambda d, t: told.append((d, t, runner._reference is not None)))
    assert told == [(0, 2, True), (1, 2, True), (2, 2, True)]
    told = []
    with pytest.raises(Cancelled):
        sweep(engine(), [TEXT], "random", 50, should_stop=lambda: len(told) > 2,
              progress=lambda d, t: told.append((d, t)))


def test_swap_map_is_symmetric_with_a_zero_diagonal():
    result = sweep(engine(pe="sinusoidal"), ["the dog bit the man today"], "swap", 1)
    (pairs,) = result.pairs
    change = pairs.change
    assert np.array_equal(change, change.T)
    assert np.all(np.diag(change) == 0)
    off = change[~np.eye(len(change), dtype=bool)]
    assert np.all(off > 100 * result.floor)             # absolute positions: every swap shows
    # each token's mean over its partners holding another token: "the" (0, 3) leaves
    # out its twin, whose swap leaves the input as it was
    other = np.array([[a != b for b in pairs.tokens] for a in pairs.tokens])
    assert other.sum() < other.size - len(other)                    # a twin is there
    assert np.allclose(pairs.sensitivity, (change * other).sum(axis=1) / other.sum(axis=1))
    assert result.runs == 5                             # the band: the adjacent swaps only
    assert result.to_dict()["pairs"][0]["layer"] == 4


def test_swap_map_of_nope_bidirectional_is_at_the_floor_and_skips_pinned():
    backend = PinningBackend(ModelConfig(**SMALL, pe="none"))
    result = sweep(Engine(backend), ["the dog bit the man today"], "swap", 1, layer=2)
    (pairs,) = result.pairs
    assert pairs.layer == 2
    assert np.all(pairs.change <= result.floor)
    assert np.all(pairs.change[0] == 0) and np.all(pairs.change[:, -1] == 0)
    assert pairs.sensitivity[0] == 0


def test_texts_files(tmp_path):
    path = tmp_path / "texts.txt"
    path.write_text("# a comment\n\nthe cat\n  a dog  \n", encoding="utf-8")
    assert read_texts(path) == ["the cat", "a dog"]
    path.write_text("# only a comment\n\n", encoding="utf-8")
    with pytest.raises(PosvizInputError, match="no texts"):
        read_texts(path)
    assert "the dog bit the man" in example_texts()


def test_a_text_too_short_to_reorder_is_named():
    with pytest.raises(PosvizInputError, match=r"text 2 \('hello'\): a random sweep needs"):
        sweep(engine(), [TEXT, "hello"], "random", 3)
