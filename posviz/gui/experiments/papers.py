"""How the Experiments figure draws each paper check: the curves a paper's claim is read
from, its verdict in the title, and what it tests in the note."""
from __future__ import annotations

import numpy as np
import pyqtgraph as pg  # noqa: I001
from PySide6 import QtCore, QtGui  # before pyqtgraph, so it binds PySide6

from ..plots import style
from ..plots.log_ticks import ZERO_MARGIN, on_zero_row
from ..plots.wheel import frame
from ..plots.axis_titles import fit_words, whole_words
from .slopes import show_slopes
from posviz.analysis.experiments.papers import TITLES, trained_too
from posviz.analysis.experiments.probe import FEATURE_NAMES, READS, ProbeLayer
from posviz.models.encodings import LearnedEncoding, NoPositions

CATEGORY_GAP = 8                   # pixels between two categories' names


def _short(value) -> str:
    """Numbers to 3 significant digits, nested dicts included."""
    if isinstance(value, dict):
        return ", ".join(f"{k.replace('_', ' ')} {_short(v)}" for k, v in value.items())
    return f"{value:.3g}" if isinstance(value, float) else str(value)


RAN_CHARS = 100         # a longer "Ran on ..." keeps its head under the title
TITLE_CHARS = 90        # a longer title keeps its authors (the claim: the Paper box's)


def ran_line(ran_on: str | None) -> tuple[str, bool]:
    """The subtitle of a check that ran on ``ran_on``, and whether its details go to the
    note: a long one keeps what it names before its first ":" ("the shipped trained
    checkpoints in checkpoints/ (none, ..., t5)")."""
    if not ran_on:
        return "", False
    whole = f"Ran on {ran_on}"
    head = whole.split(": ", 1)[0]
    if len(whole) <= RAN_CHARS or head == whole:
        return whole, False
    return head, True                      # the note's first line: the whole


def draw_paper(figure, check) -> None:
    """Draw a paper check (analysis.experiments.claim.PaperCheck) on the Experiments
    figure: each paper's own plot, its verdict in the title and its terms in the note."""
    values, said, read = check.values, "", ""
    if check.name == "press2022":
        said = _show_lengths(figure, values)
    elif check.name == "haviv2022" and check.weights == "trained":
        # the MLP probe per layer: the model without positions against one with learned
        # positions and the order-blind control (the values hold every checkpoint's rows)
        rows = values["mlp"]
        runs = {"NoPE, MLP ": (rows[NoPositions.kind], "#d55e00")}
        if LearnedEncoding.kind in rows:
            runs["learned, MLP "] = (rows[LearnedEncoding.kind], "#0072b2")
        controls = iter(("#808000", "#6a3d9a", "#c06a9c", "#000000"))   # each its own
        for name in rows:
            if name.endswith("(control)"):       # "none-500 (control)"
                runs[f"control {name.split()[0]}, MLP "] = (rows[name], next(controls, "#000000"))
        figure._probes("", runs)
        drawn = {NoPositions.kind, LearnedEncoding.kind}
        others = [name for name in rows if name not in drawn and
                  not name.endswith("(control)")]
        # the caption names every checkpoint that ran: those not drawn, said
        read = probes_read(runs) + (f" Probed too, not drawn: {', '.join(others)}"
                                    f" (MLP), and every linear probe." if others else "")
    elif check.name == "haviv2022":
        # the verdict's features are quadratic: named so (as the probe's control names
        # them) beside a linear probe
        both = f"({FEATURE_NAMES['quadratic']}) " if "linear" in values else ""
        runs = {f"causal {both}": (values["causal"], "#d55e00"),
                f"bidirectional {both}": (values["bidirectional"], "#0072b2")}
        # all four probes, each its own hue of the house palette (the linear
        # bidirectional one was a second blue, beside the quadratic one's)
        linear = {"causal": "#009e73", "bidirectional": "#c06a9c"}
        for mask, rows in values.get("linear", {}).items():
            runs[f"{mask} (linear) "] = (rows, linear[mask])
        figure._probes("", runs)
        read = probes_read(runs)
    elif check.name == "chi2023":
        spread = np.array(values["variance_by_position"])
        figure._reset("variance of the attention output", "position", log=False)
        figure._curve(np.arange(spread.size), spread, "#d55e00", "block 1, causal, no PE")
        figure._frame()
        figure.data, figure.dims = {"variance": spread}, ("position",)
        figure.coords, figure.labels = {"position": list(range(spread.size))}, {}
    elif check.name == "alibi-slopes":
        said = show_slopes(figure, values)
    elif check.name == "rope-decay":
        _show_decay(figure, values)
    elif check.name == "sinha2022" and check.weights == "trained":
        _show_trained_shift(figure, values)
    elif check.name == "sinha2022":
        _show_shift(figure, values)
    else:
        figure._reset("", "", log=False)
        figure.show_message("\n\n".join(f"{k.replace('_', ' ')}: {_short(v)}"
                                        for k, v in values.items()))
        figure.data, figure.dims, figure.coords, figure.labels = {}, (), {}, {}
    # what ran, under the title as every experiment names its model: one line, its
    # details in the note (at 1024 a three-line subtitle under a two-line title left
    # the trained Haviv plot ~170 px tall); the title the authors and the verdict (the
    # claim is the Paper box's, and the note's citation)
    ran, details = ran_line(check.ran_on)
    figure.subtitle = ran
    title = TITLES.get(check.name, check.name)
    verdict = (f" ({check.weights} weights): "
               f"{'holds' if check.holds else 'does NOT hold'} here")
    if len(title + verdict) > TITLE_CHARS:                 # a line at 1024 pixels
        title = title.split(" — ")[0]
    figure.set_title(title + verdict)
    # the trained check, as this window runs it (the command line names its flag)
    trained = ' (the Weights choice "trained" runs it on trained models)' if \
        trained_too(check) else ""
    # what the curves show first (a probe's reading; a note of 1024 pixels shows its
    # first lines, the rest in the tooltip), then what ran
    figure.set_note((f"{read}\n" if read else "")
                    + (f"Ran on {check.ran_on}\n" if details else "")
                    + f"{check.citation}\nPaper: {check.reports}\nTests: {check.tests}"
                    f"{trained}\n"
                    f"posviz: {check.measures}" + (f"\nDrawn: {said}" if said else ""))


