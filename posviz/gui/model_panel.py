"""The model panel: which model, every option of the built-in one, and positions.

Invalid settings are told next to the field (red text under it, the field outlined) and
change nothing: the previous valid model keeps running. A valid change is sent at once.
Real pretrained models load in the background with a busy bar and a Cancel button.
"""
from __future__ import annotations

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFileDialog, QFormLayout,
                               QGroupBox, QHBoxLayout, QLabel, QProgressBar, QPushButton,
                               QSpinBox, QVBoxLayout, QWidget)

from ..core.config import DTYPES, MASKS, NORMS, ModelConfig, Positions
from ..core.encodings import KINDS, TITLES

INVALID = "border: 1px solid #c62828; border-radius: 3px;"
ERROR_STYLE = "color: #c62828; font-size: 11px;"

TIPS = {
    "layers": "Number of transformer blocks L. Each block is attention, then a feed-forward MLP.",
    "heads": "Attention heads h per block. Must divide the model width.",
    "d_model": "Model width d: the size of every token's vector in the residual stream.",
    "d_ff": "Width of each block's feed-forward layer (0 means 4 × model width).",
    "pe": "How position enters the model. 'none' leaves self-attention permutation-"
          "equivariant; absolute encodings (sinusoidal, learned) are added to the token "
          "vectors; RoPE rotates queries and keys; ALiBi and T5 add a bias to the attention "
          "scores that depends on the distance between tokens.",
    "pe_scale": "Weight of the positional signal against the token content (0 switches it "
                "off; large values let position dominate).",
    "mask": "bidirectional: every token attends to every token (an encoder such as BERT). "
            "causal: each token attends only to the tokens before it (a decoder such as "
            "GPT); the mask itself leaks position.",
    "residual": "Residual (skip) connections add each block's input to its output; they "
                "carry positional information from layer to layer.",
    "norm": "Where LayerNorm sits: before each sub-layer (pre, as in GPT-2), after the "
            "residual sum (post, as in the original Transformer and BERT), or nowhere.",
    "seed": "Seed of the random weights. The model is untrained: the symmetry argument "
            "holds for any weights, and two equal settings give equal weights.",
    "dtype": "Floating-point precision. Differences below the noise floor (about 100 × "
             "machine epsilon) are rounding, not broken symmetry.",
    "mode": "Positions belong to slots: slot j always gets position j, whatever token "
            "sits there (how a model is normally fed).\nPositions travel with tokens: each "
            "token keeps the position id of its original place, so absolute encodings "
            "become equivariant again.",
    "offset": "Position id of the first slot (e.g. to mimic left padding or a prompt that "
              "came before).",
    "model": "The built-in transformer (random weights, every option below), a real "
             "pretrained model found on this computer, or a model folder you choose. "
             "Nothing is downloaded.",
}

MODE_LABELS = {"slot": "belong to slots", "token": "travel with tokens"}


