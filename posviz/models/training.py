"""Training the built-in model as a causal language model (``posviz train``).

The InstrumentedTransformer the window runs, given a vocabulary (a byte-level BPE
learnt from the corpus's training part, models.bpe), learns to predict the next token
of random windows of that part: torch's AdamW, a linear warm-up then a cosine decay
(torch's schedulers), torch's gradient clipping, torch.utils.data for the windows. One
seed draws the first weights and orders the windows. The held-out part gives the
perplexity recorded with the weights (models.checkpoint).
"""
from __future__ import annotations

import math
import platform
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Callable

import numpy as np
import torch
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset, RandomSampler

from ..errors import PosvizInputError
from .bpe import Tokenizer
from .checkpoint import Checkpoint, Recipe, save
from .config import ModelConfig
from .corpus import read_corpus, token_counts, token_stream, unigram_perplexity
from .transformer import InstrumentedTransformer


@dataclass(frozen=True)
class Progress:
    step: int
    steps: int
    loss: float                    # mean training loss since the last report
    tokens_per_second: float
    seconds_left: float


class Windows(Dataset):
    """Every window of length + 1 consecutive tokens of a stream: a step's inputs are
    its first ``length`` tokens, their targets its last ``length``."""

    def __init__(self, ids: np.ndarray, length: int):
        self.ids = torch.from_numpy(np.ascontiguousarray(ids))             # (N,)
        self.length = length

    def __len__(self) -> int:
        return max(len(self.ids) - self.length, 0)

    def __getitem__(self, start: int) -> torch.Tensor:
        return self.ids[start:start + self.length + 1]                     # (length + 1,)


def trained_config(config: ModelConfig, length: int) -> ModelConfig:
    """The configuration a model trained at ``length`` tokens has: a learned table of
    exactly that many positions (what it was trained to use)."""
    if config.mask != "causal":
        raise PosvizInputError("posviz train trains a causal language model: give "
                               "--mask causal")
    return config.replace(max_len=length) if config.table_length else config


@torch.inference_mode()
def perplexity(model: InstrumentedTransformer, ids: np.ndarray, length: int,
               tokens: int | None = None, batch: int = 8) -> float:
    """exp of the mean next-token loss on the stream ``ids`` cut into non-overlapping
    windows of ``length`` predictions (Press et al. 2022's non-overlapping evaluation):
    the first ``tokens`` predictions (a multiple of ``length``), else every whole
    window. PosvizInputError when a window is beyond the model's positions."""
    count = (len(ids) - 1) // length * length if tokens is None else tokens
    if count <= 0 or count % length or count >= len(ids):
        raise PosvizInputError(f"{len(ids)} held-out tokens cannot make windows of "
                               f"{length} predictions")
    stream = torch.from_numpy(np.ascontiguousarray(ids))
    inputs, targets = stream[:count].view(-1, length), stream[1:count + 1].view(-1, length)
    total = 0.0
    for k in range(0, inputs.shape[0], batch):
        logits = model.logits(model.hidden(inputs[k:k + batch]))         # (b, length, V)
        total += F.cross_entropy(logits.flatten(0, 1).double(),
                                 targets[k:k + batch].flatten(), reduction="sum").item()
    return math.exp(total / count)


def _optimizer(model: torch.nn.Module, recipe: Recipe):
    """AdamW, decaying matrices only; warm-up then cosine decay to 10 % of the peak."""
    params = [p for p in model.parameters() if p.requires_grad]
    groups = [{"params": [p for p in params if p.dim() >= 2],
               "weight_decay": recipe.weight_decay},
              {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}]
    optimizer = torch.optim.AdamW(groups, lr=recipe.lr, betas=(0.9, 0.95))
    warmup = min(recipe.warmup, recipe.steps - 1)
    decay = torch.optim.lr_scheduler.CosineAnnealingLR(
        optimizer, T_max=max(recipe.steps - warmup, 1), eta_min=0.1 * recipe.lr)
    if warmup == 0:
        return optimizer, decay
    rise = torch.optim.lr_scheduler.LinearLR(optimizer, start_factor=0.01,
                                             total_iters=warmup)
    return optimizer, torch.optim.lr_scheduler.SequentialLR(
        optimizer, [rise, decay], milestones=[warmup])


