"""An experiment's figure without a window: what the Experiments tab draws of a sweep, a
probe, a paper check or a comparison of encodings, drawn off screen by the same
ExperimentFigure for the Python API's ``figure()`` and ``posviz compare --out``."""
from __future__ import annotations

import tempfile
import weakref
from pathlib import Path

from .figure import ExperimentFigure
from .jobs import SWAP_MAP, caption
from .swaps import which_text
from ..plots.headless import (SHARPNESS, telling_now, application, quiet_platform_notes,
                              shown_at, silent, told)
from ..plots.own_size import off_screen
from posviz.document.files import check_save
from posviz.errors import PosvizInputError, checks_calls, held_interrupt

SIZE = (900, 600)                   # pixels: the figure as the command line writes it


@checks_calls
class ExperimentResultFigure:
    """``result`` of ``job`` (runtime.experiments.ExperimentJob) drawn by the Experiments
    tab's figure at SIZE, showing ``metric`` (a sweep's or a comparison's; "swap map": a
    swap sweep's map). Shows itself in a notebook; ``save(path)`` writes .png, .svg,
    .pdf or .csv carrying ``facts`` (document.provenance); ``data`` its numbers."""

    def __init__(self, job, result, metric: str | None, facts: dict[str, str]):
        self.job, self.result, self.facts = job, result, dict(facts)
        self.metric = SWAP_MAP if metric == "swap map" else metric
        if self.metric is not None:
            self.facts["metric"] = metric
        self._figure: ExperimentFigure | None = None
        self.text = 0                   # which text's swap map (an index into its texts)
        self.telling = silent           # api.drawing.figure_telling, from Python

    def __repr__(self) -> str:
        shows = f" ({self.metric})" if self.metric else ""
        return f"<posviz figure of the {self.job.what}{shows}>"

    def drawn(self) -> ExperimentFigure:
        """The figure, drawn once, laid out at SIZE but never on screen."""
        if self._figure is None:
            if telling_now.get(self) is not None:      # a display's or save's, from Python
                telling_now[self].drawing(telling_now[self].names[0], "")
            if self.metric == SWAP_MAP:     # which text's map, as its title says
                self.facts["text"] = which_text(self.result.texts, self.text, "")
            app = application()
            with quiet_platform_notes():
                figure = ExperimentFigure()
                figure.subtitle = caption(self.job)
                figure.map_text = self.text
                off_screen(figure, *SIZE)       # (it never keeps a caller's app open)
                app.processEvents()
                figure.draw(self.job, self.result, self.metric)
                app.processEvents()
            self._figure = figure
            # closed while whole when this object goes: its widgets' filters still work
            self._closing = weakref.finalize(self, _close, figure)
        return self._figure

    def close(self) -> None:
        if self._figure is not None:
            self._closing()
            self._figure = None

    def save(self, path, *, width: int | None = None, dpi: int | None = None) -> Path:
        """Write the figure to ``path``: .png (``width`` pixels, or ``dpi`` dots per inch
        of its size on screen), .svg, .pdf or .csv, by suffix, with its provenance."""
        path = check_save(path, width, dpi)
        if path.suffix.lower() not in (".png", ".svg", ".pdf", ".csv"):
            raise PosvizInputError(f"cannot write {path.name}: the file name must end in "
                                   f".png, .svg, .pdf or .csv")
        try:
            with held_interrupt(), quiet_platform_notes(), \
                    told(self, path.name) as drawing:       # Ctrl+C raised once drawn
                figure = self.drawn()
                if drawing is not None:
                    drawing.writing(0, 1, path.name)
                return figure.export(path, width, dpi, self.facts)
        except OSError as error:              # in one line, as a report's figure says it
            raise PosvizInputError(f"cannot write {path}: {error.strerror or error}") \
                from None

    @property
    def data(self) -> dict:
        """The arrays the figure draws, by name, indexed by ``dims`` (its drawing told
        from Python as a display's is)."""
        with told(self, None):
            return {key: value.copy() for key, value in self.drawn().data.items()}

    @property
    def dims(self) -> tuple[str, ...]:
        with told(self, None):
            return tuple(self.drawn().dims)

    def size(self) -> tuple[int, int]:
        """(width, height) in pixels as an export draws it (its drawing at its own
        size, as ``save`` writes it)."""
        with told(self, None), quiet_platform_notes():
            return self.drawn().drawn_alone().export_size().toTuple()

    def _rendered(self, suffix: str, **options) -> bytes:
        with tempfile.TemporaryDirectory(prefix="posviz-") as folder:
            return self.save(Path(folder) / f"experiment.{suffix}", **options).read_bytes()

    def _repr_png_(self) -> tuple[bytes, dict]:
        """A PNG at SHARPNESS times its size, shown at its size."""
        with told(self, "figure.png"):
            png = self._rendered("png", width=self.size()[0] * SHARPNESS)
        return png, shown_at(png)

    def _repr_svg_(self) -> str | None:
        """An SVG, unless the figure is a map of cells (a swap map): its PNG alone."""
        if self.metric == SWAP_MAP:
            return None
        with told(self, "figure.svg"):
            return self._rendered("svg").decode("utf-8")


def _close(figure: ExperimentFigure) -> None:
    """Close the off-screen figure, unless Qt has already deleted it (at exit, the
    application goes first)."""
    import shiboken6
    if shiboken6.isValid(figure):
        figure.close()
        figure.deleteLater()
