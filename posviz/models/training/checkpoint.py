"""A trained checkpoint of the built-in model: what it is, where the shipped ones are,
and which one a configuration asks for.

A checkpoint is a folder:

    config.json        {"format": "posviz-checkpoint", "version": 1, "config": the
                       ModelConfig, "vocab": V}
    model.safetensors  the weights, named as the model's state dict (float16 or float32)
    tokenizer.json     its byte-level BPE (models.training.bpe)
    training.json      the training record: corpus, recipe, steps, loss curve, held-out
                       perplexity, the training tokens' counts, time
    held-out.txt       the held-out sections of its corpus, one a paragraph

The shipped checkpoints (the zoo) are folders under resources/checkpoints/, one per
encoding, all of the same recipe. Weights are named by ``WEIGHTS``: "random" (drawn from
the seed), "trained" (the zoo's checkpoint of a configuration) or a checkpoint folder.
Reading a checkpoint's record imports no torch; ``load_weights`` does.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ...errors import PosvizInputError, argument
from ..config import ModelConfig
from ..encodings import KINDS

if TYPE_CHECKING:
    from .bpe import Tokenizer

FORMAT, VERSION = "posviz-checkpoint", 1
RANDOM, TRAINED = "random", "trained"
WEIGHTS_TIP = ("random: weights drawn from the seed (the symmetry argument holds for any "
               "weights); trained: the shipped checkpoint of this configuration, trained "
               "as a causal language model; or a checkpoint folder written by posviz train")
FILES = {"config": "config.json", "weights": "model.safetensors",
         "tokenizer": "tokenizer.json", "record": "training.json",
         "held_out": "held-out.txt"}
# What a checkpoint fixes; the rest (pe_scale, dtype) a user may still change.
ARCHITECTURE = ("layers", "heads", "d_model", "ff_width", "pe", "mask", "residual", "norm")
PACKAGE = Path(__file__).resolve().parents[2]            # posviz/
ZOO_FOLDERS = (PACKAGE / "resources" / "checkpoints",
               PACKAGE.parent / "resources" / "checkpoints")


@dataclass(frozen=True)
class Recipe:
    """How a checkpoint is trained, besides the model's configuration (whose seed
    draws the first weights and orders the windows). The defaults are the shipped
    checkpoints' recipe."""

    corpus: str = "kjv"            # models.training.corpus: "kjv" or a text file
    vocab: int = 2048              # BPE tokens, the end-of-text token included
    length: int = 128              # tokens a window predicts: the training length
    batch: int = 16                # windows a step
    steps: int = 4500
    lr: float = 3e-3               # AdamW's peak learning rate
    warmup: int = 100              # steps of linear warm-up, then a cosine decay to 10 %
    weight_decay: float = 0.1      # on matrices only (as nanoGPT)
    clip: float = 1.0              # the gradients' largest norm
    store: str = "float16"         # the stored weights: float16 or float32 (as trained)
    start: bool = True             # every window starts with a start-of-text token at
                                   #   slot 0 (the end-of-text token, as GPT-2's)
    init: str = ""                 # a checkpoint folder the first weights come from
                                   #   (its encoding may differ: DroPE), else the seed

    def problems(self) -> list[str]:
        whole = (("vocab", 300), ("length", 2), ("batch", 1), ("steps", 1), ("warmup", 0))
        found = [f"{argument(name)} must be a whole number of at least {low} (got "
                 f"{getattr(self, name)!r})" for name, low in whole
                 if isinstance(getattr(self, name), bool)
                 or not isinstance(getattr(self, name), int)]
        found += [f"{argument(name)} must be at least {low} (got {getattr(self, name)})"
                  for name, low in whole if not found and getattr(self, name) < low]
        if isinstance(self.lr, bool) or not isinstance(self.lr, (int, float)):
            found.append(f"{argument('lr')} must be a positive number (got {self.lr!r})")
        elif not self.lr > 0:
            found.append(f"{argument('lr')} must be positive (got {self.lr})")
        if self.store not in ("float32", "float16"):
            found.append(f"{argument('store')} must be float32 or float16 (got "
                         f"{self.store})")
        return found

    @classmethod
    def of(cls, record: dict) -> "Recipe":
        """The recipe a training record holds; a record written before windows began
        with a start token had none."""
        return cls(**{"start": False, **record.get("recipe", {})})


def plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def architecture(config: ModelConfig) -> tuple:
    return tuple(getattr(config, name) for name in ARCHITECTURE)


def label(config: ModelConfig) -> str:
    """A configuration in a few words: 'rope, causal, 4 layers × 4 heads, d 64'."""
    text = (f"{config.pe}, {config.mask}, {config.layers} layers × {config.heads} heads, "
            f"d {config.d_model}")
    default = ModelConfig()
    if config.ff_width != 4 * config.d_model:
        text += f", MLP {config.ff_width}"
    if config.norm != default.norm:
        text += f", norm {config.norm}"
    if not config.residual:
        text += ", no residuals"
    return text


@dataclass(frozen=True)
class Checkpoint:
    """One checkpoint folder, read and checked (no weights read yet)."""

    folder: Path
    config: ModelConfig
    vocab: int
    record: dict = field(default_factory=dict, compare=False, hash=False)

    @classmethod
    def read(cls, folder: str | Path) -> "Checkpoint":
        """The checkpoint in ``folder``; PosvizInputError (one line) if it is not one."""
        folder = Path(folder).expanduser()
        if not folder.is_dir():
            raise PosvizInputError(f"{folder}: no such checkpoint folder")
        missing = [name for name in FILES.values() if not (folder / name).is_file()]
        if missing:
            raise PosvizInputError(f"{folder} is not a posviz checkpoint (no {missing[0]})")
        try:
            head = json.loads((folder / FILES["config"]).read_text(encoding="utf-8"))
            record = json.loads((folder / FILES["record"]).read_text(encoding="utf-8"))
            if head.get("format") != FORMAT:
                raise ValueError(f"its config.json is not a {FORMAT}")
            if head.get("version", 0) > VERSION:
                raise ValueError("it was written by a newer posviz")
            config = ModelConfig(**head["config"]).validate()
            vocab = int(head["vocab"])
        except (ValueError, KeyError, TypeError) as error:
            raise PosvizInputError(f"{folder} is not a posviz checkpoint: {error}") from None
        return cls(folder, config, vocab, record)

    def matches(self, config: ModelConfig) -> bool:
        return architecture(self.config) == architecture(config)

    def config_for(self, config: ModelConfig) -> ModelConfig:
        """This checkpoint's configuration, with the choices a user keeps on trained
        weights taken from ``config``: the position scale and the precision."""
        return self.config.replace(pe_scale=config.pe_scale, dtype=config.dtype)

    def path(self, name: str) -> Path:
        return self.folder / FILES[name]

    @property
    def recipe(self) -> Recipe:
        return Recipe.of(self.record)

    @property
    def start_token(self) -> bool:
        """Was it trained with a start-of-text token at slot 0 (and so runs with one)?"""
        return self.recipe.start

    def tokenizer(self) -> "Tokenizer":
        from .bpe import Tokenizer
        return Tokenizer.read(self.path("tokenizer"))

    def held_out(self) -> list[str]:
        from .corpus import paragraphs
        return paragraphs(self.path("held_out").read_text(encoding="utf-8"))

    def summary(self) -> str:
        """The training record in a line: corpus, steps, held-out perplexity and the
        use of order (models.training.order_use) when measured."""
        r = self.record
        steps = plural(r.get("steps", 0), "step") + (" (interrupted)" if r.get("interrupted")
                                                     else "")
        text = f"trained {steps} on {r.get('data', {}).get('short', '?')}"
        if r.get("held_out_perplexity") is not None:
            text += (f" (held-out perplexity {r['held_out_perplexity']:.1f} at "
                     f"{r.get('recipe', {}).get('length', '?')} tokens")
            if r.get("order_use"):
                text += (f"; order use {r['order_use']['ratio']:.2f}: its last token's "
                         f"perplexity {r['order_use']['ratio']:.2f} × higher with the "
                         f"context shuffled")
            text += ")"
        return text

    def load_weights(self, model) -> None:
        """Copy the stored weights into ``model`` (built from this config and vocab)."""
        from safetensors.torch import load_file
        try:
            state = load_file(str(self.path("weights")))
            model.load_state_dict(state, strict=True)
        except (RuntimeError, OSError) as error:
            first = str(error).strip().splitlines()[0]
            raise PosvizInputError(f"{self.folder}: its weights do not fit its config "
                                   f"({first})") from None


