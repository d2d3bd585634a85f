"""The Positions tab shows the figures the model's encoding has, each with room to read:
an absolute table and its cosine map, a relative encoding's profile, both for sinusoidal,
and one message when there is no positional encoding at all."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

from posviz.analysis.engine import Engine  # noqa: E402
from posviz.document.session import Session  # noqa: E402
from posviz.gui.plots import PlotsPanel, mosaic_look  # noqa: E402
from posviz.gui.plots.tabs import POSITIONS, TABS  # noqa: E402
from posviz.models.builtin.backend import BuiltinBackend  # noqa: E402
from posviz.models.config import ModelConfig  # noqa: E402
from posviz.views.shown import Shown, build_views  # noqa: E402

TABLE, SIMILARITY, PROFILE = "encoding", "encoding_similarity", "relative_profile"
SHOWN = {"sinusoidal": {TABLE, SIMILARITY, PROFILE}, "learned": {TABLE, SIMILARITY},
         "rope": {PROFILE}, "alibi": {PROFILE}, "t5": {PROFILE}, "none": {TABLE}}
PANEL_HEIGHT = 710         # the plots' height in the window (window.PLOTS_MIN_HEIGHT)


def shown_for(pe: str) -> Shown:
    session = Session(BuiltinBackend(ModelConfig(pe=pe)), "the cat sat on the mat")
    session.reverse()
    ev = Engine(session.backend).evaluate(session.seq, session.order, session.positions)
    return Shown(ev, build_views(ev, mosaic_look(session.selection)))


@pytest.fixture
def panel(qtbot):
    widget = PlotsPanel()
    widget.set_session(Session())
    qtbot.addWidget(widget)
    widget.resize(1000, PANEL_HEIGHT)
    widget.show()
    qtbot.waitExposed(widget)
    widget.tabs.setCurrentIndex(TABS.index(POSITIONS))
    return widget


@pytest.mark.parametrize("pe", sorted(SHOWN))
def test_the_positions_tab_shows_what_the_encoding_has(panel, qtbot, pe):
    panel.show_evaluation(shown_for(pe))
    qtbot.wait(50)
    figures = panel.current_figures()
    visible = {name for name, figure in figures.items() if figure.isVisible()}
    assert visible == SHOWN[pe]
    for name in visible:
        figure = figures[name]
        # a figure shown has room: half the tab's height when it shares it, most of it
        # when alone (no strip of 60 pixels, no placeholder taking the room)
        share = 0.4 if len(visible) > 1 else 0.8
        assert figure.height() >= share * panel.tabs.currentWidget().height(), (
            name, figure.height(), panel.tabs.currentWidget().height())
    if pe == "none":
        message = figures[TABLE].message
        assert figures[TABLE].stack.currentWidget() is message and "NoPE" in message.text()


def test_the_tab_follows_a_change_of_encoding(panel, qtbot):
    panel.show_evaluation(shown_for("rope"))
    panel.show_evaluation(shown_for("learned"))
    qtbot.wait(50)
    figures = panel.current_figures()
    assert {name for name, figure in figures.items() if figure.isVisible()} == SHOWN["learned"]


def page_whole_at(panel, height: int) -> bool:
    """Whether the current tab's figures are whole in sight in a panel ``height`` tall:
    the scroll area under the tab bar that holds them has nothing to scroll."""
    from PySide6 import QtWidgets
    panel.resize(panel.width(), height)
    for _ in range(3):
        QtWidgets.QApplication.processEvents()
    holder = panel.tabs.currentWidget()
    while not isinstance(holder, QtWidgets.QScrollArea):
        holder = holder.parentWidget()
    return holder.verticalScrollBar().maximum() == 0


def asks_for(panel, height: int) -> bool:
    """The current tab's figures ask for ``height`` of the panel (controls and tab bar
    included): whole in sight at that height, scrolled rather than squashed below it."""
    return page_whole_at(panel, height) and not page_whole_at(panel, height - 1)


def test_a_tab_showing_one_row_asks_for_one_row_s_height(panel, qtbot):
    """A tab scrolls two rows of figures rather than squash them; a profile alone
    (RoPE) asks for half that, so at 1024 × 700 it is whole in sight."""
    panel.set_row_height(PANEL_HEIGHT // 2)
    panel.show_evaluation(shown_for("rope"))
    assert asks_for(panel, PANEL_HEIGHT // 2)
    panel.show_evaluation(shown_for("sinusoidal"))
    assert asks_for(panel, PANEL_HEIGHT)
    panel.tabs.setCurrentIndex(0)                    # the curves and mosaic, the maps
    assert asks_for(panel, PANEL_HEIGHT)


def test_copy_plot_takes_a_figure_on_screen(panel, qtbot, monkeypatch):
    """With RoPE the tab's first figure (the absolute table) is hidden: Copy plot copies
    the profile, not the hidden placeholder."""
    from posviz.gui.plots import panel as panel_module
    copied = []
    monkeypatch.setattr(panel_module, "copy_figure", lambda f: copied.append(f) or True)
    panel.show_evaluation(shown_for("rope"))
    assert panel.copy_plot()
    assert [figure.name for figure in copied] == [PROFILE]


def test_a_hidden_figure_is_exported_at_a_figure_s_size_and_stays_hidden(panel, tmp_path):
    from PySide6 import QtGui
    panel.show_evaluation(shown_for("rope"))
    path = panel.export_figure(TABLE, tmp_path / "encoding.png")
    image = QtGui.QImage(str(path))
    assert image.width() >= 300 and image.height() >= 200, (image.width(), image.height())
    assert not panel.current_figures()[TABLE].isVisible()
    assert panel.current_figures()[PROFILE].isVisible()


def test_saved_splitter_sizes_never_collapse_a_pane_with_content(qtbot, tmp_path):
    """Quit while RoPE shows only the profile (the table's row had size 0), start again
    and choose sinusoidal: the table and cosine map get their share, not a sliver; the
    sizes a user dragged to are kept, and the ones taken with a pane hidden are not."""
    import json

    from PySide6 import QtCore

    from posviz.gui.splitters import SPLITTERS_KEY, TabSplitters
    settings = QtCore.QSettings(str(tmp_path / "posviz.ini"), QtCore.QSettings.IniFormat)
    index = TABS.index(POSITIONS)

    def started(pe: str) -> PlotsPanel:
        widget = PlotsPanel(settings)
        widget.set_session(Session())
        qtbot.addWidget(widget)
        widget.resize(1000, PANEL_HEIGHT)
        splitters = TabSplitters(widget.tabs, settings)
        widget.tabs.currentChanged.connect(splitters.restore)
        widget.show()
        qtbot.waitExposed(widget)
        widget.tabs.setCurrentIndex(index)
        widget.show_evaluation(shown_for(pe))
        qtbot.wait(50)
        widget.splitters = splitters
        return widget

    first = started("rope")
    first.splitters.save()
    saved = json.loads(settings.value(SPLITTERS_KEY))[str(index)]
    assert all(0 not in (sizes or [1]) for sizes in saved), saved
    first.close()
    # the state a previous version wrote: the hidden row at 0
    settings.setValue(SPLITTERS_KEY, json.dumps({str(index): [[0, 474], [250, 250]]}))
    second = started("sinusoidal")
    figures = second.current_figures()
    page = second.tabs.currentWidget().height()
    for name in (TABLE, SIMILARITY, PROFILE):
        assert figures[name].height() >= 0.3 * page, (name, figures[name].height(), page)
    vertical = figures[PROFILE].parentWidget()
    vertical.setSizes([500, 200])                     # the user's own choice is kept
    second.splitters.save()
    third = started("sinusoidal")
    kept = third.current_figures()[PROFILE].parentWidget().sizes()
    assert abs(kept[0] / sum(kept) - 5 / 7) < 0.05, kept
