"""Ctrl+C stops a command in one line on stderr with status 130 (as a shell reports
SIGINT), not a Python traceback through torch's modules."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ctrl_c_during_a_sweep_says_one_line_and_exits_130():
    text = " ".join(f"w{i}" for i in range(40))
    process = subprocess.Popen(
        [sys.executable, "-m", "posviz", "sweep", "--text", text, "--count", "1000000",
         "--progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    before = []
    try:
        for line in process.stderr:           # its runs have started: a progress line
            before.append(line)
            if line.startswith("posviz: run "):
                break
        else:
            raise AssertionError("".join(before))
        process.send_signal(signal.SIGINT)
        out, after = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, "".join(before) + after
    assert after == "posviz: stopped (Ctrl+C)\n", after
    assert out == ""


def test_ctrl_c_during_an_export_leaves_no_half_written_file_and_names_those_written(
        tmp_path):
    """A Ctrl+C while attention.csv was written left 13 MB of its 26 under the final
    name, and stdout empty: every file is written under a temporary name and renamed
    once whole (document.files.whole_file), each path printed as it is whole, then the
    one line, status 130. The signal is sent once attention's CSV has begun: it is held
    while Qt draws (raised inside Qt's drawing, a KeyboardInterrupt crashed the process
    or was lost: a user's run) and raised between rows of the table, which is
    then not written (SmolLM2's 65 MB mosaic table kept Ctrl+C waiting 3-6 s)."""
    import time
    words = " ".join(f"w{i % 50}" for i in range(1000))
    out = tmp_path / "figures"
    process = subprocess.Popen(
        [sys.executable, "-m", "posviz", "export", "--text", words, "--out", str(out),
         "--progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    started = time.monotonic()
    try:
        while process.poll() is None and time.monotonic() - started < 600:   # a hang
            if out.is_dir() and any("attention." in f.name and f.suffix == ".csv"
                                    for f in out.iterdir()):
                break
            time.sleep(0.01)
        assert process.poll() is None, "the export ended before attention.csv began"
        process.send_signal(signal.SIGINT)
        printed, said = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, said
    assert said.endswith("posviz: stopped (Ctrl+C)\n") and "writing 9 figures" in said, said
    paths = printed.splitlines()
    assert paths and all(Path(path).parent == out for path in paths), printed
    assert sorted(f.name for f in out.iterdir()) == sorted(Path(p).name for p in paths)
    # the table on its way is stopped, and no other file follows
    assert "attention.csv" not in {Path(path).name for path in paths}
    assert "attention.png" in {Path(path).name for path in paths}
    assert len(paths) < 27


def test_ctrl_c_while_export_draws_its_panel_stops_it_cleanly(tmp_path):
    """A Ctrl+C held while the panel was drawn was raised with the panel left open, and
    Qt's teardown crashed (status -11: 5 of 8 in a user's run, 5 of 6 here) or
    printed a traceback from a deleted scene; between the drawing and the first file
    the signal reached Qt itself. Sent just after "all in one panel", three times: one
    line, status 130, no file."""
    import time
    for k, delay in enumerate((0.05, 0.2, 0.5)):
        out = tmp_path / f"figures-{k}"
        process = subprocess.Popen(
            [sys.executable, "-m", "posviz", "export", "--pe", "rope", "--text",
             "the cat sat on the mat because it was warm", "--out", str(out), "--progress"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": str(ROOT)})
        said = []
        try:
            for line in process.stderr:
                said.append(line)
                if "all in one panel" in line:
                    time.sleep(delay)
                    process.send_signal(signal.SIGINT)
                    break
            printed, rest = process.communicate(timeout=300)
        finally:
            if process.poll() is None:
                process.kill()
        told = "".join(said) + rest
        assert process.returncode == 130, (delay, told)
        assert rest.endswith("posviz: stopped (Ctrl+C)\n"), (delay, told)
        assert "Error" not in told and "Traceback" not in told, (delay, told)
        written = sorted(f.name for f in out.iterdir()) if out.is_dir() else []
        assert written == sorted(Path(p).name for p in printed.splitlines()), (delay, told)



def test_ctrl_c_while_export_draws_its_figures_stops_before_the_next(tmp_path):
    """A Ctrl+C sent while the export drew its figures one by one was held until all 9
    were drawn (4.5 s at 4,000 tokens: a user's run): it is raised before the
    next figure's drawing begins (own_size.tell), the panel closed as before. Sent once
    figure 1 is told: one line, status 130, no file, and at most a figure more told."""
    words = " ".join(f"w{i % 50}" for i in range(2000))
    out = tmp_path / "figures"
    process = subprocess.Popen(
        [sys.executable, "-m", "posviz", "export", "--pe", "sinusoidal", "--text", words,
         "--out", str(out), "--progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    said = []
    try:
        for line in process.stderr:
            said.append(line)
            if "drawing figure 1 of" in line:
                process.send_signal(signal.SIGINT)
                break
        else:
            raise AssertionError("".join(said))
        printed, rest = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
    told = "".join(said) + rest
    assert process.returncode == 130, told
    assert rest.endswith("posviz: stopped (Ctrl+C)\n"), told
    assert "Error" not in told and "Traceback" not in told, told
    assert printed == "" and not (out.is_dir() and any(out.iterdir())), told
    assert rest.count("drawing figure") <= 2, told


STOPPED_SAVES = r"""
import json, os, signal, sys
import posviz
from posviz.gui.plots import own_size
r = posviz.load(pe="rope", layers=2).compare(" ".join(f"w{i % 50}" for i in range(3000)))
run_for, told, stops = r.run_for, [], {}
def interrupt():
    os.kill(os.getpid(), signal.SIGINT)
def rerun(*args):                   # the order run again: torch's
    if stops.pop("run", None):
        interrupt()
    return run_for(*args)
def listen(name, part):
    told.append(part or name)
    if stops.pop(part, None):
        interrupt()
r.run_for = rerun
for stop in ("run", "the views of the runs"):
    told.clear()
    stops[stop] = True
    with own_size.counting(listen):
        try:
            r.figure("attention").save(os.path.join(sys.argv[1], "attention.png"))
        except KeyboardInterrupt:
            print(json.dumps([stop, told]))
print(sorted(os.listdir(sys.argv[1])), flush=True)
r.figure("attention").save(os.path.join(sys.argv[1], "attention.png"))
print("saved", flush=True)
"""


def test_ctrl_c_during_a_figure_s_save_stops_before_qt_draws(tmp_path):
    """fig.save answered Ctrl+C once the file was saved (6-7 s for a 4,000-token
    attention figure: a user's run): the order run again (torch's) is no longer
    held, and a Ctrl+C held while the maps are pooled (numpy's) is raised between heads
    or before the panel is drawn. Sent as the order runs again, then as the views are
    made: neither draws the panel; the figure is saved after."""
    done = subprocess.run([sys.executable, "-c", STOPPED_SAVES, str(tmp_path)],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-3000:]
    import json
    lines = done.stdout.splitlines()
    assert len(lines) == 4 and lines[2:] == ["[]", "saved"], done.stdout + done.stderr
    (stop, told), (later, then) = json.loads(lines[0]), json.loads(lines[1])
    assert (stop, told) == ("run", []), lines
    assert later == "the views of the runs", lines
    assert "all in one panel" not in then, then

INTERRUPTED_SAVES = r"""
import os, signal, sys, threading, time
import posviz
r = posviz.load(pe="rope", layers=2).compare(" ".join(f"w{i % 50}" for i in range(3000)))
interrupted = 0
for k, delay in enumerate((0.05, 0.15, 0.3, 0.6, 1.0, 1.5)):
    try:
        timer = threading.Timer(delay, os.kill, (os.getpid(), signal.SIGINT))
        timer.start()
        for name in ("attention_mosaic", "attention", "token_change"):
            r.figure(name).save(os.path.join(sys.argv[1], f"{name}-{k}.png"))
        timer.join()
        time.sleep(0.05)
    except KeyboardInterrupt:
        interrupted += 1
for name in ("attention_mosaic", "attention", "token_change", "symmetry"):
    r.figure(name).save(os.path.join(sys.argv[1], f"{name}-after.png"))
print("saved after", interrupted, "interrupts")
"""


def test_ctrl_c_during_a_figure_s_save_leaves_python_able_to_save_again(tmp_path):
    """A KeyboardInterrupt raised inside Qt's first import or its drawing left it broken:
    the next save crashed the interpreter (a notebook's kernel dies; a user's
    run, 2 of 2). Ctrl+C is held while Qt loads and draws, then raised."""
    told = subprocess.run([sys.executable, "-c", INTERRUPTED_SAVES, str(tmp_path)],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT),
                               "QT_QPA_PLATFORM": "offscreen"})
    assert told.returncode == 0, told.stderr[-3000:]
    assert told.stdout.strip() == "saved after 6 interrupts", told.stdout


def test_ctrl_c_while_compare_draws_is_raised_once_its_files_are_written(tmp_path):
    """`posviz compare --out` crashed once and aborted once (libshiboken's "could not
    initialize") of nine Ctrl+C's (a user's run): its drawing holds Ctrl+C and
    raises it once its files are written. Here Ctrl+C comes during its first file."""
    import types

    import pytest

    import posviz
    from posviz.cli import compare
    out = tmp_path / "out"          # tmp_path holds this test's stage-times.json too
    out.mkdir()
    result = posviz.compare_encodings("the cat sat on the mat", encodings="none,rope",
                                      layers=1)
    figure = result.figure("pooled_change")
    save = figure.save

    def interrupted(path, **kwargs):
        if not any(out.iterdir()):
            os.kill(os.getpid(), signal.SIGINT)      # Ctrl+C while the first is drawn
        return save(path, **kwargs)
    figure.save = interrupted
    result.figure = lambda metric: figure
    args = types.SimpleNamespace(metric="pooled_change", dpi=None, width=None, no_csv=False)
    with pytest.raises(KeyboardInterrupt):
        compare.draw(result, args, out, ["png", "svg"])
    assert sorted(p.name for p in out.iterdir()) == ["compare.csv", "compare.png", "compare.svg"]


def test_ctrl_c_once_a_command_is_done_prints_no_traceback():
    """A Ctrl+C as ``export`` left after writing all its files printed an 8-line
    "Exception ignored in atexit callback ... KeyboardInterrupt" from torch's exit
    handler (a user's run): once the work is done, Ctrl+C is ignored. Here the
    signal comes from inside an exit handler, as it did."""
    code = ("import atexit, os, signal, time\nfrom posviz import __main__ as boot\n"
            "def late():\n    os.kill(os.getpid(), signal.SIGINT)\n"
            "    time.sleep(0.05)\n    print('handled')\n"
            "atexit.register(late)\nboot.leave(0)\n")
    left = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert (left.returncode, left.stdout, left.stderr) == (0, "handled\n", "")


def test_an_export_prints_none_of_the_offscreen_platform_s_notes(tmp_path):
    """Every ``export`` printed Qt's "This plugin does not support propagateSizeHints()"
    on stderr, between two of posviz's lines (a user's run)."""
    out = tmp_path / "figures"
    told = subprocess.run(
        [sys.executable, "-m", "posviz", "export", "--pe", "rope", "--layers", "2",
         "--text", "the cat sat on the mat", "--out", str(out), "--progress"],
        capture_output=True, text=True, timeout=600,
        env={**{k: v for k, v in os.environ.items() if k not in ("DISPLAY",
                                                                  "WAYLAND_DISPLAY")},
             "PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen"})
    assert told.returncode == 0, told.stderr
    assert all(line.startswith("posviz: ") for line in told.stderr.splitlines()), \
        told.stderr


def test_a_table_s_rows_stop_at_a_held_ctrl_c():
    """A Ctrl+C held while a figure is saved is raised between rows of its table, not
    once the table is whole (fig.save of a 25 MB table answered 5.6 s late)."""
    from posviz.errors import held_interrupt
    from posviz.document import files as base

    class Handle:
        writes = 0

        def write(self, text):
            if not self.writes:
                os.kill(os.getpid(), signal.SIGINT)       # held: raised between rows
            self.writes += 1

    import numpy as np
    handle = Handle()
    rows = 20 * base.ROWS_BETWEEN_STOPS
    try:
        with held_interrupt():
            base.write_table(handle, ("row",), {"value": np.arange(rows, dtype=float)},
                             {}, {})
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the Ctrl+C was lost")
    assert 0 < handle.writes <= 2 * base.ROWS_BETWEEN_STOPS < rows


STOPPED_SAVE = r"""
import os, signal, sys, threading, time
from pathlib import Path
import posviz
from posviz.document.files import writing_name
r = posviz.load(pe="rope", layers=1, heads=2, d_model=16).compare(
    " ".join(f"w{i % 50}" for i in range(int(sys.argv[2]))))
path = Path(sys.argv[1]) / "attention.csv"
def stop():                                 # once the table has begun
    while not writing_name(path).exists():
        time.sleep(0.001)
    os.kill(os.getpid(), signal.SIGINT)
threading.Thread(target=stop, daemon=True).start()
try:
    r.figure("attention").save(path)
    print("saved whole")
except KeyboardInterrupt:
    print("stopped:", sorted(p.name for p in path.parent.iterdir()))
"""


def test_ctrl_c_during_a_figure_s_table_leaves_no_file(tmp_path):
    """fig.save() of a large table answered Ctrl+C only once the file was whole (2-6 s),
    then raised anyway, leaving the file (a user's run): it stops within the
    rows it is writing and leaves no file, as ``posviz export`` does."""
    told = subprocess.run([sys.executable, "-c", STOPPED_SAVE, str(tmp_path), "2000"],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT),
                               "QT_QPA_PLATFORM": "offscreen"})
    assert told.returncode == 0, told.stderr[-3000:]
    assert told.stdout == "stopped: []\n", told.stdout
