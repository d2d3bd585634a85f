"""Long inputs: for each model and length, a fresh process (its peak RSS its own) opens
the window, shows n tokens, paints a few reorders and drags a chip along the strip's
first row (the GUI thread's worst stall, measures.drag), then takes the peak RSS; then
the same reorders painted, compute and the bare forward in turns (measures.latency).

The peak is taken before the bare forwards: they keep every layer's maps (SmolLM2 at
n = 2048: 4.5 GB), which posviz itself no longer does.
"""
from __future__ import annotations

import json
import subprocess

from measures import probe

LONG = {"built-in": (1024, 2048, 4096), "smollm2": (1024, 2048)}
SMOKE_LONG = {"built-in": (64,)}
REPS = 3                       # a SmolLM2 reorder at n = 2048 takes minutes here


def long_rows(plan: dict, reps: int, smollm2: bool, step, done=None) -> list[dict]:
    """One row per (model, n) of ``plan``; SmolLM2's only when ``smollm2``; each told to
    ``done`` (its line) as it is measured."""
    rows = []
    for model, sizes in plan.items():
        if model == "smollm2" and not smollm2:
            continue
        for n in sizes:
            step(f"long input: {model} n={n} ({reps} reorders, a fresh process)")
            try:
                rows.append(long_row(model, n, reps))
            except (RuntimeError, subprocess.TimeoutExpired) as error:   # the next size
                rows.append({"model": model, "n": n, "error": str(error)})
            if done is not None:
                done(long_line(rows[-1]))
    return rows


def long_row(model: str, n: int, reps: int) -> dict:
    return probe(["--probe-long", f"{model}:{n}", "--reps", str(reps)], 7200,
                 "long-input probe")


def probe_long(model: str, n: int, reps: int, seed: int) -> None:
    """(In the child process.) The window at n tokens: peak RSS, then latency."""
    import numpy as np
    import window
    from measures import drag, latency, peak_rss_mb
    from window import Window

    window.WAIT_S = 1800            # one evaluation at these lengths may take minutes here
    win = Window()
    if model == "smollm2":
        win.load("smollm2")
    got = win.set_length(n)
    rng = np.random.default_rng(seed)
    for _ in range(reps):
        win.reorder_painted(rng)
    stall = drag(win, got)["worst_stall_ms"]
    peak = peak_rss_mb()
    row = latency(win, model, got, reps, 1, seed)
    print(json.dumps({**row, "peak_rss_mb": peak, "drag_worst_stall_ms": stall}), flush=True)
    win.close()


def print_long(rows: list[dict]) -> None:
    if not rows:
        return
    print("\nlong inputs (ms, medians; ratio: compute / bare forward; added: painted - "
          "bare forward; stall: a drag's worst GUI stall; peak RSS of the window, with the "
          "drag, before the bare forwards)")
    for r in rows:
        print(long_line(r))


def long_line(r: dict) -> str:
    if "error" in r:
        return f"  {r['model']:<10}n={r['n']:<5} not measured: {r['error']}"
    return (f"  {r['model']:<10}n={r['n']:<5} painted {r['painted_ms']['median']:9.0f}  "
            f"compute {r['compute_ms']['median']:9.0f}  bare forward "
            f"{r['bare_forward_ms']['median']:9.0f}  ratio {r['ratio']:5.2f}  added "
            f"{r['added_ms']:8.0f}  stall {r['drag_worst_stall_ms']:5.0f}  "
            f"peak RSS {r['peak_rss_mb']:6.0f} MB")
