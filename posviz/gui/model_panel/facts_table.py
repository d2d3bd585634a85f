"""A real model's facts in the model panel: a two-column table of what it is."""
from __future__ import annotations

import re

from ...models.options import TITLES

BREAK = "\u200b"            # a zero-width space: a line may break there
LONG_WORD = 12              # characters: a longer word may break inside, every PIECE
PIECE = 8
LONGEST = 300               # characters of a value shown; a longer one loses its middle
                            # (SmolLM2's weights, ~230, wrap whole: cut to 56 at the middle,
                            # "de-quantized … float32" read as a word lost), whole in the tip


def breakable(value) -> str:
    """``value`` as text whose long words may wrap: a table cell is as wide as its
    longest word ("(HuggingFaceTB/SmolLM2-135M-Instruct," or a hash), and SmolLM2's
    facts made the model panel scroll sideways in its dock. A long word breaks after
    its "/", "-" and "_" first, a part still longer every PIECE characters."""
    def pieces(word: re.Match) -> str:
        parts = re.split(r"(?<=[/_-])", word.group())
        return BREAK.join(BREAK.join(part[k:k + PIECE] for k in range(0, len(part), PIECE))
                          if len(part) > LONG_WORD else part for part in parts if part)
    return re.sub(rf"\S{{{LONG_WORD + 1},}}", pieces, str(value))


def short(value) -> str:
    """``value`` as text of at most about LONGEST characters: its first words and its
    last (the precision and device of "Weights") around "…"."""
    text = str(value)
    if len(text) <= LONGEST:
        return text
    head = text[:LONGEST * 3 // 5 + 1].rsplit(" ", 1)[0].rstrip(" ,;(")
    tail = text[-(LONGEST * 2 // 5):]
    tail = tail.split(" ", 1)[1] if " " in tail else tail
    return f"{head} … {tail}"


WIDE = 40                   # characters: a longer value takes the table's whole width


def facts_table(rows) -> str:
    """Rich text of (label, value) rows, leaving out the empty ones, each value short; a
    value of more than WIDE characters after its label across both columns (in the
    value column, SmolLM2's weights took 20 lines of two words)."""
    def row(label, value) -> str:
        if len(str(value)) > WIDE:
            return (f"<tr><td colspan='2'><span style='color:#555'>{label}</span>&nbsp; "
                    f"{breakable(short(value))}</td></tr>")
        return f"<tr><td style='color:#555'>{label}</td><td>{breakable(short(value))}</td></tr>"
    return ("<table cellspacing='2'>" + "".join(
        row(label, value) for label, value in rows if value not in (None, "")) + "</table>")


def facts_tip(rows) -> str:
    """The rows of more than a few words, whole (the ones ``facts_table`` wraps over
    lines, or shortened): the table's tooltip."""
    return "\n".join(f"{label}: {value}" for label, value in rows
                     if value not in (None, "") and (short(value) != str(value)
                                                      or len(str(value)) > WIDE))


def trace_rows(trace) -> list[tuple[str, object]]:
    """What a Trace tells of its model's architecture, when no ModelFacts came with it."""
    extras = trace.extras
    kind = extras.get("position_encoding")
    return [("Family", extras.get("family")),
            ("Layers × heads", f"{trace.n_layers} × {trace.n_heads}"),
            ("Width d", trace.d_model),
            ("Positions", TITLES.get(kind, kind) if kind else None),
            ("Mask", extras.get("mask"))]
