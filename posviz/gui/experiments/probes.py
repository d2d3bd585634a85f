"""How the Experiments figure draws position probes: each run's held-out error per layer
against chance, and a note that says what the errors show (probe.verdict) before the R²."""
from __future__ import annotations

import re

import numpy as np

from ..plots.layer_axis import LAYER_AXIS, set_layer_ticks

CHANCE_Z = 1            # chance lines over the probes' errors: under them, they hid
CHANCE_DASH = (2, 5)    # dash, gap (pen widths): sparse, so an error at chance shows


def draw_probes(figure, title: str, runs: dict, said: str = "") -> None:
    """One or more probes (``runs``: prefix -> (rows, colour), a row a layer) on one
    fresh plot of ``figure`` (an ExperimentFigure); a chance line the runs share is drawn
    once, so none hides under another, and over the errors (under them it was hidden)
    in sparse dashes (a bidirectional probe at 1.01 × chance vanished under a denser
    line); the note: ``said``, then R² per layer."""
    figure._reset("mean absolute error (positions)", LAYER_AXIS,
                  log=False)
    figure.data, figure.dims, figure.coords, figure.labels = {}, ("layer",), {}, {}
    chances = [np.array([r["chance_mae"] for r in rows]) for rows, _ in runs.values()]
    shared = all(c.shape == chances[0].shape and np.allclose(c, chances[0])
                 for c in chances)
    notes, top = [], 0.0
    for prefix, (rows, colour) in runs.items():
        layers = np.array([r["layer"] for r in rows])
        mae = np.array([r["mae"] for r in rows])
        chance = np.array([r["chance_mae"] for r in rows])
        # several probes: named by what differs (the axis says it is their error; "...
        # probe error" four times set the legend in one column at 1024, under the fold)
        figure._curve(layers, mae, colour, f"{prefix}probe error".strip() if len(runs) == 1
                      else prefix.strip().rstrip(","))
        if not shared:
            figure._curve(layers, chance, colour, f"{prefix}chance (the mean)".strip(),
                          1.5, dash=CHANCE_DASH).setZValue(CHANCE_Z)
        top = max(top, float(np.nanmax(np.r_[mae, chance])))
        key = "_".join(re.findall(r"\w+", prefix))          # causal_with_squares
        figure.data.update({f"{key}_r2".lstrip("_"): np.array([r["r2"] for r in rows]),
                            f"{key}_mae".lstrip("_"): mae,
                            f"{key}_chance_mae".lstrip("_"): chance})
        figure.coords = {"layer": layers.tolist()}
        notes.append(f"{prefix}".strip() + " R² per layer: "
                     + ", ".join(f"{r['r2']:.2f}" for r in rows))
    if shared:
        both = {1: "", 2: ", the same for both"}.get(len(runs), ", the same for all")
        figure._curve(figure.coords["layer"], chances[0], "#505050",
                      f"chance (the mean){both}", 1.5,
                      dash=CHANCE_DASH).setZValue(CHANCE_Z)
    figure._frame((0.0, 1.1 * top), len(figure.coords["layer"]))
    set_layer_ticks(figure.plot.getAxis("bottom"), len(figure.coords["layer"]))
    figure.set_title(title)
    # what the errors show first: a short window's note is one elided line
    r2 = "; ".join(n.strip() for n in notes) + "."
    figure.set_note(f"{said}\n{r2}" if said else r2)
