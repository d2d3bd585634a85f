"""Will a model and its runs fit in memory? Asked before anything is built or read.

The estimate counts what a comparison of two orders keeps (analysis.engine), not what a
framework might cache:

- the weights: the built-in model's per block 4 d² for the attention projections,
  2 d·d_ff for the MLP, the MLP bias d_ff and two LayerNorms (2·2d), plus the encoding's
  own (the learned position table max_len·d, T5's buckets); drawn in float64 and then
  cast, so building needs 8 bytes a weight for a moment, and keeps ``dtype`` bytes a
  weight;
- per run (the reference and the reordered one): hidden states, branch outputs and
  embeddings, (3L + 3)·n·d; a real model's branch outputs past
  models.maps.BRANCHES_WHOLE as their per-token norms only, 2L·n, and a causal one's
  keys and values for prefix reuse, 2L·n·(kv heads · head width);
- the reference's attention maps L·h·n², in memory up to models.maps.IN_MEMORY (the rest
  on disk), and the reordered run's aligned maps, kept whole up to models.maps.KEEP_ALL
  (else one head, n²);
- the layer being computed: a few times its h·n² maps (``LAYER_FACTOR``).

The limit is the memory the system calls available (MemAvailable in /proc/meminfo, or
psutil elsewhere) times ``SAFETY``: the window, Qt and the plots need their share. When
the available memory cannot be read, nothing is refused. ``POSVIZ_MEMORY`` (bytes, or a
size such as ``2G`` or ``500M``) caps the memory counted as available: a machine shared
with other work, or a container whose limit the system does not report.

Nothing here imports torch, so a configuration is checked before the model is built.
"""
from __future__ import annotations

from ...errors import PosvizInputError, Refused
from ..config import ModelConfig
from ..encodings import ENCODINGS

