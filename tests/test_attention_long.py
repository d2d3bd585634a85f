"""The attention maps of a long text in a short figure: the colour bars keep their strip
level with the maps (never squeezed to a sliver that stays after a short text), and the
keys' turned labels stay inside the figure (elided past a third of its height)."""
from __future__ import annotations

import os
import random

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from posviz.analysis.engine import Engine  # noqa: E402
from posviz.document.session import Session  # noqa: E402
from posviz.gui.plots import mosaic_look  # noqa: E402
from posviz.gui.plots.attention import AttentionFigure  # noqa: E402
from posviz.models.builtin.backend import BuiltinBackend  # noqa: E402
from posviz.models.config import ModelConfig  # noqa: E402
from posviz.views.shown import Shown, build_views  # noqa: E402

WORDS = "the cat sat on a mat dog big red hill tree ran with under over because warm".split()
SHORT = "the cat sat on the mat because it was warm"


@pytest.fixture
def figure(qtbot):
    widget = AttentionFigure()
    qtbot.addWidget(widget)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def show(qtbot, figure, text: str, height: int) -> None:
    backend = BuiltinBackend(ModelConfig(pe="alibi", layers=1, heads=1, d_model=16))
    session = Session(backend, text)
    session.reverse()
    ev = Engine(backend).evaluate(session.seq, session.order, session.positions)
    figure.resize(1270, height)
    figure.update_from(Shown(ev, build_views(ev, mosaic_look(session.selection))), 1, 0)
    # laid out once Qt has handled the resize (a loaded machine takes longer than 0.1 s)
    qtbot.waitUntil(lambda: laid_out(figure), timeout=5000)


def laid_out(figure) -> bool:
    try:
        check_laid_out(figure)
    except AssertionError:
        return False
    return True


def check_laid_out(figure) -> None:
    for bar, plot in ((figure.attention_bar, figure.aligned),
                      (figure.difference_bar, figure.difference)):
        strip, maps = bar.vb.sceneBoundingRect(), plot.plot.vb.sceneBoundingRect()
        assert maps.height() > 50, maps.height()
        level = max(abs(strip.top() - maps.top()), abs(strip.bottom() - maps.bottom()))
        assert level <= 2, (strip.getRect(), maps.getRect())
    canvas = figure.canvas.height()
    for plot in (figure.original, figure.aligned, figure.difference):
        axis = plot.plot.getAxis("bottom")
        assert axis.sceneBoundingRect().bottom() <= canvas + 1, (
            axis.sceneBoundingRect().getRect(), canvas)


def test_a_long_text_in_a_short_figure_keeps_its_bars_and_labels(qtbot, figure):
    random.seed(0)
    long = " ".join(random.choice(WORDS) for _ in range(700))
    show(qtbot, figure, long, 260)
    check_laid_out(figure)
    show(qtbot, figure, SHORT, 400)                   # and back: nothing stays squeezed
    check_laid_out(figure)
    show(qtbot, figure, long, 400)
    check_laid_out(figure)


def labels_of(figure) -> list[list]:
    """The boxes (scene coordinates) of each map's key labels, as last drawn."""
    return [plot.plot.getAxis("bottom").label_rects()
            for plot in (figure.original, figure.aligned, figure.difference)]


def check_apart(boxes) -> None:
    assert all(boxes), [len(b) for b in boxes]
    for left, right in zip(boxes, boxes[1:]):
        touching = [(a.getRect(), b.getRect()) for a in left for b in right
                    if a.adjusted(0, 0, 1, 0).intersects(b)]
        assert not touching, touching[:3]


@pytest.mark.parametrize("width", [1900, 1270, 900, 640])
def test_neighbouring_maps_keys_never_touch_on_screen_or_in_an_export(qtbot, figure,
                                                                       width):
    """808 tokens at 1920 pixels: the last key "805 given" of the original map ran into
    the first, "0 In", of the reordered one beside it."""
    random.seed(1)
    show(qtbot, figure, " ".join(random.choice(WORDS) for _ in range(808)), 330)
    figure.resize(width, 330)
    qtbot.waitUntil(lambda: laid_out(figure), timeout=5000)
    figure.grab()
    boxes = labels_of(figure)
    assert all(box.height() > box.width() for box in boxes[0])          # turned
    check_apart(boxes)
    figure.render_image(width=2 * width)                # an export, at its own size
    check_apart(labels_of(figure))
