"""Half-precision weights: computed in half precision (a floor measured from its own
rounding) or in float32 (models.hf.precision)? For MiniLM and SmolLM2 in bfloat16 and
float16: how far half-precision arithmetic moves the hidden states from float32
arithmetic over the same weights (the least a measured floor would have to be), the
smallest real change of a reorder, and the time of one forward each way.

    .venv/bin/python benchmarks/precision.py            # minilm, and smollm2 if installed
"""
from __future__ import annotations

import contextlib
import copy
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

TEXT = "the cat sat on the mat because the mat was warm"
WORDS = "the cat sat on the mat because it was warm and then it slept".split()


def relative(a, b) -> np.ndarray:
    """(L+1,) ‖a − b‖ / ‖b‖ per layer of hidden states (L+1, n, d)."""
    a, b = (x.astype(np.float64).reshape(len(x), -1) for x in (a, b))
    return np.linalg.norm(a - b, axis=1) / np.linalg.norm(b, axis=1)


@contextlib.contextmanager
def half_arithmetic():
    """Half-precision weights computed in half precision (posviz's old way)."""
    from posviz.models.hf import backend as module
    kept = module.float32_arithmetic
    module.float32_arithmetic = lambda model: contextlib.nullcontext()
    try:
        yield
    finally:
        module.float32_arithmetic = kept


def with_weights(backend, dtype: str):
    import torch

    from posviz.models.hf.backend import HFBackend
    model = copy.deepcopy(backend.model).to(getattr(torch, dtype))
    return HFBackend(model, backend.tokenizer, backend.family, backend.name, backend.path,
                     backend.head, backend.device, dtype=dtype)


def changes(backend, order) -> np.ndarray:
    """Every change of the reorder (the four metrics and each token's, all layers)."""
    from posviz.analysis.engine import Engine
    from posviz.analysis.symmetry import METRICS
    from posviz.models.config import Positions
    c = Engine(backend).evaluate(backend.tokenize(TEXT), order, Positions()).comparison
    return np.concatenate([*(np.nan_to_num(c.metric(m)) for m in METRICS),
                           c.token_change.ravel()])


def forward_ms(backend, n: int, reps: int = 5) -> float:
    seq = backend.tokenize(" ".join(WORDS[i % len(WORDS)] for i in range(n)))
    ids = np.arange(len(seq))
    backend.run(seq, ids, ids)
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        backend.run(seq, ids, ids)
        times.append(1000 * (time.perf_counter() - start))
    return statistics.median(times)


def measure(name: str) -> None:
    from posviz.models import hf
    plain = hf.load_backend(name)
    n = len(plain.tokenize(TEXT))
    order = np.arange(n)
    order[[1, 2]] = order[[2, 1]]                  # a swap near the start
    real = changes(plain, order)
    print(f"{name}: smallest change of the swap in float32: {real[real > 0].min():.2g}")
    for dtype in ("bfloat16", "float16"):
        half = with_weights(plain, dtype)
        seq, ids = half.tokenize(TEXT), np.arange(n)
        widened = half.run(seq, ids, ids).hidden
        with half_arithmetic():
            rounded = half.run(seq, ids, ids).hidden
            in_half = changes(half, order)
            half_ms = [forward_ms(half, k) for k in (16, 128)]
        spread = relative(rounded, widened)
        in_float32 = changes(half, order)
        float32_ms = [forward_ms(half, k) for k in (16, 128)]
        real_here = in_float32 > 1e-4
        print(f"  {dtype} weights: half arithmetic moves the hidden states by up to "
              f"{spread.max():.2g} (3× that: a floor of {3 * spread.max():.2g}); smallest "
              f"change {in_half[real_here].min():.2g} in half, "
              f"{in_float32[real_here].min():.2g} in float32 arithmetic; forward at "
              f"n=16/128: {half_ms[0]:.0f}/{half_ms[1]:.0f} ms in half, "
              f"{float32_ms[0]:.0f}/{float32_ms[1]:.0f} ms in float32")


def main() -> None:
    import torch

    from posviz.models.hf import available_models
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads")
    for name in ("minilm", "smollm2"):
        if name in {source.spec for source in available_models()}:
            measure(name)


if __name__ == "__main__":
    main()
