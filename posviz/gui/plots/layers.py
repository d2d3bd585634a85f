"""Layer-by-layer views: symmetry metrics and branch norms (per-token change:
token_change.py)."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui

from . import style
from .base import Figure
from .coincide import HALO_ALPHA, WIDE, layer_words, same_at
from .hover import CurveHover, Series, wrapped
from .layer_axis import LAYER_AXIS, set_layer_range, set_layer_ticks
from .log_curves import LogCurve, LogCurves, QuartileBand
from .log_ticks import ZERO_MARGIN, one_notation, zero_decade, zero_row
from .noise_floor import floor_line, place_label
from .tabs import ATTENTION, TOKENS
from posviz.analysis.floor import BELOW_FLOOR
from posviz.analysis.symmetry import METRICS
from posviz.views.reading import frame
from posviz.views.shown import BRANCHES

# Legend entries, short enough for two columns in a narrow figure, each naming the
# symmetry it tests; the tooltip says more.
CURVE_LABELS = {
    "hidden_equivariance": "hidden states (equivar.)",
    "attention_equivariance": "attention (equivar.)",
    "last_token_change": "final slot (invariance)",
    "pooled_change": "pooled (invariance)",
}
TOKEN_LABEL = "median token (25–75%)"
# The floor's label, by how the reorder ran (views.reading.frame); where the plot is too
# narrow for it, FLOOR_SHORT (the figure's tooltip says the rest)
FLOOR_SHORT = "noise floor"
FLOOR_LABELS = {"reference": "noise floor; the original order: every change is 0",
                "aligned": "noise floor; an exact 0 is drawn on the row marked 0",
                "prefix": "noise floor; copied slots' 0 on the row marked 0",
                "given": f"noise floor: {BELOW_FLOOR}"}
CURVES_TIP = ("Each curve is a relative difference, per layer (log scale):\n"
              "• hidden states: the reordered run against the original run reordered the "
              "same way (equivariance)\n"
              "• attention (worst head): the reordered maps, aligned back, against the "
              "original maps; largest gap over heads (equivariance)\n"
              "• output at the final slot: the last position's vector in both runs "
              "(invariance; a causal decoder predicts from it)\n"
              "• mean-pooled output: the average over tokens in both runs (invariance)\n"
              "• median token: the median over tokens of each token's own change "
              "‖H′[inv i] − H[i]‖ / ‖H[i]‖, its band the middle half of the tokens "
              "(25th–75th percentile); the hidden-state curve weighs tokens by their norm, "
              "so one very large token can stand for the layer\n"
              "A change below the dashed noise floor cannot be told from floating-point "
              "rounding (it may be real, too small for the precision to show). An exact "
              "0 has no place "
              "on a log axis: it is drawn on the bottom row, marked 0, more than a decade "
              "below every other point.")


class SymmetryFigure(Figure):
    """The four metrics of posviz.analysis.symmetry against layer, on a log axis."""

    name = "symmetry"
    title = "Symmetry per layer"
    shows_order = True
    tab = ATTENTION
    row = 1
    dims = ("layer",)
    guide = """one curve per metric against the layer, on a log axis. The dashed
line is the *noise floor*: a change below it cannot be told from rounding (it may still
be real, too small for the precision to show). It is 100 × machine epsilon of the
precision the model computes in (2.2e-14 in float64, 1.2e-5 in float32), raised where
the run itself shows more rounding: once per reference run, when the encoding declares
that a common shift of every position id changes nothing in exact arithmetic, the
original order runs once more with its position ids shifted, and 3 × the largest
relative change of the hidden states over the layers raises the floor when it is
larger. The README gives the floors this measures (RoPE rounds its angles otherwise at
other positions).

- *hidden equivariance* = ‖H′ − H[order]‖ / ‖H‖, Frobenius norms. Zero when the model is
  permutation-equivariant: the reordered run is the original one reordered.
- *attention equivariance* = max over heads of max |A′ − A[order][:, order]|: zero when
  every map is the original map with rows and columns permuted (R·A·Rᵀ).
- *last token* = ‖H′[n−1] − H[n−1]‖ / ‖H[n−1]‖: the output at the final slot. With no
  positional encoding and the last token kept in place, a causal model keeps it unchanged
  after one layer (it attends over the same set of tokens) and leaks the order from layer
  2, through the mask; with positions it changes from layer 1.
