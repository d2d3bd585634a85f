"""The model panel: which model runs, every option of the built-in one, and positions.

Its fields (ranges, defaults, labels, tooltips) come from ``models.options.OPTIONS``. It
always shows the model that runs (the session's spec): an invalid setting is told next
to the field (red text under it, the field outlined) and changes nothing; a valid change
is asked for at once (``modelRequested(ModelSpec)``), and if the change is refused or
cancelled, the panel shows the running model again. Pretrained models load in the
background with a progress bar (step k of N when the load tells its steps, the bytes
of a download, else busy) and a Cancel button. A model is opened from a folder or a
.gguf file; a hub model is chosen from the local cache or by its name (Hub name…); a
large download is asked for first, and a setting here turns downloads off.
"""
from __future__ import annotations

from typing import Callable

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QCheckBox, QFormLayout, QGroupBox, QLabel, QVBoxLayout, QWidget

from ...document.spec import ModelSpec
from ...errors import PosvizInputError
from ...models.training.checkpoint import ARCHITECTURE, RANDOM, TRAINED
from ...models.config import ModelConfig, Positions
from ...models.encodings import ENCODINGS
from ...models.options import MODEL_OPTIONS, OPTIONS, POSITION_OPTIONS, Option
from .facts_table import facts_table, facts_tip, trace_rows
from .fields import (ERROR_STYLE, STATUS_STYLE, edited, marked, option_widget,
                     set_value, value_of)
from .load_progress import WrappedLabel
from .model_source import OPEN_ITEMS
from .source_box import SourceBox
from .weights_choice import WeightsChoice

HIDDEN = tuple(n for n in MODEL_OPTIONS if not OPTIONS[n].chosen)   # kept from the running config
CONFIG_FIELDS = tuple(name for name in MODEL_OPTIONS if name not in HIDDEN)
KEPT = {True: "the plots show the model as it was",
        False: "the plots show the positions as they were"}
FIXED_BY_A_FOLDER = tuple("d_ff" if n == "ff_width" else n for n in ARCHITECTURE)


