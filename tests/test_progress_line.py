"""A paper check's progress keeps every word of its stages at 1024 × 700 (a user saw it
cut in its middle there: "stage 4 of 8: probe 2 of 4 (quadratic, bidirectional): fitting
the probe, one …: 3 of 5 done; about 4 s left in all"): the probe's stages say what they
do in few words, so that they and how far fit the line's two lines whole."""
from __future__ import annotations

import pytest

pytest.importorskip("PySide6")

from posviz.analysis.experiments.stage import Stage  # noqa: E402
from posviz.runtime.time_left import RunClock  # noqa: E402


class FakeClock:
    def __init__(self):
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def running_at_smallest(window):
    """(the Experiments tab shown as a run goes, at 1024 x 700, the real window with its
    model dock; the fake clock its run reads)."""
    from PySide6 import QtWidgets

    window.resize(1024, 700)
    tab = window.experiments
    window.plots.tabs.setCurrentWidget(tab)
    QtWidgets.QApplication.processEvents()
    clock = FakeClock()
    tab._clock = RunClock(clock)
    tab.cancel_button.setEnabled(True)
    tab.progress.show()
    return tab, clock


@pytest.mark.parametrize("number", range(1, 9))
def test_a_paper_check_s_stage_is_whole_at_1024_pixels(qtbot, window, number):
    tab, clock = running_at_smallest(window)
    status = tab.status
    runs = [(f, m) for f in ("quadratic", "linear") for m in ("causal", "bidirectional")]
    for k in range(1, number + 1):
        features, mask = runs[(k - 1) // 2]
        what = "running the texts" if k % 2 else "fitting the probe per layer"
        words = f"probe {(k + 1) // 2} of 4 ({features}, {mask}): {what}"
        tab._stage_started(Stage(words, k, 8, [1.0] * 8))
        clock.t += 1
        tab._progressed(3 if k % 2 == 0 else 49, 5 if k % 2 == 0 else 120)
    from PySide6 import QtWidgets
    QtWidgets.QApplication.processEvents()
    shown, text = status.shown_lines(), status.text()
    assert text.startswith(f"stage {number} of 8: probe") and " left" in text, text
    assert "…" not in "".join(shown), shown
    def words(line):            # (the ": " between what runs and how far may go)
        return [word.strip(":;,") for word in line.split()]
    assert words(" ".join(shown)) == words(text)                         # every word
    tab.cancel_button.setEnabled(False)


def test_how_far_keeps_the_time_left_in_all_at_1024_pixels(qtbot, window):
    """At 1024 pixels a late step's line lost its end: "14 of 25 done, this step is
    taking longer than the…". How far and the time left in all stay whole; the words
    between are cut."""
    from PySide6 import QtWidgets

    window.resize(1024, 700)
    tab = window.experiments
    window.plots.tabs.setCurrentWidget(tab)
    tab.progress.show()
    QtWidgets.QApplication.processEvents()
    in_all = "; about 14-17 min left in all (an estimate)"
    how_far = f"14 of 25 done, this step is taking longer than the others{in_all}"
    tab.status.say(f"stage 2 of 5: fitting the probe per layer: {how_far}", kept=how_far)
    QtWidgets.QApplication.processEvents()
    shown = tab.status.shown_lines()
    assert tab.status.fontMetrics().horizontalAdvance(how_far) > tab.status.width()
    assert shown[1].startswith("14 of 25 done") and shown[1].endswith(in_all), shown
    assert "…" in shown[1], shown


CHECKPOINT = ("held-out perplexity of the sinusoidal checkpoint at 128, 256 and 512 tokens "
              "(checkpoint 2 of 6)")
HOW_FAR = ": 52 of 56 done; about 23 s left in all"


def test_a_stage_s_own_count_is_never_cut_at_1024_pixels(qtbot, window):
    """At 1024 pixels Press's progress read "... 512 tokens (checkpoint 2…: 52 of 56
    done": the stage's count is how far too. It is kept whole before the run's count,
    the words before it cut only after a whole word."""
    from PySide6 import QtWidgets

    window.resize(1024, 700)
    tab = window.experiments
    window.plots.tabs.setCurrentWidget(tab)
    tab.progress.show()
    QtWidgets.QApplication.processEvents()
    tab.status.say(CHECKPOINT + HOW_FAR, kept=HOW_FAR)
    QtWidgets.QApplication.processEvents()
    assert_count_whole(tab.status)


def assert_count_whole(line) -> None:
    """``line`` (a ProgressLine saying CHECKPOINT + HOW_FAR) keeps the stage's count and
    how far whole, on two lines of its width, cut only after whole words."""
    shown = line.shown_lines()
    assert all(line.fontMetrics().horizontalAdvance(text) <= line.contentsRect().width()
               for text in shown), shown
    assert len(shown) == 2 and "(checkpoint 2 of 6)" in " ".join(shown), shown
    assert shown[1].endswith(HOW_FAR.lstrip(": ")), shown
    def words(text):            # (the ": " between what runs and how far may go)
        return [word.strip(":;,") for word in text.replace("…", " ").split()]
    whole = words(CHECKPOINT + HOW_FAR)
    assert all(word in whole for word in words(" ".join(shown))), shown     # no word cut


@pytest.mark.parametrize("width", range(400, 720, 20))
def test_a_stage_s_count_stays_whole_at_every_width(qtbot, width):
    """Where the count and how far fit a line, they are whole, at every width."""
    from posviz.gui.experiments.progress_line import ProgressLine
    line = ProgressLine()
    qtbot.addWidget(line)
    line.resize(width, 40)
    assert line.fontMetrics().horizontalAdvance("(checkpoint 2 of 6)" + HOW_FAR) < width
    line.say(CHECKPOINT + HOW_FAR, kept=HOW_FAR)
    assert_count_whole(line)


@pytest.mark.parametrize("width", range(400, 720, 20))
def test_where_the_stage_s_count_and_how_far_fill_a_line_each_keeps_one(qtbot, width):
    """Press's first checkpoint at 1024 pixels: its count, how far and an estimate in
    all are wider than a line; the count ends the first line (its words cut), how far
    and the estimate are whole on the second ("(checkpoint 1 of 6): 30…; about")."""
    from posviz.gui.experiments.progress_line import ProgressLine
    line = ProgressLine()
    qtbot.addWidget(line)
    line.resize(width, 40)
    how_far = ": 30 of 56 done; about 12-57 s left in all (an estimate)"
    text = CHECKPOINT.replace("sinusoidal", "none").replace("2 of 6", "1 of 6") + how_far
    line.say(text, kept=how_far)
    shown = line.shown_lines()
    assert all(line.fontMetrics().horizontalAdvance(part) <= width for part in shown)
    assert "(checkpoint 1 of 6)" in " ".join(shown), shown
    assert shown[1].endswith(how_far.lstrip(": ")), shown


@pytest.mark.parametrize("width", range(300, 560, 20))
def test_words_dropped_before_how_far_are_marked(qtbot, width):
    """Haviv's trained check at 1024 × 700 showed "…(1 of 7, mlp): fitting per" over "6
    of 25 done; about 14-17 min left in all (an estimate)": the words between
    ("layer, 5 folds:") dropped unmarked, read as a sentence. Every word shown is the
    text's in its order, and a line after dropped words starts with "…"."""
    from posviz.gui.experiments.progress_line import ProgressLine
    from posviz.gui.experiments.stage_words import fewer_stage_words
    line = ProgressLine()
    qtbot.addWidget(line)
    line.resize(width, 40)
    stage = ("stage 4 of 28: probing none (1 of 7, mlp): fitting the probe per layer, 5 "
             "folds each")
    how_far = ": 6 of 25 done; about 14-17 min left in all (an estimate)"
    line.say(stage + how_far, kept=how_far,
             shorts=tuple(s + how_far for s in fewer_stage_words(stage)))
    shown = line.shown_lines()
    said = [w for part in shown for w in part.replace("…", " … ").split()]
    forms = [(stage + how_far).split(), *(s.split() for s in line.shorts)]
    # the words shown, "…" for those left out, follow one form's words in order
    def follows(form):
        form = [w.strip(":;,") for w in form]
        at, marked = 0, False
        for word in (w.strip(":;,") for w in said):
            if word == "…" or not word:
                marked = True
                continue
            found = next((k for k in range(at, len(form)) if form[k] == word), None)
            if found is None or (found > at and not marked):
                return False
            at, marked = found + 1, False
        return True
    assert any(follows(form) for form in forms), shown
