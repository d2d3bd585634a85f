"""A run's stage in fewer words, for the Experiments tab's two progress lines at a small
window: at 1024 × 700 they cut the stage's words ("fitting the probe per layer, 5…: 13
of 25 done"); each shorter form still says the whole stage, no word cut."""
from __future__ import annotations

import re

# (pattern, its fewer words), applied one after another: each step a shorter form
SHORTER = (
    (r"fitting the probe per layer, (\d+) folds each", r"fitting per layer, \1 folds"),
    (r"shifting every position id", "shifting positions"),
    (r"held-out perplexity", "perplexity"),
    (r"the (?:trained )?(\S+) checkpoint\b", r"trained \1"),
    (r"random texts of (\d+) tokens through the built-in model", r"texts of \1 tokens "
     "through the model"),
    (r"the built-in model", "the model"),
    (r" on the window's loaded weights", " (the window's)"),
    (r"reading the GGUF file's header, vocabulary and tensor names", "reading the GGUF "
     "header"),
    (r"reading the GGUF file again, for its weights", "reading the GGUF weights"),
    (r"matching the GGUF file's tensors to the model's modules", "matching tensors"),
    (r"building the tokenizer from the GGUF file's vocabulary", "building the tokenizer"),
    (r"DroPE: RoPE dropped after training, recalibrated without positions", "DroPE"),
    (r"\(quadratic, bidirectional\)", "(quadratic, bidir.)"),
    (r"\(linear, bidirectional\)", "(linear, bidir.)"),
    (r" left of the conversion", " left of it"),
)


def fewer_stage_words(text: str) -> tuple[str, ...]:
    """``text`` (a stage's words, how far after them) in fewer words, longest first
    (each SHORTER step in turn; those that change nothing left out)."""
    shorts, short = [], text
    for pattern, fewer in SHORTER:
        shorter = re.sub(pattern, fewer, short)
        if shorter != short:
            shorts.append(shorter)
            short = shorter
    return tuple(shorts)
