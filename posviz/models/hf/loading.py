"""Reading a model folder: the device, the class with the model's LM head, the weights
read with determinate progress and a stop between tensors.

transformers reads a checkpoint tensor by tensor and de-quantizes a GGUF file tensor by
tensor; posviz counts those loops (``counting``) to tell how many tensors are read and to
stop when asked. A stopped load raises errors.Cancelled after everything it read is freed.
"""
from __future__ import annotations

import gc
import threading
from contextlib import contextmanager, nullcontext
from typing import Callable

from ...errors import Cancelled, PosvizInputError, Refused, argument, one_line
from . import attention as lean_attention
from ..limits.guard import ACCELERATORS
from .families import Family
from .workarounds import gguf_loop

DEVICES = ("auto", "cpu", "cuda", "mps")
IMPORTING = "importing the model's code"   # a step of its own: longer than its tensors
Say = Callable[..., None]          # say(step, done=None, total=None)


def pick_device(name: str) -> str:
    """"auto" -> the accelerator torch has ("cuda", then "mps"), else "cpu"; an asked-for
    accelerator torch lacks is refused in one line."""
    import torch

    if name not in DEVICES:
        raise PosvizInputError(f"unknown device {name!r} (choose {', '.join(DEVICES)})")
    has = {"cuda": torch.cuda.is_available(),
           "mps": bool(getattr(torch.backends, "mps", None)) and torch.backends.mps.is_available()}
    if name == "auto":
        return next((device for device in ("cuda", "mps") if has[device]), "cpu")
    if name != "cpu" and not has[name]:
        raise Refused(f"{argument('device', name)}: torch {torch.__version__} has no "
                      f"{ACCELERATORS[name]} on this machine (use "
                      f"{argument('device', 'cpu')} or {argument('device', 'auto')})",
                      "device")
    return name


def model_classes(family: Family) -> list:
    """The transformers classes to try, the one with the family's LM head first."""
    import transformers as t

    if family.encoder_only:
        return [t.AutoModelForTextEncoding]          # the encoder alone: T5EncoderModel
    first = {"causal": [t.AutoModelForCausalLM], "masked": [t.AutoModelForMaskedLM]}
    return first.get(family.head, []) + [t.AutoModel]


def import_code(folder, say: Say) -> None:
    """Import transformers' module of the folder's model type, told as IMPORTING: it
    took half of MiniLM's load, its tensors a few milliseconds (benchmarks/README.md)."""
    import importlib

    from transformers import AutoConfig
    try:
        kind = AutoConfig.from_pretrained(folder, local_files_only=True).model_type
    except Exception:                            # said with the weights' own error
        return
    say(IMPORTING)                               # 2.7-5.5 s under load: ticks
    name = kind.replace("-", "_")
    try:
        importlib.import_module(f"transformers.models.{name}.modeling_{name}")
    except ImportError:                          # elsewhere: imported with the weights
        pass


def split_missing(model, missing) -> tuple[list[str], list[str]]:
    """Missing keys of the base model (an error) and of the head (the checkpoint holds
    the base model alone, e.g. a sentence encoder)."""
    base = model.base_model
    prefix = model.base_model_prefix + "."
    in_head = (lambda key: False) if base is model else (lambda key: not key.startswith(prefix))
    head = [key for key in missing if in_head(key)]
    body = [key for key in missing if not in_head(key)
            and not key.removeprefix(prefix).startswith("pooler.")]
    return body, head


def read_model(folder, extra: dict, gguf: bool, family: Family, say: Say,
               should_stop: Callable[[], bool] | None, device: str,
               dtype: str = "float32", placement: dict | None = None,
               tokens_read: Callable | None = None):
    """(tokenizer, model, head) read from ``folder`` onto ``device`` in ``dtype``:
    ``model`` has its LM head when the checkpoint holds one (``head`` "causal" or
    "masked"), else it is the base model (``head`` None). ``placement`` (device_map,
    max_memory, offload_folder) hands the layers to accelerate, which puts them on the
    devices, the CPU and the disk. Raises PosvizInputError in one line, Cancelled when
    ``should_stop()`` turns True (with everything read freed). ``tokens_read(count)`` is
    told, once the tokenizer is read and before the weights, ``count(text)``: the
    tokens the model will give ``text`` (HFBackend.tokenize), to refuse what they cannot
    take (an order of another length) before the longest step."""
    stop = should_stop or (lambda: False)
    extra = {**extra, **(placement or {})}
    try:
        # a GGUF file's tokenizer, config and weights in one block, read by one gguf
        # reader; a checkpoint's weights counted alone (a tokenizer's load in the block
        # left a second load of MiniLM in one process uncounted)
        with collector_paused(), counting(say, stop) if gguf else nullcontext():
            outcome = _read(folder, extra, gguf, family, say, stop, device, dtype,
                            tokens_read)
    except Cancelled:
        outcome = None                  # leave the except block: its traceback holds
    if outcome is None:                 # the frames that hold the half-read model
        free_memory()
        raise Cancelled("loading cancelled")
    return outcome


