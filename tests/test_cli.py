"""`posviz report`: the same core, headless; bad input is one line and status 2.

Its flags come from the options registry, and asking for help or passing a bad setting
loads neither torch nor Qt."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from posviz.analysis.engine import Engine
from posviz.cli import main, make_parser
from posviz.cli.options import NOT_ON_THE_COMMAND_LINE, flag
from posviz.document.files import check_folder, parse_formats
from posviz.errors import PosvizInputError
from posviz.models.builtin.backend import BuiltinBackend
from posviz.models.config import ModelConfig, Positions
from posviz.models.options import MODEL_OPTIONS, OPTIONS, POSITION_OPTIONS
from posviz.views.reading import FRAME_WORDS, frame, frame_note, one_token_note, token_spread

BASE = ["report", "--layers", "2", "--heads", "2", "--d-model", "16", "--seed", "3"]


def run(capsys, *args):
    code = main([*BASE, *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_json_report_matches_the_core(capsys):
    code, out, err = run(capsys, "--pe", "rope", "--mask", "causal", "--text",
                         "the cat sat on the mat", "--order", "5,4,3,2,1,0", "--json")
    assert code == 0 and err == ""
    data = json.loads(out)
    assert set(data) >= {"tokens", "order", "config", "layers"}
    assert data["tokens"] == ["the", "cat", "sat", "on", "the", "mat"]
    assert data["order"] == [5, 4, 3, 2, 1, 0]
    assert data["config"]["pe"] == "rope" and data["config"]["mask"] == "causal"
    backend = BuiltinBackend(ModelConfig(layers=2, heads=2, d_model=16, seed=3, pe="rope",
                                         mask="causal"))
    expected = Engine(backend).evaluate(backend.tokenize("the cat sat on the mat"),
                                        [5, 4, 3, 2, 1, 0], Positions()).comparison.rows()
    assert [row["layer"] for row in data["layers"]] == [0, 1, 2]
    assert data["layers"][0]["attention_equivariance"] is None
    for got, want in zip(data["layers"], expected):
        for key in ("hidden_equivariance", "last_token_change", "pooled_change"):
            assert got[key] == pytest.approx(want[key])


def test_default_order_is_the_reverse(capsys):
    code, out, _ = run(capsys, "--text", "a b c d", "--json")
    assert json.loads(out)["order"] == [3, 2, 1, 0]


def test_table_report(capsys):
    code, out, _ = run(capsys, "--pe", "none", "--text", "a b c d", "--dtype", "float64")
    assert code == 0
    assert "hidden eq." in out and out.count("equivariant") >= 3
    model = out.splitlines()[1]            # the MLP's width, not the 0 that stands for 4 × d
    assert "d_model=16 d_ff=64 " in model and "d_ff=0" not in model, model


def test_a_layer_where_nothing_changed_lists_no_top_tokens(capsys):
    code, out, _ = run(capsys, "--text", "a b c d", "--order", "0,1,2,3", "--json")
    layers = json.loads(out)["layers"]
    assert code == 0 and all(row["hidden_equivariance"] == 0 for row in layers)
    assert all(row["top_tokens"] == row["top_tokens_share"] == [] for row in layers)
    code, out, _ = run(capsys, "--text", "a b c d", "--order", "1,0,2,3", "--json")
    shares = [row["top_tokens_share"] for row in json.loads(out)["layers"]]
    assert all(len(s) == 2 and 0 < s[0] <= s[1] <= 1 for s in shares)   # cumulative


def test_json_report_gives_the_mlp_width_its_text_gives_and_the_session_keeps_4d(
        capsys, tmp_path):
    """The session file keeps the option's 0 ("4 × d", following the width when it is
    edited); what the report shows is the width itself, in its text and its JSON."""
    saved = tmp_path / "s.posviz"
    code, out, _ = run(capsys, "--text", "a b c d", "--json", "--save-session", str(saved))
    assert code == 0 and json.loads(out)["config"]["d_ff"] == 64
    assert json.loads(saved.read_text())["model"]["config"]["d_ff"] == 0


@pytest.mark.parametrize("args, message", [
    (["--text", "   "], "text is empty"),
    (["--text", "a b c", "--order", "0,1"], "has 2 entries but there are 3 tokens"),
    (["--text", "a b c", "--order", "0,0,1"], "not a permutation"),
    (["--text", "a b c", "--order", "x"], "whole numbers"),
    (["--heads", "3"], "do not divide"),
    (["--pe", "rope", "--heads", "16"], "even head width"),
    (["--pe", "learned", "--offset", "1020"], "positions"),
    (["--pe", "bogus"], "--pe must be one of none, sinusoidal"),
    (["--layers", "0"], "layers"),
    (["--offset", "-1"], "offset"),
    (["--frobnicate"], "unknown option --frobnicate of posviz report"),
])
def test_bad_input_exits_2_with_one_line(capsys, args, message):
    code, out, err = run(capsys, *args)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and message in err
    assert "Traceback" not in err


def test_the_console_script_runs_as_a_module():
    result = subprocess.run([sys.executable, "-m", "posviz", *BASE, "--text", "a b",
                             "--order", "1,0,5"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "posviz: error" in result.stderr


# -- options from the registry, and the fast path -------------------------------------

def test_help_and_usage_errors_load_neither_torch_nor_qt():
    """posviz --help, a command's help and a bad setting answer before torch is loaded."""
    code = """
import contextlib, io, sys
from posviz.__main__ import main
for argv in (["--help"], ["report", "--help"], ["export", "--help"],
             ["report", "--layers", "0"], ["report", "--pe", "bogus"],
             ["report", "--offset", "99999999999999999999"],
             ["export", "--out", "x", "--format", "jpg"],
             ["report", "--text", "a b c", "--order=-1,0,1"],
             ["report", "--text", "a b c", "--order", "0,1,3"]):
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        try:
            status = main(argv)
        except SystemExit as stop:
            status = stop.code
    print(argv[-1], status)
print("loaded:", ",".join(sorted({m.split(".")[0] for m in sys.modules} &
                                 {"torch", "PySide6", "pyqtgraph", "transformers"})))
"""
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[:3] == ["--help 0"] * 3
    assert [line.split()[-1] for line in lines[3:9]] == ["2"] * 6
    assert lines[-1] == "loaded: ", lines[-1]


