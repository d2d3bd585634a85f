"""The Positions tab, the Outputs tab and the model panel show a real model's own
machinery, predictions and facts; the figures export them, from the window and from
``posviz export --model``."""
from __future__ import annotations

import csv
import os
import types

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np  # noqa: E402
import pytest  # noqa: E402

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from test_hf import save_tiny  # noqa: E402

from posviz import cli  # noqa: E402
from posviz.analysis.engine import Engine  # noqa: E402
from posviz.document.session import Session  # noqa: E402
from posviz.document.spec import ModelSpec  # noqa: E402
from posviz.gui.model_panel.panel import ModelPanel  # noqa: E402
from posviz.gui.plots import PlotsPanel  # noqa: E402
from posviz.models import hf  # noqa: E402
from posviz.models.builtin.backend import BuiltinBackend  # noqa: E402
from posviz.models.config import ModelConfig, Positions  # noqa: E402
from posviz.models.hf.machinery import machinery_of  # noqa: E402
from posviz.views.model import model_views  # noqa: E402
from posviz.views.shown import Shown, build_views  # noqa: E402

TEXT = "the cat sat on the mat"


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("models")
    for family in ("bert", "llama"):
        save_tiny(family, root / family)
    return root


@pytest.fixture
def view():
    """The session whose view selection the panel draws."""
    return Session()


@pytest.fixture
def panel(qtbot, view):
    widget = PlotsPanel()
    widget.set_session(view)
    qtbot.addWidget(widget)
    widget.resize(1300, 850)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


def shown_of(backend, text=TEXT):
    seq = backend.tokenize(text)
    ev = Engine(backend).evaluate(seq, np.arange(len(seq))[::-1].copy(), Positions())
    return Shown(ev, build_views(ev, None), model_views(backend, ev))


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(line for line in handle if not line.startswith("# ")))
    return rows[0], rows[1:]


def test_positions_tab_shows_a_learned_table_and_its_similarity(panel, folders, tmp_path):
    backend = hf.load_backend(str(folders / "bert"))
    panel.show_evaluation(shown_of(backend))
    shown = panel.displayed()
    weight = backend.model.embeddings.position_embeddings.weight.detach().numpy()   # (64, d)
    np.testing.assert_array_equal(shown["encoding"]["encoding"], weight)
    cosine = shown["encoding_similarity"]["cosine"]
    unit = weight / np.linalg.norm(weight, axis=1, keepdims=True)
    np.testing.assert_allclose(cosine, unit @ unit.T, atol=1e-5)
    profile = shown["relative_profile"]["value"][0]
    assert profile[0] == pytest.approx(1.0, abs=1e-5)          # each row with itself
    assert "position table" in panel.figures()["encoding"].heading.text()
    # the exported table holds every row shown
    header, rows = read_csv(panel.export_figure("encoding", tmp_path / "encoding.csv"))
    assert len(rows) == weight.size and header[-1] == "encoding"


def test_positions_tab_shows_rope_frequencies_and_score(panel, folders):
    backend = hf.load_backend(str(folders / "llama"))
    panel.show_evaluation(shown_of(backend))
    shown = panel.displayed()
    figure = panel.figures()["encoding"]
    assert figure.stack.currentWidget() is figure.side
    head_dim = 32 // 4
    theta = backend.model.config.rope_parameters["rope_theta"]
    np.testing.assert_allclose(shown["encoding"]["value"][0],
                               theta ** (-np.arange(0, head_dim, 2) / head_dim), rtol=1e-6)
    # the score against Δ for q = k = 1: the mean of cos(Δ θ_i)
    profile = panel.figures()["relative_profile"]
    distances = np.array(profile.coords["distance"])
    inv = theta ** (-np.arange(0, head_dim, 2) / head_dim)
    np.testing.assert_allclose(shown["relative_profile"]["value"][0],
                               np.cos(distances[:, None] * inv).mean(1), atol=1e-6)
    assert "RoPE" in profile.heading.text()
    score = shown["encoding_similarity"]
    assert np.isnan(next(iter(score.values()))[0, 1])            # causal: key ahead


