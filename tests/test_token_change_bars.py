"""The per-token change bars of a long text: every token's bar shows, on screen and in
every export (bars under a pixel wide fell between pixels and left blank stretches)."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import subprocess  # noqa: E402
from types import SimpleNamespace  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from PySide6 import QtCore, QtGui  # noqa: E402

from posviz.gui.plots import style  # noqa: E402
from posviz.gui.plots.token_change import UNCHANGED_GREY, TokenChangeFigure  # noqa: E402
from conftest import on_screen  # noqa: E402

FLOOR = 0.05
CHANGED, UNCHANGED = QtGui.QColor(style.CURVE_COLOURS[1]), QtGui.QColor(*UNCHANGED_GREY)


def long_text(qtbot, n=700, size=(800, 330)):
    """The figure at ``size`` (a token's slot a pixel wide or more at 700, as in a
    1024 × 700 window) showing ``n`` tokens: changes 0.03–0.25, about one in
    six under the floor (grey)."""
    change = np.random.default_rng(0).uniform(0.03, 0.25, n)
    return showing(qtbot, change, size), change


def showing(qtbot, change: np.ndarray, size) -> TokenChangeFigure:
    """The figure at ``size`` showing the (n,) ``change`` of tokens w0, w1, …"""
    figure = on_screen(qtbot, TokenChangeFigure(), *size)
    tokens = tuple(f"w{i}" for i in range(len(change)))
    ev = SimpleNamespace(comparison=SimpleNamespace(token_change=change[None], floor=FLOOR),
                         reference=SimpleNamespace(tokens=tokens))
    figure.update_from(SimpleNamespace(evaluation=ev), 0, 0)
    figure._settle()
    return figure


def near(rgb: np.ndarray, colour: QtGui.QColor, within=40) -> np.ndarray:
    """Which pixels of ``rgb`` (…, 3) are ``colour`` give or take ``within`` per channel."""
    return np.abs(rgb.astype(int) - colour.getRgb()[:3]).max(axis=-1) <= within


def bar_coloured(rgb: np.ndarray, within=40) -> np.ndarray:
    """Which pixels of ``rgb`` (…, 3) have a bar's colour: orange, grey or a mix of the
    two (where two bars meet inside a pixel), not one paled towards the background."""
    low, high = (np.array(c.getRgb()[:3], float) for c in (UNCHANGED, CHANGED))
    along = np.clip(((rgb - low) @ (high - low)) / ((high - low) @ (high - low)), 0, 1)
    nearest = low + along[..., None] * (high - low)
    return np.abs(rgb - nearest).max(axis=-1) <= within


def rgb_of(image: QtGui.QImage) -> np.ndarray:
    """The (height, width, 3) pixels of ``image``."""
    image = image.convertToFormat(QtGui.QImage.Format.Format_RGB888)
    row = image.bytesPerLine()
    data = np.frombuffer(image.constBits(), np.uint8, row * image.height())
    return data.reshape(image.height(), row)[:, :image.width() * 3].reshape(
        image.height(), image.width(), 3).copy()      # its own: the image is freed


def missing_bars(figure, change, rgb: np.ndarray, scale: float) -> list[int]:
    """The tokens whose columns (the pixel columns under the middle half of their slot)
    hold no pixel of a bar's colour inside the plot's view, in an image of the figure
    drawn at ``scale``."""
    view = figure.plot.vb
    origin = figure.canvas.mapTo(figure, QtCore.QPoint(0, 0))
    box = view.sceneBoundingRect().translated(origin.x(), origin.y())
    rows = rgb[int(box.top() * scale) + 1:int(box.bottom() * scale) - 1]
    missing = []
    for i in range(len(change)):
        left, right = (int((view.mapViewToScene(QtCore.QPointF(x, 0)).x() + origin.x())
                           * scale) for x in (i + 0.25, i + 0.75))
        if not bar_coloured(rows[:, left:right + 1]).any():
            missing.append(i)
    return missing


def blank_columns(figure, rgb: np.ndarray, scale: float) -> float:
    """The fraction of the pixel columns under the tokens' slots (token 0's left edge
    to the last one's right) in which no pixel has a bar's colour."""
    view = figure.plot.vb
    origin = figure.canvas.mapTo(figure, QtCore.QPoint(0, 0))
    box = view.sceneBoundingRect().translated(origin.x(), origin.y())
    rows = rgb[int(box.top() * scale) + 1:int(box.bottom() * scale) - 1]
    n = len(figure.tokens)
    left, right = (view.mapViewToScene(QtCore.QPointF(x, 0)).x() + origin.x()
                   for x in (0, n))
    columns = rows[:, int(np.ceil(left * scale)):int(right * scale)]
    coloured = bar_coloured(columns).any(axis=0)
    return 1 - coloured.mean()


def test_every_token_has_its_bar_on_screen(qtbot):
    """700 tokens in a 1024 × 700 window: blank stretches of about 20 tokens where the
    title counted all 700 and hovering there gave a value."""
    figure, change = long_text(qtbot)
    assert "of 700 tokens beyond" in figure.heading.text()
    assert 0 < (change <= FLOOR).sum() < 700
    rgb = rgb_of(figure.grab().toImage())
    missing = missing_bars(figure, change, rgb, 1.0)
    assert blank_columns(figure, rgb, 1.0) < 0.02
    assert not missing, f"{len(missing)} of {len(change)} tokens without a bar: {missing[:20]}"


@pytest.mark.parametrize("width", [None, 1500])
def test_every_token_has_its_bar_in_a_png(qtbot, width):
    """At 1500 px blocks of bars alternated between thin pale lines and solid bars."""
    figure, change = long_text(qtbot)
    image = figure.render_image(width)
    scale = image.width() / figure.export_size().width()
    missing = missing_bars(figure, change, rgb_of(image), scale)
    assert blank_columns(figure, rgb_of(image), scale) < 0.02
    assert not missing, f"{len(missing)} of {len(change)} tokens without a bar: {missing[:20]}"


def test_a_run_of_bars_is_one_solid_colour_in_a_png(qtbot):
    """A fill drawn in pieces left a pale seam every 50 tokens where the pieces met."""
    figure, change = long_text(qtbot)
    image = figure.render_image(1500)
    scale = image.width() / figure.export_size().width()
    view, origin = figure.plot.vb, figure.canvas.mapTo(figure, QtCore.QPoint(0, 0))
    bottom = view.mapViewToScene(QtCore.QPointF(0, 0.025)).y() + origin.y()  # bars, no ticks
    row = rgb_of(image)[int(bottom * scale)]
    beyond = change > FLOOR
    inner = np.flatnonzero(beyond[1:-1] & beyond[:-2] & beyond[2:]) + 1        # (m,)
    edges = [(view.mapViewToScene(QtCore.QPointF(x, 0)).x() + origin.x()) * scale
             for x in range(len(change) + 1)]
    pale = [i for i in inner
            if not near(row[int(np.ceil(edges[i - 1] + 1)):int(edges[i + 2] - 1)],
                        CHANGED, within=10).all()]
    assert not pale, f"{len(pale)} runs of bars not solid: {pale[:20]}"


def test_every_token_has_its_bar_in_an_svg(qtbot, tmp_path):
    """The SVG was paler than the PDF: bars a fraction of a pixel wide."""
    converter = subprocess.run(["which", "rsvg-convert"], capture_output=True, text=True)
    if converter.returncode:
        pytest.skip("rsvg-convert is not installed")
    figure, change = long_text(qtbot)
    svg = figure.export(tmp_path / "bars.svg")
    png = tmp_path / "bars.png"
    subprocess.run([converter.stdout.strip(), "-z", "2", "-b", "white", "-o", str(png),
                    str(svg)], check=True)
    image = QtGui.QImage(str(png))
    scale = image.width() / figure.export_size().width()
    missing = missing_bars(figure, change, rgb_of(image), scale)
    assert blank_columns(figure, rgb_of(image), scale) < 0.02
    assert not missing, f"{len(missing)} of {len(change)} tokens without a bar: {missing[:20]}"


def test_few_tokens_keep_separate_bars(qtbot):
    """Wide slots keep their bars apart (a gap between neighbours)."""
    figure, change = long_text(qtbot, n=20)
    rgb = rgb_of(figure.grab().toImage())
    assert not missing_bars(figure, change, rgb, 1.0)
    view = figure.plot.vb
    origin = figure.canvas.mapTo(figure, QtCore.QPoint(0, 0))
    x = view.mapViewToScene(QtCore.QPointF(1.0, 0)).x() + origin.x()    # between 0 and 1
    bottom = view.mapViewToScene(QtCore.QPointF(1.0, 0.01)).y() + origin.y()
    assert not near(rgb[int(bottom), int(x) - 1:int(x) + 2], CHANGED).any()


def tallest_last(qtbot, n=701, size=(700, 330)):
    """``n`` tokens in under a pixel each, the last one's change (0.435) the largest,
    as in a 1024 × 700 window (two tokens in one pixel column now and then)."""
    change = np.random.default_rng(1).uniform(0.03, 0.25, n)
    change[-1] = 0.435
    return showing(qtbot, change, size), change


def opaque_top(figure, change, rgb: np.ndarray, scale: float, token: int) -> bool:
    """Whether a pixel column under ``token``'s slot is the changed bars' colour, opaque
    (not paled towards the background), at 95% of the token's height."""
    view, origin = figure.plot.vb, figure.canvas.mapTo(figure, QtCore.QPoint(0, 0))
    y = (view.mapViewToScene(QtCore.QPointF(0, 0.95 * change[token])).y() + origin.y())
    left, right = ((view.mapViewToScene(QtCore.QPointF(x, 0)).x() + origin.x()) * scale
                   for x in (token, token + 1))
    row = rgb[int(y * scale), int(np.floor(left)):int(np.ceil(right))]
    return bool(near(row, CHANGED, within=12).any())


