"""Named hook points: one way to record what a forward pass computes.

After TransformerLens (``hook_points.py``): a HookPoint is a module whose forward is the
identity, placed where a value worth seeing passes; its name is its path in the model,
e.g. ``blocks.0.attn.hook_pattern``. A Recorder taps named modules for one forward and
keeps what they see; ``trace_from`` turns what it kept into a Trace.

The built-in transformer calls its own HookPoints. A Hugging Face model has none, so its
adapter taps the modules that carry the same values (a decoder layer's input, an
attention module's weights) under the same names. Both end in ``trace_from``.
"""
from __future__ import annotations

from typing import Callable

import numpy as np
import torch
from torch import nn

from ..boot import TRIM_FROM, keep_heap_pages, trim_heap
from ..errors import Cancelled
from .maps import LayerMaps
from .reached import FEED_FORWARD, MAPS, reach
from .trace import Trace

# The names, as in TransformerLens. Per block l, prefixed "blocks.{l}.":
RESID_PRE = "hook_resid_pre"              # (n, d) residual stream into block l
KEYS = "attn.hook_k"                      # (h, n, d_head) keys as scored (after RoPE)
VALUES = "attn.hook_v"                    # (h, n, d_head) values
ATTN_SCORES = "attn.hook_attn_scores"     # (h, n, n) pre-softmax scores (masked: -inf)
PATTERN = "attn.hook_pattern"             # (h, n, n) softmax weights, rows = queries
ATTN_OUT = "hook_attn_out"                # (n, d) attention-branch output
MLP_OUT = "hook_mlp_out"                  # (n, d) MLP-branch output
ATTN_NORM = "hook_attn_out_norm"          # (n,) per-token L2 norm of the attention branch
MLP_NORM = "hook_mlp_out_norm"            # (n,) per-token L2 norm of the MLP branch
RESID_POST = "hook_resid_post"            # (n, d) residual stream out of block l
BLOCK_HOOKS = (RESID_PRE, KEYS, VALUES, ATTN_SCORES, PATTERN, ATTN_OUT, MLP_OUT, RESID_POST)
REACHED = {RESID_PRE: 0, PATTERN: MAPS, ATTN_OUT: FEED_FORWARD}   # models.reached
STOP_AFTER = (RESID_PRE, ATTN_OUT, MLP_OUT)   # where a Recorder asks whether to stop
NORM_OF = {ATTN_OUT: ATTN_NORM, MLP_OUT: MLP_NORM}
# Once per forward:
EMBED = "hook_embed"                      # (n, d) token embeddings
POS_EMBED = "hook_pos_embed"              # (n, d) additive positional encoding
FINAL = "ln_final.hook_normalized"        # (n, d) after a pre-norm decoder's final norm


def block_hook(layer: int, hook: str) -> str:
    """The full name of ``hook`` in block ``layer`` (0-based): "blocks.2.hook_mlp_out"."""
    return f"blocks.{layer}.{hook}"


class HookPoint(nn.Module):
    """The identity, named by its place in the model, that a Recorder can watch.

    A watching Recorder is told each value directly: a torch forward hook on each point
    takes nn.Module's slow call path (its cost: benchmarks/README.md); torch hooks can
    still be registered on it as on any module.
    """

    def __init__(self):
        super().__init__()
        self.name: str | None = None
        self.recorder: Recorder | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.recorder is not None:
            self.recorder.record(self.name, x)
        return x

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        # nn.Module.__call__ costs ~3 us a call (34 points a forward); it is taken only
        # when torch hooks are registered on this point or on every module
        if (self._forward_hooks or self._forward_pre_hooks
                or nn.modules.module._global_forward_hooks
                or nn.modules.module._global_forward_pre_hooks):
            return super().__call__(x)
        return self.forward(x)


def hook_points(root: nn.Module) -> dict[str, HookPoint]:
    """Every HookPoint under ``root`` by its path, each told its name."""
    points = {}
    for name, module in root.named_modules():
        if isinstance(module, HookPoint):
            module.name = name
            points[name] = module
    return points


def token_norms(value: torch.Tensor) -> torch.Tensor:
    """(..., n, d) -> (..., n) the L2 norm of each token's vector, as numpy takes it (the
    views' numbers are numpy's)."""
    return torch.from_numpy(np.linalg.norm(value.numpy(), axis=-1))


def first(output):
    """A module's main output: the first item of a tuple, else the output itself."""
    return output[0] if isinstance(output, tuple) else output


