"""Published claims about positions, each checked in one call.

Each check returns a ``PaperCheck``: the citation, what the paper reports, the weights
it ran on, the claim it tests there, what posviz measured, and whether that claim holds.
The checks here run on untrained (seeded random) weights: they test what the
architecture implies, not what training does; the claims about trained models run on
the shipped checkpoints and the bundled pretrained models (experiments.trained and
experiments.pretrained). ``CATALOGUE`` is the one list of papers, with their titles.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ...errors import PosvizInputError, argument
from ...models.training.checkpoint import RANDOM, TRAINED, plural
from ...models.config import ModelConfig, Positions
from ...models.request import Request
from . import pretrained, trained
from .claim import PaperCheck
from .stage import Staged, tell
from .texts import PAPER_TEXT_SEEDS, random_texts

__all__ = ["PaperCheck", "Paper", "CATALOGUE", "PRESETS", "TRAINED_PRESETS", "PAPERS",
           "TITLES", "RUNS_LOADED", "check_paper"]
ARCHITECTURE = "What the architecture implies, on untrained weights: "


def _engine(**config):
    from ...models.builtin.backend import BuiltinBackend
    from ..engine import Engine
    return Engine(BuiltinBackend(ModelConfig(**config)))


def built_in(**config) -> dict:
    """The description of an untrained built-in model (as its describe() gives it)."""
    config = ModelConfig(**config)
    return {"model": "built-in", **config.to_dict(), "d_ff": config.ff_width}


def untrained(detail: str = "", **config) -> str:
    """What an untrained built-in model is: its seed and size, then ``detail``."""
    cfg = ModelConfig(**config)
    return (f"the built-in model, untrained: random weights drawn from seed {cfg.seed} "
            f"({plural(cfg.layers, 'layer')}, {plural(cfg.heads, 'head')}, "
            f"width {cfg.d_model})"
            + (f", {detail}" if detail else ""))


def _with_scores(engine, text: str, positions: Positions, should_stop):
    """The Trace of the text in its own order, pre-softmax scores included."""
    seq = engine.backend.tokenize(text)
    identity = np.arange(len(seq))
    return engine.backend.run(seq, Request(identity, positions.ids(identity), scores=True),
                              should_stop)


def haviv2022(should_stop=None, progress=None, say=None) -> PaperCheck:
    """``say`` is told each of the four probes' stages, ``progress`` their steps."""
    from .probe import probe, probe_work
    texts = random_texts(120, 12, PAPER_TEXT_SEEDS["haviv2022"], 20)
    masks = ("causal", "bidirectional")

    def verdict(runs) -> bool:
        causal, bidir = runs["causal"].layers, runs["bidirectional"].layers
        return (all(row.reads_position for row in causal[1:])
                and all(row.mae > 0.95 * row.chance_mae for row in bidir))

    runs = [(features, mask) for features in ("quadratic", "linear") for mask in masks]
    staged = Staged(say, *probe_work(runs, sum(len(t.split()) for t in texts),
                                     ModelConfig().layers))

    def told(k: int):
        features, mask = runs[k]
        return None if say is None else lambda stage: staged(
            f"probe {k + 1} of {len(runs)} ({features}, {mask}): {stage}")
    probes = [probe(_engine(pe="none", mask=mask), texts, features=features,
                    should_stop=should_stop, progress=progress, say=told(k))
              for k, (features, mask) in enumerate(runs)]
    by_features = {features: {mask: result for (f, mask), result in zip(runs, probes)
                              if f == features} for features in ("quadratic", "linear")}
    values = {mask: [vars(row).copy() for row in r.layers]
              for mask, r in by_features["quadratic"].items()}
    values["features"] = "quadratic"
    values["linear"] = {mask: [vars(row).copy() for row in r.layers]
                        for mask, r in by_features["linear"].items()}
    holds, values["holds_linear"] = (verdict(by_features["quadratic"]),
                                     verdict(by_features["linear"]))
    worst = max(row.mae / row.chance_mae for row in by_features["linear"]["causal"].layers[1:])
    return PaperCheck(
        "haviv2022",
        "Haviv, Ram, Press, Izsak, Levy (2022). Transformer language models without "
        "positional encodings still learn positional information. Findings of EMNLP.",
        "Without positional encodings a causal language model still knows absolute "
        "position (a probe reads it off its hidden states); a bidirectional (masked) one "
        "does not.",
        f"A ridge probe of position, held out by text, per layer, on 120 generated texts "
        f"of 12 words, the built-in model without positions, causal vs bidirectional. The "
        f"verdict reads the quadratic probe (hidden state and its squares, so it can read "
        f"a norm); the linear probe (hidden state only) is beside it: its causal error is "
        f"up to {worst:.2f} × chance, so with linear features alone the claim "
        f"{'holds too' if values['holds_linear'] else 'does not hold here'}.",
        values, holds,
        ran_on=untrained("no positions, causal and bidirectional", pe="none"),
        models=tuple(built_in(pe="none", mask=mask) for mask in masks),
        tests=ARCHITECTURE + "a causal mask alone lets a quadratic probe read position "
              "(error below 0.9 × chance after the embeddings) and a bidirectional mask "
              "does not (above 0.95 × chance at every layer); not that training keeps it.")


