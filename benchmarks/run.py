"""posviz benchmark: does the window follow a drag live on this machine?

    .venv/bin/python benchmarks/run.py                  # the full run (a few minutes)
    .venv/bin/python benchmarks/run.py --smoke          # tiny sizes, a few repetitions
    .venv/bin/python benchmarks/run.py --json out.json  # also write the numbers as JSON

It drives the real main window offscreen and measures, for the built-in model and the
bundled all-MiniLM-L6-v2 (if installed):
  reorder-to-painted  session.shuffle() -> the newest evaluation shown -> the last visible
                      plot painted (median and 95th percentile over random reorders)
  compute-only        Engine.evaluate of the same reorders (the model run + the metrics),
                      beside the bare forward pass of the same model with attentions and
                      hidden states, and their ratio
  responsiveness      the longest stall of the GUI event loop (a 5 ms timer's worst
                      lateness) during a mouse drag of a chip while MiniLM recomputes
  start-up            process start -> first painted window, -> first painted plots
  peak memory         peak RSS of a window that loads MiniLM and runs the largest n
Each number is printed beside its target, with met / missed. The machine is whatever it
runs on: the table starts with its cores, torch version and thread count.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))
# Before numpy and Qt are imported: numpy's BLAS threads beside torch's double the model
# time (see NOTES), there is no display, and a model must never be fetched.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

FULL = {"builtin": (16, 64, 256), "minilm": (16, 64, 128, 512), "reps": 50, "warmup": 5,
        "drag_n": 512, "memory_n": 512}
SMOKE = {"builtin": (8, 16), "minilm": (16,), "reps": 4, "warmup": 1,
         "drag_n": 32, "memory_n": 32}
WAIT_S = 60                        # give up on one evaluation after this long
WORDS = ("the cat sat on a mat because it was warm and the dog ran to an old house "
         "while rain fell over green hills near the small town by the river").split()


# -- statistics -----------------------------------------------------------------------
def summary(seconds: list[float]) -> dict:
    """Median, 95th percentile and extremes, in milliseconds."""
    import numpy as np

    ms = np.asarray(seconds, dtype=float) * 1000
    return {"median": float(np.median(ms)), "p95": float(np.percentile(ms, 95)),
            "min": float(ms.min()), "max": float(ms.max()), "count": int(ms.size)}


# -- the machine ----------------------------------------------------------------------
def machine() -> dict:
    import numpy
    import PySide6
    import pyqtgraph
    import torch

    info = {"python": platform.python_version(), "platform": platform.platform(),
            "cpu_count": os.cpu_count(), "torch": torch.__version__,
            "torch_threads": torch.get_num_threads(), "numpy": numpy.__version__,
            "pyside6": PySide6.__version__, "pyqtgraph": pyqtgraph.__version__,
            "OPENBLAS_NUM_THREADS": os.environ.get("OPENBLAS_NUM_THREADS"),
            "load_average_at_start": list(os.getloadavg())}
    try:
        import transformers
        info["transformers"] = transformers.__version__
    except ImportError:
        info["transformers"] = None
    return info


def minilm_installed() -> bool:
    try:
        from posviz.core import hf
        hf.resolve("minilm")
        import transformers  # noqa: F401
    except Exception:
        return False
    return True


# -- the window -----------------------------------------------------------------------
class Window:
    """The real MainWindow, shown offscreen, driven through its session."""

    def __init__(self):
        from PySide6.QtCore import QSettings
        from PySide6.QtWidgets import QApplication

        from posviz.gui.import_hook import answer_pyside_hook_cheaply
        answer_pyside_hook_cheaply()          # as posviz.gui.app.main does
        from posviz.gui.window import MainWindow
        from probes import PaintProbe, spin, wait_for

        self.app = QApplication.instance() or QApplication(["posviz-bench"])
        from posviz.gui.collector import collect_in_gui_thread
        collect_in_gui_thread()               # as posviz.gui.app.main does
        self._settings_file = tempfile.NamedTemporaryFile(suffix=".ini", delete=False)
        self.settings = QSettings(self._settings_file.name, QSettings.IniFormat)
        self.window = MainWindow(self.settings)
        self.window.show()
        self.window.start()
        self.controller = self.window.controller
        if not wait_for(self.controller.evaluated, WAIT_S):
            raise RuntimeError("the window never showed a first evaluation")
        self.probe = PaintProbe()
        self.shown = None                 # (time, worker ms) of the newest order's evaluation
        self.last_change = None           # time of the last change to the session
        self.session.subscribe(self._changed)
        self.controller.evaluated.connect(self._evaluated)
        spin(0.3)

    @property
    def session(self):
        return self.controller.session

    def load_minilm(self) -> None:
        from probes import spin, wait_for

        done = []
        from posviz.core.document import ModelSpec

        self.controller.modelLoaded.connect(lambda spec: done.append(spec))
        self.controller.modelFailed.connect(lambda message: done.append(None))
        self.controller.load(ModelSpec.pretrained("minilm"))
        if not wait_for(self.controller.evaluated, 4 * WAIT_S,
                        lambda: done and self.session.backend.name != "built-in"):
            raise RuntimeError(f"MiniLM did not load: {done}")
        spin(0.3)

    def set_length(self, n: int) -> int:
        """Give the session a text of exactly n tokens (special tokens included)."""
        from probes import spin, wait_for

        backend, words = self.session.backend, n
        for _ in range(20):
            text = " ".join(WORDS[i % len(WORDS)] for i in range(words))
            got = len(backend.tokenize(text))
            if got == n:
                break
            words += n - got
        else:
            raise RuntimeError(f"could not make a text of {n} tokens")
        self.session.set_text(text)
        if not wait_for(self.controller.evaluated, WAIT_S,
                        lambda: len(self.controller.last_shown.evaluation.order) == n):
            raise RuntimeError(f"no evaluation for n = {n}")
        spin(0.3)
        return len(self.session.seq)

    def _changed(self, event) -> None:
        self.shown, self.last_change = None, time.monotonic()

    def _evaluated(self, shown, ms: float) -> None:
        """The window has just shown an evaluation (its slot ran first): if it is the
        newest order's, note the time and wait for the visible plots to paint."""
        import numpy as np
        from probes import visible_canvases

        if np.array_equal(shown.evaluation.order, self.session.order):
            self.shown = (time.monotonic(), ms)
            self.probe.arm(visible_canvases(self.window.plots))

    def wait_painted(self) -> None:
        """Until the newest order's evaluation is shown and its visible plots painted."""
        from probes import wait_for

        if not wait_for(self.probe.allPainted, WAIT_S,
                        lambda: self.shown is not None and self.probe.pending == 0
                        and self.probe.last_paint is not None):
            raise RuntimeError("the newest order was never shown and painted")

    def reorder_painted(self, rng) -> tuple[float, float, float]:
        """One random reorder; seconds to shown and to painted, and the worker's ms."""
        import numpy as np

        before = self.session.order.copy()
        start = time.monotonic()
        self.session.shuffle(rng)
        while np.array_equal(before, self.session.order):   # a shuffle may change nothing
            self.session.shuffle(rng)
        self.wait_painted()
        shown, worker_ms = self.shown
        return shown - start, self.probe.last_paint - start, worker_ms

    def close(self) -> None:
        self.window.close()
        os.unlink(self._settings_file.name)


