"""What a model must offer posviz: tokenize a text, run one order of its tokens into a
Trace, and say in one typed place what else it can do.

The built-in transformer (models.builtin.backend) and every Hugging Face model (models.hf) sit
behind this interface, so the session, the metrics, the plots and the command line
never know which one they drive.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Protocol

import numpy as np

from ..errors import PosvizInputError, TextRefused
from .config import Positions
from .request import Request
from .trace import Trace

WORD = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]")


def split_words(text: str) -> list[str]:
    """Word-level tokens: words (with inner apostrophes) and single punctuation marks."""
    return WORD.findall(text)


WORD_START = ("Ġ", "▁")      # byte-level BPE (GPT-2, Llama 3) and SentencePiece mark
CONTINUES = "##"             # WordPiece's mark of a piece inside a word, used for all


def mark_word_pieces(pieces: list[str], raws: list[str], pinned) -> list[str]:
    """Labels that show where a word starts, whatever the tokenizer: a piece that
    continues a word reads "##ing", as WordPiece writes it ("play ##ing" is one word in
    two tokens). Tokenizers that mark word starts instead (Ġ, ▁) have their other word
    pieces marked; punctuation, the first piece and pieces after a pinned token are not.
    """
    if not any(raw.startswith(WORD_START) for raw in raws):
        return pieces                          # WordPiece marks its own, or one word
    marked = list(pieces)
    for k in range(1, len(pieces)):
        raw = raws[k]
        if (not pinned[k] and not pinned[k - 1] and not raw.startswith(WORD_START)
                and raws[k - 1] not in WORD_START      # a bare "▁" starts this word
                and pieces[k][:1].isalnum()):
            marked[k] = CONTINUES + pieces[k]
    return marked


@dataclass(frozen=True)
class TokenSequence:
    """A tokenized text in its original order."""

    tokens: tuple[str, ...]        # (n,) what each chip shows
    ids: tuple                     # (n,) what the backend feeds its model (words or ids)
    pinned: tuple[bool, ...]       # (n,) special tokens that keep their slot in every order

    def __len__(self) -> int:
        return len(self.tokens)

    def movable(self) -> np.ndarray:
        """(n,) bool per slot: may a reorder change what this slot holds?

        The one statement of the pinned-token rule: special tokens (a model's [CLS],
        [SEP], BOS) keep their slots under every reorder, so slot j is fixed exactly when
        token j is pinned, and the other tokens move only among the other slots."""
        return ~np.asarray(self.pinned, dtype=bool)


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do besides ``run``, declared once; the engine and the
    experiments read it (and nothing else) to choose how to run."""

    batched: bool = False    # ``record`` runs B orders in one forward
    aligned: bool = False    # an aligned Request computes an order in the original
                             #   tokens' frame: row i is token i wherever it moved, and
                             #   equals the slot-order run with its rows put back
    prefix: bool = False     # causal: a suffix Request computes only the slots from
                             #   ``start`` on, from an earlier run's keys and values
    position_ids: bool = True   # ``run`` takes position ids other than the slots 0..n-1
                                #   (a model whose positions are its slots takes none)


ShouldStop = Callable[[], bool]


class Backend(Protocol):
    name: str                      # shown in the window title and reports
    max_positions: int | None      # largest position id + 1 the model accepts, if bounded
    dtype: str                     # "float32" or "float64"
    mask: str                      # "causal" or "bidirectional"
    capabilities: Capabilities

    def tokenize(self, text: str) -> TokenSequence: ...

    def run(self, seq: TokenSequence, request: Request,
            should_stop: ShouldStop | None = None) -> Trace:
        """The Trace of one order of seq's tokens (models.request.Request: plain, aligned
        or a causal suffix; what it keeps). A suffix's Trace holds its rows only
        (analysis.prefix.stitch puts the others back). The attention maps go to
        ``request.maps`` as each block computes them when given (the Trace then holds
        none), else into the Trace (models.maps.LayerMaps keeps a long input's on
        disk). If ``should_stop`` returns True at a layer boundary, raise
        errors.Cancelled."""
        ...

    def record(self, seq: TokenSequence, request: Request, recorder) -> None:
        """(capabilities.batched) Run the request, one order or a batch of B (B, n), in
        one forward with every hook point tapped by ``recorder`` (models.hooks.Recorder):
        a batch's recorded values have a leading axis of B."""
        ...

    def batch_bytes(self, n: int) -> int:
        """About how many bytes one order of n tokens takes in ``record``."""
        ...

    def describe(self) -> dict: ...

    def facts(self):
        """models.facts.ModelFacts: what the model is."""
        ...

    def profile(self, reach: int):
        """Its encoding against relative distance Δ in -reach..reach
        (models.encodings' RelativeProfile) when posviz builds the encoding itself, else
        None."""
        ...

    def machinery(self):
        """A real model's own positional machinery read from its weights
        (models.hf.machinery.Machinery), else None."""
        ...


def too_long(n: int, offset: int, limit: int, name: str, counted: bool = True) -> str:
    """The one refusal of more tokens than a model has positions, wherever it is told
    (models.limits.guard before a load or a run, check_length at a run): ``counted``
    False, ``n`` is a text's words, the fewest tokens any tokenizer gives it."""
    tokens = f"{n:,} tokens" if counted else f"at least {n:,} tokens (the text's {n:,} words)"
    return (f"{tokens} from position {offset:,} need {offset + n:,} positions, but {name} "
            f"has {limit:,}")


def check_length(backend: Backend, n: int, positions: Positions) -> None:
    """Raise TextRefused if n tokens at this offset exceed the model's positions (its
    ``offset`` set when the n tokens alone fit: the offset is to blame)."""
    limit = backend.max_positions
    if limit is not None and positions.offset + n > limit:
        raise TextRefused(too_long(n, positions.offset, limit, backend.name),
                          offset=positions.offset if n <= limit else None)


def truncate_sequence(seq: TokenSequence, room: int | None) -> TokenSequence:
    """Cut seq to at most ``room`` tokens, keeping a final pinned token (e.g. [SEP])."""
    if room is None or len(seq) <= room:
        return seq
    keep = list(range(room))
    if seq.pinned[-1] and room >= 2:
        keep[-1] = len(seq) - 1
    return TokenSequence(tuple(seq.tokens[i] for i in keep), tuple(seq.ids[i] for i in keep),
                         tuple(seq.pinned[i] for i in keep))
