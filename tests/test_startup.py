"""Start-up: what is imported before the window's first paint. (The benchmark times
it; these check what happens.)"""
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
              "{'pyqtgraph', 'torch', 'transformers', 'posviz.gui.plots'}))\n"
              "print('posviz.gui.plots' in sys.modules)")
    assert out.splitlines() == ["[]", "False"]