# -- measurements ---------------------------------------------------------------------
def latency(win: Window, model: str, n: int, reps: int, warmup: int, seed: int) -> dict:
    """Reorder-to-painted in the window, compute-only and the bare forward outside it,
    the three interleaved repetition by repetition, so that a change in how fast the
    shared machine runs hits all three alike (``added`` compares them)."""
    import numpy as np

    got = win.set_length(n)
    rng = np.random.default_rng(seed)
    compute_and_bare = ComputeVsBare(win.session, seed)
    shown, painted, worker, compute, bare = [], [], [], [], []
    for rep in range(warmup + reps):
        s, p, w = win.reorder_painted(rng)
        c, b = compute_and_bare.once()
        if rep >= warmup:
            shown.append(s)
            painted.append(p)
            worker.append(w / 1000)
            compute.append(c)
            bare.append(b)
    return {"model": model, "n": got, "reps": reps,
            "painted_ms": summary(painted), "shown_ms": summary(shown),
            "worker_ms": summary(worker), "compute_ms": summary(compute),
            "bare_forward_ms": summary(bare),
            "ratio": float(np.median(compute) / np.median(bare)),
            # what posviz adds to the forward a reorder cannot avoid, in the same run:
            # less sensitive to how fast a shared machine happens to be than painted
            "added_ms": float(np.median(painted) - np.median(bare)) * 1000}


