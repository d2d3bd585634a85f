"""posviz: see how positional encodings break the permutation symmetry of self-attention.

From Python (posviz.api; importing posviz loads neither torch nor Qt)::

    import posviz
    m = posviz.load("minilm")                  # or the built-in model: see posviz.load
    r = m.compare("the cat sat on the mat", order=[5, 4, 3, 2, 1, 0])
    r.layers                                   # the rows of `posviz report --json`
"""

from .version import __version__ as __version__

__all__ = ["Model", "Report", "load", "load_session", "read_texts"]


def __getattr__(name: str):
    """posviz.load, posviz.Model, … from posviz.api, imported on first use."""
    if name in __all__:
        from . import api
        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
