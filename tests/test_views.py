"""views.shown computes what every figure shows, without Qt: once per evaluation, and
what depends on the reference run alone once per reference run."""
import dataclasses
import subprocess
import sys
import types

import numpy as np
import pytest

from posviz.analysis.engine import Engine
from posviz.analysis.symmetry import METRICS
from posviz.document.session import Session
from posviz.errors import Cancelled
from posviz.models.builtin.backend import BuiltinBackend
from posviz.models.config import ModelConfig
from posviz.views.mosaic import (MosaicGrid, MosaicLook, colour, label_step, make_mosaic,
                                 mosaic_grid, mosaic_image, recoloured, wrap_image)
from posviz.views.pooling import MOSAIC_TILE
from posviz.views.shown import (Shown, branch_norms, build_views, change_bars, clip_for_log,
                                head_maps)

TEXT = "the cat sat on the mat because it was warm"
# Two made-up colour tables: what the GUI builds with pyqtgraph, as 0xAARRGGBB.
GREYS = (0xFF000000 | np.arange(256, dtype=np.uint32) * 0x010101).astype(np.uint32)
REDS = (0xFF000000 | np.arange(256, dtype=np.uint32) << 16).astype(np.uint32)


def session(text=TEXT, **config):
    s = Session(BuiltinBackend(ModelConfig(**config)), text)
    s.reverse()
    return s


def evaluate(s, engine=None):
    return (engine or Engine(s.backend)).evaluate(s.seq, s.order, s.positions)


def test_core_views_import_no_qt():
    code = ("import sys, posviz.views.shown; "
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('PySide6', 'pyqtgraph', 'shiboken6')]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_views_hold_the_cores_numbers():
    ev = evaluate(session())
    look = MosaicLook("difference", (-0.3, 0.3), GREYS)
    views = build_views(ev, look)
    c = ev.comparison
    np.testing.assert_array_equal(views.token_bars,
                                  change_bars(c.token_change[-1], c.floor))
    assert views.token_bars.shape == (len(ev.order),)
    for metric in METRICS:
        np.testing.assert_array_equal(views.symmetry[metric], c.metric(metric))
        np.testing.assert_array_equal(views.symmetry_curves[metric],
                                      clip_for_log(c.metric(metric), c.floor,
                                                   views.zero_level))
        drawn = c.metric(metric)[c.metric(metric) > 0]
        assert views.zero_level <= c.floor / 10 and (drawn > views.zero_level).all()
    assert (views.symmetry["noise_floor"] == c.floor).all()
    assert views.symmetry_note.startswith("The hidden states")
    for key, run in (("residual_original", ev.reference), ("residual", ev.run)):
        # made a layer at a time: the same numbers as the whole (L+1, n, d) at once
        np.testing.assert_array_equal(views.branch_norms[key],
                                      np.linalg.norm(run.hidden, axis=2).mean(axis=1))
    assert list(views.branch_norms) == [
        "residual", "attention_branch", "mlp_branch",
        "residual_original", "attention_branch_original", "mlp_branch_original"]
    assert views.missing_branches == ()
    tiles = ev.comparison.attention_aligned - ev.reference.attention       # (L, h, n, n)
    np.testing.assert_array_equal(views.mosaic.tiles, tiles)
    np.testing.assert_array_equal(views.mosaic.argb,
                                  mosaic_image(colour(tiles, GREYS, (-0.3, 0.3)), fill=0))
    assert views.mosaic.look == look and views.mosaic.block == 1


def test_no_look_no_mosaic():
    assert build_views(evaluate(session()), None).mosaic is None


def test_change_bars_run_from_the_noise_floor_to_one():
    floor = 1e-6
    np.testing.assert_array_equal(change_bars([floor / 10, 1.0, np.nan, 2.0], floor),
                                  [0.0, 1.0, 0.0, 1.0])
    assert change_bars([1e-3], floor)[0] == pytest.approx(0.5)


def test_positions_are_computed_once_per_reference_run():
    s = session(pe="sinusoidal")
    engine = Engine(s.backend)
    first = build_views(evaluate(s, engine), None)
    s.swap(0, 1)
    second = build_views(evaluate(s, engine), None)          # same reference run
    assert second.positions is first.positions
    view = first.positions
    assert view.kind == "sinusoidal" and view.built_in
    table = evaluate(s, engine).reference.encodings
    np.testing.assert_array_equal(view.table, table)
    assert view.extent == float(np.abs(table).max())
    unit = table / np.linalg.norm(table, axis=1, keepdims=True)
    np.testing.assert_allclose(view.similarity, unit @ unit.T)
    assert view.reach == 256 and view.profile.distances.tolist() == list(range(-256, 257))
    other = build_views(evaluate(session("a dog ran", pe="sinusoidal")), None)
    assert other.positions is not first.positions


