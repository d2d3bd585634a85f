"""Switches for posviz's workarounds of other libraries' behaviour, in one place.

Each workaround lives in one named function beside the code it serves, says why it
exists, checks the version it was written against, and asks ``enabled(NAME)`` first, so
any of them can be turned off to compare: ``POSVIZ_WORKAROUNDS_OFF=name,name`` (or
``all``) in the environment. This module imports nothing heavy and never Qt.

Names in use, and where each lives:

- ``pyside-import-hook``: answer PySide6's ``__feature__`` import hook by reading bytes,
  and import torch and transformers past it (posviz.gui.import_hook).
- ``torch-preload``: load torch's libraries without Python's lock at start-up
  (posviz.gui.preload).
- ``pyqtgraph-lazy-qt``: pyqtgraph's mirror of Qt's classes filled as they are used,
  not all at its import (posviz.gui.qt_mirror).
- ``gui-thread-collector``: collect garbage on the GUI thread only (posviz.gui.collector).
- ``malloc-trim``: give freed heap pages back to the system after large evaluations
  (trim_heap, below).
- ``malloc-thresholds``: keep freed memory in glibc's heap for the next forward instead
  of fresh pages each time (keep_heap_pages, below).
- ``heatmap-coloured-pixels``: paint heatmaps from pixels coloured on the worker
  (posviz.gui.plots.workarounds).
- ``token-axis``: token axes write their own labels, turned when they do not fit
  (posviz.gui.plots.workarounds).
- ``svg-flatten-strokes``: rewrite exported SVG so scaled strokes stay thin
  (posviz.gui.plots.workarounds).
- ``hf-quiet-gguf``: no tqdm bar on the terminal while transformers de-quantizes a GGUF
  file (posviz.models.hf.workarounds).
- ``hf-load-progress``: count the tensors transformers reads and stop between two when
  a load is cancelled (posviz.models.hf.workarounds).
"""
from __future__ import annotations

import ctypes
import functools
import os
import platform
import sys

OFF_VARIABLE = "POSVIZ_WORKAROUNDS_OFF"


def enabled(name: str) -> bool:
    """Is the workaround ``name`` on? (all are, unless the environment turns them off)"""
    off = {part.strip() for part in os.environ.get(OFF_VARIABLE, "").split(",")}
    return not ({"all", name} & off)


# -- giving memory back ---------------------------------------------------------------
TRIM_FROM = 256         # tokens: from here on an evaluation holds hundreds of MB
# tokens: from here on a layer's freed maps are given back before the next layer
# (SmolLM2 at 2,350 tokens kept ~30 MB a layer of holes in the heap, 0.7 GB a run)
TRIM_EACH_LAYER_FROM = 1024
GLIBC_TRIMS_ALL = (2, 8)  # glibc 2.8 on: malloc_trim frees pages inside the heap too


def trim_heap(n_tokens: int) -> bool:
    """Workaround ``malloc-trim``: ask glibc to give freed heap pages back to the system.

    After a large evaluation is replaced, glibc keeps much of the memory freed with the
    old one in its heap instead of returning it, so at n >= TRIM_FROM the process
    stays hundreds of MB larger than it needs to be. ``malloc_trim(0)`` returns it. Linux with glibc >= 2.8 only (not musl, macOS or
    Windows); takes milliseconds, so call it off the GUI thread. True if it ran.
    """
    if n_tokens < TRIM_FROM or not enabled("malloc-trim"):
        return False
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


@functools.cache
def _malloc_trim():
    """glibc's malloc_trim, or None where there is no such function."""
    return _glibc("malloc_trim")


def _glibc(function: str):
    """A function of glibc (>= 2.8), or None elsewhere (musl, macOS, Windows)."""
    if not sys.platform.startswith("linux"):
        return None
    libc, version = platform.libc_ver()
    try:
        if libc != "glibc" or tuple(int(p) for p in version.split(".")[:2]) < GLIBC_TRIMS_ALL:
            return None
        return getattr(ctypes.CDLL("libc.so.6"), function)
    except (OSError, AttributeError, ValueError):
        return None


# mallopt's parameters (malloc.h) and the values posviz sets
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 32 << 20      # the largest glibc takes on 64-bit systems
TRIM_THRESHOLD = 64 << 20


def keep_heap_pages() -> bool:
    """Workaround ``malloc-thresholds``: let glibc keep freed memory for the next forward.

    By default glibc gives each block of more than 128 kB its own fresh pages (mmap) and
    returns freed memory at the top of its heap at once, so every forward pays page
    faults again for its activations and recorded maps, which are the same sizes each
    time: the built-in model's forward at n = 512 took 23-30 ms instead of 13, MiniLM's
    recorded maps as long to copy as to compute. Blocks up to MMAP_THRESHOLD now come from
    the heap, and up to TRIM_THRESHOLD of free memory stays there (trim_heap still gives
    it back once the window has been quiet after a large evaluation). Call once at
    start; True if it ran.
    """
    if not enabled("malloc-thresholds"):
        return False
    mallopt = _glibc("mallopt")
    if mallopt is None:
        return False
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD)
                and mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD))
