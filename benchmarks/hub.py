"""How long `posviz report --model ORG/NAME` takes to fail when the hub cannot be reached.

Each case runs the command in a fresh process with a fresh HF_HOME (nothing cached) and
times it from start to exit (Python's start and posviz's imports included):

- refused: HF_ENDPOINT is a closed port on 127.0.0.1;
- unknown host: HF_ENDPOINT names a host that does not resolve;
- silent: a server on 127.0.0.1 that accepts the connection and never answers
  (tests/hub_stub.py), with huggingface_hub's telemetry as it comes and with
  HF_HUB_DISABLE_TELEMETRY=1 (its agent-registry request waits 3 s of its own first);
- ``--transformers``: for comparison, transformers' own AutoConfig.from_pretrained by
  name against the unknown host (its retries).

    .venv/bin/python benchmarks/hub.py [--runs 5] [--transformers]
"""
from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from hub_stub import Hub  # noqa: E402

COMMAND = [sys.executable, "-m", "posviz", "report", "--model", "someone/tiny-gpt2",
           "--text", "the cat sat on the mat", "--quiet"]
TRANSFORMERS = [sys.executable, "-c", "from transformers import AutoConfig\n"
                "try: AutoConfig.from_pretrained('someone/tiny-gpt2')\nexcept OSError: pass"]


def closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


def timed(command, endpoint: str, **extra) -> tuple[float, str]:
    """Seconds from start to exit, and the last line on stderr."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_CACHE")}
    with tempfile.TemporaryDirectory() as home:
        env.update(HF_ENDPOINT=endpoint, HF_HOME=home, HF_HUB_DISABLE_XET="1",
                   PYTHONPATH=str(ROOT), **extra)
        start = time.perf_counter()
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
        seconds = time.perf_counter() - start
    return seconds, (done.stderr.strip().splitlines() or [""])[-1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--transformers", action="store_true",
                        help="also time transformers' own load by name (about 30 s a run)")
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f}, {os.cpu_count()} cores, "
          f"{args.runs} runs per case; seconds from start to exit")
    with Hub() as silent:
        silent.silent = True
        cases = [("refused", COMMAND, closed_port, {}),
                 ("unknown host", COMMAND, lambda: "http://no-such-host.invalid", {}),
                 ("silent", COMMAND, lambda: silent.url, {}),
                 ("silent, HF_HUB_DISABLE_TELEMETRY=1", COMMAND, lambda: silent.url,
                  {"HF_HUB_DISABLE_TELEMETRY": "1"})]
        if args.transformers:
            cases.append(("transformers by name, unknown host", TRANSFORMERS,
                          lambda: "http://no-such-host.invalid", {}))
        print(f"{'case':<40} {'median':>7} {'min':>7} {'max':>7}  last line")
        for name, command, endpoint, extra in cases:
            runs = [timed(command, endpoint(), **extra)
                    for _ in range(1 if command is TRANSFORMERS else args.runs)]
            seconds = [s for s, _ in runs]
            print(f"{name:<40} {statistics.median(seconds):>7.2f} {min(seconds):>7.2f} "
                  f"{max(seconds):>7.2f}  {runs[-1][1][:90]}")


if __name__ == "__main__":
    main()
