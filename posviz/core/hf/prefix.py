"""Causal prefix reuse for Hugging Face models (see core.prefix): the reference run keeps
its keys and values in a transformers ``DynamicCache``; a reorder runs only the slots
from the first moved one on, with that cache cropped to the slots before as
``past_key_values``.

Both go through the backend's own ``run`` (its hooks, its Trace): a forward pre-hook on
the tapped base model adds the cache to the call, so what posviz records is what the
backend records, for any family transformers gives a DynamicCache (GPT-2, Llama, ...).
"""
from __future__ import annotations

import contextlib

import numpy as np
import torch

# The families whose suffix runs are checked against full runs (tests/test_prefix_hf.py);
# the others run every order in full (OPT, for one, derives positions from the mask).
FAMILIES = ("gpt2", "llama")


def _base(backend):
    """The transformer the backend taps (``base``; ``model`` when it has no head)."""
    return getattr(backend, "base", None) or backend.model


@contextlib.contextmanager
def _calls_with(module, cache, total: int):
    """While inside, a call of ``module`` uses ``cache`` (use_cache on) and attends over
    ``total`` slots: the cached ones and its own."""
    def add_cache(_module, args, kwargs):
        kwargs["past_key_values"] = cache
        kwargs["use_cache"] = True
        ids = kwargs.get("input_ids", args[0] if args else None)
        kwargs["attention_mask"] = torch.ones((1, total), dtype=torch.long,
                                              device=None if ids is None else ids.device)
        return args, kwargs
    handle = module.register_forward_pre_hook(add_cache, with_kwargs=True)
    try:
        yield
    finally:
        handle.remove()


def _layers(cache) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """A DynamicCache's (keys, values) per layer, (1, kv_heads, n, d_head) each."""
    if hasattr(cache, "layers"):                                   # transformers >= 4.56
        return [(layer.keys, layer.values) for layer in cache.layers]
    return list(zip(cache.key_cache, cache.value_cache))           # older


def run_cached(backend, seq, order, position_ids, should_stop=None):
    """backend.run, and the run's keys and values per layer for run_suffix (None for a
    family not in FAMILIES: the engine then runs every order in full)."""
    if getattr(backend, "family", None) not in FAMILIES:
        return backend.run(seq, order, position_ids, should_stop), None
    from transformers import DynamicCache

    cache = DynamicCache()
    with _calls_with(_base(backend), cache, len(order)):
        trace = backend.run(seq, order, position_ids, should_stop)
    return trace, [(k.detach(), v.detach()) for k, v in _layers(cache)]


def run_suffix(backend, seq, order, position_ids, start: int, reference_cache,
               should_stop=None):
    """The Trace of slots start..n-1 of seq[order] at position_ids, the slots before
    being the reference's (whose keys and values ``reference_cache`` holds)."""
    from transformers import DynamicCache

    n = len(order)
    if not 0 < start < n:
        raise ValueError(f"a suffix from slot {start} of {n}")
    cache = DynamicCache()
    for layer, (keys, values) in enumerate(reference_cache):
        cache.update(keys[:, :, :start], values[:, :, :start], layer)
    with _calls_with(_base(backend), cache, n):
        return backend.run(seq, np.asarray(order)[start:], np.asarray(position_ids)[start:],
                           should_stop)
