"""Start-up: what is imported before the window's first paint, torch's libraries loaded
without Python's lock, the plots panel built before the core is ready. (The benchmark
times it; these check what happens, and that the window is the same.)"""
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
from posviz.boot import before_torch
def mapped():
    return sorted({line.rsplit('/', 1)[-1].strip() for line in open('/proc/self/maps')
                   if 'libtorch' in line})
print(mapped())
print(before_torch())
print('torch' in sys.modules, mapped())
import torch
x = torch.arange(12, dtype=torch.float64).reshape(3, 4)
print(float((x @ x.T).trace()), before_torch())
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


def test_every_switch_is_listed_once_and_asked_for():
    """posviz.boot.SWITCHES names exactly the workarounds the code asks about."""
    import re
    from pathlib import Path

    from posviz import boot
    asked = {name for path in Path(boot.__file__).parent.rglob("*.py")
             for name in re.findall(r'enabled\("([a-z0-9-]+)"\)', path.read_text("utf-8"))}
    assert sorted(asked) == sorted(boot.SWITCHES) and len(set(boot.SWITCHES)) == 9


def test_the_window_boots_in_one_call():
    """boot.window: the hook answered, the collector on the GUI thread, glibc's settings."""
    out = run("import gc, sys\nfrom PySide6.QtWidgets import QApplication\n"
              "import shibokensupport.feature as feature\nfrom posviz import boot\n"
              "app = QApplication([])\nboot.window(app)\n"
              "print(hasattr(feature._mod_uses_pyside, 'cheap'), gc.isenabled(),\n"
              "      boot._collector['timer'].parent() is app, boot.keep_heap_pages())")
    assert out == "True False True True"
    off = run("import gc\nfrom PySide6.QtWidgets import QApplication\n"
              "import shibokensupport.feature as feature\nfrom posviz import boot\n"
              "app = QApplication([])\nboot.window(app)\n"
              "print(hasattr(feature._mod_uses_pyside, 'cheap'), gc.isenabled())", "all")
    assert off == "False True"



QUIET_THREADS_PROBE = """
import os, sys
seen = {}

class Watch:                       # what the environment says when numpy and torch load
    def find_spec(self, name, path=None, target=None):
        if name in ("numpy", "torch") and name not in seen:
            seen[name] = (os.environ.get("OPENBLAS_NUM_THREADS"),
                          os.environ.get("OMP_WAIT_POLICY"))

sys.meta_path.insert(0, Watch())
from posviz.__main__ import main
main(["report", "--layers", "1", "--heads", "1", "--d-model", "8", "--text", "a b"])
print(seen)
"""


@pytest.mark.parametrize("policy", [None, "ACTIVE"])
def test_a_command_loads_numpy_and_torch_with_quiet_threads(policy):
    """The command line has numpy's BLAS on one thread and torch's OpenMP threads
    asleep when idle before either library loads; a user's own setting stays."""
    import os
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "OMP_WAIT_POLICY")}
    if policy:
        env["OMP_WAIT_POLICY"] = policy
    result = subprocess.run([sys.executable, "-c", QUIET_THREADS_PROBE], capture_output=True,
                            text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    expected = ("1", policy or "PASSIVE")
    assert result.stdout.strip().splitlines()[-1] == str({"numpy": expected,
                                                          "torch": expected})


def test_the_window_keeps_torch_threads_spinning():
    """Only a command lets torch's threads sleep when idle: waking them slowed the
    window's small forwards on a quiet machine. numpy's BLAS is on one thread in both."""
    import os
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENBLAS_NUM_THREADS", "OMP_WAIT_POLICY")}
    probe = ("import os\nfrom posviz import boot\nboot.quiet_threads()\n"
             "print(os.environ.get('OPENBLAS_NUM_THREADS'), "
             "os.environ.get('OMP_WAIT_POLICY'))")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            timeout=60, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["1", "None"]
