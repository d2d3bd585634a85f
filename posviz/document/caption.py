"""A figure's caption: one short line naming what it was drawn from (the model, its
weights, encoding and mask, the text and the order), read from the figure's provenance
(provenance.record), so an exported figure on a slide says it on the image itself."""
from __future__ import annotations

TEXT_CHARS = 48         # the text quoted up to this many characters, then "…"
ORDER_CHARS = 60        # the order written up to about this many characters, then "…"


def runs(order: list[int]) -> list[tuple[int, int]]:
    """``order`` as maximal runs of consecutive indices, rising or falling by 1 at each
    step: (first, last) each ([0, 1, 2, 6, 5, 4, 3, 7]: (0, 2), (6, 3), (7, 7))."""
    found: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(order) + 1):
        step = order[i] - order[i - 1] if i < len(order) else 0
        if abs(step) != 1 or (i > start + 1 and step != order[start + 1] - order[start]):
            found.append((order[start], order[i - 1]))
            start = i
    return found


def order_words(order: list[int]) -> str:
    """The order in short: its runs ("0–2, 6–3, 7"; a run of two as two numbers), the
    middle left out ("…") past ORDER_CHARS, then whether it is the original or the
    reversed order, else how many tokens moved."""
    n = len(order)
    parts = []
    for first, last in runs(order):
        parts += ([f"{first}–{last}"] if abs(last - first) >= 2 else
                  [str(first)] if first == last else [str(first), str(last)])
    text = ", ".join(parts)
    if len(text) > ORDER_CHARS:             # the first two thirds, "…", the last third
        head, tail = 0, 0
        while len(", ".join(parts[:head + 1])) < ORDER_CHARS * 2 // 3:
            head += 1
        while len(", ".join(parts[len(parts) - tail - 1:])) < ORDER_CHARS // 3:
            tail += 1
        text = ", ".join(parts[:head] + ["…"] + parts[len(parts) - tail:])
    moved = sum(i != j for i, j in enumerate(order))
    said = ("original order" if moved == 0 else
            "reversed" if order == list(range(n))[::-1] else f"{moved} of {n} tokens moved")
    return f"order {text} ({said})"


def model_words(facts: dict) -> str:
    """The model in a few words: the built-in one's encoding, mask and weights, or a
    pretrained one's name and weights."""
    from posviz.models.encodings import ENCODINGS
    name = facts.get("model", "")
    name = name[:name.index(" (")] if " (" in name else name
    encoding = facts.get("encoding", "")
    encoding = ENCODINGS[encoding].short if encoding in ENCODINGS else encoding
    weights = facts.get("weights", "")
    weights = weights if weights in ("random", "trained", "pretrained") else "pretrained"
    parts = [f"{encoding} positions" if encoding else "", f"{facts['mask']} mask"
             if facts.get("mask") else "", f"{weights} weights"]
    name = "built-in model" if name == "built-in" else name
    return f"{name}: " + ", ".join(part for part in parts if part)


def caption(facts: dict, order: bool = True) -> str:
    """The caption line of a figure with provenance ``facts``: the model, then (when
    ``order``: the figure shows the reordered run) the text and the order; position ids
    other than the slots' named. "" without facts."""
    if not facts.get("model"):
        return ""
    parts = [model_words(facts)]
    positions = facts.get("positions", "mode=slot, offset=0")
    if positions != "mode=slot, offset=0":
        parts.append(f"position ids {positions}")
    if order and facts.get("order"):
        text = facts.get("text", "")
        text = text if len(text) <= TEXT_CHARS else text[:TEXT_CHARS - 1].rstrip() + "…"
        parts.append(f"text “{text}”")
        parts.append(order_words([int(i) for i in facts["order"].split(",")]))
    return " · ".join(parts)

