"""Where a transformers model keeps its language-model head, by its class."""
from __future__ import annotations


def head_logits(model, hidden):
    """(k, d) last hidden states -> (k, V) logits through the model's own head."""
    if hasattr(model, "vocab_projector"):            # DistilBERT
        x = model.vocab_layer_norm(model.activation(model.vocab_transform(hidden)))
        logits = model.vocab_projector(x)
    elif hasattr(model, "decoder") and hasattr(model, "head"):   # ModernBERT
        logits = model.decoder(model.head(hidden))
    else:
        for name in ("lm_head", "embed_out", "cls"):
            module = getattr(model, name, None)
            if module is not None:
                logits = module(hidden)
                break
        else:
            raise ValueError(f"no language-model head found in {type(model).__name__}")
    cap = getattr(model.config, "final_logit_softcapping", None)
    if cap:
        logits = (logits / cap).tanh() * cap
    return logits
