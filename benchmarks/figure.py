"""The scaling figure: time against n on log-log axes, compute and bare forward for each
model, written as PNG and SVG by posviz's own figure export (gui/plots/base.Figure).

Imported by ``run.py`` after the latency rows are measured; or, to draw it again from
a run's JSON:  .venv/bin/python benchmarks/figure.py bench.json benchmarks/scaling
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def round_ticks(low: float, high: float) -> list[float]:
    """The 1-2-5 values from just below ``low`` to just above ``high`` (log axis labels
    that read as numbers, not as 2·10¹)."""
    import math
    ticks = []
    for decade in range(math.floor(math.log10(low)), math.ceil(math.log10(high)) + 1):
        ticks += [step * 10.0 ** decade for step in (1, 2, 5)]
    below = max([t for t in ticks if t <= low], default=ticks[0])
    above = min([t for t in ticks if t >= high], default=ticks[-1])
    return [t for t in ticks if below <= t <= above]


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
    sizes = sorted({r["n"] for r in rows})
    plot.getAxis("bottom").setTicks([[(float(np.log10(n)), str(n)) for n in sizes], []])
    medians = [r[key]["median"] for r in rows for key in ("compute_ms", "bare_forward_ms")]
    plot.getAxis("left").setTicks([[(float(np.log10(ms)), f"{ms:g}")
                                    for ms in round_ticks(min(medians), max(medians))], []])
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


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: figure.py RESULTS.json STEM", file=sys.stderr)
        return 2
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from PySide6.QtWidgets import QApplication

    results = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    app = QApplication.instance() or QApplication(["posviz-bench"])  # noqa: F841
    m = results["machine"]
    load = m.get("load_average_at_end", m["load_average_at_start"])[0]
    note = (f"{m['cpu_count']} cores, torch {m['torch']}, load average {load:.1f}; solid: "
            f"Engine.evaluate (the model run and the metrics), dashed: the bare forward")
    for path in write_scaling_figure(results["latency"], Path(argv[1]), note):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
