"""The position probe against what each encoding and mask let a hidden state know."""
import numpy as np
import pytest

from posviz.analysis.engine import Engine
from posviz.analysis.experiments.probe import ProbeLayer, probe, ridge_fit, verdict
from posviz.errors import PosvizInputError
from posviz.models.builtin.backend import BuiltinBackend
from posviz.models.config import ModelConfig

VOCAB = ("the a cat dog sat ran on under mat rug and but it was warm cold big small red "
         "blue").split()


def random_texts(count: int, length: int = 12, seed: int = 0) -> list[str]:
    """Texts of one length whose words do not depend on their place: any position a
    probe finds comes from the model, not from the words (or from the text's length)."""
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(VOCAB, length)) for _ in range(count)]


def engine(pe: str, mask: str = "bidirectional") -> Engine:
    return Engine(BuiltinBackend(ModelConfig(pe=pe, mask=mask)))


def test_ridge_without_penalty_is_least_squares():
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(50, 4)), rng.normal(size=50)
    w, b = ridge_fit(X, y, 1e-12)
    expected = np.linalg.lstsq(np.c_[X, np.ones(50)], y, rcond=None)[0]
    assert np.allclose(np.r_[w, b], expected)
    w_wide, _ = ridge_fit(X[:3], y[:3], 1e-12)          # fewer tokens than features
    assert np.allclose(X[:3] @ w_wide + _, y[:3])


@pytest.mark.parametrize("pe", ["sinusoidal", "learned"])
def test_absolute_positions_are_read_off_layer_zero(pe):
    result = probe(engine(pe), random_texts(40))
    first = result.layers[0]
    assert first.r2 > 0.99
    assert first.mae < 0.05 * first.chance_mae


def test_nope_bidirectional_is_at_chance_at_every_layer():
    result = probe(engine("none"), random_texts(80), features="quadratic")
    for row in result.layers:
        assert row.r2 < 0.05
        assert row.mae > 0.95 * row.chance_mae


def test_nope_causal_leaks_position_from_the_first_block():
    texts = random_texts(150)
    quadratic = probe(engine("none", "causal"), texts, features="quadratic")
    linear = probe(engine("none", "causal"), texts)
    assert quadratic.layers[0].mae > 0.95 * quadratic.layers[0].chance_mae   # embeddings only
    for row, line in zip(quadratic.layers[1:], linear.layers[1:]):
        assert row.r2 > 0.15
        assert row.mae < 0.9 * row.chance_mae
        assert line.mae < line.chance_mae


def test_the_probe_needs_texts_to_hold_out():
    with pytest.raises(PosvizInputError, match="at least 2 texts"):
        probe(engine("none"), ["one text only"])
    with pytest.raises(PosvizInputError, match="features"):
        probe(engine("none"), ["a b", "c d"], features="cubic")


def test_two_texts_are_enough_to_hold_one_out():
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result = probe(engine("learned"), ["the dog bit the man", "the man bit the dog"])
    assert result.folds == 2
    assert all(np.isfinite([row.r2, row.mae, row.chance_mae]).all() for row in result.layers)


