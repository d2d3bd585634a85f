"""A figure's context menu: written to a file (and what a failed write says), or copied
to the clipboard; and the SVG Qt writes, made to read the same in every renderer."""
from __future__ import annotations

import html
import math
import re
from contextlib import contextmanager
from pathlib import Path

import pyqtgraph as pg
from PySide6 import QtCore, QtGui, QtWidgets

from ..folders import remember_folder, start_folder
from posviz.document.files import FIGURE_FORMATS
from posviz.errors import PosvizInputError

FILTERS = {"png": "PNG image (*.png)", "svg": "SVG drawing (*.svg)",
           "pdf": "PDF document (*.pdf)", "csv": "CSV table (*.csv)"}


def writing(path: Path, write) -> Path:
    """Run ``write()``; an OSError becomes a PosvizInputError naming the file."""
    try:
        return write()
    except OSError as error:
        raise PosvizInputError(f"cannot write {path}: "
                               f"{error.strerror or 'permission denied or no such folder'}") \
            from None


def keep_own_entries(menu: QtWidgets.QMenu) -> None:
    """Take pyqtgraph's submenus (X axis, Y axis, Mouse Mode) out of a ViewBox's menu:
    they would unlink, invert, re-range or pan-lock axes each figure sets. View All and
    the entries posviz adds (none a submenu) stay."""
    for action in menu.actions():
        if action.menu() is not None:
            menu.removeAction(action)


def add_export_actions(name: str, figure, export) -> None:
    """'Export figure as PNG/SVG/PDF/CSV…' in the figure's context menus (rid of
    pyqtgraph's axis and mouse submenus); ``export(name, fmt)`` runs when one is chosen."""
    actions = []
    for fmt in FIGURE_FORMATS:
        what = "data as CSV" if fmt == "csv" else f"as {fmt.upper()}"
        action = QtGui.QAction(f"Export figure {what}…", figure)
        action.setToolTip(f"Save '{name}' as a .{fmt} file")
        action.triggered.connect(lambda _=False, n=name, f=fmt: export(n, f))
        actions.append(action)
    for label in (figure.heading, figure.message, figure.note):
        label.setContextMenuPolicy(QtCore.Qt.ContextMenuPolicy.ActionsContextMenu)
        label.addActions(actions)
    for item in figure.canvas.scene().items():
        if isinstance(item, pg.PlotItem):
            item.setMenuEnabled(False, enableViewBoxMenu=None)     # no "Plot Options"
        if isinstance(item, pg.ViewBox) and item.menu is not None:
            keep_own_entries(item.menu)
            item.menu.addSeparator()
            for action in actions:
                item.menu.addAction(action)


COPY_ACTION = "copy_plot"


def add_copy_action(figure, copy) -> None:
    """'Copy plot to clipboard' in the figure's context menus; ``copy(figure)`` runs
    when it is chosen."""
    action = QtGui.QAction("Copy plot to clipboard (Ctrl+C)", figure)
    action.setObjectName(COPY_ACTION)
    # the figure is found through the action's parent: no reference cycle between
    # Python wrappers of widgets, which the collector would have to break
    action.triggered.connect(lambda _=False, a=action: copy(a.parent()))
    for label in (figure.heading, figure.message, figure.note):
        label.addAction(action)
    for item in figure.canvas.scene().items():
        if isinstance(item, pg.ViewBox) and item.menu is not None:
            item.menu.addAction(action)


def copy_action(figure) -> QtGui.QAction | None:
    """The figure's 'Copy plot' action."""
    return figure.findChild(QtGui.QAction, COPY_ACTION,
                            QtCore.Qt.FindChildOption.FindDirectChildrenOnly)


def figure_to_copy(figures):
    """Of ``figures``, the one under the mouse, else the one holding the focus, else the
    first (None when there is none)."""
    figures = list(figures)

    def owner(widget):
        while widget is not None:
            if any(widget is figure for figure in figures):
                return widget
            widget = widget.parentWidget()
        return None
    return (owner(QtWidgets.QApplication.widgetAt(QtGui.QCursor.pos()))
            or owner(QtWidgets.QApplication.focusWidget()) or next(iter(figures), None))


def copy_figure(figure) -> bool:
    """The figure as drawn, onto the clipboard (False for None)."""
    if figure is None:
        return False
    QtWidgets.QApplication.clipboard().setImage(figure.render_image())
    return True


FOLDER_KEY = "export/folder"        # shared with File > Export figures
DPI_KEY = "export/dpi"
DEFAULT_DPI = 300
FIGURES_FOLDER = "posviz-figures"   # a folder export's own folder, in the home folder


