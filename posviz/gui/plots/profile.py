"""The relative-distance profile: what a relative encoding adds (or how alike two
positions' encodings are) as a function of Δ = key position − query position, over a
range of Δ the user chooses."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from . import style
from .base import Figure
from .hover import CurveHover, Series, wrapped
from .positions import machinery_of
from .tabs import POSITIONS
from posviz.models.encodings import ENCODINGS
from posviz.models.options import TITLES

SPANS = ((0, "Δ range: the text's length"), (64, "Δ range: ±64"), (128, "Δ range: ±128"),
         (256, "Δ range: ±256"))    # each item renamed to the Δ it plots once drawn
# each profile quantity's short form, with its unit, for a plot short of room (or in sight)
SHORT_AXES = {"bias added to the score": "bias (logits)", "bias": "bias (logits)",
              "score q·k / d_head": "score (logits)", "score / d_head": "score (logits)"}


class RelativeProfileFigure(Figure):
    """What a relative encoding adds as a function of Δ = key position − query position."""

    name = "relative_profile"
    title = "Relative-distance profile"
    tab = POSITIONS
    row = 1
    dims = ("head", "distance")
    guide = ("the encoding against relative distance Δ: the cosine of PE(p) and "
             "PE(p+Δ), RoPE's score qᵀR(Δ)k of a fixed pair, or the bias ALiBi "
             "(−m_h·|Δ|) and T5 add to the scores.")
    legend_columns = 8

    def __init__(self, parent=None):
        super().__init__(parent)
        self.plot = self.canvas.addPlot(row=0, col=0)
        style.style_plot(self.plot, "", "", "Δ = key position − query position")
        self.plot.hideButtons()
        self.legend = style.legend_below(self.canvas)
        self.curves: list[pg.PlotDataItem] = []
        self._series: list[Series] = []             # the curves as drawn, for hover
        self.curve_hover = CurveHover(self, self.plot, lambda: self._series,
                                      x_words=lambda d: f"Δ = {d}".replace("-", "−"))
        self._key = None
        self._last = None                   # (shown, layer, head) drawn last
        self.span = QtWidgets.QComboBox()
        for reach, text in SPANS:
            self.span.addItem(text, reach)
        self.span.setToolTip(wrapped(
            "Range of Δ shown (each item names the Δ it plots): the first, ± the text's "
            "length − 1 (at least ±16) for the built-in model or a real model's whole "
            "profile; or at most ±64, ±128, ±256 for RoPE's long range and T5's log "
            "buckets (to 128). Keys ahead of a causal query are masked."))
        self.span.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToContents)
        self.span.currentIndexChanged.connect(self._span_chosen)
        self.layout().itemAt(0).layout().addWidget(self.span, 0,
                                                   QtCore.Qt.AlignmentFlag.AlignTop)

    def chrome(self) -> list:
        return [self.span]              # a control on screen, not part of the figure

    def _curve(self, i: int) -> pg.PlotDataItem:
        while len(self.curves) <= i:
            colour = style.CURVE_COLOURS[len(self.curves) % len(style.CURVE_COLOURS)]
            curve = pg.PlotDataItem(pen=style.cosmetic_pen(colour, 2), connect="finite")
            self.plot.addItem(curve)
            self.curves.append(curve)
        return self.curves[i]

    def _span_chosen(self) -> None:
        self._key = None
        if self._last is not None:
            self.update_from(*self._last)

    def reach(self, own: int = 0) -> int:
        """The largest |Δ| shown: the span chosen, else ``own`` (a real model's profile
        whole), else the text's (at least 16)."""
        return self.span.currentData() or own or max(self._tokens - 1, 16)

    def update_from(self, shown, layer: int, head: int) -> None:
        self._last = (shown, layer, head)
        machinery = machinery_of(shown)
        view = shown.views.positions
        self._tokens = len(view.position_ids)
        kind, profile = view.kind, view.profile
        key = (view.built_in, kind, profile, self.reach())    # profiles are cached
        if machinery is not None:
            key = (machinery, self.span.currentData())
        if key == self._key:
            return
        self._key = key
        self.data, self.coords, self._series = {}, {}, []
        if machinery is not None:
            if machinery.profile is None:
                self.set_title("Relative-distance profile")
                self.show_message(machinery.note or f"This model uses {machinery.title}.")
                return
            self.draw_profile(machinery.profile, f"{machinery.title}: "
                              f"{machinery.profile.quantity} against relative distance Δ",
                              int(np.abs(machinery.profile.distances).max()),
                              machinery.profile_reach)
            return
        if not view.built_in:
            self.set_title("Relative-distance profile")
            self.show_message(
                "The relative-distance profile is computed for the built-in model, whose "
                "encoding modules posviz knows. "
                + (f"This model uses {TITLES.get(kind, kind)}." if kind else
                   "This model does not say which positional encoding it uses."))
            return
        if profile is None:
            self.set_title("Relative-distance profile")
            self.show_message(
                "Learned absolute positions have no fixed relation between p and p + Δ: "
                "see the similarity matrix." if kind in ENCODINGS and
                ENCODINGS[kind].acts == "absolute" else
                "No positional encoding (NoPE): nothing depends on the distance between "
                "tokens.")
            return
        self.draw_profile(profile, f"{TITLES.get(kind, kind)}: {profile.quantity} "
                                   "against relative distance Δ", self.reach(),
                          "the text's length" + ("" if self._tokens > 17 else ", at least 16"))

    def show_message(self, text: str) -> None:
        super().show_message(text)
        self.span.setEnabled(False)             # nothing a range of Δ would change

    def _name_spans(self, profile, own: int, whole: str) -> None:
        """Rename each item of the range box to the Δ it plots for ``profile`` (a
        causal model's keys ahead are masked, so its Δ stop at 0)."""
        finite = np.isfinite(profile.values).any(axis=0)
        for index in range(self.span.count()):
            reach = self.span.itemData(index) or own
            shown = profile.distances[finite & (np.abs(profile.distances) <= reach)]
            lo, hi = (int(shown.min()), int(shown.max())) if shown.size else (0, 0)
            text = f"Δ range: {lo}…{hi}".replace("-", "−")
            self.span.setItemText(index, text + (f" ({whole})" if index == 0 else ""))
        self.span.setEnabled(True)

    def draw_profile(self, profile, title: str, own: int, whole: str) -> None:
        """Draw ``profile`` over the Δ chosen (the first item: |Δ| ≤ ``own``, which
        ``whole`` describes)."""
        self._name_spans(profile, own, whole)
        reach = self.span.currentData() or own
        within = np.abs(profile.distances) <= reach
        distances, rows = profile.distances[within], profile.rows
        values = profile.values[:, within]                                       # (h, D)
        self.show_canvas()
        self.legend.clear()
        for i, curve in enumerate(self.curves):
            curve.setVisible(i < len(rows))
        for i, name in enumerate(rows):
            curve = self._curve(i)
            curve.setData(distances, values[i])
            curve.setVisible(True)
            self.legend.addItem(curve, name)
        self.legend.setVisible(len(rows) > 1)
        self.fit_legend()
        style.fit_label(self.plot.getAxis("left"), profile.axis,
                        SHORT_AXES.get(profile.axis, ""))
        shown = distances[np.isfinite(values).any(axis=0)]     # causal: keys ahead are masked
        self.plot.setXRange(float(shown.min()), float(shown.max()), padding=0.02)
        self.plot.enableAutoRange(axis="y")
        self.data = {"value": values.copy()}
        self.coords = {"head": list(rows), "distance": distances.tolist()}
        self._series = [Series(name, distances, values[i], values[i])
                        for i, name in enumerate(rows)]
        self.set_title(title)