def bare_forward(backend):
    """f(seq, order, position_ids): the same model run directly, with attentions and
    hidden states, and nothing of posviz around it."""
    import numpy as np
    import torch

    if hasattr(backend, "model") and hasattr(backend, "tokenizer"):     # Hugging Face
        model = backend.model

        def run(seq, order, position_ids):
            ids = torch.tensor([[seq.ids[i] for i in order]])              # (1, n)
            extra = ({"token_type_ids": torch.zeros_like(ids)} if backend.family == "bert"
                     else {"use_cache": False})
            with torch.inference_mode():
                return model(input_ids=ids, attention_mask=torch.ones_like(ids),
                             position_ids=torch.as_tensor(position_ids)[None],
                             output_attentions=True, output_hidden_states=True, **extra)
        return run

    def run(seq, order, position_ids):          # the built-in model is its own reference
        return backend.model([seq.ids[i] for i in order], np.asarray(position_ids))
    return run


class ComputeVsBare:
    """Engine.evaluate (reference cached, as in the window) against the bare forward,
    one after the other on the same random order, outside the window."""

    def __init__(self, session, seed: int):
        import numpy as np

        from posviz.core.engine import Engine

        self.seq, self.positions = session.seq, session.positions
        self.movable = session.movable_slots()                  # (n,) bool
        self.engine = Engine(session.backend)
        self.engine.reference(self.seq, self.positions)
        self.forward = bare_forward(session.backend)
        self.rng = np.random.default_rng(seed + 1)

    def once(self) -> tuple[float, float]:
        """Seconds of one evaluate and of one bare forward of a new random order."""
        import numpy as np

        from posviz.core.engine import position_ids

        order = np.arange(len(self.seq))
        movable = self.movable
        order[movable] = self.rng.permutation(order[movable])
        pos = position_ids(order, self.positions)
        t0 = time.perf_counter()
        self.engine.evaluate(self.seq, order, self.positions)
        t1 = time.perf_counter()
        self.forward(self.seq, order, pos)
        t2 = time.perf_counter()
        return t1 - t0, t2 - t1


def drag(win: Window, n: int) -> dict:
    """Drag a chip along the first row of the strip with the mouse (a move event every
    16 ms), while a 5 ms timer measures how late the event loop serves it."""
    import numpy as np
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest

    from probes import StallMeter, spin

    got = win.set_length(n)
    strip = win.window.strip
    first = int(np.flatnonzero(win.session.movable_slots())[0])
    rect = strip.chip_rect(first)
    y = int(rect.center().y())
    x0, x1 = int(rect.center().x()), strip.width() - 12
    moves = []
    strip.moveRequested.connect(lambda src, dst: moves.append(dst))
    shown = []
    win.controller.evaluated.connect(lambda ev, ms: shown.append(ms))
    meter = StallMeter(5)
    meter.start()
    start = time.monotonic()
    QTest.mousePress(strip, Qt.LeftButton, Qt.NoModifier, QPoint(x0, y))
    for x in range(x0 + 4, x1, 8):
        QTest.mouseMove(strip, QPoint(x, y))
        spin(0.016)
    QTest.mouseRelease(strip, Qt.LeftButton, Qt.NoModifier, QPoint(x1, y))
    released = time.monotonic()
    if not moves:
        raise RuntimeError("the drag moved no chip")
    win.wait_painted()                    # the newest order's plots
    meter.stop()
    last_change = win.last_change
    lateness = np.asarray(meter.lateness) * 1000
    return {"model": win.session.backend.name, "n": got, "moves": len(moves),
            "evaluations_shown": len(shown), "drag_s": released - start,
            "worst_stall_ms": float(lateness.max()),
            "p99_lateness_ms": float(np.percentile(lateness, 99)),
            "ticks": int(lateness.size),
            "newest_painted_after_last_move_ms": (win.probe.last_paint - last_change) * 1000}


