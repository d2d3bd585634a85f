"""What the figures show of one Evaluation, computed off the GUI thread: no Qt here.

``build_views(ev, look)`` runs on the compute worker after each evaluation, and again
when the user picks another mosaic mode or difference range (jobs.ViewsJob), and
returns Views: the mosaic (views.mosaic) already coloured, the token strip's change bars,
the symmetry curves and their reading, the branch norms and the positional encoding's
views. The plots only hand these arrays to their items; the one thing they compute is
the selected head's maps (``head_maps``, a slice). What depends on the reference run alone (the
encoding, its similarity and its relative-distance profile) is computed once per
reference run: the engine hands the same reference Trace to every reorder.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np

from ..analysis.engine import Evaluation
from ..analysis.predictions import COMPARE_HINT
from ..analysis.symmetry import METRICS
from ..models.after import after_steps
from ..models.orders import is_original
from ..models.trace import PerTrace, Trace, layer_name
from .head import HeadImages, head_images, pooled_cosine
from .mosaic import Mosaic, MosaicLook, make_mosaic, recoloured
from .norms import BRANCHES, branch_norms, mean_token_norm
from .pooling import MosaicTiles
from .reading import WINDOW_LITERAL, frame_note, one_token_note, token_spread

if TYPE_CHECKING:          # the encodings import torch: only on the worker, when used
    from ..models.encodings import RelativeProfile
    from .model import ModelViews

__all__ = [
    "Views", "Shown", "build_views", "in_look", "HeadMaps", "head_maps", "PositionsView",
    "positions_view", "change_bars",
    "clip_for_log", "zero_level", "symmetry_note", "symmetry_short", "mean_token_norm", "branch_norms",
    "BRANCHES",
]

BUILDING = "building the views"          # build_views after the mosaic, as told
BUILDING_PARTS = ("curves and notes", "positions", "the head's maps")   # its steps

# -- one head's maps ------------------------------------------------------------------


@dataclass(frozen=True)
class HeadMaps:
    """The selected head's attention before and after the reorder (aligned back)."""

    original: np.ndarray         # (n, n)
    aligned: np.ndarray          # (n, n)
    difference: np.ndarray       # (n, n) aligned − original
    largest: float               # max |difference|


def head_maps(ev: Evaluation, layer: int, head: int) -> HeadMaps | None:
    """Layer 1..L, head 0..h-1 of the evaluation; None when the reordered run's maps
    of that head were not kept (a long input keeps one head: Engine.evaluate's
    ``keep``)."""
    if ev.comparison.attention_aligned is not None:
        aligned = ev.comparison.attention_aligned[layer - 1, head]        # (n, n)
    elif ev.kept is not None and ev.kept[:2] == (layer - 1, head):
        aligned = ev.kept[2]
    else:
        return None
    original = ev.reference.attention[layer - 1, head]                    # (n, n)
    difference = aligned - original                                       # (n, n)
    largest = float(np.abs(difference).max()) if difference.size else 0.0
    return HeadMaps(original, aligned, difference, largest)


# -- layers ---------------------------------------------------------------------------


def change_bars(change, floor: float) -> np.ndarray:
    """(n,) relative changes -> bar lengths in 0..1 on a log scale: 0 at the noise floor
    (rounding), 1 at a change as large as the value itself."""
    change = np.asarray(change, dtype=np.float64)
    bars = np.log10(np.fmax(change, floor) / floor) / np.log10(1.0 / floor)   # NaN: 0
    return np.clip(bars, 0.0, 1.0)


def zero_level(curves, floor: float) -> float:
    """Where an exact 0 is drawn on a log axis: a tenth of the floor, or a tenth of the
    smallest positive value when one lies lower (rounding of a reorder run as given), so
    a 0 always sits below every other point."""
    values = np.concatenate([np.ravel(v) for v in curves])
    positive = values[values > 0]                                      # NaN compares False
    return float(min(floor, positive.min() if positive.size else floor) / 10)


def clip_for_log(values: np.ndarray, floor: float, level: float | None = None) -> np.ndarray:
    """Values for a log axis: exact zeros (and anything below ``level``, default floor/10)
    drawn at ``level``, NaN kept (pyqtgraph leaves a gap), so "exactly equivariant" still
    shows as a point."""
    level = floor / 10 if level is None else level
    return np.where(np.isnan(values), np.nan, np.maximum(values, level))


def _first_above(values: np.ndarray, floor: float) -> int | None:
    above = np.flatnonzero(values > floor)                             # NaN compares False
    return int(above[0]) if above.size else None


def same_input(ev: Evaluation) -> bool:
    """Does the order only exchange identical tokens (a reorder whose input is the
    original's)?"""
    tokens, order = ev.seq.tokens, ev.order
    return bool((order != np.arange(len(order))).any()) and all(
        tokens[i] == token for i, token in zip(order, tokens))


def same_input_note(ev: Evaluation) -> str:
    """When the reorder only exchanges identical tokens (the input is unchanged), what
    the curves then measure; '' otherwise."""
    if not same_input(ev):
        return ""
    return ("This order only exchanges identical tokens, so the input is unchanged: "
            "the curves show how differently the model treats one token at the slots "
            "exchanged (the original's rows moved against the same run).")


