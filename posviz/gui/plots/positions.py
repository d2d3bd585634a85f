"""Positional encodings: the additive table, its position-to-position similarity, and
the score or bias as a function of relative distance.

The numbers come from posviz.core.views (PositionsView): the encoding modules of
posviz.core.encodings, rebuilt from the built-in model's configuration; a real model is
shown with what its Trace holds, and the figure says what is not available.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from posviz.core.options import TITLES      # not core.encodings: that imports torch

from . import style
from .attention import _HeatmapPlot
from .base import Figure

WHERE = {"rope": "rotates queries and keys inside attention",
         "alibi": "adds a distance penalty to the attention scores",
         "t5": "adds a learned bias per distance bucket to the attention scores"}


def _no_additive_message(kind: str | None, built_in: bool) -> str:
    if kind in (None, "none"):
        if built_in:
            return ("No positional encoding (NoPE): nothing is added to the token "
                    "embeddings, so only a causal mask can tell positions apart.")
        return "This model records no additive positional encoding."
    title = TITLES.get(kind, kind)
    return (f"No additive encoding: this model uses {title}, which "
            f"{WHERE.get(kind, 'acts inside attention')}. See the relative-distance profile.")


class _PositionMap(Figure):
    """A heatmap over positions of the reference run's additive encoding, redrawn only
    when the reference run changes; a message instead when the model adds none."""

    bottom = "position"                     # what the columns index
    bar_label = "value"
    empty_title = ""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.map = _HeatmapPlot(self.canvas, "", style.DIVERGING, (-1, 1),
                                left="position", bottom=self.bottom, col=0)
        self.map.plot.getAxis("bottom").rotate = False     # numbers read best upright
        self.bar = style.color_bar((-1, 1), style.DIVERGING, self.bar_label)
        self.bar.setImageItem(self.map.image)
        self.canvas.addItem(self.bar, row=0, col=1)
        self._key = None

    def update_from(self, shown, layer: int, head: int) -> None:
        view = shown.views.positions
        if view is self._key:
            return                  # the same reference run: nothing to redraw
        self._key = view
        if view.table is None:
            self.data, self.coords = {}, {}
            self.set_title(self.empty_title)
            self.show_message(_no_additive_message(view.kind, view.built_in))
            return
        self.show_canvas()
        self.draw(view, view.position_ids.tolist())

    def draw(self, view, ids: list[int]) -> None:
        raise NotImplementedError


class EncodingFigure(_PositionMap):
    """The additive encoding added to each position: positions × dimensions."""

    name = "encoding"
    title = "Positional encoding"
    dims = ("position", "dimension")
    bottom = "dimension"
    empty_title = "Positional encoding added to the token embeddings"

    def draw(self, view, ids: list[int]) -> None:
        table = view.table                                                    # (n, d)
        levels = (-view.extent, view.extent)
        self.bar.setLevels(levels)
        self.map.set_image(table, levels)
        d = table.shape[1]
        self.map.set_ticks([str(p) for p in ids], [str(j) for j in range(d)])
        self.data = {"encoding": table.copy()}
        self.coords = {"position": ids}
        kind = view.kind
        self.set_title(f"Positional encoding added to the token embeddings: "
                       f"{TITLES.get(kind, kind or 'recorded')} "
                       f"({len(ids)} positions × {d} dimensions)")


class SimilarityFigure(_PositionMap):
    """Cosine similarity between the encodings of every pair of positions."""

    name = "encoding_similarity"
    title = "Position similarity"
    dims = ("position", "position_b")
    bar_label = "cosine"
    empty_title = "Similarity between positions"

    def draw(self, view, ids: list[int]) -> None:
        self.map.set_image(view.similarity, (-1, 1))                          # (n, n)
        ticks = [str(p) for p in ids]
        self.map.set_ticks(ticks, ticks)
        self.data = {"cosine": view.similarity}
        self.coords = {"position": ids, "position_b": ids}
        self.set_title("Cosine similarity between the encodings of two positions "
                       "(a band along the diagonal: nearby positions look alike)")


class RelativeProfileFigure(Figure):
    """What a relative encoding adds as a function of Δ = key position − query position."""

    name = "relative_profile"
    title = "Relative-distance profile"
    dims = ("head", "distance")
    legend_columns = 8

    def __init__(self, parent=None):
        super().__init__(parent)
        self.plot = self.canvas.addPlot(row=0, col=0)
        style.style_plot(self.plot, "", "", "Δ = key position − query position")
        self.plot.hideButtons()
        self.legend = style.legend_below(self.canvas)
        self.curves: list[pg.PlotDataItem] = []
        self._key = None

    def _curve(self, i: int) -> pg.PlotDataItem:
        while len(self.curves) <= i:
            colour = style.CURVE_COLOURS[len(self.curves) % len(style.CURVE_COLOURS)]
            curve = pg.PlotDataItem(pen=style.cosmetic_pen(colour, 2), connect="finite")
            self.plot.addItem(curve)
            self.curves.append(curve)
        return self.curves[i]

    def update_from(self, shown, layer: int, head: int) -> None:
        view = shown.views.positions
        kind, profile = view.kind, view.profile
        key = (view.built_in, kind, profile)      # profiles are cached: same one, same key
        if key == self._key:
            return
        self._key = key
        self.data, self.coords = {}, {}
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
                "see the similarity matrix." if kind == "learned" else
                "No positional encoding (NoPE): nothing depends on the distance between "
                "tokens.")
            return
        distances, values, rows = profile.distances, profile.values, profile.rows
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
        style.fit_label(self.plot.getAxis("left"), profile.axis)
        shown = distances[np.isfinite(values).any(axis=0)]     # causal: keys ahead are masked
        self.plot.setXRange(float(shown.min()), float(shown.max()), padding=0.02)
        self.plot.enableAutoRange(axis="y")
        self.data = {"value": values.copy()}
        self.coords = {"head": list(rows), "distance": distances.tolist()}
        self.set_title(f"{TITLES.get(kind, kind)}: {profile.quantity} against relative "
                       "distance Δ")
