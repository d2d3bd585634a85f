"""What a model is and its own positional machinery, read from tiny random models of
every family, checked against their configurations and against transformers' own code
(its position embeddings as the model adds them, its rotary module, BLOOM's
build_alibi_tensor, T5's compute_bias)."""
from __future__ import annotations

import os
import types

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from posviz.models.builtin.backend import BuiltinBackend  # noqa: E402
from posviz.models.config import ModelConfig  # noqa: E402
from posviz.models.encodings import ENCODINGS  # noqa: E402
from posviz.models.facts import ModelFacts  # noqa: E402
from posviz.models.hf import machinery as mach  # noqa: E402
from posviz.models.hf.families import BY_MODEL_TYPE, facts_of  # noqa: E402
from posviz.models.limits.memory import weight_count  # noqa: E402

V = 99
COMMON = dict(vocab_size=V)
SIZES = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
             intermediate_size=37, max_position_embeddings=64)


def build(config_class: str, model_class: str, **kwargs):
    config = getattr(transformers, config_class)(**COMMON, **kwargs)
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    return getattr(transformers, model_class)(config).eval()


# family -> (config class, model class, config arguments)
FAMILIES = {
    "bert": ("BertConfig", "BertModel", SIZES),
    "roberta": ("RobertaConfig", "RobertaModel", {**SIZES, "max_position_embeddings": 66,
                                                   "pad_token_id": 1}),
    "distilbert": ("DistilBertConfig", "DistilBertModel",
                   dict(dim=32, n_layers=2, n_heads=4, hidden_dim=37,
                        max_position_embeddings=64)),
    "gpt2": ("GPT2Config", "GPT2LMHeadModel", dict(n_embd=32, n_layer=2, n_head=4,
                                                  n_positions=64, bos_token_id=None,
                                                  eos_token_id=None)),
    "opt": ("OPTConfig", "OPTModel", dict(hidden_size=32, num_hidden_layers=2,
                                          num_attention_heads=4, ffn_dim=37,
                                          max_position_embeddings=64,
                                          word_embed_proj_dim=32)),
    "gpt_neox": ("GPTNeoXConfig", "GPTNeoXModel", {**SIZES, "rotary_pct": 0.25,
                                                   "rotary_emb_base": 500}),
    "llama": ("LlamaConfig", "LlamaModel", {**SIZES, "num_key_value_heads": 2,
                                            "rope_parameters": {"rope_type": "default",
                                                                "rope_theta": 5000.0}}),
    "phi3": ("Phi3Config", "Phi3Model", {**SIZES, "num_key_value_heads": 4,
                                         "partial_rotary_factor": 0.5, "pad_token_id": 0}),
    "gemma": ("GemmaConfig", "GemmaModel", {**SIZES, "num_key_value_heads": 1,
                                            "head_dim": 8}),
    "bloom": ("BloomConfig", "BloomModel", dict(hidden_size=32, n_layer=2, n_head=4)),
    "t5": ("T5Config", "T5EncoderModel", dict(d_model=32, d_kv=8, d_ff=37, num_layers=2,
                                              num_heads=4, relative_attention_num_buckets=16,
                                              relative_attention_max_distance=40)),
    "modernbert": ("ModernBertConfig", "ModernBertModel",
                   {**SIZES, "num_hidden_layers": 3, "global_rope_theta": 1000.0,
                    "local_rope_theta": 100.0, "pad_token_id": 0, "bos_token_id": 1,
                    "eos_token_id": 2, "cls_token_id": 1, "sep_token_id": 2}),
}
# what each family's configuration says, written from the papers and model cards
EXPECTED = {
    "bert": ("bert", "learned", 0, "bidirectional"),
    "roberta": ("roberta", "learned", 2, "bidirectional"),
    "distilbert": ("distilbert", "learned", 0, "bidirectional"),
    "gpt2": ("gpt2", "learned", 0, "causal"),
    "opt": ("opt", "learned", 2, "causal"),
    "gpt_neox": ("gpt_neox", "rope", 0, "causal"),
    "llama": ("llama", "rope", 0, "causal"),
    "phi3": ("llama", "rope", 0, "causal"),
    "gemma": ("llama", "rope", 0, "causal"),
    "bloom": ("bloom", "alibi", 0, "causal"),
    "t5": ("t5", "t5", 0, "bidirectional"),
    "modernbert": ("modernbert", "rope", 0, "bidirectional"),
}


