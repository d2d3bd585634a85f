"""Real pretrained models from Hugging Face, offline, behind the Backend interface.

Three families are read: BERT-like encoders (learned absolute positions, bidirectional),
GPT-2 (learned absolute positions, causal) and Llama-like decoders (RoPE, causal,
grouped-query attention). A model comes from a local folder, the local Hugging Face hub
cache, or a model bundled as a Python package; posviz never downloads.

Importing this package and ``available_models()`` import neither torch nor transformers;
``load_backend`` imports them when a model is loaded.
"""
from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Callable

from ..errors import PosvizInputError
from .sources import (BUNDLED, FAMILIES, ModelSource, available_models, cached_models,
                      first_line, gguf_readable, hub_cache_dir, read_config, resolve)
from .workarounds import go_offline, quiet_gguf_progress

if TYPE_CHECKING:
    from .backend import HFBackend

__all__ = ["BUNDLED", "FAMILIES", "HFBackend", "ModelSource", "available_models",
           "cached_models", "hub_cache_dir", "load_backend", "read_config", "resolve"]


def __getattr__(name: str):
    if name == "HFBackend":                    # torch comes with it
        from .backend import HFBackend
        return HFBackend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Loads may overlap (a cancelled one runs on while the next starts); each changes
# transformers' global logging and progress-bar settings and puts them back.
_QUIET_LOADING = threading.Lock()


def load_backend(spec: str, progress: Callable[[str], None] | None = None) -> "HFBackend":
    """Load a model by bundled name, folder or cached name, without touching the network.

    Raises PosvizInputError with one line for a missing folder, a folder that is not a
    transformer, corrupt weights, a missing tokenizer or an unsupported family.
    """
    say = progress or (lambda step: None)
    say("reading config")
    folder, gguf_file, name = resolve(spec)
    if gguf_file is None:
        read_config(folder)
    elif not gguf_readable():
        raise PosvizInputError("reading a GGUF file needs the gguf and accelerate packages "
                               "(pip install gguf accelerate)")
    go_offline()                                # before huggingface_hub is imported
    try:
        import torch  # noqa: F401  (the models extra: checked before anything loads)
        import transformers  # noqa: F401
    except ImportError as error:
        raise PosvizInputError(f"real models need the 'models' extra ({error.name} is "
                               f"missing): pip install 'posviz[models]'") from None

    extra = {"gguf_file": gguf_file} if gguf_file else {}
    with _QUIET_LOADING:    # one load at a time changes transformers' global settings
        tokenizer, model, info = _read_model(folder, extra, bool(gguf_file), say)
    family = FAMILIES.get(model.config.model_type)
    if family is None:
        raise PosvizInputError(f"model type {model.config.model_type!r} is not supported")
    missing = [key for key in info.get("missing_keys", ()) if not key.startswith("pooler.")]
    if missing:
        raise PosvizInputError(f"the weights in {folder} lack {len(missing)} tensors the "
                               f"model needs (e.g. {missing[0]})")
    say("ready")
    from .backend import HFBackend
    return HFBackend(model, tokenizer, family, name, str(folder / (gguf_file or "")))


def _read_model(folder, extra: dict, gguf: bool, say):
    """Tokenizer, model and loading info, with transformers' notes and bars silenced
    (``say`` reports the steps instead); its logging settings are put back after."""
    import torch
    import transformers
    from transformers import AutoModel, AutoTokenizer

    log = transformers.logging
    verbosity, bars = log.get_verbosity(), log.is_progress_bar_enabled()
    log.set_verbosity_error()                   # loading notes and progress bars are not
    log.disable_progress_bar()                  # the user's concern: progress() reports
    try:
        say("loading tokenizer")
        try:
            tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True, **extra)
        except Exception as error:               # each tokenizer class fails differently
            raise PosvizInputError(f"cannot load the tokenizer in {folder}: "
                                   f"{first_line(error)}") from None
        say("de-quantizing weights" if gguf else "loading weights")
        try:
            with quiet_gguf_progress(gguf):
                model, info = AutoModel.from_pretrained(
                    folder, local_files_only=True, attn_implementation="eager",
                    dtype=torch.float32, output_loading_info=True, **extra)
        except Exception as error:
            raise PosvizInputError(f"cannot read the weights in {folder} (corrupt or "
                                   f"incomplete?): {first_line(error)}") from None
    finally:
        log.set_verbosity(verbosity)
        if bars:
            log.enable_progress_bar()
    return tokenizer, model, info