def _exported_to(settings) -> Path | None:
    """The last export folder, while it exists."""
    folder = Path(str(settings.value(FOLDER_KEY, "") or ""))
    return folder if str(folder) != "." and folder.is_dir() else None


def last_folder(settings) -> Path:
    """The last export folder while it exists, else the last folder any file dialog
    used (gui.folders), else the home folder."""
    return _exported_to(settings) or start_folder(settings)


def export_folder(settings) -> Path:
    """Where File > Export figures is offered: the last export folder while it exists,
    else ~/posviz-figures (created by the export), never the home folder itself, where
    some thirty files would land loose among the user's own."""
    folder = _exported_to(settings)
    return folder if folder not in (None, Path.home()) else Path.home() / FIGURES_FOLDER


DIALOG_SHARE = 2 / 3        # of the window: a figure's file dialog's size
DIALOG_LEAST = (800, 500)   # pixels: never smaller (a screen allowing)


def save_file_name(parent: QtWidgets.QWidget, caption: str, start: str, filters: str) -> str:
    """The file the user chose to save to ("" when cancelled), asked in a file dialog at
    a size that shows its columns whole: two thirds of the window, at least 800 × 500
    (Qt's own dialog opened at about 630 × 400, its Size, Type and Date cut)."""
    dialog = QtWidgets.QFileDialog(parent, caption, start, filters)
    dialog.setAcceptMode(QtWidgets.QFileDialog.AcceptMode.AcceptSave)
    dialog.resize(*dialog_size(parent))
    from ..folders import fit_columns
    fit_columns(dialog)                      # and its columns as wide as they need
    return dialog.selectedFiles()[0] if dialog.exec() and dialog.selectedFiles() else ""


def dialog_size(parent: QtWidgets.QWidget | None) -> tuple[int, int]:
    """(width, height) of a file dialog over ``parent``'s window, within its screen."""
    window = parent.window() if parent is not None else None
    width, height = (window.width(), window.height()) if window is not None else (0, 0)
    size = [max(least, round(DIALOG_SHARE * side))
            for least, side in zip(DIALOG_LEAST, (width, height))]
    screen = (window.screen() if window is not None else None) or \
        QtGui.QGuiApplication.primaryScreen()
    if screen is not None:
        room = screen.availableGeometry()
        size = [min(size[0], room.width()), min(size[1], room.height())]
    return size[0], size[1]


@contextmanager
def busy_writing(widget: QtWidgets.QWidget, path: Path, say):
    """While a file is drawn: ``say`` "Writing NAME…" (a status line), the busy cursor,
    and the window repainted first where the closed dialogs were (a 300-dpi PNG holds
    the event loop for seconds: the resolution box stayed painted over the plot)."""
    say(f"Writing {Path(path).name}…")
    QtWidgets.QApplication.setOverrideCursor(QtCore.Qt.CursorShape.WaitCursor)
    try:
        QtWidgets.QApplication.processEvents(
            QtCore.QEventLoop.ProcessEventsFlag.ExcludeUserInputEvents)
        widget.window().repaint()
        yield
    finally:
        QtWidgets.QApplication.restoreOverrideCursor()


def ask_export_path(parent: QtWidgets.QWidget, name: str, fmt: str,
                    settings=None) -> tuple[Path, int | None, int | None] | None:
    """A file chosen by the user for figure ``name`` in ``fmt``, offered in the last
    export folder (remembered in ``settings``, the window's; None: the application's
    default QSettings), with the resolution asked for a PNG: (path, width or None, dpi
    or None), or None when cancelled."""
    settings = settings if settings is not None else QtCore.QSettings()
    folder = last_folder(settings)
    start = folder / f"{name}.{fmt}"
    path = save_file_name(parent, f"Export {name}", str(start), FILTERS[fmt])
    if not path:
        return None
    if not path.lower().endswith("." + fmt):
        path += "." + fmt
    path = Path(path)
    if not path.is_absolute():
        path = folder / path
    dpi = None
    if fmt == "png":
        remembered = int(settings.value(DPI_KEY, DEFAULT_DPI) or DEFAULT_DPI)
        dpi, ok = QtWidgets.QInputDialog.getInt(
            parent, f"Export {name} as PNG",
            "Resolution in dots per inch (96 = as on screen, 300 = print):",
            remembered, 50, 600, 10)
        if not ok:
            return None
        settings.setValue(DPI_KEY, dpi)
    settings.setValue(FOLDER_KEY, str(path.parent))
    remember_folder(settings, path)
    return path, None, dpi


