"""Where exported figures go: the folder check, the image formats and the figure files
an export left standing, without Qt.

The window's export and ``posviz export`` share these, so a folder that cannot be
written is refused with the same one-line message everywhere, and both name the older
figure files beside a new export (nothing is deleted: the folder is the user's).
"""
from __future__ import annotations

import csv
import itertools
import os
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from pathlib import Path
from typing import Callable

import numpy as np

from ..errors import PosvizInputError, argument, check_whole_number, raise_held

IMAGE_FORMATS = ("png", "svg", "pdf")
FIGURE_FORMATS = IMAGE_FORMATS + ("csv",)      # what one figure can be written as
WIDTHS = (16, 20000)                           # pixels a PNG may be wide, both included
DEFAULT_WIDTH = 1600


def check_width(width: int | None, what: str = "the width") -> int | None:
    """The PNG width in pixels (None: as on screen); PosvizInputError outside WIDTHS."""
    low, high = WIDTHS
    if width is not None and (isinstance(width, bool) or not isinstance(width, int)):
        raise PosvizInputError(f"{what} must be a whole number (got {width!r})")
    if width is not None and not low <= width <= high:
        raise PosvizInputError(f"{what} must be from {low} to {high} pixels (got "
                               f"{width!r})")
    return width


def check_sizes(width, dpi, png: bool, given: str) -> None:
    """A PNG's ``width`` or ``dpi`` (the command line's --width or --dpi) checked: each
    in its range, never both (dpi sizes a PNG instead of its width), and each only where
    a PNG is written (``png``; an SVG or a PDF has no dots), else refused naming what
    was ``given`` instead ("x.svg", "--format svg")."""
    check_width(width, argument("width"))
    if dpi is not None:
        check_whole_number("dpi", dpi)
    if dpi is not None and not 50 <= dpi <= 600:
        raise PosvizInputError(f"{argument('dpi')} must be from 50 to 600 (got {dpi!r})")
    if width is not None and dpi is not None:
        raise PosvizInputError(f"give {argument('width')} or {argument('dpi')}, not both: "
                               f"{argument('dpi')} sizes a PNG instead of its width")
    for name, value in (("width", width), ("dpi", dpi)):   # else silently not read
        if value is not None and not png:
            raise PosvizInputError(f"{argument(name)} applies to PNG files only (got "
                                   f"{given})")


def refuse_without_out(out, options: dict) -> None:
    """The options of what ``--out`` writes (``options``: each flag's value, None when
    not given) refused when ``out`` is not given: nothing is written, so they would be
    silently ignored."""
    given = [] if out else [flag for flag, value in options.items() if value is not None]
    if given:
        verb = "applies" if len(given) == 1 else "apply"
        raise PosvizInputError(f"{', '.join(given)} only {verb} with --out (nothing is "
                               f"written without it)")


def check_save(path, width, dpi) -> Path:
    """A figure's ``save(path, width=, dpi=)`` checked before it is drawn, in the words
    the command line's --width and --dpi are refused in: ``path`` as a Path, in a
    folder that exists."""
    if not isinstance(path, (str, os.PathLike)):
        raise PosvizInputError(f"{argument('path')} must be a file's path (got "
                               f"{type(path).__name__})")
    path = Path(path)
    check_sizes(width, dpi, path.suffix.lower() == ".png", path.name)
    if path.is_dir():                   # (it said "Is a directory" once drawn)
        raise PosvizInputError(f"{argument('path', str(path))}: {path} is a folder, "
                               f"not a file")
    if not path.parent.is_dir():        # (it said "could not write" after drawing)
        why = (f"{path.parent} is a file, not a folder" if path.parent.exists()
               else f"the folder {path.parent} does not exist")
        raise PosvizInputError(f"cannot write {path}: {why}")
    return path


def writing_name(path: Path) -> Path:
    """Where ``path`` is written before it is whole (whole_file): a hidden name beside
    it, this process's own."""
    return path.with_name(f".{path.stem}.writing-{os.getpid()}{path.suffix}")


def whole_file(path, write: Callable[[Path], object]) -> Path:
    """Write ``path`` whole or not at all: ``write(temporary)`` writes a file of the same
    suffix in the same folder (".NAME.writing-PID.SUFFIX"), renamed to ``path`` once
    whole (os.replace, one step on one file system) and removed when the writing fails
    or is stopped (Ctrl+C, also one held while it was written: errors.raise_held), so
    no file is left half written under its name (an export
    stopped mid-CSV left 13 MB of 26 under the final name). Every figure and table
    posviz writes passes here: ``posviz export``, File > Export, a figure's save from
    Python, compare and extend --out. An OSError names ``path``, not the temporary."""
    path = Path(path)
    temporary = writing_name(path)
    try:
        write(temporary)
        raise_held()            # a Ctrl+C held while it was written: not renamed, removed
        os.replace(temporary, path)
    except BaseException as error:
        with suppress(OSError):
            temporary.unlink()
        if isinstance(error, OSError) and not isinstance(error, PosvizInputError):
            raise OSError(error.errno, error.strerror or str(error), str(path)) from None
        raise
    return path


def parse_formats(text: str) -> list[str]:
    """'png, SVG' -> ['png', 'svg']: the image formats asked for, each once, in order."""
    formats = [part.strip().lower().lstrip(".") for part in text.split(",") if part.strip()]
    bad = [f for f in formats if f not in IMAGE_FORMATS]
    if not formats or bad:
        raise PosvizInputError(f"--format takes png, svg, pdf or a list such as png,svg "
                               f"(got {text!r})")
    return list(dict.fromkeys(formats))


