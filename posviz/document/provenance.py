"""What produced an output: the record every JSON, CSV and figure carries, without Qt.

``provenance`` is the one record of what made a result (posviz version, model, encoding,
mask, weights, seeds, dtype, options, and where a model's layers were offloaded): every
command's ``--json`` and the Python API's ``to_dict()`` hold it under "provenance", a
CSV as ``# key: value`` lines before its header (``comment_lines``), a figure beside
its text, order, layer and head (``record``). A PNG holds the figure's record in its
text chunks, an SVG in a ``<metadata>`` element, a PDF in its XMP metadata, so a file
found later in a paper's folder still says what made it.
"""
from __future__ import annotations

import json
from xml.sax.saxutils import escape, quoteattr

from ..models.config import ModelConfig
from ..version import __version__

NAMESPACE = "urn:posviz:provenance"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
KEYS = ("posviz", "model", "text", "tokens", "order", "positions", "layer", "head")
# the record's keys beside posviz and model, in files one line each (seeds and options
# as JSON objects)
PROVENANCE = ("encoding", "mask", "weights", "seeds", "dtype", "options")
# what a Trace's extras hold beside its model's description, for the analysis: the noise
# floor (analysis.floor), whether the last hidden state is normed (the layers' plot)
ANALYSIS = ("floor", "final_norm")
# a pretrained model's LM head ("causal", "masked" or None), named apart from the head
# (0..h-1) a figure shows
LM_HEAD = "lm_head"


def provenance(model: dict | list, *, seeds: dict | None = None,
               options: dict | None = None, offload_folder: str | None = None) -> dict:
    """The record of what made a result, JSON-ready: ``posviz`` (the version), ``model``
    (its name), ``encoding`` (the built-in model's ``pe``, a pretrained one's scheme, or
    a list of them), ``mask``, ``weights`` ("random", "trained", a checkpoint folder or
    "pretrained"), ``seeds`` (the random weights' seed as "model", any other the
    description's ``seeds`` names, and the caller's: the orders' …), ``dtype``,
    ``options`` (the model's other settings, then the caller's ``options``) and, when a
    model's layers were offloaded, ``offload_folder``.
    ``model`` is a model description: a backend's ``describe()`` or a Trace's extras;
    or a list of them, one per model run (a paper check's): see of_runs."""
    if isinstance(model, (list, tuple)):
        return of_runs(model, seeds=seeds, options=options)
    facts = model_options(model)
    name = str(facts.pop("model", "unknown"))
    weights = facts.pop("weights", None) or ("random" if name == "built-in" else "pretrained")
    seed = facts.pop("seed", None)
    drawn = {"model": seed} if weights == "random" and seed is not None else {}
    drawn.update(facts.pop("seeds", None) or {})    # what else the run drew, and from what
    encoding = facts.pop("pe", None)
    encoding = facts.pop("position_encoding", encoding)
    record = {"posviz": __version__, "model": name, "encoding": encoding,
              "mask": facts.pop("mask", None), "weights": weights,
              "seeds": {**drawn, **(seeds or {})}, "dtype": facts.pop("dtype", "float32"),
              "options": {**facts, **(options or {})}}
    if offload_folder:
        record["offload_folder"] = str(offload_folder)
    return record


def made_by(record: dict) -> str:
    """The first line of a text output (report, sweep, probe, compare, paper): what
    ``record`` (its JSON's provenance) says made it, every value the JSON has but the
    runs (a paper check's, in its JSON), as the JSON has them ("made by posviz 0.9.0:
    model built-in; encoding rope; mask causal; weights random; seeds model=0, orders=3;
    dtype float32; options layers=4, heads=4, residual=true"); a list of values (runs
    that differ) joined by " / ", seeds that seeded nothing as "none"; a null (a paper
    check of no model's mask) left out."""
    def words(value) -> str:
        if isinstance(value, (list, tuple)):
            return " / ".join(words(v) for v in value)
        if isinstance(value, dict):
            return ", ".join(f"{k}={words(v)}" for k, v in value.items()) or "none"
        return spelled(value)
    said = "; ".join(f"{key} {words(value)}" for key, value in record.items()
                     if key not in ("posviz", "runs") and value is not None)
    return f"made by posviz {record.get('posviz', __version__)}: {said}"


def of_runs(models, *, seeds: dict | None = None, options: dict | None = None) -> dict:
    """The record of a result made of several model runs: ``runs``, one record per model
    run in the order run (this module's record of that model, without the version), so
    each run's encoding, mask, weights, seeds, dtype and options are read together; the
    record's own keys say what the runs share (``model``: their names joined; a setting
    they differ in: ``encoding``, ``mask``, ``weights`` and ``dtype`` the list of its
    values, each once; ``seeds`` and ``options`` only what every run has alike), then
    the caller's ``seeds`` and ``options``."""
    runs = [provenance(model) for model in models]
    for run in runs:
        del run["posviz"]

    def alike(values: list):
        distinct: list = []                    # by ==: a value may be a dict
        for value in values:
            distinct += [] if value in distinct else [value]
        return distinct[0] if len(distinct) == 1 else distinct

    def common(key: str) -> dict:
        first = runs[0][key] if runs else {}
        return {k: v for k, v in first.items()
                if all(k in run[key] and run[key][k] == v for run in runs)}

    names = alike([run["model"] for run in runs])
    record = {"posviz": __version__,
              "model": " and ".join(map(str, names)) if isinstance(names, list) else names,
              **{key: alike([run[key] for run in runs])
                 for key in ("encoding", "mask", "weights")},
              "seeds": {**common("seeds"), **(seeds or {})},
              "dtype": alike([run["dtype"] for run in runs]),
              "options": {**common("options"), **(options or {})}, "runs": runs}
    return record


