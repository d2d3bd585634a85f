"""Position probe: how well a token's absolute position can be read off its hidden state.

Per layer, a ridge regression from the hidden state (d,) of each token to its slot
index, fitted on some texts and scored on held-out ones (k-fold over texts, so a text's
tokens are never both fitted and scored). Reported beside it: chance, the mean absolute
error of predicting the training tokens' mean position.

``features="quadratic"`` gives the regression each coordinate's square as well, so it
can read a norm: in an untrained causal model without positions the leak is mostly in
the spread of the attention output, which shrinks with the number of tokens averaged
(Chi et al. 2023), and a linear read-out sees little of it. Without positions and with a
bidirectional mask a hidden state does not know its slot; a causal mask leaks it from the
first block on (Haviv et al. 2022, "Transformer language models without positional
encodings still learn positional information").
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from ...errors import Cancelled, PosvizInputError, argument
from ...models.config import Positions
from ...models.trace import and_joined, layer_label, layer_spans
from ...models.limits.guard import check_folds
from .stage import Stage, Tally, tell
from .texts import GENERATED_SEED, random_texts

FEATURES = ("linear", "quadratic", "mlp")
# each as the GUI's control, the figure's title and legend name it: what the regression
# reads (the squares of the hidden state's coordinates let it read a norm; a small
# network reads any smooth function of it)
FEATURE_NAMES = {"linear": "linear", "quadratic": "linear + squared coordinates",
                 "mlp": "a small MLP (one hidden layer of 64)"}
# what a probe of each reads position with, in the verdict's words
READ_WITH = {"linear": "linearly", "mlp": "with a small MLP",
             "quadratic": "linearly from the hidden state and its squares"}
LISTED = 4                 # below-chance layers named one by one, at most; past it, a span
# A held-out error under this share of chance's reads position (the verdict and paper
# checks): a margin, so a fit of R² near 0 (SmolLM2's input: 3% below chance) does not
READS = 0.9
RIDGE = (1e-3, 1e-2, 1e-1, 1.0, 10.0)      # penalties tried, times the mean feature variance
FOLDS, PER_FEATURE = 5, 10   # folds by default; tokens a held-out fit needs per feature
MLP_WIDTH, MLP_STEPS = 64, 300    # the MLP probe's hidden units and full-batch steps
# The texts a probe runs on when given none: made-up words drawn independently of their
# place (so the words carry no position), from a vocabulary small enough that their
# embeddings span few of the model's dimensions (so what is left shows the position).
GENERATED_WORDS, GENERATED_VOCABULARY = 24, 16
GENERATED_TEXTS = ("{words} made-up words a text, each drawn at random from the same "
                   "{vocabulary}, independently of its place")


@dataclass(frozen=True)
class ProbeLayer:
    layer: int
    r2: float                  # 1 - SSE / SS around the held-out mean
    mae: float                 # mean |predicted - true position| on held-out tokens
    chance_mae: float          # the same for predicting the training mean

    @property
    def reads_position(self) -> bool:
        """Is the held-out error under READS of chance's?"""
        return self.mae < READS * self.chance_mae


