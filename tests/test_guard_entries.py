"""The same input meets the same refusal on the command line and in the Python API: one
count of the text and one order of checks (models.limits.guard.check_texts), the same
words apart from naming flags or arguments, and nothing large allocated before it."""
from __future__ import annotations

import re
import time
import tracemalloc

import pytest

import posviz
from posviz.cli import main
from posviz.errors import PosvizInputError, Refused
from posviz.models.limits import memory

FREE = 16 * 10**9                      # the memory the system says is available, pinned
REFUSED_S = 10                         # far above a refusal's seconds; past it, a run began


def words(count: int) -> str:
    """``count`` whitespace-separated words, every third with a comma: the built-in
    model reads the commas as tokens of their own, so its tokens outnumber the words."""
    return " ".join(["the", "cat,", "sat"] * (count // 3))


LOADED: dict = {}


def loaded(source: str | None = None, **options):
    """A model loaded once for this file (the refusal, not the load, is timed)."""
    key = (source, tuple(sorted(options.items())))
    if key not in LOADED:
        LOADED[key] = posviz.load(source, progress=False, **options)
    return LOADED[key]


def needs(source: str) -> None:
    from posviz.models import hf
    if source not in {available.spec for available in hf.available_models()}:
        pytest.skip(f"{source} is not installed")


CASES = {
    # the built-in model (sinusoidal: no table bounds its positions) on 200,000 words:
    # the command line counted 266,664 tokens, the API 200,000 words and its own message
    "built-in, memory": (["report"], lambda text: loaded().compare(text), 200_000,
                         "memory", None),
    # a learned table of 1,024 rows: 4,000 tokens (words and commas) in both
    "learned, positions": (["report", "--pe", "learned"],
                           lambda text: loaded(pe="learned").compare(text), 3_000,
                           "positions", None),
    # SmolLM2's 8,192 positions (its GGUF file's context_length) before its memory
    "smollm2, positions": (["report", "--model", "smollm2"],
                           lambda text: loaded("smollm2").compare(text), 200_000,
                           "positions", "smollm2"),
    "minilm, positions": (["report", "--model", "minilm"],
                          lambda text: loaded("minilm").compare(text), 600, "positions",
                          "minilm"),
}


@pytest.fixture
def pinned_memory(monkeypatch):
    """The same free memory for both calls, so the numbers of a memory refusal agree."""
    monkeypatch.delenv(memory.MEMORY_VARIABLE, raising=False)
    monkeypatch.setattr(memory, "system_available", lambda: FREE)


@pytest.mark.parametrize("case", list(CASES))
def test_the_command_line_and_the_api_refuse_alike(case, pinned_memory, capsys):
    argv, call, count, reason, package = CASES[case]
    if package:
        needs(package)
    text = words(count)
    started = time.perf_counter()
    assert main([*argv, "--text", text]) == 2
    cli_seconds = time.perf_counter() - started
    said = capsys.readouterr().err
    assert said.startswith("posviz: error: ") and said.count("\n") == 1
    call(" ".join(["the"] * 3))           # load (or build) it before timing its refusal
    started = time.perf_counter()
    with pytest.raises(Refused) as raised:
        call(text)
    api_seconds = time.perf_counter() - started
    tracemalloc.start()                   # again, counting what Python and numpy take
    with pytest.raises(Refused):
        call(text)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    print(f"{case}: {cli_seconds:.3f} s, {api_seconds:.3f} s, peak {peak / 2**20:.1f} MiB")
    # the same sentence, a text's positions led by its argument as each entry writes it
    lead = ("--text: ", f"text={text[:23] + '…'!r}: ") if reason == "positions" else ("", "")
    assert said.startswith("posviz: error: " + lead[0]) and str(raised.value).startswith(lead[1])
    assert str(raised.value)[len(lead[1]):] == said[len("posviz: error: " + lead[0]):-1]
    assert raised.value.reason == reason
    # refused before any run: seconds at most on a busy machine (1.03 s seen at load 9),
    # not the minutes these tokens' runs take; a hang check, not a timing
    assert cli_seconds < REFUSED_S and api_seconds < REFUSED_S, (cli_seconds, api_seconds)
    assert peak < 100 * 2**20, peak       # the text and its words, nothing of its runs


def test_the_command_line_counts_the_built_in_models_tokens_as_its_tokenizer(capsys):
    """3,000 words holding 1,000 commas are 4,000 of the built-in model's tokens, as its
    tokenizer (words and punctuation marks) reads them."""
    assert main(["report", "--pe", "learned", "--text", words(3_000)]) == 2
    assert capsys.readouterr().err == ("posviz: error: --text: 4,000 tokens from position 0 need "
                                       "4,000 positions, but the built-in model has 1,024\n")
    model = loaded(pe="learned")
    assert len(model.tokens(words(30))) == 40


def test_a_pretrained_models_positions_come_before_its_memory():
    """load(n_tokens=) refuses SmolLM2's 8,192 positions before reading a weight, not
    what 300,000 tokens would take in memory."""
    needs("smollm2")
    with pytest.raises(Refused) as raised:
        posviz.load("smollm2", n_tokens=300_000, progress=False)
    assert raised.value.reason == "positions"
    assert re.fullmatch(r"300,000 tokens from position 0 need 300,000 positions, but "
                        r"SmolLM2.* has 8,192", str(raised.value))


def test_a_position_table_bounds_only_the_learned_encoding():
    """max_len is the rows of the learned table; sinusoidal, RoPE and ALiBi compute any
    position, and the model panel says so."""
    for pe in ("sinusoidal", "rope", "alibi"):
        facts = dict(loaded(pe=pe).backend.facts().rows())
        assert facts["Max positions"] == "unbounded (no position table)"
    assert dict(loaded(pe="learned").backend.facts().rows())["Max positions"] == "1024"


def test_a_loaded_pretrained_model_is_refused_in_the_words_of_its_load(pinned_memory,
                                                                       monkeypatch, capsys):
    """Its weights, already held, count as its own and as needed: what the command line
    says before loading it, the API says of it loaded (the free memory now less its
    weights, which the pinned memory does not lower: taken off by hand)."""
    needs("minilm")
    from posviz.models.hf.sources import read_config, resolve
    model = loaded("minilm")
    folder, _, _ = resolve("minilm")
    held = memory.checkpoint_weights(folder, None, read_config(folder))   # as counted
    monkeypatch.setattr(memory, "system_available", lambda: 10**8)
    text = words(501)
    assert main(["report", "--model", "minilm", "--text", text]) == 2
    said = capsys.readouterr().err.removeprefix("posviz: error: ").rstrip("\n")
    assert said.startswith("this model needs about ") and "for its weights and" in said
    monkeypatch.setattr(memory, "system_available", lambda: 10**8 - held)
    with pytest.raises(Refused) as raised:
        model.compare(text)
    assert raised.value.reason == "memory"
    assert str(raised.value) == said


def test_minilm_s_positions_are_refused_in_one_sentence_wherever_they_are(capsys):
    """load(n_tokens=600) and the guard said "600 tokens from position 0 need 600
    positions…", a comparison of 600 words "the text has 600 words, so at least…": one
    sentence now (models.backend.too_long), with what is known of the count."""
    needs("minilm")
    from posviz.models.backend import check_length
    from posviz.models.config import Positions
    from posviz.models.limits import guard
    # led by the text's argument where one text was given (errors.naming_text)
    sentence = re.compile(r"((--text|text='(the )+the…'): )?(at least )?600 tokens( \(the text's 600 words\))? from "
                          r"position 0 need 600 positions, but all-MiniLM-L6-v2 has 512")
    text = " ".join(["the"] * 600)
    said = []
    for call in (lambda: posviz.load("minilm", n_tokens=600, progress=False),
                 lambda: loaded("minilm").compare(text),
                 lambda: posviz.sweep(text, model="minilm"),
                 lambda: guard.check("minilm", 600),
                 lambda: guard.check_texts("minilm", [text]),
                 lambda: check_length(loaded("minilm").backend, 600, Positions())):
        with pytest.raises(PosvizInputError) as raised:
            call()
        said.append(str(raised.value))
    assert main(["report", "--model", "minilm", "--text", text]) == 2
    said.append(capsys.readouterr().err.removeprefix("posviz: error: ").rstrip("\n"))
    assert all(sentence.fullmatch(line) for line in said), said
