"""The Experiments tab's controls: which experiment, on what, shown how; each labelled,
in two lines so the tab fits a 1024-pixel window beside the model panel."""
from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

from .checklist import EncodingsButton
from .jobs import SWAP_MAP, changed
from .swaps import map_choosers
from posviz.analysis.experiments.papers import CATALOGUE, RUNS_LOADED, paper_weights
from posviz.analysis.experiments.pretrained import lent_name
from posviz.analysis.experiments.probe import FEATURE_NAMES
from posviz.analysis.experiments.runs import KIND_TIPS, KINDS
from posviz.analysis.symmetry import METRICS
from posviz.models.training.checkpoint import RANDOM, TRAINED

TEXT_SOURCES = {"current": "The current text", "examples": "The example sentences",
                "generated": "Generated texts (enough for the probe)",
                "file": "Texts from a file…"}
CURRENT_REFUSED = ("The position probe fits on some texts and scores on others it held "
                   "out, so it needs several: the window's text is one")


PAPER_CHARS = 36        # the paper box's least width, in characters


def combo(items, tip: str) -> QtWidgets.QComboBox:
    """A box of (data, text) items, each text whole ("hidden equivariance", a paper's
    title), never cut."""
    box = QtWidgets.QComboBox()
    for data, text in items:
        box.addItem(text, data)
    box.setToolTip(tip)
    box.setSizeAdjustPolicy(QtWidgets.QComboBox.SizeAdjustPolicy.AdjustToContents)
    return box


def metric_items(lab: bool = False, extension: dict | None = None) -> list[tuple[str, str]]:
    """The Show box's choices: the symmetry metrics, or (``lab``) the context-extension
    lab's figures, with an attention figure per length its result ``extension``
    (Extension.to_dict()) ran, if one is shown."""
    if not lab:
        return [(m, m.replace("_", " ")) for m in METRICS]
    if extension is None:
        return list(EXTENSION_ITEMS)
    from .extension import extension_metrics
    return extension_metrics(extension)


EXTENSION_ITEMS = (("perplexity", "held-out perplexity"),
                   ("retrieval", "retrieval (± standard error)"),
                   ("attention", "attention against distance, at the longest length"))
METRIC_TIPS = {False: "Which metric the band shows (no new run needed)",
               True: "Which figure of the lab: perplexity or retrieval against the "
                     "length, or where attention goes at one length (no new run needed)"}


def fill_metric_box(box: QtWidgets.QComboBox, items) -> None:
    """Put ``items`` [(data, text)] in the Show box (unless it holds them), keeping
    its choice where the new items hold it, without telling its listeners."""
    items = list(items)
    held = [(box.itemData(i), box.itemText(i)) for i in range(box.count())]
    if [item for item in held if item[0] != SWAP_MAP] == items:
        return                          # a swap sweep's map stays (ExperimentsTab's)
    chosen = box.currentData()
    with QtCore.QSignalBlocker(box):
        box.clear()
        for data, text in items:
            box.addItem(text, data)
        box.setCurrentIndex(max(box.findData(chosen), 0))


