"""The plots panel shows the core's numbers, reacts to clicks and hovers, and says
what it cannot show."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import dataclasses  # noqa: E402

import numpy as np  # noqa: E402
import pyqtgraph as pg  # noqa: E402
import pytest  # noqa: E402
from PySide6 import QtCore, QtGui, QtWidgets  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from posviz.analysis.engine import Engine  # noqa: E402
from posviz.document.events import SelectionChanged  # noqa: E402
from posviz.document.session import Session  # noqa: E402
from posviz.document.spec import Selection  # noqa: E402
from posviz.gui.plots import FIGURES, PlotsPanel, mosaic_look, style  # noqa: E402
from posviz.gui.plots.figures import tab_figures  # noqa: E402
from posviz.gui.plots.tabs import TABS  # noqa: E402
from posviz.models.builtin.backend import BuiltinBackend  # noqa: E402
from posviz.models.config import ModelConfig  # noqa: E402
from posviz.models.encodings import alibi_slopes, rope_angles  # noqa: E402
from posviz.models.request import Request  # noqa: E402
from posviz.views.mosaic import colour  # noqa: E402
from posviz.views.pooling import MOSAIC_TILE, pool_block, pool_signed_max  # noqa: E402
from posviz.views.shown import Shown, build_views  # noqa: E402

TEXT = "the cat sat on the mat because it was warm"


def evaluate(text=TEXT, order=None, **config):
    session = Session(BuiltinBackend(ModelConfig(**config)), text)
    if order is None:
        session.reverse()
    else:
        session.set_order(order)
    return Engine(session.backend).evaluate(session.seq, session.order, session.positions)


def show(panel, ev, look=None):
    """Show ``ev`` as the compute worker hands it over: with its views, the mosaic in
    ``look`` (the look of the selection drawn by default, as the controller asks)."""
    panel.show_evaluation(Shown(ev, build_views(ev, look or mosaic_look(panel.selection()))))


def settle_in_view(qtbot, plot, image, point) -> None:
    """Until ``point`` of ``image`` is in view and stays where it is over a turn of the
    event loop (the layout and the view range move it in turns of their own)."""
    def settled() -> bool:
        before = image.mapToScene(point)
        QtWidgets.QApplication.processEvents()
        return in_view(plot, image, point) and image.mapToScene(point) == before
    qtbot.waitUntil(settled, timeout=2000)


def in_view(plot, image, point) -> bool:
    """Is ``point`` of ``image`` inside its plot's view on screen? (pyqtgraph applies a
    new view range when the event loop next runs)"""
    scene_pos = image.mapToScene(point)
    return plot.vb.sceneBoundingRect().contains(scene_pos) and \
        plot.scene().views()[0].viewport().rect().contains(
            plot.scene().views()[0].mapFromScene(scene_pos))


@pytest.fixture
def view():
    """The session whose view selection the panel draws."""
    return Session()


@pytest.fixture
def panel(qtbot, view):
    widget = PlotsPanel()
    widget.set_session(view)
    qtbot.addWidget(widget)
    widget.resize(1400, 900)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def test_figures_have_the_documented_names(panel):
    assert tuple(panel.figures()) == FIGURES
    assert set(panel.displayed()) == set(FIGURES)


def test_a_tab_is_built_and_shows_the_evaluation_when_first_opened(panel):
    ev = evaluate(pe="sinusoidal")
    show(panel, ev)
    assert tuple(panel.current_figures()) == tab_figures(TABS[0])
    panel.tabs.setCurrentIndex(1)
    shown = panel.current_figures()
    assert tuple(shown) == tab_figures(TABS[1])
    changes = shown["token_change"].displayed()
    assert changes and all(np.isfinite(v).any() for v in changes.values())
    panel.tabs.setCurrentIndex(2)
    assert tuple(panel.current_figures()) == tab_figures(TABS[2])
    np.testing.assert_allclose(panel.current_figures()["encoding"].displayed()["encoding"],
                               ev.reference.encodings)


def test_the_largest_difference_sits_beside_the_heading_in_a_label_of_fixed_size(panel):
    """It changes at every reorder; a label that could change size would re-lay the
    window out each time."""
    figure = panel.figures()["attention"]
    sizes = set()
    for order in (list(range(9, -1, -1)), [1, 0] + list(range(2, 10))):
        show(panel, evaluate(order=order))
        shown = figure.displayed()["difference"]
        assert figure.corner.text().startswith(f"max |Δ| = {np.abs(shown).max():.2g}")
        assert figure.corner.minimumSize() == figure.corner.maximumSize()
        sizes.add((figure.corner.width(), figure.corner.height()))
    assert len(sizes) == 1 and "max" not in figure.heading.text()


def bar_labels(bar) -> list[str]:
    return [label for _, label in bar.axis._tickLevels[0]]


def test_the_difference_colours_say_where_they_clip_and_only_then(panel, view, qtbot):
    """Range ±0.3, max |Δ| 0.86: the maps' colours stop at ±0.3 without saying so."""
    from posviz.gui.plots.colorbars import bar_ticks
    assert bar_ticks(-0.3, 0.3, (False, True)) == [
        (-0.3, "-0.3"), (-0.2, "-0.2"), (-0.1, "-0.1"), (0.0, "0"), (0.1, "0.1"),
        (0.2, "0.2"), (0.3, "≥0.3")]
    show(panel, evaluate(order=list(range(9, -1, -1))))
    figure, mosaic = panel.figures()["attention"], panel.figures()["attention_mosaic"]
    shown = figure.displayed()["difference"]
    assert shown.max() > 0.3 and shown.min() < -0.3           # past both ends
    assert figure.corner.text().endswith(", colours clip at ±0.3")
    labels = bar_labels(figure.difference_bar)
    assert labels[0] == "≤-0.3" and labels[-1] == "≥0.3" and "0.3" not in labels
    tiles = mosaic.displayed()["difference"]
    assert (np.abs(tiles).max() > 0.3) == (bar_labels(mosaic.bar)[-1] == "≥0.3")
    panel.range_box.setCurrentIndex(panel.range_box.findData(1.0))
    show(panel, evaluate(order=list(range(9, -1, -1))), mosaic_look(view.selection))
    assert np.abs(figure.displayed()["difference"]).max() < 1.0
    assert figure.corner.text() == f"max |Δ| = {np.abs(shown).max():.2g}"
    labels = bar_labels(figure.difference_bar)
    assert (labels[0], labels[-1]) == ("-1", "1")
    assert not any(label[0] in "≤≥" for label in bar_labels(mosaic.bar))


