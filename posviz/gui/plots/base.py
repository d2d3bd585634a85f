"""A figure: one titled, exportable view of an Evaluation, and the numbers it shows.

Each figure is a QWidget holding a title, a pyqtgraph canvas and a centred message shown
in place of the canvas when there is nothing to plot. It keeps the arrays it currently
shows (``data``), all indexed by the same named dimensions (``dims``), so the CSV export
writes exactly what is on screen.
"""
from __future__ import annotations

import csv
import itertools
import re
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtSvg, QtWidgets

from . import style
from .style import BACKGROUND


class HeatmapImage(pg.ImageItem):
    """An ImageItem that is cheap to paint.

    pyqtgraph renders a float image through its lookup table into an Indexed8 QImage,
    which the raster engine converts on every paint (about 4 ms at 600 x 500 pixels).
    Converting once per render to premultiplied ARGB makes each paint about 0.3 ms.
    """

    def __init__(self, **kwargs):
        super().__init__(axisOrder="row-major", **kwargs)
        self._coloured = None             # (values, their ARGB pixels) from set_coloured

    def set_coloured(self, values: np.ndarray, argb: np.ndarray, levels) -> None:
        """Show ``values`` (rows, cols) as the pixels ``argb`` (rows, cols, uint32
        premultiplied ARGB, e.g. from ``style.colour`` on a worker): no lookup table
        runs on the GUI thread. ``levels`` are those the pixels were coloured for."""
        self.setImage(values, autoLevels=False, levels=levels)
        self._coloured = (self.image, np.ascontiguousarray(argb, dtype=np.uint32))

    def render(self):
        if self._coloured is not None and self._coloured[0] is self.image:
            argb = self._coloured[1]
            self.qimage = pg.functions.ndarray_to_qimage(
                argb, QtGui.QImage.Format.Format_ARGB32_Premultiplied)
            self._renderRequired = self._unrenderable = False
            return
        self._coloured = None
        super().render()
        fast = QtGui.QImage.Format.Format_ARGB32_Premultiplied
        if self.qimage is not None and self.qimage.format() != fast:
            self.qimage = self.qimage.convertToFormat(fast)

    def paint(self, painter, *args):
        """On export, embed the cells enlarged without smoothing: SVG renderers blur a
        small embedded image when they scale it up, and a heatmap's cells must stay
        sharp."""
        if self._exportOpts is False or self.image is None:
            return super().paint(painter, *args)
        if self._renderRequired:
            self.render()
        if self.qimage is None:
            return
        w, h = self.qimage.width(), self.qimage.height()
        k = max(1, 1024 // max(w, h))                 # about 1024 pixels a side at most
        sharp = self.qimage.scaled(w * k, h * k, QtCore.Qt.AspectRatioMode.IgnoreAspectRatio,
                                   QtCore.Qt.TransformationMode.FastTransformation)
        painter.drawImage(QtCore.QRectF(0, 0, w, h), sharp)


class Figure(QtWidgets.QWidget):
    """Base class: subclasses build items once in ``__init__`` and refresh them in ``update_from``."""

    name = "figure"
    title = "figure"
    dims: tuple[str, ...] = ()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setAutoFillBackground(True)
        palette = self.palette()
        palette.setColor(QtGui.QPalette.ColorRole.Window, QtGui.QColor("white"))
        palette.setColor(QtGui.QPalette.ColorRole.WindowText, QtGui.QColor("#202020"))
        self.setPalette(palette)
        self.heading = QtWidgets.QLabel(f"<b>{self.title}</b>")
        self.heading.setWordWrap(True)
        self.heading.setContentsMargins(6, 4, 6, 0)
        self.corner = QtWidgets.QLabel()        # a number beside the heading (set_corner)
        self.corner.setContentsMargins(6, 4, 6, 0)
        self.corner.setAlignment(QtCore.Qt.AlignmentFlag.AlignRight)
        self.corner.hide()
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setBackground(BACKGROUND)
        # The panel adds "Export figure as PNG / SVG / CSV…" to the right-click menu;
        # pyqtgraph's own "Export..." would save the canvas without heading and note.
        self.canvas.scene().contextMenu = []
        self.message = QtWidgets.QLabel()
        self.message.setAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #505050; font-size: 12pt; padding: 24px;")
        self.note = QtWidgets.QLabel()          # a short remark under the canvas
        self.note.setWordWrap(True)
        self.note.setContentsMargins(6, 0, 6, 4)
        self.note.setStyleSheet("color: #505050;")
        self.note.hide()
        self.stack = QtWidgets.QStackedLayout()
        self.stack.addWidget(self.canvas)
        self.stack.addWidget(self.message)
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(0)
        top = QtWidgets.QHBoxLayout()
        top.setSpacing(0)
        top.addWidget(self.heading, 1)
        top.addWidget(self.corner, 0, QtCore.Qt.AlignmentFlag.AlignTop)
        layout.addLayout(top)
        layout.addLayout(self.stack, 1)
        layout.addWidget(self.note)
        self.data: dict[str, np.ndarray] = {}
        self.coords: dict[str, list] = {}    # dim -> coordinate value per index
        self.labels: dict[str, list] = {}    # dim -> token text per index (token dims)

    legend_columns = 2          # at most, when the figure is wide enough

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.fit_legend()

    def fit_legend(self) -> None:
        """Give the legend (if any) as many columns as the figure's width holds."""
        legend = getattr(self, "legend", None)
        if legend is not None:
            style.fit_legend(legend, self.width(), self.legend_columns)

    # -- content --------------------------------------------------------------------
    def update_from(self, ev, layer: int, head: int) -> None:
        raise NotImplementedError

    def show_message(self, text: str) -> None:
        """Replace the canvas by a centred message (nothing to plot)."""
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)

    def show_canvas(self) -> None:
        self.stack.setCurrentWidget(self.canvas)

    def set_note(self, text: str) -> None:
        self.note.setText(text)
        self.note.setVisible(bool(text))

    def set_title(self, text: str) -> None:
        self.heading.setText(f"<b>{text}</b>")

    def set_corner(self, text: str, widest: str) -> None:
        """Show a short number beside the heading, one that changes at every reorder.
        Its label keeps the size of ``widest``: a label whose size may change re-lays
        the whole window out at each change and repaints its panels (1-2 ms a reorder).
        """
        if self.corner.isHidden():
            margins, metrics = self.corner.contentsMargins(), self.corner.fontMetrics()
            self.corner.setFixedSize(
                metrics.horizontalAdvance(widest) + margins.left() + margins.right(),
                metrics.height() + margins.top() + margins.bottom())
            self.corner.show()
        self.corner.setText(text)

    def displayed(self) -> dict[str, np.ndarray]:
        return {key: value.copy() for key, value in self.data.items()}

    # -- export ---------------------------------------------------------------------
    def export_png(self, path: Path, width: int | None = None) -> Path:
        """Render the figure as shown (title included), scaled to ``width`` pixels."""
        size = self.size()
        scale = (width / size.width()) if width else 1.0
        image = QtGui.QImage(max(1, round(size.width() * scale)),
                             max(1, round(size.height() * scale)),
                             QtGui.QImage.Format.Format_ARGB32)
        image.fill(QtGui.QColor("white"))
        painter = QtGui.QPainter(image)
        painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
        painter.setRenderHint(QtGui.QPainter.RenderHint.TextAntialiasing)
        painter.scale(scale, scale)
        self.render(painter, QtCore.QPoint(), QtGui.QRegion(),
                    QtWidgets.QWidget.RenderFlag.DrawChildren)
        painter.end()
        if not image.save(str(path), "PNG"):
            raise OSError(0, "could not write", str(path))
        return path

    def export_svg(self, path: Path) -> Path:
        """Vector export through QSvgGenerator (independent of pyqtgraph's exporter)."""
        generator = QtSvg.QSvgGenerator()
        generator.setFileName(str(path))
        generator.setResolution(self.logicalDpiX())
        generator.setSize(self.size())
        generator.setViewBox(self.rect())
        generator.setTitle(self.title)
        generator.setDescription(f"posviz figure '{self.name}'")
        painter = QtGui.QPainter()
        if not painter.begin(generator):
            raise OSError(0, "could not write", str(path))
        # In export mode pyqtgraph draws scatter symbols as vector paths, not as
        # fragments of a cached pixmap (which QSvgGenerator writes as the whole atlas).
        items = [item for item in self.canvas.scene().items() if hasattr(item, "setExportMode")]
        for item in items:
            item.setExportMode(True, {"antialias": True, "painter": painter})
        try:
            self.render(painter, QtCore.QPoint(), QtGui.QRegion(),
                        QtWidgets.QWidget.RenderFlag.DrawChildren)
        finally:
            for item in items:
                item.setExportMode(False)
            painter.end()
        if not Path(path).is_file():
            raise OSError(0, "could not write", str(path))
        flatten_scaled_strokes(Path(path))
        return path

    def export_csv(self, path: Path) -> Path:
        """One row per index of ``dims``: the coordinates (and token text), then one
        column per array. Empty when the figure shows nothing."""
        with open(path, "w", newline="", encoding="utf-8") as handle:
            write_table(handle, self.dims, self.data, self.coords, self.labels)
        return path


