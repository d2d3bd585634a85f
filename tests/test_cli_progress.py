"""A long real-model report tells its steps on stderr even when stderr is a log or a
pipe, and bad input still gives exactly one line there."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from posviz.cli import main
from posviz.models.hf import IMPORTING_LIBRARIES
from posviz.models.hf.loading import IMPORTING

pytest.importorskip("transformers")
from test_hf import save_tiny  # noqa: E402

STEPS = ["reading config", "loading tokenizer", IMPORTING, "loading weights"]


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models") / "bert"
    save_tiny("bert", folder)
    return folder


def test_a_real_models_steps_reach_a_piped_stderr(bert, capsys):
    """Run as a user would with ``2> log``: stderr is a pipe, not a terminal (a process
    of its own); --quiet in this process, where stderr is not a terminal either."""
    args = ["report", "--model", str(bert), "--text", "the dog plays", "--json"]
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    told = subprocess.run([sys.executable, "-m", "posviz", *args], capture_output=True,
                          text=True, timeout=180, env=env)
    assert told.returncode == 0, told.stderr
    assert main([*args, "--quiet"]) == 0
    quiet = capsys.readouterr()
    lines = told.stderr.splitlines()
    assert all(line.startswith("posviz: ") for line in lines), lines
    steps = [line.removeprefix("posviz: ") for line in lines     # not a step told again
             if not re.search(r" \(\d+ s\)$", line)]           # each second it lasts
    assert steps[:5] == [IMPORTING_LIBRARIES, *STEPS]     # the imports: 1.5-4.5 s
    assert steps[-2:] == ["running the original order", "running the chosen order"]
    assert quiet.err == ""                                 # --quiet: results only
    assert json.loads(told.stdout) == json.loads(quiet.out)


@pytest.mark.parametrize("make, said", [
    (lambda root: root / "absent", "no model folder"),
    (lambda root: root, "no config.json"),
])
def test_a_model_that_is_not_there_is_one_line_before_any_step(capsys, tmp_path, make, said):
    code = main(["report", "--model", str(make(tmp_path)), "--text", "a b"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and said in err, err
    assert "reading config" not in err


def test_the_built_in_model_keeps_a_pipe_silent(capsys):
    assert main(["report", "--layers", "1", "--heads", "1", "--d-model", "8",
                 "--text", "a b", "--json"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("order, said", [("0,1,1", "1 repeats"), ("0,x,1", "'x' is not"),
                                         ("-1,0,1", "-1 is out of range")])
def test_an_order_no_text_can_take_is_refused_before_the_model_loads(capsys, bert, order,
                                                                      said):
    code = main(["report", "--model", str(bert), "--text", "the dog plays",
                 "--order", order])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert "--order must be a permutation" in err and said in err


def test_an_order_that_does_not_fit_the_tokens_ends_the_steps_with_one_error(capsys, bert):
    """Whether an order fits is known once the tokenizer has read the text, before the
    weights load: the steps told until then stay, and the last line, the only one not a
    step, says why."""
    code = main(["report", "--model", str(bert), "--text", "the dog plays",
                 "--order", "1,0"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2
    assert [line for line in err if "error" in line] == err[-1:]
    assert "entries but there are" in err[-1]
    assert [line.removeprefix("posviz: ") for line in err[:-1]] == STEPS[:2]


def test_progress_forces_plain_lines_on_a_pipe():
    """--progress tells a built-in sweep's runs on a piped stderr (silent without it),
    one plain line each: no carriage return redraws a line in a log."""
    argv = [sys.executable, "-m", "posviz", "sweep", "--text", "a b c d e", "--kind",
            "random", "--count", "3", "--layers", "1"]
    told = subprocess.run([*argv, "--progress"], capture_output=True, text=True,
                          timeout=180)
    silent = subprocess.run(argv, capture_output=True, text=True, timeout=180)
    assert told.returncode == silent.returncode == 0, told.stderr + silent.stderr
    assert silent.stderr == ""
    assert "posviz: run 3 of 3\n" in told.stderr and "\r" not in told.stderr, told.stderr
    assert re.match(r"posviz: importing torch\n(posviz: importing torch \(\d+ s\)\n)*"
                    r"posviz: building the model\n", told.stderr), told.stderr
    both = subprocess.run([*argv, "--progress", "--quiet"], capture_output=True, text=True,
                          timeout=180)
    assert both.returncode == 2 and len(both.stderr.splitlines()) == 1, both.stderr


@pytest.mark.parametrize("argv", [["train", "--out", "{tmp}", "--steps", "1"],
                                  ["sweep", "--text", "a b c", "--count", "2"]])
def test_progress_beside_quiet_is_refused_by_every_command(argv, tmp_path, capsys):
    """train as well as the commands that evaluate: one line, exit 2, nothing trained."""
    argv = [word.format(tmp=tmp_path / "run") for word in argv]
    assert main([*argv, "--progress", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err == "posviz: error: --progress and --quiet contradict each other: give one\n"
    assert not (tmp_path / "run").exists()


def test_a_first_load_s_conversion_is_told_where_no_step_is(monkeypatch, tmp_path):
    """What a load tells by default in Python and with --quiet's absence on a pipe for
    the built-in model (api.steps.as_progress(None)): a download, and the conversion
    of a GGUF file's first load, with how long it takes (it was silent for 42 s)."""
    import io

    from posviz.api.steps import StepPrinter
    from posviz.models.hf.converted import CONVERTING, conversion_time
    monkeypatch.setenv("POSVIZ_CACHE", str(tmp_path))      # no conversion measured yet
    stream = io.StringIO()
    printer = StepPrinter(stream, steps=False)
    printer("loading tokenizer")
    estimate = conversion_time(98_362_432)                  # SmolLM2's Q4_1 file
    printer(f"{CONVERTING}model.gguf once: de-quantizing it, {estimate}")
    assert stream.getvalue() == f"posviz: converting model.gguf once: de-quantizing it, " \
                                f"{estimate}\n"
    assert estimate.endswith(" on 2 cores")


