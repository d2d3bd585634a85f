"""How a real model loads: the precision its weights are kept in (float32, bfloat16,
float16; every value is computed in float32, models.hf.precision), and, where accelerate is installed, its layers placed by
accelerate's device_map="auto" with what does not fit in memory offloaded to a folder.
Beside them, what the weights take in that precision (the memory check's count)."""
from __future__ import annotations

import importlib.util
from dataclasses import replace

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QCheckBox, QFileDialog, QFormLayout, QLabel, QWidget

from ...document.spec import PRETRAINED_DTYPES
from .fields import STATUS_STYLE, ShortCombo

DTYPE_TIPS = {"float32": "The checkpoint's weights as they are, computed in float32",
              "bfloat16": "Weights rounded to about 3 significant digits, half the memory "
                          "of float32; computed in float32, with float32's noise floor",
              "float16": "Weights rounded to about 3-4 significant digits (a narrower "
                         "range than bfloat16), half the memory of float32; computed in "
                         "float32, with float32's noise floor"}
OFFLOAD_TIP = ("Let accelerate place the layers (device_map=\"auto\"): on the accelerator, "
               "then the CPU, then this folder on disk for what does not fit in memory. "
               "Every forward then reads the offloaded layers again.")


def accelerate_installed() -> bool:
    return importlib.util.find_spec("accelerate") is not None


def weights_text(spec) -> str:
    """'weights about 269 MB in bfloat16', from the checkpoint's headers; "" when they
    cannot be read (the load says why)."""
    from ...models import hf
    from ...models.limits.memory import DTYPE_BYTES, checkpoint_weights, size_text
    try:
        folder, gguf_file, _ = hf.resolve(spec.address)
        config = hf.read_config(folder) if gguf_file is None else None
        count = checkpoint_weights(folder, gguf_file, config)
    except (ValueError, OSError):
        return ""
    return (f"weights about {size_text(count * DTYPE_BYTES[spec.dtype] // 4)} in "
            f"{spec.dtype}")


class PrecisionChoice(QWidget):
    """``dtype`` (a combo) and ``offload`` (a check box asking for a folder) of a real
    model, with ``estimate`` under them; hidden for the built-in model."""

    chosen = Signal()           # the user changed the dtype or the placement

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.folder = ""
        self._spec = None           # the pretrained spec shown
        self.dtype = ShortCombo()
        self.dtype.setObjectName("dtype")
        for index, name in enumerate(PRETRAINED_DTYPES):
            self.dtype.addItem(name, name)
            self.dtype.setItemData(index, DTYPE_TIPS[name], Qt.ToolTipRole)
        self.dtype.setToolTip("The precision the weights are kept in. Every value is "
                              "computed in float32: computed in half precision, the "
                              "rounding was larger than the changes it shows")
        self.dtype.activated.connect(self._dtype_chosen)
        self.offload = QCheckBox("Offload to a folder…")
        self.offload.setToolTip(OFFLOAD_TIP)
        self.offload.clicked.connect(self._offload_clicked)
        self.offload.setVisible(accelerate_installed())
        self.estimate = QLabel(wordWrap=True)
        self.estimate.setStyleSheet(STATUS_STYLE)
        self.estimate.setToolTip("What the weights take in this precision, counted from "
                                 "the checkpoint's files as the memory check counts them")
        form = QFormLayout(self)
        form.setContentsMargins(0, 0, 0, 0)
        form.addRow("Precision", self.dtype)
        form.addRow(self.offload)
        form.addRow(self.estimate)
        self.hide()

    def applied(self, spec):
        """``spec`` (a pretrained one) loaded as chosen here."""
        return replace(spec, dtype=self.dtype.currentData(),
                       offload_folder=self.folder if self.offload.isChecked() else "")

    def show_spec(self, spec) -> None:
        """Show how ``spec`` loads (hidden for the built-in model)."""
        self.setVisible(not spec.is_builtin)
        if spec.is_builtin:
            return
        self._spec = spec
        self.dtype.setCurrentIndex(max(self.dtype.findData(spec.dtype), 0))
        self.folder = spec.offload_folder or self.folder
        self.offload.setChecked(bool(spec.offload_folder))
        self.offload.setText(f"Offload to {spec.offload_folder}" if spec.offload_folder
                             else "Offload to a folder…")
        self.estimate.setText(weights_text(spec))

    def _dtype_chosen(self, _index: int) -> None:
        if self._spec is not None:                  # the estimate in the new precision
            self.estimate.setText(weights_text(self.applied(self._spec)))
        self.chosen.emit()

    def _offload_clicked(self, on: bool) -> None:
        if on:
            folder = QFileDialog.getExistingDirectory(self, "Offload layers to a folder",
                                                      self.folder)
            if not folder:
                self.offload.setChecked(False)
                return
            self.folder = folder
        self.chosen.emit()
