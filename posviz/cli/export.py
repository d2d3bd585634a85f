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
import threading
import time
from pathlib import Path

from ..document.files import check_folder, check_sizes, left_behind, parse_formats
from ..errors import argument, held_interrupt
from ..api.steps import layer_ticks, quiet
from ..models import reached
from ..models.limits.guard import check_view
from .options import add_model_arguments, progress
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


def run(args) -> int:
    formats = parse_formats(args.format)
    check_sizes(args.width, args.dpi, "png" in formats,     # in figure.save's words
                argument("format", args.format))
    say = progress(args)
    told = Drawing(say, words(args)) if say is not None else None
    # before any model is built or loaded: a file, or a folder that cannot be made, was
    # refused after the whole run (4-7 s; with SmolLM2 a minute: a researcher's trial)
    made = missing_folders(args.out)
    folder = check_folder(args.out, "out")
    try:
        # the forwards' time left holds the drawing and writing after them ("about 1 s
        # left" was told 20 s before a 3,000-word export's end)
        with reached.afterwards(told.left() if told else 0.0):
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
    with reached.afterwards(told.left() if told else 0.0), reached.planning(1), \
            layer_ticks(session.backend, say or quiet, HEAD_RUN):
        if say is not None and runs_again(report, chosen.layer, chosen.head):
            say(HEAD_RUN)
        maps = report.run_for(chosen.layer, chosen.head)
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



HEAD_RUN = "running the chosen order again, keeping the head drawn and the mosaic's tiles"
# Seconds each part of an export took here after its forwards (2 cores, load 2-8, 1,029
# and 3,064 tokens): the panel of all the figures; a figure of square maps drawn again
# in a panel of its own; each file, the attention map's table growing with the tokens
VIEWS_S, PANEL_S = (0.3, 0.25), (0.8, 0.1)    # seconds, and more per 1,000 tokens
OWN_PANEL_S, FILE_S = 1.8, 0.1
WATCH_S = 0.25      # seconds between looks at a slow file's size
PRIOR_S = 3.0       # the seconds planned that weigh as much as those measured, in a pace
FILE_SLOW_S = {"attention.csv": lambda n: 1.2 + n / 1000 * 0.9,
               "attention_mosaic.csv": lambda n: 0.6,
               "relative_profile.png": lambda n: 0.25}


def missing_folders(out) -> list[Path]:
    """The folders check_folder would make for ``out``, innermost first."""
    if not isinstance(out, str) or not out.strip():
        return []
    folder, missing = Path(out).absolute(), []
    while not folder.exists() and folder != folder.parent:
        missing.append(folder)
        folder = folder.parent
    return missing


def runs_again(report, layer: int, head: int) -> bool:
    """Does the report run its order again for ``layer``'s ``head`` (api.Report.run_for:
    a long input's maps are not kept whole)?"""
    ev = report.evaluation
    return ev.comparison.attention_aligned is None and not (
        ev.kept is not None and ev.kept[:2] == (layer - 1, head))


