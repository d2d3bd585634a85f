"""``posviz extend``: the context-extension lab (analysis.experiments.extension).

    posviz extend [--weights trained|PATH] [--factors 1,2,4,8] [--json]
                  [--out DIR [--format png,svg,pdf] [--width PX]]
        the trained RoPE checkpoint past its training length (position interpolation,
        NTK-aware scaling, YaRN, DroPE) beside ALiBi, T5 and NoPE as trained;
        ``--out`` draws the window's figures of it: extension-perplexity,
        extension-retrieval and extension-attention (at the longest length)
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ..analysis.experiments.extension import FIGURES  # --out: extension-NAME.FORMAT
from ..document.files import (DEFAULT_WIDTH, check_folder, check_sizes, parse_formats,
                              refuse_without_out)
from ..errors import PosvizInputError, argument, held_interrupt


def add_command(subparsers) -> None:
    parser = subparsers.add_parser(
        "extend", help="the context-extension lab: the trained RoPE checkpoint past its "
                       "training length (PI, NTK-aware, YaRN, DroPE) beside ALiBi, T5 "
                       "and NoPE as trained: perplexity, retrieval, where attention goes",
        description="Run the trained RoPE checkpoint past its training length with "
                    "position interpolation, NTK-aware scaling, YaRN and DroPE, beside "
                    "the ALiBi, T5 and NoPE checkpoints as trained, at lengths from the "
                    "training length up: held-out perplexity, what a window's far half "
                    "adds to the prediction of its end (retrieval, nats a token), the "
                    "copying of a repeated random span, and the attention mass against "
                    "distance.")
    parser.add_argument("--weights", default="trained", metavar="trained|PATH",
                        help="trained: the shipped checkpoints; or a folder holding "
                             "checkpoints of the same kinds (rope, alibi, t5, none and "
                             "drope, as scripts/train-zoo writes them) (default: trained)")
    parser.add_argument("--factors", default="1,2,4,8", metavar="F,F,...",
                        help="the lengths, in training lengths (default: 1,2,4,8)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument("--out", metavar="DIR",
                        help="write the figures to this folder: extension-perplexity, "
                             "extension-retrieval and extension-attention")
    parser.add_argument("--format", default=None, metavar="png,svg",
                        help="with --out: image formats, comma-separated, of png, svg and "
                             "pdf (default: png)")
    parser.add_argument("--width", type=int, default=None, metavar="PX",
                        help=f"with --out: PNG width in pixels (default: {DEFAULT_WIDTH})")
    parser.set_defaults(func=run)


def factors_of(text: str) -> tuple[int, ...]:
    """``--factors`` as numbers (analysis.experiments.extension.check_factors checks
    them)."""
    try:
        return tuple(int(f) for f in text.split(","))
    except ValueError:
        raise PosvizInputError(f"--factors takes whole numbers such as 1,2,4,8 (got "
                               f"{text!r})") from None


def text_lines(result: dict) -> list[str]:
    """The lab's numbers as aligned tables, a row a method: perplexity, retrieval (with
    its standard error) and copy."""
    from .paper import table
    lengths = [str(n) for n in result["lengths"]]
    header = ["", *(f"{n} (trained)" if int(n) == result["train_length"] else n
                    for n in lengths)]
    methods = result["methods"]
    seed = f", seed {result['seed']}" if result.get("seed") is not None else ""
    lines = [f"trained at {result['train_length']} tokens; {result['tokens']} held-out "
             f"predictions per length; {result['ran_on']}{seed}", "held-out perplexity:"]
    lines += table(header, [[name, *(row["perplexity"][n] for n in lengths)]
                            for name, row in methods.items()])
    lines.append("retrieval: what the window's far half adds to the prediction of its "
                 "last eighth, nats a token ± its standard error (0: far context unused):")
    lines += table(header, [[name, *(f"{row['retrieval'][n]:+.3f} ± "
                                     f"{row['retrieval_se'][n]:.3f}" for n in lengths)]
                            for name, row in methods.items()])
    lines.append(f"copy: share of a repeated {result['span']}-token random span "
                 f"predicted exactly:")
    lines += table(header, [[name, *(f"{row['copy'][n]:.3f}" for n in lengths)]
                            for name, row in methods.items()])
    return lines


def run(args) -> int:
    from ..api import extend
    from .options import progress
    from .options import tell_written
    factors = factors_of(args.factors)
    from ..analysis.experiments.extension import check_lab_weights
    check_lab_weights(args.weights)         # before --out's folder is made
    refuse_without_out(args.out, {"--format": args.format, "--width": args.width})
    if args.out:
        formats = parse_formats(args.format or "png")
        check_sizes(args.width, None, "png" in formats,
                    argument("format", args.format or "png"))
        out = check_folder(args.out, "out")
    result = extend(args.weights, factors=factors, say=progress(args)).to_dict()
    print(json.dumps(result, indent=2) if args.json else "\n".join(text_lines(result)))
    if args.out:                         # stdout holds the tables or the JSON only
        tell_written(draw(result, out, formats, args.width or DEFAULT_WIDTH))
    sys.stdout.flush()
    return 0


def provenance(result: dict, metric: str) -> dict[str, str]:
    """What a figure of the lab carries: the record every output writes (``--json``'s
    "provenance", document.provenance), then the conditions and the lengths."""
    from ..document.provenance import file_lines
    from ..version import __version__
    facts = {**file_lines(result.get("provenance", {})), "posviz": __version__,
             "experiment": "extend", "metric": metric,
             "ran_on": result["ran_on"], "seed": result.get("seed"),
             "train_length": result["train_length"],
             "lengths": ",".join(map(str, result["lengths"])),
             "tokens": result["tokens"], "methods": ",".join(result["methods"])}
    return {key: str(value) for key, value in facts.items() if value is not None}


def draw(result: dict, folder: Path, formats: list[str], width: int = DEFAULT_WIDTH,
         metrics=FIGURES) -> list[Path]:
    """The Experiments tab's figures of ``result`` (Extension.to_dict()), written to
    ``folder`` as extension-METRIC.FORMAT at the figure's own size, ``width`` pixels
    wide as PNG, with the result's provenance; a Ctrl+C held while Qt loads and draws,
    then raised (errors.held_interrupt)."""
    with held_interrupt():
        return _drawn(result, folder, formats, width, metrics)


def _drawn(result: dict, folder: Path, formats: list[str], width: int, metrics) -> list[Path]:
    from ..gui.experiments.figure import ExperimentFigure
    from ..gui.plots.headless import application, quiet_platform_notes
    from ..gui.plots.own_size import off_screen
    app = application()
    written = []
    with quiet_platform_notes():
        for metric in metrics:
            figure = ExperimentFigure()
            try:
                off_screen(figure, 900, 600)
                app.processEvents()
                figure.show_extension(result, metric)
                app.processEvents()
                for fmt in formats:
                    written.append(figure.export(
                        folder / f"extension-{metric}.{fmt}", width=width,
                        provenance=provenance(result, metric)))
            finally:
                figure.close()
                figure.deleteLater()
    return written
