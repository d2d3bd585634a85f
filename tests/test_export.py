"""Every figure exports as a PNG and an SVG that load back and are not blank, plus the
CSV of its numbers; ``posviz export`` writes the documented files headlessly."""
import os
import re

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import csv  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6 import QtCore, QtGui, QtSvg, QtWidgets  # noqa: E402

from posviz import cli  # noqa: E402
from posviz.analysis.engine import Engine  # noqa: E402
from posviz.document.session import Session  # noqa: E402
from posviz.document.spec import Selection  # noqa: E402
from posviz.errors import PosvizInputError  # noqa: E402
from posviz.gui.plots import FIGURES, PlotsPanel, mosaic_look  # noqa: E402
from posviz.models.builtin.backend import BuiltinBackend  # noqa: E402
from posviz.models.config import ModelConfig  # noqa: E402
from posviz.views.shown import Shown, build_views  # noqa: E402

TEXT = "the cat sat on the mat because it was warm"


def distinct_colours(image: QtGui.QImage, step: int = 3) -> int:
    image = image.convertToFormat(QtGui.QImage.Format.Format_RGB32)
    ptr = image.constBits()
    pixels = np.frombuffer(ptr, np.uint32, image.width() * image.height())
    return len(np.unique(pixels[::step]))


@pytest.fixture
def session():
    session = Session(BuiltinBackend(ModelConfig()), TEXT)
    session.reverse()
    return session


@pytest.fixture
def shown_panel(qtbot, session):
    from posviz.gui.settings import make_settings
    ev = Engine(session.backend).evaluate(session.seq, session.order, session.positions)
    panel = PlotsPanel(make_settings())
    panel.set_session(session)
    qtbot.addWidget(panel)
    panel.resize(1300, 850)
    panel.show()
    qtbot.waitExposed(panel)
    panel.show_evaluation(Shown(ev, build_views(ev, mosaic_look(session.selection))))
    return panel, ev


def read_csv(path):
    """The header and rows of an exported CSV, after its ``# key: value`` lines."""
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(line for line in handle if not line.startswith("# ")))
    return rows[0], rows[1:]


def test_every_figure_exports_png_svg_and_csv(shown_panel, tmp_path):
    panel, ev = shown_panel
    paths = panel.export_all(tmp_path, width=900)
    assert sorted(p.name for p in paths) == sorted(
        f"{name}.{fmt}" for name in FIGURES for fmt in ("png", "svg", "csv"))
    shown = panel.displayed()
    for name in FIGURES:
        image = QtGui.QImage(str(tmp_path / f"{name}.png"))
        assert not image.isNull(), name
        assert image.width() <= 900 and image.height() > (40 if name == "outputs" else 100)
        assert distinct_colours(image) > 20, f"{name}.png looks blank"
        renderer = QtSvg.QSvgRenderer(str(tmp_path / f"{name}.svg"))
        assert renderer.isValid(), name
        assert renderer.defaultSize().width() > 100, name
        header, rows = read_csv(tmp_path / f"{name}.csv")
        arrays = shown[name]
        assert header[-len(arrays):] == list(arrays), name
        size = next(iter(arrays.values())).size
        assert len(rows) == size, name


def test_csv_holds_the_numbers_shown(shown_panel, session, tmp_path):
    panel, ev = shown_panel
    session.select(Selection(layer=3, head=1))
    path = panel.export_figure("attention", tmp_path / "attention.csv")
    header, rows = read_csv(path)
    assert header == ["query", "query_token", "key", "key_token", "original",
                      "reordered_aligned", "difference"]
    n = len(ev.reference.tokens)
    assert len(rows) == n * n
    q, k = 2, 7
    row = rows[q * n + k]
    assert row[:4] == [str(q), ev.reference.tokens[q], str(k), ev.reference.tokens[k]]
    assert float(row[4]) == pytest.approx(float(ev.reference.attention[2, 1, q, k]), rel=1e-6)
    assert float(row[5]) == pytest.approx(
        float(ev.comparison.attention_aligned[2, 1, q, k]), rel=1e-6)

    header, rows = read_csv(panel.export_figure("symmetry", tmp_path / "symmetry.csv"))
    assert header[0] == "layer" and len(rows) == ev.reference.n_layers + 1
    column = header.index("hidden_equivariance")
    np.testing.assert_allclose([float(r[column]) for r in rows],
                               ev.comparison.hidden_equivariance, rtol=1e-6)
    assert rows[0][header.index("attention_equivariance")] == ""      # NaN at layer 0


