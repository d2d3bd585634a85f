"""The numbers posviz's commands print, for a fixed set of inputs: written once by
``python tests/golden.py`` (tests/data/golden.json, with the CPU they come from) and
compared by tests/test_golden.py, so a change of the code that moves any of them is
seen."""
from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

GOLDEN = Path(__file__).with_name("data") / "golden.json"
# discrete fields that rank tokens by a number beside them: {field: (the numbers' field,
# whether those are cumulative shares)}. Two numbers within rounding may rank either way
# on another CPU, so tests/test_golden.py compares such a field only where they differ.
RANKED = {"top_tokens": ("top_tokens_share", True)}
WRITING = __name__ == "__main__"
TEXT = "the cat sat on the mat because the mat was warm"
ORDERS = ("10,9,8,7,6,5,4,3,2,1,0", "3,0,1,2,4,5,6,7,8,9,10", "0,1,2,3,4,5,6,8,7,9,10",
          "1,0,2,3,4,5,6,7,8,9,10")


def recorded_kinds() -> tuple[str, ...]:
    """The encoding kinds of the registry, all of them when writing the file; else
    those it holds numbers of (a kind added since has none until it is written again)."""
    from posviz.models.encodings import KINDS
    held = json.loads(GOLDEN.read_text()) if GOLDEN.exists() and not WRITING else None
    return tuple(kind for kind in KINDS if held is None or any(
        name.startswith(f"report {kind} ") for name in held))


# (name, argv): every encoding under both masks and both position modes, the norms,
# residuals, precision, offsets and sizes, the real models, and the experiments
CASES: list[tuple[str, list[str]]] = []
for pe in recorded_kinds():
    for mask in ("bidirectional", "causal"):
        for positions in ("slot", "token"):
            for order in ORDERS[:2] if positions == "token" else ORDERS:
                CASES.append((f"report {pe} {mask} {positions} {order}",
                              ["report", "--pe", pe, "--mask", mask, "--positions",
                               positions, "--text", TEXT, "--order", order, "--json"]))
for extra in (["--norm", "post"], ["--norm", "none"], ["--no-residual"],
              ["--dtype", "float64"], ["--offset", "7"], ["--layers", "2", "--heads", "2",
              "--d-model", "28", "--d-ff", "50", "--seed", "3"], ["--pe-scale", "4"],
              ["--layers", "6", "--heads", "8", "--d-model", "64", "--mask", "causal"]):
    for pe in ("sinusoidal", "rope", "alibi"):
        CASES.append((f"report {pe} {' '.join(extra)}",
                      ["report", "--pe", pe, *extra, "--text", TEXT, "--order", ORDERS[0],
                       "--json"]))
CASES.append(("report minilm", ["report", "--model", "minilm", "--text",
                                 "the cat sat on the [MASK] .", "--json"]))
CASES.append(("report minilm prefix", ["report", "--model", "minilm", "--text", TEXT,
                                        "--order", "0,2,1,3,4,5,6,7,8,9,10,11,12", "--json"]))
for order in ORDERS:
    CASES.append((f"report smollm2 {order}", ["report", "--model", "smollm2", "--text", TEXT,
                                              "--order", order, "--json"]))
for pe in ("sinusoidal", "alibi"):
    CASES.append((f"report {pe} odd width", ["report", "--pe", pe, "--d-model", "63", "--heads",
                                             "3", "--text", TEXT, "--json"]))
for model in ("minilm", "smollm2"):
    CASES.append((f"report {model} token 3", ["report", "--model", model, "--text", TEXT,
                                              "--positions", "token", "--offset", "3",
                                              "--json"]))
for kind in ("random", "swap", "prefix", "reverse"):
    for pe, mask in (("none", "causal"), ("rope", "bidirectional"), ("t5", "causal")):
        drawn = ["--count", "12", "--seed", "1"] if kind in ("random", "prefix") else []
        CASES.append((f"sweep {kind} {pe} {mask}",     # a fixed set refuses a count, a seed
                      ["sweep", "--pe", pe, "--mask", mask, "--text", TEXT, "--kind", kind,
                       *drawn, "--json"]))
CASES.append(("sweep all", ["sweep", "--text", "a b c d e", "--kind", "all", "--json"]))
CASES.append(("sweep minilm", ["sweep", "--model", "minilm", "--text", TEXT, "--kind",
                               "random", "--count", "6", "--json"]))
for pe, mask in (("sinusoidal", "bidirectional"), ("none", "causal")):
    CASES.append((f"probe {pe} {mask}", ["probe", "--pe", pe, "--mask", mask, "--json"]))
for paper in ("haviv2022", "chi2023", "rope-decay", "alibi-slopes", "sinha2022"):
    CASES.append((f"paper {paper}", ["paper", paper, "--json"]))


def machine() -> str:
    """The CPU the numbers come from: float32 rounds otherwise on another (another vector
    width, another BLAS path), by up to 1.1e-5 relative in SmolLM2's entries."""
    import platform

    import torch
    cpuinfo = Path("/proc/cpuinfo")
    names = [line.split(":", 1)[1].strip() for line in
             (cpuinfo.read_text().splitlines() if cpuinfo.exists() else ())
             if line.startswith("model name")]
    return " ".join([platform.machine(), *names[:1], torch.backends.cpu.get_cpu_capability()])


def run(argv: list[str]) -> dict:
    """One command's JSON output, run in this process."""
    from posviz.cli import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        status = main([*argv, "--quiet"] if argv[0] in ("report", "sweep") else argv)
    if status not in (0, None):
        raise RuntimeError(f"{' '.join(argv)} exited {status}")
    return json.loads(out.getvalue())


if __name__ == "__main__":
    results = {"machine": machine()}
    for name, argv in CASES:
        print(name, file=sys.stderr)
        results[name] = run(argv)
    GOLDEN.write_text(json.dumps(results, indent=0, sort_keys=True) + "\n")
    print(f"{len(results)} cases -> {GOLDEN}", file=sys.stderr)
