"""What one forward pass produced, layer by layer.

Names follow the papers: n tokens, d model width, h heads, L layers.
Layer 0 is the input to the first block (token embeddings plus any additive
positional encoding); layer l in 1..L is the residual stream after block l.
"""
from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Trace:
    """Arrays recorded during one forward pass over one ordering of the tokens.

    Row i of every array belongs to sequence slot i (the i-th token as fed to the model).
    """

    tokens: tuple[str, ...]          # (n,) the token strings in sequence order
    position_ids: np.ndarray         # (n,) int, the position id each slot was given
    embeddings: np.ndarray           # (n, d) token embeddings, before positions
    encodings: np.ndarray | None     # (n, d) additive positional encoding, or None
    hidden: np.ndarray               # (L+1, n, d) residual stream; [0] is the block input
    attention: np.ndarray | None     # (L, h, n, n) softmax weights, rows = queries: an
                                     #   array, a models.maps.LayerMaps (a long input's),
                                     #   or None when they went elsewhere as computed
    scores: np.ndarray | None = None     # (L, h, n, n) pre-softmax scores (masked: -inf)
    attn_out: np.ndarray | None = None   # (L, n, d) attention-branch output per block
    mlp_out: np.ndarray | None = None    # (L, n, d) MLP-branch output per block
    attn_norm: np.ndarray | None = None  # (L, n) per-token L2 norm of attn_out: what the
    mlp_norm: np.ndarray | None = None   #   views read, kept where the outputs are not
    extras: dict = field(default_factory=dict)  # backend-specific notes (e.g. model name)
    past: object = None                  # a causal run's keys and values per layer, kept for
                                         #   later runs of its suffixes (analysis.prefix)

    @property
    def n_layers(self) -> int:
        return self.hidden.shape[0] - 1

    @property
    def n_heads(self) -> int:
        return self.attention.shape[1]

    @property
    def n_tokens(self) -> int:
        return self.hidden.shape[1]

    @property
    def d_model(self) -> int:
        return self.hidden.shape[2]


def in_slot_order(aligned: Trace, order: np.ndarray) -> Trace:
    """The Trace of a run of tokens[order] from the same run recorded in the original
    tokens' order (row i token i, as Backend.run(aligned=True) gives it): row j, and column j
    of every map, become slot j's. A gather of every map: done only when asked for."""
    def rows(array, axis):
        return None if array is None else np.take(array, order, axis=axis)

    def maps(array):                                   # (L, h, n, n): rows and columns
        return None if array is None else rows(rows(array, 2), 3)

    return Trace(tokens=tuple(aligned.tokens[i] for i in order),
                 position_ids=aligned.position_ids[order],
                 embeddings=rows(aligned.embeddings, 0), encodings=rows(aligned.encodings, 0),
                 hidden=rows(aligned.hidden, 1), attention=maps(aligned.attention),
                 scores=maps(aligned.scores), attn_out=rows(aligned.attn_out, 1),
                 mlp_out=rows(aligned.mlp_out, 1), attn_norm=rows(aligned.attn_norm, 1),
                 mlp_norm=rows(aligned.mlp_norm, 1), extras=dict(aligned.extras))


class PerTrace:
    """A value computed once per Trace object, for the last few traces (held weakly):
    the engine hands the same reference Trace to every reorder. Arguments after the
    trace go to ``make`` and are not part of the key."""

    def __init__(self, make, size: int = 4):
        self._make, self._size = make, size
        self._items: list[tuple[weakref.ref, object]] = []
        self._lock = threading.Lock()

    def __call__(self, trace: Trace, *args):
        with self._lock:
            for ref, value in self._items:
                if ref() is trace:
                    return value
        value = self._make(trace, *args)
        with self._lock:
            alive = [(r, v) for r, v in self._items if r() is not None]
            self._items = alive[-(self._size - 1):] + [(weakref.ref(trace), value)]
        return value


def layer_label(layer: int) -> str:
    """A Trace's layer 0..L as the layer axes write it: 0, the input to block 1, is "in"."""
    return "in" if layer == 0 else str(layer)


def layer_name(layer: int) -> str:
    """A Trace's layer 0..L in words: 0 is the input to block 1."""
    return "the input to block 1" if layer == 0 else f"layer {layer}"


def layer_runs(layers) -> list[tuple[int, int]]:
    """Layer indices as runs of consecutive ones, (first, last) each: [0, 1, 2, 4] ->
    [(0, 2), (4, 4)]."""
    runs: list[list[int]] = []
    for layer in sorted(int(k) for k in layers):
        if runs and layer == runs[-1][1] + 1:
            runs[-1][1] = layer
        else:
            runs.append([layer, layer])
    return [(first, last) for first, last in runs]


def layer_spans(layers) -> list[str]:
    """Layer indices as the axes write their runs: [0, 1, 2, 4] -> ["in–2", "4"]."""
    return [layer_label(a) if a == b else f"{layer_label(a)}–{layer_label(b)}"
            for a, b in layer_runs(layers)]


def and_joined(words) -> str:
    """Words as a sentence lists them: "a", "a and b", "a, b and c" ("" for none)."""
    words = list(words)
    return " and ".join(filter(None, (", ".join(words[:-1]), words[-1]))) if words else ""