def test_alibi_and_t5_figures_follow_the_selected_head(panel, view):
    """Models the loader may not read yet: their machinery shown beside a built-in run."""
    from test_facts import FAMILIES, backend_of, build
    base = BuiltinBackend(ModelConfig(pe="none", layers=2, heads=4, d_model=16))
    for name in ("bloom", "t5"):
        model = build(*FAMILIES[name][:2], **FAMILIES[name][2])
        seq = base.tokenize(TEXT)
        ev = Engine(base).evaluate(seq, np.arange(len(seq))[::-1].copy(), Positions())
        real = backend_of(model, name)
        real.machinery = lambda real=real: machinery_of(real)
        real.head = None
        views = model_views(real, ev)
        panel.show_evaluation(Shown(ev, build_views(ev, None), views))
        view.select(view.selection.replace(head=0))
        panel.tabs.setCurrentIndex(2)                 # on screen, then another head
        view.select(view.selection.replace(head=2))
        shown = panel.displayed()
        maps = views.machinery.pair_maps
        np.testing.assert_array_equal(next(iter(shown["encoding_similarity"].values())),
                                      maps[2])
        assert panel.provenance("encoding_similarity")["head"] == "2"     # the head's map
        np.testing.assert_array_equal(shown["encoding"]["value"], views.machinery.parameters)
        np.testing.assert_array_equal(shown["relative_profile"]["value"],
                                      views.machinery.profile.values)


def test_the_pooled_cosine_below_1_is_not_read_as_indistinguishable():
    from posviz.analysis.predictions import Outputs
    from posviz.gui.plots.predictions import outputs_html
    text = outputs_html(Outputs("encoder", 0.998248))
    assert "Cosine <b>0.998248</b> between the two orders' mean-pooled last hidden " in text
    assert "(exactly 1 would mean pooling cannot tell the orders apart; below 1, their " \
        "pooled outputs differ)" in text
    assert "(1: pooling" not in text


def test_the_original_order_s_outputs_tell_the_window_how_to_compare_and_the_data_not(
        panel, capsys):
    """The window's Outputs tab on the original order says how to compare two orders;
    the report's JSON (and the Python API's) holds what the run is, no window's words."""
    import json

    from posviz.analysis.predictions import COMPARE_HINT, ORIGINAL_NOTE
    backend = BuiltinBackend(ModelConfig(pe="sinusoidal", layers=2, heads=2, d_model=16))
    seq = backend.tokenize(TEXT)
    ev = Engine(backend).evaluate(seq, np.arange(len(seq)), Positions())
    panel.show_evaluation(Shown(ev, build_views(ev, None), model_views(backend, ev)))
    panel.tabs.setCurrentIndex(3)
    said = panel.figures()["outputs"].text.text()
    assert ORIGINAL_NOTE in said and COMPARE_HINT in said
    assert cli.main(["report", "--text", TEXT, "--order", ",".join(map(str, range(len(seq)))),
                     "--layers", "2", "--heads", "2", "--d-model", "16", "--json"]) == 0
    note = json.loads(capsys.readouterr().out)["outputs"]["note"]
    assert note.startswith(ORIGINAL_NOTE) and "Drag" not in note and "press" not in note


def test_outputs_tab_shows_the_pooled_cosine_and_exports_it(panel, tmp_path):
    backend = BuiltinBackend(ModelConfig(pe="sinusoidal", layers=2, heads=2, d_model=16))
    shown = shown_of(backend)
    panel.show_evaluation(shown)
    panel.tabs.setCurrentIndex(3)
    data = panel.displayed()["outputs"]
    assert data["value"][0] == pytest.approx(shown.model.outputs.pooled_cosine)
    figure = panel.figures()["outputs"]
    assert "cosine" in figure.text.text()
    header, rows = read_csv(panel.export_figure("outputs", tmp_path / "outputs.csv"))
    assert header == ["entry", "entry_token", "value", "token_id"]
    assert rows[0][0] == "pooled cosine"