def save(folder: str | Path, model, tokenizer: "Tokenizer", record: dict,
         held_out: list[str], store: str = "float32") -> Checkpoint:
    """Write ``model`` (an InstrumentedTransformer with a vocabulary) as a checkpoint,
    its weights stored as ``store`` ("float32" or "float16")."""
    import torch
    from safetensors.torch import save_file
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    dtype = getattr(torch, store)
    state = {name: tensor.detach().to(dtype).contiguous()
             for name, tensor in model.state_dict().items()}
    save_file(state, str(folder / FILES["weights"]), metadata={"format": "pt"})
    head = {"format": FORMAT, "version": VERSION, "config": model.cfg.to_dict(),
            "vocab": model.vocab}
    (folder / FILES["config"]).write_text(json.dumps(head, indent=1) + "\n")
    tokenizer.save(folder / FILES["tokenizer"])
    (folder / FILES["record"]).write_text(json.dumps(record, indent=1) + "\n")
    (folder / FILES["held_out"]).write_text("\n\n".join(held_out) + "\n", encoding="utf-8")
    return Checkpoint.read(folder)


def zoo_folder() -> Path | None:
    """The folder of the shipped checkpoints (installed, or beside the sources)."""
    return next((folder for folder in ZOO_FOLDERS if folder.is_dir()), None)


def _folders(folder: str | Path | None) -> list[Checkpoint]:
    root = Path(folder) if folder is not None else zoo_folder()
    if root is None or not root.is_dir():
        return []
    return [Checkpoint.read(sub) for sub in sorted(root.iterdir())
            if (sub / FILES["config"]).is_file()]


def zoo(folder: str | Path | None = None) -> list[Checkpoint]:
    """The shipped checkpoints trained from the seed, one per encoding, in the
    encodings' order (of ``folder`` instead when given). A checkpoint started from
    another's weights is a variant of that one, not a reference for its encoding."""
    found = [c for c in _folders(folder) if not c.recipe.init]
    return sorted(found, key=lambda c: (KINDS.index(c.config.pe), str(c.folder)))


def variant(name: str, folder: str | Path | None = None) -> Checkpoint | None:
    """The shipped checkpoint in the folder ``name`` that started from another's
    weights (DroPE's recalibrated RoPE), or None."""
    return next((c for c in _folders(folder)
                 if c.folder.name == name and c.recipe.init), None)


def find(weights: str, config: ModelConfig) -> Checkpoint:
    """The checkpoint ``weights`` names for ``config``: the zoo's one of the same
    architecture ("trained"), or the folder given. PosvizInputError in one line when
    there is none, listing the ones there are."""
    if weights != TRAINED:
        return Checkpoint.read(weights)
    shipped = zoo()
    for checkpoint in shipped:
        if checkpoint.matches(config):
            return checkpoint
    raise PosvizInputError(f"no trained checkpoint for {label(config)} (trained: "
                           f"{listing(shipped)})")


def listing(checkpoints: list[Checkpoint]) -> str:
    """What checkpoints there are, the encodings of each architecture together:
    'none, rope (causal, 4 layers × 4 heads, d 64)'."""
    groups: dict[str, list[str]] = {}
    for checkpoint in checkpoints:
        rest = label(checkpoint.config).split(", ", 1)[1]
        groups.setdefault(rest, []).append(checkpoint.config.pe)
    return "; ".join(f"{', '.join(kinds)} ({rest})" for rest, kinds in groups.items()) \
        or "none are installed"
