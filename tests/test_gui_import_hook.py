"""PySide6's import hook answered by reading bytes: the same answers, nothing kept."""
import inspect
import subprocess
import sys

import pytest

PySide6 = pytest.importorskip("PySide6.QtCore")

from posviz.gui.import_hook import mentions_pyside  # noqa: E402


def reference(module) -> bool:
    """What PySide6's own check answers (shibokensupport.feature._mod_uses_pyside)."""
    try:
        return "PySide6" in inspect.getsource(module)
    except (TypeError, OSError, SyntaxError):
        return False


@pytest.mark.parametrize("name", ["posviz.gui.window", "posviz.gui.collector",
                                  "posviz.core.symmetry", "pyqtgraph.Qt", "numpy",
                                  "json", "PySide6.QtCore", "math"])
def test_the_same_answer_as_pyside(name):
    module = pytest.importorskip(name)
    asked = []

    def fallback(m):
        asked.append(m)
        return reference(m)

    assert mentions_pyside(module, fallback) == reference(module)
    has_source = str(getattr(module, "__file__", "")).endswith(".py")
    assert asked == ([] if has_source else [module])


def test_modules_of_qt_are_told_from_the_others():
    import posviz.core.symmetry
    import posviz.gui.window
    assert mentions_pyside(posviz.gui.window, reference)
    assert not mentions_pyside(posviz.core.symmetry, reference)


PROBE = """
import linecache, sys
import PySide6.QtCore
import shibokensupport.feature as feature
from posviz.gui.import_hook import answer_pyside_hook_cheaply
if sys.argv[1] == "cheap":
    assert answer_pyside_hook_cheaply()
    assert not answer_pyside_hook_cheaply()      # once is enough
import xml.dom.minidom                         # xml.dom imports: the hook checks it
checked = sys.modules["xml.dom"]
print(feature.pyside_feature_dict.get(checked.__name__), checked.__file__ in linecache.cache)
"""


@pytest.mark.parametrize("mode, kept", [("original", True), ("cheap", False)])
def test_new_imports_are_checked_without_keeping_their_source(mode, kept):
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True,
                         text=True, check=True).stdout.split()
    assert out == ["-1", str(kept)]     # -1: "does not use PySide6", both ways
