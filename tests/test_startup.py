"""Start-up: what is imported before the window's first paint, torch's libraries loaded
without Python's lock, torch imported past PySide6's hook, the plots panel built before
the core is ready. (The benchmark times it; these check what happens, and that the
window is the same.)"""
import subprocess
import sys

import pytest

pytest.importorskip("PySide6.QtCore")


def run(code: str, *env_off: str) -> str:
    import os
    env = dict(os.environ)
    if env_off:
        env["POSVIZ_WORKAROUNDS_OFF"] = ",".join(env_off)
    else:
        env.pop("POSVIZ_WORKAROUNDS_OFF", None)
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def test_the_window_is_built_without_the_plots_or_torch():
    """Before the first paint the GUI thread imports Qt and the window's own modules:
    not pyqtgraph (the plots), torch or transformers; the worker imports those."""
    out = run("import sys\nimport PySide6.QtWidgets\nimport posviz.gui.app, posviz.gui.window\n"
              "print(sorted({m.split('.')[0] for m in sys.modules} & "
              "{'pyqtgraph', 'torch', 'transformers'}))\n"
              "print('posviz.gui.plots' in sys.modules)")
    assert out.splitlines() == ["[]", "False"]


PRELOAD = """
import sys
from posviz.gui.preload import preload_torch_libraries
def mapped():
    return sorted({line.rsplit('/', 1)[-1].strip() for line in open('/proc/self/maps')
                   if 'libtorch' in line})
print(mapped())
print(preload_torch_libraries())
print('torch' in sys.modules, mapped())
import torch
x = torch.arange(12, dtype=torch.float64).reshape(3, 4)
print(float((x @ x.T).trace()), preload_torch_libraries())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")
def test_torch_libraries_are_loaded_without_importing_torch():
    before, loaded, after, used = run(PRELOAD).splitlines()
    assert before == "[]"
    assert loaded == "['libtorch_global_deps.so', 'libtorch_cpu.so']"
    # the libraries are in the process, torch's Python modules are not
    assert after.startswith("False") and "libtorch_cpu.so" in after
    # torch imported afterwards works: trace(X X^T) = sum of squares 0..11 = 506
    assert used == "506.0 []"          # and a second call does nothing (torch is in)


def test_preloading_can_be_switched_off():
    before, loaded, after, used = run(PRELOAD, "torch-preload").splitlines()
    assert loaded == "[]" and after == "False []"
    assert used == "506.0 []"


HOOK = """
import builtins, sys
import PySide6.QtCore
import shibokensupport.feature as feature
from posviz.gui.import_hook import past_pyside_hook
hook = builtins.__import__
with past_pyside_hook() as skipped:
    inside = builtins.__import__ is getattr(builtins, '__orig_import__', None)
    import colorsys
print(skipped, inside, builtins.__import__ is hook)
print(feature.pyside_feature_dict.get('colorsys'))
import colorsys                        # imported again after: filed as the hook would
print(feature.pyside_feature_dict.get('colorsys'))
try:
    with past_pyside_hook():
        raise KeyError
except KeyError:
    pass