def words(args) -> int:
    """The text's words, as the tokens' estimate before the tokenizer reads them."""
    text = getattr(args, "text", None)
    path = getattr(args, "text_file", None)
    if text is None and path not in (None, "-"):
        try:
            text = Path(path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = None
    return len(text.split()) if text else 1000


class Drawing:
    """An export's drawing and writing told on --progress, with the time left of the
    whole command: "drawing figure 3 of 7: attention, about 8 s left" as each figure is
    drawn at its own size (own_size.counting), each part of one drawn in a panel of its
    own, "writing 7 figures: 3 of 7" as each figure's files begin, and a slow file. The
    time left: each part's seconds as measured here (PANEL_S, ...), at the pace the
    parts done so far kept against them."""

    def __init__(self, say, tokens: int, clock=time.monotonic):
        self.say, self.tokens, self.clock = say, tokens, clock
        self.names: list[str] = []      # the figures drawn, in order
        self.files: list[str] = []      # the formats written of each
        self.began, self.done = None, 0.0   # when drawing began; the seconds planned done
        self.folder = None              # where the files go
        self._lock = threading.Lock()   # a line at a time: the watch of a slow file's
        self._last = clock()            # own thread tells too; when the last was told
        self._watch = None              # (its stop Event) while a file is written

    def parts(self) -> list[tuple[str, float]]:
        """Every part planned, in order ("panel", "draw:NAME", "own:NAME", "NAME.FMT"),
        with its seconds (before the panel is drawn: every figure, png, svg, csv)."""
        from ..gui.plots.figures import FIGURES
        names = self.names or [name for name in FIGURES if name not in (
            "encoding", "encoding_similarity")]
        files = self.files or ["png", "svg", "csv"]
        n = self.tokens / 1000
        parts = [("views", VIEWS_S[0] + VIEWS_S[1] * n), ("panel", PANEL_S[0] + PANEL_S[1] * n)]
        for name in names:
            parts.append((f"draw:{name}", 0.03))
            if name == "attention":         # its own panel, then its maps squared
                parts += [(f"own:{name}", OWN_PANEL_S / 2),
                          (f"square:{name}", OWN_PANEL_S / 2)]
        for name in names:
            parts += [(f"{name}.{fmt}", FILE_SLOW_S.get(f"{name}.{fmt}", lambda n: FILE_S)(
                self.tokens)) for fmt in files]
        return parts

    def left(self, key: str | None = None) -> float:
        """Seconds left from the start of part ``key`` on (None: all of them), at the
        pace kept so far; the parts before it are counted done."""
        parts = self.parts()
        keys = [k for k, _ in parts]
        start = keys.index(key) if key in keys else 0
        if key in keys:
            self.done = sum(seconds for _, seconds in parts[:start])
        pace = 1.0          # the parts done so far against their plan, with a prior
        if self.began is not None:
            pace = (self.clock() - self.began + PRIOR_S) / (self.done + PRIOR_S)
        return sum(seconds for _, seconds in parts[start:]) * pace

    def about(self, key: str | None = None) -> str:
        from ..api.steps import duration_text
        return f"about {duration_text(max(self.left(key), 1.0))} left"

    def begin(self) -> None:
        self.began, self.done = self.clock(), 0.0

    def drew_panel(self, panel, formats: list[str]) -> None:
        from ..gui.plots.arrange import plots_nothing
        from ..gui.plots.figures import FIGURES
        self.names = [n for n in FIGURES if not plots_nothing(panel.laid_out(n))]
        self.files = list(formats)

    def drawing(self, name: str, part: str) -> None:
        """own_size.counting: figure ``name`` (or a ``part`` of it) drawn at its own size."""
        self.close()
        if not name:                        # the run's views, then all in one panel
            key = "views" if part.startswith("the views") else "panel"
            words = f"drawing the figures: {part}"
            self.tell(f"{words}, {self.about(key)}")
            self._watch = threading.Event()     # told again while it lasts (SmolLM2's
            threading.Thread(target=self.ticked, daemon=True,   # views of 3,000 words:
                             args=(self._watch, words)).start()  # 30 s untold)
            return
        if name not in self.names:
            return
        which = f"{self.names.index(name) + 1} of {len(self.names)}"
        inside = f" ({part})" if part else ""
        key = {"": "draw", "its own panel": "own"}.get(part, "square") + f":{name}"
        self.say(f"drawing figure {which}: {name.replace('_', ' ')}{inside}, "
                 f"{self.about(key)}")

    def tell(self, line: str) -> None:
        with self._lock:
            self._last = self.clock()
            self.say(line)

    def writing(self, done: int, total: int, file: str) -> None:
        """PlotsPanel.export_all's ``told``: each figure's first file, and a slow file;
        every file's bytes written are told while it is written (watched) once it takes
        a tick (SmolLM2's 65 MB mosaic table, planned as 0.6 s, took 4.2 s untold)."""
        self.close()
        per_figure = max(len(self.files), 1)
        slow = file in FILE_SLOW_S and FILE_SLOW_S[file](self.tokens) >= 1.0
        figures = total // per_figure
        counted = (f"writing {figures} figure{'' if figures == 1 else 's'}: "
                   f"{done // per_figure + 1} of {figures}")
        if done % per_figure == 0 or slow:
            which = "" if done % per_figure == 0 else f" ({file})"
            self.tell(f"{counted}{which}, {self.about(file)}")
        if self.folder is not None:
            self._watch = threading.Event()
            threading.Thread(target=self.watched, daemon=True, args=(
                self._watch, counted, file, self.left(file))).start()

    def watched(self, stop, counted: str, file: str, seconds: float) -> None:
        """While ``file`` is written (a 3,064-token attention table: 3.7-4.4 s), its bytes
        so far told before a tick passes without a line (a thread of its own: the table
        is written in one call)."""
        from ..api.steps import TICK_S, duration_text
        from ..document.files import writing_name
        temporary = writing_name(self.folder / file)
        began = self.clock()
        while not stop.wait(WATCH_S):
            if self.clock() - self._last < TICK_S - 2 * WATCH_S:
                continue
            try:
                size = temporary.stat().st_size
            except OSError:
                continue
            left = max(seconds - (self.clock() - began), 1.0)
            with self._lock:
                if not stop.is_set():
                    self._last = self.clock()
                    self.say(f"{counted} ({file}, {size / 1e6:.0f} MB so far), "
                             f"about {duration_text(left)} left")

    def ticked(self, stop, words: str) -> None:
        """A part with no count (the views of the runs, all in one panel): its words
        told again, with its seconds so far, before a tick passes without a line."""
        from ..api.steps import TICK_S, duration_text
        began = self.clock()
        while not stop.wait(WATCH_S):
            if self.clock() - self._last < TICK_S - 2 * WATCH_S:
                continue
            with self._lock:
                if not stop.is_set():
                    self._last = self.clock()
                    self.say(f"{words} ({duration_text(self.clock() - began)} so far)")

    def close(self) -> None:
        """The watch of the file being written, or of a part, if any, ended."""
        if self._watch is not None:
            with self._lock:
                self._watch.set()
            self._watch = None


def not_written(panel, written) -> list[str]:
    """The figures an export left out, each "name (what it says instead)"."""
    from ..gui.plots.figures import FIGURES
    stems = {Path(path).stem for path in written}
    return [f"{name} ({' '.join(panel.laid_out(name).message.text().split())})"
            for name in FIGURES if name not in stems]
