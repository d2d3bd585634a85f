"""A Report: one order compared with the original, as ``posviz report`` prints it."""
from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING

from .arguments import checks_calls

if TYPE_CHECKING:          # these import numpy or torch: only when used
    import numpy as np

    from ..analysis.engine import Evaluation
    from ..document.session import Session
    from ..gui.plots.headless import ReportFigure
    from ..views.shown import HeadMaps
    from . import Model

SHOWN_ENDS = 8                 # a long list shows this many items at each end
# a long input's head and mosaic tiles drawn from the order run again (Report.run_for)
HEAD_RUN = "running the chosen order again, keeping the head drawn and the mosaic's tiles"


def abbreviated(items, ends: int = SHOWN_ENDS, sep: str = ", ") -> str:
    """A list as text, whole up to 3 × ``ends`` items, else its ends and how many are
    left out: "[4095, 4094, …(4,080 more)…, 1, 0]"."""
    items = [str(item) for item in items]
    if len(items) <= 3 * ends:
        return "[" + sep.join(items) + "]"
    return ("[" + sep.join(items[:ends]) + f"{sep}…({len(items) - 2 * ends:,} more)…{sep}"
            + sep.join(items[-ends:]) + "]")


def jsonable(value):
    """``value`` as JSON holds it: tuples as lists, numpy numbers as Python's, keys as
    text, so a ``to_dict()`` equals the command's ``--json`` to the type."""
    if isinstance(value, dict):
        return {str(key): jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return jsonable(value.tolist())
    return value


@checks_calls
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
        self.evaluate_s = 0.0             # seconds its chosen order's run took (Model.report):
        # what the order run again for a figure (run_for) is planned to take

    def __repr__(self) -> str:
        n = len(self.tokens)
        return (f"<posviz.Report {self.model.name}: {n:,} token{'' if n == 1 else 's'}, "
                f"order {abbreviated(self.order)}>")

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
        from ..views.reading import token_spread
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
        return self.worded_notes(None)

    def worded_notes(self, literal: str | None = "") -> list[str]:
        """``notes`` with a run as given named as the reader sets it: ``literal``, or
        "" for the entry point speaking now (--literal on the command line, literal=True
        in Python); None: the record's own wording, as ``notes`` and the JSON have it."""
        from ..errors import argument, speaks_flags
        from ..views.reading import RECORD_LITERAL, frame_note, one_token_note, token_spread
        from ..views.shown import same_input_note
        if literal == "":
            literal = argument("literal") if speaks_flags() else argument("literal", True)
        ev = self.evaluation
        return [note for note in (same_input_note(ev), one_token_note(ev, token_spread(ev)),
                                  frame_note(ev, literal or RECORD_LITERAL)) if note]

    @cached_property
    def outputs(self) -> dict:
        """What the model predicts after each order (its head's top tokens and their KL
        divergence, the pooled cosine), as under "outputs" in ``report --json``."""
        from ..analysis.predictions import compare_outputs
        return jsonable(compare_outputs(self.model.backend, self.evaluation).to_dict())

    def attention(self, layer: int, head: int = 0) -> "HeadMaps":
        """One head's attention maps, as the window's attention figure shows them.

        ``layer`` 1..L, ``head`` 0..h-1. Returns ``original`` (n, n) rows = queries,
        columns = keys, of the original order; ``aligned`` (n, n) the reordered run's
        map with its rows and columns put back in the original tokens' order (equal to
        ``original`` where attention is equivariant); ``difference`` (n, n) aligned −
        original; ``largest`` max |difference|.
        """
        from ..views.shown import head_maps
        ev = self.evaluation
        L, h = ev.reference.n_layers, ev.reference.n_heads
        from ..errors import check_whole_number
        from ..models.limits.guard import check_view
        check_whole_number("layer", layer)          # None too: check_view skips it
        check_whole_number("head", head)
        check_view(L, h, layer, head)
        return head_maps(self.run_for(layer, head)[0], layer, head)

    def run_for(self, layer: int, head: int, say=None):
        """(Evaluation, MosaicTiles or None) that hold head ``head`` of ``layer`` (1..L)
        and the mosaic's tiles: the report's own when its maps were kept whole; past that
        size (models.maps.KEEP_ALL) the order run again keeping that head and pooling
        the tiles as the layers pass, as the window does for the head on screen
        (views.evaluated), told to ``say`` (a StepPrinter: HEAD_RUN, then its layers;
        SmolLM2's 600 tokens: 3.7 s before a figure's first line). The last such run
        is kept."""
        ev = self.evaluation
        if ev.comparison.attention_aligned is not None or \
                (ev.kept is not None and ev.kept[:2] == (layer - 1, head)):
            return ev, None
        key = (layer, head, self.session.selection.mosaic)
        if (getattr(self, "_head_run", None) or (None,))[0] != key:   # None: stopped
            from ..views.evaluated import evaluated
            from ..runtime.held_lines import due
            from .steps import layer_ticks, quiet
            self._head_run = None                       # the last one's memory first
            if say is not None:
                say(HEAD_RUN)
                due(self.evaluate_s)    # told at once when it would carry a call from
                # Python past its hold: its wait is one long call of torch's
            with layer_ticks(self.model.backend, say or quiet, HEAD_RUN):
                self._head_run = (key, *evaluated(self.model.engine, ev.seq, ev.order,
                                                  ev.positions, keep=(layer - 1, head),
                                                  mode=key[2]))
        return self._head_run[1], self._head_run[2]

    def hidden(self, layer: int) -> tuple["np.ndarray", "np.ndarray"]:
        """(original, reordered): the hidden states (n, d) of ``layer`` (0..L), row j
        the token in slot j of each run."""
        ev = self.evaluation
        from ..errors import check_whole_number
        from ..models.limits.guard import check_view
        check_whole_number("layer", layer)          # None too: check_view skips it
        check_view(ev.reference.n_layers, 0, layer, first=0)
        return ev.reference.hidden[layer], ev.slot_hidden(layer)

    def figure(self, name: str, *, layer: int | None = None,
               head: int | None = None) -> "ReportFigure":
        """One of the window's figures by its stable name, one of those ``posviz
        export`` writes (attention, attention_mosaic, symmetry, token_change, …), drawn
        off screen by the window's own plots: it shows itself in a notebook, and
        ``.save("fig.pdf")`` writes .png (``dpi=`` or ``width=``), .svg, .pdf or .csv;
        ``.data`` holds its arrays (the first of these draws it, told as a save is).
        ``layer`` 1..L and ``head`` 0..h-1: what the figures of one layer or head
        show (default 1 and 0). Imports Qt."""
        import time
        from ..errors import held_interrupt
        from .drawing import figure_telling, qt_imported
        began = time.monotonic()
        # Qt's first import: Ctrl+C inside it is fatal; told as the drawing's first part
        with held_interrupt(), qt_imported(self.model.progress, name):
            from ..gui.plots.headless import ReportFigure
        figure = ReportFigure(self, name, layer, head)
        # drawn for display or saved: told once its wait (from here when drawn at once)
        # passes the hold, as every call
        figure.telling = figure_telling(self.model.progress, name, len(self.tokens),
                                        made=(began, time.monotonic()))
        return figure

    def to_dict(self) -> dict:
        """The report as one JSON-ready object: what ``posviz report --json`` prints
        ("run": how the reorder ran, views.reading.frame)."""
        from ..document.provenance import positions_options
        from ..views.reading import frame
        ev, model = self.evaluation, self.model
        placed = ({"offload_folder": model.spec.offload_folder}
                  if model.spec.offload_folder else {})
        return jsonable({
            "tokens": self.tokens,
            "order": self.order,
            "config": {**self._config(), **placed, **positions_options(ev.positions)},
            "noise_floor": self.noise_floor,
            "run": frame(ev),
            "layers": self.layers,
            "notes": self.notes,
            "outputs": self.outputs,
            "provenance": self.provenance,
        })

    def _config(self) -> dict:
        """The model's description (trained weights without a seed: drawn from none), a
        real model's dtype and the dtype it computes in said at float32 too (README:
        "The report's config says both")."""
        described = self.model.describe()
        if described.get("weights", "random") != "random":
            described.pop("seed", None)
        if described.get("model") != "built-in" and "dtype" not in described:
            described.update(dtype="float32", computes_in="float32")
        return described

    @property
    def provenance(self) -> dict:
        """What made the report (document.provenance): its JSON's "provenance", and
        the first line of its text (made_by)."""
        from ..document.provenance import positions_options
        return self.model.provenance(options=positions_options(self.evaluation.positions))
