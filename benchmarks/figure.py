"""The scaling figure: time against n on log-log axes, compute and bare forward for each
model, written as PNG and SVG by posviz's own figure export (gui/plots/base.Figure).

Imported by ``run.py`` after the latency rows are measured (Qt is running by then).
"""
from __future__ import annotations

from pathlib import Path


def write_scaling_figure(rows: list[dict], stem: Path, note: str = "") -> list[Path]:
    """rows: the benchmark's latency rows -> ``stem``.png and ``stem``.svg."""
    import numpy as np
    import pyqtgraph as pg
    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    from posviz.gui.plots import style
    from posviz.gui.plots.base import Figure

    class ScalingFigure(Figure):
        name = "benchmark_scaling"
        title = "posviz: time per reorder against the number of tokens"

    figure = ScalingFigure()
    plot = figure.canvas.addPlot(row=0, col=0)
    style.style_plot(plot, left="milliseconds (median)", bottom="tokens n")
    plot.setLogMode(x=True, y=True)
    plot.showGrid(x=True, y=True, alpha=0.25)
    legend = style.legend_below(figure.canvas, columns=2)
    models = list(dict.fromkeys(r["model"] for r in rows))
    for colour, model in zip(style.CURVE_COLOURS, models):
        mine = sorted((r for r in rows if r["model"] == model), key=lambda r: r["n"])
        n = np.array([r["n"] for r in mine], dtype=float)
        for key, what, line in (("compute_ms", "compute", Qt.PenStyle.SolidLine),
                                ("bare_forward_ms", "bare forward", Qt.PenStyle.DashLine)):
            ms = np.array([r[key]["median"] for r in mine])
            curve = pg.PlotDataItem(n, ms, pen=style.cosmetic_pen(colour, 2, line),
                                    symbol="o", symbolSize=6, symbolBrush=colour,
                                    symbolPen=None)
            plot.addItem(curve)
            legend.addItem(curve, f"{model}: {what}")
            figure.data[f"{model}_{what.replace(' ', '_')}_ms"] = ms
    figure.set_note(note)
    figure.resize(720, 480)
    figure.show()
    QApplication.processEvents()
    stem.parent.mkdir(parents=True, exist_ok=True)
    paths = [figure.export_png(stem.with_suffix(".png")),
             figure.export_svg(stem.with_suffix(".svg"))]
    figure.close()
    return paths
