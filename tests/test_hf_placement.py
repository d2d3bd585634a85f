"""A real model in half precision, and one whose layers accelerate places on the disk
(device_map="auto", a forced small max_memory), against a plain float32 load of the
same files: the same metrics to the dtype's tolerance, the weights where they are said
to be."""
from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("transformers")
pytest.importorskip("accelerate")

from test_hf import TEXTS, save_tiny, shuffled_movable  # noqa: E402

from posviz.analysis.engine import Engine  # noqa: E402
from posviz.analysis.symmetry import METRICS  # noqa: E402
from posviz.errors import PosvizInputError  # noqa: E402
from posviz.models import hf  # noqa: E402
from posviz.models.limits import memory  # noqa: E402
from posviz.models.config import Positions  # noqa: E402


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    folder = tmp_path_factory.mktemp("placement") / "llama"
    save_tiny("llama", folder)
    return folder


def metrics(backend):
    seq = backend.tokenize(TEXTS[0])
    ev = Engine(backend).evaluate(seq, shuffled_movable(seq, 3), Positions())
    return ev, {name: ev.comparison.metric(name) for name in (*METRICS, "token_change")}


def weight_bytes(backend) -> int:
    return sum(p.numel() * p.element_size() for p in backend.model.parameters())


@pytest.mark.parametrize("dtype, tol", [("bfloat16", 5e-2), ("float16", 5e-3)])
def test_half_precision_halves_the_weights_and_keeps_the_numbers(llama, dtype, tol):
    plain, half = hf.load_backend(str(llama)), hf.load_backend(str(llama), dtype=dtype)
    assert weight_bytes(half) * 2 == weight_bytes(plain)
    assert {str(p.dtype) for p in half.model.parameters()} == {f"torch.{dtype}"}
    assert half.describe()["dtype"] == dtype and "dtype" not in plain.describe()
    (want_ev, want), (got_ev, got) = metrics(plain), metrics(half)
    assert got_ev.run.hidden.dtype == np.float32             # numpy has no bfloat16
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=tol, atol=tol, err_msg=name)
    # computed in float32 over the half-precision weights: float32's floor
    assert got_ev.comparison.floor == want_ev.comparison.floor


def test_an_offloaded_model_puts_layers_on_disk_and_gives_the_same_numbers(llama, tmp_path):
    plain = hf.load_backend(str(llama))
    budget = weight_bytes(plain) // 3                # a third of the weights in memory
    offloaded = hf.load_backend(str(llama), offload_folder=str(tmp_path / "offload"),
                                max_memory={"cpu": budget})
    placed = offloaded.describe()["layers_on"]
    assert placed.get("disk", 0) >= 1 and set(placed) <= {"cpu", "disk"}
    where = offloaded.facts().device                 # the model panel's "float32 on ..."
    assert f"disk ({placed['disk']} module" in where and plain.facts().device == "cpu"
    # not in memory: read from the checkpoint (or the folder) as each layer runs
    assert any(p.device.type == "meta" for p in offloaded.model.parameters())
    (_, want), (_, got) = metrics(plain), metrics(offloaded)
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-6, atol=1e-6,
                                   err_msg=name)


def test_the_memory_check_counts_the_dtype(llama, monkeypatch):
    weights = memory.checkpoint_weights(llama, None, None)
    monkeypatch.setattr(memory, "available_bytes",
                        lambda: int((weights * 3 // 4) / memory.SAFETY))
    with pytest.raises(PosvizInputError):
        hf.load_backend(str(llama), n_tokens=8)
    hf.load_backend(str(llama), n_tokens=8, dtype="bfloat16")     # half the weights fit


def test_an_unknown_dtype_is_refused_in_one_line(llama):
    with pytest.raises(PosvizInputError, match=r"^dtype must be one of float32, float64, "
                       r"bfloat16, float16 \(got 'int8'\)"):
        hf.load_backend(str(llama), dtype="int8")


def test_the_command_line_runs_a_model_in_bfloat16_and_offloaded(llama, tmp_path, capsys):
    from posviz import cli
    assert cli.main(["report", "--model", str(llama), "--dtype", "bfloat16", "--text",
                     "the cat sat on the mat", "--json", "--quiet"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["config"]["dtype"] == "bfloat16"
    assert report["config"]["computes_in"] == "float32"
    assert report["noise_floor"] < 1e-4 < 100 * 2.0 ** -7       # float32's, not bfloat16's
    assert cli.main(["report", "--model", str(llama), "--offload-folder", str(tmp_path),
                     "--text", "the cat sat on the mat", "--json", "--quiet"]) == 0
    config = json.loads(capsys.readouterr().out)["config"]       # said at float32 too
    assert (config["dtype"], config["computes_in"]) == ("float32", "float32")


@pytest.mark.parametrize("argv, says", [
    (["--dtype", "float64", "--model", "M"], "--dtype float64 applies to the built-in"),
    (["--dtype", "bfloat16"], "dtype"),
    (["--offload-folder", "X"], "--offload-folder applies to a --model only")])
def test_a_precision_or_placement_that_does_not_apply_is_refused_in_one_line(
        llama, argv, says, capsys):
    from posviz import cli
    argv = [str(llama) if a == "M" else a for a in argv]
    assert cli.main(["report", *argv, "--text", "the cat"]) == cli.EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1
