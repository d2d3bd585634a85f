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


DOWNLOADS_KEY = "models/downloads"      # may a model be downloaded from the hub?


def downloads_allowed(settings=None) -> bool:
    """The window's setting that lets a hub model be downloaded (on unless turned off in
    the model panel)."""
    value = (settings or make_settings()).value(DOWNLOADS_KEY, True)
    return value not in (False, "false", "0", 0)