@dataclass(frozen=True)
class ProbeResult:
    layers: tuple[ProbeLayer, ...]
    texts: int
    tokens: int
    folds: int
    features: str = "linear"
    width: int = 0             # the features the regression reads (d, or 2d with squares)
    generated: str = ""        # how the texts were made when none were given, else ""

    @property
    def tokens_needed(self) -> int:
        """Held-out tokens a fit of ``width`` features needs: PER_FEATURE each."""
        return PER_FEATURE * self.width

    @property
    def too_few(self) -> bool:
        return self.tokens < self.tokens_needed

    @property
    def note(self) -> str:
        """One line when the fit had fewer samples than its features need, else ""."""
        if not self.too_few:
            return ""
        return (f"too few samples: {self.tokens} tokens for {self.width} features, fewer "
                f"than the {self.tokens_needed} ({PER_FEATURE} a feature) a held-out fit "
                f"needs; a low R² here may mean too few texts, not no position (give more "
                f"texts, or none for generated ones)")

    @property
    def verdict(self) -> str:
        """What the held-out errors against chance say, layer by layer (verdict)."""
        return verdict(self.layers, self.features,
                       (self.tokens, self.width) if self.too_few else None)

    def to_dict(self) -> dict:
        return {"texts": self.texts, "tokens": self.tokens, "folds": self.folds,
                "features": self.features, "feature_count": self.width,
                "tokens_needed": self.tokens_needed, "too_few_samples": self.too_few,
                "note": self.note, "verdict": self.verdict, "generated_texts": self.generated,
                "layers": [vars(row).copy() for row in self.layers]}


def _spans(layers: list[int]) -> str:
    """Layers as runs: [0, 1, 2, 4] -> "in–2 and 4"."""
    return and_joined(layer_spans(layers))


def _span(values) -> str:
    """Numbers as "low–high" to 2 decimals, or one number when they round alike."""
    values = list(values)
    low, high = f"{min(values):.2f}", f"{max(values):.2f}"
    return low if low == high else f"{low}–{high}"


def verdict(layers, features: str = "linear", too_few: tuple[int, int] | None = None) -> str:
    """What a probe's ``layers`` (ProbeLayer each) show: at which layers the held-out error
    is more than 1 - READS below chance and by how much, or that it is at none, and
    where it is below chance by less; ``too_few`` ((tokens, features) of a fit with fewer
    samples than PER_FEATURE a feature) adds that an error at or near chance may then
    come from too few texts."""
    how = READ_WITH.get(features, features)
    below = [row for row in layers if row.reads_position]
    near = [row for row in layers if not row.reads_position and row.mae < row.chance_mae]
    margin = f"{100 * (1 - READS):.0f}%"
    if not below:
        errors = _span(r.mae for r in layers)
        said = (f"At no layer is the error {f'more than {margin} ' if near else ''}below "
                f"chance (error {errors} against chance "
                f"{_span(r.chance_mae for r in layers)} positions): a held-out fit reads "
                f"position {how} no better than guessing.")
    else:
        if len(below) <= LISTED:
            by = "; ".join(f"layer {layer_label(r.layer)}: {r.mae:.2f} against "
                           f"{r.chance_mae:.2f}" for r in below) + " positions"
        else:
            cut = [1 - r.mae / r.chance_mae for r in below]
            best = below[max(range(len(below)), key=cut.__getitem__)]
            by = (f"{100 * min(cut):.0f}–{100 * max(cut):.0f}% below chance, most at "
                  f"layer {layer_label(best.layer)}")
        if len(below) == len(layers):
            where, there = "at every layer", "there"
        else:
            where = (f"at layer{'s' if len(below) > 1 else ''} "
                     f"{_spans([r.layer for r in below])} only")
            there = "there and at no other layer"
        said = (f"The error is more than {margin} below chance {where} ({by}): a held-out "
                f"fit reads position {how} better than guessing {there}.")
    if near:
        said += (f" At layer{'s' if len(near) > 1 else ''} {_spans([r.layer for r in near])} "
                 f"it is below chance by less than {margin} ("
                 + "; ".join(f"{r.mae:.2f} against {r.chance_mae:.2f}" for r in near[:LISTED])
                 + ("; …" if len(near) > LISTED else "")
                 + "), which this probe counts as guessing.")
    if too_few is not None and len(below) < len(layers):
        tokens, width = too_few
        said += (f" With {tokens} tokens for {width} features (fewer than {PER_FEATURE} a "
                 f"feature), an error at or near chance may mean too few texts, not no "
                 f"position.")
    return said


