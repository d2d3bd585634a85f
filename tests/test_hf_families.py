"""Every family posviz reads, on a tiny random model saved to a temporary folder: the
Trace equals transformers' own outputs for the ordinary call on the reordered tokens
(default position ids, eager attention), and ``posviz report --json`` gives the metrics
those outputs give.
"""
from __future__ import annotations

import json
import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from test_hf import byte_bpe_tokenizer, shuffled_movable, wordpiece_tokenizer  # noqa: E402
from transformers import (AutoModel, AutoModelForCausalLM, AutoModelForMaskedLM,  # noqa: E402
                          T5EncoderModel)

from posviz import cli  # noqa: E402
from posviz.errors import PosvizInputError  # noqa: E402
from posviz.models import hf  # noqa: E402
from posviz.models.hf.attention import IMPLEMENTATIONS  # noqa: E402
from posviz.models.config import Positions  # noqa: E402
from posviz.models.request import Request  # noqa: E402

T = transformers
TEXT = "the cat sat on the mat because it was warm"
RTOL = 1e-4
SMALL = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
             intermediate_size=64, max_position_embeddings=64, initializer_range=0.2)
ROPE = dict(SMALL, num_key_value_heads=2, bos_token_id=None, eos_token_id=None,
            pad_token_id=None)


def configs(vocab: int) -> dict:
    """model_type -> a 2-layer config of that type."""
    return {
        "roberta": T.RobertaConfig(vocab_size=vocab, **{**SMALL, "max_position_embeddings": 66},
                                   pad_token_id=0, bos_token_id=1, eos_token_id=0),
        "distilbert": T.DistilBertConfig(vocab_size=vocab, dim=32, n_layers=2, n_heads=4,
                                         hidden_dim=64, max_position_embeddings=64,
                                         initializer_range=0.2, pad_token_id=0),
        "opt": T.OPTConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=2,
                           num_attention_heads=4, ffn_dim=64, max_position_embeddings=64,
                           word_embed_proj_dim=32, init_std=0.2, pad_token_id=1,
                           bos_token_id=None, eos_token_id=None),
        "gpt_neox": T.GPTNeoXConfig(vocab_size=vocab, **SMALL, rotary_pct=0.25,
                                    bos_token_id=None, eos_token_id=None),
        "phi3": T.Phi3Config(vocab_size=vocab, **ROPE),
        "gemma": T.GemmaConfig(vocab_size=vocab, **ROPE, head_dim=8),
        "bloom": T.BloomConfig(vocab_size=vocab, hidden_size=32, n_layer=2, n_head=4,
                               initializer_range=0.2, bos_token_id=None, eos_token_id=None,
                               pad_token_id=None),
        "t5": T.T5Config(vocab_size=vocab, d_model=32, d_kv=8, d_ff=64, num_layers=2,
                         num_heads=4, initializer_factor=5.0, pad_token_id=0,
                         eos_token_id=None, decoder_start_token_id=0),
        "modernbert": T.ModernBertConfig(vocab_size=vocab, **SMALL,
                                         global_attn_every_n_layers=2, local_attention=4,
                                         pad_token_id=0, bos_token_id=None,
                                         eos_token_id=None, cls_token_id=2, sep_token_id=3),
    }


# (the byte-level tokenizer's id 1 is its "<s>": RoBERTa's padding index must differ, since
# RoBERTa numbers positions from its padding index, and a token equal to it is padding)
# model_type -> (family, positional scheme, mask, head, position offset, tokenizer)
EXPECTED = {
    "roberta": ("roberta", "learned", "bidirectional", "masked", 1, "bpe+bos"),
    "distilbert": ("distilbert", "learned", "bidirectional", "masked", 0, "wordpiece"),
    "opt": ("opt", "learned", "causal", "causal", 2, "bpe+bos"),
    "gpt_neox": ("gpt_neox", "rope", "causal", "causal", 0, "bpe"),
    "phi3": ("llama", "rope", "causal", "causal", 0, "bpe+bos"),
    "gemma": ("llama", "rope", "causal", "causal", 0, "bpe+bos"),
    "bloom": ("bloom", "alibi", "causal", "causal", 0, "bpe"),
    "t5": ("t5", "t5", "bidirectional", None, 0, "wordpiece"),
    "modernbert": ("modernbert", "rope", "bidirectional", "masked", 0, "wordpiece"),
}
TYPES = tuple(EXPECTED)


def head_class(model_type: str):
    head = EXPECTED[model_type][3]
    if model_type == "t5":
        return T5EncoderModel
    return {"causal": AutoModelForCausalLM, "masked": AutoModelForMaskedLM}.get(head,
                                                                               AutoModel)


