"""The model panel's Source box: which model runs (the built-in one, a folder, a .gguf
file, a model in the hub cache or named on the hub), whether the hub may be downloaded
from, a real model's precision and facts, and how its load goes (progress, a large
download asked for first, Cancel), as the window tells it."""
from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (QCheckBox, QGroupBox, QInputDialog, QLabel, QLineEdit,
                               QVBoxLayout)

from ...document.spec import ModelSpec
from ...models.hf.cache import hub_cache_dir, network_allowed, parse_hub_name
from ..status import WHOLE_TEXT
from ..settings import DOWNLOADS_KEY, downloads_allowed, make_settings
from .fields import ShortCombo
from .load_progress import LoadProgress
from .model_source import (CHOOSER_TIP, DOWNLOADS_TIP, HUB_NAME_PROMPT, OPEN_ITEMS,
                           ask_model_path)
from .precision_choice import PrecisionChoice


SOURCE, BUILTIN_ITEM = "Source", "Built-in transformer"     # the box and its first choice


class SourceBox:
    """The part of model_panel.panel.ModelPanel that chooses the model and follows its
    load (``_asked``: a model whose download is asked for; ``_loading``: the model
    loading, ``_facts_before``: the running one's facts meanwhile)."""

    def _model_box(self) -> QGroupBox:
        box = QGroupBox(SOURCE)
        layout = QVBoxLayout(box)
        self.chooser = ShortCombo()
        self.chooser.setToolTip(CHOOSER_TIP)
        self.chooser.addItem(BUILTIN_ITEM, ("builtin", ""))
        try:
            from ...models import hf
            sources = hf.available_models()
        except Exception:       # no real-model support here: the built-in model only
            sources = []
        for source in sources:
            self.chooser.addItem(source.label, ("real", source.spec))
            if source.kind == "cache":
                self.chooser.setItemData(self.chooser.count() - 1,
                                         f"{source.spec} in the Hugging Face cache",
                                         Qt.ToolTipRole)
        for k, (text, tip) in {**OPEN_ITEMS, "hub": ("Hub name…", HUB_NAME_PROMPT)}.items():
            self.chooser.addItem(text, (k, ""))
            self.chooser.setItemData(self.chooser.count() - 1, tip, Qt.ToolTipRole)
        self.chooser.activated.connect(self._model_chosen)
        layout.addWidget(self.chooser)
        self.downloads = QCheckBox("Download from the hub")
        self.downloads.setToolTip(DOWNLOADS_TIP.format(cache=hub_cache_dir()))
        self.downloads.setChecked(downloads_allowed())
        self.downloads.toggled.connect(lambda on: self.downloads.isEnabled() and
                                       make_settings().setValue(DOWNLOADS_KEY, bool(on)))
        layout.addWidget(self.downloads)
        self.set_offline(False)
        self.precision = PrecisionChoice()        # a real model's dtype and placement
        self.precision.chosen.connect(lambda: self._request(self._running()))
        layout.addWidget(self.precision)
        self.load = LoadProgress()
        self.load.download.clicked.connect(self._download_accepted)
        self.load.cancel.clicked.connect(self._cancel)
        layout.addWidget(self.load)
        self.model_facts = QLabel(wordWrap=True)          # a real model's architecture
        self.model_facts.setTextFormat(Qt.RichText)
        self.model_facts.setToolTip("Real models keep their own architecture; the position "
                                    "ids below still apply.")
        self.model_facts.hide()
        layout.addWidget(self.model_facts)
        return box

    def set_offline(self, forced: bool) -> None:
        """Downloads turned off for this run (posviz --offline), or by HF_HUB_OFFLINE:
        the box is shown unticked and greyed out, saying why (the setting is kept)."""
        why = ("posviz --offline" if forced else
               "HF_HUB_OFFLINE=1" if not network_allowed() else "")
        self.downloads.setEnabled(not why)
        if why:
            self.downloads.setToolTip(f"Downloads are off in this run ({why}).")
            self.downloads.setChecked(False)    # greyed out: not written to the settings

    def _model_chosen(self, index: int) -> None:
        self.load.clear_error()                 # it was about the source chosen before
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
        if kind in OPEN_ITEMS:
            source = ask_model_path(self, kind)
            if not source:
                self.show_spec(self._running())
                return
            label = source
        elif kind == "hub":
            source, accepted = self.ask_hub_name()
            source = source.strip()
            if not accepted or not source:
                self.show_spec(self._running())
                return
            if parse_hub_name(source) is None:
                self.model_failed(f"{source!r} is not a hub name ([ORG/]NAME or "
                                  f"[ORG/]NAME@REVISION)")
                return
            label = ""
        else:
            label = self.chooser.itemText(index)
        self._request(ModelSpec.pretrained(source, label))

    def ask_hub_name(self) -> tuple[str, bool]:
        """The hub name typed (or pasted whole: parse_hub_name says what is wrong with
        it) and whether it was accepted."""
        dialog = QInputDialog(self, windowTitle="Open a model by its hub name",
                              labelText=HUB_NAME_PROMPT)
        dialog.setInputMode(QInputDialog.InputMode.TextInput)
        dialog.findChild(QLineEdit).setMaxLength(WHOLE_TEXT)
        accepted = bool(dialog.exec())
        return dialog.textValue(), accepted

    def _cancel(self) -> None:
        asked, self._asked = self._asked, None
        self.cancelRequested.emit()
        self._load_over()
        self.load.say("Download not started; the current model stays in use." if asked else
                  "Loading cancelled; the current model stays in use.")

    def _download_accepted(self) -> None:
        spec, self._asked = self._asked, None
        self.load.download.hide()
        if spec is not None:
            self.downloadAccepted.emit(spec)

    # -- told by the window as a load progresses --------------------------------------
    def ask_download(self, spec: ModelSpec, size: str) -> None:
        """A hub model's download is large: say what it takes (``size``: files, bytes,
        where to), and wait for Download or Cancel."""
        self._asked = spec
        self.show_spec(self._running())
        self.load.ask(size)

    def loading_started(self, label: str) -> None:
        """``label`` loads: the running model's facts and weight size, which would read
        as its, give way to its name until it has run."""
        if not self._loading:
            self._facts_before = self.model_facts.text()
        self._asked, self._loading = None, label
        self.load.started(label)
        self.model_facts.setText(f"<i>Loading {label}: its architecture shows here once "
                                 f"it has run.</i>")
        self.precision.estimate.clear()

    def model_loaded(self, spec: ModelSpec) -> None:
        self._loading = ""
        self.load.finished()
        self.load.say("" if spec.is_builtin else f"Using {spec.name}.")

    def model_failed(self, message: str) -> None:
        """A change was refused: say why, and show what still runs."""
        self._load_over()
        self.load.say(message, error=True)

    def _load_over(self) -> None:
        """No model comes of the load: the running one's facts, settings and size again."""
        if self._loading:
            self._loading = ""
            self.model_facts.setText(self._facts_before)
        self.load.finished()
        self.show_spec(self._running())
