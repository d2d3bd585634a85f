"""The window against the command line at one long input: peak RSS of each, measured
the same way (a fresh process each, ``VmHWM`` of /proc/self/status, read by the process
itself at its end), and the window's worst GUI stall during one drag.

    .venv/bin/python benchmarks/long_memory.py [--model built-in|smollm2] [--n 4096]

The window (the real MainWindow, offscreen) is given the text, waits for its plots to
be painted, paints one random reorder, then a chip is dragged along the strip's first
row (run.py's drag); RSS after each step. The command line runs ``posviz report`` on
the same text (the same model, its default order: the movable tokens reversed).
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def child_env(settings: str) -> dict:
    return {**os.environ, "QT_QPA_PLATFORM": "offscreen", "OPENBLAS_NUM_THREADS": "1",
            "HF_HUB_OFFLINE": "1", "POSVIZ_SETTINGS": settings,
            "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)])}


def window_probe(model: str, n: int) -> None:
    """(In the child process.) The window at n tokens: RSS by step, peak, drag stall."""
    import numpy as np
    import window
    from measures import drag, peak_rss_mb, rss_now_mb
    from window import Window

    window.WAIT_S = 1800
    stages = {}
    win = Window()

    def note(stage: str) -> None:           # RSS now, and the peak so far
        stages[stage] = (rss_now_mb(), peak_rss_mb())
    note("window")
    if model == "smollm2":
        win.load("smollm2")
        note("model loaded")
    got = win.set_length(n)
    win.wait_painted()
    note(f"n={got} shown")
    win.reorder_painted(np.random.default_rng(0))
    note("a reorder painted")
    dragged = drag(win, got)
    note("dragged")
    print(json.dumps({"n": got, "peak_rss_mb": peak_rss_mb(), "rss_by_stage_mb": stages,
                      "text": window.text_of(win.session.backend, got),
                      "worst_stall_ms": dragged["worst_stall_ms"],
                      "moves": dragged["moves"]}), flush=True)
    win.close()


CLI_PEAK = """
import sys
from pathlib import Path
from posviz.cli import main
code = main(sys.argv[1:])
for line in Path("/proc/self/status").read_text().splitlines():
    if line.startswith("VmHWM:"):
        print("PEAK", int(line.split()[1]) / 1024, flush=True)
sys.exit(code)
"""


def cli_peak(model: str, text: str, env: dict) -> float:
    """Peak RSS (MiB) of ``posviz report`` on ``text``, in a fresh process."""
    command = [sys.executable, "-c", CLI_PEAK, "report", "--quiet", "--text", text]
    if model != "built-in":
        command[4:4] = ["--model", model, "--offline"]
    out = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, env=env,
                         timeout=7200)
    peaks = [float(line.split()[1]) for line in out.stdout.splitlines()
             if line.startswith("PEAK ")]
    if out.returncode or not peaks:
        raise RuntimeError(f"report failed: {out.stderr.strip().splitlines()[-1:]}")
    return peaks[0]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", default="built-in", choices=("built-in", "smollm2"))
    parser.add_argument("--n", type=int, default=4096)
    parser.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        window_probe(args.model, args.n)
        return 0
    with tempfile.TemporaryDirectory() as folder:
        env = child_env(str(Path(folder) / "posviz.ini"))
        out = subprocess.run([sys.executable, __file__, "--probe", "--model", args.model,
                              "--n", str(args.n)], capture_output=True, text=True,
                             cwd=ROOT, env=env, timeout=7200)
        rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
        if not rows:
            print(out.stderr[-2000:], file=sys.stderr)
            return 1
        row = rows[0]
        cli = cli_peak(args.model, row.pop("text"), env)
    print(f"{args.model} n={row['n']}: window peak {row['peak_rss_mb']:.0f} MiB, "
          f"report peak {cli:.0f} MiB, window - report {row['peak_rss_mb'] - cli:+.0f} MiB; "
          f"drag ({row['moves']} moves): worst GUI stall {row['worst_stall_ms']:.0f} ms")
    for stage, (now, peak) in row["rss_by_stage_mb"].items():
        print(f"  after {stage:<22} RSS {now:7.0f} MiB, peak so far {peak:7.0f} MiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