def test_outputs_figure_shows_top_tokens_of_a_head_model(panel):
    from test_predictions import WithHead
    backend = BuiltinBackend(ModelConfig(pe="learned", layers=2, heads=2, d_model=16))
    tokenizer = types.SimpleNamespace(decode=lambda ids: f"t{ids[0]}",
                                      convert_ids_to_tokens=lambda i: f"t{i}")
    config = transformers.GPT2Config(vocab_size=50, n_embd=16, n_layer=1, n_head=2,
                                     n_positions=32)
    head = transformers.GPT2LMHeadModel(config)
    proxy = WithHead(backend, head, "causal")
    proxy.tokenizer = tokenizer
    from posviz.models.hf.families import BY_MODEL_TYPE
    proxy.family = BY_MODEL_TYPE["gpt2"]         # where a GPT-2 keeps its head
    shown = shown_of(proxy)
    panel.show_evaluation(shown)
    panel.tabs.setCurrentIndex(3)
    data = panel.displayed()["outputs"]
    prediction = shown.model.outputs.predictions[0]
    assert data["value"][1] == pytest.approx(prediction.kl)
    np.testing.assert_allclose(data["value"][2:7], prediction.original.probabilities)
    figure = panel.figures()["outputs"]
    assert "KL" in figure.text.text() and prediction.original.tokens[0] in figure.text.text()
    assert figure.canvas.isVisibleTo(figure)
    # the chart takes what the text does not need: no half of the figure left blank
    panel.resize(1900, 850)
    from PySide6 import QtWidgets
    QtWidgets.QApplication.processEvents()
    assert figure.canvas.width() >= 0.6 * figure.width(), (figure.canvas.width(),
                                                           figure.width())
    # the text whole (above the chart, as tall as its lines at its width)
    assert figure.text.heightForWidth(figure.text.width()) <= figure.text.height()
    # one figure on the tab: one row's height asked of the window, so at 1920 × 1050
    # the chart's token labels are in sight without scrolling
    from test_positions_layout import asks_for
    panel.set_row_height(380)
    assert asks_for(panel, 380)
    panel.tabs.setCurrentIndex(0)
    assert asks_for(panel, 760)


def test_outputs_without_predictions_use_the_whole_width(panel):
    backend = BuiltinBackend(ModelConfig(pe="sinusoidal", layers=2, heads=2, d_model=16))
    panel.show_evaluation(shown_of(backend))
    panel.tabs.setCurrentIndex(3)
    figure = panel.figures()["outputs"]
    assert not figure.canvas.isVisibleTo(figure)
    assert figure.text.width() >= 0.9 * figure.width()


def test_model_panel_shows_the_facts_block(qtbot, folders):
    backend = hf.load_backend(str(folders / "llama"))
    spec = ModelSpec.pretrained(str(folders / "llama"), "tiny llama")
    panel = ModelPanel(lambda: spec)
    qtbot.addWidget(panel)
    panel.describe(shown_of(backend))
    text = panel.model_facts.text()
    for part in ("RoPE, θ = 10000", "3 × 4 (2 key-value)", "<td>32</td>", "causal",
                 "float32 on cpu", "Parameters"):
        assert part in text, part
    builtin = BuiltinBackend(ModelConfig(pe="alibi", layers=2, heads=2, d_model=16))
    panel = ModelPanel(lambda: ModelSpec.builtin(builtin.config))
    qtbot.addWidget(panel)
    panel.describe(shown_of(builtin))
    assert "ALiBi" in panel.builtin_facts.text() and not panel.builtin_facts.isHidden()
    assert panel.model_facts.isHidden()


def test_cli_export_of_a_real_model_writes_its_machinery(folders, tmp_path, capsys):
    out = tmp_path / "figs"
    status = cli.main(["export", "--model", str(folders / "llama"), "--text", TEXT,
                       "--order", "0,5,4,3,2,1,6", "--out", str(out), "--format", "png"])
    assert status == 0, capsys.readouterr().err
    header, rows = read_csv(out / "encoding.csv")
    assert header[-1] == "value" and len(rows) == 4                      # θ_0..θ_3
    assert float(rows[0][-1]) == pytest.approx(1.0)
    header, rows = read_csv(out / "relative_profile.csv")
    assert len(rows) == 64                         # Δ = -63..0: 64 positions, causal
    assert (out / "outputs.png").is_file() and (out / "outputs.csv").is_file()
