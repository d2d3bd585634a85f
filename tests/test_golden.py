"""Every number the commands print stays what it was (tests/golden.py wrote them): a
change of structure or speed must not move any of them beyond 1e-6."""
from __future__ import annotations

import json
import math

import pytest

from golden import CASES, GOLDEN, machine, run

EXPECTED = json.loads(GOLDEN.read_text())
TOLERANCE = 1e-6
# on another CPU than the one the numbers come from, float32 rounds otherwise: up to
# 1.1e-5 relative seen (SmolLM2), when the code moved nothing
ELSEWHERE = 1e-4
# keys whose values name this machine (where the checkout lives), not a computed result
MACHINE_KEYS = {"path"}


def differences(expected, got, where="", tolerance=TOLERANCE) -> list[str]:
    """Where ``got`` differs from ``expected``: numbers beyond ``tolerance`` (absolute
    and relative), anything else unequal; keys ``got`` adds are new facts, not
    differences."""
    if isinstance(expected, dict):
        if not isinstance(got, dict):
            return [f"{where}: {got!r} is not an object"]
        return [line for key in expected
                for line in (differences(expected[key], got[key], f"{where}.{key}",
                                         tolerance)
                             if key in got else [f"{where}.{key}: missing"])
                if key not in MACHINE_KEYS]
    if isinstance(expected, list):
        if not isinstance(got, list) or len(got) != len(expected):
            return [f"{where}: {len(expected)} items expected"]
        return [line for i, (a, b) in enumerate(zip(expected, got))
                for line in differences(a, b, f"{where}[{i}]", tolerance)]
    if isinstance(expected, float) and isinstance(got, (int, float)):
        if math.isclose(expected, got, rel_tol=tolerance, abs_tol=tolerance):
            return []
        return [f"{where}: {got!r} instead of {expected!r}"]
    return [] if expected == got else [f"{where}: {got!r} instead of {expected!r}"]


@pytest.mark.parametrize("name, argv", CASES, ids=[name for name, _ in CASES])
def test_the_numbers_stay(name, argv):
    if any(model in argv for model in ("minilm", "smollm2")):
        pytest.importorskip("transformers")
    here = EXPECTED.get("machine") == machine()
    found = differences(EXPECTED[name], run(argv), tolerance=TOLERANCE if here else ELSEWHERE)
    assert not found, "\n".join(found[:20] + ([] if here else [
        f"(to {ELSEWHERE:g}: the numbers come from {EXPECTED.get('machine')}, "
        f"this is {machine()})"]))


def test_differences_sees_a_moved_number():
    assert differences({"a": [1.0, 2.0]}, {"a": [1.0, 2.0 + 1e-3]})
    assert differences({"a": [2.0]}, {"a": [2.0 + 1e-5]})
    assert not differences({"a": [2.0]}, {"a": [2.0 + 1e-5]}, tolerance=ELSEWHERE)
    assert not differences({"a": [0.0]}, {"a": [1e-8], "b": 1})
    assert differences({"a": "x"}, {"a": "y"})
    assert not differences({"path": "/here"}, {"path": "/there"})
