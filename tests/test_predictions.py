"""What a model predicts after each order, checked against transformers' own forward
and torch's own softmax and KL divergence, on tiny random head models saved to a
temporary folder and loaded through posviz."""
from __future__ import annotations

import json
import os

os.environ["HF_HUB_OFFLINE"] = "1"

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
from test_hf import byte_bpe_tokenizer, wordpiece_tokenizer  # noqa: E402
from transformers import BertConfig, BertForMaskedLM, GPT2Config, GPT2LMHeadModel  # noqa: E402

from posviz import cli  # noqa: E402
from posviz.analysis.engine import Engine  # noqa: E402
from posviz.analysis.predictions import TOP_K, compare_outputs, pooled_cosine  # noqa: E402
from posviz.models import hf  # noqa: E402
from posviz.models.builtin.backend import BuiltinBackend  # noqa: E402
from posviz.models.config import ModelConfig, Positions  # noqa: E402
from posviz.views.model import model_views  # noqa: E402
from conftest import on_screen  # noqa: E402

F = torch.nn.functional


def save_gpt2(folder):
    tokenizer = byte_bpe_tokenizer(bos=False)
    torch.manual_seed(1)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=len(tokenizer), n_embd=32, n_layer=2,
                                       n_head=4, n_positions=64, initializer_range=0.5,
                                       bos_token_id=None, eos_token_id=None))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def save_bert_mlm(folder):
    tokenizer = wordpiece_tokenizer()
    torch.manual_seed(2)
    model = BertForMaskedLM(BertConfig(vocab_size=len(tokenizer), hidden_size=32,
                                       num_hidden_layers=2, num_attention_heads=4,
                                       intermediate_size=64, max_position_embeddings=64,
                                       initializer_range=0.5))
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("heads")
    save_gpt2(root / "gpt2")
    save_bert_mlm(root / "bert")
    return root


class WithHead:
    """An HFBackend as posviz loads it, with the head model beside it (what the loader
    keeps once it loads heads: ``model`` with its head, ``base`` inside it, ``head``)."""

    def __init__(self, backend, head_model, head):
        self._backend, self.model, self.head = backend, head_model.eval(), head
        self.base = head_model.base_model

    def __getattr__(self, name):
        return getattr(self._backend, name)


def loaded(folder, head_class, head):
    backend = hf.load_backend(str(folder))
    model = head_class.from_pretrained(folder, attn_implementation="eager")
    return WithHead(backend, model, head)


def evaluate(backend, text, order=None):
    seq = backend.tokenize(text)
    order = np.arange(len(seq))[::-1].copy() if order is None else np.asarray(order)
    return Engine(backend).evaluate(seq, order, Positions())


def ordinary_logits(model, ids, bert=False):
    """transformers' own forward on the reordered ids, default position ids."""
    ids = torch.tensor([ids])
    kwargs = {"token_type_ids": torch.zeros_like(ids)} if bert else {}
    with torch.no_grad():
        return model(input_ids=ids, attention_mask=torch.ones_like(ids), **kwargs).logits[0]


def check_prediction(prediction, logits_a, logits_b, slot_a, slot_b):
    p = F.softmax(logits_a[slot_a].double(), -1)
    q = F.softmax(logits_b[slot_b].double(), -1)
    for top, probs in ((prediction.original, p), (prediction.reordered, q)):
        values, ids = probs.topk(TOP_K)
        assert list(top.ids) == ids.tolist()
        np.testing.assert_allclose(top.probabilities, values.numpy(), rtol=1e-4)
        assert len(top.tokens) == TOP_K and all(top.tokens)
    kl = F.kl_div(q.log(), p.log(), log_target=True, reduction="sum")     # KL(p ‖ q)
    assert prediction.kl == pytest.approx(float(kl), rel=1e-3, abs=1e-6)
    assert prediction.slots == (slot_a, slot_b)


