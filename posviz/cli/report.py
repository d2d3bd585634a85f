"""``posviz report``: the per-layer symmetry metrics of one order, as a table or JSON.

    posviz report [model options] --text TEXT [--order I,J,...] [--quiet] [--json]
"""
from __future__ import annotations

import json
import math

from ..core.predictions import compare_outputs
from .options import add_model_arguments, evaluate

HEADER = ("layer", "hidden eq.", "attention eq.", "last token", "pooled", "hidden states")
ROW = "{:>5}  {:>11}  {:>13}  {:>11}  {:>11}  {}"


def add_command(subparsers) -> None:
    parser = subparsers.add_parser("report", help="per-layer symmetry metrics for one order")
    add_model_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def _format(value) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else f"{value:.3e}"


def as_json(backend, ev) -> dict:
    """The report as one JSON-ready object."""
    return {
        "tokens": list(ev.seq.tokens),
        "order": ev.order.tolist(),
        "config": {**backend.describe(), "positions": ev.positions.mode,
                   "offset": ev.positions.offset},
        "noise_floor": ev.comparison.floor,
        "layers": ev.comparison.rows(),
        "outputs": compare_outputs(backend, ev).to_dict(),
    }


def as_table(backend, ev) -> list[str]:
    """The report as lines of text: the model, the order, then one row per layer."""
    tokens, floor = ev.seq.tokens, ev.comparison.floor
    lines = [
        f"model:  {backend.name}  "
        + " ".join(f"{k}={v}" for k, v in backend.describe().items() if k != "model"),
        f"tokens: {' '.join(tokens)}",
        f"order:  {','.join(map(str, ev.order))}  ->  {' '.join(tokens[i] for i in ev.order)}",
        f"noise floor: {floor:.1e} (differences below it are rounding)\n",
        ROW.format(*HEADER),
    ]
    for row in ev.comparison.rows():
        verdict = "equivariant" if row["hidden_equivariance"] <= floor else "changed"
        lines.append(ROW.format(
            row["layer"], _format(row["hidden_equivariance"]),
            _format(row["attention_equivariance"]), _format(row["last_token_change"]),
            _format(row["pooled_change"]), verdict))
    return lines


def run(args) -> int:
    session, ev = evaluate(args)
    if args.json:
        print(json.dumps(as_json(session.backend, ev), indent=2))
    else:
        print("\n".join(as_table(session.backend, ev)))
    return 0