def chi2023(should_stop=None, progress=None, say=None) -> PaperCheck:
    """``say`` is told what it runs, ``progress`` each text run."""
    engine = _engine(pe="none", mask="causal", layers=2)
    seqs = [engine.backend.tokenize(t) for t in random_texts(64, 32, PAPER_TEXT_SEEDS["chi2023"], 5000)]
    tell(say, f"running {len(seqs)} random texts of 32 tokens through the built-in model "
              f"without positions")
    spread = []
    for done, seq in enumerate(seqs, 1):
        trace = engine.reference(seq, Positions(), should_stop)
        spread.append(trace.attn_out[0].var(axis=1))        # (n,) variance over d, block 1
        tell(progress, done, len(seqs))
    by_position = np.mean(spread, axis=0)                    # (n,)
    rank = np.corrcoef(np.argsort(np.argsort(by_position)), np.arange(by_position.size))
    holds = bool(rank[0, 1] < -0.9 and by_position[-1] < 0.5 * by_position[0])
    return PaperCheck(
        "chi2023",
        "Chi, Fan, Chen, Rudnicky, Ramadge (2023). Latent positional information is in the "
        "self-attention variance of transformer language models without positional "
        "embeddings. ACL.",
        "In a causal model without positions the variance of the attention output "
        "shrinks with position (each query averages over more values), which is how "
        "position leaks.",
        "The variance over the model width of block 1's attention output, per position, "
        "averaged over 64 random texts of 32 tokens (built-in model, no positions, causal).",
        {"variance_by_position": by_position.tolist(),
         "rank_correlation_with_position": float(rank[0, 1]),
         "last_over_first": float(by_position[-1] / by_position[0])}, holds,
        ran_on=untrained("no positions, causal", pe="none", layers=2),
        models=(built_in(pe="none", mask="causal", layers=2),),
        tests=ARCHITECTURE + "the variance falls with position (rank correlation below "
              "-0.9, the last position's under half the first's).")


