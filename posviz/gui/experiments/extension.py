"""How the Experiments figure draws the trained checkpoints' experiments: the
context-extension lab (analysis.experiments.extension, its ``to_dict``): held-out
perplexity or retrieval against the length (a log-2 axis of lengths, the training length
marked), or where attention goes (the mass the last quarter of a window's queries put on
keys at each distance) at one length, one curve per method, each with its own marker;
and the checkpoints' order use (analysis.experiments.order_use), a point per encoding."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg  # noqa: I001
from PySide6 import QtCore, QtGui  # before pyqtgraph, so it binds PySide6

from ..plots import style
from ..plots.hover import Series

SYMBOLS = ("o", "s", "t", "d", "t1", "x", "p", "h")     # one marker shape per method
ATTENTION = "attention"          # the attention metric: at the longest length, or
ATTENTION_AT = "attention at "   # "attention at N": at length N
DODGE = 0.035                    # retrieval: log2 units between methods at a length
LEFT = {"perplexity": "held-out perplexity",
        "retrieval": "retrieval (nats a token)",
        ATTENTION: "share of the attention"}


def extension_metrics(result: dict) -> list[tuple[str, str]]:
    """The figure's choices for ``result`` as (metric, label): perplexity, retrieval,
    then attention at each length, the longest first (as "attention")."""
    longest = result["lengths"][-1]
    choices = [("perplexity", "held-out perplexity"),
               ("retrieval", "retrieval (± standard error)"),
               (ATTENTION, f"attention against distance, at {longest} tokens")]
    choices += [(f"{ATTENTION_AT}{n}", f"attention against distance, at {n} tokens")
                for n in reversed(result["lengths"][:-1])]
    return choices


def attention_length(result: dict, metric: str) -> int | None:
    """The length an attention metric draws (None: not an attention metric)."""
    if metric == ATTENTION:
        return int(result["lengths"][-1])
    if metric.startswith(ATTENTION_AT):
        return int(metric[len(ATTENTION_AT):])
    return None


def conditions(result: dict) -> str:
    """What every figure of the lab ran on, in words (its ``ran_on``, its seed)."""
    seed = result.get("seed")
    seeded = f", seed {seed}" if seed is not None else ""
    return (f"Ran on {result['ran_on']}{seeded}; held-out KJV text (books the models never "
            f"saw), {result['tokens']} predictions at each length.")


def _marker(figure, k: int, title: str, x, values, where, shown=None,
            joined=True) -> None:
    """One method's curve (``joined``, else its markers alone) with its own colour and
    marker, in the legend and the hover; ``where``: each point's x in the bottom axis's
    own words (a length, a distance, an encoding), for the hover."""
    colour = style.CURVE_COLOURS[k % len(style.CURVE_COLOURS)]
    symbol, size = SYMBOLS[k % len(SYMBOLS)], max(12 - k, 6)
    pen = style.cosmetic_pen(colour, 2.0, QtCore.Qt.PenStyle.SolidLine)
    drawn = np.asarray(values if shown is None else shown, float)
    if joined:
        figure.plot.addItem(pg.PlotCurveItem(x, drawn, pen=pen))
    figure.plot.addItem(pg.ScatterPlotItem(x, drawn, size=size, symbol=symbol,
                                           pen=pg.mkPen("w", width=1), brush=colour))
    figure.legend.addItem(style.legend_sample(pen=pen if joined else None, symbol=symbol, symbolSize=9,
                                              symbolBrush=colour, symbolPen="w"), title)
    figure._series.append(Series(title, np.asarray(x, float), drawn,
                                 np.asarray(values, float), where=tuple(where)))


def _length_axis(figure, lengths: list[int], train: int) -> np.ndarray:
    """The bottom axis: log2 of the lengths, labelled with the lengths; the training
    length marked by a dotted vertical line. The lengths' x (log2)."""
    x = np.log2(np.asarray(lengths, float))
    figure.plot.getAxis("bottom").setTicks([[(float(v), str(n)) for v, n in
                                             zip(x, lengths)], []])
    line = pg.InfiniteLine(
        pos=float(np.log2(train)), angle=90, label=f"trained at {train}",
        labelOpts={"position": 0.92, "color": (60, 60, 60), "anchors": [(0, 0.5), (0, 0.5)]},
        pen=style.cosmetic_pen((90, 90, 90), 1.5, QtCore.Qt.PenStyle.DotLine))
    line.setZValue(-5)
    figure.plot.addItem(line, ignoreBounds=True)
    return x


