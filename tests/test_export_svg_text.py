"""An exported SVG's text reads as in its PNG in any viewer, not only in Qt's: each line is
one <text> element at the size Qt laid it out in, so librsvg, browsers and Inkscape
neither draw the pieces of a line over each other (titles and labels holding Δ or θ) nor
run a line that fits the figure past its edge (a paper check's subtitle)."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import re  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
from types import SimpleNamespace  # noqa: E402

import numpy as np  # noqa: E402
import pyqtgraph as pg  # noqa: E402
import pytest  # noqa: E402
from PySide6 import QtGui  # noqa: E402

from posviz.analysis.engine import Engine  # noqa: E402
from posviz.document.session import Session  # noqa: E402
from posviz.gui.plots import PlotsPanel, mosaic_look, style  # noqa: E402
from posviz.gui.plots.exporting import drawn_font, whole_text_runs  # noqa: E402
from posviz.models.builtin.backend import BuiltinBackend  # noqa: E402
from posviz.models.config import ModelConfig  # noqa: E402
from posviz.views.model import model_views  # noqa: E402
from posviz.views.shown import Shown, build_views  # noqa: E402
from figure_files import text_lines  # noqa: E402

TEXT = "the cat sat on the mat because it was warm"


def text_element(x: float, text: str, weight: int = 400, y: float = 12.0625) -> str:
    return (f'<text fill="#202020" xml:space="preserve" x="{x:g}" y="{y:g}" '
            f'font-family="Sans Serif" font-size="13" font-weight="{weight}" '
            f'font-style="normal" \n >{text}</text>')


def test_the_pieces_of_a_line_become_one_text_element(qapp):
    """Pieces that follow each other as Qt laid them out join, a bold one as a <tspan>;
    labels apart on the same baseline, and a line below, stay their own elements."""
    metrics = QtGui.QFontMetricsF(drawn_font({"font-family": "Sans Serif",
                                              "font-size": "13", "font-weight": "700"}))
    x, line = 0.0, []
    for piece in ("cosine of PE(p+", "Δ) ", "against distance ", "Δ"):
        line.append(text_element(x, piece, 700))
        x += metrics.horizontalAdvance(piece)
    plain = QtGui.QFontMetricsF(drawn_font({"font-family": "Sans Serif", "font-size": "13"}))
    mixed = [text_element(0, "Cosine ", y=40), text_element(
        plain.horizontalAdvance("Cosine "), "0.98", 700, y=40)]
    ticks = [text_element(x + 40, "-5"), text_element(x + 90, "0"),
             text_element(0, "θ = 10000", y=60)]
    svg = "<g>\n" + "\n".join(line + mixed + ticks) + "\n</g>"
    texts = re.findall(r"<text [^>]*>(.*?)</text>", whole_text_runs(svg))
    assert texts == ["cosine of PE(p+Δ) against distance Δ",
                     'Cosine <tspan font-weight="700">0.98</tspan>', "-5", "0", "θ = 10000"]


def plain(html: str) -> str:
    document = QtGui.QTextDocument()
    document.setHtml(html)
    return document.toPlainText()


def visible_strings(figure) -> list[str]:
    """The figure's title and the labels of the axes of the plot it shows."""
    canvas = figure.stack.currentWidget()
    assert isinstance(canvas, pg.GraphicsView), figure.name         # a plot, not a message
    labels = [item.label.toPlainText().strip() for item in canvas.scene().items()
              if isinstance(item, pg.AxisItem) and item.isVisible() and item.label.isVisible()
              and item.label.toPlainText().strip()]
    return [plain(figure.heading.text()).strip()] + labels


def panel_for(qtbot, backend) -> PlotsPanel:
    session = Session(backend, TEXT)
    session.reverse()
    ev = Engine(session.backend).evaluate(session.seq, session.order, session.positions)
    panel = PlotsPanel()
    panel.set_session(session)
    qtbot.addWidget(panel)
    panel.resize(1800, 900)         # wide enough for every title on one line
    panel.show()
    qtbot.waitExposed(panel)
    panel.show_evaluation(Shown(ev, build_views(ev, mosaic_look(session.selection)),
                                model_views(backend, ev)))
    return panel


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    """A tiny random Llama: RoPE, whose figures' titles name θ."""
    pytest.importorskip("transformers")
    from test_hf import load_tiny
    return load_tiny(("llama",), tmp_path_factory.mktemp("llama"))["llama"]


@pytest.mark.parametrize("model, names, letter", [
    ("built-in", ("relative_profile", "encoding"), "Δ"),
    ("llama", ("encoding", "relative_profile"), "θ")])
