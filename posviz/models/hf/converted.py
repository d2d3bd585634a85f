"""A GGUF model de-quantized once: saved as a safetensors folder in posviz's cache, keyed
by the GGUF file's sha256, and read from there by every later load.

Why: transformers de-quantizes SmolLM2's 98 MB Q4_1 file tensor by tensor at each load
(60-90 s on a busy machine); the same float32 weights read from safetensors take seconds,
with bit-identical numbers (benchmarks/README.md, "The converted GGUF copy").
POSVIZ_GGUF_COPY=0 turns it off: every load de-quantizes again.

An entry, ``<cache>/gguf/<sha256>/``, holds what save_pretrained writes (config.json,
model.safetensors, the tokenizer's files) and conversion.json, written last: the GGUF's
name, size and sha256, the versions that converted it, and each file's size and sha256.
An entry is read only when every file it lists has the size and modification time
recorded (a file written since, cut short or gone, or no record: converted again; the
sha256s are not read again at each load: benchmarks/README.md says what they cost).
It is written into a temporary folder beside and renamed into place, so no load sees it
half done, by one process at a time (a lock file beside it; another waits and reads
it). Its tensors start on 64-byte boundaries (the header padded), as torch's own
memory does: read in place from the file, a weight at the file's own offset made the
one-row matmul of the head round otherwise (logits off by 3e-6).
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ...errors import Cancelled
from .hub import BUILDING, MATCHING, READING, READING_AGAIN, SAVING

RECORD = "conversion.json"
PACE = "pace.json"              # the last conversion's seconds per MB, on this machine
CONVERTING = "converting "      # a GGUF file's first load: said even where steps are not
WAITING_FOR_ANOTHER = "waiting for another posviz process converting this file"
# A conversion's steps by their words' start, counted or not (None: either), and their
# seconds in SmolLM2's conversion (its 98 MB GGUF file, STEPS_MB) on 2 shared cores, the
# mean of two (load 9 and 10-13: 99 s and 120 s; its model's building took 15.5 and
# 40 s): runtime.conversion_left's time left, and the estimate before any conversion
# here (SECONDS_PER_MB). The first "de-quantizing weights" is the model built; the
# counted one, its tensors.
STEPS = (("converting ", None, 1.3), (READING, None, 12.0), (BUILDING, None, 3.9),
         ("importing the model's code", None, 2.6), ("de-quantizing weights", False, 27.8),
         (READING_AGAIN, None, 15.8), (MATCHING, True, 20.4),
         ("de-quantizing weights", True, 8.3), (SAVING, None, 6.5))
STEPS_MB = 98.36
# de-quantizing and saving, seconds per MB of the GGUF file on 2 shared cores: STEPS'
# pace from a fifth (a quiet machine: 23.5 s for 98 MB) to 1.25 × (120 s at load 10-13)
SECONDS_PER_MB = tuple(sum(seconds for *_, seconds in STEPS) / STEPS_MB * spread
                       for spread in (0.2, 1.25))
SAVE_SECONDS_PER_MB = 0.009     # the copy's saving alone: 4.8-5 s for 538 MB (load 3-6)


@dataclass(frozen=True)
class Conversion:
    """A trusted entry: where it is and what it was made from."""

    folder: Path
    gguf_sha256: str
    record: dict

    def describe(self) -> str:
        """A few words for the model's provenance and facts (the folder is
        entry_for(sha256): a path would not wrap in the model panel)."""
        return f"converted once into posviz's cache (GGUF sha256 {self.gguf_sha256[:12]}…)"


def enabled() -> bool:
    return os.environ.get("POSVIZ_GGUF_COPY", "1") != "0"


def cache_root() -> Path:
    """$POSVIZ_CACHE, else $XDG_CACHE_HOME/posviz, else ~/.cache/posviz."""
    if os.environ.get("POSVIZ_CACHE"):
        return Path(os.environ["POSVIZ_CACHE"]).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base).expanduser() / "posviz"


def sha256_of(path: Path) -> str:
    with open(path, "rb") as file:
        return hashlib.file_digest(file, "sha256").hexdigest()


def entry_for(gguf_sha256: str) -> Path:
    return cache_root() / "gguf" / gguf_sha256


def trusted(folder: Path, gguf_sha256: str) -> Conversion | None:
    """The entry at ``folder`` when its record names this GGUF and every file it lists
    has its recorded size and modification time; else None."""
    try:
        record = json.loads((folder / RECORD).read_text(encoding="utf-8"))
        files = record["files"]
        if record["gguf"]["sha256"] != gguf_sha256 or "model.safetensors" not in files:
            return None
        for name, (size, modified, _) in files.items():
            stat = (folder / name).stat()
            if (stat.st_size, stat.st_mtime_ns) != (size, modified):
                return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return Conversion(folder, gguf_sha256, record)


def convert(gguf: Path, gguf_sha256: str, tokenizer, model, say) -> Conversion:
    """Save the de-quantized ``model`` (float32, read from ``gguf``) and its
    ``tokenizer`` as the entry of ``gguf_sha256``, recorded last; the entry."""
    import time

    final = entry_for(gguf_sha256)
    final.parent.mkdir(parents=True, exist_ok=True)
    size = sum(t.numel() * t.element_size() for t in (*model.parameters(), *model.buffers()))
    # its size and time said before (538 MB, 5 s said nothing), its bytes counted as they
    # are aligned (its 64-digit folder name, one unbreakable word, widened the load
    # panel past a 1024-pixel window: the cache's folder only)
    say(f"{SAVING} ({size / 1e6:,.0f} MB, {save_time(size)}) into {cache_root()}")
    began = time.monotonic()
    temporary = Path(tempfile.mkdtemp(prefix=f".{gguf_sha256[:12]}-", dir=final.parent))
    try:
        _save(model, tokenizer, temporary)              # one call (1 s), then counted:
        say(SAVING, 0, round(size / 1e6))               # its count's clock starts
        digests = {"model.safetensors": _align(temporary / "model.safetensors", say=say)}
        files = {p.name: [p.stat().st_size, p.stat().st_mtime_ns,
                          digests.get(p.name) or sha256_of(p)]
                 for p in sorted(temporary.iterdir()) if p.is_file()}
        (temporary / RECORD).write_text(json.dumps(
            {"gguf": {"name": gguf.name, "size": gguf.stat().st_size,
                      "sha256": gguf_sha256},
             "converted_by": _versions(), "dtype": "float32", "files": files},
            indent=1), encoding="utf-8")
        if final.exists():                       # a stale entry: replaced
            shutil.rmtree(final)
        os.replace(temporary, final)
        keep_pace(save_seconds_per_mb=(time.monotonic() - began) / max(size / 1e6, 1.0))
    except OSError:
        shutil.rmtree(temporary, ignore_errors=True)
        if trusted(final, gguf_sha256) is None:  # another process's copy is fine too
            raise
    except BaseException:          # Ctrl+C: its 538-629 MB half copy was left in the cache
        shutil.rmtree(temporary, ignore_errors=True)
        raise
    return trusted(final, gguf_sha256) or Conversion(final, gguf_sha256, {})


def _save(model, tokenizer, folder: Path) -> None:
    """save_pretrained of a model read from a GGUF file: transformers refuses to save a
    model it still counts as GGUF-quantized (its ``hf_quantizer``, its config's
    ``quantization_config``) though its weights are plain float32 tensors by now."""
    config = model.config.__dict__
    kept = model.hf_quantizer, config.pop("quantization_config", None)
    model.hf_quantizer = None
    try:
        model.save_pretrained(folder)
    finally:
        model.hf_quantizer = kept[0]
        if kept[1] is not None:
            config["quantization_config"] = kept[1]
    tokenizer.save_pretrained(folder)


CHUNK = 1 << 24                 # bytes copied at a time by _align


def _align(path: Path, boundary: int = 64, say=None) -> str:
    """Rewrite a safetensors file with its header padded (inside ``__metadata__``, spaces
    after it as the format allows) so that its data starts on a ``boundary``; the new
    file's sha256, taken as it is written (a second read of 538 MB: 1 s). ``say(SAVING,
    MB, MB)``: the megabytes written."""
    digest = hashlib.sha256()
    total = path.stat().st_size
    with open(path, "rb") as source:
        size = struct.unpack("<Q", source.read(8))[0]
        header = json.loads(source.read(size))
        text = json.dumps(header, separators=(",", ":")).encode("utf-8")
        text += b" " * (-(8 + len(text)) % boundary)
        aligned = path.with_suffix(".aligned")
        with open(aligned, "wb") as target:
            head = struct.pack("<Q", len(text)) + text
            target.write(head)
            digest.update(head)
            done = 8 + size
            while chunk := source.read(CHUNK):
                target.write(chunk)
                digest.update(chunk)
                done += len(chunk)
                if say is not None:
                    say(SAVING, round(done / 1e6), round(total / 1e6))
    os.replace(aligned, path)
    return digest.hexdigest()


def existing(gguf: Path) -> tuple[str, Conversion | None]:
    """(the GGUF file's sha256, its trusted entry or None)."""
    digest = sha256_of(gguf)
    return digest, trusted(entry_for(digest), digest)


def made(gguf: Path, gguf_sha256: str, family, say, should_stop) -> Conversion | None:
    """De-quantize ``gguf`` to float32 (told tensor by tensor, stopped when asked) and
    save it as its entry; the model read for it is freed. None when transformers kept
    the weights quantized (its GGUF kernels): nothing to copy."""
    with _converting_alone(gguf_sha256, say, should_stop):
        again = trusted(entry_for(gguf_sha256), gguf_sha256)
        if again is not None:         # another process converted it while this one waited
            return again
        return _made(gguf, gguf_sha256, family, say, should_stop)


@contextmanager
def _converting_alone(gguf_sha256: str, say, should_stop):
    """Hold the cache's lock on ``gguf_sha256``'s entry (a file beside it): two processes
    converting one file at once (two windows, the suite's workers on a fresh machine)
    both converted, and the second removed the first's entry to put its own while the
    first could be reading it. A wait for another process is told, and stopped when
    asked."""
    from filelock import FileLock, Timeout

    entry = entry_for(gguf_sha256)
    entry.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(entry.parent / f".{gguf_sha256[:12]}.lock")
    try:
        lock.acquire(timeout=0)
    except Timeout:
        say(WAITING_FOR_ANOTHER)
        while True:
            if should_stop():
                raise Cancelled("loading cancelled") from None
            try:
                lock.acquire(timeout=0.25)
                break
            except Timeout:
                pass
    try:
        yield
    finally:
        lock.release()


def _made(gguf: Path, gguf_sha256: str, family, say, should_stop) -> Conversion | None:
    import time

    from .loading import free_memory, read_model
    size, began = gguf.stat().st_size, time.monotonic()
    say(f"{CONVERTING}{gguf.name} once: de-quantizing it to float32 and saving the copy "
        f"in {cache_root()}, {conversion_time(size)} (later loads read the copy in "
        f"seconds)")
    tokenizer, model, _ = read_model(gguf.parent, {"gguf_file": gguf.name}, True, family,
                                     say, should_stop, "cpu", "float32")
    try:
        if any(str(p.dtype) != "torch.float32" for p in model.parameters()):
            return None
        conversion = convert(gguf, gguf_sha256, tokenizer, model, say)
        keep_pace((time.monotonic() - began) / (size / 1e6))
        return conversion
    finally:
        del model
        free_memory()


def pace_file() -> Path:
    return cache_root() / "gguf" / PACE


def keep_pace(seconds_per_mb: float | None = None, **more: float) -> None:
    """Record the pace of a conversion done on this machine, for the next estimate (of
    the GGUF file's MB), and ``more`` paces beside it (save_seconds_per_mb: of the
    copy's)."""
    try:
        kept = json.loads(pace_file().read_text(encoding="utf-8"))
        kept = kept if isinstance(kept, dict) else {}
    except (OSError, ValueError):
        kept = {}
    if seconds_per_mb is not None:
        kept["seconds_per_mb"] = seconds_per_mb
    kept.update(more)
    try:
        pace_file().write_text(json.dumps(kept), encoding="utf-8")
    except OSError:
        pass                            # an estimate's help only


def measured_pace(key: str = "seconds_per_mb") -> float | None:
    """Seconds per MB of the last conversion on this machine (pace_file), or None."""
    try:
        pace = float(json.loads(pace_file().read_text(encoding="utf-8"))[key])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return pace if 0 < pace < 1e3 else None


def save_time(size: int) -> str:
    """How long saving a converted copy of ``size`` bytes takes: "about 5-12 s", at this
    machine's last save's pace (-20 % to 2.5 ×: a load that rises moves it, 538 MB took
    4.8 s at load 3-6 and 11.7 s at load 5-9 here), else SAVE_SECONDS_PER_MB's up to 4 ×
    (19 s in a user's run told "about 5 s")."""
    pace = measured_pace("save_seconds_per_mb")
    spreads = (0.8, 2.5) if pace else (1.0, 4.0)
    return span_words(*(max(size / 1e6 * (pace or SAVE_SECONDS_PER_MB) * spread, 1.0)
                        for spread in spreads))


def conversion_seconds(size: int) -> tuple[float, float, str]:
    """(low, high, where) seconds converting a GGUF file of ``size`` bytes takes: at the
    pace of the last conversion on this machine (a shared machine's load moves it: -20 %
    to +50 %), else at STEPS' pace on the project's 2 cores (SECONDS_PER_MB)."""
    pace = measured_pace()
    rates, where = (((pace * 0.8, pace * 1.5), "at this machine's last conversion's pace")
                    if pace else (SECONDS_PER_MB, "on 2 cores"))
    return size / 1e6 * rates[0], size / 1e6 * rates[1], where


def conversion_time(size: int) -> str:
    """conversion_seconds in words: "about 20 s-2 min on 2 cores"."""
    low, high, where = conversion_seconds(size)
    return f"{span_words(low, high)} {where}"


def span_words(low: float, high: float) -> str:
    """"about 5-12 s", "about 20 s-2 min", "about 2-8 min"."""
    if high < 100:
        return f"about {low:.0f}-{high:.0f} s"
    return f"about {low / 60:.0f}-{high / 60:.0f} min" if low >= 60 else \
        f"about {low:.0f} s-{high / 60:.0f} min"


def aligned(model) -> None:
    """Move each weight that still lies off a 64-byte boundary (a tensor whose size is
    not a multiple of 64 bytes shifts those after it) into memory of its own."""
    for parameter in model.parameters():
        if parameter.data_ptr() % 64:
            parameter.data = parameter.data.clone()


def weights_said(gguf: Path, bundled: str, conversion: Conversion | None) -> str:
    """How a GGUF model's weights came to be: the bundled model's own words, else the
    file's quantization; and the converted copy they were read from."""
    said = bundled or f"de-quantized from a GGUF file ({quantization(gguf)})"
    return f"{said}; {conversion.describe()}" if conversion else said


def quantization(gguf: Path) -> str:
    """The type most of the file's tensors are stored in ("Q4_1"), from its header."""
    from ..formats.gguf_header import gguf_file_type
    value = gguf_file_type(gguf)
    try:
        from gguf import LlamaFileType
        return LlamaFileType(value).name.removeprefix("MOSTLY_").removeprefix("ALL_")
    except (ImportError, ValueError, TypeError):
        return "quantization unknown" if value is None else f"file type {value}"


def _versions() -> dict:
    from importlib.metadata import PackageNotFoundError, version

    from ...version import __version__
    found = {"posviz": __version__}
    for package in ("transformers", "gguf", "torch"):
        try:
            found[package] = version(package)
        except PackageNotFoundError:
            pass
    return found