def title_cap_height(path) -> int:
    """Pixels from top to bottom of the first letter of a PNG's title (a capital): the
    first line of ink at the top, its leftmost glyph."""
    image = QtGui.QImage(str(path)).convertToFormat(QtGui.QImage.Format.Format_Grayscale8)
    pixels = np.frombuffer(image.constBits(), np.uint8,
                           image.bytesPerLine() * image.height()).reshape(image.height(), -1)
    ink = pixels[:, :image.width()] < 110
    rows = np.flatnonzero(ink.any(axis=1))
    top = rows[0]
    gap = np.flatnonzero(~ink[top:].any(axis=1))[0]             # the title's first line
    line = ink[top:top + gap]
    columns = line.any(axis=0)
    left = np.flatnonzero(columns)[0]
    right = left + np.flatnonzero(~columns[left:])[0]
    letter = np.flatnonzero(line[:, left:right].any(axis=1))
    return int(letter[-1] - letter[0] + 1)


def test_one_export_has_one_text_size(shown_panel, tmp_path):
    """A folder for a slide or a paper: every PNG at one scale of its size on screen, the
    widest figure the width asked, so the same font is as many pixels tall in each."""
    panel, _ = shown_panel
    panel.export_all(tmp_path, formats=["png"], width=1600, csv=False)
    figures = panel.figures()
    scales, heights = {}, {}
    for path in tmp_path.glob("*.png"):
        name = path.stem
        scales[name] = QtGui.QImage(str(path)).width() / figures[name].export_size().width()
        title = figures[name].heading.text().removeprefix("<b>")
        if name != "outputs" and title[0].isupper():    # outputs: a table, a small title
            heights[name] = title_cap_height(path)
    assert len(scales) == len(FIGURES)
    assert max(scales.values()) == pytest.approx(min(scales.values()), rel=0.01), scales
    widest = max(figures, key=lambda n: figures[n].export_size().width())
    assert QtGui.QImage(str(tmp_path / f"{widest}.png")).width() == 1600
    assert max(heights.values()) - min(heights.values()) <= 2, sorted(heights.items())


def test_png_width_scales_the_render(shown_panel, tmp_path):
    panel, _ = shown_panel
    small = QtGui.QImage(str(panel.export_figure("symmetry", tmp_path / "a.png", width=400)))
    large = QtGui.QImage(str(panel.export_figure("symmetry", tmp_path / "b.png", width=1600)))
    assert (small.width(), large.width()) == (400, 1600)
    assert large.height() == pytest.approx(4 * small.height(), abs=4)


def test_bad_export_requests_are_one_line_errors(shown_panel, tmp_path):
    panel, _ = shown_panel
    with pytest.raises(PosvizInputError, match="must end in"):
        panel.export_figure("attention", tmp_path / "attention.jpg")
    with pytest.raises(PosvizInputError, match="no figure named"):
        panel.export_figure("nonsense", tmp_path / "x.png")
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(PosvizInputError, match="cannot"):
        panel.export_figure("attention", blocker / "attention.png")
    with pytest.raises(PosvizInputError, match=str(blocker)):
        panel.export_all(blocker / "figs")