def test_a_conversion_s_estimate_holds_the_time_its_steps_are_timed_at(monkeypatch, tmp_path):
    """The header said "about 25-84 s on 2 cores", the window "25-84 s in all", while
    SmolLM2's conversion was measured at 99 s and 120 s and its steps' seconds, the time
    left told with each step (runtime.conversion_left), sum to 98.6 s: one pace, STEPS'."""
    from posviz.models.hf.converted import STEPS, STEPS_MB, conversion_seconds
    monkeypatch.setenv("POSVIZ_CACHE", str(tmp_path))      # no conversion measured yet
    steps = sum(seconds for *_, seconds in STEPS)
    low, high, where = conversion_seconds(int(STEPS_MB * 1e6))
    assert where == "on 2 cores"
    assert low < 23.5 and 120 < high and low < steps < high, (low, high, steps)
    low, high, _ = conversion_seconds(400_000_000)         # a file 4 × as large: 4 ×
    assert low < 4 * steps < high


def test_a_paper_check_of_seconds_says_what_it_does_and_counts(capsys):
    """paper alibi-slopes (3.3 s on a terminal, silent) says what it checks before torch
    loads, then each of its three counts of heads."""
    assert main(["paper", "alibi-slopes", "--progress"]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "posviz: checking alibi-slopes on random weights", lines
    assert lines[1].startswith("posviz: reading the slopes of 6, 8, 12 heads")
    assert lines[2].startswith("posviz: step 1 of 3") and \
        lines[-1] == "posviz: step 3 of 3", lines


def test_compare_counts_its_models(capsys):
    assert main(["compare", "--pe", "none,rope", "--layers", "1", "--progress"]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == "posviz: running 2 models"
    # each model's forwards told by their layers, as report tells them
    assert lines[1].startswith("posviz: model 1 of 2, forward 2 of 3, layer 1 of 1"), lines
    assert lines[-1] == "posviz: model 2 of 2, 100 % done", lines


def test_the_python_api_s_sweep_tells_its_model_s_building(capsys):
    """posviz.sweep(progress=True) was silent until its first count (2.8 s)."""
    import posviz
    posviz.sweep("a b c d", count=2, layers=1, progress=True)
    assert capsys.readouterr().err.startswith("posviz: building the model\n")


def test_a_command_s_process_ends_with_its_output_and_exit_handlers():
    """A command's process leaves without the interpreter's teardown (__main__.leave):
    what it printed and its exit handlers' output still come, with its status."""
    code = ("import atexit, sys\nfrom posviz import __main__ as boot\n"
            "atexit.register(lambda: print('handled'))\n"
            "print('result', end=' ')\nsys.stderr.write('step')\nboot.leave(3)\n"
            "print('not reached')")
    left = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert (left.returncode, left.stdout, left.stderr) == (3, "result handled\n", "step")


@pytest.mark.parametrize("how", ["cli", "api"])
def test_the_built_in_model_s_forwards_tell_their_layers(how, monkeypatch, capsys):
    """report --progress on a pipe (and compare(progress=True)) with the built-in model
    said "running the original order", then 13 s of silence for 6,000 words: its
    forwards are told layer by layer as a real model's are, once a forward has taken
    longer than the tick (here 0 s, on a clock that moves 1 s a block)."""
    import itertools

    import posviz
    from posviz.api import steps
    from posviz.models import reached
    monkeypatch.setattr(steps, "TICK_S", 0.0)
    ticks = itertools.count()
    monkeypatch.setattr(reached, "clock", lambda: float(next(ticks)))
    if how == "cli":
        assert main(["report", "--layers", "3", "--text", "a b c d e", "--json",
                     "--progress"]) == 0
    else:
        posviz.load(layers=3, seed=0).compare("a b c d e", progress=True)
    lines = capsys.readouterr().err.splitlines()
    for forward, run in enumerate(("running the original order",
                                   "running the chosen order"), 1):
        told = [line for line in lines if line.startswith(f"posviz: {run}: forward ")]
        for layer in (1, 2, 3):         # (sinusoidal: no noise floor's forward)
            assert f"posviz: {run}: forward {forward} of 2, layer {layer} of 3" in {
                line.split(" (")[0].split(", about")[0] for line in told}, lines
        assert told[-1].endswith("s left"), lines


COMMANDS_OF_A_TEXT = {                   # every command that can run a long text
    "report": ["report", "--json"],
    "export": ["export", "--format", "png", "--no-csv", "--out", "{out}"],
    "sweep": ["sweep", "--count", "2", "--json"],
    "compare": ["compare", "--pe", "rope,none", "--json"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS_OF_A_TEXT))
def test_a_command_removes_its_maps_kept_on_disk_and_says_so(command, monkeypatch, capsys,
                                                              tmp_path):
    """SmolLM2's report at 3,388 tokens was 6.5 s silent after its JSON before the
    process ended, its export 4.6 s after its last file, its sweep of 3,000 words 2.5 s
    after "run 2 of 2": their maps' temporary files went untold as the process ended.
    Every command's maps (cli.main, models.maps.kept_on_disk) are removed before it
    returns, and told."""
    import tempfile

    from posviz.models import maps as maps_module
    monkeypatch.setattr(maps_module, "IN_MEMORY", 0)           # every layer to the file
    monkeypatch.setattr(maps_module, "REMOVAL_TOLD", 0)             # told at any size
    files, temporary = [], tempfile.TemporaryFile

    def temporary_file(**kwargs):
        files.append(temporary(**kwargs))
        return files[-1]
    monkeypatch.setattr(maps_module.tempfile, "TemporaryFile", temporary_file)
    argv = [word.format(out=tmp_path) for word in COMMANDS_OF_A_TEXT[command]]
    assert main([*argv, "--text", "the dog plays in the park", "--progress"]) == 0
    lines = capsys.readouterr().err.splitlines()
    told = [line for line in lines
            if line.startswith("posviz: removing the attention maps kept on disk (")]
    assert files and told, lines
    assert all(file.closed for file in files)                   # the files are gone


def test_the_maps_on_disk_are_told_in_the_projects_sizes(monkeypatch, capsys):
    """One removal of a command's maps, told with their size as the project writes it."""
    from posviz.models import maps as maps_module
    from posviz.models.limits.memory import size_text
    monkeypatch.setattr(maps_module, "IN_MEMORY", 0)
    monkeypatch.setattr(maps_module, "REMOVAL_TOLD", 0)
    sizes = []
    close = maps_module.LayerMaps.close
    monkeypatch.setattr(maps_module.LayerMaps, "close", lambda self: (
        sizes.append(self.on_disk), close(self)))
    held = []                        # the runs held past the command, as a cached model's
    put = maps_module.LayerMaps.put
    monkeypatch.setattr(maps_module.LayerMaps, "put", lambda self, *a, **k: (
        held.append(self), put(self, *a, **k))[1])
    assert main(["report", "--text", "the dog plays in the park", "--json",
                 "--progress"]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[-1] == (f"posviz: removing the attention maps kept on disk "
                         f"({size_text(sum(sizes))})"), lines
    assert sizes and all(size > 0 for size in sizes), sizes
    assert all(maps.on_disk == 0 for maps in held)
