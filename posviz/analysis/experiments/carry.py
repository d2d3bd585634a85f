"""An order of one tokenization of a text carried to another tokenization of the same
text, word by word: what one model reads as "the cat" in three tokens and another in two
is reordered alike.

Each tokenization's movable tokens group into words (a piece marked as continuing a word,
"##at", joins the one before); the two are cut at the places where both have a word
boundary, so each piece of text between two such places is one unit in both. An order
that moves whole units, each unit's tokens together and in their own order, is the same
reorder of the units for the other tokenization; pinned tokens (a start-of-text token,
[CLS], [SEP]) keep their slots in both.
"""
from __future__ import annotations

import numpy as np

from ...errors import PosvizInputError
from ...models.backend import CONTINUES, TokenSequence
from ...models.formats.pieces import REST

MARKS = ("␣", "↵", "⇥", REST)      # chip marks that stand for no letter of the text


def word_slots(seq: TokenSequence) -> list[list[int]]:
    """The slots of each word of ``seq``, in order: a token continuing a word joins the
    word before it; pinned tokens belong to no word."""
    words: list[list[int]] = []
    for slot, (token, pinned) in enumerate(zip(seq.tokens, seq.pinned)):
        if pinned:
            continue
        joins = token.startswith(CONTINUES) or token == REST
        if words and joins and words[-1][-1] == slot - 1:
            words[-1].append(slot)
        else:
            words.append([slot])
    return words


def _letters(token: str) -> str:
    """What of the text a chip stands for, without its marks and spaces."""
    text = token[len(CONTINUES):] if token.startswith(CONTINUES) else token
    for mark in MARKS:
        text = text.replace(mark, "")
    return "".join(text.split())


def units(seq: TokenSequence, cuts: set[int]) -> list[list[int]]:
    """``seq``'s words joined into units that end only at ``cuts`` (offsets into its
    letters): the slots of each unit, in order."""
    found, at = [], 0
    for word in word_slots(seq):
        if not found or found[-1][1]:
            found.append([[], False])
        found[-1][0].extend(word)
        at += sum(len(_letters(seq.tokens[slot])) for slot in word)
        found[-1][1] = at in cuts
    return [slots for slots, _ in found]


def _ends(seq: TokenSequence) -> tuple[str, set[int]]:
    """``seq``'s letters and the offsets at which its words end."""
    letters, ends = "", set()
    for word in word_slots(seq):
        letters += "".join(_letters(seq.tokens[slot]) for slot in word)
        ends.add(len(letters))
    return letters, ends


def carry_order(source: TokenSequence, order, target: TokenSequence,
                reader: str = "the other model") -> np.ndarray:
    """``order`` ((n,): slot j holds ``source``'s token order[j]) carried word by word
    to ``target``, another tokenization of the same text: (m,) the target's order.
    PosvizInputError, saying why, when the texts differ or the order splits a unit
    (``reader`` names whose tokenization it is, for the message)."""
    order = np.asarray(order, dtype=int)
    letters, source_ends = _ends(source)
    target_letters, target_ends = _ends(target)
    if letters != target_letters:
        raise PosvizInputError(f"{reader} reads the text with other letters: the order "
                               f"cannot be carried over word by word")
    cuts = source_ends & target_ends
    mine, theirs = units(source, cuts), units(target, cuts)
    unit_of = {slot: k for k, unit in enumerate(mine) for slot in unit}
    moved = [int(token) for slot, token in enumerate(order) if not source.pinned[slot]]
    runs: list[list[int]] = []                      # the new order's tokens, by unit
    for token in moved:
        if runs and unit_of[runs[-1][-1]] == unit_of[token]:
            runs[-1].append(token)
        else:
            runs.append([token])
    for run in runs:
        unit = mine[unit_of[run[0]]]
        if run != unit:
            whole = " ".join(source.tokens[slot] for slot in unit)
            raise PosvizInputError(
                f"the order splits “{whole}”, which {reader} reads as one word: it can "
                f"carry an order that moves whole words only")
    slots = [slot for slot in range(len(target)) if not target.pinned[slot]]
    carried = np.arange(len(target))
    carried[slots] = [slot for run in runs for slot in theirs[unit_of[run[0]]]]
    return carried
