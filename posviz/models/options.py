"""Every option of the built-in model and of the position ids, defined once.

Each ``Option`` holds a setting's default, its allowed values (a range or a list of
choices), its label in the model panel and its tooltip. The configuration classes
validate against it, the model panel builds its fields from it, and the command line
builds its ``--help`` from it, so a range is never written twice.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import PosvizInputError, argument, speaks_flags
from .encodings import ENCODINGS, KINDS, SinusoidalEncoding

# Each encoding's title (with its paper): what menus and figure headings show.
TITLES = {kind: encoding.title for kind, encoding in ENCODINGS.items()}

MASKS = ("bidirectional", "causal")
NORMS = ("pre", "post", "none")
DTYPES = ("float32", "float64")                 # the built-in model's precisions
HALF = ("bfloat16", "float16")                   # a pretrained model's weights' too
PRETRAINED_DTYPES = ("float32", *HALF)           # what a pretrained model is read as
PRECISIONS = (*DTYPES, *HALF)                    # every precision, one list for every entry
POSITION_MODES = ("slot", "token")


@dataclass(frozen=True)
class Option:
    """One setting: its type, default, allowed values, and the words a user reads."""

    name: str                      # field of ModelConfig or Positions
    label: str                     # caption in the model panel
    default: object
    tip: str                       # tooltip in the panel, help text on the command line
    low: float | None = None       # numbers: the allowed range, both ends included
    high: float | None = None
    choices: tuple = ()            # a fixed set of values, when not a number
    group: str = "model"           # "model" (ModelConfig) or "positions" (Positions)
    chosen: bool = True            # set by the user (panel, command line), or follows
                                   # from the model
    keyword: str = ""              # the Python API's argument, when not ``name``
    elsewhere: tuple = ()          # values another kind of model takes (refused as such)

    @property
    def said(self) -> str:
        """The option as the entry point running now names it: its flag on the command
        line, its argument in Python (errors.argument)."""
        return argument(self.keyword or self.name)

    @property
    def kind(self) -> type:
        return type(self.default)

    def problem(self, value) -> str | None:
        """One line saying why ``value`` is not allowed, or None when it is."""
        if self.choices:
            if value in self.elsewhere:
                return (f"{argument(self.keyword or self.name, value)} applies to "
                        f"{pretrained_model()} only: the built-in model takes "
                        f"{', '.join(self.choices)}")
            if value not in self.choices:
                allowed = ", ".join(map(str, self.choices + self.elsewhere))
                return f"{self.said} must be one of {allowed} (got {value!r})"
            return None
        if self.kind is bool:
            return None if isinstance(value, bool) else f"{self.said} must be true or false"
        if self.kind is int:
            if isinstance(value, bool) or not isinstance(value, int) or not (
                    self.low <= value <= self.high):
                return (f"{self.said} must be a whole number from {self.low} to "
                        f"{self.high} (got {value!r})")
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                self.low <= value <= self.high):          # NaN fails both comparisons
            got = f"{value:g}" if isinstance(value, float) else repr(value)  # 1000, as typed
            return f"{self.said} must be a number from {self.low:g} to {self.high:g} (got {got})"
        return None


def pretrained_model() -> str:
    """A pretrained model as the entry point running now names it."""
    return "a --model" if speaks_flags() else "a pretrained model (source)"


def pretrained_dtype_problem(dtype) -> str | None:
    """Why a pretrained model cannot be read as ``dtype``, or None: in the words the
    built-in model's ``dtype`` is refused in (Option.problem), from one list."""
    if dtype in PRETRAINED_DTYPES:
        return None
    if dtype in PRECISIONS:
        return (f"{argument('dtype', dtype)} applies to the built-in model only: "
                f"{pretrained_model()} takes {', '.join(PRETRAINED_DTYPES)}")
    return f"{argument('dtype')} must be one of {', '.join(PRECISIONS)} (got {dtype!r})"


def check_scale(given: bool, kinds) -> None:
    """The one check of ``pe_scale`` at every entry: PosvizInputError when it is
    ``given`` and none of the encodings ``kinds`` has a positional signal for it to
    weigh (NoPE)."""
    if not given or any(ENCODINGS[kind].acts for kind in kinds):
        return
    raise PosvizInputError(f"{argument('pe_scale')} does not apply to "
                           f"{argument('pe', kinds[0])}: "
                           f"{ENCODINGS[kinds[0]].short} has no positional signal to weigh")


