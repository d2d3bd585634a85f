"""The values posviz records, tapped on a Hugging Face model's modules (where its
family record says they are) under the names of models.hooks.

transformers records its own hidden states and attentions the same way (forward hooks
on the layer and attention classes its ``_can_record_outputs`` names,
``utils/output_capturing.py``); posviz taps the same modules, plus the two branches of
each block, by name. Values are copied to the CPU as they pass (a no-op there), a
half-precision model's as float32 (numpy has no bfloat16).
"""
from __future__ import annotations

from ..hooks import (ATTN_OUT, EMBED, MLP_OUT, PATTERN, POS_EMBED, RESID_POST, RESID_PRE,
                     Recorder, block_hook, first)
from .families import Family


def host(value):
    """A recorded tensor on the CPU, in float32 when it was computed in half precision."""
    value = value.cpu()
    return value.float() if value.dtype.is_floating_point and value.itemsize < 4 else value


def _unbatched(output):
    """A module's main output without its batch axis: (1, n, d) -> (n, d). (OPT's MLP
    runs on the flattened (n, d) tokens: kept as it is.)"""
    value = first(output)
    return host(value[0] if value.dim() == 3 else value)


def _weights(output):
    """An eager attention module returns (output, [bias,] weights):
    weights (1, h, n, n) -> (h, n, n)."""
    return host(output[-1][0])


def _layer_input(args, kwargs):
    """The hidden states a layer is called with: (1, n, d) -> (n, d)."""
    return host((args[0] if args else kwargs["hidden_states"])[0])


def _batched(batch: int):
    """Picks that keep the batch axis of a forward of ``batch`` sequences: (B, n, d),
    weights (B, h, n, n); OPT's flattened (B*n, d) MLP output back to (B, n, d)."""
    def output(out):
        value = first(out)
        return host(value if value.dim() == 3 else value.view(batch, -1, value.shape[-1]))

    def weights(out):
        return host(out[-1])

    def layer_input(args, kwargs):
        return host(args[0] if args else kwargs["hidden_states"])
    return output, weights, layer_input


def tap(recorder: Recorder, model, family: Family, batch: int | None = None) -> Recorder:
    """Tap the base ``model``'s modules into ``recorder`` under the hook names. (The
    final hidden state is recorded from the model's output: see HFBackend.record.)
    With ``batch``, the values keep their leading batch axis of that size."""
    output, weights, layer_input = (_unbatched, _weights, _layer_input) if batch is None \
        else _batched(batch)
    token_table, position_table = family.embeddings(model)
    recorder.tap(token_table, EMBED, output)
    if position_table is not None:
        recorder.tap(position_table, POS_EMBED, output)
    for l, (layer, attention, attn_branch, mlp_branch) in enumerate(family.blocks(model)):
        recorder.tap(layer, block_hook(l, RESID_PRE), layer_input, before=True)
        recorder.tap(attention, block_hook(l, PATTERN), weights)
        recorder.tap(attn_branch, block_hook(l, ATTN_OUT), output)
        recorder.tap(mlp_branch, block_hook(l, MLP_OUT), output)
        recorder.tap(layer, block_hook(l, RESID_POST), output)
    return recorder
