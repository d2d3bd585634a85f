"""posviz's one patch of transformers, ``hf-gguf-progress`` (a switch of posviz.boot): its
GGUF module parses the file (header, vocabulary, tensor names) and de-quantizes it through
its own ``tqdm``, past ``set_tqdm_hook``, a still wait (benchmarks/README.md) told here."""
from __future__ import annotations

from contextlib import contextmanager, suppress
from importlib import metadata

from ...boot import enabled

WRITTEN_FOR = ("4.", "5.")          # transformers versions: on others the loop is left alone
READING = "reading the GGUF file's header, vocabulary and tensor names"


@contextmanager
def gguf_loop(wrap, say=lambda step: None):
    """Meanwhile the de-quantizing loop iterates ``wrap(iterable, total)`` and each parse
    of the file first says READING; yields whether it does."""
    module = None
    with suppress(metadata.PackageNotFoundError, ImportError):
        if enabled("hf-gguf-progress") and metadata.version("transformers")[:2] in WRITTEN_FOR:
            from transformers import modeling_gguf_pytorch_utils as module
    read = getattr(module, "load_gguf_checkpoint", None)

    def reading(*args, **kwargs):
        say(READING)
        return read(*args, **kwargs)

    patches = {"tqdm": lambda iterable, *args, **kwargs: wrap(iterable, kwargs.get("total")),
               "load_gguf_checkpoint": reading}
    originals = {name: getattr(module, name) for name in patches if hasattr(module, name)}
    for name in originals:
        setattr(module, name, patches[name])
    try:
        yield "tqdm" in originals
    finally:
        for name, original in originals.items():
            setattr(module, name, original)
