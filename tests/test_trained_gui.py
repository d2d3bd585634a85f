"""Trained weights in the window: the model panel's weights choice and the Experiments
tab's Compare view, on a zoo of tiny checkpoints (test_trained_claims)."""
import numpy as np
import pytest

pytest.importorskip("PySide6")

from posviz.document.spec import ModelSpec  # noqa: E402
from posviz.gui.experiments.tab import ExperimentsTab  # noqa: E402
from posviz.gui.model_panel.panel import ModelPanel  # noqa: E402
from posviz.models.config import ModelConfig  # noqa: E402
from test_trained_claims import zoo  # noqa: E402,F401 (a fixture)

TINY = ModelConfig(layers=2, heads=2, d_model=32, pe="alibi", mask="causal")


@pytest.fixture
def panel(qtbot, zoo):
    running = [ModelSpec.builtin(TINY)]
    widget = ModelPanel(lambda: running[0])
    qtbot.addWidget(widget)
    widget.show()
    asked = []
    widget.modelRequested.connect(asked.append)
    return widget, running, asked


def choose(widget, data) -> None:
    index = widget.weights.combo.findData(data)
    widget.weights.combo.setCurrentIndex(index)
    widget.weights.combo.activated.emit(index)      # what activating the item does


def test_trained_weights_are_asked_for_and_shown_with_their_record(panel, zoo):
    widget, running, asked = panel
    assert widget.weights.combo.currentData() == "random" and widget.field("seed").isEnabled()
    widget.describe(type("Shown", (), {"model": type("Views", (), {
        "facts": running[0].load().facts()})()})())
    assert "random weights (seed 0)" in widget.builtin_facts.text()
    choose(widget, "trained")
    assert len(asked) == 1 and asked[0].weights == "trained" and asked[0].trained
    assert asked[0].config.pe == "alibi" and asked[0].config.mask == "causal"
    running[0] = asked[0]
    widget.show_spec(running[0])
    assert widget.weights.combo.currentData() == "trained"
    assert not widget.field("seed").isEnabled()        # the seed draws random weights
    backend = running[0].load()
    facts = backend.facts()
    assert facts.weights.startswith("trained 30 steps on kjv-genesis-1-12.txt")

    class Shown:
        model = type("Views", (), {"facts": facts})()
    widget.describe(Shown())
    assert "trained 30 steps" in widget.builtin_facts.text()
    assert "held-out perplexity" in widget.builtin_facts.text()
    assert dict(facts.rows())["Weights"].startswith("trained 30 steps")


def test_no_checkpoint_for_the_configuration_is_told_under_the_weights(panel):
    widget, running, asked = panel
    widget.field("pe").setCurrentIndex(widget.field("pe").findData("rope"))  # random: asked
    asked.clear()
    choose(widget, "trained")
    assert asked == [] and widget.weights.error.isVisible()
    text = widget.weights.error.text()
    assert "no trained checkpoint for rope, causal" in text and "none, learned, alibi" in text


def test_the_compare_view_draws_each_encoding_on_the_same_reorder(qtbot, zoo, tmp_path):
    tab = ExperimentsTab()
    qtbot.addWidget(tab)
    tab.resize(1000, 600)
    tab.show()
    tab.what.setCurrentIndex(tab.what.findData("compare"))
    assert tab.encodings.isVisible() and tab.weights.isVisible() and not tab.paper.isVisible()
    assert tab.chosen_encodings() == ("none", "sinusoidal", "rope")
    for action in tab.encodings.menu().actions():
        action.setChecked(action.data() in ("none", "learned", "alibi"))
    assert tab.encodings.text() == "none, learned absolute, ALiBi"
    with qtbot.waitSignal(tab._relay.finished, timeout=60_000):
        tab.run()
    qtbot.waitUntil(lambda: tab.result is not None and not tab.cancel_button.isEnabled())
    shown = tab.figure.displayed()
    assert list(shown) == ["none", "learned", "alibi"]
    expected = tab.result.models[2].curve("hidden_equivariance")
    assert np.array_equal(shown["alibi"], expected, equal_nan=True)
    assert "3 encodings, random weights" in tab.figure.heading.text()
    tab.metric_box.setCurrentIndex(tab.metric_box.findData("last_token_change"))
    assert np.array_equal(tab.figure.displayed()["learned"],
                          tab.result.models[1].curve("last_token_change"), equal_nan=True)
    text = tab.export(tmp_path / "compare.csv", "csv").read_text()
    assert "# experiment: compare" in text and "# encodings: none,learned,alibi" in text
    for action in tab.encodings.menu().actions():
        action.setChecked(action.data() == "none")
    tab.run()
    assert "at least two encodings" in tab.status.text()
    tab.shutdown()


def test_a_checkpoint_folder_fixes_the_architecture(panel, zoo, monkeypatch):
    widget, running, asked = panel
    from posviz.gui.model_panel import weights_choice
    folder = str(zoo / "learned")
    monkeypatch.setattr(weights_choice.QFileDialog, "getExistingDirectory",
                        staticmethod(lambda *args: folder))
    choose(widget, "")                                          # "Checkpoint folder…"
    assert len(asked) == 1 and asked[0].weights == folder and asked[0].config.pe == "learned"
    running[0] = asked[0]
    widget.show_spec(running[0])
    assert widget.weights.combo.currentText() == "learned"
    assert not widget.field("pe").isEnabled() and not widget.field("layers").isEnabled()
    assert widget.field("pe_scale").isEnabled() and widget.field("dtype").isEnabled()
    choose(widget, "random")                                    # back: the table's default
    assert asked[-1].weights == "random" and asked[-1].config.max_len == 1024
    assert asked[-1].config.pe == "learned"


def test_press2022_draws_perplexity_against_length_in_view(qtbot, zoo, monkeypatch):
    from posviz.analysis.experiments import trained
    monkeypatch.setattr(trained, "PRESS_TOKENS", 4 * 16 * 6)
    tab = ExperimentsTab()
    qtbot.addWidget(tab)
    tab.resize(1000, 600)
    tab.show()
    tab.what.setCurrentIndex(tab.what.findData("paper"))
    tab.paper.setCurrentIndex(tab.paper.findData("press2022"))
    assert tab.weights.currentData() == "trained"          # the weights it speaks of
    with qtbot.waitSignal(tab._relay.finished, timeout=60_000):
        tab.run()
    qtbot.waitUntil(lambda: tab.result is not None and not tab.cancel_button.isEnabled())
    shown = tab.figure.displayed()
    assert list(shown) == ["none", "learned", "alibi", "unigram"]
    assert np.isnan(shown["learned"][1:]).all() and not np.isnan(shown["alibi"]).any()
    low, high = tab.figure.plot.viewRange()[1]                # log10 of perplexity
    values = np.concatenate([v[~np.isnan(v)] for v in shown.values()])
    assert low <= np.log10(values.min()) and np.log10(values.max()) <= high
    assert "Press et al. 2022 — train short, test long (trained weights)" in \
        tab.figure.heading.text()
    tab.shutdown()
