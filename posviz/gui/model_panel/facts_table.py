"""A real model's facts in the model panel: a two-column table of what it is."""
from __future__ import annotations

import re

from ...models.options import TITLES

BREAK = "\u200b"            # a zero-width space: a line may break there
LONG_WORD = 12              # characters: a longer word may break inside, every PIECE
PIECE = 8
LONGEST = 56                # characters of a value shown; a longer one loses its middle
                            # (SmolLM2's weights took ~20 lines), whole in the tooltip


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


def facts_table(rows) -> str:
    """Rich text of (label, value) rows, leaving out the empty ones, each value short."""
    return ("<table cellspacing='2'>" + "".join(
        f"<tr><td style='color:#555'>{label}</td><td>{breakable(short(value))}</td></tr>"
        for label, value in rows if value not in (None, "")) + "</table>")


def facts_tip(rows) -> str:
    """The rows whose value ``facts_table`` shortened, whole: the table's tooltip."""
    return "\n".join(f"{label}: {value}" for label, value in rows
                     if value not in (None, "") and short(value) != str(value))


def trace_rows(trace) -> list[tuple[str, object]]:
    """What a Trace tells of its model's architecture, when no ModelFacts came with it."""
    extras = trace.extras
    kind = extras.get("position_encoding")
    return [("Family", extras.get("family")),
            ("Layers × heads", f"{trace.n_layers} × {trace.n_heads}"),
            ("Width d", trace.d_model),
            ("Positions", TITLES.get(kind, kind) if kind else None),
            ("Mask", extras.get("mask"))]