class Recorder:
    """What named modules see during one forward, by name.

    ``watch`` has HookPoints report to it; ``tap`` attaches a torch forward hook (or
    pre-hook) that records any module's output (or input) under a name. Leaving the
    ``with`` block (or ``close``) detaches it from all of them. Recording a block's
    input or the output of one of its branches (STOP_AFTER) asks ``should_stop``; True
    raises errors.Cancelled and so abandons the forward.

    Each block's attention weights (PATTERN) go to ``maps(layer, value)`` when given
    (and are not kept), else into a LayerMaps store of ``layers`` layers as they pass
    (``self.maps``; models.maps). Pre-softmax scores (ATTN_SCORES) are kept, as a copy,
    only with ``scores``. The branches' outputs (ATTN_OUT, MLP_OUT) are kept with
    ``branches`` "whole", only their per-token norms (ATTN_NORM, MLP_NORM) with
    "norms" (the views read no more of them). With ``trim`` (a long input) the heap's
    freed pages are given back to the system after each block (boot.trim_heap), and
    blocks from 1 MB on are mapped meanwhile (boot.keep_heap_pages): a long input's
    layers otherwise leave holes in the heap that the next layer does not fill.
    """

    def __init__(self, should_stop: Callable[[], bool] | None = None,
                 layers: int | None = None, maps: Callable | None = None,
                 scores: bool = False, branches: str = "whole", trim: bool = False):
        self.values: dict[str, torch.Tensor] = {}
        self._branches = branches
        self._trim = trim
        keep_heap_pages(long=trim)
        self.maps = maps if maps is not None or layers is None else LayerMaps(layers)
        self._scores = scores
        self._should_stop = should_stop
        self._layers = layers
        self._handles: list = []
        self._points: list[HookPoint] = []

    def record(self, name: str, value: torch.Tensor) -> None:
        part = REACHED.get(name.split(".", 2)[-1], -1)      # "blocks.{l}.hook_..."
        if self._layers and part >= 0 and name.startswith("blocks."):
            # a block entered, its maps kept, its feed-forward: told as it goes (a
            # long input's block took 3 s, 1.9 s of it keeping its maps)
            reach(int(name.split(".")[1]), self._layers, part)
        if name.endswith(PATTERN) and self.maps is not None:
            layer = int(name.split(".")[1])                  # "blocks.{l}.attn.hook_pattern"
            if isinstance(self.maps, LayerMaps):              # told by head on its way
                self.maps.put(layer, value, self._layers and (
                    lambda head, heads: reach(layer, self._layers, MAPS, (head, heads))))
            else:
                self.maps(layer, value)
        elif name.endswith((ATTN_OUT, MLP_OUT)) and self._branches != "whole":
            branch = ATTN_OUT if name.endswith(ATTN_OUT) else MLP_OUT
            self.values[name.removesuffix(branch) + NORM_OF[branch]] = token_norms(value)
        elif not name.endswith(ATTN_SCORES):
            self.values[name] = value
        elif self._scores:                  # a copy: the model may go on in place
            self.values[name] = value.clone()
        if self._trim and name.endswith(RESID_POST):
            trim_heap(TRIM_FROM)
        if (self._should_stop is not None and name.endswith(STOP_AFTER)
                and self._should_stop()):
            raise Cancelled("superseded by a newer request")

    def tap(self, module: nn.Module, name: str, pick: Callable = first,
            before: bool = False) -> None:
        """Record ``pick(output)`` of each call of ``module`` as ``name``; with ``before``,
        ``pick(args, kwargs)`` of its inputs instead."""
        if before:
            def on_input(_module, args, kwargs):
                self.record(name, pick(args, kwargs))
            handle = module.register_forward_pre_hook(on_input, with_kwargs=True)
        else:
            def on_output(_module, _args, output):
                self.record(name, pick(output))
            handle = module.register_forward_hook(on_output)
        self._handles.append(handle)

    def watch(self, points: dict[str, HookPoint]) -> "Recorder":
        """Record what every HookPoint of ``points`` sees, under its name."""
        for name, point in points.items():
            if point.name != name:
                point.name = name
            # object's setattr: nn.Module's checks for parameters and submodules are
            # not needed here and cost (benchmarks/README.md)
            object.__setattr__(point, "recorder", self)
            self._points.append(point)
        return self

    def close(self) -> None:
        for handle in self._handles:
            handle.remove()
        for point in self._points:
            if point.recorder is self:
                object.__setattr__(point, "recorder", None)
        self._handles.clear()
        self._points.clear()

    def __enter__(self) -> "Recorder":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _stack(values: dict, names: list[str]) -> np.ndarray | None:
    """The recorded tensors ``names`` (each of one shape) as one array, or None if any is
    missing; they leave ``values``."""
    if not names or not all(name in values for name in names):
        return None
    return torch.stack([values.pop(name) for name in names]).numpy()


def trace_from(recorder: Recorder, n_layers: int, tokens: tuple[str, ...],
               position_ids: np.ndarray, extras: dict) -> Trace:
    """The Trace of one recorded forward (the recorder gives up its values).

    hidden[0] is block 0's input and hidden[l] block l's output, except that a recorded
    final norm stands for the last: what transformers reports as its last hidden state.
    """
    values = recorder.values
    per_layer = lambda hook: [block_hook(l, hook) for l in range(n_layers)]   # noqa: E731

    maps = recorder.maps
    if isinstance(maps, LayerMaps):      # (L, h, m, n): the array, or the store itself
        attention = maps.array if maps.array is not None else maps
    else:                                # handed on as they passed (or not recorded)
        attention = _stack(values, per_layer(PATTERN))
    last = [FINAL] if FINAL in values else per_layer(RESID_POST)[-1:]
    hidden = _stack(values, per_layer(RESID_PRE)[:1] + per_layer(RESID_POST)[:-1] + last)
    encodings = values.get(POS_EMBED)
    return Trace(
        tokens=tuple(tokens),
        position_ids=position_ids,
        embeddings=values[EMBED].numpy(),                     # (n, d)
        encodings=None if encodings is None else encodings.numpy(),
        hidden=hidden,                                        # (L+1, n, d)
        attention=attention,                                  # (L, h, n, n) or None
        scores=_stack(values, per_layer(ATTN_SCORES)),        # (L, h, n, n) or None
        attn_out=_stack(values, per_layer(ATTN_OUT)),         # (L, n, d) or None
        mlp_out=_stack(values, per_layer(MLP_OUT)),           # (L, n, d) or None
        attn_norm=_stack(values, per_layer(ATTN_NORM)),       # (L, n) or None
        mlp_norm=_stack(values, per_layer(MLP_NORM)),         # (L, n) or None
        extras=extras,
    )