# what a figure of the original order says (in files too), and the window how to move one
ORIGINAL_SAID = ("This is the original order: the run is compared with itself, so every "
                 "change is 0 whatever the encoding.")
ORIGINAL_ORDER = f"{ORIGINAL_SAID} {COMPARE_HINT}"


def _symmetry_reading(c, order) -> tuple[int | None, str, int | None]:
    """What the curves say: the first layer whose hidden states are not equivariant
    (None: none), what the final slot holds ("same": the same token, "other": another,
    "": no tokens) and, when the same, the first layer where its output changes."""
    hidden = _first_above(c.hidden_equivariance, c.floor)
    n = len(order)
    if n and int(order[-1]) == n - 1:
        return hidden, "same", _first_above(c.last_token_change, c.floor)
    return hidden, "other" if n else "", None


def symmetry_note(c, order) -> str:
    """One or two sentences reading the curves: where equivariance breaks, and what the
    final slot does (the causal-mask leak shows there when the final token stays put);
    for the original order, that nothing was compared."""
    if len(order) and is_original(order):
        return ORIGINAL_ORDER
    hidden, final, last = _symmetry_reading(c, order)
    if hidden is None:
        text = "The hidden states are equivariant at every layer."
    elif hidden == 0:
        text = ("The hidden states stop being equivariant at the input to block 1 "
                "(the positions are added there).")
    else:
        text = f"The hidden states stop being equivariant from layer {hidden} on."
    if final == "same":
        if last is None:
            text += " The output at the final slot (the same token) is unchanged at every layer."
        elif last > 0:
            text += (f" The output at the final slot (the same token) is unchanged up to "
                     f"{layer_name(last - 1)} and changes from layer {last} on.")
        else:
            text += " The output at the final slot (the same token) changes from the input on."
    elif final == "other":
        text += " The final slot now holds another token, so its output differs."
    return text


def symmetry_short(c, order) -> tuple[str, ...]:
    """symmetry_note's reading in fewer words, for a figure with one line to give it
    (the whole note stays in its tooltip and its exports): the hidden states and the
    final slot, then the hidden states alone."""
    if len(order) and is_original(order):
        return ("The original order: every change is 0.",)
    hidden, final, last = _symmetry_reading(c, order)
    states = ("Equivariant at every layer" if hidden is None else
              "Not equivariant from block 1's input on" if hidden == 0 else
              f"Not equivariant from layer {hidden} on")
    slot = {"other": "final slot: another token"}.get(final, "")
    if final == "same":
        slot = ("final slot unchanged" if last is None else
                f"final slot changes from layer {last}" if last > 0 else
                "final slot changes from the input")
    return tuple(filter(None, (f"{states}; {slot}." if slot else "", f"{states}.")))


# -- positions ------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class PositionsView:
    """The positional encoding of a reference run: the additive table and the cosine
    similarity of its rows (when the model adds one), and the profile against relative
    distance (for the built-in model, whose encodings posviz can rebuild)."""

    kind: str | None                  # the encoding's kind (models.encodings), when known
    built_in: bool                    # the built-in model, whose encoding posviz builds
    position_ids: np.ndarray          # (n,)
    table: np.ndarray | None          # (n, d) additive encoding, or None
    extent: float                     # max |table| (1 when zero or absent): levels ±extent
    similarity: np.ndarray | None     # (m, m) cosine between the rows of table, m = n
                                      #   or, past HEAD_SIDE rows, block means
    reach: int                        # the profile spans Δ in -reach..reach
    profile: RelativeProfile | None   # built-in model only; None: no fixed relation
    similarity_block: int = 1         # positions a side per cell of ``similarity``


PROFILE_REACH = 256     # Δ the profile spans at least: T5's buckets end at 128, and RoPE's
                        # slow frequencies turn over only past a hundred tokens


def positions_view(ev: Evaluation) -> PositionsView:
    """What the encoding figures show of the evaluation's reference run and its model
    (computed once per reference run: the engine hands the same one to every reorder)."""
    return _positions_of(ev.reference, ev.backend)


def _positions_view(trace: Trace, backend) -> PositionsView:
    from .model import about_model

    facts = about_model(backend)[0] if backend is not None else None
    table = trace.encodings                                               # (n, d) or None
    reach = max(trace.n_tokens - 1, PROFILE_REACH)
    profile = backend.profile(reach) if backend is not None else None
    extent, similarity, block = 1.0, None, 1
    if table is not None:
        extent = float(np.abs(table).max()) or 1.0
        similarity, block = pooled_cosine(table)                          # (m, m)
    return PositionsView(None if facts is None else facts.scheme,
                         facts is not None and facts.family == "built-in",
                         trace.position_ids, table, extent, similarity, reach, profile,
                         block)


_positions_of = PerTrace(_positions_view)


