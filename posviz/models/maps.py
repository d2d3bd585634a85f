"""The attention maps of one run, (L, h, m, n), kept as they pass a layer at a time.

A run's maps take L·h·m·n values: 16 MB for the built-in model at n = 512, 7 GB for
SmolLM2 (30 layers, 9 heads) at n = 2,500. ``LayerMaps`` keeps them in memory up to
``IN_MEMORY`` bytes and otherwise writes each layer to a temporary file as it passes,
reading one layer (or one head) back when asked: a long input's maps then take about
one layer of memory, and the operating system's file cache keeps the rest.
"""
from __future__ import annotations

import os
import tempfile
import threading
import weakref
from contextlib import nullcontext

import numpy as np

# Maps of one run kept in memory up to this many bytes; more go to a temporary file
IN_MEMORY = 512 << 20
# A reordered run's maps, back in the original order, kept whole up to this many bytes
# (every layer and head on screen at once); past it only the head on screen
# (analysis.symmetry.AttentionGaps)
KEEP_ALL = 256 << 20
# A layer's maps go to the temporary file in pieces of at most this many bytes, each told
# (``put``'s ``told``): 576 MB of one layer (the built-in model at 6,000 tokens) took 7.5 s
PIECE = 32 << 20
# A real model's branch outputs of one run, (2, L, n, d), kept whole up to this many
# bytes; past it only their per-token norms (2, L, n), all the views read of them
# (models.hf.backend): SmolLM2's at 2,350 tokens would take 330 MB a run
BRANCHES_WHOLE = 64 << 20
REMOVAL_TOLD = 256 * 10**6   # maps on disk told as they are removed from this size on
# A script's telling of maps on disk removed as they go (api.slow_calls.told_removal
# sets it): removal_told(nbytes) is a context around the removal; None: untold
removal_told = None
# Every LayerMaps whose maps went to a temporary file, while it lives: what a command,
# or a script's exit, removes (kept_on_disk)
_to_disk: "weakref.WeakSet[LayerMaps]" = weakref.WeakSet()


def _removed(file, nbytes: int) -> None:
    """The temporary file of maps no longer held, closed and so removed, told where a
    script wants it (removal_told): SmolLM2's 6.3 GB took 3.2 s after a script's last
    line (load 4.7)."""
    if file.closed:
        return
    with removal_told(nbytes) if removal_told is not None else nullcontext():
        file.close()


