"""The plots of posviz: one panel that shows an Evaluation and exports every figure.

Figure names (stable; exported files are ``<name>.png``, ``<name>.svg``, ``<name>.csv``):

- ``attention``: the selected layer and head, original / reordered aligned back / difference
- ``attention_mosaic``: every layer × head in one image; click a tile to select it
- ``symmetry``: the per-layer metrics of posviz.analysis.symmetry on a log axis, noise floor marked
- ``token_change``: how much each token's hidden state changed at the selected layer
- ``branch_norms``: residual stream, attention-branch and MLP-branch norms per layer
- ``encoding``: the additive positional encoding, positions × dimensions
- ``encoding_similarity``: cosine similarity between the encodings of two positions
- ``relative_profile``: the encoding's score or bias against relative distance
"""
import PySide6.QtWidgets  # noqa: F401  (PySide6 before pyqtgraph picks the binding)

from .panel import FIGURES, PlotsPanel

__all__ = ["PlotsPanel", "FIGURES"]
