"""Every exported SVG is opaque white throughout, as its PNG: the widgets paint no
background, and the bands of the provenance subtitle and the note under a plot were
transparent (unreadable on a dark background) in 9 of the window's 10 figures."""
import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import re  # noqa: E402
import xml.etree.ElementTree as ET  # noqa: E402

from posviz.models.builtin.backend import BuiltinBackend  # noqa: E402
from posviz.models.config import ModelConfig  # noqa: E402
from test_export_svg_text import chi_check, panel_for  # noqa: E402

SVG = "{http://www.w3.org/2000/svg}"
WHITE = {"#ffffff", "white", "#fff"}


def first_paint(root: ET.Element) -> dict:
    """The SVG's first drawn element (rect, path, polygon, image or text): its tag and
    attributes, with those it inherits from its groups (fill, fill-opacity, opacity)."""
    parents = {child: parent for parent in root.iter() for child in parent}
    for element in root.iter():
        tag = element.tag.removeprefix(SVG)
        if tag in ("rect", "path", "polygon", "image", "text"):
            attributes, up = dict(element.attrib), parents.get(element)
            while up is not None:
                for key, value in up.attrib.items():
                    attributes.setdefault(key, value)
                up = parents.get(up)
            return {"tag": tag, **attributes}
    raise AssertionError("nothing drawn")


def covers_in_white(path) -> bool:
    """The first thing the SVG draws is an opaque white rectangle over its whole viewBox."""
    root = ET.parse(path).getroot()
    _, _, width, height = (float(v) for v in root.get("viewBox").split())
    first = first_paint(root)
    fill = first.get("fill", "").lower()
    opaque = first.get("fill-opacity", "1") in ("1", "1.0") and first.get("opacity", "1") == "1"
    if first["tag"] == "rect":
        box = [float(first.get(k, 0)) for k in ("x", "y", "width", "height")]
    else:               # a path of the four corners, as Qt writes a filled rectangle
        numbers = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?", first.get("d", ""))]
        xs, ys = numbers[0::2], numbers[1::2]
        box = [min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys)] if xs else []
    return fill in WHITE and opaque and box == [0, 0, width, height]


def test_every_window_figure_svg_is_white_throughout(qtbot, tmp_path):
    panel = panel_for(qtbot, BuiltinBackend(ModelConfig()))
    panel.export_all(tmp_path, formats=("svg",))
    files = sorted(tmp_path.glob("*.svg"))
    assert len(files) >= 5, files
    assert [f.name for f in files if not covers_in_white(f)] == []


def test_a_paper_check_svg_is_white_throughout(qtbot, tmp_path):
    from posviz.gui.experiments.figure import ExperimentFigure
    figure = ExperimentFigure()
    qtbot.addWidget(figure)
    figure.show_paper(chi_check())
    figure.resize(900, 600)
    figure.show()
    qtbot.waitExposed(figure)
    assert covers_in_white(figure.export(tmp_path / "chi2023.svg"))