print(builtins.__import__ is hook)
"""


def test_imports_past_the_hook_are_filed_as_the_hook_would_later():
    skipped, inside, afterwards, restored = run(HOOK).splitlines()
    assert skipped == "True True True"     # Python's own import inside, the hook after
    assert inside == "None"                # not seen by the hook
    assert afterwards == "-1"              # a module that does not use PySide6
    assert restored == "True"              # an error inside still puts the hook back


def test_skipping_the_hook_can_be_switched_off():
    skipped, inside, afterwards, restored = run(HOOK, "pyside-import-hook").splitlines()
    assert skipped == "False False True"
    assert inside == "-1"                  # the hook saw it


def test_the_plots_are_built_before_the_core_is_ready(qtbot):
    """The worker says the plots' modules are in; the window builds its panel then,
    hidden behind "Loading model…" until the session is ready, and shows it after."""
    from posviz.gui.settings import make_settings
    from posviz.gui.window import MainWindow

    w = MainWindow(make_settings())
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    seen = []
    w.controller.plotsImported.connect(
        lambda: seen.append((w.plots is not None, w.session is None,
                             w.plots_area.currentWidget() is w.placeholder)))
    with qtbot.waitSignal(w.controller.evaluated, timeout=60_000):
        w.start(last=False)
    assert seen == [(True, True, True)]         # built, before ready, not yet shown
    assert w.plots_area.currentWidget() is w.plots_scroll
    assert w.plots.provenance()               # an evaluation drawn
    panel = w.plots
    w._build_plots()                            # once only
    assert w.plots is panel and w.plots_area.count() == 2


MIRROR = """
import hashlib, os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6 import QtCore, QtGui, QtWidgets
app = QtWidgets.QApplication([])
from posviz.gui.qt_mirror import import_pyqtgraph_lazily
pg = import_pyqtgraph_lazily() if sys.argv[1] == "lazy" else __import__("pyqtgraph")
made = len(QtWidgets.__dict__)
from posviz.models.builtin import BuiltinBackend
from posviz.models.config import ModelConfig
from posviz.analysis.engine import Engine
from posviz.document.session import Session
from posviz.views.shown import Shown, build_views
from posviz.gui.plots import PlotsPanel, mosaic_look
session = Session(BuiltinBackend(ModelConfig()), "the cat sat on the mat because it was warm")
session.reverse()
ev = Engine(session.backend).evaluate(session.seq, session.order, session.positions)
panel = PlotsPanel()
panel.resize(1200, 800)
panel.show()
for _ in range(5):
    app.processEvents()
panel.show_evaluation(Shown(ev, build_views(ev, mosaic_look(panel.selection()))))
for _ in range(5):
    app.processEvents()
image = panel.grab().toImage()
pixels = bytes(image.constBits())
mirrors = (("QtCore", QtCore), ("QtGui", QtGui), ("QtWidgets", QtWidgets))
names = [(getattr(pg.Qt, q), src, n) for q, src in mirrors for n in dir(src)
         if n.isidentifier() and not n.startswith("__") and hasattr(src, n)]
same = all(getattr(m, n) is getattr(src, n) for m, src, n in names if hasattr(m, n))
missing = [n for m, src, n in names if not hasattr(m, n)]   # made after pyqtgraph's copy
print(hashlib.sha1(pixels).hexdigest(), image.width(), image.height())
print(len(names) > 600, same, pg.Qt.QtGui.QFileSystemModel is QtWidgets.QFileSystemModel,
      not missing)
print(made < len(dir(QtWidgets)))
"""


def test_pyqtgraph_with_its_qt_mirror_filled_on_use_paints_the_same_plots():
    """Imported lazily, pyqtgraph's QtCore/QtGui/QtWidgets give the very same classes
    under the same names, and the plots of an evaluation come out pixel for pixel as
    with the plain import; fewer of PySide6's classes were made at import."""
    lazy = run(MIRROR.replace("sys.argv[1]", "'lazy'")).splitlines()
    plain = run(MIRROR.replace("sys.argv[1]", "'plain'")).splitlines()
    assert lazy[0] == plain[0]                  # the same pixels
    assert lazy[1] == "True True True True"     # every name, the very same object
    assert plain[1].startswith("True True True")   # (pyqtgraph's copy misses a few
                                                   # PySide6 makes while it copies)
    assert lazy[2] == "True" and plain[2] == "False"   # only the lazy import left some out


def test_the_qt_mirror_can_be_switched_off():
    out = run(MIRROR.replace("sys.argv[1]", "'lazy'"), "pyqtgraph-lazy-qt").splitlines()
    assert out[2] == "False"                    # pyqtgraph made every class, as it does
