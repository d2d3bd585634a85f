"""Families' eager attention with its (B, h, n, n) scores overwritten in place.

transformers' eager attention holds two or three n × n buffers per step (the scores and
their scaled, masked or softmaxed copies). Llama's here holds the scores and one head's
softmax: SmolLM2's ``report`` at 2,350 tokens peaks about 0.2 GB lower with it. BERT's
scales and softmaxes its scores where they are: MiniLM's evaluation at n = 512 took
3-19 % less CPU (benchmarks/README.md). The operations and their order are each
family's own, so the numbers are the same bit for bit (tests/test_hf_attention.py).
Each is registered under its name with transformers' attention and mask interfaces
(their documented way to add an implementation) and chosen by Family.lean_attention.
"""
from __future__ import annotations

LEAN = "posviz_eager"                   # the Llama family's
BY_HEAD = 9 * 2048 * 2048               # scores from which heads are computed a few at a
HEADS_AT_ONCE = 3                       # time (_by_head), told as they are done
LEAN_BERT = "posviz_eager_bert"         # BERT's


def lean_eager_attention(module, query, key, value, attention_mask, scaling: float,
                         dropout: float = 0.0, **kwargs):
    """modeling_llama.eager_attention_forward, in place: query (B, h, n, d_head), key and
    value (B, kv_heads, n, d_head), an additive mask (B, 1, n, n) or None; returns the
    output (B, n, h, d_head) and the weights (B, h, n, n)."""
    import torch
    from transformers.models.llama.modeling_llama import repeat_kv

    keys = repeat_kv(key, module.num_key_value_groups)
    values = repeat_kv(value, module.num_key_value_groups)
    if not module.training and query.shape[1] * query.shape[2] * keys.shape[2] >= BY_HEAD:
        return _by_head(query, keys, values, attention_mask, scaling)
    weights = torch.matmul(query, keys.transpose(2, 3)).mul_(scaling)     # (B, h, n, n)
    if attention_mask is not None:
        weights.add_(attention_mask)
    for head in range(weights.shape[1]):               # one head's softmax at a time
        weights[:, head] = torch.softmax(weights[:, head], dim=-1, dtype=torch.float32)
    weights = torch.nn.functional.dropout(weights, p=dropout, training=module.training)
    output = torch.matmul(weights, values).transpose(1, 2).contiguous()
    return output, weights


def _by_head(query, keys, values, attention_mask, scaling: float):
    """lean_eager_attention's numbers (no dropout: not training) a few heads at a time
    (HEADS_AT_ONCE; one at a time took 1.5 times as long), each told as it is done
    (models.reached: SmolLM2's attention at 5,107 tokens took 3-7 s a layer with
    nothing said)."""
    import torch

    from ..reached import reach
    batch, heads, n, m = *query.shape[:3], keys.shape[2]
    weights = query.new_empty((batch, heads, n, m))
    output = query.new_empty((batch, heads, n, values.shape[-1]))
    for first in range(0, heads, HEADS_AT_ONCE):
        some = slice(first, min(first + HEADS_AT_ONCE, heads))
        for row in range(batch):        # (heads, n, m) blocks whole in memory: the
            scores = weights[row, some]                 # batched matmul's numbers
            torch.matmul(query[row, some], keys[row, some].transpose(1, 2), out=scores)
            scores.mul_(scaling)
            if attention_mask is not None:
                scores.add_(attention_mask[row, some] if attention_mask.shape[1] > 1
                            else attention_mask[row])
            for head in range(some.start, some.stop):
                weights[row, head] = torch.softmax(weights[row, head], dim=-1,
                                                   dtype=torch.float32)
            torch.matmul(weights[row, some], values[row, some], out=output[row, some])
        reach(0, 0, within=(some.stop, heads))
    return output.transpose(1, 2).contiguous(), weights


def lean_bert_attention(module, query, key, value, attention_mask, scaling=None,
                        dropout: float = 0.0, **kwargs):
    """modeling_bert.eager_attention_forward with the scores scaled, masked and
    softmaxed where they are: query, key and value (B, h, n, d_head), an additive mask
    broadcast to (B, h, n, n) or None; returns the output (B, n, h, d_head) and the
    weights (B, h, n, n). Under autograd (nothing of posviz asks for it), BERT's own."""
    import torch
    from transformers.models.bert.modeling_bert import eager_attention_forward

    if torch.is_grad_enabled() and query.requires_grad:
        return eager_attention_forward(module, query, key, value, attention_mask, scaling,
                                       dropout, **kwargs)
    if scaling is None:
        scaling = query.size(-1) ** -0.5
    weights = torch.matmul(query, key.transpose(2, 3)).mul_(scaling)      # (B, h, n, n)
    if attention_mask is not None:
        if (attention_mask.dtype == weights.dtype and torch.broadcast_shapes(
                weights.shape, attention_mask.shape) == weights.shape):
            weights.add_(attention_mask)
        else:                           # a mask that widens or promotes: as BERT does
            weights = weights + attention_mask
    torch.softmax(weights, dim=-1, out=weights)        # each row in place
    weights = torch.nn.functional.dropout(weights, p=dropout, training=module.training)
    output = torch.matmul(weights, value).transpose(1, 2).contiguous()
    return output, weights


IMPLEMENTATIONS = {"llama": (LEAN, lean_eager_attention),
                   "bert": (LEAN_BERT, lean_bert_attention)}


def register(kind: str = "llama") -> str:
    """Make the lean attention of ``kind`` (Family.lean_attention) known to
    transformers (idempotent); returns its name."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    name, function = IMPLEMENTATIONS[kind]
    AttentionInterface.register(name, function)
    AttentionMaskInterface.register(name, eager_mask)
    return name