def test_cli_export_writes_the_documented_files(tmp_path, capsys):
    out = tmp_path / "figs"
    status = cli.main(["export", "--text", "a small cat sat", "--order", "3,2,1,0",
                       "--out", str(out), "--format", "png", "--width", "700",
                       "--layers", "2", "--heads", "2", "--d-model", "16"])
    assert status == 0
    printed = capsys.readouterr().out.split()
    expected = [str(out / f"{name}.{fmt}") for name in FIGURES for fmt in ("png", "csv")]
    assert printed == expected
    for path in printed:
        assert os.path.getsize(path) > 0
    widths = {name: QtGui.QImage(str(out / f"{name}.png")).width() for name in FIGURES}
    assert max(widths.values()) == 700 and widths["attention_mosaic"] < 400   # half as wide
    assert not list(out.glob("*.svg"))


@pytest.mark.parametrize("args, words", [
    (["--order", "0,0,1,2"], "permutation"),
    (["--order", "1,0"], "entries"),
    (["--format", "jpg"], "--format"),
    (["--layer", "7"], "--layer"),
    (["--dpi", "5000"], "--dpi"),
])
def test_cli_export_bad_input_exits_2_with_one_line(tmp_path, capsys, args, words):
    out = tmp_path / "figs"
    status = cli.main(["export", "--text", "a small cat sat", "--out", str(out), *args])
    assert status == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and "Traceback" not in err
    assert not out.exists()                      # nothing created for a rejected request


def test_cli_export_unwritable_folder_is_one_line(tmp_path, capsys):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    for out in (blocker, blocker / "figs"):
        status = cli.main(["export", "--text", "a b c", "--out", str(out)])
        assert status == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and str(out) in err and "Traceback" not in err


def test_each_figure_menu_offers_export(shown_panel, tmp_path, monkeypatch):
    panel, _ = shown_panel
    import pyqtgraph as pg
    for name, figure in panel.figures().items():
        boxes = [item for item in figure.canvas.scene().items()
                 if isinstance(item, pg.ViewBox) and item.menu is not None]
        assert boxes, name
        texts = [a.text() for box in boxes for a in box.menu.actions()]
        assert "Export figure as PNG…" in texts and "Export figure as SVG…" in texts, name
    target = tmp_path / "chosen.svg"
    from posviz.gui.plots import exporting
    monkeypatch.setattr(exporting, "save_file_name", lambda *a, **k: str(target))
    action = next(a for a in panel.figures()["symmetry"].heading.actions()
                  if a.text() == "Export figure as SVG…")
    action.trigger()
    assert QtSvg.QSvgRenderer(str(target)).isValid()


PYQTGRAPH_ONLY = ("X axis", "Y axis", "Mouse Mode", "Plot Options", "Export...")


def right_click_menus(canvas):
    """The texts of each menu a right-click on one of the canvas's views raises (the
    view's, then its parents', as pyqtgraph's ViewBox.raiseContextMenu builds it)."""
    from types import SimpleNamespace

    import pyqtgraph as pg
    scene = canvas.scene()
    return [[a.text() for a in scene.addParentContextMenus(
                box, box.getMenu(None), SimpleNamespace(acceptedItem=box)).actions()]
            for box in scene.items() if isinstance(box, pg.ViewBox) and box.menuEnabled()]


def test_the_right_click_menu_cannot_relabel_a_figure(qtbot, shown_panel):
    """The menus have our exports, copy and View All, but none of pyqtgraph's axis and
    mouse-mode submenus, "Plot Options" (log / FFT transforms) nor its export of the bare
    canvas; so on every figure, the positional encoding's line plot (RoPE) and the
    Experiments tab's figure."""
    from posviz.gui.experiments.tab import ExperimentsTab
    panel, _ = shown_panel
    canvases = {name: figure.canvas for name, figure in panel.figures().items()}
    encoding = panel.figures()["encoding"]
    encoding._parameter_plot()
    canvases["encoding (parameters)"] = encoding.side
    tab = ExperimentsTab()
    qtbot.addWidget(tab)
    canvases["experiment"] = tab.figure.canvas
    for name, canvas in canvases.items():
        menus = right_click_menus(canvas)
        assert menus, name
        for texts in menus:
            assert "View All" in texts and "Export figure as PNG…" in texts, name
            assert "Copy plot to clipboard (Ctrl+C)" in texts or "parameters" in name, name
            assert not set(PYQTGRAPH_ONLY) & set(texts), (name, texts)


