"""What a Session tells its observers: one small typed event per kind of change.

Observers (the window, the controller that schedules computation) receive these instead
of re-reading the whole session, so each can do only the work its change needs.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..models.config import Positions
from .spec import ModelSpec, Selection


@dataclass(frozen=True, eq=False)
class OrderChanged:
    """The tokens were reordered: ``before`` and ``after`` are (n,) orders.

    ``src``/``dst`` name the slots of a single move (a drag step), else None."""

    before: np.ndarray
    after: np.ndarray
    src: int | None = None
    dst: int | None = None


@dataclass(frozen=True)
class TextChanged:
    """New text: new tokens, shown in their original order."""

    text: str


@dataclass(frozen=True)
class ModelChanged:
    """Another model runs; the text was tokenized again. When the tokens differ from the
    previous model's, the order was reset and earlier reorders no longer apply."""

    spec: ModelSpec
    tokens_changed: bool = True
    order_reset: bool = False        # the tokens changed and a reorder was lost with them


@dataclass(frozen=True)
class PositionsChanged:
    """The position ids changed (mode or offset)."""

    positions: Positions


@dataclass(frozen=True)
class SelectionChanged:
    """The view changed (layer, head or a plot option): nothing needs computing."""

    selection: Selection


Event = OrderChanged | TextChanged | ModelChanged | PositionsChanged | SelectionChanged
COMPUTING_EVENTS = (OrderChanged, TextChanged, ModelChanged, PositionsChanged)
