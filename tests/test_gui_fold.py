"""The window's first screen: the tool's message (the symmetry curves and the mosaic)
in sight without scrolling at a laptop's and a projector's window size, the colour
bars whole at 800 × 600, and the controls' texts whole."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6.QtCore import QPoint, QRect, Qt  # noqa: E402
from PySide6.QtWidgets import QComboBox, QStyle, QStyleOptionComboBox  # noqa: E402

from posviz.gui.model_panel.fields import ShortCombo  # noqa: E402
from posviz.gui.settings import make_settings  # noqa: E402
from posviz.gui.window import MainWindow  # noqa: E402
from conftest import on_screen  # noqa: E402


def opened(qtbot, width: int, height: int) -> MainWindow:
    w = on_screen(qtbot, MainWindow(make_settings()), width, height)
    with qtbot.waitSignal(w.controller.evaluated, timeout=30_000):
        w.start()
    qtbot.wait(100)
    return w


def in_sight(w: MainWindow, widget) -> QRect:
    """The widget's rectangle in the plots' viewport's coordinates."""
    viewport = w.plots_scroll.viewport()
    return QRect(widget.mapTo(viewport, QPoint(0, 0)), widget.size())


@pytest.mark.parametrize("size", [(1024, 700), (1366, 768)])
def test_the_curves_and_the_mosaic_are_in_sight_when_the_window_opens(qtbot, size):
    w = opened(qtbot, *size)
    assert w.plots_scroll.verticalScrollBar().value() == 0
    shown = w.plots_scroll.viewport().rect()
    figures = w.plots.current_figures()
    for name in ("symmetry", "attention_mosaic"):
        rect = in_sight(w, figures[name])
        assert shown.contains(rect), (name, rect, shown)
        assert rect.height() >= 200, (name, rect)      # sight of a plot, not a strip


def test_the_attention_maps_key_labels_are_in_sight_at_the_default_size(qtbot):
    """At the default 1440 × 900 both rows of the Attention tab are whole: the three
    maps' key axes, their token labels and "key (token)" under them, without scrolling."""
    import pyqtgraph as pg
    w = opened(qtbot, 1440, 900)
    assert w.plots_scroll.verticalScrollBar().maximum() == 0
    shown = w.plots_scroll.viewport().rect()
    figure = w.plots.current_figures()["attention"]
    axes = [item for item in figure.canvas.scene().items()
            if isinstance(item, pg.AxisItem) and item.orientation == "bottom"
            and item.isVisible() and item.labelText == "key (token)"]
    assert len(axes) == 3
    for axis in axes:
        assert len(axis.labelled) == len(axis.tokens) == 10      # every token labelled
        box = axis.sceneBoundingRect()
        corner = figure.canvas.mapFromScene(box.bottomRight())
        assert shown.contains(figure.canvas.mapTo(w.plots_scroll.viewport(), corner))


def test_at_800_by_600_the_difference_colour_bar_is_whole(qtbot):
    w = opened(qtbot, 800, 600)
    figure = w.plots.current_figures()["attention"]
    bar = figure.difference_bar.sceneBoundingRect().toAlignedRect()
    canvas = figure.canvas
    corner = canvas.mapFromScene(bar.topRight())        # the bar's right edge, on screen
    right = canvas.mapTo(w.plots_scroll.viewport(), corner).x()
    assert right <= w.plots_scroll.viewport().width(), (right,
                                                        w.plots_scroll.viewport().width())


def cut_texts(w: MainWindow) -> list:
    """The visible combo boxes whose longest closed text is wider than their text field."""
    cut = []
    for box in w.findChildren(QComboBox):
        if not box.isVisible() or not box.count():
            continue
        option = QStyleOptionComboBox()
        box.initStyleOption(option)
        field = box.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, option,
                                           QStyle.SubControl.SC_ComboBoxEditField, box)
        shown = getattr(box, "shown_text", box.itemText)
        texts = [shown(i) for i in range(box.count())]
        widest = max(texts, key=box.fontMetrics().horizontalAdvance)
        if box.fontMetrics().horizontalAdvance(widest) > field.width():
            cut.append((widest, field.width()))
    return cut


def test_no_combo_box_cuts_its_text(qtbot):
    """... in the model panel, above the plots and on the Experiments tab, whatever
    experiment it shows; a long encoding name is whole in the open menu."""
    w = opened(qtbot, 1024, 700)
    cut = cut_texts(w)
    w.plots.tabs.setCurrentWidget(w.experiments)
    for index in range(w.experiments.what.count()):
        w.experiments.what.setCurrentIndex(index)
        qtbot.wait(20)
        cut += cut_texts(w)
    assert not cut, cut
    encoding = next(box for box in w.findChildren(ShortCombo)
                    if box.findData("sinusoidal") >= 0)
    whole = encoding.itemText(encoding.findData("sinusoidal"))
    assert whole == "sinusoidal (Vaswani 2017)"
    assert encoding.itemData(encoding.findData("sinusoidal"),
                             Qt.ItemDataRole.ToolTipRole) == whole


