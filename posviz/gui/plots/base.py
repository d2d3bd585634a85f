"""A figure: one titled, exportable view of an Evaluation, and the numbers it shows.

A figure only draws: ``update_from(shown, layer, head)`` hands what posviz.views.shown
computed to its items. Each figure declares itself once, as class attributes (its name,
tab, row, title, data dimensions, what of the selection it shows and its paragraph of
the guide); the panel, export, provenance and the guide read those (figures.py lists
the figures).

Each figure is a QWidget holding a title, a pyqtgraph canvas and a centred message shown
in place of the canvas when there is nothing to plot. It keeps the arrays it currently
shows (``data``), all indexed by the same named dimensions (``dims``), so the CSV export
writes exactly what is on screen.
"""
from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtSvg, QtWidgets

from . import captions, style
from .exporting import drop_export_menu, flatten_scaled_strokes, lossless_images, portable_text
from .export_pens import scaled_pens
from .hover import HoverText, wrapped
from .one_line import OneLineLabel, fit_note
from .style import BACKGROUND
from .tabs import Tab
from .wheel import zoom_with_ctrl
from .repaint import uncached
from posviz.document.files import whole_file, write_table
from posviz.errors import raise_held
from posviz.document.provenance import add_to_svg, comment_lines, xmp_metadata

__all__ = ["Figure", "write_table"]

