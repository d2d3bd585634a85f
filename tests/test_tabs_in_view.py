"""At 1024 × 700 a tab's figures scroll under the tab bar: scrolling the Attention tab
down to its second row took the tabs (and the layer and head controls) out of sight."""
from __future__ import annotations

import os
from types import SimpleNamespace

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtWidgets import QScrollArea  # noqa: E402

from posviz.gui.settings import make_settings  # noqa: E402
from posviz.gui.window import MainWindow  # noqa: E402
from conftest import on_screen  # noqa: E402

pytestmark = pytest.mark.usefixtures("collect_between_tests")


def whole_in_sight(widget) -> bool:
    region = widget.visibleRegion().boundingRect()
    return widget.isVisible() and region.size() == widget.size()


@pytest.mark.parametrize("tab", [0, 2, 4])          # 4: Experiments
def test_the_tab_bar_stays_in_sight_when_a_tab_s_figures_scroll(qtbot, tab):
    w = on_screen(qtbot, MainWindow(make_settings()), 1024, 700)
    with qtbot.waitSignal(w.controller.evaluated, timeout=30_000):
        w.start(last=False)
    if tab == 4:                # a text of four rows of chips and a paper check drawn
        w.session.set_text(" ".join(["because the mat was warm"] * 24))
        w.experiments.figure.show_paper(SimpleNamespace(
            name="sinha2022", weights="random", holds=True, citation="c", reports="r",
            measures="m", ran_on="the built-in model, untrained", tests="t",
            values={"sinusoidal": {"output_change": 0.5, "score_change": 0.69},
                    "rope": {"output_change": 2e-7, "score_change": 0.0},
                    "noise_floor": 1e-5}))
    w.plots.tabs.setCurrentIndex(tab)
    assert w.plots.tabs.currentIndex() == tab
    page = w.plots.tabs.currentWidget()
    scrolls = [area for area in w.findChildren(QScrollArea)
               if area.isAncestorOf(page) or page.isAncestorOf(area)]
    # the page is taller than 1024 x 700 shows: something to scroll (once its layout
    # has passed the sizes up: in steps on a busy machine)
    qtbot.waitUntil(lambda: any(area.verticalScrollBar().maximum() > 0
                                for area in scrolls), timeout=5000)
    for area in scrolls:                    # down to the bottom, as a wheel would
        area.verticalScrollBar().setValue(area.verticalScrollBar().maximum())
    qtbot.wait(50)
    bar = w.plots.tabs.tabBar()
    assert whole_in_sight(bar), (bar.visibleRegion().boundingRect(), bar.size())
    assert whole_in_sight(w.plots.layer_box)
