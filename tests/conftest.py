"""Shared test set-up: headless Qt, one BLAS thread, no network, private settings."""
import os

# Before any Qt or numpy import: Qt tests run without a display unless a test asks for
# one, numpy's BLAS does not compete with torch for the cores, nothing is downloaded.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest  # noqa: E402

try:                # as the app does (posviz.gui.app.main), before torch is imported
    import PySide6.QtCore  # noqa: E402,F401
except ImportError:
    pass
else:
    from posviz.gui.import_hook import answer_pyside_hook_cheaply  # noqa: E402
    answer_pyside_hook_cheaply()


@pytest.fixture(autouse=True)
def private_settings(tmp_path, monkeypatch):
    """The window never reads or writes the user's real settings in a test."""
    path = tmp_path / "posviz-settings.ini"
    monkeypatch.setenv("POSVIZ_SETTINGS", str(path))
    return path
