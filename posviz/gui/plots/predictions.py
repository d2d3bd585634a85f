"""What the model predicts after the original and after the reordered input: a compact
table of the top tokens and their probabilities, the KL divergence between the two
distributions, and the cosine of the mean-pooled last hidden state.

The numbers come from posviz.analysis.predictions (the Shown's ``model.outputs``, computed
on the worker); this figure only writes them out.
"""
from __future__ import annotations

import html
import unicodedata

import numpy as np
import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from . import style
from .base import Figure
from .captions import caption_height
from .token_axis import TokenAxis
from .tabs import OUTPUTS
from posviz.analysis.predictions import COMPARE_HINT, pooled_outputs
from posviz.models.orders import is_original

ORIGINAL, REORDERED = "#0072b2", "#d55e00"
CELL = "padding: 1px 8px 1px 0px;"
TEXT_MARGIN = 8                           # pixels under the text of an export without a chart
POOLED_MEANING = ("exactly 1 would mean pooling cannot tell the orders apart; below 1, "
                  "their pooled outputs differ")


SPECKS = ("Pc", "Pd", "Ps", "Pe", "Pi", "Pf", "Po", "Sm", "Sc", "Sk")   # Unicode categories


def readable(token: str) -> str:
    """A token as the chart and table name it: punctuation or a math, currency or
    modifier sign alone quoted (a bare "." or "," was a speck under its bar), any other
    as it is (the chips' signs for whitespace, ↵ ␣ ⇥, read already)."""
    text = token.strip()
    if text and all(unicodedata.category(c) in SPECKS for c in text):
        return f"“{text}”"
    return token


def _row(token: str, probability: float, colour: str) -> str:
    width = max(1, round(80 * probability))
    return (f"<td style='{CELL}'>{html.escape(readable(token))}</td>"
            f"<td style='{CELL} text-align:right'>{probability:.3f}</td>"
            f"<td style='{CELL}'><span style='background:{colour}'>"
            f"{'&nbsp;' * (width // 6 or 1)}</span></td>")


def outputs_html(outputs, hint: str = "") -> str:
    """The outputs as one rich-text table per prediction, the pooled cosine (and the
    note, then ``hint``) in a column beside them: above the chart, the figure's width
    holds both (in a column beside the chart, 70 % of it was left blank under a few
    lines)."""
    said = []
    cosine = outputs.pooled_cosine
    if np.isfinite(cosine):
        said.append(f"<p>Cosine <b>{cosine:.6f}</b> between the two orders' mean-pooled "
                    f"last hidden states ({POOLED_MEANING}).</p>")
    if note := " ".join(filter(None, (outputs.note, hint))):
        said.append(f"<p style='color:#505050'>{html.escape(note)}</p>")
    tables = _tables(outputs)
    if not tables:
        return "".join(said)
    return ("<table cellspacing='0' width='100%'><tr>"
            f"<td style='padding-right:16px' width='45%'>{''.join(said)}</td>"
            f"<td>{tables}</td></tr></table>")


def _tables(outputs) -> str:
    """Each prediction's KL and its top tokens after both orders, as rich text."""
    parts = []
    for p in outputs.predictions:
        parts.append(f"<p><b>{html.escape(p.where)}</b> — KL(original || reordered) = "
                     f"<b>{p.kl:.4g}</b> nats</p>")
        rows = "".join(
            f"<tr><td style='{CELL} color:#555'>{rank + 1}</td>"
            + _row(a, pa, ORIGINAL) + _row(b, pb, REORDERED) + "</tr>"
            for rank, (a, pa, b, pb) in enumerate(zip(
                p.original.tokens, p.original.probabilities,
                p.reordered.tokens, p.reordered.probabilities)))
        parts.append(
            "<table cellspacing='0'><tr><th></th>"
            f"<th colspan='3' style='{CELL} text-align:left; color:{ORIGINAL}'>"
            "original order</th>"
            f"<th colspan='3' style='{CELL} text-align:left; color:{REORDERED}'>"
            "reordered</th></tr>" + rows + "</table>")
    return "".join(parts)


# what the tab shows for each kind of model: a model without a language-model head
# predicts nothing, so only its pooled outputs are compared
HEADINGS = {"causal": "What the model predicts after each order (next token)",
            "masked": "What the model predicts after each order (masked tokens)",
            "encoder": "How much the model's mean-pooled output changes with the order "
                       "(no language-model head to predict with)"}


