"""posviz's one patch of transformers' GGUF loading (``hf-gguf-progress``): its parses,
matching and de-quantizing told, its own progress bar not printed."""
from __future__ import annotations

from contextlib import contextmanager, suppress
from importlib import metadata

from ...boot import enabled
from .hub import BUILDING, MATCHING, READING, READING_AGAIN  # noqa: F401 (the steps told)

WRITTEN_FOR = ("4.", "5.")          # transformers versions: on others the loop is left alone


@contextmanager
def gguf_loop(wrap, say=lambda *told: None):
    """Meanwhile the loop runs in ``wrap(iterable, total)``, parses and matching are said."""
    module, matched, built = None, [0, 0], []  # modules matched, of how many
    with suppress(metadata.PackageNotFoundError, ImportError):
        if enabled("hf-gguf-progress") and metadata.version("transformers")[:2] in WRITTEN_FOR:
            from transformers import modeling_gguf_pytorch_utils as module

    def reading(*args, **kwargs):             # for the tokenizer, the config, the weights
        if (weights := len(args) > 1 or kwargs.get("return_tensors")) or not built:
            say(READING_AGAIN if weights else READING)     # the header once, not the config's
        parsed = originals[module, "load_gguf_checkpoint"](*args, **kwargs)
        built or weights or built.append(say(BUILDING))   # the first, the tokenizer's: 3 s
        return parsed

    def matching(model, *args, **kwargs):     # again for each child module, by qual_name
        matched[:] = ([matched[0] + 1, matched[1]] if kwargs.get("qual_name")  # a child
                      else [1, len(list(model.modules()))])
        say(MATCHING, min(matched), matched[1])
        return originals[module, "get_gguf_hf_weights_map"](model, *args, **kwargs)

    patches = {(module, "tqdm"): lambda loop, *args, **kwargs: wrap(loop, kwargs.get("total")),
               (module, "load_gguf_checkpoint"): reading,
               (module, "get_gguf_hf_weights_map"): matching}
    originals = {key: getattr(*key) for key in patches if key[0] and hasattr(*key)}
    for key in originals:
        setattr(*key, patches[key])
    try:
        yield (module, "tqdm") in originals
    finally:
        for key, original in originals.items():
            setattr(*key, original)
