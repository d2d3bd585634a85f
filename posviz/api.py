"""posviz from Python: the functions ``posviz report`` and ``posviz sweep`` run.

    import posviz
    m = posviz.load("minilm")              # a bundled name, a folder, a .gguf, a hub name
    m = posviz.load(pe="rope", mask="causal", layers=4, seed=0)   # the built-in model
    r = m.compare("the cat sat on the mat", order=[5, 4, 3, 2, 1, 0])
    r.layers                               # the per-layer rows of `posviz report --json`
    r.attention(layer=1, head=0).difference        # (n, n) numpy array
    r.figure("symmetry").save("symmetry.pdf")      # a figure of the window, off screen
    s = m.sweep(posviz.read_texts("sentences.txt"), kind="random", count=64)

The command line parses its options into these calls and prints what they return, so a
report's ``to_dict()`` is what ``report --json`` prints. Bad input raises
posviz.errors.PosvizInputError with the one line the command line prints. Importing
this module imports neither torch nor Qt: ``load`` imports torch, ``figure`` Qt.
"""
from __future__ import annotations

import sys
from dataclasses import fields
from functools import cached_property
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from .errors import PosvizInputError
from .models.config import ModelConfig, Positions
from .models.options import MODEL_OPTIONS, OPTIONS

if TYPE_CHECKING:          # these import numpy or torch: only when used
    import numpy as np

    from .analysis.engine import Engine, Evaluation
    from .analysis.experiments.sweep import SweepResult
    from .document.session import Session
    from .document.spec import ModelSpec
    from .gui.plots.headless import ReportFigure
    from .views.shown import HeadMaps

__all__ = ["Model", "Report", "StepPrinter", "load", "load_session", "read_texts",
           "builtin_config"]

Progress = Callable[..., None]           # progress(step, done=None, total=None)
BUILTIN_OPTIONS = tuple(name for name in MODEL_OPTIONS if OPTIONS[name].chosen)


def builtin_config(options: dict) -> ModelConfig:
    """The built-in model's config from option names as the command line knows them
    (``layers``, ``heads``, ``d_model``, ``pe``, ``mask``, ``seed``…); the defaults
    fill the rest. PosvizInputError for an unknown name or a value out of range."""
    known = [f.name for f in fields(ModelConfig)]
    unknown = [name for name in options if name not in known]
    if unknown:
        raise PosvizInputError(f"unknown option {unknown[0]!r} of the built-in model "
                               f"(options: {', '.join(BUILTIN_OPTIONS)})")
    return ModelConfig(**options).validate()


def load(source: str | None = None, *, config: ModelConfig | None = None,
         weights: str = "random", device: str = "cpu", offline: bool = False,
         progress: Progress | bool | None = None, n_tokens: int = 0,
         offload_folder: str | None = None, max_memory: dict | None = None,
         **options) -> "Model":
    """A model to compare orders with.

    ``source`` is a bundled model ("minilm", "smollm2"), a model folder, a .gguf file or
    a hub name "ORG/NAME[@REVISION]". A hub name is taken from the local Hugging Face
    cache, and downloaded into it first when it is not there, unless ``offline`` (or
    HF_HUB_OFFLINE=1). Without ``source``, the built-in transformer, configured by
    ``config`` or by the command line's options as keywords (``layers``, ``heads``,
    ``d_model``, ``d_ff``, ``pe``, ``pe_scale``, ``mask``, ``residual``, ``norm``,
    ``seed``, ``dtype``), e.g. ``load(pe="rope", mask="causal", layers=4, seed=0)``;
    its ``weights`` are "random" (drawn from the seed), "trained" (the shipped checkpoint
    of that encoding and mask) or a checkpoint folder written by ``posviz train``.

    ``device`` ("cpu", "cuda", "mps", "auto") is where a pretrained model runs, and
    ``dtype`` ("float32", "bfloat16", "float16") what its weights are kept in (it
    computes in float32 all the same: models.hf.precision); with
    ``offload_folder`` accelerate places its layers (``device_map="auto"``, within
    ``max_memory``, {device: bytes}) on the accelerator, the CPU and that folder.
    ``progress(step, done=None, total=None)`` is told each step of a load, with the
    bytes or tensors done when counted; by default only a download is told, on stderr
    (``progress=False``: nothing). ``n_tokens``: the longest text you mean to run, for
    the memory check before loading. Raises PosvizInputError.
    """
    from .document.spec import ModelSpec
    say = _progress(progress)
    if source is None:
        if device in ("cuda", "mps"):
            raise PosvizInputError(f"--device {device} applies to a --model only: the "
                                   f"built-in model runs on the CPU")
        spec = ModelSpec.builtin(config or builtin_config(options), weights)
        say("building the model")
        return Model(spec.load(n_tokens=n_tokens), spec)
    dtype = options.pop("dtype", "float32")
    if options or config is not None or weights != "random":
        given = ([f"--{name.replace('_', '-')}" for name in options]
                 + (["--weights"] if weights != "random" else []) or ["config"])
        raise PosvizInputError(f"{', '.join(given)} only "
                               f"{'applies' if len(given) == 1 else 'apply'} to the built-in "
                               f"model, not to --model {source} (a pretrained model has its "
                               f"own settings)")
    from .document.session import spec_of
    from .models.hf.cache import network_allowed
    backend = ModelSpec.pretrained(source).load(say, device=device, n_tokens=n_tokens,
                                                online=not offline and network_allowed(),
                                                dtype=dtype, offload_folder=offload_folder,
                                                max_memory=max_memory)
    return Model(backend, spec_of(backend))     # a hub model pinned to its commit


