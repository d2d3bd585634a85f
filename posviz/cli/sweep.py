"""``posviz sweep``: many orders of one text or a file of texts, summarized per layer.

    posviz sweep [model options] (--text T | --texts FILE) --kind KIND --count K
                 --seed S [--layer L] [--json | --csv FILE]
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import sys
from pathlib import Path

from ..analysis.experiments.runs import KIND_TIPS
from ..document.files import whole_file
from ..errors import PosvizInputError
from ..models.options import OPTIONS
from .options import (add_model_arguments, builtin_config, check_model_flags,
                      guard_before_loading, load_model, positions, progress, tell_written)

QUANTILES = ("median", "p10", "p90")


def add_experiment_arguments(parser: argparse.ArgumentParser, texts_help: str,
                             seed_help: str | None = None) -> None:
    """The model options every command shares, and --texts. The built-in model's seed is
    ``--model-seed`` here; ``--seed`` seeds the experiment's orders (``seed_help``), or,
    for an experiment that draws none, is taken only to be refused (refuse_seed)."""
    add_model_arguments(parser, leave_out=("seed",))
    parser.add_argument("--texts", metavar="FILE", help=texts_help)
    weights = OPTIONS["seed"]
    parser.add_argument("--model-seed", dest="seed", type=int, default=argparse.SUPPRESS,
                        help=f"{weights.tip} (default: {weights.default})")
    parser.add_argument("--seed", dest="order_seed", type=int, default=None,
                        help=seed_help or argparse.SUPPRESS)


def refuse_seed(args) -> None:
    """--seed given to an experiment that draws no orders."""
    from ..api.runs import refuse_seed              # the API's words, in flags
    refuse_seed(args.order_seed is not None)


def add_command(subparsers) -> None:
    parser = subparsers.add_parser(
        "sweep", help="per-layer median, p10 and p90 of every metric over many orders")
    add_experiment_arguments(parser, "a file of texts, one a line ('-': standard "
                             "input), instead of --text",
                             "seeds the random orders: the same seed gives the same "
                             "result (default: 0)")
    parser.add_argument("--kind", default="random",
                        help="which orders: " + "; ".join(f"{k}: {t}" for k, t in
                                                          KIND_TIPS.items())
                             + " (default: random)")
    parser.add_argument("--count", type=int, default=None,
                        help="how many orders for random and prefix (default: 32)")
    parser.add_argument("--layer", type=int, default=None,
                        help="the layer whose change the swap map shows (default: the last)")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print one JSON object")
    out.add_argument("--csv", metavar="FILE",
                     help="write one row per layer and metric to FILE ('-': stdout); a "
                          "swap sweep writes its maps, one row per token pair, to "
                          "FILE-pairs.csv (on stdout: after a blank line)")
    hide(parser, "order")
    parser.set_defaults(func=run)


def hide(parser: argparse.ArgumentParser, *dests: str) -> None:
    """Leave the shared flags ``dests`` out of the command's -h: it refuses them."""
    for action in parser._actions:
        if action.dest in dests:
            action.help = argparse.SUPPRESS


def refuse_order(args) -> None:
    if getattr(args, "order", None) is not None:
        raise PosvizInputError(f"--order does not apply to {args.command}, which runs "
                               "the orders it needs")


def experiment_texts(args) -> list[str]:
    """--text, --texts FILE ('-': standard input, one text a line, as a file) or the
    default text."""
    if args.text is not None and args.texts is not None:
        raise PosvizInputError("give --text or --texts, not both")
    if args.texts == "-":
        from ..analysis.experiments.texts import parse_texts
        from .texts import standard_input
        texts = parse_texts(standard_input("--texts"))
        if not texts:
            raise PosvizInputError("--texts - (standard input) holds no texts (one a "
                                   "line; '#' starts a comment)")
        return texts
    if args.texts is not None:
        from ..analysis.experiments.texts import read_texts
        return read_texts(args.texts)
    if args.text is not None:
        if not args.text.strip():
            raise PosvizInputError("the text is empty")
        return [args.text]
    from ..document.session import DEFAULT_TEXT
    return [DEFAULT_TEXT]


def experiment_model(args, texts: list[str] | None = None, **experiment):
    """(api.Model, Positions) for the model options, checked before anything is built
    (the guard: device, the longest of ``texts`` against the positions, memory, and
    ``experiment``: guard.check's orders…)."""
    if args.model and "seed" in vars(args):
        raise PosvizInputError(f"--model-seed only applies to the built-in model, not to "
                               f"--model {args.model}")
    check_model_flags(args)
    config = None if args.model else builtin_config(args)
    where = positions(args)
    tokens_read = guard_before_loading(args, config, texts or [], where, **experiment)
    return load_model(args, config, progress(args), tokens_read), where


def reporter(args, unit: str = "run"):
    """(done, total) -> a line on a terminal's stderr with the time left (RunLines:
    the first at the first count, then every 2 s), or None."""
    if progress(args) is None:
        return None
    from ..api import steps                # runtime.run_lines.RunLines
    return steps.RunLines(sys.stderr, unit)


def csv_rows(result) -> list[list]:
    """The layer table: one row per layer and metric."""
    rows = [["layer", "metric", *QUANTILES]]
    for row in result.rows():
        for name, band in row.items():
            if name != "layer":
                rows.append([row["layer"], name, *("" if band[q] is None else band[q]
                                                   for q in QUANTILES)])
    return rows


PAIR_COLUMNS = ["text_id", "layer", "i", "token_i", "j", "token_j", "change", "text"]


