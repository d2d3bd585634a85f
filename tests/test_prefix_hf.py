"""Causal prefix reuse on Hugging Face models: a tiny random GPT-2 and Llama, saved to a
temporary folder and loaded as a real one is. A reorder run from its first moved slot on
with the reference's past_key_values equals a full recomputation, and transformers' own
forward of the reordered ids."""
from __future__ import annotations

import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
from test_prefix import assert_traces_close, moved_late
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import AutoModel, GPT2Config, LlamaConfig, PreTrainedTokenizerFast

from posviz.analysis.engine import Engine
from posviz.analysis.prefix import first_moved
from posviz.models import hf
from posviz.models.config import Positions

WORDS = "the cat sat on a mat because it was warm and dog ran home".split()
TEXT = " ".join(WORDS * 3)


def word_tokenizer() -> PreTrainedTokenizerFast:
    vocab = {w: i for i, w in enumerate(["<unk>", "<s>"] + WORDS)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>")


def config(family: str, vocab: int):
    if family == "gpt2":
        return GPT2Config(vocab_size=vocab, n_embd=32, n_layer=3, n_head=4, n_positions=128,
                          initializer_range=0.2, bos_token_id=None, eos_token_id=None)
    return LlamaConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=3,
                       num_attention_heads=4, num_key_value_heads=2, intermediate_size=64,
                       max_position_embeddings=128, initializer_range=0.2,
                       bos_token_id=None, eos_token_id=None, pad_token_id=None)


@pytest.fixture(scope="module", params=["gpt2", "llama"])
def backend(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(request.param)
    tokenizer = word_tokenizer()
    torch.manual_seed(0)
    model = AutoModel.from_config(config(request.param, len(tokenizer)),
                                  attn_implementation="eager")
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return hf.load_backend(str(folder))


def test_the_backend_offers_suffix_runs_for_a_causal_model(backend):
    assert backend.mask == "causal"
    assert Engine(backend).reuse_prefix


def test_a_suffix_run_equals_a_full_recomputation(backend):
    seq = backend.tokenize(TEXT)
    n = len(seq)
    fast, slow = Engine(backend), Engine(backend, reuse_prefix=False)
    rng = np.random.default_rng(0)
    orders = [moved_late(n, seed) for seed in range(3)]
    orders.append(np.r_[np.arange(4), 4 + rng.permutation(n - 4)])
    for positions in (Positions(), Positions(mode="token", offset=2)):
        for order in orders:
            a = fast.evaluate(seq, order, positions)
            b = slow.evaluate(seq, order, positions)
            assert_traces_close(a.permuted, b.permuted)
            np.testing.assert_allclose(a.comparison.hidden_equivariance,
                                       b.comparison.hidden_equivariance, rtol=1e-4, atol=1e-5)


def test_a_suffix_run_equals_transformers_own_forward(backend, monkeypatch):
    """The stitched Trace against the model called directly on the reordered ids."""
    seq = backend.tokenize(TEXT)
    order = moved_late(len(seq), 5)
    pos = Positions().ids(order)
    start = first_moved(order, pos, np.arange(len(seq)))
    assert start > 0
    engine = Engine(backend)
    engine.reference(seq, Positions())
    runs = []
    run = backend.run
    monkeypatch.setattr(backend, "run", lambda *args, **options: runs.append(
        run(*args, **options)) or runs[-1])
    permuted = engine.evaluate(seq, order, Positions()).permuted
    assert [t.n_tokens for t in runs] == [len(seq) - start]         # only the suffix ran
    ids = torch.tensor([[seq.ids[i] for i in order]])
    model = getattr(backend, "base", None) or backend.model
    with torch.inference_mode():
        out = model(input_ids=ids, position_ids=torch.as_tensor(pos)[None],
                    attention_mask=torch.ones_like(ids), output_attentions=True,
                    output_hidden_states=True, use_cache=False)
    theirs = np.stack([a[0].numpy() for a in out.attentions])             # (L, h, n, n)
    np.testing.assert_allclose(permuted.attention, theirs, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(permuted.hidden[-1], out.last_hidden_state[0].numpy(),
                               rtol=1e-5, atol=1e-5)
