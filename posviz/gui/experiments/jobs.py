"""The job the Experiments tab's controls describe, the relay of its run, its caption, and
which of its inputs differ from those of the job whose result is shown (so a result of
other inputs is marked stale)."""
from __future__ import annotations

import json
import re

from PySide6 import QtCore

from ..model_panel.fields import MODE_LABELS
from posviz.analysis.symmetry import METRICS
from posviz.document import provenance as made
from posviz.document.provenance import PROVENANCE, file_lines, positions_options
from posviz.document.spec import ModelSpec, unusual
from posviz.errors import PosvizInputError
from posviz.models.trace import and_joined
from posviz.runtime.experiments import ExperimentJob
from posviz.version import __version__

# the job's fields each experiment reads (run_experiment), named as a user calls them
USES = {"sweep": ("spec", "texts", "positions", "kind", "count", "seed"),
        "probe": ("spec", "texts", "positions", "features"),
        "paper": ("paper", "weights"),
        "compare": ("spec", "texts", "positions", "order", "weights", "encodings"),
        "extend": ("factors",), "order": ()}
# each field as its control is labelled, so a stale result names what changed
NAMES = {"texts": "text", "positions": "positions", "order": "order",
         "kind": "kind", "count": "count", "seed": "seed", "features": "features",
         "paper": "paper", "weights": "weights", "encodings": "encodings",
         "factors": "lengths"}
# what of the window's model an experiment does not read: a comparison runs its own
# encodings, with the weights its own box chooses
SPEC_UNREAD = {"compare": ("encoding", "weights")}
DRAWN = ("random", "prefix")     # the sweeps whose orders are drawn: they read count and seed
SWAP_MAP = "swap map"            # the Show box's choice of a swap sweep's pair map
QUOTED = 60                      # characters of a text the figure quotes; the file has all
WHAT_NAMES = {"sweep": "sweep", "probe": "position probe", "paper": "paper check",
              "compare": "comparison of encodings", "extend": "context-extension lab",
              "order": "order use of the trained checkpoints"}
OWN_WORDS = ("paper", "extend", "order")  # experiments whose title and note name what they ran on


class Relay(QtCore.QObject):
    """Carries the worker's outcome, progress and stages to the GUI thread."""

    finished = QtCore.Signal(object)
    progressed = QtCore.Signal(int, int)
    said = QtCore.Signal(object)       # the stage that starts ("fitting the probe, …"),
                                       # a str or a Stage (its place in the run kept)


def make_job(tab, session) -> ExperimentJob:
    """The job ``tab``'s controls describe on ``session`` (None: the built-in model and
    text); PosvizInputError for a bad choice of texts. Each experiment reads only its
    own controls: a paper check has no texts to refuse."""
    from posviz.models.config import Positions
    what = tab.what.currentData()
    if what == "compare":
        return compare_job(tab, session)
    if what in ("extend", "order"):      # the shipped checkpoints, not the window's model
        return ExperimentJob(what)
    texts = _texts(tab, session) if what in ("sweep", "probe") else ()
    return ExperimentJob(
        what, spec=session.spec if session is not None else ModelSpec(),
        backend=(session.backend if session is not None and not session.spec.is_builtin
                 else None),
        texts=tuple(texts),
        positions=session.positions if session is not None else Positions(),
        kind=tab.kind.currentData(), count=tab.count.value(), seed=tab.seed.value(),
        features=tab.features.currentData(), paper=tab.paper.currentData(),
        weights=tab.weights.currentData())


def _texts(tab, session) -> list[str]:
    from posviz.analysis.experiments.texts import example_texts, read_texts
    from posviz.document.session import DEFAULT_TEXT
    source = tab.texts.currentData()
    if source == "examples":
        return example_texts()
    if source == "file":
        if tab._file is None:
            raise PosvizInputError("choose a file of texts first")
        return read_texts(tab._file)
    if source == "generated":
        if tab.what.currentData() != "probe":
            raise PosvizInputError("generated texts are for the probe: a sweep runs "
                                   "on the current text, the examples or a file")
        return []                                 # the probe generates enough
    return [session.text if session is not None else DEFAULT_TEXT]


def compare_job(tab, session) -> ExperimentJob:
    """Compare: the window's text, order and positions; the order carried word by word
    to the compared models' tokens where they read the text otherwise (the other kind
    of weights, or a pretrained model in the window)."""
    from posviz.document.session import DEFAULT_TEXT
    from posviz.models.config import Positions
    encodings = tab.chosen_encodings()
    if len(encodings) < 2:
        raise PosvizInputError("choose at least two encodings to compare")
    weights = tab.weights.currentData()
    spec = compared_spec(session)
    return ExperimentJob(
        "compare", spec=spec, texts=(session.text if session else DEFAULT_TEXT,),
        positions=session.positions if session is not None else Positions(),
        weights=weights, encodings=encodings,
        order=tuple(int(i) for i in session.order) if session is not None else None,
        ordered=session.seq if session is not None else None,
        instead=replaced_model(session))


