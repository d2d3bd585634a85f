"""The model panel: which model runs, every option of the built-in one, and positions.

Its fields (ranges, defaults, labels, tooltips) come from ``core.options.OPTIONS``. It
always shows the model that runs (the session's spec): an invalid setting is told next
to the field (red text under it, the field outlined) and changes nothing; a valid change
is asked for at once (``modelRequested(ModelSpec)``), and if the change is refused or
cancelled, the panel shows the running model again. Pretrained models load in the
background with a progress bar (step k of N when the load tells its steps, else
busy) and a Cancel button.
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (QCheckBox, QComboBox, QDoubleSpinBox, QFileDialog, QFormLayout,
                               QGroupBox, QHBoxLayout, QLabel, QProgressBar, QPushButton,
                               QSpinBox, QVBoxLayout, QWidget)

from ..document.spec import ModelSpec
from ..errors import PosvizInputError
from ..models.checkpoint import ARCHITECTURE, RANDOM, TRAINED, WEIGHTS_TIP
from ..models.config import ModelConfig, Positions
from ..models.options import MODEL_OPTIONS, OPTIONS, POSITION_OPTIONS, TITLES, Option

INVALID = "border: 1px solid #c62828; border-radius: 3px;"
ERROR_STYLE = "color: #c62828; font-size: 11px;"
STATUS_STYLE = "color: #555; font-size: 11px;"
CHOOSER_TIP = ("The built-in transformer (random or trained weights, the options below), a "
               "real pretrained model found on this computer, or a model folder you choose. "
               "Nothing is downloaded.")
MODE_LABELS = {"slot": "belong to slots", "token": "travel with tokens"}
SPECIAL_TEXT = {"d_ff": "4 × d"}          # what a spin box shows at its lowest value
HIDDEN = tuple(n for n in MODEL_OPTIONS if not OPTIONS[n].chosen)   # kept from the running config
CONFIG_FIELDS = tuple(name for name in MODEL_OPTIONS if name not in HIDDEN)
# The steps a pretrained load tells (core.hf.load_backend), numbered: the bar shows
# "step k of N"; a step not listed here shows a busy bar with its text.
LOAD_STEPS = {"reading config": 1, "loading tokenizer": 2, "loading weights": 3,
              "de-quantizing weights": 3, "ready": 4}
LOAD_STEP_COUNT = 4
FIXED_BY_A_FOLDER = tuple("d_ff" if n == "ff_width" else n for n in ARCHITECTURE)


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


class ModelPanel(QWidget):
    """Shows the running ModelSpec and Positions; asks for valid new ones."""

    modelRequested = Signal(object)       # a ModelSpec to load (its config is valid)
    positionsChanged = Signal(object)     # a valid Positions
    cancelRequested = Signal()

    def __init__(self, running: Callable[[], ModelSpec], positions: Positions = Positions(),
                 parent: QWidget | None = None):
        super().__init__(parent)
        self._running = running           # the session's spec, read when needed
        self._loading = "the model"       # what is loading, told in loading_started
        self._fields: dict[str, QWidget] = {}
        self._errors: dict[str, QLabel] = {}
        self._hidden_values = {name: OPTIONS[name].default for name in HIDDEN}
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self._model_box())
        self.builtin_box = QGroupBox("Built-in transformer")
        form = self._form(self.builtin_box)
        self._add_weights(form)
        for name in CONFIG_FIELDS:
            self._add(form, OPTIONS[name])
        self.builtin_facts = QLabel(wordWrap=True)       # its scheme and size, in a line
        self.builtin_facts.setStyleSheet(STATUS_STYLE)
        self.builtin_facts.setToolTip("What the options above make: the positional "
                                      "scheme, the number of weights and where they live")
        self.builtin_facts.hide()
        form.addRow(self.builtin_facts)
        layout.addWidget(self.builtin_box)
        pos_box = QGroupBox("Position ids")
        form = self._form(pos_box)
        for name in POSITION_OPTIONS:
            self._add(form, OPTIONS[name])
        layout.addWidget(pos_box)
        layout.addStretch(1)
        self.set_config(ModelConfig())
        self.show_spec(running())
        self.set_positions(positions)
        for name, widget in self._fields.items():
            signal = (widget.toggled if isinstance(widget, QCheckBox) else
                      widget.currentIndexChanged if isinstance(widget, QComboBox) else
                      widget.valueChanged)
            signal.connect(self._positions_edited if name in POSITION_OPTIONS
                           else self._config_edited)

    # -- construction helpers ---------------------------------------------------------
    def _model_box(self) -> QGroupBox:
        box = QGroupBox("Source")
        layout = QVBoxLayout(box)
        self.chooser = narrow_combo(QComboBox())
        self.chooser.setToolTip(CHOOSER_TIP)
        self.chooser.addItem("Built-in transformer", ("builtin", ""))
        try:
            from ..models import hf
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
        self.busy.setToolTip("What is loading: step k of N when the load tells its steps")
        self.cancel = QPushButton("Cancel")
        self.cancel.setToolTip("Stop waiting for this model; the current one stays in use")
        self.cancel.clicked.connect(self._cancel)
        row.addWidget(self.busy, 1)
        row.addWidget(self.cancel)
        layout.addLayout(row)
        self.model_status = QLabel(wordWrap=True)
        self.model_status.setStyleSheet(STATUS_STYLE)
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

    def _add_weights(self, form: QFormLayout) -> None:
        """The weights choice: random (from the seed), the shipped trained checkpoint of
        the configuration, or a checkpoint folder; its refusal is told under it."""
        self.weights = narrow_combo(QComboBox())
        self.weights.setObjectName("weights")
        self.weights.setToolTip(WEIGHTS_TIP + ". The symmetry views hold for any weights: "
                                "random is the default.")
        self.weights.addItem("random (seed)", RANDOM)
        self.weights.addItem("trained", TRAINED)
        self.weights.addItem("Checkpoint folder…", "")
        self.weights.activated.connect(self._weights_chosen)
        self.weights_error = QLabel(wordWrap=True)
        self.weights_error.setStyleSheet(ERROR_STYLE)
        self.weights_error.hide()
        column = QVBoxLayout()
        column.setSpacing(1)
        column.addWidget(self.weights)
        column.addWidget(self.weights_error)
        caption = QLabel("Weights")
        caption.setToolTip(self.weights.toolTip())
        form.addRow(caption, column)

    def _weights_value(self) -> str:
        return self.weights.currentData() or RANDOM

    def _set_weights(self, weights: str) -> None:
        index = self.weights.findData(weights)
        if index < 0:                # a folder: listed from now on, above "Checkpoint…"
            index = self.weights.count() - 1
            self.weights.insertItem(index, weights.rstrip("/").rsplit("/", 1)[-1], weights)
            self.weights.setItemData(index, weights, Qt.ToolTipRole)
        self.weights.setCurrentIndex(index)
        # the seed draws random weights; a checkpoint folder fixes the architecture
        fixed = () if weights in (RANDOM, TRAINED) else FIXED_BY_A_FOLDER
        for name, widget in self._fields.items():
            if name not in POSITION_OPTIONS:
                widget.setEnabled(name not in fixed and (name != "seed" or weights == RANDOM))
        self.weights_error.hide()

    def _weights_chosen(self, index: int) -> None:
        if self.weights.itemData(index) == "":
            folder = QFileDialog.getExistingDirectory(self, "Open a checkpoint folder "
                                                      "(posviz train)")
            if not folder:
                self.show_spec(self._running())
                return
            self._set_weights(folder)
        self._config_edited()

    @staticmethod
    def _form(box: QGroupBox) -> QFormLayout:
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        form.setRowWrapPolicy(QFormLayout.WrapLongRows)   # narrow: the label goes above
        form.setVerticalSpacing(3)
        return form

    @staticmethod
    def _widget(option: Option) -> QWidget:
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

    def _add(self, form: QFormLayout, option: Option) -> None:
        widget = self._widget(option)
        widget.setToolTip(option.tip)
        widget.setObjectName(option.name)
        error = QLabel(wordWrap=True)
        error.setStyleSheet(ERROR_STYLE)
        error.setObjectName(f"{option.name}_error")
        error.hide()
        column = QVBoxLayout()
        column.setSpacing(1)
        column.addWidget(widget)
        column.addWidget(error)
        if isinstance(widget, QCheckBox):         # the box says its label itself
            form.addRow(column)
        else:
            caption = QLabel(option.label)
            caption.setToolTip(option.tip)
            form.addRow(caption, column)
        self._fields[option.name], self._errors[option.name] = widget, error

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
        return ModelConfig(**{n: self._value(n) for n in CONFIG_FIELDS}, **self._hidden_values)

    def positions(self) -> Positions:
        return Positions(*(self._value(n) for n in POSITION_OPTIONS))

    def set_config(self, config: ModelConfig) -> None:
        values = config.to_dict()
        for name in CONFIG_FIELDS:
            self._set_value(name, values[name])
        self._hidden_values = {name: values[name] for name in HIDDEN}
        self._show_problems({}, config_fields=True)

    def set_positions(self, positions: Positions) -> None:
        for name in POSITION_OPTIONS:
            self._set_value(name, getattr(positions, name))
        self._show_problems({}, config_fields=False)

    def show_spec(self, spec: ModelSpec) -> None:
        """Show this model as the one that runs: a built-in one's config in the fields,
        a pretrained one by name (its architecture follows in ``describe``)."""
        if spec.is_builtin:
            self.set_config(spec.config)
            self._set_weights(spec.weights)
            index = 0
        else:
            # (QComboBox.findData does not find a tuple: compare the items' data here)
            index = next((i for i in range(self.chooser.count())
                          if self.chooser.itemData(i) == ("real", spec.source)), -1)
            if index < 0:     # an opened folder: listed from now on, above "Open folder…"
                index = self.chooser.count() - 1
                self.chooser.insertItem(index, spec.name, ("real", spec.source))
        self.chooser.setCurrentIndex(index)
        # A real model's own architecture replaces the built-in fields (greyed-out
        # built-in values would misdescribe it).
        self.builtin_box.setEnabled(spec.is_builtin)
        self.builtin_box.setVisible(spec.is_builtin)
        self.model_facts.setVisible(not spec.is_builtin)
        if spec.is_builtin:
            self.model_facts.clear()
        else:
            self.builtin_facts.hide()

    # -- reactions --------------------------------------------------------------------
    def _show_problems(self, problems: dict[str, str], config_fields: bool) -> None:
        for name, widget in self._fields.items():
            if (name in POSITION_OPTIONS) == config_fields:
                continue
            message = problems.get(name, "")
            self._errors[name].setText(message)
            self._errors[name].setVisible(bool(message))
            widget.setStyleSheet(INVALID if message else "")

    def show_positions_error(self, message: str) -> None:
        """A valid Positions the model cannot take (e.g. too many positions)."""
        self._show_problems({"offset": message}, config_fields=False)

    def _request(self, spec: ModelSpec) -> None:
        if spec != self._running():
            self.modelRequested.emit(spec)

    def _builtin_spec(self, config: ModelConfig) -> ModelSpec | None:
        """The built-in model with the weights chosen, or None with the refusal told
        under the weights (no checkpoint for this configuration)."""
        weights = self._weights_value()
        if weights == RANDOM and self._running().trained:   # the checkpoint's table size
            config = config.replace(**{name: OPTIONS[name].default for name in HIDDEN})
        try:
            spec = ModelSpec.builtin(config, weights)
        except PosvizInputError as error:
            self.weights_error.setText(str(error))
            self.weights_error.show()
            self.weights.setStyleSheet(INVALID)
            return None
        self.weights_error.hide()
        self.weights.setStyleSheet("")
        return spec

    def _config_edited(self, *_) -> None:
        config = self.config()
        problems = config.problems()
        self._show_problems(problems, config_fields=True)
        spec = None if problems else self._builtin_spec(config)
        if spec is not None:
            self._request(spec)

    def _positions_edited(self, *_) -> None:
        positions = self.positions()
        problems = positions.problems()
        self._show_problems(problems, config_fields=False)
        if not problems:
            self.positionsChanged.emit(positions)

    def _model_chosen(self, index: int) -> None:
        kind, source = self.chooser.itemData(index)
        if kind == "builtin":
            config = self.config()
            problems = config.problems()
            spec = None if problems else self._builtin_spec(config)
            if problems:
                self.model_failed(next(iter(problems.values())))
            elif spec is not None:
                self._request(spec)
            return
        if kind == "open":
            source = QFileDialog.getExistingDirectory(self, "Open a model folder")
            if not source:
                self.show_spec(self._running())
                return
            label = source
        else:
            label = self.chooser.itemText(index)
        self._request(ModelSpec.pretrained(source, label))

    def _cancel(self) -> None:
        self.cancelRequested.emit()
        self.loading_finished()
        self.show_spec(self._running())
        self._say("Loading cancelled; the current model stays in use.")

    # -- told by the window as a load progresses --------------------------------------
    def _say(self, text: str, error: bool = False) -> None:
        self.model_status.setText(text)
        self.model_status.setStyleSheet(ERROR_STYLE if error else STATUS_STYLE)
        self.model_status.setVisible(bool(text))

    def loading_started(self, label: str) -> None:
        self._loading = label
        self.busy.setRange(0, 0)                 # busy until a step says how far it is
        self.busy.setTextVisible(False)
        self.busy.show()
        self.cancel.show()
        self._say(f"Loading {label}…")

    def loading_progress(self, text: str) -> None:
        """A step of the load: a known one fills the bar (step k of N), another one
        leaves it busy; the line under it says what is loading, and which step."""
        label = self._loading
        step = LOAD_STEPS.get(text)
        if step is None:
            self.busy.setRange(0, 0)
            self.busy.setTextVisible(False)
            self._say(f"Loading {label}: {text}…")
            return
        self.busy.setRange(0, LOAD_STEP_COUNT)
        self.busy.setValue(step)
        self.busy.setFormat(f"step {step} of {LOAD_STEP_COUNT}")
        self.busy.setTextVisible(True)
        self._say(f"Loading {label}: {text} (step {step} of {LOAD_STEP_COUNT})…")

    def loading_count(self, step: str, done: int, total: int) -> None:
        """How far a counted step is (tensors read of how many): the bar fills with it."""
        self.busy.setRange(0, total)
        self.busy.setValue(done)
        self.busy.setFormat(f"{done} of {total}")
        self.busy.setTextVisible(True)
        self._say(f"Loading {self._loading}: {step}, {done} of {total} tensors…")

    def clear_error(self) -> None:
        """A change went through: an error about an earlier, refused one no longer applies."""
        if self.model_status.styleSheet() == ERROR_STYLE:
            self._say("")

    def loading_finished(self) -> None:
        self.busy.hide()
        self.cancel.hide()

    def model_loaded(self, spec: ModelSpec) -> None:
        self.loading_finished()
        self._say("" if spec.is_builtin else f"Using {spec.name}.")

    def model_failed(self, message: str) -> None:
        """A change was refused: say why, and show what still runs."""
        self.loading_finished()
        self.show_spec(self._running())
        self._say(message, error=True)

    def describe(self, shown) -> None:
        """Show the running model's facts (core.facts.ModelFacts, carried by a
        views.Shown): a real model's in a table in place of the built-in fields, the
        built-in's scheme and size in a line under its fields. Given a Trace, or a Shown
        without facts, a real model's architecture is read from the trace."""
        facts = getattr(getattr(shown, "model", None), "facts", None)
        if self._running().is_builtin:
            if facts is not None:
                self.builtin_facts.setText(
                    f"{facts.scheme_text()} · {dict(facts.rows())['Parameters']} "
                    f"parameters · {facts.weights} · {facts.dtype} on {facts.device}")
                self.builtin_facts.show()
            return
        if facts is not None:
            self._show_rows(facts.rows())
            return
        trace = getattr(shown, "evaluation", None)
        self._describe_trace(shown if trace is None else trace.reference)

    def _show_rows(self, rows) -> None:
        self.model_facts.setText(
            "<table cellspacing='2'>" + "".join(
                f"<tr><td style='color:#555'>{label}</td><td>{value}</td></tr>"
                for label, value in rows if value not in (None, "")) + "</table>")

    def _describe_trace(self, trace) -> None:
        extras = trace.extras
        kind = extras.get("position_encoding")
        rows = [("Family", extras.get("family")),
                ("Layers × heads", f"{trace.n_layers} × {trace.n_heads}"),
                ("Width d", trace.d_model),
                ("Positions", TITLES.get(kind, kind) if kind else None),
                ("Mask", extras.get("mask"))]
        self._show_rows(rows)