def lossless_images(figure: QtWidgets.QWidget) -> None:
    """Have Qt's PDF engine write every image of ``figure``'s canvases lossless (Flate),
    so a heatmap's cells keep their exact colours. Without the hint the engine stores an
    opaque image as JPEG whenever that is smaller (QPdfEnginePrivate::addImage), an
    image with alpha as JPEG plus a mask: cells of (68, 1, 84) came out (62, 0, 83) to
    (79, 0, 91). Each graphics view paints with its own hints, not those of the painter
    QWidget.render was given, so the views carry it; Qt reads it only for a PDF."""
    for view in figure.findChildren(QtWidgets.QGraphicsView):
        view.setRenderHint(QtGui.QPainter.RenderHint.LosslessImageRendering)


def drop_export_menu(canvas: pg.GraphicsLayoutWidget) -> None:
    """No "Export..." from pyqtgraph in the canvas's right-click menu: it would save the
    canvas without the figure's heading and note (the panel adds "Export figure as
    PNG / SVG / CSV…" instead). GraphicsScene.contextMenu holds it in pyqtgraph 0.13
    and 0.14; on a scene without that list nothing is changed."""
    scene = canvas.scene()
    if isinstance(getattr(scene, "contextMenu", None), list):
        scene.contextMenu = []


# -- SVG for every renderer --------------------------------------------------------------
_MATRIX = re.compile(r'transform="matrix\(([^)]*)\)"')
_GROUP = re.compile(r"(<g [^>]*>)(.*?)(</g>)", re.S)
_NUMBER = r"-?[\d.]+(?:[eE][-+]?\d+)?"
_PAIR = re.compile(rf"({_NUMBER}),({_NUMBER})")


def flatten_scaled_strokes(path: Path) -> None:
    """Move data-to-pixel scalings from the groups of an SVG that QSvgGenerator (Qt 6)
    wrote into the coordinates they hold, so thin curves stay thin in renderers that
    ignore ``vector-effect="non-scaling-stroke"`` (librsvg, Inkscape, LibreOffice).

    pyqtgraph draws curves in data coordinates under a scaling transform with cosmetic
    pens; such a renderer scales the stroke too, and a curve becomes a band hundreds of
    pixels wide. Only groups whose children are polylines, polygons, absolute M/L/C/Z
    paths and unrotated rectangles are rewritten; everything else is left as written.
    """
    text = path.read_text(encoding="utf-8")

    def rewrite(group: re.Match) -> str:
        opening, body, closing = group.groups()
        found = _MATRIX.search(opening)
        if found is None:
            return group.group(0)
        a, b, c, d, e, f = (float(v) for v in found.group(1).split(","))
        if (a, b, c, d) == (1.0, 0.0, 0.0, 1.0):
            return group.group(0)            # a translation does not scale strokes
        shapes = re.findall(r"<(\w+)", body)
        if not shapes or any(s not in ("polyline", "polygon", "path", "rect") for s in shapes):
            return group.group(0)
        if "rect" in shapes and (b, c) != (0.0, 0.0):
            return group.group(0)            # a rotated rectangle is no longer a rect
        if re.search(r'\sd="[^"]*[^MLCZ\d\s.,eE+-][^"]*"', body):
            return group.group(0)            # a path command other than M, L, C, Z

        def move(pair: re.Match) -> str:
            x, y = float(pair.group(1)), float(pair.group(2))
            return f"{a * x + c * y + e:.6g},{b * x + d * y + f:.6g}"

        def move_rect(rect: re.Match) -> str:
            x, y, w, h = (float(rect.group(k)) for k in ("x", "y", "w", "h"))
            x0, x1 = sorted((a * x + e, a * (x + w) + e))
            y0, y1 = sorted((d * y + f, d * (y + h) + f))
            return (f'<rect{rect.group("pre")}x="{x0:.6g}" y="{y0:.6g}" '
                    f'width="{x1 - x0:.6g}" height="{y1 - y0:.6g}"')

        body = re.sub(r'(points|d)="([^"]*)"',
                      lambda attr: f'{attr.group(1)}="{_PAIR.sub(move, attr.group(2))}"', body)
        body = re.sub(rf'<rect(?P<pre>[^>]*?)x="(?P<x>{_NUMBER})" y="(?P<y>{_NUMBER})" '
                      rf'width="(?P<w>{_NUMBER})" height="(?P<h>{_NUMBER})"', move_rect, body)
        return _MATRIX.sub('transform="matrix(1,0,0,1,0,0)"', opening) + body + closing

    path.write_text(_GROUP.sub(rewrite, text), encoding="utf-8")