def probes_read(runs: dict) -> str:
    """What probes' curves show (``runs``: legend prefix -> (rows, colour)): each one's
    worst error as a multiple of chance after the embeddings, and whether it reads
    position there (below READS × chance at every layer, as the verdict asks)."""
    parts = []
    for prefix, (rows, _) in runs.items():
        layers = [ProbeLayer(**row) for row in rows]
        after = layers[1:] or layers             # layer 0: the embeddings themselves
        worst = max(row.mae / row.chance_mae for row in after)
        reads = "position read" if all(row.reads_position for row in after) else "not read"
        parts.append(f"{prefix.strip().rstrip(',')} {worst:.2f} ({reads})")
    return (f"Worst error after the embeddings, × chance (below {READS:g}: position read "
            f"at every layer): " + "; ".join(parts) + ".")


def _show_lengths(figure, values: dict) -> str:
    """press2022: held-out perplexity against the evaluation length, one curve per
    encoding, the unigram baseline dashed; what a lone point means, to say. The lengths
    double (128, 256, 512): on a log2 axis each doubling is one step, so the straight
    segments between the measured points (marked) read as growth per doubling; on a
    linear axis a steady growth per doubling bent at every point like a smooth curve."""
    lengths = np.array(values["lengths"], dtype=float)
    x = np.log2(lengths)                                                    # (k,)
    figure._reset("held-out perplexity (log)", "evaluation length (tokens, log scale)",
                  log=True)
    figure.data, figure.dims, figure.labels = {}, ("length",), {}
    said = []
    for k, (kind, row) in enumerate(values["perplexity"].items()):
        ppl = np.array([np.nan if row[str(int(n))] is None else row[str(int(n))]
                        for n in lengths])
        colour = style.CURVE_COLOURS[k % len(style.CURVE_COLOURS)]
        defined = ~np.isnan(ppl)
        label = kind
        if kind in values.get("refused", {}):   # a learned table has no rows past its own
            label = _refused(kind, values, lengths[defined])
            said.append(label)
        # straight segments between the measured points only, smooth (not in stairs)
        pen = style.cosmetic_pen(colour, 2.0)
        figure.plot.addItem(pg.PlotCurveItem(x[defined], np.log10(ppl[defined]), pen=pen,
                                             antialias=True))
        figure.plot.addItem(pg.ScatterPlotItem(x[defined], np.log10(ppl[defined]), size=9,
                                               brush=colour, pen=pg.mkPen("w", width=1)))
        figure.legend.addItem(style.legend_sample(pen=pen, symbol="o", symbolSize=9,
                                                  symbolBrush=colour, symbolPen="w"), label)
        figure.data[kind] = ppl
    unigram = values["unigram_perplexity"]
    figure._curve(x, np.log10(np.full(lengths.size, unigram)), "#505050", "unigram", 1.5,
                  dash=True)
    figure.plot.addItem(pg.InfiniteLine(
        pos=np.log2(values["train_length"]), angle=90, label="training length",
        pen=style.cosmetic_pen((120, 120, 120), 1, QtCore.Qt.PenStyle.DotLine),
        labelOpts={"position": 0.5, "color": (60, 60, 60)}))
    figure.plot.getAxis("bottom").setTicks([[(v, str(int(n))) for v, n in zip(x, lengths)],
                                            []])
    figure.data["unigram"] = np.full(lengths.size, unigram)
    shown = np.concatenate([v[~np.isnan(v)] for v in figure.data.values()])
    pad = 0.08 * (x[-1] - x[0] or 1)
    frame(figure.plot, (x[0] - pad, x[-1] + pad),
          (np.log10(shown.min() / 1.25), np.log10(shown.max() * 1.25)))
    figure.coords = {"length": lengths.astype(int).tolist()}
    return "; ".join(said)