def load_session(path, *, device: str = "cpu", offline: bool = False,
                 progress: Progress | bool | None = None) -> "Report":
    """The report of a saved .posviz session: its model (a pinned hub model downloaded
    at its commit when allowed and not cached), text, order and positions, compared as
    the window shows them. The report's ``document`` is the file read."""
    from .document.scenarios import session_of
    from .document.session_file import read
    from .models.hf.cache import network_allowed
    doc = read(path)
    say = _progress(progress)
    session = session_of(doc, say, online=not offline and network_allowed(), device=device)
    spec = doc.spec.pinned(getattr(session.backend, "revision", ""))
    return Model(session.backend, spec).report(session, say, document=doc)


def read_texts(path) -> list[str]:
    """The texts of a file, one a line (blank lines and lines starting with '#' left
    out), as ``posviz sweep --texts FILE`` reads them; PosvizInputError if none."""
    from .analysis.experiments.texts import read_texts as read
    try:
        return read(path)
    except OSError as error:          # in the command line's words
        raise PosvizInputError(f"{error.strerror or error}: {error.filename or path}") \
            from None


class Model:
    """A loaded model: the built-in transformer or a pretrained one, with the engine
    that runs it (the original order's run is kept between comparisons of one text)."""

    def __init__(self, backend, spec: "ModelSpec"):
        self.backend = backend
        self.spec = spec
        self._engine = None

    @property
    def name(self) -> str:
        return self.backend.name

    @property
    def engine(self) -> "Engine":
        if self._engine is None:
            from .analysis.engine import Engine
            self._engine = Engine(self.backend)
        return self._engine

    def describe(self) -> dict:
        """The model's settings, as under "config" in ``report --json``."""
        return self.backend.describe()

    def tokens(self, text: str) -> list[str]:
        """The model's tokens of ``text`` (n of them), as ``order`` indexes them."""
        return list(self.backend.tokenize(text).tokens)

    def __repr__(self) -> str:
        return f"<posviz.Model {self.name}>"

    def compare(self, text: str | None = None, order: Sequence[int] | str | None = None, *,
                positions: str = "slot", offset: int = 0, literal: bool = False,
                progress: Progress | bool | None = False) -> "Report":
        """Run ``text`` in its original order and in ``order`` and compare them, layer
        by layer, as ``posviz report`` does.

        ``order`` (n,) lists the original index of the token each slot holds:
        ``order[j] = i`` puts token i in slot j (a list, an array or "5,4,3,…"); None
        reverses the movable tokens (special tokens such as [CLS] keep their places).
        ``positions`` "slot" gives slot j position ``offset + j`` whatever token is
        there; "token" lets each token keep its original position. ``literal`` runs
        the reordered input as given (Positions.literal). ``text`` None is the example
        sentence the window opens with.
        """
        from .document.session import DEFAULT_TEXT, Session
        from .models.orders import parse_order
        if text is not None and not text.strip():
            raise PosvizInputError("the text is empty")
        where = Positions(positions, offset, literal).validate()
        session = Session(self.backend, DEFAULT_TEXT if text is None else text, where,
                          spec=self.spec)
        if order is None:
            session.reverse()
        else:                 # read as the command line reads --order, in its words
            written = order if isinstance(order, str) else ",".join(map(str, order))
            session.set_order(parse_order(written, len(session.seq)))
        return self.report(session, _progress(progress))

    def report(self, session: "Session", say: Progress | None = None,
               document=None) -> "Report":
        """The Report of a session's order against its original order (what the window
        shows for it); ``say`` is told each run."""
        from .models.backend import check_length
        say = say or (lambda step, done=None, total=None: None)
        seq, order, where = session.seq, session.order, session.positions
        check_length(self.backend, len(seq), where)
        say("running the original order")
        self.engine.reference(seq, where)             # kept: evaluate below reuses it
        if order.tolist() != list(range(len(seq))):
            say("running the chosen order")
        return Report(self, session, self.engine.evaluate(seq, order, where), document)

    def sweep(self, texts: Iterable[str] | str, kind: str = "random", count: int = 32,
              seed: int = 0, *, layer: int | None = None, positions: str = "slot",
              offset: int = 0, literal: bool = False,
              progress: Callable[[int, int], None] | None = None) -> "SweepResult":
        """The per-layer median, p10 and p90 of every metric over many orders of each
        text, as ``posviz sweep`` computes them (its ``to_dict()`` is ``sweep --json``).

        ``kind``: "random" (``count`` reorders of the movable tokens), "prefix" (of all
        but the last), "swap" (every neighbouring swap, and ``pairs``: the n × n map of
        every swap at ``layer``, default the last), "reverse" or "all" (every reorder,
        at most 7 movable tokens). ``seed`` seeds the orders. ``progress(done, total)``
        is told after each run.
        """
        from .analysis.experiments.runs import check_kind
        from .analysis.experiments.sweep import sweep
        check_kind(kind, count)
        where = Positions(positions, offset, literal).validate()
        texts = [texts] if isinstance(texts, str) else list(texts)
        return sweep(self.engine, texts, kind, count, seed, where, layer=layer,
                     progress=progress)


