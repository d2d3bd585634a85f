"""A call from Python tells nothing while it is quick and, once its wait passes 1 s,
what it is doing and how far on stderr, in the command line's lines: posviz.load and
every run take it as their default; ``progress=False`` silences a call (and a model
loaded so, its runs), a call posviz makes inside another keeps the outer one's choice,
and the command line keeps its flags'. The 1 s is set here to none (told from the
start) or to an hour (a quick call), never timed."""
from __future__ import annotations

import io

import pytest

import posviz
from posviz.cli import main
from posviz.runtime import held_lines
from posviz.runtime.held_lines import HeldLines

TEXT = "the cat sat on the mat"


@pytest.fixture
def at_once(monkeypatch):
    """Every wait past the hold: a default call tells its lines from its start."""
    monkeypatch.setattr(held_lines, "HOLD_S", 0.0)


@pytest.fixture
def quick(monkeypatch):
    """No wait past the hold: a default call is a quick one."""
    monkeypatch.setattr(held_lines, "HOLD_S", 3600.0)


def test_a_long_wait_is_told_by_default(at_once, capsys):
    model = posviz.load(layers=1)
    assert "posviz: building the model\n" in capsys.readouterr().err
    model.compare(TEXT)
    assert "posviz: running the original order\n" in capsys.readouterr().err
    model.sweep(TEXT, count=3)
    assert "posviz: run 3 of 3\n" in capsys.readouterr().err
    posviz.sweep(TEXT, count=3, layers=1)
    assert "posviz: run 3 of 3\n" in capsys.readouterr().err
    posviz.compare_encodings(TEXT, encodings=["none", "rope"], layers=1)
    assert "posviz: running 2 models\n" in capsys.readouterr().err


def test_a_quick_call_tells_nothing(quick, capsys):
    model = posviz.load(layers=1)
    model.compare(TEXT)
    model.sweep(TEXT, count=3)
    posviz.sweep(TEXT, count=3, layers=1)
    assert capsys.readouterr().err == ""


def test_progress_false_silences_a_call_and_a_model_loaded_so(at_once, capsys):
    model = posviz.load(layers=1, progress=False)
    model.compare(TEXT)
    model.sweep(TEXT, count=3)
    posviz.sweep(TEXT, count=3, layers=1, progress=False)
    assert capsys.readouterr().err == ""
    told = []
    posviz.sweep(TEXT, count=3, layers=1, progress=lambda done, total: told.append(done))
    assert capsys.readouterr().err == "" and told[-1] == 3     # its load inside: quiet


def test_the_command_line_keeps_its_flags_default(at_once, capsys):
    assert main(["report", "--text", TEXT, "--layers", "1"]) == 0
    assert capsys.readouterr().err == ""                 # stderr is no terminal here


def test_held_lines_tell_the_last_line_held_then_each_line():
    out = io.StringIO()
    held = HeldLines(3600.0, out, clock=lambda: 0.0)
    held.write("posviz: importing torch")
    held.write("\n")
    held.write("posviz: building the model\n")
    assert out.getvalue() == ""
    held.show()                                          # the wait passed
    held.write("posviz: running\n")
    assert out.getvalue() == "posviz: building the model\nposviz: running\n"
    held.end()
    held.write("posviz: late\n")
    assert out.getvalue().endswith("running\n")


def test_a_held_line_gone_stale_is_not_told():
    """A line held since long before the wait passed ("about 5 s left" written 1.9 s
    before) is not told then; the next line is. A fake clock."""
    now = [0.0]
    out = io.StringIO()
    held = HeldLines(3600.0, out, clock=lambda: now[0])
    held.write("posviz: run 1 of 3, about 5 s left\n")
    now[0] = held_lines.STALE_S + 0.9                   # the wait passes
    held.show()
    assert out.getvalue() == ""
    held.write("posviz: run 2 of 3, about 3 s left\n")
    assert out.getvalue() == "posviz: run 2 of 3, about 3 s left\n"
    held.end()
    fresh = io.StringIO()
    held = HeldLines(3600.0, fresh, clock=lambda: now[0])
    held.write("posviz: run 1 of 3, about 5 s left\n")
    now[0] += held_lines.STALE_S / 2                    # a fresh line is told
    held.show()
    assert fresh.getvalue() == "posviz: run 1 of 3, about 5 s left\n"
    held.end()


