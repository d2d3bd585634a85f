"""Every experiment's stage says itself whole at 1024 × 700, in fewer words where its
words do not fit the progress line's two lines (there they were cut before how far:
"fitting the probe per layer, 5…: 13 of 25 done", "…the built-in model without…: 18 of
64 done"): no word cut, no "…" inside the stage."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from posviz.analysis.experiments.extension import METHODS  # noqa: E402
from posviz.analysis.experiments.papers import ALIBI_HEADS  # noqa: E402
from posviz.analysis.experiments.pretrained import LENT  # noqa: E402
from posviz.analysis.experiments.stage import Stage  # noqa: E402
from posviz.gui.experiments.stage_words import fewer_stage_words  # noqa: E402
from posviz.models.hf.hub import BUILDING, MATCHING, READING, READING_AGAIN, SAVING  # noqa: E402
from test_progress_line import running_at_smallest  # noqa: E402

KINDS = ("alibi", "drope", "learned", "none", "rope", "sinusoidal", "t5")
FOLDS = "fitting the probe per layer, 5 folds each"
CONVERSION = (READING, BUILDING, "importing the model's code", "de-quantizing weights",
              READING_AGAIN, MATCHING, SAVING)

# (stage's words, its number, the run's stages): each experiment's, its longest names
STAGES = [
    *((f"probe {k} of 4 ({f}, {m}): {what}", 2 * k, 8) for k, (f, m) in enumerate(
        [(f, m) for f in ("quadratic", "linear") for m in ("causal", "bidirectional")], 1)
      for what in ("running the texts", FOLDS)),
    *((f"probing {name} ({k} of 8, {f}): {what}", 16, 16)
      for k, name in ((7, "sinusoidal"), (8, "none-500 (control)")) for f in ("linear", "mlp")
      for what in ("running the texts", FOLDS)),
    *((f"shifting every position id of the trained {kind} checkpoint, 64 texts "
       f"(model 3 of 5)", 3, 5) for kind in ("sinusoidal", "learned")),
    *((f"loading smollm2: {step}, 120 of 272, about 40 s left of the conversion "
       f"(model 5 of 5)", 5, 5) for step in CONVERSION),
    (f"shifting every position id of smollm2{LENT}, 64 texts (model 5 of 5)", 5, 5),
    *((f"held-out perplexity of the {kind} checkpoint at 128, 256 and 512 tokens "
       f"(checkpoint 2 of 3)", 2, 3) for kind in ("sinusoidal", "alibi")),
    *((f"{method.title}: 4 lengths", 5, len(METHODS)) for method in METHODS),
    ("running 64 random texts of 32 tokens through the built-in model without positions",
     1, 1),
    (f"reading the slopes of {', '.join(map(str, ALIBI_HEADS))} heads from the built-in "
     "model's scores, with ALiBi and without", 1, 1),
    ("shifting every position id by 7: the built-in model with sinusoidal, learned, rope "
     "positions", 1, 1),
    ("rotating an aligned pair and 256 Gaussian pairs over 1024 distances", 1, 1),
    *((f"checkpoint 7 of 7, {kind}: 64 windows", 7, 7) for kind in KINDS),
    ("model 6 of 6 (sinusoidal)", 6, 6),
]




def words(line: str) -> list[str]:
    """Its words, without the joiners between what runs and how far."""
    return [word.strip(":;,") for word in line.split()]


@pytest.mark.parametrize("words_, number, stages", STAGES)
def test_every_stage_is_whole_at_the_smallest_window(qtbot, window, words_, number, stages):
    tab, clock = running_at_smallest(window)        # the smallest: the model dock too
    own = "of the conversion" in words_          # its own time left, its own counts
    for k in range(1, number + 1):                   # the stages before timed: time left
        tab._stage_started(Stage(words_, k, stages, [1.0] * stages, own_left=own))
        clock.t += 30
        if not own:
            tab._progressed(13, 25)
    if not own:
        tab._progressed(18, 64)
    from PySide6 import QtWidgets
    QtWidgets.QApplication.processEvents()
    shown, text = tab.status.shown_lines(), tab.status.text()
    assert ("120 of 272" if own else "18 of 64 done") in text
    # one of its forms shown whole, nothing elided (a starting stage's own "…" at its
    # end is its words: "loading smollm2: …, 120 of 272 …(model 5 of 5)…")
    forms = (text, *getattr(tab.status, "shorts", ()))
    assert "…" not in "".join(shown).rstrip("…"), shown
    assert words(" ".join(shown)) in [words(form) for form in forms], (shown, text)
    tab.cancel_button.setEnabled(False)


@pytest.mark.parametrize("long", ["probing none-500 (control) (8 of 8, linear): " + FOLDS,
                                  "held-out perplexity of the sinusoidal checkpoint at 128, "
                                  "256 and 512 tokens (checkpoint 2 of 3)"])
def test_the_fewer_words_say_the_same_stage(long):
    """Each short form keeps every number and name of the stage (its counts, its model)."""
    import re
    shorts = fewer_stage_words(long)
    assert shorts and all(len(s) < len(long) for s in shorts)
    for short in shorts:
        assert re.findall(r"\d+", short) == re.findall(r"\d+", long)
        assert ("none-500" in short) == ("none-500" in long)
        assert "…" not in short
