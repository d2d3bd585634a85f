"""The per-layer metrics of analysis.symmetry.compare for many orders at once, without
Traces.

A sweep reads only the four METRICS (and token_change) of each comparison, never the
aligned attention maps. Here they are computed for a chunk of B orders of one text
against its reference run from stacked tensors: hidden (B, L+1, n, d), attention
(B, L, h, n, n), orders (B, n). ``ChunkMetrics`` measures runs in slot order: slot j of
order b holds token orders[b, j], so the reference is gathered into each order's frame
(a gather from the small reference rather than from the large permuted maps), and
max |A'[j, k] - A[order j, order k]| is the same set of differences as compare's
max |A'[inv j, inv k] - A[j, k]|, cell for cell. ``AlignedChunkMetrics`` measures runs
made in the original tokens' frame (row i token i, InstrumentedTransformer.
record(orders=...)), against the reference as it stands.

``MetricsRecorder`` does the same while a batched forward runs: it reduces each layer's
hidden states and attention weights to B numbers (and B x n for token_change) as they
pass and keeps neither, so a chunk's memory is one layer's working tensors.
"""
from __future__ import annotations

from functools import cached_property
from typing import Callable

import numpy as np
import torch

from ..models.hooks import FINAL, PATTERN, RESID_POST, RESID_PRE, Recorder, block_hook
from ..models.orders import per_token
from ..models.request import Request
from ..models.trace import Trace
from .symmetry import Comparison, floor_of, reference_norms


class ReferenceTensors:
    """What the metrics need of the reference run (arrays shared with it)."""

    def __init__(self, reference: Trace):
        norms = reference_norms(reference)               # the divisors compare uses
        self.hidden = reference.hidden                                    # (L+1, n, d)
        self.attention = reference.attention                              # (L, h, n, n)
        self.total = norms.by_total                                       # (L+1,)
        self.token = norms.by_token                                       # (L+1, n)
        self.mean = norms.mean                                            # (L+1, d)
        self.mean_norm = norms.by_mean                                    # (L+1,)
        self.floor = floor_of(reference)


