"""PySide6's import hook answered by reading bytes: the same answers, nothing kept."""
import inspect
import os
import subprocess
import sys

import pytest

PySide6 = pytest.importorskip("PySide6.QtCore")

from posviz import boot  # noqa: E402
from posviz.boot import answer_pyside_hook, mentions_pyside  # noqa: E402

NAME = "pyside-import-hook"


def written_for(version) -> bool:
    low, high = boot.PYSIDE
    return low <= tuple(version[:2]) < high


def reference(module) -> bool:
    """What PySide6's own check answers (shibokensupport.feature._mod_uses_pyside)."""
    try:
        return "PySide6" in inspect.getsource(module)
    except (TypeError, OSError, SyntaxError):
        return False


@pytest.mark.parametrize("name", ["posviz.gui.window", "posviz.gui.controller",
                                  "posviz.analysis.symmetry", "pyqtgraph.Qt", "numpy",
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
    import posviz.analysis.symmetry
    import posviz.gui.window
    assert mentions_pyside(posviz.gui.window, reference)
    assert not mentions_pyside(posviz.analysis.symmetry, reference)


PROBE = """
import linecache, os, sys
import PySide6.QtCore
import shibokensupport.feature as feature
from posviz.boot import answer_pyside_hook
if sys.argv[1] == "cheap":
    assert answer_pyside_hook()
    assert not answer_pyside_hook()              # once is enough
if sys.argv[1] == "off":
    os.environ["POSVIZ_WORKAROUNDS_OFF"] = "pyside-import-hook"
    assert not answer_pyside_hook()              # PySide6's own check stays
import xml.dom.minidom                         # xml.dom imports: the hook checks it
checked = sys.modules["xml.dom"]
print(feature.pyside_feature_dict.get(checked.__name__), checked.__file__ in linecache.cache)
"""


@pytest.mark.parametrize("mode, kept", [("original", True), ("cheap", False),
                                        ("off", True)])
def test_new_imports_are_checked_without_keeping_their_source(mode, kept):
    if mode == "cheap" and not written_for(PySide6.__version_info__):
        pytest.skip(f"PySide6 {PySide6.__version__}: not a version it was written for")
    env = {k: v for k, v in os.environ.items() if k != boot.OFF_VARIABLE}
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True,
                         text=True, check=True, env=env).stdout.split()
    assert out == ["-1", str(kept)]     # -1: "does not use PySide6", both ways


@pytest.fixture
def pyside_s_own(monkeypatch):
    """PySide6's hook as it is before posviz answers it (a stand-in for the original
    check, which conftest has already replaced in this process); put back afterwards."""
    feature = pytest.importorskip("shibokensupport.feature")
    monkeypatch.delenv(boot.OFF_VARIABLE, raising=False)

    def original(module) -> bool:
        return reference(module)

    monkeypatch.setattr(feature, "_mod_uses_pyside", original)
    return feature, original


def test_answered_on_the_versions_it_was_written_for(pyside_s_own):
    feature, original = pyside_s_own
    if not written_for(PySide6.__version_info__):
        pytest.skip(f"PySide6 {PySide6.__version__}: not a version it was written for")
    assert answer_pyside_hook() is True
    check = feature._mod_uses_pyside
    assert check is not original and check.cheap
    import posviz.analysis.symmetry
    import posviz.gui.window
    assert check(posviz.gui.window) and not check(posviz.analysis.symmetry)


def test_the_off_switch_keeps_pyside_s_own_check(pyside_s_own, monkeypatch):
    feature, original = pyside_s_own
    for off in (NAME, "all", f"malloc-trim, {NAME}"):
        monkeypatch.setenv(boot.OFF_VARIABLE, off)
        assert answer_pyside_hook() is False
        assert feature._mod_uses_pyside is original


def test_other_pyside_versions_keep_pyside_s_own_check(pyside_s_own, monkeypatch):
    feature, original = pyside_s_own
    low, high = boot.PYSIDE
    assert written_for((6, 10, 3, "", ""))
    assert written_for(low) and not written_for(high)
    assert not written_for((6, 11, 0)) and not written_for((6, 5, 3))
    assert not written_for(())                              # no version at all
    monkeypatch.setattr(boot, "PYSIDE", ((5, 0), (5, 15)))
    assert answer_pyside_hook() is False
    assert feature._mod_uses_pyside is original
