"""Help > Scenarios: a list of guided scenarios, and the side panel that explains one.

A scenario is a .posviz file in resources/scenarios (document.scenarios). Choosing one opens
it as an untitled document (Save asks where, so the installed file is never written)
and shows its title and explanation in a dock on the left, which can be closed. In a window
too narrow for the plots beside both panels (1024 pixels) it is a tab of the model panel
instead, raised, so the plots keep the width they have without it: when it opens, and when
the window is made that narrow (or the session restored at start-up opens it there). Made
wide again, the window puts it back on the left.
"""
from __future__ import annotations

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QDockWidget, QGraphicsView,
                               QHBoxLayout, QLabel, QListWidget, QListWidgetItem, QTabBar,
                               QTextBrowser, QVBoxLayout)

PANEL_WIDTH = 330
PLOTS_BESIDE_WIDTH = 760          # narrower plots squash the symmetry curves to a strip


def _markdown(doc) -> str:
    title = f"### {doc.title}\n\n" if doc.title else ""
    return title + (doc.note or "")


class ExplanationPanel(QDockWidget):
    """The open document's title and explanation, beside the plots; closable."""

    def __init__(self, window):
        super().__init__("Scenario", window)
        self.setObjectName("scenario_dock")
        self.setFeatures(QDockWidget.DockWidgetClosable | QDockWidget.DockWidgetMovable |
                         QDockWidget.DockWidgetFloatable)
        self.browser = QTextBrowser()
        self.browser.setOpenExternalLinks(True)
        self.browser.setToolTip("What to do, what to expect, why, and the paper it comes "
                                "from. Close the panel with its × (View menu brings it "
                                "back).")
        self.browser.setMinimumWidth(220)
        self.setWidget(self.browser)
        self.main = window
        self.tabbed = False             # made a tab of the model panel for lack of width
        window.addDockWidget(Qt.LeftDockWidgetArea, self)
        if self._too_narrow():
            self._into_model_panel()
        else:
            window.resizeDocks([self], [PANEL_WIDTH], Qt.Horizontal)
        window.installEventFilter(self)         # its resizes, before it lays them out
        action = self.toggleViewAction()
        action.setText("&Scenario explanation")
        action.setToolTip("Show or hide the explanation of the open scenario")
        window.view_menu.addAction(action)

    def _too_narrow(self) -> bool:
        """The plots would be narrower than PLOTS_BESIDE_WIDTH beside both panels."""
        window, model = self.main, self.main.model_dock
        return (model.isVisible() and not model.isFloating()
                and window.width() - model.width() - PANEL_WIDTH < PLOTS_BESIDE_WIDTH)

    def _into_model_panel(self) -> None:
        self.main.tabifyDockWidget(self.main.model_dock, self)
        self.tabbed = True
        self.raise_()
        QTimer.singleShot(0, self._repaint_plots)

    def _repaint_plots(self) -> None:
        """Paint the plots whole: after the window's resize and this move in one go, a
        plot's markers were left where the narrower layout had drawn them."""
        for view in self.main.findChildren(QGraphicsView):
            view.viewport().update()

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched is self.main and event.type() == QEvent.Type.Resize:
            self._fit()
        return False

    def _fit(self) -> None:
        """A window made too narrow takes the panel into the model panel's tabs, raised;
        made wide again, it puts back on the left a panel it took there. A panel closed,
        floated or moved elsewhere by the user stays as it is."""
        window = self.main
        if self.isFloating() or self.isHidden():
            return                                # the View menu shows it again
        if not self.tabbed:
            if (window.dockWidgetArea(self) == Qt.LeftDockWidgetArea
                    and not window.tabifiedDockWidgets(self) and self._too_narrow()):
                self._into_model_panel()
        elif window.tabifiedDockWidgets(self) != [window.model_dock]:
            self.tabbed = False                   # the user moved it since
        elif not self._too_narrow():
            window.addDockWidget(Qt.LeftDockWidgetArea, self)    # out of the tabs
            window.resizeDocks([self], [PANEL_WIDTH], Qt.Horizontal)
            self.tabbed = False

    def show_document(self, doc) -> None:
        self.doc = doc
        # short: its words are the tab's beside the model panel's at 1024 pixels ("M…",
        # "Scenario: The causal …"); the title heads the text below
        self.setWindowTitle("Scenario" if doc.title else "Note")
        self._tell_tip(f"{doc.title or 'A note'}: the explanation of what is shown")
        self.browser.setMarkdown(_markdown(doc))
        self.show()
        self.raise_()
        self._fit()

    def detach(self, what: str) -> None:
        """The user changed the ``what`` ("text" or "model") the explanation speaks of:
        it stays readable, marked as no longer about what is shown (nor saved with it)."""
        # "Scenario (left)" read as "the scenario on the left"
        # (short: it is a tab beside the model panel's at 1024 pixels; the tip says more)
        self.setWindowTitle(f"{self.windowTitle().split(' —')[0]} — changed")
        self._tell_tip(f"You changed the {what} since the scenario opened: its text no "
                       f"longer describes the plots. Help › Scenarios opens it again as "
                       f"it was.")
        self.browser.setMarkdown(
            f"**You changed the {what}.** What follows was written for the scenario's "
            f"own text and model: it no longer describes the plots, and Save no longer "
            f"stores it. Help › Scenarios opens the scenario again.\n\n---\n\n"
            + _markdown(self.doc))


    def _tell_tip(self, tip: str) -> None:
        """``tip`` on the panel and, tabbed beside the model panel, on its tab."""
        self.setToolTip(tip)
        QTimer.singleShot(0, lambda: self._tab_tip(tip))   # the tab bar is laid out later

    def _tabs(self):
        """(tab bar, index) of each tab that shows the panel beside the model panel."""
        for bar in self.main.findChildren(QTabBar):
            for k in range(bar.count()):
                if bar.tabText(k).replace("&", "") == self.windowTitle():
                    yield bar, k

    def _tab_tip(self, tip: str) -> None:
        for bar, k in self._tabs():
            bar.setTabToolTip(k, tip)

    def tab_tip(self) -> str:
        """The tooltip of the panel's tab beside the model panel ("" when not tabbed)."""
        return next((bar.tabToolTip(k) for bar, k in self._tabs()), "")


