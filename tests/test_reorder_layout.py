"""What a reorder costs the window besides its computation: the strip is painted before
the model starts (painted while it computes, it took the cores torch runs on), and a
figure's text that does not change asks for no new layout (which re-lays every panel
out and repaints it)."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QEvent, QObject  # noqa: E402
from PySide6.QtWidgets import QApplication, QVBoxLayout, QWidget  # noqa: E402

from posviz.gui.plots.one_line import OneLineLabel  # noqa: E402


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


def test_the_strip_shows_a_new_order_before_the_model_computes_it(window, qtbot,
                                                                   monkeypatch):
    strip, controller, session = window.strip, window.controller, window.session
    painted, at_submit = [], []

    class Paints(QObject):
        def eventFilter(self, obj, event):
            if event.type() == QEvent.Paint:
                painted.append(list(strip.order))
            return False
    paints = Paints()
    strip.installEventFilter(paints)
    submit = controller._submit
    monkeypatch.setattr(controller, "_submit",
                        lambda job: (at_submit.append(list(painted)), submit(job)))
    order = session.order.copy()
    order[[1, 2]] = order[[2, 1]]
    with qtbot.waitSignal(controller.evaluated, timeout=30_000):
        session.set_order(order)
        assert at_submit == [] and painted == [order.tolist()]   # painted, not yet asked
    assert at_submit == [[order.tolist()]]


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
