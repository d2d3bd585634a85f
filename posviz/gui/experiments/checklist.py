"""Compare's checklist of encodings: a button whose menu stays open while the user ticks
several (a plain QMenu closes at every click) and whose text names the ones ticked."""
from __future__ import annotations

from PySide6 import QtCore, QtWidgets
from PySide6.QtWidgets import QStyle, QStyleOptionComboBox, QStylePainter

from posviz.models.encodings import NoPositions, RotaryEncoding, SinusoidalEncoding
from posviz.models.options import TITLES

COMPARED = (NoPositions.kind, SinusoidalEncoding.kind, RotaryEncoding.kind)   # Compare's start
FEW_CHARACTERS = 24                   # the least of the chosen encodings shown whole
CHOSEN_KEY = "experiments/encodings"     # the encodings ticked last, kept between runs
ENCODINGS_TIP = ("The encodings Compare runs on the current text and order, each on "
                 "the built-in model")


class Checklist(QtWidgets.QMenu):
    """A menu of checkable entries that toggles an entry on a click (or Return, Space)
    and stays open; Esc or a click outside closes it."""

    def mouseReleaseEvent(self, event) -> None:
        action = self.activeAction()
        if action is not None and action.isCheckable() and action.isEnabled():
            action.toggle()
            return
        super().mouseReleaseEvent(event)

    def keyPressEvent(self, event) -> None:
        action = self.activeAction()
        keys = (QtCore.Qt.Key.Key_Return, QtCore.Qt.Key.Key_Enter, QtCore.Qt.Key.Key_Space)
        if action is not None and action.isCheckable() and event.key() in keys:
            action.toggle()
            return
        super().keyPressEvent(event)


def _remembered(settings) -> tuple[str, ...]:
    """The encodings ticked last (``settings``' CHOSEN_KEY, comma-separated) that are
    still offered; COMPARED when none were kept."""
    if settings is None or not settings.contains(CHOSEN_KEY):
        return COMPARED
    return tuple(kind for kind in str(settings.value(CHOSEN_KEY) or "").split(",")
                 if kind in TITLES)


def named(kind: str) -> str:
    """An encoding as its entry names it, without its paper ("RoPE", "T5 relative
    bias"), as Compare's figure names its curves."""
    return TITLES[kind].split(" (")[0]


class EncodingsButton(QtWidgets.QToolButton):
    """The encodings Compare runs: a checklist, its choice as the button's text, kept in
    ``settings`` (QSettings, or None) for the next run of the window. It looks like the
    tab's other boxes (a combo box's frame and arrow), not a tool button with a small
    arrow in its corner."""

    changed = QtCore.Signal()
    model_words = ""                # the model Compare runs, with its settings (say_model)
    _said = None                    # (spec, instead) of the words on the button now

    def __init__(self, settings=None, parent=None):
        super().__init__(parent)
        self.settings = settings
        self.setPopupMode(QtWidgets.QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setSizePolicy(QtWidgets.QSizePolicy.Policy.Preferred,    # may shrink, elided
                           QtWidgets.QSizePolicy.Policy.Fixed)
        menu = Checklist(self)
        chosen = _remembered(settings)
        for kind, title in TITLES.items():
            action = menu.addAction(title)
            action.setCheckable(True)
            action.setChecked(kind in chosen)
            action.setData(kind)
            action.toggled.connect(self._changed)
        menu.setToolTipsVisible(True)
        self.setMenu(menu)
        self._changed()

    def say_model(self, session, caption: QtWidgets.QLabel) -> None:
        """Name on ``caption`` (the button's label) the model Compare runs, and in the
        tooltips its settings: the window's built-in model, or with a pretrained one in
        the window the built-in model's defaults, saying so."""
        from .jobs import (compare_model, compared_spec, instead_words,
                           replaced_model)
        spec, instead = compared_spec(session), replaced_model(session)
        if (spec, instead) == self._said:
            return                      # the same model (a reorder): nothing new to say
        self._said = (spec, instead)
        # the pretrained model's name only in the tooltip: a long one widened the tab
        caption.setText("Encodings on the built-in model"
                        + (" (not the window's)" if instead else ""))
        self.model_words = (f"Each runs on the {compare_model(spec.config)}"
                            + (f", {instead_words(instead)}" if instead else ""))
        caption.setToolTip(self.model_words)
        self._say_chosen()

    def _combo_option(self, text: str | None = None) -> QStyleOptionComboBox:
        option = QStyleOptionComboBox()
        option.initFrom(self)
        option.currentText = self.text() if text is None else text
        if self.isDown() or (self.menu() is not None and self.menu().isVisible()):
            option.state |= QStyle.StateFlag.State_Sunken
        return option

    def paintEvent(self, event) -> None:
        """A combo box's frame and arrow, its text elided to the room it has (whole in
        the tooltip)."""
        option = self._combo_option()
        room = self.style().subControlRect(QStyle.ComplexControl.CC_ComboBox, option,
                                           QStyle.SubControl.SC_ComboBoxEditField, self)
        option.currentText = self.fontMetrics().elidedText(
            self.text(), QtCore.Qt.TextElideMode.ElideRight, room.width())
        painter = QStylePainter(self)
        painter.drawComplexControl(QStyle.ComplexControl.CC_ComboBox, option)
        painter.drawControl(QStyle.ControlElement.CE_ComboBoxLabel, option)

    def _size_for(self, text: str) -> QtCore.QSize:
        """The size of a combo box showing ``text`` whole, with its frame and arrow."""
        inner = QtCore.QSize(self.fontMetrics().horizontalAdvance(text) + 4,
                             super().sizeHint().height())
        return self.style().sizeFromContents(QStyle.ContentsType.CT_ComboBox,
                                             self._combo_option(text), inner, self)

    def sizeHint(self) -> QtCore.QSize:
        """The whole text, the frame and the arrow, where there is room."""
        return self._size_for(self.text())

    def minimumSizeHint(self) -> QtCore.QSize:
        """Room for a few encodings' names: six of them ran past a 1024-pixel window's
        tab (its figure's note then wider than the view); the rest is elided."""
        return self._size_for(self.text()[:FEW_CHARACTERS] + "…").boundedTo(self.sizeHint())

    def chosen(self) -> tuple[str, ...]:
        return tuple(a.data() for a in self.menu().actions() if a.isChecked())

    def _say_chosen(self) -> str:
        """The encodings ticked, in words, and in the tooltip with the model they run on."""
        chosen = ", ".join(map(named, self.chosen())) or "none chosen"
        self.setToolTip(f"Compares: {chosen}. {self.model_words or ENCODINGS_TIP}. The menu "
                        "stays open while you tick several (Esc closes it).")
        return chosen

    def _changed(self) -> None:
        chosen = self._say_chosen()
        self.setText(chosen)
        self.updateGeometry()           # its size hint follows the text
        if self.settings is not None:
            self.settings.setValue(CHOSEN_KEY, ",".join(self.chosen()))
        self.changed.emit()