def test_causal_lm_next_token_after_each_order(folders):
    backend = loaded(folders / "gpt2", GPT2LMHeadModel, "causal")
    ev = evaluate(backend, "the cat sat on the mat because it was warm")
    outputs = compare_outputs(backend, ev)
    assert outputs.kind == "causal" and len(outputs.predictions) == 1
    ids = list(ev.seq.ids)
    logits_a = ordinary_logits(backend.model, ids)
    logits_b = ordinary_logits(backend.model, [ids[i] for i in ev.order])
    n = len(ids)
    check_prediction(outputs.predictions[0], logits_a, logits_b, n - 1, n - 1)
    assert outputs.predictions[0].kl > 1e-6          # another last token: it changes


def test_identical_orders_predict_the_same(folders):
    backend = loaded(folders / "gpt2", GPT2LMHeadModel, "causal")
    ev = evaluate(backend, "the cat sat on the mat", order=np.arange(6))
    outputs = compare_outputs(backend, ev)
    assert outputs.predictions[0].kl == pytest.approx(0.0, abs=1e-9)
    assert outputs.pooled_cosine == pytest.approx(1.0, abs=1e-9)


def test_masked_lm_predictions_at_the_mask_for_both_orders(folders):
    backend = loaded(folders / "bert", BertForMaskedLM, "masked")
    ev = evaluate(backend, "the cat [MASK] on the mat")
    outputs = compare_outputs(backend, ev)
    assert outputs.kind == "masked" and len(outputs.predictions) == 1
    ids = list(ev.seq.ids)
    mask = ids.index(backend.tokenizer.mask_token_id)
    slot_b = list(ev.order).index(mask)             # where the reorder put the mask
    logits_a = ordinary_logits(backend.model, ids, bert=True)
    logits_b = ordinary_logits(backend.model, [ids[i] for i in ev.order], bert=True)
    check_prediction(outputs.predictions[0], logits_a, logits_b, mask, slot_b)
    assert "[MASK]" in outputs.predictions[0].where


def test_masked_lm_predictions_of_a_reorder_run_in_the_original_frame(folders):
    """A BERT as the loader makes it (the backend holding its head) runs a reorder in
    the original tokens' frame: the reordered guess is still the one transformers
    gives at the slot the mask moved to."""
    plain = hf.load_backend(str(folders / "bert"))
    model = BertForMaskedLM.from_pretrained(folders / "bert", attn_implementation="eager")
    from posviz.models.hf.backend import HFBackend
    backend = HFBackend(model, plain.tokenizer, plain.family, plain.name, plain.path,
                        head="masked")
    ev = evaluate(backend, "the cat [MASK] on the mat")
    assert ev.aligned
    outputs = compare_outputs(backend, ev)
    ids = list(ev.seq.ids)
    mask = ids.index(backend.tokenizer.mask_token_id)
    check_prediction(outputs.predictions[0], ordinary_logits(model, ids, bert=True),
                     ordinary_logits(model, [ids[i] for i in ev.order], bert=True),
                     mask, list(ev.order).index(mask))
    assert "permuted" not in vars(ev)              # read from the run as it is


def test_masked_lm_without_a_mask_says_how_to_ask(folders):
    backend = loaded(folders / "bert", BertForMaskedLM, "masked")
    outputs = compare_outputs(backend, evaluate(backend, "the cat sat on the mat"))
    assert outputs.predictions == () and "[MASK]" in outputs.note


def test_an_encoder_compares_mean_pooled_states():
    backend = BuiltinBackend(ModelConfig(pe="none", layers=2, heads=2, d_model=16))
    ev = evaluate(backend, "a small cat sat on the mat")
    outputs = compare_outputs(backend, ev)
    assert outputs.kind == "encoder" and outputs.predictions == ()
    a = ev.reference.hidden[-1].mean(0)
    b = ev.permuted.hidden[-1].mean(0)
    assert outputs.pooled_cosine == pytest.approx(
        float(F.cosine_similarity(torch.tensor(a), torch.tensor(b), dim=0)), abs=1e-6)
    # no positions, bidirectional: the pooled state cannot tell the orders apart
    assert outputs.pooled_cosine == pytest.approx(1.0, abs=1e-6)
    with_positions = BuiltinBackend(ModelConfig(pe="sinusoidal", layers=2, heads=2,
                                                d_model=16))
    assert compare_outputs(with_positions, evaluate(with_positions, "a small cat sat on "
                                                    "the mat")).pooled_cosine < 1 - 1e-6