class LayerMaps:
    """(L, h, m, n) maps filled one layer at a time by ``put``, read by layer
    (``maps[l]``, (h, m, n)) or by head (``maps[l, k]``, (m, n)).

    In memory (``array`` is the whole (L, h, m, n) array) unless they would take more
    than ``in_memory`` bytes; then each read returns an array of its own, mapped from
    the file (the system's file cache, mostly) copy-on-write."""

    def __init__(self, layers: int, in_memory: int | None = None):
        self.layers = layers
        self._in_memory = IN_MEMORY if in_memory is None else in_memory
        self.array: np.ndarray | None = None      # (L, h, m, n) when in memory
        self._file = None                          # else the temporary file
        self._lock = threading.Lock()              # one reader of the file at a time
        self._filled = 0
        self.shape: tuple = ()
        self.dtype = None

    def put(self, layer: int, value, told=None) -> None:
        """Layer ``layer``'s maps (h, m, n), a tensor or an array; layers in order. Going
        to the file, ``told(head, heads)`` as each head (or PIECE of it) is written."""
        value = value.numpy() if hasattr(value, "numpy") else np.asarray(value)
        if layer != self._filled:
            raise ValueError(f"layer {layer} given after {self._filled} layers")
        if not self.shape:
            self.shape, self.dtype = (self.layers, *value.shape), value.dtype
            if value.nbytes * self.layers <= self._in_memory:
                # numpy: a large array on transparent huge pages, filled while the
                # layer is still in the cache
                self.array = np.empty(self.shape, value.dtype)
            else:
                self._file = tempfile.TemporaryFile(prefix="posviz-maps-")  # gone when closed
                weakref.finalize(self, _removed, self._file, self.nbytes)
                _to_disk.add(self)
        if self.array is not None:
            self.array[layer] = value
        else:
            for head, maps in enumerate(value):
                rows = max(1, PIECE // max(maps[:1].nbytes, 1))
                for row in range(0, len(maps), rows):
                    np.ascontiguousarray(maps[row:row + rows]).tofile(self._file)
                    if told:
                        told(head + 1, len(value))
        self._filled += 1

    @property
    def complete(self) -> bool:
        return self._filled == self.layers

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self.shape)) * self.dtype.itemsize if self.shape else 0

    def __len__(self) -> int:
        return self.layers

    def __getitem__(self, key) -> np.ndarray:
        layer, head = (key, None) if np.isscalar(key) else key
        layer = range(self.layers)[layer]                      # negative indices too
        if self.array is not None:
            return self.array[layer] if head is None else self.array[layer, head]
        if layer >= self._filled:
            raise IndexError(f"layer {layer} of {self.layers} is not recorded")
        h, m, n = self.shape[1:]
        if head is None:
            shape, first = (h, m, n), layer * h
        elif isinstance(head, slice):                          # heads next to each other
            heads = range(h)[head]
            if heads.step != 1:
                raise IndexError("heads are read from disk in a run, step 1")
            shape, first = (len(heads), m, n), layer * h + heads.start
        else:
            shape, first = (m, n), layer * h + head
        with self._lock:
            self._file.flush()
            # mapped, not read: the file cache's pages without a copy (reading cost:
            # benchmarks/README.md); copy-on-write, so the array is writable and the
            # file never changes. Unmapped when the array goes.
            mapped = np.memmap(self._file, self.dtype, "c", first * m * n *
                               self.dtype.itemsize, shape)
            self._file.seek(0, os.SEEK_END)
        return np.asarray(mapped)

    def heads(self, layer: int):
        """Layer ``layer``'s maps (h, m, n) to read a head at a time: the array in
        memory, else HeadsOf (a file-backed layer is not read whole)."""
        return self.array[layer] if self.array is not None else HeadsOf(self, layer)

    def cell(self, layer: int, head: int, row: int, col: int):
        """One value of head ``head`` of ``layer``: a hover reads it, not the map."""
        if self.array is not None:
            return self.array[layer, head, row, col]
        h, m, n = self.shape[1:]
        if not (0 <= layer < self._filled and 0 <= head < h and 0 <= row < m
                and 0 <= col < n):
            raise IndexError(f"no cell ({layer}, {head}, {row}, {col}) of {self.shape}")
        out = np.empty(1, self.dtype)
        with self._lock:
            self._file.flush()
            self._file.seek((((layer * h) + head) * m + row) * n * out.itemsize
                            + col * out.itemsize)
            self._file.readinto(memoryview(out).cast("B"))
            self._file.seek(0, os.SEEK_END)
        return out[0]

    @property
    def on_disk(self) -> int:
        """Bytes of the maps in the temporary file (0: in memory, or the file closed)."""
        return self.nbytes if self._file is not None and not self._file.closed else 0

    def close(self) -> None:
        """The temporary file closed, and so removed (a layer read after: an error)."""
        if self._file is not None:
            with self._lock:
                self._file.close()

    def __array__(self, dtype=None, copy=None):
        if self.array is None:
            raise MemoryError(f"the maps take {self.nbytes / 1e6:,.1f} MB, more than are kept "
                              "in memory: read them a layer at a time")
        return self.array if dtype is None else self.array.astype(dtype)


def kept_on_disk() -> list[LayerMaps]:
    """The maps of every run in this process still in a temporary file (the engine's
    original order's run among them), whoever holds them."""
    return [maps for maps in list(_to_disk) if maps.on_disk]


class HeadsOf:
    """One layer of file-backed LayerMaps, (h, m, n), read a head at a time."""

    def __init__(self, maps: LayerMaps, layer: int):
        self.maps, self.layer = maps, layer
        self.shape = maps.shape[1:]

    def __getitem__(self, head: int | slice) -> np.ndarray:
        return self.maps[self.layer, head]                  # (m, n), or (k, m, n) of k heads


class MapsByLayer:
    """(L, h, n, n) maps held as the L arrays (h, n, n) they were made in, not copied
    into one: a reordered run's maps put back (analysis.symmetry.AttentionGaps). Read
    by layer (``maps[l]``), head or cell (``maps[l, k, q, c]``) without a copy;
    ``np.asarray`` stacks them."""

    def __init__(self, layers: list[np.ndarray]):
        self.layers = layers
        self.shape = (len(layers), *layers[0].shape)
        self.dtype = layers[0].dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __len__(self) -> int:
        return len(self.layers)

    def __getitem__(self, key):
        layer, rest = (key[0], key[1:]) if isinstance(key, tuple) else (key, ())
        if isinstance(layer, (int, np.integer)):
            return self.layers[layer][rest]
        return np.asarray(self)[key]                       # slices of layers: a copy

    def __array__(self, dtype=None, copy=None):
        stacked = np.stack(self.layers)
        return stacked if dtype is None else stacked.astype(dtype)
