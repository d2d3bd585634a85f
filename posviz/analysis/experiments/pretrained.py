"""Sinha et al. 2022 on trained weights: does shifting every position id change what a
trained model predicts?

It runs on the shipped checkpoints with sinusoidal, learned and rotary positions (trained
alike) and on the bundled pretrained models: all-MiniLM-L6-v2 (learned absolute
positions; its output is the mean-pooled sentence embedding) and SmolLM2-135M-Instruct's
4-bit Q4_1 GGUF, de-quantized (RoPE; its output is the next-token distribution at every
slot).
"""
from __future__ import annotations


import re

import numpy as np

from ...errors import Cancelled, PosvizInputError
from ...models.training.checkpoint import TRAINED
from ...models.config import Positions
from ...models.encodings import ENCODINGS, LearnedEncoding, RotaryEncoding, SinusoidalEncoding
from ...models.request import Request
from .claim import PaperCheck
from .stage import Stage
from .texts import example_texts

SHIFT = 7
ZOO_KINDS = (SinusoidalEncoding.kind, LearnedEncoding.kind, RotaryEncoding.kind)
BUNDLED_MODELS = ("minilm", "smollm2")
BUNDLED_PARAMETERS = {"minilm": 22_565_376, "smollm2": 134_515_008}   # as loaded
TICKED = re.compile(r"(.+) \((\d+) s\)")    # a load's step told again each second
LENT = " on the window's loaded weights"    # a bundled model the window lent
CONVERTING = "converting"           # the kind of a stage whose load converts first
MOVED, STILL = 1e-3, 1e-6      # an output change above MOVED moved; below STILL it did not


def _outputs(backend, hidden):
    """(n, d) last hidden states -> (n, V) log-probabilities of the next token, or None
    for a model without a language-model head."""
    import torch

    from ...models.hf.precision import float32_arithmetic
    model = backend.model
    logits = getattr(model, "logits", None)
    if logits is None:
        if getattr(backend, "head", None) != "causal":
            return None
        from ...models.hf.heads import head_logits
        logits = lambda h: head_logits(model, backend.family, h)           # noqa: E731
    parameter = next(model.parameters())
    with torch.inference_mode(), float32_arithmetic(model):   # half weights: float32
        h = torch.as_tensor(np.asarray(hidden)).to(parameter.device, parameter.dtype)
        return logits(h).double().log_softmax(-1).cpu().numpy()


def shift_change(backend, texts, should_stop=None, progress=None) -> dict:
    """What a shift of every position id by SHIFT changes, over ``texts``: the last
    layer (norm-weighted relative change) and the output (next-token KL and top-token
    changes with a causal head, else 1 − cosine of the mean-pooled last layer);
    ``progress(done, total)`` after each text."""
    moved_sq = base_sq = 0.0
    kls, flips, pooled = [], [], []
    for done, text in enumerate(texts):
        if should_stop is not None and should_stop():
            raise Cancelled()
        seq = backend.tokenize(text)
        identity = np.arange(len(seq))
        runs = [backend.run(seq, Request(identity, Positions(offset=offset).ids(identity)),
                            should_stop) for offset in (0, SHIFT)]
        base, moved = (np.asarray(r.hidden[-1], np.float64) for r in runs)   # (n, d)
        moved_sq += float(((moved - base) ** 2).sum())
        base_sq += float((base ** 2).sum())
        a, b = base.mean(axis=0), moved.mean(axis=0)
        pooled.append(1 - float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))))
        log_p, log_q = (_outputs(backend, r.hidden[-1]) for r in runs)       # (n, V)
        if log_p is not None:
            kls.extend((np.exp(log_p) * (log_p - log_q)).sum(-1).tolist())
            flips.extend((log_p.argmax(-1) != log_q.argmax(-1)).tolist())
        if progress is not None:
            progress(done + 1, len(texts))
    row = {"last_layer_change": float(np.sqrt(moved_sq / base_sq)),
           "pooled_output_change": float(np.mean(pooled))}
    if kls:
        row.update(next_token_kl_mean=float(np.mean(kls)), next_token_kl_max=float(max(kls)),
                   top_token_changed=float(np.mean(flips)))
    return row