@pytest.mark.parametrize("drawn", ["screen", "png", "svg"])
def test_the_tallest_bar_is_whole_and_opaque_under_a_pixel_a_token(qtbot, tmp_path, drawn):
    """701 tokens in about 620 px: the tallest bar (the last token) showed as a pale
    antialiased column; each pixel column now shows its tallest token."""
    figure, change = tallest_last(qtbot)
    view = figure.plot.vb
    assert 1 / view.viewPixelSize()[0] < 1          # under a pixel a token
    if drawn == "screen":
        image, scale = figure.grab().toImage(), 1.0
    elif drawn == "png":
        image = figure.render_image()
        scale = image.width() / figure.export_size().width()
    else:
        converter = subprocess.run(["which", "rsvg-convert"], capture_output=True, text=True)
        if converter.returncode:
            pytest.skip("rsvg-convert is not installed")
        svg, png = figure.export(tmp_path / "bars.svg"), tmp_path / "bars.png"
        subprocess.run([converter.stdout.strip(), "-b", "white", "-o", str(png), str(svg)],
                       check=True)
        image = QtGui.QImage(str(png))
        scale = image.width() / figure.export_size().width()
    rgb = rgb_of(image)
    assert opaque_top(figure, change, rgb, scale, len(change) - 1)
    tall = [i for i in range(len(change) - 1) if change[i] > 0.24]
    pale = [i for i in tall if not opaque_top(figure, change, rgb, scale, i)]
    assert not pale, f"{len(pale)} of {len(tall)} tall bars pale: {pale[:20]}"


