"""One way to record a forward: named hook points, a Recorder, one Trace builder.

The built-in transformer and a Hugging Face model (tiny random BERT and Llama, saved to
a temporary folder as in test_hf) record under the same names; a Trace recorded through
the hooks is checked against the same numbers computed directly from the weights.
"""
from __future__ import annotations

import math
import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest
import torch
from torch.nn import functional as F

from posviz.errors import Cancelled
from posviz.models.builtin.backend import BuiltinBackend
from posviz.models.config import ModelConfig, Positions
from posviz.models.hooks import (ATTN_OUT, ATTN_SCORES, BLOCK_HOOKS, EMBED, FINAL, MLP_OUT,
                                 PATTERN, POS_EMBED, RESID_POST, RESID_PRE, HookPoint,
                                 Recorder, block_hook, trace_from)
from posviz.models.request import Request

TEXT = "the cat sat on the mat because it was warm"
HF_BLOCK_HOOKS = (RESID_PRE, PATTERN, ATTN_OUT, MLP_OUT, RESID_POST)   # no scores


def names_per_layer(layers: int, hooks) -> set[str]:
    return {block_hook(l, hook) for l in range(layers) for hook in hooks}


# -- the built-in transformer -----------------------------------------------------------
def test_builtin_hook_points_are_named_per_layer():
    model = BuiltinBackend(ModelConfig(layers=3)).model
    expected = names_per_layer(3, BLOCK_HOOKS) | {EMBED, POS_EMBED}
    assert set(model.hook_points) == expected
    assert all(isinstance(point, HookPoint) and point.name == name
               for name, point in model.hook_points.items())
    assert "blocks.2.attn.hook_pattern" in model.hook_points


@pytest.mark.parametrize("pe", ["sinusoidal", "rope"])
def test_a_builtin_forward_records_every_hook_point(pe):
    backend = BuiltinBackend(ModelConfig(layers=3, pe=pe))
    words = backend.tokenize(TEXT).ids
    recorder = Recorder(scores=True)
    backend.model.record(words, Request.original(np.arange(len(words))), recorder)
    additive = {POS_EMBED} if pe == "sinusoidal" else set()   # RoPE acts inside attention
    assert set(recorder.values) == names_per_layer(3, BLOCK_HOOKS) | {EMBED} | additive
    n = len(words)
    assert recorder.values[block_hook(2, PATTERN)].shape == (4, n, n)
    assert recorder.values[block_hook(0, MLP_OUT)].shape == (n, 64)


def test_the_recorder_lets_go_after_the_forward():
    model = BuiltinBackend().model
    recorder = Recorder()
    model.record(["a", "b"], Request.original([0, 1]), recorder)
    seen = dict(recorder.values)
    model.record(["c", "d", "e"], Request.original([0, 1, 2]), Recorder())
    assert all(recorder.values[name] is value for name, value in seen.items())
    assert all(point.recorder is None for point in model.hook_points.values())


def direct_forward(model, words, pos):
    """The built-in model's forward written out once more from its weights: embeddings,
    additive positions, then per block the attention and MLP branches (pre-norm)."""
    cfg, enc = model.cfg, model.encoding
    pos = torch.as_tensor(pos)
    x = torch.stack([model.embed_word(w) for w in words])                   # (n, d)
    if enc.absolute(pos) is not None:
        x = x + enc.absolute(pos).to(x.dtype)
    n, h, dh = len(words), cfg.heads, cfg.d_head
    mask = torch.ones(n, n, dtype=torch.bool).tril()
    hidden, weights, scores, branches = [x], [], [], []
    for block in model.blocks:
        att = block.attn
        y = block.ln1(x)
        q, k, v = ((y @ w).view(n, h, dh).transpose(0, 1) for w in (att.w_q, att.w_k, att.w_v))
        q, k = enc.rotate(q, k, pos)
        s = (q @ k.transpose(1, 2) / math.sqrt(dh)).masked_fill(~mask, float("-inf"))
        p = s.softmax(-1)                                       # torch's, as the model
        e = (s - s.amax(-1, keepdim=True)).exp()                # is the softmax as written
        np.testing.assert_allclose(p, e / e.sum(-1, keepdim=True), rtol=1e-6, atol=1e-7)
        a = (p @ v).transpose(0, 1).reshape(n, -1) @ att.w_o                  # (n, d)
        x = x + a
        # the bias added inside the product, as the model does (one rounding fewer)
        m = F.gelu(torch.addmm(block.mlp.b_in, block.ln2(x), block.mlp.w_in)) @ block.mlp.w_out
        x = x + m
        hidden.append(x)
        weights.append(p)
        scores.append(s)
        branches.append((a, m))
    return (torch.stack(hidden), torch.stack(weights), torch.stack(scores),
            torch.stack([a for a, _ in branches]), torch.stack([m for _, m in branches]))