def test_the_readme_says_the_default_and_the_counts_as_they_are():
    from pathlib import Path
    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text(
        encoding="utf-8").split())
    assert (f"a call tells nothing while it is quick, and once it has waited "
            f"{held_lines.HOLD_S:g} s it tells on stderr what it is doing" in readme)
    assert "the total is known from the first count" not in readme


def test_a_callables_done_never_falls_though_its_total_is_corrected():
    """Stages counted anew (3 steps, then 1, then 5): ``done`` only grows, the total
    is the estimate each stage corrects, down and up."""
    from posviz.api.whole_run import WholeRun
    told = []
    whole = WholeRun(lambda done, total: told.append((done, total)))
    for steps in (3, 1, 5):
        whole.stage("a stage")
        for done in range(1, steps + 1):
            whole(done, steps)
    dones, totals = [d for d, _ in told], [t for _, t in told]
    assert dones == sorted(dones) and dones[-1] == totals[-1] == 9
    assert len(set(totals)) > 1


def test_a_call_holding_its_lines_holds_only_its_own_threads(capsys):
    """A quick call on another thread (its lines held an hour) leaves this thread's
    call told: the hold is the thread's, not the process's."""
    import threading
    inside, leave = threading.Event(), threading.Event()

    def quick_call():
        with held_lines.holding(3600.0):
            inside.set()
            leave.wait()
    other = threading.Thread(target=quick_call)
    other.start()
    try:
        assert inside.wait(60)
        assert not held_lines.held_now()
        model = posviz.load(layers=1, progress=False)
        model.compare(TEXT, progress=True)
        assert "posviz: running the original order\n" in capsys.readouterr().err
    finally:
        leave.set()
        other.join()


def told_from_a_thread(start_thread):
    """The lines a posviz thread that ``start_thread(say)`` starts tells, inside a
    call whose lines are told from its start on a stream of its own: on that stream."""
    import threading
    stream, said = io.StringIO(), threading.Event()

    def say(line):
        print(f"posviz: {line}", file=held_lines.out(), flush=True)
        if threading.current_thread() is not threading.main_thread():
            said.set()
    with held_lines.holding(0.0, stream):
        stop = start_thread(say)
        try:
            assert said.wait(60)
        finally:
            stop()
    return stream.getvalue()


def test_a_loads_ticks_are_told_where_its_call_tells(capsys):
    from contextlib import ExitStack
    from posviz.models import reached

    def start(say):
        stack = ExitStack()
        stack.enter_context(reached.ticking(say, "importing torch", every=0.01))
        return stack.close
    assert "posviz: importing torch (" in told_from_a_thread(start)
    assert capsys.readouterr().err == ""


def test_a_late_line_told_again_goes_where_its_call_tells(capsys):
    from posviz.runtime.run_lines import Retelling

    class Late:
        retell = 0.01

        def __init__(self, say):
            self.say = say

        def retold(self):
            self.say("run 1 of 3 running for 2 s")
    assert "run 1 of 3 running" in told_from_a_thread(lambda say: Retelling(Late(say)).end)
    assert capsys.readouterr().err == ""


def test_an_exports_watch_is_told_where_its_call_tells(capsys):
    from posviz.cli.export_drawing import Drawing
    now = [0.0]

    def start(say):
        drawing = Drawing(say, 100, clock=lambda: now[0])
        now[0] = 100.0                  # a tick passed without a line (its own clock)
        drawing.watch("drawing the figures: the views")
        return drawing.close
    assert "drawing the figures: the views (" in told_from_a_thread(start)
    assert capsys.readouterr().err == ""


