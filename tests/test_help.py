"""Help: the shortcut list read from the actions, About's versions, the guide, copying a
plot, and the desktop entry installed for the current user."""
from __future__ import annotations

import sys

import pytest
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QApplication

from posviz import desktop
from posviz.gui.help import about_text, action_shortcuts, guide, versions

# Collect closed windows between tests, never beside a worker (see conftest).
pytestmark = pytest.mark.usefixtures("collect_between_tests")


def test_the_shortcut_list_holds_every_action_with_a_shortcut(qtbot, window):
    listed = action_shortcuts(window)
    shown = {keys for _, keys in listed}
    with_keys = [a for a in window.findChildren(QAction)
                 if any(not k.isEmpty() for k in a.shortcuts())]
    assert len(with_keys) >= 15
    for action in with_keys:
        keys = ", ".join(k.toString(QKeySequence.NativeText) for k in action.shortcuts()
                         if not k.isEmpty())
        assert keys in shown, action.text()
    names = {name for name, _ in listed}
    assert {"New", "Open", "Save", "Save As", "Copy plot", "Scenarios", "posviz guide",
            "Keyboard shortcuts"} <= names
    dialog = window.help.show_shortcuts()
    assert dialog.table.rowCount() == len(listed)
    dialog.close()


def test_standard_shortcuts(window):
    assert window.open_action.shortcut() == QKeySequence(QKeySequence.Open)
    assert window.save_action.shortcut() == QKeySequence("Ctrl+S")
    assert window.guide_action.shortcut() == QKeySequence("F1")


def test_about_names_the_versions():
    import torch
    from PySide6.QtCore import qVersion
    found = versions()
    assert found["torch"] == torch.__version__ and found["Qt"] == qVersion()
    assert "transformers" in found
    text = about_text()
    assert all(value in text for value in found.values())


def test_the_guide_gives_each_metric_its_formula(window):
    from posviz.gui.plots.figures import FIGURE_TYPES
    text = guide()
    for words in ("hidden equivariance", "‖H′ − H[order]‖ / ‖H‖, Frobenius norms", "attention equivariance",
                  "R·A·Rᵀ", "noise floor", "sin(p / 10000", "KL(original || reordered)"):
        assert words in text
    for figure in FIGURE_TYPES.values():            # each figure, as it describes itself
        assert figure.guide and f"**{figure.title}**: {figure.guide}" in text
        assert f"### {figure.tab.title} tab" in text
    dialog = window.help.show_guide()
    assert dialog.isVisible()
    dialog.close()


def test_copy_plot_puts_the_figure_on_the_clipboard(qtbot, window):
    QApplication.clipboard().clear()
    assert window.plots.copy_plot()
    image = QApplication.clipboard().image()
    assert not image.isNull() and image.width() > 100
    figure = next(iter(window.plots.current_figures().values()))
    from posviz.gui.plots.exporting import copy_action
    action = copy_action(figure)                     # in each figure's context menu
    QApplication.clipboard().clear()
    action.trigger()
    assert QApplication.clipboard().image().size() == figure.render_image().size()
    assert "Copied" in window.state_label.text()


def test_install_and_uninstall_the_desktop_entry(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert desktop.main("install") == 0
    files = desktop.desktop_files(tmp_path)
    assert all(path.is_file() for path in files.values())
    entry = files["entry"].read_text()
    assert "MimeType=application/x-posviz-session;" in entry and "%F" in entry
    assert "Exec=posviz" not in entry                # this installation's own launcher
    assert '<glob pattern="*.posviz"/>' in files["mime"].read_text()
    assert desktop.main("uninstall") == 0
    assert not any(path.exists() for path in files.values())
    assert len(capsys.readouterr().out.splitlines()) == 2 * len(files)


def test_a_session_file_on_the_command_line_opens_the_window(monkeypatch):
    import posviz.__main__ as entry
    import posviz.gui.app as app
    seen = []
    monkeypatch.setattr(app, "main", lambda argv: seen.append(argv) or 0)
    assert entry.main(["lecture.posviz"]) == 0
    assert seen == [["lecture.posviz"]]
    assert app.parse_args(["lecture.posviz"])[0].file == "lecture.posviz"
    assert sys.modules["posviz.gui.app"] is app


def test_the_guide_says_where_zeros_are_drawn_and_covers_the_experiments_tab():
    text = guide()
    assert "drawn at the bottom, below" not in text
    assert "drawn on the row marked 0" in text
    section = text[text.index("### Experiments tab"):]
    for words in ("**Sweep**", "**Swap map**", "**Position probe**", "**Paper check**",
                  "**Compare encodings**", "identical tokens are outlined, grey",
                  "carried word by word", "equal to 0.1%",
                  "10th to\n  90th percentile"):
        assert words in section, words


def test_the_guide_takes_the_keyboard_and_closes_with_escape(qtbot, window):
    """F1 opens the guide as the active window, so Esc (sent where the keyboard is)
    closes it, as it closes any dialog; F1 brings it back, active again."""
    from PySide6.QtCore import Qt
    window.activateWindow()
    for _ in range(2):
        window.guide_action.trigger()
        dialog = window.help.show_guide()
        qtbot.waitUntil(lambda: QApplication.activeWindow() is dialog, timeout=2000)
        qtbot.keyClick(QApplication.focusWidget() or QApplication.activeWindow(),
                       Qt.Key.Key_Escape)
        qtbot.waitUntil(lambda: not dialog.isVisible(), timeout=2000)


@pytest.mark.xvfb
def test_the_guide_closes_with_escape_on_an_x_server():
    """Offscreen Qt activates every window it shows; an X server activates only what
    asks: the test above, run on the xcb platform."""
    import os
    import subprocess

    from conftest import xvfb
    test = f"{__file__}::test_the_guide_takes_the_keyboard_and_closes_with_escape"
    with xvfb("1440x900") as display:
        run = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xvfb",
             test],
            env=dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb"),
            capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout[-2000:]


