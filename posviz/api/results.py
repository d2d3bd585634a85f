"""What the experiments return to Python: the analysis' result, what made it, and its
figure. ``to_dict()`` is the command's ``--json`` (the analysis' record with the
provenance, document.provenance, as JSON types); ``figure()`` draws what the window's
Experiments tab draws of it (gui.experiments.headless), off screen; any other attribute
is the analysis result's (``rows()``, ``runs``, ``layers``, ``verdict``…)."""
from __future__ import annotations

from ..errors import PosvizInputError, argument
from .arguments import checks_calls
from .report import abbreviated, jsonable


@checks_calls
class Result:
    """An experiment's result: ``result`` (the analysis' own), its ``provenance``."""

    what = ""                       # the experiment, as runtime.experiments names it
    described: dict = {}            # the model's description (a backend's describe())

    def __init__(self, result, provenance: dict):
        self.result = result
        self.provenance = provenance

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        checks_calls(cls)                       # each result's methods, as its own

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "result":
            raise AttributeError(name)
        return getattr(self.result, name)

    def __dir__(self):
        return sorted(set(super().__dir__()) | {name for name in dir(self.result)
                                                if not name.startswith("_")})

    def to_dict(self) -> dict:
        """What the command's ``--json`` prints."""
        return jsonable({**self.result.to_dict(), "provenance": self.provenance})

    def job(self):
        """The runtime.experiments.ExperimentJob the window would have run for it."""
        raise NotImplementedError

    def metrics(self) -> tuple[str, ...]:
        """What ``figure(metric=)`` takes (none: one figure)."""
        return ()

    def figure(self, metric: str | None = None):
        """The Experiments tab's figure of this result, drawn off screen: it shows itself
        in a notebook; ``.save(path)`` writes .png (``width=`` or ``dpi=``), .svg, .pdf
        or .csv, each with the provenance. Imports Qt."""
        choices = self.metrics()
        if metric is not None and not choices:
            raise PosvizInputError(f"this figure has no metric to choose "
                                   f"({argument('metric', metric)}): call figure() without it")
        if metric is not None and metric not in choices:
            raise PosvizInputError(f"{argument('metric', metric)} is not one of "
                                   f"{', '.join(choices)}")
        import time
        from ..errors import held_interrupt
        from .drawing import figure_telling, qt_imported
        began = time.monotonic()
        metric = metric or (choices[0] if choices else None)
        name = " ".join(filter(None, (self.what, metric)))
        # silent for a model loaded with progress=False
        progress = getattr(getattr(self, "model", None), "progress", None)
        # Qt's first import: Ctrl+C inside it is fatal; told as the drawing's first part
        with held_interrupt(), qt_imported(progress, name):
            from ..gui.experiments.headless import ExperimentResultFigure
        figure = ExperimentResultFigure(self.job(), self.result, metric, self.file_facts())
        # drawn for display or saved: told once its wait (from here when drawn at once)
        # passes the hold, as every call
        figure.telling = figure_telling(progress, name, 0, made=(began, time.monotonic()))
        return figure

    def file_facts(self) -> dict[str, str]:
        """What a figure's file records: the provenance (its model in one line with its
        settings, as every figure's file has it), then the experiment's inputs."""
        from ..document.provenance import describe_model, file_lines
        facts = file_lines({**self.provenance, "experiment": self.what})
        if self.described:
            facts["model"] = describe_model(self.described)
        return facts

    def __repr__(self) -> str:
        return f"<posviz.{type(self).__name__} {self.provenance.get('model')}>"


