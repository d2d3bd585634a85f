"""Loading a real model: counted progress, cancelling frees what was read, the device,
the memory check before loading, and an architecture posviz cannot read."""
from __future__ import annotations

import gc
import json
import os
import re

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from test_hf import byte_bpe_tokenizer  # noqa: E402

from posviz.models.hf.loading import IMPORTING  # noqa: E402
from transformers import GPTNeoXConfig, GPTNeoXForCausalLM  # noqa: E402

from posviz import cli  # noqa: E402
from posviz.errors import Cancelled, PosvizInputError  # noqa: E402
from posviz.models import maps  # noqa: E402
from posviz.models.limits import memory  # noqa: E402
from posviz.models import hf
from posviz.models.request import Request


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    """A tiny GPT-NeoX (a class no other fixture of this module keeps alive)."""
    root = tmp_path_factory.mktemp("loading") / "neox"
    tokenizer = byte_bpe_tokenizer(bos=False)
    torch.manual_seed(0)
    GPTNeoXForCausalLM(GPTNeoXConfig(
        vocab_size=len(tokenizer), hidden_size=32, num_hidden_layers=3, num_attention_heads=4,
        intermediate_size=64, max_position_embeddings=64, bos_token_id=None,
        eos_token_id=None)).save_pretrained(root)
    tokenizer.save_pretrained(root)
    return root


def tensor_count(folder) -> int:
    from safetensors import safe_open
    with safe_open(folder / "model.safetensors", "pt") as file:
        return len(list(file.keys()))


def alive_models() -> int:
    gc.collect()
    return sum(type(o) is GPTNeoXForCausalLM for o in gc.get_objects())


def test_progress_counts_the_tensors_read(folder):
    told = []
    backend = hf.load_backend(str(folder), progress=lambda *a: told.append(a))
    counted = [(done, total) for step, *rest in told if rest and rest[0] is not None
               for done, total in [rest]]
    assert told[0] == ("reading config",) or told[0][0] == "reading config"
    total = tensor_count(folder)
    assert [total_ for _, total_ in counted] == [total] * total
    assert [done for done, _ in counted] == list(range(1, total + 1))
    assert backend.head == "causal"


def test_one_argument_progress_is_told_the_steps_only(folder):
    steps = []
    hf.load_backend(str(folder), progress=steps.append)
    # a step that lasts a second is told again with its seconds (a busy machine's)
    steps = [step for step in steps if not re.fullmatch(r".+ \(\d+ s\)", step)]
    assert steps == ["reading config", "loading tokenizer", IMPORTING, "loading weights",
                     "ready"]


def test_a_cancelled_load_stops_part_way_and_frees_the_model(folder):
    before = alive_models()
    told = []

    def progress(step, done=None, total=None):
        told.append(done)

    with pytest.raises(Cancelled) as caught:
        hf.load_backend(str(folder), progress=progress,
                        should_stop=lambda: sum(d is not None for d in told) >= 3)
    counted = [d for d in told if d is not None]
    assert counted == [1, 2, 3] and 3 < tensor_count(folder)      # stopped part-way
    # Nothing survives, even while the error is kept (as the loader's future keeps it)
    assert caught.value.__traceback__ is not None
    assert alive_models() == before
    backend = hf.load_backend(str(folder))                        # and loading still works
    assert backend.family.name == "gpt_neox"


def test_auto_device_picks_what_torch_has(folder):
    backend = hf.load_backend(str(folder), device="auto")
    expected = expected_auto()
    assert backend.device == expected and backend.describe()["device"] == expected
    seq = backend.tokenize("the cat sat")
    trace = backend.run(seq, Request.original(np.arange(len(seq))))
    assert trace.hidden.shape == (4, len(seq), 32)


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
def test_cuda_without_cuda_is_refused_in_one_line(folder, capsys):
    with pytest.raises(PosvizInputError, match="has no CUDA device on this machine") \
            as caught:
        hf.load_backend(str(folder), device="cuda")
    assert "\n" not in str(caught.value)
    argv = ["report", "--model", str(folder), "--text", "the cat", "--device", "cuda"]
    assert cli.main(argv) == cli.EXIT_BAD_INPUT
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "cuda" in err


def expected_auto() -> str:
    return ("cuda" if torch.cuda.is_available() else
            "mps" if torch.backends.mps.is_available() else "cpu")


@pytest.mark.parametrize("device", ["cpu", "auto"])
def test_report_says_the_device(folder, capsys, device):
    argv = ["report", "--model", str(folder), "--text", "the cat sat", "--json",
            "--device", device]
    assert cli.main(argv) == 0
    assert json.loads(capsys.readouterr().out)["config"]["device"] == \
        (expected_auto() if device == "auto" else device)


def test_the_window_takes_a_device_on_its_command_line():
    pytest.importorskip("PySide6")
    from posviz.gui.app import parse_args
    assert parse_args(["--device", "auto"])[0].device == "auto"
    assert parse_args([])[0].device == "cpu"