@pytest.fixture(scope="module")
def models():
    return {name: build(*spec[:2], **spec[2]) for name, spec in FAMILIES.items()}


def backend_of(model, name="tiny"):
    """What the machinery reads of an HFBackend: its model and its facts (its family's
    record read from the model's configuration)."""
    head = "causal" if type(model).__name__.endswith("LMHeadModel") else None
    family = BY_MODEL_TYPE[model.config.model_type]
    return types.SimpleNamespace(model=model, name=name, family=family,
                                 facts=lambda: facts_of(model, family, name, head))


@pytest.mark.parametrize("name", list(FAMILIES))
def test_facts_equal_what_the_configuration_says(models, name):
    model = models[name]
    cfg = model.config
    facts = backend_of(model).facts()
    family, scheme, offset, mask = EXPECTED[name]
    assert (facts.family, facts.scheme, facts.position_offset, facts.mask) == \
        (family, scheme, offset, mask)
    assert facts.model_type == cfg.model_type
    assert facts.layers == cfg.num_hidden_layers == 2 + (name == "modernbert")
    assert facts.heads == cfg.num_attention_heads == 4
    assert facts.kv_heads == {"llama": 2, "gemma": 1}.get(name, 4)
    assert facts.width == cfg.hidden_size == 32
    # what the model accepts: RoBERTa's table holds its padding rows before position 0
    assert facts.max_positions == (None if scheme in ("alibi", "t5") else 64)
    assert facts.parameters == sum(p.numel() for p in model.parameters())
    assert (facts.dtype, facts.device) == ("float32", "cpu")
    assert facts.head == ("causal" if name == "gpt2" else None)
    rope = {"gpt_neox": (500.0, 0.25), "llama": (5000.0, 1.0), "phi3": (10000.0, 0.5),
            "gemma": (10000.0, 1.0), "modernbert": (1000.0, 1.0)}
    params = facts.encoding_parameters
    assert (params.get("base"), params.get("rotary_fraction")) == rope.get(name, (None, None))
    assert params.get("local_base") == (100.0 if name == "modernbert" else None)
    assert (params.get("buckets"), params.get("max_distance")) == \
        ((16, 40) if name == "t5" else (None, None))
    data = facts.to_dict()
    assert ModelFacts(**data) == facts
    assert all(label and value for label, value in facts.rows())


@pytest.mark.parametrize("pe", list(ENCODINGS))
def test_facts_of_the_built_in_model(pe):
    config = ModelConfig(pe=pe, layers=2, heads=2, d_model=16, mask="causal")
    backend = BuiltinBackend(config)
    facts = backend.facts()
    assert facts.family == "built-in"
    assert facts.scheme == pe
    assert (facts.layers, facts.heads, facts.kv_heads, facts.width) == (2, 2, 2, 16)
    assert facts.mask == "causal" and facts.dtype == config.dtype
    table = {"learned": 1024 * 16, "t5": 32 * 2}.get(pe, 0)       # the encoding's own
    assert facts.parameters == sum(p.numel() for p in backend.model.parameters())
    assert facts.parameters == weight_count(config)
    assert weight_count(config) - weight_count(config.replace(pe="none")) == table
    assert facts.max_positions == backend.max_positions


