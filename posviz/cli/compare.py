"""``posviz compare``: several encodings answering the same reorder, side by side.

    posviz compare --pe none,sinusoidal,rope [--weights random|trained] [model options]
                   [--text TEXT] [--order I,J,...] [--metric NAME] [--json]
                   [--out DIR [--format png,svg,pdf] [--width PX | --dpi DPI] [--no-csv]]

The built-in model with each encoding (the same configuration and kind of weights) runs
the text in its original order and in the new one; the table (or JSON) gives the metric
per layer for each, and ``--out`` draws the curves in one figure, written as
compare.png, compare.svg and compare.csv (the window's Experiments tab draws the same).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ..analysis.symmetry import METRICS
from ..document.files import check_folder, check_sizes, parse_formats, refuse_without_out
from ..errors import PosvizInputError, argument, held_interrupt
from ..models.encodings import KINDS
from .options import add_model_arguments, builtin_config, positions, progress, tell_written

FORMATS = "png,svg"             # --out's, unless --format is given


def add_command(subparsers) -> None:
    parser = subparsers.add_parser(
        "compare", conflict_handler="resolve",
        help="the per-layer metrics of several encodings for one text and one reorder")
    add_model_arguments(parser, pretrained=False)          # a --model refused in run
    parser.add_argument("--pe", default=",".join(KINDS), metavar="KIND,KIND,...",
                        help=f"the encodings to compare, separated by commas, from "
                             f"{', '.join(KINDS)} (default: all of them)")
    parser.add_argument("--metric", choices=METRICS, default=METRICS[0],
                        help="the metric the table and the figure show (the JSON and the "
                             "CSV hold all) (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--out", metavar="DIR",
                        help="write the figure to this folder as compare.png/svg/csv")
    parser.add_argument("--format", default=None, metavar="png,svg",
                        help="with --out: image formats, comma-separated, of png, svg and "
                             "pdf (default: png,svg)")
    parser.add_argument("--width", type=int, default=None, metavar="PX",
                        help="with --out: PNG width in pixels (default: the figure's own "
                             "size, as Python's figure().save draws it)")
    parser.add_argument("--dpi", type=int, default=None, metavar="DPI",
                        help="with --out, instead of --width: PNG resolution in dots per "
                             "inch of the figure's size on screen")
    parser.add_argument("--no-csv", action="store_true", help="with --out: no CSV table")
    parser.set_defaults(func=run)


def compared(args):
    """The api Comparison the options ask for (posviz.compare_encodings), every option
    checked first."""
    from ..api import compare_encodings
    if args.model:
        raise PosvizInputError("compare runs the built-in model with several encodings; "
                               "--model does not apply")
    if args.weights not in ("random", "trained"):
        raise PosvizInputError("compare takes --weights random or trained: a checkpoint "
                               "folder holds one encoding")
    if args.text is not None and not args.text.strip():
        raise PosvizInputError("the text is empty")
    from ..analysis.experiments.encodings import parse_kinds
    kinds = parse_kinds(args.pe)
    args.pe = kinds[0]                       # a valid config first, each kind in turn
    config = builtin_config(args, kinds)
    where = positions(args)
    from ..api.steps import ModelLines     # "running 5 models", each model's layers
    return compare_encodings(args.text, args.order, encodings=kinds, weights=args.weights,
                             config=config, positions=where.mode, offset=where.offset,
                             literal=where.literal,
                             progress=ModelLines() if progress(args) else None)


def as_table(result, metric: str) -> list[str]:
    """The table: the order by its ends as report's (``--json`` has it whole), then one
    row per layer, a column per encoding."""
    from .report import shortened
    tokens = result.tokens
    lines = [f"{metric.replace('_', ' ')} per layer, {result.weights} weights; noise floor "
             f"{result.floor:.1e}",
             f"order:  {shortened(result.order, ',')}  ->  "
             f"{shortened([tokens[i] for i in result.order], ' ')}", "",
             "layer " + "".join(f"{m.kind:>12}" for m in result.models)]
    for layer in range(len(result.models[0].rows)):
        cells = [m.rows[layer][metric] for m in result.models]
        lines.append(f"{layer:>5} " + "".join("           —" if v is None else f"{v:>12.3e}"
                                              for v in cells))
    return lines


def run(args) -> int:
    refuse_without_out(args.out, {"--format": args.format, "--width": args.width,
                                  "--dpi": args.dpi, "--no-csv": args.no_csv or None})
    if args.out:
        formats = parse_formats(args.format or FORMATS)
        check_sizes(args.width, args.dpi, "png" in formats,     # in export's words
                    argument("format", args.format or FORMATS))
        folder = check_folder(args.out, "out")
    result = compared(args)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        from ..document.provenance import made_by
        print("\n".join([made_by(result.provenance), *as_table(result, args.metric)]))
    if args.out:                         # stdout holds the table or the JSON only
        tell_written(draw(result, args, folder, formats))
    sys.stdout.flush()
    return 0


def draw(result, args, folder: Path, formats: list[str]) -> list[Path]:
    """The figure the Experiments tab's Compare view draws, written to ``folder``; a
    Ctrl+C held while Qt loads and draws, then raised (errors.held_interrupt)."""
    written = []
    with held_interrupt():
        from ..gui.plots.headless import quiet_platform_notes
        figure = result.figure(args.metric)
        try:
            with quiet_platform_notes():
                for fmt in formats:
                    written.append(figure.save(folder / f"compare.{fmt}", **(
                        {"dpi": args.dpi, "width": args.width} if fmt == "png" else {})))
                if not args.no_csv:
                    written.append(figure.save(folder / "compare.csv"))
        finally:
            figure.close()
    return written
