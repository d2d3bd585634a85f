"""Positional encodings: the additive table, its position-to-position similarity, and
the score or bias as a function of relative distance.

For the built-in model the numbers come from posviz.views.shown (PositionsView): the
encoding modules of posviz.models.encodings, rebuilt from its configuration. A real model
shows its own machinery (models.hf.machinery, carried by the Shown's ``model``): its
learned table and the cosine between its rows; or its RoPE frequencies, ALiBi slopes or
T5 buckets and the query × key map they make; and the score or bias against distance.
"""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from . import colorbars, style
from .attention import _HeatmapPlot
from .base import Figure
from .exporting import drop_export_menu, keep_own_entries
from .hover import CurveHover, Series
from .log_ticks import one_notation
from .tabs import POSITIONS
from posviz.models.encodings import ENCODINGS, NoPositions
from posviz.models.options import TITLES


def machinery_of(shown):
    """The real model's positional machinery carried by a Shown, or None."""
    return getattr(getattr(shown, "model", None), "machinery", None)


def per_head(machinery) -> bool:
    """Does the machinery hold a map per head (a real model's ALiBi or T5 bias)?"""
    rows = getattr(machinery, "pair_rows", ())
    return bool(rows) and rows[0].startswith("head")


def _symmetric(array: np.ndarray) -> float:
    finite = np.abs(array[np.isfinite(array)])
    return float(finite.max()) if finite.size and finite.max() > 0 else 1.0


def _no_additive_message(kind: str | None, built_in: bool) -> str:
    if kind in (None, NoPositions.kind):
        if built_in:
            return ("No positional encoding (NoPE): nothing is added to the token "
                    "embeddings, so only a causal mask can tell positions apart.")
        return "This model records no additive positional encoding."
    title = TITLES.get(kind, kind)
    where = ENCODINGS[kind].where if kind in ENCODINGS else "acts inside attention"
    return (f"No additive encoding: this model uses {title}, which {where}. See the "
            f"relative-distance profile.")


