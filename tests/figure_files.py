"""What an exported figure file holds: its size (PNG, SVG, PDF), and where an SVG's text
lies, each <text> element's string and its extent in the picture (through its groups'
transforms), measured as a viewer lays text out."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import numpy as np
from PySide6 import QtGui

from posviz.gui.plots.exporting import drawn_font

SVG = "{http://www.w3.org/2000/svg}"


def viewer_width(element: ET.Element) -> float:
    """How wide a viewer draws a <text> element (its tspans included): unhinted advances
    of the glyphs at the size written, as librsvg and browsers lay text out."""
    def advance(text: str, attrs: dict) -> float:
        family = attrs["font-family"].split(",")[0].strip("'\" ")
        raw = QtGui.QRawFont.fromFont(drawn_font({**attrs, "font-family": family}))
        raw.setPixelSize(float(attrs["font-size"]))
        glyphs = raw.glyphIndexesForString(text)
        flags = QtGui.QRawFont.LayoutFlag.UseDesignMetrics
        return sum(point.x() for point in raw.advancesForGlyphIndexes(glyphs, flags))
    attrs = dict(element.attrib)
    width = advance(element.text or "", attrs)
    for span in element:
        width += advance(span.text or "", {**attrs, **span.attrib})
        width += advance(span.tail or "", attrs)
    return width


def text_lines(path) -> tuple[float, list[dict]]:
    """The SVG's width, and each <text> element: its string, font size and family, the
    left and right ends of its extent in the picture and its baseline (``y``)."""
    root = ET.parse(path).getroot()
    found = []

    def walk(element: ET.Element, matrix: np.ndarray) -> None:
        transform = re.match(r"matrix\(([^)]*)\)", element.get("transform", ""))
        if transform:
            a, b, c, d, e, f = (float(v) for v in transform.group(1).split(","))
            matrix = matrix @ np.array([[a, c, e], [b, d, f], [0, 0, 1]])
        if element.tag != SVG + "text":
            for child in element:
                walk(child, matrix)
            return
        x, y = float(element.get("x")), float(element.get("y"))
        ends = [matrix @ [x, y, 1], matrix @ [x + viewer_width(element), y, 1]]
        found.append({"text": "".join(element.itertext()), "size": element.get("font-size"),
                      "family": element.get("font-family"),
                      "left": min(e[0] for e in ends), "right": max(e[0] for e in ends),
                      "y": float(ends[0][1])})
    walk(root, np.eye(3))
    return float(root.get("viewBox").split()[2]), found


def picture_size(path) -> tuple[float, float]:
    """(width, height) of an SVG's picture, from its viewBox."""
    box = ET.parse(path).getroot().get("viewBox").split()
    return float(box[2]), float(box[3])


def pixels(path) -> tuple[float, float]:
    """(width, height) of a written PNG, SVG or PDF, in its own unit (pixels or points)."""
    suffix = path.suffix
    if suffix == ".png":
        image = QtGui.QImage(str(path))
        return image.width(), image.height()
    if suffix == ".svg":
        found = re.search(r'<svg[^>]*\swidth="([\d.]+)\w*"\s+height="([\d.]+)',
                          path.read_text(encoding="utf-8"))
        return float(found.group(1)), float(found.group(2))
    box = re.search(rb"/MediaBox \[\s*([\d.]+) ([\d.]+) ([\d.]+) ([\d.]+)",
                    path.read_bytes())
    return float(box.group(3)) - float(box.group(1)), float(box.group(4)) - float(box.group(2))


_IMAGE = re.compile(rb"<<((?:(?!>>).)*?/Subtype /Image(?:(?!>>).)*)>>\s*stream\r?\n", re.S)


def pdf_images(data: bytes) -> list[dict]:
    """Each image XObject of a PDF Qt wrote: its filter (b"/FlateDecode", b"/DCTDecode"
    or b"" for none), width, height, colour space, and for an unfiltered or Flate RGB
    image its pixels ((height, width, 3) uint8)."""
    import zlib
    found = []
    for match in _IMAGE.finditer(data):
        head = match.group(1)

        def value(key: bytes) -> bytes:
            hit = re.search(rb"/" + key + rb"\s+(/?\w+)", head)
            return hit.group(1) if hit else b""
        image = {"filter": value(b"Filter"), "width": int(value(b"Width")),
                 "height": int(value(b"Height")), "space": value(b"ColorSpace")}
        body = data[match.end():]
        if image["filter"] == b"/FlateDecode":
            body = zlib.decompressobj().decompress(body)
        if image["filter"] in (b"", b"/FlateDecode") and image["space"] == b"/DeviceRGB":
            size = image["width"] * image["height"] * 3
            image["pixels"] = np.frombuffer(body[:size], np.uint8).reshape(
                image["height"], image["width"], 3)
        found.append(image)
    return found
