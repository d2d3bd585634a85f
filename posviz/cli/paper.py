"""``posviz paper``: a published claim about positions, checked on weights it names.

    posviz paper NAME [--weights random|trained] [--json]
        NAME: one of papers.CATALOGUE; random weights test what the architecture
        implies, trained ones (the shipped checkpoints, the bundled pretrained models)
        the paper's claim about trained models
"""
from __future__ import annotations

import json
import math
import textwrap

from ..analysis.experiments.papers import CATALOGUE, PRESETS, TRAINED_PRESETS, trained_too


def add_command(subparsers) -> None:
    parser = subparsers.add_parser(
        "paper", help="check a paper's claim: its citation, what it reports, the weights "
                      "it ran on, the claim tested there, what posviz measures")
    parser.add_argument("name", metavar="NAME", help="one of: " + "; ".join(
        f"{p.name} ({p.title})" for p in CATALOGUE))
    parser.add_argument("--weights", metavar="random|trained", default=None,
                        help=f"random: the built-in model untrained, from its seed (what "
                             f"the architecture implies: {', '.join(PRESETS)}); trained: "
                             f"the shipped checkpoints and bundled pretrained models "
                             f"({', '.join(TRAINED_PRESETS)}) (default: random where the "
                             f"paper's check has it)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    from .options import add_quiet
    add_quiet(parser, "the check's stages and steps")
    parser.set_defaults(func=run)


def wrap(label: str, text: str) -> str:
    return textwrap.fill(text, 88, initial_indent=label, subsequent_indent=" " * len(label))


def number(value) -> str:
    """A measurement as text: one decimal from 10 to a million, else 3 significant
    digits; None (not measured) as a dash."""
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int) or not isinstance(value, float):
        return str(value)
    return f"{value:.1f}" if 10 <= abs(value) < 1e6 else f"{value:.3g}"


def column(values: list) -> list[str]:
    """A column of measurements at one precision: 3 significant digits of its largest
    (one decimal at least), powers of ten for those under it; text as it is."""
    floats = [abs(v) for v in values if isinstance(v, float) and math.isfinite(v)]
    if not floats or max(floats) == 0:
        return [number(v) for v in values]
    top = max(floats)
    if top < 0.01:
        return [f"{v:.2e}" if isinstance(v, float) else number(v) for v in values]
    decimals = min(max(2 - math.floor(math.log10(top)), 1), 3)

    def cell(v) -> str:             # a value under the precision keeps its own size
        if not isinstance(v, float):
            return number(v)
        return "0" if v == 0 else (f"{v:.2e}" if abs(v) < 0.5 * 10.0 ** -decimals
                                   else f"{v:.{decimals}f}")
    return [cell(v) for v in values]


def table(header: list[str], rows: list[list], indent: str = "  ",
          one_measure: bool = False) -> list[str]:
    """Aligned columns: the first (names) to the left, the measurements (each column at
    one precision; all of them at one when ``one_measure``: a measure by layer, so a
    value reads alike in every column and every such table) to the right."""
    columns = [list(c) for c in zip(*rows)]
    if one_measure and len(columns) > 1:
        flat = column([v for c in columns[1:] for v in c])
        cells = [[str(x) for x in columns[0]]] + [
            flat[k * len(rows):(k + 1) * len(rows)] for k in range(len(columns) - 1)]
    else:
        cells = [[str(x) for x in c] if k == 0 else column(c) for k, c in enumerate(columns)]
    rows = [list(row) for row in zip(*cells)]
    widths = [max(len(row[k]) for row in (header, *rows)) for k in range(len(header))]
    return [indent + "  ".join(cell.ljust(w) if k == 0 else cell.rjust(w)
                               for k, (cell, w) in enumerate(zip(row, widths))).rstrip()
            for row in (header, *rows)]


# a probe's measures as its plot names them
LABELS = {"r2": "R² (held out)", "mae": "error (positions)",
          "chance_mae": "chance error (the mean)"}


def _label(key: str) -> str:
    return LABELS.get(key, key.replace("_", " "))


def _is_scalar(value) -> bool:
    return value is None or isinstance(value, (bool, int, float, str))


def _is_rows(value) -> bool:
    """A list of records of one shape (a probe's layers)."""
    return (isinstance(value, list) and bool(value)
            and all(isinstance(r, dict) and all(map(_is_scalar, r.values())) for r in value))


def _numbers(label: str, values: list, indent: str) -> list[str]:
    """A list of numbers in full up to 32, else its size and ends (--json has them)."""
    if len(values) > 32:
        return [f"{indent}{label}: {len(values)} values, {number(values[0])} … "
                f"{number(values[-1])} (all of them in --json)"]
    return [wrap(f"{indent}{label}: ", ", ".join(map(number, values)))]


