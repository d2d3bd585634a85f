"""Two trees of posviz measured in lockstep: painted - bare forward, a few reorders at a time.

    .venv/bin/python benchmarks/lockstep.py ../before .                 # built-in, 16 ... 512
    .venv/bin/python benchmarks/lockstep.py ../before . --model minilm --sizes 16 64
    .venv/bin/python benchmarks/lockstep.py ../before . --blocks 40 --json ab.json
    .venv/bin/python benchmarks/lockstep.py . . --env-b OMP_WAIT_POLICY=PASSIVE   # two settings

Each tree's window runs in a process of its own (the tree's posviz, benchmarks/window.py
and measures.py, started by this Python) and the two take turns, a block of reorders
each (A B B A ...; a block's first reorder warms the tree up and is not counted), as
run.py measures one reorder: the visible plots painted, then Engine.evaluate and the bare
forward on the window's worker. A change in the shared machine's speed then hits both
trees alike, which two runs of run.py one after the other cannot promise (between two
such runs a row's painted - bare moved by up to 20 points).

Prints per size, tree A then tree B: painted, bare forward, painted - bare (medians) and
compute / bare, and B's painted - bare against A's in percent.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

SIZES = (16, 64, 128, 256, 512)


def child(model: str) -> None:
    """One tree's window (the working directory's), driven over stdin: "size N SEED",
    "block K", "quit"; each answer one line of JSON on stdout."""
    root = os.getcwd()
    sys.path[:0] = [root, os.path.join(root, "benchmarks")]
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import numpy as np
    from measures import ComputeVsBare
    from PySide6.QtCore import QEventLoop, QSocketNotifier
    from window import Window

    win = Window()
    if model != "built-in":
        win.load(model)
    answers, sys.stdout = sys.stdout, sys.stderr      # Qt and torch print elsewhere
    state = {}
    loop = QEventLoop()
    commands = QSocketNotifier(sys.stdin.fileno(), QSocketNotifier.Type.Read)

    def answer(value) -> None:
        answers.write(json.dumps(value) + "\n")
        answers.flush()

    def on_command() -> None:
        # the event loop runs between commands, as between a user's reorders
        commands.setEnabled(False)
        words = sys.stdin.readline().split()
        if not words or words[0] == "quit":
            loop.quit()
            return
        if words[0] == "size":
            n, seed = int(words[1]), int(words[2])
            got = win.set_length(n)
            session = win.session
            state.update(rng=np.random.default_rng(seed),
                         pair=win.on_worker(lambda: ComputeVsBare(session, seed)))
            answer({"n": got})
        elif words[0] == "block":
            block = []
            for _ in range(int(words[1])):
                _, painted, _ = win.reorder_painted(state["rng"])
                compute, bare = win.on_worker(state["pair"].once)
                block.append({"painted": painted, "compute": compute, "bare": bare})
            answer(block)
        commands.setEnabled(True)

    commands.activated.connect(on_command)
    answer({"ready": True})
    loop.exec()
    win.close()


class Tree:
    """A tree's window in a child process."""

    def __init__(self, path: Path, model: str, env: list[str] = ()):
        self.path = path
        self.process = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--child", model], cwd=path,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            text=True, env={**os.environ, **dict(item.split("=", 1) for item in env)})
        self.read()

    def read(self):
        line = self.process.stdout.readline()
        if not line:
            raise RuntimeError(f"the window of {self.path} stopped (run.py there says why)")
        return json.loads(line)

    def ask(self, command: str):
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return self.read()

    def close(self) -> None:
        if self.process.poll() is None:
            self.process.stdin.write("quit\n")
            self.process.stdin.close()
            self.process.wait(60)


def medians(block: list[dict]) -> dict:
    import numpy as np

    painted, bare, compute = (float(np.median([r[key] for r in block]))
                              for key in ("painted", "bare", "compute"))
    return {"painted_ms": 1000 * painted, "bare_forward_ms": 1000 * bare,
            "added_ms": 1000 * (painted - bare), "ratio": compute / bare,
            "reps": len(block)}


def measure(a: Tree, b: Tree, n: int, blocks: int, per_block: int) -> dict:
    for tree in (a, b):
        tree.ask(f"size {n} {n}")
    kept = {a: [], b: []}
    for k in range(1 + blocks):                 # the first round warms both up
        for tree in ((a, b) if k % 4 in (0, 3) else (b, a)):
            block = tree.ask(f"block {per_block}")
            if k:
                kept[tree] += block[1:]
    row = {"n": n, "a": medians(kept[a]), "b": medians(kept[b])}
    row["added_b_against_a_percent"] = 100 * (row["b"]["added_ms"] / row["a"]["added_ms"] - 1)
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="*", type=Path, help="tree A, tree B")
    parser.add_argument("--model", default="built-in", help="built-in, minilm or smollm2")
    parser.add_argument("--sizes", type=int, nargs="+", default=SIZES)
    parser.add_argument("--blocks", type=int, default=40, help="blocks per tree and size")
    parser.add_argument("--per-block", type=int, default=3, help="reorders a block (≥ 2)")
    parser.add_argument("--json", type=Path)
    for tree in "ab":
        parser.add_argument(f"--env-{tree}", action="append", default=[], metavar="NAME=VALUE",
                            help=f"an environment variable of tree {tree.upper()}'s window")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child)
        return 0
    problem = (
        "give two trees, A and B" if len(args.trees) != 2 else
        next((f"{tree} is not a posviz tree (no benchmarks/window.py)"
              for tree in args.trees if not (tree / "benchmarks" / "window.py").is_file()),
             None) or
        ("--per-block must be at least 2 (a block's first reorder is not counted)"
         if args.per_block < 2 else None) or
        next((f"--env {item!r} is not NAME=VALUE" for item in args.env_a + args.env_b
              if "=" not in item[1:]), None))
    if problem:
        print(f"lockstep.py: {problem}", file=sys.stderr)
        return 2
    a, b = (Tree(tree.resolve(), args.model, env)
            for tree, env in zip(args.trees, (args.env_a, args.env_b)))
    rows = []
    try:
        for n in args.sizes:
            row = measure(a, b, n, args.blocks, args.per_block)
            rows.append(row)
            first, second = row["a"], row["b"]
            print(f"{args.model} n={n}: painted {first['painted_ms']:.2f} / "
                  f"{second['painted_ms']:.2f} ms, bare forward {first['bare_forward_ms']:.2f}"
                  f" / {second['bare_forward_ms']:.2f}, painted - bare "
                  f"{first['added_ms']:.2f} / {second['added_ms']:.2f} "
                  f"(B {row['added_b_against_a_percent']:+.0f} %), compute / bare "
                  f"{first['ratio']:.2f} / {second['ratio']:.2f}", flush=True)
    finally:
        a.close()
        b.close()
    if args.json:
        record = {"model": args.model, "trees": [str(tree) for tree in args.trees],
                  "env": [args.env_a, args.env_b],
                  "per_block": args.per_block, "rows": rows}
        args.json.write_text(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
