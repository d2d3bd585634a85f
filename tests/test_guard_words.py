"""A sweep whose orders are too many is refused from its texts' words before a
pretrained model is loaded, as the built-in model's is: a swap sweep of 3,000 words
(at least 4,498,500 pairs) and an "all" sweep of more than 7 words were refused by
SmolLM2 only once loaded (31 s). Each word gives one token or more, and only special
tokens are pinned, so the words' count of orders is the fewest the sweep can run."""
from __future__ import annotations

import pytest

import posviz
from posviz.api import experiments
from posviz.cli import main, sweep as sweep_command
from posviz.errors import Refused
from posviz.models.limits import guard

pytest.importorskip("transformers")

TEXT = " ".join(["cat"] * 3000)


@pytest.fixture
def never_loaded(monkeypatch):
    """Any load fails the test: the refusal must come before it."""
    def load(*_, **__):
        raise AssertionError("the model was loaded before the refusal")
    monkeypatch.setattr(experiments, "load", load)
    monkeypatch.setattr(sweep_command, "load_model", load)


def test_the_words_bound_a_pretrained_sweeps_orders_from_below():
    orders = guard.orders_of_words("swap", 1, [TEXT], exact=False)
    assert (orders.runs, orders.at_least) == (4_498_500, True)
    # a drawn count is never refused on a lower bound of the orders that exist
    assert guard.orders_of_words("random", 10**6, ["a b c"], exact=False).distinct is None
    assert guard.orders_of_words("random", 1, ["a b c"], exact=True).distinct == 6


@pytest.mark.parametrize("kind, said", [
    ("swap", "would run at least 4,498,500 orders"),
    ("all", "this text has at least 3000; use random instead")])
def test_the_command_line_refuses_before_the_load(kind, said, never_loaded, tmp_path,
                                                  capsys):
    text = tmp_path / "long.txt"
    text.write_text(TEXT, "utf-8")
    assert main(["sweep", "--model", "smollm2", "--text-file", str(text),
                 "--kind", kind]) == 2
    err = capsys.readouterr().err.strip()
    assert said in err
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize("kind, said", [
    ("swap", "kind='swap' would run at least 4,498,500 orders"),
    ("all", "this text has at least 3000")])
def test_the_api_refuses_before_the_load(kind, said, never_loaded):
    with pytest.raises(Refused, match=said):
        posviz.sweep([TEXT], model="smollm2", kind=kind)


def test_the_built_in_model_refuses_all_before_it_is_built(never_loaded):
    with pytest.raises(Refused, match="this text has 3000; use random"):
        posviz.sweep([TEXT], kind="all")
