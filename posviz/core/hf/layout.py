"""Where each Hugging Face family keeps the values posviz records, tapped under the
names of core.hooks.

transformers records its own hidden states and attentions the same way (forward hooks
on the layer and attention classes its ``_can_record_outputs`` names,
``utils/output_capturing.py``); posviz taps the same modules, plus the two branches of
each block, by name. Values are copied to the CPU as they pass (a no-op there).
"""
from __future__ import annotations

from ..hooks import (ATTN_OUT, EMBED, MLP_OUT, PATTERN, POS_EMBED, RESID_POST, RESID_PRE,
                     Recorder, block_hook, first)


def _unbatched(output):
    """A module's main output without its batch axis: (1, n, d) -> (n, d). (OPT's MLP
    runs on the flattened (n, d) tokens: kept as it is.)"""
    value = first(output)
    return (value[0] if value.dim() == 3 else value).cpu()


def _weights(output):
    """An eager attention module returns (output, [bias,] weights):
    weights (1, h, n, n) -> (h, n, n)."""
    return output[-1][0].cpu()


def _layer_input(args, kwargs):
    """The hidden states a layer is called with: (1, n, d) -> (n, d)."""
    return (args[0] if args else kwargs["hidden_states"])[0].cpu()


def embeddings(model, family: str) -> tuple:
    """(token embedding, learned position embedding or None) modules of the base model."""
    if family in ("bert", "roberta", "distilbert"):
        return model.embeddings.word_embeddings, model.embeddings.position_embeddings
    if family == "gpt2":
        return model.wte, model.wpe
    if family == "opt":
        return model.decoder.embed_tokens, model.decoder.embed_positions
    if family == "gpt_neox":
        return model.embed_in, None
    if family == "bloom":
        return model.word_embeddings, None
    if family == "t5":
        return model.encoder.embed_tokens, None
    if family == "modernbert":
        return model.embeddings.tok_embeddings, None
    return model.embed_tokens, None


def blocks(model, family: str) -> list[tuple]:
    """Per block: (layer, attention module returning (output, ..., weights), attention
    branch, MLP branch); the branches' outputs add to the residual stream (post-norm
    encoders: the projections before each add & norm)."""
    if family in ("bert", "roberta"):
        return [(layer, layer.attention.self, layer.attention.output.dense, layer.output.dense)
                for layer in model.encoder.layer]
    if family == "distilbert":
        return [(layer, layer.attention, layer.attention.out_lin, layer.ffn.lin2)
                for layer in model.transformer.layer]
    if family == "gpt2":
        return [(block, block.attn, block.attn, block.mlp) for block in model.h]
    if family == "opt":
        return [(layer, layer.self_attn, layer.self_attn, layer.fc2)
                for layer in model.decoder.layers]
    if family == "gpt_neox":
        return [(layer, layer.attention, layer.attention, layer.mlp) for layer in model.layers]
    if family == "bloom":       # its attention and MLP add the residual themselves
        return [(block, block.self_attention, block.self_attention.dense,
                 block.mlp.dense_4h_to_h) for block in model.h]
    if family == "t5":
        return [(block, block.layer[0].SelfAttention, block.layer[0].SelfAttention,
                 block.layer[1].DenseReluDense) for block in model.encoder.block]
    if family == "modernbert":
        return [(layer, layer.attn, layer.attn, layer.mlp) for layer in model.layers]
    return [(layer, layer.self_attn, layer.self_attn, layer.mlp) for layer in model.layers]


def _batched(batch: int):
    """Picks that keep the batch axis of a forward of ``batch`` sequences: (B, n, d),
    weights (B, h, n, n); OPT's flattened (B*n, d) MLP output back to (B, n, d)."""
    def output(out):
        value = first(out)
        return (value if value.dim() == 3 else value.view(batch, -1, value.shape[-1])).cpu()

    def weights(out):
        return out[-1].cpu()

    def layer_input(args, kwargs):
        return (args[0] if args else kwargs["hidden_states"]).cpu()
    return output, weights, layer_input


def tap(recorder: Recorder, model, family: str, batch: int | None = None) -> Recorder:
    """Tap the base ``model``'s modules into ``recorder`` under the hook names. (The
    final hidden state is recorded from the model's output: see HFBackend.record.)
    With ``batch``, the values keep their leading batch axis of that size."""
    output, weights, layer_input = (_unbatched, _weights, _layer_input) if batch is None \
        else _batched(batch)
    token_table, position_table = embeddings(model, family)
    recorder.tap(token_table, EMBED, output)
    if position_table is not None:
        recorder.tap(position_table, POS_EMBED, output)
    for l, (layer, attention, attn_branch, mlp_branch) in enumerate(blocks(model, family)):
        recorder.tap(layer, block_hook(l, RESID_PRE), layer_input, before=True)
        recorder.tap(attention, block_hook(l, PATTERN), weights)
        recorder.tap(attn_branch, block_hook(l, ATTN_OUT), output)
        recorder.tap(mlp_branch, block_hook(l, MLP_OUT), output)
        recorder.tap(layer, block_hook(l, RESID_POST), output)
    return recorder
