"""What a layer or head the user gives may choose: one the model has (``check_view``),
of a figure or an experiment that draws one layer or head (``check_chosen``); a choice
is refused, never silently ignored. The guard's (models.limits.guard), for every entry
point: the window, the command line and the Python API."""
from __future__ import annotations

from typing import Callable

from ...errors import PosvizInputError, argument, check_whole_number


def check_view(layers: int, heads: int, layer: int | None = None,
               head: int | None = None, first: int = 1) -> None:
    """PosvizInputError for a ``layer`` (``first``..L: a figure's from 1, a sweep's from
    0, its embeddings) or ``head`` (0..h-1) the model does not have: a bad value, in the
    words of the entry point; ``layers`` or ``heads`` 0: not known yet, not checked.
    None is not checked (not asked for): an entry that needs one checks it first."""
    for said, value in (("layer", layer), ("head", head)):
        if value is not None:
            check_whole_number(said, value)
    if layer is not None and layers and not first <= layer <= layers:
        raise PosvizInputError(f"{argument('layer')} must be from {first} to {layers} "
                               f"(got {layer!r})")
    if head is not None and heads and not 0 <= head < heads:
        raise PosvizInputError(f"{argument('head')} must be from 0 to {heads - 1} "
                               f"(got {head!r})")


def check_chosen(what: str, chooses: tuple[str, ...], shows: Callable[[str], str], *,
                 layer=None, head=None) -> None:
    """PosvizInputError for a ``layer`` or ``head`` given (not None) to ``what`` (a
    figure, a sweep of a kind) that chooses only ``chooses`` of them: it would draw the
    same without it. ``shows(name)`` says what ``what`` draws instead, and where the
    option does choose ("draws every layer (layer chooses …)")."""
    for name, value in (("layer", layer), ("head", head)):
        if value is not None and name not in chooses:
            raise PosvizInputError(f"{argument(name, value)} does not apply to {what}, "
                                   f"which {shows(name)}")
