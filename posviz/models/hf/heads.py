"""A transformers model's language-model head, as its family record declares it."""
from __future__ import annotations


def head_logits(model, family, hidden):
    """(k, d) last hidden states -> (k, V) logits through the model's own head (where
    ``family``, a models.hf.families.Family, says it is), soft-capped as its
    configuration says (Gemma 2)."""
    logits = family.logits(model, hidden)
    cap = getattr(model.config, "final_logit_softcapping", None)
    if cap:
        logits = (logits / cap).tanh() * cap
    return logits