def test_the_model_panel_fits_its_dock_at_1024_by_700(qtbot):
    """No field of the model panel is cut at the dock's right edge (its rows once asked
    for 249 pixels of a 220-pixel dock)."""
    w = opened(qtbot, 1024, 700)
    scroll = w.model_dock.widget()
    qtbot.wait(50)
    assert scroll.horizontalScrollBar().maximum() == 0, (
        w.model_panel.minimumSizeHint().width(), scroll.viewport().width())


# SmolLM2's facts as the model panel shows them once it has run (read from a load)
SMOLLM2_FACTS = [
    ("Family", "llama"), ("Head", "causal language model"),
    ("Positions", "RoPE, θ = 100000"), ("Layers × heads", "30 × 9 (3 key-value)"),
    ("Width d", "576"), ("Max positions", "8192"), ("Mask", "causal"),
    ("Parameters", "135M"),
    ("Weights", "its 4-bit Q4_1 GGUF de-quantized, not the original checkpoint "
                "(HuggingFaceTB/SmolLM2-135M-Instruct, which loads by that name from the "
                "Hugging Face cache); converted once into posviz's cache (GGUF sha256 "
                "b179c9523d0e…), float32 on cpu")]


@pytest.mark.parametrize("size", [(1024, 700), (1920, 1080)])
def test_a_real_model_s_facts_fit_the_dock_without_a_sideways_scroll(qtbot, size):
    """With SmolLM2 loaded the panel scrolled sideways: a table cell is as wide as its
    longest word ("(HuggingFaceTB/", a hash), 186 px of a 206-px viewport beside its
    scroll bar. The loaded state's table, shown as a real model shows it."""
    from posviz.gui.model_panel.facts_table import facts_table
    w = opened(qtbot, *size)
    panel = w.model_panel
    panel.builtin_box.hide()                    # as for a real model (show_spec)
    panel.model_facts.setText(facts_table(SMOLLM2_FACTS))
    panel.model_facts.show()
    qtbot.wait(100)
    scroll = w.model_dock.widget()
    assert scroll.horizontalScrollBar().maximum() == 0, (
        panel.minimumSizeHint().width(), scroll.viewport().width())
    shown = panel.model_facts.text().replace("\u200b", "")    # where a line may break
    weights = dict(SMOLLM2_FACTS)["Weights"]
    # whole, wrapped over lines (its middle cut to "…" read as words lost at 1024)
    assert weights in shown and "de-quantized …" not in shown
    assert panel.model_facts.wordWrap()
    assert panel.model_facts.height() >= panel.model_facts.heightForWidth(
        panel.model_facts.width()) - 1
    # and whole in the tooltip
    from posviz.gui.model_panel.facts_table import facts_tip
    assert f"Weights: {weights}" in facts_tip(SMOLLM2_FACTS)


def test_the_head_maps_titles_do_not_run_into_each_other_at_800_pixels(qtbot):
    w = opened(qtbot, 800, 600)
    figure = w.plots.current_figures()["attention"]
    qtbot.wait(50)
    plots = (figure.original, figure.aligned, figure.difference)
    for heatmap in plots:
        title = heatmap.plot.titleLabel
        width = title.item.boundingRect().width()        # the text drawn
        assert width <= heatmap.plot.vb.width(), (title.text, width, heatmap.plot.vb.width())
    assert {heatmap.plot.titleLabel.text for heatmap in plots} <= {
        "original order", "original", "reordered, aligned back", "reordered, aligned",
        "aligned", "reordered − original", "difference"}


