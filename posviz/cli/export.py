"""``posviz export``: write every figure of one order to a folder, without a window.

    posviz export [model options] --text TEXT --order I,J,... --out DIR
                  [--format png,svg,pdf] [--width PX | --dpi DPI] [--no-csv]
                  [--layer L] [--head H]
    posviz export --session FILE.posviz --out DIR [...]

``--session`` draws what the window shows for a saved session (its layer, head, mosaic
and range too, unless --layer or --head is given); ``--save-session FILE`` writes what
was drawn as a session file.

PNGs share one scale of the figures' sizes on screen (their text one size): each at its
own size (own_size.figure_panel), or the widest ``--width`` pixels wide, or each is
painted at ``--dpi``.

Files written: ``<name>.png``, ``.svg`` (``.pdf`` when asked) and ``.csv`` for every
figure, named after it (stable names; each figure declares its own on its class, and
gui/plots/figures.py lists them in the order of the window's tabs).

Each CSV holds the numbers its figure shows, one row per index, after ``# key: value``
lines saying what produced it (posviz version, model, text, order, layer, head); PNGs
carry the same in their text chunks, SVGs in a <metadata> element and PDFs in their XMP
metadata. Every path written (the session file too) is printed on stdout, one per line,
as the file is whole (each is written under a temporary name and renamed: Ctrl+C leaves
none half written, document.files.whole_file); --progress tells "writing 9 figures: 3 of 9";
figure files in the folder that this export did not write (left by an earlier one) are
named in one line on stderr. Bad input exits with status 2 and one line.

The figures are the window's own plots panel, driven headlessly; Qt and the plots are
imported inside ``run`` only, so the rest of the command line never loads them.
"""
from __future__ import annotations

import sys
from pathlib import Path

from ..document.files import check_folder, check_sizes, left_behind, parse_formats
from ..errors import argument, held_interrupt
from ..models import reached
from ..models.limits.guard import check_view
from .export_drawing import Drawing, maps_run_again, model_shape, words
from .options import add_model_arguments, checked, progress
from .report import add_session_arguments, evaluate_command, save_session


def add_command(subparsers) -> None:
    parser = subparsers.add_parser(
        "export",
        help="write every figure as PNG/SVG/PDF (and its numbers as CSV) to a folder")
    add_model_arguments(parser)
    parser.add_argument("--out", required=True, metavar="DIR", help="folder to write into")
    parser.add_argument("--format", default="png,svg", metavar="png,svg",
                        help="image formats, comma-separated, of png, svg and pdf "
                             "(default: png,svg)")
    parser.add_argument("--width", type=int, default=None, metavar="PX",
                        help="width in pixels of the widest PNG; the others are drawn at "
                             "the same scale, so text has one size in every file "
                             "(default: each figure at its own size, as Python's "
                             "figure(name).save draws it)")
    parser.add_argument("--dpi", type=int, default=None, metavar="DPI",
                        help="instead of --width: every PNG at this many dots per inch "
                             "of its figure's size on screen, tagged with it "
                             "(e.g. 300 for print)")
    parser.add_argument("--no-csv", action="store_true", help="do not write the CSV tables")
    add_session_arguments(parser)
    parser.add_argument("--layer", type=int, default=None,
                        help="layer (1..L) of the attention and token-change figures "
                             "(default: 1)")
    parser.add_argument("--head", type=int, default=None,
                        help="head (0..h-1) of the attention figure (default: 0)")
    parser.set_defaults(func=run)


def import_plots(say) -> None:
    """The plots' modules (Qt, pyqtgraph) imported, told each 2 s while they load (the
    first line of an export came 3.65-5.1 s after its start under load: this import,
    untold); nothing when they are imported already."""
    if "posviz.gui.plots.figures" not in sys.modules:
        with held_interrupt(), reached.ticking(say, "importing the plots' modules"):
            from ..gui.plots import figures  # noqa: F401   (Ctrl+C inside Qt's: fatal)