def build_controls(tab) -> QtWidgets.QVBoxLayout:
    """The controls of ``tab`` (an ExperimentsTab), made its attributes and wired to its
    methods: two lines (what and which orders; on what and shown how)."""
    rows = QtWidgets.QVBoxLayout()
    first, second = QtWidgets.QHBoxLayout(), QtWidgets.QHBoxLayout()
    rows.addLayout(first)
    rows.addLayout(second)
    tab.what = combo([("sweep", "Sweep"), ("probe", "Position probe"),
                      ("paper", "Paper check"), ("compare", "Compare encodings"),
                      ("extend", "Context extension"), ("order", "Order use")],
                     "Which experiment to run")
    tab.kind = combo([(k, k) for k in KINDS], "Which orders a sweep runs:\n"
                     + "\n".join(f"{k}: {t}" for k, t in KIND_TIPS.items()))
    tab.count = QtWidgets.QSpinBox(minimum=1, maximum=100_000, value=32)
    tab.count.setToolTip("How many orders a random or prefix sweep runs per text")
    tab.seed = QtWidgets.QSpinBox(minimum=0, maximum=2**31 - 1, value=0)
    tab.seed.setToolTip("Seeds the orders a random or prefix sweep draws: the same seed "
                        "gives the same result")
    tab.texts = combo(list(TEXT_SOURCES.items()), "Which texts to run on")
    tab.metric_box = combo(metric_items(), "Which metric the band shows (no new run "
                                           "needed)")
    tab.features = combo(list(FEATURE_NAMES.items()),
                         "What the probe's regression reads: the hidden state, or also "
                         "its squares (so it can read a norm)")
    tab.paper = combo([(p.name, p.title) for p in CATALOGUE], "The published claim to check")
    # its longest title set the page's least width: a 1024-pixel window scrolled sideways
    # for a pixel; where room is short the box elides it (whole in its list and heading)
    tab.paper.setMinimumWidth(tab.paper.fontMetrics().horizontalAdvance("x" * PAPER_CHARS))
    tab.weights = combo([(RANDOM, "random"), (TRAINED, "trained")],
                        "The built-in model's weights: random (from the seed; the claims "
                        "that follow from the architecture) or the shipped checkpoints, "
                        "trained as causal language models")
    tab.encodings = EncodingsButton(tab.settings)
    tab.encodings.changed.connect(tab.refresh_stale)
    tab.run_button = QtWidgets.QPushButton("Run")
    tab.run_button.setShortcut(QtGui.QKeySequence("Ctrl+Return"))
    tab.run_button.setToolTip(RUN_TIPS[False])
    tab.run_button.clicked.connect(tab.run)
    tab.cancel_button = QtWidgets.QPushButton("Cancel")
    tab.cancel_button.setToolTip("Stop the running experiment (Esc)")
    tab.cancel_button.clicked.connect(tab.cancel)
    tab.cancel_button.setEnabled(False)
    tab.cancel_shortcut = QtGui.QShortcut(QtGui.QKeySequence("Escape"), tab)
    tab.cancel_shortcut.setContext(QtCore.Qt.ShortcutContext.WidgetWithChildrenShortcut)
    tab.cancel_shortcut.activated.connect(tab.cancel)
    tab._labelled = {}
    for row, label, widget in (
            (first, "Experiment", tab.what), (first, "Kind", tab.kind),
            (first, "Count", tab.count), (first, "Seed", tab.seed),
            (first, "Encodings", tab.encodings),
            (second, "Texts", tab.texts), (second, "Features", tab.features),
            (second, "Paper", tab.paper), (second, "Weights", tab.weights),
            (second, "Show", tab.metric_box)):
        caption = QtWidgets.QLabel(label)
        caption.setBuddy(widget)
        row.addWidget(caption)
        row.addWidget(widget)
        tab._labelled[widget] = caption
    map_choosers(tab, second)
    first.addStretch(1)
    second.addStretch(1)
    tab.what.currentIndexChanged.connect(tab._what_changed)
    tab.kind.currentIndexChanged.connect(tab._what_changed)
    tab.paper.currentIndexChanged.connect(tab._paper_chosen)
    tab.metric_box.currentIndexChanged.connect(tab._redraw)
    tab.texts.activated.connect(tab._texts_chosen)
    for signal in (tab.count.valueChanged, tab.seed.valueChanged,
                   tab.texts.currentIndexChanged, tab.features.currentIndexChanged,
                   tab.paper.currentIndexChanged, tab.weights.currentIndexChanged):
        signal.connect(tab.refresh_stale)
    return rows


RUN_INPUTS = ("what", "kind", "count", "seed", "encodings", "texts", "features", "paper",
              "weights")       # the controls a run is made of (make_job); Show only views


def lock_inputs(tab, locked: bool) -> None:
    """While a run goes, its inputs cannot change under it: a box set to "Order use"
    beside the bar of a context extension told of another run than the one going.
    Cancel and Show stay active (Run: lock_run)."""
    for name in RUN_INPUTS:
        getattr(tab, name).setEnabled(not locked)


RUN_TIPS = {False: "Run the experiment (Ctrl+Return)",
            True: "An experiment is running: Cancel (Esc) stops it, then Run runs again"}


