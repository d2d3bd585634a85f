"""Models by hub name, against a stand-in for the hub on the loopback interface.

The real huggingface_hub client downloads tiny models saved here from tests/hub_stub.py
(HF_ENDPOINT=http://127.0.0.1:PORT) into a temporary HF_HOME; the command line runs in
a fresh process each time, as a user runs it, so each sees only its own environment.
"""
from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("transformers")
pytest.importorskip("huggingface_hub")

from hub_stub import Hub  # noqa: E402
from test_hf import save_tiny  # noqa: E402

from posviz.errors import Cancelled, PosvizInputError  # noqa: E402
from posviz.models import hf  # noqa: E402
from posviz.models.hf import cache, hub  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
NAME = "someone/tiny-gpt2"
TEXT = "the cat sat on the mat"


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """Tiny models saved once: a GPT-2, a BERT, and a GPT-2 whose config says BART."""
    root = tmp_path_factory.mktemp("saved")
    for family in ("gpt2", "bert"):
        save_tiny(family, root / family)
    shutil.copytree(root / "gpt2", root / "bart")
    config = json.loads((root / "bart" / "config.json").read_text())
    (root / "bart" / "config.json").write_text(json.dumps({**config, "model_type": "bart"}))
    return root


@pytest.fixture
def stub(saved):
    with Hub() as served:
        served.add(NAME, saved / "gpt2", tags=("v1",))
        served.add("someone/tiny-bart", saved / "bart")
        yield served