def test_a_model_without_branches_or_a_built_encoding():
    """What the views show of a model that records no branches and whose encoding
    posviz does not build (a real model's, read from its weights instead)."""
    class RealLike:
        def facts(self):
            return types.SimpleNamespace(scheme="rope", family="llama")

        def profile(self, reach):
            return None

        def machinery(self):
            return None

    ev = evaluate(session())
    strip = lambda t: dataclasses.replace(t, attn_out=None, mlp_out=None,  # noqa: E731
                                          encodings=None)
    ev = dataclasses.replace(ev, reference=strip(ev.reference), run=strip(ev.run),
                             backend=RealLike())
    views = build_views(ev, None)
    assert set(views.branch_norms) == {"residual", "residual_original"}
    assert set(views.missing_branches) == {"attention_branch", "mlp_branch"}
    view = views.positions
    assert (view.kind, view.built_in, view.table, view.similarity, view.profile) == \
        ("rope", False, None, None, None)


@pytest.mark.parametrize("pe, rows", [("alibi", ("head 0", "head 1", "head 2", "head 3")),
                                      ("learned", None), ("none", None)])
def test_the_profile_is_the_built_in_encodings(pe, rows):
    view = build_views(evaluate(session(pe=pe, heads=4)), None).positions
    if rows is None:
        assert view.profile is None
    else:
        assert view.profile.rows == rows and view.reach == 256


def test_head_maps_are_one_head_before_and_after():
    ev = evaluate(session())
    maps = head_maps(ev, 2, 3)
    np.testing.assert_array_equal(maps.original, ev.reference.attention[1, 3])
    np.testing.assert_array_equal(maps.aligned, ev.comparison.attention_aligned[1, 3])
    np.testing.assert_array_equal(maps.difference, maps.aligned - maps.original)
    assert maps.largest == float(np.abs(maps.difference).max())


def test_recoloured_mosaic_equals_one_made_in_that_look():
    from posviz.views.pooling import MosaicTiles
    tiles = MosaicTiles.of(evaluate(session()))
    mosaic = make_mosaic(tiles, MosaicLook("difference", (-0.3, 0.3), GREYS))
    look = MosaicLook("difference", (-0.01, 0.01), REDS)
    again = recoloured(mosaic, look)
    made = make_mosaic(tiles, look)
    np.testing.assert_array_equal(again.argb, made.argb)
    assert again.tiles is mosaic.tiles and again.look == look
    assert not np.array_equal(again.argb, mosaic.argb)
    with pytest.raises(ValueError):
        recoloured(mosaic, MosaicLook("original", (0.0, 1.0), GREYS))


def test_a_long_mosaic_is_pooled_as_the_evaluation_runs_and_stops_with_it():
    from posviz.views.pooling import MosaicTiles, pool_signed_max
    words = TEXT.split()
    text = " ".join(words[i % len(words)] for i in range(MOSAIC_TILE + 6))
    s = session(text, layers=2, heads=2, d_model=16)
    engine = Engine(s.backend)
    stopped = MosaicTiles(engine.reference(s.seq, s.positions))
    with pytest.raises(Cancelled):
        engine.evaluate(s.seq, s.order, s.positions, lambda: True, sinks=(stopped,))
    with pytest.raises(ValueError, match="after 0 of 2 layers"):
        stopped.tiles                               # no tiles of layers that never passed
    tiles = MosaicTiles(engine.reference(s.seq, s.positions))
    ev = engine.evaluate(s.seq, s.order, s.positions, sinks=(tiles,))
    look = MosaicLook("difference", (-0.3, 0.3), GREYS)
    mosaic = build_views(ev, look, tiles).mosaic
    assert mosaic.block == 2 and mosaic.tiles.shape == (2, 2, 35, 35)
    difference = ev.comparison.attention_aligned - ev.reference.attention
    np.testing.assert_array_equal(mosaic.tiles, pool_signed_max(difference, 2))


def test_shown_pairs_an_evaluation_with_its_views():
    ev = evaluate(session())
    views = build_views(ev, None)
    shown = Shown(ev, views)
    assert shown.evaluation is ev and shown.views is views
    with pytest.raises(dataclasses.FrozenInstanceError):
        shown.views = None