@pytest.mark.parametrize("size", [(1024, 700), (1920, 1080)])
def test_the_experiment_plot_and_its_legend_are_in_sight(qtbot, monkeypatch, size):
    """Compare encodings: the plot and its legend without scrolling. On a real 1920 × 1080
    screen a canvas asks for three quarters of it (QGraphicsView's size hint), which made
    the scrolling page taller than the window; offscreen, the hint is set so here."""
    import pyqtgraph as pg
    from PySide6.QtCore import QSize
    monkeypatch.setattr(pg.GraphicsLayoutWidget, "sizeHint", lambda self: QSize(1440, 810))
    w = opened(qtbot, *size)
    tab = w.experiments
    w.plots.tabs.setCurrentWidget(tab)
    tab.what.setCurrentIndex(tab.what.findData("compare"))
    tab.run()
    qtbot.waitUntil(lambda: not tab.cancel_button.isEnabled(), timeout=60_000)
    qtbot.wait(100)
    assert w.plots_scroll.verticalScrollBar().maximum() == 0
    figure, shown = tab.figure, w.plots_scroll.viewport().rect()
    for item in (figure.plot.vb, figure.legend):
        box = item.sceneBoundingRect().toAlignedRect()
        corner = figure.canvas.mapTo(w.plots_scroll.viewport(),
                                     figure.canvas.mapFromScene(box.bottomRight()))
        assert shown.contains(corner), (item, corner, shown)
    assert figure.plot.vb.height() >= 150


def cut_titles(w: MainWindow) -> list:
    """The axis titles of the current tab's figures that are elided, or that the edge of
    the plots' viewport (the fold) runs through: (figure, side, title, box)."""
    import pyqtgraph as pg
    viewport = w.plots_scroll.viewport()
    page = w.plots.tabs.currentWidget()
    cut = []
    for name, figure in w.plots.figures().items():
        if not (page.isAncestorOf(figure) and figure.isVisible()):
            continue
        for item in figure.canvas.scene().items():
            if not (isinstance(item, pg.AxisItem) and item.isVisible()
                    and item.label.isVisible() and item.label.opacity() > 0
                    and item.labelText):
                continue
            margin = item.label.document().documentMargin()       # blank around glyphs
            glyphs = item.label.mapRectToScene(item.label.boundingRect().adjusted(
                margin, margin, -margin, -margin))
            corners = [figure.canvas.mapTo(viewport, figure.canvas.mapFromScene(p))
                       for p in (glyphs.topLeft(), glyphs.bottomRight())]
            box = QRect(*corners).normalized()
            through = viewport.rect().intersects(box) and not viewport.rect().contains(box)
            if "…" in item.labelText or through:
                cut.append((name, item.orientation, item.labelText, box))
    return cut


def test_no_axis_title_is_cut_at_the_fold_at_1024_by_700(qtbot):
    """Nothing scrolled, the figures half under the fold title the half in sight (the
    norms plot showed "orm |h| (L2)"); scrolled to the bottom, every title is whole;
    and an export of a figure half in sight has its whole title."""
    w = opened(qtbot, 1024, 700)
    bar = w.plots_scroll.verticalScrollBar()
    for index in range(w.plots.tabs.count()):
        w.plots.tabs.setCurrentIndex(index)
        for value in (0, bar.maximum()):
            bar.setValue(value)
            qtbot.wait(50)
            assert not cut_titles(w), (w.plots.tabs.tabText(index), value, cut_titles(w))
        bar.setValue(0)
    w.plots.tabs.setCurrentIndex(1)
    qtbot.wait(50)
    norms = w.plots.current_figures()["branch_norms"]
    axis = norms.plot.getAxis("left")
    assert axis.labelText == "norm |h| (L2)"                 # the part in sight is short
    from PySide6.QtGui import QImage, QPainter
    image = QImage(norms.size(), QImage.Format.Format_ARGB32)
    painter = QPainter(image)
    with norms._exporting(painter):
        assert axis.labelText == "mean token norm |h| (L2)"
    painter.end()
    assert axis.labelText == "norm |h| (L2)"


def test_a_short_combo_box_never_draws_its_text_into_its_edge(qtbot):
    """The model panel's Source box showed "all-MiniLM-L6-v2 (bundled[": the text was
    chosen to fit the field while the style draws it a little inside it, clipping the
    last glyph. At every width the text drawn ends clear of the field's edge."""
    from PySide6.QtGui import QColor
    touching = []
    for width in range(150, 240, 2):
        box = ShortCombo()
        box.addItem("all-MiniLM-L6-v2 (bundled)")
        box.setFixedWidth(width)
        qtbot.addWidget(box)
        box.show()
        qtbot.waitExposed(box)
        image = box.grab().toImage()
        field = box._field()[1]
        option = QStyleOptionComboBox()
        box.initStyleOption(option)
        rect = box.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, option,
                                          QStyle.SubControl.SC_ComboBoxEditField, box)
        assert rect.width() == field
        ratio = image.width() / box.width()
        dark = [x for x in range(int(rect.left() * ratio), int((rect.right() + 1) * ratio))
                for y in range(int(rect.top() * ratio), int((rect.bottom() + 1) * ratio))
                if QColor(image.pixel(x, y)).lightness() < 110]
        if dark and max(dark) >= (rect.right() - 1) * ratio:
            touching.append((width, box.shown_text()))
        box.close()
    assert not touching, touching


