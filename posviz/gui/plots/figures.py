"""Every figure, once, in the order of the tabs and of their rows. Each figure declares
its name, tab, row, title, data and guide itself (base.Figure); the panel, export,
provenance and the guide read the classes listed here."""
from __future__ import annotations

from .attention import AttentionFigure
from .base import Figure
from .layers import BranchNormsFigure, SymmetryFigure
from .mosaic_figure import MosaicFigure
from .positions import EncodingFigure, SimilarityFigure
from .predictions import OutputsFigure
from .profile import RelativeProfileFigure
from .tabs import TABS, Tab
from .token_change import TokenChangeFigure

FIGURE_TYPES: dict[str, type[Figure]] = {figure.name: figure for figure in (
    MosaicFigure, SymmetryFigure, AttentionFigure, TokenChangeFigure, BranchNormsFigure,
    EncodingFigure, SimilarityFigure, RelativeProfileFigure, OutputsFigure)}
FIGURES = tuple(FIGURE_TYPES)           # every figure's name, in the order of the tabs
EXPORTED = FIGURES + ("experiment",)    # a folder export's names: the Experiments plot too


def tab_figures(tab: Tab) -> tuple[str, ...]:
    """The names of the figures in ``tab``, by row."""
    return tuple(sorted((name for name, figure in FIGURE_TYPES.items() if figure.tab is tab),
                        key=lambda name: FIGURE_TYPES[name].row))


assert sum(map(tab_figures, TABS), ()) == FIGURES, "figures out of the tabs' order"
