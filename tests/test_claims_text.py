"""The sentences posviz says about its numbers, against the numbers: the README, the
tooltips, the symmetry figure's legend and the encodings' own descriptions."""
from pathlib import Path

import numpy as np
import pytest

import posviz
from posviz.models.encodings import KINDS, learned
from posviz.models.options import OPTIONS

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
TEXT = "the cat sat on the mat because it was warm"
REVERSED = list(range(9, -1, -1))


def flat(text: str) -> str:
    return " ".join(text.split())


def test_causal_attends_to_itself_and_the_tokens_before_it():
    assert "attends to itself and the tokens before it" in OPTIONS["mask"].tip
    m = posviz.load(pe="none", mask="causal")
    attention = m.engine.reference(m.backend.tokenize(TEXT), posviz.models.config.Positions()
                                   ).attention[0]                # (h, n, n)
    assert (np.diagonal(attention, axis1=1, axis2=2) > 0).all()   # itself
    assert np.triu(attention, 1).max() == 0                      # nothing after it


@pytest.mark.parametrize("kind", KINDS)
def test_travelling_positions_restore_equivariance_only_with_a_bidirectional_mask(kind):
    assert "with a bidirectional mask every encoding is equivariant again" in \
        OPTIONS["mode"].tip
    assert ("with a causal mask the mask still tells slots apart (after a reversal the "
            "hidden states change by 0.2–0.6 at layers 1–4, whatever the encoding)"
            in flat(README))
    both = {mask: posviz.load(pe=kind, mask=mask, dtype="float64").compare(
        TEXT, order=REVERSED, positions="token").layers
        for mask in ("bidirectional", "causal")}
    assert max(row["hidden_equivariance"] for row in both["bidirectional"]) < 1e-12
    causal = [row["hidden_equivariance"] for row in both["causal"][1:]]
    assert 0.2 <= min(causal) and max(causal) <= 0.6


def test_nope_bidirectional_equivariance_curves_on_the_floor_the_final_slot_not():
    assert "the output at the final slot changes (above 1 after a reversal)" in flat(README)
    rows = posviz.load(pe="none", dtype="float64").compare(TEXT, order=REVERSED).layers
    for row in rows:
        assert row["hidden_equivariance"] < 1e-12 and row["pooled_change"] < 1e-12
        assert row["last_token_change"] > 1


def test_the_random_learned_table_is_not_smooth_as_a_trained_one_can_be():
    assert "behaves like a trained table" not in learned.__doc__
    table = learned.LearnedEncoding(64, 256).table.double().numpy()        # (256, 64)
    a, b = table[:-1], table[1:]
    cosine = (a * b).sum(1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)
    assert abs(cosine.mean()) < 0.05 and "cosine near 0" in learned.__doc__


def test_the_symmetry_legend_says_which_curves_test_which_symmetry():
    pytest.importorskip("PySide6")
    from posviz.gui.plots import layers
    labels = layers.CURVE_LABELS
    assert labels["hidden_equivariance"].endswith("(equivar.)")
    assert labels["attention_equivariance"].endswith("(equivar.)")
    assert labels["last_token_change"].endswith("(invariance)")
    assert labels["pooled_change"].endswith("(invariance)")
    import inspect
    source = inspect.getsource(layers)
    assert "exactly equivariant" not in source
    assert "cannot be told from rounding" in source and "is rounding" not in source


def test_rope_s_profile_is_one_pair_under_roformer_s_bound():
    from posviz.models.encodings import make_encoding
    profile = make_encoding("rope", d_model=64, n_heads=1).profile(8, False)
    assert "one pair; RoFormer §3.4.3 bounds it" in profile.quantity
    near, far = np.abs(profile.values[0, 8 + 1:8 + 3]), np.abs(profile.values[0, -2:])
    assert far.mean() < near.mean()          # this pair's score does fall


def test_chi2023_names_every_author():
    from posviz.analysis.experiments.papers import chi2023
    assert chi2023().citation.startswith("Chi, Fan, Chen, Rudnicky, Ramadge (2023)")
