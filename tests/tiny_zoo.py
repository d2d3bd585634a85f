"""A zoo of three tiny causal checkpoints trained alike on the committed sample
(test_training.SAMPLE), made once per test run and shared by the modules that use it."""
from __future__ import annotations

import functools
import tempfile
from pathlib import Path

from posviz.models.training.checkpoint import Recipe
from posviz.models.config import ModelConfig

KINDS = ("none", "learned", "alibi")
SAMPLE = Path(__file__).with_name("data") / "kjv-genesis-1-12.txt"
RECIPE = Recipe(corpus=str(SAMPLE), vocab=400, length=16, batch=8, steps=30, warmup=3)
CONFIG = ModelConfig(layers=2, heads=2, d_model=32, mask="causal")


@functools.cache
def tiny_zoo_folder() -> Path:
    """The folder, trained on first use (a temporary folder, removed at exit)."""
    from posviz.models.training.train import train
    root = Path(_folder.name)
    tokenizer = None
    for kind in KINDS:
        checkpoint, _ = train(CONFIG.replace(pe=kind), RECIPE, root / kind, tokenizer)
        tokenizer = checkpoint.path("tokenizer")
    return root


_folder = tempfile.TemporaryDirectory(prefix="posviz-tiny-zoo-")