class ScenarioDialog(QDialog):
    """The scenarios, one per line, with the chosen one's explanation beside them."""

    def __init__(self, scenarios, parent=None):
        super().__init__(parent)
        self.setWindowTitle("Scenarios")
        self.resize(900, 520)
        self.scenarios = scenarios                       # [(path, SessionDocument)]
        self.list = QListWidget()
        self.list.setToolTip("Choose a scenario; double-click or Open loads it")
        self.list.setWordWrap(True)
        self.list.setSpacing(2)
        for path, doc in scenarios:
            item = QListWidgetItem(doc.title or path.stem)
            item.setToolTip(path.name)
            self.list.addItem(item)
        self.preview = QTextBrowser()
        self.list.currentRowChanged.connect(self._preview)
        self.list.itemDoubleClicked.connect(lambda _: self.accept())
        buttons = QDialogButtonBox(QDialogButtonBox.Open | QDialogButtonBox.Cancel)
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        row = QHBoxLayout()
        row.addWidget(self.list, 1)
        row.addWidget(self.preview, 1)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel("Each scenario opens a prepared state and explains what to "
                                "do, what to expect and why."))
        layout.addLayout(row, 1)
        layout.addWidget(buttons)
        if scenarios:
            self.list.setCurrentRow(0)

    def _preview(self, row: int) -> None:
        if 0 <= row < len(self.scenarios):
            self.preview.setMarkdown(_markdown(self.scenarios[row][1]))

    def chosen(self):
        row = self.list.currentRow()
        return self.scenarios[row] if 0 <= row < len(self.scenarios) else None


def choose_scenario(parent, files, status) -> None:
    """Help > Scenarios: list them; the chosen one opens in ``files`` (a Documents, after
    asking about unsaved changes)."""
    from ..document.scenarios import scenarios
    from ..errors import PosvizInputError
    try:
        found = scenarios()
    except PosvizInputError as error:
        status.say(str(error), error=True)
        return
    dialog = ScenarioDialog(found, parent)
    if dialog.exec() == QDialog.Accepted and dialog.chosen() is not None:
        open_scenario(files, *dialog.chosen())


def open_scenario(files, path, doc) -> None:
    if files.session is None or not files.may_discard():
        return
    files.open_document(doc, None, scenario=True)
