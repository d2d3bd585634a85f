"""SmolLM2's first load said its conversion's time twice in one paragraph ("..., about
20 s-2 min on 2 cores (later loads read the copy in seconds)… (its first load, about
20 s-2 min on 2 cores in all: ...)"), and the window's status line, at 1024 × 700, cut
it in its middle. The announcement says it once; the steps after it carry the note; the
status line drops the aside and the folder whole before cutting a word."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

LABEL = "SmolLM2-135M-Instruct Q4_1, de-quantized (bundled GGUF)"


def announcement(folder) -> tuple[str, str]:
    from posviz.models.hf import converted
    takes = converted.conversion_time(98_000_000)
    return takes, (f"{converted.CONVERTING}SmolLM2-135M-Instruct.Q4_1.gguf once: "
                   f"de-quantizing it to float32 and saving the copy in {folder}, "
                   f"{takes} (later loads read the copy in seconds)")


@pytest.mark.parametrize("tick", ["", " (3 s)"])
def test_the_conversion_s_time_is_said_once(qtbot, monkeypatch, tmp_path, tick):
    from posviz.gui.model_panel.load_progress import LoadProgress
    monkeypatch.setenv("POSVIZ_CACHE", str(tmp_path))
    takes, said = announcement(tmp_path)
    bar = LoadProgress()
    qtbot.addWidget(bar)
    bar.started(LABEL)
    bar.step(said + tick)
    text = bar.status.text()
    assert text.count(takes) == 1 and text.count("later loads") == 1, text
    bar.step("reading the GGUF file's header, vocabulary and tensor names")
    assert bar.status.text().count(takes) == 1          # the note, after it


def test_the_status_line_keeps_the_conversion_s_words_at_1024(qtbot, window, monkeypatch,
                                                               tmp_path):
    from PySide6 import QtWidgets
    monkeypatch.setenv("POSVIZ_CACHE", str(tmp_path))
    window.resize(1024, 700)
    QtWidgets.QApplication.processEvents()
    takes, said = announcement(tmp_path)
    load = window.model_panel.load
    window.status.say(f"Loading {LABEL}…")
    load.started(LABEL)
    load.step(said)
    label = window.state_label
    shown = label.shown_text()
    assert label.fontMetrics().horizontalAdvance(shown) <= label.contentsRect().width()
    assert shown.startswith(f"Loading SmolLM2-135M-Instruct Q4_1") and takes in shown, shown
    assert "converting SmolLM2-135M-Instruct.Q4_1.gguf once" in shown, shown
    assert "…" not in shown.removesuffix("…"), shown                # no word cut
    assert label.text() == bar_text(load) and label.toolTip() in ("", label.text())


def bar_text(load) -> str:
    return load.status.text()


NOTE = (" (its first load, about 20 s-2 min on 2 cores in all: de-quantized once and "
        "written into posviz's cache, read from there by later loads)")


@pytest.mark.parametrize("step", [
    "reading the GGUF file's header, vocabulary and tensor names, 1 s so far, about 15 s "
    "left of the conversion…",
    "matching the GGUF file's tensors to the model's modules, 262 of 397 modules, about "
    "4 s left of the conversion…"])
def test_a_conversion_s_steps_keep_their_words_on_the_status_line_at_1024(
        qtbot, window, step):
    """Its steps were cut in their middle there ("reading the…le's header")."""
    from PySide6 import QtWidgets
    window.resize(1024, 700)
    QtWidgets.QApplication.processEvents()
    window.status.say(f"Loading {LABEL}…")
    window.status.load_step(f"Loading {LABEL}: {step}{NOTE}")
    label = window.state_label
    shown = label.shown_text()
    assert label.fontMetrics().horizontalAdvance(shown) <= label.contentsRect().width()
    assert shown.startswith("Loading SmolLM2-135M-Instruct Q4_1") and shown.endswith(step)
