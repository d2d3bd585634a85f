"""A built-in model that would not fit in memory is refused before it is built."""
from __future__ import annotations

import subprocess
import sys

import pytest

from posviz.errors import PosvizInputError
from posviz.models import memory
from posviz.models.config import ModelConfig

GB = 10**9
HUGE = ModelConfig(d_model=4096, layers=64)       # the width and depth at their maximum


@pytest.fixture
def free(monkeypatch):
    """Pretend the system has this many bytes available."""
    def set_free(count):
        monkeypatch.setattr(memory, "available_bytes", lambda: count)
    return set_free


def test_the_widest_deepest_model_is_refused_with_both_numbers(free):
    free(16 * GB)
    need = memory.estimate_bytes(HUGE, 512)
    with pytest.raises(PosvizInputError) as refused:
        memory.check_fits(HUGE, 512)
    message = str(refused.value)
    assert message.startswith(f"this model needs about {memory.size_text(need)} for 512 "
                              f"tokens, but only {memory.size_text(int(16 * GB * memory.SAFETY))}")
    assert "12.8 GB" in message and need > 50 * GB
    assert "\n" not in message


def test_the_default_model_is_accepted(free):
    free(2 * GB)
    memory.check_fits(ModelConfig(), 512)
    assert memory.estimate_bytes(ModelConfig(), 512) < 200 * 10**6


def test_unknown_free_memory_refuses_nothing(free):
    free(None)
    memory.check_fits(HUGE, 512)


def test_weights_are_counted_block_by_block():
    cfg = ModelConfig(layers=3, d_model=8, heads=2, d_ff=16, pe="learned", max_len=10)
    per_block = 4 * 8 * 8 + 2 * 8 * 16 + 16 + 4 * 8
    assert memory.weight_count(cfg) == 3 * per_block + 10 * 8
    assert memory.weight_count(cfg.replace(pe="rope", norm="none")) == 3 * (per_block - 32)


def test_the_estimate_grows_with_the_square_of_the_tokens_and_with_the_layers():
    cfg = ModelConfig(layers=4, heads=8, d_model=64)
    weights = memory.weight_count(cfg) * 4
    running = [memory.estimate_bytes(cfg, n) - weights for n in (256, 512, 1024)]
    # Doubling n multiplies the (mostly quadratic) Trace part by nearly 4.
    assert 3.8 < running[1] / running[0] < 4.0 and 3.8 < running[2] / running[1] < 4.0
    assert memory.trace_bytes(cfg, 100) == 4 * (5 * 100 * 64 + 2 * 4 * 8 * 100**2
                                                + 2 * 4 * 100 * 64)
    deeper = cfg.replace(layers=8)
    assert memory.estimate_bytes(deeper, 512) == pytest.approx(
        2 * memory.estimate_bytes(cfg, 512), rel=0.01)
    assert memory.trace_bytes(cfg.replace(dtype="float64"), 50) == 2 * memory.trace_bytes(cfg, 50)


def test_available_memory_is_read_from_the_system():
    free = memory.available_bytes()
    if sys.platform.startswith("linux"):
        assert free is not None and free > 0
    limit = memory.limit_bytes()
    assert limit is None or limit == pytest.approx(memory.SAFETY * memory.available_bytes(),
                                                   rel=0.05)


def test_the_check_imports_no_torch():
    code = ("import sys; from posviz.models.memory import check_fits; "
            "from posviz.models.config import ModelConfig; check_fits(ModelConfig(), 64); "
            "print('torch' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60)
    assert result.stdout.strip() == "False", result.stderr