def test_a_short_combo_box_showing_less_than_its_text_holds_it_whole_in_its_tooltip(qtbot):
    box = ShortCombo()
    box.addItem("all-MiniLM-L6-v2 (bundled)")
    box.setToolTip("The model to explore")
    qtbot.addWidget(box)
    for width, whole in ((120, False), (400, True)):
        box.setFixedWidth(width)
        box.show()
        qtbot.waitExposed(box)
        box.grab()
        if whole:
            assert box.shown_text() == box.currentText()
            assert box.toolTip() == "The model to explore"
        else:
            assert box.shown_text() != box.currentText()
            assert box.toolTip() == "all-MiniLM-L6-v2 (bundled)\n\nThe model to explore"


@pytest.mark.parametrize("long, end", [
    ("minilm splits the text into its own tokens: the order starts again from the "
     "original, and undo starts here · 12 tokens · 6 layers × 12 heads · computed "
     "in 60 ms", "computed in 60 ms"),
    ("computing SmolLM2-135M-Instruct (bundled GGUF) on 12 tokens, the original order, "
     "then the new one: layer 17 of 30 (forward 1 of 3), about 3 s left… 14 s", "14 s")])
def test_a_long_status_line_is_elided_in_a_1024_pixel_window_and_whole_in_its_tooltip(
        qtbot, long, end):
    """Cut at the right, the line lost what it was saying last: the time a wait has
    run, a computation's time. Elided in the middle, its start and end are in sight."""
    w = opened(qtbot, 1024, 700)
    w.status.say(long)
    w.hover_label.setText("all positions, Δ = −14: 0.631")
    qtbot.wait(50)
    bar = w.statusBar()
    for label in (w.state_label, w.hover_label):
        assert label.isVisible() and label.geometry().right() < bar.width(), label.text()
    assert w.hover_label.width() >= w.hover_label.fontMetrics().horizontalAdvance(
        w.hover_label.text())                                   # the value read whole
    w.state_label.grab()
    shown = w.state_label.shown_text()
    assert shown != long and "…" in shown
    assert shown.startswith(long[:12]) and shown.endswith(end), shown
    assert w.fontMetrics().horizontalAdvance(shown) <= w.state_label.width()
    assert w.state_label.toolTip() == long
    w.status.say("12 tokens")
    w.state_label.grab()
    assert w.state_label.toolTip() == ""


def test_the_outputs_chart_fits_a_1024_by_700_window_without_scrolling(qtbot):
    """The next-token chart's size hint, summed into the scrolling plots' height, put its
    bottom (the token labels) under the fold."""
    from types import SimpleNamespace

    from posviz.analysis.predictions import Outputs, Prediction, TopTokens
    w = opened(qtbot, 1024, 700)
    w.plots.tabs.setCurrentIndex(3)                                   # Outputs
    qtbot.wait(50)
    top = TopTokens(("warm", ".", ","), (1, 2, 3), (0.5, 0.3, 0.1))
    outputs = Outputs("causal", 0.8, (Prediction("next token", top, top, 0.0, (9, 9), top,
                                                 (0.5, 0.3, 0.1)),))
    figure = w.plots.current_figures()["outputs"]
    figure.update_from(SimpleNamespace(model=SimpleNamespace(outputs=outputs)), 1, 0)
    qtbot.wait(100)
    assert figure.isVisible() and figure.canvas.isVisible()           # a next-token chart
    viewport = w.plots_scroll.viewport()
    assert w.plots_scroll.verticalScrollBar().maximum() == 0, (
        w.plots.height(), viewport.height())
    assert in_sight(w, figure.canvas).bottom() <= viewport.height()
    assert figure.canvas.height() >= 250


def test_the_positions_field_reads_as_its_menu_at_its_own_least_width(qtbot):
    """It read "by slot" closed (once the panel narrowed) and "belong to slots" open:
    "by slot" was no choice of its list. Closed at its least width it shows a choice
    whole, the very words of the open list."""
    from posviz.gui.model_panel.fields import option_widget
    from posviz.models.options import OPTIONS
    box = option_widget(OPTIONS["mode"])
    qtbot.addWidget(box)
    box.setFixedWidth(box.minimumSizeHint().width())
    box.show()
    qtbot.waitExposed(box)
    listed = [box.itemText(i) for i in range(box.count())]
    assert listed == ["belong to slots", "travel with tokens"]
    for i in range(box.count()):
        box.setCurrentIndex(i)
        assert box.shown_text() == listed[i]