class OutputsFigure(Figure):
    """Top predictions after each order, their KL divergence, the pooled cosine."""

    name = "outputs"
    title = "What the model predicts after each order"
    shows_order = True
    tab = OUTPUTS
    dims = ("entry",)
    guide = ("the top tokens a language model predicts (the next token of a causal "
             "model, each [MASK] of a masked one) after the original and after the "
             "reordered input, with their probabilities and KL(original || reordered) in "
             "nats; for every model, the cosine between the mean-pooled last hidden "
             f"states of the two orders ({POOLED_MEANING}).")

    def __init__(self, parent=None):
        super().__init__(parent)
        self.plot = self.canvas.addPlot(row=0, col=0, axisItems={"bottom": TokenAxis("bottom")})
        style.style_plot(self.plot, "", "probability", "")
        self.plot.hideButtons()
        self.plot.setMouseEnabled(x=False, y=False)
        self.bars = [pg.BarGraphItem(x=[], height=[], width=0.38, brush=colour, pen=None)
                     for colour in (ORIGINAL, REORDERED)]
        for bar in self.bars:
            self.plot.addItem(bar)
        self.text = QtWidgets.QLabel()
        self.text.setTextFormat(QtCore.Qt.TextFormat.RichText)
        self.text.setAlignment(QtCore.Qt.AlignmentFlag.AlignLeft
                               | QtCore.Qt.AlignmentFlag.AlignTop)
        self.text.setWordWrap(True)
        self.text.setContentsMargins(8, 4, 8, 4)
        self.text.setTextInteractionFlags(QtCore.Qt.TextInteractionFlag.TextSelectableByMouse)
        # the text above the bars, both in the stack's first page (beside them, its
        # column was 70 % blank under a few lines at 1024 and in every export)
        self.stack.removeWidget(self.canvas)
        self.page = QtWidgets.QWidget()
        column = QtWidgets.QVBoxLayout(self.page)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(self.text, 0)
        column.addWidget(self.canvas, 1)
        # the chart takes the height the page leaves: its size hint (3/4 of the screen),
        # summed into the scrolling plots' height, put its bottom under the fold
        self.canvas.setSizePolicy(QtWidgets.QSizePolicy.Policy.Expanding,
                                  QtWidgets.QSizePolicy.Policy.Ignored)
        self.stack.insertWidget(0, self.page)
        self.outputs = None
        self.canvas.scene().sigMouseMoved.connect(self._mouse_moved)

    def show_canvas(self) -> None:
        self.stack.setCurrentWidget(self.page)

    def export_size(self) -> QtCore.QSize:
        """Without a chart (no language-model head), only as tall as the heading and the
        text: not a page holding two lines."""
        size = super().export_size()
        if not self.canvas.isHidden() or not self.note.isHidden():
            return size
        text = self.text
        bottom = text.mapTo(self, QtCore.QPoint(0, 0)).y() + text.heightForWidth(text.width())
        bottom += TEXT_MARGIN + caption_height(self)     # the caption's band above it
        return QtCore.QSize(size.width(), min(size.height(), bottom))

    def draw_bars(self, outputs) -> None:
        """The probabilities of the first prediction's top tokens under both orders."""
        first = outputs.predictions[0] if outputs.predictions else None
        self.canvas.setVisible(first is not None)
        if first is None:
            return
        m = len(first.compared.ids)
        x = np.arange(m) + 0.5                 # token axes label cell centres
        self.bars[0].setOpts(x=x - 0.2, height=np.array(first.compared.probabilities))
        self.bars[1].setOpts(x=x + 0.2, height=np.array(first.compared_reordered))
        self.plot.getAxis("bottom").set_tokens([readable(t) for t in first.compared.tokens])
        self.plot.setXRange(0, m, padding=0)
        top = max(max(first.compared.probabilities), max(first.compared_reordered))
        self.plot.setYRange(0, top * 1.05 or 1, padding=0)
        self.plot.setTitle(f"{first.where}: original (blue), reordered (orange)",
                           color="#202020", size="9pt")

    def _mouse_moved(self, scene_pos) -> None:
        """The token under the mouse and its probability after both orders, in words."""
        first = self.outputs.predictions[0] if self.outputs and self.outputs.predictions \
            else None
        if first is None or not self.plot.vb.sceneBoundingRect().contains(scene_pos):
            return self.hover.clear()
        i = int(np.floor(self.plot.vb.mapSceneToView(scene_pos).x()))
        if 0 <= i < len(first.compared.tokens):
            text = (f"{first.where}: {readable(first.compared.tokens[i])} — original "
                    f"{first.compared.probabilities[i]:.3f}, reordered "
                    f"{first.compared_reordered[i]:.3f}")
            self.hover.show(text)
        else:
            self.hover.clear()

    def update_from(self, shown, layer: int, head: int) -> None:
        outputs = getattr(getattr(shown, "model", None), "outputs", None)
        if outputs is None:             # a Shown made without the model's views
            outputs = pooled_outputs(shown.evaluation)
        if outputs is self.outputs:
            return
        self.outputs = outputs
        self.set_title(HEADINGS.get(outputs.kind, f"{self.title} ({outputs.kind})"))
        evaluation = getattr(shown, "evaluation", None)
        original = evaluation is not None and is_original(evaluation.order)
        self.text.setText(outputs_html(outputs, COMPARE_HINT if original else ""))
        self.draw_bars(outputs)
        self.show_canvas()
        entries, tokens, values, ids = table_rows(outputs)
        self.data = {"value": np.array(values), "token_id": np.array(ids, dtype=float)}
        self.coords, self.labels = {"entry": entries}, {"entry": tokens}


def table_rows(outputs):
    """One row per number shown: (entries, token texts, values, token ids or NaN)."""
    entries, tokens, values, ids = ["pooled cosine"], [""], [outputs.pooled_cosine], \
        [np.nan]
    for p in outputs.predictions:
        entries.append(f"{p.where}: KL(original || reordered), nats")
        tokens.append("")
        values.append(p.kl)
        ids.append(np.nan)
        for order, top in (("original", p.original), ("reordered", p.reordered)):
            for rank, (token, token_id, probability) in enumerate(zip(
                    top.tokens, top.ids, top.probabilities)):
                entries.append(f"{p.where}: {order} #{rank + 1} probability")
                tokens.append(token)
                values.append(probability)
                ids.append(token_id)
    return entries, tokens, values, ids
