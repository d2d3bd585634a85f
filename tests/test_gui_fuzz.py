"""The window under a seeded storm of user actions: never a traceback, never out of step.

Text edits (good, empty, too long, cut to fit), drags on the strip, toolbar reorders and
swaps, built-in model options and positions through the model panel (invalid ones too),
layer, head, mosaic, range and tab picks, a few exports, undo and redo. After every
action nothing may have raised; every few actions the window is let settle and must show
the newest evaluation of the session's own state, and the model panel the model that
runs (or an invalid edit, told at a field).
"""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6.QtCore import QPoint, Qt  # noqa: E402
from PySide6.QtTest import QTest  # noqa: E402

from posviz.document.spec import ModelSpec  # noqa: E402
from posviz.gui.model_panel.panel import CONFIG_FIELDS  # noqa: E402
from posviz.gui.plots import mosaic_look  # noqa: E402
from posviz.models.config import ModelConfig, Positions  # noqa: E402

TIMEOUT = 30_000
ACTIONS = 1000
SETTLE_EVERY = 8
ROUND_TRIP_EVERY = 50
EXPORTS = 3
MAX_LEN = 14                  # learned positions of the model the storm starts with
TEXTS = ("the cat sat on the mat",
         "positions break the symmetry",
         "a b",
         "one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
         "fifteen sixteen",                         # longer than the learned positions
         "attention , is it all we need ?",
         "",                                        # no words: told inline
         "   ...   ",
         "x")
# built-in options the storm picks from: small models (fast), and invalid combinations
# (3 heads do not divide 32; RoPE needs an even head width: 24 / 8 = 3)
CHOICES = {"layers": (1, 2, 3), "heads": (1, 2, 3, 4, 8), "d_model": (16, 24, 32),
           "d_ff": (0, 32), "pe_scale": (0.0, 0.5, 1.0, 2.0), "seed": (0, 1, 7)}


def is_settled(w) -> bool:
    c, s = w.controller, w.session
    shown = c.last_shown
    if c.loading or shown is None or not c.generation_painted():
        return False
    ev = shown.evaluation
    return (ev.seq == s.seq and np.array_equal(ev.order, s.order)
            and ev.positions == s.positions and ev.order.shape == s.order.shape)


def check_settled(w) -> None:
    """The window shows the session: the newest evaluation in the plots, the running
    model in the panel, the current order in the strip."""
    c, s, panel = w.controller, w.session, w.model_panel
    shown = c.last_shown
    assert shown.evaluation.order.tolist() == s.order.tolist()
    assert shown.evaluation.seq == s.seq and shown.evaluation.positions == s.positions
    assert w.plots.provenance()["order"] == ",".join(map(str, s.order))   # drawn
    assert shown.views.mosaic.look == mosaic_look(s.selection)     # in the look chosen
    assert w.strip.tokens == list(s.tokens) and w.strip.order == s.order.tolist()
    assert s.spec.is_builtin
    config = panel.config()
    if config != s.spec.config:          # an invalid edit, told at a field
        assert config.problems(), (config, s.spec.config)
        assert any(panel.error_text(name) for name in CONFIG_FIELDS)
    positions = panel.positions()
    if positions != s.positions:         # an offset the model cannot take, told
        assert panel.error_text("offset")
    assert w.plots.selection() == s.selection.clamped(shown.evaluation.reference.n_layers,
                                                      shown.evaluation.reference.n_heads)


def document(s) -> tuple:
    return s.text, s.seq, s.order.tolist(), s.positions


def round_trip(w) -> None:
    """Undo every step, then redo them all: the document comes back, each step applied."""
    stack, s = w.undo_stack, w.session
    now, done = document(s), stack.index()
    while stack.canUndo():
        w.undo_action.trigger()
    while stack.canRedo():
        w.redo_action.trigger()
    if done == stack.count():         # (steps undone by hand before are redone too)
        assert document(s) == now
    while stack.index() > done:       # back to where the storm was
        w.undo_action.trigger()
    assert document(s) == now


def drag(strip, src: int, dst: int, steps: int = 4) -> None:
    """Press on chip src, move in steps just past the middle of chip dst, release."""
    start = strip.chip_rect(src).center().toPoint()
    end = strip.chip_rect(dst).center().toPoint() + QPoint(3 if dst > src else -3, 0)
    QTest.mousePress(strip, Qt.LeftButton, Qt.NoModifier, start)
    for k in range(1, steps + 1):
        QTest.mouseMove(strip, start + (end - start) * (k / steps))
    QTest.mouseRelease(strip, Qt.LeftButton, Qt.NoModifier, end)