def rope_decay(should_stop=None, progress=None, say=None) -> PaperCheck:
    """``say`` is told what it measures, ``progress`` each of its two pairs' scores."""
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

    tell(say, f"rotating an aligned pair and 256 Gaussian pairs over {n} distances")
    aligned = scores(torch.ones(1, d_head), torch.ones(1, d_head))[0].numpy()
    tell(progress, 1, 2)
    gen = torch.Generator().manual_seed(0)
    q, k = torch.randn(256, d_head, generator=gen), torch.randn(256, d_head, generator=gen)
    random = np.abs(scores(q, k).numpy()).mean(axis=0)        # (n,)
    tell(progress, 2, 2)
    near, far = slice(1, 9), slice(n // 2, n)
    values = {"aligned_near": float(np.abs(aligned[near]).mean()),
              "aligned_far": float(np.abs(aligned[far]).mean()),
              "random_near": float(random[near].mean()),
              "random_far": float(random[far].mean())}
    aligned_ratio = values["aligned_far"] / values["aligned_near"]
    random_ratio = values["random_far"] / values["random_near"]
    values.update(aligned_ratio=aligned_ratio, random_ratio=random_ratio,
                  aligned_by_distance=np.abs(aligned).tolist(),
                  random_by_distance=random.tolist(),
                  bound_by_distance=_rope_bound(d_head, n).tolist())
    holds = aligned_ratio < 0.6 and 0.7 < random_ratio < 1.4
    return PaperCheck(
        "rope-decay",
        "Su, Lu, Pan, Murtadha, Wen, Liu (2021). RoFormer: enhanced transformer with "
        "rotary position embedding. arXiv:2104.09864; Barbero, Vitvitskyi, Perivolaropoulos, "
        "Pascanu, Veličković (2024). Round and round we go! What makes rotary positional "
        "encodings useful? arXiv:2410.06205.",
        "RoPE's long-term decay (RoFormer §3.4.3): an upper bound on the score of a "
        "query and key that falls with their distance. Barbero et al. show the score "
        "itself need not fall: for random (e.g. Gaussian) queries and keys its expected "
        "size does not decay.",
        "posviz's RoPE (d_head 64, base 10000): |score| / d_head of one aligned pair "
        "(q = k = all ones, a pair whose score falls: an example under the bound, not the "
        "bound), and the mean |score| of 256 Gaussian pairs, at distances 1-8 against "
        "256-511.",
        values, holds,
        ran_on="no model: posviz's RoPE rotation applied to an aligned pair and to 256 "
               "Gaussian query-key pairs drawn from seed 0",
        models=({"model": "none: RoPE's rotation alone", "pe": "rope", "weights": "none",
                 "d_head": d_head, "distances": n, "seeds": {"pairs": 0}},),
        tests="What the rotation implies, no weights involved: the aligned pair's score "
              "at 256-511 is under 0.6 × its score at 1-8, and the Gaussian pairs' mean "
              "stays within 0.7-1.4 × of it.")


def _rope_bound(d_head: int, n: int, base: float = 10000.0) -> np.ndarray:
    """RoFormer's bound (§3.4.3) on the aligned pair's |score| / d_head at distances
    0..n-1 (n,): its pairs' weights are all 2 / d_head, so by Abel summation
    |score(m)| <= 2 / d_head × sum_j |S_j(m)|, S_j(m) = sum_{i<j} e^(i m theta_i)."""
    theta = base ** (-np.arange(0, d_head, 2) / d_head)                  # (d_head/2,)
    partial = np.cumsum(np.exp(1j * np.arange(n)[:, None] * theta), axis=1)   # (n, d/2)
    return 2 / d_head * np.abs(partial).sum(axis=1)


def _alibi_measured(heads: int, should_stop) -> np.ndarray:
    """Each head's slope (h,), read from the built-in model's pre-softmax scores."""
    n = 12
    text = " ".join(f"w{k}" for k in range(n))
    traces = {}
    for pe in ("alibi", "none"):              # same seed: the same weights, bias aside
        traces[pe] = _with_scores(_engine(pe=pe, mask="causal", heads=heads,
                                          d_model=8 * heads, layers=1), text, Positions(),
                                  should_stop)
    i, j = np.tril_indices(n, -1)                 # below the diagonal: not masked
    bias = traces["alibi"].scores[0][:, i, j] - traces["none"].scores[0][:, i, j]  # (h, m)
    distance = (i - j).astype(float)
    return np.array([-(b @ distance) / (distance @ distance) for b in bias])


ALIBI_HEADS = (6, 8, 12)       # a power of two, and two counts the closed form misses


def alibi_slopes(should_stop=None, progress=None, say=None) -> PaperCheck:
    """``say`` is told what it measures, ``progress`` each count of heads measured."""
    from ...models.encodings.alibi import alibi_slopes as reference_rule
    tell(say, f"reading the slopes of {', '.join(map(str, ALIBI_HEADS))} heads from the "
              f"built-in model's scores, with ALiBi and without")
    by_heads = {}
    for done, heads in enumerate(ALIBI_HEADS, 1):
        measured = _alibi_measured(heads, should_stop)
        by_heads[str(heads)] = {"measured": measured.tolist(),
                                "rule": list(reference_rule(heads))}
        tell(progress, done, len(ALIBI_HEADS))
    measured = np.array(by_heads["8"]["measured"])
    paper = np.array([2.0 ** (-8 * (h + 1) / 8) for h in range(8)])
    holds = bool(all(np.allclose(row["measured"], row["rule"], rtol=1e-4)
                     for row in by_heads.values())
                 and np.allclose(measured, paper, rtol=1e-4)
                 and np.allclose(measured[1:] / measured[:-1], measured[1] / measured[0]))
    return PaperCheck(
        "alibi-slopes",
        "Press, Smith, Lewis (2022). Train short, test long: attention with linear biases "
        "enables input length extrapolation. ICLR.",
        "Head h adds -m_h x distance to its scores, with geometric slopes: for a power of "
        "two H, m_h = 2^(-8h/H) (H = 8: 1/2, 1/4, ..., 1/256); otherwise the slopes of "
        "the power of two below H, then every other slope of the one above (the "
        "authors' reference code).",
        "The slope of (scores with ALiBi - scores without) against distance per head, "
        "read from the recorded pre-softmax scores of the built-in model (same weights), "
        "for 6, 8 and 12 heads, against that rule.",
        {"measured": measured.tolist(), "paper": paper.tolist(), "by_heads": by_heads},
        holds, ran_on=f"the built-in model, untrained: random weights drawn from seed "
                      f"{ModelConfig().seed}, 1 layer, causal, 6, 8 and 12 heads of width 8",
        models=tuple(built_in(pe=pe, mask="causal", heads=heads, d_model=8 * heads, layers=1)
                     for heads in ALIBI_HEADS for pe in ("alibi", "none")),
        tests="What the architecture implies: the slopes the scores show are the paper's "
              "rule to 1e-4 for 6, 8 and 12 heads, and geometric for 8.")


def sinha2022(should_stop=None, progress=None, say=None) -> PaperCheck:
    """``say`` is told what it runs, ``progress`` each encoding's model measured."""
    from ..symmetry import compare
    text, shift = "the cat sat on the mat because it was warm", 7
    values, floor = {}, 0.0
    kinds = ("sinusoidal", "learned", "rope")
    tell(say, f"shifting every position id by {shift}: the built-in model with "
              f"{', '.join(kinds)} positions")
    for done, pe in enumerate(kinds, 1):
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
        tell(progress, done, len(kinds))
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
        values, holds, ran_on=untrained("bidirectional, one model per encoding"),
        models=tuple(built_in(pe=pe) for pe in ("sinusoidal", "learned", "rope")),
        tests=ARCHITECTURE + "the shift moves the sinusoidal and learned models' last "
              "layer by more than 100 × the noise floor and RoPE's scores and last layer "
              "by less than it; whether trained models' predictions move is the same check "
              "on trained weights.")


