"""One field per option (models.options.Option): the widget that edits it within its
allowed values, and its value read and written without signals."""
from __future__ import annotations

from PySide6.QtWidgets import QCheckBox, QComboBox, QDoubleSpinBox, QSpinBox, QWidget

from ..models.options import TITLES, Option

MODE_LABELS = {"slot": "belong to slots", "token": "travel with tokens"}
SPECIAL_TEXT = {"d_ff": "4 × d"}          # what a spin box shows at its lowest value


def choice_text(name: str, value) -> str:
    """How a choice reads in its menu."""
    if name == "pe":
        return TITLES.get(value, value)
    if name == "mode":
        return MODE_LABELS.get(value, value)
    return str(value)


def narrow_combo(combo: QComboBox) -> QComboBox:
    """A menu whose longest item does not set the panel's width (it elides instead)."""
    combo.setSizeAdjustPolicy(QComboBox.AdjustToMinimumContentsLengthWithIcon)
    combo.setMinimumContentsLength(8)
    return combo


def option_widget(option: Option) -> QWidget:
    """The field that edits one option, within its allowed values."""
    if option.choices:
        widget = narrow_combo(QComboBox())
        for value in option.choices:
            widget.addItem(choice_text(option.name, value), value)
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
