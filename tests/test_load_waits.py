"""A model load tells each stage and how far it is: the GGUF file's parsing, the matching
of its tensors module by module, the de-quantizing tensor by tensor, with time left."""
from __future__ import annotations

import pytest

from posviz.gui import load_progress
from posviz.gui.load_progress import LoadProgress
from posviz.models.hf.workarounds import MATCHING, READING


def test_the_gguf_matching_is_counted_module_by_module_and_its_parsing_said(monkeypatch):
    torch = pytest.importorskip("torch")
    pytest.importorskip("gguf")
    module = pytest.importorskip("transformers.modeling_gguf_pytorch_utils")
    from transformers import LlamaConfig, LlamaForCausalLM

    from posviz.models.hf import workarounds
    monkeypatch.delenv("POSVIZ_WORKAROUNDS_OFF", raising=False)
    torch.manual_seed(0)
    model = LlamaForCausalLM(LlamaConfig(
        vocab_size=32, hidden_size=8, intermediate_size=16, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=2))
    told = []
    say = lambda step, done=None, total=None: told.append((step, done, total))  # noqa: E731
    expected = module.get_gguf_hf_weights_map(model, module.TensorProcessor())
    with workarounds.gguf_loop(lambda loop, total: loop, say):
        mapped = module.get_gguf_hf_weights_map(model, module.TensorProcessor())
        with pytest.raises(Exception):
            module.load_gguf_checkpoint("/nonexistent.gguf")
    assert mapped == expected and "blk.1.ffn_down.weight" in mapped       # still works
    modules = sum(1 for _ in model.modules())
    counts = [(done, total) for step, done, total in told if step == MATCHING]
    assert counts == [(k, modules) for k in range(1, modules + 1)]
    assert (READING, None, None) in told
    told.clear()                                  # the names are put back after
    module.get_gguf_hf_weights_map(model, module.TensorProcessor())
    assert told == []


def test_a_counted_step_says_its_time_left_from_its_pace(qtbot, monkeypatch):
    bar = LoadProgress()
    qtbot.addWidget(bar)
    now = [100.0]
    monkeypatch.setattr(load_progress, "clock", lambda: now[0])
    bar.started("SmolLM2")
    bar.step("converting SmolLM2.gguf once: de-quantizing it")
    bar.step("de-quantizing weights")
    assert "first load" in bar.status.text() and "cache" in bar.status.text()
    bar.count("de-quantizing weights", 1, 272)
    now[0] += 5.0                                  # 20 tensors in 5 s: 4 a second
    bar.count("de-quantizing weights", 21, 272)
    text = bar.status.text()
    assert "21 of 272 tensors, about 63 s left" in text, text      # 251 left / 4 a s
    assert bar.busy.value() == 21 and bar.busy.maximum() == 272
    bar.count(MATCHING, 1, 397)
    assert "1 of 397 modules" in bar.status.text() and "left" not in bar.status.text()
