"""Every figure of every built-in encoding exports at a figure's size in PNG, SVG and PDF
(a figure the tab hides for lack of content included), and a folder export leaves out
the figures that only say there is nothing to plot."""
from __future__ import annotations

import os

import pytest

import posviz
from posviz.gui.plots import FIGURES
from posviz.models.encodings import KINDS

from figure_files import pixels

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

TEXT = "the cat sat on the mat"
SMALL = {"layers": 2, "heads": 2, "d_model": 16, "seed": 0}


@pytest.mark.parametrize("pe", KINDS)
def test_every_figure_is_written_at_a_figures_size(pe, tmp_path):
    report = posviz.load(pe=pe, **SMALL).compare(TEXT, order=[5, 4, 3, 2, 1, 0])
    for name in FIGURES:
        sizes = {}
        text_only = name == "outputs"          # the built-in model has no head to chart
        for fmt in ("png", "svg", "pdf"):
            width, height = pixels(report.figure(name).save(tmp_path / f"{name}.{fmt}"))
            sizes[fmt] = (width, height)
            assert width > 0 and height > 0, (pe, name, fmt)
            low = 0.02 if text_only else 0.2
            assert low < height / width < (0.2 if text_only else 2.0), (pe, name, fmt)
        png_w, png_h = sizes["png"]
        assert png_h >= (50 if text_only else 300), (pe, name, png_w, png_h)  # no strip
        pdf_w, pdf_h = sizes["pdf"]                           # the same shape in points
        assert abs(pdf_h / pdf_w - png_h / png_w) < 0.02, (pe, name, sizes)


@pytest.mark.parametrize("pe, absent", [("rope", {"encoding", "encoding_similarity"}),
                                        ("alibi", {"encoding", "encoding_similarity"}),
                                        ("t5", {"encoding", "encoding_similarity"}),
                                        ("learned", {"relative_profile"}),
                                        ("sinusoidal", set())])
def test_a_folder_export_writes_no_placeholder_figures(pe, absent, tmp_path):
    from posviz import cli
    status = cli.main(["export", "--pe", pe, "--out", str(tmp_path), "--format", "png,pdf",
                       "--layers", "2", "--heads", "2", "--d-model", "16"])
    assert status == 0
    written = {path.stem for path in tmp_path.iterdir()}
    assert written == set(FIGURES) - absent
    for path in tmp_path.glob("*.p*"):
        width, height = pixels(path)
        tall = 40 if path.stem == "outputs" else 100        # text only: no chart to draw
        assert height >= tall and width >= 100, (path.name, width, height)


def test_outputs_without_a_chart_export_their_text_whole_and_nothing_more(tmp_path):
    """A model without a language-model head has only the pooled cosine to say: the
    export is the heading and that text, its last line in it, not a page of white."""
    from PySide6 import QtGui
    report = posviz.load(**SMALL).compare(TEXT, order=[5, 4, 3, 2, 1, 0])
    image = QtGui.QImage(str(report.figure("outputs").save(tmp_path / "outputs.png")))
    rows = [any(image.pixelColor(x, y).lightness() < 200 for x in range(0, image.width(), 2))
            for y in range(image.height())]                  # rows with ink
    inked = [y for y, ink in enumerate(rows) if ink]
    assert image.height() < 200 and inked
    assert 0 < image.height() - 1 - inked[-1] <= 40          # the text's last line is in
    assert sum(rows) >= 3 * 8                                 # three lines of text at least


@pytest.mark.parametrize("pe, name", [("rope", "attention"),
                                      ("sinusoidal", "encoding_similarity")])
def test_the_command_line_and_python_draw_a_map_at_one_size_with_square_cells(pe, name,
                                                                               tmp_path):
    """``posviz export`` and ``figure(name).save`` laid the attention maps out at two
    sizes (1600 × 516 and 1500 × 535), in neither with square query × key cells."""
    from PySide6 import QtGui

    from posviz import cli
    from posviz.gui.plots.own_size import map_boxes
    args = ["--pe", pe, "--text", TEXT, "--order", "5,4,3,2,1,0", "--layers", "2"]
    assert cli.main(["export", *args, "--out", str(tmp_path), "--format", "png",
                     "--no-csv"]) == 0
    report = posviz.load(pe=pe, layers=2).compare(TEXT, order=[5, 4, 3, 2, 1, 0])
    figure = report.figure(name)
    exported = QtGui.QImage(str(tmp_path / f"{name}.png"))
    saved = QtGui.QImage(str(figure.save(tmp_path / "saved.png")))
    assert (exported.width(), exported.height()) == (saved.width(), saved.height())
    assert (saved.width(), saved.height()) == figure.size()
    boxes = map_boxes(figure._figure())
    assert boxes
    for box in boxes:
        view = box.viewRect()                       # tokens × tokens the box spans
        cell_w, cell_h = box.width() / view.width(), box.height() / view.height()
        assert abs(cell_w - cell_h) < 1 / 6, (name, box.width(), box.height(), view)
        assert abs(box.width() - box.height()) <= 1


def test_python_draws_each_head_of_a_long_input_as_the_command_line_exports_it(
        monkeypatch, tmp_path):
    """A long input's attention figure is drawn from its head run again (Report.run_for):
    the second head drawn from Python squared its own panel while still showing the
    head drawn before: 1500 × 484 with maps wider than tall (the export's: 1500 × 556),
    and so was every head drawn after it."""
    from PySide6 import QtGui

    from posviz import cli
    from posviz.gui.plots.own_size import map_boxes
    from posviz.models import maps as layer_maps
    monkeypatch.setattr(layer_maps, "KEEP_ALL", 0)          # every input a long one
    text = " ".join((TEXT.split() * 100)[:600])             # past HEAD_SIDE: pooled maps
    model = ["--pe", "rope", "--mask", "causal", "--layers", "2", "--heads", "2"]
    views = [(1, 0), (2, 1), (1, 0)]
    exported = {}
    for layer, head in set(views):
        out = tmp_path / f"cli-{layer}-{head}"
        assert cli.main(["export", *model, "--text", text, "--layer", str(layer),
                         "--head", str(head), "--out", str(out), "--format", "png",
                         "--no-csv"]) == 0
        image = QtGui.QImage(str(out / "attention.png"))
        exported[layer, head] = (image.width(), image.height())
    report = posviz.load(pe="rope", mask="causal", layers=2, heads=2).compare(text)
    for turn, (layer, head) in enumerate(views):
        figure = report.figure("attention", layer=layer, head=head)
        saved = QtGui.QImage(str(figure.save(tmp_path / f"python-{turn}.png")))
        assert (saved.width(), saved.height()) == exported[layer, head], (turn, layer, head)
        boxes = map_boxes(figure._figure())
        assert boxes
        for box in boxes:
            assert abs(box.width() - box.height()) <= 1, (turn, box.width(), box.height())
