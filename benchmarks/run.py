"""posviz benchmark: does the window follow a drag live on this machine?

    .venv/bin/python benchmarks/run.py                  # the full run (20 minutes or more)
    .venv/bin/python benchmarks/run.py --smoke          # tiny sizes, a few repetitions
    .venv/bin/python benchmarks/run.py --json out.json  # also write the numbers as JSON

It drives the real main window offscreen and measures, for the built-in model and the
bundled all-MiniLM-L6-v2 (if installed):
  reorder-to-painted  session.shuffle() -> the newest evaluation shown -> the last visible
                      plot painted (median and 95th percentile over random reorders)
  compute-only        Engine.evaluate of the same reorders (the model run + the metrics),
                      beside the bare forward pass of the same model with attentions and
                      hidden states, and their ratio
  prefix reuse        a chip moved within the last quarter of a causal input: evaluate
                      from the first moved slot on against in full and the bare forward
                      (the built-in causal model at n=128, and SmolLM2 when installed)
  responsiveness      the longest stall of the GUI event loop (a 5 ms timer's worst
                      lateness) during a mouse drag of a chip while MiniLM recomputes,
                      and while SmolLM2 (when installed) recomputes at n=128
  start-up            process start -> first painted window, -> first painted plots
  peak memory         peak RSS of a window that loads MiniLM and runs n tokens, per n
  long inputs         the built-in model at n = 1024, 2048, 4096 and SmolLM2 at 1024, 2048:
                      compute / bare forward, painted - bare, a drag's worst GUI
                      stall, peak RSS (long.py)
  scaling figure      compute and bare forward against n, log-log, as PNG and SVG
Each number is printed beside its target, with met / missed. The machine is whatever it
runs on: the table starts with its cores, torch version and thread count.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))
# Before numpy and Qt are imported: there is no display, and a model must never be fetched.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")
# As the window does at start (posviz.boot): one BLAS thread beside torch's (its OpenMP
# threads spin when idle, as in the window), and glibc keeps freed memory for the next
# forward.
from posviz import boot  # noqa: E402

boot.quiet_threads()
boot.keep_heap_pages()

SIZES = (16, 64, 128, 256, 512)
FULL = {"builtin": SIZES, "minilm": SIZES, "reps": 50, "warmup": 5, "drag_n": 512,
        "memory_n": SIZES, "prefix_n": 128, "smollm2_n": 128}
SMOKE = {"builtin": (8, 16), "minilm": (16,), "reps": 4, "warmup": 1,
         "drag_n": 32, "memory_n": (32,), "prefix_n": 32, "smollm2_n": 32}

# The window driver (window.py), the measurements (measures.py, long.py) live beside this
# file; peak_rss_mb is imported here too, as the tests ask this script for it.
from long import LONG, REPS, SMOKE_LONG, long_rows, print_long, probe_long  # noqa: E402
from measures import (drag, installed, latency, memory, peak_rss_mb,  # noqa: E402,F401
                      probe_memory, profile, startup)
from reuse import bare_median_ms, builtin_causal, prefix_reuse, smollm2_installed  # noqa: E402
from window import Window  # noqa: E402


# -- the machine ----------------------------------------------------------------------
def machine() -> dict:
    import numpy
    import pyqtgraph
    import PySide6
    import torch

    info = {"python": platform.python_version(), "platform": platform.platform(),
            "cpu_count": os.cpu_count(), "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(), "numpy": numpy.__version__,
            "pyside6": PySide6.__version__, "pyqtgraph": pyqtgraph.__version__,
            "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
            "OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY"),
            "load_average_at_start": list(os.getloadavg())}
    try:
        import transformers
        info["transformers"] = transformers.__version__
    except ImportError:
        info["transformers"] = None
    return info


# -- targets and the table ------------------------------------------------------------
def targets(results: dict) -> list[dict]:
    """Every target of the issue that this run measured: (name, measured, limit, met)."""
    rows = []

    def add(name, measured, limit, unit="ms"):
        if measured is not None:
            # the verdict of the number written: 1.2504 is printed, and met, as 1.25
            shown = round(measured, 2 if unit == "x" else 1)
            rows.append({"target": name, "measured": shown, "limit": limit, "unit": unit,
                         "met": bool(shown <= limit)})

    for r in results.get("latency", []):
        if r["n"] in SIZES:
            # closer to the forward where the forward is long: 1.15 above 20 ms
            limit = 1.15 if r.get("bare_forward_ms", {}).get("median", 0) > 20 else 1.25
            add(f"{r['model']} n={r['n']}: compute / bare forward", r["ratio"], limit, "x")
    for r in results.get("latency", []):
        if r["n"] <= 128 or r["n"] == 512:
            add(f"{r['model']} n={r['n']}: painted - bare forward", r["added_ms"],
                10 if r["n"] <= 128 else 30)
        if r["model"] == "minilm" and r["n"] == 64 and "painted_ms" in r:  # 150x bertviz
            add("minilm n=64: painted", r["painted_ms"]["median"], 28)
    for p in results.get("prefix", []):
        if p["model"] == "built-in causal":
            add(f"built-in causal n={p['n']}: late move / full forward",
                p["prefix_over_bare"], 0.5, "x")
    d = results.get("drag")
    if d and d["n"] == 512:
        add("minilm n=512 drag: worst GUI stall", d["worst_stall_ms"], 50)
        add("minilm n=512 drag: newest painted after last move",
            d["newest_painted_after_last_move_ms"], 150)
    sd = results.get("smollm2_drag")
    if sd:
        add(f"smollm2 n={sd['n']} drag: worst GUI stall", sd["worst_stall_ms"], 50)
        add(f"smollm2 n={sd['n']} drag: newest painted / bare fwd",
            sd["newest_painted_after_last_move_ms"] / sd["bare_forward_ms"], 1.5, "x")
    s = results.get("startup", {})
    if "plots" in s and "import_torch" in s:
        add("first painted plots after a bare import torch",
            s["plots"]["median_ms"] - s["import_torch"]["median_ms"], 400)
    for m in results.get("memory", []):
        if m["n"] == 512:
            add("peak RSS, MiniLM n=512", m["peak_rss_mb"], 1200, "MB")
    return rows


# -- one line of each part, printed as the part finishes and again in the table ---------
def latency_line(r: dict) -> str:
    cells = [f"{r[k]['median']:7.1f} /{r[k]['p95']:6.1f}"
             for k in ("painted_ms", "shown_ms", "compute_ms", "bare_forward_ms")]
    cells.insert(2, f"{r['worker_ms']['median']:7.1f}")
    return (f"{r['model']:<10}{r['n']:>5}  " + "  ".join(f"{c:>15}" if len(c) > 7 else c
                                                        for c in cells)
            + f"  {r['ratio']:6.2f}  {r['added_ms']:6.1f}")


def prefix_line(p: dict) -> str:
    return (f"  {p['model']:<24} n={p['n']:<4} prefix reuse {p['prefix_ms']['median']:7.1f}"
            f"  in full {p['full_ms']['median']:7.1f}  bare forward "
            f"{p['bare_ms']['median']:7.1f}  -> {p['prefix_over_bare']:.2f}x the bare "
            f"forward, {p['prefix_over_full']:.2f}x in full (suffix "
            f"{p['suffix_slots_median']:.0f})")


def drag_line(d: dict) -> str:
    bare = (f" (its bare forward {d['bare_forward_ms']:.0f} ms)" if "bare_forward_ms" in d
            else "")
    return (f"drag of a chip along the {d.get('row', 'first')} row, {d['model']} "
            f"n={d['n']}: {d['moves']} moves in {d['drag_s']:.1f} s, "
            f"{d['evaluations_shown']} evaluations shown; worst stall "
            f"{d['worst_stall_ms']:.0f} ms (p99 {d['p99_lateness_ms']:.0f} ms); newest "
            f"order painted {d['newest_painted_after_last_move_ms']:.0f} ms after the "
            f"last move{bare}")


def startup_line(s: dict) -> str:
    runs = max(v["runs"] for v in s.values())
    line = (f"start-up, process start -> (median of {runs} processes): "
            + ", ".join(f"{event} {v['median_ms']:.0f} ms" for event, v in s.items()
                        if event != "import_torch"))
    if "import_torch" in s:
        line += (f"\n  beside them, a process that only imports torch: "
                 f"{s['import_torch']['median_ms']:.0f} ms")
    return line


def memory_line(mem: dict) -> str:
    stages = ", ".join(f"{k} {v:.0f}" for k, v in mem["rss_by_stage_mb"].items())
    return (f"peak RSS with MiniLM at n={mem['n']}: {mem['peak_rss_mb']:.0f} MB "
            f"(RSS by stage, MB: {stages})")


def print_table(results: dict) -> None:
    m = results["machine"]
    print(f"\nposviz benchmark ({results['mode']}) — {m['cpu_count']} cores, torch {m['torch']} "
          f"with {m['torch_threads']} threads, PySide6 {m['pyside6']}, Python {m['python']}, "
          f"load average {m['load_average_at_start'][0]:.1f} at start")
    print("\nreorder -> painted, and compute only (ms; median / p95; worker: the window's "
          "own compute, median; added: painted - bare forward, medians)")
    header = (f"{'model':<10}{'n':>5}  {'painted':>15}  {'shown':>15}  {'worker':>7}  "
              f"{'compute':>15}  {'bare forward':>15}  {'ratio':>6}  {'added':>6}")
    print(header)
    print("-" * len(header))
    for r in results.get("latency", []):
        print(latency_line(r))
    prefix = results.get("prefix", [])
    if prefix:
        print("\nprefix reuse: a chip moved within the last quarter (ms, median; suffix: "
              "slots computed)")
        for p in prefix:
            print(prefix_line(p))
    for d in (results.get("drag"), results.get("smollm2_drag")):
        if d:
            print(f"\n{drag_line(d)}")
    if results.get("startup"):
        print(f"\n{startup_line(results['startup'])}")
    for mem in results.get("memory", []):
        print(memory_line(mem))
    print_long(results.get("long", []))
    for path in results.get("figure", []):
        print(f"scaling figure: {path}")
    m_end = m.get("load_average_at_end")
    if m_end:
        print(f"\nload average at the end: {m_end[0]:.1f} (1 min), {m_end[1]:.1f} (5 min)")
    print("\ntargets")
    for t in results["targets"]:
        print(f"  {t['target']:<46} {t['measured']:>8} {t['unit']:<2} "
              f"(target <= {t['limit']} {t['unit']})  {'met' if t['met'] else 'MISSED'}")
    for note in results.get("skipped", []):
        print(f"  skipped: {note}")


# -- main -----------------------------------------------------------------------------
def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true",
                        help="tiny sizes and a few repetitions (for CI: checks it runs)")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON")
    parser.add_argument("--reps", type=int, help="random reorders per size (default 50)")
    parser.add_argument("--skip", action="append", default=[],
                        choices=("latency", "minilm", "drag", "startup", "memory",
                                 "prefix", "smollm2", "figure", "long"),
                        help="leave a part out (repeatable)")
    parser.add_argument("--long-model", action="append", choices=tuple(LONG),
                        help="the long-input rows of this model only (repeatable; "
                             "default: every model installed)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--figure", metavar="STEM",
                        help="where the scaling figure goes, as STEM.png and STEM.svg "
                             "(default: benchmarks/scaling for a full run, none for --smoke)")
    parser.add_argument("--profile", metavar="MODEL:N",
                        help="instead of the benchmark, profile reorders of one size with "
                             "pyinstrument, e.g. minilm:512 or built-in:64")
    parser.add_argument("--probe-memory", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--probe-long", help=argparse.SUPPRESS)      # MODEL:N
    args = parser.parse_args(argv)
    if args.reps is not None and args.reps < 1:
        parser.error("--reps must be at least 1")
    if args.profile:
        model, _, size = args.profile.partition(":")
        if model not in ("built-in", "minilm") or not size.isdigit() or int(size) < 2:
            parser.error(f"--profile wants built-in:N or minilm:N with N >= 2 "
                         f"(got {args.profile!r})")
        args.profile = (model, int(size))
    return args


def main(argv=None) -> int:
    try:
        return benchmark(parse_args(argv))
    except RuntimeError as error:             # the app never answered: say what, briefly
        print(f"posviz benchmark: {error}", file=sys.stderr)
        return 1


def benchmark(args) -> int:
    if args.probe_memory:
        probe_memory(args.probe_memory)
        return 0
    if args.probe_long:
        model, _, n = args.probe_long.partition(":")
        probe_long(model, int(n), args.reps or REPS, args.seed)
        return 0
    if args.profile:
        try:
            import pyinstrument  # noqa: F401
        except ImportError:
            print("posviz benchmark: --profile needs pyinstrument "
                  "(pip install -c packaging/constraints.txt -e '.[bench]')", file=sys.stderr)
            return 2
        model, n = args.profile
        win = Window()
        if model == "minilm":
            win.load_minilm()
        profile(win, model, n, args.reps or 10)
        win.close()
        return 0
    plan = dict(SMOKE if args.smoke else FULL)
    if args.reps:
        plan["reps"] = args.reps
    if args.json:                         # a bad path fails now, not after minutes
        try:
            Path(args.json).parent.mkdir(parents=True, exist_ok=True)
            Path(args.json).touch()
        except OSError as error:
            print(f"posviz benchmark: cannot write {args.json}: {error.strerror}",
                  file=sys.stderr)
            return 2
    results = {"mode": "smoke" if args.smoke else "full", "machine": machine(),
               "plan": plan, "skipped": []}
    with_minilm = "minilm" not in args.skip and installed("minilm")
    if not with_minilm:
        results["skipped"].append("MiniLM (not installed or --skip minilm)")
    step = lambda text: print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)  # noqa: E731

    def done(line: str) -> None:          # a part's row as it finishes, not only at the end
        print(f"    {line.strip()}", flush=True)

    win = None
    if "latency" not in args.skip or ("drag" not in args.skip and with_minilm):
        step("opening the window offscreen")
        win = Window()
    if "latency" not in args.skip:
        results["latency"] = []
        for n in plan["builtin"]:
            step(f"built-in n={n}: {plan['reps']} reorders")
            results["latency"].append(latency(win, "built-in", n, plan["reps"],
                                              plan["warmup"], args.seed))
            done(latency_line(results["latency"][-1]))
    if with_minilm and ("latency" not in args.skip or "drag" not in args.skip):
        step("loading MiniLM")
        win.load_minilm()
        if "latency" not in args.skip:
            for n in plan["minilm"]:
                step(f"MiniLM n={n}: {plan['reps']} reorders")
                results["latency"].append(latency(win, "minilm", n, plan["reps"],
                                                  plan["warmup"], args.seed))
                done(latency_line(results["latency"][-1]))
        if "drag" not in args.skip:
            step(f"MiniLM n={plan['drag_n']}: dragging a chip")
            results["drag"] = drag(win, plan["drag_n"])
            done(drag_line(results["drag"]))
    # torch on one thread only: the window's compute worker while there is a window
    on_torch_thread = win.on_worker if win is not None else (lambda measure: measure())
    if "prefix" not in args.skip:
        step(f"built-in causal n={plan['prefix_n']}: prefix reuse against full")
        results["prefix"] = [on_torch_thread(lambda: builtin_causal(
            plan["prefix_n"], plan["reps"], plan["warmup"], args.seed))]
        done(prefix_line(results["prefix"][0]))
    if "smollm2" in args.skip or not smollm2_installed():
        results["skipped"].append("SmolLM2 (not installed or --skip smollm2)")
    elif win is not None:
        n = plan["smollm2_n"]
        step("loading SmolLM2")
        win.load("smollm2")
        got = win.set_length(n)
        step(f"SmolLM2 n={got}: bare forward, prefix reuse, dragging a chip")
        reps, session = max(3, plan["reps"] // 5), win.session
        bare_ms = win.on_worker(lambda: bare_median_ms(session, reps, args.seed))
        if "prefix" not in args.skip:
            results["prefix"].append(win.on_worker(lambda: prefix_reuse(
                session.backend, n, reps, 1, args.seed, "SmolLM2")))
            done(prefix_line(results["prefix"][-1]))
        if "drag" not in args.skip:
            results["smollm2_drag"] = dict(drag(win, n, row="last"), bare_forward_ms=bare_ms)
            done(drag_line(results["smollm2_drag"]))
    if win is not None:
        win.close()
    figure = args.figure or (None if args.smoke else str(HERE / "scaling"))
    if figure and results.get("latency") and "figure" not in args.skip:
        from figure import write_scaling_figure
        load = os.getloadavg()[0]
        results["figure"] = [str(p) for p in write_scaling_figure(
            results["latency"], Path(figure),
            f"{results['machine']['cpu_count']} cores, torch "
            f"{results['machine']['torch']}, load average {load:.1f}; solid: Engine.evaluate "
            f"(the model run and the metrics), dashed: the bare forward")]
    if "startup" not in args.skip:
        runs = 1 if args.smoke else 5
        what = "the window, then MiniLM" if with_minilm else "the window"
        step(f"start-up of {what} ({runs} processes)")
        results["startup"] = startup(with_minilm, runs)
        done(startup_line(results["startup"]))
    if "memory" not in args.skip and with_minilm:
        results["memory"] = []
        for n in plan["memory_n"]:
            step(f"peak memory, MiniLM n={n}")
            results["memory"].append(memory(n))
            done(memory_line(results["memory"][-1]))
    if "long" not in args.skip:
        plan_long = SMOKE_LONG if args.smoke else LONG
        if args.long_model:
            plan_long = {m: n for m, n in plan_long.items() if m in args.long_model}
        results["long"] = long_rows(plan_long,
                                    2 if args.smoke else args.reps or REPS,
                                    "smollm2" not in args.skip and smollm2_installed(), step,
                                    done)
    results["machine"]["load_average_at_end"] = list(os.getloadavg())
    results["targets"] = targets(results)
    print_table(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