def startup(minilm: bool, runs: int) -> dict:
    """Process start (just before Popen) -> first painted window, core ready, first
    evaluation, first painted plots (built-in model) and, with ``minilm``, MiniLM's
    plots painted (asked for as soon as the built-in plots painted); the median of each
    over fresh processes."""
    import numpy as np

    moments: dict[str, list] = {}
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            command = [sys.executable, str(HERE / "startup_probe.py"),
                       "--settings", str(Path(folder) / "settings.ini")]
            if minilm:
                command.append("--minilm")
            start = time.monotonic()
            process = subprocess.Popen(command, stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
            out, _ = process.communicate(timeout=300)
        for line in out.splitlines():
            if line.startswith("{"):
                record = json.loads(line)
                if record["event"] in ("error", "timeout"):
                    raise RuntimeError(f"start-up probe: {record}")
                moments.setdefault(record["event"], []).append(record["t"] - start)
    return {event: {"median_ms": 1000 * float(np.median(t)), "runs": len(t),
                    "all_ms": [round(1000 * v, 1) for v in t]}
            for event, t in moments.items()}


def memory(n: int) -> dict:
    """Peak RSS of a fresh process whose window loads MiniLM and runs n tokens."""
    out = subprocess.run([sys.executable, str(HERE / "run.py"), "--probe-memory", str(n)],
                         capture_output=True, text=True, cwd=ROOT, timeout=600)
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    raise RuntimeError(f"memory probe failed: {out.stderr.strip().splitlines()[-1:]}")


def rss_now_mb() -> float:
    """Resident memory of this process now (Linux), in MiB."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_rss_mb() -> float:
    """This process's peak resident memory, in MiB: ``VmHWM`` (Linux), which starts
    afresh at exec. ``ru_maxrss`` does not: a process started by a large one (this
    benchmark, holding MiniLM at n = 512) reports its parent's RSS as its own peak."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024             # kB
    import resource
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024   # KiB on Linux


def probe_memory(n: int) -> None:
    """(In the child process.) Window + MiniLM + n tokens + a few reorders; peak RSS."""
    import numpy as np

    stages = {}
    win = Window()
    stages["window"] = rss_now_mb()
    win.load_minilm()
    stages["minilm_loaded"] = rss_now_mb()
    win.set_length(n)
    stages[f"n={n}_shown"] = rss_now_mb()
    rng = np.random.default_rng(0)
    for _ in range(5):
        win.reorder_painted(rng)
    stages["after_5_reorders"] = rss_now_mb()
    print(json.dumps({"n": n, "peak_rss_mb": peak_rss_mb(), "rss_now_mb": rss_now_mb(),
                      "rss_by_stage_mb": stages}), flush=True)
    win.close()


def profile(win: Window, model: str, n: int, reps: int) -> None:
    """Profile reorders of one size with pyinstrument (the `bench` extra): the GUI
    thread while the window follows them, then Engine.evaluate on its own."""
    import numpy as np
    from pyinstrument import Profiler

    from posviz.core.engine import Engine

    win.set_length(n)
    rng = np.random.default_rng(0)
    win.reorder_painted(rng)
    gui = Profiler(interval=0.001)
    gui.start()
    for _ in range(reps):
        win.reorder_painted(rng)
    gui.stop()
    session = win.session
    engine = Engine(session.backend)
    engine.reference(session.seq, session.positions)
    compute = Profiler(interval=0.001)
    compute.start()
    for _ in range(reps):
        order = np.arange(len(session.seq))
        order[session.movable_slots()] = rng.permutation(order[session.movable_slots()])
        engine.evaluate(session.seq, order, session.positions)
    compute.stop()
    for title, profiler in ((f"GUI thread, {reps} reorders of {model} n={n}", gui),
                            (f"Engine.evaluate, {reps} reorders of {model} n={n}", compute)):
        print(f"\n== {title}")
        print(profiler.output_text(unicode=False, color=False))


# -- targets and the table ------------------------------------------------------------
def targets(results: dict) -> list[dict]:
    """Every target of the issue that this run measured: (name, measured, limit, met)."""
    rows = []

    def add(name, measured, limit, unit="ms"):
        if measured is not None:
            rows.append({"target": name, "measured": round(measured, 1), "limit": limit,
                         "unit": unit, "met": bool(measured <= limit)})

    by = {(r["model"], r["n"]): r for r in results.get("latency", [])}
    for model, n, limit in (("built-in", 64, 20), ("minilm", 64, 40), ("minilm", 128, 50)):
        if (model, n) in by:
            add(f"{model} n={n}: median reorder-to-painted", by[model, n]["painted_ms"]["median"],
                limit)
    if ("minilm", 128) in by:
        add("minilm n=128: compute / bare forward", by["minilm", 128]["ratio"], 1.3, "x")
    d = results.get("drag")
    if d and d["n"] == 512:
        add("minilm n=512 drag: worst GUI stall", d["worst_stall_ms"], 50)
        add("minilm n=512 drag: newest order painted", d["newest_painted_after_last_move_ms"],
            1000)
    s = results.get("startup", {})
    if "window" in s:
        add("first painted window", s["window"]["median_ms"], 1000)
    if "plots" in s:
        add("first painted plots (built-in)", s["plots"]["median_ms"], 2000)
    m = results.get("memory")
    if m and m["n"] == 512:
        add("peak RSS, MiniLM n=512", m["peak_rss_mb"], 1536, "MB")
    return rows


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
        cells = [f"{r[k]['median']:7.1f} /{r[k]['p95']:6.1f}"
                 for k in ("painted_ms", "shown_ms", "compute_ms", "bare_forward_ms")]
        cells.insert(2, f"{r['worker_ms']['median']:7.1f}")
        print(f"{r['model']:<10}{r['n']:>5}  " + "  ".join(f"{c:>15}" if len(c) > 7 else c
                                                         for c in cells)
              + f"  {r['ratio']:6.2f}  {r['added_ms']:6.1f}")
    d = results.get("drag")
    if d:
        print(f"\ndrag of a chip, {d['model']} n={d['n']}: {d['moves']} moves in "
              f"{d['drag_s']:.1f} s, {d['evaluations_shown']} evaluations shown; worst stall "
              f"{d['worst_stall_ms']:.0f} ms (p99 {d['p99_lateness_ms']:.0f} ms); newest order "
              f"painted {d['newest_painted_after_last_move_ms']:.0f} ms after the last move")
    s = results.get("startup")
    if s:
        runs = max(v["runs"] for v in s.values())
        print(f"\nstart-up, process start -> (median of {runs} processes): "
              + ", ".join(f"{event} {v['median_ms']:.0f} ms" for event, v in s.items()))
    mem = results.get("memory")
    if mem:
        stages = ", ".join(f"{k} {v:.0f}" for k, v in mem["rss_by_stage_mb"].items())
        print(f"peak RSS with MiniLM at n={mem['n']}: {mem['peak_rss_mb']:.0f} MB "
              f"(RSS by stage, MB: {stages})")
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
                        choices=("latency", "minilm", "drag", "startup", "memory"),
                        help="leave a part out (repeatable)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", metavar="MODEL:N",
                        help="instead of the benchmark, profile reorders of one size with "
                             "pyinstrument, e.g. minilm:512 or built-in:64")
    parser.add_argument("--probe-memory", type=int, help=argparse.SUPPRESS)
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
    with_minilm = "minilm" not in args.skip and minilm_installed()
    if not with_minilm:
        results["skipped"].append("MiniLM (not installed or --skip minilm)")
    step = lambda text: print(f"[{time.strftime('%H:%M:%S')}] {text}", flush=True)  # noqa: E731

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
    if with_minilm and ("latency" not in args.skip or "drag" not in args.skip):
        step("loading MiniLM")
        win.load_minilm()
        if "latency" not in args.skip:
            for n in plan["minilm"]:
                step(f"MiniLM n={n}: {plan['reps']} reorders")
                results["latency"].append(latency(win, "minilm", n, plan["reps"],
                                                  plan["warmup"], args.seed))
        if "drag" not in args.skip:
            step(f"MiniLM n={plan['drag_n']}: dragging a chip")
            results["drag"] = drag(win, plan["drag_n"])
    if win is not None:
        win.close()
    if "startup" not in args.skip:
        runs = 1 if args.smoke else 5
        what = "the window, then MiniLM" if with_minilm else "the window"
        step(f"start-up of {what} ({runs} processes)")
        results["startup"] = startup(with_minilm, runs)
    if "memory" not in args.skip and with_minilm:
        step(f"peak memory, MiniLM n={plan['memory_n']}")
        results["memory"] = memory(plan["memory_n"])
    results["machine"]["load_average_at_end"] = list(os.getloadavg())
    results["targets"] = targets(results)
    print_table(results)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