def test_svg_renders_the_same_without_non_scaling_strokes(shown_panel, tmp_path):
    """Viewers that ignore vector-effect (librsvg, Inkscape) must see thin curves:
    no stroked shape may sit under a scaling transform, and heatmap cells are embedded
    enlarged so that no viewer blurs them."""
    import base64
    import re
    panel, ev = shown_panel
    for name in ("symmetry", "attention", "attention_mosaic", "branch_norms"):
        path = panel.export_figure(name, tmp_path / f"{name}.svg")
        text = path.read_text(encoding="utf-8")
        for opening, body in re.findall(r"(<g [^>]*>)(.*?)</g>", text, re.S):
            if "non-scaling-stroke" not in body or 'stroke="none"' in opening:
                continue
            matrix = re.search(r'matrix\(([^)]*)\)', opening)
            a, b, c, d = (float(v) for v in matrix.group(1).split(",")[:4])
            assert (abs(a), abs(d), b, c) == (1.0, 1.0, 0.0, 0.0), (name, opening[:120])
        if name == "attention":
            n = len(ev.seq)
            embedded = [QtGui.QImage.fromData(base64.b64decode(data)) for data in
                        re.findall(r'<image[^>]*href="data:image/png;base64,([^"]+)"', text)]
            maps = [image for image in embedded if image.width() > 1]    # not colour bars
            assert len(maps) == 3 and all(
                image.width() >= 10 * n for image in maps)   # cells enlarged, not n pixels
        assert QtSvg.QSvgRenderer(str(path)).isValid()


def _marker_box(figure, scale: float, half: int = 7):
    """The box (x, y, w, h) in pixels of an image of ``figure`` drawn at ``scale``
    around the first marker of its first curve (below the caption's band)."""
    from PySide6 import QtCore
    from posviz.gui.plots.captions import caption_height
    item = figure.lines                         # every curve's line and markers
    x, y = item.shown()[0].points
    point = item.mapToDevice(QtCore.QPointF(float(x[0]), float(y[0])))
    centre = figure.canvas.mapTo(figure, point.toPoint())
    side = round(2 * half * scale)
    top = centre.y() + caption_height(figure) - half
    return (round((centre.x() - half) * scale), round(top * scale), side, side)


def _pixels(image: QtGui.QImage, box) -> np.ndarray:
    x, y, w, h = box
    part = image.copy(x, y, w, h).convertToFormat(QtGui.QImage.Format.Format_RGB32)
    return np.frombuffer(part.constBits(), np.uint32, w * h).reshape(h, w).copy()


def test_png_at_300_dpi_is_painted_at_that_resolution(shown_panel, tmp_path):
    """Markers, lines and text drawn afresh at 300 dpi: the image is not the screen's
    bitmap enlarged (whose marker edges are blocks of a few colours)."""
    panel, _ = shown_panel
    figure = panel.figures()["symmetry"]
    screen = QtGui.QImage(str(panel.export_figure("symmetry", tmp_path / "screen.png")))
    sharp = QtGui.QImage(str(panel.export_figure("symmetry", tmp_path / "print.png",
                                                 dpi=300)))
    scale = 300 / figure.logicalDpiX()
    assert screen.size() == figure.export_size()
    assert sharp.width() == round(figure.width() * scale)
    assert sharp.height() == round(figure.export_size().height() * scale)
    assert round(sharp.dotsPerMeterX() * 0.0254) == 300
    enlarged = screen.scaled(sharp.size(), QtCore.Qt.AspectRatioMode.IgnoreAspectRatio,
                             QtCore.Qt.TransformationMode.FastTransformation)
    box = _marker_box(figure, scale)
    drawn, blown_up = _pixels(sharp, box), _pixels(enlarged, box)
    assert len(np.unique(drawn)) > 1.5 * len(np.unique(blown_up))   # finer edge shades
    assert np.mean(drawn != blown_up) > 0.05


