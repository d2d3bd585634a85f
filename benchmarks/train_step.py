"""One training step of the built-in model (the zoo's size), timed: what ``posviz
train`` spends a step on, by torch's threads, the vocabulary and the optimiser.

    python benchmarks/train_step.py [--repeats 5]

Prints the median seconds a step and tokens a second of each variant, taking turns
repetition by repetition so a shared machine's changes of speed hit all alike, and
the machine's load average before and after. Asserts nothing.
"""
from __future__ import annotations

import argparse
import itertools
import os
import statistics
import time

import torch
from torch.nn import functional as F

from posviz.models.config import ModelConfig
from posviz.models.builtin.transformer import InstrumentedTransformer


def step_timer(vocab: int, fused: bool, batch: int, length: int):
    model = InstrumentedTransformer(ModelConfig(pe="rope", mask="causal"), vocab=vocab)
    for p in model.parameters():
        p.requires_grad_(True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=fused or None)
    ids = torch.randint(0, vocab, (batch, length + 1),
                        generator=torch.Generator().manual_seed(0))

    def step() -> float:
        start = time.perf_counter()
        logits = model.logits(model.hidden(ids[:, :-1]))
        loss = F.cross_entropy(logits.flatten(0, 1), ids[:, 1:].flatten())
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        return time.perf_counter() - start
    return step


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--length", type=int, default=128)
    args = parser.parse_args()
    variants = list(itertools.product((1, 2), (2048, 4096), (False, True)))
    timers = {v: step_timer(v[1], v[2], args.batch, args.length) for v in variants}
    times = {v: [] for v in variants}
    print(f"cores {os.cpu_count()}, torch {torch.__version__}, load {os.getloadavg()[0]:.1f}")
    for _ in range(args.repeats + 1):                      # the first round warms up
        for variant in variants:
            torch.set_num_threads(variant[0])
            times[variant].append(timers[variant]())
    print(f"{'threads':>7} {'vocab':>6} {'fused':>6} {'s/step':>8} {'tokens/s':>9}")
    for (threads, vocab, fused), seconds in times.items():
        median = statistics.median(seconds[1:])
        print(f"{threads:>7} {vocab:>6} {str(fused):>6} {median:>8.2f} "
              f"{args.batch * args.length / median:>9.0f}")
    print(f"load afterwards {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
