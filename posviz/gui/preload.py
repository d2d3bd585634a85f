"""torch's shared libraries loaded without holding Python's lock (workaround
"torch-preload").

``import torch`` begins by loading ``libtorch_cpu.so`` (with ``libc10`` and ``libgomp``):
about 0.2 s of the dynamic loader reading, relocating and running its static
initialisers, all of it while ``import`` holds the interpreter's lock (and so does
``ctypes.CDLL`` on Python 3.11), so the GUI thread cannot run a line of Python
meanwhile. ``preload_torch_libraries`` asks the C library's ``dlopen`` for the same
files through a ctypes *function call*, which lets go of the lock for its duration:
the GUI thread builds the plots meanwhile, and torch's own import later finds the
libraries loaded (the loader only counts one more user).

Only what torch would load anyway is loaded, in torch's order and modes:
``libtorch_global_deps`` with ``RTLD_GLOBAL`` (torch's ``_load_global_deps``), then
``libtorch_cpu`` with ``RTLD_NOW`` (as a dependency of ``torch._C``, loaded with
Python's flags). ``libtorch_cpu`` does not link the Python library, so its
initialisers cannot touch the interpreter. Nothing is done on a system other than
Linux, when torch is not installed, when its files are not where a wheel puts them,
or when ``POSVIZ_WORKAROUNDS_OFF=torch-preload`` (see posviz.workarounds).

Run it while no other thread needs to load a library: the loader takes its own lock for
the whole 0.2 s, and a ``dlopen`` elsewhere (an import of an extension module, a Qt
plug-in) waits for it.
"""
from __future__ import annotations

import ctypes
import importlib.util
import os
import sys
from pathlib import Path

from .. import workarounds

NAME = "torch-preload"

# (file in torch/lib, dlopen mode): what torch's import loads first, in its order.
LIBRARIES = (("libtorch_global_deps.so", os.RTLD_GLOBAL | os.RTLD_NOW),
             ("libtorch_cpu.so", os.RTLD_LOCAL | os.RTLD_NOW))


def torch_library_dir() -> Path | None:
    """torch/lib of the installed torch, found without importing it; None if absent."""
    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "lib"
    return folder if folder.is_dir() else None


def preload_torch_libraries() -> list[str]:
    """dlopen torch's first libraries without the interpreter's lock (call on a worker,
    before ``import torch``); the files loaded, [] when nothing was done."""
    if (not workarounds.enabled(NAME) or not sys.platform.startswith("linux")
            or "torch" in sys.modules):
        return []
    folder = torch_library_dir()
    if folder is None or not all((folder / name).is_file() for name, _ in LIBRARIES):
        return []
    try:
        dlopen = ctypes.CDLL(None).dlopen       # a foreign call: releases the lock
    except (OSError, AttributeError):
        return []
    dlopen.restype = ctypes.c_void_p
    dlopen.argtypes = (ctypes.c_char_p, ctypes.c_int)
    loaded = []
    for name, mode in LIBRARIES:
        if not dlopen(os.fsencode(folder / name), mode):   # never closed: torch keeps it
            break               # torch's own import will say what is wrong
        loaded.append(name)
    return loaded
