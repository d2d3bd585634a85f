"""A built-in model that would not fit in memory is refused before it is built."""
from __future__ import annotations

import subprocess
import sys

import pytest

from posviz.errors import PosvizInputError
from posviz.models import maps as stored_maps
from posviz.models.limits import memory
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
    # Doubling n multiplies the (mostly quadratic) maps by nearly 4.
    assert 3.8 < running[1] / running[0] < 4.0 and 3.8 < running[2] / running[1] < 4.0
    n, item = 100, 4
    maps = 4 * 8 * n * n * item                                  # every layer's, one run
    assert memory.comparison_bytes(4, 8, 64, n, item) == (
        2 * (3 * 4 + 3) * n * 64 * item            # hidden states, branches, embeddings
        + 2 * maps                                 # the reference's and the kept aligned
        + memory.LAYER_FACTOR * 8 * n * n * item)  # the layer being computed
    n = 3000
    assert 4 * 8 * n * n * item > max(stored_maps.IN_MEMORY, stored_maps.KEEP_ALL)
    assert memory.comparison_bytes(4, 8, 64, n, item) == (      # past both budgets
        2 * (3 * 4 + 3) * n * 64 * item + n * n * item          # one head kept
        + memory.LAYER_FACTOR * 8 * n * n * item)
    assert memory.estimate_bytes(cfg.replace(dtype="float64"), 50) == \
        2 * memory.estimate_bytes(cfg, 50)


def test_a_long_input_keeps_one_layer_of_maps_not_every_layer():
    """Past the maps kept in memory the estimate grows with one layer's maps, not with
    the layers (a long input's reference maps go to disk, one head stays on screen)."""
    n = 4096
    cfg = ModelConfig(layers=4, heads=4, d_model=64)
    shallow, deep = (memory.estimate_bytes(c, n) for c in (cfg, cfg.replace(layers=8)))
    one_layer = 4 * n * n * 4
    assert deep - shallow < one_layer / 4        # the hidden states of 4 more layers
    assert memory.estimate_bytes(cfg, n) < 1.2e9


def test_available_memory_is_read_from_the_system():
    free = memory.available_bytes()
    if sys.platform.startswith("linux"):
        assert free is not None and free > 0
    limit = memory.limit_bytes()
    assert limit is None or limit == pytest.approx(memory.SAFETY * memory.available_bytes(),
                                                   rel=0.05)


def test_the_check_imports_no_torch():
    code = ("import sys; from posviz.models.limits.memory import check_fits; "
            "from posviz.models.config import ModelConfig; check_fits(ModelConfig(), 64); "
            "print('torch' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60)
    assert result.stdout.strip() == "False", result.stderr


@pytest.mark.parametrize("value, cap", [("2G", 2 * GB), ("500M", 5 * 10**8),
                                        ("1.5gb", 15 * 10**8), ("123456", 123456)])
def test_posviz_memory_caps_what_is_counted_as_available(monkeypatch, value, cap):
    monkeypatch.setattr(memory, "system_available", lambda: 8 * GB)
    monkeypatch.setenv("POSVIZ_MEMORY", value)
    assert memory.available_bytes() == cap
    monkeypatch.setattr(memory, "system_available", lambda: 10**8)  # less free than the cap
    assert memory.available_bytes() == min(cap, 10**8)
    monkeypatch.setattr(memory, "system_available", lambda: None)    # unknown: the cap
    assert memory.available_bytes() == cap


def test_a_cap_refuses_what_the_system_would_allow(monkeypatch):
    monkeypatch.setattr(memory, "system_available", lambda: 16 * GB)
    memory.check_fits(ModelConfig(), 4096)
    monkeypatch.setenv("POSVIZ_MEMORY", "10M")
    with pytest.raises(PosvizInputError, match="only 8.0 MB are free"):
        memory.check_fits(ModelConfig(), 4096)


def test_a_cap_that_is_not_a_size_is_one_line(monkeypatch):
    monkeypatch.setenv("POSVIZ_MEMORY", "lots")
    with pytest.raises(PosvizInputError, match="POSVIZ_MEMORY='lots' is not a size"):
        memory.available_bytes()


def test_a_model_loaded_before_any_text_is_refused_for_one_token_in_words(free):
    """posviz.load of a model too large, given no text, was refused "for 1 tokens": the
    check runs for one token, said as such."""
    import posviz
    free(16 * GB)
    with pytest.raises(PosvizInputError, match="even for a text of one token, but only"):
        posviz.load(d_model=4096, layers=64)
