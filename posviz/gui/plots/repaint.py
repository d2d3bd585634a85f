"""The repaint fast path of a reorder: a canvas repaints only the items that changed
(repaint_whole_when_laid_out), the canvases changed together are painted in one pass of
the window (one_paint_pass), axes are drawn from a picture of themselves until they
change (style.style_axis caches them), and an export draws everything afresh (uncached).

Measured in lockstep A/B runs (built-in model, one torch thread, 100 blocks of 3
reorders a tree and size; benchmarks/README.md), painted - bare forward:
- the partial repaint: -7 % at n = 16, -7 % at 64, -4 % at 128 (load 4-4.5);
- the cached axes: -11 % at n = 16, -4 % at 64, -4 % at 128 (load 3.7-4.8).
"""
from __future__ import annotations

import pyqtgraph as pg
from PySide6 import QtCore, QtWidgets

from posviz.boot import enabled


def repaint_whole_when_laid_out(canvas: pg.GraphicsView) -> None:
    """Repaint all of ``canvas`` whenever one of its items moves or is resized, and
    otherwise (a reorder: new pixels in the same places) only the changed items.
    Laid out again after a relaunch (the token axes measured), a canvas repainting only
    what changed kept slivers of its first paint and a glyph of a label at the maps' left
    edges until a scroll; repainting it whole at every reorder cost the attention maps'
    axes, titles and bars each time. Call once the canvas holds its items."""
    whole = canvas.viewport().update
    for item in canvas.scene().items():
        if isinstance(item, QtWidgets.QGraphicsWidget):
            item.geometryChanged.connect(whole)


def uncached(figure: QtWidgets.QWidget):
    """Turn off the caches of ``figure``'s canvases while it is exported: a view's cached
    background and the pictures items keep of themselves (the axes, style.style_axis)
    would be bitmaps in SVG and PDF, and at the screen's resolution in a PNG. Returns
    what turns them on again."""
    views = figure.findChildren(QtWidgets.QGraphicsView)
    backgrounds = [(view, view.cacheMode()) for view in views]
    items = [(item, item.cacheMode()) for view in views for item in view.items()
             if item.cacheMode() != QtWidgets.QGraphicsItem.CacheMode.NoCache]
    for view, _ in backgrounds:
        view.setCacheMode(QtWidgets.QGraphicsView.CacheModeFlag.CacheNone)
    for item, _ in items:
        item.setCacheMode(QtWidgets.QGraphicsItem.CacheMode.NoCache)

    def restore() -> None:
        for view, mode in backgrounds:
            view.setCacheMode(mode)
        for item, mode in items:
            item.setCacheMode(mode)
    return restore


class _HeldUpdates(QtCore.QObject):
    """Holds back the UpdateRequests sent to a window (one_paint_pass)."""

    held = False

    def eventFilter(self, obj, event) -> bool:
        if event.type() == QtCore.QEvent.Type.UpdateRequest:
            self.held = True
            return True
        return False


def one_paint_pass(window: QtWidgets.QWidget, canvases) -> None:
    """Paint what changed in ``canvases`` (their scenes' items, changed just now) in one
    pass of ``window``, after the current call returns. Each scene takes its changes in a
    queued call of its own that ends by painting the window at once (QGraphicsView's
    dispatchPendingUpdateRequests): three figures changed by a reorder were painted in
    three passes. Here the scenes take their changes now, the window's paint held back,
    and one request to paint it is queued. Switched off (``one-paint-pass``, a switch of
    posviz.boot), each scene paints in its own pass as pyqtgraph has it."""
    if not enabled("one-paint-pass"):
        return
    held = _HeldUpdates()
    window.installEventFilter(held)
    try:
        for canvas in canvases:
            QtCore.QCoreApplication.sendPostedEvents(canvas.scene(), QtCore.QEvent.Type.MetaCall)
    finally:
        window.removeEventFilter(held)
    if held.held:                   # the request eaten above: the window asks no other
        QtCore.QCoreApplication.postEvent(window, QtCore.QEvent(QtCore.QEvent.Type.UpdateRequest),
                                          QtCore.Qt.EventPriority.LowEventPriority.value)
