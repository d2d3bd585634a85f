"""Published claims about trained models, checked on the shipped checkpoints (the zoo:
the built-in model trained with each encoding on the same data, steps and seed).

``press2022`` measures held-out perplexity at the training length and beyond it;
``haviv2022`` probes the trained model without positions. Both read the zoo's
held-out text, which no checkpoint was trained on.
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ...errors import Cancelled, PosvizInputError
from ...models.training.checkpoint import TRAINED, Checkpoint, zoo, zoo_folder
from ...models.encodings import ENCODINGS, AlibiEncoding, NoPositions, SinusoidalEncoding
from .claim import PaperCheck
from .stage import Forwards, Stage, Staged, Tally, batches, forward_work

PRESS_TOKENS = 1 << 15           # held-out predictions per length: 64 windows at 4 × 128
PROBE_TEXTS = 120                # held-out passages the probe reads,
PROBE_WORDS = 0.375              # each of this many words a position of the training length


def shipped() -> list[Checkpoint]:
    """The zoo, checked to share one tokenizer, corpus and training length."""
    checkpoints = zoo()
    if not checkpoints:
        raise PosvizInputError("no trained checkpoints are installed (resources/"
                               "checkpoints); scripts/train-zoo trains them")
    first = checkpoints[0]
    tokens = first.path("tokenizer").read_bytes()
    for other in checkpoints[1:]:
        if (other.path("tokenizer").read_bytes() != tokens
                or other.record["recipe"] != first.record["recipe"]):
            raise PosvizInputError(f"the checkpoints in {first.folder.parent} were not "
                                   f"trained alike ({other.folder.name} differs)")
    return checkpoints


def described(checkpoints: list[Checkpoint]) -> str:
    """Which trained weights: the zoo's folder, its checkpoints and how they were made."""
    first = checkpoints[0]
    recipe = first.record["recipe"]
    return (f"the shipped trained checkpoints in {first.folder.parent.name}/ "
            f"({', '.join(c.folder.name for c in checkpoints)}): the built-in model "
            f"({first.config.layers} layers, width {first.config.d_model}), causal, trained "
            f"as a language model on {first.record['data']['short']} for "
            f"{recipe['steps']} steps of {recipe['length']}-token windows, seed "
            f"{first.config.seed}")


def description(checkpoint: Checkpoint) -> dict:
    """A checkpoint's model description, as its backend's describe() gives it."""
    config = checkpoint.config
    return {"model": "built-in", **config.to_dict(), "d_ff": config.ff_width,
            "weights": TRAINED}


def _backend(checkpoint: Checkpoint):
    from ...models.builtin.backend import BuiltinBackend
    return BuiltinBackend(checkpoint.config, str(checkpoint.folder))