# The fits run in torch, float64: a fixed sequence of operations on torch's threads
# (which a command and a Python process share, as they share the forward), not on
# numpy's BLAS, which a command keeps to one thread and a Python process runs on every
# core (its threaded reductions round differently, its idle threads slow torch's).
Sums = tuple         # (count, Σx (d,), Σxxᵀ (d, d), Σy, Σxy (d,)) of some tokens


def _sums(X, y) -> Sums:
    """The sums a ridge fit reads of tokens X (m, d), positions y (m,) (torch float64)."""
    return X.shape[0], X.sum(0), X.T @ X, y.sum(), X.T @ y


def _added(parts) -> Sums:
    """The sums of the union of disjoint sets of tokens, added in the order given."""
    parts = list(parts)
    return tuple(sum(values[1:], values[0]) for values in zip(*parts))


def _ridge(sums: Sums, penalties) -> list:
    """Closed-form ridge on the tokens of ``sums``, centred, one fit per penalty (times
    the mean feature variance) from one eigendecomposition: [(w (d,), bias)]."""
    import torch
    n, sx, sxx, sy, sxy = sums
    mean_x, mean_y = sx / n, sy / n
    gram = sxx - n * torch.outer(mean_x, mean_x)                 # Σ (x-x̄)(x-x̄)ᵀ (d, d)
    cross = sxy - n * mean_x * mean_y                            # Σ (x-x̄)(y-ȳ) (d,)
    unit = max(float(gram.diagonal().sum()) / max(n, 1) / gram.shape[0], 1e-12)
    values, vectors = torch.linalg.eigh(gram)                    # (d,), (d, d)
    projected = vectors.T @ cross                                # (d,)
    fits = []
    for penalty in penalties:
        w = vectors @ (projected / (values.clamp(min=0) + penalty * unit))
        fits.append((w, mean_y - mean_x @ w))
    return fits


def ridge_fit(X: np.ndarray, y: np.ndarray, penalty: float):
    """Closed-form ridge on centred data, as the probe fits: X (m, d), y (m,) ->
    (w (d,), bias)."""
    import torch
    (w, bias), = _ridge(_sums(torch.as_tensor(X, dtype=torch.float64),
                              torch.as_tensor(y, dtype=torch.float64)), [penalty])
    return w.numpy(), float(bias)


def _folds(n_texts: int, folds: int) -> list[np.ndarray]:
    return [np.arange(n_texts)[k::folds] for k in range(folds)]


def _fit_texts(X, y, groups: np.ndarray, train: np.ndarray):
    """The ridge fit on the tokens of the texts ``train`` (X (m, d), y (m,) torch), its
    penalty the one with the lowest held-out error inside them (up to 3 groups of them
    held out in turn; with one text there is nothing to hold out: the middle one)."""
    import torch
    parts = [torch.from_numpy(np.isin(groups, train[part]))
             for part in _folds(train.size, min(3, train.size))]
    sums = [_sums(X[part], y[part]) for part in parts]           # each group's, once
    penalty = RIDGE[len(RIDGE) // 2]
    if len(parts) > 1:
        errors = np.zeros(len(RIDGE))
        for k, part in enumerate(parts):
            fits = _ridge(_added(s for j, s in enumerate(sums) if j != k), RIDGE)
            for i, (w, b) in enumerate(fits):
                errors[i] += float((X[part] @ w + b - y[part]).abs().sum())
        penalty = RIDGE[int(np.argmin(errors))]
    (w, b), = _ridge(_added(sums), [penalty])
    return w, b


def mlp_predict(X: np.ndarray, y: np.ndarray, X_out: np.ndarray) -> np.ndarray:
    """A small MLP (one hidden layer of MLP_WIDTH, GELU) fitted to X (m, d) -> y (m,)
    on standardised features (full-batch Adam, weight decay, a fixed seed), predicting
    X_out (k, d) -> (k,)."""
    import torch
    mean, spread = X.mean(axis=0), X.std(axis=0) + 1e-8
    gen = torch.Generator().manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Linear(X.shape[1], MLP_WIDTH), torch.nn.GELU(),
                              torch.nn.Linear(MLP_WIDTH, 1)).double()
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn(p.shape, generator=gen, dtype=torch.float64)
                    / max(p.shape[-1], 1) ** 0.5)
    inputs = torch.as_tensor((X - mean) / spread)
    centre, scale = float(y.mean()), float(y.std() + 1e-8)
    target = torch.as_tensor((y - centre) / scale)
    optimizer = torch.optim.Adam(net.parameters(), lr=1e-2, weight_decay=1e-3)
    with torch.enable_grad():
        for _ in range(MLP_STEPS):
            optimizer.zero_grad()
            loss = ((net(inputs)[:, 0] - target) ** 2).mean()
            loss.backward()
            optimizer.step()
    with torch.no_grad():
        out = net(torch.as_tensor((X_out - mean) / spread))[:, 0].numpy()
    return out * scale + centre