@dataclass(frozen=True)
class Paper:
    """One published claim: its name, its title as a list shows it, its checks."""

    name: str
    title: str
    random: Callable[..., PaperCheck] | None = None      # on untrained weights
    trained: Callable[..., PaperCheck] | None = None     # on trained ones
    runs_loaded: str | None = None   # the weights whose check runs a model lent (loaded=)


CATALOGUE = (
    Paper("haviv2022", "Haviv et al. 2022 — language models without positional encodings "
          "still learn position", haviv2022, trained.haviv2022),
    Paper("chi2023", "Chi et al. 2023 — position in the self-attention variance", chi2023),
    Paper("rope-decay", "Su et al. 2021, Barbero et al. 2024 — RoPE's long-term decay",
          rope_decay),
    Paper("alibi-slopes", "Press et al. 2022 — ALiBi's slopes per head", alibi_slopes),
    Paper("sinha2022", "Sinha et al. 2022 — the curious case of absolute position "
          "embeddings", sinha2022, pretrained.sinha2022, runs_loaded=TRAINED),
    Paper("press2022", "Press et al. 2022 — train short, test long", None,
          trained.press2022))
PRESETS: dict[str, Callable[..., PaperCheck]] = {p.name: p.random for p in CATALOGUE if p.random}
TRAINED_PRESETS: dict[str, Callable[..., PaperCheck]] = {
    p.name: p.trained for p in CATALOGUE if p.trained is not None}
PAPERS = tuple(p.name for p in CATALOGUE)
TITLES = {p.name: p.title for p in CATALOGUE}
RUNS_LOADED = {p.name: p.runs_loaded for p in CATALOGUE}


def trained_too(check: PaperCheck) -> bool:
    """Did ``check`` run on random weights for a paper checked on trained ones too?"""
    return check.weights == RANDOM and check.name in TRAINED_PRESETS


def default_weights(name: str) -> str:
    """The weights a paper's check runs on unless told: random where it can."""
    return RANDOM if name in PRESETS else TRAINED


def paper_weights(name: str, weights: str | None) -> str:
    """The weights paper ``name``'s check runs on (``weights``, or its default), or
    PosvizInputError for a paper or weights that are not one: told before any step."""
    if not isinstance(name, str) or name not in PAPERS:
        raise PosvizInputError(f"the paper must be one of {', '.join(PAPERS)} (got {name!r})")
    if weights is not None and weights not in (RANDOM, TRAINED):
        raise PosvizInputError(f"a paper runs on {argument('weights')} random or trained "
                               f"(got {weights!r})")
    return weights or default_weights(name)


def check_paper(name: str, should_stop=None, weights: str | None = None,
                progress: Callable[[int, int], None] | None = None,
                say: Callable[[str], None] | None = None, loaded=None, load_left=None):
    """Check paper ``name`` on ``weights`` ("random" or "trained"; default_weights); a
    long check tells ``say`` its stages, ``progress`` their steps; a check of bundled
    models runs one in ``loaded`` ({source: backend}), a load's time left ``load_left()``."""
    weights = paper_weights(name, weights)
    presets = {RANDOM: PRESETS, TRAINED: TRAINED_PRESETS}[weights]
    if name not in presets:
        others = ", ".join(p for p in presets) or "none"
        raise PosvizInputError(f"{name} checks a claim about {_about(name)}; on "
                               f"{weights} weights posviz checks: {others}")
    lent = dict(loaded=loaded, load_left=load_left) if RUNS_LOADED[name] == weights else {}
    return presets[name](should_stop, progress=progress, say=say, **lent)


def _about(name: str) -> str:
    return ("trained weights" if name not in PRESETS
            else "the architecture, so it runs on random weights")
