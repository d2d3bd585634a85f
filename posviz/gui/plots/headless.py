"""The plots panel without a window: what ``posviz export`` writes and the Python API's
``Report.figure`` shows, drawn off screen by the window's own figures.

Without a display Qt runs on its offscreen platform; with one, the panel is laid out
and painted but never put on the screen (Qt.WA_DontShowOnScreen).
"""
from __future__ import annotations

import atexit
import os
import sys
import tempfile
from contextlib import contextmanager, nullcontext
from pathlib import Path
from weakref import WeakKeyDictionary

from PySide6 import QtCore, QtWidgets

from . import own_size
from .arrange import plots_nothing
from .figures import FIGURE_TYPES, FIGURES, check_figure_view
from .mosaic_modes import mosaic_look
from .panel import PlotsPanel
from posviz.document.files import check_save
from posviz.document.provenance import describe_model
from posviz.errors import PosvizInputError, checks_calls, held_interrupt
from posviz.models.limits.guard import check_view
from posviz.views.model import model_views
from posviz.views.shown import Shown, build_views

SHARPNESS = 2                   # a notebook's PNG: device pixels per pixel shown


def shown_at(png: bytes, sharpness: int = SHARPNESS) -> dict:
    """A notebook's metadata of ``png``, drawn at ``sharpness`` pixels a pixel shown:
    its own size over that (its header's width and height), so its shape is kept."""
    width, height = int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")
    return {"width": round(width / sharpness), "height": round(height / sharpness)}


_quiet = [0, False]     # how many quiet_platform_notes blocks are open (one more for
                        # the offscreen platform's whole run), and whether it is quiet


def application() -> QtWidgets.QApplication:
    """The running QApplication, else a new one (offscreen when there is no display)."""
    if not os.environ.get("DISPLAY") and not os.environ.get("WAYLAND_DISPLAY"):
        os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    app = QtWidgets.QApplication.instance()
    if app is None:
        app = QtWidgets.QApplication(["posviz"])
        atexit.register(_close_panels)      # before PySide's own teardown (run last first)
    if app.platformName() == "offscreen" and not _quiet[1]:
        # its notes come from events handled outside any quiet block too: every
        # export printed "This plugin does not support propagateSizeHints()"
        _quiet[:] = [_quiet[0] + 1, True]           # for as long as the process runs
        QtCore.qInstallMessageHandler(_pass_on_all_but_notes)
    return app


def _pass_on_all_but_notes(mode, context, message: str) -> None:
    if "propagateSizeHints" not in message:
        print(message, file=sys.stderr)


@contextmanager
def quiet_platform_notes():
    """Drop the offscreen platform's harmless notes; pass every other Qt message on
    (Qt's own handler again once the outermost of nested blocks ends, unless
    application() started the offscreen platform: then they are dropped for the whole
    run)."""
    if not _quiet[0]:
        QtCore.qInstallMessageHandler(_pass_on_all_but_notes)
    _quiet[0] += 1
    try:
        yield
    finally:
        _quiet[0] -= 1
        if not _quiet[0]:
            QtCore.qInstallMessageHandler(None)


def drawn_panel(session, evaluation, tiles=None) -> PlotsPanel:
    """A PlotsPanel of own_size.PANEL_SIZE showing ``evaluation`` (an engine.Evaluation)
    of ``session`` as the window would, laid out but not on screen (the panel the
    window's own files are written from, too); ``tiles``: the mosaic's, pooled as a
    long input's order ran (api.Report.run_for)."""
    from posviz.errors import argument, speaks_flags
    own_size.tell("", "the views of the runs")      # an export's count, told before Qt's
    application()                                   # application is made (its thread
    with quiet_platform_notes():                    # tells it again while it is)
        look = mosaic_look(session.selection)
        # a run as given named as a script's reader sets it (--literal, literal=True),
        # not by the window's control
        literal = argument("literal") if speaks_flags() else argument("literal", True)
        shown = Shown(evaluation, build_views(evaluation, look, tiles, literal=literal),
                      model_views(session.backend, evaluation))
        own_size.tell("", "all in one panel")
        return own_size.drawn_panel(PlotsPanel, session, shown, {
            "text": session.text, "model": describe_model(session.backend.describe())})


