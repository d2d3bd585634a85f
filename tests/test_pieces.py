"""Byte-level BPE tokens read as the text they stand for (models.formats.pieces)."""
import pytest

from posviz.models.backend import CONTINUES, mark_word_pieces
from posviz.models.formats.pieces import BYTE_OF, REST, byte_labels, placeholder

TEXT = "café naïve Ελληνικά 日本語 🙂 👩‍👧 crème brûlée Straße"
CHAR_OF = {byte: char for char, byte in BYTE_OF.items()}


def as_raws(text: str, cuts: list[int]) -> list[str]:
    """The UTF-8 bytes of ``text`` cut at byte offsets ``cuts``, in GPT-2's alphabet."""
    data = text.encode()
    edges = [0, *cuts, len(data)]
    return ["".join(CHAR_OF[b] for b in data[a:b]) for a, b in zip(edges, edges[1:])]


def read_back(labels: list[str]) -> str:
    """Labels joined, the marks of a character's rest left out."""
    return "".join("" if label == REST else label for label in labels)


def test_the_byte_alphabet_is_gpt2s():
    assert len(BYTE_OF) == 256 and BYTE_OF["Ġ"] == 0x20 and BYTE_OF["Ċ"] == 0x0A
    assert BYTE_OF["Ã"] == 0xC3 and BYTE_OF["©"] == 0xA9


@pytest.mark.parametrize("step", [1, 2, 3, 5, 7])
def test_labels_read_back_as_the_text_however_the_bytes_are_cut(step):
    size = len(TEXT.encode())
    raws = as_raws(TEXT, list(range(step, size, step)))
    labels = byte_labels(raws)
    assert read_back(labels) == TEXT
    assert not any(mark in label for label in labels for mark in ("\ufffd", "Ã", "<0x", "⟨"))


@pytest.mark.parametrize("seed", range(20))
def test_each_character_is_shown_once_on_the_token_of_its_first_byte(seed):
    """Random cuts: each token shows exactly the characters whose first byte it holds,
    REST when it holds none, so no character shows twice."""
    import random
    data = TEXT.encode()
    cuts = sorted(random.Random(seed).sample(range(1, len(data)), 25))
    first_byte, at = [], 0                      # (characters,) offset of each first byte
    for char in TEXT:
        first_byte.append(at)
        at += len(char.encode())
    labels = byte_labels(as_raws(TEXT, cuts))
    for a, b, label in zip([0, *cuts], [*cuts, len(data)], labels):
        starting = "".join(c for c, i in zip(TEXT, first_byte) if a <= i < b)
        assert label == (starting or REST)


def test_a_character_sits_on_its_first_bytes_token_its_rest_is_marked():
    raws = as_raws(" 日本", [2, 4])           # " \xe6" | "\x97\xa5" | "本"
    assert byte_labels(raws) == [" 日", REST, "本"]
    assert placeholder(b"\xe6") == "⟨E6⟩" and placeholder(b"\xef\xbc") == "⟨EF BC⟩"
    assert byte_labels(as_raws("é", [1])) == ["é", REST]
    assert byte_labels(as_raws("日", [1, 2])) == ["日", REST, REST]


def test_a_stray_byte_is_a_placeholder_and_other_tokens_are_not_byte_level():
    assert byte_labels([CHAR_OF[0xE6]]) == ["⟨E6⟩"]
    # the first two of fullwidth comma's three bytes (EF BC 8C): one placeholder, not two
    assert byte_labels([CHAR_OF[0xEF] + CHAR_OF[0xBC]]) == ["⟨EF BC⟩"]
    assert byte_labels(["a" + CHAR_OF[0xEF] + CHAR_OF[0xBC], "b"]) == ["a⟨EF BC⟩", "b"]
    assert byte_labels([CHAR_OF[0xEF], CHAR_OF[0xBC] + "b"]) == ["⟨EF⟩", "⟨BC⟩b"]  # own token
    assert byte_labels(["[CLS]", "ok"]) == ["[CLS]", "ok"]     # ASCII is its own byte
    assert byte_labels(["▁cat"]) is None and byte_labels([""]) is None


def test_word_pieces_of_byte_level_text_continue_and_placeholders_do_not():
    raws = ["c", "af", "Ã©", "Ġna", "Ã¯ve", "ĠÎ", "ķ", "Î»"]
    labels = [label.strip() for label in byte_labels(raws)]
    assert mark_word_pieces(labels, raws, [False] * len(raws)) == [
        "c", CONTINUES + "af", CONTINUES + "é", "na", CONTINUES + "ïve", "Ε", REST,
        CONTINUES + "λ"]


def test_a_tokenizer_without_a_decoder_is_not_byte_level():
    from types import SimpleNamespace

    from posviz.models.formats.pieces import is_byte_level
    assert not is_byte_level(SimpleNamespace(backend_tokenizer=SimpleNamespace(decoder=None)))
    assert not is_byte_level(object())


def as_sentencepiece(text: str) -> list[str]:
    """``text`` as a byte-fallback SentencePiece tokenizer with an ASCII-only vocabulary
    writes it: ASCII in pieces of two ("▁" for a space), every other byte as ``<0xNN>``."""
    pieces, ascii_run = [], ""
    for char in text.replace(" ", "▁"):
        if char.isascii() or char == "▁":
            ascii_run += char
            if len(ascii_run) == 2:
                pieces.append(ascii_run)
                ascii_run = ""
            continue
        if ascii_run:
            pieces.append(ascii_run)
            ascii_run = ""
        pieces += [f"<0x{b:02X}>" for b in char.encode()]
    return pieces + ([ascii_run] if ascii_run else [])


def test_sentencepiece_byte_tokens_read_back_as_the_text():
    from posviz.models.formats.pieces import sentencepiece_labels
    raws = as_sentencepiece(TEXT)
    assert "<0xE6>" in raws
    labels = sentencepiece_labels(raws)
    assert read_back(labels) == TEXT
    assert not any("<0x" in label or "⟨" in label for label in labels)
    assert sentencepiece_labels(["▁caf", "<0xC3>", "<0xA9>", "<0xE6>"]) == [
        " caf", "é", REST, "⟨E6⟩"]                  # a byte that is no character stays


def test_a_chip_of_characters_that_draw_nothing_names_them():
    from posviz.models.formats.pieces import shown
    assert shown("\u200d") == "⟨ZWJ⟩" and shown(" \ufe0f") == "⟨VS16⟩"
    assert shown("\u0301") == "⟨U+0301⟩"
    assert shown("👩\u200d") == "👩\u200d" and shown(" cat") == "cat"      # seen as they are
    assert shown(" ") == "␣" and shown("\n") == "↵"


def test_tokens_of_whitespace_alone_read_apart():
    """SmolLM2's next-token chart labelled two candidates "↵": one line break and two."""
    from posviz.models.formats.pieces import shown
    assert shown("\n") == "↵" and shown("\n\n") == "↵↵" and shown("\r\n") == "↵"
    assert shown("  ") == "␣␣" and shown("\t") == "⇥" and shown(" \n") == "␣↵"
    labels = [shown(t) for t in ("\n", "\n\n", " ", "  ", "\t")]
    assert len(set(labels)) == len(labels)
