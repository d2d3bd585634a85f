"""The metadata at the head of a GGUF file, read without the gguf package.

gguf's GGUFReader parses every tensor's description too, slowly (benchmarks/README.md);
posviz needs only the architecture and three sizes before loading (which family,
how much memory), so it reads the key-value section and, for the weights' size, the
tensor descriptions after it. Layout: "GGUF", version (u32), tensor count (u64),
key-value count (u64), then each key (u64 length + UTF-8) with a u32 value type and the
value, then each tensor's name (u64 length + UTF-8), dimensions (u32), shape (u64 each),
type (u32) and offset (u64). Nothing here imports numpy or torch.
"""
from __future__ import annotations

import functools
import struct

# value type -> struct format of a scalar (8: string, 9: array, read apart)
SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
           10: "<Q", 11: "<q", 12: "<d"}
# GGUF architecture name -> transformers model_type, where they differ
MODEL_TYPES = {"gptneox": "gpt_neox"}
SIZES = {"block_count": "num_hidden_layers", "attention.head_count": "num_attention_heads",
         "embedding_length": "hidden_size", "attention.head_count_kv": "num_key_value_heads",
         "context_length": "max_position_embeddings"}


def _read(file, fmt: str):
    size = struct.calcsize(fmt)
    data = file.read(size)
    if len(data) != size:
        raise ValueError("the GGUF header ends early")
    return struct.unpack(fmt, data)[0]


def _string(file) -> str:
    return file.read(_read(file, "<Q")).decode("utf-8", "replace")


def _value(file, kind: int):
    if kind in SCALARS:
        return _read(file, SCALARS[kind])
    if kind == 8:
        return _string(file)
    if kind == 9:                                 # an array: skipped, not kept
        item, count = _read(file, "<I"), _read(file, "<Q")
        if item in SCALARS:
            file.seek(count * struct.calcsize(SCALARS[item]), 1)
        else:
            for _ in range(count):
                _value(file, item)
        return None
    raise ValueError(f"unknown GGUF value type {kind}")


def _metadata(file) -> tuple[int, dict]:
    """(tensor count, metadata) of an open GGUF file, left at its first tensor."""
    if file.read(4) != b"GGUF":
        raise ValueError("not a GGUF file")
    _read(file, "<I")                             # version
    tensors, meta = _read(file, "<Q"), {}
    for _ in range(_read(file, "<Q")):
        key = _string(file)
        meta[key] = _value(file, _read(file, "<I"))
    return tensors, meta


def gguf_values(path) -> int | None:
    """The number of values the file's tensors hold once de-quantized (a tied output
    embedding is stored once, as the model holds it); None when it is not readable."""
    header = _header(path)
    return None if header is None else header[1]


def _header(path) -> tuple[dict, int | None] | None:
    """(metadata, values of the tensors or None) of the GGUF file at ``path``, or None
    when it is not one; read once per version of the file (its size and modification
    time): a SmolLM2 load asked 12 times, each 40-60 ms of reading the vocabulary's
    strings (benchmarks/README.md)."""
    import os
    try:
        stat = os.stat(path)
        return _read_header(os.fspath(path), stat.st_size, stat.st_mtime_ns)
    except OSError:
        return None


@functools.lru_cache(maxsize=8)
def _read_header(path: str, size: int, modified: int) -> tuple[dict, int | None] | None:
    import io
    import math
    with open(path, "rb") as raw:
        file = io.BufferedReader(raw, 1 << 20)
        try:
            tensors, meta = _metadata(file)
        except (ValueError, struct.error):
            return None
        try:
            total = 0
            for _ in range(tensors):
                _string(file)
                dims = _read(file, "<I")
                total += math.prod(struct.unpack(f"<{dims}Q", file.read(8 * dims)))
                file.read(12)                     # type, offset
        except (ValueError, struct.error):
            total = None                          # the metadata whole, the rest cut
        return meta, total


def gguf_file_type(path) -> int | None:
    """llama.cpp's ``general.file_type``: the type most tensors are stored in (3: Q4_1),
    or None."""
    header = _header(path)
    value = None if header is None else header[0].get("general.file_type")
    return value if isinstance(value, int) else None


def gguf_config(path) -> dict:
    """{"model_type", "num_hidden_layers", "num_attention_heads", "hidden_size"} as far as
    the file's metadata tells them; {} when it is not a readable GGUF file."""
    header = _header(path)
    if header is None:
        return {}
    meta = header[0]
    arch = meta.get("general.architecture")
    if not isinstance(arch, str):
        return {}
    config = {"model_type": MODEL_TYPES.get(arch, arch)}
    for suffix, name in SIZES.items():
        if isinstance(meta.get(f"{arch}.{suffix}"), int):
            config[name] = meta[f"{arch}.{suffix}"]
    return config
