"""The Llama family's eager attention with its (B, h, n, n) scores overwritten in place.

transformers' eager attention holds two n × n buffers per step (the scores and their
scaled, masked or softmaxed copy); this one holds the scores and one head's softmax.
The operations and their order are the family's own, so the numbers are the same bit
for bit (tests/test_hf_attention.py). It is registered under LEAN with transformers'
attention and mask interfaces (their documented way to add an implementation) and
chosen by Family.lean_attention; SmolLM2's ``report`` at 2,350 tokens peaks about
0.2 GB lower with it (benchmarks/README.md).
"""
from __future__ import annotations

LEAN = "posviz_eager"


def lean_eager_attention(module, query, key, value, attention_mask, scaling: float,
                         dropout: float = 0.0, **kwargs):
    """modeling_llama.eager_attention_forward, in place: query (B, h, n, d_head), key and
    value (B, kv_heads, n, d_head), an additive mask (B, 1, n, n) or None; returns the
    output (B, n, h, d_head) and the weights (B, h, n, n)."""
    import torch
    from transformers.models.llama.modeling_llama import repeat_kv

    keys = repeat_kv(key, module.num_key_value_groups)
    values = repeat_kv(value, module.num_key_value_groups)
    weights = torch.matmul(query, keys.transpose(2, 3)).mul_(scaling)     # (B, h, n, n)
    if attention_mask is not None:
        weights.add_(attention_mask)
    for head in range(weights.shape[1]):               # one head's softmax at a time
        weights[:, head] = torch.softmax(weights[:, head], dim=-1, dtype=torch.float32)
    weights = torch.nn.functional.dropout(weights, p=dropout, training=module.training)
    output = torch.matmul(weights, values).transpose(1, 2).contiguous()
    return output, weights


def register() -> str:
    """Make LEAN known to transformers (idempotent); returns its name."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, eager_mask

    AttentionInterface.register(LEAN, lean_eager_attention)
    AttentionMaskInterface.register(LEAN, eager_mask)
    return LEAN