class Sweep(Result):
    what = "sweep"

    def __init__(self, result, model, positions, options: dict):
        from ..document.provenance import positions_options
        self.model, self.positions, self.described = model, positions, model.describe()
        options = dict(options)
        seed = options.pop("seed", None)            # None: a fixed set of orders, no seed
        super().__init__(result, model.provenance(
            seeds=None if seed is None else {"orders": seed},
            options={**positions_options(positions), **options}))

    def metrics(self) -> tuple[str, ...]:
        return tuple(self.result.bands) + (("swap map",) if self.result.pairs else ())

    def figure(self, metric: str | None = None, text: int | None = None):
        """As Result.figure; ``text``: which text's swap map (an index into ``texts``,
        default 0), for ``metric="swap map"`` only."""
        if text is None:
            return super().figure(metric)
        count = len(self.result.pairs)
        if metric != "swap map":
            raise PosvizInputError(f"{argument('text', text)} chooses a swap map's text: "
                                   f"ask for metric=\"swap map\" of a swap sweep")
        if isinstance(text, bool) or not isinstance(text, int) or not 0 <= text < count:
            raise PosvizInputError(f"{argument('text', text)} must be an index from 0 to "
                                   f"{count - 1} (the swept texts)")
        figure = super().figure(metric)
        figure.text = text
        return figure

    def job(self):
        from ..runtime.experiments import ExperimentJob
        r = self.result
        return ExperimentJob("sweep", self.model.spec, tuple(r.texts), self.positions,
                             kind=r.kind, count=r.count, seed=r.seed)

    def file_facts(self) -> dict[str, str]:
        r = self.result
        return {**super().file_facts(), "texts": _texts(r.texts)}

    def __repr__(self) -> str:
        r = self.result
        pairs = sum(p.swaps for p in r.pairs)
        runs = (f"{r.runs:,} neighbouring swap{'' if r.runs == 1 else 's'} of the {pairs:,} "
                f"pair{'' if pairs == 1 else 's'} run," if r.pairs else
                f"{r.runs:,} run{'' if r.runs == 1 else 's'}")
        texts = len(r.texts)
        return (f"<posviz.Sweep {r.kind} of {self.model.name}: {runs} over {texts} "
                f"text{'' if texts == 1 else 's'}>")


class Probe(Result):
    what = "probe"

    def __init__(self, result, model, positions, options: dict, texts):
        from ..document.provenance import positions_options
        # the texts given (none: generated); ``texts`` is how many ran, as the JSON says
        self.model, self.positions, self.given_texts = model, positions, tuple(texts)
        self.described = model.describe()
        placed = positions_options(positions)
        del placed["literal"]           # a probe runs no reorder: nothing ran as given
        from ..analysis.experiments.texts import GENERATED_SEED
        drawn = {"texts": GENERATED_SEED} if result.generated else None
        super().__init__(result, model.provenance(seeds=drawn,
                                                  options={**placed, **options}))

    def job(self):
        from ..runtime.experiments import ExperimentJob
        return ExperimentJob("probe", self.model.spec, self.given_texts, self.positions,
                             features=self.result.features)

    def file_facts(self) -> dict[str, str]:
        return {**super().file_facts(), "texts": _texts(self.given_texts)
                if self.given_texts else
                f"generated: {self.result.generated}"}

    def __repr__(self) -> str:
        r = self.result
        return (f"<posviz.Probe {r.features} of {self.model.name}: {r.tokens:,} tokens of "
                f"{r.texts:,} texts>")


class Paper(Result):
    what = "paper"

    def __init__(self, check, weights: str | None):
        from ..document.provenance import provenance
        from ..analysis.experiments.texts import PAPER_TEXT_SEEDS
        ran = list(check.models) or [{"model": check.ran_on or "built-in"}]
        drawn = ({"texts": PAPER_TEXT_SEEDS[check.name]} if check.name in PAPER_TEXT_SEEDS
                 and check.weights == "random" else None)
        # its weights and seeds are its runs' (the check's own "weights" says which kind)
        super().__init__(check, provenance(ran, seeds=drawn, options={"paper": check.name}))
        self.weights = weights

    def job(self):
        from ..runtime.experiments import ExperimentJob
        return ExperimentJob("paper", paper=self.result.name, weights=self.result.weights)

    def __repr__(self) -> str:
        return f"<posviz.Paper {self.result.name}: {self.result.verdict}>"