def _refused(kind: str, values: dict, shown: np.ndarray) -> str:
    """The legend of an encoding measured at some lengths only: why the others are not."""
    limit = values.get("table_length", {}).get(kind)
    only = " and ".join(str(int(n)) for n in shown) or "none"
    past = f"no positions past {limit}" if limit else "longer inputs refused"
    return f"{kind}: {past}, so only length {only}"


def _dots(figure, x, y, colour, label: str, symbol="o", size=9) -> None:
    """Markers (a measurement at separate points), with their legend entry."""
    figure.plot.addItem(pg.ScatterPlotItem(np.asarray(x, float), np.asarray(y, float),
                                           size=size, symbol=symbol, brush=colour,
                                           pen=pg.mkPen("w", width=1)))
    figure.legend.addItem(style.legend_sample(pen=None, symbol=symbol, symbolBrush=colour,
                                              symbolPen="w", symbolSize=size), label)


def _categories(figure, names, y_range, plot=None, shorts=None) -> None:
    """A tick a category, each with half a column either side, its name wrapped to the
    column's width at every drawing (a narrow window, an export), so that no name is cut
    at an edge, hidden, or runs into the next; on ``plot`` (default: the figure's).
    ``shorts``: the names in fewer words, used when a word of a name is wider than its
    column (their words are shortened only if they too are). Panels of the same names
    write them alike, at the narrowest one's column: one panel wrote "smollm." where
    the other wrote "smollm2"."""
    plot = plot or figure.plot
    axis = plot.getAxis("bottom")
    axis.setTicks(None)
    metrics = QtGui.QFontMetricsF(axis.style["tickFont"] or axis.font())
    shared = figure.__dict__.setdefault("_category_columns", {})   # {axis: (names, px)}
    for other in [a for a in shared if a.scene() is None or a is axis]:
        del shared[other]                  # a former drawing's panels
    shared[axis] = (tuple(names), 0.0)     # pixels a category has, at the last drawing

    def alike() -> list:
        return [a for a, (drawn, _) in shared.items()
                if drawn == tuple(names) and a.scene() is not None]

    def values(low, high, pixels):
        column = pixels / max(high - low, 1e-9)
        was = min(shared[a][1] for a in alike())
        shared[axis] = (tuple(names), column)
        if min(shared[a][1] for a in alike()) != was:
            for other in alike():          # the narrowest column changed: redrawn
                if other is not axis:
                    other.picture = None
                    other.update()
        return [(1.0, [k for k in range(len(names)) if low <= k <= high])]

    axis.tickValues = values
    def strings(ticks, scale, spacing):
        drawn = [shared[a][1] for a in alike() if shared[a][1] > 0] or [0.0]
        room = min(drawn) - CATEGORY_GAP
        chosen = names if shorts is None or all(
            whole_words(names[int(k)], metrics, room) for k in ticks) else shorts
        lines = [fit_words(chosen[int(k)], metrics, room) for k in ticks]
        # pyqtgraph makes room for 0.8 of a label's height: a blank last line keeps
        # wrapped lines off the axis title
        return [f"{text}\n" if "\n" in text else text for text in lines]

    axis.tickStrings = strings
    axis.picture = None
    axis.update()
    frame(plot, (-0.5, len(names) - 0.5), y_range)


