"""Positional encodings: the additive table, its position-to-position similarity, and
the score or bias as a function of relative distance.

The numbers come from the encoding modules of posviz.core.encodings, rebuilt from the
built-in model's configuration (``trace.extras["config"]``); a real model is shown with
what its Trace holds, and the figure says what is not available.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np
import pyqtgraph as pg
import torch

from posviz.core.encodings import TITLES, apply_rope, make_encoding

from . import style
from .attention import _HeatmapPlot
from .base import Figure

WHERE = {"rope": "rotates queries and keys inside attention",
         "alibi": "adds a distance penalty to the attention scores",
         "t5": "adds a learned bias per distance bucket to the attention scores"}


# Short names for the profile's vertical axis (the title gives the full quantity).
AXIS_NAMES = {"sinusoidal": "cosine", "rope": "score q·k / d_head",
              "alibi": "bias added to the score", "t5": "bias added to the score"}


def cosine_similarity(table: np.ndarray) -> np.ndarray:
    """(n, d) -> (n, n) cosine similarity between the rows (0 for a zero row)."""
    norms = np.linalg.norm(table, axis=1, keepdims=True)                  # (n, 1)
    unit = table / np.where(norms > 0, norms, 1)
    return unit @ unit.T


def _built_in_config(trace) -> dict | None:
    if trace.extras.get("model") != "built-in":
        return None
    config = trace.extras.get("config")
    return dict(config) if isinstance(config, dict) else None


def pe_kind(trace) -> str | None:
    """The positional-encoding kind of the model that made this trace, if known."""
    config = _built_in_config(trace)
    if config is not None:
        return config.get("pe")
    for key in ("pe", "position_encoding", "position_embedding_type"):
        value = trace.extras.get(key)
        if isinstance(value, str):
            return value
    return None


@lru_cache(maxsize=16)
def _relative_profile(kind: str, d_model: int, heads: int, scale: float, seed: int,
                      max_len: int, causal: bool, reach: int):
    """The encoding's effect against relative distance Δ = key − query in -reach..reach.

    Returns (distances (D,), values (rows, D), row names, quantity) or None.
    """
    encoding = make_encoding(kind, d_model=d_model, n_heads=heads, scale=scale, seed=seed,
                             max_len=max_len)
    distances = np.arange(-reach, reach + 1)                              # (D,)
    positions = torch.arange(2 * reach + 1)                               # query at `reach`
    with torch.no_grad():
        if kind == "sinusoidal":
            table = encoding.absolute(positions).numpy()                  # (D, d)
            values = cosine_similarity(table)[reach]                      # (D,)
            return distances, values[None], ["all positions"], "cosine of PE(p) and PE(p+Δ)"
        if kind == "rope":
            d_head = encoding.d_head
            ones = torch.ones(1, 2 * reach + 1, d_head, dtype=torch.float64)  # (1, D, d_head)
            rotated = apply_rope(ones, encoding.angles(positions))[0]       # (D, d_head)
            values = (rotated @ rotated[reach]).numpy() / d_head            # (D,)
            return (distances, values[None], ["all heads"],
                    "q·k / d_head for q = k = 1 (RoFormer §3.4.3)")
        if kind in ("alibi", "t5"):
            bias = encoding.bias(positions, causal)[:, reach].numpy().copy()  # (h, D)
            if causal:
                bias[:, distances > 0] = np.nan          # future keys are masked anyway
            return (distances, bias, [f"head {i}" for i in range(heads)],
                    "bias added to the score")
    return None


def relative_profile(config: dict, reach: int):
    """Public entry: see _relative_profile; ``config`` is a ModelConfig.to_dict()."""
    return _relative_profile(config["pe"], config["d_model"], config["heads"],
                             float(config["pe_scale"]), config["seed"], config["max_len"],
                             config["mask"] == "causal", int(reach))


def _no_additive_message(kind: str | None, built_in: bool) -> str:
    if kind in (None, "none"):
        if built_in:
            return ("No positional encoding (NoPE): nothing is added to the token "
                    "embeddings, so only a causal mask can tell positions apart.")
        return "This model records no additive positional encoding."
    title = TITLES.get(kind, kind)
    return (f"No additive encoding: this model uses {title}, which "
            f"{WHERE.get(kind, 'acts inside attention')}. See the relative-distance profile.")


class EncodingFigure(Figure):
    """The additive encoding added to each position: positions × dimensions."""

    name = "encoding"
    title = "Positional encoding"
    dims = ("position", "dimension")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.map = _HeatmapPlot(self.canvas, "", style.DIVERGING, (-1, 1),
                                left="position", bottom="dimension", col=0)
        self.map.plot.getAxis("bottom").rotate = False     # numbers read best upright
        self.bar = style.color_bar((-1, 1), style.DIVERGING, "value")
        self.bar.setImageItem(self.map.image)
        self.canvas.addItem(self.bar, row=0, col=1)
        self._key = None

    def update_from(self, ev, layer: int, head: int) -> None:
        trace = ev.reference
        table = trace.encodings                                               # (n, d) or None
        if table is None:
            self.data, self.coords, self._key = {}, {}, None
            self.set_title("Positional encoding added to the token embeddings")
            self.show_message(_no_additive_message(pe_kind(trace),
                                                   _built_in_config(trace) is not None))
            return
        key = (trace.position_ids.tobytes(), table.shape)
        if key == self._key:
            return                                # positions unchanged: nothing to redraw
        self._key = key
        self.show_canvas()
        top = float(np.abs(table).max()) or 1.0
        levels = (-top, top)
        self.bar.setLevels(levels)
        self.map.set_image(table, levels)
        ids = trace.position_ids.tolist()
        self.map.plot.getAxis("left").set_tokens([str(p) for p in ids])
        d = table.shape[1]
        self.map.plot.getAxis("bottom").set_tokens([str(j) for j in range(d)])
        self.data = {"encoding": table.copy()}
        self.coords = {"position": ids}
        kind = pe_kind(trace)
        self.set_title(f"Positional encoding added to the token embeddings: "
                       f"{TITLES.get(kind, kind or 'recorded')} "
                       f"({len(ids)} positions × {d} dimensions)")


class SimilarityFigure(Figure):
    """Cosine similarity between the encodings of every pair of positions."""

    name = "encoding_similarity"
    title = "Position similarity"
    dims = ("position", "position_b")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.map = _HeatmapPlot(self.canvas, "", style.DIVERGING, (-1, 1),
                                left="position", bottom="position", col=0)
        self.map.plot.getAxis("bottom").rotate = False
        self.bar = style.color_bar((-1, 1), style.DIVERGING, "cosine")
        self.bar.setImageItem(self.map.image)
        self.canvas.addItem(self.bar, row=0, col=1)
        self._key = None

    def update_from(self, ev, layer: int, head: int) -> None:
        trace = ev.reference
        table = trace.encodings
        if table is None:
            self.data, self.coords, self._key = {}, {}, None
            self.set_title("Similarity between positions")
            self.show_message(_no_additive_message(pe_kind(trace),
                                                   _built_in_config(trace) is not None))
            return
        key = (trace.position_ids.tobytes(), table.shape)
        if key == self._key:
            return
        self._key = key
        self.show_canvas()
        similarity = cosine_similarity(table)                                 # (n, n)
        self.map.set_image(similarity, (-1, 1))
        ticks = [str(p) for p in trace.position_ids.tolist()]
        self.map.set_ticks(ticks, ticks)
        self.data = {"cosine": similarity}
        self.coords = {"position": trace.position_ids.tolist(),
                       "position_b": trace.position_ids.tolist()}
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

    def update_from(self, ev, layer: int, head: int) -> None:
        trace = ev.reference
        config = _built_in_config(trace)
        kind = pe_kind(trace)
        reach = max(trace.n_tokens - 1, 16)
        key = (tuple(sorted(config.items())) if config else kind, reach)
        if key == self._key:
            return
        self._key = key
        self.data, self.coords = {}, {}
        if config is None:
            self.set_title("Relative-distance profile")
            self.show_message(
                "The relative-distance profile is computed for the built-in model, whose "
                "encoding modules posviz knows. "
                + (f"This model uses {TITLES.get(kind, kind)}." if kind else
                   "This model does not say which positional encoding it uses."))
            return
        profile = relative_profile(config, reach) if kind not in ("none", "learned") else None
        if profile is None:
            self.set_title("Relative-distance profile")
            self.show_message(
                "Learned absolute positions have no fixed relation between p and p + Δ: "
                "see the similarity matrix." if kind == "learned" else
                "No positional encoding (NoPE): nothing depends on the distance between "
                "tokens.")
            return
        distances, values, rows, quantity = profile
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
        self.plot.setLabel("left", AXIS_NAMES.get(kind, "value"), color="#202020")
        shown = distances[np.isfinite(values).any(axis=0)]     # causal: keys ahead are masked
        self.plot.setXRange(float(shown.min()), float(shown.max()), padding=0.02)
        self.plot.enableAutoRange(axis="y")
        self.data = {"value": values.copy()}
        self.coords = {"head": rows, "distance": distances.tolist()}
        self.set_title(f"{TITLES.get(kind, kind)}: {quantity} against relative distance Δ")
