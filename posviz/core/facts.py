"""What a model is: its family, positional scheme and sizes, read from its configuration.

``model_facts(backend)`` works for the built-in transformer and for a Hugging Face model
(read from ``backend.model.config`` and the backend's attributes, with fallbacks for a
backend that lacks them). ``ModelViews`` bundles, for one evaluation, what the figures
and the model panel show of the model itself: its facts, its own positional machinery
(core.hf.machinery) and what it predicts after each order (core.predictions); the first
two are computed once per model. torch is imported only when a model is described.
"""
from __future__ import annotations

import threading
import weakref
from dataclasses import asdict, dataclass

__all__ = ["ModelFacts", "ModelViews", "model_facts", "model_views",
           "FAMILY_OF", "SCHEME_TITLES"]

# transformers' model_type -> posviz's family name (core.hf.sources.FAMILIES' values)
FAMILY_OF = {
    "bert": "bert", "roberta": "roberta", "xlm-roberta": "roberta", "camembert": "roberta",
    "distilbert": "distilbert", "gpt2": "gpt2", "opt": "opt", "gpt_neox": "gpt_neox",
    "llama": "llama", "mistral": "llama", "qwen2": "llama", "phi3": "llama",
    "gemma": "llama", "gemma2": "llama", "bloom": "bloom", "t5": "t5",
    "modernbert": "modernbert",
}
CAUSAL_FAMILIES = {"gpt2", "opt", "gpt_neox", "llama", "bloom"}
SCHEME_TITLES = {"learned": "learned absolute", "learned+offset": "learned absolute, offset",
                 "rope": "RoPE", "alibi": "ALiBi", "relative": "T5 relative buckets",
                 "sinusoidal": "sinusoidal", "none": "none (NoPE)"}
BUILTIN_SCHEME = {"t5": "relative"}     # the built-in's kind -> the scheme's name


@dataclass(frozen=True)
class ModelFacts:
    """A model's architecture as its configuration states it."""

    model: str
    family: str                      # "built-in" or a key of FAMILY_OF's values
    model_type: str                  # transformers' model_type ("built-in" for ours)
    scheme: str                      # a key of SCHEME_TITLES
    layers: int                      # L
    heads: int                       # h
    kv_heads: int                    # key-value heads (grouped-query attention: < h)
    width: int                       # d
    max_positions: int | None        # None: no table bounds the positions
    mask: str                        # "causal" or "bidirectional"
    parameters: int
    dtype: str
    device: str
    head: str | None = None          # "causal" / "masked" language-model head, or None
    position_offset: int = 0         # learned table rows before position 0
    rope_base: float | None = None   # θ of RoPE (the global layers' for ModernBERT)
    rotary_fraction: float | None = None   # share of each head's dimensions rotated
    local_rope_base: float | None = None   # ModernBERT's sliding-window layers
    relative_buckets: int | None = None    # T5
    relative_max_distance: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)

    def scheme_text(self) -> str:
        """The positional scheme in a few words, with its parameters."""
        if self.scheme == "learned+offset":
            return f"learned absolute, offset {self.position_offset}"
        if self.scheme == "rope":
            text = "RoPE"
            if self.rope_base is not None:
                text += f", θ = {self.rope_base:g}"
            if self.local_rope_base is not None:
                text += f" (local layers {self.local_rope_base:g})"
            if self.rotary_fraction is not None and self.rotary_fraction < 1:
                text += f", rotary on {self.rotary_fraction:.0%} of each head"
            return text
        if self.scheme == "relative" and self.relative_buckets:
            return (f"T5 relative buckets ({self.relative_buckets} buckets, "
                    f"max distance {self.relative_max_distance})")
        return SCHEME_TITLES.get(self.scheme, self.scheme)

    def rows(self) -> list[tuple[str, str]]:
        """(label, value) pairs for a compact table."""
        heads = f"{self.heads}" if self.kv_heads == self.heads else \
            f"{self.heads} ({self.kv_heads} key-value)"
        family = self.family if self.model_type in (self.family, "built-in") else \
            f"{self.family} ({self.model_type})"
        rows = [("Family", family), ("Positions", self.scheme_text()),
                ("Layers × heads", f"{self.layers} × {heads}"), ("Width d", str(self.width)),
                ("Max positions", "unbounded" if self.max_positions is None
                 else str(self.max_positions)),
                ("Mask", self.mask), ("Parameters", _count(self.parameters)),
                ("Weights", f"{self.dtype} on {self.device}")]
        if self.head:
            rows.insert(1, ("Head", f"{self.head} language model"))
        return rows