def environment(stub, home: Path, **extra) -> dict:
    """A user's environment: the stand-in hub, a cache of this test's own, no offline
    switch unless asked."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_CACHE")}
    env.update(HF_ENDPOINT=stub.url if stub else "http://127.0.0.1:9", HF_HOME=str(home),
               HF_HUB_DISABLE_XET="1", PYTHONPATH=str(ROOT), **extra)
    return env


def posviz(args, env) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "posviz", *args], env=env,
                          capture_output=True, text=True, timeout=300)


def report(model: str, env, *more) -> subprocess.CompletedProcess:
    return posviz(["report", "--model", model, "--text", TEXT, "--order", "3,1,2,0,4,5",
                   "--json", *more], env)


@pytest.fixture
def online(stub, tmp_path, monkeypatch):
    """This process as a user's with the network allowed: the stand-in hub, a private
    cache (huggingface_hub read HF_HUB_OFFLINE=1 from the tests' set-up at its import)."""
    from huggingface_hub import constants
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", False)
    monkeypatch.setattr(constants, "HF_HUB_DISABLE_TELEMETRY", True)   # none to huggingface.co
    for name, value in environment(stub, tmp_path / "home").items():
        if name.startswith("HF_"):
            monkeypatch.setenv(name, value)
    for name in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_CACHE"):
        monkeypatch.delenv(name, raising=False)
    return stub


# -- the command line ---------------------------------------------------------------------
def test_a_hub_name_downloads_with_progress_runs_and_runs_again_offline(stub, saved, tmp_path):
    env = environment(stub, tmp_path / "home")
    first = report(NAME, env)
    assert first.returncode == 0, first.stderr
    commit = stub.repos[NAME].refs["main"]
    told = [line.removeprefix("posviz: ") for line in first.stderr.splitlines()]
    assert f"downloading {NAME} at {commit[:7]}: 4 files, 0.2 MB into " \
           f"{tmp_path / 'home' / 'hub'}" in told
    counted = [line for line in told if line.startswith("downloading file")]
    assert counted[0] == "downloading file 1 of 4 (model.safetensors): 0.00 of 0.21 MB (0%)"
    assert counted[-1].endswith("(100%)") and "(config.json)" in counted[-1]
    assert sorted(stub.files_fetched()) == ["config.json", "config.json", "model.safetensors",
                                            "tokenizer.json", "tokenizer_config.json"]
    data = json.loads(first.stdout)
    assert data["config"]["revision"] == commit and data["config"]["model"] == NAME

    asked = len(stub.requests)
    for again in (report(NAME, env, "--offline"),           # the cache, online or not
                  report(NAME, {**env, "HF_HUB_OFFLINE": "1"})):
        assert again.returncode == 0, again.stderr
        assert json.loads(again.stdout) == data
        assert "downloading" not in again.stderr
    assert stub.requests[asked:] == []
    # the numbers are those of the saved folder itself
    from posviz.api import load
    local = load(str(saved / "gpt2")).compare(TEXT, "3,1,2,0,4,5").to_dict()
    local = json.loads(json.dumps(local))
    assert local["layers"] == data["layers"] and local["outputs"] == data["outputs"]


def test_a_name_not_cached_with_the_network_forbidden_exits_2_in_one_line(stub, tmp_path):
    for env, more in ((environment(stub, tmp_path / "home"), ["--offline"]),
                      (environment(stub, tmp_path / "home", HF_HUB_OFFLINE="1"), [])):
        result = report(NAME, env, *more)
        assert result.returncode == 2 and result.stdout == ""
        assert result.stderr == (f"posviz: error: no model '{NAME}' in the local Hugging Face "
                                 f"cache ({tmp_path / 'home' / 'hub'}), and downloads are off "
                                 f"(offline)\n")
    assert stub.requests == []


def test_a_name_without_an_org_is_a_hub_name_as_people_write_it(online, saved, tmp_path,
                                                                 capsys):
    """gpt2, distilgpt2, bert-base-uncased: the oldest hub ids have no ORG/ part; a name
    that is not a folder here is one. (In this process: the command line's environment
    is read in a fresh process by the tests above.)"""
    online.add("gpt2", saved / "gpt2")
    code, fetched, err = cli_report("gpt2", capsys)
    assert code == 0, err
    assert "posviz: downloading gpt2 at " in err
    assert ("GET", "/api/models/gpt2/revision/main") in online.requests
    code, again, _ = cli_report("gpt2", capsys, "--offline")          # from the cache now
    assert code == 0 and json.loads(again) == json.loads(fetched)
    code, _, err = cli_report("distilgpt2", capsys, "--offline")
    assert code == 2 and err == (
        f"posviz: error: no folder 'distilgpt2' here and no model 'distilgpt2' in the local "
        f"Hugging Face cache ({tmp_path / 'home' / 'hub'}), and downloads are off "
        f"(offline)\n")


def test_an_unreachable_hub_fails_in_one_line_without_retrying(stub, tmp_path):
    """A closed port fails at once; a hub that never answers fails after one
    hub.ANSWER_SECONDS wait for the one question asked (benchmarks/hub.py times both)."""
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    refused = report(NAME, {**environment(stub, tmp_path / "a"),
                            "HF_ENDPOINT": f"http://127.0.0.1:{port}"})
    assert refused.returncode == 2 and refused.stderr.count("\n") == 1
    assert f"cannot reach the hub at http://127.0.0.1:{port} to download {NAME}" in \
        refused.stderr and "not in the local cache either" in refused.stderr
    stub.silent = True
    silent = report(NAME, environment(stub, tmp_path / "b"), "--quiet")
    stub.silent = False
    assert silent.returncode == 2 and silent.stderr.count("\n") == 1
    assert "cannot reach the hub" in silent.stderr and "timed out" in silent.stderr
    asked = [path for _, path in stub.requests if path.startswith("/api/models")]
    assert asked == [f"/api/models/{NAME}/revision/main"]       # once, no retries


def test_hub_errors_are_one_line_and_refuse_before_the_weights(online, tmp_path, capsys):
    cases = {"someone/missing": "no model 'someone/missing' on the hub at",
             f"{NAME}@v9": f"{NAME} has no revision 'v9' on the hub at",
             "someone/tiny-bart": "model type 'bart' is not supported"}
    for name, message in cases.items():
        code, _, err = cli_report(name, capsys)
        assert code == 2, err
        assert err.splitlines()[-1].startswith(f"posviz: error: {message}")
    assert "model.safetensors" not in online.files_fetched()     # nothing was downloaded
    assert not (tmp_path / "home" / "hub" / "models--someone--tiny-bart" /
                "snapshots").exists()


def cli(args, capsys) -> tuple[int, str, str]:
    """The command line in this process: (exit status, stdout, stderr)."""
    from posviz.cli import main
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def cli_report(model: str, capsys, *more) -> tuple[int, str, str]:
    return cli(["report", "--model", model, "--text", TEXT, "--order", "3,1,2,0,4,5",
                "--json", *more], capsys)


def test_a_revision_by_tag_is_cached_under_its_ref(online, tmp_path, capsys):
    code, first, err = cli_report(f"{NAME}@v1", capsys)
    assert code == 0, err
    ref = tmp_path / "home" / "hub" / "models--someone--tiny-gpt2" / "refs" / "v1"
    assert ref.read_text() == online.repos[NAME].refs["v1"]
    asked = len(online.requests)
    for more in (["--offline"], []):                 # the cache first, online or not
        code, again, err = cli_report(f"{NAME}@v1", capsys, *more)
        assert code == 0 and json.loads(again) == json.loads(first)
    assert online.requests[asked:] == []
    assert cli_report(NAME, capsys, "--offline")[0] == 2     # refs/main was never written


def test_session_files_pin_the_commit_and_another_machine_fetches_it(online, saved, tmp_path,
                                                                       capsys, monkeypatch):
    session = tmp_path / "pinned.posviz"
    code, saved_run, err = cli_report(NAME, capsys, "--save-session", str(session))
    assert code == 0, err
    commit = online.repos[NAME].refs["main"]
    model = json.loads(session.read_text())["model"]
    assert (model["source"], model["revision"]) == (NAME, commit)

    online.add(NAME, saved / "bert")               # main moves on to other weights
    monkeypatch.setenv("HF_HOME", str(tmp_path / "elsewhere"))       # another machine
    code, out, err = cli(["report", "--session", str(session), "--json", "--offline"], capsys)
    assert code == 2 and err == (f"posviz: error: no model '{NAME}@{commit}' in the local "
                                 f"Hugging Face cache ({tmp_path / 'elsewhere' / 'hub'}), and "
                                 f"downloads are off (offline)\n")
    asked = len(online.requests)
    code, fetched, err = cli(["report", "--session", str(session), "--json"], capsys)
    assert code == 0, err
    fetched, here = json.loads(fetched), json.loads(saved_run)
    assert fetched["config"].pop("path") != here["config"].pop("path")   # another cache
    assert (fetched["provenance"]["options"].pop("path")
            != here["provenance"]["options"].pop("path"))
    assert fetched == here
    assert f"/api/models/{NAME}/revision/{commit}" in [p for _, p in online.requests[asked:]]
    code, latest, err = cli(["report", "--model", NAME, "--text", TEXT, "--json"], capsys)
    assert code == 0, err                                 # a name alone: main, now a BERT
    assert json.loads(latest)["config"]["family"] == "bert"
    assert json.loads(latest)["config"]["revision"] != commit


def test_loading_a_folder_asks_the_network_nothing(online, saved, capsys):
    code, out, err = cli_report(str(saved / "gpt2"), capsys)
    assert code == 0, err
    assert online.requests == []


# -- in this process: cancel, the question before a large download ------------------------
def test_cancel_leaves_nothing_a_later_load_trusts(online, tmp_path):
    """Cancelled halfway through the weights (the first file), then halfway through
    config.json (the last, after three files were linked into the snapshot), then
    interrupted (Ctrl+C) as the third file begins, then failed (the hub lost the second
    file)."""
    told = []

    def stop_in(file_number: int):
        def should_stop() -> bool:            # once that file has begun
            return any(step.startswith(f"downloading file {file_number} ")
                       for step, _, _ in told)
        return should_stop

    def interrupt(step, done=None, total=None):
        if step.startswith("downloading file 3 "):
            raise KeyboardInterrupt

    files = online.repos[NAME].commits[online.repos[NAME].refs["main"]].files
    kept = dict(files)

    def lose_a_file(step, done=None, total=None):
        if step.startswith("downloading file 2 "):
            files.pop("tokenizer.json", None)

    repo = tmp_path / "home" / "hub" / "models--someone--tiny-gpt2"
    for file_number in (1, 4, "Ctrl+C", "lost"):
        told.clear()
        expected = {"Ctrl+C": KeyboardInterrupt, "lost": PosvizInputError}
        with pytest.raises(expected.get(file_number, Cancelled)) as stopped:
            if file_number == "Ctrl+C":
                hf.load_backend(NAME, progress=interrupt, online=True)
            elif file_number == "lost":
                hf.load_backend(NAME, progress=lose_a_file, online=True)
            else:
                hf.load_backend(NAME, online=True, should_stop=stop_in(file_number),
                                progress=lambda *a: told.append((a + (None, None))[:3]))
        assert not (repo / "snapshots").exists() or not any((repo / "snapshots").iterdir())
        assert not (repo / "refs").exists()
        assert cache.cached_models() == {}
        with pytest.raises(PosvizInputError, match="in the local Hugging Face cache"):
            hf.load_backend(NAME)                          # posviz does not trust it
        from transformers import AutoConfig
        with pytest.raises(OSError):                        # nor does transformers
            AutoConfig.from_pretrained(NAME, local_files_only=True,
                                       cache_dir=str(cache.hub_cache_dir()))
    assert str(stopped.value).startswith("the hub at http://127.0.0.1:") and \
        " answered 404 for someone/tiny-gpt2, tokenizer.json: " in str(stopped.value)
    files.update(kept)
    fetched = len(online.files_fetched())
    backend = hf.load_backend(NAME, online=True)            # the next attempt completes
    assert backend.revision == online.repos[NAME].refs["main"]
    assert "model.safetensors" not in online.files_fetched()[fetched:]   # its blob stayed
    assert list(cache.cached_models()) == [NAME]


def test_a_large_download_is_told_and_asked_for_first(online, tmp_path):
    with pytest.raises(hf.LargeDownload) as asked:
        hf.load_backend(NAME, online=True, ask_above=100_000)
    told = str(asked.value)
    assert told.startswith(f"{NAME} at ") and ": 4 files, 0.2 MB to download into " in told
    assert asked.value.download.size > 100_000
    assert online.files_fetched() == ["config.json"]       # read aside, for its family
    assert cache.cached_models() == {}
    assert hf.load_backend(NAME, online=True, ask_above=10**6).name == NAME


# -- the cache's rules ----------------------------------------------------------------------
def test_config_json_comes_last_and_shards_must_all_be_there(tmp_path):
    listing = {"README.md": 1, "config.json": 1, "tokenizer.json": 1, "onnx/model.onnx": 1,
               "model-00001-of-00002.safetensors": 1, "model-00002-of-00002.safetensors": 1,
               "model.safetensors.index.json": 1, "pytorch_model.bin": 1,
               "generation_config.json": 1}
    assert hub.needed_files(cache.HubName("a/b"), listing) == [
        "model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors",
        "model.safetensors.index.json", "tokenizer.json", "generation_config.json",
        "config.json"]
    folder = tmp_path / "snapshot"
    folder.mkdir()
    (folder / "model.safetensors.index.json").write_text(json.dumps(
        {"weight_map": {"a": "model-00001-of-00002.safetensors",
                        "b": "model-00002-of-00002.safetensors"}}))
    (folder / "model-00001-of-00002.safetensors").write_text("")
    assert not cache.complete(folder)                       # no config.json yet
    (folder / "config.json").write_text("{}")
    assert not cache.complete(folder)                       # a shard is missing
    (folder / "model-00002-of-00002.safetensors").write_text("")
    assert cache.complete(folder)


@pytest.mark.parametrize("spec,name", [
    ("org/name", cache.HubName("org/name")),
    ("org/name@v1.0", cache.HubName("org/name", "v1.0")),
    ("EleutherAI/pythia-70m@" + "a" * 40, cache.HubName("EleutherAI/pythia-70m", "a" * 40)),
    ("gpt2", cache.HubName("gpt2")), ("bert-base-uncased@main",
                                      cache.HubName("bert-base-uncased", "main")),
    ("/abs/path", None), ("a/b/c", None), ("../up", None), ("two words", None)])
def test_hub_names(spec, name):
    assert cache.parse_hub_name(spec) == name


def test_the_python_api_loads_a_hub_name_and_tells_the_download(online, capsys):
    import posviz
    m = posviz.load(NAME)
    err = capsys.readouterr().err
    assert err.startswith(f"posviz: downloading {NAME} at ") and "(100%)" in err
    assert err.index("(100%)") < err.index("reading config")   # told at once, then the load
    assert m.spec.revision == online.repos[NAME].refs["main"]
    code, out, _ = cli_report(NAME, capsys, "--offline")
    report = m.compare(TEXT, [3, 1, 2, 0, 4, 5])
    assert code == 0 and json.loads(json.dumps(report.to_dict())) == json.loads(out)
    with pytest.raises(PosvizInputError, match="downloads are off"):
        posviz.load("someone/other", offline=True)