class Storm:
    def __init__(self, w, rng, folder):
        self.w, self.rng, self.folder = w, rng, folder
        self.exports = 0
        self.held = False          # a drag under way: the mouse is still pressed
        self.done: dict[str, int] = {}

    def pick(self, values):
        return values[self.rng.integers(len(values))]

    def act(self) -> str:
        kinds = ["text", "drag", "drag", "reorder", "model", "positions", "view", "undo",
                 "undo", "redo"]
        if self.exports < EXPORTS and self.rng.random() < 0.01 and not self.held:
            kinds = ["export"]
        kind = self.pick(kinds)
        if self.rng.random() < 0.04 or (self.held and kind == "drag"):
            kind = "hold"          # the mouse is pressed, moved, released later
        getattr(self, kind)()
        self.done[kind] = self.done.get(kind, 0) + 1
        return kind

    def text(self) -> None:
        w = self.w
        w.text_edit.setText(self.pick(TEXTS))
        if self.rng.random() < 0.5:
            w.apply_text()
        if w.truncate_button.isVisible() and self.rng.random() < 0.5:
            w.truncate_button.click()

    def hold(self) -> None:
        """Press on a chip and move it, or move the chip held, or let it go; other
        actions (typing, a model that arrives, a toolbar key) come in between."""
        strip, n = self.w.strip, len(self.w.strip.order)
        target = strip.chip_rect(int(self.rng.integers(n))).center().toPoint()
        if not self.held:
            QTest.mousePress(strip, Qt.LeftButton, Qt.NoModifier,
                             strip.chip_rect(int(self.rng.integers(n))).center().toPoint())
            self.held = True
        elif self.rng.random() < 0.4:
            QTest.mouseRelease(strip, Qt.LeftButton, Qt.NoModifier, target)
            self.held = False
            return
        if self.rng.random() < 0.1:
            QTest.keyClick(strip, Qt.Key_Escape)
        QTest.mouseMove(strip, target)

    def drag(self) -> None:
        n = len(self.w.strip.order)
        drag(self.w.strip, int(self.rng.integers(n)), int(self.rng.integers(n)))

    def reorder(self) -> None:
        w = self.w
        if self.rng.random() < 0.3:
            n = len(w.strip.order)
            w.strip.select_slots([int(self.rng.integers(n)), int(self.rng.integers(n))])
        action = self.pick([w.shuffle_action, w.reverse_action, w.rotate_action,
                            w.reset_action, w.swap_action, w.left_action, w.right_action])
        action.trigger()

    def model(self) -> None:
        panel = self.w.model_panel
        name = self.pick(("layers", "heads", "d_model", "d_ff", "pe", "pe_scale", "mask",
                          "residual", "norm", "seed", "dtype", "pe", "heads"))
        field = panel.field(name)
        if name == "pe" and self.rng.random() < 0.6:    # mostly learned: a bounded model
            field.setCurrentIndex(field.findData("learned"))
        elif name in CHOICES:
            field.setValue(self.pick(CHOICES[name]))
        elif name == "residual":
            field.setChecked(not field.isChecked())
        else:
            field.setCurrentIndex(int(self.rng.integers(field.count())))

    def positions(self) -> None:
        panel = self.w.model_panel
        if self.rng.random() < 0.2:
            mode = panel.field("mode")
            mode.setCurrentIndex(1 - mode.currentIndex())
        else:
            panel.field("offset").setValue(int(self.rng.integers(0, 12)))

    def view(self) -> None:
        plots = self.w.plots
        box = self.pick([plots.layer_box, plots.head_box, plots.mosaic_box, plots.range_box,
                         plots.tabs])
        if box in (plots.layer_box, plots.head_box):
            box.setValue(int(self.rng.integers(box.minimum(), box.maximum() + 1)))
        else:
            box.setCurrentIndex(int(self.rng.integers(box.count())))

    def undo(self) -> None:
        self.w.undo_action.trigger()

    def redo(self) -> None:
        self.w.redo_action.trigger()

    def export(self) -> None:
        self.exports += 1
        folder = self.folder / f"export-{self.exports}"
        formats = [self.pick(["png", "svg"])]
        written = self.w.export_to(str(folder), formats, self.pick([None, 480]),
                                   csv=bool(self.rng.integers(2)))
        assert written and all(p.exists() and p.stat().st_size > 0 for p in written)


@pytest.mark.parametrize("seed", [2, 4])
def test_a_storm_of_actions_never_raises_and_the_window_keeps_up(qtbot, window, tmp_path,
                                                                  seed):
    with qtbot.captureExceptions() as tracebacks:    # raised in a Qt slot or override
        storm(qtbot, window, tmp_path, seed, tracebacks)


