"""Downloading a model by its hub name into the local cache, through huggingface_hub.

When the cache (cache.py) does not hold a hub name and the caller allows the network,
``plan`` asks the hub which commit the name is and which files a model needs there (its
config, weights and tokenizer, not the other formats a repository may hold), and
``fetch`` downloads them with huggingface_hub, which reads ``HF_ENDPOINT``, the cache's
location and the user's token as it always does: one file at a time, weights first and
``config.json`` last, telling the bytes and files done, and stopping between two chunks
when asked. A download that is cancelled or fails takes back the files it linked into
the snapshot (the finished blobs stay for the next attempt), so no partial model is
left that a later load would trust.

huggingface_hub is imported only here, and only when the network is used.
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ...errors import Cancelled, PosvizInputError, one_line
from ..limits.memory import size_text
from .cache import COMMIT, WEIGHTS, HubName, hub_cache_dir, repo_folder

DEFAULT_ENDPOINT = "https://huggingface.co"
ANSWER_SECONDS = 4.0          # how long the hub may take to answer before it counts as
                              # unreachable (a whole download may take longer)
DOWNLOAD_STEP = "downloading file"     # the steps whose counts are bytes
# the steps of transformers' GGUF loading that posviz tells (models.hf.workarounds)
READING = "reading the GGUF file's header, vocabulary and tensor names"
READING_AGAIN = "reading the GGUF file again, for its weights"       # the weights' parse
MATCHING = "matching the GGUF file's tensors to the model's modules"
BUILDING = "building the tokenizer from the GGUF file's vocabulary"
SAVING = "saving the converted copy"    # a GGUF file's first load (hf.converted): MB
# What a model needs of a repository besides its weights (top-level files only).
ALWAYS = ("config.json", "generation_config.json")
TOKENIZER = ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
             "added_tokens.json", "vocab.txt", "vocab.json", "merges.txt", "tokenizer.model",
             "spiece.model", "sentencepiece.bpe.model")

Say = Callable[..., None]          # say(step, done=None, total=None)


def endpoint() -> str:
    """The hub's address: $HF_ENDPOINT, else huggingface.co."""
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def count_unit(step: str) -> str:
    """What a load's counted step counts: a converted copy's MB as it is saved, the
    modules matched to a GGUF file's tensors, else tensors."""
    return ("MB" if step.startswith(SAVING) else
            "modules" if step.startswith(MATCHING) else "tensors")


def count_text(step: str, done: int, total: int) -> str:
    """A counted step as a person reads it: the bytes of a download ("12.5 of 166.0 MB
    (8%)"), else tensors."""
    if not step.startswith(DOWNLOAD_STEP):
        return f"{step}: {done} of {total} {count_unit(step)}"
    unit, scale = ("GB", 1e9) if total >= 1e9 else ("MB", 1e6)
    digits = 2 if total < 10 * scale else 1
    return (f"{step}: {done / scale:.{digits}f} of {total / scale:.{digits}f} {unit} "
            f"({done / max(total, 1):.0%})")


# -- the hub ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Download:
    """What fetching a model takes: its files (path, bytes), config.json last, at a
    commit, into a snapshot folder of the cache."""

    name: HubName
    commit: str
    files: tuple[tuple[str, int], ...]

    @property
    def size(self) -> int:
        return sum(size for _, size in self.files)

    @property
    def folder(self) -> Path:
        return repo_folder(self.name.repo) / "snapshots" / self.commit

    def describe(self) -> str:
        """'org/name at 1a2b3c4: 4 files, 166.0 MB'."""
        count = len(self.files)
        return (f"{self.name.repo} at {self.commit[:7]}: {count} file{'s' * (count != 1)}, "
                f"{size_text(self.size)}")


class LargeDownload(Exception):
    """A download above the size the caller accepts without asking; ``download`` says
    what it would take. Asked again with a larger limit, the load goes ahead."""

    def __init__(self, download: Download):
        super().__init__(f"{download.describe()} to download into {hub_cache_dir()}")
        self.download = download