def score_layer(X: np.ndarray, y: np.ndarray, groups: np.ndarray, folds: int,
                mlp: bool = False, fitted: Callable[[], None] | None = None):
    """Cross-validated (r2, mae, chance_mae) of a ridge probe (or with ``mlp`` a small
    MLP) X (m, d) -> y (m,); ``fitted()`` after each fold's fit (an MLP's layer: 4-5 s)."""
    import torch
    n_texts = int(groups.max()) + 1
    predicted, chance = np.empty_like(y), np.empty_like(y)
    # shifted by the mean token (a fit centres anyway): the sums then lose fewer digits
    X_t, y_t = torch.from_numpy(X - X.mean(axis=0)), torch.from_numpy(y)
    for held in _folds(n_texts, folds):
        train = np.setdiff1d(np.arange(n_texts), held)
        out, fit = np.isin(groups, held), np.isin(groups, train)
        if mlp:
            predicted[out] = mlp_predict(X[fit], y[fit], X[out])
        else:
            w, b = _fit_texts(X_t, y_t, groups, train)
            predicted[out] = (X_t[torch.from_numpy(out)] @ w + b).numpy()
        chance[out] = y[fit].mean()
        tell(fitted)
    sse, sst = ((predicted - y) ** 2).sum(), ((y - y.mean()) ** 2).sum()
    return (float(1 - sse / sst) if sst > 0 else float("nan"),
            float(np.abs(predicted - y).mean()), float(np.abs(chance - y).mean()))


def hidden_states(engine, texts, positions: Positions = Positions(),
                  progress: Callable[[int, int], None] | None = None,
                  should_stop: Callable[[], bool] | None = None):
    """Run every text in its original order: (features (L+1, m, d), positions (m,),
    text index (m,)) over all m tokens of all texts."""
    hidden, slots, groups = [], [], []
    for index, text in enumerate(texts):
        if should_stop is not None and should_stop():
            raise Cancelled("the probe was cancelled")
        seq = engine.backend.tokenize(text)
        trace = engine.reference(seq, positions, should_stop)
        hidden.append(np.asarray(trace.hidden, dtype=np.float64))        # (L+1, n, d)
        slots.append(np.arange(len(seq), dtype=np.float64))
        groups.append(np.full(len(seq), index))
        tell(progress, index + 1, len(texts))
    return np.concatenate(hidden, axis=1), np.concatenate(slots), np.concatenate(groups)


def check_features(features) -> None:
    """Refuse features that are not of FEATURES, naming the argument as the user wrote it."""
    if features not in FEATURES:
        raise PosvizInputError(f"{argument('features')} must be one of "
                               f"{', '.join(FEATURES)} (got {features!r})")


