"""A PDF holds its heatmaps and colour bars as lossless images: every cell the exact
colour drawn on screen, as in the PNG and SVG (no JPEG, whose colours drift)."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pyqtgraph as pg  # noqa: E402
from PySide6 import QtGui, QtWidgets  # noqa: E402

import posviz  # noqa: E402
from figure_files import pdf_images  # noqa: E402

TEXT = "the cat sat on the mat"
SMALL = {"layers": 2, "heads": 2, "d_model": 16, "seed": 0}


def rgb(image: QtGui.QImage) -> np.ndarray:
    """(height, width, 3) uint8 of an opaque QImage."""
    image = image.convertToFormat(QtGui.QImage.Format.Format_RGB888)
    rows = np.frombuffer(image.constBits(), np.uint8, image.bytesPerLine() * image.height())
    return rows.reshape(image.height(), -1)[:, :image.width() * 3].reshape(
        image.height(), image.width(), 3).copy()           # before the image is freed


def test_a_pdf_keeps_every_cell_colour_exact(tmp_path):
    report = posviz.load(pe="sinusoidal", **SMALL).compare(TEXT, order=[5, 4, 3, 2, 1, 0])
    figure = report.figure("attention")
    path = figure.save(tmp_path / "attention.pdf")
    images = pdf_images(path.read_bytes())
    assert images and not [i for i in images if i["filter"] == b"/DCTDecode"], images
    items = figure._figure().canvas.scene().items()
    maps = [rgb(item.qimage) for item in items
            if isinstance(item, pg.ImageItem) and item.qimage is not None]
    bars = [rgb(item.pixmap().toImage()) for item in items       # ColorBarItem's bar
            if isinstance(item, QtWidgets.QGraphicsPixmapItem)]
    assert maps and bars
    drawn = maps + bars
    written = [i["pixels"] for i in images if "pixels" in i]
    for cells in drawn:
        h, w, _ = cells.shape

        def same(pixels) -> bool:           # written enlarged k times, unsmoothed
            k = pixels.shape[1] // w        # each cell read at its middle
            return (k >= 1 and pixels.shape == (h * k, w * k, 3)
                    and np.array_equal(pixels[k // 2::k, k // 2::k], cells))
        assert any(same(pixels) for pixels in written), (cells.shape, len(written))
    # viridis' lowest colour, as in the swap map's zero diagonal, written exactly
    assert any((pixels == (68, 1, 84)).all(axis=2).any() for pixels in written)
