"""``.posviz`` session files: the whole document as readable, diffable JSON.

A file holds the format name and version, the text and its tokens, their order, the
position options, the model (the built-in model's config and, when trained, its weights;
or a pretrained model's source, the hub commit it came from, and a hash of its
config.json, so a changed model is reported), the view
selection, and an optional title and note. ``read`` checks everything before anything
is used: a newer version, broken JSON, an order that is not a permutation of the tokens
or an unknown key is one PosvizInputError line. ``write`` is atomic: a temporary file in
the same folder, flushed, then ``os.replace``, so a failed save leaves the old file.

No Qt and no torch here: the window and the command line both read and write through it.
"""
from __future__ import annotations

import hashlib
import json
import os
import secrets
import stat
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from ..errors import PosvizInputError
from ..models.config import ModelConfig, Positions
from .spec import MOSAIC_MODES, ModelSpec, Selection

__all__ = ["FORMAT", "VERSION", "SUFFIX", "SessionDocument", "config_hash", "document_of",
           "from_dict", "read", "same_content", "write", "dumps"]

FORMAT = "posviz-session"
VERSION = 1
SUFFIX = ".posviz"
KEYS = ("format", "version", "title", "note", "text", "tokens", "order", "positions",
        "model", "view")
REQUIRED = ("format", "version", "text", "order", "model")


@dataclass(frozen=True)
class SessionDocument:
    """What a .posviz file holds, checked, before any model is loaded."""

    text: str
    order: tuple[int, ...]                # (n,) original index per slot
    spec: ModelSpec
    tokens: tuple[str, ...] = ()          # () when the file does not list them
    positions: Positions = Positions()
    selection: Selection = Selection()
    title: str = ""
    note: str = ""
    config_sha256: str = ""               # a pretrained model's config.json, when known

    def to_dict(self) -> dict:
        model = self.spec.to_dict()
        if not self.spec.is_builtin and self.config_sha256:
            model["config_sha256"] = self.config_sha256
        doc = {"format": FORMAT, "version": VERSION}
        if self.title:
            doc["title"] = self.title
        if self.note:
            doc["note"] = self.note
        positions = asdict(self.positions)
        if not positions["literal"]:        # written only when on: older files stay as they were
            del positions["literal"]
        doc.update({"text": self.text, "tokens": list(self.tokens), "order": list(self.order),
                    "positions": positions, "model": model,
                    "view": asdict(self.selection)})
        return doc

    def replace(self, **changes) -> "SessionDocument":
        from dataclasses import replace
        return replace(self, **changes)


def same_content(doc: SessionDocument, other: SessionDocument) -> bool:
    """True when the two hold the same work: text, order, positions, model, title and
    note (what is looked at, the tokens listed and the config hash do not count)."""
    def work(d):
        return d.replace(selection=Selection(), tokens=(), config_sha256="")
    return work(doc) == work(other)


def config_hash(source: str) -> str:
    """sha256 of a pretrained model's config.json (of a GGUF file's name and size), or ""
    when the model cannot be found (without the network). ``source`` is a spec's
    address."""
    try:
        from ..models.hf.sources import resolve
        folder, gguf_file, _ = resolve(source)
        if gguf_file is not None:
            path = folder / gguf_file
            data = f"{gguf_file}:{path.stat().st_size}".encode()
        else:
            data = (folder / "config.json").read_bytes()
    except (OSError, ValueError):
        return ""
    return hashlib.sha256(data).hexdigest()


def model_mismatch(doc: SessionDocument) -> str | None:
    """One line when the pretrained model found now is not the one the file was saved
    with (its config.json changed); None when it matches or nothing can be compared."""
    if doc.spec.is_builtin or not doc.config_sha256:
        return None
    now = config_hash(doc.spec.address)
    if now and now != doc.config_sha256:
        return (f"{doc.spec.name} differs from the model this session was saved with "
                f"(its config.json changed): the numbers may differ")
    return None


