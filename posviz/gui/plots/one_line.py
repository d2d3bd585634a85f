"""A figure's note: whole, wrapped, in as many lines as the figure can spare (at most
MOST_LINES, the last elided when more are needed), FEW_LINES where room is short (the
figure grows for them); a click shows it whole (another folds it to one line)."""
from __future__ import annotations

from PySide6 import QtCore, QtGui, QtWidgets

MOST_LINES = 5              # "a few": a longer note ends its fifth line with "…"
FEW_LINES = 3               # lines a note always has if it needs them, room or not: its
                            # end is the verdict (the figure grows, the page scrolls)


class OneLineLabel(QtWidgets.QLabel):
    """A label that keeps its whole text (``text()``; the figure puts it in the tooltip)
    and paints it wrapped in at most ``room`` lines (``set_room``, by the figure: the
    lines it can give without squashing its plot; 1 at first), eliding the last line
    shown; its text never asks the layout for width. A click chooses: the note whole
    (as a wrapping QLabel, whatever its length) or one line; the choice stays for later
    notes and sizes."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.room = 1               # lines the figure can spare now
        self.chosen: bool | None = None     # the reader's click: True one line, False
                                            # whole; None: as the room allows
        self.blank = False          # paints nothing (an export writes the text itself)
        self.shorts: tuple[str, ...] = ()   # the text in fewer words, longest first: on
                                            # one line, the first that fits, not an elided one
        self._laid_out = ((), [])   # (text, width, font), its lines: layouts ask often
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Ignored,
                           QtWidgets.QSizePolicy.Policy.Preferred)
        self.setCursor(QtCore.Qt.CursorShape.PointingHandCursor)

    @property
    def one_line(self) -> bool:
        """Painted on one line (elided when the text is longer)."""
        return self.chosen if self.chosen is not None else self.lines_shown() == 1

    @property
    def whole(self) -> bool:
        """Laid out by QLabel itself: the reader asked for the whole note."""
        return self.chosen is False

    def mousePressEvent(self, event) -> None:
        if event.button() != QtCore.Qt.MouseButton.LeftButton:
            return super().mousePressEvent(event)
        self.set_one_line(self.whole or not self.elided())     # else: show the rest
        event.accept()

    def set_one_line(self, one_line: bool) -> None:
        """The reader's choice: one line, or the whole note."""
        if one_line != self.chosen:
            self.chosen = one_line
            self.setWordWrap(not one_line)
            self.updateGeometry()
            self.update()

    def set_room(self, lines: int) -> None:
        """The figure can spare ``lines`` lines (at least one) for the note now."""
        lines = max(1, min(int(lines), MOST_LINES))
        if lines != self.room:
            self.room = lines
            self.updateGeometry()
            self.update()

    def setText(self, text: str) -> None:
        if text == self.text():         # a new layout of the window, and a repaint of
            return                      # its panels, at every reorder otherwise
        super().setText(text)
        self.updateGeometry()

    # -- the lines --------------------------------------------------------------------
    def _paragraph(self) -> str:
        """The text to lay out: its lines kept apart (U+2028) where the note has room
        for more than one, else joined by " — " (a line break would be painted as a
        second line over the first)."""
        lines = [line for line in self.text().splitlines() if line.strip()]
        return ("\u2028" if self.room > 1 and not self.chosen else " — ").join(lines)

    def _wrapped(self, width: int) -> list[tuple[int, int]]:
        """(start, length) in ``_paragraph()`` of each line it wraps to at ``width``."""
        key = (self._paragraph(), width, self.font().key())
        if key == self._laid_out[0]:
            return self._laid_out[1]
        layout = QtGui.QTextLayout(key[0], self.font())
        option = QtGui.QTextOption()
        option.setWrapMode(QtGui.QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        layout.setTextOption(option)
        lines = []
        layout.beginLayout()
        while True:
            line = layout.createLine()
            if not line.isValid():
                break
            line.setLineWidth(max(width, 1))
            lines.append((line.textStart(), line.textLength()))
        layout.endLayout()
        self._laid_out = (key, lines)
        return lines

    def _width(self) -> int:
        return max(self.contentsRect().width(), 1)

    def lines_shown(self, width: int | None = None) -> int:
        """Lines painted at ``width`` (default: the label's) while not whole."""
        if self.chosen:
            return 1
        return max(1, min(self.room, len(self._wrapped(width or self._width()))))

    def _shown(self) -> tuple[list[str], bool]:
        """The lines painted while not whole (the wrapped lines that fit, the last one
        elided to the width when text remains), and whether text remains."""
        text, width = self._paragraph(), self._width()
        spans = self._wrapped(width) or [(0, 0)]
        count = self.lines_shown()
        lines = [text[start:start + length].rstrip() for start, length in spans[:count - 1]]
        rest = (text[spans[count - 1][0]:] if len(spans) >= count else "").replace(
            "\u2028", " — ")
        metrics = self.fontMetrics()
        last = metrics.elidedText(rest, QtCore.Qt.TextElideMode.ElideRight, width)
        if count == 1 and last != rest:
            last = next((short for short in self.shorts
                         if metrics.horizontalAdvance(short) <= width), last)
        return lines + [last], last != rest

    def shown_lines(self) -> list[str]:
        return self._shown()[0]

    def shown_text(self) -> str:
        """The painted lines, one paragraph (what the screen shows, for a test)."""
        return " ".join(self.shown_lines())

    def elided(self) -> bool:
        """The screen shows less than the whole text."""
        return not self.whole and self._shown()[1]

    # -- the size ---------------------------------------------------------------------
    def _height(self, lines: int) -> int:
        margins = self.contentsMargins()
        return lines * self.fontMetrics().lineSpacing() + margins.top() + margins.bottom()

    def few_lines_height(self, width: int) -> int:
        """Pixels of the lines (at most FEW_LINES) the note takes at the figure's
        ``width`` whatever its room: one once the reader folded it."""
        margins = self.contentsMargins()
        width -= margins.left() + margins.right()
        lines = 1 if self.chosen else min(FEW_LINES, len(self._wrapped(max(width, 1))))
        return self._height(max(lines, 1))

    def minimumSizeHint(self) -> QtCore.QSize:
        if self.whole:
            return super().minimumSizeHint()
        return QtCore.QSize(20, self._height(1))

    def sizeHint(self) -> QtCore.QSize:
        if self.whole:
            return super().sizeHint()
        return QtCore.QSize(20, self._height(self.lines_shown()))

    def heightForWidth(self, width: int) -> int:
        if self.whole:
            return super().heightForWidth(width)
        margins = self.contentsMargins()
        return self._height(self.lines_shown(width - margins.left() - margins.right()))

    def hasHeightForWidth(self) -> bool:
        return super().hasHeightForWidth() if self.whole else True

    def resizeEvent(self, event) -> None:
        super().resizeEvent(event)
        if not self.whole and self.room > 1 and (
                event.size().width() != event.oldSize().width()):
            self.updateGeometry()       # more or fewer lines at the new width

    def paintEvent(self, event) -> None:
        if self.blank:
            return
        if self.whole:
            return super().paintEvent(event)
        lines = self.shown_lines()
        align = (QtCore.Qt.AlignmentFlag.AlignVCenter if len(lines) == 1
                 else QtCore.Qt.AlignmentFlag.AlignTop)
        with QtGui.QPainter(self) as painter:         # ended even if a call raises
            painter.setPen(self.palette().color(QtGui.QPalette.ColorRole.WindowText))
            painter.setFont(self.font())
            painter.drawText(self.contentsRect(),
                             int(QtCore.Qt.AlignmentFlag.AlignLeft | align), "\n".join(lines))


READABLE_PLOT = 240         # pixels of a canvas (its axes included, a legend under the
                            # plot besides) that a note's fourth line may not take
SMALL_PLOT = 180            # ... and its second and third: a plot area of 120 px


def spare_lines(figure) -> int:
    """Lines ``figure``'s note may take while the canvas above it keeps READABLE_PLOT
    pixels, and a legend under the plot its own rows, or its least height if it has one
    (a figure that scrolls rather than squash its plot); at least FEW_LINES in a figure
    that holds its canvas (least_height makes room for those: a one-line note cut the
    verdict at its end at 1024 pixels), else as many of them as leave SMALL_PLOT."""
    note, heading = figure.note, figure.layout().itemAt(0)      # the heading's row
    top = (heading.heightForWidth(figure.width()) if heading.hasHeightForWidth()
           else heading.sizeHint().height())
    legend, below = figure.legend, 0
    if (legend is not None and legend.isVisible()
            and figure.canvas.ci.items.get(legend) == [(1, 0)]):
        below = legend.layout.preferredHeight()
    margins = note.contentsMargins()
    free = figure.height() - top - below - margins.top() - margins.bottom()
    spacing, held = note.fontMetrics().lineSpacing(), figure.canvas.minimumHeight()
    room = (free - max(READABLE_PLOT, held - below)) // spacing
    few = FEW_LINES if held else min(FEW_LINES, (free - SMALL_PLOT) // spacing)
    return int(max(1, room, few))


def fit_note(figure) -> None:
    """Give ``figure``'s note (a OneLineLabel) the lines its figure can spare now."""
    if isinstance(figure.note, OneLineLabel):
        figure.note.set_room(spare_lines(figure))


def least_height(figure) -> int:
    """Pixels ``figure`` needs at its width for its heading's lines, its canvas's least
    height and the first FEW_LINES lines of its note it needs (all of it, once the reader
    asked for it whole; one once folded): a layout counts one line of a wrapped heading,
    and squashed the canvas over the note. The note's further lines are not counted:
    they come from the room the figure has (spare_lines), and counting them would hold
    the figure at its old height. 0 while it shows a message."""
    if figure.stack.currentWidget() is not figure.canvas:
        return 0
    width, top = figure.width(), figure.layout().itemAt(0)         # the heading's row
    heading = (top.heightForWidth(width) if top.hasHeightForWidth()
               else top.sizeHint().height())
    note = figure.note
    shown = 0
    if note.isVisibleTo(figure):
        shown = (note.heightForWidth(width) if getattr(note, "whole", True)
                 else note.few_lines_height(width))
    return heading + figure.canvas.minimumHeight() + shown
