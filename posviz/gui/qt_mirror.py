"""pyqtgraph's mirror of Qt filled as it is used (workaround "pyqtgraph-lazy-qt").

``pyqtgraph.Qt`` keeps its own modules ``QtCore``, ``QtGui`` and ``QtWidgets`` and
copies into them every name of PySide6's (``_copy_attrs``: ``dir`` and ``getattr`` of
each). PySide6 creates a class only when it is first asked for, so that copy creates
all of them: 0.08-0.14 s of the interpreter's time at start-up, for the few hundred
classes posviz and pyqtgraph never use.

``import_pyqtgraph_lazily`` imports pyqtgraph with its three mirror modules made
beforehand, each with a module ``__getattr__`` that fetches a name from PySide6 the
first time it is asked for and keeps it (so a second access is an ordinary module
attribute), while PySide6's modules list only the classes already made. Every name
reads as before (``pyqtgraph.Qt.QtCore.QPointF is PySide6.QtCore.QPointF``); ``dir``
of a mirror lists all of PySide6's. Nothing changes when pyqtgraph is already
imported, when its version or PySide6's is not one this was written for, when their
layout is not the expected one, or with ``POSVIZ_WORKAROUNDS_OFF=pyqtgraph-lazy-qt``.
"""
from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

from .. import workarounds

NAME = "pyqtgraph-lazy-qt"
MIRRORED = ("QtCore", "QtGui", "QtWidgets")
PYQTGRAPH_VERSIONS = ((0, 13), (0, 15))     # low <= (major, minor) < high: seen on 0.14.0
PYSIDE_VERSIONS = ((6, 6), (6, 11))


def _version(text: str) -> tuple:
    parts = []
    for part in text.split(".")[:2]:
        digits = "".join(c for c in part if c.isdigit())
        parts.append(int(digits) if digits else 0)
    return tuple(parts)


def written_for(pyqtgraph_version: str, pyside_version) -> bool:
    low, high = PYQTGRAPH_VERSIONS
    pyside_low, pyside_high = PYSIDE_VERSIONS
    return (low <= _version(pyqtgraph_version) < high
            and pyside_low <= tuple(pyside_version[:2]) < pyside_high)


def _mirror(name: str, folder: Path, source):
    """pyqtgraph.Qt.<name>, made from its own (empty) package file, reading through."""
    spec = importlib.util.spec_from_file_location(
        f"pyqtgraph.Qt.{name}", folder / name / "__init__.py",
        submodule_search_locations=[str(folder / name)])
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def __getattr__(attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        value = getattr(source, attr)        # AttributeError as PySide6 says it
        setattr(module, attr, value)
        return value

    def __dir__():
        return sorted(set(module.__dict__) | set(dir(source)))

    module.__getattr__ = __getattr__
    module.__dir__ = __dir__
    return module


def import_pyqtgraph_lazily():
    """Import pyqtgraph (after PySide6) with its Qt mirror filled on use; the module.
    Falls back to a plain import whenever the workaround does not apply."""
    if "pyqtgraph" in sys.modules or not workarounds.enabled(NAME):
        return importlib.import_module("pyqtgraph")
    try:
        from importlib import metadata
        import PySide6
        spec = importlib.util.find_spec("pyqtgraph")
        version = metadata.version("pyqtgraph")
    except Exception:
        return importlib.import_module("pyqtgraph")
    folder = Path(spec.origin).parent / "Qt" if spec and spec.origin else None
    if (folder is None or not written_for(version, getattr(PySide6, "__version_info__", ()))
            or not all((folder / name / "__init__.py").is_file() for name in MIRRORED)):
        return importlib.import_module("pyqtgraph")
    sources = {name: importlib.import_module(f"PySide6.{name}") for name in MIRRORED}
    if not all(callable(source.__dict__.get("__dir__")) for source in sources.values()):
        return importlib.import_module("pyqtgraph")
    made = {name: _mirror(name, folder, source) for name, source in sources.items()}
    listed = {name: source.__dict__["__dir__"] for name, source in sources.items()}
    for name, source in sources.items():     # pyqtgraph copies only the classes made
        source.__dir__ = (lambda source=source: [key for key in source.__dict__
                                                 if key != "__dir__"])
        sys.modules[f"pyqtgraph.Qt.{name}"] = made[name]
    try:
        return importlib.import_module("pyqtgraph")
    except BaseException:
        for name in MIRRORED:
            if sys.modules.get(f"pyqtgraph.Qt.{name}") is made[name]:
                del sys.modules[f"pyqtgraph.Qt.{name}"]
        raise
    finally:
        for name, source in sources.items():
            source.__dir__ = listed[name]
