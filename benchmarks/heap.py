"""What glibc's heap settings buy: the compute worker's evaluation with and without them.

    .venv/bin/python benchmarks/heap.py                      # built-in and MiniLM, 6 pairs
    .venv/bin/python benchmarks/heap.py --pairs 10 --sizes 128 512 --models builtin

Each pair is two fresh processes, back to back in a random order: one with posviz's
heap settings (``posviz.boot.keep_heap_pages``, as the window and the command line set
them at start), one with glibc's defaults (``POSVIZ_WORKAROUNDS_OFF=malloc-thresholds``).
Each process runs what the window's compute worker runs for a reorder
(``EvaluationRunner`` on an ``EvaluationJob``: the evaluation and the mosaic's views)
for random orders of n tokens, torch on one thread, and prints the median of the
thread's CPU time (page faults included; a busy machine changes it less than the wall
clock, which is printed too). It
also prints how much memory ``trim_heap`` gave back once the evaluations at n were
replaced by one of 16 tokens (RSS before and after, MiB).
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
REPS, WARMUP = 20, 5


def child(model: str, n: int) -> dict:
    """In a fresh process: the median ms of the worker's evaluation at n, and the RSS
    before and after trim_heap once a 16-token evaluation replaced those at n."""
    sys.path[:0] = [str(HERE), str(ROOT)]
    from posviz import boot
    settings = boot.keep_heap_pages()
    import gc

    import numpy as np
    import torch
    from measures import rss_now_mb
    from window import text_of

    from posviz.models.builtin.backend import BuiltinBackend
    from posviz.models.config import Positions
    from posviz.runtime.jobs import EvaluationJob, EvaluationRunner
    from posviz.views.mosaic import MosaicLook

    backend = BuiltinBackend() if model == "builtin" else __import__(
        "posviz.models.hf", fromlist=["load_backend"]).load_backend(model)
    look = MosaicLook("difference", (-0.1, 0.1), np.arange(256, dtype=np.uint32))
    runner, rng, positions = EvaluationRunner(), np.random.default_rng(0), Positions()
    torch.set_num_threads(1)

    def evaluate(seq) -> tuple[float, float]:
        order = rng.permutation(len(seq.ids))
        start, cpu = time.perf_counter(), time.thread_time()
        runner(EvaluationJob(backend, seq, order, positions, look))
        return time.thread_time() - cpu, time.perf_counter() - start

    seq = backend.tokenize(text_of(backend, n))
    times = [evaluate(seq) for _ in range(WARMUP + REPS)][WARMUP:]
    evaluate(backend.tokenize(text_of(backend, 16)))
    gc.collect()
    before = rss_now_mb()
    trimmed = boot.trim_heap(n)
    return {"ms": 1000 * statistics.median(t[0] for t in times),
            "wall_ms": 1000 * statistics.median(t[1] for t in times),
            "heap_settings": settings,
            "rss_before_trim_mb": before, "rss_after_trim_mb": rss_now_mb(),
            "trimmed": trimmed}


def run_child(model: str, n: int, settings: bool) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", HF_HUB_OFFLINE="1")
    env["POSVIZ_WORKAROUNDS_OFF"] = "" if settings else "malloc-thresholds"
    done = subprocess.run([sys.executable, __file__, "--child", model, str(n)], env=env,
                          capture_output=True, text=True, check=True, cwd=ROOT, timeout=600)
    return json.loads(done.stdout.splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--sizes", type=int, nargs="+", default=[128, 512])
    parser.add_argument("--models", nargs="+", default=["builtin", "minilm"])
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]))))
        return 0
    rng = random.Random(0)
    load = os.getloadavg()[0]
    print(f"the worker's evaluation, median thread CPU ms (wall ms) of {REPS} reorders per "
          f"process, {args.pairs} pairs of fresh processes; trim: RSS MiB before -> after "
          f"trim_heap")
    for model in args.models:
        for n in args.sizes:
            rows = {True: [], False: []}
            for _ in range(args.pairs):
                for settings in rng.sample([True, False], 2):
                    rows[settings].append(run_child(model, n, settings))
            kept, plain = ([r["ms"] for r in rows[s]] for s in (True, False))
            wall = [statistics.median(r["wall_ms"] for r in rows[s]) for s in (True, False)]
            paired = statistics.median(k - p for k, p in zip(kept, plain))
            trim = rows[True]
            print(f"{model:<8} n={n:<4} heap settings {statistics.median(kept):6.1f} "
                  f"({wall[0]:.1f})  glibc's {statistics.median(plain):6.1f} ({wall[1]:.1f})  "
                  f"paired {paired:+6.1f} ms "
                  f"({paired / statistics.median(plain):+.0%});  trim "
                  f"{statistics.median(r['rss_before_trim_mb'] for r in trim):.0f} -> "
                  f"{statistics.median(r['rss_after_trim_mb'] for r in trim):.0f} (settings), "
                  f"{statistics.median(r['rss_before_trim_mb'] for r in rows[False]):.0f} -> "
                  f"{statistics.median(r['rss_after_trim_mb'] for r in rows[False]):.0f} "
                  f"(glibc's)", flush=True)
    print(f"load {load:.1f} -> {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
