"""Where the window keeps its settings: QSettings under the organisation "posviz", or the
file ``POSVIZ_SETTINGS`` names."""
from __future__ import annotations

import os


def make_settings():
    from PySide6.QtCore import QSettings

    path = os.environ.get("POSVIZ_SETTINGS")
    if path:
        return QSettings(path, QSettings.IniFormat)
    return QSettings("posviz", "posviz")
