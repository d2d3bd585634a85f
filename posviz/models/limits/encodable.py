"""A text every tokenizer can read: no byte that was not UTF-8 in it."""
from __future__ import annotations

from ...errors import TextRefused


def check_encodable(texts: list[str]) -> None:
    """Refuse (errors.TextRefused) a text holding a lone surrogate: a byte that was not
    UTF-8, kept by Python's reading of a file, standard input or argv with
    errors="surrogateescape"; no tokenizer takes it (a UnicodeEncodeError inside the
    model)."""
    for i, text in enumerate(texts):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as error:
            which = "the text" if len(texts) == 1 else f"text {i + 1:,} of {len(texts):,}"
            raise TextRefused(f"{which} is not UTF-8 text: character {error.start + 1:,} "
                              f"({text[error.start]!r}) stands for a byte that is not "
                              f"UTF-8") from None