def _count(n: int) -> str:
    for size, unit in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            return f"{n / size:.3g}{unit}"
    return str(n)


def _first(cfg, *names, default=None):
    for name in names:
        value = getattr(cfg, name, None)
        if value is not None:
            return value
    return default


def _weights(model) -> tuple[int, str, str]:
    """(parameter count, dtype, device) of a torch module (shared tensors once)."""
    count, dtype, device = 0, "float32", "cpu"
    for k, p in enumerate(model.parameters()):
        if k == 0:
            dtype, device = str(p.dtype).replace("torch.", ""), str(p.device)
        count += p.numel()
    return count, dtype, device


def rope_parameters(cfg, layer_type: str | None = None) -> dict:
    """The RoPE settings of a configuration, whichever way transformers stores them."""
    params = getattr(cfg, "rope_parameters", None) or {}
    if layer_type is not None and isinstance(params.get(layer_type), dict):
        params = params[layer_type]
    elif params and all(isinstance(v, dict) for v in params.values()):
        params = next(iter(params.values()))
    theta = params.get("rope_theta", _first(cfg, "rope_theta", "rotary_emb_base"))
    fraction = params.get("partial_rotary_factor",
                          _first(cfg, "partial_rotary_factor", "rotary_pct", default=1.0))
    return {"rope_theta": theta, "partial_rotary_factor": fraction}


def _builtin_facts(backend) -> ModelFacts:
    c = backend.config
    count, _, device = _weights(backend.model)
    return ModelFacts(
        model="built-in", family="built-in", model_type="built-in", scheme=BUILTIN_SCHEME.get(c.pe, c.pe),
        layers=c.layers, heads=c.heads, kv_heads=c.heads, width=c.d_model,
        max_positions=backend.max_positions, mask=c.mask, parameters=count,
        dtype=c.dtype, device=device,
        rope_base=10000.0 if c.pe == "rope" else None,
        rotary_fraction=1.0 if c.pe == "rope" else None,
        relative_buckets=32 if c.pe == "t5" else None,
        relative_max_distance=128 if c.pe == "t5" else None)


def _scheme(backend, cfg, family: str) -> tuple[str, int]:
    """(scheme, position offset) of a Hugging Face model."""
    encoding = getattr(backend, "position_encoding", None)
    offset = getattr(backend, "position_offset", None)
    if family in ("llama", "gpt_neox", "modernbert"):
        encoding = "rope"
    elif family == "bloom":
        encoding = "alibi"
    elif family == "t5":
        encoding = "relative"
    elif family == "distilbert" and getattr(cfg, "sinusoidal_pos_embds", False):
        encoding = "sinusoidal"
    encoding = encoding or "learned"
    if offset is None:
        offset = 2 if family == "opt" else \
            (int(cfg.pad_token_id) + 1 if family == "roberta" else 0)
    if encoding == "learned" and offset:
        return "learned+offset", int(offset)
    return encoding, int(offset)