_MATRIX = re.compile(r'transform="matrix\(([^)]*)\)"')
_GROUP = re.compile(r"(<g [^>]*>)(.*?)(</g>)", re.S)
_NUMBER = r"-?[\d.]+(?:[eE][-+]?\d+)?"
_PAIR = re.compile(rf"({_NUMBER}),({_NUMBER})")


def flatten_scaled_strokes(path: Path) -> None:
    """Move data-to-pixel scalings from groups into the coordinates they hold.

    pyqtgraph draws curves in data coordinates under a scaling transform, with
    cosmetic pens that QSvgGenerator writes as ``vector-effect="non-scaling-stroke"``.
    Renderers that ignore that attribute (librsvg, Inkscape, LibreOffice) scale the
    stroke width by the transform, and a curve becomes a band hundreds of pixels wide.
    Only groups whose children are polylines, polygons, absolute M/L/C/Z paths and
    unrotated rectangles are rewritten; everything else is left as written.
    """
    text = path.read_text(encoding="utf-8")

    def rewrite(group: re.Match) -> str:
        opening, body, closing = group.groups()
        found = _MATRIX.search(opening)
        if found is None:
            return group.group(0)
        a, b, c, d, e, f = (float(v) for v in found.group(1).split(","))
        if (a, b, c, d) == (1.0, 0.0, 0.0, 1.0):
            return group.group(0)            # a translation does not scale strokes
        shapes = re.findall(r"<(\w+)", body)
        if not shapes or any(s not in ("polyline", "polygon", "path", "rect") for s in shapes):
            return group.group(0)
        if "rect" in shapes and (b, c) != (0.0, 0.0):
            return group.group(0)            # a rotated rectangle is no longer a rect
        if re.search(r'\sd="[^"]*[^MLCZ\d\s.,eE+-][^"]*"', body):
            return group.group(0)            # a path command other than M, L, C, Z

        def move(pair: re.Match) -> str:
            x, y = float(pair.group(1)), float(pair.group(2))
            return f"{a * x + c * y + e:.6g},{b * x + d * y + f:.6g}"

        def move_rect(rect: re.Match) -> str:
            x, y, w, h = (float(rect.group(k)) for k in ("x", "y", "w", "h"))
            x0, x1 = sorted((a * x + e, a * (x + w) + e))
            y0, y1 = sorted((d * y + f, d * (y + h) + f))
            return (f'<rect{rect.group("pre")}x="{x0:.6g}" y="{y0:.6g}" '
                    f'width="{x1 - x0:.6g}" height="{y1 - y0:.6g}"')

        body = re.sub(r'(points|d)="([^"]*)"',
                      lambda attr: f'{attr.group(1)}="{_PAIR.sub(move, attr.group(2))}"', body)
        body = re.sub(rf'<rect(?P<pre>[^>]*?)x="(?P<x>{_NUMBER})" y="(?P<y>{_NUMBER})" '
                      rf'width="(?P<w>{_NUMBER})" height="(?P<h>{_NUMBER})"', move_rect, body)
        return _MATRIX.sub('transform="matrix(1,0,0,1,0,0)"', opening) + body + closing

    path.write_text(_GROUP.sub(rewrite, text), encoding="utf-8")


def write_table(handle, dims, data, coords, labels) -> None:
    """Write arrays that share the dimensions ``dims`` as one wide CSV table."""
    writer = csv.writer(handle)
    header = []
    for dim in dims:
        header.append(dim)
        if dim in labels:
            header.append(f"{dim}_token")
    names = list(data)
    writer.writerow(header + names)
    if not names:
        return
    shape = data[names[0]].shape
    for index in itertools.product(*(range(s) for s in shape)):
        row = []
        for dim, i in zip(dims, index):
            row.append(coords[dim][i] if dim in coords else i)
            if dim in labels:
                row.append(labels[dim][i])
        writer.writerow(row + [_number(data[name][index]) for name in names])


def _number(value) -> str:
    value = float(value)
    return "" if np.isnan(value) else repr(value)