def shift_work(parameters: int, lent: bool = False) -> float:
    """A model's stage's work: its parameters to the power 0.7. Its stage's seconds (a
    bundled model's load, then 2 × 9 short forwards) grow slower than its parameters:
    0.17 / 4.3 / 11 s for 0.33 M (a trained checkpoint) / 22.6 M (MiniLM) / 134.5 M
    (SmolLM2) at load 1-3, 1.1 / 15 / 63 s at load 9 (1 : 25 : 65 and 1 : 14 : 57; to
    the power 0.7, 1 : 19 : 68). The square root (1 : 8.3 : 20) timed the big models at
    the checkpoints' pace: "about 5 s left" with 16 s to go. Declared by parameters,
    the checkpoints' stages were 0.6 % of the run: the bar read 0 % at stage 4 of 5.
    A bundled model whose weights the window ``lent`` is not loaded: a fifth less
    (SmolLM2's load of its converted copy was 1.1 s of its 6.3 s stage in a user's run).
    Measured: benchmarks/README.md, "Time left learned from the last run"."""
    return parameters ** 0.7 * (0.8 if lent else 1.0)


def output_change(row: dict) -> float:
    """The change of what the model outputs: next-token KL if it predicts, else pooled."""
    return row.get("next_token_kl_mean", row["pooled_output_change"])


def lends(backend) -> bool:
    """Can a check run on ``backend``'s weights: a twin of it, as it is shipped
    (float32, on the CPU)?"""
    return backend is not None and hasattr(backend, "twin") and \
        getattr(backend, "dtype", "float32") == "float32" and \
        str(getattr(backend, "device", "cpu")) == "cpu"


def lent_name(loaded: dict | None) -> str:
    """The bundled model of ``loaded`` {source: backend} a check of bundled models runs
    on, not loaded again; "" for none (its time before a run hangs on it: SmolLM2's load
    is part of it or not)."""
    return next((name for name, backend in (loaded or {}).items()
                 if name in BUNDLED_MODELS and lends(backend)), "")


def lent(loaded: dict | None, name: str):
    """A twin of the backend of bundled model ``name`` the window has loaded as it is
    shipped (float32, on the CPU), from ``loaded`` {source: backend}; else None."""
    backend = (loaded or {}).get(name)
    return backend.twin() if lends(backend) else None


def load_told(tell, name: str, left=None):
    """A load's ``progress`` (step, done, total) told as ``tell("loading NAME: step, 12
    of 272", own_left)``, ``own_left`` the conversion's seconds left the words tell
    (False: none): each new step, each tenth of a count, a step told again every 5 s (its
    seconds so far); SmolLM2's first load, its conversion, said only "loading smollm2"
    for 33 s. ``left``: the conversion's time left, told each step too (``told(step,
    done, total)``) and its ``words()`` (", about 40 s left of the conversion") added:
    its counts were told without it (runtime.conversion_left, given by the caller)."""
    last = ["", -1]

    def words() -> str:
        return left.words() if left is not None else ""

    def own(said: str):
        seconds = left.seconds() if said and left is not None else None
        return False if seconds is None else float(seconds)

    def told(step: str, done: int | None = None, total: int | None = None) -> None:
        if left is not None:
            left.told(step, done, total)
        ticked = TICKED.fullmatch(step)
        if ticked is not None:
            if int(ticked[2]) % 5 == 0:
                said = words()
                tell(f"loading {name}: {ticked[1]}, {ticked[2]} s so far{said}", own(said))
            return
        tenth = 10 * done // total if done is not None and total else -1
        if [step, tenth] == last or step == last[0] and tenth < 0:
            return
        last[:] = [step, tenth]
        said = words()
        tell(f"loading {name}: {step}" + (f", {done} of {total}" if tenth >= 0 else "")
             + said, own(said))
    return told


