"""posviz sweep benchmark: do batched forwards make a sweep faster?

    .venv/bin/python benchmarks/sweep.py                 # 256 orders of 64 tokens
    .venv/bin/python benchmarks/sweep.py --smoke         # 16 orders of 16 tokens
    .venv/bin/python benchmarks/sweep.py --json out.json --skip minilm
    .venv/bin/python benchmarks/sweep.py --skip minilm --rounds 7 --parts

For the built-in 6-layer model and the bundled all-MiniLM-L6-v2 (if installed) it runs
COUNT random permutations of an N-token text through ``run_orders`` (the code path of
``posviz sweep`` and the Experiments tab) both ways: one order at a time (batch size 1:
one Engine.evaluate per order) and batched (the default chunks), taking turns for
ROUNDS rounds. The reference run is computed before either is timed. It prints the
median times, their ratio against the target (4x built-in, 1.5x MiniLM) with met /
missed, the ratio of the fastest rounds, and the load average before and after: the
ratio is only as good as the machine was quiet. With --parts it also times, in the same
turns, the batched run that keeps every Trace and the forwards alone (recording
nothing), batched and one order at a time: what bounds the ratio.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# As the window does at start (posviz.boot): one BLAS thread beside torch's (its OpenMP
# threads spin when idle, as in the window), and glibc keeps freed memory for the next
# forward.
from posviz import boot  # noqa: E402

boot.quiet_threads()
boot.keep_heap_pages()

from measures import installed  # noqa: E402  (beside this file)

TARGETS = {"builtin": 4.0, "minilm": 1.5}
WORDS = ("the quick brown fox jumps over a lazy dog while seven cats watch from the old "
         "stone wall near a river").split()


def text_of(backend, n: int) -> str:
    """A text that the backend tokenizes into exactly n tokens (special ones included)."""
    words = []
    while len(backend.tokenize(" ".join(words + [WORDS[len(words) % len(WORDS)]]))) <= n:
        words.append(WORDS[len(words) % len(WORDS)])
    return " ".join(words)


def load(name: str):
    if name == "builtin":
        from posviz.models.builtin.backend import BuiltinBackend
        from posviz.models.config import ModelConfig
        return BuiltinBackend(ModelConfig(layers=6))
    from posviz.models import hf
    return hf.load_backend("minilm")


def forwards(backend, seq, orders, positions, size: int) -> None:
    """The forwards alone of run_orders, ``size`` orders at a time (1: one order's
    forward as Engine.evaluate runs it, without its Trace and comparison), recording
    nothing: what no measure on top of them can go below."""
    import numpy as np

    from posviz.models.hooks import Recorder
    from posviz.models.request import Request

    class Nothing(Recorder):
        def record(self, name, value):
            pass
    for start in range(0, len(orders), size):
        chunk = np.stack(orders[start:start + size])
        # as compare_batch runs them (a chunk of one: as a single order is run)
        backend.record(seq, Request(chunk, positions.ids(chunk),
                                    aligned=backend.capabilities.aligned and size > 1),
                       Nothing())


def measure(name: str, n: int, count: int, seed: int, rounds: int = 1,
            parts: bool = False, clock=time.perf_counter) -> dict:
    """Time COUNT random orders of an N-token text through run_orders one at a time and
    batched (the sweep's path), taking turns for ROUNDS rounds; with ``parts`` also the
    forwards alone (see ``forwards``), batched and one at a time. ``clock``: wall clock, or
    time.thread_time (with torch on one thread)."""
    import numpy as np

    from posviz.analysis.engine import Engine
    from posviz.analysis.experiments.runs import batch_size, make_orders, run_orders
    from posviz.models.config import Positions

    backend = load(name)
    seq = backend.tokenize(text_of(backend, n))
    orders = make_orders("random", seq, count, np.random.default_rng(seed))
    engine = Engine(backend)
    positions = Positions()
    size = batch_size(backend, len(seq))
    list(run_orders(engine, seq, orders[:2], positions, batch=2))    # reference, warm-up
    runs = {"sequential": lambda: run_orders(engine, seq, orders, positions, batch=1),
            "batched": lambda: run_orders(engine, seq, orders, positions)}
    if parts:
        runs.update({
            "forward_sequential": lambda: forwards(backend, seq, orders, positions, 1) or (),
            "forward_batched": lambda: forwards(backend, seq, orders, positions, size) or ()})
    load_before = os.getloadavg()
    times = {label: [] for label in runs}
    for _ in range(rounds):             # taking turns: a change of machine speed hits all
        for label, run in runs.items():
            start = clock()
            for _ in run():
                pass
            times[label].append(clock() - start)
    medians = {label: float(np.median(t)) for label, t in times.items()}
    seq_s, batch_s = medians["sequential"], medians["batched"]
    ratio = seq_s / batch_s
    return {"model": name, "n": len(seq), "orders": count, "rounds": rounds,
            "batch_size": size,
            "sequential_s": seq_s, "batched_s": batch_s, "ratio": ratio,
            "ratio_of_fastest": min(times["sequential"]) / min(times["batched"]),
            "medians": medians, "times": times, "target": TARGETS[name],
            "met": ratio >= TARGETS[name],
            "load_before": list(load_before), "load_after": list(os.getloadavg())}


def print_row(row: dict) -> None:
    load = lambda values: "/".join(f"{v:.2f}" for v in values)       # noqa: E731
    print(f"{row['model']:8} n={row['n']:<4} {row['orders']} orders, batch {row['batch_size']:<3}"
          f" sequential {row['sequential_s']:7.2f} s  batched {row['batched_s']:7.2f} s  "
          f"(median of {row['rounds']})  ratio {row['ratio']:5.1f}x, of the fastest "
          f"{row['ratio_of_fastest']:5.1f}x (target {row['target']:.1f}x: "
          f"{'met' if row['met'] else 'missed'})  load {load(row['load_before'])} -> "
          f"{load(row['load_after'])}", flush=True)
    medians = row["medians"]
    if "forward_batched" in medians:
        seq_s = row["sequential_s"]
        print(f"{'':8} parts (medians): forwards alone: one at a time {medians['forward_sequential']:.3f} s, batched "
              f"{medians['forward_batched']:.3f} s (sequential / that = "
              f"{seq_s / medians['forward_batched']:.1f}x at most); the batched metrics "
              f"and the rest {row['batched_s'] - medians['forward_batched']:.3f} s", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="16 orders of 16 tokens")
    parser.add_argument("--count", type=int, help="orders per model (default 256)")
    parser.add_argument("-n", type=int, help="tokens of the text (default 64)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=3,
                        help="turns of sequential then batched per model (default 3)")
    parser.add_argument("--skip", action="append", default=[], choices=sorted(TARGETS),
                        help="leave a model out (repeatable)")
    parser.add_argument("--json", metavar="PATH", help="also write the rows as JSON")
    parser.add_argument("--cpu-time", action="store_true",
                        help="torch on one thread, timed by the thread's CPU time (for a "
                             "busy machine, where wall clock says little)")
    parser.add_argument("--parts", action="store_true",
                        help="also time the forwards alone")
    args = parser.parse_args(argv)
    count = args.count or (16 if args.smoke else 256)
    n = args.n or (16 if args.smoke else 64)
    import torch
    if args.cpu_time:
        torch.set_num_threads(1)
    print(f"cores {os.cpu_count()}, torch {torch.__version__} with "
          f"{torch.get_num_threads()} threads, timed by "
          f"{'thread CPU time' if args.cpu_time else 'wall clock'}", flush=True)
    rows = []
    for name in TARGETS:
        if name in args.skip:
            continue
        if name == "minilm" and not installed("minilm"):
            print("minilm   not installed: skipped", flush=True)
            continue
        rows.append(measure(name, n, count, args.seed, 1 if args.smoke else args.rounds,
                            args.parts, time.thread_time if args.cpu_time else time.perf_counter))
        rows[-1]["clock"] = "thread CPU time" if args.cpu_time else "wall clock"
        print_row(rows[-1])
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
