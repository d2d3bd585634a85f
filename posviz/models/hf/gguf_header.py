"""The metadata at the head of a GGUF file, read without the gguf package.

gguf's GGUFReader parses every tensor's description too (about 2.6 s for SmolLM2's
file); posviz needs only the architecture and three sizes before loading (which family,
how much memory), so it reads the key-value section and stops there. Layout: "GGUF",
version (u32), tensor count (u64), key-value count (u64), then each key (u64 length +
UTF-8) with a u32 value type and the value. Nothing here imports numpy or torch.
"""
from __future__ import annotations

import struct

# value type -> struct format of a scalar (8: string, 9: array, read apart)
SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
           10: "<Q", 11: "<q", 12: "<d"}
# GGUF architecture name -> transformers model_type, where they differ
MODEL_TYPES = {"gptneox": "gpt_neox"}
SIZES = {"block_count": "num_hidden_layers", "attention.head_count": "num_attention_heads",
         "embedding_length": "hidden_size"}


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


def gguf_config(path) -> dict:
    """{"model_type", "num_hidden_layers", "num_attention_heads", "hidden_size"} as far as
    the file's metadata tells them; {} when it is not a readable GGUF file."""
    try:
        with open(path, "rb") as file:
            if file.read(4) != b"GGUF":
                return {}
            _read(file, "<I"), _read(file, "<Q")  # version, tensor count
            meta = {}
            for _ in range(_read(file, "<Q")):
                key = _string(file)
                meta[key] = _value(file, _read(file, "<I"))
    except (OSError, ValueError, struct.error):
        return {}
    arch = meta.get("general.architecture")
    if not isinstance(arch, str):
        return {}
    config = {"model_type": MODEL_TYPES.get(arch, arch)}
    for suffix, name in SIZES.items():
        if isinstance(meta.get(f"{arch}.{suffix}"), int):
            config[name] = meta[f"{arch}.{suffix}"]
    return config
