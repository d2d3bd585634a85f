"""The plots panel's files: each figure written with what produced it, one at a time
(a figure's menu) or all into a folder (File › Export figures, ``posviz export``).

What a file holds never depends on the window: the window writes its figures from a
twin of its panel, drawn off screen at the panel's own size (own_size.PANEL_SIZE, the
size ``posviz export`` lays them out at) and showing what the window shows; the window's
own tabs stay as they are.
"""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from PySide6 import QtWidgets

from .arrange import plots_nothing, shown_while
from .exporting import ask_export_path, busy_writing, writing
from .figures import FIGURE_TYPES, FIGURES
from .own_size import figure_panel
from posviz.document.caption import caption
from posviz.document.files import FIGURE_FORMATS, check_folder, check_formats, check_width
from posviz.document.provenance import record, typed_text
from posviz.errors import PosvizInputError

Told = Callable[[int, int, str], None]      # (files written, files in all, the next one)
Wrote = Callable[[Path], None]              # a file written whole


class PanelFiles:
    """What PlotsPanel writes to files (a mixin: it reads the panel's figures, the
    evaluation shown, its session and facts)."""

    def set_provenance(self, facts: dict) -> None:
        """Facts about the figures' origin that the evaluation does not hold (e.g.
        ``text``, ``model``): they override the derived ones in every export."""
        self._facts = {str(key): str(value) for key, value in facts.items()}

    def provenance(self, name: str | None = None) -> dict[str, str]:
        """What produced the figures on screen (document.provenance.record), written into
        every exported file; empty before the first evaluation. The layer and head
        are the selection's for the figures that show one layer or head."""
        if self._shown is None:
            return {}
        sel = self.selection()
        shows = (self._figures.get(name) or FIGURE_TYPES[name]).selects if name else (
            "layer", "head")
        text = self._facts.get("text") or typed_text(self._session, self._shown.evaluation)
        facts = record(self._shown.evaluation, layer=sel.layer if "layer" in shows else None,
                       head=sel.head if "head" in shows else None,
                       text=text, model=self._facts.get("model"))
        facts.update({k: v for k, v in self._facts.items() if k not in ("text", "model")})
        if name is not None:
            facts["figure"] = name
        return facts

    def captioned(self, figure):
        """``figure`` (one of this panel's) with the caption its files and copies draw
        under its heading (captions.py: the model, and the text and order it shows)."""
        figure.caption = caption(self.provenance(figure.name), figure.shows_order)
        return figure

    def drawn_alone(self):
        """A twin of this panel, off screen at its own size (own_size.PANEL_SIZE),
        showing the evaluation and selection shown here, with the same facts; the
        caller deletes it (``close()``, ``deleteLater()``)."""
        from .own_size import HeldView, drawn_panel
        return drawn_panel(type(self), HeldView(self._session), self._shown, self._facts,
                           self.settings)

    def export_figure(self, name: str, path: Path, width: int | None = None,
                      dpi: int | None = None, scale: float | None = None) -> Path:
        """Write one figure as .png (``width`` pixels wide, at ``dpi`` or ``scale`` times its
        size on screen), .svg, .pdf or .csv, by suffix, each carrying its provenance."""
        figure = self._figure(name)
        self._refresh([name])
        path = Path(path)
        suffix = path.suffix.lower().lstrip(".")
        if suffix not in FIGURE_FORMATS:
            raise PosvizInputError(f"cannot export {path.name}: the file name must end in "
                                   f"{', '.join('.' + f for f in FIGURE_FORMATS)}")
        check_width(width)
        facts = self.provenance(name)
        if suffix != "csv":
            self._bring_forward(figure)                 # its tab drawn, then shown as is
        figure.caption = caption(facts, figure.shows_order)
        with shown_while(figure, suffix != "csv"):
            return writing(path, lambda: figure.export(path, width, dpi, facts, scale))

    def export_all(self, folder: Path, formats=("png", "svg"), width: int | None = None,
                   csv: bool = True, dpi: int | None = None,
                   told: Told | None = None, wrote: Wrote | None = None,
                   laying: Told | None = None,
                   plan: Callable[[list[str]], None] | None = None) -> list[Path]:
        """Write each figure that plots something as <folder>/<name>.<fmt> (and .csv); the
        PNGs share one scale, so one text size: the widest ``width`` pixels wide, else
        ``dpi`` dots per inch of their size on screen, else as on screen. ``told``
        hears of each file before it is written, ``wrote`` of each once it is whole,
        ``laying`` of each figure before it is laid out at its own size (0-2.5 s each),
        ``plan`` of the figures' names before the first."""
        folder, formats = Path(folder), check_formats(formats)
        check_folder(folder)
        check_width(width)
        current = self.tabs.currentIndex()
        written, sources = [], {}
        try:        # a message ("no additive encoding") is no figure
            names = [name for name in FIGURES if not plots_nothing(self.laid_out(name))]
            if plan is not None:
                plan(names)
            # each figure at its own size: maps of queries × keys in a panel that squares them
            for done, name in enumerate(names):
                if laying is not None:
                    laying(done, len(names), name)
                sources[name] = figure_panel(self, name, self.drawn_alone)
            widest = max((sources[n].laid_out(n).export_size().width() for n in names),
                         default=1)
            scale = width / widest if width else None
            files = [f"{name}.{fmt}" for name in names for fmt in formats + (["csv"] if csv
                                                                          else [])]
            for done, file in enumerate(files):
                if told is not None:
                    told(done, len(files), file)
                name = file.split(".")[0]
                written.append(sources[name].export_figure(name, folder / file,
                                                           dpi=dpi, scale=scale))
                if wrote is not None:
                    wrote(written[-1])
        finally:
            for source in {id(s): s for s in sources.values() if s is not self}.values():
                source.close()
                source.deleteLater()
            with self._quietly():
                self.tabs.setCurrentIndex(current)
        return written

    def _export_dialog(self, name: str, fmt: str) -> None:
        """A figure's menu: ask where (and a PNG's resolution), then write the figure
        at its own size, from a twin of the panel."""
        chosen = ask_export_path(self, name, fmt, self.settings)
        if chosen is None:
            return
        path, width, dpi = chosen
        twin = None
        try:            # its own size, as every file's (its maps squared in the twin)
            with busy_writing(self, path, self.message.emit):
                twin = self.drawn_alone()
                figure_panel(twin, name, lambda: twin).export_figure(name, path,
                                                                     width=width, dpi=dpi)
        except PosvizInputError as error:
            self.message.emit(f"Did not write {path.name}")
            QtWidgets.QMessageBox.warning(self, "Export failed", str(error))
        else:
            self.message.emit(f"Wrote {path}")
        finally:
            if twin is not None:
                twin.close()
                twin.deleteLater()
