"""Sinha 2022's load of a bundled model tells the load's steps on the experiment's
progress line: SmolLM2's first load (its conversion) said only "loading smollm2 (model
5 of 5)" for 33 s."""
from __future__ import annotations

from posviz.analysis.experiments import pretrained, trained
from posviz.errors import PosvizInputError
from posviz.models import hf


def test_sinha2022_tells_the_steps_of_its_model_loads(monkeypatch):
    def load(name, should_stop=None, progress=None, **kwargs):
        progress("converting SmolLM2.gguf once: de-quantizing it")
        progress("de-quantizing weights")
        for seconds in (1, 2, 3, 4, 5):                   # told again each second
            progress(f"de-quantizing weights ({seconds} s)")
        for done in range(1, 273):
            progress("de-quantizing weights", done, 272)
        raise PosvizInputError("not installed here")
    monkeypatch.setattr(hf, "load_backend", load)
    monkeypatch.setattr(trained, "shipped", lambda: [])
    said = []
    pretrained.sinha2022(say=said.append)
    smollm2 = [line for line in said if "smollm2" in line]
    assert "loading smollm2: de-quantizing weights, 5 s so far (model 2 of 2)" in smollm2
    assert "loading smollm2: de-quantizing weights, 136 of 272 (model 2 of 2)" in smollm2
    assert "loading smollm2: de-quantizing weights (1 s) (model 2 of 2)" not in smollm2
    assert len(smollm2) < 20, smollm2                      # each tenth, not each tensor
    assert all(line.number == 2 and line.stages == 2 for line in smollm2)  # one stage
