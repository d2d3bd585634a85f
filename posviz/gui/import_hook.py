"""PySide6's import hook, answered without ``inspect`` (workaround "pyside-import-hook").

Once ``PySide6.QtCore`` is imported, every module imported afterwards (torch's thousand,
pyqtgraph's, transformers') passes through PySide6's ``__feature__`` hook. The hook asks
whether the module's source mentions "PySide6", so that ``from __feature__ import
snake_case`` can apply to it (``_mod_uses_pyside`` in ``shibokensupport.feature``), and
it asks with ``inspect.getsource``, which looks the module up among all of
``sys.modules`` and keeps every source it reads in ``linecache`` for good. For the
imports of posviz's start-up that is 0.17 s of the critical path and 35 MB of source
text in memory; 110 MB once transformers is imported for a pretrained model.

``answer_pyside_hook_cheaply`` puts in a function that asks the same question by reading
the file's bytes: 0.04 s, nothing kept. Modules without a ``.py`` file, or whose file
cannot be opened, get the original's answer. Nothing changes if PySide6 drops the hook,
if its version is outside ``PYSIDE_VERSIONS``, or if the workaround is turned off
(``POSVIZ_WORKAROUNDS_OFF=pyside-import-hook``, see posviz.workarounds).

``past_pyside_hook`` goes one step further for the imports of libraries that never use
PySide6 (torch, on the compute worker at start-up): they skip the hook altogether.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager

from .. import workarounds

NAME = "pyside-import-hook"

# The PySide6 versions whose private ``_mod_uses_pyside(module) -> bool`` this replaces:
# the range pyproject.toml asks for, seen on 6.10.3. The function is private, so on any
# other version PySide6's own check is left alone rather than guessed at.
PYSIDE_VERSIONS = ((6, 6), (6, 11))          # low <= (major, minor) < high


def written_for(version) -> bool:
    """Is a PySide6 ``version`` tuple (6, 10, 3, ...) one this workaround knows?"""
    low, high = PYSIDE_VERSIONS
    return low <= tuple(version[:2]) < high


def mentions_pyside(module, fallback) -> bool:
    """Does ``module``'s source file contain "PySide6"? ``fallback(module)`` answers for
    modules that have no source file of their own."""
    path = getattr(module, "__file__", None)
    if not isinstance(path, str) or not path.endswith(".py"):
        return fallback(module)
    try:
        with open(path, "rb") as source:
            return b"PySide6" in source.read()
    except OSError:                 # not a plain file (a zip archive's, say)
        return fallback(module)


def answer_pyside_hook_cheaply() -> bool:
    """Replace the hook's source check (call after importing PySide6); True if done now,
    False if already done, switched off, or PySide6 is not a version it was written for."""
    if not workarounds.enabled(NAME):
        return False
    pyside = sys.modules.get("PySide6")
    feature = sys.modules.get("shibokensupport.feature")
    if pyside is None or not written_for(getattr(pyside, "__version_info__", ())):
        return False
    original = getattr(feature, "_mod_uses_pyside", None)
    if original is None or getattr(original, "cheap", False):
        return False

    def check(module) -> bool:
        return mentions_pyside(module, original)

    check.cheap = True
    feature._mod_uses_pyside = check
    return True


@contextmanager
def past_pyside_hook():
    """``with past_pyside_hook(): import torch``: imports made meanwhile (in any
    thread) call Python's own ``__import__``, which PySide6 keeps as
    ``builtins.__orig_import__``, instead of its hook. The hook's only work for them
    would be to file each new module as one that does not use ``__feature__``, and a
    module left out is treated exactly so (any import of it afterwards files it).
    torch's ~1400 modules: about 0.05 s of the interpreter's time at start-up.
    Nothing changes when switched off, on a PySide6 it was not written for, or when
    another hook has replaced PySide6's."""
    import builtins

    hook = builtins.__import__
    original = getattr(builtins, "__orig_import__", None)
    pyside = sys.modules.get("PySide6")
    if (not workarounds.enabled(NAME) or original is None or pyside is None
            or getattr(hook, "__name__", "") != "__feature_import__"
            or not written_for(getattr(pyside, "__version_info__", ()))):
        yield False
        return
    builtins.__import__ = original
    try:
        yield True
    finally:
        if builtins.__import__ is original:       # nobody else changed it meanwhile
            builtins.__import__ = hook