def train(config: ModelConfig, recipe: Recipe, out: str | Path,
          tokenizer: str | Path | None = None,
          progress: Callable[[Progress], None] | None = None,
          say: Callable[[str], None] | None = None
          ) -> tuple[Checkpoint, InstrumentedTransformer]:
    """Train the built-in model of ``config`` with ``recipe``, write it to ``out``;
    returns the checkpoint written and the model trained. ``tokenizer``: a
    tokenizer.json to use instead of learning one. Ctrl+C (KeyboardInterrupt) stops the
    steps: what was trained is evaluated and written, its record marked interrupted."""
    say = say or (lambda text: None)
    problems = recipe.problems()
    if problems:
        raise PosvizInputError(problems[0])
    config = trained_config(config, recipe.length).validate()
    corpus = read_corpus(recipe.corpus)
    if tokenizer is None:
        say(f"learning a BPE of {recipe.vocab} tokens from {corpus.short}")
        bpe = Tokenizer.train(corpus.train, recipe.vocab)
    else:
        bpe = Tokenizer.read(tokenizer)
    train_ids = token_stream(bpe, corpus.train)                            # (N,)
    held_ids = token_stream(bpe, corpus.held_out)                          # (M,)
    if len(train_ids) <= recipe.length or len(held_ids) <= recipe.length:
        raise PosvizInputError(f"the corpus is too short for windows of {recipe.length} "
                               f"tokens ({len(train_ids)} to train on, {len(held_ids)} "
                               f"held out)")
    say(f"{len(train_ids)} tokens to train on, {len(held_ids)} held out")
    model = InstrumentedTransformer(config, vocab=bpe.size)
    for p in model.parameters():
        p.requires_grad_(True)
    optimizer, schedule = _optimizer(model, recipe)
    windows = Windows(train_ids, recipe.length)
    order = torch.Generator().manual_seed(config.seed)
    loader = DataLoader(windows, batch_size=recipe.batch, sampler=RandomSampler(
        windows, num_samples=recipe.steps * recipe.batch, generator=order))
    every = max(recipe.steps // 100, 1)            # one point of the loss curve
    curve, losses, step, interrupted = [], [], 0, False
    started = last = time.monotonic()
    try:
        for batch in loader:                                               # (B, n + 1)
            logits = model.logits(model.hidden(batch[:, :-1]))             # (B, n, V)
            loss = F.cross_entropy(logits.flatten(0, 1), batch[:, 1:].flatten())
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), recipe.clip)
            optimizer.step()
            schedule.step()
            step += 1
            losses.append(loss.item())
            if step % every == 0 or step == recipe.steps:
                curve.append([step, float(np.mean(losses[-every:]))])
            now = time.monotonic()
            if progress is not None and (now - last > 10 or step in (1, recipe.steps)):
                last = now
                rate = step * recipe.batch * recipe.length / (now - started)
                progress(Progress(step, recipe.steps, float(np.mean(losses[-every:])),
                                  rate, (now - started) / step * (recipe.steps - step)))
    except KeyboardInterrupt:
        interrupted = True
        say(f"interrupted at step {step}: evaluating and saving what was trained")
    seconds = time.monotonic() - started
    if step == 0:
        raise PosvizInputError("interrupted before the first step: nothing to save")
    for p in model.parameters():
        p.requires_grad_(False)
    say("measuring the held-out perplexity")
    held = perplexity(model, held_ids, recipe.length)
    counts = token_counts(train_ids, bpe.size)
    count = (len(held_ids) - 1) // recipe.length * recipe.length
    record = {
        "recipe": asdict(recipe), "config": config.to_dict(),
        "data": {**corpus.describe(), "tokenizer": "byte-level BPE",
                 "vocab": bpe.size, "train_tokens": int(len(train_ids)),
                 "held_out_tokens": int(len(held_ids))},
        "steps": step, "interrupted": interrupted,
        "final_loss": float(np.mean(losses[-every:])),
        "loss_curve": curve,
        "held_out_perplexity": held,
        "unigram_perplexity": unigram_perplexity(counts, held_ids[1:count + 1]),
        "seconds": round(seconds, 1),
        "tokens_per_second": round(step * recipe.batch * recipe.length / seconds, 1),
        "machine": {"threads": torch.get_num_threads(), "torch": torch.__version__,
                    "processor": platform.machine()},
        "token_counts": counts.tolist(),
    }
    return save(out, model, bpe, record, corpus.held_out, recipe.store), model
