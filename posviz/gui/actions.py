"""The window's actions, menus, toolbar and shortcuts.

Each action only calls a method of one of the window's parts (its edits, files, help
or plots); what it does to the document is there.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt
from PySide6.QtGui import QAction, QIcon, QKeySequence

from ..document.scenarios import resources_dir
from .scenarios import choose_scenario

RESOURCES = resources_dir()


def icon(name: str) -> QIcon:
    path = RESOURCES / "icons" / f"{name}.svg"
    return QIcon(str(path)) if path.exists() else QIcon()


def example_sentences() -> list[str]:
    path = RESOURCES / "sentences.txt"
    if not path.exists():
        return []
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip() and not line.startswith("#")]


def _action(window, text: str, slot, shortcut=None, tip: str = "", name: str = "") -> QAction:
    action = QAction(icon(name) if name else QIcon(), text, window)
    if shortcut:
        action.setShortcuts(shortcut if isinstance(shortcut, list) else [shortcut])
        tip = f"{tip} ({QKeySequence(action.shortcut()).toString(QKeySequence.NativeText)})"
    action.setToolTip(tip or text)
    action.setStatusTip(tip or text)
    action.triggered.connect(slot)
    return action


def build_actions(w) -> None:
    """Give window ``w`` its actions (as attributes), menus and toolbar."""
    w.undo_action = w.undo_stack.createUndoAction(w, "&Undo")
    w.undo_action.setShortcut(QKeySequence.Undo)
    w.undo_action.setIcon(icon("undo"))
    w.redo_action = w.undo_stack.createRedoAction(w, "&Redo")
    w.redo_action.setShortcuts([QKeySequence("Ctrl+Shift+Z"), QKeySequence("Ctrl+Y")])
    w.redo_action.setIcon(icon("redo"))

    def a(*args, **kwargs) -> QAction:
        return _action(w, *args, **kwargs)
    edits, files, help_ = w.edits, w.files, w.help
    w.shuffle_action = a("Shuffle", lambda: edits.reorder("Shuffle", "shuffle"),
                         QKeySequence("Ctrl+R"), "Put the movable tokens in a random order",
                         "shuffle")
    w.reverse_action = a("Reverse", lambda: edits.reorder("Reverse", "reverse"),
                         QKeySequence("Ctrl+Shift+R"), "Turn the current order of the "
                         "movable tokens around (from the original order: the sentence "
                         "backwards)", "reverse")
    w.rotate_action = a("Rotate", lambda: edits.reorder("Rotate", "rotate"),
                        QKeySequence("Ctrl+T"), "Move the last movable token to the front, "
                        "shifting the others right by one", "rotate")
    w.swap_action = a("Swap", edits.swap_selected, QKeySequence("Ctrl+Shift+X"),
                      "Swap the two selected chips (Ctrl+click to select a second)", "swap")
    w.reset_action = a("Original order", lambda: edits.reorder("Reset", "reset"),
                       QKeySequence("Ctrl+0"), "Put every token back in its original place",
                       "reset")
    w.left_action = a("Move chip left", lambda: edits.move_selected(-1),
                      QKeySequence("Alt+Left"), "Move the selected chip one slot left")
    w.right_action = a("Move chip right", lambda: edits.move_selected(1),
                       QKeySequence("Alt+Right"), "Move the selected chip one slot right")
    w.export_action = a("&Export figures…", w.export_figures, QKeySequence("Ctrl+E"),
                        "Save every plot as PNG/SVG images (and CSV numbers)", "export")
    quit_action = a("&Quit", w.close, QKeySequence.Quit,
                    "Quit posviz: a file with unsaved changes asks first; an untitled "
                    "session is kept as it is and comes back at the next start")
    quit_action.setShortcut(QKeySequence("Ctrl+Q"))
    w.new_action = a("&New", files.new_document, QKeySequence.New,
                     "Start again from the example sentence (asks about unsaved changes)")
    w.open_action = a("&Open…", lambda: files.open_file(), QKeySequence.Open,
                      "Open a .posviz session: text, order, model and view")
    w.save_action = a("&Save", files.save, QKeySequence.Save,
                      "Save the session (text, order, model, view) to its .posviz file")
    w.save_as_action = a("Save &As…", files.save_as, QKeySequence("Ctrl+Shift+S"),
                         "Save the session to a new .posviz file")
    w.copy_plot_action = a("&Copy plot", lambda: w.plots and w.plots.copy_plot(),
                           QKeySequence.Copy,
                           "Copy the plot under the mouse (or the first of the tab) to the "
                           "clipboard as an image")
    w.scenarios_action = a("&Scenarios…", lambda: choose_scenario(w, files, w.status),
                           QKeySequence("Ctrl+Shift+O"),
                           "Guided scenarios: a prepared state with what to do, what to "
                           "expect and why")
    w.guide_action = a("posviz &guide", help_.show_guide, QKeySequence.HelpContents,
                       "What each plot and metric shows, with its formula")
    w.shortcuts_action = a("&Keyboard shortcuts", help_.show_shortcuts,
                           QKeySequence("Ctrl+/"), "Every keyboard shortcut")
    w.file_actions = [w.new_action, w.open_action, w.save_action, w.save_as_action,
                      w.copy_plot_action]
    w.reorder_actions = [w.shuffle_action, w.reverse_action, w.rotate_action,
                         w.swap_action, w.reset_action]

    menu = w.menuBar().addMenu("&File")
    menu.addActions([w.new_action, w.open_action])
    w.recent_menu = menu.addMenu("Open &Recent")
    w.recent_menu.aboutToShow.connect(lambda: files.fill_recent_menu(w.recent_menu))
    menu.addActions([w.save_action, w.save_as_action])
    menu.addSeparator()
    menu.addAction(w.export_action)
    menu.addSeparator()
    menu.addAction(quit_action)
    menu = w.menuBar().addMenu("&Edit")
    menu.addActions([w.undo_action, w.redo_action])
    menu.addSeparator()
    menu.addActions(w.reorder_actions)
    menu.addSeparator()
    menu.addActions([w.left_action, w.right_action])
    menu.addSeparator()
    menu.addAction(w.copy_plot_action)
    w.examples_menu = w.menuBar().addMenu("E&xamples")
    for sentence in example_sentences():
        w.examples_menu.addAction(sentence, lambda s=sentence: w.use_example(s))
    w.view_menu = w.menuBar().addMenu("&View")
    w.model_action = w.model_dock.toggleViewAction()
    w.model_action.setText("&Model panel")
    w.model_action.setShortcut(QKeySequence("Ctrl+M"))
    tip = "Show or hide the model panel: more room for the plots (Ctrl+M)"
    w.model_action.setToolTip(tip)
    w.model_action.setStatusTip(tip)
    w.view_menu.addAction(w.model_action)
    w.addAction(w.model_action)
    menu = w.menuBar().addMenu("&Help")
    menu.addActions([w.scenarios_action, w.guide_action, w.shortcuts_action])
    menu.addSeparator()
    menu.addAction(a("&About posviz", help_.about, tip="Versions and what posviz shows"))

    bar = w.addToolBar("Order")
    bar.setObjectName("order_toolbar")
    bar.setToolButtonStyle(Qt.ToolButtonTextBesideIcon)
    bar.setMovable(False)
    bar.addActions(w.reorder_actions)
    bar.addSeparator()
    bar.addActions([w.undo_action, w.redo_action, w.export_action])
    for action in (w.undo_action, w.redo_action):
        # the undo text names the step ("Undo Drag “cat”"): keep it to menus and tips
        bar.widgetForAction(action).setToolButtonStyle(Qt.ToolButtonIconOnly)
    for action in w.reorder_actions + [w.left_action, w.right_action, w.export_action] \
            + w.file_actions + [w.scenarios_action]:
        w.addAction(action)
        action.setEnabled(False)
    w.addActions([w.guide_action, w.shortcuts_action])


class UndoPassesThrough(QObject):
    """Ctrl+Z in the text field undoes the last step (text or reorder) once the field
    holds the session's text; while typing, it undoes the typing.

    ``settled()`` says whether the field holds the session's text."""

    def __init__(self, field, settled, parent: QObject | None = None):
        super().__init__(parent)
        self._field, self._settled = field, settled
        field.installEventFilter(self)

    def eventFilter(self, watched, event) -> bool:
        if (watched is self._field and event.type() == QEvent.ShortcutOverride
                and (event.matches(QKeySequence.Undo) or event.matches(QKeySequence.Redo)
                     or event.keyCombination().toCombined() ==
                     QKeySequence("Ctrl+Shift+Z")[0].toCombined())
                and self._settled()):
            return True            # not taken by the field: the window's action runs
        return super().eventFilter(watched, event)