class ChunkMetrics:
    """The metrics of B orders (B, n) of one text, filled in a layer at a time."""

    def __init__(self, reference: ReferenceTensors, orders: np.ndarray):
        self.ref = reference
        self.orders = np.asarray(orders, dtype=np.int64)                  # (B, n)
        B, n = self.orders.shape
        L = reference.attention.shape[0]
        dtype = reference.hidden.dtype
        self.hidden_equivariance = np.zeros((B, L + 1), dtype)
        self.last_token_change = np.zeros((B, L + 1), dtype)
        self.pooled_change = np.zeros((B, L + 1), dtype)
        self.row_change = np.zeros((B, L + 1, n), dtype)    # per row: slot j (token i aligned)
        # float64 whatever the runs' precision, as compare's (NaN at layer 0)
        self.attention_equivariance = np.full((B, L + 1), np.nan)
        self._gathered: np.ndarray | None = None                          # (h, B*n*n)

    @cached_property
    def cells(self) -> np.ndarray:
        """(B*n*n,): entry (j, k) of order b's map is entry (order j, order k) of the
        reference's."""
        n = self.orders.shape[1]
        return (self.orders[:, :, None] * n + self.orders[:, None, :]).ravel()

    def hidden(self, layer: int, hidden: torch.Tensor) -> None:
        """Layer ``layer``'s hidden states (B, n, d) of the orders.

        compare's operations in numpy, one order per row where compare has one layer
        per row: the same reductions over the same values, so equal inputs give equal
        numbers, bit for bit (at a layer where the orders' runs equal the reference's to
        the last bit, say, both give the same rounding, not two different ones)."""
        ref = self.ref
        Hp = hidden.numpy()                                               # (B, n, d)
        B = Hp.shape[0]
        H = ref.hidden[layer]                                             # (n, d)
        diff = np.take(H, self.orders, axis=0)                            # (B, n, d)
        squares = np.square(np.subtract(Hp, diff, out=diff), out=diff)
        self.hidden_equivariance[:, layer] = (np.sqrt(squares.reshape(B, -1).sum(axis=1))
                                              / ref.total[layer])
        self.row_change[:, layer] = (np.sqrt(squares.sum(axis=2))
                                     / ref.token[layer][self.orders])
        self.last_token_change[:, layer] = (np.linalg.norm(Hp[:, -1] - H[-1], axis=1)
                                            / ref.token[layer, -1])
        self.pooled_change[:, layer] = (np.linalg.norm(Hp.mean(axis=1) - ref.mean[layer],
                                                       axis=1) / ref.mean_norm[layer])

    def attention(self, layer: int, maps: torch.Tensor) -> None:
        """Block ``layer``'s (0-based) attention weights (B, h, n, n) of the orders: the
        max over heads and cells of |A'[j, k] - A[order j, order k]|."""
        B, h, n, _ = maps.shape
        if maps.numel() == 0:
            self.attention_equivariance[:, layer + 1] = 0.0
            return
        if self._gathered is None or self._gathered.shape != (h, B * n * n):
            self._gathered = np.empty((h, B * n * n), self.ref.attention.dtype)
        # numpy's take from the small reference, "wrap" skipping the bounds checks (all
        # cells are in range): faster than torch's index_select (benchmarks/README.md);
        # into one buffer for every layer (a fresh one costs its page faults each time)
        np.take(self.ref.attention[layer].reshape(h, n * n), self.cells, axis=1,
                out=self._gathered, mode="wrap")                          # (h, B*n*n)
        gap = torch.from_numpy(self._gathered).view(h, B, n * n)
        gap.sub_(maps.reshape(B, h, n * n).transpose(0, 1))
        self.attention_equivariance[:, layer + 1] = gap.abs_().amax(dim=(0, 2)).numpy()

    def token_change(self) -> np.ndarray:
        """(B, L+1, n) per original token i: the change of the slot it moved to."""
        slot = self.row_change
        return per_token(np.broadcast_to(self.orders[:, None, :], slot.shape), slot)

    def comparisons(self) -> list[Comparison]:
        """One Comparison per order, as compare gives it but with attention_aligned None."""
        token = self.token_change()                                       # (B, L+1, n)
        equivariance, last, pooled, attention = (
            self.hidden_equivariance, self.last_token_change, self.pooled_change,
            self.attention_equivariance)
        return [Comparison(order=self.orders[b], hidden_equivariance=equivariance[b],
                           attention_equivariance=attention[b], last_token_change=last[b],
                           pooled_change=pooled[b], token_change=token[b],
                           attention_aligned=None, floor=self.ref.floor)
                for b in range(len(self.orders))]


class AlignedChunkMetrics(ChunkMetrics):
    """ChunkMetrics of runs already in the reference's frame (Backend.record with
    ``aligned``): row i of every order is token i, so each measure is a difference
    with the reference as it stands, taken in torch (on every core) with no gather.
    The same measures as compare's, to rounding."""

    def __init__(self, reference: ReferenceTensors, orders: np.ndarray):
        super().__init__(reference, orders)
        self._rows = np.arange(len(self.orders))                          # (B,)
        self._gap: torch.Tensor | None = None                             # (B, h, n, n)

    def hidden(self, layer: int, hidden: torch.Tensor) -> None:
        """Layer ``layer``'s hidden states (B, n, d), row i token i's: the one pass over
        all of them in torch, the rest on (B, n) or (B, d) in numpy (for so few values
        each torch call costs more than its arithmetic)."""
        ref = self.ref
        H = ref.hidden[layer]                                             # (n, d)
        squares = (hidden - torch.from_numpy(H)).square_().sum(dim=2).numpy()  # (B, n)
        self.hidden_equivariance[:, layer] = np.sqrt(squares.sum(axis=1)) / ref.total[layer]
        self.row_change[:, layer] = np.sqrt(squares) / ref.token[layer]
        # the last slot holds token orders[b, -1]; compare measures it against the
        # reference's last slot
        last = hidden.numpy()[self._rows, self.orders[:, -1]] - H[-1]      # (B, d)
        self.last_token_change[:, layer] = np.linalg.norm(last, axis=1) / ref.token[layer, -1]
        pooled = hidden.mean(dim=1).numpy() - ref.mean[layer]              # (B, d)
        self.pooled_change[:, layer] = np.linalg.norm(pooled, axis=1) / ref.mean_norm[layer]

    def attention(self, layer: int, maps: torch.Tensor) -> None:
        """Block ``layer``'s attention weights (B, h, n, n), rows and columns token i's:
        the max over heads and cells of |A'[i, k] - A[i, k]|."""
        B = maps.shape[0]
        if maps.numel() == 0:
            self.attention_equivariance[:, layer + 1] = 0.0
            return
        if self._gap is None or self._gap.shape != maps.shape:
            self._gap = torch.empty(maps.shape, dtype=maps.dtype)   # one for every layer
        gap = torch.sub(maps, torch.from_numpy(self.ref.attention[layer]), out=self._gap)
        self.attention_equivariance[:, layer + 1] = gap.abs_().view(B, -1).amax(dim=1).numpy()

    def token_change(self) -> np.ndarray:
        return self.row_change                           # row i is token i already


