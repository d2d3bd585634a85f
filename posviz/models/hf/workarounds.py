"""posviz's one patch of transformers, ``hf-gguf-progress`` (a switch of posviz.boot): its
GGUF module parses the file (header, vocabulary, tensor names) and de-quantizes it through
its own ``tqdm``, past ``set_tqdm_hook``, a still wait (benchmarks/README.md) told here."""
from __future__ import annotations

from contextlib import contextmanager, suppress
from importlib import metadata

from ...boot import enabled

WRITTEN_FOR = ("4.", "5.")          # transformers versions: on others the loop is left alone
READING = "reading the GGUF file's header, vocabulary and tensor names"
READING_AGAIN = "reading the GGUF file again, for its weights"
MATCHING = "matching the GGUF file's tensors to the model's modules"


@contextmanager
def gguf_loop(wrap, say=lambda *told: None):
    """Meanwhile the de-quantizing loop iterates ``wrap(iterable, total)``, each parse says
    READING (then READING_AGAIN) and the matching counts MATCHING; yields whether it does."""
    module = None
    with suppress(metadata.PackageNotFoundError, ImportError):
        if enabled("hf-gguf-progress") and metadata.version("transformers")[:2] in WRITTEN_FOR:
            from transformers import modeling_gguf_pytorch_utils as module
    reads, matched = [], [0, 0]               # parses begun; modules matched, of how many

    def reading(*args, **kwargs):             # for the config, then for the weights
        say(READING_AGAIN if reads else READING)
        reads.append(args)
        return originals["load_gguf_checkpoint"](*args, **kwargs)

    def matching(model, *args, **kwargs):     # again for each child module, by qual_name
        child = bool(kwargs.get("qual_name"))
        matched[:] = [matched[0] + 1, matched[1]] if child else [1, len(list(model.modules()))]
        say(MATCHING, min(matched), matched[1])
        return originals["get_gguf_hf_weights_map"](model, *args, **kwargs)

    patches = {"tqdm": lambda iterable, *args, **kwargs: wrap(iterable, kwargs.get("total")),
               "load_gguf_checkpoint": reading, "get_gguf_hf_weights_map": matching}
    originals = {name: getattr(module, name) for name in patches if hasattr(module, name)}
    for name in originals:
        setattr(module, name, patches[name])
    try:
        yield "tqdm" in originals
    finally:
        for name, original in originals.items():
            setattr(module, name, original)
