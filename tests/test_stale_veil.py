"""While a slow evaluation runs, the plots say they show the previous order: dimmed, with
that order named, on every plot tab (Outputs too) but Experiments, until the result."""
import threading
import time

import pytest

pytest.importorskip("PySide6")

from posviz.gui.stale import STALE_AFTER_MS  # noqa: E402
from posviz.runtime.jobs import EvaluationRunner  # noqa: E402


@pytest.fixture
def slow(monkeypatch):
    """Evaluations wait for ``release`` (a slow model), at most 20 s."""
    release = threading.Event()
    evaluate = EvaluationRunner.evaluate

    def slowly(self, job, should_stop=None):
        release.wait(20)
        return evaluate(self, job, should_stop)

    monkeypatch.setattr(EvaluationRunner, "evaluate", slowly)
    yield release
    release.set()


@pytest.mark.asynchronous
def test_plots_are_marked_stale_until_the_new_order_arrives(qtbot, window, slow):
    veil, tabs = window.veil, window.plots.tabs
    before = " ".join(window.session.current_tokens)
    assert not veil.isVisible()
    outputs = next(i for i in range(tabs.count()) if tabs.tabText(i) == "Outputs")
    tabs.setCurrentIndex(outputs)
    window.session.reverse()
    qtbot.wait(STALE_AFTER_MS + 300)
    assert veil.isVisible() and before in veil.text and "previous" in veil.text
    assert veil.geometry().height() > tabs.height() // 2      # over the page, dimmed
    tabs.setCurrentWidget(window.experiments)                 # its own results: not veiled
    assert not veil.isVisible()
    tabs.setCurrentIndex(outputs)
    assert veil.isVisible()
    after = " ".join(window.session.current_tokens)
    with qtbot.waitSignal(window.controller.evaluated, timeout=30_000):
        slow.set()
    assert not veil.isVisible() and veil.shown_order == after


def test_a_quick_evaluation_is_never_veiled(qtbot, window):
    seen = []
    window.veil.timer.timeout.connect(lambda: seen.append(time.monotonic()))
    with qtbot.waitSignal(window.controller.evaluated, timeout=30_000):
        window.session.reverse()
    qtbot.wait(STALE_AFTER_MS + 100)
    assert not window.veil.isVisible() and not seen


@pytest.mark.asynchronous
def test_the_veil_s_label_hides_no_figure_title(qtbot, window, slow):
    """The label naming the order shown sits under the titles, on every plot tab."""
    veil, tabs = window.veil, window.plots.tabs
    window.session.reverse()
    qtbot.wait(STALE_AFTER_MS + 300)
    assert veil.isVisible()
    for index in range(tabs.count()):
        tabs.setCurrentIndex(index)
        if tabs.currentWidget() is window.experiments:
            continue
        qtbot.wait(50)
        titles = veil.titles()
        assert titles                                   # the figures' titles are seen
        box = veil.label_box()
        assert not [title for title in titles if title.intersects(box)], (box, titles)
        assert box.bottom() < veil.height()
    with qtbot.waitSignal(window.controller.evaluated, timeout=30_000):
        slow.set()


@pytest.mark.asynchronous
def test_the_veil_names_every_change_since_the_plots_were_computed(qtbot, window, slow):
    """The text and then the encoding changed while a slow evaluation ran: the label
    said "Computing the new order", as for a drag."""
    from posviz.document.spec import ModelSpec
    veil = window.veil
    shown = " ".join(window.session.current_tokens)
    window.text_edit.setText("a dog ran in the park")
    window.apply_text()
    qtbot.waitUntil(veil.isVisible, timeout=STALE_AFTER_MS + 2000)
    assert veil.text.startswith("Computing the new text… "), veil.text
    assert veil.text.endswith(f"the previous one: {shown}"), veil.text
    config = window.session.spec.config.replace(pe="rope")
    with qtbot.waitSignal(window.controller.modelLoaded, timeout=30_000):
        window.controller.load(ModelSpec.builtin(config))
    qtbot.waitUntil(lambda: "encoding" in veil.text, timeout=STALE_AFTER_MS + 2000)
    assert veil.isVisible() and "encoding and text" in veil.text, veil.text
    assert shown in veil.text and "previous ones" in veil.text
    with qtbot.waitSignal(window.controller.evaluated, timeout=30_000):
        slow.set()
    assert not veil.isVisible()


@pytest.mark.asynchronous
def test_the_veil_says_which_layer_the_new_order_s_forward_has_reached(
        qtbot, window, slow, monkeypatch):
    """SmolLM2's reorder, 13 s in a user's run: the veil over the plots said "Computing the
    new order…" all along; the layers (models.reached) were told only on the status
    line at the window's foot. A stand-in forward enters its blocks after the ask."""
    from posviz.gui import status
    from posviz.models import reached
    monkeypatch.setattr(status, "SAY_SECONDS_AFTER", 0)
    veil = window.veil
    window.session.reverse()
    qtbot.waitUntil(veil.isVisible, timeout=5_000)
    assert veil.text.startswith("Computing the new order… ")
    reached.reach(0, 30)                          # the new order's forward, as it goes
    reached.reach(11, 30)
    window.status._tick()                         # each second, as its timer does
    assert veil.text.startswith("Computing the new order: layer 12 of 30"), veil.text
    assert "layer 12 of 30" in window.state_label.text()
    assert "these plots still show the previous one: " in veil.text
    with qtbot.waitSignal(window.controller.evaluated, timeout=30_000):
        slow.set()
    assert not veil.isVisible()


def test_a_long_order_is_named_by_whole_tokens_and_how_many_more():
    """A 701-token text's veil said "these plots still show the previous one: w0 w1 …
    w23 w24…", read as a note cut at 1024 × 700: whole tokens, then how many more."""
    from types import SimpleNamespace

    from posviz.gui.stale import ORDER_CHARS, order_text
    tokens = tuple(f"w{i % 50}" for i in range(701))
    order = list(range(700, -1, -1))
    shown = SimpleNamespace(evaluation=SimpleNamespace(
        seq=SimpleNamespace(tokens=tokens), order=order))
    text = order_text(shown)
    head, _, tail = text.partition(" and ")
    named = head.split()
    assert "…" not in text and named == [tokens[i] for i in order[:len(named)]]
    assert tail == f"{701 - len(named)} more tokens" and len(head) <= ORDER_CHARS
    short = SimpleNamespace(evaluation=SimpleNamespace(
        seq=SimpleNamespace(tokens=("the", "cat", "sat")), order=[2, 0, 1]))
    assert order_text(short) == "sat the cat"
