"""What measuring the noise floor (analysis.floor) adds to a new reference run: the
reference's own forward against measured_floor, taking turns, medians of a few runs.
A reorder never measures it (tests/test_claims_floor.py counts the forwards).

    .venv/bin/python benchmarks/floor_cost.py            # built-in RoPE, and SmolLM2
"""
from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

WORDS = "the cat sat on the mat because it was warm and then it slept".split()


def timed(call) -> float:
    start = time.perf_counter()
    call()
    return 1000 * (time.perf_counter() - start)


def measure(label: str, backend, n: int, reps: int = 5) -> str:
    from posviz.analysis.floor import measured_floor
    from posviz.models.config import Positions
    from posviz.models.request import Request
    seq = backend.tokenize(" ".join(WORDS[i % len(WORDS)] for i in range(n)))
    identity, positions = np.arange(len(seq)), Positions()
    request = Request(identity, positions.ids(identity))
    reference = backend.run(seq, request)                                  # warm up
    forward, floor = [], []
    for _ in range(reps):
        forward.append(timed(lambda: backend.run(seq, request)))
        floor.append(timed(lambda: measured_floor(backend, seq, positions, reference)))
    a, b = statistics.median(forward), statistics.median(floor)
    return (f"{label:<22} n={len(seq):>4}  reference {a:8.1f} ms  floor {b:8.1f} ms  "
            f"({b / a:.2f}×)")


def main() -> None:
    import torch

    import posviz
    from posviz.models.hf import available_models
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    for n in (16, 128):
        print(measure("built-in rope", posviz.load(pe="rope").backend, n))
    if "smollm2" in {source.spec for source in available_models()}:
        smollm2 = posviz.load("smollm2", offline=True).backend
        for n in (16, 128):
            print(measure("SmolLM2 (rope)", smollm2, n))


if __name__ == "__main__":
    main()