class Comparison(Result):
    """Several encodings answering one reorder (posviz.compare_encodings)."""

    what = "compare"

    def __init__(self, result):
        from ..document.provenance import positions_options, provenance
        r = result
        kinds = [m.kind for m in r.models]        # provenance.used_only reads them all
        self.described = {"model": "built-in", **r.config, "pe": kinds}
        super().__init__(result, provenance({**self.described, "weights": r.weights},
                                            options=positions_options(r.positions)))

    def metrics(self) -> tuple[str, ...]:
        from ..analysis.symmetry import METRICS
        return tuple(METRICS)

    def job(self):
        from ..document.spec import ModelSpec
        from ..models.config import ModelConfig
        from ..runtime.experiments import ExperimentJob
        r = self.result
        config = ModelConfig(**{**r.config, "pe": r.models[0].kind})
        return ExperimentJob("compare", ModelSpec.builtin(config), (r.text,), r.positions,
                             weights=r.weights, encodings=tuple(m.kind for m in r.models),
                             order=tuple(r.order))

    def file_facts(self) -> dict[str, str]:
        import json
        r = self.result
        return {**super().file_facts(), "text": r.text,
                "tokens": json.dumps(list(r.tokens), ensure_ascii=False),
                "order": ",".join(map(str, r.order))}

    def __repr__(self) -> str:
        r = self.result
        return (f"<posviz.Comparison of {', '.join(m.kind for m in r.models)}: "
                f"{len(r.tokens):,} token{'' if len(r.tokens) == 1 else 's'}, order "
                f"{abbreviated(r.order)}>")


class Trained(Result):
    """A checkpoint written by posviz.train."""

    what = "train"

    def __init__(self, checkpoint, config, recipe, notes: list[str]):
        from dataclasses import asdict

        from ..document.provenance import provenance
        self.checkpoint, self.notes = checkpoint, list(notes)
        model = {"model": "built-in", **config.to_dict(), "weights": str(checkpoint.folder)}
        # its seed drew the first weights and the order of the windows
        super().__init__(checkpoint, provenance(model, seeds={"training": config.seed},
                                                options={"recipe": asdict(recipe)}))

    def to_dict(self) -> dict:
        return jsonable({"folder": str(self.checkpoint.folder),
                         "record": self.checkpoint.record, "notes": self.notes,
                         "provenance": self.provenance})

    def figure(self, metric: str | None = None):
        raise PosvizInputError("posviz train draws no figure: its loss curve is under "
                               "record['loss_curve'] in to_dict()")

    def __repr__(self) -> str:
        return f"<posviz.Trained {self.checkpoint.folder}>"


class Extended(Result):
    """The context-extension lab's measurements (posviz.extend)."""

    what = "extend"

    def __init__(self, result, weights: str):
        from ..document.provenance import provenance
        self.weights = weights
        super().__init__(result, {**provenance({"model": result.ran_on}, options={
            "lengths": list(result.lengths)}), "weights": str(weights)})

    def metrics(self) -> tuple[str, ...]:
        from ..analysis.experiments.extension import FIGURES
        return FIGURES

    def job(self):
        from ..runtime.experiments import ExperimentJob
        r = self.result
        return ExperimentJob("extend", weights=str(self.weights),
                             factors=tuple(n // r.train_length for n in r.lengths))

    def __repr__(self) -> str:
        r = self.result
        return (f"<posviz.Extended {len(r.methods)} methods at "
                f"{', '.join(map(str, r.lengths))} tokens>")


class OrderUsed(Result):
    """A causal model's use of token order (posviz.order_use)."""

    what = "order-use"

    def __init__(self, result, model):
        self.model, self.described = model, model.describe()
        super().__init__(result, model.provenance(seeds={"shuffles": result.seed}))

    def to_dict(self) -> dict:
        return jsonable({"model": self.model.name, **self.result.to_dict(),
                         "provenance": self.provenance})

    def figure(self, metric: str | None = None):
        raise PosvizInputError("posviz.order_use draws no figure: its numbers are in "
                               "to_dict()")

    def __repr__(self) -> str:
        r = self.result
        return f"<posviz.OrderUsed {self.model.name}: {r.ratio:.2f}>"


def _texts(texts) -> str:
    import json
    return texts[0] if len(texts) == 1 else json.dumps(list(texts), ensure_ascii=False)