# The figures of one head, or of its tiles, that a long input's report draws from the
# order run again (api.Report.run_for)
HEAD_FIGURES = ("attention", "attention_mosaic")
# Report -> its drawn PlotsPanels: "" (evaluation, the one at PANEL_SIZE), a figure's
# name (evaluation, (layer, head), its own)
_PANELS: WeakKeyDictionary = WeakKeyDictionary()


def _close_panels() -> None:
    """Close and delete the reports' panels while Qt still runs, at the interpreter's
    exit: left to Python's teardown, after the application's, a saved 4,000-token
    attention figure's panel crashed the interpreter once the script was done
    (status 139; a user's run), as posviz export's panel did."""
    panels = [held[-1] for kept in list(_PANELS.values()) for held in kept.values()]
    _PANELS.clear()
    QtWidgets.QApplication.processEvents()     # their queued calls run while they live
    for panel in {id(panel): panel for panel in panels}.values():
        panel.close()
        panel.deleteLater()
    QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)


def _drop_unheld(before: dict, panels: dict) -> None:
    """Close the panels ``before`` held that ``panels`` no longer holds (a figure's own
    panel replaced by another head's): left open, each went on redrawing at every later
    selection of the report's session. Deleted later, once the call drawing now is
    done with them."""
    held = {id(kept[-1]) for kept in panels.values()}
    for key, panel in before.items():
        if key not in held:
            panel.leave_session()
            panel.close()
            panel.deleteLater()


def silent(file: str):
    """A figure's drawing told by nothing (its ``telling`` unless Python's sets one)."""
    return nullcontext(None)


telling_now = WeakKeyDictionary()      # figure -> the Drawing telling its display or save now


@contextmanager
def told(figure, file: str | None):
    """``figure``'s drawing and writing told inside by its ``telling`` (once for a
    display that saves: the Drawing given to the outer block), own_size's parts of
    its drawing counted; ``file`` None: drawn for its numbers or size, no file."""
    if telling_now.get(figure) is not None:
        yield telling_now[figure]
        return
    with figure.telling(file) as drawing:
        telling_now[figure] = drawing
        try:
            with own_size.counting(drawing.drawing if drawing else lambda *_: None):
                yield drawing
        finally:
            telling_now.pop(figure, None)


