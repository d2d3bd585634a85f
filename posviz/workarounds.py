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
  (posviz.core.scheduler.trim_heap).
- ``malloc-thresholds``: keep freed memory in glibc's heap for the next forward instead
  of fresh pages each time (posviz.core.scheduler.keep_heap_pages).
- ``heatmap-coloured-pixels``: paint heatmaps from pixels coloured on the worker
  (posviz.gui.plots.workarounds).
- ``token-axis``: token axes write their own labels, turned when they do not fit
  (posviz.gui.plots.workarounds).
- ``svg-flatten-strokes``: rewrite exported SVG so scaled strokes stay thin
  (posviz.gui.plots.workarounds).
- ``hf-offline``: set Hugging Face's offline variables before loading a model
  (posviz.core.hf.workarounds).
- ``hf-quiet-gguf``: no tqdm bar on the terminal while transformers de-quantizes a GGUF
  file (posviz.core.hf.workarounds).
- ``hf-load-progress``: count the tensors transformers reads and stop between two when
  a load is cancelled (posviz.core.hf.workarounds).
"""
from __future__ import annotations

import os

OFF_VARIABLE = "POSVIZ_WORKAROUNDS_OFF"


def enabled(name: str) -> bool:
    """Is the workaround ``name`` on? (all are, unless the environment turns them off)"""
    off = {part.strip() for part in os.environ.get(OFF_VARIABLE, "").split(",")}
    return not ({"all", name} & off)
