"""How much each token's hidden state moved at the selected layer, one bar per token."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from . import style
from .base import Figure
from .linear_ticks import common_scale, scaled
from .tabs import TOKENS
from .token_axis import TokenAxis
from .units import with_unit

CHANGE, CHANGE_SHORT = "relative change |h′ − h| / |h|", "|h′ − h| / |h|"   # its left axis


UNCHANGED_GREY = (170, 170, 170)    # a bar within the noise floor
SOLID_BELOW = 3.0       # px a token's slot: narrower, its bars are drawn as filled steps
NAMED_STUBS = 5         # tiny changes named one by one in the note; more: counted
STUB = 0.015            # of the axis's height (about 4 px): the least a non-zero bar is
                        # drawn, so a tiny change stays apart from an exact 0 (no bar)


def unchanged_words(unchanged: np.ndarray) -> str:
    """How the ``unchanged`` tokens' bars (grey, at most the floor) show: "; grey:
    unchanged", "; unchanged: 0, no bar", both, or ""."""
    if not unchanged.size:
        return ""
    seen = unchanged > 0
    return ("; grey: unchanged" if seen.all() else "; unchanged: 0, no bar"
            if not seen.any() else "; unchanged: grey, or no bar where 0")


def step_outline(heights: np.ndarray, edges: np.ndarray | None = None
                 ) -> QtGui.QPainterPath:
    """One closed outline over the slots [edges[i], edges[i + 1]) (m + 1,; the tokens'
    slots [i, i + 1) unless given) at ``heights`` (m,), from 0: a single path, so no seam
    shows where pieces of a fill meet."""
    m = heights.shape[0]
    edges = np.arange(m + 1.0) if edges is None else edges
    x = np.concatenate([[edges[0]], np.repeat(edges, 2)[1:-1], [edges[-1]]])  # (2m + 2,)
    y = np.concatenate([[0.0], np.repeat(heights, 2), [0.0]])
    path = pg.arrayToQPath(x, y, connect="all")
    path.closeSubpath()
    return path


def pixel_columns(n: int, left: float, right: float) -> np.ndarray:
    """The edges (m + 1,), in tokens, of the whole pixel columns that the slots [0, n)
    cover when token 0's left edge lies at pixel ``left`` and token n's at ``right``."""
    pixels = np.arange(np.floor(left), np.ceil(right) + 1)                    # (m + 1,)
    return np.clip((pixels - left) * n / max(right - left, 1e-12), 0, n)


