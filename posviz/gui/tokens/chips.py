"""How a token chip looks: its size, colours and drawing (the strip caches the pictures)."""
from __future__ import annotations

from PySide6.QtCore import QRectF, QSize, Qt
from PySide6.QtGui import QColor, QFont, QFontMetricsF, QPainter, QPainterPath, QPen

PAD_X, PAD_Y, BADGE_GAP = 9.0, 6.0, 5.0

COLORS = {
    "chip": QColor("#e8f0fb"), "chip_border": QColor("#9db7dc"),
    "moved": QColor("#fff1dc"), "moved_border": QColor("#e0a656"),
    "pinned": QColor("#eeeeee"), "pinned_border": QColor("#a8a8a8"),
    "selected_border": QColor("#2f6fd0"), "text": QColor("#1d2733"),
    "badge": QColor("#6b7a8c"), "badge_moved": QColor("#b86e0b"),
    "shadow": QColor(0, 0, 0, 45), "focus": QColor("#2f6fd0"), "change": QColor("#c62828"),
}


def chip_size(token: str, index: int, font: QFont, badge_font: QFont) -> QSize:
    """The chip of ``token`` with its original ``index`` as a badge."""
    metrics, badge = QFontMetricsF(font), QFontMetricsF(badge_font)
    return QSize(int(metrics.horizontalAdvance(token) + badge.horizontalAdvance(str(index))
                     + 2 * PAD_X + BADGE_GAP + 1), int(metrics.height() + 2 * PAD_Y))


def draw_chip(painter: QPainter, rect: QRectF, token: str, index: int, fonts, *,
              pinned: bool, moved: bool, selected: bool, lifted: bool = False) -> None:
    """The chip itself: fill and border by its state, the token, its index as a badge;
    ``fonts`` = (token font, badge font)."""
    font, badge_font = fonts
    fill = COLORS["pinned" if pinned else "moved" if moved else "chip"]
    border = COLORS["pinned_border" if pinned else "moved_border" if moved
                    else "chip_border"]
    if lifted:
        fill = fill.lighter(104)
    path = QPainterPath()
    path.addRoundedRect(rect.adjusted(0.5, 0.5, -0.5, -0.5), 7, 7)
    painter.fillPath(path, fill)
    pen = QPen(COLORS["selected_border"] if selected else border, 2.0 if selected else 1.0,
               Qt.DashLine if pinned else Qt.SolidLine)
    painter.setPen(pen)
    painter.drawPath(path)
    badge = str(index)
    badge_w = QFontMetricsF(badge_font).horizontalAdvance(badge)
    text_rect = rect.adjusted(PAD_X, 0, -(PAD_X + BADGE_GAP + badge_w), 0)
    painter.setFont(font)
    painter.setPen(COLORS["text"] if not pinned else COLORS["badge"])
    painter.drawText(text_rect, Qt.AlignVCenter | Qt.AlignLeft, token)
    painter.setFont(badge_font)
    painter.setPen(COLORS["badge_moved" if moved else "badge"])
    painter.drawText(rect.adjusted(0, 3, -PAD_X + 2, 0), Qt.AlignTop | Qt.AlignRight, badge)