class MetricsRecorder(Recorder):
    """A Recorder for a batched forward of ``orders`` (B, n) that measures each layer's
    hidden states (B, n, d) and attention weights (B, h, n, n) against the reference as
    they pass and keeps neither; ``comparisons`` then gives one Comparison per order.
    hidden[0] is block 0's input, hidden[l] block l's output, and a recorded final norm
    stands for the last (as in hooks.trace_from)."""

    def __init__(self, reference: ReferenceTensors, orders: np.ndarray, n_layers: int,
                 should_stop: Callable[[], bool] | None = None,
                 aligned: bool = False):
        super().__init__(should_stop)
        self.metrics = (AlignedChunkMetrics if aligned else ChunkMetrics)(reference, orders)
        self._maps = {block_hook(l, PATTERN): l for l in range(n_layers)}
        self._hidden = {block_hook(0, RESID_PRE): 0, FINAL: n_layers,
                        **{block_hook(l, RESID_POST): l + 1 for l in range(n_layers)}}

    def record(self, name: str, value: torch.Tensor) -> None:
        if name in self._maps:
            self.metrics.attention(self._maps[name], value)
        elif name in self._hidden:
            self.metrics.hidden(self._hidden[name], value)
        super().record(name, value)              # asks should_stop
        self.values.pop(name, None)

    def comparisons(self) -> list[Comparison]:
        return self.metrics.comparisons()


def batch_compare(reference: Trace, hidden: np.ndarray, attention: np.ndarray,
                  orders) -> list[Comparison]:
    """compare(reference, run_b, orders[b]) for each b, without aligned maps, from the
    runs' stacked hidden (B, L+1, n, d) and attention (B, L, h, n, n)."""
    metrics = ChunkMetrics(ReferenceTensors(reference), np.asarray(orders))
    for layer in range(hidden.shape[1]):
        metrics.hidden(layer, torch.from_numpy(hidden[:, layer]))
    for layer in range(attention.shape[1]):
        metrics.attention(layer, torch.from_numpy(attention[:, layer]))
    return metrics.comparisons()


def compare_batch(backend, seq, orders, position_ids, reference: Trace,
                  should_stop=None, aligned: bool | None = None) -> list[Comparison]:
    """compare(reference, run of each order) for B orders (B, n) at position ids (B, n)
    in one forward of a backend with ``capabilities.batched``, in the original tokens'
    frame when ``aligned`` (default: when it can; Engine.aligned), without the aligned
    maps: B Comparisons."""
    orders = np.asarray(orders)
    aligned = backend.capabilities.aligned if aligned is None else aligned
    n_layers = reference.n_layers
    recorder = MetricsRecorder(ReferenceTensors(reference), orders, n_layers, should_stop,
                               aligned=aligned)
    backend.record(seq, Request(orders, position_ids, aligned=aligned), recorder)
    return recorder.comparisons()