def compared_spec(session) -> ModelSpec:
    """The model Compare runs each encoding on: the window's built-in model, or with a
    pretrained one in the window the built-in model's defaults (only the built-in
    model's encoding can be swapped)."""
    return session.spec if session is not None and session.spec.is_builtin else ModelSpec()


def replaced_model(session) -> str:
    """The window's pretrained model, which Compare does not run ("" when it runs the
    window's own built-in model, or there is no session)."""
    return "" if session is None or session.spec is compared_spec(session) \
        else session.spec.name


def compare_model(c, trained: bool = False) -> str:
    """The built-in model Compare runs (of ModelConfig ``c``, but for its encoding), with
    its settings: "built-in model (4 layers × 4 heads, width 64, bidirectional mask,
    pre-LN, seed 0)"; no seed when ``trained`` (trained weights record none)."""
    more = "".join(f", {word}" for word in unusual(c)
                   if word.startswith(("no residual", "MLP", "position")))
    norm = "no LayerNorm" if c.norm == "none" else f"{c.norm}-LN"
    return (f"built-in model ({c.layers} layers × {c.heads} heads, width {c.d_model}, "
            f"{c.mask} mask, {norm}{more}" + ("" if trained else f", seed {c.seed}") + ")")


def instead_words(instead: str) -> str:
    """What Compare says when the window holds pretrained model ``instead`` ("" none)."""
    return (f"not {instead}: only the built-in model's encoding can be swapped"
            if instead else "")


def caption(job: ExperimentJob) -> str:
    """The subtitle naming what ran, so a plot or an exported figure says which model,
    encoding, mask, weights and position ids it shows ("" for a paper check, whose
    title and note name its own models)."""
    if job.what in OWN_WORDS:
        return ""
    spec = job.spec
    if job.what == "compare":          # the encodings are the legend's
        trained = job.weights == "trained"
        line = (f"{compare_model(spec.config, trained)}, {job.weights} weights; "
                f"{order_words(job)}")
        if job.instead:
            line += f" ({instead_words(job.instead)})"
    else:
        line = spec.headline_of(job.backend)      # a pretrained model's facts from its backend
    positions = job.positions
    if positions.mode != "slot" or positions.offset:
        line += f"; positions {MODE_LABELS[positions.mode]}, first position id {positions.offset}"
    return line


def order_words(job: ExperimentJob) -> str:
    """The reorder a comparison ran: reversed, the window's, or (from Python and the
    command line, which have no window) the order itself."""
    if job.order is None:
        return "reversed order"
    if job.ordered is not None:
        return "the window's order"
    order = [str(i) for i in job.order]
    if len(order) > 24:                  # a long one by its ends
        order = [*order[:8], f"…({len(order) - 16:,} more)…", *order[-8:]]
    return f"order [{','.join(order)}]"


def changed(shown: ExperimentJob, now: ExperimentJob | None, what: str) -> list[str]:
    """What differs between the inputs of the ``shown`` result and the controls (their
    experiment ``what`` and job ``now``, None when they describe no valid job): [] when
    the result is current, ["experiment"] when another experiment is chosen, else the
    names of the inputs that changed."""
    if what != shown.what:
        return ["experiment"]
    if now is None:
        return ["options"]
    names = []
    for field in USES[shown.what]:
        if field in ("count", "seed") and shown.kind not in DRAWN:
            continue                    # a sweep of fixed orders reads neither
        before, after = getattr(shown, field), getattr(now, field)
        if field == "spec":             # the built-in model's options by name
            names += [name for name in after.changes_from(before)
                      if name not in SPEC_UNREAD.get(shown.what, ())]
        elif before != after:
            names.append(NAMES[field])
    return list(dict.fromkeys(names))


def file_name(job: ExperimentJob, metric: str | None) -> str:
    """What a file of ``job``'s figure showing ``metric`` (shown_metric) is offered as:
    the name the command line writes it under (extension-perplexity, compare), else
    the experiment and what it shows (sweep-swap-hidden, sweep-swap-map, paper-press2022,
    order-use)."""
    short = re.sub(r"[^a-z0-9]+", "-", re.sub(r"_(equivariance|change)$", "",
                                               str(metric or "").lower())).strip("-")
    named = {"extend": f"extension-{short}", "compare": "compare",
             "sweep": f"sweep-{job.kind}-{short.removeprefix(f'{job.kind}-')}",
             "probe": "position-probe",
             "paper": f"paper-{job.paper}", "order": "order-use"}
    return re.sub(r"[^A-Za-z0-9.]+", "-", named.get(job.what, "experiment")).strip("-")


