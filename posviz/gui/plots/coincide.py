"""Where two curves of a figure are one line: equal to a relative tolerance (a property
of the numbers, never of the figure's size) at some layers, in words, so the note can
say so and the earlier curve can be drawn where the later cannot hide it."""
from __future__ import annotations

import numpy as np

from posviz.models.trace import and_joined, layer_spans

EQUAL = 1e-6            # relative: equal as drawn
WIDE = 6.0              # pixels: an earlier curve drawn this wide shows around a later one
HALO_ALPHA = 100        # ... and this light, so that the later one reads on it


def same_at(a, b, rtol: float = EQUAL) -> np.ndarray:
    """(L+1,) bool: the layers where curves ``a`` and ``b`` (L+1,) are both defined and
    equal to ``rtol`` (both 0 included)."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    with np.errstate(invalid="ignore"):
        return np.isfinite(a) & np.isfinite(b) & np.isclose(a, b, rtol=rtol, atol=0.0)


def shares_a_line(a, b, rtol: float = EQUAL) -> bool:
    """Curves ``a`` and ``b`` (L+1,) are equal (to ``rtol``) at two neighbouring layers:
    the segment between them drawn later hides the earlier one's."""
    same = same_at(a, b, rtol)
    return bool((same[:-1] & same[1:]).any())


def layer_words(layers) -> str:
    """Layers by index (0 = in) as "layer 2", "layers 1–4" or "layers in, 2–3"."""
    layers = list(layers)
    return ("layer " if len(layers) == 1 else "layers ") + ", ".join(layer_spans(layers))


def coinciding(curves: dict[str, np.ndarray],
               rtol: float = EQUAL) -> list[tuple[tuple[str, ...], list[int]]]:
    """Groups of ``curves`` (name -> (L+1,)) within ``rtol`` of each other at some layers:
    (names in the dict's order, the layers where that group is a largest one whose every
    pair is within ``rtol``), first layer first. Within a tolerance closeness is not
    transitive (a near b and b near c, a not near c): each such pair is a group of its
    own, and a pair inside a larger group at a layer is not named again there."""
    names = list(curves)
    groups: dict[tuple[str, ...], list[int]] = {}
    for layer in range(len(next(iter(curves.values()), ()))):
        values = np.array([curves[name][layer] for name in names], float)     # (k,)
        for group in _largest_close_sets(values, rtol):
            groups.setdefault(tuple(names[i] for i in group), []).append(layer)
    return sorted(groups.items(), key=lambda item: item[1][0])


def _largest_close_sets(values: np.ndarray, rtol: float) -> list[tuple[int, ...]]:
    """The largest sets (of 2 or more indices into ``values`` (k,), ascending) whose every
    pair is within ``rtol`` of each other, either way round; NaN is close to nothing."""
    row, column = values[:, None], values[None, :]
    close = same_at(row, column, rtol) & same_at(column, row, rtol)           # (k, k)
    np.fill_diagonal(close, False)
    found: list[frozenset[int]] = []

    def grow(chosen: frozenset[int], candidates: frozenset[int], seen: frozenset[int]):
        if not candidates and not seen:              # Bron-Kerbosch: a largest set
            if len(chosen) > 1:
                found.append(chosen)
            return
        for i in sorted(candidates):
            near = frozenset(np.flatnonzero(close[i]).tolist())
            grow(chosen | {i}, candidates & near, seen & near)
            candidates, seen = candidates - {i}, seen | {i}

    grow(frozenset(), frozenset(range(len(values))), frozenset())
    return sorted(tuple(sorted(group)) for group in found)


def coinciding_words(groups) -> str:
    """"none and RoPE coincide at layers 1–4; …" for ``coinciding``'s groups, or ""."""
    return "; ".join(f"{and_joined(group)} coincide at {layer_words(layers)}"
                     for group, layers in groups)
