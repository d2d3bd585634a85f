"""The built-in model's weights choice: random (drawn from the seed), the shipped trained
checkpoint of the configuration, or a checkpoint folder written by ``posviz train``;
a refusal (no checkpoint for this configuration) is told under it."""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFileDialog, QLabel, QVBoxLayout, QWidget

from ...models.training.checkpoint import RANDOM, TRAINED, WEIGHTS_TIP
from .fields import ERROR_STYLE, INVALID, ShortCombo


class WeightsChoice(QWidget):
    """``combo`` (its data: RANDOM, TRAINED or a folder) over ``error``."""

    chosen = Signal(str)        # the weights the user chose (a folder once it is picked)
    cancelled = Signal()        # the folder dialog was closed without a folder

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.combo = ShortCombo()
        self.combo.setObjectName("weights")
        self.combo.setToolTip(WEIGHTS_TIP + ". The symmetry views hold for any weights: "
                              "random is the default.")
        self.combo.addItem("random (seed)", RANDOM)
        self.combo.addItem("trained", TRAINED)
        self.combo.add("Checkpoint folder…", "", short="Folder…")
        self.combo.activated.connect(self._activated)
        self.error = QLabel(wordWrap=True)
        self.error.setStyleSheet(ERROR_STYLE)
        self.error.hide()
        column = QVBoxLayout(self)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(1)
        column.addWidget(self.combo)
        column.addWidget(self.error)
        self.caption = QLabel("Weights")
        self.caption.setToolTip(self.combo.toolTip())

    def value(self) -> str:
        return self.combo.currentData() or RANDOM

    def set(self, weights: str) -> None:
        """Show these weights as chosen (a folder is listed from now on, above
        "Checkpoint folder…"), with no refusal under them."""
        index = self.combo.findData(weights)
        if index < 0:
            index = self.combo.count() - 1
            self.combo.insertItem(index, weights.rstrip("/").rsplit("/", 1)[-1], weights)
            self.combo.setItemData(index, weights, Qt.ToolTipRole)
        self.combo.setCurrentIndex(index)
        self.accept()

    def refuse(self, message: str) -> None:
        self.error.setText(message)
        self.error.show()
        self.combo.setStyleSheet(INVALID)

    def accept(self) -> None:
        self.error.hide()
        self.combo.setStyleSheet("")

    def _activated(self, index: int) -> None:
        weights = self.combo.itemData(index)
        if weights == "":
            weights = QFileDialog.getExistingDirectory(self, "Open a checkpoint folder "
                                                       "(posviz train)")
            if not weights:
                self.cancelled.emit()
                return
        self.chosen.emit(weights)