def test_help_lists_every_default_and_range_from_the_registry(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["report", "--help"])
    assert stop.value.code == 0
    text = "".join(capsys.readouterr().out.split())     # undo argparse's wrapping
    squeeze = lambda words: "".join(str(words).split())                   # noqa: E731
    for name in [*MODEL_OPTIONS, *POSITION_OPTIONS]:
        if name in NOT_ON_THE_COMMAND_LINE:
            continue
        option = OPTIONS[name]
        assert flag(name) in text, name
        assert squeeze(option.tip) in text, name
        if name == "dtype":                 # a --model also takes half precision
            assert "{" + ",".join(option.choices + option.elsewhere) + "}" in text
            assert squeeze(f"(default: {option.default}; a --model: float32, bfloat16 or "
                           f"float16)") in text
        elif option.choices:
            assert "{" + ",".join(option.choices) + "}" in text, name
            assert squeeze(f"(default: {option.default})") in text, name
        elif option.kind is not bool:
            show = (lambda v: f"{v:g}") if option.kind is float else str    # noqa: E731
            assert squeeze(f"default: {show(option.default)})") in text, name
            assert squeeze(f"({show(option.low)} to {show(option.high)};") in text, name


def test_every_encoding_is_a_choice_of_pe():
    from posviz.models.encodings import KINDS
    action = next(a for a in make_parser()._subparsers._group_actions[0].choices["report"]
                  ._actions if a.dest == "pe")
    assert tuple(action.choices) == KINDS


@pytest.mark.parametrize("args, name", [
    (["--offset", "99999999999999999999"], "offset"),
    (["--offset", "-1"], "offset"),
    (["--seed", "99999999999999999999"], "seed"),
    (["--layers", "99999999999999999999"], "layers"),
    (["--d-ff", "-99999999999999999999"], "d_ff"),
    (["--pe-scale", "1e400"], "pe_scale"),
    (["--pe-scale", "nan"], "pe_scale"),
])
def test_out_of_range_numbers_exit_2_with_the_allowed_range(capsys, args, name):
    code, out, err = run(capsys, "--text", "a b c", *args)
    option = OPTIONS[name]
    allowed = (f"from {option.low:g} to {option.high:g}" if option.kind is float
               else f"from {option.low} to {option.high}")
    assert code == 2 and out == ""
    from posviz.cli.options import flag                   # the flag, not the field
    assert err.startswith(f"posviz: error: {flag(name)} must be") and allowed in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


