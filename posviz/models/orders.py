"""Orders of the tokens: an order (n,) means the sequence tokens[order[0]],
tokens[order[1]], ...; slot j holds token order[j]. Checked, inverted, and read per token.
"""
from __future__ import annotations

import numpy as np

from ..errors import PosvizInputError, argument, speaks_flags

__all__ = ["check_permutation", "inverse", "parse_order", "per_token", "sees_in_frame"]


def _listed(values, verb: str) -> str:
    """'5 is' / '5, 7 are' (at most five shown), for messages naming bad entries."""
    shown = ", ".join(map(str, values[:5])) + (", ..." if len(values) > 5 else "")
    return f"{shown} {verb if len(values) == 1 else 'are'}"


def parse_order(text: str, n: int, given=None) -> np.ndarray:
    """'2,0,1' -> array([2, 0, 1]), checked to be a permutation of 0..n-1.

    Every message says what a valid order is, then what is wrong with this one (shown
    as ``given``, when not its text: a number): an empty entry (a comma too many), the
    entries that are not whole numbers, out of range, repeated or missing.
    """
    parts = text.replace(" ", "").split(",")
    empty = text.strip() != "" and "" in parts
    parts = [part for part in parts if part != ""]
    shown = repr(text.strip()) if given is None else repr(given)

    form = "comma-separated" if speaks_flags() else "a list or a comma-separated string"

    def refuse(problem: str) -> PosvizInputError:
        return PosvizInputError(f"{argument('order')} must be a permutation of "
                                f"0..{n - 1}, {form} (got {shown}: {problem})")

    bad = [repr(part) for part in parts if not part.lstrip("+-").isdigit()]
    if bad or not parts:
        raise refuse(f"whole numbers only, and {_listed(bad, 'is')} not" if bad
                     else "no entries")
    if empty:
        raise refuse("an empty entry, a comma too many")
    values = [int(part) for part in parts]
    outside = [v for v in dict.fromkeys(values) if not 0 <= v < n]
    if outside:
        raise refuse(f"{_listed(outside, 'is')} out of range")
    if len(values) != n:
        raise refuse(f"it has {_count(len(values), 'entry', 'entries')} but there "
                     f"{'is' if n == 1 else 'are'} {_count(n, 'token', 'tokens')}")
    repeated = sorted(v for v in set(values) if values.count(v) > 1)
    if repeated:
        missing = sorted(set(range(n)) - set(values))
        raise refuse(f"not a permutation: {_listed(repeated, 'repeats')}, "
                     f"{_listed(missing, 'is')} missing")
    return check_permutation(values, n)


def _count(k: int, one: str, many: str) -> str:
    return f"{k:,} {one if k == 1 else many}"


def check_permutation(order, n: int) -> np.ndarray:
    """Return order as an int array, or raise PosvizInputError if it is not a
    permutation of 0..n-1."""
    arr = np.asarray(order)
    if arr.ndim != 1 or arr.shape[0] != n:
        raise PosvizInputError(f"the order has {arr.size} entries but there are {n} tokens")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise PosvizInputError("the order must hold whole numbers")
    arr = arr.astype(np.int64)
    if n and not np.array_equal(np.sort(arr), np.arange(n)):
        missing = sorted(set(range(n)) - set(arr.tolist()))
        raise PosvizInputError(
            f"the order is not a permutation of 0..{n - 1}"
            + (f" (missing {', '.join(map(str, missing[:5]))})" if missing else "")
        )
    return arr


def inverse(order: np.ndarray) -> np.ndarray:
    """inv with inv[order[j]] = j: the slot each original token moved to."""
    inv = np.empty_like(order)
    inv[order] = np.arange(order.shape[0])
    return inv


def per_token(order: np.ndarray, slot_values: np.ndarray) -> np.ndarray:
    """(..., n) values per slot of order(s) (..., n) -> per original token: token
    order[j] gets slot j's value."""
    out = np.empty_like(np.asarray(slot_values))
    np.put_along_axis(out, np.asarray(order), slot_values, axis=-1)
    return out


def is_original(order) -> bool:
    """Is ``order`` (n,) the identity: nothing moved?"""
    return bool(np.array_equal(order, np.arange(len(order))))


def sees_in_frame(slot_of):
    """A causal mask in the original tokens' frame: slot_of (B, n), the slot each order
    puts token i in, -> (B, n, n) bool, token i sees token k where its order puts k no
    later than i (a tensor's comparison for a tensor, an array's for an array)."""
    return slot_of[:, None, :] <= slot_of[:, :, None]