DTYPE_BYTES = {"float64": 8, "float32": 4, "float16": 2, "bfloat16": 2}
DRAW_BYTES = 8              # weights are drawn in float64, then cast to the model's dtype
# One layer's h·n² maps alive at once: the built-in model's scores (turned into weights in
# place), the reordered maps put back in order and the reference's read back from disk;
# transformers' eager attention holds two of its own at a time (scores and masked scores,
# then those and the weights), and a layer nobody takes whole is compared a head at a time
LAYER_FACTOR, HF_LAYER_FACTOR = 3, 3
SAFETY = 0.8                # share of the available memory one evaluation may take
MEMORY_VARIABLE = "POSVIZ_MEMORY"
UNITS = {"": 1, "K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12}


def weight_count(config: ModelConfig) -> int:
    """Number of weights of the built-in model with this configuration."""
    d, f = config.d_model, config.ff_width
    norms = 0 if config.norm == "none" else 2 * 2 * d
    per_block = 4 * d * d + 2 * d * f + f + norms
    encoding = ENCODINGS[config.pe].weight_count(d, config.heads, config.max_len)
    return config.layers * per_block + encoding


def comparison_bytes(layers: int, heads: int, width: int, n: int, item: int,
                     layer_factor: int = LAYER_FACTOR, real: bool = False,
                     kv_width: int = 0) -> int:
    """Bytes a comparison of two orders of n tokens keeps beside the weights (the module
    docstring), for values of ``item`` bytes; ``real`` for a Hugging Face model, whose
    keys and values (``kv_width`` a token) a causal run keeps."""
    from .. import maps  # imports numpy: not for listing or resolving models

    one_run = layers * heads * n * n * item               # one run's attention maps
    branches = 2 * layers * n * width * item
    if real and 2 * layers * n * width * 4 > maps.BRANCHES_WHOLE:
        branches = 2 * layers * n * item                  # their per-token norms
    past = 2 * layers * n * kv_width * item
    runs = 2 * ((layers + 3) * n * width * item + branches) + past
    in_memory = one_run if one_run <= maps.IN_MEMORY else 0      # else on disk
    kept = one_run if one_run <= maps.KEEP_ALL else n * n * item
    return runs + in_memory + kept + layer_factor * heads * n * n * item


def estimate_bytes(config: ModelConfig, n: int) -> int:
    """Peak bytes for building the model and evaluating one order of n tokens."""
    weights = weight_count(config)
    item = DTYPE_BYTES[config.dtype]
    running = weights * item + comparison_bytes(config.layers, config.heads,
                                                config.d_model, n, item)
    return max(weights * DRAW_BYTES, running)


def memory_cap() -> int | None:
    """The bytes ``POSVIZ_MEMORY`` allows ("2G", "500M", "1500000000"), or None when it
    is unset; a value that does not read raises PosvizInputError."""
    import os
    value = os.environ.get(MEMORY_VARIABLE, "").strip().upper().removesuffix("B")
    if not value:
        return None
    number, unit = value.rstrip("KMGT"), value[len(value.rstrip("KMGT")):]
    try:
        cap = float(number) * UNITS[unit]
    except (ValueError, KeyError):
        raise PosvizInputError(f"{MEMORY_VARIABLE}={os.environ[MEMORY_VARIABLE]!r} is not a "
                               f"size (write it as 2G, 500M or a number of bytes)") from None
    return int(cap)


def available_bytes() -> int | None:
    """Memory the system can give without swapping, at most ``POSVIZ_MEMORY``, or None
    when neither can be read."""
    cap, free = memory_cap(), system_available()
    return cap if free is None else free if cap is None else min(cap, free)


def system_available() -> int | None:
    """Memory the system can give without swapping, or None when it cannot be read."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024          # the value is in kB
    except (OSError, ValueError, IndexError):
        pass
    try:
        import psutil
    except ImportError:
        return None
    try:
        return int(psutil.virtual_memory().available)
    except Exception:                                        # noqa: BLE001 (any platform)
        return None


def free_with(held: int) -> int | None:
    """Memory free for a loaded model's own use: what the system can give and the
    ``held`` bytes of its weights, at most POSVIZ_MEMORY, which bounds the whole, the
    held weights included (under a 1 GB cap a loaded model was told 1.2 GB were free,
    800 MB before its load)."""
    free, cap = available_bytes(), memory_cap()
    if free is None:
        return None
    return free + held if cap is None else min(cap, free + held)


def limit_bytes() -> int | None:
    """The most one evaluation may take, or None when the free memory is unknown."""
    free = available_bytes()
    return None if free is None else int(free * SAFETY)


def size_text(count: int) -> str:
    """Bytes as a short readable size: '51.6 GB', '340 MB', '24,720,000 GB' (from 1,000
    GB on, whole and grouped: a refusal said '24720000.0 GB')."""
    if count >= 10**12:
        return f"{count / 1e9:,.0f} GB"
    if count >= 10**9:
        return f"{count / 1e9:.1f} GB"
    return f"{max(count / 1e6, 0.1):.1f} MB" if count < 10**8 else f"{count / 1e6:.0f} MB"


def check_fits(config: ModelConfig, n: int, extra: int = 0) -> None:
    """Raise errors.Refused when the model and its runs of n tokens (and ``extra`` bytes
    an experiment keeps beside them) would not fit."""
    limit = limit_bytes()
    if limit is None:
        return
    need = estimate_bytes(config, n) + extra
    if need > limit:
        raise Refused(
            f"this model needs about {size_text(need)} "
            f"{f'for {n:,} tokens' if n > 1 else 'even for a text of one token'}, but only "
            f"{size_text(limit)} are free ({SAFETY:.0%} of the available memory): "
            f"use a smaller width, fewer layers or a shorter text", "memory")


def check_run_fits(held: int, need: int, n: int) -> None:
    """Raise errors.Refused when a comparison of n tokens that needs ``need`` bytes on
    a pretrained model already loaded (its weights, ``held`` bytes, in memory and so no
    longer free) would not fit, as check_model_fits refuses it before the load: the
    weights and the runs against the share of the memory free and the weights' own."""
    free = free_with(held)
    if free is None:
        return
    limit = int(free * SAFETY)
    if held + need > limit:
        refuse_model(held, need, n, limit)


# -- real models ---------------------------------------------------------------------
# A real model is read as float32 (or the dtype asked for) whatever its checkpoint holds;
# a GGUF file is de-quantized, which takes up to 8 times its size (4-bit weights) in
# float32 when its header cannot be read.
GGUF_GROWTH = 8
INTEGER_DTYPES = {"I8", "I16", "I32", "I64", "U8", "U16", "U32", "U64", "BOOL"}  # buffers


def _safetensors_values(path) -> int | None:
    """The number of values in a safetensors file, from its header alone."""
    import json
    import math
    import struct
    try:
        with open(path, "rb") as file:
            size = struct.unpack("<Q", file.read(8))[0]
            if size > min(path.stat().st_size, 1 << 28):      # not a safetensors header
                return None
            header = json.loads(file.read(size))
        return sum(int(math.prod(entry["shape"])) for name, entry in header.items()
                   if name != "__metadata__" and entry["dtype"] not in INTEGER_DTYPES)
    except (OSError, ValueError, TypeError, KeyError, AttributeError, struct.error):
        return None


def checkpoint_weights(folder, gguf_file: str | None, config: dict | None) -> int:
    """Bytes the weights take once read as float32: counted from the GGUF or safetensors
    headers (floating-point tensors only: integer ones are buffers such as position
    ids), else from the files' sizes and the checkpoint's dtype."""
    from pathlib import Path

    from ..formats.gguf_header import gguf_values
    folder = Path(folder)
    if gguf_file:
        values = gguf_values(folder / gguf_file)
        return 4 * values if values is not None else \
            (folder / gguf_file).stat().st_size * GGUF_GROWTH
    files = sorted(folder.glob("*.safetensors"))
    if files:
        counts = [_safetensors_values(f) for f in files]
        if None not in counts:
            return 4 * sum(counts)
        return sum(f.stat().st_size for f in files) * 2
    stored = DTYPE_BYTES.get(str((config or {}).get("torch_dtype") or
                                  (config or {}).get("dtype") or "float32"), 4)
    return sum(f.stat().st_size for f in folder.glob("*.bin")) * 4 // stored


def _first(config: dict, *names, default=0) -> int:
    return next((int(config[n]) for n in names if isinstance(config.get(n), int)), default)


def forward_bytes(config: dict | None, n: int, item: int = 4) -> int:
    """Bytes a comparison of n tokens keeps beside a real model's weights (values of
    ``item`` bytes): comparison_bytes of the sizes its config.json gives."""
    config = config or {}
    L = _first(config, "num_hidden_layers", "n_layer", "num_layers", "n_layers", default=32)
    h = _first(config, "num_attention_heads", "n_head", "num_heads", "n_heads", default=32)
    d = _first(config, "hidden_size", "n_embd", "d_model", "dim", default=4096)
    kv = _first(config, "num_key_value_heads", default=h) * _first(config, "head_dim",
                                                                     default=d // max(h, 1))
    return comparison_bytes(L, h, d, n, item, HF_LAYER_FACTOR, real=True, kv_width=kv)


def check_model_fits(folder, gguf_file: str | None, config: dict | None, n: int,
                     dtype: str = "float32", offloaded: bool = False, extra: int = 0,
                     computes_in: str = "float32", held: bool = False) -> None:
    """Raise errors.Refused naming both sizes when a real model's weights (read as
    ``dtype``; none when accelerate places them, ``offloaded``, as the memory allows)
    and its forwards at n tokens (computed in ``computes_in``: float32 over
    half-precision weights, hf.precision) would not fit in the memory that is free.
    ``held``: the model is loaded, so its weights are no longer free: they count as
    its own, free for it, as before its load (the same input, the same words)."""
    if available_bytes() is None:
        return
    weights = 0 if offloaded else \
        checkpoint_weights(folder, gguf_file, config) * DTYPE_BYTES[dtype] // 4
    limit = int(free_with(weights if held else 0) * SAFETY)
    running = forward_bytes(config, max(n, 1), DTYPE_BYTES[computes_in]) + extra
    if weights + running > limit:
        refuse_model(weights, running, n, limit)


def refuse_model(weights: int, running: int, n: int, limit: int) -> None:
    """The refusal of a pretrained model whose weights and runs would not fit."""
    raise Refused(
        f"this model needs about {size_text(weights)} for its weights and "
        f"{size_text(running)} for one run with attentions at {n:,} tokens, but only "
        f"{size_text(limit)} are free ({SAFETY:.0%} of the available memory)", "memory")


def held_bytes(backend) -> int:
    """Bytes a loaded pretrained ``backend``'s weights take (0 when it does not say)."""
    try:
        return sum(p.numel() * p.element_size() for p in backend.model.parameters())
    except (AttributeError, TypeError):
        return 0


def run_bytes(backend, n: int) -> int:
    """Bytes a comparison of n tokens takes on a loaded ``backend`` beside its weights
    (0 for a backend that says neither its transformers config nor its ModelConfig)."""
    hf_config = getattr(getattr(backend, "model", None), "config", None)
    if hf_config is not None and hasattr(hf_config, "to_dict"):       # transformers'
        return forward_bytes(hf_config.to_dict(), n,
                             DTYPE_BYTES.get(getattr(backend, "dtype", "float32"), 4))
    c = getattr(backend, "config", None)
    if not isinstance(c, ModelConfig):
        return 0
    return comparison_bytes(c.layers, c.heads, c.d_model, n, DTYPE_BYTES[c.dtype])
