"""posviz's version, in a module of its own that imports nothing: every layer may read it
(exported files record it) without importing the package's entry points."""

__version__ = "0.1.0"