class ModelPanel(SourceBox, QWidget):
    """Shows the running ModelSpec and Positions; asks for valid new ones."""

    modelRequested = Signal(object)       # a ModelSpec to load (its config is valid)
    positionsChanged = Signal(object)     # a valid Positions
    cancelRequested = Signal()
    downloadAccepted = Signal(object)     # a ModelSpec whose large download the user wants

    def __init__(self, running: Callable[[], ModelSpec], positions: Positions = Positions(),
                 parent: QWidget | None = None):
        super().__init__(parent)
        self._running = running           # the session's spec, read when needed
        self._described = None            # the reference trace described (once per run)
        self._asked: ModelSpec | None = None    # a model whose download is asked for
        self._loading = ""                # the model loading, and the running one's facts
        self._facts_before = ""
        self._fields: dict[str, QWidget] = {}
        self._errors: dict[str, QLabel] = {}
        self._hidden_values = {name: OPTIONS[name].default for name in HIDDEN}
        self.builtin = ModelSpec.builtin()  # the last built-in model shown: its fields'
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
            edited(widget).connect(self._positions_edited if name in POSITION_OPTIONS
                                   else self._config_edited)

    # -- construction helpers ---------------------------------------------------------
    def _add_weights(self, form: QFormLayout) -> None:
        self.weights = WeightsChoice()
        self.weights.chosen.connect(self._weights_chosen)
        self.weights.cancelled.connect(lambda: self.show_spec(self._running()))
        form.addRow(self.weights.caption, self.weights)

    def _set_weights(self, weights: str) -> None:
        self.weights.set(weights)
        self._enable_fields()

    def _enable_fields(self) -> None:
        """The seed draws random weights; a checkpoint folder fixes the architecture; the
        position scale weighs nothing where the encoding adds no position (NoPE)."""
        weights = self.weights.value()
        fixed = () if weights in (RANDOM, TRAINED) else FIXED_BY_A_FOLDER
        encoding = ENCODINGS[value_of(self._fields["pe"])]
        for name, widget in self._fields.items():
            if name not in POSITION_OPTIONS:
                widget.setEnabled(name not in fixed and (name != "seed" or weights == RANDOM)
                                  and (name != "pe_scale" or encoding.acts is not None))
        tip = OPTIONS["pe_scale"].tip
        self._fields["pe_scale"].setToolTip(tip if encoding.acts is not None else
                                            f"No effect with {encoding.short}: it adds no "
                                            f"position for the scale to weigh.\n\n{tip}")

    def _weights_chosen(self, weights: str) -> None:
        self._set_weights(weights)
        self._config_edited()

    @staticmethod
    def _form(box: QGroupBox) -> QFormLayout:
        form = QFormLayout(box)
        form.setFieldGrowthPolicy(QFormLayout.AllNonFixedFieldsGrow)
        form.setRowWrapPolicy(QFormLayout.WrapLongRows)   # narrow: the label goes above
        form.setVerticalSpacing(3)
        return form

    def _add(self, form: QFormLayout, option: Option) -> None:
        widget = option_widget(option)
        widget.setToolTip(option.tip)
        widget.setObjectName(option.name)
        error = WrappedLabel()        # whole at every dock width (a plain label lost
        error.setStyleSheet(ERROR_STYLE)  # its first line's top and last line's bottom)
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

    def config(self) -> ModelConfig:
        """The config the fields show (possibly invalid: see ``problems()``)."""
        return ModelConfig(**{n: value_of(self._fields[n]) for n in CONFIG_FIELDS},
                           **self._hidden_values)

    def positions(self) -> Positions:
        return Positions(*(value_of(self._fields[n]) for n in POSITION_OPTIONS))

    def set_config(self, config: ModelConfig) -> None:
        values = config.to_dict()
        for name in CONFIG_FIELDS:
            set_value(self._fields[name], values[name])
        self._hidden_values = {name: values[name] for name in HIDDEN}
        self._enable_fields()
        self._show_problems({}, config_fields=True)

    def set_positions(self, positions: Positions) -> None:
        for name in POSITION_OPTIONS:
            set_value(self._fields[name], getattr(positions, name))
        self._show_problems({}, config_fields=False)

    def show_spec(self, spec: ModelSpec) -> None:
        """Show this model as the one that runs: a built-in one's config in the fields,
        a pretrained one by name (its architecture follows in ``describe``)."""
        if spec.is_builtin:
            self.builtin = spec
            self.set_config(spec.config)
            self._set_weights(spec.weights)
            index = 0
        else:
            # (QComboBox.findData does not find a tuple: compare the items' data here)
            index = next((i for i in range(self.chooser.count())
                          if self.chooser.itemData(i) == ("real", spec.address)), -1)
            if index < 0:     # an opened folder or hub name: listed from now on, above
                index = self.chooser.count() - 1 - len(OPEN_ITEMS)      # "Open folder…"
                self.chooser.insertItem(index, spec.name, ("real", spec.address))
        self.chooser.setCurrentIndex(index)
        self.precision.show_spec(spec)
        self._described = None            # its facts are described afresh
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
        kept = KEPT[config_fields]              # nothing runs until the fields are valid
        for name, widget in self._fields.items():
            if (name in POSITION_OPTIONS) == config_fields:
                continue
            message = problems.get(name, "")
            self._errors[name].setText(f"{message} — {kept}" if message else "")
            self._errors[name].setVisible(bool(message))
            marked(widget, bool(message))

    def show_positions_error(self, message: str) -> None:
        """A valid Positions the model cannot take (e.g. too many positions)."""
        self._show_problems({"offset": message}, config_fields=False)

    def _request(self, spec: ModelSpec) -> None:
        spec = spec if spec.is_builtin else self.precision.applied(spec)
        if spec != self._running():
            self.modelRequested.emit(spec)

    def _builtin_spec(self, config: ModelConfig) -> ModelSpec | None:
        """The built-in model with the weights chosen, or None with the refusal told
        under the weights (no checkpoint for this configuration)."""
        weights = self.weights.value()
        if weights == RANDOM and self._running().trained:   # the checkpoint's table size
            config = config.replace(**{name: OPTIONS[name].default for name in HIDDEN})
        try:
            spec = ModelSpec.builtin(config, weights)
        except PosvizInputError as error:
            self.weights.refuse(str(error))
            return None
        self.weights.accept()
        return spec

    def _config_edited(self, *_) -> None:
        self._enable_fields()
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

    def describe(self, shown) -> None:
        """Show the running model's facts (models.facts.ModelFacts, carried by a
        views.shown.Shown): a real model's in a table in place of the built-in fields, the
        built-in's scheme and size in a line under its fields (once per reference run).
        Given a Trace, or a Shown without facts, a real model's architecture is read
        from the trace."""
        evaluation = getattr(shown, "evaluation", None)
        reference = shown if evaluation is None else evaluation.reference
        if reference is self._described or self._loading:    # not the loading one's
            return
        self._described = reference
        facts = getattr(getattr(shown, "model", None), "facts", None)
        if self._running().is_builtin:
            if facts is not None:
                self.builtin_facts.setText(
                    f"{facts.scheme_text()} · {dict(facts.rows())['Parameters']} "
                    f"parameters · {facts.weights} · {facts.dtype} on {facts.device}")
                self.builtin_facts.show()
            return
        rows = facts.rows() if facts is not None else trace_rows(reference)
        self.model_facts.setText(facts_table(rows))
        self.model_facts.setToolTip(facts_tip(rows))          # a shortened value, whole