def pooled(heights: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Each column [edges[k], edges[k + 1])'s largest height (m,) of the tokens
    ``heights`` (n,) it holds a part of (as the mosaic pools): two tokens in one pixel
    column no longer blend into a pale one, the tallest shows whole."""
    first = np.floor(edges[:-1]).astype(int)
    last = np.maximum(np.ceil(edges[1:]).astype(int), first + 1)
    return np.array([heights[a:b].max(initial=0.0) for a, b in zip(first, last)])


def stub_heights(change: np.ndarray, top: float) -> np.ndarray:
    """The bars' heights on an axis up to ``top``: each value, a non-zero one at least
    STUB of the axis (an exact 0 stays 0)."""
    return np.where(change > 0, np.maximum(change, STUB * top), change)


class TokenChangeFigure(Figure):
    """How much each original token's hidden state moved at the selected layer."""

    name = "token_change"
    title = "Change per token"
    shows_order = True
    tab = TOKENS
    dims = ("token",)
    selects = ("layer",)
    guide = ("per original token i at the selected layer, ‖H′[inv i] − H[i]‖ / ‖H[i]‖, "
             "where inv i is the slot token i moved to. A change under 1.5% of the axis "
             "is drawn that high, so that it shows (the note names its tokens); an exact "
             "0 has no bar. Where a token is under 3 pixels wide, each pixel column "
             "shows the largest change of the tokens in it. The chips' bars show the same on a log scale from the noise "
             "floor (empty) to 1 (full).")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.plot = self.canvas.addPlot(row=0, col=0,
                                        axisItems={"bottom": TokenAxis("bottom")})
        style.style_plot(self.plot, "", CHANGE, "token (original order)",
                         short_left=CHANGE_SHORT)
        self.plot.hideButtons()
        self.bars = pg.BarGraphItem(x0=[], height=[], width=0.8, brush=style.CURVE_COLOURS[1])
        self.plot.addItem(self.bars)
        # bars under a pixel wide fall between pixels (blank stretches on screen, pale
        # lines in an export): narrow slots are drawn as one filled step per colour,
        # each token's slot whole, in the window and in every export alike
        self.steps = [QtWidgets.QGraphicsPathItem() for _ in range(2)]  # beyond, within
        for step, colour in zip(self.steps, (style.CURVE_COLOURS[1], UNCHANGED_GREY)):
            step.setPen(pg.mkPen(None))
            step.setBrush(pg.mkBrush(colour))
            self.plot.addItem(step)
        self.plot.vb.sigTransformChanged.connect(lambda *_: self._solid_when_narrow())
        self.tokens: tuple[str, ...] = ()
        self.canvas.scene().sigMouseMoved.connect(self._mouse_moved)
        self.where = ""
        self._top = None
        self._heights = (np.zeros(0), np.zeros(0))      # (n,) beyond, within the floor

    def update_from(self, shown, layer: int, head: int) -> None:
        ev = shown.evaluation
        change = ev.comparison.token_change[layer]                            # (n,)
        floor = ev.comparison.floor
        n = change.shape[0]
        broken = change > floor
        changed_brush = pg.mkBrush(style.CURVE_COLOURS[1])
        same_brush = pg.mkBrush(UNCHANGED_GREY)
        top = style.nice_ceiling(max(float(change.max()) if n else 0.0, 10 * floor))
        heights = stub_heights(change, top)
        self.bars.setOpts(x0=np.arange(n) + 0.1, height=heights,
                          width=0.8, pens=[pg.mkPen(None)] * n,
                          brushes=[changed_brush if b else same_brush for b in broken])
        self._heights = (np.where(broken, heights, 0.0), np.where(broken, 0.0, heights))
        if ev.reference.tokens != self.tokens:
            self.tokens = ev.reference.tokens
            self.plot.getAxis("bottom").set_tokens(self.tokens)
            self.plot.setXRange(0, n, padding=0.01)
        self._solid_when_narrow()
        if top != self._top:
            self._top = top
            self.plot.setYRange(0, top, padding=0)
            axis = self.plot.getAxis("left")            # one notation: 0.5, 1.0 (×10⁻⁴)
            factor = common_scale(axis, top)
            style.fit_label(axis, scaled(with_unit(CHANGE), factor),
                            scaled(with_unit(CHANGE_SHORT), factor))
        self.data = {"change": change.copy()}
        self.labels = {"token": list(self.tokens)}
        self.where = f"layer {layer}"
        self.set_title(f"Change per token after layer {layer} "
                       f"({int(broken.sum())} of {n} tokens beyond the noise floor"
                       f"{unchanged_words(change[~broken])})")
        # the values in the note (an exported figure has no hover); past a few, their
        # count and range (340 named tokens of a 701-token causal swap flooded the plot)
        tiny = np.flatnonzero((change > 0) & (change < STUB * top))
        stubs = ", ".join(f"{self.tokens[i]} ({change[i]:.2g})" for i in tiny) \
            if len(tiny) <= NAMED_STUBS else (
                f"{len(tiny)} tokens ({change[tiny].min():.2g} to {change[tiny].max():.2g}; "
                "each in the table)")
        self.set_note(f"{stubs}: a change under {STUB:.1%} of the axis, drawn that high "
                      "to be seen." if len(tiny) else "")

    def _solid_when_narrow(self) -> None:
        """Bars where a token's slot is SOLID_BELOW px wide or wider, else filled steps
        over whole pixel columns, each at its tallest token: at 701 tokens in 650 px two
        tokens shared a column and the tallest bar showed as a pale one."""
        slot = 1 / max(self.plot.vb.viewPixelSize()[0], 1e-12)             # px a token
        narrow = slot < SOLID_BELOW
        self.bars.setVisible(not narrow)
        for step in self.steps:
            step.setVisible(narrow)
        beyond, within = self._heights
        if not narrow or not beyond.size:
            return
        view = self.plot.vb
        left, right = (view.mapViewToScene(QtCore.QPointF(x, 0)).x()
                       for x in (0.0, float(beyond.size)))
        edges = pixel_columns(beyond.size, left, right)                       # (m + 1,)
        tallest = pooled(beyond, edges)                                       # (m,)
        # a column holding a token beyond the floor is that colour (the taller one)
        grey = np.where(tallest > 0, 0.0, pooled(within, edges))
        for step, columns in zip(self.steps, (tallest, grey)):
            step.setPath(step_outline(columns, edges))

    def _pixel_tokens(self, scene_x: float) -> tuple[int, int] | None:
        """The tokens [first, last) sharing the pixel column at ``scene_x`` while the
        columns are pooled (as pooled() reads them), else None."""
        beyond = self._heights[0]
        if not self.steps[0].isVisible() or not beyond.size:
            return None
        n, view = beyond.size, self.plot.vb
        left, right = (view.mapViewToScene(QtCore.QPointF(x, 0)).x() for x in (0.0, float(n)))
        column = np.floor(scene_x)
        edges = np.clip((np.array([column, column + 1]) - left) * n / max(right - left, 1e-12),
                        0, n)
        first = int(np.floor(edges[0]))
        last = min(max(int(np.ceil(edges[1])), first + 1), n)
        return (first, last) if first < last else None

    def _mouse_moved(self, scene_pos) -> None:
        view = self.plot.vb
        if "change" not in self.data or not view.sceneBoundingRect().contains(scene_pos):
            return self.hover.clear()
        i = int(np.floor(view.mapSceneToView(scene_pos).x()))
        shared, aside = self._pixel_tokens(scene_pos.x()), ""
        if shared is not None and shared[1] - shared[0] > 1:
            # the bar drawn there: the column's tallest token (its colour's first)
            first, last = shared
            beyond, within = (h[first:last] for h in self._heights)
            i = first + int(np.argmax(beyond if beyond.max() > 0 else within))
            aside = f" (the largest of the {last - first} tokens in this pixel column)"
        if 0 <= i < len(self.tokens):
            text = (f"{self.where}: token '{self.tokens[i]}' changed by "
                    f"{self.data['change'][i]:.3g}{aside}")
            self.hover.show(text)
        else:
            self.hover.clear()
