"""How the Experiments figure draws the alibi-slopes paper check: each head's slope,
measured and by the reference rule, for every head count the check ran."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg  # noqa: I001
from PySide6 import QtCore, QtGui  # before pyqtgraph, so it binds PySide6

from ..plots import style
from ..plots.coincide import HALO_ALPHA, WIDE

SHAPES = (("o", "circles"), ("s", "squares"), ("d", "diamonds"), ("t", "triangles"))


def show_slopes(figure, values: dict) -> str:
    """alibi-slopes: each head's slope (from 0), measured (marks) and by the reference
    rule (dashed, one line per geometric run), one colour and shape for each head count
    the check ran; a count whose slopes are a larger one's first ones drawn larger and
    under it, named so in the legend; what the note says of the drawing."""
    by_heads = values.get("by_heads") or {"8": {"measured": values["measured"],
                                                 "rule": values["paper"]}}
    most = max(len(row["measured"]) for row in by_heads.values())
    figure._reset("slope m_h (log)", "head (from 0); marks: measured, dashed: the rule",
                  log=True)
    figure.data = {}
    under = _first_ones(by_heads)
    shapes = {heads: SHAPES[k % len(SHAPES)] for k, heads in enumerate(by_heads)}
    said = ["heads count from 0: head 0 is the formula's h = 1"]
    for k, (heads, row) in enumerate(by_heads.items()):
        colour = style.CURVE_COLOURS[k % len(style.CURVE_COLOURS)]
        (symbol, shape), h = shapes[heads], np.arange(len(row["measured"]))
        runs, interleaved = _rule_runs(int(heads), row["rule"])
        words = [f"{heads} heads ({shape})"]
        if heads in under:                  # a wide light line the larger one's runs on
            larger = under[heads]
            faded = QtGui.QColor(colour)
            faded.setAlpha(HALO_ALPHA)
            pen = style.cosmetic_pen(faded, WIDE)
            words.append(f"the {larger} heads' first {len(h)}, under their "
                         f"{shapes[larger][1]}")
            said.append(f"the {heads} heads' slopes are the {larger} heads' first "
                        f"{len(h)}, so their {shape} lie under the {larger} heads' "
                        f"{shapes[larger][1]}")
        else:
            pen = style.cosmetic_pen(colour, 1.5, QtCore.Qt.PenStyle.DashLine)
        if interleaved:
            words.append(f"{interleaved} at heads {runs[1][0]}–{len(h) - 1}")
            said.append(f"for {heads} heads, not a power of two, the rule takes "
                        f"{interleaved} at heads {runs[1][0]}–{len(h) - 1}, so its line "
                        f"breaks there: no slope lies between")
        for first, stop in runs:
            figure.plot.addItem(pg.PlotCurveItem(h[first:stop].astype(float),
                                                 np.log10(row["rule"][first:stop]), pen=pen))
        size = 17 if heads in under else 11   # nested: the larger count's marks inside
        figure.plot.addItem(pg.ScatterPlotItem(h.astype(float), np.log10(row["measured"]),
                                               size=size, symbol=symbol, brush=colour,
                                               pen="w"))
        figure.legend.addItem(style.legend_sample(pen=pen, symbol=symbol, symbolBrush=colour,
                                                  symbolPen="w", symbolSize=10),
                              f"{words[0]}: {'; '.join(words[1:])}" if words[1:]
                              else words[0])
        padded = np.full(most, np.nan)
        padded[:h.size] = row["measured"]
        figure.data[f"measured_{heads}_heads"] = padded
    figure._frame()
    # one tick a head (from 0), never a fraction between two
    figure.plot.getAxis("bottom").setTicks([[(k, str(k)) for k in range(most)], []])
    figure.dims, figure.coords, figure.labels = ("head",), {"head": list(range(most))}, {}
    return "; ".join(said) + "."


def _first_ones(by_heads: dict) -> dict[str, str]:
    """{head count: the larger count whose first slopes are its own} (to 1e-5)."""
    under = {}
    for heads, row in by_heads.items():
        k = len(row["measured"])
        for more, other in by_heads.items():
            if len(other["measured"]) > k and np.allclose(other["measured"][:k],
                                                          row["measured"], rtol=1e-5):
                under[heads] = more
                break
    return under


def _rule_runs(heads: int, rule) -> tuple[list[tuple[int, int]], str]:
    """The geometric runs of the rule's slopes for ``heads`` heads, as (first, stop)
    heads, and in words how they interleave ("" for one run). Press et al.'s reference
    code: for a count that is not a power of two, the slopes of the power of two p below
    it, then every other slope of 2p heads; checked against it, not assumed."""
    from posviz.models.encodings.alibi import alibi_slopes
    p = 2 ** int(np.floor(np.log2(heads)))
    if p == heads or not (np.allclose(rule[:p], alibi_slopes(p)) and np.allclose(
            rule[p:], alibi_slopes(2 * p)[0::2][:heads - p])):
        return [(0, heads)], ""
    return [(0, p), (p, heads)], f"{p} heads' slopes, then every other of {2 * p} heads'"
