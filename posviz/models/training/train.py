"""Training the built-in model as a causal language model (``posviz train``).

The InstrumentedTransformer the window runs, given a vocabulary (a byte-level BPE
learnt from the corpus's training part, models.training.bpe), learns to predict the next token
of random windows of that part: torch's AdamW, a linear warm-up then a cosine decay
(torch's schedulers), torch's gradient clipping, torch.utils.data for the windows. One
seed draws the first weights and orders the windows. The held-out part gives the
perplexity recorded with the weights (models.training.checkpoint).
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

from ...errors import PosvizInputError
from .bpe import Tokenizer
from .checkpoint import ARCHITECTURE, Checkpoint, Recipe, label, save
from ..config import ModelConfig
from .corpus import read_corpus, token_counts, token_stream, unigram_perplexity
from .order_use import order_use
from ..builtin.transformer import InstrumentedTransformer


ORDER_CURVE_WINDOWS = 100          # held-out windows of each point of the order-use curve


@dataclass(frozen=True)
class Progress:
    step: int
    steps: int
    loss: float                    # mean training loss since the last report
    tokens_per_second: float
    seconds_left: float


class Windows(Dataset):
    """Every window of consecutive tokens of a stream, as length + 1 tokens: a step's
    inputs are the first ``length``, their targets the last ``length``. With
    ``start_id`` a window starts with that token (the start of text) and then holds
    ``length`` tokens of the stream, so the model sees it at slot 0 of every input."""

    def __init__(self, ids: np.ndarray, length: int, start_id: int | None = None):
        self.ids = torch.from_numpy(np.ascontiguousarray(ids))             # (N,)
        self.length = length
        self.start = None if start_id is None else torch.tensor([start_id])
        self.taken = length + (start_id is None)          # stream tokens a window holds

    def __len__(self) -> int:
        return max(len(self.ids) - self.taken + 1, 0)

    def __getitem__(self, start: int) -> torch.Tensor:
        window = self.ids[start:start + self.taken]
        return window if self.start is None else torch.cat([self.start, window])  # (length + 1,)


def trained_config(config: ModelConfig, length: int) -> ModelConfig:
    """The configuration a model trained at ``length`` tokens has: a learned table of
    exactly that many positions (what it was trained to use)."""
    if config.mask != "causal":
        raise PosvizInputError(f"posviz train trains a causal language model: its mask "
                               f"must be causal (got {config.mask})")
    return config.replace(max_len=length) if config.table_length else config


@torch.inference_mode()
def perplexity(model: InstrumentedTransformer, ids: np.ndarray, length: int,
               tokens: int | None = None, batch: int = 8,
               start_id: int | None = None) -> float:
    """exp of the mean next-token loss on the stream ``ids`` cut into non-overlapping
    windows of ``length`` predictions (Press et al. 2022's non-overlapping evaluation):
    the first ``tokens`` predictions (a multiple of ``length``), else every whole
    window. With ``start_id`` each window's input starts with that token and every
    token of the stream is predicted, its window's first from the start token alone.
    PosvizInputError when a window is beyond the model's positions."""
    count = (len(ids) - 1) // length * length if tokens is None else tokens
    if count <= 0 or count % length or count >= len(ids):
        raise PosvizInputError(f"{len(ids)} held-out tokens cannot make windows of "
                               f"{length} predictions")
    stream = torch.from_numpy(np.ascontiguousarray(ids))
    if start_id is None:
        inputs, targets = stream[:count].view(-1, length), stream[1:count + 1].view(-1, length)
    else:
        targets = stream[:count].view(-1, length)                          # (W, length)
        inputs = torch.cat([torch.full((len(targets), 1), start_id), targets[:, :-1]], 1)
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


def initial_weights(model: InstrumentedTransformer, start: Checkpoint,
                    say: Callable[[str], None]) -> None:
    """Start ``model`` from the weights of the checkpoint ``start``: the same
    architecture but for the encoding, which may differ when neither has weights of
    its own (RoPE's weights recalibrated without positions: DroPE)."""
    differ = [name for name in ARCHITECTURE
              if name != "pe" and getattr(start.config, name) != getattr(model.cfg, name)]
    if differ or start.vocab != model.vocab:
        raise PosvizInputError(f"{start.folder}: its model is not this one but for its "
                               f"encoding ({label(start.config)}, vocabulary {start.vocab})")
    say(f"starting from the weights of {start.folder.name} ({start.config.pe})")
    start.load_weights(model)


def train(config: ModelConfig, recipe: Recipe, out: str | Path,
          tokenizer: str | Path | None = None,
          progress: Callable[[Progress], None] | None = None,
          say: Callable[[str], None] | None = None, order_every: int = 0
          ) -> tuple[Checkpoint, InstrumentedTransformer]:
    """Train the built-in model of ``config`` with ``recipe``, write it to ``out``;
    returns the checkpoint written and the model trained. ``tokenizer``: a
    tokenizer.json to use instead of learning one. ``order_every`` > 0: every that many
    steps, the use of order is measured on ORDER_CURVE_WINDOWS held-out windows (the
    time it takes is not counted as training). Ctrl+C (KeyboardInterrupt) stops the
    steps: what was trained is evaluated and written, its record marked interrupted."""
    say = say or (lambda text: None)
    problems = recipe.problems()
    if problems:
        raise PosvizInputError(problems[0])
    config = trained_config(config, recipe.length).validate()
    corpus = read_corpus(recipe.corpus)
    init = Checkpoint.read(recipe.init) if recipe.init else None
    if tokenizer is None and init is not None:
        tokenizer = init.path("tokenizer")             # the tokens its weights know
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
    start_id = bpe.end_id if recipe.start else None
    model = InstrumentedTransformer(config, vocab=bpe.size)
    if init is not None:
        initial_weights(model, init, say)
    for p in model.parameters():
        p.requires_grad_(True)
    optimizer, schedule = _optimizer(model, recipe)
    windows = Windows(train_ids, recipe.length, start_id)
    order = torch.Generator().manual_seed(config.seed)
    loader = DataLoader(windows, batch_size=recipe.batch, sampler=RandomSampler(
        windows, num_samples=recipe.steps * recipe.batch, generator=order))
    every = max(recipe.steps // 100, 1)            # one point of the loss curve
    curve, losses, step, interrupted = [], [], 0, False
    order_curve, measuring = [], 0.0               # [step, ratio]; seconds it took

    def measure_order() -> None:
        nonlocal measuring
        began = time.monotonic()
        model.eval()
        with torch.no_grad():
            use = order_use(lambda ids: model.logits(model.hidden(ids)[:, -1]), held_ids,
                            recipe.length, start_id, ORDER_CURVE_WINDOWS)
        model.train()
        order_curve.append([step, use.ratio])
        measuring += time.monotonic() - began
        say(f"step {step}: order use {use.ratio:.3f} (the last token's perplexity with "
            f"its context shuffled / in order, {ORDER_CURVE_WINDOWS} held-out windows)")

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
            if order_every and step % order_every == 0 and step < recipe.steps:
                measure_order()
            now = time.monotonic()
            if progress is not None and (now - last > 10 or step in (1, recipe.steps)):
                last = now
                spent = now - started - measuring
                rate = step * recipe.batch * recipe.length / spent
                progress(Progress(step, recipe.steps, float(np.mean(losses[-every:])),
                                  rate, spent / step * (recipe.steps - step)))
    except KeyboardInterrupt:
        interrupted = True
        say(f"interrupted at step {step}: evaluating and saving what was trained")
    seconds = time.monotonic() - started - measuring
    if step == 0:
        raise PosvizInputError("interrupted before the first step: nothing to save")
    for p in model.parameters():
        p.requires_grad_(False)
    say("measuring the held-out perplexity and the use of order")
    held = perplexity(model, held_ids, recipe.length, start_id=start_id)
    uses_order = order_use(lambda ids: model.logits(model.hidden(ids)[:, -1]), held_ids,
                           recipe.length, start_id)
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
        "order_use": uses_order.to_dict(),
        "order_use_curve": order_curve + [[step, uses_order.ratio]],
        "order_curve_windows": ORDER_CURVE_WINDOWS,
        "unigram_perplexity": unigram_perplexity(counts, held_ids[1:count + 1]),
        "seconds": round(seconds, 1),
        "tokens_per_second": round(step * recipe.batch * recipe.length / seconds, 1),
        "machine": {"threads": torch.get_num_threads(), "torch": torch.__version__,
                    "processor": platform.machine()},
        "token_counts": counts.tolist(),
    }
    return save(out, model, bpe, record, corpus.held_out, recipe.store), model