def test_the_first_line_of_a_slow_call_comes_within_2_s():
    """The hold, and a line come as late as a busy machine makes it (run_lines.SPARE_S),
    within the 2 s a wait may stay silent; a line told at the call's start is still
    fresh (not stale) when the hold ends."""
    from posviz.runtime.run_lines import SPARE_S
    assert held_lines.HOLD_S + SPARE_S <= 2.0
    assert held_lines.HOLD_S <= held_lines.STALE_S
    # and as late as a thread given no turn while torch, Qt or an import runs (at a
    # hold of 1.5 s, first lines came at 2.02-2.76 s at load 7-10)
    assert held_lines.HOLD_S + held_lines.STARVED_S <= 2.0


def test_a_line_written_past_the_hold_is_told_though_the_timer_is_late():
    """The timer's thread may wait for the GIL (Qt drawing a figure): a line written
    once the hold has passed tells the line held and itself. A fake clock."""
    now = [0.0]
    out = io.StringIO()
    held = HeldLines(1.0, out, clock=lambda: now[0])      # its timer never started
    held.write("posviz: drawing figure 1 of 1: attention\n")
    now[0] = 1.2
    held.write("posviz: writing 1 figure: 1 of 1\n")
    assert out.getvalue() == ("posviz: drawing figure 1 of 1: attention\n"
                              "posviz: writing 1 figure: 1 of 1\n")
    held.end()


@pytest.mark.parametrize("step", ["downloading someone/tiny at main (2 files, 1 MB)",
                                  "converting SmolLM2.gguf once: about 20 s-2 min"])
def test_a_download_or_a_conversion_is_told_at_once_within_the_hold(step):
    """A quick call's lines are held, but not a download's or a conversion's: said
    first, then over 1.5 s old when the hold passed, the conversion's "once, about
    20 s-2 min" was never told (a load after torch was imported)."""
    from posviz.api.steps import StepPrinter
    stream = io.StringIO()
    with held_lines.holding(3600.0, stream):
        printer = StepPrinter(steps=False)
        printer("reading config")
        assert stream.getvalue() == ""
        printer(step)
        assert stream.getvalue() == f"posviz: {step}\n"


def test_a_count_past_the_hold_tells_the_held_line_from_the_calling_thread():
    """The timer's thread may get no turn (Qt drawing, torch's one long call): a step's
    boundary on the call's own thread, though it writes no line (a count kept for
    later), tells the line held once the hold has passed. A fake clock."""
    from posviz.api.steps import StepPrinter
    now = [0.0]
    out = io.StringIO()
    held = HeldLines(1.0, out, clock=lambda: now[0])      # its timer never started
    with held_lines.lent(held):
        printer = StepPrinter()
        printer("loading weights")
        printer("loading weights", 1, 272)
        assert out.getvalue() == ""                        # within the hold
        now[0] = 1.2
        printer("loading weights", 2, 272)                 # a count: no line of its own
    assert out.getvalue() == "posviz: loading weights\n"
    held.end()


def test_a_figure_part_planned_past_the_hold_is_told_as_it_begins():
    """A part of a figure's drawing that, as planned (Drawing.parts), would carry the
    call's wait past the hold is told as it begins: it is drawn in one call of Qt's,
    in which the timer's thread may get no turn. A fake clock."""
    from posviz.api.drawing import Drawing
    from posviz.api.steps import StepPrinter
    now = [0.0]
    out = io.StringIO()
    held = HeldLines(1.5, out, clock=lambda: now[0])      # its timer never started
    with held_lines.lent(held):
        drawing = Drawing(StepPrinter(), 600, clock=lambda: now[0])
        drawing.names, drawing.files = ["attention"], ["png"]
        drawing.begin()
        planned = dict(drawing.parts())
        drawing.drawing("", "the views of the runs")
        assert planned["views"] < 1.5 and out.getvalue() == ""   # ends within the hold
        now[0] = 1.5 - planned["panel"]                   # the panel would end past it
        drawing.drawing("", "all in one panel")
        drawing.close()
    assert out.getvalue().startswith("posviz: drawing the figures: all in one panel, about")
    held.end()


