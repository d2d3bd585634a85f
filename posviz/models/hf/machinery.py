"""A real model's own positional machinery, read from its weights and configuration.

What the Positions figures show of a Hugging Face model, computed once per model:
- learned absolute positions (BERT, GPT-2, RoBERTa and OPT with their offset rows
  dropped, DistilBERT): the table of position embeddings, the cosine similarity of its
  rows, and that similarity averaged against the distance between positions;
- RoPE (Su 2021; Llama-like, GPT-NeoX and Phi with partial rotary, ModernBERT with a
  global and a local base): the frequencies θ_i taken from the model's own rotary
  module, and the score of a fixed query/key pair against relative distance;
- ALiBi (Press 2022; BLOOM): the slopes per head and the bias against distance;
- T5 relative buckets (Raffel 2020): the bucket of each distance and the learned bias
  per head (from the first layer, which holds the model's only bias table).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ..encodings import (ENCODINGS, AlibiEncoding, LearnedEncoding, RelativeProfile,
                         RotaryEncoding, T5RelativeBias, alibi_slopes, cosine_similarity,
                         relative_position_bucket)
from .families import rope_parameters

__all__ = ["Machinery", "machinery_of", "learned_machinery", "rope_machinery",
           "alibi_machinery", "t5_machinery", "rope_score", "base_model"]

TABLE_ROWS = 512          # positions of a learned table shown (and exported) at most
PAIR_SIZE = 64            # query × key maps span positions 0..PAIR_SIZE-1
ROPE_REACH = 2048         # the RoPE score is drawn up to this distance


@dataclass(frozen=True, eq=False)
class Machinery:
    """What the Positions figures show of one real model."""

    scheme: str                          # an encoding kind (models.encodings), or "none"
    title: str                           # the scheme in words, for headings
    table: np.ndarray | None = None      # (P, d) position embeddings of positions 0..P-1
    parameters: np.ndarray | None = None   # (c, k) θ_i per pair (RoPE), slope per head
    parameter_rows: tuple[str, ...] = ()   # (c,) what each row of parameters is
    parameter_index: str = ""            # what k counts: "pair i", "head", "Δ"
    parameter_axis: str = ""             # what the values are
    parameter_title: str = ""            # the parameters' figure heading, in words
    parameter_log: bool = False          # drawn on a log scale (RoPE's θ_i)
    parameter_coords: np.ndarray | None = None   # (k,) the index values
    pair_maps: np.ndarray | None = None  # (c, P, P) query × key (learned: cosine)
    pair_rows: tuple[str, ...] = ()      # (c,) one map per head, or one in all
    pair_quantity: str = ""
    pair_title: str = ""                 # the pair maps' figure heading, in words
    pair_extent: float | None = None     # the colour scale's ±extent (None: the data's)
    profile: RelativeProfile | None = None   # against distance
    profile_reach: str = "the whole profile"   # how far the profile goes, in words
    note: str = ""                       # what is not shown, and why

    @classmethod
    def unreadable(cls, why: str) -> "Machinery":
        return cls("none", "unknown", note=f"posviz could not read this model's "
                                              f"positional machinery: {why}")


def base_model(backend):
    """The transformer inside a head model (``backend.base`` when the backend has it)."""
    base = getattr(backend, "base", None)
    if base is not None:
        return base
    model = backend.model
    return getattr(model, "base_model", model)


def _mask_ahead(maps: np.ndarray, causal: bool) -> np.ndarray:
    """(c, P, P) -> NaN where the key lies ahead of the query, for a causal model."""
    if causal:
        P = maps.shape[-1]
        maps = np.where(np.triu(np.ones((P, P), bool), 1), np.nan, maps)
    return maps


# -- learned tables -------------------------------------------------------------------


def learned_machinery(weight: torch.Tensor, offset: int, title: str) -> Machinery:
    """weight (rows, d) with position p at row offset + p."""
    table = weight.detach().float()[offset:offset + TABLE_ROWS].cpu().numpy()   # (P, d)
    similarity = cosine_similarity(table)                                     # (P, P)
    P = table.shape[0]
    lag = np.arange(P)
    mean = np.array([np.diagonal(similarity, k).mean() for k in lag])        # (P,)
    profile = RelativeProfile(lag, mean[None], ("mean over positions",),
                              "cosine between the embeddings of p and p + Δ",
                              "mean cosine")
    notes = []
    if offset:
        notes.append(f"rows {offset}.. of the table hold positions 0.. (the first "
                     f"{offset} rows are not positions)")
    if weight.shape[0] - offset > P:
        notes.append(f"the first {P} of {weight.shape[0] - offset} positions are shown")
    return Machinery(LearnedEncoding.kind, title, table=table, pair_maps=similarity[None],
                     pair_title="Cosine similarity between the model's embeddings of two "
                                "positions", pair_extent=1.0,
                     pair_rows=("all heads",), pair_quantity="cosine", profile=profile,
                     note="; ".join(notes))


# -- RoPE -----------------------------------------------------------------------------


def rope_score(inv_freq: np.ndarray, head_dim: int, distances: np.ndarray) -> np.ndarray:
    """Score q·R(p)ᵀR(p+Δ)k / d_head of the fixed pair q = k = (1, …, 1) against Δ,
    rotating the first 2·len(inv_freq) dimensions of the head (transformers'
    rotate_half layout) and passing the others through, as the model does.
    (D,) float64."""
    r = 2 * len(inv_freq)
    q = torch.ones(head_dim, dtype=torch.float64)
    angles = torch.as_tensor(distances, dtype=torch.float64)[:, None] * \
        torch.as_tensor(inv_freq, dtype=torch.float64)[None]                    # (D, r/2)
    cos = torch.cat([angles.cos(), angles.cos()], -1)                         # (D, r)
    sin = torch.cat([angles.sin(), angles.sin()], -1)
    rot, rest = q[:r], q[r:]
    half = torch.cat([-rot[r // 2:], rot[:r // 2]])                           # rotate_half
    k_rot = rot * cos + half * sin                                            # (D, r)
    score = (k_rot @ rot + rest @ rest) / head_dim                            # (D,)
    return score.numpy()


def rope_variants(base) -> list[tuple[str, np.ndarray]]:
    """(layer type or "", θ_i (r/2,)) from the model's own rotary module(s)."""
    found = []
    for name, module in base.named_modules():
        if "rotary" not in type(module).__name__.lower() and not name.endswith("rotary_emb"):
            continue
        for key, buffer in module.named_buffers(recurse=False):
            if key.endswith("inv_freq") and not key.startswith("original") \
                    and "_original_" not in key:
                found.append((key[:-len("inv_freq")].rstrip("_"),
                              buffer.detach().double().cpu().numpy()))
        if found:
            return found
    return found