class Report:
    """One order compared with the original, layer by layer: what ``posviz report``
    prints and the window shows.

    ``evaluation`` holds both runs in full (analysis.engine.Evaluation: hidden states
    (L+1, n, d), attention (L, h, n, n) …); ``session`` the text, tokens and order.
    Layers are numbered as the command line numbers them: 0 is the block input, 1..L
    the output of each block.
    """

    def __init__(self, model: Model, session: "Session", evaluation: "Evaluation",
                 document=None):
        self.model = model
        self.session = session
        self.evaluation = evaluation
        self.document = document          # the session file it came from, if any

    def __repr__(self) -> str:
        return (f"<posviz.Report {self.model.name}: {len(self.tokens)} tokens, order "
                f"{self.order}>")

    @property
    def tokens(self) -> list[str]:
        """(n,) the model's tokens of the text, in their original order."""
        return list(self.evaluation.seq.tokens)

    @property
    def order(self) -> list[int]:
        """(n,) the original index of the token in each slot."""
        return self.evaluation.order.tolist()

    @property
    def noise_floor(self) -> float:
        """The noise floor (analysis.floor): a change below it cannot be told from the
        rounding of the precision the model computes in."""
        return self.evaluation.comparison.floor

    @cached_property
    def layers(self) -> list[dict]:
        """(L+1,) one dict per layer: ``layer`` and the four metrics
        ``hidden_equivariance``, ``attention_equivariance`` (None at layer 0),
        ``last_token_change`` and ``pooled_change``; the quartiles over tokens of each
        token's own change (``token_p25``, ``token_median``, ``token_p75``) and the two
        tokens that moved most with their cumulative share of the squared change
        (``top_tokens``, ``top_tokens_share``: the second share counts both tokens; none
        where nothing changed); the rows of ``report --json``."""
        from .views.reading import token_spread
        spread, rows = token_spread(self.evaluation), self.evaluation.comparison.rows()
        for layer, row in enumerate(rows):
            row.update({f"token_{q}": float(getattr(spread, q)[layer])
                        for q in ("p25", "median", "p75")})
            changed = spread.top_share[layer, -1] > 0           # else no token moved at all
            row["top_tokens"] = spread.top[layer].tolist() if changed else []
            row["top_tokens_share"] = spread.top_share[layer].tolist() if changed else []
        return rows

    @cached_property
    def notes(self) -> list[str]:
        """What qualifies the numbers: an order that changes nothing of the input, the
        tokens that carry a layer's change, and how the reorder ran when a curve reaches
        the floor (views.shown, views.reading)."""
        from .views.reading import frame_note, one_token_note, token_spread
        from .views.shown import same_input_note
        ev = self.evaluation
        return [note for note in (same_input_note(ev), one_token_note(ev, token_spread(ev)),
                                  frame_note(ev)) if note]

    @cached_property
    def outputs(self) -> dict:
        """What the model predicts after each order (its head's top tokens and their KL
        divergence, the pooled cosine), as under "outputs" in ``report --json``."""
        from .analysis.predictions import compare_outputs
        return compare_outputs(self.model.backend, self.evaluation).to_dict()

    def attention(self, layer: int, head: int = 0) -> "HeadMaps":
        """One head's attention maps, as the window's attention figure shows them.

        ``layer`` 1..L, ``head`` 0..h-1. Returns ``original`` (n, n) rows = queries,
        columns = keys, of the original order; ``aligned`` (n, n) the reordered run's
        map with its rows and columns put back in the original tokens' order (equal to
        ``original`` where attention is equivariant); ``difference`` (n, n) aligned −
        original; ``largest`` max |difference|.
        """
        from .views.shown import head_maps
        L, h = self.evaluation.reference.n_layers, self.evaluation.reference.n_heads
        if not (isinstance(layer, int) and 1 <= layer <= L):
            raise PosvizInputError(f"--layer must be from 1 to {L} (got {layer})")
        if not (isinstance(head, int) and 0 <= head < h):
            raise PosvizInputError(f"--head must be from 0 to {h - 1} (got {head})")
        return head_maps(self.evaluation, layer, head)

    def hidden(self, layer: int) -> tuple["np.ndarray", "np.ndarray"]:
        """(original, reordered): the hidden states (n, d) of ``layer`` (0..L), row j
        the token in slot j of each run."""
        ev = self.evaluation
        if not (isinstance(layer, int) and 0 <= layer <= ev.reference.n_layers):
            raise PosvizInputError(f"the layer must be from 0 to {ev.reference.n_layers} "
                                   f"(got {layer})")
        return ev.reference.hidden[layer], ev.slot_hidden(layer)

    def figure(self, name: str, *, layer: int | None = None,
               head: int | None = None) -> "ReportFigure":
        """One of the window's figures by its stable name, one of those ``posviz
        export`` writes (attention, attention_mosaic, symmetry, token_change, …), drawn
        off screen by the window's own plots: it shows itself in a notebook, and
        ``.save("fig.pdf")`` writes .png (``dpi=`` or ``width=``), .svg, .pdf or .csv;
        ``.data`` holds its arrays. ``layer`` 1..L and ``head`` 0..h-1: what the
        figures of one layer or head show (default 1 and 0). Imports Qt."""
        from .gui.plots.headless import ReportFigure
        return ReportFigure(self, name, layer, head)

    def to_dict(self) -> dict:
        """The report as one JSON-ready object: what ``posviz report --json`` prints
        ("run": how the reorder ran, views.reading.frame)."""
        from .views.reading import frame
        ev, backend = self.evaluation, self.model.backend
        return {
            "tokens": self.tokens,
            "order": self.order,
            "config": {**backend.describe(), "positions": ev.positions.mode,
                       "offset": ev.positions.offset, "literal": ev.positions.literal},
            "noise_floor": self.noise_floor,
            "run": frame(ev),
            "layers": self.layers,
            "notes": self.notes,
            "outputs": self.outputs,
        }