def _provenance_of_files(folder, name):
    """The record read back from <name>.png (text chunks), .svg (<metadata>) and .csv
    (comment lines)."""
    import xml.etree.ElementTree as ET

    from posviz.document.provenance import NAMESPACE, read_comment_lines
    image = QtGui.QImage(str(folder / f"{name}.png"))
    png = {key: image.text(key) for key in image.textKeys()}
    root = ET.parse(folder / f"{name}.svg").getroot()
    entries = root.findall(f"{{http://www.w3.org/2000/svg}}metadata/"
                           f"{{{NAMESPACE}}}provenance/{{{NAMESPACE}}}entry")
    svg = {entry.get("key"): entry.text or "" for entry in entries}
    with open(folder / f"{name}.csv", encoding="utf-8") as handle:
        table = read_comment_lines(handle)
    return png, svg, table


def test_every_exported_file_says_what_produced_it(shown_panel, session, tmp_path):
    import posviz
    panel, ev = shown_panel
    session.select(Selection(layer=3, head=2))
    panel.set_provenance({"text": TEXT})
    panel.export_all(tmp_path, formats=("png", "svg"))
    for name in ("attention", "symmetry"):
        png, svg, table = _provenance_of_files(tmp_path, name)
        table.pop("no table", None)
        assert png == svg == table, name
        assert png["posviz"] == posviz.__version__
        assert png["model"].startswith("built-in (") and "pe=sinusoidal" in png["model"]
        # the MLP's real width (4 × d by default), not the option's 0 that stands for it
        width = 4 * ev.reference.extras["config"]["d_model"]
        assert f"d_ff={width}," in png["model"] and "d_ff=0" not in png["model"]
        assert png["text"] == TEXT
        assert png["order"] == ",".join(str(i) for i in ev.order)
        assert png["figure"] == name
    png, _, _ = _provenance_of_files(tmp_path, "attention")
    assert (png["layer"], png["head"]) == ("3", "2")
    for name, shows in (("token_change", ("3", None)), ("symmetry", (None, None)),
                        ("encoding_similarity", (None, None))):  # what each declares;
        png, _, _ = _provenance_of_files(tmp_path, name)    # none: no entry at all
        assert (png.get("layer"), png.get("head")) == shows, name
    header, rows = read_csv(tmp_path / "token_change.csv")
    assert header == ["index", "token", "change"]
    assert rows[0][:2] == ["0", ev.reference.tokens[0]]


def test_the_window_exports_the_text_as_typed_not_its_tokens_joined(qtbot, tmp_path):
    """Without facts set by its caller (as in the window), the panel's provenance holds
    the session's text as typed while the session holds that text's tokens."""
    from posviz.gui.settings import make_settings
    typed = "The cat, sat.  Then   it slept!"
    session = Session(BuiltinBackend(ModelConfig()), typed)
    ev = Engine(session.backend).evaluate(session.seq, session.order, session.positions)
    assert " ".join(ev.seq.tokens) != typed
    panel = PlotsPanel(make_settings())
    panel.set_session(session)
    qtbot.addWidget(panel)
    panel.show_evaluation(Shown(ev, build_views(ev, mosaic_look(session.selection))))
    panel.export_figure("token_change", tmp_path / "token_change.csv")
    from posviz.document.provenance import read_comment_lines
    with open(tmp_path / "token_change.csv", encoding="utf-8") as handle:
        assert read_comment_lines(handle)["text"] == typed
    session.set_text("a new text not yet run")      # the figures still show the old one
    assert panel.provenance()["text"] == " ".join(ev.seq.tokens)


