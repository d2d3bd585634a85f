"""What the benchmark measures: reorder latency against compute and the bare forward,
a mouse drag's stalls, start-up in fresh processes, peak memory and profiles.

Imported by ``run.py``, which sets up the environment and ``sys.path`` first; numpy,
torch, Qt and posviz are imported inside the functions that use them.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from window import Window

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def installed(spec: str, *modules: str) -> bool:
    """Whether the bundled model ``spec`` and the packages that read it are installed."""
    try:
        from posviz.models import hf
        hf.resolve(spec)
        for module in ("transformers", *modules):
            __import__(module)
    except Exception:
        return False
    return True


def summary(seconds: list[float]) -> dict:
    """Median, 95th percentile and extremes, in milliseconds."""
    import numpy as np

    ms = np.asarray(seconds, dtype=float) * 1000
    return {"median": float(np.median(ms)), "p95": float(np.percentile(ms, 95)),
            "min": float(ms.min()), "max": float(ms.max()), "count": int(ms.size)}


def latency(win: Window, model: str, n: int, reps: int, warmup: int, seed: int) -> dict:
    """Reorder-to-painted in the window, compute-only and the bare forward outside it
    (on the window's compute worker, while the window is idle: Window.on_worker), the
    three interleaved repetition by repetition, so that a change in how fast the
    shared machine runs hits all three alike (``added`` compares them)."""
    import numpy as np

    got = win.set_length(n)
    rng = np.random.default_rng(seed)
    session = win.session
    compute_and_bare = win.on_worker(lambda: ComputeVsBare(session, seed))
    shown, painted, worker, compute, bare, plots = [], [], [], [], [], []
    for rep in range(warmup + reps):
        s, p, w = win.reorder_painted(rng)
        c, b = win.on_worker(compute_and_bare.once)
        if rep >= warmup:
            plots.append(win.probe.armed)
            shown.append(s)
            painted.append(p)
            worker.append(w / 1000)
            compute.append(c)
            bare.append(b)
    return {"model": model, "n": got, "reps": reps,
            "painted_ms": summary(painted), "shown_ms": summary(shown),
            "worker_ms": summary(worker), "compute_ms": summary(compute),
            "bare_forward_ms": summary(bare),
            "plots_painted": min(plots),          # the plots on screen each reorder waited for
            "ratio": float(np.median(compute) / np.median(bare)),
            # what posviz adds to the forward a reorder cannot avoid, in the same run:
            # less sensitive to how fast a shared machine happens to be than painted
            "added_ms": float(np.median(painted) - np.median(bare)) * 1000}


def bare_forward(backend):
    """f(seq, order, position_ids): the same model run directly, with attentions and
    hidden states, and nothing of posviz around it."""
    import torch

    from posviz.models.builtin.backend import BuiltinBackend
    if not isinstance(backend, BuiltinBackend):                         # Hugging Face
        model = backend.model

        def run(seq, order, position_ids):
            ids = torch.tensor([[seq.ids[i] for i in order]])              # (1, n)
            extra = ({"token_type_ids": torch.zeros_like(ids)} if backend.family.name == "bert"
                     else {"use_cache": False})
            with torch.inference_mode():
                return model(input_ids=ids, attention_mask=torch.ones_like(ids),
                             position_ids=torch.as_tensor(position_ids)[None],
                             output_attentions=True, output_hidden_states=True, **extra)
        return run

    from posviz.models.request import Request

    def run(seq, order, position_ids):          # the built-in model is its own reference
        return backend.model.run(list(seq.ids), Request(order, position_ids))
    return run


class ComputeVsBare:
    """Engine.evaluate (reference cached, as in the window) against the bare forward,
    one after the other on the same random order (each first in turn), outside the
    window."""

    def __init__(self, session, seed: int):
        import numpy as np

        from posviz.analysis.engine import Engine

        self.seq, self.positions = session.seq, session.positions
        self.movable = session.movable_slots()                  # (n,) bool
        self.engine = Engine(session.backend)
        self.engine.reference(self.seq, self.positions)
        self.forward = bare_forward(session.backend)
        self.rng = np.random.default_rng(seed + 1)
        self.evaluate_first = False

    def once(self) -> tuple[float, float]:
        """Seconds of one evaluate and of one bare forward of a new random order."""
        import numpy as np

        order = np.arange(len(self.seq))
        movable = self.movable
        order[movable] = self.rng.permutation(order[movable])
        pos = self.positions.ids(order)
        # which goes first alternates: the first call after the window's reorder may
        # find torch's threads asleep, and that should not count against one of them
        self.evaluate_first = not self.evaluate_first
        if self.evaluate_first:
            t0 = time.perf_counter()
            self.engine.evaluate(self.seq, order, self.positions)
            t1 = time.perf_counter()
            self.forward(self.seq, order, pos)
            t2 = time.perf_counter()
            return t1 - t0, t2 - t1
        t0 = time.perf_counter()
        self.forward(self.seq, order, pos)
        t1 = time.perf_counter()
        self.engine.evaluate(self.seq, order, self.positions)
        t2 = time.perf_counter()
        return t2 - t1, t1 - t0


def drag(win: Window, n: int, row: str = "first") -> dict:
    """Drag a chip along the first (or the last) row of the strip with the mouse (a move
    event every 16 ms), while a 5 ms timer measures how late the event loop serves it.
    The first row's first movable chip moves the start of the input; the last row's
    (the lowest with two movable chips: the last may hold one alone) moves only its end,
    where a causal model reuses the prefix."""
    import numpy as np
    from probes import StallMeter, spin
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest

    got = win.set_length(n)
    strip = win.window.strip
    movable = np.flatnonzero(win.session.movable_slots())
    if row == "last":
        rows: dict[float, list[int]] = {}
        for i in movable:
            rows.setdefault(strip.chip_rect(int(i)).center().y(), []).append(int(i))
        movable = next((chips for _, chips in sorted(rows.items(), reverse=True)
                        if len(chips) > 1), movable)
    first = int(movable[0])
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
    return {"model": win.session.backend.name, "n": got, "row": row, "moves": len(moves),
            "evaluations_shown": len(shown), "drag_s": released - start,
            "worst_stall_ms": float(lateness.max()),
            "p99_lateness_ms": float(np.percentile(lateness, 99)),
            "ticks": int(lateness.size),
            "newest_painted_after_last_move_ms": (win.probe.last_paint - last_change) * 1000}


def startup(minilm: bool, runs: int) -> dict:
    """Process start (just before Popen) -> first painted window, core ready, first
    evaluation, first painted plots (built-in model) and, with ``minilm``, MiniLM's
    plots painted (asked for as soon as the built-in plots painted); the median of each
    over fresh processes. Beside each, a fresh process that only imports torch
    ("import_torch"): the part of start-up that follows the machine, not posviz."""
    import numpy as np

    moments: dict[str, list] = {}
    for _ in range(runs):
        start = time.monotonic()
        subprocess.run([sys.executable, "-c", "import torch"], check=True, cwd=ROOT,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=300)
        moments.setdefault("import_torch", []).append(time.monotonic() - start)
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
    return probe(["--probe-memory", str(n)], 600, "memory probe")


def probe(arguments: list[str], timeout: float, what: str) -> dict:
    """The JSON line a child ``run.py arguments`` prints; else a RuntimeError with its
    exit status and its own error line (Qt's warnings at its exit come after it)."""
    out = subprocess.run([sys.executable, str(HERE / "run.py"), *arguments],
                         capture_output=True, text=True, cwd=ROOT, timeout=timeout)
    for line in out.stdout.splitlines():
        if line.startswith("{"):
            return json.loads(line)
    lines = out.stderr.strip().splitlines()
    said = [line for line in lines if line.startswith("posviz benchmark:")] or lines[-1:]
    raise RuntimeError(f"{what} failed (exit status {out.returncode}): "
                       f"{said[-1] if said else 'no output'}")


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
    thread while the window follows them, then Engine.evaluate on its own (on the
    window's compute worker, as the latency rows time it)."""
    import numpy as np
    from pyinstrument import Profiler

    from posviz.analysis.engine import Engine

    win.set_length(n)
    rng = np.random.default_rng(0)
    win.reorder_painted(rng)
    gui = Profiler(interval=0.001)
    gui.start()
    for _ in range(reps):
        win.reorder_painted(rng)
    gui.stop()
    session = win.session

    def evaluations() -> Profiler:
        engine = Engine(session.backend)
        engine.reference(session.seq, session.positions)
        profiler = Profiler(interval=0.001)
        profiler.start()
        for _ in range(reps):
            order = np.arange(len(session.seq))
            order[session.movable_slots()] = rng.permutation(order[session.movable_slots()])
            engine.evaluate(session.seq, order, session.positions)
        profiler.stop()
        return profiler
    compute = win.on_worker(evaluations)
    for title, profiler in ((f"GUI thread, {reps} reorders of {model} n={n}", gui),
                            (f"Engine.evaluate, {reps} reorders of {model} n={n}", compute)):
        print(f"\n== {title}")
        print(profiler.output_text(unicode=False, color=False))