def lock_run(tab, running: bool) -> None:
    """Run (and Ctrl+Return) is off while an experiment runs, its tip saying why: a
    second press restarted the run, its work so far thrown away without a word. The
    keyboard's focus on the one switched off goes to the other (Qt passes it on to the
    next widget of its focus chain, which may lie outside the tab, where Esc is not
    the tab's)."""
    off, on = (tab.run_button, tab.cancel_button)[::1 if running else -1]
    moves = off.hasFocus()
    tab.run_button.setEnabled(not running)
    tab.run_button.setToolTip(RUN_TIPS[running])
    if moves:
        on.setFocus()


LONG_S = 60          # a run this long or longer is said beside Run before it starts
# the long runs' times measured by runs (seconds, low to high: a quiet machine to
# load 6-10), said as an estimate before this machine has run them
ESTIMATES = {("extend", None, None): (240, 660),
             ("paper", "haviv2022", TRAINED): (900, 1080),
             # 17.9 s at load 3.1 in the window, 57 s at load 9 from the command line
             # (said "about 1 min 10 s to 7 min 0 s" before, from its runs before it
             # was staged by checkpoint)
             ("paper", "press2022", TRAINED): (15, 60),
             ("paper", "sinha2022", TRAINED): (60, 90),
             # SmolLM2 lent, so not loaded (converted) again: 4.7 s at load 5.4, said as
             # nothing (under LONG_S); MiniLM lent, SmolLM2 still loads: the one above
             ("paper", "sinha2022", TRAINED, "smollm2"): (4, 20)}


def took_key(what: str, paper: str | None, weights: str | None,
             loaded: dict | None = None) -> tuple | None:
    """The experiments whose time hangs on nothing the window chooses but the model it
    lends (a paper check on its weights, with the bundled model of ``loaded`` {source:
    backend} it runs on, not loaded again; the lab, order use); None for the others
    (their texts, counts...). sinha2022's time before a run was one for the built-in
    model and MiniLM, with SmolLM2's load in it or not."""
    if what == "paper":
        lent = lent_name(loaded) if runs_loaded(paper, weights) else ""
        return (what, paper, weights) + ((lent,) if lent else ())
    return (what, None, None) if what in ("extend", "order") else None


def runs_loaded(paper: str, weights: str | None) -> bool:
    """Does the check of ``paper`` on ``weights`` run a bundled model the window loaded
    on its weights (papers.check_paper's ``loaded``; its Paper declares it), rather than
    load it again?"""
    return RUNS_LOADED.get(paper) == paper_weights(paper, weights)


def loaded_of(session) -> dict | None:
    """{source: backend} of ``session``'s pretrained model (None: the built-in one)."""
    if session is None or session.spec.is_builtin:
        return None
    return {session.spec.source: session.backend}


def _minutes(seconds: float) -> str:
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if minutes else f"{rest} s"


def done_words(seconds: float) -> str:
    """"done in 71.4 s", "done in 15 min 44 s" (a lab's "done in 944.3 s" read badly)."""
    return f"done in {seconds:.1f} s" if seconds < 100 else f"done in {_minutes(seconds)}"


def takes_words(settings, key: tuple | None) -> str:
    """"takes about 18 min here (last run: 17 min 50 s at load 7.2)" from this
    machine's last run of ``key`` (remember_took), "about 15-18 min (an estimate)"
    before any, or "" for a run under LONG_S (a teacher saw nothing before pressing
    Run on a check of 18 minutes)."""
    if key is None:
        return ""
    told = last_took(settings, key)
    if told is not None:
        seconds, load = told
        if seconds < LONG_S:
            return ""
        about = f"{seconds / 60:.0f} min" if seconds >= 90 else f"{seconds:.0f} s"
        return f"takes about {about} here (last run: {_minutes(seconds)} at load {load:.1f})"
    low, high = estimate(key) or (0, 0)
    if high < LONG_S:
        return ""
    span = (f"{low / 60:.0f}-{high / 60:.0f} min" if low >= 90
            else f"{_minutes(low)} to {_minutes(high)}")
    return f"about {span} (an estimate: its runs on other machines)"


def last_took(settings, key: tuple | None) -> tuple[float, float] | None:
    """(seconds, load) of this machine's last run of ``key`` (remember_took), or None."""
    told = settings.value("experiments/took/" + "/".join(map(str, key)), "") \
        if settings is not None and key is not None else ""
    try:
        seconds, load = (float(x) for x in str(told).split())
    except ValueError:                  # none kept, or an unreadable entry
        return None
    return seconds, load


