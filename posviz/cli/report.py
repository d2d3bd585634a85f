"""``posviz report``: the per-layer symmetry metrics of one order, as a table or JSON.

    posviz report [model options] --text TEXT [--order I,J,...] [--quiet] [--json]
    posviz report --session FILE.posviz [--json]

``--session`` takes the text, order, positions and model from a .posviz file (what the
window shows for it); ``--save-session FILE`` writes what was computed as one. The JSON
is the Python API's report (posviz.api.Report.to_dict).
"""
from __future__ import annotations

import json
import math
import sys
from contextlib import contextmanager
from pathlib import Path

from ..errors import PosvizInputError
from .options import (add_model_arguments, builtin_flags_given, evaluate, online, progress,
                      tell_written)

HEADER = ("layer", "hidden eq.", "attention eq.", "last token", "pooled", "token median",
          "tokens 25–75%", "hidden states")
                             # (2.1 GB: 0.4 s at load 7)
ROW = "{:>5}  {:>11}  {:>13}  {:>11}  {:>11}  {:>12}  {:>15}  {}"


def add_command(subparsers) -> None:
    parser = subparsers.add_parser("report", help="per-layer symmetry metrics for one order")
    add_model_arguments(parser)
    add_session_arguments(parser)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.set_defaults(func=run)


def add_session_arguments(parser) -> None:
    group = parser.add_argument_group("sessions")
    group.add_argument("--session", metavar="FILE.posviz",
                       help="take the text, order, positions, model and view from a "
                            "session file saved by the window (instead of --text, "
                            "--order and the model options)")
    group.add_argument("--save-session", metavar="FILE.posviz",
                       help="write what was computed as a session file the window opens")


def evaluate_command(args):
    """The api.Report of the options, or of the --session file; the document read (or
    None) is kept in ``args.document`` for --save-session, whose file is checked first
    (a file /proc refused only after the runs: 20 s of a 5,000-word report)."""
    args.document = None
    if getattr(args, "save_session", None):
        from ..document.files import check_file
        check_file(args.save_session, "save_session")
    if getattr(args, "session", None) is None:
        return evaluate(args)
    given = [name for name, value in (("--text", args.text), ("--order", args.order),
                                      ("--model", args.model)) if value is not None]
    given += builtin_flags_given(args)
    if given:
        raise PosvizInputError(f"{given[0]} cannot be given with --session (the session "
                               f"holds the text, the order and the model)")
    from ..api import load_session
    from ..document.session_file import model_mismatch
    say = progress(args)
    report = load_session(args.session, device=getattr(args, "device", "cpu"),
                          offline=not online(args), progress=_before_run(say))
    doc = args.document = report.document
    mismatch = model_mismatch(doc)
    if mismatch:
        print(f"posviz: warning: {mismatch}", file=sys.stderr)
    return report


def _before_run(say):
    """``say`` with the runs of a saved session told as one step."""
    if say is None:
        return False

    def told(step: str, done=None, total=None) -> None:
        if step == "running the original order":
            say("running the original and the saved order")
        elif step != "running the chosen order":
            say(step, done, total)
    return told


def save_session(args, session) -> list[Path]:
    """--save-session: the session as computed, with the read document's title and note;
    the file written, or none."""
    if not getattr(args, "save_session", None):
        return []
    from ..document.session_file import write
    doc = args.document
    return [write(Path(args.save_session), session.to_document(
        doc.title if doc else "", doc.note if doc else ""))]


def _format(value) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else f"{value:.3e}"


def shortened(items, sep: str) -> str:
    """A long list by its ends and how many it leaves out (``--json`` has them all):
    "0,1,2,…(4,080 more)…,4095"."""
    from ..api.report import abbreviated
    return abbreviated(items, sep=sep)[1:-1]


def as_table(report) -> list[str]:
    """The report as lines of text: the model, the order, how it ran, one row per layer
    (with the median and middle half over tokens of each token's own change), then the
    notes that qualify the numbers."""
    from ..analysis.floor import BELOW_FLOOR
    from ..document.provenance import model_options, spelled
    from ..views.reading import FRAME_WORDS, frame
    from ..views.shown import same_input
    backend, ev = report.model.backend, report.evaluation
    tokens, floor = ev.seq.tokens, ev.comparison.floor
    lines = [
        f"model:  {backend.name}  "
        + " ".join(f"{k}={spelled(v)}" for k, v in model_options(backend.describe()).items()
                   if k != "model"),
        f"tokens: {shortened(tokens, ' ')}",
        f"order:  {shortened(ev.order, ',')}  ->  "
        f"{shortened([tokens[i] for i in ev.order], ' ')}",
        f"noise floor: {floor:.1e} ({BELOW_FLOOR})",
        f"run:    {FRAME_WORDS[frame(ev)]}\n",
        ROW.format(*HEADER),
    ]
    twins = same_input(ev)                  # only identical tokens exchanged
    for row in report.layers:
        verdict = ("equivariant" if row["hidden_equivariance"] <= floor else
                   "rows differ" if twins else "changed")
        lines.append(ROW.format(
            row["layer"], _format(row["hidden_equivariance"]),
            _format(row["attention_equivariance"]), _format(row["last_token_change"]),
            _format(row["pooled_change"]), _format(row["token_median"]),
            f"{row['token_p25']:.1e}–{row['token_p75']:.1e}", verdict))
    return lines + [f"\n{note}" for note in report.worded_notes()]


def run(args) -> int:
    report = evaluate_command(args)
    written = save_session(args, report.session)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        from ..document.provenance import made_by
        print("\n".join([made_by(report.provenance), *as_table(report)]))
    tell_written(written)
    return 0


@contextmanager
def maps_removal_told(args):
    """Inside (a command's run), maps on disk removed as their run goes (models.maps:
    ``removal_told``, a run freed as a command's function returns) told in the
    command's lines, as remove_maps tells them; the script's telling back after."""
    from ..models import maps
    say, before = progress(args), maps.removal_told
    maps.removal_told = lambda nbytes: _removing(say if nbytes >= maps.REMOVAL_TOLD
                                                 else None, nbytes)
    try:
        yield
    finally:
        maps.removal_told = before


def _removing(say, nbytes: int):
    from ..models.limits.memory import size_text
    from ..models.reached import ticking
    return ticking(say, f"removing the attention maps kept on disk ({size_text(nbytes)})")


def remove_maps(args) -> None:
    """The attention maps every run of the command kept on disk (models.maps.kept_on_disk:
    the engine's original order's run too) removed, and told, before the command ends
    (cli.main, after each command): SmolLM2's at 3,388 tokens (12 GB) took 6.5 s after
    the report, untold; a sweep's of 3,000 words 2.5 s after its last run."""
    from ..models.maps import REMOVAL_TOLD, kept_on_disk
    kept = kept_on_disk()
    if not kept:
        return
    size = sum(maps.on_disk for maps in kept)
    with _removing(progress(args) if size >= REMOVAL_TOLD else None, size):
        for maps in kept:
            maps.close()