def test_cli_export_files_say_what_produced_them(tmp_path, capsys):
    out = tmp_path / "figs"
    status = cli.main(["export", "--text", "a small cat sat", "--order", "3,2,1,0",
                       "--out", str(out), "--layer", "2", "--head", "1", "--pe", "rope",
                       "--dpi", "150",
                       "--layers", "2", "--heads", "2", "--d-model", "16"])
    assert status == 0
    png, svg, table = _provenance_of_files(out, "attention")
    assert png == svg == table
    assert png["text"] == "a small cat sat" and png["order"] == "3,2,1,0"
    assert (png["layer"], png["head"]) == ("2", "1")
    assert "pe=rope" in png["model"] and "layers=2" in png["model"]
    assert "d_ff=64," in png["model"]           # 4 × d for the default, not 0
    image = QtGui.QImage(str(out / "attention.png"))
    assert round(image.dotsPerMeterX() * 0.0254) == 150
    # with RoPE nothing is added to the embeddings: no placeholder files for the tables
    for name in ("encoding", "encoding_similarity"):
        assert not list(out.glob(f"{name}.*")), name
    assert (out / "relative_profile.png").is_file()


def test_figure_menu_export_asks_resolution_and_remembers_the_folder(
        shown_panel, tmp_path, monkeypatch):
    from PySide6 import QtWidgets

    from posviz.gui.settings import make_settings
    panel, _ = shown_panel
    folder = tmp_path / "paper"
    folder.mkdir()
    offered = []

    def save_as(parent, caption, start, filters):
        offered.append(start)
        return str(folder / "fig.png"), ""

    from posviz.gui.plots import exporting
    monkeypatch.setattr(exporting, "save_file_name", lambda *a: save_as(*a)[0])
    monkeypatch.setattr(QtWidgets.QInputDialog, "getInt",
                        staticmethod(lambda *a, **k: (200, True)))
    figure = panel.figures()["symmetry"]
    action = next(a for a in figure.heading.actions() if a.text() == "Export figure as PNG…")
    action.trigger()
    image = QtGui.QImage(str(folder / "fig.png"))
    # at its own size (the panel's twin at own_size.PANEL_SIZE), whatever the window's
    twin = panel.drawn_alone()
    own = twin.laid_out("symmetry").width()
    assert own != figure.width()
    assert image.width() == round(own * 200 / figure.logicalDpiX())
    assert image.text("figure") == "symmetry"
    assert make_settings().value("export/folder") == str(folder)
    action.trigger()                                  # the next one starts there
    assert offered[-1] == str(folder / "symmetry.png")


def png_dpi(path) -> tuple[float, float] | None:
    """The (x, y) dots per inch a PNG's pHYs chunk records (None without one), read from
    the file's bytes as the PNG specification lays them out, not through Qt."""
    import struct
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    at = 8
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        if kind == b"pHYs":
            x, y, unit = struct.unpack(">IIB", data[at + 8:at + 17])
            assert unit == 1                                   # the metre
            return x * 0.0254, y * 0.0254
        at += 12 + length
    return None


def test_file_export_dialog_writes_pngs_at_the_dpi_asked(qtbot, window, tmp_path, monkeypatch):
    """File > Export at 150 dpi: every PNG records 150 dpi and holds each figure's own
    size in inches at 150 dpi (as the figure menu and posviz export do); the choice is
    remembered for the next export."""
    from PySide6.QtWidgets import QDialog

    from posviz.gui.export_dialog import ExportDialog

    def choose(dialog):
        dialog.folder_edit.setText(str(tmp_path / "out"))
        dialog.svg.setChecked(False)
        dialog.csv.setChecked(False)
        dialog.by_dpi.setChecked(True)
        dialog.dpi_spin.setValue(150)
        return QDialog.Accepted
    monkeypatch.setattr(ExportDialog, "exec", choose)
    window.export_action.trigger()
    QtWidgets.QApplication.processEvents()      # the tab shown again, laid out as before
    files = sorted((tmp_path / "out").glob("*.png"))
    assert len(files) == len(window.plots.figures())
    screen_dpi = window.plots.logicalDpiX()
    from posviz.gui.plots.own_size import figure_panel
    twin = window.plots.drawn_alone()              # the figures at their own size
    for path in files:
        x, y = png_dpi(path)
        assert round(x) == round(y) == 150, path.name
        # maps of queries × keys in a twin as tall as makes their cells square
        figure = figure_panel(twin, path.stem, twin.drawn_alone).laid_out(path.stem)
        image = QtGui.QImage(str(path))
        width = figure.export_size().width()    # the mosaic's: as wide as its tiles
        assert abs(image.width() - width * 150 / screen_dpi) <= 1, path.name
        height = figure.export_size().height()          # a note elided on screen: whole
        assert abs(image.height() - height * 150 / screen_dpi) <= 1, path.name
    seen = []
    monkeypatch.setattr(ExportDialog, "exec", lambda dialog: seen.append(
        dialog.dpi_spin.value()) or QDialog.Rejected)
    window.export_action.trigger()
    assert seen == [150]


