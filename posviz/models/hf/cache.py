"""Models by their Hugging Face hub name in the local hub cache, found without the network.

A hub name is ``[ORG/]NAME`` or ``[ORG/]NAME@REVISION`` (a branch, a tag or a commit hash).
It resolves as transformers resolves it offline: ``refs/REVISION`` in the cache names
the commit, ``snapshots/COMMIT`` holds its files. The cache is located as
huggingface_hub locates it (``HF_HUB_CACHE``, else ``HF_HOME/hub``, else
``~/.cache/huggingface/hub``), read from the environment at each call.

What a load trusts: a snapshot with ``config.json`` whose weight shards are all there
(``complete``). posviz downloads ``config.json`` last (hub.py), so a download that
stopped in any way leaves no snapshot that looks complete.

Nothing here imports huggingface_hub, numpy or torch: listing the cache stays cheap.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ...errors import PosvizInputError

# A hub name: [ORG/]NAME with an optional @REVISION (hub repository ids allow letters,
# digits, "-", "_" and "."; the oldest models have no ORG/: gpt2, bert-base-uncased).
HUB_NAME = re.compile(r"^(?P<repo>(?:[A-Za-z0-9][\w.-]*/)?[A-Za-z0-9][\w.-]*)"
                      r"(?:@(?P<revision>[\w./-]+))?$")
COMMIT = re.compile(r"^[0-9a-f]{40}$")
OFFLINE_VARIABLES = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")
# Weight formats, the one transformers prefers first: (single file, index, shard pattern).
WEIGHTS = (("model.safetensors", "model.safetensors.index.json",
            re.compile(r"^model-\d+-of-\d+\.safetensors$")),
           ("pytorch_model.bin", "pytorch_model.bin.index.json",
            re.compile(r"^pytorch_model-\d+-of-\d+\.bin$")))


@dataclass(frozen=True)
class HubName:
    """A model repository on the hub, at a revision ("" is its default branch)."""

    repo: str                     # "ORG/NAME", or "NAME"
    revision: str = ""            # a branch, a tag or a commit hash

    @property
    def ref(self) -> str:
        return self.revision or "main"

    def __str__(self) -> str:
        return f"{self.repo}@{self.revision}" if self.revision else self.repo


def parse_hub_name(spec: str) -> HubName | None:
    """``[ORG/]NAME[@REVISION]`` as a HubName, or None when ``spec`` is not of that form."""
    match = HUB_NAME.match(spec.strip())
    if match is None or ".." in spec:
        return None
    return HubName(match["repo"], match["revision"] or "")


def network_allowed() -> bool:
    """False when the user's environment turns the hub off (HF_HUB_OFFLINE or
    TRANSFORMERS_OFFLINE set to 1, ON, YES or TRUE), as huggingface_hub reads them."""
    return not any(os.environ.get(name, "").upper() in ("1", "ON", "YES", "TRUE")
                   for name in OFFLINE_VARIABLES)


# -- the local cache ------------------------------------------------------------------
def hub_cache_dir() -> Path:
    """The local Hugging Face hub cache, located the way huggingface_hub does."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    cache = os.environ.get("XDG_CACHE_HOME") or "~/.cache"
    return Path(cache).expanduser() / "huggingface" / "hub"


def repo_folder(repo: str) -> Path:
    """Where the cache keeps a model repository: models--ORG--NAME."""
    return hub_cache_dir() / f"models--{repo.replace('/', '--')}"


def identity(folder: Path) -> HubName | None:
    """The repository and commit of a snapshot folder of the hub cache
    (…/models--ORG--NAME/snapshots/COMMIT), or None for any other folder."""
    snapshots, repo = folder.parent, folder.parent.parent
    if snapshots.name != "snapshots" or not repo.name.startswith("models--"):
        return None
    return HubName(repo.name[len("models--"):].replace("--", "/"), folder.name)


def complete(folder: Path) -> bool:
    """Does this snapshot hold a whole model? config.json (downloaded last) and every
    weight shard its index names; read_config then checks weights and tokenizer."""
    if not (folder / "config.json").is_file():
        return False
    for _, index, _ in WEIGHTS:
        try:
            names = set(json.loads((folder / index).read_text(encoding="utf-8"))
                        ["weight_map"].values())
        except FileNotFoundError:
            continue
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return False
        if not all((folder / name).is_file() for name in names):
            return False
    return True


def cached_commit(name: HubName) -> str | None:
    """The commit the cache holds for this name: the revision itself when it is a commit
    hash, else what refs/REVISION says; None when the cache has no such ref."""
    if COMMIT.match(name.revision):
        return name.revision
    try:
        return (repo_folder(name.repo) / "refs" / name.ref).read_text().strip() or None
    except (OSError, UnicodeDecodeError):
        return None


def cached_snapshot(name: HubName) -> Path | None:
    """The complete snapshot of ``name`` in the cache, or None: a name without a
    revision means refs/main's, as it does to transformers."""
    commit = cached_commit(name)
    if commit is None:
        return None
    folder = repo_folder(name.repo) / "snapshots" / commit
    return folder if complete(folder) else None


def newest_snapshot(repo: Path) -> Path | None:
    """refs/main's snapshot of a repository folder when complete, else its newest
    complete snapshot."""
    try:
        main = (repo / "refs" / "main").read_text().strip()
    except (OSError, UnicodeDecodeError):
        main = ""
    if main and complete(repo / "snapshots" / main):
        return repo / "snapshots" / main
    try:
        candidates = [f for f in (repo / "snapshots").iterdir() if complete(f)]
    except OSError:
        return None
    return max(candidates, key=lambda f: f.stat().st_mtime, default=None)


def cached_models() -> dict[str, Path]:
    """Hub name -> its snapshot folder, for every complete model in the hub cache:
    "org/name" for refs/main's snapshot, else "org/name@COMMIT" for the newest one."""
    found = {}
    try:
        repos = sorted(hub_cache_dir().glob("models--*"))
    except OSError:
        return found
    for repo in repos:
        folder = newest_snapshot(repo)
        if folder is not None:
            name = repo.name[len("models--"):].replace("--", "/")
            main = cached_commit(HubName(name))
            found[name if main == folder.name else f"{name}@{folder.name}"] = folder
    return found


class NotCached(PosvizInputError):
    """A hub name the local cache does not hold (whole); its message says so for a
    caller that may not download."""

    def __init__(self, name: HubName):
        folder = "" if "/" in name.repo else f"no folder {name.repo!r} here and "
        super().__init__(f"{folder}no model {str(name)!r} in the local Hugging Face cache "
                         f"({hub_cache_dir()}), and downloads are off (offline)")
        self.name = name


