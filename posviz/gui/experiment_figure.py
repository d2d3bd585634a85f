"""The Experiments tab's figure: a sweep's band per layer on the log scale with the noise
floor, a swap map, a position probe, a paper check or several encodings' curves for one
reorder, exportable like every figure."""
from __future__ import annotations

from html import escape

import numpy as np
import pyqtgraph as pg  # noqa: I001
from PySide6 import QtCore, QtWidgets  # before pyqtgraph, so it binds PySide6

from .experiment_jobs import SWAP_MAP
from .experiment_probes import draw_probes
from .experiment_swaps import IDENTICAL_NOTE, hover_text, outline_cells
from .plots import colorbars, style
from .plots.base import Figure
from .plots.coincide import coinciding, legend_words, pixel_rtol, shares_a_line
from .plots.hover import CurveHover, Series
from .plots.layer_axis import LAYER_AXIS, set_layer_ticks
from .plots.log_ticks import ZERO_MARGIN, one_notation, zero_decade, zero_row
from .plots.noise_floor import floor_line
from .plots.wheel import frame
from posviz.analysis.experiments.probe import FEATURE_NAMES, ProbeLayer, verdict
from posviz.analysis.experiments.sweep import identical_pairs
from posviz.models.checkpoint import plural
from posviz.views.shown import zero_level

STALE_COLOUR = "#9a3b00"     # the line of a drawing of other inputs: dark orange, on white
# each left-axis title's short form, with its unit, for a plot too short to hold it whole
SHORT_LEFT = {"relative change (log)": "change (log)",
              "mean absolute error (positions)": "error (positions)",
              "variance of the attention output": "variance (units²)",
              "held-out perplexity (log)": "perplexity (log)",
              "slope m_h (log)": "slope m_h (log)",
              "|score| / d_head (log scale)": "|score| / d_head (log)",
              "change: ratio, or KL in nats (log scale)": "change (log)"}
SYMBOLS = ("o", "s", "t", "d", "t1", "x")    # one marker shape per compared encoding
PIXELS = 300               # a log axis's height (pixels) while the figure is not laid out


