"""The device a run asks for: one torch has here, asked without importing torch when its
build says it has none (models.limits.guard refuses the others first)."""
from __future__ import annotations

import re
import sys

from ...errors import PosvizInputError, Refused, argument

DEVICES = ("auto", "cpu", "cuda", "mps")
ACCELERATORS = {"cuda": "CUDA device", "mps": "Apple GPU (MPS)"}


def check_device(device: str | None) -> None:
    """A device that is not one: a bad value (PosvizInputError, as the command line's
    --device says it); an accelerator torch does not have here: Refused, "device"."""
    if device in (None, "cpu", "auto"):
        return
    if device not in DEVICES:
        raise PosvizInputError(f"{argument('device')} must be one of {', '.join(DEVICES)} "
                               f"(got {device!r})")
    has, torch_version = accelerator(device)
    if not has:
        raise Refused(f"{argument('device', device)}: torch {torch_version} has no "
                      f"{ACCELERATORS[device]} on this machine (use "
                      f"{argument('device', 'cpu')} or {argument('device', 'auto')})",
                      "device")


def accelerator(device: str) -> tuple[bool, str]:
    """(is ``device`` there, torch's version): a CPU build of torch is read from its
    version file, without importing torch; else torch is asked."""
    from importlib.util import find_spec
    if device == "mps" and sys.platform != "darwin":
        return False, _torch_version() or "?"
    if "torch" not in sys.modules:
        spec = find_spec("torch")
        if spec is None:
            return False, "(not installed)"
        built = _version_file()
        if device == "cuda" and built is not None and built.get("cuda") is None \
                and built.get("hip") is None:
            return False, built.get("__version__", "?")
    import torch
    if device == "cuda":
        return bool(torch.cuda.is_available()), torch.__version__
    mps = getattr(torch.backends, "mps", None)
    return bool(mps and mps.is_available()), torch.__version__


def _version_file() -> dict | None:
    """torch/version.py's assignments (``__version__``, ``cuda``, ``hip``), read as text."""
    from importlib.util import find_spec
    from pathlib import Path
    try:
        folder = Path(next(iter(find_spec("torch").submodule_search_locations)))
        text = (folder / "version.py").read_text(encoding="utf-8")
    except (OSError, StopIteration, AttributeError, TypeError):
        return None
    values = {}
    for name, value in re.findall(r"^(\w+)\s*(?::[^=]*)?=\s*(.+)$", text, re.M):
        value = value.strip()
        values[name] = None if value == "None" else value.strip("'\"")
    return values


def _torch_version() -> str | None:
    if "torch" in sys.modules:
        return sys.modules["torch"].__version__
    return (_version_file() or {}).get("__version__")