def test_a_shallow_model_keeps_one_column_of_layers():
    grid = mosaic_grid(4, 4, 10, aspect=1.5)
    assert grid.columns == 1 and grid.block_gap == 0
    assert mosaic_grid(6, 2, 10, aspect=20).columns == 1      # however wide the view
    assert (grid.width, grid.height) == (4 * 11 - 1, 4 * 11 - 1)


def test_a_deep_model_wraps_its_layers_into_blocks_side_by_side():
    grid = mosaic_grid(30, 4, 10, aspect=1.5)
    assert grid.columns > 1
    one = mosaic_grid(30, 4, 10, aspect=1.5 / 1000)        # a tall, narrow view: no wrap
    assert one.columns == 1
    # tiles are shown larger than in one column of 30 layers, in the same wide view
    assert min(1.5 / grid.width, 1 / grid.height) > 2 * min(1.5 / one.width, 1 / one.height)
    assert 0.5 < grid.width / grid.height / 1.5 < 2      # about the view's shape


def test_every_tile_of_a_wrapped_grid_maps_back_to_its_layer_and_head():
    grid = mosaic_grid(30, 4, 10, aspect=2.0)
    seen = set()
    for layer in range(30):
        for head in range(4):
            x, y = grid.origin(layer, head)
            assert 0 <= x and x + 10 <= grid.width and 0 <= y and y + 10 <= grid.height
            assert grid.at(x + 0.5, y + 0.5) == (layer, head, 0, 0)
            assert grid.at(x + 9.5, y + 3.5) == (layer, head, 3, 9)
            assert grid.at(x + 10.5, y + 0.5) is None       # the gap after the tile
            seen.add((x, y))
    assert len(seen) == 120                                 # no two tiles in one place
    x, _ = grid.origin(0, 3)
    assert grid.at(x + 10 + grid.block_gap / 2, 0.5) is None    # between two blocks
    assert grid.at(-0.5, 0.5) is None and grid.at(grid.width + 1, 0.5) is None


def test_wrap_image_puts_each_tile_where_the_grid_says():
    L, h, m = 7, 3, 4
    tiles = np.zeros((L, h, m, m), np.float32)
    tiles += (np.arange(L)[:, None] * 10 + np.arange(h)[None, :])[:, :, None, None]
    grid = MosaicGrid(L, h, m, columns=3, block_gap=m + 2)
    image = wrap_image(mosaic_image(tiles), grid)
    assert image.shape == (grid.height, grid.width)
    for layer in range(L):
        for head in range(h):
            x, y = grid.origin(layer, head)
            np.testing.assert_array_equal(image[y:y + m, x:x + m], tiles[layer, head])
    assert np.isnan(image).sum() == image.size - L * h * m * m      # NaN everywhere else
    argb = wrap_image(mosaic_image(tiles.astype(np.uint32), fill=0), grid, fill=0)
    assert argb.dtype == np.uint32 and argb.shape == image.shape


def test_layer_labels_are_spaced_so_they_never_overlap():
    assert label_step(20, 14) == 1
    assert label_step(10, 14) == 2
    assert label_step(3, 14) == 5
    for spacing in (0.5, 1, 2.5, 4, 7, 13, 40):
        assert label_step(spacing, 14) * spacing >= 14 or label_step(spacing, 14) == 100


def test_an_order_exchanging_identical_tokens_says_the_input_is_unchanged():
    """Swapping "the" (0) and "the" (4) under a causal mask without positions leaves the
    input as it was, yet its equivariance is far above the floor (slots 0 and 4 see
    other prefixes): the note says what that number then measures."""
    from posviz.views.shown import same_input_note, symmetry_note
    session = Session(BuiltinBackend(ModelConfig(pe="none", mask="causal")),
                      "the cat sat on the mat")
    assert session.seq.tokens[0] == session.seq.tokens[4] == "the"
    session.set_order([4, 1, 2, 3, 0, 5])
    ev = Engine(session.backend).evaluate(session.seq, session.order, session.positions)
    assert ev.comparison.hidden_equivariance[1] > 100 * ev.comparison.floor
    assert "input is unchanged" in same_input_note(ev)
    assert "input is unchanged" in build_views(ev, None).symmetry_note
    assert symmetry_note(ev.comparison, ev.order) in build_views(ev, None).symmetry_note
    session.set_order([1, 0, 2, 3, 4, 5])                         # "cat" and "the"
    other = Engine(session.backend).evaluate(session.seq, session.order, session.positions)
    assert same_input_note(other) == ""


