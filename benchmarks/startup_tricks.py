"""What each start-up workaround buys: first plots with and without it, fresh processes.

    .venv/bin/python benchmarks/startup_tricks.py                       # 10 rounds
    .venv/bin/python benchmarks/startup_tricks.py --runs 20 --json out.json
    .venv/bin/python benchmarks/startup_tricks.py --off torch-preload --off all
    .venv/bin/python benchmarks/startup_tricks.py --torch-threads 1     # OMP_NUM_THREADS=1

Each round takes, in a random order, one pair per ``--off`` value (default: each
start-up switch of posviz.boot alone, then ``all``): a process with every workaround on and one
with ``POSVIZ_WORKAROUNDS_OFF`` set to the value, in a random order, back to back; and a
process that only imports torch beside one more with all on. Every posviz process is
``startup_probe.py``, which starts the window as ``python -m posviz`` does and says when
the window, the core and the first plots were painted. Printed per arm: the medians of
the ms from just before ``Popen`` to each moment, the first plots' quartiles and range,
the median of the pairs' differences (off - on, each pair taken a second apart, so a
shared machine's changes of speed hit both), and the process's CPU time (all threads)
at the first plots, whose differences a busy machine blurs less.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
MOMENTS = ("window", "core_ready", "plots", "plots_cpu")


# posviz.boot's switches that act before the first plots (the others act later)
STARTUP = ("pyside-import-hook", "torch-preload", "gui-thread-collector", "all")


TORCH_THREADS: str | None = None       # OMP_NUM_THREADS of every process, if set


def environment(off: str | None) -> dict:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", HF_HUB_OFFLINE="1",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    env.pop("POSVIZ_WORKAROUNDS_OFF", None)
    if off:
        env["POSVIZ_WORKAROUNDS_OFF"] = off
    if TORCH_THREADS:
        env["OMP_NUM_THREADS"] = TORCH_THREADS
    return env


def import_torch() -> dict:
    start = time.monotonic()
    code = "import time, torch; print(time.process_time())"
    done = subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT,
                          env=environment(None), capture_output=True, text=True, timeout=300)
    return {"plots": time.monotonic() - start, "plots_cpu": float(done.stdout.split()[-1])}


def start_window(off: str | None) -> dict:
    """Seconds from just before Popen to each moment the probe tells (and, as
    ``<moment>_cpu``, the process's CPU time then)."""
    with tempfile.TemporaryDirectory() as folder:
        command = [sys.executable, str(HERE / "startup_probe.py"),
                   "--settings", str(Path(folder) / "settings.ini")]
        start = time.monotonic()
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, cwd=ROOT, env=environment(off))
        out, err = process.communicate(timeout=300)
    moments = {}
    for line in out.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            if record["event"] in ("error", "timeout"):
                raise RuntimeError(f"start-up probe: {record}")
            moments[record["event"]] = record["t"] - start
            moments[record["event"] + "_cpu"] = record.get("cpu")
    if "plots" not in moments:
        raise RuntimeError(f"start-up probe ended without plots: {err[-2000:]}")
    return moments


def summary(runs: list[dict]) -> dict:
    out = {}
    for moment in MOMENTS:
        values = sorted(1000 * run[moment] for run in runs if moment in run)
        if values:
            q1, _, q3 = statistics.quantiles(values, n=4) if len(values) > 1 else values * 3
            out[moment] = {"median_ms": statistics.median(values), "q1_ms": q1, "q3_ms": q3,
                           "min_ms": values[0], "max_ms": values[-1],
                           "all_ms": [round(v, 1) for v in values]}
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="rounds (processes per arm)")
    parser.add_argument("--off", action="append", metavar="NAME[,NAME]",
                        help="an arm with these switched off (repeatable; default: each "
                             "start-up switch of posviz.boot alone, and all)")
    parser.add_argument("--torch-threads", metavar="N",
                        help="OMP_NUM_THREADS for every process (default: torch's own)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", metavar="PATH", help="also write the numbers as JSON")
    args = parser.parse_args(argv)
    global TORCH_THREADS
    TORCH_THREADS = args.torch_threads
    offs = args.off or list(STARTUP)
    rng = random.Random(args.seed)
    runs: dict[str, list] = {"on": [], **{f"off:{o}": [] for o in offs}, "import torch": []}
    pairs: dict[str, list] = {arm: [] for arm in runs if arm != "on"}
    load_start = os.getloadavg()
    for round_ in range(args.runs):
        order = [*offs, None]                   # None: the process that imports torch
        rng.shuffle(order)
        for off in order:
            arm = "import torch" if off is None else f"off:{off}"
            first, second = [(arm, off), ("on", "")]
            if rng.random() < 0.5:
                first, second = second, first
            taken = {}
            for name, value in (first, second):
                run = import_torch() if value is None else start_window(value or None)
                runs[name].append(run)
                taken[name] = run
            pairs[arm].append({moment: taken[arm][moment] - taken["on"][moment]
                               for moment in ("plots", "plots_cpu")})
        print(f"round {round_ + 1}/{args.runs} done, load {os.getloadavg()[0]:.1f}",
              file=sys.stderr, flush=True)
    results = {"arms": {arm: summary(r) for arm, r in runs.items()}, "runs": args.runs,
               "torch_threads": TORCH_THREADS or "default",
               "load_average": [load_start[0], os.getloadavg()[0]],
               "paired_ms": {arm: {m: 1000 * statistics.median(d[m] for d in diffs)
                                   for m in ("plots", "plots_cpu")}
                             for arm, diffs in pairs.items()}}
    print(f"\nfirst plots, ms from process start: median (quartiles; range) of fresh "
          f"processes, {args.runs} per arm ({len(runs['on'])} with all on), taken in pairs "
          f"with one all on; torch threads {TORCH_THREADS or 'default'}; load "
          f"{load_start[0]:.1f} -> {os.getloadavg()[0]:.1f}")
    print(f"{'arm':<30}{'window':>7}{'core':>7}{'plots':>7}  {'quartiles':>11}  "
          f"{'range':>11}  {'paired':>6}  {'cpu':>5}  {'paired':>6}")
    for arm, s in results["arms"].items():
        p, cpu = s["plots"], s["plots_cpu"]
        window = f"{s['window']['median_ms']:7.0f}" if "window" in s else " " * 7
        core = f"{s['core_ready']['median_ms']:7.0f}" if "core_ready" in s else " " * 7
        paired = results["paired_ms"].get(arm, {"plots": 0.0, "plots_cpu": 0.0})
        print(f"{arm:<30}{window}{core}{p['median_ms']:7.0f}  "
              f"{p['q1_ms']:5.0f}-{p['q3_ms']:<5.0f}  {p['min_ms']:5.0f}-{p['max_ms']:<5.0f}  "
              f"{paired['plots']:+6.0f}  {cpu['median_ms']:5.0f}  {paired['plots_cpu']:+6.0f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
