"""An exported window figure names on the image what it was drawn from: the model and
its weights, encoding and mask, and for a figure of the reordered run the text and the
order, in a caption line under its heading (a slide made of it says which model and
which reorder); a table has none, and the figure on screen is left as it was."""
from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import pytest  # noqa: E402

import posviz  # noqa: E402
from posviz.document.caption import caption, order_words, runs  # noqa: E402
from figure_files import text_lines  # noqa: E402

TEXT = "the cat sat on the mat"
SMALL = {"layers": 2, "heads": 2, "d_model": 16, "seed": 0}


def test_an_order_is_said_in_runs_and_cut_when_long():
    assert runs([0, 1, 2, 6, 5, 4, 3, 7]) == [(0, 2), (6, 3), (7, 7)]
    assert order_words([0, 1, 2, 6, 5, 4, 3, 7]) == "order 0–2, 6–3, 7 (4 of 8 tokens moved)"
    assert order_words(list(range(5))) == "order 0–4 (original order)"
    assert order_words(list(range(300))[::-1]) == "order 299–0 (reversed)"
    assert order_words([1, 0, 2]) == "order 1, 0, 2 (2 of 3 tokens moved)"
    shuffled = [(7 * i) % 101 for i in range(101)]          # no runs at all
    said = order_words(shuffled)
    assert len(said) < 100 and "…" in said and said.startswith("order 0, 7, 14")
    assert said.endswith("87, 94 (100 of 101 tokens moved)")


@pytest.fixture(scope="module")
def report():
    return posviz.load(pe="rope", mask="causal", **SMALL).compare(
        TEXT, order=[5, 4, 3, 2, 1, 0])


@pytest.mark.parametrize("name", ["symmetry", "attention", "attention_mosaic",
                                  "token_change", "branch_norms", "outputs"])
def test_an_exported_figure_of_the_reorder_names_model_text_and_order(report, name,
                                                                       tmp_path):
    path = report.figure(name).save(tmp_path / f"{name}.svg")
    width, lines = text_lines(path)
    drawn = " ".join(line["text"] for line in lines)
    assert "built-in model: RoPE positions, causal mask, random weights" in drawn
    assert "text “the cat sat on the mat”" in drawn and "order 5–0 (reversed)" in drawn
    said = [line for line in lines if "built-in model" in line["text"]]
    title = min(lines, key=lambda line: line["y"])           # the heading, on top
    assert title is not said[0] and said[0]["y"] > title["y"]
    assert all(0 <= line["left"] and line["right"] <= width + 1 for line in said)
    # the caption has a band of its own: nothing else drawn on its line
    for line in lines:
        if line not in said and line is not title:
            assert abs(line["y"] - said[0]["y"]) > 8, (line, said[0])
    table = report.figure(name).save(tmp_path / f"{name}.csv").read_text(encoding="utf-8")
    assert "built-in model:" not in table                    # a table has no caption


def test_a_figure_of_the_model_alone_names_the_model_not_the_order(report, tmp_path):
    path = report.figure("encoding").save(tmp_path / "encoding.svg")
    drawn = " ".join(line["text"] for line in text_lines(path)[1])
    assert "built-in model: RoPE positions, causal mask, random weights" in drawn
    assert "order" not in drawn


def test_the_caption_is_drawn_in_files_only(report, tmp_path):
    """On screen the window says the model and order elsewhere: exporting leaves the
    figure's size there as it was; the file is taller by the caption's band, as its
    export size says."""
    from PySide6 import QtGui
    figure = report.figure("symmetry")
    shown = figure._figure()
    size = shown.size()
    path = figure.save(tmp_path / "symmetry.png")
    assert shown.size() == size
    written = QtGui.QImage(str(path)).size()
    assert written == shown.export_size() and written.height() > size.height() + 10
    assert caption({}) == ""