def test_the_default_probe_has_enough_samples_and_reads_sinusoidal_positions(capsys):
    import json

    from posviz.cli import main
    assert main(["probe", "--pe", "sinusoidal", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["layers"][0]["r2"] >= 0.9                  # the position is in the input
    assert data["tokens"] >= data["tokens_needed"] == 10 * data["feature_count"] == 640
    assert not data["too_few_samples"] and data["note"] == "" and data["generated_texts"]


def test_a_probe_with_fewer_samples_than_features_says_so(capsys, tmp_path):
    from posviz.cli import main
    texts = tmp_path / "few.txt"
    texts.write_text("\n".join(random_texts(6)))
    assert main(["probe", "--pe", "sinusoidal", "--texts", str(texts)]) == 0
    out = capsys.readouterr().out
    assert "too few samples: 72 tokens for 64 features" in out and "held out" in out
    # the command line's verdict is the sentence under the GUI's plot, for these numbers
    said = probe(engine("sinusoidal"), random_texts(6)).verdict
    assert out.rstrip().endswith("\n" + said)
    result = probe(engine("sinusoidal"), random_texts(6), features="quadratic")
    assert result.too_few and result.to_dict()["tokens_needed"] == 1280


def test_the_probe_counts_its_texts_then_its_fits_and_says_each_stage():
    told = []
    texts = random_texts(4, 6)
    result = probe(engine("sinusoidal"), texts, folds=2,
                   progress=lambda done, total: told.append((done, total)),
                   say=lambda stage: told.append(stage))
    layers = len(result.layers)
    assert told == (["running the texts"]
                    + [(k, 4) for k in range(1, 5)]
                    + ["fitting the probe per layer, 2 folds each"]  # counted from 0: a
                    + [(k, 2 * layers) for k in range(0, 2 * layers + 1)])  # fit took 20 s


def test_the_mlp_probe_counts_each_fold_of_each_layer_it_fits():
    """An MLP probe's layer took 4-5 s, its fits counted by layer: each fold is told."""
    counts = []
    result = probe(engine("sinusoidal"), random_texts(6, 6), folds=3, features="mlp",
                   progress=lambda done, total: counts.append((done, total)))
    fits = 3 * len(result.layers)
    assert counts[-(fits + 1):] == [(k, fits) for k in range(fits + 1)]


def layers(mae, chance):
    return tuple(ProbeLayer(k, 0.0, m, c) for k, (m, c) in enumerate(zip(mae, chance)))


def test_the_verdict_says_no_layer_beats_chance_when_none_does():
    """NoPE, causal, the example sentences with squares: errors 3.20 to 3.57 over a
    chance of 3.15 were called "lower error than chance"."""
    said = verdict(layers([3.2, 3.3, 3.25, 3.4, 3.57], [3.15] * 5), "quadratic")
    assert said.startswith("At no layer is the error below chance (error 3.20–3.57 against "
                           "chance 3.15 positions)")
    assert said.endswith("a held-out fit reads position linearly from the hidden state "
                         "and its squares no better than guessing.")
    assert "better than guessing" not in said.replace("no better than guessing", "")


def test_the_verdict_names_the_layers_below_chance_and_by_how_much():
    said = verdict(layers([3.2, 2.0, 2.5, 3.4, 3.5], [3.15] * 5))
    assert "below chance at layers 1–2 only" in said
    assert said.endswith("reads position linearly better than guessing there and at no "
                         "other layer.")
    assert "layer 1: 2.00 against 3.15; layer 2: 2.50 against 3.15 positions" in said
    assert "not at" not in said and "layer in:" not in said
    every = verdict(layers([1.0, 1.5, 2.0, 2.5, 3.0, 0.5], [3.0, 3.0, 3.0, 3.0, 4.0, 4.0]))
    # more layers than named one by one: the span of the cut against chance, and its best
    assert "at every layer (17–88% below chance, most at layer 5)" in every
    assert verdict(layers([3.2, 2.0, 3.3, 1.0], [3.15] * 4)).count("at layers 1 and 3 only")


def test_the_verdict_carries_the_too_few_samples_caveat_where_it_bears():
    above = verdict(layers([3.2, 3.3], [3.15] * 2), "quadratic", too_few=(78, 128))
    assert "With 78 tokens for 128 features" in above and "too few texts" in above
    # every layer below chance: too few samples do not weaken a reading of position
    below = verdict(layers([1.0, 2.0], [3.15] * 2), "quadratic", too_few=(78, 128))
    assert "too few" not in below


def test_the_result_s_verdict_and_json_say_the_same():
    result = probe(engine("none", "causal"), random_texts(6, 8), features="quadratic")
    assert result.too_few
    assert result.verdict == verdict(result.layers, "quadratic",
                                     (result.tokens, result.width))
    assert result.to_dict()["verdict"] == result.verdict
    reading = [row for row in result.layers if row.reads_position]
    assert ("At no layer" in result.verdict) == (not reading)


def test_a_few_percent_below_chance_is_not_called_reading_position():
    """SmolLM2, RoPE: the input layer's 13.9 against chance's 14.3 (3% below) was counted
    with the layers that read position; it is named apart, as guessing."""
    said = verdict(layers([13.9, 5.0, 1.0], [14.3] * 3))
    assert "more than 10% below chance at layers 1–2 only" in said
    assert said.endswith("At layer in it is below chance by less than 10% (13.90 against "
                         "14.30), which this probe counts as guessing.")
    none = verdict(layers([13.9, 14.0], [14.3] * 2))
    assert none.startswith("At no layer is the error more than 10% below chance")
    assert "no better than guessing" in none and "At layers in–1 it is below" in none
    assert [row.reads_position for row in layers([12.8, 12.9], [14.3] * 2)] == [True, False]


def test_layer_runs_group_consecutive_layers_given_in_any_order():
    from posviz.models.trace import layer_label, layer_runs
    assert layer_runs([4, 0, 2, 1]) == [(0, 2), (4, 4)]
    assert layer_runs([]) == [] and layer_runs([7]) == [(7, 7)]
    assert [layer_label(k) for k in (0, 1, 12)] == ["in", "1", "12"]