# -- learned tables -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["bert", "roberta", "distilbert", "gpt2", "opt"])
def test_learned_table_rows_are_what_the_model_adds_at_each_position(models, name):
    """Record what the position embedding module returns during an ordinary call: row
    p of the table must be what the model added to the token at position p (RoBERTa
    and OPT skip their offset rows)."""
    model = models[name]
    machinery = mach.machinery_of(backend_of(model))
    backend = backend_of(model)
    module = backend.family.embeddings(mach.base_model(backend))[1]     # the family's table
    seen = []
    handle = module.register_forward_hook(lambda m, a, out: seen.append(out.detach()))
    n = 7
    ids = torch.arange(5, 5 + n)[None]
    with torch.no_grad():
        model(input_ids=ids, attention_mask=torch.ones_like(ids))
    handle.remove()
    added = seen[0].reshape(-1, n, 32)[0].numpy()                            # (n, d)
    np.testing.assert_array_equal(machinery.table[:n], added)
    assert machinery.table.shape == (64, 32)
    cosine = machinery.pair_maps[0]
    a, b = machinery.table[2], machinery.table[5]
    assert cosine[2, 5] == pytest.approx(a @ b / np.linalg.norm(a) / np.linalg.norm(b),
                                         abs=1e-6)
    # the profile averages that cosine over every pair at the same distance
    assert machinery.profile.values[0, 3] == pytest.approx(
        np.mean([cosine[p, p + 3] for p in range(61)]), abs=1e-6)


# -- RoPE -----------------------------------------------------------------------------


def test_rope_score_is_a_sum_of_cosines_plus_the_unrotated_share():
    """q = k = 1: each rotated pair adds 2·cos(Δθ_i), each unrotated dimension 1."""
    inv_freq = 100.0 ** (-np.arange(0, 4, 2) / 4)                            # r = 4
    distances = np.arange(-20, 21)
    score = mach.rope_score(inv_freq, 10, distances)
    theory = (2 * np.cos(distances[:, None] * inv_freq).sum(1) + 6) / 10
    np.testing.assert_allclose(score, theory, atol=1e-12)


@pytest.mark.parametrize("name", ["llama", "gpt_neox", "phi3", "modernbert"])
def test_rope_score_equals_transformers_rotation(models, name):
    """Rotate q = k = 1 with the model's own rotary module and apply_rotary_pos_emb at
    positions 0 and Δ: the score must equal the machinery's profile."""
    model = models[name]
    machinery = mach.machinery_of(backend_of(model))
    module = __import__(type(model).__module__, fromlist=["apply_rotary_pos_emb"])
    head_dim = getattr(model.config, "head_dim", None) or 8
    reach = 30
    pos = torch.arange(reach + 1)[None]
    x = torch.ones(1, 1, reach + 1, head_dim)
    kwargs = {"layer_type": "full_attention"} if name == "modernbert" else {}
    cos, sin = model.rotary_emb(x, pos, **kwargs)
    q, k = module.apply_rotary_pos_emb(x, x, cos, sin)
    scores = (q[0, 0, 0] * k[0, 0]).sum(-1) / head_dim          # query at 0, keys at Δ
    profile = machinery.profile
    row = profile.values[0]
    at = {int(d): i for i, d in enumerate(profile.distances)}
    for delta in range(reach + 1):
        d = -delta if -delta in at else delta                     # causal: keys behind
        assert row[at[d]] == pytest.approx(float(scores[delta]), abs=1e-5)
    fraction = {"gpt_neox": 0.25, "phi3": 0.5}.get(name, 1.0)
    assert machinery.parameters.shape[1] == int(head_dim * fraction) // 2
    if name == "modernbert":
        assert machinery.profile.rows == ("full attention layers",
                                          "sliding attention layers")
        np.testing.assert_allclose(machinery.parameters[1],
                                   100.0 ** (-np.arange(0, 8, 2) / 8), rtol=1e-6)


