"""The load bar of a GGUF file's first load, its conversion, fed the steps SmolLM2's
first load tells in the window: it only moves forward (each counted step filled it
0-100 % on its own: 80 % -> 30 % -> 100 % -> 5 %), and its silent steps tell the
conversion's time left."""
from __future__ import annotations

import pytest

from posviz.gui.model_panel import load_progress
from posviz.gui.model_panel.load_progress import LoadProgress
from posviz.models.hf.converted import SAVING
from posviz.models.hf.workarounds import BUILDING, MATCHING, READING, READING_AGAIN
from posviz.models.hf.loading import IMPORTING


def first_load():
    """SmolLM2's first load as the panel is told it: (step, done, total) or (step,)."""
    yield ("reading config",)
    yield ("converting SmolLM2-135M-Instruct.Q4_1.gguf once: de-quantizing it, about "
           "20 s-2 min on 2 cores (later loads read the copy)",)
    yield (READING,)
    yield (f"{READING} (3 s)",)
    yield (BUILDING,)
    yield (IMPORTING,)
    yield ("de-quantizing weights",)
    for seconds in (3, 7, 11, 14):
        yield (f"de-quantizing weights ({seconds} s)",)
    yield (READING_AGAIN,)
    for seconds in (11, 26):
        yield (f"{READING_AGAIN} ({seconds} s)",)
    for done in (1, 110, 207, 304, 397):
        yield (MATCHING, done, 397)
    for done in (1, 22, 124, 270, 272):
        yield ("de-quantizing weights", done, 272)
    for done in (1, 151, 538):
        yield (SAVING, done, 538)
    yield ("loading tokenizer",)
    for done in (1, 12, 200, 272):
        yield ("loading weights", done, 272)
    yield ("ready",)


@pytest.fixture
def bar(qtbot, monkeypatch, tmp_path):
    monkeypatch.setenv("POSVIZ_STAGE_TIMES", str(tmp_path / "stage-times.json"))
    now = [100.0]
    monkeypatch.setattr(load_progress, "clock", lambda: now[0])
    panel = LoadProgress()
    qtbot.addWidget(panel)
    panel.started("SmolLM2")
    return panel, now


def test_a_conversion_s_bar_only_moves_forward(bar):
    panel, now = bar
    shares = []
    for told in first_load():
        now[0] += 1.0
        panel.count(*told) if len(told) == 3 else panel.step(*told)
        assert panel.busy.maximum(), told               # never busy: where it has got
        shares.append(panel.busy.value() / panel.busy.maximum())
        if told[0] == "loading weights":                  # the copy: full only when ready
            assert shares[-1] < 1.0, told
    assert shares == sorted(shares), shares
    assert shares[-1] == 1.0 and len(set(shares)) > 5, shares   # it moved, and ended full


def test_a_conversion_s_silent_steps_tell_its_time_left(bar):
    panel, now = bar
    for told in first_load():
        now[0] += 1.0
        panel.step(*told)
        if told[0] == "de-quantizing weights (7 s)":
            break
    assert "7 s so far, about" in panel.status.text(), panel.status.text()
    assert "left of the conversion" in panel.status.text(), panel.status.text()


def test_a_conversion_s_steps_never_count_back(bar):
    """The conversion reads the file's header and weights (load step 3) before the copy's
    tokenizer (step 2): its own steps say no load step, so the steps told only go up."""
    import re
    panel, now = bar
    numbers = []
    for told in first_load():
        now[0] += 1.0
        panel.count(*told) if len(told) == 3 else panel.step(*told)
        numbers += [int(k) for k in re.findall(r"step (\d) of 4", panel.status.text())]
    assert numbers == sorted(numbers) and numbers[-1] == 4, numbers