def test_titles_and_axis_labels_are_each_one_text_element(qtbot, tmp_path, request,
                                                          model, names, letter):
    """Qt writes a line with a Greek letter in pieces, one per script, each at an x of
    its own metrics: the SVG must hold each title and axis label whole in one element."""
    backend = (BuiltinBackend(ModelConfig()) if model == "built-in"
               else request.getfixturevalue("llama"))
    panel = panel_for(qtbot, backend)
    greek = 0
    for name in names:
        figure = panel.figures()[name]
        path = panel.export_figure(name, tmp_path / f"{name}.svg")
        texts = [line["text"] for line in text_lines(path)[1]]
        for string in visible_strings(figure):
            assert any(string in text for text in texts), (name, string, texts)
            greek += letter in string
    assert greek >= 2         # the letters that split a line are there to be split


def chi_check() -> SimpleNamespace:
    spread = list(np.linspace(0.27, 0.08, 32))
    return SimpleNamespace(name="chi2023", weights="random", holds=True, citation="c",
                           reports="r", measures="m", tests="t",
                           values={"variance_by_position": spread},
                           ran_on="the built-in model, untrained: random weights drawn from "
                                  "seed 0 (2 layers, 4 heads, width 64), no positions, causal")


def test_a_subtitle_that_fits_the_figure_fits_its_svg(qtbot, tmp_path):
    """The paper check's subtitle, a few pixels narrower than the figure in Qt's layout,
    must not run past the SVG's right edge in a viewer: the SVG's sizes are those Qt drew
    at (10 pt at 96 dpi: 13 px, not the 13.33 px written before, 2.6 % wider)."""
    from posviz.gui.experiments.figure import ExperimentFigure
    figure = ExperimentFigure()
    qtbot.addWidget(figure)
    check = chi_check()
    figure.show_paper(check)
    subtitle = f"Ran on {check.ran_on}"
    font = style.text_font(style.TITLE_PT)
    margins = figure.heading.contentsMargins()
    width = QtGui.QFontMetricsF(font).horizontalAdvance(subtitle) + margins.left() \
        + margins.right()
    figure.resize(int(width) + 4, 600)
    figure.show()
    qtbot.waitExposed(figure)
    picture_width, lines = text_lines(figure.export(tmp_path / "chi.svg"))
    assert any(line["text"].strip() == subtitle for line in lines)      # one line in Qt
    for line in lines:
        assert line["right"] <= picture_width + 0.5, (line["text"], line["right"])
    drawn = QtGui.QRawFont.fromFont(font).pixelSize()                   # as Qt draws it
    assert f"{drawn:g}" in {line["size"] for line in lines}
    # the font Qt resolved its alias "Sans Serif" to, then a family every viewer knows
    resolved = QtGui.QFontInfo(font).family()
    assert {line["family"] for line in lines} == {f"'{resolved}', sans-serif"}


def ink_columns(image: QtGui.QImage, top: int, bottom: int) -> np.ndarray:
    """Which pixel columns of rows top..bottom hold dark ink."""
    grey = image.convertToFormat(QtGui.QImage.Format.Format_Grayscale8)
    pixels = np.frombuffer(grey.constBits(), np.uint8).reshape(
        grey.height(), grey.bytesPerLine())[top:bottom, :grey.width()]
    return (pixels < 160).any(axis=0)


@pytest.mark.skipif(shutil.which("rsvg-convert") is None, reason="needs rsvg-convert")
def test_librsvg_draws_the_title_where_the_png_has_it(qtbot, tmp_path):
    """GNOME's renderer draws the relative-distance profile's title (pieces split at
    each Δ) with its letters in the columns of the PNG's, none over another."""
    panel = panel_for(qtbot, BuiltinBackend(ModelConfig()))
    figure = panel.figures()["relative_profile"]
    svg = panel.export_figure("relative_profile", tmp_path / "profile.svg")
    png = panel.export_figure("relative_profile", tmp_path / "profile.png", scale=1.0)
    drawn = tmp_path / "rsvg.png"
    subprocess.run(["rsvg-convert", "-o", str(drawn), str(svg)], check=True, timeout=60)
    rows = (0, figure.heading.height())
    ours, theirs = (ink_columns(QtGui.QImage(str(p)), *rows) for p in (png, drawn))
    assert ours.shape == theirs.shape and ours.sum() > 300

    def near(columns):                  # antialiasing may move an edge by a column
        return columns | np.roll(columns, 1) | np.roll(columns, -1)
    apart = (ours & ~near(theirs)) | (theirs & ~near(ours))
    assert apart.sum() <= 0.02 * ours.sum(), np.flatnonzero(apart)
