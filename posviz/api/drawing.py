"""A figure's drawing and writing told as it goes (Drawing): ``posviz export``'s on
--progress, and a figure's from Python (its display in a notebook, ``save``) once its
wait passes the hold (runtime.held_lines), by the same lines."""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager, nullcontext

from ..runtime import held_lines
from ..runtime.held_lines import carried, due, held_now, holding

# Seconds each part of an export took here after its forwards (2 cores, load 2-8, 1,029
# and 3,064 tokens): the panel of all the figures; a figure of square maps drawn again
# in a panel of its own; each file, the attention map's table growing with the tokens
VIEWS_S, PANEL_S = (0.3, 0.25), (0.8, 0.1)    # seconds, and more per 1,000 tokens
OWN_PANEL_S, FILE_S = 1.8, 0.1
# a table's seconds a row, once the panel says its rows (SmolLM2, 460 tokens, load 6:
# the mosaic's 908,281 rows in 10 s, the attention map's 161,605 in 2.5 s; planned as
# 0.6 s and 1.6 s, its time left told 1 s for 8 s)
ROW_S = 12e-6
ROW_BYTES = 60      # a table's bytes a row (SmolLM2, 302 tokens: the mosaic's 57.8, the
                    # attention map's 62.8)
WATCH_S = 0.25      # seconds between looks at a slow file's size
PRIOR_S = 3.0       # the seconds planned that weigh as much as those measured, in a pace
FILE_SLOW_S = {"attention.csv": lambda n: 1.2 + n / 1000 * 0.9,
               "attention_mosaic.csv": lambda n: 0.6,
               "relative_profile.png": lambda n: 0.25}


