"""A real model's facts in the model panel: a two-column table of what it is."""
from __future__ import annotations

from ...models.options import TITLES


def facts_table(rows) -> str:
    """Rich text of (label, value) rows, leaving out the empty ones."""
    return ("<table cellspacing='2'>" + "".join(
        f"<tr><td style='color:#555'>{label}</td><td>{value}</td></tr>"
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
