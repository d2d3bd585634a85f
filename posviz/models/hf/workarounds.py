"""posviz's one patch of transformers, ``hf-gguf-progress`` (a switch of posviz.boot).

transformers reads a GGUF file through functions of one module, past its
``disable_progress_bar`` and ``set_tqdm_hook``: it parses the file's header (its whole
vocabulary) once for the config and once more for the weights, matches the file's tensor
names to the model's module by module, then de-quantizes tensor by tensor through the
``tqdm`` that module imports itself (a bar on the terminal, no count, no stop). On a busy
machine the parsing and matching took 50 s of SmolLM2's first load before the first
tensor. ``gguf_loop(wrap, say)`` makes those names tell ``say`` for a ``with`` block."""
from __future__ import annotations

from contextlib import contextmanager
from importlib import metadata

from ...boot import enabled

WRITTEN_FOR = ("4.", "5.")          # transformers versions: on others the loop is left alone
READING = "reading the GGUF file's header and vocabulary"
MATCHING = "matching the GGUF file's tensors to the model's modules"


@contextmanager
def gguf_loop(wrap, say=lambda step, done=None, total=None: None):
    """The de-quantizing loop iterates ``wrap(iterable, total)`` meanwhile, the header's
    parsing says READING and the name matching counts MATCHING module by module;
    yields whether it does."""
    module = None
    try:
        if enabled("hf-gguf-progress") and metadata.version("transformers")[:2] in WRITTEN_FOR:
            from transformers import modeling_gguf_pytorch_utils as module
    except (metadata.PackageNotFoundError, ImportError):
        pass
    patches = {} if module is None else _patches(module, wrap, say)
    originals = {name: getattr(module, name) for name in patches}
    for name, patch in patches.items():
        setattr(module, name, patch)
    try:
        yield "tqdm" in patches
    finally:
        for name, original in originals.items():
            setattr(module, name, original)


def _patches(module, wrap, say) -> dict:
    """The replacements of the module's names it has (a name it lacks is left alone)."""
    patches = {"tqdm": lambda iterable, *args, **kwargs: wrap(iterable, kwargs.get("total"))}
    read, match = getattr(module, "load_gguf_checkpoint", None), \
        getattr(module, "get_gguf_hf_weights_map", None)
    if read is not None:
        def reading(*args, **kwargs):
            say(READING)
            return read(*args, **kwargs)
        patches["load_gguf_checkpoint"] = reading
    if match is not None:
        matched = [0, 0]                     # modules matched, of how many

        def matching(hf_model, *args, **kwargs):    # called again for each child module
            if not kwargs.get("qual_name") and len(args) < 4:
                matched[:] = [0, sum(1 for _ in hf_model.modules())]
            matched[0] += 1
            say(MATCHING, min(matched), matched[1])
            return match(hf_model, *args, **kwargs)
        patches["get_gguf_hf_weights_map"] = matching
    return {name: patch for name, patch in patches.items() if hasattr(module, name)}