def check_formats(formats) -> list[str]:
    """('PNG', '.svg') -> ['png', 'svg']; PosvizInputError naming one not in IMAGE_FORMATS
    (none at all is allowed: a folder of CSV tables only)."""
    formats = [str(f).lower().lstrip(".") for f in formats]
    unknown = next((f for f in formats if f not in IMAGE_FORMATS), None)
    if unknown:
        raise PosvizInputError(f"unknown figure format {unknown!r} "
                               f"(use {', '.join(IMAGE_FORMATS)})")
    return formats


def left_behind(folder, written, names) -> list[Path]:
    """The files in ``folder`` named as an export names a figure (``<name>.<format>`` for
    each of ``names`` and FIGURE_FORMATS) that are not among ``written``: from an earlier
    export, they may show another model or order than the files beside them. By name."""
    done = {Path(path).resolve() for path in written}
    found = (Path(folder) / f"{name}.{fmt}" for name in names for fmt in FIGURE_FORMATS)
    return sorted((path for path in found if path.is_file() and path.resolve() not in done),
                  key=lambda path: path.name)


def check_folder(folder: Path | str, name: str | None = None) -> Path:
    """Create the folder if needed; PosvizInputError naming it (led by the argument
    ``name`` as the user wrote it, when given) if it cannot be written, or for an empty
    name (``--out ""``: the current folder, which nobody asked for)."""
    if isinstance(folder, str) and not folder.strip():
        raise PosvizInputError(f"{argument(name or 'out')} needs a folder's name "
                               f"(got {folder!r})")
    given = f"{argument(name, str(folder))}: " if name else ""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise PosvizInputError(f"{given}{folder} is a file, not a folder")
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise PosvizInputError(f"{given}cannot create the folder {folder}: "
                               f"{error.strerror or error}") from None
    if not folder.is_dir():
        raise PosvizInputError(f"{given}{folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PosvizInputError(f"{given}cannot write into the folder {folder}: "
                               f"permission denied")
    return folder


def check_file(path, name: str) -> Path:
    """Refuse, before any work, a file to write at ``path`` (the argument ``name``'s)
    that cannot be: a folder, a folder that does not exist, or one where no file can be
    made (check_writes)."""
    path = Path(path)
    if path.is_dir():
        raise PosvizInputError(f"{argument(name, str(path))}: {path} is a folder, not a file")
    folder = path.resolve().parent
    if not folder.is_dir():
        raise PosvizInputError(f"{argument(name, str(path))}: no such folder {folder}")
    check_writes(folder, argument(name, str(path)))
    return path


def check_new_folder(path, name: str) -> None:
    """Refuse, before any work, a folder to make and write at ``path`` (the argument
    ``name``'s) that cannot be: a file, or under a folder where nothing can be made."""
    given, path = argument(name, str(path)), Path(path).absolute()
    nearest = next(above for above in (path, *path.parents) if above.exists())
    if not nearest.is_dir():            # the path itself, or a file it would be made in
        raise PosvizInputError(f"{given}: {nearest} is a file, not a folder")
    check_writes(nearest, given)


def check_writes(folder: Path, given: str) -> None:
    """Refuse (naming ``given``) a ``folder`` where no file can be made: one is made and
    removed, as session_file.write makes its own (/proc, a read-only disk, no
    permission: os.access says yes to root)."""
    import tempfile
    try:
        handle, made = tempfile.mkstemp(prefix=".posviz-", suffix=".tmp", dir=folder)
    except OSError as error:
        raise PosvizInputError(f"{given}: cannot write into {folder}: "
                               f"{error.strerror or error}") from None
    os.close(handle)
    os.unlink(made)


ROWS_BETWEEN_STOPS = 4096      # rows of a table written between two looks for a Ctrl+C
# told (bytes written so far, share of the rows written) at each look: tables_told
_TABLE_TOLD: ContextVar[Callable[[int, float], None] | None] = ContextVar("table_told",
                                                                           default=None)


@contextmanager
def tables_told(told: Callable[[int, float], None]):
    """While in the block, each table write_table writes tells ``told(bytes written,
    share of its rows written)`` every ROWS_BETWEEN_STOPS rows (the window's export
    moves its bar and time left by it: SmolLM2's 68 MB mosaic table stood 9 s untold).
    ``told`` may raise to stop the writing (Cancel)."""
    token = _TABLE_TOLD.set(told)
    try:
        yield
    finally:
        _TABLE_TOLD.reset(token)


def write_table(handle, dims, data, coords, labels) -> None:
    """Write arrays that share the dimensions ``dims`` as one wide CSV table (a
    figure's .csv), looking for a held Ctrl+C between rows (errors.raise_held) and
    telling how far it is (tables_told)."""
    writer = csv.writer(handle)
    header = []
    for dim in dims:
        if dim == "token" and dim in labels:       # not "token,token_token"
            header += ["index", "token"]
            continue
        header.append(dim)
        if dim in labels:
            header.append(f"{dim}_token")
    names = list(data)
    writer.writerow(header + names)
    if not names:
        return
    shape = data[names[0]].shape
    rows, told = max(int(np.prod(shape)), 1), _TABLE_TOLD.get()
    for k, index in enumerate(itertools.product(*(range(s) for s in shape))):
        if not k % ROWS_BETWEEN_STOPS:
            raise_held()        # Ctrl+C: a 65 MB table went on 3-6 s (a user's run)
            if told is not None and k:
                told(handle.tell(), k / rows)
        row = []
        for dim, i in zip(dims, index):
            row.append(coords[dim][i] if dim in coords else i)
            if dim in labels:
                row.append(labels[dim][i])
        writer.writerow(row + [_number(data[name][index]) for name in names])


def _number(value) -> str:
    value = float(value)
    return "" if np.isnan(value) else repr(value)
