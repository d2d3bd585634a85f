"""The in-place eager attentions (models.hf.attention) give transformers' own eager
attention's numbers bit for bit: the Llama family's in every model type it covers, and
BERT's (the bundled MiniLM's family), with no mask, a padding mask and a causal one."""
import pytest
import torch
from transformers import (AutoModel, BertConfig, GemmaConfig, LlamaConfig, MistralConfig,
                          Phi3Config, Qwen2Config)

from posviz.models.hf import attention
from posviz.models.hf.families import BY_MODEL_TYPE

CONFIGS = {"llama": LlamaConfig, "mistral": MistralConfig, "qwen2": Qwen2Config,
           "phi3": Phi3Config, "gemma": GemmaConfig}


def tiny(model_type: str, implementation: str, dtype=torch.float32):
    config = CONFIGS[model_type](vocab_size=64, hidden_size=32, num_hidden_layers=2,
                                 num_attention_heads=4, num_key_value_heads=2,
                                 head_dim=8, intermediate_size=48,
                                 max_position_embeddings=64, initializer_range=0.3,
                                 pad_token_id=None, bos_token_id=None, eos_token_id=None)
    torch.manual_seed(0)
    return AutoModel.from_config(config, attn_implementation=implementation,
                                 dtype=dtype).eval()


def outputs(model, ids, mask):
    with torch.inference_mode():
        out = model(input_ids=ids, attention_mask=mask, output_attentions=True,
                    output_hidden_states=True)
    return out.hidden_states, out.attentions


def test_every_model_type_of_the_family_takes_the_lean_attention():
    assert all(BY_MODEL_TYPE[t].lean_attention == "llama" for t in CONFIGS)
    assert BY_MODEL_TYPE["bert"].lean_attention == "bert"
    assert not BY_MODEL_TYPE["gpt2"].lean_attention


@pytest.mark.parametrize("by_head", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("model_type", sorted(CONFIGS))
def test_lean_attention_equals_eager_bit_for_bit(model_type, dtype, by_head, monkeypatch):
    """by_head: a long input's, a head at a time (each told)."""
    if by_head:
        monkeypatch.setattr(attention, "BY_HEAD", 0)
    eager, lean = tiny(model_type, "eager", dtype), tiny(model_type, attention.register(),
                                                         dtype)
    lean.load_state_dict(eager.state_dict())
    ids = torch.randint(0, 64, (2, 11), generator=torch.Generator().manual_seed(1))
    # a 4D additive mask in a reordered frame (as Backend.run(aligned=True) passes) and
    # the ordinary mask of ones, which transformers turns into its causal mask
    slot = torch.stack([torch.randperm(11, generator=torch.Generator().manual_seed(s))
                        for s in (2, 3)])                                     # (2, n)
    sees = slot[:, None, :] <= slot[:, :, None]                               # (2, n, n)
    frame = torch.zeros(sees.shape, dtype=dtype).masked_fill_(
        ~sees, torch.finfo(dtype).min)[:, None]                               # (2, 1, n, n)
    for mask in (torch.ones_like(ids), frame):
        (H, A), (H_lean, A_lean) = outputs(eager, ids, mask), outputs(lean, ids, mask)
        assert len(A) == len(A_lean) == 2
        for a, b in zip(A + H, A_lean + H_lean):
            assert a.dtype == b.dtype and torch.equal(a, b)
        assert not torch.equal(A[0], A[1])          # the maps are real, not all equal


def test_a_llama_loaded_by_posviz_runs_the_lean_attention(tmp_path):
    from test_hf import save_tiny

    from posviz.models import hf

    save_tiny("llama", tmp_path / "llama")
    backend = hf.load_backend(str(tmp_path / "llama"))
    assert backend.model.config._attn_implementation == attention.LEAN


def tiny_bert(implementation: str, dtype=torch.float32, decoder: bool = False):
    config = BertConfig(vocab_size=64, hidden_size=32, num_hidden_layers=2,
                        num_attention_heads=4, intermediate_size=48,
                        max_position_embeddings=64, initializer_range=0.3,
                        is_decoder=decoder)
    torch.manual_seed(0)
    return AutoModel.from_config(config, attn_implementation=implementation,
                                 dtype=dtype, add_pooling_layer=False).eval()


@pytest.mark.parametrize("decoder", [False, True])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_lean_bert_attention_equals_eager_bit_for_bit(dtype, decoder):
    eager = tiny_bert("eager", dtype, decoder)
    lean = tiny_bert(attention.register("bert"), dtype, decoder)
    lean.load_state_dict(eager.state_dict())
    ids = torch.randint(0, 64, (2, 11), generator=torch.Generator().manual_seed(1))
    padded = torch.ones_like(ids)
    padded[1, 8:] = 0                   # a padding mask: transformers' additive 4D mask
    for mask in (torch.ones_like(ids), padded):
        (H, A), (H_lean, A_lean) = outputs(eager, ids, mask), outputs(lean, ids, mask)
        assert len(A) == len(A_lean) == 2
        for a, b in zip(A + H, A_lean + H_lean):
            assert a.dtype == b.dtype and torch.equal(a, b)
        assert not torch.equal(A[0], A[1])


def test_the_lean_bert_attention_leaves_autograd_to_bert_s_own():
    """Under autograd the scores are not overwritten (backward needs them): the same
    gradients as the eager attention's."""
    eager, lean = tiny_bert("eager"), tiny_bert(attention.register("bert"))
    lean.load_state_dict(eager.state_dict())
    ids = torch.randint(0, 64, (1, 9), generator=torch.Generator().manual_seed(2))
    grads = []
    for model in (eager, lean):
        model.zero_grad()
        model(input_ids=ids).last_hidden_state.square().sum().backward()
        grads.append([p.grad for p in model.parameters() if p.grad is not None])
    assert len(grads[0]) == len(grads[1]) > 0
    assert all(torch.equal(a, b) for a, b in zip(*grads))


def test_minilm_s_family_loaded_by_posviz_runs_the_lean_bert_attention(tmp_path):
    from test_hf import save_tiny

    from posviz.models import hf

    save_tiny("bert", tmp_path / "bert")
    backend = hf.load_backend(str(tmp_path / "bert"))
    assert backend.model.config._attn_implementation == attention.LEAN_BERT


def test_a_long_input_s_attention_tells_each_head_as_it_is_done(monkeypatch):
    """SmolLM2 at 5,107 tokens: each layer's attention ran 3-7 s with nothing said
    (a user's run); past BY_HEAD scores it is computed, and told, by head."""
    from posviz.models import reached
    monkeypatch.setattr(attention, "BY_HEAD", 0)
    lean = tiny("llama", attention.register())
    told = []
    with reached.listening(lambda now: told.append(now.within)):
        reached.reach(0, 2)
        outputs(lean, torch.randint(0, 64, (1, 7)), None)
    assert [w for w in told if w][:2] == [(3, 4), (4, 4)], told     # 3 heads at a time
