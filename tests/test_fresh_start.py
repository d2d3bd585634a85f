"""A start that is not the last session's (--model, --text) takes the default position
ids and order, not the ones the last session was closed with."""
from __future__ import annotations

import pytest
from test_gui_window import settled

from posviz.gui.settings import make_settings
from posviz.gui.window import MainWindow
from posviz.models.builtin.backend import BuiltinBackend
from posviz.models.config import Positions

TIMEOUT = 30_000

pytestmark = pytest.mark.usefixtures("collect_between_tests")


def _closed_at_first_position_7(window) -> None:
    """Leave a last session (and remembered settings) whose first position is 7."""
    window.session.set_positions(Positions("token", 7))
    assert window.session.positions.offset == 7
    window.close()


def _started(qtbot, **start) -> MainWindow:
    again = MainWindow(make_settings())
    qtbot.addWidget(again)
    again.show()
    with qtbot.waitSignal(again.controller.evaluated, timeout=TIMEOUT):
        again.start(**start)
    if "model" in start:                 # it loads once the built-in model runs
        qtbot.waitUntil(lambda: not again.session.spec.is_builtin, timeout=TIMEOUT)
        settled(qtbot, again)
    return again


@pytest.mark.parametrize("start", [dict(last=False, model="stand-in"), dict(last=False)],
                         ids=["--model", "--text"])
def test_a_start_without_the_last_session_counts_positions_from_0(
        qtbot, window, monkeypatch, start):
    from posviz.models import hf
    monkeypatch.setattr(hf, "load_backend", lambda *args, **kwargs: BuiltinBackend())
    _closed_at_first_position_7(window)
    again = _started(qtbot, **start)
    assert again.session.positions == Positions()
    assert again.model_panel.positions().offset == 0
    shown = again.controller.last_shown.evaluation
    assert shown.positions.ids(shown.order)[0] == 0
    assert again.session.spec.is_builtin == ("model" not in start)


def test_the_last_session_keeps_its_first_position(qtbot, window):
    _closed_at_first_position_7(window)
    again = _started(qtbot)
    assert again.session.positions == Positions("token", 7)
    assert again.model_panel.positions().offset == 7