def _show_decay(figure, values: dict) -> None:
    """rope-decay: |score| / d_head against the distance of query and key: the aligned
    pair under RoFormer's bound, and the Gaussian pairs' mean, which does not fall."""
    aligned = np.array(values["aligned_by_distance"])                       # (n,)
    distance = np.arange(aligned.size)
    figure._reset("|score| / d_head (log scale)", "relative distance (positions)", log=True)
    curves = {"bound": (values["bound_by_distance"], "#505050",
                        "RoFormer's bound for the aligned pair", True),
              "aligned": (aligned, "#d55e00", "aligned pair (q = k = all ones)", False),
              "gaussian_mean": (values["random_by_distance"], "#0072b2",
                                "mean of 256 Gaussian pairs (seed 0)", False)}
    figure.data = {}
    low = 10 ** np.floor(np.log10(np.min(values["random_by_distance"])) - 1)
    for key, (curve, colour, label, dashed) in curves.items():
        curve = np.maximum(np.asarray(curve, float), low)    # a cosine's zero: drawn low
        figure._curve(distance, np.log10(curve), colour, label, 1.5 if dashed else 1.2,
                      dash=dashed)
        figure.data[key] = np.asarray(curve)
    figure._frame()
    figure.dims, figure.coords, figure.labels = ("distance",), {
        "distance": distance.tolist()}, {}


def _show_shift(figure, values: dict) -> None:
    """sinha2022 (random weights): what shifting every position id changes, per
    encoding: the last layer and the scores, against the noise floor."""
    from posviz.views.shown import zero_level
    kinds = [k for k, v in values.items() if isinstance(v, dict)]
    changes = {"output_change": ("last layer's change", "o", "#d55e00"),
               "score_change": ("pre-softmax scores' change", "s", "#0072b2")}
    floor = values["noise_floor"]
    figure._reset("relative change (log)", "encoding (built-in model, random weights)",
                  log=True)
    drawn = {key: np.array([values[k][key] for k in kinds]) for key in changes}
    level = zero_level(list(drawn.values()), floor)
    row = figure._floor_band(floor, level)
    for size, (key, (label, symbol, colour)) in zip((12, 8), changes.items()):
        _dots(figure, np.arange(len(kinds)), on_zero_row(drawn[key], level, row), colour,
              label, symbol, size)
    figure._floor_line(floor)
    top = max(1.0, float(max(v.max() for v in drawn.values())))
    _categories(figure, kinds, (row - ZERO_MARGIN, np.ceil(np.log10(top) + 0.1)))
    figure.data = drawn
    # the names are the column's values (labels hold a token's text beside its index)
    figure.dims, figure.coords, figure.labels = ("encoding",), {"encoding": kinds}, {}


def _side_plot(figure, left: str, bottom: str, short_left: str) -> pg.PlotItem:
    """A second plot beside the figure's own, for a quantity in another unit (the
    figure's next drawing removes it); ``short_left``: its left title where short."""
    from ..plots.log_ticks import one_notation
    side = pg.PlotItem()
    side.hideButtons()
    side.setLogMode(x=False, y=True)
    one_notation(side.getAxis("left"))
    style.style_plot(side, "", left, bottom, short_left=short_left)
    side.getViewBox().enableAutoRange(enable=False)
    figure.canvas.addItem(side, row=0, col=1)
    figure.side = side
    _legend_across(figure, 2)               # under both plots: its width is shared
    layout = figure.canvas.ci.layout
    for column in (0, 1):
        layout.setColumnStretchFactor(column, 1)
    return side