def test_file_export_dialog_opens_with_the_choices_of_the_last_export(qtbot, window, tmp_path,
                                                                     monkeypatch):
    """The PDF tick (and every other choice) was forgotten between two exports."""
    from PySide6.QtWidgets import QDialog

    from posviz.gui.export_dialog import CHOICES_KEY, ExportDialog

    def choose(dialog):
        dialog.folder_edit.setText(str(tmp_path / "out"))
        dialog.png.setChecked(False)
        dialog.pdf.setChecked(True)
        dialog.csv.setChecked(False)
        dialog.by_width.setChecked(True)
        dialog.width_spin.setValue(1200)
        return QDialog.Accepted
    monkeypatch.setattr(ExportDialog, "exec", choose)
    window.export_action.trigger()
    assert list((tmp_path / "out").glob("*.pdf")) and \
        not list((tmp_path / "out").glob("*.png"))
    seen = []
    monkeypatch.setattr(ExportDialog, "exec", lambda dialog: seen.append(
        dialog.choices()) or QDialog.Rejected)
    window.export_action.trigger()
    assert seen == [{"formats": ["svg", "pdf"], "size": "width", "width": 1200,
                     "csv": False}]
    window.settings.setValue(CHOICES_KEY, "[not json")           # a damaged entry
    window.export_action.trigger()
    assert seen[-1]["formats"] == ["png", "svg"] and seen[-1]["csv"] is True


def test_exports_hold_the_figure_not_its_controls(shown_panel, tmp_path):
    """The relative profile's range control is on screen only: the exported PNG is
    blank where it sits, and neither the SVG nor the PDF carries its text."""
    panel, _ = shown_panel
    figure = panel.figures()["relative_profile"]
    panel.tabs.setCurrentIndex(next(i for i in range(panel.tabs.count())
                                     if panel.tabs.widget(i).isAncestorOf(figure)))
    QtCore.QCoreApplication.processEvents()
    assert figure.span.isVisible() and figure.span.currentText().startswith("Δ range")
    box = figure.span.geometry()
    image = figure.render_image().convertToFormat(QtGui.QImage.Format.Format_RGB32)
    pixels = np.frombuffer(image.constBits(), np.uint32,
                           image.width() * image.height()).reshape(image.height(), -1)
    inside = pixels[box.top():box.bottom(), box.left():box.right()]
    assert (inside == pixels[box.top(), box.left()]).all(), "the control was drawn"
    svg = figure.export_svg(tmp_path / "profile.svg").read_text(encoding="utf-8")
    assert "range" not in svg and "key − query" in svg
    figure.export_pdf(tmp_path / "profile.pdf")
    assert figure.span.isVisible()          # back on screen after the exports


def test_an_export_is_laid_out_as_a_painted_figure(shown_panel, tmp_path):
    """The axes take the room their labels need while painting: a figure exported
    before it was ever painted (its tab not opened, scrolled away) comes out as it does
    once painted, not with turned key labels under the axis title."""
    panel, _ = shown_panel
    figure = panel.figures()["attention"]
    first = QtGui.QImage(str(figure.export(tmp_path / "first.png", dpi=150)))
    for _ in range(3):
        figure.grab()
        QtCore.QCoreApplication.processEvents()
    assert first == QtGui.QImage(str(figure.export(tmp_path / "painted.png", dpi=150)))