def pair_rows(result) -> list[list]:
    """The swap maps: one row per text and token pair (text_id counts the texts from 0
    in the order given)."""
    rows = [PAIR_COLUMNS]
    for text_id, pairs in enumerate(result.pairs):
        for i, first in enumerate(pairs.tokens):
            for j, second in enumerate(pairs.tokens):
                change = pairs.change[i, j] if pairs.ran[i, j] else ""    # not run
                rows.append([text_id, pairs.layer, i, first, j, second, change, pairs.text])
    return rows


def pairs_path(path: str) -> str:
    """Where the swap maps go beside the layer table: sweep.csv -> sweep-pairs.csv."""
    where = Path(path)
    return str(where.with_name(f"{where.stem}-pairs{where.suffix or '.csv'}"))


def csv_facts(result) -> list[str]:
    """The ``# key: value`` lines a sweep's CSV starts with: its provenance, then the
    sweep's kind, count and texts (document.provenance)."""
    from ..analysis.experiments.runs import sweep_settings
    from ..document.provenance import comment_lines, file_lines
    r = result.result
    used = sweep_settings(r.kind, r.count, r.seed)
    used.pop("seed", None)                           # the provenance's seeds hold it
    return comment_lines({**file_lines(result.provenance), "experiment": "sweep", **used,
                          "texts": json.dumps(list(r.texts), ensure_ascii=False)})


def write_csv(path: str, rows, facts: list[str] = ()) -> None:
    """``rows`` after the comment lines ``facts``, to ``path`` ('-': stdout)."""
    if path == "-":
        sys.stdout.writelines(facts)
        csv.writer(sys.stdout).writerows(rows)
        return
    buffer = io.StringIO()
    buffer.writelines(facts)
    csv.writer(buffer).writerows(rows)
    try:
        whole_file(path, lambda to: to.write_text(buffer.getvalue(), "utf-8", newline=""))
    except OSError as error:                  # named by its flag, as --texts FILE is
        raise PosvizInputError(f"--csv {path}: {error.strerror or error}") from None


def fmt(value) -> str:
    return "—" if value is None else f"{value:.3e}"


def as_table(result) -> list[str]:
    runs = f"{result.runs:,} run{'' if result.runs == 1 else 's'}"     # "1 run"
    if result.pairs:        # the table: the neighbouring swaps of every pair run
        pairs = sum(p.swaps for p in result.pairs)
        runs = (f"{result.runs:,} neighbouring swap{'' if result.runs == 1 else 's'} (the "
                f"table) of the {pairs:,} pair{'' if pairs == 1 else 's'} run (the "
                f"sensitivities)")
    texts = len(result.texts)
    lines = [f"{result.kind} sweep: {runs} over {texts} text{'' if texts == 1 else 's'}; "
             f"noise floor {result.floor:.1e}", "",
             "layer  metric                   median        p10        p90"]
    for row in result.rows():
        for name, band in row.items():
            if name != "layer":
                lines.append(f"{row['layer']:>5}  {name:<22} {fmt(band['median']):>10} "
                             f"{fmt(band['p10']):>10} {fmt(band['p90']):>10}")
    for index, pairs in enumerate(result.pairs):
        which = (f" of text {index + 1} of {len(result.pairs)} (“{pairs.text}”)"
                 if len(result.pairs) > 1 else "")
        lines += ["", f"swap sensitivity at layer {pairs.layer}{which} (mean change over "
                  "partners holding another token):"]
        lines += [f"  {i:>3} {token:<16} " + (f"{value:.3e}" if movable else "not run: cannot move")
                  for i, (token, value, movable) in
                  enumerate(zip(pairs.tokens, pairs.sensitivity, pairs.movable))]
    return lines


def run(args) -> int:
    from ..api import sweep
    from ..api.runs import check_sweep
    _, _, count, _ = check_sweep(args.kind, args.count, "slot", 0, False, None,
                                 args.order_seed, args.layer)   # before a model is built
    if args.csv not in (None, "-"):                                   # before the runs
        from ..document.files import check_file
        check_file(args.csv, "csv")
        if args.kind == "swap":                                       # its maps' table
            check_file(pairs_path(args.csv), "csv")
    refuse_order(args)
    texts = experiment_texts(args)
    exact = not args.model and args.weights == "random"
    # the layer (0..L) refused as the config is read (a checkpoint's: once loaded)
    view = (args.layer, None, 0) if exact or args.model else ()
    from ..models.limits.guard import orders_of_words
    model, where = experiment_model(args, texts, orders=orders_of_words(
        args.kind, count, texts, exact), view=view)
    result = sweep(texts, model=model, kind=args.kind, count=args.count,
                   seed=args.order_seed, layer=args.layer, positions=where.mode,
                   offset=where.offset, literal=where.literal,
                   progress=reporter(args, "pair" if args.kind == "swap" else "run"))
    if args.csv:
        facts = csv_facts(result)
        write_csv(args.csv, csv_rows(result), facts)
        if result.pairs:                 # a table of their own (on stdout after a blank line)
            if args.csv == "-":
                print()
            write_csv(pairs_path(args.csv) if args.csv != "-" else "-", pair_rows(result),
                      facts)
        if args.csv != "-":
            tell_written([args.csv] + ([pairs_path(args.csv)] if result.pairs else []))
    elif args.json:
        print(json.dumps(result.to_dict(), indent=2))
    else:
        from ..document.provenance import made_by
        print("\n".join([made_by(result.provenance), *as_table(result)]))
    return 0