def test_displayed_arrays_are_the_cores_numbers(panel, view):
    ev = evaluate(order=[3, 0, 9, 1, 2, 8, 4, 7, 5, 6])
    show(panel, ev)
    view.select(Selection(layer=2, head=3))
    assert (panel.selection().layer, panel.selection().head) == (2, 3)
    shown = panel.displayed()
    c, ref = ev.comparison, ev.reference

    att = shown["attention"]
    np.testing.assert_array_equal(att["original"], ref.attention[1, 3])
    np.testing.assert_array_equal(att["reordered_aligned"], c.attention_aligned[1, 3])
    np.testing.assert_array_equal(att["difference"], c.attention_aligned[1, 3] - ref.attention[1, 3])
    # aligned back by hand, independently of Comparison: A'[inv][:, inv] of the order's
    # run in slot order (the engine ran it in the original tokens' frame: rounding apart)
    inv = np.argsort(ev.order)
    run = ev.backend.run(ev.seq, Request(ev.order, ev.positions.ids(ev.order)))
    np.testing.assert_allclose(att["reordered_aligned"], run.attention[1, 3][inv][:, inv],
                               rtol=1e-5, atol=1e-6)

    np.testing.assert_array_equal(shown["attention_mosaic"]["difference"],
                                  c.attention_aligned - ref.attention)
    np.testing.assert_array_equal(shown["token_change"]["change"], c.token_change[2])
    for metric in ("hidden_equivariance", "attention_equivariance", "last_token_change",
                   "pooled_change"):
        np.testing.assert_array_equal(shown["symmetry"][metric], c.metric(metric))
    np.testing.assert_array_equal(shown["encoding"]["encoding"], ref.encodings)
    norms = shown["branch_norms"]
    # the same tokens' norms, averaged in the order the run holds them (rounding apart)
    np.testing.assert_allclose(norms["residual"],
                               np.linalg.norm(ev.permuted.hidden, axis=2).mean(axis=1),
                               rtol=1e-6)
    np.testing.assert_allclose(norms["attention_branch_original"][1:],
                               np.linalg.norm(ref.attn_out, axis=2).mean(axis=1))
    assert np.isnan(norms["mlp_branch"][0])


def test_mosaic_image_holds_every_tile(panel):
    ev = evaluate(order=list(range(9, -1, -1)), layers=3, heads=2, d_model=16)
    show(panel, ev)
    mosaic = panel.figures()["attention_mosaic"]
    image = mosaic.image.image                                  # (rows, cols) pixels
    n = 10
    assert image.shape == (3 * (n + 1) - 1, 2 * (n + 1) - 1)
    tiles = ev.comparison.attention_aligned - ev.reference.attention
    for layer in (1, 3):
        for head in (0, 1):
            x, y = mosaic.tile_origin(layer, head)
            np.testing.assert_array_equal(image[y:y + n, x:x + n], tiles[layer - 1, head])
    assert np.isnan(image[n, :]).all()                          # the gap between rows