def test_the_report_table_calls_rows_of_an_unchanged_input_rows_that_differ(capsys):
    """`report --order 4,1,2,3,0,5` of "the cat sat on the mat", causal, no positions:
    the table said "changed" at every layer while its note said the input is unchanged."""
    from posviz.cli import main
    text, order = "the cat sat on the mat", "4,1,2,3,0,5"
    assert main(["report", "--pe", "none", "--mask", "causal", "--text", text,
                 "--order", order, "--layers", "2"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.strip()[:1].isdigit()]
    assert len(rows) == 3 and rows[0].rstrip().endswith("equivariant")
    assert all(row.rstrip().endswith("rows differ") for row in rows[1:]), rows
    assert "input is unchanged" in out
    assert main(["report", "--pe", "none", "--mask", "causal", "--text", text,
                 "--order", "1,0,2,3,4,5", "--layers", "2"]) == 0
    assert "changed" in capsys.readouterr().out


def test_the_original_order_says_that_nothing_was_compared():
    """After an edit or a model load the window shows the original order against itself:
    "equivariant at every layer" there read as a property of RoPE under a causal mask."""
    from posviz.analysis.predictions import ORIGINAL_NOTE, pooled_outputs
    from posviz.models.config import Positions
    from posviz.views.shown import ORIGINAL_ORDER, symmetry_note

    engine = Engine(BuiltinBackend(ModelConfig(layers=2, heads=2, d_model=16, pe="rope",
                                               mask="causal")))
    seq = engine.backend.tokenize("the cat sat on the mat")
    original = engine.evaluate(seq, np.arange(len(seq)), Positions())
    assert symmetry_note(original.comparison, original.order) == ORIGINAL_ORDER
    assert pooled_outputs(original).note.startswith(ORIGINAL_NOTE)
    moved = engine.evaluate(seq, np.arange(len(seq))[::-1], Positions())
    said = symmetry_note(moved.comparison, moved.order)
    assert said != ORIGINAL_ORDER and "original order" not in said
    assert ORIGINAL_NOTE not in pooled_outputs(moved).note


def test_the_symmetry_note_s_short_form_reads_the_same_layers_as_the_note():
    """The symmetry plot's one line at 1024 pixels holds symmetry_short: the layers it
    names are the note's."""
    from types import SimpleNamespace
    from posviz.views.shown import symmetry_note, symmetry_short
    c = SimpleNamespace(floor=1e-6, hidden_equivariance=np.array([0, 0, 0.3, 0.4]),
                        last_token_change=np.array([0, 0, 0, 0.2]))
    order = np.array([1, 0, 2, 3])
    assert "from layer 2 on" in symmetry_note(c, order)
    assert "changes from layer 3 on" in symmetry_note(c, order)
    assert symmetry_short(c, order) == (
        "Not equivariant from layer 2 on; final slot changes from layer 3.",
        "Not equivariant from layer 2 on.")
    moved_last = np.array([3, 1, 2, 0])
    assert "another token" in symmetry_note(c, moved_last)
    assert symmetry_short(c, moved_last)[0].endswith("final slot: another token.")
    assert symmetry_short(c, np.arange(4)) == ("The original order: every change is 0.",)


def test_branch_norms_are_computed_when_first_read(monkeypatch):
    """The Tokens tab's norms are left to the figure that reads them: build_views norms
    no (layers, n, d) array; reading them gives the same numbers as before, also once the
    window has let the run go (Evaluation.for_screen); a run's states past NORMS_HELD
    bytes are normed at once and not held."""
    ev = evaluate(session())
    want = dict(branch_norms(ev)[0])
    normed = []
    plain = np.linalg.norm
    monkeypatch.setattr(np.linalg, "norm", lambda x, *a, **k: normed.append(
        np.ndim(x)) or plain(x, *a, **k))
    views = build_views(ev, None)
    assert 3 not in normed
    assert not views.branch_norms.computed
    shown = Shown(ev.for_screen(), views)
    assert shown.evaluation.run is None
    got = dict(shown.views.branch_norms)
    assert 3 in normed and views.branch_norms.computed
    assert list(got) == list(want)
    for key in want:
        np.testing.assert_array_equal(got[key], want[key])
    from posviz.views import norms
    monkeypatch.setattr(norms, "NORMS_HELD", 0)
    normed.clear()
    views = build_views(ev, None)
    assert 3 in normed and isinstance(views.branch_norms, dict)
    for key in want:
        np.testing.assert_array_equal(views.branch_norms[key], want[key])