def test_a_figure_s_numbers_and_size_are_told_as_its_display_is(at_once, capsys):
    """A figure's ``.data`` drew it untold however long (3.2 s at 2,301 tokens, load
    8): all a figure does lazily from Python is told by its drawing's lines."""
    report = posviz.load(layers=1).compare(TEXT)
    capsys.readouterr()
    for ask in (lambda f: f.data, lambda f: f.dims, lambda f: f.size()):
        figure = report.figure("symmetry")
        report_panels_gone(report)
        ask(figure)
        assert "posviz: drawing the figures: the views of the runs" in \
            capsys.readouterr().err
    swept = posviz.load(layers=1).sweep(TEXT, count=3)
    capsys.readouterr()
    for ask in (lambda f: f.data, lambda f: f.dims):
        ask(swept.figure())
        assert "posviz: drawing figure 1 of 1" in capsys.readouterr().err


def report_panels_gone(report) -> None:
    """The report's figures drawn anew by the next call (its panels forgotten)."""
    from posviz.gui.plots.headless import _PANELS
    _PANELS.pop(report, None)


def test_importing_torch_is_told_again_from_its_own_thread_at_each_import(
        tmp_path, monkeypatch):
    """The ticks' thread waits for Python's lock behind torch's imports (a fresh
    kernel's first line at 2.76 s, load 8): each module imported tells "importing
    torch" again from the importing thread once a tick has passed untold. A fake clock;
    the ticks' thread waits an hour between looks."""
    import functools
    import importlib
    import sys
    import threading

    import torch

    from posviz import boot
    from posviz.api.slow_calls import import_torch
    from posviz.models import reached
    (tmp_path / "posviz_torch_probe.py").write_text("VALUE = 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "posviz_torch_probe", raising=False)
    now, said = [0.0], []
    monkeypatch.setattr(reached, "ticking", functools.partial(
        reached.ticking, every=3600.0, clock=lambda: now[0]))

    def importing_torch():              # torch's own modules, without importing it again
        now[0] = 3601.0                 # a tick passed untold
        importlib.import_module("posviz_torch_probe")
        sys.modules["torch"] = torch
    monkeypatch.setattr(boot, "before_torch", importing_torch)
    monkeypatch.delitem(sys.modules, "torch")
    import_torch(lambda step, done=None, total=None: said.append(
        (step, threading.current_thread())))
    assert said == [("importing torch", threading.current_thread()),
                    ("importing torch (3601 s)", threading.current_thread())], said


def test_help_says_the_hold_the_calls_keep():
    """help(posviz.load) and help(Model.compare) said runs were told once they had
    waited 2 s, the README 1.5 s; a call holds its lines HOLD_S."""
    import re

    import posviz
    from posviz.api.model import Model
    from posviz.runtime.held_lines import HOLD_S
    for doc in (posviz.load.__doc__, Model.compare.__doc__):
        said = re.findall(r"waited ([\d.]+) s", " ".join(doc.split()))
        assert said and all(float(s) == HOLD_S for s in said), said


def test_a_report_of_a_text_is_refused_naming_its_argument():
    """m.report("some text") raised an AttributeError: a session is asked for."""
    import posviz
    from posviz.errors import PosvizInputError
    with pytest.raises(PosvizInputError, match=r"session.* must be a session .*compare"):
        posviz.load(layers=1).report("some text")


def test_a_reports_maps_on_disk_are_told_as_they_go(at_once, monkeypatch, capsys):
    """A script's long report keeps its maps in temporary files; when the report goes
    they are removed, told as the command line tells them (SmolLM2's 6.3 GB: 3.2 s
    after a script's last line, untold), and only past the command line's size."""
    import gc

    from posviz.models import maps
    monkeypatch.setattr(maps, "IN_MEMORY", 0)              # every layer to the file
    for size, told in ((0, True), (1 << 40, False)):       # past it / smaller: untold
        monkeypatch.setattr(maps, "REMOVAL_TOLD", size)
        model = posviz.load(layers=1)
        r = model.compare(TEXT)
        capsys.readouterr()
        del r, model                # (the model keeps the original order's run)
        gc.collect()
        err = capsys.readouterr().err
        assert ("posviz: removing the attention maps kept on disk (" in err) is told, err