def generated_texts(engine, features: str = "linear", folds: int = 5) -> list[str]:
    """Enough generated texts (GENERATED_TEXTS) for a probe of ``engine``'s hidden
    states with ``features``: PER_FEATURE tokens a feature, 2 texts a fold (check_folds)."""
    width = engine.reference(engine.backend.tokenize("w0 w1"), Positions()).hidden.shape[-1]
    needed = PER_FEATURE * width * (2 if features == "quadratic" else 1)
    texts, tokens, seed = [], 0, GENERATED_SEED
    while tokens < needed or len(texts) < 2 * folds:
        if tokens >= needed:              # the features have their texts: the rest, folds'
            check_folds(folds, max(len(texts), FOLDS), True)
        for text in random_texts(16, GENERATED_WORDS, seed, GENERATED_VOCABULARY):
            texts.append(text)
            tokens += len(engine.backend.tokenize(text))
            if tokens >= needed and len(texts) >= 2 * folds:
                break
        seed += 1
    return texts


def probe_work(runs, tokens: int, layers: int) -> tuple[list[float], list[str]]:
    """The work and kinds of the stages of probes of ``runs`` [(features, ...)], each
    of ``tokens`` through ``layers`` blocks: its forwards (token-layers), then its fits
    (a layer's fit grows with its features squared: quadratic ones are twice the width;
    an MLP's fits are a kind of their own)."""
    work, kinds = [], []
    for features, *_ in runs:
        work += [tokens * layers, tokens * (layers + 1) * (4 if features == "quadratic" else 1)]
        kinds += ["forwards", "mlp fits" if features == "mlp" else "fits"]
    return work, kinds


def probe(engine, texts=None, positions: Positions = Positions(), folds: int = 5,
          features: str = "linear", progress: Callable[[int, int], None] | None = None,
          should_stop: Callable[[], bool] | None = None,
          say: Callable[[str], None] | None = None) -> ProbeResult:
    """Per layer, the cross-validated ridge probe of absolute position; without
    ``texts`` (None or empty), on generated_texts. ``progress`` counts the texts run and
    then, from 0 again, each fold of each layer fitted (on a large model the fits take
    longer than the forwards); ``say`` is told each of the two Stages as it starts (so
    a listener counts the fits from the start: a bar went 54 of 54, then 55 of 59)."""
    check_features(features)
    generated = ""
    if not texts:
        texts = generated_texts(engine, features, folds)
        generated = GENERATED_TEXTS.format(words=GENERATED_WORDS,
                                           vocabulary=GENERATED_VOCABULARY)
    texts = list(texts)
    if len(texts) < 2:
        raise PosvizInputError(f"the probe holds texts out to score it, so it needs at "
                               f"least 2 texts (got {len(texts)})")
    folds = max(2, min(folds, len(texts)))
    work, kinds = probe_work([(features,)], sum(len(t.split()) for t in texts),
                             getattr(getattr(engine.backend, "config", None), "layers", 4))
    tell(say, Stage("running the texts", 1, 2, work, kinds=kinds))  # few words: a paper
    # check's line at 1024 px says "stage 4 of 8: probe 2 of 4 (…): " and how far too
    H, y, groups = hidden_states(engine, texts, positions, progress, should_stop)
    H = np.concatenate([H, H ** 2], axis=2) if features == "quadratic" else H  # (L+1, m, 2d)
    tell(say, Stage(f"fitting the probe per layer, {folds} folds each", 2, 2, work, kinds=kinds))
    fits = Tally(progress, H.shape[0] * folds)  # each fold's fit counted, from the start:
    rows = []                   # a layer's took 20 s untold, an MLP's layer 4-5 s
    for layer in range(H.shape[0]):
        if should_stop is not None and should_stop():
            raise Cancelled("the probe was cancelled")
        rows.append(ProbeLayer(layer, *score_layer(H[layer], y, groups, folds,
                                                   features == "mlp", fits.tick)))
    return ProbeResult(tuple(rows), len(texts), int(y.size), folds, features, H.shape[2],
                       generated)