def test_the_window_takes_a_model_on_its_command_line_but_not_beside_a_session(capsys):
    pytest.importorskip("PySide6")
    from posviz.gui.app import parse_args
    assert parse_args(["--model", "minilm"])[0].model == "minilm"
    assert parse_args([])[0].model is None
    with pytest.raises(SystemExit) as stopped:
        parse_args(["lecture.posviz", "--model", "minilm"])
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "session file" in err


def test_a_model_too_large_for_the_free_memory_is_refused_before_loading(folder, monkeypatch,
                                                                         capsys):
    weights = 4 * sum(p.numel() for p in GPTNeoXForCausalLM.from_pretrained(folder)
                      .parameters())
    assert memory.checkpoint_weights(folder, None, None) == weights     # from the header
    monkeypatch.setattr(memory, "available_bytes", lambda: weights)      # 80 % of it free
    before = alive_models()
    with pytest.raises(PosvizInputError, match="for its weights and .* free") as caught:
        hf.load_backend(str(folder), n_tokens=16)
    message = str(caught.value)
    assert memory.size_text(weights) in message and "16 tokens" in message
    assert memory.size_text(int(weights * memory.SAFETY)) in message
    assert alive_models() == before
    capsys.readouterr()                      # transformers' own bar, loading the reference
    assert cli.main(["report", "--model", str(folder), "--text", "the cat"]) == \
        cli.EXIT_BAD_INPUT
    assert capsys.readouterr().err.count("\n") == 1


def test_the_forward_estimate_grows_with_the_square_of_the_length():
    config = {"num_hidden_layers": 2, "num_attention_heads": 3, "hidden_size": 8}
    small, large = memory.forward_bytes(config, 10), memory.forward_bytes(config, 20)
    # keys and values of 3 heads of width 8 // 3 for the causal prefix reuse
    assert large == memory.comparison_bytes(2, 3, 8, 20, 4, memory.HF_LAYER_FACTOR,
                                            real=True, kv_width=6)
    # the reference's and the kept aligned maps (2 layers, 3 heads), one layer at work
    attention = lambda n: (2 * 2 + memory.HF_LAYER_FACTOR) * 3 * n * n * 4   # noqa: E731
    assert large - small == attention(20) - attention(10) + (2 * 9 * 8 + 2 * 2 * 6) * 10 * 4


def test_a_long_input_counts_a_real_models_branches_as_norms():
    """Past models.maps.BRANCHES_WHOLE a run keeps its branches' per-token norms (2L·n)
    instead of their outputs (2L·n·d), and the estimate counts them so."""
    L, h, d, n = 30, 9, 576, 2350                             # SmolLM2's sizes
    assert 2 * L * n * d * 4 > maps.BRANCHES_WHOLE
    real = memory.comparison_bytes(L, h, d, n, 4, real=True)
    builtin = memory.comparison_bytes(L, h, d, n, 4)
    assert builtin - real == 2 * 2 * L * n * (d - 1) * 4


# -- an architecture that cannot be read -----------------------------------------------
@pytest.fixture
def unreadable(folder, tmp_path):
    import shutil
    target = tmp_path / "unreadable"
    shutil.copytree(folder, target)
    config = json.loads((target / "config.json").read_text())
    (target / "config.json").write_text(json.dumps({**config, "model_type": "mamba"}))
    return target


def test_cli_names_the_model_type_and_why(unreadable, capsys):
    assert cli.main(["report", "--model", str(unreadable)]) == cli.EXIT_BAD_INPUT
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert "model type 'mamba' is not supported: posviz does not know where" in err


def test_gui_names_the_model_type_and_why_inline(qtbot, window, unreadable):
    from posviz.document.spec import ModelSpec
    c = window.controller
    backend = c.session.backend
    with qtbot.waitSignal(c.modelFailed, timeout=20_000) as failed:
        c.load(ModelSpec.pretrained(str(unreadable)))
    assert "model type 'mamba' is not supported" in failed.args[0]
    assert "\n" not in failed.args[0]
    assert window.model_panel.load.status.text() == failed.args[0]
    assert c.session.backend is backend