def _options(*options: Option) -> dict[str, Option]:
    return {option.name: option for option in options}


OPTIONS: dict[str, Option] = _options(
    Option("layers", "Layers", 4, low=1, high=64,
           tip="Number of transformer blocks L. Each block is attention, then a "
               "feed-forward MLP."),
    Option("heads", "Heads", 4, low=1, high=128,
           tip="Attention heads h per block. Must divide the model width."),
    Option("d_model", "Width d", 64, low=1, high=4096,
           tip="Model width d: the size of every token's vector in the residual stream."),
    Option("d_ff", "MLP width", 0, low=0, high=16384,
           tip="Width of each block's feed-forward layer (0 means 4 × model width)."),
    Option("pe", "Encoding", SinusoidalEncoding.kind, choices=KINDS,
           tip="How position enters the model:\n" + "\n".join(
               f"{kind}: {encoding.summary}." for kind, encoding in ENCODINGS.items())),
    Option("pe_scale", "Position scale", 1.0, low=0.0, high=100.0,
           tip="Weight of the positional signal against the token content (0 switches it "
               "off; large values let position dominate)."),
    Option("mask", "Mask", "bidirectional", choices=MASKS,
           tip="bidirectional: every token attends to every token (an encoder such as "
               "BERT). causal: each token attends to itself and the tokens before it (a "
               "decoder such as GPT); the mask itself leaks position."),
    Option("residual", "Residual connections", True,
           tip="Residual (skip) connections add each block's input to its output; they "
               "carry positional information from layer to layer."),
    Option("norm", "LayerNorm", "pre", choices=NORMS,
           tip="Where LayerNorm sits: before each sub-layer (pre, as in GPT-2), after the "
               "residual sum (post, as in the original Transformer and BERT), or nowhere."),
    Option("seed", "Seed", 0, low=0, high=2**31 - 1,
           tip="Seed of the random weights. The model is untrained: the symmetry argument "
               "holds for any weights, and two equal settings give equal weights."),
    Option("dtype", "Precision", "float32", choices=DTYPES, elsewhere=HALF,
           tip="Floating-point precision. A change below the noise floor (100 × machine "
               "epsilon; more where shifting the position ids shows more rounding) cannot "
               "be told from rounding."),
    Option("max_len", "Learned positions", 1024, low=1, high=1_000_000, chosen=False,
           tip="Rows of the learned position table: the longest input it can encode."),
    Option("mode", "Positions", "slot", choices=POSITION_MODES, group="positions",
           keyword="positions",
           tip="Positions belong to slots: slot j always gets position j, whatever token "
               "sits there (how a model is normally fed).\nPositions travel with tokens: "
               "each token keeps the position id of its original place, so with a "
               "bidirectional mask every encoding is equivariant again (a causal mask "
               "still tells slots apart)."),
    Option("offset", "First position", 0, low=0, high=1_000_000, group="positions",
           tip="Position id of the first slot (e.g. to mimic left padding or a prompt "
               "that came before)."),
    Option("literal", "Run as given", False, group="positions",
           tip="Off: a reorder runs the fast way the model allows: a causal model from "
               "the first moved slot on (the slots before it keep the original run's "
               "values), else the built-in model and bidirectional pretrained ones in the "
               "original tokens' frame (each token in its own row, at its slot's position "
               "id); where the symmetry holds the change is then exactly 0 by "
               "construction. On: the reordered input runs through the ordinary forward "
               "as given, so rounding shows as it really happens (below the noise floor, "
               "not 0)."),
)

MODEL_OPTIONS = tuple(name for name, o in OPTIONS.items() if o.group == "model")
POSITION_OPTIONS = tuple(name for name, o in OPTIONS.items() if o.group == "positions")


def problems_of(values: dict, names) -> dict[str, str]:
    """Field name -> one-line message for every value in ``values`` outside its option."""
    found = {}
    for name in names:
        message = OPTIONS[name].problem(values[name])
        if message:
            found[name] = message
    return found
