"""posviz: see how positional encodings break the permutation symmetry of self-attention.

From Python (posviz.api; importing posviz loads neither torch nor Qt)::

    import posviz
    m = posviz.load("minilm")                  # or the built-in model: see posviz.load
    r = m.compare("the cat sat on the mat", order=[5, 4, 3, 2, 1, 0])
    r.layers                                   # the rows of `posviz report --json`
    posviz.sweep(texts, kind="random", count=64).figure()   # posviz sweep, and its plot
    posviz.probe(pe="none", mask="causal")     # posviz probe
    posviz.paper("haviv2022")                  # posviz paper
    posviz.compare_encodings("the cat sat on the mat")      # posviz compare
    posviz.train("my-rope/", pe="rope")        # posviz train

Each result's ``to_dict()`` is its command's ``--json``; bad input raises
posviz.errors.PosvizInputError (errors.Refused when the guard refuses it before anything
large is loaded or allocated).
"""
from typing import TYPE_CHECKING

from .version import __version__ as __version__

if TYPE_CHECKING:        # for editors and completion; at run time imported on first use
    from .api import (Model, Report, compare_encodings, extend, load, load_session,
                      order_use, paper, probe, read_texts, sweep, train)
del TYPE_CHECKING

# a new command's function joins here and in posviz.api.__all__ (posviz.api.experiments)
__all__ = ["Model", "Report", "load", "load_session", "read_texts", "sweep", "probe",
           "paper", "compare_encodings", "train", "extend", "order_use"]


def __getattr__(name: str):
    """posviz.load, posviz.sweep, … from posviz.api, imported on first use."""
    if name in __all__:
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """What completion offers: the API's names beside the module's own."""
    return sorted(set(globals()) | set(__all__))