def _by_layer(label: str, runs: dict, indent: str) -> list[str]:
    """Runs of a probe (name -> rows per layer): one table per measure, a row per run
    and a column per layer."""
    from ..models.trace import layer_label
    first = next(iter(runs.values()))
    layers = [layer_label(r.get("layer", k)) for k, r in enumerate(first)]  # 0: "in"
    lines = []
    for measure in (m for m in first[0] if m != "layer"):
        lines.append(f"{indent}{label}{_label(measure)} by layer:")
        lines += table(["", *layers], [[name, *(r[measure] for r in rows)]
                                       for name, rows in runs.items()], indent + "  ",
                       one_measure=True)
    return lines


def values_lines(values: dict, indent: str = "  ") -> list[str]:
    """The measurements as aligned text: scalars as "name: value", records as tables
    (a row per key or per list entry), probe runs as tables by layer, nested groups
    indented under their name."""
    lines: list[str] = []
    scalars = {k: v for k, v in values.items() if _is_scalar(v)}
    width = max((len(_label(k)) for k in scalars), default=0)
    lines += [f"{indent}{_label(k) + ':':<{width + 1}} {number(v)}"
              for k, v in scalars.items()]
    probes = {_label(k): v for k, v in values.items() if _is_rows(v) and "layer" in v[0]}
    if probes:
        lines += _by_layer("probe ", probes, indent)
    records = {k: v for k, v in values.items() if isinstance(v, dict) and v
               and all(map(_is_scalar, v.values()))}
    if len(records) > 1:           # several models measured alike: a row each
        columns = list(dict.fromkeys(c for v in records.values() for c in v))
        lines += table(["", *map(_label, columns)],
                       [[name, *(v.get(c) for c in columns)] for name, v in records.items()],
                       indent)
    for key, value in values.items():
        label = _label(key)
        if _is_scalar(value) or label in probes or (len(records) > 1 and key in records):
            continue
        if _is_rows(value):
            columns = list(value[0])
            lines.append(f"{indent}{label}:")
            lines += table([_label(c) for c in columns],
                           [[r.get(c) for c in columns] for r in value], indent + "  ")
        elif isinstance(value, list) and all(map(_is_scalar, value)):
            lines += _numbers(label, value, indent)
        elif isinstance(value, list):
            lines.append(wrap(f"{indent}{label}: ", json.dumps(value)))
        elif value and all(isinstance(v, dict) and all(map(_is_scalar, v.values()))
                           for v in value.values()):
            columns = list(dict.fromkeys(c for v in value.values() for c in v))
            lines.append(f"{indent}{label}:")
            lines += table(["", *map(_label, columns)],
                           [[name, *(v.get(c) for c in columns)]
                            for name, v in value.items()], indent + "  ")
        else:
            lines.append(f"{indent}{label}:")
            lines += values_lines(value, indent + "  ")
    return lines


def press_values(values: dict) -> dict:
    """press2022's perplexities as its paper's table: a row per encoding, a column per
    evaluation length and the growth at the longest; a refused length says so."""
    lengths, longest = values["lengths"], values["lengths"][-1]
    train = values["train_length"]
    rows = {}
    for kind, row in values["perplexity"].items():
        rows[kind] = {(f"{n} (trained)" if n == train else str(n)):
                      ("refused" if row[str(n)] is None and kind in values["refused"]
                       else row[str(n)]) for n in lengths}
        rows[kind][f"{longest} / {train}"] = values["growth_at_4x"].get(kind)
        if "order_use" in values:
            rows[kind]["order use"] = values["order_use"].get(kind)
    shown = {k: v for k, v in values.items()
             if k not in ("perplexity", "growth_at_4x", "lengths", "refused", "table_length",
                          "order_use")}
    return {**shown, "perplexity": rows, "refused": values["refused"]}


def run(args) -> int:
    from ..analysis.experiments.papers import paper_weights
    from ..api import paper
    from ..runtime.run_lines import RunLines
    from .options import progress

    paper_weights(args.name, args.weights)                  # refused before any step
    # a check of seconds or more tells what it does and its stages' steps on a terminal
    say = progress(args)                   # "checking NAME on W weights": the API's
    result = paper(args.name, weights=args.weights, say=say,
                   progress=RunLines(unit="step") if say is not None else None)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
        return 0
    check = result.result
    trained = " (--weights trained runs it on trained models)" if trained_too(check) else ""
    from ..document.provenance import made_by
    print("\n".join([made_by(result.provenance), wrap("paper:    ", check.citation), wrap("reports:  ", check.reports),
                     wrap("ran on:   ", f"{check.weights} weights: {check.ran_on}"),
                     wrap("tests:    ", check.tests + trained),
                     wrap("measures: ", check.measures),
                     "values:",
                     *values_lines(press_values(check.values) if check.name == "press2022"
                                   else check.values),
                     f"holds here: {check.verdict}, for the claim under tests"]))
    return 0
