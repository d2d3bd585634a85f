"""SmolLM2's `posviz report` once its GGUF is converted (models.hf.converted), against
the built-in model's `report`: fresh processes taking turns, start to exit, medians.
The first run converts when posviz's cache holds no copy yet (timed apart).

    .venv/bin/python benchmarks/second_load.py [--runs 5]
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEXT = "the cat sat on the mat because the mat was warm"


def timed(*model: str, env=None) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "posviz", "report", *model, "--text", TEXT,
                    "--quiet"], check=True, stdout=subprocess.DEVNULL, cwd=ROOT,
                   env={**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1",
                        **(env or {})})
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    print(f"first SmolLM2 report (converts if posviz's cache has no copy): "
          f"{timed('--model', 'smollm2'):.1f} s")
    builtin, copy, gguf = [], [], []
    for _ in range(runs):
        builtin.append(timed())
        copy.append(timed("--model", "smollm2"))
    gguf.append(timed("--model", "smollm2", env={"POSVIZ_GGUF_COPY": "0"}))
    a, b = statistics.median(builtin), statistics.median(copy)
    print(f"built-in report {a:.1f} s, SmolLM2 from its copy {b:.1f} s ({b / a:.1f}×), "
          f"medians of {runs} taking turns ({', '.join(f'{t:.1f}' for t in builtin)} / "
          f"{', '.join(f'{t:.1f}' for t in copy)}); SmolLM2 de-quantized from its GGUF "
          f"(POSVIZ_GGUF_COPY=0) once: {gguf[0]:.1f} s; load average "
          f"{os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