def test_pooled_cosine_of_orthogonal_means():
    assert pooled_cosine(np.array([[1.0, 0.0]]), np.array([[0.0, 2.0]])) == 0.0


def test_pooled_cosine_of_equal_means_is_at_most_one():
    """The token means of (5, 7) states and their reverse are equal; rounding alone
    puts their raw cosine at 1 + 2e-16 (seed 8), which no cosine can be."""
    hidden = np.random.default_rng(8).standard_normal((5, 7))
    a, b = hidden.mean(0), hidden[::-1].mean(0)
    assert a @ b / (np.linalg.norm(a) * np.linalg.norm(b)) > 1.0
    assert pooled_cosine(hidden, hidden[::-1]) == 1.0
    assert pooled_cosine(hidden, -hidden[::-1]) == -1.0


def test_model_views_travel_with_the_shown_evaluation(folders):
    """The worker puts them in the Shown; a restyle (another mosaic look) keeps them."""
    from posviz.runtime.jobs import EvaluationRunner, ViewsJob
    backend = loaded(folders / "gpt2", GPT2LMHeadModel, "causal")
    ev = evaluate(backend, "the cat sat on the mat")
    views = model_views(backend, ev)
    assert model_views(backend, ev).facts is views.facts          # once per model
    restyled = EvaluationRunner().restyle(ViewsJob(ev, None, None, views)).shown
    assert restyled.model is views and restyled.evaluation.comparison is ev.comparison
    assert views.facts.head == "causal" and views.machinery.scheme == "learned"
    assert views.outputs.kind == "causal"


def test_loaded_head_models_predict(folders):
    """Through the loader alone: it keeps the head model when it loads one."""
    backend = hf.load_backend(str(folders / "gpt2"))
    if getattr(backend, "head", None) is None:
        pytest.skip("the loader returns the base model without its language-model head")
    ev = evaluate(backend, "the cat sat on the mat")
    outputs = compare_outputs(backend, ev)
    assert outputs.kind == "causal"
    ids = list(ev.seq.ids)
    check_prediction(outputs.predictions[0], ordinary_logits(backend.model, ids),
                     ordinary_logits(backend.model, [ids[i] for i in ev.order]),
                     len(ids) - 1, len(ids) - 1)


def test_report_json_has_outputs(capsys):
    status = cli.main(["report", "--text", "a small cat sat", "--order", "3,2,1,0",
                       "--layers", "2", "--heads", "2", "--d-model", "16", "--json"])
    assert status == 0
    report = json.loads(capsys.readouterr().out)
    outputs = report["outputs"]
    assert outputs["kind"] == "encoder" and 0.0 < outputs["pooled_cosine"] <= 1.0
    assert outputs["predictions"] == []


def test_report_json_outputs_of_a_real_model(folders, capsys):
    status = cli.main(["report", "--model", str(folders / "gpt2"), "--text",
                       "the cat sat on the mat", "--order", "5,4,3,2,1,0", "--json"])
    assert status == 0
    outputs = json.loads(capsys.readouterr().out)["outputs"]
    assert outputs["kind"] in ("encoder", "causal")   # causal once the head is loaded
    if outputs["kind"] == "causal":
        top = outputs["predictions"][0]["original"]["probabilities"]
        assert len(top) == TOP_K and top == sorted(top, reverse=True)


def test_the_outputs_heading_says_what_it_shows_for_a_model_without_a_head(qtbot):
    pytest.importorskip("PySide6")
    from posviz.analysis.engine import Engine
    from posviz.document.session import Session
    from posviz.gui.plots.predictions import OutputsFigure
    from posviz.views.shown import Shown
    session = Session()                                  # the built-in model: no head
    session.reverse()
    evaluation = Engine(session.backend).evaluate(session.seq, session.order,
                                                  session.positions)
    figure = OutputsFigure()
    qtbot.addWidget(figure)
    figure.update_from(Shown(evaluation, None), 1, 0)
    heading = figure.heading.text()
    assert "predicts" not in heading
    assert "mean-pooled output changes with the order" in heading
    assert "no language-model head" in heading


