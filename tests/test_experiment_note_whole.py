"""A paper check's note is part of its figure: at 1024 × 700 all five checks' notes
ended their lines with "…" (the rest only in the tooltip). It is whole at every window
size, wrapped onto as many lines as it needs (the figure grows, its page scrolls), and
whole in the figure's exports."""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("PySide6")

from PySide6 import QtWidgets  # noqa: E402

# words as long as a paper check's own (citation, claim, test, measure)
CITATION = ("Haviv, Ram, Press, Izsak, Levy (2022). Transformer language models without "
            "positional encodings still learn positional information. Findings of EMNLP.")
REPORTS = ("Without positional encodings a causal language model still knows absolute "
           "position (a probe reads it off its hidden states); a bidirectional one does not.")
TESTS = ("A ridge probe of position, held out by text, per layer, on 120 generated texts "
         "of 12 words, the built-in model without positions, causal vs bidirectional.")
MEASURES = ("the probe's mean absolute error per layer against chance (the mean "
            "position), each mask and feature set its own curve, and the worst of them.")


def paper(name, values, weights="random"):
    return SimpleNamespace(name=name, weights=weights, holds=True, citation=CITATION,
                           reports=REPORTS, ran_on="the built-in model, untrained",
                           tests=TESTS, measures=MEASURES, values=values)


def five_checks():
    """The five paper checks the Experiments tab draws as a plot."""
    from posviz.models.encodings.alibi import alibi_slopes
    rows = [{"layer": k, "mae": 3.2 - 0.3 * k, "chance_mae": 3.1, "r2": 0.1 * k}
            for k in range(5)]
    row = {"last_layer_change": 0.2, "pooled_output_change": 0.01, "next_token_kl_mean": 0.07}
    slopes = list(alibi_slopes(8))
    return [paper("haviv2022", {"causal": rows, "bidirectional": rows,
                                "linear": {"causal": rows, "bidirectional": rows}}),
            paper("chi2023", {"variance_by_position": list(np.linspace(1, 0.1, 64))}),
            paper("alibi-slopes", {"measured": slopes, "paper": slopes}),
            paper("sinha2022", {"trained sinusoidal": row, "trained learned": row,
                                "trained rope": row, "absolute": ["trained sinusoidal",
                                                                  "trained learned"],
                                "relative": ["trained rope"]}, "trained"),
            paper("press2022", {"train_length": 128, "lengths": [128, 256, 512],
                                "tokens": 100, "unigram_perplexity": 377.0,
                                "perplexity": {"alibi": {"128": 67.7, "256": 67.1,
                                                         "512": 66.9}},
                                "refused": {}, "table_length": {}}, "trained")]


def words(text: str) -> list[str]:
    return text.replace("—", " ").split()


def assert_whole(note) -> None:
    """``note`` (a OneLineLabel) paints its whole text in lines its height holds."""
    assert not note.elided(), note.shown_lines()
    assert "…" not in note.shown_text()
    assert words(note.shown_text()) == words(note.text())
    assert note.height() >= len(note.shown_lines()) * note.fontMetrics().lineSpacing()


@pytest.mark.parametrize("check", range(5))
def test_a_paper_check_s_note_is_whole_at_1024_and_in_its_export(qtbot, window, check,
                                                                   tmp_path):
    window.resize(1024, 700)                     # the real window, its model dock too
    tab = window.experiments
    window.plots.tabs.setCurrentWidget(tab)
    QtWidgets.QApplication.processEvents()
    figure = tab.figure
    figure.show_paper(five_checks()[check])
    qtbot.wait(50)
    figure._settle()
    QtWidgets.QApplication.processEvents()
    note = figure.note
    assert len(note.shown_lines()) > 3           # more than a short window's room
    assert_whole(note)
    assert note.geometry().bottom() < figure.height()       # inside the figure: scrolled
    twin = figure.drawn_alone()                  # what an export draws
    assert_whole(twin.note)
    assert twin.note.geometry().bottom() < twin.export_size().height()
    assert figure.export(tmp_path / "figure.png").stat().st_size > 0


def test_a_folded_note_still_folds_to_one_line(qtbot, window):
    """The reader's click still folds the whole note to one line, and back."""
    window.resize(1024, 700)
    tab = window.experiments
    window.plots.tabs.setCurrentWidget(tab)
    tab.figure.show_paper(five_checks()[0])
    note = tab.figure.note
    note.set_one_line(True)
    assert note.one_line and note.elided()
    note.set_one_line(False)
    QtWidgets.QApplication.processEvents()
    assert not note.elided()