def press2022(should_stop=None, progress: Callable[[int, int], None] | None = None,
              say: Callable[[str], None] | None = None) -> PaperCheck:
    """``say`` is told each checkpoint as its stage starts, ``progress(done, total)``
    each forward run of it (a batch of 8 windows at one length: under a second)."""
    from ...models.training.corpus import token_stream, unigram_perplexity
    from ...models.training.train import perplexity
    checkpoints = shipped()
    if say is not None:           # 1-11 s before the first length (at load 0.4 / 11)
        say(f"reading the held-out text and loading the {len(checkpoints)} checkpoints")
    first = checkpoints[0]
    length = first.record["recipe"]["length"]
    lengths = (length, 2 * length, 4 * length)
    tokenizer = first.tokenizer()
    ids = token_stream(tokenizer, first.held_out())                        # (M,)
    start_id = tokenizer.end_id if first.start_token else None
    count = min(PRESS_TOKENS, (len(ids) - 1) // lengths[-1] * lengths[-1])
    # the tokens predicted: every token from the first after a start token, else from the second
    predicted = ids[:count] if start_id is not None else ids[1:count + 1]
    unigram = unigram_perplexity(np.asarray(first.record["token_counts"]), predicted)
    models = {c.config.pe: _backend(c).model for c in checkpoints}
    table = {kind: {} for kind in models}  # {encoding: {str(length): perplexity or None}}
    limits = {}                            # {encoding: positions its table has}, if refused
    for checkpoint in checkpoints:
        kind = checkpoint.config.pe
        limit = models[kind].encoding.table_length(checkpoint.config.max_len)
        if limit is not None and limit < lengths[-1]:
            limits[kind] = limit
    notes = {kind: f"its learned table has {limit} positions: longer is refused"
             for kind, limit in limits.items()}

    def runs_at(kind: str, n: int) -> bool:    # not refused: its table is long enough
        return not (kind in limits and n > limits[kind])
    width = first.config.d_model
    # a stage is a checkpoint at every length it takes, a step a forward (a batch of 8
    # windows: a checkpoint at 512 tokens was one step of 5-9 s untold), each of the
    # work of its tokens. Staged by length, a longer length's token cost 1-2.5 × the
    # shortest's by machine and load, the time left late in the run 0.5-2 × the truth
    # (benchmarks/README.md); each checkpoint runs the lengths alike, so one's pace
    # times the next on any machine.
    runs = {kind: [n for n in lengths if runs_at(kind, n)] for kind in models}
    steps = {kind: [forward_work(8 * n, n, width) for n in runs[kind]
                    for _ in range(batches(count // n))] for kind in models}
    work = [sum(steps[kind]) for kind in models]
    for number, (kind, model) in enumerate(models.items(), start=1):
        if say is not None:
            say(Stage(f"held-out perplexity of the {kind} checkpoint at "
                      f"{listed(runs[kind])} tokens (checkpoint {number} of {len(models)})",
                      number, len(models), work, steps[kind]))
        tally, planned = Tally(progress, len(steps[kind])), 0
        for n in lengths:
            if should_stop is not None and should_stop():
                raise Cancelled()
            refused = not runs_at(kind, n)
            table[kind][str(n)] = None if refused else perplexity(
                Forwards(model, should_stop, tally), ids, n, count, start_id=start_id)
            planned += 0 if refused else batches(count // n)
            tally.to(planned)
    grows = {k: v[str(lengths[-1])] / v[str(length)] for k, v in table.items()
             if v[str(lengths[-1])] is not None}
    seeds = {seed: {kind: by_seed[seed]["perplexity_at"]
                    for kind, by_seed in zoo_seeds().get("encodings", {}).items()}
             for seed in map(str, zoo_seeds().get("seeds", []))}
    in_seeds = {seed: press_holds(by_kind, lengths) for seed, by_kind in seeds.items()}
    holds = press_holds(table, lengths) and all(in_seeds.values())
    values = {"train_length": length, "lengths": list(lengths), "tokens": count,
              "unigram_perplexity": unigram, "perplexity": table,
              "order_use": {c.config.pe: c.record.get("order_use", {}).get("ratio")
                            for c in checkpoints},
              "growth_at_4x": grows, "refused": notes, "table_length": limits,
              "seeds": seeds, "holds_in_each_seed": in_seeds}
    return PaperCheck(
        "press2022",
        "Press, Smith, Lewis (2022). Train short, test long: attention with linear biases "
        "enables input length extrapolation. ICLR.",
        "Language models trained at one length and evaluated on longer inputs "
        "(non-overlapping windows): sinusoidal, rotary and T5 positions give worse "
        "perplexity as the inputs grow past the training length, sinusoidal worst, and "
        "ALiBi does not; a 1.3B-parameter ALiBi model trained at 1024 tokens reaches at "
        "2048 the perplexity of a sinusoidal one trained at 2048.",
        f"Held-out perplexity of the shipped checkpoints (the built-in model, causal, "
        f"trained alike on {first.record['data']['short']}) on the same {count} held-out "
        f"tokens, cut into windows of {', '.join(map(str, lengths))} tokens, beside a "
        f"unigram model of the training tokens; beside them the same measure of the zoo "
        f"trained from each seed (seeds.json). Holds: ALiBi never rises more than 2 % "
        f"above its perplexity at the training length, and sinusoidal grows by more than "
        f"10 % at twice it, here and in every seed.",
        values, holds, weights=TRAINED, ran_on=described(checkpoints),
        models=tuple(map(description, checkpoints)),
        tests="The trained-model claim, at this small scale: ALiBi's perplexity stays "
              "flat past the training length while sinusoidal's grows.")


def listed(numbers) -> str:
    """"128, 256 and 512"."""
    words = [str(n) for n in numbers]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} and {words[-1]}"


def press_holds(table: dict, lengths) -> bool:
    """press2022's claim on one zoo's {encoding: {length: perplexity}}."""
    alibi, sinusoidal = table.get(AlibiEncoding.kind), table.get(SinusoidalEncoding.kind)
    first = str(lengths[0])
    return bool(alibi and sinusoidal
                and all(alibi[str(n)] <= 1.02 * alibi[first] for n in lengths)
                and sinusoidal[str(2 * lengths[0])] > 1.1 * sinusoidal[first])


def zoo_seeds() -> dict:
    """The zoo trained from every seed, measured alike (seeds.json beside the
    checkpoints, analysis.experiments.seeds), or {} when it is not there."""
    import json
    folder = zoo_folder()
    path = None if folder is None else folder / "seeds.json"
    return json.loads(path.read_text()) if path is not None and path.is_file() else {}


def probe_texts(checkpoint: Checkpoint) -> list[str]:
    """Up to PROBE_TEXTS held-out passages of equally many words, spread over the
    held-out text, each within the training length in tokens."""
    length = checkpoint.record["recipe"]["length"]
    size = max(round(PROBE_WORDS * length), 4)
    words = " ".join(checkpoint.held_out()).split()
    step = max(len(words) // PROBE_TEXTS, size)
    backend = _backend(checkpoint)
    texts = [" ".join(words[k:k + size]) for k in range(0, len(words) - size + 1, step)]
    return [t for t in texts if len(backend.tokenize(t)) <= length][:PROBE_TEXTS]


SEPARATES = 0.1     # R² by which the NoPE model's probe must beat the order-blind controls'
SCALE_NOTE = ("What this can say about the paper: a causal model without positions, 4 "
              "layers of width 64 ({params} parameters) trained on {tokens} tokens, can "
              "learn to use token order and to hold absolute position where a probe reads "
              "it; so the mechanism needs no scale. What it cannot say: how close the "
              "encodings' perplexities are, or how well a probe reads position, in the "
              "paper's models (125M to 1.3B parameters, trained on billions of tokens): "
              "both change with size and data.")


def controls() -> list[Checkpoint]:
    """The order-blind controls shipped beside the zoo (resources/checkpoints/controls/):
    a separate short run of the recipe (500 steps, its cosine decay over those) that
    ended before the use of order began."""
    folder = zoo_folder()
    return [] if folder is None else zoo(folder / "controls")


def haviv2022(should_stop=None, progress: Callable[[int, int], None] | None = None,
              say: Callable[[str], None] | None = None) -> PaperCheck:
    """``say`` is told each checkpoint's stages (its texts run, then its fits), and
    ``progress`` their steps."""
    from ..engine import Engine
    from .probe import probe, probe_work
    checkpoints = shipped()
    by_kind = {c.config.pe: c for c in checkpoints}
    if NoPositions.kind not in by_kind:
        raise PosvizInputError("haviv2022 needs the trained checkpoint without positions")
    blind = {f"{c.folder.name} (control)": c for c in controls()}
    models = {**by_kind, **blind}
    texts = probe_texts(by_kind[NoPositions.kind])
    features = ("linear", "mlp")
    runs: dict[str, dict] = {f: {} for f in features}
    layers = [c.config.layers for c in models.values()]
    work = [probe_work([(f,)], sum(len(t.split()) for t in texts), n)
            for n in layers for f in features]
    staged = Staged(say, [w for ws, _ in work for w in ws], [k for _, ks in work for k in ks])
    for k, (name, checkpoint) in enumerate(models.items()):
        engine = Engine(_backend(checkpoint))
        for feature in features:
            told = None if say is None else (
                lambda stage, name=name, k=k, feature=feature: staged(
                    f"probing {name} ({k + 1} of {len(models)}, {feature}): {stage}"))
            runs[feature][name] = probe(engine, texts, features=feature,
                                        should_stop=should_stop, progress=progress,
                                        say=told)
    best = {f: {name: max(row.r2 for row in r.layers[1:]) for name, r in by.items()}
            for f, by in runs.items()}
    uses = {name: c.record.get("order_use", {}).get("ratio") for name, c in models.items()}
    nope = NoPositions.kind
    separates = {f: bool(blind) and b[nope] > max(b[n] for n in blind) + SEPARATES
                 for f, b in best.items()}
    relative = [kind for kind, c in by_kind.items()
                if ENCODINGS[kind].acts in ("rotate", "bias")]
    values = {"order_use": uses,
              "perplexity": {name: c.record["held_out_perplexity"]
                             for name, c in models.items()},
              "best_r2_after_the_embeddings": best, "separates": separates,
              **{f: {name: [vars(row).copy() for row in r.layers] for name, r in by.items()}
                 for f, by in runs.items()}}
    holds = all(row.reads_position for row in runs["mlp"][nope].layers[1:])
    first = by_kind[NoPositions.kind]
    control_words = (f"the order-blind control{'s' if len(blind) > 1 else ''} "
                     f"({', '.join(blind)}: order use "
                     f"{', '.join(f'{uses[n]:.2f}' for n in blind)})" if blind
                     else "no order-blind control (none is installed)")
    return PaperCheck(
        "haviv2022",
        "Haviv, Ram, Press, Izsak, Levy (2022). Transformer language models without "
        "positional encodings still learn positional information. Findings of EMNLP.",
        "A causal language model trained without positional encodings reaches a "
        "perplexity close to models with positions, and a probe reads absolute position "
        "off its hidden states nearly as well as off theirs.",
        f"Probes of absolute position (hidden state -> position, held out by text), a "
        f"linear ridge regression and a small MLP, per layer, on {len(texts)} held-out "
        f"passages of {len(texts[0].split())} words, for each shipped checkpoint and "
        f"{control_words}; beside them each one's held-out perplexity and use of order "
        f"(the last token's perplexity with its context shuffled over in order). Holds: "
        f"the MLP probe of the model without positions beats chance (error below 0.9 × "
        f"the chance error) at every layer after the embeddings. Separates: its best R² "
        f"after the embeddings beats the order-blind control's by more than "
        f"{SEPARATES}. " + SCALE_NOTE.format(
            params=f"{first.record.get('parameters', 0) or _parameters(first):,}",
            tokens=f"{first.recipe.steps * first.recipe.batch * first.recipe.length:,}"),
        values, holds, weights=TRAINED, ran_on=described(checkpoints),
        models=tuple(map(description, checkpoints)),
        tests=f"The trained-model claim, at this small scale: the causal model trained "
              f"without positions (order use {uses[nope]:.2f}) holds absolute position "
              f"where a small MLP reads it after the embeddings (best R² "
              f"{best['mlp'][nope]:.2f}); the probes "
              f"{'tell' if separates['mlp'] else 'do not tell'} it from "
              f"{control_words.split(' (')[0]} (linear: {'yes' if separates['linear'] else 'no'}; "
              f"MLP: {'yes' if separates['mlp'] else 'no'}). A probe of absolute position "
              f"does not measure the use of order in general: "
              + (f"{', '.join(relative)} use order the most (order use "
                 f"{min(uses[k] for k in relative):.2f} or more) and hold almost no "
                 f"absolute position (best R² {max(best['mlp'][k] for k in relative):.2f} "
                 f"or less)." if relative else "no relative encoding was probed."))


def _parameters(checkpoint: Checkpoint) -> int:
    from safetensors import safe_open
    with safe_open(str(checkpoint.path("weights")), "np") as stored:
        return sum(int(np.prod(stored.get_slice(k).get_shape())) for k in stored.keys())
