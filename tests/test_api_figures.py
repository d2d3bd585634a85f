"""Report.figure: the window's figures by name, drawn off screen by the export code, in a
process without a display; their numbers are the report's; PDF is vector."""
from __future__ import annotations

import csv
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import posviz
from posviz.cli import main
from posviz.errors import PosvizInputError

TEXT = "the cat sat on the mat"
LEAK = {"pe": "none", "mask": "causal", "layers": 4, "seed": 0}
LEAK_FLAGS = ["--pe", "none", "--mask", "causal", "--layers", "4", "--seed", "0"]
ORDER = [4, 3, 2, 1, 0, 5]
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def report():
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    return posviz.load(**LEAK).compare(TEXT, order=ORDER)


def table(path: Path) -> tuple[list[str], list[list[str]]]:
    """The header and rows of an exported CSV, after its ``# key: value`` lines."""
    with open(path, newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(line for line in handle if not line.startswith("# ")))
    return rows[0], rows[1:]


def test_figures_render_without_a_display(tmp_path):
    """A process with no DISPLAY and no QT_QPA_PLATFORM: the figure chooses the offscreen
    platform itself, and shows itself as a notebook would ask it to."""
    script = f"""
import json, sys
import posviz
r = posviz.load(**{LEAK!r}).compare({TEXT!r}, order={ORDER!r})
figure = r.figure("symmetry")
png, shown = figure._repr_png_()
svg = figure._repr_svg_()
pdf = figure.save(sys.argv[1]).read_bytes()
from PySide6 import QtGui
print(json.dumps({{"platform": QtGui.QGuiApplication.platformName(), "shown": shown,
                  "size": figure.size(), "png": png[:8].hex(), "png_bytes": len(png),
                  "png_width": QtGui.QImage.fromData(png).width(),
                  "svg": svg[:200], "svg_end": svg[-10:], "pdf": pdf[:5].decode()}}))
"""
    env = {k: v for k, v in os.environ.items()
           if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    env["PYTHONPATH"] = str(ROOT)
    result = subprocess.run([sys.executable, "-c", script, str(tmp_path / "symmetry.pdf")],
                            capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "propagateSizeHints" not in result.stderr
    out = json.loads(result.stdout)
    assert out["platform"] == "offscreen"
    width, height = out["size"]
    assert width > 300 and height > 200
    assert out["png"] == "89504e470d0a1a0a" and out["png_bytes"] > 20_000
    # drawn at twice its size for a sharp picture, shown at its size
    assert out["shown"] == {"width": width, "height": height}
    assert out["png_width"] == 2 * width
    assert "<svg" in out["svg"] and out["svg_end"].strip().endswith("</svg>")
    assert out["pdf"] == "%PDF-"


def test_the_symmetry_figure_holds_the_reports_layers(report, tmp_path):
    figure = report.figure("symmetry")
    header, rows = table(figure.save(tmp_path / "symmetry.csv"))
    assert header[0] == "layer" and [int(row[0]) for row in rows] == [
        row["layer"] for row in report.layers]
    for metric in ("hidden_equivariance", "attention_equivariance", "last_token_change",
                   "pooled_change"):
        column = header.index(metric)
        written = [None if row[column] == "" else float(row[column]) for row in rows]
        expected = [row[metric] for row in report.layers]
        assert written == expected, metric        # every digit: CSV floats round-trip
        shown = figure.data[metric].tolist()
        assert [None if np.isnan(v) else v for v in shown] == expected, metric
    assert figure.dims == ("layer",)
    # the causal leak, as the figure shows it: the final slot holds its token, unchanged
    # after block 1 and changed from block 2 on
    change = figure.data["last_token_change"]
    assert change[1] < report.noise_floor < change[2]


def test_the_attention_figure_holds_the_reports_maps(report):
    for layer, head in ((1, 0), (3, 2)):
        data = report.figure("attention", layer=layer, head=head).data
        maps = report.attention(layer, head)
        np.testing.assert_array_equal(data["original"], maps.original)
        np.testing.assert_array_equal(data["reordered_aligned"], maps.aligned)
        np.testing.assert_allclose(data["difference"], maps.difference, atol=1e-7)


def test_a_saved_figure_is_the_file_posviz_export_writes(report, tmp_path, capsys):
    out = tmp_path / "exported"
    code = main(["export", *LEAK_FLAGS, "--text", TEXT, "--order", ",".join(map(str, ORDER)),
                 "--layer", "2", "--head", "1", "--format", "pdf", "--out", str(out)])
    printed = capsys.readouterr().out.split()
    assert code == 0
    from posviz.gui.plots import FIGURES
    # no positional encoding: the Positions tab's figures only say so, and are not written
    positions = ("encoding", "encoding_similarity", "relative_profile")
    assert printed == [str(out / f"{name}.{fmt}") for name in FIGURES
                       if name not in positions for fmt in ("pdf", "csv")]
    # each given what it draws of export's --layer 2 --head 1 (the symmetry figure all layers)
    for name, view in (("attention", {"layer": 2, "head": 1}), ("symmetry", {}),
                       ("token_change", {"layer": 2})):
        mine = report.figure(name, **view).save(tmp_path / f"{name}.csv")
        assert mine.read_text(encoding="utf-8") == (out / f"{name}.csv").read_text(
            encoding="utf-8"), name
        assert (out / f"{name}.pdf").read_bytes().startswith(b"%PDF-")


def pdf_images(data: bytes) -> list[tuple[int, int]]:
    """(width, height) in pixels of every image a PDF embeds."""
    found = []
    for match in re.finditer(rb"/Subtype\s*/Image(.{0,400})", data, re.S):
        width = re.search(rb"/Width\s+(\d+)", match.group(1))
        height = re.search(rb"/Height\s+(\d+)", match.group(1))
        found.append((int(width.group(1)), int(height.group(1))))
    return found


def test_pdf_is_vector_with_sharp_heatmaps_and_says_what_made_it(report, tmp_path):
    from posviz.document.provenance import read_xmp
    figure = report.figure("attention", layer=2, head=1)
    data = figure.save(tmp_path / "attention.pdf").read_bytes()
    assert data.startswith(b"%PDF-") and data.count(b"/Type /Page\n") + data.count(
        b"/Type /Page\r") + len(re.findall(rb"/Type\s*/Page[^s]", data)) >= 1
    width, height = figure.size()
    box = [float(v) for v in re.search(rb"/MediaBox\s*\[([^\]]*)\]", data).group(1).split()]
    assert box == pytest.approx([0, 0, width * 72 / 96, height * 72 / 96], abs=0.5)
    assert b"/FontFile2" in data or b"/FontFile" in data        # text as text, embedded
    n = len(report.tokens)
    images = pdf_images(data)
    maps = [size for size in images if min(size) > 1]            # not the colour bars
    # the three maps, each n x n cells enlarged whole (no smoothing can blur them), and
    # no bitmap of the whole figure under the vector drawing
    assert len(maps) == 3 and all(w == h and w % n == 0 and w >= 10 * n for w, h in maps)
    assert all(w < width for w, h in images)
    facts = read_xmp(data)
    png = figure.save(tmp_path / "attention.png")
    from PySide6 import QtGui
    image = QtGui.QImage(str(png))
    assert facts == {key: image.text(key) for key in image.textKeys()}
    assert facts["figure"] == "attention" and (facts["layer"], facts["head"]) == ("2", "1")
    assert facts["text"] == TEXT and facts["order"] == ",".join(map(str, ORDER))


def test_png_at_a_dpi_and_a_width(report, tmp_path):
    from PySide6 import QtGui
    figure = report.figure("symmetry")
    width, height = figure.size()
    image = QtGui.QImage(str(figure.save(tmp_path / "a.png", dpi=300)))
    assert image.width() == round(width * 300 / 96)
    assert round(image.dotsPerMeterX() * 0.0254) == 300
    assert QtGui.QImage(str(figure.save(tmp_path / "b.png", width=500))).width() == 500


def test_a_figure_of_a_tab_not_yet_opened_shows_at_its_own_size(tmp_path):
    from PySide6 import QtGui
    fresh = posviz.load(**LEAK).compare(TEXT, order=ORDER)     # a panel of its own
    png, shown = fresh.figure("outputs")._repr_png_()
    plain = QtGui.QImage(str(fresh.figure("outputs").save(tmp_path / "outputs.png")))
    assert (shown["width"], shown["height"]) == (plain.width(), plain.height())
    assert plain.width() > 800 and QtGui.QImage.fromData(png).width() == 2 * plain.width()

def test_bad_figure_requests_are_one_line_errors(report, tmp_path):
    from posviz.gui.plots import FIGURES
    with pytest.raises(PosvizInputError) as raised:
        report.figure("heatmap")
    assert str(raised.value) == f"no figure named 'heatmap' (one of {', '.join(FIGURES)})"
    # in Python's words: the arguments, not the command line's flags
    with pytest.raises(PosvizInputError, match="^layer must be from 1 to 4 .got 5."):
        report.figure("attention", layer=5)
    with pytest.raises(PosvizInputError, match="^head must be from 0 to 3 .got 4."):
        report.figure("attention", head=4)
    with pytest.raises(PosvizInputError, match="must end in .png, .svg, .pdf, .csv"):
        report.figure("symmetry").save(tmp_path / "symmetry.jpg")
    with pytest.raises(PosvizInputError, match="^dpi must be from 50 to 600"):
        report.figure("symmetry").save(tmp_path / "symmetry.png", dpi=5000)
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(PosvizInputError, match="cannot write"):
        report.figure("symmetry").save(blocker / "symmetry.pdf")


def test_every_figure_menu_offers_pdf(report):
    from PySide6 import QtCore

    from posviz.gui.plots.headless import drawn_panel
    panel = drawn_panel(report.session, report.evaluation)
    try:
        # laid out and painted, but never put on a screen where there is one
        assert panel.isVisible() and panel.testAttribute(
            QtCore.Qt.WidgetAttribute.WA_DontShowOnScreen)
        for name, figure in panel.figures().items():
            texts = [action.text() for action in figure.heading.actions()]
            assert "Export figure as PDF…" in texts, name
    finally:
        panel.close()
        panel.deleteLater()



def test_the_readme_names_every_figure():
    from posviz.gui.plots import FIGURES
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("`r.figure(name, layer=, head=)` takes the name of any file")
    listed = readme[readme.index("(", start + 40):readme.index(")", start + 40)]
    assert re.findall(r"`(\w+)`", listed) == list(FIGURES)


def test_a_map_of_positions_shows_as_one_square_image():
    """A notebook keeps one image of a heat map (an SVG would embed its cells again), and
    a position × position map is drawn square; a curve figure keeps its SVG."""
    from PySide6 import QtGui

    from posviz.gui.plots.own_size import map_boxes as _map_boxes
    report = posviz.load(pe="sinusoidal", layers=2).compare(TEXT)
    similarity = report.figure("encoding_similarity")
    assert similarity._repr_svg_() is None
    png, shown = similarity._repr_png_()
    assert QtGui.QImage.fromData(png).width() == shown["width"]       # cells, not 2x
    (box,) = _map_boxes(similarity._figure())
    assert abs(box.width() - box.height()) < 3
    assert report.figure("symmetry")._repr_svg_().lstrip().startswith("<?xml")


def test_a_swap_map_says_which_text_it_is_and_can_show_another(tmp_path):
    """A swap sweep of several texts drew the first text's map under a title naming no
    text, beside a file listing them all, and figure() could not show another."""
    texts = ["a b c", "the cat sat on the mat"]
    s = posviz.sweep(texts, pe="rope", kind="swap", layers=1, d_model=16, heads=2)
    first, second = s.figure("swap map"), s.figure("swap map", text=1)
    assert first.data["change"].shape == (3, 3)
    assert np.allclose(second.data["change"], s.pairs[1].change)   # (6, 6)
    heading = second.drawn().heading.text()
    assert "text 2 of 2: “the cat sat on the mat”" in heading
    assert "text 1 of 2: “a b c”" in first.drawn().heading.text()
    alone = second.drawn().drawn_alone()            # what .png, .svg and .pdf draw
    assert "text 2 of 2" in alone.heading.text()
    assert np.allclose(alone.data["change"], s.pairs[1].change)
    lines = second.save(tmp_path / "map.csv").read_text().splitlines()
    assert any(line.startswith("#") and "text 2 of 2: the cat sat on the mat" in line
               for line in lines)
    for bad in (2, -1, "1", True):
        with pytest.raises(PosvizInputError, match="text"):
            s.figure("swap map", text=bad)
    with pytest.raises(PosvizInputError, match="swap map"):
        s.figure("pooled_change", text=1)
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    assert 'figure("swap map", text=i)' in readme


def test_a_swap_sweeps_repr_counts_its_pairs():
    """Its repr read "9 runs over 1 text(s)" of a sweep that ran 45 pairs."""
    s = posviz.sweep("a b c", pe="rope", kind="swap", layers=1, d_model=16, heads=2)
    assert repr(s).endswith(": 2 neighbouring swaps of the 3 pairs run, over 1 text>")


def test_a_long_inputs_head_and_mosaic_are_drawn_not_their_placeholders(
        monkeypatch, tmp_path, capsys):
    """Past the size whose maps are kept whole (models.maps.KEEP_ALL: here every size),
    the head asked for runs the order again, as the window does for the head on screen:
    attention() returned None, figure("attention") saved "Computing layer 1, head 0: …",
    the mosaic "The mosaic is being prepared.", and export left both out in silence."""
    from posviz.models import maps
    monkeypatch.setattr(maps, "KEEP_ALL", 0)
    long = posviz.load(**LEAK).compare(TEXT, order=ORDER)
    assert long.evaluation.comparison.attention_aligned is None
    for layer, head in ((1, 0), (3, 2)):
        maps_ = long.attention(layer, head)
        assert maps_ is not None and maps_.original.shape == (6, 6)
        figure = long.figure("attention", layer=layer, head=head)
        assert set(figure.data) == {"original", "reordered_aligned", "difference"}
        np.testing.assert_allclose(figure.data["difference"], maps_.difference)
    assert long.figure("attention_mosaic").data
    assert long.figure("attention_mosaic").save(tmp_path / "m.png").stat().st_size
    assert main(["export", *LEAK_FLAGS, "--text", TEXT, "--order", "4,3,2,1,0,5",
                 "--out", str(tmp_path / "out"), "--format", "png", "--no-csv"]) == 0
    written = {Path(line).name for line in capsys.readouterr().out.split()}
    assert {"attention.png", "attention_mosaic.png"} <= written



def test_an_export_names_the_figures_it_left_out(tmp_path, capsys):
    """pe none has no additive encoding: its figures say so instead of plotting, and
    export, which writes no such figure, names them and what they say in one line."""
    report = posviz.load(**LEAK).compare(TEXT, order=ORDER)
    empty = [name for name in ("encoding", "encoding_similarity", "relative_profile")
             if not report.figure(name).data]
    assert empty, "pe none plots an encoding"
    assert main(["export", *LEAK_FLAGS, "--text", TEXT, "--out", str(tmp_path / "out"),
                 "--format", "png", "--no-csv"]) == 0
    said = capsys.readouterr().err.splitlines()
    left = [line for line in said if line.startswith("posviz: not written")]
    assert len(left) == 1 and all(f"{name} (" in left[0] for name in empty), said
    assert not any((tmp_path / "out" / f"{name}.png").exists() for name in empty)


def test_a_swap_map_s_svg_holds_its_cells_enlarged(tmp_path):
    """A 5 x 5 swap map was embedded in its SVG as 5 x 5 pixels, which librsvg (GNOME's
    viewer, most converters) smeared into a gradient (a user's run); its cells are enlarged
    unsmoothed, as the attention maps' are."""
    import base64

    from PySide6 import QtGui
    s = posviz.sweep("the dog bit the man", pe="rope", kind="swap", layers=1,
                     d_model=16, heads=2)
    svg = s.figure("swap map").save(tmp_path / "swap.svg").read_text()
    pixels = [QtGui.QImage.fromData(base64.b64decode(data)) for data in
              re.findall(r'xlink:href="data:image/png;base64,([^"]+)"', svg)]
    maps = [image for image in pixels if min(image.width(), image.height()) > 1]
    assert len(maps) == 1                       # the map (the colour bar is a strip)
    assert maps[0].width() == maps[0].height() >= 100 and maps[0].width() % 5 == 0


SAVE_AND_LEAVE = """
import sys, posviz
r = posviz.load(pe="sinusoidal").compare(open(sys.argv[2]).read())
r.figure("attention").save(sys.argv[1])
print("saved", flush=True)
"""


@pytest.mark.slow
def test_python_leaves_cleanly_after_saving_a_long_text_s_attention_figure(tmp_path):
    """Saving a 4,000-token attention figure, then leaving Python, crashed the
    interpreter at its exit (status 139, 6 of 6 in a user's run, png/pdf/svg):
    the report's panels were torn down by Python after Qt's application. They are closed
    and deleted while Qt runs (headless._close_panels, at exit). That run's text (22
    words drawn at random; another such text did not crash): about 25 s here."""
    out = tmp_path / "attention.png"
    done = subprocess.run([sys.executable, "-X", "faulthandler", "-c", SAVE_AND_LEAVE,
                           str(out), str(ROOT / "tests" / "data" / "words-4000.txt")],
                          capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "saved\n" and out.stat().st_size > 0
    assert "Traceback" not in done.stderr and "Fatal" not in done.stderr, done.stderr


def test_a_folder_given_as_a_figures_path_is_refused_naming_path(report, tmp_path):
    """save() into an existing folder named like a file drew the figure, then said
    "cannot write d.png: Is a directory", naming no argument; a sweep's figure too."""
    folder = tmp_path / "d.png"
    folder.mkdir()
    said = f"path={str(folder)!r}: {folder} is a folder, not a file"
    for figure in (report.figure("symmetry"),
                   posviz.compare_encodings(TEXT, encodings=["none", "rope"]).figure()):
        with pytest.raises(PosvizInputError) as refused:
            figure.save(folder)
        assert str(refused.value) == said
    assert list(folder.iterdir()) == []


def test_a_long_inputs_head_run_again_for_a_figure_is_told_as_its_drawing(
        monkeypatch, tmp_path, capsys):
    """The order run again for a long input's head (Report.run_for) is part of the
    figure's wait, told by its lines: SmolLM2's 600 tokens were 3.7 s silent in
    ``save`` (the run outside the figure's telling) and in a notebook's display."""
    from posviz.api.report import HEAD_RUN
    from posviz.models import maps
    monkeypatch.setattr(maps, "KEEP_ALL", 0)
    long = posviz.load(**LEAK, progress=True).compare(TEXT, order=ORDER)
    capsys.readouterr()
    long.figure("attention", layer=2).save(tmp_path / "a.png")
    saved = capsys.readouterr().err
    assert f"posviz: {HEAD_RUN}\n" in saved
    assert saved.index(HEAD_RUN) < saved.index("drawing figure 1 of 1: attention")
    long.figure("attention", layer=3)._repr_png_()
    assert f"posviz: {HEAD_RUN}\n" in capsys.readouterr().err


def test_a_head_run_planned_past_the_hold_is_told_at_once(monkeypatch, tmp_path, capsys):
    """A figure's order run again is planned to take what the report's chosen order
    took (Report.evaluate_s): past the hold, it is told as it begins, from the call's
    own thread (one long call of torch's, in which the timer's thread may get no
    turn); within it, a quick call tells nothing. No clock read: the hold is an hour."""
    from posviz.api.report import HEAD_RUN
    from posviz.models import maps
    from posviz.runtime import held_lines
    monkeypatch.setattr(maps, "KEEP_ALL", 0)
    monkeypatch.setattr(held_lines, "HOLD_S", 3600.0)
    long = posviz.load(**LEAK).compare(TEXT, order=ORDER)
    assert 0 < long.evaluate_s < 3600.0
    capsys.readouterr()
    long.figure("attention", layer=2).save(tmp_path / "quick.png")
    assert capsys.readouterr().err == ""
    long.evaluate_s = 3600.0                        # as if it had taken an hour
    long.figure("attention", layer=3).save(tmp_path / "slow.png")
    assert capsys.readouterr().err.startswith(f"posviz: {HEAD_RUN}\n")


def test_a_figure_drawn_for_another_head_closes_the_panel_it_replaces():
    """Each head's attention figure squares a panel of its own; the one it replaces is
    closed and stops drawing the session's selection (left open, every replaced panel
    went on redrawing at each later head's selection)."""
    from PySide6 import QtCore, QtWidgets

    from posviz.gui.plots.panel import PlotsPanel

    def live_panels() -> int:
        QtCore.QCoreApplication.sendPostedEvents(None, QtCore.QEvent.Type.DeferredDelete)
        return sum(isinstance(w, PlotsPanel) for w in QtWidgets.QApplication.allWidgets())

    r = posviz.load(**LEAK).compare(TEXT, order=ORDER)
    r.figure("attention", layer=1, head=0).size()
    after_one = live_panels()
    for head in (1, 2, 3):
        r.figure("attention", layer=1, head=head).size()
    assert live_panels() == after_one
    assert len(r.session._listeners) <= 2        # the report's panel and one own panel
