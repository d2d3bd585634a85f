"""The Experiments tab's progress line keeps every word of a stage at 1024 × 700: what
runs, wider than a line, takes two lines and how far the third (a paper check's line
was cut in its middle there: "stage 4 of 8: probe 2 of 4 (quadratic, bidirectional):
fitting the probe, one …: 3 of 5 done; about 4 s left in all")."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from posviz.analysis.experiments.stage import Stage  # noqa: E402
from posviz.runtime.time_left import RunClock  # noqa: E402

HAVIV = "probe 2 of 4 (quadratic, bidirectional): fitting the probe, one layer at a time"


class FakeClock:
    def __init__(self):
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_a_paper_check_s_stage_is_whole_at_1024_pixels(qtbot, window):
    from PySide6 import QtWidgets
    window.resize(1024, 700)                         # the real window, its model dock too
    tab = window.experiments
    window.plots.tabs.setCurrentWidget(tab)
    QtWidgets.QApplication.processEvents()
    clock = FakeClock()
    tab._clock = RunClock(clock)
    tab.cancel_button.setEnabled(True)
    tab.progress.show()
    status = tab.status
    two_lines = status.height()
    for number in range(1, 5):
        tab._stage_started(Stage(HAVIV, number, 8, [1.0] * 8))
        for done in range(1, 4):
            clock.t += 1
            tab._progressed(done, 5)
    QtWidgets.QApplication.processEvents()
    shown = status.shown_lines()
    text = status.text()
    assert text.startswith("stage 4 of 8: " + HAVIV) and "3 of 5 done" in text, text
    assert status.fontMetrics().horizontalAdvance(text) > 1.5 * status.width()  # 2 lines
    assert "…" not in "".join(shown), shown
    assert " ".join(" ".join(shown).split()) == " ".join(text.split())   # every word
    assert shown[-1] == status.kept and shown[-1].startswith("3 of 5 done")
    # three lines painted, the label as tall as they are (its row grew by a line)
    assert len(shown) == 3
    qtbot.waitUntil(lambda: status.height() >= 3 * status.fontMetrics().lineSpacing())
    assert status.height() > two_lines
    tab.cancel_button.setEnabled(False)
    tab._say("done in 8.6 s")                        # back to two lines
    QtWidgets.QApplication.processEvents()
    qtbot.waitUntil(lambda: status.height() == two_lines)