def tokenizer_for(kind: str):
    return wordpiece_tokenizer() if kind == "wordpiece" else byte_bpe_tokenizer(
        bos=kind == "bpe+bos")


def save_type(model_type: str, folder) -> None:
    """A tiny random model of ``model_type`` saved with its LM head and a tokenizer."""
    tokenizer = tokenizer_for(EXPECTED[model_type][5])
    torch.manual_seed(0)
    config = configs(len(tokenizer))[model_type]
    if model_type == "t5":          # saved whole, as t5-small is: posviz reads its encoder
        model = T.T5ForConditionalGeneration(config)
    else:
        model = head_class(model_type).from_config(config)
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """Each model type saved with its LM head and a tokenizer."""
    root = tmp_path_factory.mktemp("families")
    for model_type in TYPES:
        save_type(model_type, root / model_type)
    return root


@pytest.fixture(scope="module")
def backends(folders):
    return {t: hf.load_backend(str(folders / t)) for t in TYPES}


def reference(folder, model_type):
    return head_class(model_type).from_pretrained(folder, attn_implementation="eager").eval()


@pytest.fixture(scope="module")
def references(folders):
    return {t: reference(folders / t, t) for t in TYPES}


def ordinary_call(model, ids) -> tuple[np.ndarray, np.ndarray]:
    """transformers' attentions (L, h, n, n) and hidden states (L+1, n, d) when called the
    ordinary way: the token ids and a mask of ones, as a tokenizer gives them."""
    ids = torch.tensor([list(ids)])
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=torch.ones_like(ids),
                    output_attentions=True, output_hidden_states=True)
    return torch.cat(out.attentions).numpy(), torch.cat(out.hidden_states).numpy()


def assert_close(actual, expected):
    scale = np.abs(expected).max()
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=RTOL * scale)


@pytest.mark.parametrize("model_type", TYPES)
def test_family_loads_with_its_scheme(backends, model_type):
    backend = backends[model_type]
    family, scheme, mask, head, offset, _ = EXPECTED[model_type]
    assert (backend.family.name, backend.position_encoding, backend.mask, backend.head,
            backend.position_offset, backend.device) == (family, scheme, mask, head, offset,
                                                         "cpu")
    lean = backend.family.lean_attention                      # models.hf.attention
    assert backend.model.config._attn_implementation == (
        IMPLEMENTATIONS[lean][0] if lean else "eager")
    assert backend.base is (backend.model.base_model if head else backend.model)
    info = backend.describe()
    assert (info["family"], info["device"], info["layers"]) == (family, "cpu", 2)


@pytest.mark.parametrize("model_type", TYPES)
def test_trace_equals_the_ordinary_call_on_the_reordered_tokens(backends, references,
                                                                model_type):
    backend = backends[model_type]
    seq = backend.tokenize(TEXT)
    for order in (np.arange(len(seq)), shuffled_movable(seq)):
        trace = backend.run(seq, Request(order, np.arange(len(seq))))
        attention, hidden = ordinary_call(references[model_type],
                                          [seq.ids[i] for i in order])
        assert trace.attention.shape == attention.shape
        assert trace.hidden.shape == hidden.shape
        assert_close(trace.attention, attention)
        assert_close(trace.hidden, hidden)


def metrics_from(reference_out, permuted_out, order) -> dict:
    """The four per-layer metrics, computed from transformers' outputs by their
    definitions (analysis.symmetry's docstrings)."""
    (A, H), (Ap, Hp) = reference_out, permuted_out
    inv = np.argsort(order)
    norm = lambda x: np.linalg.norm(x.reshape(x.shape[0], -1), axis=1)  # noqa: E731
    aligned = Ap[:, :, inv][:, :, :, inv]
    return {
        "hidden_equivariance": norm(Hp - H[:, order]) / norm(H),
        "attention_equivariance": np.concatenate(
            [[np.nan], np.abs(aligned - A).reshape(A.shape[0], -1).max(axis=1)]),
        "last_token_change": norm(Hp[:, -1] - H[:, -1]) / norm(H[:, -1]),
        "pooled_change": norm(Hp.mean(1) - H.mean(1)) / norm(H.mean(1)),
    }


@pytest.mark.parametrize("model_type", TYPES)
def test_report_json_matches_transformers(folders, backends, references, model_type,
                                          capsys):
    seq = backends[model_type].tokenize(TEXT)
    order = shuffled_movable(seq, seed=1)
    argv = ["report", "--model", str(folders / model_type), "--text", TEXT,
            "--order", ",".join(map(str, order)), "--json", "--device", "cpu"]
    assert cli.main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    model = references[model_type]
    expected = metrics_from(ordinary_call(model, seq.ids),
                            ordinary_call(model, [seq.ids[i] for i in order]), order)
    assert out["config"]["family"] == EXPECTED[model_type][0]
    assert [row["layer"] for row in out["layers"]] == [0, 1, 2]
    for name, values in expected.items():
        got = np.array([np.nan if row[name] is None else row[name] for row in out["layers"]])
        np.testing.assert_allclose(got, values, rtol=1e-3, atol=1e-6, err_msg=name)


