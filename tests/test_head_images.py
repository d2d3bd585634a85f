"""The selected head's maps as painted (views.head): pooled past HEAD_SIDE tokens, block
means of the weights and the signed largest difference, checked against loops over the
full maps; the values on hover stay the true ones, from memory or from a file."""
import os
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6 import QtCore  # noqa: E402

from posviz.analysis.engine import Engine  # noqa: E402
from posviz.document.session import Session  # noqa: E402
from posviz.document.spec import Selection  # noqa: E402
from posviz.models.builtin.backend import BuiltinBackend  # noqa: E402
from posviz.models.config import ModelConfig  # noqa: E402
from posviz.models.maps import LayerMaps  # noqa: E402
from posviz.views import head as head_module  # noqa: E402
from posviz.views.head import head_cell, head_images  # noqa: E402
from posviz.views.shown import Shown, build_views, head_maps  # noqa: E402

WORDS = "the cat sat on the mat because it was warm".split()


def evaluate(n_words: int, **config):
    text = " ".join(WORDS[i % len(WORDS)] for i in range(n_words))
    config = {"layers": 2, "heads": 2, "d_model": 16, **config}
    s = Session(BuiltinBackend(ModelConfig(**config)), text)
    s.reverse()
    return Engine(s.backend).evaluate(s.seq, s.order, s.positions)


