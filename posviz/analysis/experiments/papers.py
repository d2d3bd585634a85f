"""Published claims about positions, each checked on the built-in model in one call.

Each preset returns a ``PaperCheck``: the citation, what the paper reports, what posviz
measured, and whether the qualitative claim holds here. The models are untrained (seeded
random weights): the claims checked are the ones that follow from the architecture.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ...errors import PosvizInputError
from ...models.config import ModelConfig, Positions
from .texts import random_texts


@dataclass(frozen=True)
class PaperCheck:
    name: str
    citation: str
    reports: str                   # the paper's claim, in words
    measures: str                  # what posviz measured, in words
    values: dict                   # the measurements (JSON-ready)
    holds: bool                    # does the qualitative claim hold here

    def to_dict(self) -> dict:
        return dict(vars(self))


def _engine(**config):
    from ...models.builtin import BuiltinBackend
    from ..engine import Engine
    return Engine(BuiltinBackend(ModelConfig(**config)))


def _with_scores(engine, text: str, positions: Positions, should_stop):
    """The Trace of the text in its own order, pre-softmax scores included."""
    seq = engine.backend.tokenize(text)
    identity = np.arange(len(seq))
    return engine.backend.run(seq, identity, positions.ids(identity), should_stop,
                              scores=True)


def haviv2022(should_stop=None) -> PaperCheck:
    from .probe import probe
    texts = random_texts(120, 12, seed=0, vocabulary=20)
    runs = {mask: probe(_engine(pe="none", mask=mask), texts, features="quadratic",
                        should_stop=should_stop) for mask in ("causal", "bidirectional")}
    values = {mask: [vars(row).copy() for row in r.layers] for mask, r in runs.items()}
    causal, bidir = runs["causal"].layers, runs["bidirectional"].layers
    holds = (all(row.mae < 0.9 * row.chance_mae for row in causal[1:])
             and all(row.mae > 0.95 * row.chance_mae for row in bidir))
    return PaperCheck(
        "haviv2022",
        "Haviv, Ram, Press, Izsak, Levy (2022). Transformer language models without "
        "positional encodings still learn positional information. Findings of EMNLP.",
        "Without positional encodings a causal language model still knows absolute "
        "position (a probe reads it off its hidden states); a bidirectional (masked) one "
        "does not.",
        "A ridge probe (hidden state and its squares -> position, held out by text) on "
        "the built-in model without positions: causal vs bidirectional, per layer.",
        values, holds)


def chi2023(should_stop=None) -> PaperCheck:
    engine = _engine(pe="none", mask="causal", layers=2)
    seqs = [engine.backend.tokenize(t) for t in random_texts(64, 32, seed=1, vocabulary=5000)]
    spread = []
    for seq in seqs:
        trace = engine.reference(seq, Positions(), should_stop)
        spread.append(trace.attn_out[0].var(axis=1))        # (n,) variance over d, block 1
    by_position = np.mean(spread, axis=0)                    # (n,)
    rank = np.corrcoef(np.argsort(np.argsort(by_position)), np.arange(by_position.size))
    holds = bool(rank[0, 1] < -0.9 and by_position[-1] < 0.5 * by_position[0])
    return PaperCheck(
        "chi2023",
        "Chi, Fan, Rudnicky, Ramadge (2023). Latent positional information is in the "
        "self-attention variance of transformer language models without positional "
        "embeddings. ACL.",
        "In a causal model without positions the variance of the attention output "
        "shrinks with position (each query averages over more values), which is how "
        "position leaks.",
        "The variance over the model width of block 1's attention output, per position, "
        "averaged over 64 random texts of 32 tokens (built-in model, no positions, causal).",
        {"variance_by_position": by_position.tolist(),
         "rank_correlation_with_position": float(rank[0, 1]),
         "last_over_first": float(by_position[-1] / by_position[0])}, holds)


def rope_decay(should_stop=None) -> PaperCheck:
    import torch

    from ...models.encodings import make_encoding
    d_head, n = 64, 512
    rope = make_encoding("rope", d_model=d_head, n_heads=1)
    pos = torch.arange(n)

    def scores(q, k):                       # q, k (m, d_head) -> (m, n): q at 0, k at j
        m = q.shape[0]
        qs = q[:, None, :].expand(m, n, d_head).double()
        ks = k[:, None, :].expand(m, n, d_head).double()
        q_rot, k_rot = rope.rotate(qs, ks, pos)               # (m, n, d_head)
        return (q_rot[:, :1] * k_rot).sum(-1) / d_head        # (m, n)

    aligned = scores(torch.ones(1, d_head), torch.ones(1, d_head))[0].numpy()
    gen = torch.Generator().manual_seed(0)
    q, k = torch.randn(256, d_head, generator=gen), torch.randn(256, d_head, generator=gen)
    random = np.abs(scores(q, k).numpy()).mean(axis=0)        # (n,)
    near, far = slice(1, 9), slice(n // 2, n)
    values = {"aligned_near": float(np.abs(aligned[near]).mean()),
              "aligned_far": float(np.abs(aligned[far]).mean()),
              "random_near": float(random[near].mean()),
              "random_far": float(random[far].mean())}
    aligned_ratio = values["aligned_far"] / values["aligned_near"]
    random_ratio = values["random_far"] / values["random_near"]
    values.update(aligned_ratio=aligned_ratio, random_ratio=random_ratio)
    holds = aligned_ratio < 0.6 and 0.7 < random_ratio < 1.4
    return PaperCheck(
        "rope-decay",
        "Su, Lu, Pan, Murtadha, Wen, Liu (2021). RoFormer: enhanced transformer with "
        "rotary position embedding. arXiv:2104.09864; Barbero, Vitvitskyi, Perivolaropoulos, "
        "Pascanu, Veličković (2024). Round and round we go! What makes rotary positional "
        "encodings useful? arXiv:2410.06205.",
        "RoPE's long-term decay: the score of a query and key that point the same way "
        "falls with their distance; Barbero et al. note it does not hold for random "
        "(e.g. Gaussian) queries and keys, whose expected score does not decay.",
        "posviz's RoPE (d_head 64, base 10000): |score| / d_head of an aligned pair, and "
        "the mean |score| of 256 Gaussian pairs, at distances 1-8 against 256-511.",
        values, holds)


def alibi_slopes(should_stop=None) -> PaperCheck:
    heads, n = 8, 12
    text = " ".join(f"w{k}" for k in range(n))
    traces = {}
    for pe in ("alibi", "none"):              # same seed: the same weights, bias aside
        traces[pe] = _with_scores(_engine(pe=pe, mask="causal", heads=heads, d_model=64,
                                          layers=1), text, Positions(), should_stop)
    i, j = np.tril_indices(n, -1)                 # below the diagonal: not masked
    bias = traces["alibi"].scores[0][:, i, j] - traces["none"].scores[0][:, i, j]  # (h, m)
    distance = (i - j).astype(float)
    measured = np.array([-(b @ distance) / (distance @ distance) for b in bias])
    paper = np.array([2.0 ** (-8 * (h + 1) / heads) for h in range(heads)])
    holds = bool(np.allclose(measured, paper, rtol=1e-4)
                 and np.allclose(measured[1:] / measured[:-1], measured[1] / measured[0]))
    return PaperCheck(
        "alibi-slopes",
        "Press, Smith, Lewis (2022). Train short, test long: attention with linear biases "
        "enables input length extrapolation. ICLR.",
        f"Head h adds -m_h x distance to its scores, with geometric slopes m_h = "
        f"2^(-8h/H): for H = {heads}, 1/2, 1/4, ..., 1/256.",
        "The slope of (scores with ALiBi - scores without) against distance per head, "
        "read from the recorded pre-softmax scores of the built-in model (same weights).",
        {"measured": measured.tolist(), "paper": paper.tolist()}, holds)


def sinha2022(should_stop=None) -> PaperCheck:
    from ..symmetry import compare
    text, shift = "the cat sat on the mat because it was warm", 7
    values, floor = {}, 0.0
    for pe in ("sinusoidal", "learned", "rope"):
        engine = _engine(pe=pe)
        base = _with_scores(engine, text, Positions(offset=0), should_stop)
        moved = _with_scores(engine, text, Positions(offset=shift), should_stop)
        comparison = compare(base, moved, np.arange(base.n_tokens))
        finite = np.isfinite(base.scores)
        score_change = float(np.abs(moved.scores - base.scores)[finite].max()
                             / np.abs(base.scores[finite]).max())
        floor = comparison.floor
        values[pe] = {"output_change": float(comparison.hidden_equivariance[-1]),
                      "score_change": score_change}
    holds = (values["sinusoidal"]["output_change"] > 100 * floor
             and values["learned"]["output_change"] > 100 * floor
             and values["rope"]["score_change"] <= floor
             and values["rope"]["output_change"] <= floor)
    values["noise_floor"] = floor
    return PaperCheck(
        "sinha2022",
        "Sinha, Kazemnejad, Reddy, Pineau, Hupkes, Williams (2022). The curious case of "
        "absolute position embeddings. Findings of EMNLP.",
        "Shifting every position id by the same offset changes what a model with "
        "absolute (learned or sinusoidal) positions computes; relative schemes such as "
        "RoPE see only differences and are unchanged.",
        f"The relative change of the last layer's hidden states and of the pre-softmax "
        f"scores when the positions start at {shift} instead of 0 (built-in model).",
        values, holds)


PRESETS: dict[str, Callable[..., PaperCheck]] = {
    "haviv2022": haviv2022, "chi2023": chi2023, "rope-decay": rope_decay,
    "alibi-slopes": alibi_slopes, "sinha2022": sinha2022}


def check_paper(name: str, should_stop=None) -> PaperCheck:
    if name not in PRESETS:
        raise PosvizInputError(f"the paper must be one of {', '.join(PRESETS)} (got {name!r})")
    return PRESETS[name](should_stop)