@pytest.mark.parametrize("pe", ["sinusoidal", "rope", "learned"])
def test_a_builtin_trace_recorded_through_hooks_is_the_direct_computation(pe):
    cfg = ModelConfig(layers=3, pe=pe, norm="pre", mask="causal")
    backend = BuiltinBackend(cfg)
    seq = backend.tokenize(TEXT)
    order = np.arange(len(seq))[::-1].copy()
    pos = Positions("slot", 2).ids(order)
    words = [seq.ids[i] for i in order]
    trace = backend.run(seq, Request(order, pos, scores=True))
    with torch.no_grad():
        hidden, weights, scores, attn_out, mlp_out = direct_forward(backend.model, words, pos)
    for recorded, direct in ((trace.hidden, hidden), (trace.attention, weights),
                             (trace.scores, scores), (trace.attn_out, attn_out),
                             (trace.mlp_out, mlp_out)):
        assert recorded.shape == direct.shape
        np.testing.assert_allclose(recorded, direct.numpy(), rtol=1e-12, atol=1e-12)
    assert trace.tokens == tuple(words)


def test_the_stop_question_is_asked_before_each_block_and_after_each_branch():
    backend = BuiltinBackend(ModelConfig(layers=4))
    asked = []

    def stop_at_fourth():
        asked.append(len(recorder.values))
        return len(asked) == 4

    recorder = Recorder(stop_at_fourth)
    with pytest.raises(Cancelled):
        backend.model.record(["a", "b", "c"], Request.original([0, 1, 2]), recorder)
    assert len(asked) == 4                 # block 0: as it began, after each branch
    assert block_hook(1, RESID_PRE) in recorder.values             # asked as block 1 began
    assert block_hook(1, ATTN_OUT) not in recorder.values          # and it did not run


def test_trace_from_leaves_out_what_was_not_recorded():
    backend = BuiltinBackend(ModelConfig(layers=2, pe="rope"))
    recorder = Recorder(scores=True)
    backend.model.record(["a", "b"], Request.original([0, 1]), recorder)
    for l in range(2):
        del recorder.values[block_hook(l, ATTN_SCORES)]
    del recorder.values[block_hook(1, MLP_OUT)]
    trace = trace_from(recorder, 2, ("a", "b"), np.arange(2), {})
    assert trace.scores is None and trace.mlp_out is None and trace.encodings is None
    assert trace.attn_out.shape == (2, 2, 64) and trace.hidden.shape == (3, 2, 64)


@pytest.mark.parametrize("in_memory", [1 << 30, 0])        # in memory / on disk
def test_maps_are_kept_as_they_pass_and_equal_the_maps_of_each_block(in_memory):
    from posviz.models.maps import LayerMaps
    cfg = ModelConfig(layers=3, heads=4, pe="alibi", mask="causal")
    n = 50
    words = [f"w{i % 37}" for i in range(n)]
    model = BuiltinBackend(cfg).model
    kept, stored = Recorder(), Recorder(maps=LayerMaps(3, in_memory))
    model.record(words, Request.original(np.arange(n)), kept)
    model.record(words, Request.original(np.arange(n)), stored)
    assert not any(name.endswith(PATTERN) for name in stored.values)    # not kept twice
    trace = trace_from(stored, 3, tuple(words), np.arange(n), {})
    assert isinstance(trace.attention, np.ndarray) == bool(in_memory)
    assert trace.attention.shape == (3, 4, n, n)
    for l in range(3):
        expected = kept.values[block_hook(l, PATTERN)].numpy()
        np.testing.assert_array_equal(trace.attention[l], expected)
        np.testing.assert_array_equal(trace.attention[l, 2], expected[2])
    assert trace.scores is None                     # scores only when asked for


def test_a_maps_store_takes_its_layers_in_order_and_reads_only_those_it_has():
    from posviz.models.maps import LayerMaps
    maps = LayerMaps(3, in_memory=0)
    maps.put(0, np.ones((2, 4, 4), np.float32))
    with pytest.raises(ValueError, match="layer 2 given after 1"):
        maps.put(2, np.ones((2, 4, 4), np.float32))
    with pytest.raises(IndexError):
        maps[1]
    np.testing.assert_array_equal(maps[-3, 1], np.ones((4, 4)))
    with pytest.raises(MemoryError):
        np.asarray(maps)


def test_maps_too_large_to_read_whole_say_their_size_in_the_projects_megabytes():
    from posviz.models.maps import LayerMaps
    maps = LayerMaps(3, in_memory=0)
    for layer in range(3):
        maps.put(layer, np.zeros((25, 100, 100), np.float32))   # 3 x 1,000,000 bytes
    with pytest.raises(MemoryError, match=r"the maps take 3\.0 MB,"):
        np.asarray(maps)


def test_maps_read_from_a_file_are_writable_copies_that_leave_the_file_as_it_was():
    import torch

    from posviz.models.maps import LayerMaps
    values = np.arange(2 * 3 * 5 * 7, dtype=np.float32).reshape(2, 3, 5, 7)   # (L, h, n, n)
    maps = LayerMaps(2, in_memory=0)
    for layer in range(2):
        maps.put(layer, values[layer])
    head, layer, some = maps[1, 2], maps[0], maps[1, 1:]
    assert head.flags.writeable and layer.flags.writeable
    torch.from_numpy(head).zero_()                   # in place, as the comparison may
    layer[...] = -1
    np.testing.assert_array_equal(some, values[1, 1:])
    np.testing.assert_array_equal(maps[1, 2], values[1, 2])
    np.testing.assert_array_equal(maps[0], values[0])


