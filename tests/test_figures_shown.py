"""A figure shown in a notebook: its PNG's metadata is its own size over the sharpness
it is drawn at (its shape kept, as ``save`` writes it by default); drawing and saving it
from Python tell what they do once the wait passes the hold, as every call does."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import posviz

TEXT = "the cat sat on the mat"
LEAK = {"pe": "none", "mask": "causal", "layers": 2, "seed": 0}


@pytest.fixture(scope="module", autouse=True)
def offscreen():
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def png_size(png: bytes) -> tuple[int, int]:
    from PySide6 import QtGui
    image = QtGui.QImage.fromData(png)
    return image.width(), image.height()


def test_an_experiment_figure_is_shown_at_half_its_png_in_its_own_shape(tmp_path):
    """A sweep's figure: the PNG twice the size ``save`` writes, tagged with half it."""
    from PySide6 import QtGui
    from posviz.gui.plots.headless import SHARPNESS
    sweep = posviz.load(**LEAK, progress=False).sweep(TEXT, count=3, progress=False)
    figure = sweep.figure()
    png, shown = figure._repr_png_()
    width, height = png_size(png)
    assert (shown["width"], shown["height"]) == (round(width / SHARPNESS),
                                                round(height / SHARPNESS))
    saved = QtGui.QImage(str(figure.save(tmp_path / "sweep.png")))
    assert (saved.width(), saved.height()) == figure.size()
    assert width == SHARPNESS * saved.width()
    assert abs(height - SHARPNESS * saved.height()) <= SHARPNESS


def test_a_report_figure_is_tagged_with_its_own_png_size():
    from posviz.gui.plots.headless import SHARPNESS
    report = posviz.load(**LEAK, progress=False).compare(TEXT, progress=False)
    png, shown = report.figure("symmetry")._repr_png_()
    width, height = png_size(png)
    assert (shown["width"], shown["height"]) == (width // SHARPNESS, round(height / SHARPNESS))


@pytest.fixture
def at_once(monkeypatch):
    """Every wait past the hold (tests/test_api_slow_calls.py): told from the start."""
    from posviz.runtime import held_lines
    monkeypatch.setattr(held_lines, "HOLD_S", 0.0)


def test_saving_and_showing_a_figure_tell_its_drawing_past_the_hold(at_once, tmp_path,
                                                                     capsys):
    report = posviz.load(**LEAK, progress=None).compare(TEXT)
    capsys.readouterr()
    report.figure("attention").save(tmp_path / "attention.png")
    told = capsys.readouterr().err
    assert "posviz: drawing figure 1 of 1: attention (its own panel), about" in told
    assert "posviz: writing 1 figure: 1 of 1, about" in told
    report.figure("symmetry")._repr_png_()
    assert "posviz: drawing figure 1 of 1: symmetry, about" in capsys.readouterr().err
    sweep = posviz.load(**LEAK).sweep(TEXT, count=3)
    capsys.readouterr()
    sweep.figure()._repr_png_()
    assert "posviz: drawing figure 1 of 1: sweep" in capsys.readouterr().err


def test_a_quick_figure_or_a_silenced_models_tells_nothing(tmp_path, capsys, monkeypatch):
    from posviz.runtime import held_lines
    report = posviz.load(**LEAK, progress=False).compare(TEXT)
    sweep = posviz.load(**LEAK, progress=False).sweep(TEXT, count=3)
    monkeypatch.setattr(held_lines, "HOLD_S", 0.0)      # silenced: even when slow
    report.figure("attention").save(tmp_path / "attention.png")
    sweep.figure().save(tmp_path / "sweep.png")
    monkeypatch.setattr(held_lines, "HOLD_S", 3600.0)   # quick: a default model's too
    posviz.load(**LEAK).compare(TEXT).figure("symmetry")._repr_png_()
    assert capsys.readouterr().err == ""


def test_an_exports_first_line_tells_the_plots_import(tmp_path):
    """Qt and pyqtgraph imported for the export's plan, before the model: told first
    (the first line came 3.65-5.1 s after the start under load, untold)."""
    root = Path(__file__).resolve().parents[1]
    env = {**os.environ, "PYTHONPATH": str(root), "QT_QPA_PLATFORM": "offscreen"}
    export = subprocess.Popen(
        [sys.executable, "-m", "posviz", "export", "--text", TEXT, "--layers", "1",
         "--out", str(tmp_path), "--progress"], stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL, text=True, env=env)
    try:
        first = export.stderr.readline()
    finally:
        export.kill()
        export.wait()
    assert first == "posviz: importing the plots' modules\n"


def test_the_readme_says_how_a_figure_tells_its_drawing():
    from posviz.runtime import held_lines
    readme = " ".join((Path(__file__).resolve().parents[1] / "README.md").read_text(
        encoding="utf-8").split())
    assert (f"Drawing a figure for a notebook and `fig.save` tell nothing while quick "
            f"and, once they have waited {held_lines.HOLD_S:g} s, its drawing") in readme