# -- the report itself, against the core ------------------------------------------------

FIXED = dict(layers=3, heads=2, d_model=16, seed=11, pe="alibi", mask="causal",
             dtype="float64")
FIXED_ARGS = ["report", "--layers", "3", "--heads", "2", "--d-model", "16", "--seed", "11",
              "--pe", "alibi", "--mask", "causal", "--dtype", "float64",
              "--positions", "token", "--offset", "4",
              "--text", "one two three four five", "--order", "1,3,0,4,2"]


def core_evaluation():
    """The fixed report's numbers, computed through the core without the command line."""
    backend = BuiltinBackend(ModelConfig(**FIXED))
    seq = backend.tokenize("one two three four five")
    ev = Engine(backend).evaluate(seq, [1, 3, 0, 4, 2], Positions("token", 4))
    return backend, ev


def test_json_report_is_the_core_evaluation_for_a_fixed_seed(capsys):
    assert main([*FIXED_ARGS, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    backend, ev = core_evaluation()
    outputs = data.pop("outputs")            # what the model predicts: test_predictions.py
    assert outputs["kind"] == "encoder" and outputs["predictions"] == []
    made = data.pop("provenance")            # what made it: test_provenance.py
    assert (made["model"], made["encoding"], made["seeds"]) == ("built-in", FIXED["pe"],
                                                                {"model": FIXED["seed"]})
    spread = token_spread(ev)
    rows = ev.comparison.rows()
    for layer, row in enumerate(rows):
        row.update(token_p25=spread.p25[layer], token_median=spread.median[layer],
                   token_p75=spread.p75[layer], top_tokens=spread.top[layer].tolist(),
                   top_tokens_share=spread.top_share[layer].tolist())
        if not spread.top_share[layer, -1]:                # nothing changed: no tokens
            row.update(top_tokens=[], top_tokens_share=[])
    assert data == {
        "tokens": ["one", "two", "three", "four", "five"],
        "order": [1, 3, 0, 4, 2],
        "config": {**backend.describe(), "positions": "token", "offset": 4,
                   "literal": False},
        "noise_floor": ev.comparison.floor,
        "run": frame(ev),
        "layers": json.loads(json.dumps(rows)),
        "notes": [note for note in (one_token_note(ev, spread), frame_note(ev)) if note],
    }
    assert data["config"] == {"model": "built-in", **ModelConfig(**FIXED).to_dict(),
                              "d_ff": ModelConfig(**FIXED).ff_width,
                              "positions": "token", "offset": 4, "literal": False}


def test_table_report_is_the_core_evaluation_for_a_fixed_seed(capsys):
    assert main(FIXED_ARGS) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines.pop(0).startswith("made by posviz ")          # what made it, first
    backend, ev = core_evaluation()
    floor = ev.comparison.floor
    assert lines[0].split()[:2] == ["model:", "built-in"]
    assert "seed=11" in lines[0] and "pe=alibi" in lines[0] and "dtype=float64" in lines[0]
    assert lines[1] == "tokens: one two three four five"
    assert lines[2] == "order:  1,3,0,4,2  ->  two four one five three"
    assert lines[3] == f"noise floor: {floor:.1e} (a change below it cannot be told from rounding)"
    assert lines[4] == f"run:    {FRAME_WORDS[frame(ev)]}"
    assert lines[6].split()[0] == "layer"
    rows = [line.split() for line in lines[7:7 + ev.reference.n_layers + 1]]
    assert len(rows) == ev.reference.n_layers + 1
    for got, want in zip(rows, ev.comparison.rows()):
        assert got[0] == str(want["layer"])
        for cell, key in zip(got[1:5], ("hidden_equivariance", "attention_equivariance",
                                        "last_token_change", "pooled_change")):
            assert cell == ("—" if want[key] is None else f"{want[key]:.3e}"), key
        assert got[5] == f"{token_spread(ev).median[want['layer']]:.3e}"
        assert got[7] == ("equivariant" if want["hidden_equivariance"] <= floor
                          else "changed")


@pytest.mark.parametrize("extra", [[], ["--json"]])
def test_python_m_posviz_prints_what_main_prints(capsys, extra):
    assert main([*FIXED_ARGS, *extra]) == 0
    in_process = capsys.readouterr().out
    result = subprocess.run([sys.executable, "-m", "posviz", *FIXED_ARGS, *extra],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout == in_process


# -- export plumbing without Qt -----------------------------------------------------------

def test_parse_formats():
    assert parse_formats("png") == ["png"]
    assert parse_formats(" SVG, .png ,svg") == ["svg", "png"]
    for bad in ("", ",", "jpg", "png,gif"):
        with pytest.raises(PosvizInputError, match="--format takes png, svg"):
            parse_formats(bad)


def test_check_folder(tmp_path):
    folder = tmp_path / "a" / "b"
    assert check_folder(folder) == folder and folder.is_dir()
    assert check_folder(folder) == folder                      # an existing folder is fine
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(PosvizInputError, match=f"{blocker} is a file, not a folder"):
        check_folder(blocker)
    with pytest.raises(PosvizInputError, match="cannot create the folder"):
        check_folder(blocker / "below")


def test_export_checks_its_own_options_before_running_a_model(capsys, tmp_path):
    out = tmp_path / "figs"
    for args, words in ((["--format", "gif"], "--format takes"),
                        (["--width", "8"], "--width must be from 16 to 20000")):
        assert main(["export", "--text", "a b", "--out", str(out), *args]) == 2
        err = capsys.readouterr().err
        assert words in err and err.count("\n") == 1
    assert not out.exists()


@pytest.mark.parametrize("argv, said", [(["reprot", "--json"], "unknown command 'reprot'"),
                                         (["--bogus"], "unrecognized arguments: --bogus")])
def test_a_mistyped_command_is_told_not_taken_for_the_window(argv, said):
    result = subprocess.run([sys.executable, "-m", "posviz", *argv], capture_output=True,
                            text=True, timeout=60, env={**os.environ, "QT_QPA_PLATFORM": "offscreen"})
    assert result.returncode == 2
    assert said in result.stderr and len(result.stderr.strip().splitlines()) == 1


# -- options that do not go together, orders that are not permutations -----------------

@pytest.mark.parametrize("extra, named", [
    (["--layers", "2"], "--layers only applies"),
    (["--pe", "rope", "--d-model", "32"], "--pe, --d-model only apply"),
    (["--no-residual"], "--no-residual only applies"),
    (["--mask", "causal", "--seed", "1"], "--mask, --seed only apply"),
])
def test_built_in_settings_with_a_pretrained_model_are_refused(capsys, extra, named):
    """Refused before the model is looked for: the path does not even exist."""
    code = main(["report", "--model", "/no/such/model", *extra, "--text", "a b"])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert named in err and "--model /no/such/model" in err and "built-in model" in err
    assert len(err.strip().splitlines()) == 1


def test_position_settings_go_with_a_pretrained_model(capsys):
    code = main(["report", "--model", "/no/such/model", "--offset", "2",
                 "--positions", "token", "--text", "a b"])
    err = capsys.readouterr().err
    assert code == 2 and "no model folder at /no/such/model" in err


@pytest.mark.parametrize("order, named", [
    (["--order", "-1,0,1"], "-1 is out of range"),
    (["--order=-1,0,1"], "-1 is out of range"),
    (["--order", "-2"], "-2 is out of range"),
    (["--order", "0,1,5,-3"], "5, -3 are out of range"),
    (["--order", "0,,1,x"], "'x' is not"),
    (["--order", "1,1,0"], "not a permutation: 1 repeats, 2 is missing"),
])
def test_a_bad_order_says_what_a_valid_order_is(capsys, order, named):
    code, out, err = run(capsys, "--text", "a b c", *order)
    assert code == 2 and out == ""
    assert "--order must be a permutation of 0..2, comma-separated" in err
    assert named in err and len(err.strip().splitlines()) == 1


def test_help_names_every_option_of_the_window(capsys):
    """`posviz --help` is what a user reads for the window too: every option its parser
    takes (with the choices), and every one the README gives the window, are named."""
    import re

    from posviz.gui.app import window_parser
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    taken = {option: action for action in window_parser()._actions
             for option in action.option_strings if option.startswith("--")}
    for option, action in taken.items():
        if option != "--help":
            choices = f" {{{','.join(action.choices)}}}" if action.choices else ""
            assert f"[{option}{choices}" in text or f"| {option}]" in text, option
    readme = " ".join((Path(__file__).parents[1] / "README.md").read_text("utf-8").split())
    said = re.findall(r"`(--[a-z-]+)[^`]*` \((?:commands and window|[a-z, ]+and the window)\)",
                      readme)
    assert set(said) == {"--offline", "--device"} and set(said) <= set(taken)


def test_help_names_every_bundled_model(capsys):
    from posviz.models.hf.sources import BUNDLED
    for argv in (["--help"], ["report", "--help"], ["export", "--help"]):
        with pytest.raises(SystemExit):
            main(argv)
        text = " ".join(capsys.readouterr().out.split())
        for spec, bundled in BUNDLED.items():
            assert f"'{spec}' ({bundled.name})" in text, (argv, spec)


# -- progress on a terminal -----------------------------------------------------------------

class Terminal:
    """A stderr that says it is a terminal, and keeps what is written."""

    def __init__(self):
        self.lines = []

    def isatty(self):
        return True

    def write(self, text):
        self.lines.append(text)

    def flush(self):
        pass

    def text(self):
        return "".join(self.lines)


def test_steps_are_reported_on_a_terminal_and_stdout_is_unchanged(capsys, monkeypatch):
    assert main([*FIXED_ARGS, "--json"]) == 0
    plain = capsys.readouterr()
    assert plain.err == ""                                   # not a terminal: silent
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main([*FIXED_ARGS, "--json"]) == 0
    assert capsys.readouterr().out == plain.out
    # the noise floor's forward is told by its name, as a real model's is (steps.layer_ticks)
    assert terminal.text().splitlines() == ["posviz: building the model",
                                            "posviz: running the original order",
                                            "posviz: running the original order at "
                                            "shifted positions, for the noise floor",
                                            "posviz: running the chosen order"]
    quiet = Terminal()
    monkeypatch.setattr(sys, "stderr", quiet)
    assert main([*FIXED_ARGS, "--json", "--quiet"]) == 0
    assert capsys.readouterr().out == plain.out and quiet.text() == ""


# -- memory ---------------------------------------------------------------------------------

def test_a_model_too_big_for_memory_is_refused_before_it_is_built(capsys, monkeypatch):
    from posviz.models.builtin import backend
    from posviz.models.limits import memory
    monkeypatch.setattr(memory, "available_bytes", lambda: 8 * 10**9)

    def never(*_):
        raise AssertionError("the model was built")
    monkeypatch.setattr(backend.BuiltinBackend, "__init__", never)
    text = " ".join(["word"] * 512)
    code = main(["report", "--d-model", "4096", "--layers", "64", "--text", text])
    out, err = capsys.readouterr()
    assert code == 2 and out == ""
    assert "this model needs about 103.1 GB for 512 tokens, but only 6.4 GB are free" in err
    assert len(err.strip().splitlines()) == 1


def test_a_reader_that_stops_reading_ends_the_command_quietly():
    # `posviz report --json | head`: the pipe is closed before the report is written
    process = subprocess.Popen([sys.executable, "-m", "posviz", "report", "--json", "--text",
                                "the cat sat on the mat"], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env={**os.environ, "HF_HUB_OFFLINE": "1"})
    process.stdout.close()
    stderr = process.stderr.read().decode()
    assert process.wait(120) == 128 + 13 and stderr == ""


def test_one_line_keeps_posviz_s_message_whole_and_marks_another_s_cut():
    """The window cut an unsupported model's list of families at "…llama, mistral,
    mode" (200 characters), with no mark of the cut."""
    from posviz.errors import PosvizInputError, one_line
    ours = "model type 'x' is not supported (posviz reads " + ", ".join(
        f"family{k}" for k in range(40)) + ")"
    assert len(ours) > 200 and one_line(PosvizInputError(ours)) == ours
    theirs = one_line(RuntimeError("y" * 300))
    assert len(theirs) == 200 and theirs.endswith("…")
