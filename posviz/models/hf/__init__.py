"""Real pretrained models from Hugging Face, offline, behind the Backend interface.

The families of models.hf.families are read: BERT, RoBERTa, DistilBERT, GPT-2, OPT,
GPT-NeoX, Llama-like decoders (Llama, Mistral, Qwen2, Phi-3, Gemma), BLOOM, the T5
encoder and ModernBERT, each with its own positional scheme computed by transformers. A
model comes from a local folder, a model bundled as a Python package, or by its hub
name from the local Hugging Face hub cache, downloaded there first (hub.py) only when
the caller allows the network.

Importing this package and ``available_models()`` import neither torch nor transformers;
``load_backend`` imports them when a model is loaded.
"""
from __future__ import annotations

import sys
import threading
import warnings
from importlib.util import find_spec
from contextlib import contextmanager
from typing import TYPE_CHECKING, Callable

from ...errors import Cancelled, PosvizInputError
from ..formats.gguf_header import gguf_config
from ..options import pretrained_dtype_problem
from . import cache, converted, hub
from .cache import NotCached, cached_models, hub_cache_dir, network_allowed
from .families import BY_MODEL_TYPE
from .hub import LargeDownload
from .sources import (BUNDLED, ModelSource, available_models, gguf_readable, read_config,
                      resolve, unsupported)

if TYPE_CHECKING:
    from .backend import HFBackend

IMPORTING_LIBRARIES = "importing torch and transformers"   # a step before "reading config"

__all__ = ["BUNDLED", "HFBackend", "LargeDownload", "ModelSource", "NotCached",
           "available_models", "cached_models", "hub_cache_dir",
           "converts", "load_backend",
           "network_allowed", "read_config", "resolve", "teller"]


def __getattr__(name: str):
    if name == "HFBackend":                    # torch comes with it
        from .backend import HFBackend
        return HFBackend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# tqdm.auto (imported by transformers and huggingface_hub) warns in a Jupyter kernel
# without ipywidgets; posviz tells a load's progress itself (teller)
warnings.filterwarnings("ignore", message="IProgress not found")

# Loads may overlap (a cancelled one runs on while the next starts); each changes
# transformers' global logging and progress-bar settings and puts them back.
_QUIET_LOADING = threading.Lock()


def load_backend(spec: str, progress: Callable[..., None] | None = None,
                 device: str = "cpu", should_stop: Callable[[], bool] | None = None,
                 n_tokens: int = 0, online: bool = False,
                 ask_above: int | None = None, dtype: str = "float32",
                 offload_folder: str | None = None,
                 max_memory: dict | None = None,
                 check_memory: bool = True,
                 tokens_read: Callable | None = None) -> "HFBackend":
    """Load a model by bundled name, folder, .gguf file or hub name [ORG/]NAME[@REVISION].

    A hub name comes from the local cache; when the cache does not hold it and
    ``online`` is True it is downloaded first (hub.py), unless that is more than
    ``ask_above`` bytes: then LargeDownload says how much, and nothing is fetched.
    ``progress(step, done=None, total=None)`` is told each step, and the count of
    bytes downloaded or tensors read where it is known (a one-argument ``progress(step)``
    is told the steps only); a step nothing follows for a second is told again with
    its seconds, from the "posviz-ticks" thread (models.reached.Ticks). ``device`` is "cpu", "cuda", "mps" or "auto". The memory
    the weights and one forward of ``n_tokens`` need is checked before anything is
    read (not when ``check_memory`` is False: asked for anyway). When
    ``should_stop()`` turns True, raises errors.Cancelled with what was read freed (and
    no partial download left in the cache). Raises PosvizInputError with one line for a missing folder or name, an unreachable hub, a folder that is not a
    transformer, corrupt weights, a missing tokenizer, an unsupported family, too
    little memory or an absent device.

    ``dtype`` ("float32", "bfloat16", "float16") is what the weights are read as; the
    model computes in float32 whatever they are (precision.py). With
    ``offload_folder`` the layers are placed by accelerate's ``device_map="auto"``
    within ``max_memory`` ({device: bytes}, by default what each has free), on the
    accelerator, then the CPU, then that folder on disk; HFBackend.describe says where.
    ``tokens_read(count)``: told once the tokenizer is read, before the weights
    (loading.read_model).
    """
    if pretrained_dtype_problem(dtype):
        raise PosvizInputError(pretrained_dtype_problem(dtype))
    from ..reached import ticking
    from .beats import beating
    # a step that takes a second with nothing said is told again with its seconds:
    # a GGUF file's first read was silent 7.1 s, importing torch 2-6.5 s (reached.Ticks);
    # no ticks' thread when nothing is told
    with ticking(None if progress is None else teller(progress)) as ticks, \
            beating(ticks):             # and from this thread at each import (beats)
        return _load(spec, ticks or teller(None), device, should_stop, online, ask_above,
                     dtype, offload_folder, max_memory, check_memory, n_tokens, tokens_read)


def converts(spec: str) -> bool:
    """Will loading ``spec`` convert a GGUF file first (no trusted converted copy in the
    cache)? False when it cannot be resolved here: its load says why."""
    try:
        folder, gguf_file, _ = resolve(spec)
    except (NotCached, PosvizInputError):
        return False
    return (gguf_file is not None and converted.enabled()
            and converted.existing(folder / gguf_file)[1] is None)