@contextmanager
def collector_paused():
    """Python's cyclic collector off inside, on the main thread (a script's load; the
    window collects on its GUI thread alone: boot's gui-thread-collector). A GGUF
    file's first load ran 27 full collections of everything torch and transformers
    hold, 6.0 of its 20.8 s (load 8), each holding Python's lock: a line told again
    from another thread waited behind them (20-23 waits over 1 s at load 12, 5 with
    the collector off; benchmarks/README.md). A read leaves little in cycles."""
    if threading.current_thread() is not threading.main_thread() or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def free_memory(collect: bool = True) -> None:
    """Collect what a load left (when ``collect``) and give the heap back to the system.
    Off the main thread (the window's loader) the collecting is left to the GUI thread's
    collector (boot: gui-thread-collector): a Qt object freed on a worker can deadlock
    against the GUI thread, as a load's collection did once the window held more Qt
    objects."""
    from ...boot import TRIM_FROM, trim_heap

    if collect and threading.current_thread() is threading.main_thread():
        gc.collect()
    trim_heap(TRIM_FROM)


@contextmanager
def counting(say: Say, should_stop: Callable[[], bool]):
    """``say(step, done, total)`` after each tensor transformers reads, and Cancelled
    before the next once ``should_stop()``: its loop over a checkpoint's tensors runs
    through its tqdm hook (``set_tqdm_hook``; older versions load uncounted), a GGUF
    file's through posviz's patch (posviz.models.hf.workarounds)."""
    from transformers.utils import logging

    def counted(iterable, step: str, total=None):
        total = len(iterable) if hasattr(iterable, "__len__") else total
        for done, item in enumerate(iterable):
            _check(should_stop)
            yield item
            say(step, done + 1, total)

    def hook(factory, args, kwargs):          # a loop is counted, anything else drawn
        if args and hasattr(args[0], "__iter__"):
            return counted(args[0], "loading weights", kwargs.get("total"))
        return factory(*args, **kwargs)

    set_hook = getattr(logging, "set_tqdm_hook", None)
    previous = set_hook(hook) if set_hook else None
    try:
        with gguf_loop(lambda loop, total: counted(loop, "de-quantizing weights", total),
                       say):
            yield
    finally:
        if set_hook:
            set_hook(previous)


def _check(stop) -> None:
    if stop():
        raise Cancelled("loading cancelled")


def token_counter(tokenizer) -> Callable[[str], int]:
    """``count(text)``: the tokens HFBackend.tokenize gives ``text``, its special ones in."""
    return lambda text: len(tokenizer(text, add_special_tokens=True, verbose=False)
                            ["input_ids"])


def _read(folder, extra, gguf, family, say, stop, device, dtype, tokens_read=None):
    import torch
    from transformers import AutoTokenizer

    say("loading tokenizer")                     # 3.9 s under load: ticks (load_backend)
    try:
        tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True,
                                                  **{k: v for k, v in extra.items()
                                                     if k == "gguf_file"})
    except Exception as error:                   # each tokenizer class fails differently
        raise PosvizInputError(f"cannot load the tokenizer in {folder}: "
                               f"{one_line(error)}") from None
    _check(stop)
    if tokens_read is not None:
        tokens_read(token_counter(tokenizer))
    if not gguf:                                 # a GGUF's config is read from the file
        import_code(folder, say)
    step = "de-quantizing weights" if gguf else "loading weights"
    if gguf and family.lean_attention:          # its imports: 2 s before the weights
        say("importing the model's code")
    attention = (lean_attention.register(family.lean_attention) if family.lean_attention
                 else "eager")
    say(step)
    model = info = None
    for cls in model_classes(family):
        try:
            with nullcontext() if gguf else counting(say, stop):
                model, info = cls.from_pretrained(
                    folder, local_files_only=True, attn_implementation=attention,
                    dtype=getattr(torch, dtype), output_loading_info=True, **extra)
            break
        except Cancelled:
            raise
        except ValueError as error:              # no such head for this configuration
            if "Unrecognized configuration class" in str(error):
                continue
            raise PosvizInputError(f"cannot read the weights in {folder} (corrupt or "
                                   f"incomplete?): {one_line(error)}") from None
        except Exception as error:
            raise PosvizInputError(f"cannot read the weights in {folder} (corrupt or "
                                   f"incomplete?): {one_line(error)}") from None
    _check(stop)
    body, head_missing = split_missing(model, info.get("missing_keys", ()))
    if body:
        raise PosvizInputError(f"the weights in {folder} lack {len(body)} tensors the "
                               f"model needs (e.g. {body[0]})")
    head = family.head if model.base_model is not model else None
    if head_missing:                             # a base model's checkpoint: no head
        placed = getattr(model, "hf_device_map", None)
        model, head = model.base_model, None
        if placed:                               # where accelerate put its modules
            model.hf_device_map = placed
    if "device_map" in extra:                    # half weights arrive as stored
        from .precision import place_outside
        place_outside(model)
    # What de-quantizing left in the heap; a checkpoint's read (MiniLM, a converted
    # copy) leaves nothing in cycles: a full collection of the 370,000 objects torch
    # and transformers hold found 187-2,511, gave back no memory and took 0.6-0.7 s
    # of a SmolLM2 report at load 10 (benchmarks/README.md).
    free_memory(collect=gguf)
    if device != "cpu" and "device_map" not in extra:
        say(f"moving the model to {device}")
        model = model.to(device)
    return tokenizer, model.eval(), head
