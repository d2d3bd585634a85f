"""Every figure, once, in the order of the tabs and of their rows. Each figure declares
its name, tab, row, title, data and guide itself (base.Figure); the panel, export,
provenance and the guide read the classes listed here."""
from __future__ import annotations

from posviz.errors import argument
from posviz.models.limits.guard import check_chosen

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


def check_figure_view(name: str, layer=None, head=None, backend=None) -> None:
    """The guard's check_chosen for figure ``name``: a ``layer`` or ``head`` it never
    draws (the symmetry figure draws every layer, the encoding none) is refused, naming
    what it draws and the figures that a layer or head chooses; one it draws for some
    models only (the similarity figure's head: a real model's per-head ALiBi or T5
    bias) is refused unless ``backend``'s model is one."""
    figure = FIGURE_TYPES[name]
    chooses = figure.selects + tuple(o for o in figure.may_select
                                     if backend is not None and figure.chosen_for(backend))

    def shows(option: str) -> str:
        choosing = [other for other in FIGURES if option in FIGURE_TYPES[other].selects]
        return (f"draws {'every' if option in figure.dims else 'no'} {option} "
                f"({argument(option)} chooses the {option} of the "
                f"{' and '.join(choosing)} figure{'s' if len(choosing) > 1 else ''})")
    check_chosen(f"the {name} figure", chooses, shows, layer=layer, head=head)


assert sum(map(tab_figures, TABS), ()) == FIGURES, "figures out of the tabs' order"
