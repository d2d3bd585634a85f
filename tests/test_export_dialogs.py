"""A figure's own export, as a user meets it: its file dialog at a size that shows its
columns whole, and while the file is drawn (seconds, for a 300-dpi PNG) the asked
resolution's box gone from the window, a busy cursor and "Writing NAME…" in the
status line, then "Wrote PATH"."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402
from PySide6 import QtCore, QtWidgets  # noqa: E402

from posviz.gui.plots import exporting  # noqa: E402
from posviz.gui.plots.panel import PlotsPanel  # noqa: E402
from test_export import session, shown_panel  # noqa: E402,F401


def answered(kind, then, seen: list) -> None:
    """Once the application shows a modal dialog of ``kind``: ``then(dialog)``."""
    dialog = QtWidgets.QApplication.activeModalWidget()
    if not isinstance(dialog, kind):
        QtCore.QTimer.singleShot(20, lambda: answered(kind, then, seen))
        return
    seen.append(dialog)
    then(dialog)


def test_a_figure_s_file_dialog_opens_at_two_thirds_of_the_window(shown_panel):
    panel, _ = shown_panel
    window = panel.window()
    window.resize(1300, 850)
    seen, sizes = [], []

    def measure(dialog):
        sizes.append((dialog.width(), dialog.height()))
        dialog.reject()
    QtCore.QTimer.singleShot(0, lambda: answered(QtWidgets.QFileDialog, measure, seen))
    assert exporting.ask_export_path(panel, "symmetry", "svg", panel.settings) is None
    room = window.screen().availableGeometry()
    least = (min(800, room.width()), min(500, room.height()))
    assert sizes == [exporting.dialog_size(panel)]
    assert sizes[0][0] >= least[0] and sizes[0][1] >= least[1], (sizes, room)
    assert sizes[0][0] >= min(room.width(), round(1300 * 2 / 3))


def test_a_png_is_drawn_with_the_box_closed_a_busy_cursor_and_words(
        shown_panel, tmp_path, monkeypatch):
    panel, _ = shown_panel
    target = tmp_path / "symmetry-own.png"
    monkeypatch.setattr(exporting, "save_file_name", lambda *a: str(target))
    said, seen, during = [], [], {}
    panel.message.connect(said.append)
    painted = []

    class Painted(QtCore.QObject):
        def eventFilter(self, watched, event):
            if event.type() == QtCore.QEvent.Type.Paint:
                painted.append(watched)
            return False
    watcher = Painted()
    panel.installEventFilter(watcher)

    def accept(dialog):                 # the resolution box: 300 dpi, OK
        dialog.setIntValue(300)
        painted.clear()
        dialog.accept()
    QtCore.QTimer.singleShot(0, lambda: answered(QtWidgets.QInputDialog, accept, seen))
    export = PlotsPanel.export_figure

    def drawing(self, *args, **kwargs):
        cursor = QtWidgets.QApplication.overrideCursor()
        during.update(modal=QtWidgets.QApplication.activeModalWidget(),
                      cursor=None if cursor is None else cursor.shape(),
                      said=list(said), painted=bool(painted))
        return export(self, *args, **kwargs)
    monkeypatch.setattr(PlotsPanel, "export_figure", drawing)
    panel._export_dialog("symmetry", "png")
    assert seen and target.is_file()
    assert during["modal"] is None                  # the box closed before drawing
    assert during["painted"]                        # and the window painted where it was
    assert during["cursor"] == QtCore.Qt.CursorShape.WaitCursor
    assert during["said"] == ["Writing symmetry-own.png…"]
    assert said[-1] == f"Wrote {target}"
    assert QtWidgets.QApplication.overrideCursor() is None      # the cursor given back


@pytest.mark.parametrize("width", [1024, 1920])
def test_a_figure_s_file_dialog_shows_its_size_type_and_date_whole(
        shown_panel, tmp_path, monkeypatch, width):
    """Qt's own file dialog cut its columns ("115…KiB", "SV…ge", "7 Dec …:52:18") even
    at 1920 with most of its width empty: each is as wide as what it holds, and stays
    so for every folder listed (offscreen Qt's first widths happen to fit; a real
    window's did not, seen under Xvfb)."""
    panel, _ = shown_panel
    panel.window().resize(width, 700)
    (tmp_path / "attention.svg").write_text("<svg/>" * 20000)
    (tmp_path / "a-much-longer-figure-name-to-list.svg").write_text("<svg/>" * 30000)
    seen, cut = [], []

    def measure(dialog):
        view = dialog.findChild(QtWidgets.QTreeView, "treeView")
        QtCore.QTimer.singleShot(0, lambda: look(dialog, view, 40))

    def look(dialog, view, tries):
        model = view.model()
        if model.rowCount(view.rootIndex()) < 2 and tries:    # listed
            return QtCore.QTimer.singleShot(50, lambda: look(dialog, view, tries - 1))
        QtWidgets.QApplication.processEvents()
        header = view.header()
        for column in range(1, header.count()):
            if not header.isSectionHidden(column):
                wanted = max(view.sizeHintForColumn(column),
                             header.sectionSizeHint(column))
                mode = header.sectionResizeMode(column)       # and when the folder
                if header.sectionSize(column) < wanted or \
                        mode != QtWidgets.QHeaderView.ResizeMode.ResizeToContents:
                    cut.append((column, header.sectionSize(column), wanted, mode))
        seen.append(model.rowCount(view.rootIndex()))
        dialog.reject()
    QtCore.QTimer.singleShot(0, lambda: answered(QtWidgets.QFileDialog, measure, []))
    exporting.save_file_name(panel, "Export", str(tmp_path / "symmetry.svg"),
                             "SVG (*.svg);;All (*)")
    assert seen and seen[0] >= 2
    assert not cut, cut
