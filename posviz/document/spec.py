"""What a session holds besides its tokens: which model runs, and what the user looks at.

Both are plain, frozen values, so a session can be saved, compared and restored, and an
undo step can hold the one before.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from ..errors import PosvizInputError
from ..models.training.checkpoint import RANDOM, TRAINED, find
from ..models.config import ModelConfig
from ..models.options import PRETRAINED_DTYPES, pretrained_dtype_problem
from ..models.hf.cache import parse_hub_name

MOSAIC_MODES = ("difference", "original", "reordered")
DIFFERENCE_RANGES = (1.0, 0.3, 0.1, 0.03, 0.01)    # choices of the symmetric range ±r


def option_name(label: str) -> str:
    """An option's panel label in a sentence: "Encoding" -> "encoding"; a name with
    capitals inside ("MLP width", "LayerNorm") as it is."""
    return label if any(c.isupper() for c in label[1:]) else label.lower()


@dataclass(frozen=True)
class ModelSpec:
    """Which model runs: the built-in transformer with a config and its weights, or a
    pretrained model.

    ``weights`` of the built-in model (models.training.checkpoint): "random" (drawn from the
    config's seed), "trained" (the shipped checkpoint of the config's architecture) or
    a checkpoint folder; with trained weights the config is the checkpoint's (only its
    position scale and precision are the user's). ``source`` of a pretrained model is a
    bundled name ("minilm"), a folder, a .gguf file or a hub name
    ("EleutherAI/pythia-70m"); ``revision`` pins a hub name to a branch, tag or commit
    ("" is its default branch). ``address`` is what ``posviz.models.hf.load_backend``
    takes; ``dtype`` and ``offload_folder`` are how it loads one (hf.load_backend's).
    """

    config: ModelConfig | None = ModelConfig()     # the built-in model's, or None
    source: str = ""                                # a pretrained model's
    label: str = field(default="", compare=False)   # what a menu shows for it
    revision: str = ""                              # a hub name's branch, tag or commit
    weights: str = RANDOM                           # the built-in model's
    dtype: str = "float32"                          # what a pretrained model is read as
    offload_folder: str = ""                        # its layers placed by accelerate,
                                                    # spilling to this folder ("": none)

    @classmethod
    def builtin(cls, config: ModelConfig | None = None,
                weights: str = RANDOM) -> "ModelSpec":
        """The built-in model; with trained weights, PosvizInputError (one line, naming
        the checkpoints there are) when there is no checkpoint for ``config``."""
        config = config or ModelConfig()
        if weights != RANDOM:
            checkpoint = find(weights, config)
            config = checkpoint.config_for(config)
            weights = TRAINED if weights == TRAINED else str(checkpoint.folder.resolve())
        return cls(config=config, weights=weights)

    @property
    def trained(self) -> bool:
        return self.is_builtin and self.weights != RANDOM

    @classmethod
    def pretrained(cls, source: str, label: str = "", revision: str = "",
                   dtype: str = "float32", offload_folder: str = "") -> "ModelSpec":
        """A pretrained model; a hub name written NAME@REVISION is split in two.
        PosvizInputError for a dtype other than float32, bfloat16 or float16."""
        problem = pretrained_dtype_problem(dtype)
        if problem:
            raise PosvizInputError(problem)
        source = source.strip()
        name = parse_hub_name(source) if not revision else None
        if name is not None and name.revision and not Path(source).expanduser().exists():
            source, revision = name.repo, name.revision
        return cls(config=None, source=source, label=label or source, revision=revision,
                   dtype=dtype, offload_folder=offload_folder)

    @property
    def address(self) -> str:
        """What loads the model: its source, with ``@revision`` when pinned."""
        return f"{self.source}@{self.revision}" if self.revision else self.source

    def pinned(self, revision: str) -> "ModelSpec":
        """The same model at this revision (the commit a hub model was loaded from)."""
        return self if self.is_builtin or not revision else replace(self, revision=revision)

    @property
    def is_builtin(self) -> bool:
        return self.config is not None

    @property
    def name(self) -> str:
        if self.is_builtin:
            return "built-in (trained)" if self.trained else "built-in"
        return self.label or self.source

    def changes_from(self, other: "ModelSpec") -> list[str]:
        """What differs from ``other``, named as the model panel names it: the built-in
        model's options ("encoding", "mask", …) and "weights"; else "model"."""
        if self == other:
            return []
        if not (self.is_builtin and other.is_builtin):
            return ["model"]
        from ..models.options import OPTIONS
        names = [option_name(OPTIONS[key].label) for key in OPTIONS
                 if hasattr(self.config, key)
                 and getattr(self.config, key) != getattr(other.config, key)]
        return names + ["weights"] * (self.weights != other.weights) or ["model"]

    @property
    def headline(self) -> str:
        """The model in one line for a figure's subtitle: the built-in one's encoding,
        mask and weights, or a pretrained one's name: "smollm2 (pretrained)", and one
        parenthesis for a labelled one, "all-MiniLM-L6-v2 (bundled, pretrained)"."""
        if not self.is_builtin:
            name = self.name
            if name.endswith(")") and "(" in name:
                return f"{name[:-1]}, pretrained)"
            return f"{name} (pretrained)"
        from ..models.encodings import ENCODINGS
        weights = "trained" if self.trained else "random"
        return ", ".join([f"built-in model: {ENCODINGS[self.config.pe].short}",
                          f"{self.config.mask} mask", f"{weights} weights",
                          *unusual(self.config)])

    def headline_of(self, backend=None) -> str:
        """The headline, with a pretrained model's encoding, mask and weights read from
        its loaded ``backend`` (its facts), as the built-in one's names them: "all-MiniLM-
        L6-v2 (bundled): learned absolute, bidirectional mask, pretrained weights" (a
        swap map's subtitle named only the model; the weights say "pretrained", once)."""
        if self.is_builtin or backend is None:
            return self.headline
        from ..models.encodings import ENCODINGS
        facts = backend.facts()
        encoding = ENCODINGS.get(facts.scheme)
        weights = "pretrained weights" + (f" ({facts.weights})" if facts.weights else "")
        return f"{self.name}: " + ", ".join([
            encoding.short if encoding is not None else facts.scheme, f"{facts.mask} mask",
            weights, *([facts.dtype] if facts.dtype != "float32" else [])])

    def load(self, progress=None, device: str = "cpu", should_stop=None,
             n_tokens: int = 0, online: bool = False, ask_above: int | None = None,
             check_memory: bool = True, **placement):
        """The backend this spec names: the built-in model built, or a pretrained one
        loaded (models.hf.load_backend); torch is imported here.

        The memory a model and a run of ``n_tokens`` need is checked first (unless not
        ``check_memory``: the user asked for it anyway). A hub name
        not in the local cache is downloaded only when ``online`` (and, above
        ``ask_above`` bytes, only after hf.LargeDownload has said how much). A
        pretrained load tells its steps, and how many bytes or tensors of how many are
        done, to ``progress`` (a one-argument callback is told the steps only); once
        ``should_stop()`` is True it stops between two chunks or tensors, frees what it
        read and raises errors.Cancelled (and its progress is no longer told).
        ``placement`` (dtype, offload_folder, max_memory) goes to hf.load_backend."""
        if self.is_builtin:
            from ..models.builtin.backend import BuiltinBackend
            from ..models.limits.memory import check_fits
            config = self.config.validate()
            if check_memory:
                check_fits(config, n_tokens)           # before a byte is allocated
            return BuiltinBackend(self.config, self.weights)
        try:
            from ..models import hf
        except ImportError:
            raise PosvizInputError("real models are not available in this "
                                   "installation") from None
        tell = hf.teller(progress)

        def told(step: str, done: int | None = None, total: int | None = None):
            """``tell``'s answer passed on: False, a count kept back (reached.Ticks)."""
            if not (should_stop is not None and should_stop()):
                return tell(step, done, total)
            return None
        placement = {"dtype": self.dtype, "offload_folder": self.offload_folder or None,
                     **placement}
        return hf.load_backend(self.address, progress=told, device=device,
                               should_stop=should_stop, n_tokens=n_tokens, online=online,
                               ask_above=ask_above, check_memory=check_memory,
                               **placement)

    def check_memory(self, n_tokens: int) -> None:
        """The guard (models.limits.guard) for this model and a comparison of ``n_tokens``:
        errors.Refused when they would not fit in memory (or exceed the model's
        positions); nothing is built, read or imported beyond the checkpoint's
        headers."""
        from ..models.limits import guard
        guard.check(self.config if self.is_builtin else self.address, n_tokens,
                    dtype=self.dtype, offloaded=bool(self.offload_folder))

    def to_dict(self) -> dict:
        if self.is_builtin:
            model = {"kind": "builtin", "config": self.config.to_dict()}
            return model if self.weights == RANDOM else {**model, "weights": self.weights}
        model = {"kind": "pretrained", "source": self.source, "label": self.label}
        if self.revision:
            model["revision"] = self.revision
        if self.dtype != "float32":
            model["dtype"] = self.dtype
        if self.offload_folder:
            model["offload_folder"] = self.offload_folder
        return model


@dataclass(frozen=True)
class Selection:
    """What the plots show of an evaluation: a layer (1..L), a head (0..h-1), what the
    mosaic's tiles hold, the colour range of difference maps, and the open tab."""

    layer: int = 1
    head: int = 0
    mosaic: str = "difference"
    difference_range: float = 0.3
    tab: int = 0

    def replace(self, **changes) -> "Selection":
        return replace(self, **changes)

    def clamped(self, layers: int, heads: int) -> "Selection":
        """The same selection with layer and head inside a model of this size."""
        return replace(self, layer=min(max(self.layer, 1), max(layers, 1)),
                       head=min(max(self.head, 0), max(heads - 1, 0)))


def unusual(config) -> list[str]:
    """The built-in model's settings that differ from the defaults and change what it
    computes, in words ("no residual connections", "no LayerNorm", "8 layers"): a
    probe's subtitle left out residuals off, which was why it fell to chance (a user's run)."""
    from ..models.options import OPTIONS
    words = {"layers": "{} layers", "heads": "{} heads", "d_model": "width {}",
             "d_ff": "MLP width {}", "pe_scale": "position scale {:g}",
             "residual": "no residual connections", "norm": "{}-LN"}
    value = {**{key: getattr(config, key) for key in words}, "d_ff": config.ff_width}
    usual = {**{key: OPTIONS[key].default for key in words}, "d_ff": 4 * config.d_model}
    said = [words[key].format(value[key]) for key in words if value[key] != usual[key]]
    return [("no LayerNorm" if word == "none-LN" else word) for word in said]
