"""The plots of posviz: one panel that shows an Evaluation and exports every figure.

Each figure declares its stable name (exported files are ``<name>.png``, ``<name>.svg``,
``<name>.csv``), its tab, title and data on its own class; figures.py lists them in order.
"""
import PySide6.QtWidgets  # noqa: F401  (PySide6 before pyqtgraph picks the binding)

from .figures import FIGURES
from .mosaic_modes import mosaic_look
from .panel import PlotsPanel

__all__ = ["PlotsPanel", "FIGURES", "mosaic_look"]