class ExperimentFigure(Figure):
    """A sweep's band per layer (log scale, noise floor), a swap map, a probe or a paper
    check: whatever the last experiment produced."""

    name = "experiment"
    title = "Experiment"
    note_one_line = True        # a paper check's note took a short window's whole plot
    subtitle = ""               # what the drawing shows ran on (experiment_jobs.caption)
    stale_line = ""             # what a drawing of other inputs was computed for
    _title = ""
    INVITATION = "Choose an experiment above and press Run (Ctrl+Return)."

    def __init__(self, parent=None):
        super().__init__(parent)
        self.plot = self.canvas.addPlot(row=0, col=0)
        self.plot.hideButtons()
        one_notation(self.plot.getAxis("left"))     # as every log axis: 10⁻⁴ ... 10⁰
        self.legend = style.legend_below(self.canvas)
        self.bar: pg.ColorBarItem | None = None     # the swap map's colour bar, if shown
        self._map_bar: pg.ColorBarItem | None = None    # made (and aligned) once
        # a white veil over a result of other inputs: dimmed on screen, whole in exports
        self.veil = QtWidgets.QWidget(self)
        self.veil.setAttribute(QtCore.Qt.WidgetAttribute.WA_TransparentForMouseEvents)
        self.veil.setAttribute(QtCore.Qt.WidgetAttribute.WA_StyledBackground)
        self.veil.setStyleSheet("background: rgba(255, 255, 255, 170);")
        self.veil.hide()
        self._pairs = None
        self._series: list[Series] = []             # the curves as drawn, by encoding
        self._compare = None        # (result, metric, axis span, tolerance) of a Compare
        self._refit = QtCore.QTimer(self, singleShot=True, interval=150,
                                    timeout=self._refit_compare)
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
        comparison by ``metric`` (experiment_jobs.shown_metric: one it has, or the swap
        map); a line to say beside it, or ""."""
        if job.what == "compare":
            self.show_compare(result, metric)
        elif job.what == "sweep" and metric == SWAP_MAP:
            self.show_pairs(result.pairs[0])
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

    def set_stale(self, stale: bool, said: str = "") -> None:
        """Dim the drawing (its inputs are no longer the controls') or show it plainly;
        ``said``: what it was computed for, a line under the subtitle while it is dimmed
        (exports show it undimmed, with that line)."""
        self.veil.setGeometry(self.rect())
        self.veil.raise_()
        self.veil.setVisible(stale)
        said = said if stale else ""
        if said != self.stale_line:
            self.stale_line = said
            self.set_title(self._title)

    def chrome(self) -> list:
        """The veil dims a stale drawing on screen only: an export is drawn whole."""
        return [self.veil]

    def is_stale(self) -> bool:
        return self.veil.isVisibleTo(self)

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        self.veil.setGeometry(self.rect())
        if self._compare is not None:
            self._refit.start()         # once the layout settles: the axis's new height

    def _rtol(self, span: float) -> float:
        """The relative gap one pixel of a log axis spanning ``span`` decades holds."""
        height = self.plot.getViewBox().height()
        return pixel_rtol(span, height if height > 50 else PIXELS)

    def _refit_compare(self) -> None:
        """Draw the Compare again when a pixel now holds another gap: its legend and note
        name the curves that are one line at this size."""
        if self._compare is not None:
            result, metric, span, rtol = self._compare
            if round(1000 * self._rtol(span)) != round(1000 * rtol):
                self.show_compare(result, metric)

    def _reset(self, left: str, bottom: str, log: bool, tokens: bool = False) -> None:
        """Remove every item of the previous drawing (curves, lines, legend entries, the
        colour bar, token axes) and its view (inverted axis, log mode, zoom); ``tokens``:
        token axes (a swap map), else number axes."""
        self.plot.clear()
        self.legend.clear()
        self._pairs = None                          # the swap map under the mouse, if shown
        self._series, self._compare = [], None
        self.hover.clear()
        if self.bar is not None:
            self.canvas.removeItem(self.bar)
            self.bar = None
        if isinstance(self.plot.getAxis("left"), style.TokenAxis) != tokens:
            self.plot.setAxisItems(style.token_axes() if tokens else
                                   {side: pg.AxisItem(side) for side in ("left", "bottom")})
            one_notation(self.plot.getAxis("left"))
        view = self.plot.getViewBox()
        view.invertY(False)
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
        clips its own data."""
        xs, ys = [], []
        for item in self.plot.items:
            if isinstance(item, (pg.PlotCurveItem, pg.ScatterPlotItem)):
                x, y = item.getData()
                if x is not None and len(x):
                    xs.append(np.asarray(x, float))
                    ys.append(np.asarray(y, float))
        if not xs:
            return
        x, y = np.concatenate(xs), np.concatenate(ys)
        x_low, x_high = (0, layers - 1) if layers else (np.nanmin(x), np.nanmax(x))
        if y_range is None:
            y_range = (np.nanmin(y), np.nanmax(y))
            y_range = (y_range[0] - pad * (y_range[1] - y_range[0] or 1),
                       y_range[1] + pad * (y_range[1] - y_range[0] or 1))
        x_pad = pad * (x_high - x_low or 1)
        frame(self.plot, (x_low - x_pad, x_high + x_pad), y_range)

    def _curve(self, x, y, colour, label: str, width=2.0, dash=False) -> pg.PlotCurveItem:
        pen = style.cosmetic_pen(colour, width, QtCore.Qt.PenStyle.DashLine if dash
                                 else QtCore.Qt.PenStyle.SolidLine)
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
        lower = self._curve(x, self._drawn(p10, level, row), (0, 114, 178, 90), "", 1)
        upper = self._curve(x, self._drawn(p90, level, row), (0, 114, 178, 90), "", 1)
        self.plot.addItem(pg.FillBetweenItem(lower, upper,
                                             brush=pg.mkBrush(0, 114, 178, 60)))
        if (p90 > p10).any():                    # a band only where the runs spread
            self.legend.addItem(style.legend_sample(
                pen=None, symbol="s", symbolSize=12, symbolPen=None,
                symbolBrush=(0, 114, 178, 60)), "p10 to p90 of the runs")
        self._curve(x, self._drawn(median, level, row), "#0072b2", "median", 2.5)
        zeros = median == 0
        if zeros.any():
            self.plot.addItem(pg.ScatterPlotItem(
                x[zeros].astype(float), np.full(zeros.sum(), row), size=10,
                symbol="o", pen=pg.mkPen("#0072b2", width=2), brush="w"))
            self.legend.addItem(style.legend_sample(pen=None, symbol="o", symbolSize=10,
                                                    symbolBrush="w",
                                                    symbolPen=pg.mkPen("#0072b2", width=2)),
                                "median 0 (exact), on the row marked 0")
        self._floor_line(floor)
        top = np.nanmax(np.r_[p90, 1.0])
        y_range = (row - ZERO_MARGIN, np.ceil(np.log10(top) + 0.1))
        self._frame(y_range, layers.size)
        set_layer_ticks(self.plot.getAxis("bottom"), layers.size)
        runs, texts = plural(result.runs, "run"), plural(len(result.texts), "text")
        self.set_title(f"{metric.replace('_', ' ')}: {result.kind} sweep, {runs} over {texts}")
        self.set_note("Line: the median over all runs; shaded: 10th to 90th percentile. "
                      "A change below the dashed noise floor cannot be told from "
                      "floating-point rounding; a change of exactly 0 is drawn on the row marked 0, inside the grey "
                      "band.")
        self.data = {f"{metric}_{q}": getattr(band, q).copy()
                     for q in ("median", "p10", "p90")}
        self.dims, self.coords, self.labels = ("layer",), {"layer": layers.tolist()}, {}

    @staticmethod
    def _drawn(values: np.ndarray, level: float, row: float) -> np.ndarray:
        """log10 of ``values`` for the log axis; an exact 0 (at most ``level``,
        zero_level) on the zero ``row``; NaN kept (a gap)."""
        with np.errstate(invalid="ignore"):
            return np.where(values <= level, row, np.log10(np.maximum(values, level)))

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
        self.plot.addItem(floor_line("noise floor", 0.02, pos=np.log10(floor)))

    def show_pairs(self, pairs) -> None:
        n = len(pairs.tokens)
        # token axes: labels turned or thinned (with their index) so that none touch
        self._reset("token", "swapped with", log=False, tokens=True)
        image = pg.ImageItem(pairs.change.T)       # ImageItem indexes (x, y)
        self.plot.addItem(image)
        identical = identical_pairs(pairs.tokens)                          # (n, n)
        # the colours span the swaps that change the input (identical pairs: outlined)
        differing = pairs.change[~identical]
        largest = float(differing.max()) if differing.size else 0.0
        top = largest or 1.0
        new = self._map_bar is None
        if new:
            self._map_bar = colorbars.color_bar((0.0, top), style.SEQUENTIAL,
                                                "relative change")
        self.bar = self._map_bar
        self.bar.setLevels((0.0, top))
        self.bar.setImageItem(image)
        self.canvas.addItem(self.bar, row=0, col=1)
        if new:                              # its strip level with the map, not the axes
            colorbars.align_bar(self.bar, self.plot)
        self.plot.getViewBox().invertY(True)
        for side in ("left", "bottom"):
            self.plot.getAxis(side).set_tokens(pairs.tokens)
        frame(self.plot, (0, n), (0, n))
        if identical.any():
            outline_cells(self.plot, identical)
        self._pairs = pairs
        most = int(np.argmax(pairs.sensitivity))
        self.set_title(f"Swap sensitivity at layer {pairs.layer}: change when tokens i and "
                       f"j swap (max {largest:.2e})")
        sensitive = (f"Most sensitive token: {pairs.tokens[most]!r} (mean "
                     f"{pairs.sensitivity[most]:.2e} over its partners holding another "
                     f"token)." if pairs.sensitivity[most] > 0 else
                     "No swap of two different tokens moves this layer's output.")
        self.set_note(f"Brighter: the layer's output moves more. {sensitive}"
                      + (f"\n{IDENTICAL_NOTE}" if identical.any() else ""))
        self.data = {"change": pairs.change.copy()}
        self.dims = ("token", "partner")
        self.coords = {}
        self.labels = {"token": list(pairs.tokens), "partner": list(pairs.tokens)}

    def show_probe(self, rows, title: str, said: str | None = None) -> None:
        """A probe's error per layer against chance (predicting the mean position), and
        in the note what it shows (``said``, else probe.verdict of a linear probe)."""
        if said is None:
            said = verdict([ProbeLayer(**row) for row in rows])
        draw_probes(self, title, {"": (rows, "#0072b2")}, said)

    def _probes(self, title: str, runs: dict, said: str = "") -> None:
        draw_probes(self, title, runs, said)

    def show_compare(self, result, metric: str) -> None:
        """One curve per encoding: ``metric`` per layer for the same text and reorder
        (analysis.experiments.encodings.EncodingComparison)."""
        floor = result.floor
        self._reset("relative change (log)", LAYER_AXIS, log=True)
        self.data, self.dims, self.labels = {}, ("layer",), {}
        top, layers = 1.0, np.arange(len(result.models[0].rows))
        curves = [model.curve(metric) for model in result.models]          # (L + 1,) each
        # an exact 0 inside the floor's band, above the axis, as the symmetry plot does
        level = zero_level(curves, floor)
        row = self._floor_band(floor, level)
        names = [model.title.split(" (")[0] for model in result.models]   # "RoPE"
        top = max([top] + [float(np.nanmax(np.r_[c[~np.isnan(c)], 0.0])) for c in curves])
        y_range = (row - ZERO_MARGIN, np.ceil(np.log10(top) + 0.1))
        # closer than a pixel of the axis is one line on screen, equal or not
        rtol = self._rtol(y_range[1] - y_range[0])
        groups = coinciding(dict(zip(names, curves)), rtol)
        exact = groups == coinciding(dict(zip(names, curves)))
        # a curve on one drawn before it between two layers: dashed, on the earlier one
        # drawn wider, so that both show
        shared = [(j, k) for k in range(len(curves)) for j in range(k)
                  if shares_a_line(curves[j], curves[k], rtol)]
        later, under = {names[k] for _, k in shared}, {names[j] for j, _ in shared}
        for k, (model, values) in enumerate(zip(result.models, curves)):
            defined = ~np.isnan(values)
            colour = style.CURVE_COLOURS[k % len(style.CURVE_COLOURS)]
            # its own marker, each smaller than the one before: equal values stay visible
            symbol, size = SYMBOLS[k % len(SYMBOLS)], max(13 - 2 * k, 5)
            pen = style.cosmetic_pen(colour, 4.5 if names[k] in under else 2.0,
                                     QtCore.Qt.PenStyle.DashLine if names[k] in later
                                     else QtCore.Qt.PenStyle.SolidLine)
            drawn = self._drawn(values[defined], level, row)
            self.plot.addItem(pg.PlotCurveItem(layers[defined].astype(float), drawn,
                                               pen=pen))
            self.plot.addItem(pg.ScatterPlotItem(
                layers[defined].astype(float), drawn, size=size,
                symbol=symbol, pen=pg.mkPen("w", width=1), brush=colour))
            self.legend.addItem(style.legend_sample(pen=pen, symbol=symbol, symbolSize=9,
                                                    symbolBrush=colour, symbolPen="w"),
                                legend_words(model.title, names[k], groups))
            self.data[model.kind] = values
            self._series.append(Series(model.title, layers[defined], drawn, values[defined]))
        self._floor_line(floor)
        self._frame(y_range, layers.size)
        set_layer_ticks(self.plot.getAxis("bottom"), layers.size)
        self.fit_legend()               # entries naming their partners are long: columns
        self._compare = (result, metric, y_range[1] - y_range[0], rtol)
        self.coords = {"layer": layers.tolist()}
        tokens = result.tokens
        moved = " ".join(tokens[i] for i in result.order)
        self.set_title(f"{metric.replace('_', ' ')}: {len(result.models)} encodings, "
                       f"{result.weights} weights, one reorder")
        dashed = ", dashed on a wider line where it runs on another's" if later else ""
        within = "equal" if exact else f"within {100 * rtol:.1f}% (a pixel here)"
        same = (f"\nCurves {within} are one line on screen, named so in the legend (each "
                f"later one on a smaller marker{dashed})." if groups else "")
        self.set_note(f"Reorder: {moved}\nEach curve is the built-in model with one "
                      f"encoding ({result.weights} weights), on the same tokens and the "
                      f"same reorder. A change below the dashed noise floor cannot be "
                      f"told from floating-point rounding; a change of exactly 0 is drawn on the row "
                      f"marked 0, inside the grey band.{same}")

    def show_paper(self, check) -> None:
        from .experiment_papers import draw_paper
        draw_paper(self, check)
