"""The Experiments tab's figure: a sweep's band per layer on the log scale with the noise
floor, a swap map, a position probe, a paper check or several encodings' curves for one
reorder, exportable like every figure."""
from __future__ import annotations

from html import escape
from pathlib import Path

import numpy as np
import pyqtgraph as pg  # noqa: I001
from PySide6 import QtCore, QtWidgets  # before pyqtgraph, so it binds PySide6

from .jobs import SWAP_MAP
from .probes import draw_probes
from .sweep_band import draw_band
from .swaps import draw_pairs, hover_text, let_go_square, map_at, which_text
from ..plots import style
from ..plots.base import Figure
from ..plots.hover import CurveHover
from ..plots.layer_axis import LAYER_AXIS, set_layer_ticks
from ..plots.log_ticks import (ZERO_MARGIN, on_zero_row, one_notation, zero_decade,
                               zero_row)
from ..plots.noise_floor import floor_line, place_label
from ..plots.own_size import hold_whole, lay_out_at_own_size
from ..plots.token_axis import TokenAxis, token_axes
from ..plots.wheel import frame
from posviz.analysis.experiments.probe import FEATURE_NAMES, ProbeLayer, verdict
from posviz.models.training.checkpoint import plural
from posviz.views.shown import zero_level

STALE_COLOUR = "#9a3b00"     # the line of a drawing of other inputs: dark orange, on white
# each left-axis title's short form, with its unit, for a plot too short to hold it whole
SHORT_LEFT = {"relative change (log)": "change (log)",
              "mean absolute error (positions)": "error (positions)",
              "variance of the attention output": "variance (units²)",
              "held-out perplexity (log)": "perplexity (log)",
              "slope m_h (log)": "slope m_h (log)",
              "|score| / d_head (log scale)": "|score| / d_head (log)",
              "last layer's change (ratio, log)": "change (log)",
              # the order use's ratio: at 1024 x 700 "shuffled / in-order per…"
              "shuffled / in-order perplexity": ("shuffled / in-order ppl",
                                                 "shuffled / in order")}


