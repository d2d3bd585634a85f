"""What the model panel and the Positions and Outputs figures show of the model itself:
its facts (models.facts), its own positional machinery (models.hf.machinery) and what
it predicts after each order (analysis.predictions). The first two are computed once per
model; torch is imported only when a model is described.
"""
from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass

from ..errors import one_line

__all__ = ["ModelViews", "model_views"]


@dataclass(frozen=True, eq=False)
class ModelViews:
    """What the model panel and the Positions and Outputs figures show of the model."""

    facts: object | None             # models.facts.ModelFacts
    machinery: object | None         # models.hf.machinery.Machinery (real models), or None
    outputs: object | None           # analysis.predictions.Outputs, or None


class _PerModel:
    """A value computed once per backend, held while the backend lives."""

    def __init__(self, size: int = 4):
        self._items: list[tuple[weakref.ref, object]] = []
        self._size = size
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            return next((v for r, v in self._items if r() is key), None)

    def put(self, key, value) -> None:
        try:
            weakref.ref(key)
        except TypeError:             # an object that cannot be held weakly: not kept
            return
        with self._lock:
            alive = [(r, v) for r, v in self._items if r() is not None and r() is not key]
            self._items = alive[-(self._size - 1):] + [(weakref.ref(key), value)]


_per_model = _PerModel()


def about_model(backend) -> tuple:
    """(facts, machinery) of a backend, computed once per backend."""
    known = _per_model.get(backend)
    if known is None:
        try:
            facts = backend.facts()
        except Exception:             # a model posviz cannot describe still runs
            facts = None
        try:
            machinery = backend.machinery()
        except Exception as error:    # an unfamiliar layout: say so in the figures
            from ..models.hf.machinery import Machinery
            machinery = Machinery.unreadable(one_line(error))
        known = (facts, machinery)
        _per_model.put(backend, known)
    return known


def model_views(backend, ev) -> ModelViews:
    """The model's facts, machinery and predictions for the evaluation ``ev`` (the
    first two computed once per model); the worker puts them in the views.shown.Shown."""
    from ..analysis.predictions import Outputs, compare_outputs

    facts, machinery = about_model(backend)
    try:
        outputs = compare_outputs(backend, ev)
    except Exception as error:       # the figures still show; the panel says why
        outputs = Outputs("error", float("nan"), note=f"posviz could not read this "
                          f"model's predictions: {one_line(error)}")
    return ModelViews(facts, machinery, outputs)
