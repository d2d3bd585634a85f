"""posviz's one patch of transformers, ``hf-gguf-progress`` (a switch of posviz.boot).

transformers de-quantizes a GGUF file through the ``tqdm`` its module imports itself, past
its ``disable_progress_bar`` and ``set_tqdm_hook``: a bar on the terminal, no count, no
stop. ``gguf_loop(wrap)`` makes that name ``wrap`` for a ``with`` block."""
from __future__ import annotations

from contextlib import contextmanager
from importlib import metadata

from ...boot import enabled

WRITTEN_FOR = ("4.", "5.")          # transformers versions: on others the loop is left alone


@contextmanager
def gguf_loop(wrap):
    """The loop iterates ``wrap(iterable, total)`` meanwhile; yields whether it does."""
    module = None
    try:
        if enabled("hf-gguf-progress") and metadata.version("transformers")[:2] in WRITTEN_FOR:
            from transformers import modeling_gguf_pytorch_utils as module
    except (metadata.PackageNotFoundError, ImportError):
        pass
    original = getattr(module, "tqdm", None)
    if original is not None:
        module.tqdm = lambda iterable, *args, **kwargs: wrap(iterable, kwargs.get("total"))
    try:
        yield original is not None
    finally:
        if original is not None:
            module.tqdm = original
