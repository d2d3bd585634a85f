"""posviz's workarounds of transformers' behaviour while loading a model, one function
each; ``posviz.boot`` lists their names and turns them off.

Both were written against transformers 5.23 (and the 4.x line posviz also accepts):
on another major version neither is applied, and loading goes on without it.
"""
from __future__ import annotations

import os
from contextlib import contextmanager
from importlib import metadata

from ...boot import enabled

WRITTEN_FOR = (4, 5)          # transformers major versions


def _written_for_this_transformers() -> bool:
    """Is the installed transformers one these workarounds were written against? Asked
    of the package metadata, so transformers is not imported."""
    try:
        major = int(metadata.version("transformers").split(".")[0])
    except (metadata.PackageNotFoundError, ValueError):
        return False
    return major in WRITTEN_FOR


def go_offline() -> bool:
    """``hf-offline``: set HF_HUB_OFFLINE and TRANSFORMERS_OFFLINE, for this whole process.

    Why: posviz never downloads, yet a load that reaches for the hub (a name that is not
    a local folder, a tokenizer file looked up remotely) waits about 49 s for the network
    before failing. ``local_files_only=True`` keeps posviz's own loads of local folders
    off the network; these variables also cover what it misses. They must be set before
    huggingface_hub is first imported (it reads them once, into its constants), which is
    why they are set process-wide rather than around the load. True if set.
    """
    if not enabled("hf-offline") or not _written_for_this_transformers():
        return False
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    return True


@contextmanager
def quiet_gguf_progress(active: bool):
    """``hf-quiet-gguf``: no tqdm bar while transformers de-quantizes a GGUF file.

    Why: transformers draws that bar with plain tqdm on the terminal, past its own
    ``disable_progress_bar`` switch (modeling_gguf_pytorch_utils imports tqdm itself);
    posviz's progress callback reports the step instead. The module's ``tqdm`` is
    replaced by a pass-through for the ``with`` block and put back after.
    """
    module = None
    if active and enabled("hf-quiet-gguf") and _written_for_this_transformers():
        try:
            from transformers import modeling_gguf_pytorch_utils as module
        except ImportError:
            pass
    original = getattr(module, "tqdm", None)
    if original is not None:
        module.tqdm = lambda iterable, *args, **kwargs: iterable
    try:
        yield
    finally:
        if original is not None:
            module.tqdm = original


# transformers' loops over the tensors of a checkpoint: (module, step told while in it)
LOADING_LOOPS = (("transformers.modeling_gguf_pytorch_utils", "de-quantizing weights"),
                 ("transformers.core_model_loading", "loading weights"))


@contextmanager
def watch_loading(say, should_stop):
    """``hf-load-progress``: tell how many tensors are read, and stop between two.

    Why: ``from_pretrained`` reads the weights in one call, which tells nothing and
    cannot be stopped. Its loops over the tensors (one in ``core_model_loading``, one
    de-quantizing a GGUF file) iterate through the ``tqdm`` their modules import; for
    the ``with`` block that name is replaced by an iterator that calls
    ``say(step, done, total)`` after each tensor and raises errors.Cancelled before the
    next one once ``should_stop()`` is True. Without it (turned off, another
    transformers) a load still works, with no count and no stop inside it.
    """
    from importlib import import_module

    from ...errors import Cancelled

    patched = []
    if enabled("hf-load-progress") and _written_for_this_transformers():
        for name, step in LOADING_LOOPS:
            try:
                module = import_module(name)
            except ImportError:
                continue
            original = getattr(module, "tqdm", None)
            if original is None:
                continue

            def watched(iterable, *args, _step=step, **kwargs):
                total = len(iterable) if hasattr(iterable, "__len__") else kwargs.get("total")
                for done, item in enumerate(iterable):
                    if should_stop():
                        raise Cancelled("loading cancelled")
                    yield item
                    say(_step, done + 1, total)
            module.tqdm = watched
            patched.append((module, original))
    try:
        yield bool(patched)
    finally:
        for module, original in patched:
            module.tqdm = original
