"""posviz's start-up, and the switches of the workarounds of other libraries it keeps.

Entry points: ``quiet_threads()`` before numpy and torch load, then ``keep_heap_pages()``
(a command) or ``window(app)``, ``before_torch()`` on the thread about to import torch.
Each workaround (SWITCHES; three in models.hf's and gui.plots' ``workarounds``, the fast
path one-paint-pass in gui.plots.repaint) checks its versions, pays by a measurement
(benchmarks/README.md) and turns off to compare: ``POSVIZ_WORKAROUNDS_OFF=name,...``/``all``."""
from __future__ import annotations

import contextlib
import ctypes
import functools
import gc
import os
import platform
import sys
import time

OFF_VARIABLE = "POSVIZ_WORKAROUNDS_OFF"
SWITCHES = ("pyside-import-hook", "torch-preload", "gui-thread-collector", "malloc-thresholds",
            "malloc-trim", "hf-gguf-progress", "heatmap-coloured-pixels", "quick-exit",
            "one-paint-pass")
PYSIDE = ((6, 6), (6, 11))      # low <= (major, minor) < high, whose private check it knows
PYTHONS = ((3, 10), (3, 14))    # generational collectors (3.14's is incremental)


def enabled(name: str) -> bool:
    """Is the workaround ``name`` on? (all are, unless the environment turns them off)"""
    off = {part.strip() for part in os.environ.get(OFF_VARIABLE, "").split(",")}
    return not ({"all", name} & off)


def quiet_threads(command: bool = False) -> None:
    """numpy's BLAS on one thread; a ``command``'s idle torch threads asleep (set unless set)."""
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    if command:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def window(app) -> None:
    """The window's process starts (``app``: its QApplication), before its modules load."""
    keep_heap_pages()
    answer_pyside_hook()
    _collect_in_gui_thread(app)


# -- pyside-import-hook: PySide6's __feature__ hook keeps each later module's source for good.
def answer_pyside_hook() -> bool:
    """Replace the hook's private check (PySide6 imported); True if done now."""
    feature = sys.modules.get("shibokensupport.feature")
    original = getattr(feature, "_mod_uses_pyside", None)
    version = getattr(sys.modules.get("PySide6"), "__version_info__", ())
    if (not enabled("pyside-import-hook") or original is None or hasattr(original, "cheap")
            or not PYSIDE[0] <= tuple(version[:2]) < PYSIDE[1]):
        return False
    check = functools.partial(mentions_pyside, fallback=original)
    check.cheap = True
    feature._mod_uses_pyside = check
    return True


def mentions_pyside(module, fallback) -> bool:
    """Does ``module``'s .py file contain "PySide6"? ``fallback(module)`` if it has none."""
    path = getattr(module, "__file__", None)
    if isinstance(path, str) and path.endswith(".py"):
        with contextlib.suppress(OSError), open(path, "rb") as source:
            return b"PySide6" in source.read()
    return fallback(module)


# -- torch-preload: ``import torch`` loads these holding Python's lock; dlopen by ctypes lets go.
TORCH_LIBRARIES = (("libtorch_global_deps.so", os.RTLD_GLOBAL | os.RTLD_NOW),
                   ("libtorch_cpu.so", os.RTLD_LOCAL | os.RTLD_NOW))


def before_torch() -> list[str]:
    """torch's first libraries loaded without Python's lock (Linux; no other thread loading
    one meanwhile): their names."""
    from importlib.util import find_spec

    if not enabled("torch-preload") or not sys.platform.startswith("linux") \
            or "torch" in sys.modules or find_spec("torch") is None:
        return []
    folder = os.path.join(find_spec("torch").submodule_search_locations[0], "lib")
    dlopen = ctypes.CDLL(None).dlopen
    dlopen.restype, dlopen.argtypes = ctypes.c_void_p, (ctypes.c_char_p, ctypes.c_int)
    loaded = []
    for name, mode in TORCH_LIBRARIES:
        if not dlopen(os.fsencode(os.path.join(folder, name)), mode):
            break                               # torch's own import will say what is wrong
        loaded.append(name)
    return loaded


# -- gui-thread-collector: Qt objects freed on a worker can deadlock against the GUI thread.
IDLE_S = 2.0
_collector = {"timer": None, "started": False, "activity": 0.0}
_threshold = gc.get_threshold()


def _collect_in_gui_thread(app, interval_ms: int = 100) -> bool:
    """Collect on a timer of ``app`` (often: each tick is short); True if installed now."""
    if (_collector["timer"] is not None or not enabled("gui-thread-collector")
            or not PYTHONS[0] <= sys.version_info[:2] < PYTHONS[1]):
        return False
    from PySide6.QtCore import QTimer

    gc.disable()
    timer = _collector["timer"] = QTimer(app)
    timer.timeout.connect(collect_due)
    timer.start(interval_ms)
    return True


def collect_due() -> int | None:
    """Collect as Python would, the oldest generation only in a quiet window: which, or None."""
    young, middle, old = gc.get_count()
    if young <= _threshold[0] or not _collector["started"]:
        return None
    gc.collect(0)
    if middle <= _threshold[1]:
        return 0
    gc.collect(1)
    if old <= _threshold[2] or time.monotonic() - _collector["activity"] <= IDLE_S:
        return 1
    gc.collect(2)
    return 2


def note_activity() -> None:
    """A request of the window. The first ends start-up: what exists then is left out of
    all collections (gc.freeze), and collecting begins."""
    if _collector["timer"] is not None and not _collector["started"]:
        gc.freeze()
        _collector["started"] = True
    _collector["activity"] = time.monotonic()


# -- malloc-thresholds: a forward's same-sized tensors page-fault once, not at each forward.
TRIM_FROM = 256                 # tokens: from here on an evaluation holds hundreds of MB
TRIM_EACH_LAYER_FROM = 1024     # tokens: a long run's freed maps go back after each layer
M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3              # mallopt's parameters (malloc.h)


@functools.cache
def _glibc(function: str):
    """A function of glibc >= 2.8, or None elsewhere (musl, macOS, Windows)."""
    libc, version = platform.libc_ver()
    if sys.platform.startswith("linux") and libc == "glibc" \
            and tuple(map(int, version.split(".")[:2])) >= (2, 8):
        return getattr(ctypes.CDLL("libc.so.6"), function, None)
    return None


def keep_heap_pages(long: bool = False) -> bool:
    """Set malloc-thresholds (a ``long`` forward's blocks from 1 MB on mapped); True if set."""
    mallopt = _glibc("mallopt") if enabled("malloc-thresholds") else None
    return bool(mallopt and mallopt(M_MMAP_THRESHOLD, (1 if long else 32) << 20)
                and mallopt(M_TRIM_THRESHOLD, 64 << 20))


def trim_heap(n_tokens: int) -> bool:
    """Trim the heap once ``n_tokens``' evaluation is gone (off the GUI thread); True if it ran."""
    trim = _glibc("malloc_trim") if n_tokens >= TRIM_FROM and enabled("malloc-trim") else None
    if trim is not None:
        trim(0)
    return trim is not None
