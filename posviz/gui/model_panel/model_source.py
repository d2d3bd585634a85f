"""Asking where a model lies: a folder of Hugging Face files, or a single .gguf file (as
``--model PATH`` accepts), starting in the folder the user last opened one from."""
from __future__ import annotations

from pathlib import Path

from PySide6.QtWidgets import QFileDialog

from ..folders import remember_folder, start_folder
from ..settings import make_settings

CHOOSER_TIP = ("The built-in transformer (random or trained weights, the options below), a "
               "real pretrained model found on this computer (bundled, or in the Hugging "
               "Face cache), a model folder you choose, or a model by its hub name, "
               "downloaded into the Hugging Face cache when it is not there (unless "
               "downloads are off below).")
HUB_NAME_PROMPT = ("A model on the Hugging Face hub, as ORG/NAME or NAME (gpt2), with "
                   "@REVISION (a branch, a tag or a commit) if you like:")
DOWNLOADS_TIP = ("Let posviz download a model you name from the Hugging Face hub "
                 "($HF_ENDPOINT) into its cache ({cache}). Off: only models already "
                 "on this computer load. posviz --offline and HF_HUB_OFFLINE=1 also turn "
                 "downloads off.")
OPEN_ITEMS = {"open": ("Open folder…", "A folder holding a model's config, weights and "
                                        "tokenizer files"),
              "gguf": ("Open .gguf file…", "One GGUF file (e.g. a llama.cpp model): read "
                                           "and de-quantised to float32")}


def ask_model_path(parent, kind: str) -> str | None:
    """A folder (``kind`` "open") or a .gguf file (``kind`` "gguf") the user picks; None
    if they cancel."""
    settings = make_settings()
    start = str(start_folder(settings))
    if kind == "gguf":
        path, _ = QFileDialog.getOpenFileName(parent, "Open a GGUF model file", start,
                                              "GGUF models (*.gguf);;All files (*)")
    else:
        path = QFileDialog.getExistingDirectory(parent, "Open a model folder", start)
    if not path:
        return None
    remember_folder(settings, Path(path).parent)
    return path