# -- text for every renderer -------------------------------------------------------------
_TEXT = re.compile(r"<text (?P<attrs>[^>]*)>(?P<body>[^<]*)</text>")
_TEXTS = re.compile(r"<text [^>]*>[^<]*</text>(?:\s*<text [^>]*>[^<]*</text>)+")
_ATTR = re.compile(r'([\w:-]+)="([^"]*)"')
_SIZE = re.compile(r'font-size="([\d.]+)"')
_GENERIC = {"Sans Serif": "sans-serif", "Serif": "serif", "Monospace": "monospace"}
SAME_RUN = 0.5          # pixels between where a piece ends and the next begins


def drawn_size(written: str) -> int:
    """The size in pixels Qt lays text out at, of one QSvgGenerator wrote: Qt rounds a
    size given in points to whole pixels (as qRound does), the generator writes it
    unrounded (10 pt at 96 dpi: 13 px drawn, 13.3333 written)."""
    return max(1, math.floor(float(written) + 0.5))


def drawn_font(attrs: dict) -> QtGui.QFont:
    """The font Qt drew a <text> element of its SVG in, from the element's attributes."""
    font = QtGui.QFont(attrs.get("font-family", ""))
    font.setPixelSize(drawn_size(attrs.get("font-size", "12")))
    weight = int(attrs.get("font-weight", 400))
    try:
        font.setWeight(QtGui.QFont.Weight(weight))
    except ValueError:                                  # a weight between Qt's named ones
        font.setBold(weight >= 600)
    font.setItalic(attrs.get("font-style", "normal") != "normal")
    return font


def _merged(pieces: list[tuple[dict, str, str]]) -> str:
    """One <text> element of a line's pieces (attributes, their source, escaped text):
    the first's attributes, and a <tspan> where a piece's style differs from them."""
    first, source, _ = pieces[0]
    body = ""
    for attrs, _, text in pieces:
        changed = {k: v for k, v in attrs.items() if k not in ("x", "y") and first.get(k) != v}
        style = " ".join(f'{k}="{v}"' for k, v in changed.items())
        body += f"<tspan {style}>{text}</tspan>" if changed else text
    return f"<text {source}>{body}</text>"


def whole_text_runs(svg: str) -> str:
    """Join the pieces QSvgGenerator writes a line of text in (one per script: "PE(p+",
    "Δ) ", ..., each at an x from Qt's metrics) into one <text> element per line, so that
    a viewer with other metrics lays the line out itself instead of drawing its pieces
    over each other. Pieces join when they follow each other in a group on one baseline,
    each starting where the one before ends in the font Qt drew it in."""
    def join(match: re.Match) -> str:
        lines, end, baseline = [], 0.0, None
        for element in _TEXT.finditer(match.group(0)):
            attrs = dict(_ATTR.findall(element.group("attrs")))
            x, text = float(attrs.get("x", 0)), element.group("body")
            if not (lines and attrs.get("y") == baseline and abs(x - end) <= SAME_RUN):
                lines.append([])
            lines[-1].append((attrs, element.group("attrs"), text))
            advance = QtGui.QFontMetricsF(drawn_font(attrs)).horizontalAdvance(
                html.unescape(text))
            end, baseline = x + advance, attrs.get("y")
        return "\n".join(_merged(line) for line in lines)
    return _TEXTS.sub(join, svg)


def portable_text(path: Path) -> None:
    """Make the text of an SVG that QSvgGenerator wrote read as Qt drew it in any viewer
    (librsvg, browsers, Inkscape), not only in Qt's own.

    Sizes are written as drawn (drawn_size: written unrounded, every other renderer drew
    text 2.6 % wider than Qt laid it out, so pieces of a line overlapped and a line that
    fit ran past the figure's edge), the pieces of each line are joined (whole_text_runs),
    and Qt's family alias ("Sans Serif", which CSS does not define) becomes the family Qt
    resolved it to, then the generic family.
    """
    svg = _SIZE.sub(lambda m: f'font-size="{drawn_size(m.group(1))}"',
                    path.read_text(encoding="utf-8"))
    svg = whole_text_runs(svg)

    def family(match: re.Match) -> str:
        info = QtGui.QFontInfo(QtGui.QFont(match.group(1)))
        generic = _GENERIC.get(match.group(1),
                               "monospace" if info.fixedPitch() else "sans-serif")
        return f"font-family=\"'{info.family()}', {generic}\""
    path.write_text(re.sub(r'font-family="([^"\',]*)"', family, svg), encoding="utf-8")
