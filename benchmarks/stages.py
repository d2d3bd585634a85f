"""Where a reorder's time goes, stage by stage, in CPU time of the thread that runs it.

    .venv/bin/python benchmarks/stages.py                          # built-in, 16 64 128
    .venv/bin/python benchmarks/stages.py --model minilm --sizes 16 64 128 512 --reps 12

Drives the real window offscreen (window.py) through random reorders and times, for
each, the stages of the compute worker's job in that thread's CPU time
(``time.thread_time``): the forward (Backend.run, the maps put back as they pass), the
maps' gaps and the mosaic's pooling (AttentionGaps.finish), the rest of Engine.evaluate
(the comparison), and the views (the job after Engine.evaluate); and on the GUI thread
the result's slot (Controller._on_computed). Beside them, wall times from the shuffle
(ms): the job's start and end, the slot's end and the plots painted.

CPU time of one thread counts what that thread computes, not how long it waited for a
core: on a shared machine whose load average is several times its cores, wall times
grow five- to tenfold while these stay put. With torch on one thread
(OMP_NUM_THREADS=1) the worker's CPU is the whole of its compute; with two, torch's other
thread is not counted. Medians over ``--reps`` reorders (the first two not counted).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
STAGES = {"before the forward": ("job", "run"), "forward": ("run", "run_end"),
          "gaps and pooling": ("finish", "finish_end"),
          "comparison": ("finish_end", "evaluate_end"), "views": ("evaluate_end", "job_end"),
          "worker job": ("job", "job_end"), "GUI slot": ("slot", "slot_end")}
WALL = ("job", "job_end", "slot_end", "painted")


class Stamps:
    """Per reorder, the first time each named point was passed: wall and thread CPU."""

    def __init__(self):
        self.wall: dict[str, float] = {}
        self.cpu: dict[str, float] = {}

    def clear(self) -> None:
        self.wall, self.cpu = {}, {}

    def __call__(self, name: str) -> None:
        self.wall.setdefault(name, time.monotonic())
        self.cpu.setdefault(name, time.thread_time())

    def wrap(self, owner, attr: str, before: str | None, after: str | None) -> None:
        """``owner.attr`` stamps ``before`` as it starts and ``after`` as it ends."""
        original = getattr(owner, attr)

        def stamped(*args, **kwargs):
            if before:
                self(before)
            try:
                return original(*args, **kwargs)
            finally:
                if after:
                    self(after)
        setattr(owner, attr, stamped)


def instrument(win, stamps: Stamps) -> None:
    from posviz.analysis.engine import Engine
    from posviz.analysis.symmetry import AttentionGaps

    controller = win.controller
    stamps.wrap(controller._runner, "evaluate", "job", "job_end")
    stamps.wrap(Engine, "evaluate", None, "evaluate_end")
    stamps.wrap(type(win.session.backend), "run", "run", "run_end")
    stamps.wrap(AttentionGaps, "finish", "finish", "finish_end")
    stamps.wrap(controller, "_on_computed", "slot", "slot_end")


def measure(win, stamps: Stamps, n: int, reps: int) -> dict:
    import numpy as np

    got = win.set_length(n)
    rng = np.random.default_rng(n)
    rows = []
    for rep in range(reps + 2):
        stamps.clear()
        start = time.monotonic()
        _, painted, _ = win.reorder_painted(rng)
        if rep < 2:
            continue
        row = {name: 1000 * (stamps.cpu[b] - stamps.cpu[a])
               for name, (a, b) in STAGES.items() if a in stamps.cpu and b in stamps.cpu}
        row.update({f"{name} (wall)": 1000 * (stamps.wall[name] - start)
                    for name in WALL[:-1] if name in stamps.wall})
        row["painted (wall)"] = 1000 * painted
        rows.append(row)
    names = [name for name in (*STAGES, *(f"{w} (wall)" for w in WALL))
             if all(name in row for row in rows)]
    return {"n": got, "reps": len(rows),
            "ms": {name: float(np.median([row[name] for row in rows])) for name in names}}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="built-in", help="built-in, minilm or smollm2")
    parser.add_argument("--sizes", type=int, nargs="+", default=(16, 64, 128))
    parser.add_argument("--reps", type=int, default=12, help="reorders counted per size")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = parser.parse_args(argv)
    if args.reps < 1:
        parser.error("--reps must be at least 1")
    sys.path[:0] = [str(HERE.parent), str(HERE)]
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from posviz import boot

    boot.quiet_threads()                # as run.py and the window start
    boot.keep_heap_pages()
    from window import Window

    win = Window()
    try:
        if args.model != "built-in":
            win.load(args.model)
        stamps = Stamps()
        instrument(win, stamps)
        rows = []
        for n in args.sizes:
            rows.append(row := measure(win, stamps, n, args.reps))
            print(f"{args.model} n={row['n']} ({row['reps']} reorders): " + ", ".join(
                f"{name} {ms:.2f}" for name, ms in row["ms"].items()), flush=True)
    finally:
        win.close()
    if args.json:
        args.json.write_text(json.dumps({"model": args.model, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
