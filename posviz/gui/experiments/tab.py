"""The Experiments tab: sweeps, swap maps, position probes, paper checks, encodings
compared on one reorder, the context-extension lab and the trained checkpoints' order
use, run off the GUI thread (progress, time left, cancel) and drawn in
one exportable figure. What runs is a ``runtime.experiments.ExperimentJob`` on a
``runtime.scheduler.Scheduler`` (one worker, a newer run supersedes an older one); its
outcomes and progress reach the GUI thread as Qt signals. The model, text and positions
come from the window's session (``session()``: the built-in model and text without one).
"""
from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from PySide6 import QtCore, QtWidgets

from .controls import (CURRENT_REFUSED, METRIC_TIPS, TEXT_SOURCES, build_controls, done_words,
                       fill_metric_box, lock_inputs, lock_run, metric_items, refuse_told,
                       remember_took, tell_takes)
from .figure import ExperimentFigure
from .progress_line import status_row, tell_progress
from .swaps import sync_map_choosers
from .jobs import (DRAWN, SWAP_MAP, WHAT_NAMES, Relay, caption, changed, computed_for,
                   file_name, filed_line, make_job, provenance, shown_metric)
from ..folders import remember_folder, start_folder
from ..plots.exporting import (add_copy_action, add_export_actions, ask_export_path,
                               busy_writing, copy_figure, writing)
from posviz.analysis.experiments.papers import default_weights
from posviz.errors import PosvizInputError, one_line
from posviz.models.training.checkpoint import RANDOM, TRAINED
from posviz.models import reached
from posviz.models.trace import and_joined
from posviz.runtime.experiments import ExperimentJob, every_so_often
from posviz.runtime.stage_times import StageTimes
from posviz.runtime.time_left import RunClock

if TYPE_CHECKING:
    from posviz.document.session import Session


