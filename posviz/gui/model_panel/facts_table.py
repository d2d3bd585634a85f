"""A real model's facts in the model panel: a two-column table of what it is."""
from __future__ import annotations

import re

from ...models.options import TITLES

BREAK = "\u200b"            # a zero-width space: a line may break there
LONG_WORD = 12              # characters: a longer word may break inside, every PIECE
PIECE = 8


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


def facts_table(rows) -> str:
    """Rich text of (label, value) rows, leaving out the empty ones."""
    return ("<table cellspacing='2'>" + "".join(
        f"<tr><td style='color:#555'>{label}</td><td>{breakable(value)}</td></tr>"
        for label, value in rows if value not in (None, "")) + "</table>")


def trace_rows(trace) -> list[tuple[str, object]]:
    """What a Trace tells of its model's architecture, when no ModelFacts came with it."""
    extras = trace.extras
    kind = extras.get("position_encoding")
    return [("Family", extras.get("family")),
            ("Layers × heads", f"{trace.n_layers} × {trace.n_heads}"),
            ("Width d", trace.d_model),
            ("Positions", TITLES.get(kind, kind) if kind else None),
            ("Mask", extras.get("mask"))]
