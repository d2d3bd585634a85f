"""Causal prefix reuse against a full run: a chip moved within the last quarter of a
causal input, evaluated from its first moved slot on (analysis.prefix) and in full, beside
the bare forward of the same order; the three take turns, repetition by repetition,
each going first in turn.

Imported by ``run.py`` (which sets up the environment and ``sys.path``).
"""
from __future__ import annotations

import time

from measures import bare_forward, installed, summary
from window import text_of


def late_move(movable, rng):
    """An order moving one movable chip to another slot within the last quarter."""
    import numpy as np

    n = movable.shape[0]
    late = np.flatnonzero(movable[3 * n // 4:]) + 3 * n // 4
    src, dst = rng.choice(late, size=2, replace=False)
    order = list(range(n))
    order.insert(int(dst), order.pop(int(src)))
    return np.asarray(order)


def prefix_reuse(backend, n: int, reps: int, warmup: int, seed: int, label: str) -> dict:
    """Medians of Engine.evaluate with prefix reuse, without it, and the bare forward."""
    import numpy as np

    from posviz.analysis.engine import Engine
    from posviz.analysis.prefix import first_moved
    from posviz.models.config import Positions

    seq = backend.tokenize(text_of(backend, n))
    positions = Positions()
    fast, full = Engine(backend), Engine(backend, reuse_prefix=False)
    if not fast.reuse_prefix:
        raise RuntimeError(f"{label} offers no prefix reuse")
    fast.reference(seq, positions)
    full.reference(seq, positions)
    forward = bare_forward(backend)
    movable = seq.movable()
    rng = np.random.default_rng(seed)
    times = {"prefix": [], "full": [], "bare": []}
    suffix = []
    for rep in range(warmup + reps):
        order = late_move(movable, rng)
        pos = positions.ids(order)
        calls = [("prefix", lambda: fast.evaluate(seq, order, positions)),
                 ("full", lambda: full.evaluate(seq, order, positions)),
                 ("bare", lambda: forward(seq, order, pos))]
        shift = rep % 3                 # each goes first in turn: no one pays it always
        for key, call in calls[shift:] + calls[:shift]:
            t0 = time.perf_counter()
            call()
            if rep >= warmup:
                times[key].append(time.perf_counter() - t0)
            suffix.append(n - first_moved(order, pos, np.arange(n)))
    stats = {f"{key}_ms": summary(values) for key, values in times.items()}
    return {"model": label, "n": len(seq), "reps": reps, **stats,
            "suffix_slots_median": float(np.median(suffix)),
            "prefix_over_bare": stats["prefix_ms"]["median"] / stats["bare_ms"]["median"],
            "prefix_over_full": stats["prefix_ms"]["median"] / stats["full_ms"]["median"]}


def builtin_causal(n: int, reps: int, warmup: int, seed: int) -> dict:
    from posviz.models.builtin.backend import BuiltinBackend
    from posviz.models.config import ModelConfig

    return prefix_reuse(BuiltinBackend(ModelConfig(mask="causal")), n, reps, warmup, seed,
                        "built-in causal")


def smollm2_installed() -> bool:
    return installed("smollm2", "gguf")


def bare_median_ms(session, reps: int, seed: int) -> float:
    """The median bare forward of random reorders of the session's model and text."""
    import numpy as np
    from measures import ComputeVsBare

    pair = ComputeVsBare(session, seed)
    return float(np.median([pair.once()[1] for _ in range(reps)]) * 1000)
