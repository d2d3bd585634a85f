"""The core never imports Qt (DESIGN.md, principle 1)."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CORE = Path(__file__).resolve().parents[1] / "posviz" / "core"


def test_core_modules_load_without_qt():
    modules = sorted(
        "posviz.core." + ".".join(p.relative_to(CORE).with_suffix("").parts).removesuffix(
            ".__init__")
        for p in CORE.rglob("*.py")
    )
    code = (f"import sys, importlib\nfor m in {modules!r}: importlib.import_module(m.rstrip('.'))\n"
            "bad = [m for m in sys.modules if m.split('.')[0] in "
            "('PySide6', 'PyQt5', 'PyQt6', 'pyqtgraph', 'qtpy')]\n"
            "print(','.join(bad))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "", f"Qt loaded by the core: {result.stdout}"
    assert len(modules) >= 10
