"""What the heatmaps' coloured pixels buy: the GUI thread's work to show an evaluation.

    .venv/bin/python benchmarks/paint.py                    # n = 16, 128, 512; 6 pairs
    .venv/bin/python benchmarks/paint.py --sizes 16 --pairs 10

Each pair is two fresh processes, back to back in a random order: one as posviz runs
(``heatmap-coloured-pixels``: the compute worker colours the mosaic's pixels and the
images paint them as they are), one with it switched off (the images colour through
pyqtgraph's lookup table, on the GUI thread, at each paint). Each process shows the
plots panel (1300 x 850, offscreen, the built-in model, the first tab) and, for random
orders of n tokens, times on the GUI thread ``panel.show`` of the prepared evaluation
and a paint of every plot of the tab (``grab``: its paint event, into a pixmap): the
median thread CPU ms (and wall ms).
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
REPS, WARMUP = 20, 3


def child(n: int) -> dict:
    sys.path[:0] = [str(HERE), str(ROOT)]
    from PySide6.QtWidgets import QApplication
    app = QApplication(["posviz"])
    import numpy as np
    from window import text_of

    from posviz.analysis.engine import Engine
    from posviz.document.session import Session
    from posviz.gui.plots import PlotsPanel, mosaic_look
    from posviz.models.builtin.backend import BuiltinBackend
    from posviz.views.shown import Shown, build_views

    backend = BuiltinBackend()
    session = Session(backend, text_of(backend, n))
    engine, rng = Engine(backend), np.random.default_rng(0)
    panel = PlotsPanel()
    panel.resize(1300, 850)
    panel.show()
    app.processEvents()
    times = []
    for _ in range(WARMUP + REPS):
        order = rng.permutation(len(session.seq))
        ev = engine.evaluate(session.seq, order, session.positions)
        shown = Shown(ev, build_views(ev, mosaic_look(panel.selection())))
        app.processEvents()
        start, cpu = time.perf_counter(), time.thread_time()
        panel.show_evaluation(shown)
        for figure in panel.current_figures().values():
            figure.canvas.viewport().grab()       # its paint event, into a pixmap
        times.append((time.thread_time() - cpu, time.perf_counter() - start))
    times = times[WARMUP:]
    return {"ms": 1000 * statistics.median(t[0] for t in times),
            "wall_ms": 1000 * statistics.median(t[1] for t in times)}


def run_child(n: int, on: bool) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", QT_QPA_PLATFORM="offscreen",
               POSVIZ_WORKAROUNDS_OFF="" if on else "heatmap-coloured-pixels")
    done = subprocess.run([sys.executable, __file__, "--child", str(n)], env=env,
                          capture_output=True, text=True, check=True, cwd=ROOT, timeout=600)
    return json.loads(done.stdout.splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--sizes", type=int, nargs="+", default=[16, 128, 512])
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.child)))
        return 0
    rng = random.Random(0)
    load = os.getloadavg()[0]
    print(f"show and paint an evaluation on the GUI thread: median thread CPU ms (wall ms) "
          f"of {REPS} orders per process, {args.pairs} pairs of fresh processes")
    for n in args.sizes:
        rows = {True: [], False: []}
        for _ in range(args.pairs):
            for on in rng.sample([True, False], 2):
                rows[on].append(run_child(n, on))
        on, off = ([r["ms"] for r in rows[s]] for s in (True, False))
        wall = [statistics.median(r["wall_ms"] for r in rows[s]) for s in (True, False)]
        paired = statistics.median(a - b for a, b in zip(on, off))
        print(f"built-in n={n:<4} coloured pixels {statistics.median(on):6.1f} ({wall[0]:.1f})"
              f"  lookup table {statistics.median(off):6.1f} ({wall[1]:.1f})  paired "
              f"{paired:+6.1f} ms ({paired / statistics.median(off):+.0%})", flush=True)
    print(f"load {load:.1f} -> {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
