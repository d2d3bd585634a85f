"""One field per option (models.options.Option): the widget that edits it within its
allowed values, and its value read and written without signals."""
from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (QAbstractSpinBox, QCheckBox, QComboBox, QDoubleSpinBox,
                               QSpinBox, QStyle,
                               QStyleOptionComboBox, QStylePainter, QWidget)

from ...models.options import TITLES, Option

# an option's refusal: the field outlined, the message under it in small red text
INVALID = "border: 1px solid #c62828; border-radius: 3px;"
INVALID_TEXT = "color: #c62828; background: #fdecea;"   # a spin box's text field, refused
ERROR_STYLE = "color: #c62828; font-size: 11px;"
STATUS_STYLE = "color: #555; font-size: 11px;"
MODE_LABELS = {"slot": "belong to slots", "token": "travel with tokens"}
SPECIAL_TEXT = {"d_ff": "4 × d"}          # what a spin box shows at its lowest value


def choice_text(name: str, value) -> str:
    """How a choice reads in its menu."""
    if name == "pe":
        return TITLES.get(value, value)
    if name == "mode":
        return MODE_LABELS.get(value, value)
    return str(value)


class ShortCombo(QComboBox):
    """A menu that lists its items' whole texts and, closed, shows the current one whole
    where it fits, else its short form (given, or the text before " ("): a narrow panel
    shows "sinusoidal", never "sinusoidal (Vaswani 20"; the whole is in the open menu
    and the item's tooltip."""

    SHORT = Qt.ItemDataRole.UserRole + 1      # the closed box's text when room is short
    WIDEST = 22                               # characters: a longer short form is elided
    INSET = 4           # pixels: the style draws the text inside its field (Fusion: 1 a
                        # side) and a last glyph may overhang; text that fits only without
                        # them lost its ")"
    own_tip = ""        # the box's tooltip (setToolTip); the whole text heads it when cut

    def add(self, text: str, data, short: str | None = None) -> None:
        self.addItem(text, data)
        if short:
            self.setItemData(self.count() - 1, short, self.SHORT)
        if self.short_form(self.count() - 1) != text:     # closed, it may show less
            self.setItemData(self.count() - 1, text, Qt.ItemDataRole.ToolTipRole)

    def setToolTip(self, tip: str) -> None:
        self.own_tip = tip
        super().setToolTip(tip)
        self.update()

    def short_form(self, index: int) -> str:
        return self.itemData(index, self.SHORT) or self.itemText(index).split(" (")[0]

    def _field(self) -> tuple[QStyleOptionComboBox, int]:
        option = QStyleOptionComboBox()
        self.initStyleOption(option)
        rect = self.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, option,
                                           QStyle.SubControl.SC_ComboBoxEditField, self)
        return option, rect.width()

    def shown_text(self, index: int | None = None) -> str:
        """The text the closed box shows for item ``index`` (default: the current)."""
        index = self.currentIndex() if index is None else index
        metrics, room = self.fontMetrics(), self._field()[1] - self.INSET
        for text in (self.itemText(index), self.short_form(index)):
            if metrics.horizontalAdvance(text) <= room:
                return text
        return metrics.elidedText(self.short_form(index), Qt.TextElideMode.ElideRight, room)

    def paintEvent(self, event) -> None:
        painter = QStylePainter(self)
        option = self._field()[0]
        option.currentText = self.shown_text()
        whole = self.currentText()
        tip = (f"{whole}\n\n{self.own_tip}" if self.own_tip else whole) \
            if option.currentText != whole else self.own_tip
        if tip != self.toolTip():       # the whole text where the box shows less of it
            super().setToolTip(tip)
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, option)
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, option)

    def sizeHint(self) -> QSize:
        """Room for the longest short form (up to WIDEST characters), frame and arrow."""
        metrics = self.fontMetrics()
        text = max((metrics.horizontalAdvance(self.short_form(i))
                    for i in range(self.count())), default=40)
        text = min(text, self.WIDEST * metrics.averageCharWidth())
        height = super().sizeHint().height()
        room = QSize(text + self.INSET, height)
        size = self.style().sizeFromContents(QStyle.ContentsType.CT_ComboBox,
                                             self._field()[0], room, self)
        return QSize(size.width(), height)

    minimumSizeHint = sizeHint

    def showPopup(self) -> None:
        view = self.view()                        # the whole texts in the open menu
        view.setMinimumWidth(view.sizeHintForColumn(0) + 2 * view.frameWidth() + 24)
        super().showPopup()


def option_widget(option: Option) -> QWidget:
    """The field that edits one option, within its allowed values."""
    if option.choices:
        widget = ShortCombo()
        for value in option.choices:
            # one wording, open and closed: the Positions field once read "by slot" closed
            # and "belong to slots" open; its texts are short enough to show whole
            widget.add(choice_text(option.name, value), value)
        return widget
    if option.kind is bool:
        return QCheckBox(option.label)
    if option.kind is int:
        widget = QSpinBox(minimum=int(option.low), maximum=int(option.high))
        if option.name in SPECIAL_TEXT:
            widget.setSpecialValueText(SPECIAL_TEXT[option.name])
    else:
        widget = QDoubleSpinBox(decimals=2, minimum=option.low, maximum=option.high,
                                singleStep=0.25)
    widget.setKeyboardTracking(False)     # one change per Enter / arrow, not per digit
    return widget


def marked(widget: QWidget, invalid: bool) -> None:
    """Mark ``widget`` in red while its value is refused, or not: outlined (INVALID),
    or a spin box's text field red on pink (INVALID_TEXT): a style sheet on the box
    drew its arrows as two flat bars."""
    if isinstance(widget, QAbstractSpinBox):
        widget.lineEdit().setStyleSheet(INVALID_TEXT if invalid else "")
    else:
        widget.setStyleSheet(INVALID if invalid else "")


def edited(widget: QWidget):
    """The signal a field sends when the user changes it."""
    return (widget.toggled if isinstance(widget, QCheckBox) else
            widget.currentIndexChanged if isinstance(widget, QComboBox) else
            widget.valueChanged)


def value_of(widget: QWidget):
    if isinstance(widget, QCheckBox):
        return widget.isChecked()
    if isinstance(widget, QComboBox):
        return widget.currentData()
    return widget.value()


def set_value(widget: QWidget, value) -> None:
    """Show ``value`` in the field without telling its signals."""
    widget.blockSignals(True)
    if isinstance(widget, QCheckBox):
        widget.setChecked(bool(value))
    elif isinstance(widget, QComboBox):
        widget.setCurrentIndex(max(widget.findData(value), 0))
    else:
        widget.setValue(value)
    widget.blockSignals(False)
