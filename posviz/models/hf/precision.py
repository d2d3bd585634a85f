"""Half-precision weights, float32 arithmetic: a real model read in bfloat16 or float16
keeps its weights so (half the memory of float32) and computes every value in float32.

Why (benchmarks/README.md, "Half precision: weights, not arithmetic"): computed in
bfloat16, SmolLM2's hidden states round by up to 6e-2 relative to the same weights in
float32 (float16: 3e-3), more than its real prefix-swap changes (4.6e-3 at the final
slot): no floor can keep the rounding under it and those changes above it. Computed in
float32 over the same half-precision weights, the changes are the float32 model's to
1%, and the floor is float32's.

Inside ``float32_arithmetic(model)`` every torch function reads a half-precision tensor
argument as float32 and a half-precision dtype argument as float32, so a cast that a
model makes to its weights' dtype (T5's norm, a head's input) keeps float32 too. A
weight is widened as it is used, one layer at a time; an embedding row is gathered
first and widened after (exact either way); an in-place operation is left as it is. The
mode is the calling thread's alone. accelerate moves an offloaded module's weights in
around its forward (its hook): that runs outside the mode, so they arrive as stored.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager, nullcontext

from ..options import HALF

ARITHMETIC = "float32"           # what a half-precision model computes in


def arithmetic_of(weights: str) -> str:
    """The precision a model whose weights are ``weights`` computes in."""
    return ARITHMETIC if weights in HALF else weights


def float32_arithmetic(model):
    """A context in which ``model`` (a torch module) computes in float32 when its
    weights are half precision; nothing otherwise."""
    import torch

    first = next((p for p in model.parameters() if p.is_floating_point()), None)
    if first is None or first.dtype not in (torch.bfloat16, torch.float16):
        return nullcontext()
    return _mode()()


def _mode():
    """The TorchFunctionMode class (built on first use: torch is imported then)."""
    global _Float32
    if _Float32 is None:
        import torch
        from torch.overrides import TorchFunctionMode
        from torch.utils._pytree import tree_map

        half = (torch.bfloat16, torch.float16)

        def widen(x):
            if isinstance(x, torch.Tensor) and x.dtype in half:
                return x.float()
            return torch.float32 if isinstance(x, torch.dtype) and x in half else x

        class Float32Arithmetic(TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                kwargs = kwargs or {}
                name = getattr(func, "__name__", "")
                if _outside.active or name.endswith("_") or name == "__setitem__":
                    return func(*args, **kwargs)         # placing weights; in place
                if func is torch.nn.functional.embedding:  # gather, then widen: exact
                    return widen(func(*args, **kwargs))
                return func(*tree_map(widen, args), **tree_map(widen, kwargs))
        _Float32 = Float32Arithmetic
    return _Float32


_Float32 = None


class _Outside(threading.local):
    active = False


_outside = _Outside()


@contextmanager
def _placing():
    before, _outside.active = _outside.active, True
    try:
        yield
    finally:
        _outside.active = before


class PlacedOutside:
    """An accelerate hook whose weight moves (pre_forward, post_forward) run outside
    float32 arithmetic; everything else is the hook's own."""

    def __init__(self, hook):
        self.hook = hook

    def pre_forward(self, module, *args, **kwargs):
        with _placing():
            return self.hook.pre_forward(module, *args, **kwargs)

    def post_forward(self, module, output):
        with _placing():
            return self.hook.post_forward(module, output)

    def __getattr__(self, name):
        if name == "hook":                   # (a copy before __init__ has run)
            raise AttributeError(name)
        return getattr(self.hook, name)


def place_outside(model) -> None:
    """Wrap each accelerate hook of ``model`` (device_map placement) in PlacedOutside."""
    for module in model.modules():
        hook = getattr(module, "_hf_hook", None)
        if hook is not None and not isinstance(hook, PlacedOutside):
            module._hf_hook = PlacedOutside(hook)
