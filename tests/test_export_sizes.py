"""Every figure of every built-in encoding exports at a figure's size in PNG, SVG and PDF
(a figure the tab hides for lack of content included), and a folder export leaves out
the figures that only say there is nothing to plot."""
from __future__ import annotations

import os
import re

import pytest

import posviz
from posviz.gui.plots import FIGURES

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ENCODINGS = ("none", "sinusoidal", "learned", "rope", "alibi", "t5")
TEXT = "the cat sat on the mat"
SMALL = {"layers": 2, "heads": 2, "d_model": 16, "seed": 0}


def pixels(path) -> tuple[float, float]:
    """(width, height) of a written PNG, SVG or PDF, in its own unit (pixels or points)."""
    suffix = path.suffix
    if suffix == ".png":
        from PySide6 import QtGui
        image = QtGui.QImage(str(path))
        return image.width(), image.height()
    if suffix == ".svg":
        found = re.search(r'<svg[^>]*\swidth="([\d.]+)\w*"\s+height="([\d.]+)',
                          path.read_text(encoding="utf-8"))
        return float(found.group(1)), float(found.group(2))
    box = re.search(rb"/MediaBox \[\s*([\d.]+) ([\d.]+) ([\d.]+) ([\d.]+)",
                    path.read_bytes())
    return float(box.group(3)) - float(box.group(1)), float(box.group(4)) - float(box.group(2))


@pytest.mark.parametrize("pe", ENCODINGS)
def test_every_figure_is_written_at_a_figures_size(pe, tmp_path):
    report = posviz.load(pe=pe, **SMALL).compare(TEXT, order=[5, 4, 3, 2, 1, 0])
    for name in FIGURES:
        sizes = {}
        for fmt in ("png", "svg", "pdf"):
            width, height = pixels(report.figure(name).save(tmp_path / f"{name}.{fmt}"))
            sizes[fmt] = (width, height)
            assert width > 0 and height > 0, (pe, name, fmt)
            assert 0.2 < height / width < 2.0, (pe, name, fmt, width, height)
        png_w, png_h = sizes["png"]
        assert png_h >= 300, (pe, name, png_w, png_h)      # never a 1-pixel strip
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
        assert height >= 100 and width >= 100, (path.name, width, height)
