"""File > Export figures: the dialog that asks for folder, formats, size and CSV, and
the export it starts (told in the window's status line, never as a traceback)."""
from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QApplication, QButtonGroup, QCheckBox, QDialog,
                               QDialogButtonBox, QFileDialog, QFormLayout, QHBoxLayout, QLineEdit, QMessageBox,
                               QProgressDialog, QRadioButton, QSpinBox, QToolButton,
                               QVBoxLayout, QWidget)

from ..analysis.experiments.stage import Stage
from ..document.files import tables_told
from ..runtime.stage_times import NoTimes
from ..runtime.time_left import LATE, RunClock, left_words
from .folders import remember_folder
from .status import WHOLE_TEXT
from .plots.exporting import DEFAULT_DPI, DPI_KEY, FOLDER_KEY, export_folder

CHOICES_KEY = "export/choices"      # the dialog's ticks and size, as the user left them


class ExportDialog(QDialog):
    """Folder, formats, size and CSV for File > Export figures."""

    def __init__(self, parent: QWidget, folder: str, dpi: int = DEFAULT_DPI):
        super().__init__(parent)
        self.setWindowTitle("Export figures")
        form = QFormLayout(self)
        row = QHBoxLayout()
        self.folder_edit = QLineEdit(folder)
        self.folder_edit.setMinimumWidth(360)         # room for a whole path
        self.folder_edit.setMaxLength(WHOLE_TEXT)     # a path too long: the system says so
        self.folder_edit.setToolTip("Folder to write into (created if missing); each figure "
                                    "becomes <name>.png / .svg / .pdf / .csv")
        browse = QToolButton(text="…")
        browse.setToolTip("Choose the folder")
        browse.clicked.connect(self._browse)
        row.addWidget(self.folder_edit, 1)
        row.addWidget(browse)
        form.addRow("Folder", row)
        formats = QHBoxLayout()
        self.png, self.svg = QCheckBox("PNG", checked=True), QCheckBox("SVG", checked=True)
        self.pdf = QCheckBox("PDF", checked=False)
        formats.addWidget(self.png)
        formats.addWidget(self.svg)
        formats.addWidget(self.pdf)
        formats.addStretch(1)
        form.addRow("Formats", formats)
        size = QVBoxLayout()
        self.as_shown = QRadioButton("at each figure's own size", checked=True)
        self.by_width = QRadioButton("widest figure, in pixels")
        self.by_dpi = QRadioButton("dots per inch")
        self.width_spin = QSpinBox(minimum=100, maximum=20000, value=1600, suffix=" px")
        self.dpi_spin = QSpinBox(minimum=50, maximum=1200, value=dpi, suffix=" dpi")
        group = QButtonGroup(self)
        for button, spin in ((self.as_shown, None), (self.by_width, self.width_spin),
                             (self.by_dpi, self.dpi_spin)):
            group.addButton(button)
            line = QHBoxLayout()
            line.addWidget(button)
            if spin is not None:
                line.addWidget(spin)
            line.addStretch(1)
            size.addLayout(line)
        self.as_shown.setToolTip("Each figure at its own size, the same whatever the "
                                 "window's size (that of posviz export)")
        self.width_spin.setToolTip("The widest figure this wide, the others at the same "
                                   "scale: text has one size in every file")
        self.dpi_spin.setToolTip("Each figure at its own size in inches (at the screen's "
                                 "dots per inch), painted at this resolution (e.g. 300 for "
                                 "print) and tagged with it")
        self.svg.setToolTip("Vector images for papers and slides")
        self.png.setToolTip("Bitmap images")
        self.pdf.setToolTip("Vector documents, one page per figure, for LaTeX and print")
        form.addRow("Size", size)
        self.csv = QCheckBox("also write the numbers as CSV", checked=True)
        self.csv.setToolTip("The values each figure shows, one CSV file per figure")
        form.addRow("", self.csv)
        buttons = QDialogButtonBox(QDialogButtonBox.Ok | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        form.addRow(buttons)

    def _sizes(self) -> dict[str, QRadioButton]:
        """The size choices by the name ``choices`` keeps them under."""
        return {"shown": self.as_shown, "width": self.by_width, "dpi": self.by_dpi}

    def choices(self) -> dict:
        """The formats, size and CSV ticked, to open with next time."""
        size = next(name for name, button in self._sizes().items() if button.isChecked())
        return {"formats": self.formats(), "size": size, "width": self.width_spin.value(),
                "csv": self.csv.isChecked()}

    def restore(self, choices: dict) -> None:
        """Tick what ``choices`` (as ``choices`` gives them) says; a missing or unreadable
        entry keeps the dialog's default."""
        formats = choices.get("formats")
        if isinstance(formats, list):
            for name, box in (("png", self.png), ("svg", self.svg), ("pdf", self.pdf)):
                box.setChecked(name in formats)
        button = self._sizes().get(choices.get("size"))
        if button is not None:
            button.setChecked(True)
        if isinstance(choices.get("width"), int):
            self.width_spin.setValue(choices["width"])
        if isinstance(choices.get("csv"), bool):
            self.csv.setChecked(choices["csv"])

    def _browse(self) -> None:
        folder = QFileDialog.getExistingDirectory(self, "Export to", self.folder_edit.text())
        if folder:
            self.folder_edit.setText(folder)

    def folder(self) -> str:
        return self.folder_edit.text().strip()

    def formats(self) -> list[str]:
        return [name for name, box in (("png", self.png), ("svg", self.svg), ("pdf", self.pdf))
                if box.isChecked()]

    def width(self) -> int | None:
        """The widest figure's width in pixels (all at its scale), or None (each at its
        own size, or the DPI asked)."""
        return self.width_spin.value() if self.by_width.isChecked() else None

    def dpi(self) -> int | None:
        """Dots per inch, or None: each figure keeps its own size in inches and is
        painted (and tagged) at this resolution, as the figure menu's export is."""
        return self.dpi_spin.value() if self.by_dpi.isChecked() else None

    def accept(self) -> None:
        if not self.folder():
            QMessageBox.warning(self, "Export figures", "Choose a folder to export to.")
            return
        if not self.formats() and not self.csv.isChecked():
            QMessageBox.warning(self, "Export figures", "Choose at least one format.")
            return
        super().accept()


def export_figures(window) -> None:
    """Ask where and how, then write every figure of the window's plots."""
    if window.plots is None or window.controller.last_shown is None:
        window.status.say("Nothing to export yet", error=True)
        return
    settings = window.settings
    dialog = ExportDialog(window, str(export_folder(settings)),
                          int(settings.value(DPI_KEY, DEFAULT_DPI) or DEFAULT_DPI))
    try:
        saved = json.loads(str(settings.value(CHOICES_KEY, "{}") or "{}"))
    except ValueError:
        saved = {}                      # an unreadable entry: the defaults
    dialog.restore(saved if isinstance(saved, dict) else {})
    if dialog.exec() != QDialog.Accepted:
        return
    settings.setValue(CHOICES_KEY, json.dumps(dialog.choices()))
    settings.setValue(FOLDER_KEY, dialog.folder())
    remember_folder(settings, dialog.folder())
    if dialog.dpi():
        settings.setValue(DPI_KEY, dialog.dpi())
    export_to(window, dialog.folder(), dialog.formats(), dialog.width(),
              dialog.csv.isChecked(), dialog.dpi())


class Stopped(Exception):
    """The user pressed Cancel in the export's progress dialog."""


BAR = 1000              # the bar's steps in all: a long table moves it as it is written
ESTIMATING = "; estimating the time left"     # before a file is written: no pace yet
# Each step's work, in seconds measured at 100 and 800 tokens on 2 shared cores (load
# 9): a figure of square maps is laid out in a panel of its own (attention 2.0-2.1 s,
# encoding_similarity 1.8-3.1 s), any other 0.001-0.3 s; a PNG, SVG or PDF took
# 0.03-0.34 s whatever its values; a CSV 4.5-8.6 µs a value (attention's 480,000 at 800
# tokens 2.2 s, the mosaic's 61,504 0.52 s, a curve's 40 0.01 s). Counted alike, a
# 0.03 s curve's PNG and a 2.2 s CSV told 13.5 s left with 4.3 to go, 2.9 with 0.5.
LAY_SQUARE_S, LAY_OTHER_S = 2.0, 0.05
PICTURE_S, CSV_S, CSV_VALUE_S = 0.1, 0.01, 5e-6


def laying_work(figure) -> float:
    """Seconds laying ``figure`` out at its own size takes (as measured above)."""
    from .plots.own_size import shows_square_maps
    return LAY_SQUARE_S if shows_square_maps(figure) else LAY_OTHER_S


def file_work(figure, fmt: str) -> float:
    """Seconds writing ``figure`` as ``fmt`` takes (as measured above): a picture about
    alike, a CSV by the values it holds."""
    if fmt != "csv":
        return PICTURE_S
    return CSV_S + CSV_VALUE_S * sum(int(np.size(value)) for value in figure.data.values())


def export_to(window, folder: str, formats, width, csv: bool, dpi: int | None = None,
              now=time.monotonic) -> list:
    """Write the figures at their own size, from a twin of the plots panel drawn off
    screen (the window's tabs stay as they are), and the experiment's plot; PNGs at
    one scale (the widest ``width`` pixels wide, or ``dpi`` dots per inch). A progress
    dialog names each file as it is written, which of how many and the time left at
    the pace of the files written (Cancel stops after it; 10-15 s told no time left);
    the status line says what was written, or why not, never a traceback. ``now``:
    the clock."""
    fmts = (*formats, *(["csv"] if csv else []))
    extra = len(fmts) if window.experiments is not None and window.experiments.is_current() \
        else 0
    progress = _progress(window)
    written, twin = [], None
    # two stages, laying the figures out then writing the files, each step weighed by
    # its work: the pace measured on the first tells the second
    clock = RunClock(now, NoTimes())
    steps: list[tuple[float, ...]] = []           # each stage's steps' work

    def plan(names: list[str]) -> None:
        figures = [twin.figures()[name] for name in names]
        steps.append(tuple(laying_work(figure) for figure in figures))
        steps.append(tuple(file_work(figure, fmt) for figure in figures for fmt in fmts)
                     + (PICTURE_S,) * extra)        # the experiment's files: its curves
        clock.stage(Stage("laying the figures out", 1, 2, map(sum, steps), steps[0]))

    writing: dict = {}                  # the file being written: table_told reads it

    def move_bar(stage: int, done: int, share: float = 0.0) -> None:
        """One bar for the whole export, by the work of both stages' steps done (the
        laying out's bar at 88 % fell to 27 % as the writing began), never back."""
        works = steps[stage - 1] if len(steps) >= stage else ()
        whole = sum(map(sum, steps))
        if whole <= 0 or done > len(works):
            return
        work = sum(steps[0]) * (stage == 2) + sum(works[:done]) + \
            (works[done] * min(share, 1.0) if done < len(works) else 0.0)
        progress.setMaximum(BAR)
        progress.setValue(max(progress.value(), round(BAR * work / whole)))

    def told(done: int, total: int, file: str) -> None:
        move_bar(2, done)
        if steps and clock.index == 1:
            clock.stage(Stage("writing the files", 2, 2, map(sum, steps), steps[1]))
        clock.step(done, total + extra)
        left = clock.run_left()
        writing.update(file=file, done=done, total=total + extra, began=now(),
                       after=_after(left, steps[1][done:] if steps else ()))
        progress.setLabelText(writing_words(file, done, total + extra, left))
        if progress.wasCanceled():
            raise Stopped()

    def table_told(size: int, share: float) -> None:
        """A long table's megabytes so far, its share on the bar and the time left:
        its own pace for the rest of it, the files' pace for the files after it."""
        if not writing or share <= 0:
            return
        spent = now() - writing["began"]
        left = None if writing["after"] is None else \
            max(spent * (1 - share) / share + writing["after"], 1.0)   # not "about 0 s"
        move_bar(2, writing["done"], share)
        progress.setLabelText(writing_words(writing["file"], writing["done"],
                                            writing["total"], left, size))
        QApplication.processEvents()            # Cancel can be pressed mid-table
        if progress.wasCanceled():
            raise Stopped()

    def laying_left() -> float | None:
        """The time left as the figures are laid out: theirs at their pace, the files'
        at it but never under their seconds as measured here (file_work): laid out
        faster than planned, that pace told the files' 11 s as "about 1 s left"."""
        left, after = clock.run_left(0.0), clock.after_left()
        if left is None or left == LATE or after is None or len(steps) < 2:
            return clock.run_left()
        return max(left + max(sum(steps[1]) - after, 0.0), 1.0)

    def laying(done: int, total: int, figure: str) -> None:
        move_bar(1, done)
        clock.step(done, total)
        progress.setLabelText(f"Laying {figure} out at its own size ({done + 1} of "
                              f"{total}){left_words(laying_left()) or ESTIMATING}…")
        if progress.wasCanceled():
            raise Stopped()
    try:
        twin = window.plots.drawn_alone()
        with tables_told(table_told):       # each file as it is whole: a Cancel said
            # "after 0 files" with five written
            twin.export_all(folder, formats=tuple(formats), width=width, csv=csv, dpi=dpi,
                            told=told, wrote=written.append, laying=laying, plan=plan)
        named = experiment_name(window.experiments)
        written += _experiment(window, folder, fmts, dpi,
                               lambda k: told(len(written) + k, len(written),
                                                 f"{named}.{fmts[k]}"))
    except Stopped:
        window.status.say(f"Export cancelled after {len(written)} files in {folder}")
        return written
    except (OSError, ValueError) as error:
        reason = getattr(error, "strerror", None) or str(error)
        QMessageBox.warning(window, "Export failed", f"Could not export to {folder}: "
                                                     f"{reason}")
        window.status.say(f"Export failed: {reason}", error=True)
        return []
    finally:
        progress.close()
        progress.deleteLater()
        if twin is not None:
            twin.close()
            twin.deleteLater()
    window.status.say(f"Exported {len(written)} files to {folder}"
                      + older_note(folder, written))
    return written


def writing_words(file: str, done: int, total: int, left: float | None,
                  size: int | None = None) -> str:
    """"Writing attention.svg (3 of 12), about 8 s left…": the file, its place, the
    megabytes of it written so far (``size``: bytes, of a long table) and the time left
    (``left``: seconds, None before a file is written: "estimating")."""
    so_far = "" if size is None else (f", {size / 1e6:.0f} MB so far" if size >= 1e6
                                      else f", {size / 1e3:.0f} kB so far")
    return (f"Writing {file} ({done + 1} of {total}{so_far})"
            f"{left_words(left) or ESTIMATING}…")


def _after(left: float | None, works) -> float | None:
    """Of the time ``left`` told as a file starts, the part for the files after it:
    shared by the files' planned ``works`` (the file's first)."""
    if left is None or left == LATE or not works or sum(works) <= 0:
        return None
    return left * (1 - works[0] / sum(works))


def _progress(window) -> QProgressDialog:
    """The export's progress, shown once it has taken half a second."""
    progress = QProgressDialog(f"Laying the figures out at their own size{ESTIMATING}…",
                               "Cancel", 0, 0, window)
    progress.setWindowTitle("Export figures")
    progress.setWindowModality(Qt.WindowModal)
    progress.setMinimumDuration(500)
    progress.setAutoReset(False)
    progress.setValue(0)
    return progress


def older_note(folder: str, written) -> str:
    """The figure files an earlier export left in ``folder`` (not rewritten now), named
    after the export's message, so a stale figure is not taken for a fresh one."""
    from ..document.files import left_behind
    from .plots.figures import EXPORTED
    older = [path.name for path in left_behind(folder, written, EXPORTED)]
    if not older:
        return ""
    shown = ", ".join(older[:4]) + (f" and {len(older) - 4} more" if len(older) > 4 else "")
    return f"; older files there, not written now: {shown}"


def experiment_name(tab) -> str:
    """The name the Experiments plot's own export offers (jobs.file_name: order-use,
    extension-perplexity, paper-press2022, …), so two experiments exported into one
    folder do not overwrite each other; "experiment" before a result."""
    from .experiments.jobs import file_name, shown_metric
    if tab is None or tab.job is None or tab.result is None:
        return "experiment"
    return file_name(tab.job, shown_metric(tab.job, tab.result, tab.metric_box.currentData()))


def _experiment(window, folder: str, formats, dpi: int | None, told) -> list:
    """The Experiments tab's plot as its own export writes it (its provenance with it),
    as <folder>/<experiment_name>.<fmt>, when its result is of the session's current
    inputs; ``told(k)`` before the k-th file."""
    tab = window.experiments
    if tab is None or not tab.is_current():
        return []
    paths, name = [], experiment_name(tab)
    for k, fmt in enumerate(formats):
        told(k)
        paths.append(tab.export(Path(folder) / name, fmt, dpi))
    return [path for path in paths if path is not None]
