"""Byte-level BPE tokens (GPT-2, Llama 3, Qwen, SmolLM2) read as the text they stand for.

Such a tokenizer writes each byte of the UTF-8 text as one printable character (GPT-2's
``bytes_to_unicode``: a space is "Ġ", é's two bytes are "Ã©"), and a character of two to
four bytes may be split over tokens. ``byte_labels`` undoes the byte alphabet: each
character is shown once, on the token holding its first byte, and a token holding only
later bytes of it shows REST, so the labels of a text, REST left out, read back as the
text. Bytes that are no whole character at all (a lone lead byte, a token of the first
two of a character's three bytes) show as their hex values in angle brackets,
``⟨EF BC⟩``: short and readable on a chip or a plot's axis.

SentencePiece with byte fallback (Llama 2, Mistral, Gemma) writes a character outside its
vocabulary as one ``<0xE6>`` token per byte and a space as "▁": ``sentencepiece_labels``
reads those the same way.
"""
from __future__ import annotations

import re
import unicodedata


def _bytes_to_unicode() -> dict[int, str]:
    """GPT-2's map from each byte to the printable character that stands for it."""
    printable = (list(range(ord("!"), ord("~") + 1)) + list(range(ord("¡"), ord("¬") + 1))
                 + list(range(ord("®"), ord("ÿ") + 1)))
    chars, extra = {}, 0
    for byte in range(256):
        if byte in printable:
            chars[byte] = chr(byte)
        else:
            chars[byte] = chr(256 + extra)
            extra += 1
    return chars


BYTE_OF = {char: byte for byte, char in _bytes_to_unicode().items()}
REST = "·"      # a token holding only the rest of a character shown on an earlier token


def placeholder(data: bytes) -> str:
    """Bytes that are no whole character, written so they are seen: "⟨E6 97⟩"."""
    return f"⟨{data.hex(' ').upper()}⟩"


def _length(lead: int) -> int:
    """How many bytes the UTF-8 character starting with byte ``lead`` has (0: not a
    lead byte)."""
    for bits, size in ((0x80, 1), (0xE0, 2), (0xF0, 3), (0xF8, 4)):
        if lead & bits == (bits << 1) & 0xFF:
            return size
    return 0


def byte_labels(raws: list[str]) -> list[str] | None:
    """(n,) labels for (n,) byte-level tokens as the tokenizer writes them: the text of
    each (spaces kept), each character on the token of its first byte, a token holding
    only later bytes of a character as REST, bytes that are no whole character as a
    ``⟨EF BC⟩`` placeholder. None when a token is not written in the byte alphabet (a
    special token, another kind of tokenizer)."""
    if not all(raws) or not all(c in BYTE_OF for raw in raws for c in raw):
        return None
    return _labels([bytes(BYTE_OF[c] for c in raw) for raw in raws])


SENTENCEPIECE_BYTE = re.compile(r"<0x([0-9A-Fa-f]{2})>")


def sentencepiece_labels(raws: list[str]) -> list[str]:
    """(n,) labels for (n,) SentencePiece tokens with byte fallback, as byte_labels reads
    byte-level ones: "▁" a space, a ``<0xE6>`` token its byte, the bytes of a character
    shown on the token of its first one, REST on the tokens of its rest."""
    def data(raw: str) -> bytes:
        byte = SENTENCEPIECE_BYTE.fullmatch(raw)
        return bytes([int(byte[1], 16)]) if byte else raw.replace("▁", " ").encode()
    return _labels([data(raw) for raw in raws])


def _labels(pieces: list[bytes]) -> list[str]:
    """(n,) labels for (n,) tokens' bytes: each character on the token of its first
    byte, REST for a token holding only later bytes, one ``⟨EF BC⟩`` placeholder for
    a token's run of stray bytes."""
    owner, stream = [], bytearray()            # (total bytes,) token of each byte
    for k, data in enumerate(pieces):
        stream.extend(data)
        owner.extend([k] * len(data))
    labels = [""] * len(pieces)
    started = [False] * len(pieces)            # does a character start in token k?
    stray = bytearray()                        # stray bytes of token owner[i - 1], unshown
    i = 0
    while i < len(stream):
        size = _length(stream[i])
        try:
            char = bytes(stream[i:i + size]).decode("utf-8") if size else None
        except UnicodeDecodeError:
            char = None
        if stray and (char is not None or owner[i] != owner[i - 1]):
            labels[owner[i - 1]] += placeholder(bytes(stray))
            stray.clear()
        if char is None:                       # a stray byte: shown with its neighbours
            stray.append(stream[i])
            started[owner[i]] = True
            i += 1
            continue
        labels[owner[i]] += char
        started[owner[i]] = True
        i += size
    if stray:
        labels[owner[-1]] += placeholder(bytes(stray))
    return [label if started[k] else REST for k, label in enumerate(labels)]


def _decoder_state(tokenizer) -> bytes | None:
    """The serialised decoder of ``tokenizer`` (transformers' or a
    ``tokenizers.Tokenizer``, or posviz's wrapper of one); None without one."""
    inner = getattr(tokenizer, "backend_tokenizer", None) or getattr(tokenizer, "inner",
                                                                    tokenizer)
    state = getattr(getattr(inner, "decoder", None), "__getstate__", lambda: None)()
    return state if isinstance(state, bytes) else None


def is_byte_level(tokenizer) -> bool:
    """Does ``tokenizer`` write bytes in GPT-2's byte alphabet? Read from its decoder."""
    if hasattr(tokenizer, "byte_decoder"):                 # a slow GPT-2 tokenizer
        return True
    return b'"ByteLevel"' in (_decoder_state(tokenizer) or b"")


def is_byte_fallback(tokenizer) -> bool:
    """Does ``tokenizer`` write characters outside its vocabulary as ``<0x..>`` byte
    tokens (SentencePiece's byte fallback)? Read from its decoder."""
    return b'"ByteFallback"' in (_decoder_state(tokenizer) or b"")


# characters that draw nothing on their own (joiners, selectors, marks): named on a chip
# that holds nothing else, so it is seen
INVISIBLE = {"\u200d": "ZWJ", "\u200c": "ZWNJ", "\u200b": "ZWSP", "\u2060": "WJ",
             "\ufeff": "BOM", "\ufe0f": "VS16", "\ufe0e": "VS15", "\u00ad": "SHY"}
DRAWS_NOTHING = ("Cf", "Cc", "Mn", "Me", "Zs", "Zl", "Zp")     # Unicode categories
WHITESPACE = {"\n": "↵", "\r": "", "\t": "⇥"}               # others: "␣"


def shown(label: str) -> str:
    """A label as a chip shows it: without its leading space; whitespace alone as one
    sign per character ("↵" a line break, "⇥" a tab, "␣" a space: "\n\n" reads "↵↵");
    characters that draw nothing alone by name ("⟨ZWJ⟩", "⟨U+0301⟩")."""
    text = label.strip()
    if text and all(unicodedata.category(c) in DRAWS_NOTHING for c in text):
        return "⟨" + " ".join(INVISIBLE.get(c, f"U+{ord(c):04X}") for c in text) + "⟩"
    return text or "".join(WHITESPACE.get(c, "␣") for c in label) or "␣"