def _legend_across(figure, columns: int) -> None:
    """The legend in its row under ``columns`` plots."""
    figure.canvas.ci.removeItem(figure.legend)
    figure.canvas.addItem(figure.legend, row=1, col=0, rowspan=1, colspan=columns)


def _log_span(values, *more) -> tuple[float, float]:
    """A log axis's range (log10) holding the positive ``values`` and ``more``."""
    shown = np.concatenate([np.asarray(values, float)[np.asarray(values, float) > 0],
                            np.asarray(more, float)])
    return np.floor(np.log10(shown.min())) - 0.5, np.ceil(np.log10(shown.max())) + 0.1


def _show_trained_shift(figure, values: dict) -> None:
    """sinha2022 (trained weights): per model, on the left the last layer's relative
    change when every position id shifts; on the right, the output's change against
    the verdict's two thresholds: a next-token KL in nats where the model predicts,
    MiniLM's 1 − cosine of its pooled embedding, each its own marker (a ratio, nats and
    a cosine never share an axis unnamed)."""
    from posviz.analysis.experiments.pretrained import MOVED, STILL, output_change
    models = [k for k, v in values.items() if isinstance(v, dict)]
    relative = set(values.get("relative", ()))
    names = [f"{m} ({'relative' if m in relative else 'absolute'})" for m in models]
    layer = np.array([values[m]["last_layer_change"] for m in models])
    output = np.array([output_change(values[m]) for m in models])
    predicts = np.array(["next_token_kl_mean" in values[m] for m in models])
    at = np.arange(len(models))
    figure._reset("last layer's change (ratio, log)", "model (trained weights)", log=True)
    _dots(figure, at[layer > 0], np.log10(layer[layer > 0]), "#d55e00",
          "last layer's change (relative)", "o", 11)
    # "sinusoidal (abs.)": the axis says the weights are trained
    shorts = [f"{m.removeprefix('trained ')} ({'rel.' if m in relative else 'abs.'})"
              for m in models]
    _categories(figure, names, _log_span(layer, 1.0), shorts=shorts)
    side = _side_plot(figure, "output's change (log)", "model (trained weights)",
                      "output (log)")
    for shown, label, symbol, colour in (
            (predicts, "output's change: next-token KL (nats)", "s", "#0072b2"),
            (~predicts, "output's change: 1 − cosine of the pooled embedding (MiniLM)",
             "d", "#009e73")):
        chosen = shown & (output > 0)
        if chosen.any():
            side.addItem(pg.ScatterPlotItem(at[chosen].astype(float),
                                            np.log10(output[chosen]), size=11,
                                            symbol=symbol, brush=colour,
                                            pen=pg.mkPen("w", width=1)))
            figure.legend.addItem(style.legend_sample(
                pen=None, symbol=symbol, symbolBrush=colour, symbolPen="w", symbolSize=11),
                label)
    for value, text, short, dash in (
            (MOVED, f"moved: output above {MOVED:g}", f"moved: > {MOVED:g}",
             QtCore.Qt.PenStyle.DashLine),
            (STILL, f"unchanged: output below {STILL:g}", f"unchanged: < {STILL:g}",
             QtCore.Qt.PenStyle.DotLine)):
        line = pg.InfiniteLine(pos=np.log10(value), angle=0, label=text,
                               pen=style.cosmetic_pen((90, 90, 90), 1.5, dash),
                               labelOpts={"position": 0.02, "color": (60, 60, 60),
                                          "anchors": [(0, 1), (0, 1)]})
        side.addItem(line)
        # above the line, in a stretch no marker covers, whole or short (figure._settle)
        figure.labelled.append((line, side, (text, short)))
    _categories(figure, names, _log_span(output, STILL, MOVED, 1.0), side, shorts)
    figure.data = {"last_layer_change": layer, "output_change": output}
    figure.dims, figure.coords, figure.labels = ("model",), {"model": models}, {}