def rope_machinery(variants, head_dim: int, bases: dict, causal: bool,
                   reach: int, positions: int | None = None) -> Machinery:
    """variants [(name, θ_i (r/2,))]: frequencies, score against Δ up to ``reach``,
    query × key map; ``positions``: the model's own length, when the profile stops short
    of it."""
    names = tuple(f"{name.replace('_', ' ')} layers" if name else "all layers"
                  for name, _ in variants)
    k = max(len(f) for _, f in variants)
    freqs = np.full((len(variants), k), np.nan)
    for i, (_, f) in enumerate(variants):
        freqs[i, :len(f)] = f
    distances = np.arange(-reach, 1 if causal else reach + 1)                # (D,)
    scores = np.stack([rope_score(f, head_dim, distances) for _, f in variants])  # (c, D)
    p = np.arange(PAIR_SIZE)
    lag = p[None, :] - p[:, None]                                             # key − query
    maps = np.stack([rope_score(f, head_dim, lag.ravel()).reshape(lag.shape)
                     for _, f in variants])                                   # (c, P, P)
    r = 2 * len(variants[0][1])
    fraction = r / head_dim
    title = "RoPE, " + ", ".join(f"θ = {bases[name]:g}" + (f" ({label})" if len(variants) > 1
                                                            else "")
                                 for (name, _), label in zip(variants, names))
    if fraction < 1:
        title += f", rotary on {r} of {head_dim} dimensions per head ({fraction:.0%})"
    profile = RelativeProfile(distances, scores, names,
                              "score of a fixed query/key pair (q = k = 1) / d_head",
                              "score / d_head")
    return Machinery(RotaryEncoding.kind, title, parameters=freqs, parameter_rows=names,
                     parameter_index="pair i", parameter_axis="θ_i (radians per position)",
                     parameter_title="RoPE frequencies θ_i, one per rotated pair of "
                                     "dimensions (log scale)", parameter_log=True,
                     pair_title="Score of a fixed query/key pair (q = k = 1) at each "
                                "query and key position", pair_extent=1.0,
                     parameter_coords=np.arange(k), pair_maps=_mask_ahead(maps, causal),
                     pair_rows=names, pair_quantity="score / d_head", profile=profile,
                     profile_reach=("the whole profile" if not positions or
                                    reach + 1 >= positions else
                                    f"drawn to {reach}; the model takes {positions:,} "
                                    f"positions"),
                     note="" if fraction >= 1 else
                     f"the other {head_dim - r} dimensions of each head pass unrotated: "
                     "the score keeps that share at every distance")


# -- ALiBi ----------------------------------------------------------------------------