def pooled_by_loop(tiles, block):
    """Signed largest-|value| per block, cell by cell: the reference for the pooling."""
    *lead, n, _ = tiles.shape
    m = -(-n // block)
    out = np.empty((*lead, m, m), tiles.dtype)
    for index in np.ndindex(*lead):
        for i in range(m):
            for j in range(m):
                cells = tiles[index][i * block:(i + 1) * block, j * block:(j + 1) * block]
                flat = cells.ravel()
                out[index + (i, j)] = flat[np.argmax(np.abs(flat))]
    return out


@pytest.mark.parametrize("block", [2, 3, 5, 8])    # strided slices up to 4, then reshaped
def test_pooling_keeps_the_signed_largest_value_of_each_block(block):
    rng = np.random.default_rng(block)
    tiles = rng.normal(size=(2, 3, 50, 50)).astype(np.float32)     # 50 = 3 * 16 + 2
    tiles[0, 0, :block, :block] = -np.abs(tiles[0, 0, :block, :block])   # all negative
    pooled = pool_signed_max(tiles, block)
    assert pooled.shape == (2, 3, -(-50 // block), -(-50 // block))
    np.testing.assert_array_equal(pooled, pooled_by_loop(tiles, block))
    assert pool_signed_max(tiles, 1) is tiles


def test_colour_matches_what_pyqtgraph_paints(qtbot):
    """The mosaic is coloured off the GUI thread by views.mosaic.colour; it must give the
    pixels an ImageItem with the same colour map and levels would."""
    values = np.linspace(-0.45, 0.45, 7 * 11, dtype=np.float32).reshape(7, 11)
    values[0, 0], values[0, 1] = -0.3, 0.3                      # exactly at the levels
    levels = (-0.3, 0.3)
    item = pg.ImageItem(axisOrder="row-major")
    item.setColorMap(style.colormap(style.DIVERGING))
    item.setImage(values, autoLevels=False, levels=levels)
    item.render()
    painted = item.qimage.convertToFormat(QtGui.QImage.Format.Format_ARGB32)
    ours = colour(values, style.argb_table(style.DIVERGING), levels)     # (7, 11)
    for row in range(7):
        for col in range(11):
            assert painted.pixel(col, row) == int(ours[row, col]), (row, col)



def assert_tiles_painted(mosaic, shown, expected) -> None:
    """Sample pixels of two tiles equal ``expected`` (L, h, m, m) ARGB; the gap is clear."""
    n = expected.shape[-1]
    for layer, head in ((1, 0), (2, 1)):
        x, y = mosaic.tile_origin(layer, head)
        for q, k in ((0, 0), (n - 1, 2), (3, n - 1)):
            assert shown.pixel(x + k, y + q) == int(expected[layer - 1, head, q, k])
    x, y = mosaic.tile_origin(1, 0)
    assert QtGui.QColor.fromRgba(shown.pixel(x + n, y)).alpha() == 0    # the gap

def test_mosaic_pixels_follow_the_difference_range(panel, view, qtbot):
    """Prepared on the worker for one range, shown after the user picked another: the
    mosaic drawn stays until one prepared in the range chosen arrives (the controller
    asks for it), which has its pixels, the gaps between tiles transparent."""
    ev = evaluate(layers=2, heads=2, d_model=16)
    mosaic = panel.figures()["attention_mosaic"]
    prepared = Shown(ev, build_views(ev, mosaic_look(panel.selection())))   # ±0.3
    panel.range_box.setCurrentIndex(panel.range_box.findData(0.01))
    assert view.selection.difference_range == 0.01
    panel.show_evaluation(prepared)
    assert mosaic.look == prepared.views.mosaic.look      # the old one until the new one
    show(panel, ev)                                       # as the worker prepares it
    assert mosaic.look == mosaic_look(view.selection)
    mosaic.image.render()
    shown = mosaic.image.qimage
    tiles = panel.displayed()["attention_mosaic"]["difference"]           # (L, h, n, n)
    table = style.argb_table(style.DIVERGING)
    expected = colour(tiles, table, (-0.01, 0.01))
    assert not np.array_equal(expected, colour(tiles, table, (-0.3, 0.3)))
    assert_tiles_painted(mosaic, shown, expected)


def test_mosaic_of_a_long_sequence_shows_pooled_blocks(panel):
    words = TEXT.split()
    text = " ".join(words[i % len(words)] for i in range(2 * MOSAIC_TILE + 3))
    ev = evaluate(text, layers=2, heads=2, d_model=16)
    n = len(ev.order)
    block = pool_block(n)
    assert block == 3 and n > MOSAIC_TILE
    expected = pooled_by_loop(ev.comparison.attention_aligned - ev.reference.attention, block)
    m = expected.shape[-1]
    assert m <= MOSAIC_TILE
    panel.show_evaluation(Shown(ev, build_views(ev, None)))   # no mosaic made ahead
    mosaic = panel.figures()["attention_mosaic"]
    assert panel.displayed()["attention_mosaic"] == {}    # nothing drawn: none made here
    show(panel, ev)
    shown = panel.displayed()["attention_mosaic"]["difference"]
    np.testing.assert_allclose(shown, expected, rtol=0, atol=0)
    # nothing hidden: the largest difference of the full maps is in the picture
    full = ev.comparison.attention_aligned - ev.reference.attention
    assert np.abs(shown).max() == np.abs(full).max()
    x, y = mosaic.tile_origin(2, 1)
    np.testing.assert_array_equal(mosaic.image.image[y:y + m, x:x + m], expected[1, 1])
    gap = mosaic.grid.gap              # image pixels: GAP_PX screen pixels at least
    assert mosaic.image.image.shape == (2 * (m + gap) - gap, 2 * (m + gap) - gap)
    assert mosaic.labels["query"][1] == f"{ev.reference.tokens[3]} … {ev.reference.tokens[5]}"
    # prepared ahead (as the compute worker does): the same numbers
    show(panel, ev)
    np.testing.assert_array_equal(panel.displayed()["attention_mosaic"]["difference"], expected)
    # the attention weights themselves pool to their block maxima
    panel.mosaic_box.setCurrentIndex(panel.mosaic_box.findData("original"))
    show(panel, ev)                                       # prepared in the new look
    np.testing.assert_array_equal(panel.displayed()["attention_mosaic"]["original"],
                                  pooled_by_loop(ev.reference.attention, block))


def test_clicking_a_mosaic_tile_selects_that_layer_and_head(panel, view, qtbot):
    ev = evaluate()
    show(panel, ev)
    mosaic = panel.figures()["attention_mosaic"]
    qtbot.waitUntil(lambda: in_view(mosaic.plot, mosaic.image, mosaic.tile_center(3, 2)),
                    timeout=2000)
    scene_pos = mosaic.image.mapToScene(mosaic.tile_center(3, 2))
    view_pos = mosaic.canvas.mapFromScene(scene_pos)
    QTest.mouseClick(mosaic.canvas.viewport(), QtCore.Qt.MouseButton.LeftButton,
                     QtCore.Qt.KeyboardModifier.NoModifier, view_pos)
    qtbot.waitUntil(lambda: (view.selection.layer, view.selection.head) == (3, 2),
                    timeout=2000)
    assert (panel.selection().layer, panel.selection().head) == (3, 2)
    np.testing.assert_array_equal(panel.displayed()["attention"]["original"],
                                  ev.reference.attention[2, 2])
    np.testing.assert_array_equal(panel.displayed()["token_change"]["change"],
                                  ev.comparison.token_change[3])
    outline = mosaic.outline.rect()
    x, y = mosaic.tile_origin(3, 2)
    assert outline.contains(QtCore.QPointF(x + 1, y + 1))


def test_the_mosaic_outline_frames_the_selected_tile_of_a_short_text(panel, qtbot):
    """Four tokens make tiles of 4 × 4 pixels, each many screen pixels wide: the outline
    lies just outside the tile's edges (a few screen pixels, not half a tile pixel out),
    covering none of its first row and column, inside the view."""
    from posviz.gui.plots.mosaic_figure import OUTLINE_PX
    show(panel, evaluate("one two three four"))
    mosaic = panel.figures()["attention_mosaic"]
    mosaic.grab()
    x, y = mosaic.tile_origin(1, 0)
    n = mosaic.grid.tile
    assert n == 4
    outline = mosaic.outline.rect()
    pixel = mosaic.plot.vb.viewPixelSize()                 # view units per screen pixel
    for inner, outer, size in ((x, outline.left(), pixel[0]), (y, outline.top(), pixel[1]),
                               (x + n, outline.right(), -pixel[0]),
                               (y + n, outline.bottom(), -pixel[1])):
        out = (inner - outer) / size                       # screen pixels out of the tile
        assert OUTLINE_PX / 2 <= out <= OUTLINE_PX + 1, (inner, outer, out)
    assert mosaic.plot.vb.viewRect().contains(outline)


def test_the_sessions_selection_is_drawn_within_the_model_and_not_echoed(panel, view):
    show(panel, evaluate())
    told = []
    view.subscribe(lambda event: told.append(event))
    view.select(Selection(layer=4, head=3))
    assert len(told) == 1                       # the panel drew it, and said nothing back
    assert (panel.selection().layer, panel.selection().head) == (4, 3)
    assert (panel.layer_box.value(), panel.head_box.value()) == (4, 3)
    show(panel, evaluate(layers=2, heads=2, d_model=8))
    assert (panel.selection().layer, panel.selection().head) == (2, 1)
    assert (panel.layer_box.value(), panel.head_box.value()) == (2, 1)
    assert (view.selection.layer, len(told)) == (4, 1)   # the session keeps its choice


def test_hovering_a_cell_reports_tokens_and_value(panel, view, qtbot):
    ev = evaluate()
    show(panel, ev)
    view.select(Selection(layer=1, head=0))
    figure = panel.figures()["attention"]
    query, key = 1, 5                                            # 'cat' -> 'mat'
    settle_in_view(qtbot, figure.original.plot, figure.original.image,
                   QtCore.QPointF(key + 0.5, query + 0.5))
    scene_pos = figure.original.image.mapToScene(QtCore.QPointF(key + 0.5, query + 0.5))
    view_pos = figure.canvas.mapFromScene(scene_pos)
    messages = []
    panel.hoverMessage.connect(messages.append)
    QTest.mouseMove(figure.canvas.viewport(), view_pos)
    qtbot.waitUntil(lambda: bool(messages), timeout=2000)
    value = ev.reference.attention[0, 0, query, key]
    assert messages[-1] == f"layer 1 head 0: query 'cat' -> key 'mat' = {value:.3f}"


def test_token_labels_follow_the_text(panel):
    show(panel, evaluate())
    axis = panel.figures()["attention"].original.plot.getAxis("bottom")
    assert axis.tokens == TEXT.split()
    show(panel, evaluate("a dog ran", order=[2, 1, 0]))
    assert axis.tokens == ["a", "dog", "ran"]
    token_axis = panel.figures()["token_change"].plot.getAxis("bottom")
    assert token_axis.tokens != ["a", "dog", "ran"]      # hidden tab: not repainted yet
    panel.tabs.setCurrentIndex(1)                        # opening the tab brings it up to date
    assert token_axis.tokens == ["a", "dog", "ran"]


def test_exact_equivariance_still_shows_on_the_log_axis(panel):
    ev = evaluate(pe="none")
    show(panel, ev)
    c = ev.comparison
    assert c.hidden_equivariance.max() <= c.floor         # NoPE, bidirectional: equivariant
    curve = panel.figures()["symmetry"].curves["hidden_equivariance"]
    y = curve.yData                                       # before the log transform
    assert np.all(np.isfinite(y)) and np.all(y > 0) and np.all(y < c.floor)
    assert np.abs(panel.displayed()["attention"]["difference"]).max() <= c.floor


def test_no_encoding_shows_a_message_not_an_empty_axis(panel):
    show(panel, evaluate(pe="none"))
    panel.displayed()                        # brings the figures on hidden tabs up to date
    for name in ("encoding", "encoding_similarity", "relative_profile"):
        figure = panel.figures()[name]
        assert figure.stack.currentWidget() is figure.message
        assert "NoPE" in figure.message.text()
        assert panel.displayed()[name] == {}
    show(panel, evaluate(pe="rope"))
    panel.displayed()
    message = panel.figures()["encoding"].message.text()
    assert "RoPE" in message and "No additive encoding" in message
    assert panel.figures()["relative_profile"].stack.currentWidget() is not \
        panel.figures()["relative_profile"].message


def test_sinusoidal_similarity_depends_only_on_distance(panel):
    """Vaswani 2017: PE(p)·PE(q) = Σ_i cos((p − q) ω_i), so the cosine matrix is Toeplitz."""
    d = 16
    ev = evaluate(pe="sinusoidal", d_model=d)
    show(panel, ev)
    cosine = panel.displayed()["encoding_similarity"]["cosine"]
    omega = 10000.0 ** (-np.arange(0, d, 2) / d)                 # (d/2,)
    p = np.arange(cosine.shape[0])
    theory = np.cos((p[:, None, None] - p[None, :, None]) * omega).mean(axis=2)
    np.testing.assert_allclose(cosine, theory, atol=1e-5)


def test_a_random_learned_table_is_not_said_to_have_a_band(panel):
    """The similarity title said "(a band along the diagonal: nearby positions look
    alike)" for every encoding; a learned table with random weights has none: its
    neighbours are no more alike than far positions."""
    ev = evaluate(pe="learned", d_model=64)
    show(panel, ev)
    cosine = panel.displayed()["encoding_similarity"]["cosine"]         # (n, n)
    near = np.diagonal(cosine, 1).mean()
    far = cosine[np.triu_indices_from(cosine, 3)].mean()
    assert abs(near - far) < 0.2                                       # no band
    title = panel.figures()["encoding_similarity"].heading.text()
    assert "band along the diagonal:" not in title and "where a band runs" in title


def test_odd_width_encoding_is_shown_whole(panel):
    ev = evaluate(pe="sinusoidal", d_model=9, heads=3)
    show(panel, ev)
    shown = panel.displayed()["encoding"]["encoding"]
    assert shown.shape == (10, 9)
    np.testing.assert_array_equal(shown, ev.reference.encodings)


def test_alibi_profile_is_minus_slope_times_distance(panel):
    ev = evaluate(pe="alibi", heads=4)
    show(panel, ev)
    panel.tabs.setCurrentIndex(2)
    figure = panel.figures()["relative_profile"]
    values = figure.displayed()["value"]                         # (h, D)
    distance = np.asarray(figure.coords["distance"])
    theory = -np.asarray(alibi_slopes(4))[:, None] * np.abs(distance)[None]
    np.testing.assert_allclose(values, theory)


def test_rope_profile_is_the_roformer_decay(panel):
    ev = evaluate(pe="rope", heads=4, d_model=32)
    show(panel, ev)
    panel.tabs.setCurrentIndex(2)
    figure = panel.figures()["relative_profile"]
    values = figure.displayed()["value"][0]
    distance = np.asarray(figure.coords["distance"])
    import torch
    theta = rope_angles(torch.ones(1), 8).numpy()[0]             # (d_head/2,) frequencies
    theory = np.cos(distance[:, None] * theta[None]).mean(axis=1)
    np.testing.assert_allclose(values, theory, atol=1e-12)


def test_the_profile_reaches_as_far_as_chosen(panel):
    """±16 by default for a short text; RoPE's long range and T5's buckets to 128 on
    request, the curve still the theory's."""
    ev = evaluate(pe="rope", heads=4, d_model=32)
    show(panel, ev)
    panel.tabs.setCurrentIndex(2)
    figure = panel.figures()["relative_profile"]
    assert figure.coords["distance"] == list(range(-16, 17))
    figure.span.setCurrentIndex(figure.span.findData(256))
    distance = np.asarray(figure.coords["distance"])
    assert distance.tolist() == list(range(-256, 257))
    import torch
    theta = rope_angles(torch.ones(1), 8).numpy()[0]
    theory = np.cos(distance[:, None] * theta[None]).mean(axis=1)
    np.testing.assert_allclose(figure.displayed()["value"][0], theory, atol=1e-12)
    (x0, x1), _ = figure.plot.viewRange()
    assert x0 < -250 and x1 > 250
    show(panel, evaluate(pe="t5", heads=4))                   # the choice stays
    values = figure.displayed()["value"]
    distance = np.asarray(figure.coords["distance"])
    assert distance.max() == 256
    far = values[:, (distance > 16) & (distance <= 128)]      # buckets past 16 differ
    assert np.unique(far[0]).size > 1
    figure.span.setCurrentIndex(0)
    assert figure.coords["distance"] == list(range(-16, 17))


def test_a_model_without_branches_or_a_built_encoding_says_so(panel):
    class RealLike:                  # records no branches; its encoding is not posviz's
        def facts(self):
            return None

        def profile(self, reach):
            return None

        def machinery(self):
            return None

    ev = evaluate()
    strip = lambda t: dataclasses.replace(t, attn_out=None, mlp_out=None, encodings=None)  # noqa: E731
    ev = dataclasses.replace(ev, reference=strip(ev.reference), run=strip(ev.run),
                             backend=RealLike())
    show(panel, ev)
    panel.displayed()
    norms = panel.figures()["branch_norms"]
    assert "only the residual stream" in norms.note.text()
    assert set(panel.displayed()["branch_norms"]) == {"residual", "residual_original"}
    profile = panel.figures()["relative_profile"]
    assert profile.stack.currentWidget() is profile.message
    assert panel.displayed()["relative_profile"] == {}


def test_branch_norms_say_the_last_layer_is_after_a_final_norm(panel, tmp_path):
    """A model whose last hidden state is after its final norm (SmolLM2, GPT-2...) has
    its last residual-stream point on another scale: the note says so, in exports too;
    a model without one (the built-in) says nothing of it."""
    ev = evaluate(layers=3)
    norms = panel.figures()["branch_norms"]
    show(panel, ev)
    panel.displayed()
    assert "final norm" not in norms.note.text()
    normed = lambda t: dataclasses.replace(t, extras={**t.extras, "final_norm": True})  # noqa: E731
    show(panel, dataclasses.replace(ev, reference=normed(ev.reference), run=normed(ev.run)))
    panel.displayed()
    assert "Layer 3 is after the model's final norm" in norms.note.text()
    svg = panel.export_figure("branch_norms", tmp_path / "norms.svg").read_text()
    assert "final norm" in svg


def test_symmetry_legend_entry_hides_its_curve(panel):
    ev = evaluate(pe="rope")
    show(panel, ev)
    curve = panel.figures()["symmetry"].curves["pooled_change"]
    c = ev.comparison
    row = panel.figures()["symmetry"].plot.getAxis("left").zero_row    # the row marked 0
    assert row < np.log10(c.floor / 30)
    shown = np.where(c.pooled_change == 0, 10.0 ** row, c.pooled_change)  # exact 0 there
    np.testing.assert_allclose(curve.yData, shown)
    x, y = curve.getData()
    np.testing.assert_allclose(10 ** y, shown, rtol=1e-6)
    assert np.all(c.pooled_change[1:] > c.floor)      # RoPE: the curve is above the floor
    figure = panel.figures()["symmetry"]
    np.testing.assert_allclose(np.column_stack(curve.points),    # its markers
                               np.column_stack([np.arange(len(shown)), np.log10(shown)]),
                               rtol=1e-6)

    def drawn():          # the plot area's pixels (not the legend, which greys the entry)
        area = figure.canvas.mapFromScene(figure.plot.vb.sceneBoundingRect()).boundingRect()
        image = figure.canvas.grab(area).toImage()
        image = image.convertToFormat(QtGui.QImage.Format.Format_RGB32)
        return np.frombuffer(image.constBits(), np.uint32).copy()

    everyone = len(figure.lines.shown())
    with_it = drawn()
    curve.sample.setVisible(False)              # what a click on the legend entry does
    assert not curve.isVisible() and curve not in figure.lines.shown()
    assert len(figure.lines.shown()) == everyone - 1                # the others stay
    assert np.mean(drawn() != with_it) > 0.001                      # its line and markers go
    curve.sample.setVisible(True)
    assert curve.isVisible() and np.array_equal(drawn(), with_it)


def test_a_choice_in_the_panel_is_the_sessions_and_the_sessions_is_drawn(panel, view,
                                                                         tmp_path):
    ev = evaluate()
    show(panel, ev)
    edits = []
    view.subscribe(lambda event: isinstance(event, SelectionChanged) and
                   edits.append(event.selection))
    panel.mosaic_box.setCurrentIndex(panel.mosaic_box.findData("original"))
    panel.range_box.setCurrentIndex(panel.range_box.findData(0.1))
    panel.tabs.setCurrentIndex(2)
    panel.layer_box.setValue(2)
    assert len(edits) == 4
    assert edits[-1] == Selection(layer=2, head=0, mosaic="original", difference_range=0.1,
                                  tab=2)
    assert view.selection == panel.selection() == edits[-1]
    chosen = Selection(layer=3, head=1, mosaic="reordered", difference_range=0.01, tab=0)
    view.select(chosen)                           # the program's: drawn, not echoed
    assert len(edits) == 5 and panel.selection() == chosen
    assert (panel.tabs.currentIndex(), panel.layer_box.value(), panel.head_box.value(),
            panel.mosaic_box.currentData(), panel.range_box.currentData()) == \
        (0, 3, 1, "reordered", 0.01)
    assert panel.figures()["attention"].difference_range == 0.01
    look = mosaic_look(chosen)
    assert look.mode == "reordered" and look.levels == style.ATTENTION_LEVELS
    # the mosaic on screen follows the selection, in the Shown the panel is handed
    show(panel, ev)                                       # prepared in the new look
    np.testing.assert_array_equal(panel.displayed()["attention_mosaic"]["reordered_aligned"],
                                  ev.comparison.attention_aligned)
    assert panel.figures()["attention_mosaic"].look == look
    assert panel.provenance()["order"] == ",".join(map(str, ev.order))
    panel.tabs.setCurrentIndex(1)
    assert len(edits) == 6 and edits[-1] == chosen.replace(tab=1)
    panel.export_all(tmp_path, formats=["png"], width=300, csv=False)   # visits every tab
    assert len(edits) == 6 and panel.tabs.currentIndex() == 1


def test_heatmaps_paint_the_same_pixels_with_the_workaround_off(qtbot, monkeypatch):
    """Without the coloured-pixels workaround the images are plain pyqtgraph ones: the
    same pixels, the gaps between tiles transparent."""
    monkeypatch.setenv("POSVIZ_WORKAROUNDS_OFF", "heatmap-coloured-pixels")
    panel = PlotsPanel()
    panel.set_session(Session())
    qtbot.addWidget(panel)
    panel.resize(1400, 900)
    panel.show()
    ev = evaluate(layers=2, heads=2, d_model=16)
    show(panel, ev)
    panel.range_box.setCurrentIndex(panel.range_box.findData(0.01))
    show(panel, ev)                                       # prepared in the new range
    mosaic, attention = panel.figures()["attention_mosaic"], panel.figures()["attention"]
    assert not mosaic.image.coloured_pixels and not attention.original.image.coloured_pixels
    mosaic.image.render()
    shown = mosaic.image.qimage
    tiles = panel.displayed()["attention_mosaic"]["difference"]           # (L, h, n, n)
    expected = colour(tiles, style.argb_table(style.DIVERGING), (-0.01, 0.01))
    assert_tiles_painted(mosaic, shown, expected)
    attention.original.image.render()
    original = colour(ev.reference.attention[0, 0], style.argb_table(style.SEQUENTIAL),
                      style.ATTENTION_LEVELS)
    painted = attention.original.image.qimage
    assert painted.pixel(3, 2) == int(original[2, 3])


def test_svg_strokes_are_flattened(tmp_path):
    from posviz.gui.plots.exporting import flatten_scaled_strokes

    svg = ('<svg><g transform="matrix(2,0,0,3,10,20)"><polyline points="1,1 2,2"/></g>'
           '<g transform="matrix(2,0,0,3,0,0)"><ellipse cx="1" cy="1"/></g></svg>')
    path = tmp_path / "figure.svg"
    path.write_text(svg, encoding="utf-8")
    flatten_scaled_strokes(path)
    text = path.read_text(encoding="utf-8")
    assert 'points="12,23 14,26"' in text and "matrix(1,0,0,1,0,0)" in text
    assert '<g transform="matrix(2,0,0,3,0,0)"><ellipse' in text    # not known: as written


def test_the_mosaic_drawn_stays_until_one_in_the_selections_look_comes(panel, view):
    """The panel never makes a mosaic: a new mode or range is the session's selection
    (the controller has the worker colour the mosaic for it, test_controller.py), and
    the panel keeps drawing the one it has until a Shown in that look arrives."""
    ev = evaluate(layers=2, heads=2, d_model=16)
    show(panel, ev)
    before = panel.displayed()["attention_mosaic"]
    mosaic = panel.figures()["attention_mosaic"]
    panel.mosaic_box.setCurrentIndex(panel.mosaic_box.findData("original"))
    assert view.selection.mosaic == "original" and mosaic.look.mode == "difference"
    np.testing.assert_array_equal(panel.displayed()["attention_mosaic"]["difference"],
                                  before["difference"])
    panel.range_box.setCurrentIndex(panel.range_box.findData(0.01))
    assert mosaic.look.levels == (-0.3, 0.3)
    show(panel, ev)                             # prepared in the selection's look
    assert mosaic.look == mosaic_look(view.selection) and mosaic.look.mode == "original"
    np.testing.assert_array_equal(panel.displayed()["attention_mosaic"]["original"],
                                  ev.reference.attention)


def test_the_mosaic_colour_bar_says_what_it_measures(qtbot):
    from posviz.gui.plots.mosaic_figure import MosaicFigure, mosaic_look
    figure = MosaicFigure()
    qtbot.addWidget(figure)
    assert figure.bar.axis.labelText == "difference (probability)"
    figure._set_look(mosaic_look(Selection(mosaic="original")))
    assert figure.bar.axis.labelText == "attention weight (probability)"


def test_the_branch_norms_are_computed_when_their_tab_is_opened(panel):
    """A reorder shown on the Attention tab leaves the Tokens tab's norms uncomputed (a
    tab seen before included); opening the tab draws them, the same numbers."""
    ev = evaluate(pe="sinusoidal")
    panel.tabs.setCurrentIndex(1)           # its figures built, then left
    panel.tabs.setCurrentIndex(0)
    views = build_views(ev, mosaic_look(panel.selection()))
    panel.show_evaluation(Shown(ev, views))
    assert not views.branch_norms.computed
    panel.tabs.setCurrentIndex(1)
    assert views.branch_norms.computed
    drawn = panel.current_figures()["branch_norms"].data
    assert list(drawn) == list(views.branch_norms)
    for name, values in drawn.items():
        np.testing.assert_array_equal(values, views.branch_norms[name])