class ModelPanel(QWidget):
    """Edits ModelConfig and Positions; tells the window only about valid ones."""

    configChanged = Signal(object)        # a valid ModelConfig
    positionsChanged = Signal(object)     # a valid Positions
    builtinRequested = Signal()           # switch back to the built-in model
    modelRequested = Signal(str, str)     # spec, label of a real model
    cancelRequested = Signal()

    def __init__(self, config: ModelConfig = ModelConfig(), positions: Positions = Positions(),
                 parent: QWidget | None = None):
        super().__init__(parent)
        self._fields: dict[str, QWidget] = {}
        self._errors: dict[str, QLabel] = {}
        self._current_model = 0           # index in the chooser of the model in use
        self._max_len = config.max_len
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self._model_box())
        self.builtin_box = QGroupBox("Built-in transformer")
        form = self._form(self.builtin_box)
        self._add(form, "layers", "Layers", self._spin(1, 64))
        self._add(form, "heads", "Heads", self._spin(1, 128))
        self._add(form, "d_model", "Width d", self._spin(1, 4096))
        self._add(form, "d_ff", "MLP width", self._spin(0, 16384, special="4 × d"))
        pe = QComboBox()
        for kind in KINDS:
            pe.addItem(TITLES.get(kind, kind), kind)
        self._add(form, "pe", "Positions", pe)
        scale = QDoubleSpinBox(decimals=2, minimum=0.0, maximum=100.0, singleStep=0.25)
        scale.setKeyboardTracking(False)
        self._add(form, "pe_scale", "Position scale", scale)
        self._add(form, "mask", "Mask", self._combo(MASKS))
        self._add(form, "residual", "", QCheckBox("Residual connections"))
        self._add(form, "norm", "LayerNorm", self._combo(NORMS))
        self._add(form, "seed", "Seed", self._spin(0, 2**31 - 1))
        self._add(form, "dtype", "Precision", self._combo(DTYPES))
        layout.addWidget(self.builtin_box)
        pos_box = QGroupBox("Position ids")
        form = self._form(pos_box)
        mode = QComboBox()
        for key, label in MODE_LABELS.items():
            mode.addItem(label, key)
        self._add(form, "mode", "Positions", mode)
        self._add(form, "offset", "First position", self._spin(0, 1_000_000))
        layout.addWidget(pos_box)
        layout.addStretch(1)
        self.set_config(config)
        self.set_positions(positions)
        for name, widget in self._fields.items():
            signal = (widget.toggled if isinstance(widget, QCheckBox) else
                      widget.currentIndexChanged if isinstance(widget, QComboBox) else
                      widget.valueChanged)
            target = self._positions_edited if name in ("mode", "offset") else self._config_edited
            signal.connect(target)

    # -- construction helpers ---------------------------------------------------------
    def _model_box(self) -> QGroupBox:
        box = QGroupBox("Source")
        layout = QVBoxLayout(box)
        self.chooser = QComboBox()
        self.chooser.setToolTip(TIPS["model"])
        self.chooser.addItem("Built-in transformer", ("builtin", ""))
        try:
            from ..core import hf
            sources = hf.available_models()
        except Exception:       # no real-model support here: the built-in model only
            sources = []
        for source in sources:
            self.chooser.addItem(source.label, ("real", source.spec))
        self.chooser.addItem("Open folder…", ("open", ""))
        self.chooser.activated.connect(self._model_chosen)
        layout.addWidget(self.chooser)
        row = QHBoxLayout()
        self.busy = QProgressBar(minimum=0, maximum=0, textVisible=False)
        self.busy.setMaximumHeight(10)
        self.cancel = QPushButton("Cancel")
        self.cancel.setToolTip("Stop waiting for this model; the current one stays in use")
        self.cancel.clicked.connect(self._cancel)
        row.addWidget(self.busy, 1)
        row.addWidget(self.cancel)
        layout.addLayout(row)
        self.model_status = QLabel(wordWrap=True)
        self.model_status.setStyleSheet("color: #555; font-size: 11px;")
        layout.addWidget(self.model_status)
        self.model_facts = QLabel(wordWrap=True)          # a real model's architecture
        self.model_facts.setTextFormat(Qt.RichText)
        self.model_facts.setToolTip("Real models keep their own architecture; the position "
                                    "ids below still apply.")
        self.model_facts.hide()
        layout.addWidget(self.model_facts)
        self.busy.hide()
        self.cancel.hide()
        self.model_status.hide()
        return box

    @staticmethod
    def _form(box: QGroupBox) -> QFormLayout:
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        form.setVerticalSpacing(3)
        return form

    @staticmethod
    def _spin(low: int, high: int, special: str = "") -> QSpinBox:
        spin = QSpinBox(minimum=low, maximum=high)
        spin.setKeyboardTracking(False)       # one change per Enter / arrow, not per digit
        if special:
            spin.setSpecialValueText(special)
        return spin

    @staticmethod
    def _combo(values) -> QComboBox:
        combo = QComboBox()
        for value in values:
            combo.addItem(value, value)
        return combo

    def _add(self, form: QFormLayout, name: str, label: str, widget: QWidget) -> None:
        widget.setToolTip(TIPS[name])
        widget.setObjectName(name)
        error = QLabel(wordWrap=True)
        error.setStyleSheet(ERROR_STYLE)
        error.setObjectName(f"{name}_error")
        error.hide()
        column = QVBoxLayout()
        column.setSpacing(1)
        column.addWidget(widget)
        column.addWidget(error)
        if label:
            caption = QLabel(label)
            caption.setToolTip(TIPS[name])
            form.addRow(caption, column)
        else:
            form.addRow(column)
        self._fields[name], self._errors[name] = widget, error

    # -- values -----------------------------------------------------------------------
    def field(self, name: str) -> QWidget:
        return self._fields[name]

    def error_text(self, name: str) -> str:
        label = self._errors[name]
        return label.text() if not label.isHidden() else ""

    def _value(self, name: str):
        widget = self._fields[name]
        if isinstance(widget, QCheckBox):
            return widget.isChecked()
        if isinstance(widget, QComboBox):
            return widget.currentData()
        return widget.value()

    def _set_value(self, name: str, value) -> None:
        widget = self._fields[name]
        widget.blockSignals(True)
        if isinstance(widget, QCheckBox):
            widget.setChecked(bool(value))
        elif isinstance(widget, QComboBox):
            widget.setCurrentIndex(max(widget.findData(value), 0))
        else:
            widget.setValue(value)
        widget.blockSignals(False)

    def config(self) -> ModelConfig:
        """The config the fields show (possibly invalid: see ``problems()``)."""
        names = ("layers", "heads", "d_model", "d_ff", "pe", "pe_scale", "mask", "residual",
                 "norm", "seed", "dtype")
        return ModelConfig(**{n: self._value(n) for n in names}, max_len=self._max_len)

    def positions(self) -> Positions:
        return Positions(self._value("mode"), self._value("offset"))

    def set_config(self, config: ModelConfig) -> None:
        for name, value in config.to_dict().items():
            if name in self._fields:
                self._set_value(name, value)
        self._max_len = config.max_len
        self._show_problems({}, config_fields=True)

    def set_positions(self, positions: Positions) -> None:
        self._set_value("mode", positions.mode)
        self._set_value("offset", positions.offset)
        self._show_problems({}, config_fields=False)

    # -- reactions --------------------------------------------------------------------
    def _show_problems(self, problems: dict[str, str], config_fields: bool) -> None:
        for name, widget in self._fields.items():
            if (name in ("mode", "offset")) == config_fields:
                continue
            message = problems.get(name, "")
            self._errors[name].setText(message)
            self._errors[name].setVisible(bool(message))
            widget.setStyleSheet(INVALID if message else "")

    def show_positions_error(self, message: str) -> None:
        """A valid Positions the model cannot take (e.g. too many positions)."""
        self._show_problems({"offset": message}, config_fields=False)

    def _config_edited(self, *_) -> None:
        config = self.config()
        problems = config.problems()
        self._show_problems(problems, config_fields=True)
        if not problems:
            self.configChanged.emit(config)

    def _positions_edited(self, *_) -> None:
        positions = self.positions()
        problems = positions.problems()
        self._show_problems(problems, config_fields=False)
        if not problems:
            self.positionsChanged.emit(positions)

    def _model_chosen(self, index: int) -> None:
        kind, spec = self.chooser.itemData(index)
        if kind == "open":
            folder = QFileDialog.getExistingDirectory(self, "Open a model folder")
            if not folder:
                self.chooser.setCurrentIndex(self._current_model)
                return
            spec, label = folder, folder
        else:
            label = self.chooser.itemText(index)
        if index == self._current_model and kind != "open":
            return
        self._requested = (index, spec, label)
        if kind == "builtin":
            self.builtinRequested.emit()
        else:
            self.modelRequested.emit(spec, label)

    def _cancel(self) -> None:
        self.cancelRequested.emit()
        self.loading_finished()
        self.chooser.setCurrentIndex(self._current_model)
        self._say("Loading cancelled; the current model stays in use.")

    # -- called by the window as a load progresses ------------------------------------
    def _say(self, text: str, error: bool = False) -> None:
        self.model_status.setText(text)
        self.model_status.setStyleSheet(ERROR_STYLE if error else "color: #555; font-size: 11px;")
        self.model_status.setVisible(bool(text))

    def loading_started(self, label: str) -> None:
        self.busy.show()
        self.cancel.show()
        self._say(f"Loading {label}…")

    def loading_progress(self, text: str) -> None:
        self._say(text)

    def loading_finished(self) -> None:
        self.busy.hide()
        self.cancel.hide()

    def model_loaded(self, real: bool, name: str) -> None:
        """The model in use changed: remember it, lock the built-in fields for a real one."""
        self.loading_finished()
        index, spec, label = getattr(self, "_requested", None) or (None, "", "")
        if index is None:
            index = 0 if not real else self._current_model
        if real and self.chooser.itemData(index)[0] == "open":
            # keep the opened folder in the list, just above "Open folder…"
            index = self.chooser.count() - 1
            self.chooser.insertItem(index, label, ("real", spec))
        self._current_model = 0 if not real else index
        self._requested = None
        self.chooser.setCurrentIndex(self._current_model)
        # A real model's own architecture replaces the built-in fields (greyed-out
        # built-in values would misdescribe it); ``describe`` fills it in.
        self.builtin_box.setEnabled(not real)
        self.builtin_box.setVisible(not real)
        self.model_facts.setVisible(real)
        if not real:
            self.model_facts.clear()
        self._say(f"Using {name}." if real else "")

    def describe(self, trace) -> None:
        """Show a real model's architecture, read from one of its traces."""
        extras = trace.extras
        kind = extras.get("position_encoding")
        rows = [("Family", extras.get("family")),
                ("Layers × heads", f"{trace.n_layers} × {trace.n_heads}"),
                ("Width d", trace.d_model),
                ("Positions", TITLES.get(kind, kind) if kind else None),
                ("Mask", extras.get("mask"))]
        self.model_facts.setText(
            "<table cellspacing='3'>" + "".join(
                f"<tr><td style='color:#555'>{label}</td><td>{value}</td></tr>"
                for label, value in rows if value not in (None, "")) + "</table>")

    def model_failed(self, message: str) -> None:
        self.loading_finished()
        self._requested = None
        self.chooser.setCurrentIndex(self._current_model)
        self._say(message, error=True)