# -- the window: a determinate bar, and Cancel -------------------------------------------
def test_gui_bar_counts_the_tensors_of_a_real_load(qtbot, window, folder):
    from posviz.document.spec import ModelSpec
    c, panel = window.controller, window.model_panel
    shown = []
    c.modelCount.connect(lambda step, done, total: shown.append(
        (step, done, total, panel.load.busy.maximum(), panel.load.busy.value())))
    c.device = "auto"                           # as `posviz --device auto` sets it
    with qtbot.waitSignal(c.modelLoaded, timeout=30_000):
        c.load(ModelSpec.pretrained(str(folder), "tiny NeoX"))
    assert c.session.backend.device == expected_auto()
    total = tensor_count(folder)
    assert [row[1] for row in shown] == list(range(1, total + 1))
    # the bar is the whole load's share, filled by the count and never moved back
    bar = [row[4] for row in shown]
    assert all(row[0] == "loading weights" and row[2] == total
               and row[4] >= row[3] * row[1] // total for row in shown)
    assert bar == sorted(bar) and bar[-1] == shown[-1][3]
    assert c.session.backend.family.name == "gpt_neox"


@pytest.mark.asynchronous
def test_gui_cancel_stops_a_real_load_part_way_and_frees_it(qtbot, window, folder):
    import threading

    from PySide6.QtCore import Qt

    from posviz.document.spec import ModelSpec
    c, panel = window.controller, window.model_panel
    backend, before = c.session.backend, alive_models()
    clicked = threading.Event()
    reached = []

    def on_worker(token, step, done, total):      # on the loading thread: wait for Cancel
        if done is not None:
            reached.append(done)
            if done == 2:
                clicked.wait(30)
    c._bridge.progress.connect(on_worker, Qt.DirectConnection)
    c.load(ModelSpec.pretrained(str(folder), "tiny NeoX"))
    qtbot.waitUntil(lambda: panel.load.busy.isVisible() and 2 in reached, timeout=30_000)
    panel.load.cancel.click()
    clicked.set()
    qtbot.waitUntil(lambda: not any(t.name == "posviz-load" and t.is_alive()
                                    for t in threading.enumerate()), timeout=30_000)
    assert max(reached) <= 3 < tensor_count(folder)           # stopped at the next tensor
    assert c.session.backend is backend and not c.loading
    assert alive_models() == before
    assert "cancelled" in panel.load.status.text()


def test_a_load_is_counted_through_transformers_own_hook_and_puts_it_back(folder,
                                                                         monkeypatch):
    """posviz's one patch (GGUF files) switched off, a safetensors load is counted all
    the same: its loop runs through transformers' public tqdm hook, which is put back."""
    from transformers.utils import logging
    if not hasattr(logging, "set_tqdm_hook"):
        pytest.skip("this transformers has no tqdm hook: its loads are not counted")
    monkeypatch.setenv("POSVIZ_WORKAROUNDS_OFF", "hf-gguf-progress")

    def someone_else_s(factory, args, kwargs):
        return factory(*args, **kwargs)

    previous = logging.set_tqdm_hook(someone_else_s)
    told = []
    try:
        hf.load_backend(str(folder), progress=lambda *a: told.append(a))
    finally:
        assert logging.set_tqdm_hook(previous) is someone_else_s
    counted = [call[1] for call in told if len(call) > 1 and call[1] is not None]
    assert counted == list(range(1, tensor_count(folder) + 1))


def test_an_accelerator_for_the_builtin_model_is_told_not_ignored(capsys):
    assert cli.main(["report", "--text", "the cat", "--device", "cuda"]) == \
        cli.EXIT_BAD_INPUT
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "applies to a --model only" in err
    assert cli.main(["report", "--text", "the cat", "--device", "auto"]) == 0


def test_a_load_on_a_worker_leaves_collecting_to_the_gui_thread(monkeypatch):
    """The window loads on a worker: a collection there can free a Qt object off the GUI
    thread and deadlock against it; the command line loads on the main thread and
    collects."""
    import gc
    import threading

    from posviz.models.hf import loading
    collected = []
    monkeypatch.setattr(gc, "collect", lambda *args: collected.append(
        threading.current_thread().name) or 0)
    worker = threading.Thread(target=loading.free_memory, name="loader")
    worker.start()
    worker.join()
    assert collected == []
    loading.free_memory()
    assert collected == [threading.main_thread().name]


def test_a_script_s_load_reads_with_the_collector_paused_and_a_thread_s_does_not(
        folder, monkeypatch):
    """On the main thread (a script's load) the weights are read with Python's cyclic
    collector off, on again after, also when the read fails; on another thread (the
    window's loader, whose collections are the GUI thread's) it is left as it is."""
    import threading

    from posviz.models.hf import loading
    seen = []
    real = loading._read

    def watched(*args, **kwargs):
        seen.append(gc.isenabled())
        return real(*args, **kwargs)
    monkeypatch.setattr(loading, "_read", watched)
    was = gc.isenabled()            # a script's collector (the suite's may be off)
    gc.enable()
    try:
        hf.load_backend(str(folder))
        assert seen == [False] and gc.isenabled()
        worker = threading.Thread(target=lambda: hf.load_backend(str(folder)))
        worker.start()
        worker.join()
        assert seen == [False, True] and gc.isenabled()
    finally:
        if not was:
            gc.disable()


def test_a_checkpoint_s_load_gives_the_heap_back_without_a_full_collection(folder,
                                                                          monkeypatch):
    """A full collection after reading a checkpoint found next to nothing and cost a
    SmolLM2 report 0.6-0.7 s: the heap is trimmed, the collector is not run (a GGUF
    file's de-quantizing and a cancelled load still collect)."""
    from posviz import boot
    from posviz.models.hf import loading
    collected, trimmed = [], []
    monkeypatch.setattr(gc, "collect", lambda *args: collected.append(args) or 0)
    monkeypatch.setattr(boot, "trim_heap", lambda *args: trimmed.append(args))
    hf.load_backend(str(folder))
    assert collected == [] and trimmed
    loading.free_memory()                       # a cancelled load's: still collected
    assert collected == [()]
