"""A layer axis (in, 1..L): as many labels as its width holds, its ends in full."""
from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtGui

from posviz.models.trace import layer_label

LAYER_AXIS = "layer (in = input to block 1)"     # the title of every layer axis


def layer_ticks(n_layers_plus_one: int, every: int = 1):
    """Ticks for layers in, 1..L: every ``every``-th layer, always "in" and L, and no
    label so close to L's that they would touch."""
    last = n_layers_plus_one - 1
    shown = [0, *(l for l in range(every, last, every) if last - l >= every * 0.75), last]
    return [[(l, layer_label(l)) for l in sorted(set(shown))], []]


STEPS = (1, 2, 5, 10, 20, 50, 100)      # layers between labels, the fewest that fit
LABEL_GAP = 10                          # pixels between two tick labels


def set_layer_ticks(axis: pg.AxisItem, n_layers_plus_one: int) -> None:
    """Label a layer axis with as many layers as its width holds whenever it is drawn
    (window, resize, zoom, export), always "in" and the last layer; 0: plain ticks."""
    axis.setTicks(None)
    if not n_layers_plus_one:
        for name in ("tickValues", "tickStrings"):
            axis.__dict__.pop(name, None)
        axis.setStyle(hideOverlappingLabels=True)
        return
    metrics = QtGui.QFontMetrics(axis.style["tickFont"] or axis.font())
    room = metrics.horizontalAdvance(max("in", str(n_layers_plus_one - 1), key=len))
    room += LABEL_GAP

    def values(low, high, pixels):
        per_layer = pixels / max(high - low, 1e-9)
        every = next((k for k in STEPS if k * per_layer >= room), STEPS[-1])
        return [(every, [l for l, _ in layer_ticks(n_layers_plus_one, every)[0]])]

    axis.tickValues = values
    axis.tickStrings = lambda ticks, scale, spacing: ["in" if t == 0 else f"{t:g}"
                                                      for t in ticks]
    # "in" and the last layer sit near the ends: their labels may pass the axis a little
    axis.setStyle(hideOverlappingLabels=room)
    axis.picture = None
    axis.update()


END_MARGIN = 9      # pixels beside "in" and the last layer: end markers and labels whole


def set_layer_range(plot: pg.PlotItem, n_layers_plus_one: int) -> None:
    """Show layers in..L with END_MARGIN pixels beside each end, kept as the plot resizes
    (a fixed 0.2 layer is 2 pixels at 30 layers in a laptop's window: half markers)."""
    if getattr(plot, "layer_count", None) is None:
        plot.vb.sigResized.connect(lambda *_: _fit_layer_range(plot))
    plot.layer_count = n_layers_plus_one
    _fit_layer_range(plot)


def _fit_layer_range(plot: pg.PlotItem) -> None:
    last, room = plot.layer_count - 1, plot.vb.width() - 2 * END_MARGIN
    pad = max(0.2, END_MARGIN * last / room) if room > 0 else 0.2
    plot.setXRange(-pad, last + pad, padding=0)