def storm(qtbot, window, tmp_path, seed, tracebacks):
    w, c = window, window.controller
    with qtbot.waitSignal(c.modelLoaded, timeout=TIMEOUT):       # small, learned positions
        c.load(ModelSpec.builtin(ModelConfig(layers=2, heads=2, d_model=16, pe="learned",
                                             max_len=MAX_LEN)))
    actions = Storm(w, np.random.default_rng(seed), tmp_path)
    for number in range(ACTIONS):
        kind = actions.act()
        assert tracebacks == [], f"action {number} ({kind})"
        s = w.session
        assert len(s.order) == len(s.seq) and (s.room() is None or len(s.seq) <= s.room())
        if number % SETTLE_EVERY == SETTLE_EVERY - 1 or kind == "export":
            qtbot.waitUntil(lambda: is_settled(w), timeout=TIMEOUT)
            assert tracebacks == [], f"action {number} ({kind})"
            check_settled(w)
        if number % ROUND_TRIP_EVERY == ROUND_TRIP_EVERY - 1 and not actions.held:
            round_trip(w)
            assert tracebacks == [], f"action {number}: undo all, redo all"
    assert actions.exports >= 1 and set(actions.done) >= {"text", "drag", "reorder", "model",
                                                      "positions", "view", "undo", "redo"}


def test_undo_after_a_text_edit_and_a_higher_offset_stays_in_step(qtbot, window):
    """Edit the text, raise the offset (the old text would not fit any more), undo all,
    redo all: each step applies, in the window's own undo stack."""
    w, c = window, window.controller
    with qtbot.waitSignal(c.modelLoaded, timeout=TIMEOUT):
        c.load(ModelSpec.builtin(ModelConfig(pe="learned", max_len=12)))
    s = c.session
    drag(w.strip, 0, 3)
    dragged = s.order.tolist()
    w.text_edit.setText("a b c")
    w.apply_text()
    w.model_panel.field("offset").setValue(6)     # 10 tokens from 6 would need 16
    assert s.positions.offset == 6 and w.undo_stack.count() == 3
    w.undo_action.trigger()
    assert s.positions == Positions() and w.model_panel.positions() == Positions()
    w.undo_action.trigger()
    assert len(s.seq) == 10 and s.order.tolist() == dragged
    w.undo_action.trigger()
    for _ in range(3):
        w.redo_action.trigger()
    assert s.tokens == ("a", "b", "c") and s.positions.offset == 6
    assert w.undo_stack.index() == 3
    qtbot.waitUntil(lambda: is_settled(w), timeout=TIMEOUT)
    check_settled(w)


def test_edits_during_a_drag_become_steps_of_their_own(qtbot, window):
    """A toolbar reorder or a new offset while the mouse still holds a chip: the drag so
    far, the edit and the rest of the drag are three steps, undone in step; undo waits
    until the chip is let go, and a drag that ends where it began leaves undo as it was."""
    w, s, strip = window, window.session, window.strip
    start = s.order.tolist()
    point = lambda slot: strip.chip_rect(slot).center().toPoint()   # noqa: E731
    QTest.mousePress(strip, Qt.LeftButton, Qt.NoModifier, point(0))
    QTest.mouseMove(strip, point(3) + QPoint(3, 0))
    dragged = s.order.tolist()
    assert dragged != start and not w.undo_action.isEnabled()
    w.undo_action.trigger()                              # waits for the drop
    assert s.order.tolist() == dragged
    w.reset_action.trigger()                             # the drag so far, then the reset
    assert w.undo_stack.count() == 2 and not w.undo_action.isEnabled()
    w.model_panel.field("offset").setValue(2)
    assert w.undo_stack.count() == 3
    QTest.mouseMove(strip, point(5) + QPoint(3, 0))
    QTest.mouseRelease(strip, Qt.LeftButton, Qt.NoModifier, point(5) + QPoint(3, 0))
    end = s.order.tolist()
    assert w.undo_stack.count() == 4 and w.undo_action.isEnabled()
    w.undo_action.trigger()
    assert s.order.tolist() == list(range(len(start))) and s.positions.offset == 2
    w.undo_action.trigger()
    assert s.positions.offset == 0
    w.undo_action.trigger()
    assert s.order.tolist() == dragged
    w.undo_action.trigger()
    assert s.order.tolist() == start
    for _ in range(4):
        w.redo_action.trigger()
    assert s.order.tolist() == end and s.positions.offset == 2
    # a drag back to where it began: no step, and undo is offered again on release
    QTest.mousePress(strip, Qt.LeftButton, Qt.NoModifier, point(0))
    QTest.mouseMove(strip, point(2) + QPoint(3, 0))
    QTest.mouseMove(strip, point(0) - QPoint(3, 0))
    QTest.mouseRelease(strip, Qt.LeftButton, Qt.NoModifier, point(0) - QPoint(3, 0))
    assert s.order.tolist() == end and w.undo_stack.count() == 4
    assert w.undo_action.isEnabled()
    qtbot.waitUntil(lambda: is_settled(w), timeout=TIMEOUT)
    check_settled(w)