def alibi_machinery(heads: int, causal: bool = True, reach: int = 128) -> Machinery:
    """BLOOM's slopes (Press 2022's geometric sequence, interleaved past a power of two)
    and the bias m_h·Δ they add to the scores, up to a constant per query."""
    slopes = np.array(alibi_slopes(heads), dtype=np.float64)                 # (h,)
    rows = tuple(f"head {i}" for i in range(heads))
    distances = np.arange(-reach, 1 if causal else reach + 1)                # (D,)
    bias = -slopes[:, None] * np.abs(distances)[None]                        # (h, D)
    p = np.arange(PAIR_SIZE)
    lag = np.abs(p[None, :] - p[:, None])
    maps = -slopes[:, None, None] * lag[None]                                 # (h, P, P)
    profile = RelativeProfile(distances, bias, rows,
                              "bias added to the score (−m_h·|Δ|, up to a constant "
                              "per query)", "bias")
    return Machinery(AlibiEncoding.kind, f"ALiBi, {heads} slopes from {slopes[0]:.3g} to "
                              f"{slopes[-1]:.3g}", parameters=slopes[None],
                     parameter_rows=("slope m_h",), parameter_index="head",
                     parameter_axis="slope m_h", parameter_coords=np.arange(heads),
                     parameter_title="ALiBi slope m_h of each head",
                     pair_title="ALiBi bias at each query and key position",
                     pair_maps=_mask_ahead(maps, causal), pair_rows=rows,
                     pair_quantity="bias", profile=profile)


# -- T5 relative buckets --------------------------------------------------------------


def t5_machinery(weight: torch.Tensor, bidirectional: bool, max_distance: int,
                 reach: int | None = None) -> Machinery:
    """weight (buckets, h) of the first layer: the bias per head against Δ."""
    table = weight.detach().double().cpu()                                   # (B, h)
    buckets, heads = table.shape
    reach = reach or int(max_distance * 1.5)
    distances = np.arange(-reach, reach + 1 if bidirectional else 1)          # (D,)
    ids = relative_position_bucket(torch.as_tensor(distances), bidirectional, buckets,
                                   max_distance)                             # (D,)
    bias = table[ids].T.numpy()                                               # (h, D)
    p = torch.arange(PAIR_SIZE)
    pair = relative_position_bucket(p[None, :] - p[:, None], bidirectional, buckets,
                                    max_distance)                            # (P, P)
    maps = table[pair].permute(2, 0, 1).numpy()                               # (h, P, P)
    rows = tuple(f"head {i}" for i in range(heads))
    profile = RelativeProfile(distances, bias, rows,
                              "learned bias added to the score", "bias")
    return Machinery(T5RelativeBias.kind, f"T5 relative bias ({buckets} buckets, exact up to "
                                 f"{buckets // (4 if bidirectional else 2)}, "
                                 f"logarithmic to {max_distance})",
                     parameters=ids.numpy()[None].astype(np.float64),
                     parameter_rows=("bucket",), parameter_index="Δ",
                     parameter_axis="bucket of Δ", parameter_coords=distances,
                     parameter_title="T5: the bucket each relative distance Δ falls in",
                     pair_title="T5 bias at each query and key position",
                     pair_maps=_mask_ahead(maps, not bidirectional), pair_rows=rows,
                     pair_quantity="bias", profile=profile)


# -- any model ------------------------------------------------------------------------


def machinery_of(backend) -> Machinery:
    """The positional machinery of an HFBackend (anything with ``model``, ``family``,
    ``facts()`` and, optionally, ``base``), read where its encoding acts (the encoding
    record's ``acts``) from where its family record says the model keeps it."""
    facts = backend.facts()
    encoding = ENCODINGS.get(facts.scheme)
    reader = READERS.get(encoding.acts if encoding is not None else None)
    if reader is None:
        return Machinery("none", facts.scheme_text(),
                         note="this model adds no positional information of its own")
    return reader(backend, facts, base_model(backend))


def _table(backend, facts, base) -> Machinery:
    """An absolute encoding: the family's position table (learned, or DistilBERT's
    fixed sinusoids)."""
    module = backend.family.embeddings(base)[1]
    if module is None:
        return Machinery("none", facts.scheme_text(),
                         note="no position embedding table was found in this model")
    return learned_machinery(module.weight, facts.position_offset, facts.scheme_text())


def _rotary(backend, facts, base) -> Machinery:
    """A rotation: θ_i from the model's own rotary module(s)."""
    cfg = backend.model.config
    variants = rope_variants(base)
    if not variants:
        return Machinery("none", facts.scheme_text(),
                         note="no rotary module was found in this model")
    bases = {}
    for name, freqs in variants:
        theta = rope_parameters(cfg, name or None)["base"]
        r = 2 * len(freqs)
        # θ_1 = base^(-2/r): read the base back when the configuration lacks it
        bases[name] = float(theta) if theta else float(freqs[1] ** (-r / 2))
    head_dim = int(getattr(cfg, "head_dim", None) or facts.width // facts.heads)
    reach = min(facts.max_positions or ROPE_REACH, ROPE_REACH) - 1
    return rope_machinery(variants, head_dim, bases, facts.mask == "causal", reach,
                          facts.max_positions)


def _bias(backend, facts, base) -> Machinery:
    """A score bias: the learned table of relative buckets where the family keeps one
    (T5), else ALiBi's fixed slopes."""
    if backend.family.bias_table is None:
        return alibi_machinery(facts.heads, facts.mask == "causal")
    return t5_machinery(backend.family.bias_table(base).weight, facts.mask != "causal",
                        facts.encoding_parameters.get("max_distance", 128))


READERS = {"absolute": _table, "rotate": _rotary, "bias": _bias}   # by where it acts