def _load(spec, say, device, should_stop, online, ask_above, dtype, offload_folder,
          max_memory, check_memory, n_tokens, tokens_read) -> "HFBackend":
    stop = should_stop or (lambda: False)
    # Everything that can be refused is checked before the first step is told, so bad
    # input stays one line wherever the steps are printed.
    try:
        folder, gguf_file, name = resolve(spec)
    except NotCached as missing:
        if not online:
            raise
        download(missing.name, say, stop, ask_above)
        folder, gguf_file, name = resolve(spec)
    config = read_config(folder) if gguf_file is None else gguf_config(folder / gguf_file)
    if gguf_file is not None and not gguf_readable():
        raise PosvizInputError("reading a GGUF file needs the gguf and accelerate packages "
                               "(pip install gguf accelerate)")
    digest = conversion = None            # a GGUF file's sha256 and converted copy
    if gguf_file is not None and converted.enabled():
        digest, conversion = converted.existing(folder / gguf_file)
    from ..limits.memory import check_model_fits
    from .precision import arithmetic_of
    if check_memory:                      # a conversion reads the weights in float32
        check_model_fits(folder, gguf_file, config, n_tokens,
                         "float32" if digest and not conversion else dtype,
                         offloaded=offload_folder is not None,
                         computes_in=arithmetic_of(dtype))
    if "transformers" not in sys.modules and all(map(find_spec, ("torch", "transformers"))):
        say(IMPORTING_LIBRARIES)                # 1.5-9 s under load: ticks (load_backend)
    try:
        from ...boot import before_torch
        before_torch()                          # its libraries: the ticks run meanwhile
        import torch  # noqa: F401  (the models extra: checked before anything loads)
        import transformers  # noqa: F401
    except ImportError as error:
        raise PosvizInputError(f"real models need the 'models' extra ({error.name} is "
                               f"missing): pip install 'posviz[models]'") from None
    from .loading import pick_device, read_model
    device = pick_device(device)

    kind = config.get("model_type", "llama")       # (an unreadable GGUF file: told later)
    family = BY_MODEL_TYPE.get(kind)
    if family is None:
        raise PosvizInputError(unsupported(kind))
    say("reading config")
    with _QUIET_LOADING:    # one load at a time changes transformers' global settings
        with _quiet_transformers():
            if digest and not conversion:
                conversion = converted.made(folder / gguf_file, digest, family, say, stop)
            extra = {"gguf_file": gguf_file} if gguf_file and not conversion else {}
            tokenizer, model, head = read_model(conversion.folder if conversion else folder,
                                                extra, bool(extra), family, say,
                                                should_stop, device, dtype,
                                                placement(offload_folder, max_memory),
                                                tokens_read)
            if conversion and offload_folder is None:
                converted.aligned(model)
    say("ready")
    from .backend import HFBackend
    source, revision = origin(spec, folder)
    bundled = BUNDLED[spec.strip()].weights if spec.strip() in BUNDLED else ""
    weights = converted.weights_said(folder / gguf_file, bundled, conversion) \
        if gguf_file else bundled
    return HFBackend(model, tokenizer, family, name, str(folder / (gguf_file or "")),
                     head=head, device=device, source=source, revision=revision,
                     dtype=dtype, weights=weights)


def placement(offload_folder, max_memory: dict | None) -> dict | None:
    """from_pretrained's keywords that have accelerate place the layers, or None."""
    if offload_folder is None:
        return None
    from pathlib import Path
    folder = Path(offload_folder).expanduser()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise PosvizInputError(f"cannot use {folder} as the offload folder: "
                               f"{error.strerror}") from None
    keywords = {"device_map": "auto", "offload_folder": str(folder),
                "offload_state_dict": True}
    return keywords if max_memory is None else {**keywords, "max_memory": max_memory}


def download(name: "cache.HubName", say, should_stop, ask_above: int | None = None) -> None:
    """Fetch a hub model into the local cache: ask the hub what it takes (failing in
    one line within seconds when it cannot be reached), check its family from its
    config.json, tell the size (LargeDownload above ``ask_above`` bytes), then download
    with progress. Nothing is told before the hub has answered, so a refusal is the
    only line."""
    plan = hub.plan(name)
    config = hub.peek_config(plan)
    kind = config.get("model_type")
    if kind is None:
        raise PosvizInputError(f"the config.json of {name} names no model_type: not a "
                               f"transformer config")
    if kind not in BY_MODEL_TYPE:
        raise PosvizInputError(unsupported(kind))
    if ask_above is not None and plan.size > ask_above:
        raise LargeDownload(plan)
    if should_stop():
        raise Cancelled("download cancelled")
    say(f"downloading {plan.describe()} into {hub_cache_dir()}")
    hub.fetch(plan, say, should_stop)


def origin(spec: str, folder) -> tuple[str, str]:
    """(what loads the model again, its hub commit or ""): a snapshot of the hub cache
    by its hub name and commit, a bundled model by its name, else the path."""
    found = cache.identity(folder)
    if found is not None and folder.parent.parent.parent.resolve() == \
            hub_cache_dir().resolve():
        return found.repo, found.revision
    return (spec.strip() if spec.strip() in BUNDLED else ""), ""


def teller(progress):
    """``progress`` as a (step, done=None, total=None) callable: a one-argument one is
    told the steps only, not the counts within them."""
    if progress is None:
        return lambda step, done=None, total=None: None
    try:
        import inspect
        inspect.signature(progress).bind("step", 0, 0)
        return progress
    except (TypeError, ValueError):
        return lambda step, done=None, total=None: (progress(step) if done is None
                                                    else None)


@contextmanager
def _quiet_transformers():
    """transformers' loading notes and progress bars silenced (``progress`` reports the
    steps instead); its logging settings are put back after."""
    import transformers

    log = transformers.logging
    verbosity, bars = log.get_verbosity(), log.is_progress_bar_enabled()
    log.set_verbosity_error()
    log.disable_progress_bar()
    try:
        yield
    finally:
        log.set_verbosity(verbosity)
        if bars:
            log.enable_progress_bar()