def run(args) -> int:
    formats = parse_formats(args.format)
    check_sizes(args.width, args.dpi, "png" in formats,     # in figure.save's words
                argument("format", args.format))
    say = progress(args)
    # before any model is built or loaded: a file, or a folder that cannot be made, was
    # refused after the whole run (4-7 s; with SmolLM2 a minute: a user's run)
    made = missing_folders(args.out)
    folder = check_folder(args.out, "out")
    try:
        if getattr(args, "session", None) is None:
            checked(args)               # refused before the plots' modules are imported
        import_plots(say)               # (planning the drawing names the figures)
        shape = model_shape(args)       # (layers, heads) as its config says, or None
        told = Drawing(say, words(args), shape=shape) if say is not None else None
        # the forwards' time left holds the drawing and writing after them ("about 1 s
        # left" was told 20 s before a 3,000-word export's end)
        with reached.afterwards(told.left() if told else 0.0), \
                reached.more_forwards(lambda n: int(maps_run_again(shape, n, args))):
            report = evaluate_command(args)
        session, ev = report.session, report.evaluation
        L, h = ev.reference.n_layers, ev.reference.n_heads
        check_view(L, h, args.layer, args.head)     # a --session's model: known only now
    except BaseException:           # refused or stopped: the folders made for it go
        for made_folder in made:
            try:
                made_folder.rmdir()     # only when empty
            except OSError:
                break
        raise
    # the session's view (as the window shows it: the first layer and head without one)
    view = session.selection.clamped(L, h)
    session.select(view.replace(layer=view.layer if args.layer is None else args.layer,
                                head=view.head if args.head is None else args.head))

    chosen = session.selection
    # a long input's maps are not kept whole: the head drawn and the mosaic's tiles come
    # from the order run again (api.Report.run_for), as the window does for its screen
    if told is not None:
        told.tokens = len(ev.seq)
    with reached.afterwards(told.left() if told else 0.0), reached.planning(1):
        maps = report.run_for(chosen.layer, chosen.head, say)
    if say is not None:            # 10-18 s for a 3,000-word text, told nothing before
        say("drawing the figures, each at its own size")
    panel = None                   # closed whatever stops it: a Ctrl+C held while it drew
    try:                           # left it open, and Qt's teardown crashed (status -11)
        with held_interrupt() as held:  # Ctrl+C raised where Qt is not: between files
            from ..gui.plots import own_size
            from ..gui.plots.figures import EXPORTED
            from ..gui.plots.headless import drawn_panel, quiet_platform_notes
            if told is not None:
                told.begin()
            with own_size.counting(told.drawing if told else lambda *_: None):
                panel = drawn_panel(session, *maps)
            held.check()
            if told is not None:   # (laying the panel out is Qt's too)
                told.drew_panel(panel, formats + ([] if args.no_csv else ["csv"]))
                told.folder = folder
            with quiet_platform_notes(), \
                    own_size.counting(told.drawing if told else lambda *_: None):
                written = panel.export_all(    # whole: Ctrl+C leaves no half-written file
                    folder, formats, csv=not args.no_csv, dpi=args.dpi, width=args.width,
                    told=lambda *now: (held.check(), told is not None and told.writing(*now)),
                    wrote=lambda path: print(path, flush=True))
            if told is not None:
                told.close()
            left_out = not_written(panel, written)      # the panel's layout: Qt's
        if left_out:
            print(f"posviz: not written, as they plot nothing for this input: "
                  f"{'; '.join(left_out)}", file=sys.stderr)
        older = left_behind(folder, written, EXPORTED)
        if older:
            sys.stdout.flush()
            print(f"posviz: older figure files in {folder}, not written by this export: "
                  f"{', '.join(path.name for path in older)}", file=sys.stderr)
    finally:
        if told is not None:
            told.close()
        if panel is not None:
            with held_interrupt():       # its queued calls run while it lives, then it goes
                from PySide6 import QtCore, QtWidgets
                QtWidgets.QApplication.processEvents()
                panel.close()
                panel.deleteLater()
                QtCore.QCoreApplication.sendPostedEvents(None,
                                                         QtCore.QEvent.Type.DeferredDelete)
    for path in save_session(args, session):
        print(path)
    sys.stdout.flush()
    return 0



def missing_folders(out) -> list[Path]:
    """The folders check_folder would make for ``out``, innermost first."""
    if not isinstance(out, str) or not out.strip():
        return []
    folder, missing = Path(out).absolute(), []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing


def not_written(panel, written) -> list[str]:
    """The figures an export left out, each "name (what it says instead)"."""
    from ..gui.plots.figures import FIGURES
    stems = {Path(path).stem for path in written}
    return [f"{name} ({' '.join(panel.laid_out(name).message.text().split())})"
            for name in FIGURES if name not in stems]