- *pooled* = ‖mean H′ − mean H‖ / ‖mean H‖: a mean-pooled output; invariant whenever the
  hidden states are equivariant.

The first two measure *equivariance* (does the output move with the tokens?), the last
two *invariance* (does it stay put?). An equivariant model need not be invariant at the
final slot: with no positions and a bidirectional mask, after a reversal the first two
and the pooled output lie on the floor while the final slot's output changes (above 1),
because another token now sits there.

*How the reorder ran* decides what an exact symmetry shows. By default a reorder runs the
fast way the model allows: a causal model from the first moved slot on, and a run of the
whole input in the original tokens' frame (each token in its own row, at its slot's
position id and under its slot's mask) for the built-in model and pretrained families
whose positions are all in their position ids (BERT, RoBERTa, DistilBERT, GPT-2, Llama
and its kin without a sliding window). Where the symmetry holds the change is then exactly
0 by construction, drawn on the row marked 0 at the bottom, more than a
decade below every other point (a log axis has no place for 0). With "Run as given" (Position ids) the
reordered input runs through the ordinary forward, so the same case shows its rounding,
below the floor. The note under the plot says which ran.

The dashed *median token* curve is the median over tokens of each token's own change
‖H′[inv i] − H[i]‖ / ‖H[i]‖, its band the middle half of the tokens. The hidden-state
curve weighs each token by its norm, so one very large token (the first slot of some
models) can stand for the whole layer; the note then names the tokens that carry at
least 90% of the squared change."""
    legend_beside = 520         # a laptop's half window: the plot keeps its height
    note_one_line = True

    def __init__(self, parent=None):
        super().__init__(parent)
        self.plot = plot = self.canvas.addPlot(row=0, col=0)
        style.style_plot(plot, "", "relative change (log)", LAYER_AXIS,
                         short_left=("change (log)", "change (ratio)"))
        self.plot.setLogMode(x=False, y=True)
        one_notation(self.plot.getAxis("left"))
        self.plot.hideButtons()
        self.band = pg.LinearRegionItem(orientation="horizontal", movable=False,
                                        brush=pg.mkBrush(150, 150, 150, 60),
                                        pen=pg.mkPen(None))
        self.band.setZValue(-10)
        self.plot.addItem(self.band)
        self.floor_line = floor_line(FLOOR_SHORT)
        self.plot.addItem(self.floor_line)
        self._floor_text = FLOOR_SHORT              # the label when there is room
        self.decades: list[pg.InfiniteLine] = []   # light lines at 10^k: cheaper to
                                                   # paint than pyqtgraph's grid
        self.legend = style.legend_below(self.canvas)
        self.lines = LogCurves(self.plot)
        self.plot.vb.sigResized.connect(self._fit_floor_label)
        self.curves = {}
        for colour, metric, symbol in zip(style.CURVE_COLOURS, METRICS, "osdt"):
            curve = LogCurve(self.lines, pen=style.cosmetic_pen(colour, 2),
                             symbol=symbol, brush=colour)
            self.legend.addItem(curve.sample, CURVE_LABELS[metric])
            self.curves[metric] = curve
        self.token_band = QuartileBand(self.lines,
                                       pen=style.cosmetic_pen(style.CURVE_COLOURS[0], 1.5,
                                                              QtCore.Qt.PenStyle.DashLine),
                                       symbol="x", brush=style.CURVE_COLOURS[0],
                                       fill=(0, 114, 178, 40))
        self.legend.addItem(self.token_band.sample, TOKEN_LABEL)
        # on the heading: over the plot the tooltip names the point under the mouse
        self.heading.setToolTip(wrapped(CURVES_TIP))
        self.curve_hover = CurveHover(self, self.plot, lambda: self._series)
        self._series: list[Series] = []
        self._layers = None
        self._span = None
        self._floor = None

    def update_from(self, shown, layer: int, head: int) -> None:
        views = shown.views
        floor = shown.evaluation.comparison.floor
        layers = np.arange(views.symmetry["noise_floor"].shape[0])            # (L+1,)
        # the zero row: a whole decade under a tenth of every nonzero value (zero_level),
        # labelled 0; the view moves only when that decade does
        drawn = self._floor[1] if self._floor is not None and self._floor[0] == floor else None
        low = zero_decade(floor, views.zero_level, drawn)
        curves = {name: np.where(values <= views.zero_level, 10.0 ** low, values)
                  for name, values in views.symmetry_curves.items()}       # NaN kept
        top = 1.0
        for metric, curve in self.curves.items():
            values = views.symmetry[metric]                                   # (L+1,)
            curve.setData(layers, curves[metric])
            finite = values[np.isfinite(values)]
            if finite.size:
                top = max(top, float(finite.max()))
        self.token_band.set_quartiles(layers, curves["token_p25"], curves["token_median"],
                                      curves["token_p75"])
        self.lines.refresh()
        self._series = self._hover_series(layers, curves, views)
        self._floor_text = FLOOR_LABELS[frame(shown.evaluation)]
        self._fit_floor_label()
        if (floor, low) != self._floor:                 # the same for most reorders
            self._floor = (floor, low)
            self.band.setRegion((low - ZERO_MARGIN, np.log10(floor)))  # SVG has no clip
            self.floor_line.setPos(np.log10(floor))
            zero_row(self.plot.getAxis("left"), low)
        # room under the zero row for its markers; a whole decade above the top
        span = (low - ZERO_MARGIN, float(np.ceil(np.log10(top) + 0.1)))
        if span != self._span:                      # moving the view costs a relayout
            self._span = span
            self.plot.setYRange(*span, padding=0)
            self._set_decades(range(int(np.ceil(span[0])), int(np.floor(span[1])) + 1))
        if self._layers != layers.shape[0]:
            self._layers = layers.shape[0]
            set_layer_range(self.plot, layers.shape[0])
            set_layer_ticks(self.plot.getAxis("bottom"), layers.shape[0])
        self.data = dict(views.symmetry)
        self.coords = {"layer": layers.tolist()}
        self.set_title("Symmetry per layer: reordered run against the original "
                       "(lower = more symmetric)")
        self.set_note(views.symmetry_note, views.symmetry_short)

    def _hover_series(self, layers, curves, views) -> list[Series]:
        """The curves as drawn (log10 of what is plotted), each with its true values."""
        raw = views.symmetry
        series = [Series(CURVE_LABELS[metric], layers, np.log10(curves[metric]),
                         raw[metric])
                  for metric, curve in self.curves.items() if curve.isVisible()]
        if self.token_band.isVisible():
            band = tuple(f" (middle half {low:.3g}–{high:.3g})"
                         for low, high in zip(raw["token_p25"], raw["token_p75"]))
            series.append(Series(TOKEN_LABEL, layers, np.log10(curves["token_median"]),
                                 raw["token_median"], band))
        return series

    def _fit_floor_label(self) -> None:
        """The floor's whole label where a stretch of the line clear of the curves holds
        it, else its short form: never one cut at the plot's right edge, nor one a
        curve runs through (noise_floor.place_label)."""
        place_label(self.floor_line, self.plot.vb,
                    [curve.points for curve in self.lines.shown()],
                    (self._floor_text, FLOOR_SHORT))

    def _set_decades(self, exponents) -> None:
        exponents = list(exponents)
        while len(self.decades) < len(exponents):
            line = pg.InfiniteLine(angle=0, pen=pg.mkPen((222, 222, 222)), movable=False)
            line.setZValue(-20)
            self.plot.addItem(line)
            self.decades.append(line)
        for i, line in enumerate(self.decades):
            line.setVisible(i < len(exponents))
            if i < len(exponents):
                line.setPos(exponents[i])


class BranchNormsFigure(Figure):
    """Residual stream, attention branch and MLP branch sizes per layer, both orders."""

    name = "branch_norms"
    title = "Residual stream and branch norms"
    shows_order = True
    tab = TOKENS
    row = 1
    dims = ("layer",)
    guide = ("the mean norm per token of the residual stream, the attention branch and "
             "the MLP branch at each layer: how much each sub-layer adds to what the "
             "stream carries.")
    legend_beside = 700         # a whole-width figure: the legend's rows go to the curves
    parts = (("residual", "residual stream", 0), ("attention_branch", "attention branch", 1),
             ("mlp_branch", "MLP branch", 2))

    def __init__(self, parent=None):
        super().__init__(parent)
        self.plot = self.canvas.addPlot(row=0, col=0)
        style.style_plot(self.plot, "", "mean token norm |h|", LAYER_AXIS,
                         short_left="norm |h|")
        self.plot.hideButtons()
        self.legend = style.legend_below(self.canvas)
        self.curves, self.names = {}, {}                   # names: as the legend says
        for key, label, colour in self.parts:
            colour = style.CURVE_COLOURS[colour]
            for suffix, dash, text in (("", QtCore.Qt.PenStyle.SolidLine, "reordered"),
                                       ("_original", QtCore.Qt.PenStyle.DashLine, "original")):
                curve = pg.PlotDataItem(pen=style.cosmetic_pen(colour, 2, dash),
                                        symbol="o" if not suffix else None, symbolSize=6,
                                        symbolBrush=colour, symbolPen=None, connect="finite")
                self.plot.addItem(curve)
                self.legend.addItem(curve, f"{label}, {text}")
                self.curves[key + suffix] = curve
                self.names[key + suffix] = f"{label}, {text}"
        self.curve_hover = CurveHover(self, self.plot, lambda: [
            Series(self.names[name], np.arange(len(values)), values, values)
            for name, values in self.data.items()])
        self.plot.disableAutoRange()
        self._layers = None
        self._top = None

    def update_from(self, shown, layer: int, head: int) -> None:
        L = shown.evaluation.reference.n_layers
        layers = np.arange(L + 1)
        missing = shown.views.missing_branches
        self.data = dict(shown.views.branch_norms)                            # (L+1,) each
        for key in BRANCHES:
            for suffix in ("", "_original"):
                curve = self.curves[key + suffix]
                if key + suffix in self.data:
                    curve.setVisible(True)
                else:
                    curve.setData([], [])
                    curve.setVisible(False)
        top = 0.0
        for name, values in self.data.items():
            self.curves[name].setData(layers, values)
            top = max(top, float(np.nanmax(values)))
        top = style.nice_top(top)
        if top != self._top:
            self._top = top
            self.plot.setYRange(0, top, padding=0)
        if self._layers != L + 1:
            self._layers = L + 1
            set_layer_ticks(self.plot.getAxis("bottom"), L + 1)
            set_layer_range(self.plot, L + 1)
        self.coords = {"layer": layers.tolist()}
        self.set_title("Residual stream and branch norms per layer "
                       "(solid: reordered, dashed: original order)")
        notes = [self._coinciding()]
        if shown.evaluation.reference.extras.get("final_norm"):
            notes.append(f"Layer {L} is after the model's final norm: transformers reports "
                         "the last hidden state normalised, not the last block's output.")
        if missing:
            names = sorted({k.replace("_branch", "") for k in missing})
            notes.append(f"This model does not record its "
                         f"{' and '.join(names).replace('mlp', 'MLP')}"
                         "-branch outputs; only the residual stream is shown.")
        self.set_note(" ".join(filter(None, notes)))

    def _coinciding(self) -> str:
        """Draw the residual stream wide where the MLP branch (drawn after it) would hide
        it; the sentence that says so, or ""."""
        layers = set()
        for suffix in ("", "_original"):
            same = (same_at(self.data["residual" + suffix], self.data["mlp_branch" + suffix])
                    if "mlp_branch" + suffix in self.data else np.zeros(0, bool))
            curve = self.curves["residual" + suffix]
            pen = curve.opts["pen"]
            width = WIDE if same.any() else 2
            if pen.widthF() != width:                   # wide and light: a halo
                colour = QtGui.QColor(style.CURVE_COLOURS[0])
                colour.setAlpha(HALO_ALPHA if same.any() else 255)
                curve.setPen(style.cosmetic_pen(colour, width, pen.style()))
            layers |= set(np.flatnonzero(same).tolist())
        if not layers:
            return ""
        return (f"The residual stream equals the MLP branch's output at "
                f"{layer_words(layers)} (as with residual connections off): the two curves "
                "coincide, the residual stream drawn wide and light under the MLP branch.")