def cosine_scale(array: np.ndarray) -> tuple[str, tuple[float, float]]:
    """(colour map, levels) for a map of cosines: the data's range, not −1…1, which
    hid a sinusoidal table's 0.6…1 in a few shades of one half. Values of both signs:
    the diverging map, white at 0, as far as the largest |value| each way; of one sign:
    the sequential map from the smallest to the largest."""
    finite = np.asarray(array, float)[np.isfinite(array)]
    if finite.size == 0:
        return style.DIVERGING, (-1.0, 1.0)
    low, high = float(finite.min()), float(finite.max())
    if low < 0 < high:
        extent = max(-low, high)
        return style.DIVERGING, (-extent, extent)
    if high - low < 1e-6:                         # one value: a band around it
        low, high = low - 0.5e-6, high + 0.5e-6
    return style.SEQUENTIAL, (low, high)


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
        self.bar = colorbars.color_bar((-1, 1), style.DIVERGING, self.bar_label)
        self.bar.setImageItem(self.map.image)
        self.canvas.addItem(self.bar, row=0, col=1)
        colorbars.align_bar(self.bar, self.map.plot)
        self._key = None
        self.cells = None   # (array (m, m'), block, words(row, col, value)) hover reads
        self.canvas.scene().sigMouseMoved.connect(self._mouse_moved)

    def hover_cells(self, array: np.ndarray, words, block: int = 1) -> None:
        """What hover reads: ``array``'s cell under the mouse (each ``block`` positions a
        side) as ``words(row, col, value)``, rows and columns counted in positions."""
        self.cells = (array, block, words)

    def _mouse_moved(self, scene_pos) -> None:
        cell = self.map.cell_at(scene_pos) if self.cells is not None else None
        if cell is None or self.stack.currentWidget() is not self.canvas:
            return self.hover.clear()
        array, block, words = self.cells
        row, col = cell
        value = array[row // block, col // block]
        self.hover.show(words(row, col, "masked" if np.isnan(value) else f"{value:.3g}"))

    def update_from(self, shown, layer: int, head: int) -> None:
        machinery = machinery_of(shown)
        if machinery is not None:
            key = (machinery, self.row_of(machinery, head))
            if key != self._key:
                self._key = key
                self.draw_machinery(machinery, key[1])
            return
        view = shown.views.positions
        if view is self._key:
            return                  # the same reference run: nothing to redraw
        self._key = view
        self.dims = type(self).dims
        self.set_note("")
        self.label_axes("position", self.bottom)
        colorbars.set_bar_label(self.bar, self.bar_label)
        if view.table is None:
            self.data, self.coords, self.cells = {}, {}, None
            self.set_title(self.empty_title)
            self.show_message(_no_additive_message(view.kind, view.built_in))
            return
        self.show_canvas()
        self.draw(view, view.position_ids.tolist())

    def draw(self, view, ids: list[int]) -> None:
        raise NotImplementedError

    def row_of(self, machinery, head: int) -> int:
        return 0

    def draw_machinery(self, machinery, row: int) -> None:
        raise NotImplementedError

    def show_map(self, array: np.ndarray, levels, rows: list[str], cols: list[str],
                 bar_label: str, left: str = "position", bottom: str | None = None,
                 cmap: str = style.DIVERGING) -> None:
        """A heatmap of ``array`` (NaN cells drawn in the middle colour)."""
        self.show_canvas()
        self.label_axes(left, bottom or self.bottom)
        self.set_scale(cmap, levels)
        colorbars.set_bar_label(self.bar, bar_label)
        self.map.set_image(np.where(np.isfinite(array), array, 0.0).astype(np.float32),
                           levels)
        self.map.set_ticks(rows, cols)

    def set_scale(self, cmap: str, levels) -> None:
        """Colour the map and its bar by ``cmap`` (a style map name) over ``levels``."""
        self.map.image.setColorMap(style.colormap(cmap))
        self.map.table = style.argb_table(cmap)
        self.bar.setColorMap(style.colormap(cmap))
        self.bar.setLevels(levels)

    def label_axes(self, left: str, bottom: str) -> None:
        style.fit_label(self.map.plot.getAxis("left"), left)
        style.fit_label(self.map.plot.getAxis("bottom"), bottom)

    def show_none(self, title: str, machinery) -> None:
        self.data, self.coords, self.cells = {}, {}, None
        self.set_note("")
        self.set_title(title)
        self.show_message(machinery.note or f"This model uses {machinery.title}.")


class EncodingFigure(_PositionMap):
    """The additive encoding added to each position: positions × dimensions."""

    name = "encoding"
    title = "Positional encoding"
    tab = POSITIONS
    dims = ("position", "dimension")
    guide = ("the additive encoding's table PE(p), positions × dimensions (sinusoidal: "
             "PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos(p / 10000^(2i/d))).")
    bottom = "dimension"
    empty_title = "Positional encoding added to the token embeddings"
    side = None                 # the line plot of RoPE, ALiBi or T5 parameters, once made

    def draw(self, view, ids: list[int]) -> None:
        table = view.table                                                    # (n, d)
        levels = (-view.extent, view.extent)
        self.bar.setLevels(levels)
        self.map.set_image(table, levels)
        d = table.shape[1]
        self.map.set_ticks([str(p) for p in ids], [str(j) for j in range(d)])
        self.data = {"encoding": table.copy()}
        self.coords = {"position": ids}
        self.hover_cells(table, lambda r, c, v: f"position {ids[r]}, dimension {c}: {v}")
        kind = view.kind
        self.set_title(f"Positional encoding added to the token embeddings: "
                       f"{TITLES.get(kind, kind or 'recorded')} "
                       f"({len(ids)} positions × {d} dimensions)")

    def _parameter_plot(self) -> pg.PlotItem:
        """A line plot in place of the heatmap, for RoPE, ALiBi and T5 parameters."""
        if self.side is None:
            self.side = pg.GraphicsLayoutWidget()
            self.side.setBackground(style.BACKGROUND)
            self.side_plot = self.side.addPlot(row=0, col=0)
            style.style_plot(self.side_plot, "", "", "")
            self.side_plot.hideButtons()
            self.side_legend = style.legend_below(self.side)
            self.side_curves: list[pg.PlotDataItem] = []
            self.side_series: list[Series] = []
            self.side_hover = CurveHover(self, self.side_plot, lambda: self.side_series,
                                         connect=False)
            self.side.scene().sigMouseMoved.connect(self.side_hover.moved)
            self.side.installEventFilter(self.hover)        # leaving it takes the text back
            drop_export_menu(self.side)
            keep_own_entries(self.side_plot.vb.menu)
            self.side_plot.vb.menu.addSeparator()
            for action in self.heading.actions():          # the panel's export entries
                self.side_plot.vb.menu.addAction(action)
            self.stack.addWidget(self.side)
        return self.side_plot

    def draw_machinery(self, machinery, row: int) -> None:
        self.dims = ("position", "dimension")
        if machinery.table is not None:
            table = machinery.table                                           # (P, d)
            # a few outlying dimensions would wash the rest out: colours saturate at the
            # 99th percentile of |value| (the CSV keeps the true values)
            extent = float(np.percentile(np.abs(table), 99)) or _symmetric(table)
            P, d = table.shape
            self.show_map(table, (-extent, extent), [str(p) for p in range(P)],
                          [str(j) for j in range(d)], "value")
            self.data = {"encoding": table.copy()}
            self.coords = {"position": list(range(P))}
            self.hover_cells(table, lambda r, c, v: f"position {r}, dimension {c}: {v}")
            self.set_title(f"The model's position table ({machinery.title}): positions "
                           f"0..{P - 1} × {d} dimensions (colours saturate at ±{extent:.2g})")
            self.set_note(machinery.note)
            return
        if machinery.parameters is None:
            self.show_none("Positional parameters", machinery)
            return
        plot = self._parameter_plot()
        values, coords = machinery.parameters, machinery.parameter_coords    # (c, k), (k,)
        self.side_legend.clear()
        for i, curve in enumerate(self.side_curves):
            curve.setVisible(i < len(values))
        for i, name in enumerate(machinery.parameter_rows):
            while len(self.side_curves) <= i:
                colour = style.CURVE_COLOURS[len(self.side_curves) % len(style.CURVE_COLOURS)]
                curve = pg.PlotDataItem(pen=style.cosmetic_pen(colour, 2), connect="finite",
                                        stepMode=None)
                plot.addItem(curve)
                self.side_curves.append(curve)
            curve = self.side_curves[i]
            curve.setData(coords, values[i])
            curve.setVisible(True)
            self.side_legend.addItem(curve, name)
        self.side_legend.setVisible(len(values) > 1)
        index = machinery.parameter_index
        with np.errstate(divide="ignore", invalid="ignore"):
            drawn = np.log10(values) if machinery.parameter_log else values
        self.side_series = [Series(name, coords, drawn[i], values[i])
                            for i, name in enumerate(machinery.parameter_rows)]
        self.side_hover.x_words = lambda k: f"{index} {k}"
        plot.setLogMode(y=machinery.parameter_log)
        one_notation(plot.getAxis("left"))
        style.fit_label(plot.getAxis("bottom"), machinery.parameter_index)
        style.fit_label(plot.getAxis("left"), machinery.parameter_axis)
        plot.enableAutoRange()
        self.stack.setCurrentWidget(self.side)
        self.dims = ("row", machinery.parameter_index.replace(" ", "_"))
        self.data = {"value": values.copy()}
        self.coords = {"row": list(machinery.parameter_rows),
                       self.dims[1]: coords.tolist()}
        self.set_title(f"{machinery.parameter_title or machinery.parameter_axis}: "
                       f"{machinery.title}")
        self.set_note(machinery.note)


class SimilarityFigure(_PositionMap):
    """Cosine similarity between the encodings of every pair of positions."""

    name = "encoding_similarity"
    title = "Position similarity"
    tab = POSITIONS
    dims = ("position", "position_b")
    guide = ("the cosine similarity cos(PE(p), PE(q)) between the encodings of two "
             "positions; for a real model whose encoding acts on the scores, what it "
             "adds at each query and key position (the selected head's ALiBi or T5 bias).")
    bar_label = "cosine"
    empty_title = "Similarity between positions"
    may_select = ("head",)          # a real model's per-head biases (update_from)

    def update_from(self, shown, layer: int, head: int) -> None:
        # a real model's per-head biases (ALiBi, T5) show the selected head's
        self.selects = ("head",) if per_head(machinery_of(shown)) else ()
        super().update_from(shown, layer, head)

    @staticmethod
    def chosen_for(backend) -> bool:
        """A head chooses what this figure draws for ``backend``'s model."""
        from ...views.model import about_model
        return per_head(about_model(backend)[1])

    def draw(self, view, ids: list[int]) -> None:
        block = view.similarity_block                    # (m, m): m = n unless pooled
        cmap, levels = cosine_scale(view.similarity)
        self.set_scale(cmap, levels)
        self.map.set_image(view.similarity, levels, block, len(ids))
        ticks = [str(p) for p in ids]
        self.map.set_ticks(ticks, ticks)
        self.data = {"cosine": view.similarity}
        self.coords = {"position": ids[::block], "position_b": ids[::block]}
        self.hover_cells(view.similarity, lambda r, c, v: (
            f"cosine of positions {ids[r]} and {ids[c]}: {v}" if block == 1 else
            f"cosine of positions {ids[r - r % block]}… and {ids[c - c % block]}… "
            f"(mean of {block}×{block}): {v}"), block)
        pooled = f" — each pixel the mean of {block}×{block} pairs" if block > 1 else ""
        # a hint, not a claim: a random learned table has no band
        self.set_title("Cosine similarity between the encodings of two positions "
                       f"(where a band runs along the diagonal, nearby positions look "
                       f"alike){pooled}")

    def row_of(self, machinery, head: int) -> int:
        return min(head, len(machinery.pair_rows) - 1) if self.selects else 0

    def draw_machinery(self, machinery, row: int) -> None:
        maps = machinery.pair_maps
        if maps is None:
            self.show_none("Query × key", machinery)
            return
        array = maps[row]                                                     # (P, P)
        P = array.shape[0]
        ticks = [str(p) for p in range(P)]
        if machinery.table is not None:             # an absolute table: cosines
            self.dims = ("position", "position_b")
            cmap, levels = cosine_scale(array)
            self.show_map(array, levels, ticks, ticks, "cosine", cmap=cmap)
            self.data = {"cosine": array.copy()}
            self.coords = {"position": ticks, "position_b": ticks}
            self.hover_cells(array, lambda r, c, v: f"cosine of positions {r} and {c}: {v}")
            self.set_title(machinery.pair_title)
            return
        extent = machinery.pair_extent or _symmetric(maps)
        self.dims = ("query", "key")
        self.show_map(array, (-extent, extent), ticks, ticks, machinery.pair_quantity,
                      "query position", "key position")
        self.data = {machinery.pair_quantity.replace(" ", "_"): array.copy()}
        self.coords = {"query": ticks, "key": ticks}
        which = machinery.pair_rows[row]
        quantity = machinery.pair_quantity
        self.hover_cells(array, lambda r, c, v: f"{which}: query {r} → key {c}, "
                                                f"{quantity} {v}")
        masked = " (keys ahead of the query are masked)" if np.isnan(array).any() else ""
        self.set_title(f"{machinery.pair_title or machinery.pair_quantity} "
                       f"(0…{P - 1}), {which}{masked}")