def _hub_error(name: HubName, error: Exception, path: str = "") -> PosvizInputError:
    """One line for a failed question to the hub (about the file ``path``, if any)."""
    from huggingface_hub import errors

    where = endpoint()
    if isinstance(error, errors.RevisionNotFoundError):
        return PosvizInputError(f"{name.repo} has no revision {name.ref!r} on the hub "
                                f"at {where}")
    if isinstance(error, errors.GatedRepoError):
        return PosvizInputError(f"{name.repo} is gated on the hub at {where}: accept its "
                                f"terms there, then log in (hf auth login, or HF_TOKEN)")
    if isinstance(error, errors.RepositoryNotFoundError):
        return PosvizInputError(f"no model {name.repo!r} on the hub at {where} (or it is "
                                f"private: log in with hf auth login, or set HF_TOKEN)")
    if isinstance(error, errors.HfHubHTTPError) and error.response is not None:
        about = f"{name}, {path}" if path else str(name)
        return PosvizInputError(f"the hub at {where} answered {error.response.status_code} "
                                f"for {about}: {one_line(error)}")
    return PosvizInputError(f"cannot reach the hub at {where} to download {name} "
                            f"({one_line(error)}); it is not in the local cache either")


def plan(name: HubName) -> Download:
    """Ask the hub which commit ``name`` is and which files a model needs there (two
    requests, each given ANSWER_SECONDS). PosvizInputError in one line when the hub
    cannot be reached or has no such model, revision or weights."""
    from huggingface_hub import HfApi
    from huggingface_hub.hf_api import RepoFile

    api = HfApi(endpoint=endpoint())
    try:
        commit = api.model_info(name.repo, revision=name.ref, timeout=ANSWER_SECONDS).sha
        listing = {entry.path: int(entry.size or 0)
                   for entry in api.list_repo_tree(name.repo, revision=commit)
                   if isinstance(entry, RepoFile)}
    except Exception as error:                   # each failure is told in one line
        raise _hub_error(name, error) from None
    if not commit or not COMMIT.match(commit):
        raise PosvizInputError(f"the hub at {endpoint()} named no commit for {name}")
    return Download(name, commit, tuple((path, listing[path])
                                        for path in needed_files(name, listing)))


def needed_files(name: HubName, listing: dict[str, int]) -> list[str]:
    """The files of a listing a model is read from, weights first, config.json last."""
    if "config.json" not in listing:
        raise PosvizInputError(f"{name} has no config.json: not a transformers model")
    weights = []
    for single, index, shard in WEIGHTS:
        if single in listing:
            weights = [single]
        elif index in listing:
            weights = sorted(p for p in listing if shard.match(p)) + [index]
        if weights:
            break
    else:
        raise PosvizInputError(f"{name} holds no weights posviz reads ({WEIGHTS[0][0]} or "
                               f"{WEIGHTS[1][0]})")
    tokenizer = [p for p in TOKENIZER if p in listing]
    return weights + tokenizer + [p for p in ALWAYS[::-1] if p in listing]


def peek_config(download: Download) -> dict:
    """The model's config.json, read from the hub into a temporary folder: the family
    is checked before any weight is downloaded (and the cache gets no config.json yet)."""
    from huggingface_hub import hf_hub_download

    with tempfile.TemporaryDirectory(prefix="posviz-config-") as folder:
        try:
            path = hf_hub_download(download.name.repo, "config.json",
                                   revision=download.commit, local_dir=folder,
                                   endpoint=endpoint(), etag_timeout=ANSWER_SECONDS)
            config = json.loads(Path(path).read_text(encoding="utf-8"))
        except ValueError as error:
            raise PosvizInputError(f"the config.json of {download.name} is not valid JSON "
                                   f"({one_line(error)})") from None
        except Exception as error:
            raise _hub_error(download.name, error) from None
    return config if isinstance(config, dict) else {}