# -- everything at once ---------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Views:
    """What every figure shows of one Evaluation, apart from the selected head's maps
    (``head_maps``, cheap enough to slice on the GUI thread when the selection moves)."""

    mosaic: Mosaic | None                 # in the look asked for; None when none was
    tiles: MosaicTiles | None             # the modes' tiles pooled, for another look
    token_bars: np.ndarray                # (n,) in 0..1: the strip's bars, last layer
    symmetry: dict[str, np.ndarray]       # metric -> (L+1,) as computed, noise_floor,
                                          #   and the per-token change's quartiles
                                          #   (token_p25, token_median, token_p75)
    symmetry_curves: dict[str, np.ndarray]  # metric -> (L+1,) ready for a log axis
    symmetry_note: str                    # the curves read in a sentence or two, how the
                                          #   reorder ran, and the tokens that carry it
    zero_level: float                     # where the curves draw an exact 0 (zero_level)
    branch_norms: Mapping[str, np.ndarray]  # name -> (L+1,), see views.norms (computed
                                          #   when first read)
    missing_branches: tuple[str, ...]     # branches the model does not record
    positions: PositionsView              # shared by the evaluations of one reference run
    head: HeadImages | None = None        # the head on screen as painted, when asked for
    symmetry_short: tuple[str, ...] = ()  # the note's reading in fewer words, longest
                                          #   first (symmetry_short)


@dataclass(frozen=True, eq=False)
class Shown:
    """An Evaluation and its Views: what the plots show."""

    evaluation: Evaluation
    views: Views
    model: "ModelViews | None" = None     # views.model.model_views: facts, machinery, outputs


def _mosaic(ev: Evaluation, look: MosaicLook | None, tiles: MosaicTiles | None,
            mosaic: Mosaic | None) -> tuple[Mosaic | None, MosaicTiles | None]:
    """The mosaic in ``look`` and the tiles it was made from (build_views)."""
    if look is not None and (tiles is None or not tiles.has(look.mode)):
        tiles = MosaicTiles.of(ev, (look.mode,))     # only what the look shows
    if look is None or tiles is None:
        return None, tiles
    if mosaic is not None and mosaic.look.mode == look.mode:
        return (mosaic if mosaic.look == look else recoloured(mosaic, look)), tiles
    return make_mosaic(tiles, look), tiles


def _head(ev: Evaluation, head: tuple[int, int] | None) -> HeadImages | None:
    return None if head is None else head_images(ev, head[0] + 1, head[1])


def build_views(ev: Evaluation, look: MosaicLook | None, tiles: MosaicTiles | None = None,
                mosaic: Mosaic | None = None, head: tuple[int, int] | None = None,
                literal: str = WINDOW_LITERAL) -> Views:
    """Everything the figures need for ``ev``, the mosaic in ``look`` (None: no mosaic)
    from ``tiles`` (pooled as the evaluation ran; without them, from its aligned maps
    when they were kept whole). ``mosaic``, one made before for ``ev``, is recoloured
    when it shows ``look``'s mode. ``head`` = (layer 0..L-1, head): that head's maps as
    painted (views.head), made here rather than on the GUI thread."""
    mosaic, tiles = _mosaic(ev, look, tiles, mosaic)     # its pooling told on its own
    c = ev.comparison
    floor = c.floor
    # the rest told too: 1-1.5 s of a 4,000-token text's after the pooling said nothing
    with after_steps(BUILDING, len(BUILDING_PARTS), "part") as step:
        step(0)
        symmetry = {metric: c.metric(metric).copy() for metric in METRICS}  # (L+1,) each
        spread = token_spread(ev)
        for name in ("p25", "median", "p75"):
            symmetry[f"token_{name}"] = getattr(spread, name)              # (L+1,)
        level = zero_level(symmetry.values(), floor)
        curves = {name: clip_for_log(values, floor, level)
                  for name, values in symmetry.items()}
        symmetry["noise_floor"] = np.full(c.hidden_equivariance.shape, floor)
        note = " ".join(filter(None, (same_input_note(ev), symmetry_note(c, ev.order),
                                      one_token_note(ev, spread),
                                      frame_note(ev, literal))))   # as its reader sets it
        norms, missing = branch_norms(ev)
        step(1)
        positions = positions_view(ev)
        step(2)
        head_maps = _head(ev, head)
    return Views(mosaic=mosaic, tiles=tiles,
                 token_bars=change_bars(c.token_change[-1], floor),
                 symmetry=symmetry, symmetry_curves=curves,
                 symmetry_note=note, zero_level=level,
                 branch_norms=norms, missing_branches=missing,
                 positions=positions, head=head_maps,
                 symmetry_short=symmetry_short(c, ev.order))


def in_look(views: Views, ev: Evaluation, look: MosaicLook | None,
            tiles: MosaicTiles | None = None, head: tuple[int, int] | None = None) -> Views:
    """``views``, made before for ``ev``, with the mosaic in ``look`` (from ``tiles``,
    else their own) and ``head``'s maps (build_views): nothing else depends on the look,
    so ``ev`` may be one kept for the screen (Evaluation.for_screen)."""
    mosaic, tiles = _mosaic(ev, look, views.tiles if tiles is None else tiles,
                           views.mosaic)
    return replace(views, mosaic=mosaic, tiles=tiles, head=_head(ev, head))