def test_a_rope_profile_says_when_it_stops_short_of_the_model_s_length(models):
    """SmolLM2's profile was labelled "the whole profile" at Δ up to 2047 of its 8,192
    positions; a model shorter than ROPE_REACH is drawn whole."""
    machinery = mach.machinery_of(backend_of(models["llama"]))
    reach = int(np.abs(machinery.profile.distances).max())
    assert reach + 1 == backend_of(models["llama"]).facts().max_positions
    assert machinery.profile_reach == "the whole profile"
    inv_freq = [(1.0, 0.1)]
    long = mach.rope_machinery([("", np.array(f)) for f in inv_freq], 4, {"": 1e4}, True,
                               mach.ROPE_REACH - 1, positions=8192)
    assert long.profile_reach == "drawn to 2047; the model takes 8,192 positions"
    assert int(np.abs(long.profile.distances).max()) == 2047


# -- ALiBi ----------------------------------------------------------------------------


@pytest.mark.parametrize("heads", [4, 6, 12, 16])
def test_alibi_slopes_and_bias_equal_blooms(heads):
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor
    n = 20
    alibi = build_alibi_tensor(torch.ones(1, n), heads, torch.float64)[:, 0]    # (h, n)
    machinery = mach.alibi_machinery(heads, causal=True, reach=n - 1)
    # (BLOOM computes its slopes in float32)
    np.testing.assert_allclose(machinery.parameters[0], alibi[:, 1].numpy(), rtol=1e-6)
    # BLOOM adds m·k (key position); softmax ignores a constant per query, so for a
    # query at q this is m·(k − q) = −m·|Δ| for the keys behind it.
    q = n - 1
    profile = machinery.profile
    for i, delta in enumerate(profile.distances):
        expected = (alibi[:, q + delta] - alibi[:, q]).numpy()
        np.testing.assert_allclose(profile.values[:, i], expected, rtol=1e-5, atol=1e-5)
    maps = machinery.pair_maps
    assert np.isnan(maps[:, 0, 1]).all()                          # keys ahead: masked
    np.testing.assert_allclose(maps[:, 9, 3], (alibi[:, 3] - alibi[:, 9]).numpy(), rtol=1e-6)


def test_alibi_of_a_bloom_model(models):
    machinery = mach.machinery_of(backend_of(models["bloom"]))
    assert machinery.scheme == "alibi" and machinery.parameters.shape == (1, 4)


# -- T5 -------------------------------------------------------------------------------


def test_t5_bias_equals_compute_bias(models):
    model = models["t5"]
    machinery = mach.machinery_of(backend_of(model))
    attention = model.encoder.block[0].layer[0].SelfAttention
    P = mach.PAIR_SIZE
    with torch.no_grad():
        bias = attention.compute_bias(P, P)[0].numpy()                       # (h, P, P)
    np.testing.assert_allclose(machinery.pair_maps, bias, atol=1e-6)
    # the profile: query at 0 and keys at Δ ≥ 0, query at P−1 and keys at Δ ≤ 0
    profile = machinery.profile
    at = {int(d): i for i, d in enumerate(profile.distances)}
    for delta in range(min(P, int(profile.distances.max()) + 1)):
        np.testing.assert_allclose(profile.values[:, at[delta]], bias[:, 0, delta], atol=1e-6)
        np.testing.assert_allclose(profile.values[:, at[-delta]], bias[:, P - 1, P - 1 - delta],
                                   atol=1e-6)
    assert machinery.parameters.max() == 15                       # 16 buckets


def test_a_model_without_positions_says_so():
    machinery = mach.Machinery.unreadable("odd layout")
    assert machinery.scheme == "none" and "odd layout" in machinery.note


def test_a_long_table_is_cut_and_says_so():
    weight = torch.randn(mach.TABLE_ROWS + 12, 8)
    machinery = mach.learned_machinery(weight, 2, "learned absolute, offset 2")
    np.testing.assert_array_equal(machinery.table, weight[2:2 + mach.TABLE_ROWS].numpy())
    assert f"first {mach.TABLE_ROWS} of {mach.TABLE_ROWS + 10}" in machinery.note
    assert "first 2 rows are not positions" in machinery.note