def draw_extension(figure, result: dict, metric: str) -> None:
    """``metric`` of the lab's ``result`` (Extension.to_dict()): "perplexity",
    "retrieval" or "attention" / "attention at N" (extension_metrics)."""
    length = attention_length(result, metric)
    if length is None and metric not in ("perplexity", "retrieval"):
        raise ValueError(f"no such figure of the context-extension lab: {metric!r}")
    methods, train = result["methods"], int(result["train_length"])
    lengths = [int(n) for n in result["lengths"]]
    kind = ATTENTION if length is not None else metric
    bottom = ("keys this many tokens back (bins that double)" if length is not None
              else "tokens in the window (log 2)")
    figure._reset(LEFT[kind], bottom, log=False)
    figure.data, figure.labels = {}, {}
    if length is not None:
        _draw_attention(figure, result, length)
    else:
        x = _length_axis(figure, lengths, train)
        ends = []                                      # retrieval ± its error, framed
        for k, (name, row) in enumerate(methods.items()):
            values = np.array([row[metric][str(n)] for n in lengths], float)   # (lengths,)
            # retrieval's bars side by side: each method a little apart at a length
            at = x + (DODGE * (k - (len(methods) - 1) / 2) if metric == "retrieval" else 0)
            _marker(figure, k, row["title"], at, values,
                    [f"{n:,} tokens" for n in lengths])
            figure.data[name] = values
            if metric == "retrieval":
                se = np.array([row["retrieval_se"][str(n)] for n in lengths], float)
                figure.data[f"{name}_se"] = se
                ends += [values - se, values + se]
                figure.plot.addItem(pg.ErrorBarItem(
                    x=at, y=values, top=se, bottom=se, beam=0.02,
                    pen=style.cosmetic_pen(style.CURVE_COLOURS[k % 8], 1.0,
                                           QtCore.Qt.PenStyle.SolidLine)))
        low = high = None
        if ends:
            zero = pg.InfiniteLine(pos=0.0, angle=0, pen=style.cosmetic_pen(
                (90, 90, 90), 1.0, QtCore.Qt.PenStyle.DashLine))
            figure.plot.addItem(zero, ignoreBounds=True)
            low, high = float(np.min(ends)), float(np.max(ends))
        figure.dims, figure.coords = ("length",), {"length": lengths}
        figure._frame(None if low is None else (low - 0.05 * (high - low),
                                                high + 0.05 * (high - low)), pad=0.06)
    figure.fit_legend()
    figure.set_title(_title(result, metric, length))
    figure.set_note(_note(result, metric, length))