def took_range(settings, key: tuple | None) -> tuple[float, float] | None:
    """The seconds a run of ``key`` takes, low and high, before it has measured its own
    pace: this machine's last run, else the estimate of its runs elsewhere; or None."""
    told = last_took(settings, key)
    if told is not None:
        return told[0], told[0]
    return estimate(key) if key is not None else None


def estimate(key: tuple) -> tuple[float, float] | None:
    """ESTIMATES' seconds for ``key``: with the model it is lent, else with any."""
    return ESTIMATES.get(key, ESTIMATES.get(key[:3]))


def job_key(job) -> tuple | None:
    """The took_key of a submitted ExperimentJob (None: none submitted)."""
    if job is None:
        return None
    backend = getattr(job, "backend", None)
    return took_key(job.what, job.paper, job.weights,
                    None if backend is None else {job.spec.source: backend})


def remember_took(tab, seconds: float) -> None:
    """This machine's time for the run ``tab`` just finished, with its load then."""
    import os
    key = job_key(tab._submitted)
    if tab.settings is None or key is None:
        return
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    tab.settings.setValue("experiments/took/" + "/".join(map(str, key)),
                          f"{seconds:.1f} {load:.1f}")


def tell_takes(tab) -> None:
    """Beside Run (``tab.takes``), how long the chosen experiment takes here, when
    long; hidden while a run says its time left."""
    words = takes_words(tab.settings, took_key(
        tab.what.currentData(), tab.paper.currentData(), tab.weights.currentData(),
        loaded_of(tab._session())))
    tab.takes.setText(words)
    # on the line of the progress line's first (centred in their two-line row, it sat
    # half a line below "done in ...")
    tab.takes.setAlignment(QtCore.Qt.AlignmentFlag.AlignLeft | QtCore.Qt.AlignmentFlag.AlignTop)
    tab.takes.setVisible(bool(words) and not tab.cancel_button.isEnabled()
                         and not shown_is_current(tab))


def shown_is_current(tab) -> bool:
    """Is the result shown the one the controls would run? Its "done in" beside Run says
    how long it took (both side by side read as one thing said twice)."""
    if tab.result is None or tab.job is None:
        return False
    now = tab._inputs()
    return not isinstance(now, str) and not changed(tab.job, now, tab.what.currentData())


FIELD_NAMES = {"mask": "Mask", "layers": "Layers", "heads": "Heads", "d_model": "Width d",
               "ff_width": "MLP width", "norm": "LayerNorm", "residual": "Residual connections"}


def refuse_told(tab, message: str, inputs) -> None:
    """A refused run's ``message`` on ``tab`` with what to set first (what_to_set), and
    the status bar no longer saying it runs (it kept "Running the comparison...")."""
    tab._say(what_to_set(message, inputs), error=True)
    tab.told.emit("Did not run (Experiments tab): see why there")


def what_to_set(message: str, job) -> str:
    """``message`` (a run's refusal) with what to change in the Model panel first, when
    it says there is no trained checkpoint for the panel's model and one differs from it
    only in a few settings: "trained checkpoints are causal: set Mask to causal (no
    trained checkpoint for ...)" (a user with Mask bidirectional read only the list)."""
    config = getattr(getattr(job, "spec", None), "config", None)
    if config is None or "no trained checkpoint" not in message:
        return message
    from posviz.models.training.checkpoint import zoo
    best = None
    for checkpoint in zoo():
        differ = [name for name in FIELD_NAMES
                  if getattr(checkpoint.config, name) != getattr(config, name)]
        if differ and (best is None or len(differ) < len(best[1])):
            best = checkpoint.config, differ
    if best is None:
        return message
    trained, differ = best
    def value(name):
        shown = getattr(trained, name)
        return ("on" if shown else "off") if isinstance(shown, bool) else str(shown)
    said = "; ".join(f"set {FIELD_NAMES[name]} to {value(name)}" for name in differ)
    if getattr(job, "instead", ""):     # the panel shows a pretrained model: no Mask there
        from ..model_panel.source_box import BUILTIN_ITEM, SOURCE
        said = f"choose {BUILTIN_ITEM} as the Model panel's {SOURCE}, then {said}"
    kind = (f"trained checkpoints are {trained.mask}: " if differ == ["mask"] else
            "the trained checkpoints' model: ")
    return f"{kind}{said} ({message})"
