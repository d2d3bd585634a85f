"""The mosaic's modes (document.spec.MOSAIC_MODES): what each is called on screen, its
look (levels and colour table) and what its colour bar measures."""
from __future__ import annotations

from . import style
from posviz.document.spec import MOSAIC_MODES as MODES
from posviz.document.spec import Selection
from posviz.views.mosaic import MosaicLook

# What the mosaic's modes (document.spec.MOSAIC_MODES) are called on screen.
MOSAIC_MODES = {
    "difference": "reordered (aligned) − original",
    "original": "original order",
    "reordered": "reordered, aligned back",
}
assert tuple(MOSAIC_MODES) == MODES


def mosaic_look(selection: Selection) -> MosaicLook:
    """The look of the mosaic for a selection: its mode, levels and colour table."""
    if selection.mosaic == "difference":
        r = float(selection.difference_range)
        return MosaicLook("difference", (-r, r), style.argb_table(style.DIVERGING))
    return MosaicLook(selection.mosaic, style.ATTENTION_LEVELS,
                      style.argb_table(style.SEQUENTIAL))


# What the mosaic's colour bar measures, by mode (the attention figure's bars say the same).
BAR_LABELS = {"difference": "difference", "original": "attention weight",
              "reordered": "attention weight"}