class Figure(QtWidgets.QWidget):
    """Subclasses build their items in ``__init__`` and refresh them in ``update_from``."""

    name = "figure"             # stable: export writes <name>.png, .svg, .pdf, .csv
    title = "figure"            # the heading until the first evaluation, and the guide's
    tab: Tab | None = None      # the tab it sits in
    row = 0                     # its row in the tab; the figures of a row sit side by side
    dims: tuple[str, ...] = ()  # the named dimensions of every array in ``data``
    selects: tuple[str, ...] = ()   # what of the Selection it draws: "layer", "head"
                                    # (a figure may set its own as it draws a model)
    may_select: tuple[str, ...] = ()    # what it draws of it for some models only
                                        # (those ``chosen_for`` says)
    guide = ""                  # what it shows, for the guide (markdown, after the title)

    @staticmethod
    def chosen_for(backend) -> bool:
        """Does ``may_select`` choose what this figure draws for ``backend``'s model?"""
        return False
    hovered = QtCore.Signal(str)        # the value under the mouse, in words
    picked = QtCore.Signal(int, int)    # a layer 1..L and head 0..h-1 clicked on it

    def __init__(self, parent=None):
        super().__init__(parent)
        self.setAutoFillBackground(True)
        palette = self.palette()
        palette.setColor(QtGui.QPalette.ColorRole.Window, QtGui.QColor("white"))
        palette.setColor(QtGui.QPalette.ColorRole.WindowText, QtGui.QColor(style.TEXT_COLOUR))
        self.setPalette(palette)
        self.heading = QtWidgets.QLabel(f"<b>{self.title}</b>")
        self.heading.setFont(style.text_font(style.TITLE_PT))
        self.heading.setWordWrap(True)
        self.heading.setContentsMargins(6, 4, 6, 0)
        self.corner = QtWidgets.QLabel()        # a number beside the heading (set_corner)
        self.corner.setFont(style.text_font(style.TITLE_PT))
        self.corner.setContentsMargins(6, 4, 6, 0)
        self.corner.setAlignment(QtCore.Qt.AlignmentFlag.AlignRight)
        self.corner.hide()
        self.canvas = pg.GraphicsLayoutWidget()
        self.canvas.setBackground(BACKGROUND)
        drop_export_menu(self.canvas)          # the panel adds its own export entries
        zoom_with_ctrl(self.canvas)            # a plain wheel scrolls the page
        self.message = QtWidgets.QLabel()
        self.message.setAlignment(QtCore.Qt.AlignmentFlag.AlignCenter)
        self.message.setWordWrap(True)
        self.message.setStyleSheet("color: #505050; font-size: 12pt; padding: 24px;")
        # a short remark under the canvas; a long one in the lines the plot can spare
        self.note = OneLineLabel() if self.note_one_line else QtWidgets.QLabel()
        self.note.setFont(style.text_font())
        self.note.setWordWrap(not self.note_one_line)
        self.note.setContentsMargins(6, 0, 6, 4)
        self.note.setStyleSheet(f"color: {style.NOTE_COLOUR};")
        self.note.hide()
        self.hover = HoverText(self)           # the value under the mouse, while there
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

    legend = None               # a figure with curves puts its LegendItem here
    legend_columns = 2          # at most, when the figure is wide enough
    legend_beside = 0           # figure width (pixels) from which the legend sits beside
                                # the plot in one column, giving the plot its height; 0: never
    note_one_line = False       # the note takes the lines the plot can spare, one elided
                                # line at least (whole in its tooltip, exports, a click)
    shows_order = False         # draws the reordered run: its caption names text and order
    caption = ""                # a line under the heading in exports (captions.py), set by
                                # the panel writing the file: the model, text and order

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.fit_legend()
        fit_note(self)                  # after the legend: its rows count

    def fit_legend(self) -> None:
        """Give the legend (if any) as many columns as the figure's width holds, or put
        it beside the plot when the figure is wide enough for that."""
        legend = self.legend
        if legend is None:
            return
        beside = bool(self.legend_beside) and self.width() >= self.legend_beside
        if self.legend_beside:
            style.place_legend(self.canvas, legend, beside)
        if not beside:
            # a hidden legend (one curve) leaves no empty row under the plot
            room = 1e6 if legend.isVisible() else 0
            self.canvas.ci.layout.setRowMaximumHeight(1, room)
            legend.setMaximumHeight(room)
            style.fit_legend(legend, self.width(), self.legend_columns)

    # -- content --------------------------------------------------------------------
    def update_from(self, shown, layer: int, head: int) -> None:
        """Draw what ``shown`` (a views.shown.Shown) holds for layer 1..L, head 0..h-1."""
        raise NotImplementedError

    def follow(self, selection) -> None:
        """Show a part of the view Selection that needs no new data (a colour range, an
        outline); called whenever the selection changes."""

    def show_message(self, text: str) -> None:
        """Replace the canvas by a centred message (nothing to plot)."""
        self.message.setText(text)
        self.stack.setCurrentWidget(self.message)

    def show_canvas(self) -> None:
        self.stack.setCurrentWidget(self.canvas)

    def set_note(self, text: str, shorts: tuple[str, ...] = ()) -> None:
        """The note under the canvas; ``shorts``: it in fewer words, longest first, for a
        one-line note too long for its line (the whole stays in the tooltip and exports)."""
        if self.note_one_line and shorts != self.note.shorts:
            self.note.shorts = shorts
            self.note.update()
        if text == self.note.text() and self.note.isVisibleTo(self) == bool(text):
            return                      # most reorders: 0.1 ms of wrapping and fitting
        self.note.setText(text)
        self.note.setVisible(bool(text))
        if self.note_one_line:
            self.note.setToolTip(wrapped(text))
            fit_note(self)

    def set_title(self, text: str) -> None:
        if self.heading.text() != (heading := f"<b>{text}</b>"):
            self.heading.setText(heading)
            fit_note(self)              # a heading of more lines leaves the note fewer

    def set_corner(self, text: str, widest: str) -> None:
        """Show a short number beside the heading, one that changes at every reorder.
        Its label keeps the size of ``widest``: a label whose size may change re-lays
        the whole window out at each change and repaints its panels.
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
    def export_png(self, path: Path, width: int | None = None, dpi: int | None = None,
                   provenance: dict | None = None, scale: float | None = None) -> Path:
        """Render the figure as shown (title included) at ``width`` pixels, at ``dpi``
        dots per inch of its on-screen size, or ``scale`` times that size (None: as on
        screen), written as PNG with ``provenance`` in its text chunks."""
        image = self.render_image(width, dpi, scale)
        raise_held()                    # drawn: a Ctrl+C stops it before it is encoded
        for key, value in (provenance or {}).items():
            image.setText(key, str(value))
        if not image.save(str(path), "PNG"):
            raise OSError(0, "could not write", str(path))
        return path

    def render_image(self, width: int | None = None, dpi: int | None = None,
                     scale: float | None = None) -> QtGui.QImage:
        """The figure drawn afresh at the asked resolution (``scale`` first, then
        ``width``, then ``dpi``): a QImage whose device-pixel ratio is the scale, so text,
        lines and markers are painted at that resolution (never a bitmap enlarged)."""
        size = self.export_size()
        scale = scale or (width / max(1, size.width()) if width else
                          dpi / max(1, self.logicalDpiX()) if dpi else 1.0)
        pixels = QtCore.QSize(max(1, round(size.width() * scale)),
                              max(1, round(size.height() * scale)))
        image = QtGui.QImage(pixels, QtGui.QImage.Format.Format_ARGB32)
        image.setDevicePixelRatio(scale)
        image.fill(QtGui.QColor("white"))
        # painted at the screen's dots per inch, which sizes text given in points as the
        # layout measured it (the device-pixel ratio alone scales it); then the dpi asked
        self._set_dpi(image, self.logicalDpiX())
        # ended however the painting ends: a painter left on a device that is then
        # destroyed (an exception's frame outliving it) aborts the process
        with QtGui.QPainter(image) as painter:
            painter.setRenderHint(QtGui.QPainter.RenderHint.Antialiasing)
            painter.setRenderHint(QtGui.QPainter.RenderHint.TextAntialiasing)
            painter.setRenderHint(QtGui.QPainter.RenderHint.SmoothPixmapTransform, False)
            # In export mode pyqtgraph draws scatter symbols as paths at this resolution,
            # not as fragments of its screen-resolution pixmap atlas (their size in
            # logical pixels: the device-pixel ratio scales them); lines scaled alike.
            with scaled_pens(self, scale):
                self._render_all(painter)
        image.setDevicePixelRatio(1.0)
        if dpi:
            self._set_dpi(image, dpi)
        return image

    @staticmethod
    def _set_dpi(image: QtGui.QImage, dpi: float) -> None:
        image.setDotsPerMeterX(round(dpi / 0.0254))
        image.setDotsPerMeterY(round(dpi / 0.0254))

    def chrome(self) -> list:
        """Items and widgets that serve only the screen (a selection outline, a control):
        left out of exports."""
        return []

    @contextmanager
    def _exporting(self, painter, **options):
        items = [item for item in self.canvas.scene().items()
                 if hasattr(item, "setExportMode")]
        # a widget counts by its own flag: a figure exported unshown has none visible
        hidden = [item for item in self.chrome()
                  if (not item.isHidden() if isinstance(item, QtWidgets.QWidget)
                      else item.isVisible())]
        for item in hidden:
            item.setVisible(False)
        cached = uncached(self)             # a cached picture: a bitmap in SVG and PDF
        for item in items:
            item.setExportMode(True, {"antialias": True, "painter": painter, **options})
        try:
            yield
        finally:
            for item in items:
                item.setExportMode(False)
            cached()
            for item in hidden:
                item.setVisible(True)

    def _settle(self) -> None:
        """Paint the figure off screen and lay it out, twice: its axes take the room
        their labels need while painting, so a figure never yet drawn (a tab not
        opened, a part scrolled away) would be exported with labels over its titles."""
        for _ in range(2):
            self.grab()
            QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.LayoutRequest)

    def export_size(self) -> QtCore.QSize:
        """The figure's size in an export (captions.export_size): as on screen, taller
        by its caption and the lines of a note the screen shows elided."""
        return captions.export_size(self)

    def _render_all(self, painter) -> None:
        """Paint the figure (the exporting state on) with its caption and its note whole
        where elided (captions.render)."""
        with self._exporting(painter):
            captions.render(self, painter)

    def export(self, path: Path, width: int | None = None, dpi: int | None = None,
               provenance: dict | None = None, scale: float | None = None) -> Path:
        """Write the figure as .png (at ``width`` pixels, ``dpi`` or ``scale``), .svg,
        .pdf or .csv, by the path's suffix (of FIGURE_FORMATS), with ``provenance``."""
        suffix = Path(path).suffix.lower().lstrip(".")
        if suffix != "csv":
            self._settle()
        writers = {"png": lambda to, facts: self.export_png(to, width, dpi, facts, scale),
                   "svg": self.export_svg, "pdf": self.export_pdf, "csv": self.export_csv}
        # whole or not at all (document.files.whole_file): a Ctrl+C mid-write leaves none
        return whole_file(path, lambda temporary: writers[suffix](temporary, provenance))

    def export_svg(self, path: Path, provenance: dict | None = None) -> Path:
        """Vector export through QSvgGenerator (independent of pyqtgraph's exporter),
        with ``provenance`` in a <metadata> element."""
        generator = QtSvg.QSvgGenerator()
        generator.setFileName(str(path))
        generator.setResolution(self.logicalDpiX())
        size = self.export_size()
        generator.setSize(size)
        generator.setViewBox(QtCore.QRect(QtCore.QPoint(), size))
        generator.setTitle(self.title)
        generator.setDescription(f"posviz figure '{self.name}'")
        self._paint_vector(generator, path)
        flatten_scaled_strokes(Path(path))
        portable_text(Path(path))
        if provenance:
            text = Path(path).read_text(encoding="utf-8")
            Path(path).write_text(add_to_svg(text, provenance), encoding="utf-8")
        return path

    def export_pdf(self, path: Path, provenance: dict | None = None) -> Path:
        """Vector export through QPdfWriter: one page the figure's size on screen, text as
        text, lines as paths, heatmaps as lossless images Qt scales up without smoothing
        (crisp cells of exact colours in any viewer); ``provenance`` in its XMP metadata."""
        open(path, "wb").close()          # an unwritable path: the OSError saying why
        writer = QtGui.QPdfWriter(str(path))
        dpi = self.logicalDpiX()
        writer.setResolution(dpi)
        size = self.export_size()
        points = QtCore.QSizeF(size.width() * 72 / dpi, size.height() * 72 / dpi)
        writer.setPageSize(QtGui.QPageSize(points, QtGui.QPageSize.Unit.Point, self.name,
                                           QtGui.QPageSize.SizeMatchPolicy.ExactMatch))
        writer.setPageMargins(QtCore.QMarginsF(0, 0, 0, 0))
        writer.setTitle(self.title)
        writer.setCreator(f"posviz figure '{self.name}'")
        if provenance:
            writer.setDocumentXmpMetadata(xmp_metadata(provenance, self.title))
        lossless_images(self)
        return self._paint_vector(writer, path)

    def _paint_vector(self, device, path: Path) -> Path:
        painter = QtGui.QPainter()
        if not painter.begin(device):
            raise OSError(0, "could not write", str(path))
        # export mode: scatter symbols as paths, not bits of a pixmap atlas (written whole)
        try:
            self._render_all(painter)
        finally:
            painter.end()
        if not Path(path).is_file():
            raise OSError(0, "could not write", str(path))
        return path

    def export_csv(self, path: Path, provenance: dict | None = None) -> Path:
        """``# key: value`` lines of ``provenance``, then one row per index of ``dims``:
        the coordinates (and token text), then one column per array. Only a header
        (and a comment saying why) when the figure shows nothing."""
        with open(path, "w", newline="", encoding="utf-8") as handle:
            handle.writelines(comment_lines(provenance or {}))
            if not self.data and self.stack.currentWidget() is self.message:
                # what the figure says instead of a plot says why there is no table
                handle.writelines(comment_lines({"no table": self.message.text()}))
            write_table(handle, self.dims, self.data, self.coords, self.labels)
        return path
