"""A text holding a byte that is not UTF-8 is refused in one line on every entry that
takes text: standard input as a file is (exit 2), and from Python a TextRefused naming
its argument. The locale's reading of standard input (and argv) keeps such a byte as a
lone surrogate, which only the model's tokenizer choked on, in a traceback."""
from __future__ import annotations

import contextlib
import io
import sys

import pytest

import posviz
from posviz.cli import main
from posviz.errors import PosvizInputError, TextRefused

BINARY = b"\xff\xfe\x00a b c"
LATIN1 = b"caf\xe9 au lait"
SURROGATE = LATIN1.decode("utf-8", "surrogateescape")       # as Python reads the byte
NOT_UTF8 = "the text is not UTF-8 text: character 4 ('\\udce9') stands for a byte that is not UTF-8"


def cli(monkeypatch, stdin: bytes, *argv) -> tuple[int, str]:
    """``posviz ARGV`` with ``stdin`` as its standard input, read as the locale reads it."""
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), "utf-8",
                                                       errors="surrogateescape"))
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(list(argv))
    return status, err.getvalue()


@pytest.mark.parametrize("command", ["report", "sweep", "compare", "export"])
@pytest.mark.parametrize("stdin", [BINARY, LATIN1])
def test_standard_input_not_utf8_is_refused_as_a_file_is(monkeypatch, tmp_path, command,
                                                         stdin):
    extra = ["--out", str(tmp_path)] if command == "export" else []
    status, err = cli(monkeypatch, stdin, command, "--text-file", "-", *extra)
    assert (status, err) == (2, "posviz: error: --text-file - is not UTF-8 text\n")


def test_a_text_flag_holding_a_byte_not_utf8_is_refused_in_one_line(monkeypatch):
    for command in ("report", "sweep", "compare"):
        status, err = cli(monkeypatch, b"", command, "--text", SURROGATE)
        assert (status, err) == (2, f"posviz: error: --text: {NOT_UTF8}\n")


def test_python_refuses_it_naming_the_argument():
    with pytest.raises(TextRefused) as refused:
        posviz.load(pe="rope").compare(SURROGATE)
    assert str(refused.value) == f"text='caf\\udce9 au lait': {NOT_UTF8}"
    with pytest.raises(TextRefused) as refused:
        posviz.compare_encodings(SURROGATE, encodings=["none", "rope"], progress=False)
    assert str(refused.value) == f"text='caf\\udce9 au lait': {NOT_UTF8}"
    for run in (posviz.sweep, posviz.probe):
        with pytest.raises(TextRefused) as refused:
            run(["a b c", SURROGATE], progress=False)
        assert str(refused.value) == ("texts: text 2 of 2 is not UTF-8 text: character 4 "
                                      "('\\udce9') stands for a byte that is not UTF-8")


class Endless(io.RawIOBase):
    """A stream that never ends (as /dev/urandom or /dev/zero): ``byte`` repeated,
    counting what was read from it."""

    def __init__(self, byte: bytes):
        self.byte, self.given = byte, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:
        buffer[:] = self.byte * len(buffer)
        self.given += len(buffer)
        return len(buffer)


@pytest.mark.parametrize("byte, said", [(b"\xff", "is not UTF-8 text"),
                                        (b"a", "holds more than 50 MB of text")])
def test_an_endless_standard_input_is_refused_before_it_is_read_whole(monkeypatch, byte,
                                                                      said):
    """`posviz report --text-file /dev/urandom` read it whole: 18 GB in 137 s, then the
    system killed posviz. Bytes not UTF-8 are refused at their first megabyte; valid
    ones past 50 MB, at once."""
    from posviz.analysis.experiments.texts import MAX_TEXT_BYTES
    stream = Endless(byte)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(stream), "utf-8"))
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(["report", "--text-file", "-"])
    assert status == 2 and said in err.getvalue() and err.getvalue().count("\n") == 1, \
        err.getvalue()
    assert stream.given <= MAX_TEXT_BYTES + (2 << 20)


def test_a_text_file_past_the_limit_is_refused_naming_its_flag(monkeypatch, tmp_path):
    from posviz.analysis.experiments import texts
    monkeypatch.setattr(texts, "MAX_TEXT_BYTES", 10)
    path = tmp_path / "long.txt"
    path.write_text("eleven words or more than ten bytes", encoding="utf-8")
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        status = main(["report", "--text-file", str(path)])
    assert status == 2 and err.getvalue().startswith(
        f"posviz: error: --text-file {path} holds more than 0 MB of text"), err.getvalue()
    with pytest.raises(PosvizInputError, match="holds more than"):
        posviz.read_texts(path)