def shown_metric(job: ExperimentJob, result, chosen: str | None) -> str | None:
    """What the figure draws of ``job``'s ``result`` when the Show box says ``chosen``:
    the swap map only for a swap sweep that made one, a metric the result has, else the
    first metric; None for an experiment the Show box does not apply to."""
    if job.what == "sweep" and chosen == SWAP_MAP and result.pairs:
        return SWAP_MAP
    if job.what == "sweep":
        return chosen if chosen in result.bands else METRICS[0]
    if job.what == "compare":
        return chosen if chosen in METRICS else METRICS[0]
    if job.what == "extend":
        from .extension import extension_metrics
        return chosen if chosen in dict(extension_metrics(result.to_dict())) \
            else "perplexity"
    return None


def _quoted(text: str) -> str:
    return f"“{text if len(text) <= QUOTED else text[:QUOTED - 1] + '…'}”"


def texts_named(job: ExperimentJob) -> str:
    """The texts ``job`` ran on, for a figure: a text quoted (elided past QUOTED), the
    count and the first of several, or generated ones ("" for a paper check: no texts)."""
    if job.what in OWN_WORDS:
        return ""
    if not job.texts:
        return "generated texts"
    if len(job.texts) == 1:
        return f"the text {_quoted(job.texts[0])}"
    return f"{len(job.texts)} texts, the first {_quoted(job.texts[0])}"


def computed_for(job: ExperimentJob, differ: list[str], chosen: str | None = None) -> str:
    """The line a figure of other inputs than the controls' carries (``differ``:
    changed), on screen (filed_line: in exports): what it was computed for. When only
    the experiment differs, the line names both (``chosen``: the one the controls
    show), not the inputs, which did not change."""
    if differ == ["experiment"]:
        replace = f"; run the {WHAT_NAMES[chosen]} to replace it" if chosen else ""
        return f"Computed for the {WHAT_NAMES[job.what]}{replace}"
    return filed_line(job, differ)


def filed_line(job: ExperimentJob, differ: list[str]) -> str:
    """The line of computed_for an export carries: none when only the experiment
    differs (the figure is that experiment's, whole, as its title says; the way to
    replace it is the window's business), else what it was computed for."""
    if not differ or differ == ["experiment"]:
        return ""
    texts = texts_named(job)
    ran = f"Computed for {texts}" if texts else "Computed"
    return f"{ran}{', ' if texts else ' '}before the {and_joined(differ)} changed"


def provenance(job: ExperimentJob, result, differ: list[str] = ()) -> dict[str, str]:
    """What an export of ``result`` of ``job`` carries (as the main figures' provenance
    does): the posviz version, the model as its subtitle names it, the texts whole (one
    as ``text``, several as a JSON list), the experiment's options, and, when the
    controls now ``differ``, a line saying so."""
    facts = {"posviz": __version__, **job.describe()}
    if job.what == "sweep" and job.kind not in DRAWN:
        facts.pop("count", None)           # its orders are fixed: count and seed unread
        facts.pop("seed", None)
    if job.what not in OWN_WORDS:          # what made it, as every output records it
        record = made.provenance(made.spec_model(job.spec, job.backend),
                                 options=positions_options(job.positions))
        if job.what == "compare":
            record.update(encoding=list(job.encodings), weights=job.weights or "random")
        facts.update(file_lines({key: record[key] for key in PROVENANCE}))
        facts["model"] = caption(job)
        if len(job.texts) == 1:
            facts.pop("texts", None)
            facts["text"] = job.texts[0]
        elif job.texts:
            facts["texts"] = json.dumps(list(job.texts), ensure_ascii=False)
        else:
            facts["texts"] = f"generated: {getattr(result, 'generated', '')}"
    elif getattr(result, "ran_on", ""):
        facts["ran_on"] = result.ran_on
        if getattr(result, "seed", None) is not None:       # the lab's checkpoints'
            facts["seed"] = result.seed
    if getattr(result, "carried", False):       # the order run, of the models' tokens
        facts["order_run"] = (",".join(map(str, result.order))
                              + " (the order carried word by word to the models' tokens)")
    if filed_line(job, list(differ)):
        facts["stale"] = filed_line(job, list(differ))
    return {key: " ".join(str(value).split()) for key, value in facts.items()}
