"""Where two curves of a figure are one on screen: the layers they share, in words, so
the note can say so and the earlier curve can be drawn where the later cannot hide it."""
from __future__ import annotations

import numpy as np

EQUAL = 1e-6            # relative: equal as drawn (a pixel is about 1e-3 of an axis)
WIDE = 6.0              # pixels: an earlier curve drawn this wide shows around a later one
HALO_ALPHA = 100        # ... and this light, so that the later one reads on it


def same_at(a, b) -> np.ndarray:
    """(L+1,) bool: the layers where curves ``a`` and ``b`` (L+1,) are both defined and
    equal (both 0 included)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    with np.errstate(invalid="ignore"):
        return np.isfinite(a) & np.isfinite(b) & np.isclose(a, b, rtol=EQUAL, atol=0.0)


def layer_words(layers) -> str:
    """Layers by index (0 = in) as "layer 2", "layers 1–4" or "layers in, 2–3"."""
    layers = sorted(int(k) for k in layers)
    runs: list[list[int]] = []
    for k in layers:
        if runs and k == runs[-1][-1] + 1:
            runs[-1].append(k)
        else:
            runs.append([k])
    name = {0: "in"}

    def span(run):
        first, last = name.get(run[0], str(run[0])), name.get(run[-1], str(run[-1]))
        return first if len(run) == 1 else f"{first}–{last}"
    return ("layer " if len(layers) == 1 else "layers ") + ", ".join(map(span, runs))