class StepPrinter:
    """Tells the steps of a load or a run on a stream, one line each ("posviz: STEP").

    With ``steps`` False only a download is told. Of a counted step only a download's
    bytes are told (tensors are not), at each file and each tenth of the whole."""

    def __init__(self, stream=None, steps: bool = True):
        self.stream = stream
        self.steps = steps
        self._counted = (None, -1)          # (step, tenth) told last

    def __call__(self, step: str, done: int | None = None, total: int | None = None) -> None:
        from .models.hf.hub import DOWNLOAD_STEP, count_text
        download = step.startswith("downloading")
        if done is None or not total:
            if self.steps or download:
                self._print(step)
            return
        if not step.startswith(DOWNLOAD_STEP):
            return
        tenth = 10 * done // total
        if (step, tenth) != self._counted and (step != self._counted[0]
                                               or tenth > self._counted[1]):
            self._counted = (step, tenth)
            self._print(count_text(step, done, total))

    def _print(self, line: str) -> None:
        print(f"posviz: {line}", file=self.stream or sys.stderr, flush=True)


def _progress(progress: Progress | bool | None) -> Progress:
    """A progress argument as a callable: None tells downloads on stderr, False
    nothing, True every step."""
    if progress is None or progress is True:
        return StepPrinter(steps=progress is True)
    if progress is False:
        return lambda step, done=None, total=None: None
    return progress