class ExperimentFigure(Figure):
    """A sweep's band per layer (log scale, noise floor), a swap map, a probe or a paper
    check: whatever the last experiment produced."""

    name = "experiment"
    title = "Experiment"
    note_one_line = True        # a paper check's note took a short window's whole plot
    subtitle = ""               # what the drawing shows ran on (jobs.caption)
    stale_line = ""             # what a drawing of other inputs was computed for
    filed_line = ""             # that line as a file carries it: no word of the controls
    _title = ""
    INVITATION = "Choose an experiment above and press Run (Ctrl+Return)."
    legend_columns = 3          # at most, when the figure is wide enough
    own_width = 960             # pixels: an export's width (wider where its scene needs)
    own_plot_height = 360       # pixels: the height of an export's plot area
    least_plot_height = 145     # pixels on screen (a note's 3 lines fit at 1024): less scrolls

    def __init__(self, parent=None):
        super().__init__(parent)
        self.plot = self.canvas.addPlot(row=0, col=0)
        self.plot.hideButtons()
        one_notation(self.plot.getAxis("left"))     # as every log axis: 10⁻⁴ ... 10⁰
        self.legend = style.legend_below(self.canvas)
        self.bar: pg.ColorBarItem | None = None     # the swap map's colour bar, if shown
        self.side: pg.PlotItem | None = None        # a second plot beside, if drawn
        self.labelled: list = []    # (line, its plot, its texts): labels kept off the data
        self._map_bar: pg.ColorBarItem | None = None    # made (and aligned) once
        # a white veil over a result of other inputs: dimmed on screen, whole in exports
        self.veil = QtWidgets.QWidget(self)
        self.veil.setAttribute(QtCore.Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.veil.setAttribute(QtCore.Qt.WidgetAttribute.WA_StyledBackground)
        self.veil.setStyleSheet("background: rgba(255, 255, 255, 170);")
        self.veil.hide()
        self._pairs = None
        self.map_text = 0           # which text's swap map a swap sweep shows
        self.map_layer = None       # at which layer (None: the one the sweep measured)
        self._series = []                           # the curves as drawn (hover.Series)
        self._shown = None          # (job, result, metric, subtitle) of the drawing shown
        self._twin = None           # drawn_alone's figure, while it draws what is shown
        # once the layout settles: the least size that keeps the figure whole
        self._holding = QtCore.QTimer(self, singleShot=True, interval=0,
                                      timeout=self._hold_whole)
        self.curve_hover = CurveHover(self, self.plot, lambda: self._series, connect=False)
        self.canvas.scene().sigMouseMoved.connect(self._mouse_moved)
        self.show_message(self.INVITATION)

    def _mouse_moved(self, scene_pos) -> None:
        """A swap map's cell under the mouse, in words (tooltip and status line)."""
        if self._pairs is None:
            return self.curve_hover.moved(scene_pos)
        if not self.plot.vb.sceneBoundingRect().contains(scene_pos):
            return self.hover.clear()
        point = self.plot.vb.mapSceneToView(scene_pos)
        i, j, n = int(np.floor(point.y())), int(np.floor(point.x())), len(self._pairs.tokens)
        if 0 <= i < n and 0 <= j < n:
            text = hover_text(self._pairs, i, j)
            self.hover.show(text)
        else:
            self.hover.clear()

    def set_title(self, text: str) -> None:
        """The title in bold and, on a line below, ``subtitle``: what ran (the model, its
        encoding, mask and weights), and ``stale_line`` while the figure is of other
        inputs than the controls', on screen and in every export."""
        self._title = text
        lines = ((self.subtitle, ""), (self.stale_line, f" color: {STALE_COLOUR};"))
        below = "".join(f"<br><span style='font-weight: normal;{colour}'>"
                        f"{escape(line, quote=False)}</span>"
                        for line, colour in lines if line)
        self.heading.setText(f"<b>{text}</b>{below}")

    def draw(self, job, result, metric: str | None) -> str:
        """Draw ``result`` of ``job`` (runtime.experiments.ExperimentJob), a sweep or a
        comparison by ``metric`` (jobs.shown_metric: one it has, or the swap
        map); a line to say beside it, or ""."""
        self._shown = (job, result, metric, self.subtitle)
        self._drop_twin()
        self._holding.start()
        if job.what == "compare":
            self.show_compare(result, metric)
        elif job.what == "extend":
            self.show_extension(result.to_dict(), metric)
        elif job.what == "order":
            from .extension import draw_order_use
            draw_order_use(self, result)
        elif job.what == "sweep" and metric == SWAP_MAP:
            self.show_pairs(map_at(result.pairs[self.map_text], self.map_layer),
                            which_text(result.texts, self.map_text)
                            if len(result.texts) > 1 else "")
        elif job.what == "sweep":
            self.show_sweep(result, metric)
        elif job.what == "probe":
            self.show_probe([vars(r) for r in result.layers],
                            f"Position probe ({FEATURE_NAMES[result.features]}): "
                            f"{plural(result.tokens, 'token')} of "
                            f"{plural(result.texts, 'text')}, held out by text",
                            result.verdict)
            return result.note
        else:
            self.show_paper(result)
        return ""

    def set_stale(self, stale: bool, said: str = "", filed: str | None = None) -> None:
        """Dim the drawing (its inputs are no longer the controls') or show it plainly;
        ``said``: what it was computed for, a line under the subtitle while it is dimmed;
        ``filed``: that line in exports (undimmed), ``said`` when None, "" for none."""
        self.veil.setGeometry(self.rect())
        self.veil.raise_()
        self.veil.setVisible(stale)
        said = said if stale else ""
        filed = (said if filed is None else filed) if stale else ""
        if (said, filed) != (self.stale_line, self.filed_line):
            self._drop_twin()
            self.stale_line, self.filed_line = said, filed
            self.set_title(self._title)

    def chrome(self) -> list:
        """The veil dims a stale drawing on screen only: an export is drawn whole."""
        return [self.veil]

    def is_stale(self) -> bool:
        return self.veil.isVisibleTo(self)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.veil.setGeometry(self.rect())
        self._holding.start()

    def event(self, event) -> bool:
        if event.type() == QtCore.QEvent.Type.LayoutRequest:
            self._holding.start()       # a heading, note or legend of other lines
        return super().event(event)

    def _hold_whole(self) -> None:
        """A small window scrolls the figure, never cuts it (own_size.hold_whole)."""
        hold_whole(self, self.least_plot_height)

    # -- a file at the figure's own size --------------------------------------------------
    def drawn_alone(self) -> Figure:
        """This figure's drawing at its own size: a twin drawing what it shows off
        screen (own_size: as wide as own_width and its scene need, its plot
        own_plot_height tall), kept while the drawing stays; itself while it shows a
        message (no drawing)."""
        if self._shown is None:
            return self
        if self._twin is None:
            job, result, metric, subtitle = self._shown
            twin = self._twin = ExperimentFigure()
            twin.subtitle, twin.map_text = subtitle, self.map_text
            twin.map_layer = self.map_layer
            twin.draw(job, result, metric)
            twin.stale_line = self.filed_line
            twin.set_title(twin._title)
            lay_out_at_own_size(twin, twin.plot, self.own_width, self.own_plot_height)
        return self._twin

    def _drop_twin(self) -> None:
        if self._twin is not None:
            self._twin.close()
            self._twin.deleteLater()
            self._twin = None

    def export(self, path: Path, width: int | None = None, dpi: int | None = None,
               provenance: dict | None = None, scale: float | None = None) -> Path:
        """Figure.export of the drawing at its own size (drawn_alone), whatever the
        figure's size on screen (a CSV: the numbers shown)."""
        figure = self if Path(path).suffix.lower() == ".csv" else self.drawn_alone()
        return Figure.export(figure, path, width, dpi, provenance, scale)

    def _reset(self, left: str, bottom: str, log: bool, tokens: bool = False) -> None:
        """Remove every item of the previous drawing (curves, lines, legend entries, the
        colour bar, token axes) and its view (inverted axis, log mode, zoom); ``tokens``:
        token axes (a swap map), else number axes."""
        self.plot.clear()
        self.legend.clear()
        self._pairs = None                          # the swap map under the mouse, if shown
        self._series, self.labelled = [], []
        self.hover.clear()
        for item in (self.bar, self.side):          # the swap map's bar, a second plot
            if item is not None:
                self.canvas.removeItem(item)
        if self.side is not None:                   # the legend under one plot again
            from .papers import _legend_across
            _legend_across(self, 1)
        self.bar = self.side = None
        if isinstance(self.plot.getAxis("left"), TokenAxis) != tokens:
            self.plot.setAxisItems(token_axes() if tokens else
                                   {side: pg.AxisItem(side) for side in ("left", "bottom")})
            one_notation(self.plot.getAxis("left"))
        view = self.plot.getViewBox()
        view.invertY(False)
        let_go_square(self)                         # a swap map's square cells only
        view.enableAutoRange(enable=False)
        self.plot.setLogMode(x=False, y=log)
        style.style_plot(self.plot, "", left, bottom, short_left=SHORT_LEFT.get(left, ""))
        self.plot.getAxis("left").setTicks(None)
        if not tokens:
            zero_row(self.plot.getAxis("left"), None)     # a drawing with zeros sets it
            set_layer_ticks(self.plot.getAxis("bottom"), 0)
        self.show_canvas()

    def _frame(self, y_range: tuple[float, float] | None = None, layers: int = 0,
               pad: float = 0.04) -> None:
        """Fit the view to every curve and dot drawn (x over ``layers`` rows, in to L, if
        given; y unless ``y_range``), so no drawing keeps the previous one's range or
        clips its own data; padded so that every mark lies whole inside the view, even
        the least one on screen (least_plot_height pixels each way)."""
        xs, ys, mark = [], [], 0.0      # mark: pixels a mark reaches past its point
        for item in self.plot.items:
            if isinstance(item, (pg.PlotCurveItem, pg.ScatterPlotItem)):
                x, y = item.getData()
                if x is not None and len(x):
                    xs.append(np.asarray(x, float))
                    ys.append(np.asarray(y, float))
                    mark = max(mark, item.pixelPadding())
        if not xs:
            return
        pad = max(pad, mark / (self.least_plot_height - 2 * mark))
        x, y = np.concatenate(xs), np.concatenate(ys)
        x_low, x_high = (0, layers - 1) if layers else (np.nanmin(x), np.nanmax(x))
        if y_range is None:
            y_range = (np.nanmin(y), np.nanmax(y))
            y_range = (y_range[0] - pad * (y_range[1] - y_range[0] or 1),
                       y_range[1] + pad * (y_range[1] - y_range[0] or 1))
        x_pad = pad * (x_high - x_low or 1)
        frame(self.plot, (x_low - x_pad, x_high + x_pad), y_range)

    def _curve(self, x, y, colour, label: str, width=2.0, dash=False) -> pg.PlotCurveItem:
        """A curve and its legend entry; ``dash``: dashed, or the dash pattern (dash,
        gap, ... in pen widths)."""
        pen = style.cosmetic_pen(colour, width, QtCore.Qt.PenStyle.DashLine if dash
                                 else QtCore.Qt.PenStyle.SolidLine)
        if dash and dash is not True:
            pen.setDashPattern(list(dash))
        curve = pg.PlotCurveItem(np.asarray(x, float), np.asarray(y, float), pen=pen)
        self.plot.addItem(curve)
        if label:
            self.legend.addItem(style.legend_sample(pen=pen), label)
        return curve

    def show_sweep(self, result, metric: str) -> None:
        band, floor = result.bands[metric], result.floor
        layers = np.arange(band.median.shape[0])
        self._reset("relative change (log)", LAYER_AXIS, log=True)
        defined = ~np.isnan(band.median)
        x = layers[defined]
        p10, median, p90 = (q[defined] for q in (band.p10, band.median, band.p90))
        # an exact 0 inside the floor's band, above the axis, as the symmetry plot does
        level = zero_level((p10, median, p90), floor)
        row = self._floor_band(floor, level)
        top = np.nanmax(np.r_[p90, 1.0])
        y_range = (row - ZERO_MARGIN, np.ceil(np.log10(top) + 0.1))
        draw_band(self, x, p10, median, p90,
                  lambda q: on_zero_row(q, level, row), y_range[1] - y_range[0])
        one = result.runs == 1                  # one text reversed: no median, no spread
        line = "the run" if one else "median"
        self._curve(x, on_zero_row(median, level, row), "#0072b2", line, 2.5)
        zeros = median == 0
        if zeros.any():
            self.plot.addItem(pg.ScatterPlotItem(
                x[zeros].astype(float), np.full(zeros.sum(), row), size=10,
                symbol="o", pen=pg.mkPen("#0072b2", width=2), brush="w"))
            self.legend.addItem(style.legend_sample(pen=None, symbol="o", symbolSize=10,
                                                    symbolBrush="w",
                                                    symbolPen=pg.mkPen("#0072b2", width=2)),
                                f"{line} 0 (exact), on the row marked 0")
        self._floor_line(floor)
        self._frame(y_range, layers.size)
        set_layer_ticks(self.plot.getAxis("bottom"), layers.size)
        runs, texts = plural(result.runs, "run"), plural(len(result.texts), "text")
        over = "all runs"
        title = f"{metric.replace('_', ' ')}: {result.kind} sweep, {runs} over {texts}"
        if result.kind == "swap":   # the band: the neighbouring swaps of every pair run
            ran = sum(p.swaps for p in result.pairs)
            over = f"the {plural(result.runs, 'neighbouring swap')}"
            # it read "4 neighbouring swaps of the 10 pairs run, over 1 text": 4 runs or 10?
            ones = "one" if result.runs == 1 else "ones"
            title = (f"{metric.replace('_', ' ')}, swap sweep of {texts}: "
                     f"{plural(ran, 'pair')} swapped, the {result.runs} neighbouring {ones} "
                     f"drawn")
        self.set_title(title)
        self.set_note(("Line: the one run's change (one order, no spread to shade). "
                       if one else f"Line: the median over {over}; shaded: 10th to 90th "
                       "percentile. ") + "A change below the dashed noise floor cannot be told from "
                      "floating-point rounding; a change of exactly 0 is drawn on the row marked 0, inside the grey "
                      "band.")
        self.data = {f"{metric}_{q}": getattr(band, q).copy()
                     for q in ("median", "p10", "p90")}
        self.dims, self.coords, self.labels = ("layer",), {"layer": layers.tolist()}, {}

    def _floor_band(self, floor: float, level: float) -> float:
        """Grey under the noise floor down past the zero row, as the symmetry plot has
        it (the row labelled 0, log_ticks.zero_row); the zero row (log10)."""
        row = zero_decade(floor, level)
        band = pg.LinearRegionItem((row - ZERO_MARGIN, np.log10(floor)),
                                   orientation="horizontal", movable=False,
                                   brush=pg.mkBrush(150, 150, 150, 60), pen=pg.mkPen(None))
        band.setZValue(-10)                                   # under every curve
        self.plot.addItem(band, ignoreBounds=True)
        zero_row(self.plot.getAxis("left"), row)
        return row

    def _floor_line(self, floor: float) -> None:
        line = floor_line("noise floor", 0.02, pos=np.log10(floor))
        self.plot.addItem(line)
        self.labelled.append((line, self.plot, ("noise floor",)))

    def _place_labels(self) -> None:
        """Each labelled line's label where no curve or marker of its plot crosses it, at
        this size (markers alone: a scatter's points are not joined)."""
        for line, plot, texts in self.labelled:
            if line.scene() is None:
                continue                        # cleared with its drawing
            data = []
            for item in plot.items:
                if isinstance(item, pg.PlotCurveItem):
                    data.append(item.getData())
                elif isinstance(item, pg.ScatterPlotItem):
                    data += [([x], [y]) for x, y in zip(*item.getData())]
            place_label(line, plot.vb, data, texts)

    def _settle(self) -> None:
        """Figure._settle, then the floor's label placed at the size laid out."""
        super()._settle()
        self._place_labels()

    def show_pairs(self, pairs, which: str = "") -> None:
        """A swap sweep's map of all pairs (swaps.draw_pairs) of the text ``which``."""
        draw_pairs(self, pairs, which)

    def show_probe(self, rows, title: str, said: str | None = None) -> None:
        """A probe's error per layer against chance (predicting the mean position), and
        in the note what it shows (``said``, else probe.verdict of a linear probe)."""
        if said is None:
            said = verdict([ProbeLayer(**row) for row in rows])
        draw_probes(self, title, {"": (rows, "#0072b2")}, said)

    def _probes(self, title: str, runs: dict, said: str = "") -> None:
        draw_probes(self, title, runs, said)

    def show_compare(self, result, metric: str) -> None:
        """One curve per encoding (compare.draw_compare)."""
        from .compare import draw_compare
        draw_compare(self, result, metric)

    def show_extension(self, result: dict, metric: str) -> None:
        """The context-extension lab (extension.draw_extension)."""
        from .extension import draw_extension
        draw_extension(self, result, metric)

    def show_paper(self, check) -> None:
        from .papers import draw_paper
        draw_paper(self, check)