def sinha2022(should_stop=None, progress=None, say=None, loaded=None,
              load_left=None) -> PaperCheck:
    """``say`` is told each model as its stage starts (loading, then shifting), and
    ``progress(done, total)`` each text shifted; a bundled model in ``loaded``
    ({source: backend}, the window's) runs on its weights, not loaded again;
    ``load_left()``, a load's time left (load_told's ``left``), one for each load."""
    from ...models.hf import BUNDLED, converts, load_backend
    from .trained import _backend, description, shipped
    texts = example_texts()
    by_kind = {c.config.pe: c for c in shipped()}
    kinds = [kind for kind in ZOO_KINDS if kind in by_kind]
    count = len(kinds) + len(BUNDLED_MODELS)
    from .trained import _parameters
    parameters = [by_kind[kind].record.get("parameters", 0) or _parameters(by_kind[kind])
                  for kind in kinds] + [BUNDLED_PARAMETERS[n] for n in BUNDLED_MODELS]
    twins = {name: lent(loaded, name) for name in BUNDLED_MODELS}
    lends = [False] * len(kinds) + [twins[name] is not None for name in BUNDLED_MODELS]
    work = [shift_work(p, twin) for p, twin in zip(parameters, lends)]
    # a load that converts first is work of its own kind: untimed, the time left in
    # all waits for it (a fresh cache's run said "about 6 s left in all" with 27 s to go)
    stage_kinds = [""] * len(kinds) + [CONVERTING if twins[name] is None and converts(name)
                                 else "" for name in BUNDLED_MODELS]

    def stage(k: int, text: str, own_left=False, converting: bool = True) -> None:
        """Model k's stage; once its conversion is done (not ``converting``), the rest
        of it is of the checkpoints' kind (timed at their pace: it said "about 35-65 s
        left in all", the range of its runs elsewhere, with 5 s to go)."""
        if say is not None:
            kinds = stage_kinds if converting else [
                "" if n == k else kind for n, kind in enumerate(stage_kinds)]
            say(Stage(f"{text} (model {k + 1} of {count})", k + 1, count, work,
                      kinds=kinds, own_left=own_left))
    values, absolute, relative = {}, [], []
    models = [description(by_kind[kind]) for kind in kinds]
    for k, kind in enumerate(kinds):
        stage(k, f"shifting every position id of the trained {kind} checkpoint, "
                 f"{len(texts)} texts")
        values[f"trained {kind}"] = shift_change(_backend(by_kind[kind]), texts,
                                                 should_stop, progress)
        added = ENCODINGS[kind].acts == "absolute"           # to the embeddings, or inside
        (absolute if added else relative).append(f"trained {kind}")
    names = []
    for k, name in enumerate(BUNDLED_MODELS, start=len(kinds)):
        backend = twins[name]
        if backend is None:
            stage(k, f"loading {name}")
            left = load_left() if load_left is not None else None
            try:
                backend = load_backend(name, should_stop=should_stop,
                                       progress=load_told(
                                           lambda text, own: stage(
                                               k, text, own, left is None or not left.ended),
                                           name, left))
            except PosvizInputError:                  # not installed here: left out
                continue
        names.append(BUNDLED[name].label)
        models.append(backend.describe())
        whose = LENT if twins[name] is not None else ""
        stage(k, f"shifting every position id of {name}{whose}, {len(texts)} texts",
              converting=False)
        values[name] = shift_change(backend, texts, should_stop, progress)
        (relative if name == "smollm2" else absolute).append(name)
    holds = bool(absolute and relative
                 and all(output_change(values[k]) > MOVED for k in absolute)
                 and all(output_change(values[k]) < STILL
                         and not values[k].get("top_token_changed") for k in relative))
    values.update(shift=SHIFT, texts=len(texts), absolute=absolute, relative=relative)
    return PaperCheck(
        "sinha2022",
        "Sinha, Kazemnejad, Reddy, Pineau, Hupkes, Williams (2022). The curious case of "
        "absolute position embeddings. Findings of EMNLP.",
        "Shifting every position id by the same offset changes what a trained language "
        "model with absolute (learned or sinusoidal) positions predicts; relative schemes "
        "such as RoPE see only differences and are unchanged.",
        f"Every position id shifted by {SHIFT}, over the {len(texts)} example sentences: "
        f"the change of the last layer (norm-weighted) and of the output, the next-token "
        f"distribution at every slot (mean and largest KL, nats, and the share of slots "
        f"whose top token changes) where the model predicts, else 1 − cosine of the "
        f"mean-pooled last layer (MiniLM's sentence embedding).",
        values, holds, weights=TRAINED, models=tuple(models),
        ran_on="the shipped trained checkpoints with " + ", ".join(
            k for k in ZOO_KINDS if k in by_kind) + " positions (resources/checkpoints)"
               + (f" and the bundled pretrained {' and '.join(names)}" if names else ""),
        tests=f"The trained-model claim: the shift moves the output of every model with "
              f"absolute positions by more than {MOVED:g} ({', '.join(absolute)}), and "
              f"moves the RoPE models' ({', '.join(relative)}) by less than {STILL:g} "
              f"nats, no top token changed.")
