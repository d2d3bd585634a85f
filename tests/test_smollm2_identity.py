"""The bundled SmolLM2 says what it is wherever it is named (its 4-bit Q4_1 GGUF,
de-quantized: not the original checkpoint), and the original runs by its hub name from
the Hugging Face cache with the same figures. The original is stood in for by a tiny
random-weight Llama saved in a temporary cache under its name (no network here)."""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"

import pytest

pytest.importorskip("transformers")

from test_hf import byte_bpe_tokenizer  # noqa: E402

from posviz import cli  # noqa: E402
from posviz.models import hf  # noqa: E402
from posviz.models.hf.sources import BUNDLED  # noqa: E402

ORIGINAL = "HuggingFaceTB/SmolLM2-135M-Instruct"
COMMIT = "12fd25f77366fa6b3b4b768ec3050bf629380bac"
TEXT = "the cat sat on the mat because it was warm"
ROOT = Path(__file__).resolve().parents[1]
SAID = "4-bit Q4_1 GGUF"


@pytest.fixture
def hub_cache(tmp_path, monkeypatch):
    """A Hugging Face cache holding a stand-in for the original under its name: a Llama
    with SmolLM2's layout (grouped-query attention, tied embeddings, RoPE base 1e5)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM
    tokenizer = byte_bpe_tokenizer(bos=False)
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=48, num_hidden_layers=3,
                         num_attention_heads=3, num_key_value_heads=1,
                         intermediate_size=96, max_position_embeddings=256,
                         rope_theta=100_000.0, tie_word_embeddings=True,
                         bos_token_id=None, eos_token_id=None, pad_token_id=None)
    repo = tmp_path / "hub" / f"models--{ORIGINAL.replace('/', '--')}"
    snapshot = repo / "snapshots" / COMMIT
    LlamaForCausalLM(config).save_pretrained(snapshot)
    tokenizer.save_pretrained(snapshot)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(COMMIT)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    return snapshot


def export(model: str, out: Path, capsys) -> dict[str, str]:
    """`posviz export --model MODEL`: {file name: its PNG provenance's model}."""
    from PySide6 import QtGui
    assert cli.main(["export", "--model", model, "--offline", "--text", TEXT, "--out",
                     str(out), "--format", "png", "--width", "500", "--no-csv",
                     "--quiet"]) == 0
    capsys.readouterr()
    return {path.name: QtGui.QImage(str(path)).text("model")
            for path in sorted(out.glob("*.png"))}


def test_the_original_runs_by_its_hub_name_with_the_figures_the_bundled_one_has(
        hub_cache, tmp_path, capsys):
    assert hf.ModelSource(ORIGINAL, ORIGINAL, "cache") in hf.available_models()
    backend = hf.load_backend(ORIGINAL)
    info = backend.describe()
    assert (backend.name, info["revision"], info["family"]) == (ORIGINAL, COMMIT, "llama")
    assert "weights" not in info                           # the checkpoint as it is
    assert "de-quantized" not in dict(backend.facts().rows())["Weights"]
    original = export(ORIGINAL, tmp_path / "original", capsys)
    assert all(model.startswith(f"{ORIGINAL} (") and "de-quantized" not in model
               for model in original.values())
    if "smollm2" in {source.spec for source in hf.available_models()}:
        bundled = export("smollm2", tmp_path / "bundled", capsys)
        assert set(bundled) == set(original)               # the same figures
        assert all(SAID in model for model in bundled.values())


def test_the_bundled_record_says_what_the_weights_are():
    record = BUNDLED["smollm2"]
    for text in (record.label, record.name):
        assert "Q4_1" in text and "de-quantized" in text
    assert SAID in record.weights and ORIGINAL in record.weights
    assert "not the original checkpoint" in record.weights


def test_the_readme_and_the_scenario_name_it_for_what_it_is():
    import json
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    mentions = re.findall(r"SmolLM2-135M[\w-]*", readme)
    assert mentions and all(m == "SmolLM2-135M-Instruct" for m in mentions), mentions
    for sentence in re.findall(r"[^.]*SmolLM2-135M-Instruct[^.]*\.", readme):
        assert "Q4_1" in sentence or ORIGINAL in sentence, sentence
    scenario = json.loads((ROOT / "resources" / "scenarios" /
                           "09-attention-sink.posviz").read_text(encoding="utf-8"))
    assert scenario["model"]["label"] == BUNDLED["smollm2"].label
    assert "4-bit Q4_1 GGUF de-quantized" in scenario["note"]
    assert "not the original checkpoint" in scenario["note"]