def test_positions_travel_with_tokens_where_the_family_takes_position_ids(backends,
                                                                          references):
    """RoBERTa's explicit ids are shifted to its table: token positions then make the
    encoder equivariant again, as the symmetry argument predicts."""
    from posviz.analysis.engine import Engine
    backend = backends["roberta"]
    seq = backend.tokenize(TEXT)
    order = shuffled_movable(seq)
    comparison = Engine(backend).evaluate(seq, order, Positions("token")).comparison
    assert np.all(comparison.hidden_equivariance < 1e-4)
    slots = Engine(backend).evaluate(seq, order, Positions("slot")).comparison
    assert np.all(slots.hidden_equivariance > 1e-2)


@pytest.mark.parametrize("model_type", ["bloom", "t5"])
@pytest.mark.parametrize("positions", [Positions("token"), Positions("slot", 3)])
def test_position_options_are_refused_where_positions_are_the_slots(backends, model_type,
                                                                    positions):
    from posviz.analysis.engine import Engine
    backend = backends[model_type]
    seq = backend.tokenize(TEXT)
    with pytest.raises(PosvizInputError, match="takes no position ids") as caught:
        Engine(backend).evaluate(seq, shuffled_movable(seq), positions)
    assert "\n" not in str(caught.value)


def test_a_checkpoint_without_its_head_loads_as_the_base_model(backends, tmp_path):
    """A sentence encoder's checkpoint holds the base model: no random head is made."""
    folder = tmp_path / "base"
    tokenizer = tokenizer_for("bpe+bos")
    AutoModel.from_config(configs(len(tokenizer))["roberta"]).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    backend = hf.load_backend(str(folder))
    assert backend.head is None and backend.base is backend.model
    assert type(backend.model).__name__ == "RobertaModel"


@pytest.mark.parametrize("model_type", [t for t in TYPES if t not in ("bloom", "t5")])
def test_an_offset_reaches_the_model_as_its_own_position_ids(backends, references,
                                                             model_type):
    """Positions from 3: transformers given position ids 3..n+2 in its own numbering
    (RoBERTa's table starts after its padding row: padding_idx + 1 + position)."""

    backend, model = backends[model_type], references[model_type]
    seq = backend.tokenize(TEXT)
    order = shuffled_movable(seq, seed=2)
    pos = Positions("token", 3).ids(order)
    trace = backend.run(seq, Request(order, pos))
    shift = model.config.pad_token_id + 1 if model_type == "roberta" else 0
    ids = torch.tensor([[seq.ids[i] for i in order]])
    with torch.no_grad():
        out = model(input_ids=ids, attention_mask=torch.ones_like(ids),
                    position_ids=torch.from_numpy(pos + shift)[None],
                    output_attentions=True, output_hidden_states=True)
    assert_close(trace.attention, torch.cat(out.attentions).numpy())
    assert_close(trace.hidden, torch.cat(out.hidden_states).numpy())


POST_NORM = {"roberta": lambda block: (block.attention.output.LayerNorm, block.output.LayerNorm),
             "distilbert": lambda block: (block.sa_layer_norm, block.output_layer_norm)}


@pytest.mark.parametrize("model_type", TYPES)
def test_branch_outputs_add_up_to_the_residual_stream(backends, model_type):
    """attn_out and mlp_out are what each block adds to its input (pre-norm, and
    GPT-NeoX's parallel branches), or what it normalizes with it (post-norm)."""
    backend = backends[model_type]
    seq = backend.tokenize(TEXT)
    order = np.arange(len(seq))
    trace = backend.run(seq, Request(order, order))
    n, d = trace.hidden.shape[1:]
    assert trace.attn_out.shape == trace.mlp_out.shape == (2, n, d)
    layers = [block[0] for block in backend.family.blocks(backend.base)]
    x, a, m = (torch.from_numpy(v[0]) for v in (trace.hidden, trace.attn_out, trace.mlp_out))
    if model_type in POST_NORM:       # the last hidden state is after no final norm
        first, second = POST_NORM[model_type](layers[0])
        expected = second(m + first(a + x))
    else:                             # the last hidden state is after the final norm
        expected = x + a + m
    assert_close(trace.hidden[1], expected.detach().numpy())