def table_rows(shape, tokens: int) -> dict[str, int]:
    """The rows planned of the tables growing with the tokens: the attention map's
    pooled to at most HEAD_SIDE a side, the mosaic's L × h tiles to MOSAIC_TILE."""
    from ..views.head import head_block
    from ..views.pooling import MOSAIC_TILE
    block, side = -(-tokens // MOSAIC_TILE), -(-tokens // head_block(tokens))
    return {"attention": side * side,
            "attention_mosaic": shape[0] * shape[1] * (-(-tokens // block)) ** 2}


def is_file(key: str) -> bool:
    """Is part ``key`` (Drawing.parts) a file written, not a part drawn?"""
    return "." in key and ":" not in key


class Drawing:
    """An export's drawing and writing told on --progress, with the time left of the
    whole command: "drawing figure 3 of 7: attention, about 8 s left" as each figure is
    drawn at its own size (own_size.counting), each part of one drawn in a panel of its
    own, "writing 7 figures: 3 of 7" as each figure's files begin, and a slow file. The
    time left: each part's seconds as measured here (PANEL_S, ...), at the pace the
    parts done so far kept against them."""

    def __init__(self, say, tokens: int, clock=time.monotonic, shape=None):
        self.say, self.tokens, self.clock = say, tokens, clock
        self.shape = shape              # (layers, heads) before the panel says its rows
        self.names: list[str] = []      # the figures drawn, in order
        self.squared: list[str] = []    # those of square maps (drawn in panels of their own)
        self.files: list[str] = []      # the formats written of each
        self.rows: dict[str, int] = {}  # each figure's table rows, once drawn
        self.began, self.done = None, 0.0   # when drawing began; the seconds planned done
        self.written = None             # (when, seconds planned done) as the first file began
        self.folder = None              # where the files go
        self.inside = None              # the figure whose own panel is being drawn
        self._lock = threading.Lock()   # a line at a time: the watch of a slow file's
        self._last = clock()            # own thread tells too; when the last was told
        self._watch = None              # (its stop Event) while a file is written

    def parts(self) -> list[tuple[str, float]]:
        """Every part planned, in order ("panel", "draw:NAME", "own:NAME", "NAME.FMT"),
        with its seconds (before the panel is drawn: every figure, png, svg, csv)."""
        from ..gui.plots.figures import FIGURES
        names = self.names or [name for name in FIGURES if name not in (
            "encoding", "encoding_similarity")]
        files = self.files if self.names else ["png", "svg", "csv"]
        n = self.tokens / 1000
        parts = [("views", VIEWS_S[0] + VIEWS_S[1] * n), ("panel", PANEL_S[0] + PANEL_S[1] * n)]
        for name in names:
            parts.append((f"draw:{name}", 0.03))
            if name in (self.squared or ["attention"]):     # own panel, maps squared
                parts += [(f"own:{name}", OWN_PANEL_S / 2),
                          (f"square:{name}", OWN_PANEL_S / 2)]
        for name in names:
            parts += [(f"{name}.{fmt}", self.file_seconds(f"{name}.{fmt}")) for fmt in files]
        return parts

    def file_seconds(self, file: str) -> float:
        """A file's seconds planned: a table by its rows once the panel is drawn, else
        as measured here (FILE_SLOW_S, FILE_S)."""
        if (rows := self.rows_of(file)) is not None:
            return FILE_S + rows * ROW_S
        return FILE_SLOW_S.get(file, lambda n: FILE_S)(self.tokens)

    def left(self, key: str | None = None) -> float:
        """Seconds left from the start of part ``key`` on (None: all of them), the parts
        before it counted done: the drawing's parts at the pace its parts done kept
        against their plan, the files' at the pace of the files written so far (as
        planned before the first; Qt's drawing 2 × its plan counted them 2 × too)."""
        parts = self.parts()
        keys = [k for k, _ in parts]
        start = keys.index(key) if key in keys else 0
        if key in keys:
            self.done = sum(seconds for _, seconds in parts[:start])
            if is_file(key) and self.written is None:
                self.written = (self.clock(), self.done)    # the first file begins
        drawn = files = 1.0     # each kind's parts done against their plan, with a prior
        if self.began is not None:
            until, done = self.written or (self.clock(), self.done)
            drawn = (until - self.began + PRIOR_S) / (done + PRIOR_S)
        if self.written is not None:
            files = ((self.clock() - self.written[0] + PRIOR_S)
                     / (self.done - self.written[1] + PRIOR_S))
        # a table by its rows at ROW_S, measured at load 6-9 as it is: the drawing's
        # pace (2.3 × its plan for SmolLM2) told 39 s of a mosaic table's 13
        return sum(seconds * (1.0 if self.by_rows(key) else files if is_file(key)
                              else drawn) for key, seconds in parts[start:])

    def by_rows(self, key: str) -> bool:
        """Is part ``key`` a table planned by its rows (file_seconds)?"""
        return self.rows_of(key) is not None

    def rows_of(self, key: str) -> int | None:
        """The rows of part ``key`` when it is a table planned by its rows, else None."""
        name, _, fmt = key.rpartition(".")
        rows = self.rows or (table_rows(self.shape, self.tokens) if self.shape else {})
        return rows.get(name) if fmt == "csv" else None

    def about(self, key: str | None = None) -> str:
        from .steps import duration_text
        return f"about {duration_text(max(self.left(key), 1.0))} left"

    def begin(self) -> None:
        self.began, self.done, self.written = self.clock(), 0.0, None

    def drew_panel(self, panel, formats: list[str]) -> None:
        from ..gui.plots.arrange import plots_nothing
        from ..gui.plots.figures import FIGURES
        from ..gui.plots.own_size import shows_square_maps
        self.names = [n for n in FIGURES if not plots_nothing(panel.laid_out(n))]
        self.squared = [n for n in self.names if shows_square_maps(panel.laid_out(n))]
        self.files = list(formats)
        for name in self.names:         # every array of a table shares its rows
            data = getattr(panel.laid_out(name), "data", None) or {}
            if data:
                self.rows[name] = max(int(getattr(a, "size", 0)) for a in data.values())

    def drawing(self, name: str, part: str) -> None:
        """own_size.counting: figure ``name`` (or a ``part`` of it) drawn at its own size."""
        self.close()
        if not name and self.inside:        # a figure's own panel drawn anew (from
            name, part = self.inside, f"its own panel: {part}"     # Python): its part
        if not name:                        # the run's views, then all in one panel
            key = "views" if part.startswith("the views") else "panel"
            if key == "views" and self.done == 0.0:     # the drawing's pace from here:
                self.began = self.clock()   # from Python, a long input's head run again
                # before it (105 s, SmolLM2) told its 23 s as "about 3 min left"
            words = f"drawing the figures: {part}"
            self.tell(f"{words}, {self.about(key)}", key)
            self.watch(words)           # SmolLM2's views of 3,000 words: 30 s untold
            return
        if name not in self.names:
            return
        which = f"{self.names.index(name) + 1} of {len(self.names)}"
        inside = f" ({part})" if part else ""
        self.inside = name if part.startswith("its own panel") else None
        key = ("own" if self.inside else {"": "draw"}.get(part, "square")) + f":{name}"
        words = f"drawing figure {which}: {name.replace('_', ' ')}{inside}"
        self.tell(f"{words}, {self.about(key)}", key)
        self.watch(words)               # its own panel at 600 words: 3.0 s untold

    def watch(self, words: str) -> None:
        """A part without a count told again while it lasts (``ticked``, its thread)."""
        self._watch = threading.Event()
        threading.Thread(target=carried(self.ticked), daemon=True,
                         args=(self._watch, words)).start()

    def tell(self, line: str, key: str | None = None) -> None:
        """``line`` told as part ``key`` begins; a call from Python holding its lines
        tells it at once when that part, as planned, would carry its wait past the
        hold (held_lines.due: a panel is drawn in one call of Qt's)."""
        with self._lock:
            self._last = self.clock()
            self.say(line)
        if key is not None:
            due(dict(self.parts()).get(key, 0.0))

    def writing(self, done: int, total: int, file: str) -> None:
        """PlotsPanel.export_all's ``told``: each figure's first file, and a slow file;
        every file's bytes written are told while it is written (watched) once it takes
        a tick (SmolLM2's 65 MB mosaic table, planned as 0.6 s, took 4.2 s untold)."""
        self.close()
        per_figure, key = max(len(self.files), 1), self.part_of(file)
        slow = self.file_seconds(key) >= 1.0
        figures = total // per_figure
        counted = (f"writing {figures} figure{'' if figures == 1 else 's'}: "
                   f"{done // per_figure + 1} of {figures}")
        if done % per_figure == 0 or slow:
            which = "" if done % per_figure == 0 else f" ({file})"
            self.tell(f"{counted}{which}, {self.about(key)}", key)
        if self.folder is not None:
            self._watch = threading.Event()
            threading.Thread(target=carried(self.watched), daemon=True, args=(
                self._watch, counted, file, self.left(key))).start()
        else:                           # a figure saved from Python: its seconds so far
            self.watch(counted)

    def part_of(self, file: str) -> str:
        """The part (parts) writing ``file``: a figure saved from Python under a name of
        its own ("fig.png") is its figure's file ("attention.png"). Not a part, it was
        timed as every part again: "about 8 s left", written 0.3-0.6 s later."""
        if len(self.names) != 1 or file in dict(self.parts()):
            return file
        return f"{self.names[0]}.{file.rsplit('.', 1)[-1]}"

    def watched(self, stop, counted: str, file: str, seconds: float) -> None:
        """While ``file`` is written (a 3,064-token attention table: 3.7-4.4 s), its bytes
        so far told before a tick passes without a line (a thread of its own: the table
        is written in one call)."""
        from .steps import TICK_S, duration_text
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
            spent = self.clock() - began
            left = max(seconds - spent, 1.0)
            if (rows := self.rows_of(file)) and size and spent > 0:     # a table: its
                # rows' bytes at the pace written so far when sooner (ROW_S is load
                # 6-9's: SmolLM2's mosaic table was told 13 s left with 3 s to go at load
                # 2.3; its first megabytes come slowly: alone, they told 16 s, then 21 s)
                whole = rows * ROW_BYTES
                left = max(min(left, seconds - self.file_seconds(file)
                               + max(whole - size, 0) * spent / size), 1.0)
            with self._lock:
                if not stop.is_set():
                    self._last = self.clock()
                    self.say(f"{counted} ({file}, {size / 1e6:.0f} MB so far), "
                             f"about {duration_text(left)} left")

    def ticked(self, stop, words: str) -> None:
        """A part with no count (the views of the runs, all in one panel): its words
        told again, with its seconds so far, before a tick passes without a line."""
        from .steps import TICK_S, duration_text
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


CHAINED_S = 0.5     # a figure drawn this soon after it was made (``r.figure(n).save(p)``):
                    # one wait, its hold counted from the figure's making (Qt's import)


@contextmanager
def qt_imported(progress, name: str):
    """Qt imported inside for figure ``name`` from Python (``Report.figure``), told as
    its drawing's first part ("importing Qt to draw figure attention") each second
    while it loads, held until the hold passes as every call's (``progress`` None; True:
    at once; False or already imported: nothing). A fresh kernel's figure waited 2.1-3.9 s
    for its first line (load 7-11): Qt's import and the panel's making came before it."""
    from ..errors import speaks_flags
    if qt_loaded() or progress is False or speaks_flags():
        yield
        return
    from .slow_calls import told_import
    from .steps import StepPrinter
    with holding() if progress is None and not held_now() else nullcontext():
        # no ": " in it: told again whole ("... (2 s)", reached.short)
        with told_import(StepPrinter(), f"importing Qt to draw figure "
                                        f"{name.replace('_', ' ')}"):
            yield


def qt_loaded() -> bool:
    """Are Qt's widgets imported in this process?"""
    import sys
    return "PySide6.QtWidgets" in sys.modules


def figure_telling(progress, name: str, tokens: int, made: tuple | None = None):
    """What a figure from Python (``Report.figure``, ``Result.figure``) tells as it is
    drawn for display or saved as ``file``: a context giving a Drawing of that one
    figure (None: silent), its lines held until the hold passes (``progress`` None,
    as every call's from Python: api.slow_calls), told from the start (True), or none
    (False, as the model was loaded or the run made). ``made``: (began, ended) of the
    figure's making on time.monotonic; drawn within CHAINED_S of its end, the hold is
    what is left of one counted from its beginning (HOLD_S past it: told at once)."""
    chained = [made]

    @contextmanager
    def telling(file: str | None):     # None: drawn for its numbers, no file
        from ..errors import speaks_flags
        if progress is False or speaks_flags():     # the command line tells its own
            yield None
            return
        from .steps import StepPrinter
        told = Drawing(StepPrinter(), tokens)
        told.names, told.files = [name], [file.rsplit(".", 1)[-1]] if file else []
        made_at, chained[0] = chained[0], None     # the figure's first drawing only
        hold = None
        if made_at is not None and time.monotonic() - made_at[1] < CHAINED_S:
            hold = max(held_lines.HOLD_S - (time.monotonic() - made_at[0]), 0.0)
        with holding(hold) if progress is None and not held_now() else nullcontext():
            told.begin()
            try:
                yield told
            finally:
                told.close()
    return telling