def spec_model(spec, backend=None) -> dict:
    """A model description, as a backend's ``describe()`` gives it, of a ModelSpec: its
    loaded ``backend``'s when there is one, else what the spec says."""
    if backend is not None:
        return backend.describe()
    if spec.is_builtin:
        return {"model": "built-in", **spec.config.to_dict(),
                **({"weights": spec.weights} if spec.trained else {})}
    return {"model": spec.name, **({"revision": spec.revision} if spec.revision else {}),
            "dtype": spec.dtype}


def file_lines(record: dict) -> dict[str, str]:
    """A provenance record as a file's metadata: one line per key, objects as JSON."""
    return {key: spelled(value) for key, value in record.items()}


def model_options(extras: dict) -> dict:
    """The options of a model description (a Trace's ``extras`` or a backend's
    ``describe()``), its config's keys brought up, the built-in MLP's width as the number
    (the option's 0 stands for 4 × d), without what the run did not use (used_only)."""
    extras = dict(extras or {})
    config = extras.pop("config", None)
    if isinstance(config, dict):
        extras = {**config, **extras}
    if extras.get("d_ff") == 0 and "d_model" in extras:
        extras["d_ff"] = ModelConfig(d_model=extras["d_model"]).ff_width
    return used_only(extras)


def used_only(described: dict) -> dict:
    """A built-in model's description without the settings its run did not read: the
    learned table's rows (``max_len``) where no encoding run (``pe``: one, or a list of
    those compared) has a table, the position scale (``pe_scale``) where none adds
    anything to scale (their records' ``acts`` None: NoPE), the
    weights' ``seed`` where they are trained (drawn from none); a pretrained model's,
    its LM ``head`` named ``lm_head``."""
    from ..models.encodings import ENCODINGS
    described = dict(described)
    if described.get("model") not in (None, "built-in"):
        if "head" in described:                 # its LM head: not a figure's head
            described = {(LM_HEAD if key == "head" else key): value
                         for key, value in described.items()}
        return described
    if "pe" not in described:
        return described
    kinds = described["pe"]                     # a list: the encodings compared
    encodings = [ENCODINGS.get(kind) for kind in
                 (kinds if isinstance(kinds, (list, tuple)) else [kinds])]
    if None not in encodings:
        if not any(e.table_length(described.get("max_len", 1)) for e in encodings):
            described.pop("max_len", None)
        if all(e.acts is None for e in encodings):
            described.pop("pe_scale", None)
    if described.get("weights", "random") != "random":
        described.pop("seed", None)
    return described


def describe_model(extras: dict) -> str:
    """One line for the model a Trace came from (its ``extras``): the built-in model
    with its options, or a pretrained one by name and family."""
    extras = model_options(extras)
    name = str(extras.pop("model", "unknown"))
    if not extras:
        return name
    options = ", ".join(f"{key}={spelled(value)}" for key, value in extras.items())
    return f"{name} ({options})"


def record(evaluation, layer: int | None = None, head: int | None = None,
           text: str | None = None, model: str | dict | None = None) -> dict[str, str]:
    """The provenance of a figure of ``evaluation`` (an engine.Evaluation) at ``layer``
    (1..L) and ``head`` (0..h-1), each left out when None (the figure selects none);
    ``text`` and ``model`` (a description, or a backend's ``describe()``) when known,
    else read from the evaluation. Keys are KEYS (``model`` the model in one line, its
    options included), then PROVENANCE read from the evaluation's model, the record of
    the JSON's provenance (its Trace's extras are its backend's describe()); values are
    single-line strings."""
    tokens = tuple(evaluation.seq.tokens)
    # the model's description (its backend's describe(), as the JSON's), without what
    # the analysis reads beside it
    extras = {k: v for k, v in evaluation.reference.extras.items() if k not in ANALYSIS}
    made = provenance(extras, options=positions_options(evaluation.positions))
    if model is None:
        model = describe_model(extras)
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
        # a figure that selects no layer or head says none (no empty key)
        **({} if layer is None else {"layer": str(layer)}),
        **({} if head is None else {"head": str(head)}),
    }
    return {**{key: _line(value) for key, value in facts.items()},
            **file_lines({key: made[key] for key in PROVENANCE})}


def positions_options(positions) -> dict:
    """A Positions as a record's options: how the position ids were given."""
    return {"positions": positions.mode, "offset": positions.offset,
            "literal": positions.literal}


def typed_text(session, evaluation) -> str | None:
    """The text as typed that ``evaluation`` ran, from ``session`` (a document.session.Session)
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


def spelled(value) -> str:
    """A value as its JSON spells it (true, null, 1.0; a string as itself), on one line:
    how every text output's provenance and model lines write a setting."""
    return _line(value if isinstance(value, str) else json.dumps(value, ensure_ascii=False))
