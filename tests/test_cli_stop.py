"""Ctrl+C stops a command in one line on stderr with status 130 (as a shell reports
SIGINT), not a Python traceback through torch's modules."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ctrl_c_during_a_sweep_says_one_line_and_exits_130():
    text = " ".join(f"w{i}" for i in range(40))
    process = subprocess.Popen(
        [sys.executable, "-m", "posviz", "sweep", "--text", text, "--count", "1000000",
         "--progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    before = []
    try:
        for line in process.stderr:           # its runs have started: a progress line
            before.append(line)
            if line.startswith("posviz: run "):
                break
        else:
            raise AssertionError("".join(before))
        process.send_signal(signal.SIGINT)
        out, after = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, "".join(before) + after
    assert after == "posviz: stopped (Ctrl+C)\n", after
    assert out == ""