def test_a_predicted_token_of_part_of_a_character_reads_as_its_bytes():
    """A lone byte of a three-byte character shows as the chips show it: ⟨EF⟩, not
    <0xEF> (cut on a plot's axis) nor the byte alphabet's "ï"."""
    from posviz.analysis.predictions import _readable
    tokenizer = byte_bpe_tokenizer(bos=False)
    assert _readable(tokenizer, tokenizer.convert_tokens_to_ids("ï")) == "⟨EF⟩"


def test_punctuation_under_a_bar_reads_as_a_quoted_token_and_hovers(qtbot):
    """SmolLM2's next tokens "." and "," were specks under their bars; the chart names
    them quoted, wide enough to read, and hover says each bar's two probabilities."""
    pytest.importorskip("PySide6")
    from types import SimpleNamespace

    from PySide6 import QtCore, QtGui

    from posviz.analysis.predictions import Outputs, Prediction, TopTokens
    from posviz.gui.plots.predictions import OutputsFigure, readable
    assert [readable(t) for t in (".", ",", "…", "$", "+", "and", "##m", "", "↵", "␣")] \
        == ["“.”", "“,”", "“…”", "“$”", "“+”", "and", "##m", "", "↵", "␣"]
    top = TopTokens((".", "and", ","), (13, 290, 11), (0.275, 0.244, 0.167))
    after = TopTokens(("is", ".", "and"), (314, 13, 290), (0.025, 0.009, 0.002))
    first = Prediction("next token", top, after, 4.02, (9, 9), top, (0.009, 0.002, 0.007))
    outputs = Outputs("causal", 0.795, (first,))
    figure = on_screen(qtbot, OutputsFigure(), 900, 400)
    figure.update_from(SimpleNamespace(model=SimpleNamespace(outputs=outputs)), 1, 0)
    axis = figure.plot.getAxis("bottom")
    assert axis.tokens == ["“.”", "and", "“,”"]
    metrics = QtGui.QFontMetricsF(axis.style["tickFont"])
    assert min(metrics.horizontalAdvance(t) for t in axis.tokens) > 2.5 * \
        metrics.horizontalAdvance(".")
    assert "“.”" in figure.text.text() and "“,”" in figure.text.text()   # the table too
    said = []
    figure.hovered.connect(said.append)
    figure.canvas.scene().sigMouseMoved.emit(
        figure.plot.vb.mapViewToScene(QtCore.QPointF(2.5, 0.05)))
    assert said == ["next token: “,” — original 0.167, reordered 0.007"]
    assert figure.displayed()["value"][-1] == pytest.approx(0.002)     # the CSV's, as is
    assert "," in figure.labels["entry"]                                # unquoted there


@pytest.mark.parametrize("width", [735, 1630])
def test_the_outputs_text_stands_above_its_chart_leaving_no_blank_column(qtbot, width):
    """At 1024 and in its export the cosine and top-5 text stood in a column beside the
    chart, 70 % of it blank under a few lines: the text spans the figure above the chart,
    as tall as its lines, the chart the height left."""
    pytest.importorskip("PySide6")
    from types import SimpleNamespace

    from posviz.analysis.predictions import Outputs, Prediction, TopTokens
    from posviz.gui.plots.predictions import OutputsFigure
    top = TopTokens((".", "and", ","), (13, 290, 11), (0.275, 0.244, 0.167))
    after = TopTokens(("is", ".", "and"), (314, 13, 290), (0.025, 0.009, 0.002))
    first = Prediction("next token", top, after, 4.02, (9, 9), top, (0.009, 0.002, 0.007))
    figure = on_screen(qtbot, OutputsFigure(), width, 430)
    figure.update_from(SimpleNamespace(model=SimpleNamespace(
        outputs=Outputs("causal", 0.795, (first,)))), 1, 0)
    qtbot.wait(50)
    text, canvas = figure.text.geometry(), figure.canvas.geometry()
    assert text.bottom() <= canvas.top() and text.width() >= 0.9 * figure.page.width()
    assert text.height() <= figure.text.heightForWidth(text.width()) + 2     # no blank
    assert canvas.height() >= 0.5 * figure.page.height()