class ExperimentsTab(QtWidgets.QWidget):
    """Controls, a progress line and the experiment figure."""

    TIP = ("Experiments over many orders and texts: sweeps, swap sensitivity, a position "
           "probe, checks of published claims, encodings compared, the "
           "context-extension lab and the trained checkpoints' order use")
    told = QtCore.Signal(str)   # a run started, ended or was cancelled: the window's status

    def __init__(self, session: Callable[[], Session | None] = lambda: None, settings=None,
                 parent=None):
        super().__init__(parent)
        from posviz.runtime.scheduler import Scheduler
        self._session = session            # the session whose model, text and positions run
        self.settings = settings           # QSettings: export folder, encodings compared
        self.result = None
        self.job: ExperimentJob | None = None
        self._file: str | None = None
        self._started = 0.0
        self._done = ""                    # the status line of the result shown
        self._submitted = None             # the job running, or the last one run
        self._refused = None               # the inputs a run failed on, while said
        self.stale = False                 # the result shown is of other inputs
        self.differ: list[str] = []        # which (jobs.changed)
        self._relay = Relay(self)
        self._relay.finished.connect(self._finished)
        self._relay.progressed.connect(self._progressed)
        self._relay.said.connect(self._stage_started)
        self._stage = ""                   # what the run does now
        self._far = None                   # the stage's own forward's last block (_run)
        self._clock = RunClock(times=StageTimes())   # its stages and steps, for the time left
        self._ticking = QtCore.QTimer(self, interval=1000, timeout=self._tell_progress)
        # its thread (and torch's threads of it) ends after each experiment: see
        # Scheduler's ends_when_idle
        self.scheduler = Scheduler(self._run, self._relay.finished.emit,
                                   name="posviz-experiment", ends_when_idle=True)
        self.figure = ExperimentFigure()
        # its height is what the page leaves: the canvas's size hint (3/4 of the screen)
        # made the scrolling page taller than the window, the legend under the fold
        self.figure.canvas.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding,
                                         QtWidgets.QSizePolicy.Policy.Ignored)
        add_export_actions("experiment", self.figure, self._export)
        add_copy_action(self.figure, lambda figure: figure.parentWidget().copy_plot())
        layout = QtWidgets.QVBoxLayout(self)
        layout.setContentsMargins(4, 1, 4, 1)     # the 6 px the progress's 2nd line takes
        layout.addLayout(build_controls(self))
        layout.addLayout(status_row(self))
        layout.addWidget(self.figure, 1)
        app = QtWidgets.QApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.shutdown)
        self._what_changed()

    # -- controls -------------------------------------------------------------------
    def chosen_encodings(self) -> tuple[str, ...]:
        return self.encodings.chosen()

    def _paper_chosen(self) -> None:
        """A paper's check runs on the weights it speaks of: random where it can."""
        self.weights.setCurrentIndex(self.weights.findData(
            default_weights(self.paper.currentData())))

    def _what_changed(self) -> None:
        what, kind = self.what.currentData(), self.kind.currentData()
        drawn = what == "sweep" and kind in DRAWN       # fixed orders: no count, no seed
        shown = {self.kind: what == "sweep", self.seed: drawn, self.count: drawn,
                 self.texts: what in ("sweep", "probe"), self.features: what == "probe",
                 self.paper: what == "paper", self.encodings: what == "compare",
                 self.weights: what in ("paper", "compare"),
                 self.metric_box: what in ("sweep", "compare", "extend")}
        for widget, visible in shown.items():
            widget.setVisible(visible)
            self._labelled[widget].setVisible(visible)
        session = self._session()
        self._offer_current_text(what != "probe")
        source = self.texts.currentData()
        if what == "probe" and source == "current":    # one text cannot be held out
            self.texts.setCurrentIndex(self.texts.findData("generated"))
        elif what == "sweep" and source == "generated":
            self.texts.setCurrentIndex(self.texts.findData("current"))
        if what == "paper":
            self._paper_chosen()
        elif what == "compare":            # the window's kind of weights, to start with
            trained = session is not None and session.spec.trained
            self.weights.setCurrentIndex(self.weights.findData(TRAINED if trained
                                                               else RANDOM))
        self._fill_metrics(what)
        has_map = self.metric_box.findData(SWAP_MAP)   # a swap sweep's; kept while hidden
        if (what, kind) == ("sweep", "swap") and has_map < 0:
            self.metric_box.addItem("swap map (all pairs)", SWAP_MAP)
        elif has_map >= 0 and (what == "compare" or what == "sweep" and kind != "swap"):
            self.metric_box.removeItem(has_map)
        if self.status.property("error"):      # said of the previous choice
            self._say("")
        self.refresh_stale()

    def _fill_metrics(self, what: str) -> None:
        """The Show box's choices for ``what``: the lab's figures (an attention figure
        per length of its result shown) or the symmetry metrics."""
        lab = what == "extend"
        shown = (self.result.to_dict() if lab and self.job is not None
                 and self.job.what == "extend" else None)
        fill_metric_box(self.metric_box, metric_items(lab, shown))
        self.metric_box.setToolTip(METRIC_TIPS[lab])

    def _offer_current_text(self, offered: bool) -> None:
        """The probe scores on texts it holds out, so the window's one text is greyed
        out for it, saying why in the list, not refused after Run."""
        index = self.texts.findData("current")
        self.texts.model().item(index).setEnabled(offered)
        self.texts.setItemText(index, TEXT_SOURCES["current"] if offered else
                               f"{TEXT_SOURCES['current']} (one: the probe needs several)")
        self.texts.setItemData(index, None if offered else CURRENT_REFUSED,
                               QtCore.Qt.ItemDataRole.ToolTipRole)

    def _texts_chosen(self) -> None:
        if self.texts.currentData() != "file":
            return
        path, _ = QtWidgets.QFileDialog.getOpenFileName(
            self, "Texts, one a line", str(start_folder(self.settings)),
            "Text files (*.txt);;All (*)")
        if path:
            remember_folder(self.settings, path)
            self._file = path
            self.texts.setItemText(self.texts.currentIndex(), f"Texts from {Path(path).name}")
        elif self._file is None:
            self.texts.setCurrentIndex(0)
        self.refresh_stale()

    # -- running --------------------------------------------------------------------
    def make_job(self) -> ExperimentJob:
        """The job the controls describe (PosvizInputError for bad texts)."""
        return make_job(self, self._session())

    def running(self) -> bool:
        """Is an experiment going (Cancel active)?"""
        return self.cancel_button.isEnabled()

    def run(self) -> None:
        """Run the experiment the controls describe; nothing while one runs (Run and its
        Ctrl+Return are off then: a second press threw the work so far away unsaid)."""
        if self.running():
            return
        try:
            job = self.make_job()
            if job.what == "probe" and len(job.texts) == 1:
                raise PosvizInputError("the probe holds texts out: choose generated "
                                       "texts, the example sentences or a file of texts")
        except (PosvizInputError, OSError) as error:
            self._refuse(one_line(error), self._inputs())
            return
        self._submitted, self._far = job, None   # self.job: the job of the result shown
        self._started, self._clock = time.monotonic(), RunClock(times=StageTimes())
        self._ticking.start()                    # the time left runs down between steps
        self.progress.show()
        self.cancel_button.setEnabled(True)
        lock_inputs(self, True)
        lock_run(self, True)
        self.takes.hide()                        # the time left says it now
        self._stage = f"running the {WHAT_NAMES[job.what]}"
        self.told.emit(f"R{self._stage[1:]} (Experiments tab)…")
        self._progressed(0, 0)                   # busy until the first step is counted
        if self.result is None:                  # not the invitation to press Run
            self.figure.show_message(f"R{self._stage[1:]}: its plot appears here when it "
                                     "is done.")
        self.scheduler.submit(job)

    def _run(self, job: ExperimentJob, should_stop):
        """The job, on the worker; once superseded (cancelled, then Run) its stages and steps are
        not told: they went on to the new run's bar until its next checkpoint."""
        from posviz.runtime.experiments import run_experiment
        worker = threading.get_ident()

        def current(emit):
            return lambda *told: None if should_stop() else emit(*told)

        def far(now):       # this run's forwards only, not another's (reached is global)
            if threading.get_ident() == worker and not should_stop():
                self._far = now
        with reached.listening(far):
            return job, run_experiment(job, should_stop, current(every_so_often(
                self._relay.progressed.emit)), current(self._relay.said.emit))

    def cancel(self) -> None:
        if not self.cancel_button.isEnabled():
            return
        self.scheduler.cancel()
        self._idle()
        self._say("cancelled; what was shown before is kept")
        self.told.emit(f"The {WHAT_NAMES[self._submitted.what]} was cancelled")

    def shutdown(self) -> None:
        self.scheduler.shutdown()

    def _idle(self) -> None:
        self._ticking.stop()
        self.progress.hide()
        lock_run(self, False)                    # before Cancel is off: its focus to Run
        self.cancel_button.setEnabled(False)
        lock_inputs(self, False)
        tell_takes(self)
        if self.result is None:                  # nothing ran: the invitation again
            self.figure.show_message(ExperimentFigure.INVITATION)

    @QtCore.Slot(object)
    def _stage_started(self, stage: str) -> None:
        """A new stage counts its own steps and time; a Stage also its place in the run."""
        self._stage, self._far = stage, None     # forwards told after it are its own
        self._clock.stage(stage)
        self._progressed(0, 0)

    @QtCore.Slot(int, int)
    def _progressed(self, done: int, total: int) -> None:
        """``done`` of the stage's ``total`` steps (0 of 0: the stage starts)."""
        if self.cancel_button.isEnabled():
            self._clock.step(done, total)
            self._tell_progress()

    def _tell_progress(self) -> None:
        tell_progress(self)                 # the bar and the words: progress_line

    @QtCore.Slot(object)
    def _finished(self, outcome) -> None:
        if not self.scheduler.is_current(outcome.generation):
            return                               # superseded or cancelled on the way
        self._idle()
        if outcome.failed:
            self._refuse(outcome.message, self._submitted)
            return
        self.job, self.result = outcome.result
        remember_took(self, time.monotonic() - self._started)
        tell_takes(self)
        self._done = done_words(time.monotonic() - self._started)
        self._say(self._done)
        self.told.emit(f"The {WHAT_NAMES[self.job.what]}: {self._done}")
        self.stale, self.differ = False, []
        self.figure.set_stale(False)
        self._redraw()
        self.refresh_stale()              # the inputs may have changed while it ran

    def _inputs(self):
        """What a run reads now: the job the controls describe, or why there is none."""
        try:
            return self.make_job()
        except (PosvizInputError, OSError) as error:
            return one_line(error)

    def _refuse(self, message: str, inputs) -> None:
        """Say why a run of ``inputs`` (_inputs) failed, until the inputs change."""
        self._refused = inputs
        refuse_told(self, message, inputs)          # and what to set, and not "Running"

    def refresh_stale(self) -> None:
        """Dim the result shown, saying why, while its inputs (experiment, model, text,
        positions, order, options) are not the controls' (called at session changes);
        a failed run's message goes once its inputs changed."""
        self.encodings.say_model(self._session(), self._labelled[self.encodings])
        tell_takes(self)
        if self._refused is not None and self._inputs() != self._refused:
            self._refused = None
            self._say(self._done if self.result is not None else "")
        if self.result is None or self.cancel_button.isEnabled():
            return
        try:
            now = self.make_job()
        except (PosvizInputError, OSError):
            now = None
        differ = changed(self.job, now, self.what.currentData())
        self.differ = differ
        self.figure.set_stale(bool(differ),
                              computed_for(self.job, differ, self.what.currentData()),
                              filed_line(self.job, differ))
        if not differ and self.stale:
            self._say(self._done)
        self.stale = bool(differ)
        shown = WHAT_NAMES[self.job.what]
        if differ == ["experiment"]:
            self._say(f"The dimmed plot is the {shown} run before: press Run "
                      "(Ctrl+Return) for this experiment")
        elif differ:
            self._say(f"The dimmed {shown} was computed for the previous "
                      f"{and_joined(differ)}: press "
                      "Run (Ctrl+Return) for the current ones")

    def _redraw(self) -> None:
        if self.result is None:
            return
        if self.job.what == self.what.currentData():
            self._fill_metrics(self.job.what)   # the lab's lengths, once it has run
        metric = shown_metric(self.job, self.result, self.metric_box.currentData())
        if metric is not None and self.metric_box.findData(metric) >= 0:
            with QtCore.QSignalBlocker(self.metric_box):   # the Show box names it
                self.metric_box.setCurrentIndex(self.metric_box.findData(metric))
        self.figure.subtitle = caption(self.job)
        sync_map_choosers(self)
        if note := self.figure.draw(self.job, self.result, metric):
            self._say(note, error=True)

    def _say(self, text: str, error: bool = False, kept: str = "",
             shorts: tuple[str, ...] = ()) -> None:
        self.status.setStyleSheet("color: #b00020;" if error else "color: #404040;")
        self.status.say(text, kept, wrap=error, shorts=shorts)
        self.status.setProperty("error", error and bool(text))

    def is_current(self) -> bool:
        """Is a result shown, finished, and of the controls' inputs (not dimmed)?"""
        running = self.cancel_button.isEnabled()
        return self.result is not None and not self.stale and not running

    def provenance(self) -> dict:
        """What an export carries: jobs.provenance of the result shown."""
        return (provenance(self.job, self.result, self.differ) if self.job is not None
                else {})

    def copy_plot(self) -> bool:
        """The experiment's plot as drawn, onto the clipboard (Edit › Copy plot, Ctrl+C)."""
        copy_figure(self.figure.drawn_alone())        # at its own size, as a file
        self._say("Copied the experiment plot to the clipboard")
        return True

    def _export(self, name: str, fmt: str) -> None:
        if self.job is not None and self.result is not None:   # offered as what it shows
            name = file_name(self.job, shown_metric(self.job, self.result,
                                                    self.metric_box.currentData()))
        chosen = ask_export_path(self, name, fmt, self.settings)
        if chosen is not None:
            with busy_writing(self, chosen[0], self.told.emit):
                written = self.export(chosen[0], fmt, chosen[2])
            self.told.emit(f"Wrote {written}" if written else f"Did not write {chosen[0].name}")

    def export(self, path: Path, fmt: str, dpi: int | None = None) -> Path | None:
        """Write the figure as ``fmt`` (png at ``dpi``, svg, pdf or csv) to ``path``."""
        path = Path(path).with_suffix(f".{fmt}")
        figure, facts = self.figure, self.provenance()
        try:
            return writing(path, lambda: figure.export(path, dpi=dpi, provenance=facts))
        except PosvizInputError as error:
            self._say(str(error), error=True)
            return None