def fetch(download: Download, say: Say, should_stop: Callable[[], bool]) -> Path:
    """Download the planned files into the cache, one at a time, telling
    ``say("downloading file k of N (path)", bytes done, bytes in all)``; then point
    refs/REVISION at the commit. When ``should_stop()`` turns True (between two chunks
    of a file), or anything fails, the files this download linked into the snapshot are
    taken back and errors.Cancelled (or the one-line error) is raised."""
    import inspect

    from huggingface_hub import hf_hub_download

    folder, total, done, path = download.folder, download.size, 0, ""
    before = set(_entries(folder))
    # a huggingface_hub without it (before 1.0) is told and stopped between files only
    chunks = "tqdm_class" in inspect.signature(hf_hub_download).parameters
    try:
        for k, (path, size) in enumerate(download.files, 1):
            if should_stop():
                raise Cancelled("download cancelled")
            step = f"{DOWNLOAD_STEP} {k} of {len(download.files)} ({path})"
            say(step, done, total)
            counting = {"tqdm_class": _counting_bar(say, step, done, total, should_stop)}
            hf_hub_download(download.name.repo, path, revision=download.commit,
                            cache_dir=hub_cache_dir(), endpoint=endpoint(),
                            etag_timeout=ANSWER_SECONDS, **(counting if chunks else {}))
            done += size
        say(f"downloaded {download.describe()}")
    except BaseException as error:       # Cancel, a failure, Ctrl+C: no half snapshot
        _take_back(folder, before)
        if isinstance(error, (Cancelled, PosvizInputError)) or \
                not isinstance(error, Exception):
            raise
        raise _hub_error(download.name, error, path) from None
    if not COMMIT.match(download.name.revision):
        _write_ref(download.name, download.commit)
    return folder


def _entries(folder: Path) -> list[str]:
    try:
        return [p.relative_to(folder).as_posix() for p in folder.rglob("*")]
    except OSError:
        return []


def _take_back(folder: Path, before: set[str]) -> None:
    """Remove what was linked into ``folder`` since ``before``, and the folder (and the
    snapshots folder above it) when that leaves it empty."""
    for entry in sorted(set(_entries(folder)) - before, reverse=True):
        path = folder / entry
        try:
            path.rmdir() if path.is_dir() and not path.is_symlink() else path.unlink()
        except OSError:
            pass
    for empty in (folder, folder.parent):
        try:
            empty.rmdir()                  # only when empty
        except OSError:
            break


def _write_ref(name: HubName, commit: str) -> None:
    """refs/REVISION -> commit, atomically (the cache's own layout)."""
    ref = repo_folder(name.repo) / "refs" / name.ref
    ref.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=ref.parent, prefix=".ref-")
    with os.fdopen(handle, "w") as out:
        out.write(commit)
    os.replace(temporary, ref)


def _counting_bar(say: Say, step: str, before: int, total: int,
                  should_stop: Callable[[], bool]):
    """A stand-in for tqdm that huggingface_hub updates with each chunk of a file: it
    tells the bytes done of the whole download, and raises Cancelled when asked to stop
    (huggingface_hub then deletes the file's partial download)."""

    class CountingBar:
        def __init__(self, *args, initial: int = 0, **kwargs):
            self.n = initial or 0

        def update(self, n: int | float | None = 1) -> None:
            if should_stop():
                raise Cancelled("download cancelled")
            self.n += int(n or 0)
            say(step, before + self.n, total)

        def __enter__(self):
            return self

        def __exit__(self, *exc) -> None:
            pass

        def close(self) -> None:
            pass

        def set_postfix_str(self, *args, **kwargs) -> None:
            pass

        def refresh(self, *args, **kwargs) -> None:
            pass
    return CountingBar