def test_hover_on_a_shared_pixel_names_the_bar_drawn_there(qtbot):
    """Where two tokens share a pixel column the column draws the taller: the hover names
    that token and its value, not the shorter one under the mouse."""
    figure, change = tallest_last(qtbot)
    view, n = figure.plot.vb, len(change)
    edge = [view.mapViewToScene(QtCore.QPointF(x, 0)).x() for x in range(n + 1)]
    j = next(j for j in range(1, n) if 0.3 < edge[j] - np.floor(edge[j]) < 0.9
             and np.floor(edge[j - 1]) < np.floor(edge[j]) - 0.5)
    change[j - 1], change[j] = 0.1, 0.3                 # both beyond the floor
    ev = SimpleNamespace(comparison=SimpleNamespace(token_change=change[None], floor=FLOOR),
                         reference=SimpleNamespace(tokens=tuple(f"w{i}" for i in range(n))))
    figure.update_from(SimpleNamespace(evaluation=ev), 0, 0)
    figure._settle()
    column = np.floor(edge[j])
    under = QtCore.QPointF(column + 0.1, view.mapViewToScene(QtCore.QPointF(0, 0.05)).y())
    assert int(np.floor(view.mapSceneToView(under).x())) == j - 1    # the shorter's slot
    figure._mouse_moved(under)
    assert f"token 'w{j}' changed by 0.3" in figure.hover.text, figure.hover.text
    assert "largest of the 2 tokens in this pixel column" in figure.hover.text
