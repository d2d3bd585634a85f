"""core.views computes what every figure shows, without Qt: once per evaluation, and
what depends on the reference run alone once per reference run."""
import dataclasses
import subprocess
import sys

import numpy as np
import pytest

from posviz.core.backend import BuiltinBackend
from posviz.core.config import ModelConfig
from posviz.core.engine import Engine
from posviz.core.errors import Cancelled
from posviz.core.mosaic import (MOSAIC_TILE, MosaicLook, colour, make_mosaic, mosaic_image,
                                recoloured)
from posviz.core.session import Session
from posviz.core.symmetry import METRICS
from posviz.core.views import (Shown, build_views, change_bars, clip_for_log, head_maps,
                               relative_profile)

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
    code = ("import sys, posviz.core.views; "
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
                                      clip_for_log(c.metric(metric), c.floor))
    assert (views.symmetry["noise_floor"] == c.floor).all()
    assert views.symmetry_note.startswith("The hidden states")
    np.testing.assert_allclose(views.branch_norms["residual_original"],
                               np.linalg.norm(ev.reference.hidden, axis=2).mean(axis=1))
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
    assert view.reach == 16 and view.profile.distances.tolist() == list(range(-16, 17))
    other = build_views(evaluate(session("a dog ran", pe="sinusoidal")), None)
    assert other.positions is not first.positions


def test_a_model_without_config_or_branches():
    ev = evaluate(session())
    strip = lambda t: dataclasses.replace(t, attn_out=None, mlp_out=None,  # noqa: E731
                                          encodings=None,
                                          extras={"model": "some/real-model", "pe": "rope"})
    ev = dataclasses.replace(ev, reference=strip(ev.reference), permuted=strip(ev.permuted))
    views = build_views(ev, None)
    assert set(views.branch_norms) == {"residual", "residual_original"}
    assert set(views.missing_branches) == {"attention_branch", "mlp_branch"}
    view = views.positions
    assert (view.kind, view.built_in, view.table, view.similarity, view.profile) == \
        ("rope", False, None, None, None)


def test_relative_profile_is_cached_and_read_only():
    config = ModelConfig(pe="alibi", heads=4).to_dict()
    profile = relative_profile(config, 16)
    assert relative_profile(config, 16) is profile
    assert profile.rows == ("head 0", "head 1", "head 2", "head 3")
    with pytest.raises(ValueError):
        profile.values[0, 0] = 1.0
    assert relative_profile(ModelConfig(pe="learned").to_dict(), 16) is None
    assert relative_profile(ModelConfig(pe="none").to_dict(), 16) is None


def test_head_maps_are_one_head_before_and_after():
    ev = evaluate(session())
    maps = head_maps(ev, 2, 3)
    np.testing.assert_array_equal(maps.original, ev.reference.attention[1, 3])
    np.testing.assert_array_equal(maps.aligned, ev.comparison.attention_aligned[1, 3])
    np.testing.assert_array_equal(maps.difference, maps.aligned - maps.original)
    assert maps.largest == float(np.abs(maps.difference).max())


def test_recoloured_mosaic_equals_one_made_in_that_look():
    ev = evaluate(session())
    mosaic = make_mosaic(ev, MosaicLook("difference", (-0.3, 0.3), GREYS))
    look = MosaicLook("difference", (-0.01, 0.01), REDS)
    again = recoloured(mosaic, look)
    made = make_mosaic(ev, look)
    np.testing.assert_array_equal(again.argb, made.argb)
    assert again.tiles is mosaic.tiles and again.look == look
    assert not np.array_equal(again.argb, mosaic.argb)
    with pytest.raises(ValueError):
        recoloured(mosaic, MosaicLook("original", (0.0, 1.0), GREYS))


def test_a_long_mosaic_stops_when_superseded():
    words = TEXT.split()
    text = " ".join(words[i % len(words)] for i in range(MOSAIC_TILE + 6))
    ev = evaluate(session(text, layers=2, heads=2, d_model=16))
    look = MosaicLook("difference", (-0.3, 0.3), GREYS)
    with pytest.raises(Cancelled):
        build_views(ev, look, should_stop=lambda: True)
    mosaic = build_views(ev, look, should_stop=lambda: False).mosaic
    assert mosaic.block == 2 and mosaic.tiles.shape == (2, 2, 35, 35)


def test_shown_pairs_an_evaluation_with_its_views():
    ev = evaluate(session())
    views = build_views(ev, None)
    shown = Shown(ev, views)
    assert shown.evaluation is ev and shown.views is views
    with pytest.raises(dataclasses.FrozenInstanceError):
        shown.views = None
