"""Will a built-in model and its recorded runs fit in memory? Asked before anything is built.

The estimate counts what posviz keeps, not what a framework might cache:

- the weights: per block 4 d² for the attention projections, 2 d·d_ff for the MLP, the
  MLP bias d_ff and two LayerNorms (2·2d), plus the encoding's own (the learned position
  table max_len·d, T5's buckets);
  they are drawn in float64 and then cast, so building needs 8 bytes a weight for a
  moment, and keeps ``dtype`` bytes a weight;
- one recorded forward (a Trace) at n tokens: hidden states (L+1)·n·d, attention
  weights and scores 2·L·h·n², the two branch outputs 2·L·n·d, times the dtype size;
- ``WORKING_FACTOR`` such Traces at once: the reference run's Trace is kept while the
  reordered run records its values (one Trace's worth of tensors) and stacks them into
  its own Trace (a second copy), and the comparison then aligns every attention map of
  the reordered run (about one more). The activations of the block being computed are
  small next to these.

The limit is the memory the system calls available (MemAvailable in /proc/meminfo, or
psutil elsewhere) times ``SAFETY``: the window, Qt and the plots need their share. When
the available memory cannot be read, nothing is refused.

Nothing here imports torch, so a configuration is checked before the model is built.
"""
from __future__ import annotations

from ..errors import PosvizInputError
from .config import ModelConfig
from .encodings import ENCODINGS

DTYPE_BYTES = {"float32": 4, "float64": 8}
DRAW_BYTES = 8              # weights are drawn in float64, then cast to the model's dtype
WORKING_FACTOR = 3          # Traces alive at the peak (see the module docstring)
SAFETY = 0.8                # share of the available memory one evaluation may take


def weight_count(config: ModelConfig) -> int:
    """Number of weights of the built-in model with this configuration."""
    d, f = config.d_model, config.ff_width
    norms = 0 if config.norm == "none" else 2 * 2 * d
    per_block = 4 * d * d + 2 * d * f + f + norms
    table = ENCODINGS[config.pe].weight_count(d, config.heads, config.max_len)
    return config.layers * per_block + table


def trace_bytes(config: ModelConfig, n: int) -> int:
    """Bytes of one recorded forward of n tokens."""
    L, h, d = config.layers, config.heads, config.d_model
    values = (L + 1) * n * d + 2 * L * h * n * n + 2 * L * n * d
    return values * DTYPE_BYTES[config.dtype]


def estimate_bytes(config: ModelConfig, n: int) -> int:
    """Peak bytes for building the model and evaluating one order of n tokens."""
    weights = weight_count(config)
    building = weights * DRAW_BYTES
    running = weights * DTYPE_BYTES[config.dtype] + WORKING_FACTOR * trace_bytes(config, n)
    return max(building, running)


def available_bytes() -> int | None:
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


def limit_bytes() -> int | None:
    """The most one evaluation may take, or None when the free memory is unknown."""
    free = available_bytes()
    return None if free is None else int(free * SAFETY)


def size_text(count: int) -> str:
    """Bytes as a short readable size: '51.6 GB', '340 MB'."""
    if count >= 10**9:
        return f"{count / 1e9:.1f} GB"
    return f"{max(count / 1e6, 0.1):.1f} MB" if count < 10**8 else f"{count / 1e6:.0f} MB"


def check_fits(config: ModelConfig, n: int) -> None:
    """Raise PosvizInputError when the model and its runs of n tokens would not fit."""
    limit = limit_bytes()
    if limit is None:
        return
    need = estimate_bytes(config, n)
    if need > limit:
        raise PosvizInputError(
            f"this model needs about {size_text(need)} for {n} tokens, but only "
            f"{size_text(limit)} are free ({SAFETY:.0%} of the available memory): "
            f"use a smaller width, fewer layers or a shorter text")


# -- real models ---------------------------------------------------------------------
# A real model is read as float32 whatever its checkpoint holds; a GGUF file is
# de-quantized, which takes up to 8 times its size (4-bit weights).
GGUF_GROWTH = 8
CHECKPOINT_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2,
                    "I8": 1, "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1}
_DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8}


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
                   if name != "__metadata__")
    except (OSError, ValueError, TypeError, KeyError, AttributeError, struct.error):
        return None


def checkpoint_weights(folder, gguf_file: str | None, config: dict | None) -> int:
    """Bytes the weights take once read as float32: counted from safetensors headers,
    else from the .bin files' sizes and the checkpoint's dtype, else the GGUF size."""
    from pathlib import Path
    folder = Path(folder)
    if gguf_file:
        return (folder / gguf_file).stat().st_size * GGUF_GROWTH
    files = sorted(folder.glob("*.safetensors"))
    if files:
        counts = [_safetensors_values(f) for f in files]
        if None not in counts:
            return 4 * sum(counts)
        return sum(f.stat().st_size for f in files) * 2
    stored = _DTYPE_BYTES.get(str((config or {}).get("torch_dtype") or
                                  (config or {}).get("dtype") or "float32"), 4)
    return sum(f.stat().st_size for f in folder.glob("*.bin")) * 4 // stored


def _first(config: dict, *names, default=0) -> int:
    return next((int(config[n]) for n in names if isinstance(config.get(n), int)), default)


def forward_bytes(config: dict | None, n: int) -> int:
    """Bytes of the recorded forwards of n tokens: one Trace holds attention L·h·n² and
    hidden states and branches (3L+1)·n·d in float32, and ``WORKING_FACTOR`` are alive
    at the peak (the original order's, the reordered one's recorded and stacked)."""
    config = config or {}
    L = _first(config, "num_hidden_layers", "n_layer", "num_layers", "n_layers", default=32)
    h = _first(config, "num_attention_heads", "n_head", "num_heads", "n_heads", default=32)
    d = _first(config, "hidden_size", "n_embd", "d_model", "dim", default=4096)
    per_trace = 4 * (L * h * n * n + (3 * L + 1) * n * d)
    return WORKING_FACTOR * per_trace


def check_model_fits(folder, gguf_file: str | None, config: dict | None, n: int) -> None:
    """Raise PosvizInputError naming both sizes when a real model's weights and its
    forwards at n tokens would not fit in the memory that is free."""
    limit = limit_bytes()
    if limit is None:
        return
    weights = checkpoint_weights(folder, gguf_file, config)
    running = forward_bytes(config, max(n, 1))
    if weights + running > limit:
        raise PosvizInputError(
            f"this model needs about {size_text(weights)} for its weights and "
            f"{size_text(running)} for one run with attentions at {n} tokens, but only "
            f"{size_text(limit)} are free ({SAFETY:.0%} of the available memory)")
