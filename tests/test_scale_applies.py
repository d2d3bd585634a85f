"""--pe-scale weighs an encoding's positional signal: given to NoPE alone it would be
silently ignored, so it is refused in one line (exit 2), and in Python alike; a text
output's first line says what made it without a JSON null in it."""
from __future__ import annotations

import pytest

import posviz
from posviz.cli import main
from posviz.document.provenance import made_by
from posviz.errors import PosvizInputError

SAID = "does not apply to {pe}: NoPE has no positional signal to weigh"


@pytest.mark.parametrize("argv", [["report", "--text", "a b"], ["sweep", "--text", "a b c"],
                                  ["export", "--out", "OUT"], ["compare", "--pe", "none"]])
def test_the_command_line_refuses_a_scale_of_no_signal(capsys, tmp_path, argv):
    argv = [str(tmp_path) if word == "OUT" else word for word in argv]
    pe = [] if "compare" in argv else ["--pe", "none"]
    assert main([*argv, *pe, "--pe-scale", "2"]) == 2
    out, err = capsys.readouterr()
    if "compare" not in argv:        # compare needs two encodings: told that first
        assert err == f"posviz: error: --pe-scale {SAID.format(pe='--pe none')}\n"
    assert out == "" and err.count("\n") == 1


def test_a_scale_beside_an_encoding_it_scales_is_taken(capsys):
    assert main(["compare", "--pe", "none,rope", "--pe-scale", "2", "--layers", "1",
                 "--json"]) == 0
    assert main(["report", "--pe", "rope", "--pe-scale", "2", "--text", "a b"]) == 0


def test_python_refuses_it_naming_its_arguments():
    for call in (lambda: posviz.load(pe="none", pe_scale=2),
                 lambda: posviz.sweep("a b c", pe="none", pe_scale=2)):
        with pytest.raises(PosvizInputError) as refused:
            call()
        assert str(refused.value) == f"pe_scale {SAID.format(pe=repr('none').join(['pe=', '']))}"


def test_a_null_is_left_out_of_the_first_line():
    line = made_by({"model": "none: RoPE's rotation alone", "encoding": "rope",
                    "mask": None, "weights": "none"})
    assert line.endswith(": model none: RoPE's rotation alone; encoding rope; weights none")
