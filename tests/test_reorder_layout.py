"""What a reorder costs the window besides its computation: chips that jump are painted
before the model starts (painted while it computes, they took the cores torch runs on),
chips that slide from their steps on (nothing moved before the first), and a
figure's text that does not change asks for no new layout (which re-lays every panel
out and repaints it)."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent, QObject  # noqa: E402
from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget  # noqa: E402

from posviz.gui.plots.one_line import OneLineLabel  # noqa: E402
from posviz.gui.tokens.strip import ANIMATE_MOVED_UP_TO  # noqa: E402


class LayoutRequests(QObject):
    """Counts the LayoutRequest events that reach the widgets inside ``root``."""

    def __init__(self, root):
        super().__init__()
        self.root, self.count = root, 0

    def eventFilter(self, obj, event):
        if event.type() == QEvent.LayoutRequest and isinstance(obj, QWidget) and (
                obj is self.root or self.root.isAncestorOf(obj)):
            self.count += 1
        return False


def test_reorders_that_keep_the_notes_lay_no_figure_out_again(window, qtbot):
    session, plots = window.session, window.plots
    first, second = session.order.copy(), session.order.copy()
    second[[1, 2]] = second[[2, 1]]          # the last slot keeps its token: same notes
    notes, requests = set(), LayoutRequests(plots)
    try:
        for k, order in enumerate((second, first, second, first)):
            if k == 1:                       # the window has settled after its start
                QApplication.instance().installEventFilter(requests)
            with qtbot.waitSignal(window.controller.evaluated, timeout=30_000):
                session.set_order(order)
            qtbot.wait(50)
            notes.add(plots.current_figures()["symmetry"].note.text())
    finally:
        QApplication.instance().removeEventFilter(requests)
    assert len(notes) == 1 and notes.pop()
    assert requests.count == 0


def _paints_and_submits(window, monkeypatch):
    """What the strip painted (its order each time), and at each request to the
    controller's worker what it had painted by then."""
    strip, controller = window.strip, window.controller
    painted, at_submit = [], []

    class Paints(QObject):
        def eventFilter(self, obj, event):
            if event.type() == QEvent.Paint:
                painted.append((list(strip.order), strip.sliding()))
            return False
    window._paints = Paints()
    strip.installEventFilter(window._paints)
    submit = controller._submit
    monkeypatch.setattr(controller, "_submit",
                        lambda job: (at_submit.append(list(painted)), submit(job)))
    return painted, at_submit


def test_chips_that_jump_are_shown_before_the_model_computes_them(window, qtbot,
                                                                  monkeypatch):
    with qtbot.waitSignal(window.controller.evaluated, timeout=30_000):
        window.session.set_text(" ".join(["the cat sat on a warm mat"] * 5))
    assert len(window.session.order) > ANIMATE_MOVED_UP_TO
    painted, at_submit = _paints_and_submits(window, monkeypatch)
    order = window.session.order[::-1].copy()          # every chip moves: they jump
    with qtbot.waitSignal(window.controller.evaluated, timeout=30_000):
        window.session.set_order(order)
        assert at_submit == [] and painted == [(order.tolist(), False)]  # painted, not asked
    assert at_submit == [[(order.tolist(), False)]]


def test_chips_that_slide_ask_at_once_and_are_painted_by_their_steps(window, qtbot,
                                                                     monkeypatch):
    # until the first step (15 ms on) they are drawn where they were: a paint before
    # the request would show nothing new
    painted, at_submit = _paints_and_submits(window, monkeypatch)
    strip, order = window.strip, window.session.order.copy()
    order[[1, 2]] = order[[2, 1]]
    with qtbot.waitSignal(window.controller.evaluated, timeout=30_000):
        window.session.set_order(order)
        assert strip.sliding() and painted == []
    assert at_submit[0] == []
    qtbot.waitUntil(lambda: not strip.sliding(), timeout=3000)
    assert (order.tolist(), True) in painted          # the steps painted the new order
    assert all(strip._shown[i] == strip.chip_rect(s).topLeft()
               for s, i in enumerate(strip.order))


def test_a_note_given_its_own_text_again_asks_for_no_layout(qtbot):
    parent = QWidget()
    qtbot.addWidget(parent)
    note = OneLineLabel()
    QVBoxLayout(parent).addWidget(note)
    note.setText("The hidden states stop being equivariant from layer 2 on.")
    parent.show()
    qtbot.waitExposed(parent)
    qtbot.wait(20)
    requests = LayoutRequests(parent)
    parent.installEventFilter(requests)
    note.setText(note.text())
    qtbot.wait(20)
    assert requests.count == 0
    note.setText("The hidden states are equivariant at every layer.")
    qtbot.wait(20)
    assert requests.count == 1               # a new text may take other lines