@checks_calls
class ReportFigure:
    """One figure of a Report, by its stable name, as ``posviz export`` writes it.

    Shows itself in a notebook (``_repr_png_``, ``_repr_svg_``); ``save(path)`` writes
    .png, .svg, .pdf or .csv; ``data`` holds the arrays it draws (what the CSV holds).
    ``layer`` (1..L) and ``head`` (0..h-1) choose what the figures of one layer or head
    show (default: the report's selection, the first layer and head)."""

    def __init__(self, report, name: str, layer: int | None = None,
                 head: int | None = None):
        if name not in FIGURE_TYPES:
            raise PosvizInputError(f"no figure named {name!r} (one of {', '.join(FIGURES)})")
        reference = report.evaluation.reference
        L, h = reference.n_layers, reference.n_heads
        check_view(L, h, layer, head)               # the guard's, as every entry's
        check_figure_view(name, layer, head,        # and one the figure would ignore
                          report.session.backend)
        self.report, self.name = report, name
        view = report.session.selection.clamped(L, h)
        self.layer = view.layer if layer is None else layer
        self.head = view.head if head is None else head
        self.telling = silent           # api.drawing.figure_telling, from Python

    def __repr__(self) -> str:
        return f"<posviz figure {self.name!r} of {self.report!r}>"

    def panel(self) -> PlotsPanel:
        """The report's panel (drawn once per report), showing this figure's layer and
        head; for a figure of square maps (a position × position or query × key map),
        a panel of its own, as tall as makes those maps square (own_size.figure_panel,
        as ``posviz export`` draws it). Its layer and head are selected before any
        panel is drawn, as the export's are: a twin squared while showing the head
        drawn before (a long input's run keeps this head only: its maps a message) was
        then 1500 × 484, its maps 390 × 304, against the export's 1500 × 570 (3,000
        tokens)."""
        report = self.report
        ev, tiles = report.evaluation, None
        if self.name in HEAD_FIGURES:          # a long input's: its head run again,
            drawing = telling_now.get(self)    # told as the figure's drawing is
            ev, tiles = report.run_for(self.layer, self.head,
                                       drawing.say if drawing is not None else None)
        session = report.session
        session.select(session.selection.replace(layer=self.layer, head=self.head))
        panels = _PANELS.setdefault(report, {})
        view = (self.layer, self.head)          # its own panel squared for this view
        held, held_view = panels.get(self.name, (None, None, None))[:2]
        if held is not ev or held_view != view:
            before = {id(kept[-1]): kept[-1] for kept in panels.values()}
            if panels.get("", (None,))[0] is not ev:
                panels[""] = (ev, drawn_panel(session, ev, tiles))
            with quiet_platform_notes():
                panels[self.name] = (ev, view, own_size.figure_panel(
                    panels[""][1], self.name, lambda: drawn_panel(session, ev, tiles)))
            _drop_unheld(before, panels)
        return panels[self.name][-1]

    def save(self, path, *, width: int | None = None, dpi: int | None = None) -> Path:
        """Write the figure to ``path`` as .png (at ``width`` pixels, or ``dpi`` dots per
        inch of its size on screen; default as on screen), .svg, .pdf (vector) or .csv
        (its numbers), by suffix, each recording what produced it; returns the path."""
        path = check_save(path, width, dpi)
        with told(self, path.name) as drawing:
            if self.name in HEAD_FIGURES:   # the order run again is torch's, not Qt's:
                self.report.run_for(self.layer, self.head,      # no Ctrl+C held in it
                                    drawing.say if drawing is not None else None)
            with held_interrupt(), quiet_platform_notes():
                panel = self.panel()            # a placeholder is no figure: say why
                figure = panel.laid_out(self.name) if self.name in HEAD_FIGURES else None
                if figure is not None and plots_nothing(figure):
                    raise PosvizInputError(f"the {self.name} figure has nothing to plot: "
                                           f"{' '.join(figure.message.text().split())}")
                if drawing is not None:
                    drawing.writing(0, 1, path.name)
                return panel.export_figure(self.name, path, width=width, dpi=dpi)

    @property
    def data(self) -> dict:
        """The arrays the figure draws, by name, all indexed by ``dims`` (its drawing
        told from Python as a display's is: 3.2 s untold at 2,301 tokens)."""
        with told(self, None), quiet_platform_notes():
            return self.panel().displayed(self.name)[self.name]

    @property
    def dims(self) -> tuple[str, ...]:
        """The names of the dimensions of every array in ``data``."""
        with told(self, None), quiet_platform_notes():
            return self.panel().figures()[self.name].dims

    def size(self) -> tuple[int, int]:
        """(width, height) in pixels on screen, as an export draws it (a note the
        screen elides written whole; the outputs' text without a chart, alone)."""
        with told(self, None), quiet_platform_notes():
            return self.panel().laid_out(self.name).export_size().toTuple()

    def _rendered(self, suffix: str, **options) -> bytes:
        with tempfile.TemporaryDirectory(prefix="posviz-") as folder:
            return self.save(Path(folder) / f"{self.name}.{suffix}", **options).read_bytes()

    def _repr_png_(self) -> tuple[bytes, dict]:
        """A PNG at SHARPNESS times the size on screen, shown at that size; a figure
        of maps at its own size (its cells are as many as its pixels or fewer)."""
        with told(self, f"{self.name}.png"):
            sharpness = 1 if own_size.map_boxes(self._figure()) else SHARPNESS
            png = self._rendered("png", width=self.size()[0] * sharpness)
        return png, shown_at(png, sharpness)

    def _repr_svg_(self) -> str | None:
        """An SVG, but for a figure of maps: its PNG alone (an SVG embeds the maps as
        images again, doubling what a notebook keeps)."""
        with told(self, f"{self.name}.svg"):
            if own_size.map_boxes(self._figure()):
                return None
            return self._rendered("svg").decode("utf-8")

    def _figure(self):
        with told(self, None), quiet_platform_notes():
            return self.panel().laid_out(self.name)
