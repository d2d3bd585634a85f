"""Where posviz's resources are, and the guided scenarios among them.

Installed, the top-level ``resources/`` folder is the package data ``posviz/resources``;
in a checkout it is read where it is. Each scenario is a .posviz session file with a
title, an explanation (what to do, what to expect, why, and the paper it comes from)
and the state it starts in. No Qt and no torch here.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

# Session files are read lazily: the window's menus, before its first paint, need only
# resources_dir, not the models a session file's spec imports (~0.1 s).
if TYPE_CHECKING:
    from .session_file import SessionDocument

__all__ = ["resources_dir", "resource", "scenario_paths", "scenarios"]

_PACKAGE = Path(__file__).resolve().parents[1]          # posviz/


def resources_dir() -> Path:
    """posviz/resources when installed, else the checkout's top-level resources/."""
    for folder in (_PACKAGE / "resources", _PACKAGE.parent / "resources"):
        if (folder / "icons").is_dir():
            return folder
    return _PACKAGE / "resources"


def resource(*parts: str) -> Path:
    return resources_dir().joinpath(*parts)


def scenario_paths() -> list[Path]:
    """The scenario files, in the order they are meant to be taken (by file name)."""
    return sorted(resource("scenarios").glob("*.posviz"))


def scenarios() -> list[tuple[Path, SessionDocument]]:
    """Every scenario, read and checked (a broken one raises PosvizInputError)."""
    from .session_file import read
    return [(path, read(path)) for path in scenario_paths()]


def session_of(doc: SessionDocument, progress=None, online: bool = False,
               device: str = "cpu"):
    """The Session a document describes, its model built or loaded (torch is imported
    here; a pinned hub model downloaded at its commit when ``online`` and not cached);
    PosvizInputError when the model is missing or the document does not fit it."""
    from ..models.limits import guard
    from .session import Session
    spec = doc.spec        # its tokens (one a slot of its order) before its weights are read
    guard.check(spec.config if spec.is_builtin else spec.address, len(doc.order),
                offset=doc.positions.offset, device=device, dtype=spec.dtype,
                offloaded=bool(spec.offload_folder))
    return Session.from_document(doc, spec.load(progress, device=device, online=online))


def evaluate(session, should_stop=None):
    """The Evaluation the window shows for a session: its order against the original."""
    from ..analysis.engine import Engine
    return Engine(session.backend).evaluate(session.seq, session.order, session.positions,
                                            should_stop)