def by_loop(maps: np.ndarray, block: int, rule) -> np.ndarray:
    n = maps.shape[0]
    m = -(-n // block)
    return np.array([[rule(maps[i * block:(i + 1) * block, j * block:(j + 1) * block])
                      for j in range(m)] for i in range(m)])


def signed_largest(cells: np.ndarray) -> float:
    high, low = cells.max(), cells.min()
    return high if high >= -low else low


def test_a_short_input_paints_the_maps_themselves():
    ev = evaluate(10)
    images, maps = head_images(ev, 2, 1), head_maps(ev, 2, 1)
    assert images.block == 1 and images.n == len(ev.order)
    for name in ("original", "aligned", "difference"):
        np.testing.assert_array_equal(getattr(images, name), getattr(maps, name))
    assert images.largest == maps.largest


def test_a_long_input_paints_block_means_and_the_signed_largest_difference():
    """300 tokens at 64 pixels a side: blocks of 5, the last one smaller, the difference
    made in two slices of rows."""
    ev = evaluate(299)
    n = len(ev.order)
    images, maps = head_images(ev, 1, 1, side=64), head_maps(ev, 1, 1)
    assert images.block == -(-n // 64) == 5 and n % 5
    assert images.original.shape == images.difference.shape == (-(-n // 5),) * 2
    np.testing.assert_allclose(images.original, by_loop(maps.original, 5, np.mean),
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(images.aligned, by_loop(maps.aligned, 5, np.mean),
                               rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(images.difference,
                                  by_loop(maps.difference, 5, signed_largest))
    assert images.largest == maps.largest > 0


def test_views_hold_the_head_asked_for_as_painted():
    ev = evaluate(10)
    views = build_views(ev, None, head=(1, 0))
    expected = head_images(ev, 2, 0)
    assert (views.head.layer, views.head.head) == (2, 0)
    np.testing.assert_array_equal(views.head.difference, expected.difference)
    assert build_views(ev, None).head is None


@pytest.mark.parametrize("head", [(2, 0), (0, 2), (-1, 0)])
def test_a_head_the_model_does_not_have_paints_nothing(head):
    """A selection made for a larger model (the window's, before a smaller one's result
    has arrived) asks for a head that is not there: no images, no error."""
    ev = evaluate(10)                                       # 2 layers, 2 heads
    assert build_views(ev, None, head=head).head is None


@pytest.mark.parametrize("in_memory", [None, 0])
def test_a_cell_reads_the_same_from_memory_and_from_a_file(in_memory):
    rng = np.random.default_rng(0)
    maps = rng.random((3, 2, 5, 7)).astype(np.float32)              # (L, h, m, n)
    kept = LayerMaps(3, in_memory)
    for layer in range(3):
        kept.put(layer, maps[layer])
    assert (kept.array is None) == (in_memory == 0)
    for index in ((0, 0, 0, 0), (1, 1, 4, 6), (2, 0, 3, 2)):
        assert kept.cell(*index) == maps[index]
    if in_memory == 0:
        with pytest.raises(IndexError):
            kept.cell(0, 2, 0, 0)


def test_a_hover_reads_the_true_values_not_the_blocks():
    ev = evaluate(40)
    maps = head_maps(ev, 2, 1)
    for q, k in ((0, 0), (3, 17), (len(ev.order) - 1, 5)):
        original, aligned = head_cell(ev, 2, 1, q, k)
        assert original == maps.original[q, k] and aligned == maps.aligned[q, k]


@pytest.fixture
def panel(qtbot):
    from posviz.gui.plots import PlotsPanel

    widget = PlotsPanel()
    widget.view = Session()                  # whose selection the panel draws
    widget.set_session(widget.view)
    qtbot.addWidget(widget)
    widget.resize(1400, 900)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def test_the_figure_paints_pooled_maps_says_so_and_hovers_true_values(panel, qtbot,
                                                                     monkeypatch):
    from posviz.gui.plots import mosaic_look
    from posviz.gui.plots.attention import AttentionFigure

    assert f"Past {head_module.HEAD_SIDE:,} tokens each pixel" in AttentionFigure.guide
    readme = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    assert f"Past {head_module.HEAD_SIDE:,} tokens each pixel of" in " ".join(readme.split())
    monkeypatch.setattr(head_module, "HEAD_SIDE", 8)
    ev = evaluate(30, layers=1)
    n = len(ev.order)
    panel.show_evaluation(Shown(ev, build_views(ev, mosaic_look(panel.selection()))))
    panel.view.select(Selection(layer=1, head=1))
    figure = panel.figures()["attention"]
    block = -(-n // 8)
    assert figure.original.image.image.shape == (-(-n // block),) * 2
    assert f"each pixel {block}×{block} tokens" in figure.heading.text()
    assert figure.displayed()["difference"].shape == (-(-n // block),) * 2
    maps = head_maps(ev, 1, 1)
    query, key = n - 2, 3                     # a token's cell, inside a block of several
    point = QtCore.QPointF(key + 0.5, query + 0.5)                       # view: tokens
    plot = figure.original.plot
    canvas = figure.canvas

    def on_screen():
        scene_pos = plot.vb.mapViewToScene(point)
        return (plot.vb.sceneBoundingRect().contains(scene_pos)
                and canvas.viewport().rect().contains(canvas.mapFromScene(scene_pos)))
    qtbot.waitUntil(on_screen, timeout=2000)
    messages = []
    panel.hoverMessage.connect(messages.append)
    figure._mouse_moved(plot.vb.mapViewToScene(point))       # the scene's sigMouseMoved
    qtbot.waitUntil(lambda: bool(messages), timeout=2000)
    value = maps.original[query, key]
    assert value != figure.displayed()["original"][query // block, key // block]
    assert messages[-1] == (f"layer 1 head 1: query '{ev.reference.tokens[query]}' -> key "
                            f"'{ev.reference.tokens[key]}' = {value:.3f}")


def test_a_long_inputs_position_similarity_is_pooled_like_the_maps():
    from posviz.models.encodings import cosine_similarity
    from posviz.views.head import pooled_cosine

    table = np.random.default_rng(1).normal(size=(300, 8)).astype(np.float32)
    table[7] = 0                                          # a zero row: cosine 0
    full = cosine_similarity(table)
    same, block = pooled_cosine(table)
    assert block == 1 and np.array_equal(same, full)
    pooled, block = pooled_cosine(table, side=64)
    assert block == 5 and pooled.shape == (60, 60)
    np.testing.assert_allclose(pooled, by_loop(full, 5, np.mean), rtol=1e-5, atol=1e-6)


def test_the_similarity_figure_says_it_is_pooled(panel, monkeypatch):
    from posviz.gui.plots import mosaic_look

    monkeypatch.setattr(head_module, "HEAD_SIDE", 8)
    ev = evaluate(30, layers=1, pe="sinusoidal")
    panel.show_evaluation(Shown(ev, build_views(ev, mosaic_look(panel.selection()))))
    panel.tabs.setCurrentIndex(2)
    figure = panel.figures()["encoding_similarity"]
    n, block = len(ev.order), -(-len(ev.order) // 8)
    assert figure.map.image.image.shape == (-(-n // block),) * 2
    assert f"each pixel the mean of {block}×{block} pairs" in figure.heading.text()
    assert figure.coords["position"] == list(range(0, n, block))