def test_a_figure_stopped_mid_write_leaves_no_file_and_keeps_the_older_one(tmp_path):
    """Every writer (posviz export, File > Export, a figure's save from Python, compare
    and extend --out) writes through document.files.whole_file: stopped midway (Ctrl+C
    is a KeyboardInterrupt), no part of the file is left under its name, nor beside it,
    and a file of that name written before stays whole."""
    from posviz.document.files import whole_file

    def half(temporary):
        temporary.write_text("half a ta")
        raise KeyboardInterrupt
    older = tmp_path / "attention.csv"
    older.write_text("whole\n")
    with pytest.raises(KeyboardInterrupt):
        whole_file(older, half)
    assert older.read_text() == "whole\n" and [f.name for f in tmp_path.iterdir()] == [
        "attention.csv"]
    with pytest.raises(OSError) as failed:           # an OSError names the file asked for
        whole_file(tmp_path / "x.csv", lambda temporary: open(temporary.parent / "no" / "x"))
    assert failed.value.filename == str(tmp_path / "x.csv")
    import posviz
    figure = posviz.load(layers=1, progress=False).compare("the cat sat").figure("symmetry")
    from posviz.gui.plots import base
    stop = pytest.MonkeyPatch()
    stop.setattr(base, "write_table", lambda handle, *_: (handle.write("1,2\n"), half(
        tmp_path / "unused")))
    try:
        with pytest.raises(KeyboardInterrupt):
            figure.save(tmp_path / "symmetry.csv")
    finally:
        stop.undo()
    assert sorted(f.name for f in tmp_path.iterdir()) == ["attention.csv", "unused"]
    assert figure.save(tmp_path / "symmetry.csv").read_text().startswith("# ")


def test_cli_export_s_progress_tells_the_drawing_before_the_writing(tmp_path, capsys):
    """A 3,000-word export said "about 1 s left", then drew its figures for 10-18 s with
    nothing said (a user's run): the drawing is a step of its own."""
    status = cli.main(["export", "--text", "a small cat sat", "--out", str(tmp_path),
                       "--format", "png", "--no-csv", "--layers", "1", "--progress"])
    assert status == 0
    lines = capsys.readouterr().err.splitlines()
    drawing = lines.index("posviz: drawing the figures, each at its own size")
    # its first part next (on a busy machine a line told again may come between)
    views = next(line for line in lines[drawing + 1:] if "(" not in line)
    assert views.startswith("posviz: drawing the figures: the views of the runs, about "), \
        lines[drawing:]
    # then 10-18 s at 3,000 words told nothing: each figure is counted as it is drawn
    counted = [line for line in lines if line.startswith("posviz: drawing figure ")]
    total = int(re.search(r"of (\d+):", counted[0]).group(1))
    assert [int(re.search(r"figure (\d+) of", line).group(1)) for line in counted
            if "(" not in line] == list(range(1, total + 1)), counted
    # each with its time left (a line told again on a busy machine: its seconds)
    assert all(re.search(r", about \d+ s left$", line) for line in counted
               if not line.endswith(" so far)")), counted
    writing = [line for line in lines if line.startswith("posviz: writing ")]
    assert re.fullmatch(rf"posviz: writing {total} figures: 1 of {total}, about \d+ s left",
                        writing[0]), writing
    assert lines.index(counted[-1]) < lines.index(writing[0])


def test_an_export_refuses_a_text_too_long_before_it_imports_the_plots(tmp_path):
    """posviz report refuses a text longer than the model's positions at once; export
    imported the plots' modules (Qt, pyqtgraph) first: 3.4 s, at load 13, before the
    same refusal."""
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    script = ("import sys\nfrom posviz.cli import main\n"
              f"code = main(['export', '--pe', 'learned', '--text', 'word ' * 3000, "
              f"'--out', {str(tmp_path / 'out')!r}])\n"
              "print(code, 'PySide6.QtWidgets' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True,
                            text=True, timeout=300, env={**os.environ, "PYTHONPATH": str(root)})
    assert result.stdout.split() == ["2", "False"], (result.stdout, result.stderr)
    assert "positions" in result.stderr, result.stderr