def document_of(session, title: str = "", note: str = "") -> SessionDocument:
    """The document of a live ``document.session.Session``; a hub model's spec is pinned to
    the commit its files came from, so the file loads that revision anywhere."""
    spec = session.spec.pinned(getattr(session.backend, "revision", ""))
    return SessionDocument(
        text=session.text, order=tuple(int(i) for i in session.order), spec=spec,
        tokens=tuple(session.tokens), positions=session.positions,
        selection=session.selection, title=title, note=note,
        config_sha256="" if spec.is_builtin else config_hash(spec.address))


# -- reading ----------------------------------------------------------------------------
def _unknown(given, allowed, where: str) -> None:
    extra = [key for key in given if key not in allowed]
    if extra:
        raise PosvizInputError(f"unknown key {extra[0]!r} in {where} (known: "
                               f"{', '.join(allowed)})")


def _mapping(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise PosvizInputError(f"{where} must be a JSON object")
    return value


def _string(value, where: str) -> str:
    if not isinstance(value, str):
        raise PosvizInputError(f"{where} must be a string")
    return value


def _model(value) -> tuple[ModelSpec, str]:
    model = _mapping(value, "'model'")
    kind = model.get("kind")
    if kind == "builtin":
        _unknown(model, ("kind", "config", "weights"), "'model'")
        config = _mapping(model.get("config", {}), "'model.config'")
        names = [f.name for f in fields(ModelConfig)]
        _unknown(config, names, "'model.config'")
        weights = _string(model.get("weights", "random"), "'model.weights'").strip()
        try:
            return ModelSpec.builtin(ModelConfig(**config).validate(), weights), ""
        except TypeError as error:
            raise PosvizInputError(f"'model.config' is invalid: {error}") from None
    if kind == "pretrained":
        _unknown(model, ("kind", "source", "revision", "label", "config_sha256", "dtype",
                         "offload_folder"), "'model'")
        source = _string(model.get("source"), "'model.source'").strip()
        if not source:
            raise PosvizInputError("'model.source' is empty")
        label = _string(model.get("label", ""), "'model.label'")
        revision = _string(model.get("revision", ""), "'model.revision'").strip()
        digest = _string(model.get("config_sha256", ""), "'model.config_sha256'")
        dtype = _string(model.get("dtype", "float32"), "'model.dtype'")
        offload = _string(model.get("offload_folder", ""), "'model.offload_folder'")
        return ModelSpec.pretrained(source, label, revision, dtype, offload), digest
    raise PosvizInputError(f"'model.kind' must be 'builtin' or 'pretrained' (got {kind!r})")


def _order(value, tokens: tuple[str, ...]) -> tuple[int, ...]:
    if not isinstance(value, list) or not all(
            isinstance(i, int) and not isinstance(i, bool) for i in value):
        raise PosvizInputError("'order' must be a list of whole numbers")
    n = len(tokens) if tokens else len(value)
    if sorted(value) != list(range(n)):
        raise PosvizInputError(f"'order' is not a permutation of the {n} tokens "
                               f"(0..{n - 1}, each once)")
    return tuple(value)


def _selection(value) -> Selection:
    view = _mapping(value, "'view'")
    names = [f.name for f in fields(Selection)]
    _unknown(view, names, "'view'")
    checks = {"layer": int, "head": int, "tab": int, "mosaic": str,
              "difference_range": (int, float)}
    for name, kind in checks.items():
        if name in view and (isinstance(view[name], bool) or
                             not isinstance(view[name], kind)):
            raise PosvizInputError(f"'view.{name}' has the wrong type")
    if view.get("mosaic", "difference") not in MOSAIC_MODES:
        raise PosvizInputError(f"'view.mosaic' must be one of {', '.join(MOSAIC_MODES)}")
    if view.get("layer", 1) < 1 or view.get("head", 0) < 0 or view.get("tab", 0) < 0:
        raise PosvizInputError("'view' has a layer below 1 or a negative head or tab")
    return Selection(**view)


def from_dict(doc) -> SessionDocument:
    """A checked SessionDocument; PosvizInputError (one line) for anything wrong."""
    doc = _mapping(doc, "a session file")
    if doc.get("format") != FORMAT:
        raise PosvizInputError(f"not a posviz session (its 'format' is not {FORMAT!r})")
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise PosvizInputError("'version' must be a whole number from 1")
    if version > VERSION:
        raise PosvizInputError(f"the session was saved by a newer posviz (format version "
                               f"{version}; this posviz reads up to {VERSION})")
    _unknown(doc, KEYS, "the session")
    missing = [key for key in REQUIRED if key not in doc]
    if missing:
        raise PosvizInputError(f"the session has no {missing[0]!r}")
    text = _string(doc["text"], "'text'")
    if not text.strip():
        raise PosvizInputError("the session's text is empty")
    tokens = doc.get("tokens", [])
    if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
        raise PosvizInputError("'tokens' must be a list of strings")
    tokens = tuple(tokens)
    order = _order(doc["order"], tokens)
    positions = _mapping(doc.get("positions", {}), "'positions'")
    _unknown(positions, ("mode", "offset", "literal"), "'positions'")
    try:
        where = Positions(**positions).validate()
    except TypeError as error:
        raise PosvizInputError(f"'positions' is invalid: {error}") from None
    spec, digest = _model(doc["model"])
    return SessionDocument(
        text=text, order=order, spec=spec, tokens=tokens, positions=where,
        selection=_selection(doc.get("view", {})),
        title=_string(doc.get("title", ""), "'title'"),
        note=_string(doc.get("note", ""), "'note'"), config_sha256=digest)


def loads(text: str) -> SessionDocument:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as error:
        raise PosvizInputError(json_problem(text, error)) from None
    return from_dict(doc)


def json_problem(text: str, error: json.JSONDecodeError) -> str:
    """What is wrong with a session file's JSON, in whole words (json's own end in "at",
    its position cut off: "Unterminated string starting at")."""
    where = f"line {error.lineno}, column {error.colno}"
    if error.msg.startswith("Unterminated string"):
        return f"not valid JSON: it ends early, in a string begun at {where} (the file " \
               f"may be truncated)"
    if error.pos >= len(text.rstrip()):
        return f"not valid JSON: it ends early, at {where} (the file may be truncated)"
    return (f"not valid JSON at {where}: {error.msg.removesuffix(' at').lower()} (the file "
            f"may be corrupt)")


def read(path) -> SessionDocument:
    """Read and check a .posviz file; PosvizInputError names the file and the problem."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PosvizInputError(f"{path}: no such file") from None
    except UnicodeDecodeError:
        raise PosvizInputError(f"{path}: not a posviz session (not UTF-8 text)") from None
    except OSError as error:
        raise PosvizInputError(f"{path}: {error.strerror or error}") from None
    try:
        return loads(text)
    except PosvizInputError as error:
        raise PosvizInputError(f"{path.name}: {error}") from None


# -- writing ----------------------------------------------------------------------------
def dumps(doc: SessionDocument) -> str:
    """Indented JSON with one line per list (tokens, order), for readable diffs."""
    data = doc.to_dict()
    text = json.dumps(data, indent=2, ensure_ascii=False)
    for key in ("tokens", "order"):          # a list on one line, not one item per line
        one_line = json.dumps(data[key], ensure_ascii=False)
        block = json.dumps({key: data[key]}, indent=2, ensure_ascii=False)[2:-2]
        text = text.replace(block, f'  "{key}": {one_line}', 1)
    return text + "\n"


def _create_beside(path: Path) -> tuple[int, str]:
    """A new temporary file beside ``path``, open for writing, with the mode a new file
    gets from the user's umask (mkstemp's is 0600: unreadable to a class sharing the
    folder), or the mode of the file it will replace."""
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        mode = None
    while True:
        temporary = path.parent / f".{path.name}.{secrets.token_hex(4)}.tmp"
        try:
            handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue
        if mode is not None:
            os.chmod(temporary, mode)
        return handle, str(temporary)


def write(path, doc: SessionDocument) -> Path:
    """Write atomically: a temporary file beside ``path``, synced, then renamed over it.
    On any failure the old file (if any) is left as it was and the temporary removed."""
    path = Path(path)
    text = dumps(doc)
    try:
        handle, temporary = _create_beside(path)
    except OSError as error:
        raise PosvizInputError(f"cannot write into {path.parent}: "
                               f"{error.strerror or error}") from None
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except BaseException as error:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        if isinstance(error, OSError):
            raise PosvizInputError(f"cannot save {path}: {error.strerror or error}") from None
        raise
    return path