# -- a Hugging Face model -----------------------------------------------------------------
@pytest.fixture(scope="module")
def hf_backends(tmp_path_factory):
    pytest.importorskip("transformers")
    from test_hf import load_tiny  # the same tiny models as test_hf
    return load_tiny(("bert", "llama"), tmp_path_factory.mktemp("hooked"))


@pytest.mark.parametrize("family", ["bert", "llama"])
def test_hf_records_the_same_names_per_layer(hf_backends, family):
    backend = hf_backends[family]
    seq = backend.tokenize(TEXT)
    recorder = Recorder()
    order = np.arange(len(seq))
    backend.record(seq, Request(order[None], order[None]), recorder)           # a batch of one
    once = {EMBED, POS_EMBED} if family == "bert" else {EMBED, FINAL}
    assert set(recorder.values) == names_per_layer(3, HF_BLOCK_HOOKS) | once
    n = len(seq)
    assert recorder.values[block_hook(0, PATTERN)].shape == (1, 4, n, n)
    assert recorder.values[block_hook(2, RESID_POST)].shape == (1, n, 32)
    # the hooks are gone: a plain call of the model records nothing more
    seen = dict(recorder.values)
    with torch.no_grad():
        backend.model(input_ids=torch.tensor([seq.ids]))
    assert recorder.values.keys() == seen.keys()
    assert all(recorder.values[name] is value for name, value in seen.items())


def test_hf_bert_trace_is_the_direct_computation(hf_backends):
    """Each recorded value against the module that computes it, fed the recorded input."""
    backend = hf_backends["bert"]
    model = backend.model
    seq = backend.tokenize(TEXT)
    order = np.arange(len(seq))
    order[1:-1] = order[1:-1][::-1]
    pos = Positions("token", 3).ids(order)
    trace = backend.run(seq, Request(order, pos))
    ids = torch.tensor([seq.ids[i] for i in order])
    n, h = len(seq), 4
    with torch.no_grad():
        np.testing.assert_array_equal(trace.embeddings, model.embeddings.word_embeddings(ids))
        np.testing.assert_array_equal(
            trace.encodings, model.embeddings.position_embeddings(torch.from_numpy(pos)))
        for l, layer in enumerate(model.encoder.layer):
            x = torch.from_numpy(trace.hidden[l])                              # (n, d)
            v = layer.attention.self.value(x).view(n, h, -1).transpose(0, 1)  # (h, n, d_head)
            context = (torch.from_numpy(trace.attention[l]) @ v).transpose(0, 1).reshape(n, -1)
            a = layer.attention.output.dense(context)
            np.testing.assert_allclose(trace.attn_out[l], a, atol=1e-5)
            mid = layer.attention.output.LayerNorm(a + x)
            m = layer.output.dense(layer.intermediate(mid))
            np.testing.assert_allclose(trace.mlp_out[l], m, atol=1e-5)
            np.testing.assert_allclose(trace.hidden[l + 1], layer.output.LayerNorm(m + mid),
                                       atol=1e-5)
    assert trace.scores is None                 # eager attention shows no scores


def test_hf_llama_trace_is_the_direct_computation(hf_backends):
    backend = hf_backends["llama"]
    model = backend.model
    seq = backend.tokenize(TEXT)
    order = np.arange(len(seq))
    order[1:] = order[1:][::-1]
    trace = backend.run(seq, Request(order, np.arange(len(seq))))
    with torch.no_grad():
        ids = torch.tensor([seq.ids[i] for i in order])
        np.testing.assert_array_equal(trace.embeddings, model.embed_tokens(ids))
        assert trace.encodings is None
        for l, layer in enumerate(model.layers):
            x = torch.from_numpy(trace.hidden[l])
            a = torch.from_numpy(trace.attn_out[l])
            m = layer.mlp(layer.post_attention_layernorm(x + a))
            np.testing.assert_allclose(trace.mlp_out[l], m, atol=1e-5)
            after = x + a + m
            if l + 1 < len(model.layers):
                np.testing.assert_allclose(trace.hidden[l + 1], after, atol=1e-5)
            else:                                # the last hidden state is after the norm
                np.testing.assert_allclose(trace.hidden[l + 1], model.norm(after), atol=1e-5)


def test_hf_stop_question_is_asked_after_each_branch(hf_backends):
    backend = hf_backends["llama"]
    seq = backend.tokenize(TEXT)
    asked = []

    def stop_at_sixth():                 # three asks a block: as it begins, each branch
        asked.append(1)
        return len(asked) == 6

    recorder = Recorder(stop_at_sixth)
    order = np.arange(len(seq))
    with pytest.raises(Cancelled):
        backend.record(seq, Request(order[None], order[None]), recorder)
    assert block_hook(1, MLP_OUT) in recorder.values          # the fourth branch ran
    assert block_hook(1, RESID_POST) not in recorder.values   # its block did not end
