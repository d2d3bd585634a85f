"""Colour bars: one width, a labelled axis styled as every other, both ends of the range
numbered, and the colour strip level with the data area of the plot it describes."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg

from .style import BAR_WIDTH, colormap, fit_label, nice_ceiling, style_axis

BAR_GAP = 18            # pixels between a bar's title and whatever lies to its right


def color_bar(levels, cmap: str, label: str = "", short: str = "") -> pg.ColorBarItem:
    """A fixed (non-interactive) colour bar, BAR_WIDTH wide, its axis styled as every
    other and labelled with what its colours measure (``short`` where room is short)."""
    bar = ColourBar(values=levels, colorMap=colormap(cmap), interactive=False,
                    width=BAR_WIDTH, colorMapMenu=False)
    # its margins (align_bar) must not make it ask for more height than its row has:
    # a taller bar would grow the row and its margins with it, and squeeze the strip
    bar.setMinimumHeight(0)
    # room after its title: flush against a plot to its right it read as that plot's own
    left, top, _, bottom = bar.layout.getContentsMargins()
    bar.layout.setContentsMargins(left, top, BAR_GAP, bottom)
    style_axis(bar.axis)
    # as wide as its numbers and title ask: pyqtgraph fixes it at 45 pixels, where the
    # title "difference (probability)" overlapped "≤-0.3" and "-0.2"
    bar.axis.setWidth(None)
    bar.setLevels(levels)
    if label:
        set_bar_label(bar, label, short)
    return bar


class ColourBar(pg.ColorBarItem):
    """A colour bar whose numbers include both ends of its range when they fall on its
    step (pyqtgraph's own ticks drop -0.3 of ±0.3 to rounding), and say "≤" or "≥" at
    an end that the data shown pass (``clips``: their colours are the end's)."""

    clips = (False, False)          # values below the low end, above the high end

    def setLevels(self, *args, **kwargs):
        super().setLevels(*args, **kwargs)
        if getattr(self, "axis", None) is not None:
            self.axis.setTicks([bar_ticks(*self.levels(), self.clips)])

    def set_clips(self, values: np.ndarray) -> tuple[bool, bool]:
        """Mark the ends that ``values`` (the data the bar colours; NaN ignored) pass;
        which (below, above)."""
        low, high = self.levels()
        values = np.ravel(values)
        # fmin/fmax skip NaN without copying the finite values out (a reorder's maps)
        clips = (bool(values.size and np.fmin.reduce(values) < low),
                 bool(values.size and np.fmax.reduce(values) > high))
        if clips != self.clips:
            self.clips = clips
            self.axis.setTicks([bar_ticks(low, high, clips)])
        return clips


def bar_ticks(low: float, high: float,
              clips: tuple[bool, bool] = (False, False)) -> list[tuple[float, str]]:
    """(value, label) every 1, 2 or 5 × 10^k, about five of them, ends included when
    they lie on that step or are passed by the data (``clips``), then read "≤ low" and
    "≥ high"."""
    if not (np.isfinite(low) and np.isfinite(high)) or high <= low:
        return []

    def on_step(value, step):
        return abs(value / step - round(value / step)) < 1e-6
    steps = [nice_ceiling((high - low) / count) for count in (6, 5, 4, 8, 7, 3, 2)]
    step = next((s for s in steps if on_step(low, s) and on_step(high, s)), steps[0])
    first, last = np.ceil(low / step - 1e-6), np.floor(high / step + 1e-6)
    values = [float(round(k * step, 12)) + 0.0 for k in np.arange(first, last + 1)]
    ticks = [(v, f"{v:g}") for v in values
             if not (clips[0] and v <= low or clips[1] and v >= high)]
    ends = [(low, f"≤{low:g}")] * clips[0] + [(high, f"≥{high:g}")] * clips[1]
    return sorted(ticks + ends)


def set_bar_label(bar: pg.ColorBarItem, label: str, short: str = "") -> None:
    """Label the bar with what its colours measure, in its unit (units.with_unit); where
    the part of the bar in sight is short, ``short`` or the label without its unit
    (style.fit_label)."""
    fit_label(bar.axis, label, short)


def align_bar(bar: pg.ColorBarItem, plot: pg.PlotItem) -> None:
    """Keep the bar's colour strip level with ``plot``'s data area (not with the plot's
    title and tick labels above and below it), whatever the figure's size."""
    def align(*_):
        # from the bar's own box, not its strip's: a strip squeezed to nothing by an
        # earlier layout (a long text's deep labels) must not keep it squeezed
        target, own = plot.vb.sceneBoundingRect(), bar.mapRectToScene(bar.rect())
        if target.height() < 2 or own.height() < 2:
            return
        left, top, right, bottom = bar.layout.getContentsMargins()
        top2 = min(max(0.0, target.top() - own.top()), own.height() - 2)
        bottom2 = min(max(0.0, own.bottom() - target.bottom()), own.height() - 2 - top2)
        if abs(top2 - top) > 0.5 or abs(bottom2 - bottom) > 0.5:
            bar.layout.setContentsMargins(left, top2, right, bottom2)
    plot.vb.sigResized.connect(align)
    plot.geometryChanged.connect(align)
    bar.vb.sigResized.connect(align)
    bar.geometryChanged.connect(align)
    align()