def _draw_attention(figure, result: dict, length: int) -> None:
    """The attention mass per distance bin at ``length``, one curve per method."""
    if length not in [int(n) for n in result["lengths"]]:
        raise ValueError(f"the lab ran no length {length}")
    names = result["distance_bins"]
    count = len(next(iter(result["methods"].values()))["attention"][str(length)])
    x = np.arange(count, dtype=float)                  # the bins that reach within it
    axis = figure.plot.getAxis("bottom")
    axis.setTicks([[(float(i), names[i]) for i in range(count)], []])
    # the last bin's label ("512-1023") sits near the axis's end: it may pass it by half
    # its width (hidden on screen at 1024 pixels, where the export showed it)
    metrics = QtGui.QFontMetrics(axis.style["tickFont"] or axis.font())
    axis.setStyle(hideOverlappingLabels=metrics.horizontalAdvance(names[count - 1]) // 2 + 2)
    for k, (name, row) in enumerate(result["methods"].items()):
        values = np.array(row["attention"][str(length)], float)           # (bins,)
        _marker(figure, k, row["title"], x, values,
                [f"keys {b} token{'' if b == '1' else 's'} back" for b in names[:count]])
        figure.data[name] = values
    figure.dims = ("distance",)
    figure.coords = {"distance": list(names[:count])}
    beyond = np.flatnonzero([int(b.split("-")[0]) >= int(result["train_length"])
                             for b in names[:count]])
    if beyond.size:                                    # distances never seen in training
        shade = pg.LinearRegionItem((beyond[0] - 0.5, count - 0.5), movable=False,
                                    brush=pg.mkBrush(150, 150, 150, 45),
                                    pen=pg.mkPen(None))
        shade.setZValue(-10)
        figure.plot.addItem(shade, ignoreBounds=True)
    figure._frame(pad=0.04)


def _title(result: dict, metric: str, length: int | None) -> str:
    methods, lengths = len(result["methods"]), result["lengths"]
    span = f"{lengths[0]} to {lengths[-1]} tokens"
    if length is not None:
        return (f"Where attention goes at {length} tokens: {methods} methods, trained at "
                f"{result['train_length']}")
    what = "held-out perplexity" if metric == "perplexity" else "retrieval"
    return f"Context extension, {what}: {methods} methods at {span}"


def _note(result: dict, metric: str, length: int | None) -> str:
    ran = conditions(result)
    if length is not None:
        shaded = (f" Shaded: distances of {result['train_length']} tokens and more, "
                  "never seen in training." if length > int(result["train_length"]) else "")
        return (f"The share of the attention the last quarter of {length}-token windows' "
                f"queries put on keys at each distance, averaged over layers and heads; "
                f"each curve sums to 1. Each bin holds twice the distances of the one "
                f"before it, so attention spread evenly over the keys also rises to the "
                f"right.{shaded}\n{ran}")
    if metric == "perplexity":
        return (f"Held-out perplexity of the same tokens cut into windows of each length "
                f"(lower is better); RoPE's scalings run the RoPE checkpoint, the others "
                f"run as trained.\n{ran}")
    return (f"What a window's far half adds to the prediction of its last eighth, in nats "
            f"a token (0: far context unused); bars: ± one standard error; the methods "
            f"drawn a little apart at each length.\n{ran}")


ORDER_SERIES = (("order_use", "every token before the last shuffled", "all_but_last"),
                ("order_use_last_two_kept", "the tokens before the last two shuffled",
                 "all_but_last_two"))


def draw_order_use(figure, result) -> None:
    """The shipped checkpoints' order use (analysis.experiments.order_use.ZooOrderUse):
    the last token's perplexity with its context shuffled over that in order, a point
    per encoding, 1 marked (a model that reads its context as a bag of tokens)."""
    kinds = list(result.uses)
    x = np.arange(len(kinds), dtype=float)
    figure._reset("shuffled / in-order perplexity", "encoding (trained checkpoint)",
                  log=False)
    figure.plot.getAxis("bottom").setTicks([[(float(i), k) for i, k in enumerate(kinds)],
                                            []])
    figure.data, figure.labels = {}, {}
    for k, (key, title, shuffled) in enumerate(ORDER_SERIES):
        values = np.array([u.shuffled[shuffled] / u.original for u in result.uses.values()])
        _marker(figure, k, title, x + 0.08 * (k - 0.5), values, kinds, joined=False)
        figure.data[key] = values                                        # (encodings,)
    bag = pg.InfiniteLine(pos=1.0, angle=0, label="1: order unused", labelOpts={
        "position": 0.02, "color": (60, 60, 60), "anchors": [(0, 1), (0, 1)]},
        pen=style.cosmetic_pen((90, 90, 90), 1.0, QtCore.Qt.PenStyle.DashLine))
    figure.plot.addItem(bag, ignoreBounds=True)
    figure.dims, figure.coords = ("encoding",), {"encoding": kinds}
    top = float(max(np.max(v) for v in figure.data.values()))
    figure._frame((0.9, top + 0.1 * (top - 0.9)), pad=0.08)
    figure.fit_legend()
    use = next(iter(result.uses.values()))
    figure.set_title(f"Order use of the trained checkpoints: {len(kinds)} encodings, "
                     f"seed {result.seed}")
    figure.set_note(f"The last token's perplexity over {use.windows} held-out windows of "
                    f"{use.length} slots with the tokens before it shuffled (the start "
                    f"token kept), over the same in order; 1: the model reads its context "
                    f"as a bag of tokens. Ran on {result.ran_on}.")   # (the seed: in
    # the title) one paragraph: at 1024 x 700 its own line for what it ran on was cut