def test_the_guide_s_causal_leak_holds_as_it_says_with_and_without_positions():
    """The last token kept in place under a causal mask: unchanged after layer 1 only
    without positions (the guide said so of every causal model; with positions the
    final slot changes at layer 1 already)."""
    import posviz
    text = " ".join(guide().split())
    assert ("With no positional encoding and the last token kept in place, a causal model "
            "keeps it unchanged after one layer") in text
    assert "with positions it changes from layer 1" in text
    order = [1, 2, 3, 4, 5, 0, 6, 7, 8, 9]
    for pe in ("none", "sinusoidal", "rope", "alibi"):
        report = posviz.load(pe=pe, mask="causal").compare(
            "the cat sat on the mat because it was warm", order)
        floor = report.noise_floor
        last = [row["last_token_change"] for row in report.layers]     # layer 0 = input
        if pe == "none":
            assert last[1] <= floor < last[2], last
        else:
            assert last[1] > floor, (pe, last)


def test_the_shortcut_list_holds_the_buttons_shortcuts(window):
    """Run's Ctrl+Return is a button's shortcut, not an action's: the list left it out
    although the Experiments tab tells it (a user's run)."""
    from PySide6.QtWidgets import QAbstractButton
    listed = dict((keys, name) for name, keys in action_shortcuts(window))
    buttons = [b for b in window.findChildren(QAbstractButton) if not b.shortcut().isEmpty()]
    assert buttons
    for button in buttons:
        assert button.shortcut().toString(QKeySequence.NativeText) in listed
    assert listed["Ctrl+Return"] == "Run the experiment"


FIELD_PROBE = r"""
from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QApplication, QLineEdit
app = QApplication([])
from posviz.gui.settings import make_settings
from posviz.gui.window import MainWindow
w = MainWindow(make_settings())
def taken(field, key):
    event = QKeyEvent(QEvent.Type.ShortcutOverride, key, Qt.KeyboardModifier.ControlModifier)
    QApplication.sendEvent(field, event)
    return int(event.isAccepted())
print(taken(QLineEdit(w), Qt.Key.Key_E), taken(w.text_row.edit, Qt.Key.Key_E),
      taken(w.text_row.edit, Qt.Key.Key_C), w.export_action.shortcut().toString())
"""


@pytest.mark.xvfb
def test_the_text_field_gives_the_window_s_shortcuts_way(tmp_path):
    """Ctrl+E (Export figures) did nothing while the text field had focus, as it has when
    the window opens: on X11 a field takes Ctrl+E as its end of line (a user's run). The
    field gives the window's shortcuts way; its editing keys (copy) stay its own."""
    import os
    import subprocess
    import sys

    from conftest import xvfb
    with xvfb("800x600") as display:
        env = dict(os.environ, DISPLAY=display, QT_QPA_PLATFORM="xcb",
                   POSVIZ_SETTINGS=str(tmp_path / "settings.ini"), HOME=str(tmp_path))
        told = subprocess.run([sys.executable, "-c", FIELD_PROBE], env=env, timeout=120,
                              capture_output=True, text=True)
    assert told.returncode == 0, told.stderr[-2000:]
    plain, field, copy, keys = told.stdout.split()
    assert keys == "Ctrl+E"
    assert plain == "1"          # X11's binding: a plain field takes Ctrl+E
    assert field == "0"          # ours lets the window's shortcut fire
    assert copy == "1"