def model_facts(backend) -> ModelFacts:
    """The facts of a BuiltinBackend or an HFBackend (read from its configuration)."""
    if getattr(backend, "name", None) == "built-in" or \
            not hasattr(getattr(backend, "model", None), "config"):
        return _builtin_facts(backend)
    from .predictions import head_kind
    model = getattr(backend, "model")
    cfg = model.config
    family = FAMILY_OF.get(cfg.model_type) or getattr(backend, "family", None) or \
        cfg.model_type
    scheme, offset = _scheme(backend, cfg, family)
    heads = int(_first(cfg, "num_attention_heads", "n_head", "num_heads", "n_heads"))
    width = int(_first(cfg, "hidden_size", "n_embd", "d_model", "dim"))
    count, dtype, device = _weights(model)
    mask = getattr(backend, "mask", None) if getattr(backend, "family", None) == family \
        else None
    mask = mask or ("causal" if family in CAUSAL_FAMILIES else "bidirectional")
    max_positions = _first(cfg, "max_position_embeddings", "n_positions")
    if scheme in ("alibi", "relative"):
        max_positions = None
    extra = {}
    if scheme == "rope":
        rope = rope_parameters(cfg, "full_attention" if family == "modernbert" else None)
        extra["rope_base"] = float(rope["rope_theta"] or 10000.0)
        extra["rotary_fraction"] = float(rope["partial_rotary_factor"] or 1.0)
        if family == "modernbert":
            extra["local_rope_base"] = float(
                rope_parameters(cfg, "sliding_attention")["rope_theta"] or 10000.0)
    elif scheme == "relative":
        extra["relative_buckets"] = int(cfg.relative_attention_num_buckets)
        extra["relative_max_distance"] = int(
            getattr(cfg, "relative_attention_max_distance", 128))
    return ModelFacts(
        model=str(getattr(backend, "name", cfg.model_type)), family=family,
        model_type=str(cfg.model_type), scheme=scheme,
        layers=int(_first(cfg, "num_hidden_layers", "n_layer", "num_layers", "n_layers")),
        heads=heads, kv_heads=int(_first(cfg, "num_key_value_heads", default=heads)),
        width=width, max_positions=None if max_positions is None else int(max_positions),
        mask=mask, parameters=count, dtype=dtype,
        device=str(getattr(backend, "device", None) or device),
        head=getattr(backend, "head", None) or head_kind(model), position_offset=offset, **extra)


# -- what the figures show of the model itself ----------------------------------------


@dataclass(frozen=True, eq=False)
class ModelViews:
    """What the model panel and the Positions and Outputs figures show of the model."""

    facts: ModelFacts | None
    machinery: object | None         # core.hf.machinery.Machinery (real models), or None
    outputs: object | None           # core.predictions.Outputs, or None


class _Weak:
    """A value computed once per object, held while the object lives."""

    def __init__(self, size: int = 8):
        self._items: list[tuple[weakref.ref, object]] = []
        self._size = size
        self._lock = threading.Lock()

    def get(self, key):
        with self._lock:
            return next((v for r, v in self._items if r() is key), None)

    def put(self, key, value) -> None:
        try:
            weakref.ref(key)
        except TypeError:             # an object that cannot be held weakly: not kept
            return
        with self._lock:
            alive = [(r, v) for r, v in self._items if r() is not None and r() is not key]
            self._items = alive[-(self._size - 1):] + [(weakref.ref(key), value)]


_per_model = _Weak(4)


def _about_model(backend) -> tuple:
    """(facts, machinery) of a backend, computed once per backend."""
    known = _per_model.get(backend)
    if known is None:
        try:
            facts = model_facts(backend)
        except Exception:             # a model posviz cannot describe still runs
            facts = None
        machinery = None
        if getattr(backend, "name", None) != "built-in" and \
                hasattr(getattr(backend, "model", None), "config"):
            from .hf.machinery import machinery_of
            try:
                machinery = machinery_of(backend)
            except Exception as error:     # an unfamiliar layout: say so in the figures
                from .hf.machinery import Machinery
                machinery = Machinery.unreadable(str(error).splitlines()[0][:200])
        known = (facts, machinery)
        _per_model.put(backend, known)
    return known


def model_views(backend, ev, should_stop=None) -> ModelViews:
    """The model's facts, machinery and predictions for the evaluation ``ev`` (the
    first two computed once per model); the worker puts them in the views.Shown."""
    facts, machinery = _about_model(backend)
    from .predictions import compare_outputs
    try:
        outputs = compare_outputs(backend, ev)
    except Exception as error:       # the figures still show; the panel says why
        from .predictions import Outputs
        outputs = Outputs("error", float("nan"), note=f"posviz could not read this "
                          f"model's predictions: {str(error).splitlines()[0][:200]}")
    return ModelViews(facts, machinery, outputs)
