"""What produced a figure: the record every exported file carries, without Qt.

A PNG holds it in its text chunks, an SVG in a ``<metadata>`` element, a PDF in its XMP
metadata and a CSV as ``# key: value`` lines before its header, so a figure found later
in a paper's folder still says which posviz, model, text, order, layer and head made it.
"""
from __future__ import annotations

import json
from xml.sax.saxutils import escape, quoteattr

from ..models.config import ModelConfig
from ..version import __version__

NAMESPACE = "urn:posviz:provenance"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
KEYS = ("posviz", "model", "text", "tokens", "order", "positions", "layer", "head")


def model_options(extras: dict) -> dict:
    """The options of a model description (a Trace's ``extras`` or a backend's
    ``describe()``), its config's keys brought up, the built-in MLP's width as the number
    (the option's 0 stands for 4 × d)."""
    extras = dict(extras or {})
    config = extras.pop("config", None)
    if isinstance(config, dict):
        extras = {**config, **extras}
    if extras.get("d_ff") == 0 and "d_model" in extras:
        extras["d_ff"] = ModelConfig(d_model=extras["d_model"]).ff_width
    return extras


def describe_model(extras: dict) -> str:
    """One line for the model a Trace came from (its ``extras``): the built-in model
    with its options, or a pretrained one by name and family."""
    extras = model_options(extras)
    name = str(extras.pop("model", "unknown"))
    if not extras:
        return name
    options = ", ".join(f"{key}={_plain(value)}" for key, value in extras.items())
    return f"{name} ({options})"


def record(evaluation, layer: int | None = None, head: int | None = None,
           text: str | None = None, model: str | dict | None = None) -> dict[str, str]:
    """The provenance of a figure of ``evaluation`` (an engine.Evaluation) at ``layer``
    (1..L) and ``head`` (0..h-1); ``text`` and ``model`` (a description, or a backend's
    ``describe()``) when known, else read from the evaluation. Keys are KEYS, in order;
    values are single-line strings."""
    tokens = tuple(evaluation.seq.tokens)
    if model is None:
        model = describe_model(evaluation.reference.extras)
    elif isinstance(model, dict):
        model = describe_model(model)
    positions = evaluation.positions
    facts = {
        "posviz": __version__,
        "model": model,
        "text": text if text is not None else " ".join(tokens),
        "tokens": json.dumps(list(tokens), ensure_ascii=False),
        "order": ",".join(str(int(i)) for i in evaluation.order),
        "positions": f"mode={positions.mode}, offset={positions.offset}",
        "layer": "" if layer is None else str(layer),
        "head": "" if head is None else str(head),
    }
    return {key: _line(value) for key, value in facts.items()}


def typed_text(session, evaluation) -> str | None:
    """The text as typed that ``evaluation`` ran, from ``session`` (a document.Session)
    while it holds that text's tokens; None otherwise (the text has changed since)."""
    if session is None or session.seq != evaluation.seq:
        return None
    return session.text


def comment_lines(facts: dict) -> list[str]:
    """``# key: value`` lines (each ending in a newline) for the top of a CSV file."""
    return [f"# {key}: {_line(value)}\n" for key, value in facts.items()]


def read_comment_lines(lines) -> dict[str, str]:
    """The record written by comment_lines, read back from a file's first lines."""
    facts = {}
    for line in lines:
        if not line.startswith("# "):
            break
        key, _, value = line[2:].rstrip("\r\n").partition(": ")
        facts[key] = value
    return facts


def svg_metadata(facts: dict) -> str:
    """An SVG ``<metadata>`` element holding the record, one ``<entry>`` per key."""
    entries = "".join(f"<entry key={quoteattr(str(key))}>{escape(_line(value))}</entry>"
                      for key, value in facts.items())
    return f'<metadata><provenance xmlns="{NAMESPACE}">{entries}</provenance></metadata>'


def add_to_svg(svg: str, facts: dict) -> str:
    """``svg`` (a whole document) with the record's <metadata> first inside <svg>."""
    start = svg.find("<svg")
    end = svg.find(">", start)
    if start < 0 or end < 0:
        return svg
    return svg[:end + 1] + "\n" + svg_metadata(facts) + svg[end + 1:]


def xmp_metadata(facts: dict, title: str = "") -> bytes:
    """An XMP packet for a PDF: its title and creator, and the record as posviz
    properties (one element per key, in the provenance namespace)."""
    entries = "".join(f"<posviz:entry posviz:key={quoteattr(str(key))}>"
                      f"{escape(_line(value))}</posviz:entry>" for key, value in facts.items())
    return (f'<?xpacket begin="\ufeff" id="W5M0MpCehiHzreSzNTczkc9d"?>'
            f'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="{RDF}">'
            f'<rdf:Description rdf:about="" xmlns:dc="http://purl.org/dc/elements/1.1/" '
            f'xmlns:xmp="http://ns.adobe.com/xap/1.0/" xmlns:posviz="{NAMESPACE}">'
            f'<dc:title><rdf:Alt><rdf:li xml:lang="x-default">{escape(title)}</rdf:li>'
            f'</rdf:Alt></dc:title><xmp:CreatorTool>posviz {__version__}</xmp:CreatorTool>'
            f'<posviz:provenance rdf:parseType="Literal">{entries}</posviz:provenance>'
            f'</rdf:Description></rdf:RDF></x:xmpmeta><?xpacket end="w"?>').encode("utf-8")


def read_xmp(pdf: bytes) -> dict[str, str]:
    """The record written by xmp_metadata, read back from a PDF's bytes (its metadata
    stream is stored uncompressed); empty when there is none."""
    import xml.etree.ElementTree as ET
    start, end = pdf.find(b"<x:xmpmeta"), pdf.find(b"</x:xmpmeta>")
    if start < 0 or end < 0:
        return {}
    root = ET.fromstring(pdf[start:end + len(b"</x:xmpmeta>")].decode("utf-8"))
    return {entry.get(f"{{{NAMESPACE}}}key"): entry.text or ""
            for entry in root.iter(f"{{{NAMESPACE}}}entry")}


def _line(value) -> str:
    return " ".join(str(value).split("\n")).replace("\r", " ")


def _plain(value) -> str:
    return value if isinstance(value, str) else json.dumps(value)
