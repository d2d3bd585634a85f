"""The one check every entry point passes before anything large is loaded or allocated.

The window, the command line and the Python API call ``check`` with what they know: a
model not loaded yet (the built-in model's ModelConfig, or a pretrained model's source,
read from its config.json and weight headers alone) or one loaded (a Backend); the
tokens of the longest text (counted by the model's tokenizer, or before it is loaded at
least the text's whitespace-separated words, ``counted=False``: every tokenizer posviz
reads gives each of them one token or more); the first position id; the device; and
what an experiment keeps beside its runs (a sweep's orders, a probe's hidden states).

A text not tokenized yet passes ``check_texts``, which counts it one way for every entry
point (``tokens_of``), so the same input meets the same refusal in the same words; a
loaded model is refused in the words of its unloaded form (the built-in model's
configuration, a pretrained model's files with its weights counted as held).

It refuses, in this order, a device torch does not have, a layer or head the model does
not have (models.limits.view: a bad value, PosvizInputError; a layer or head given
where nothing chooses one, check_chosen), more tokens than the model has
positions, more orders than exist or more folds than texts, a sweep estimated over its
hours (models.limits.duration), and what would not fit in memory (models.limits.memory),
raising errors.Refused in the words of the entry point (errors.argument). Nothing here
imports torch, but to ask whether an accelerator torch was built for is there
(models.limits.devices).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...errors import Refused, argument
from ..config import ModelConfig
from .devices import ACCELERATORS, DEVICES, check_device  # noqa: F401 (the guard's)
from .encodable import check_encodable
from .duration import MOST_HOURS, PACE, RANDOM_KINDS, check_time  # noqa: F401 (guard's)
from .memory import SAFETY, limit_bytes, size_text
from .target import Target, model_shape, target_of  # noqa: F401 (the guard's)
from .view import check_chosen, check_view  # noqa: F401 (the guard's)

ALL_AT_MOST = 7                 # a sweep of kind "all" runs at most 7! orders
# What a sweep keeps per run: 4 metrics' (L+1,) float64 arrays and its (n,) order, each
# a numpy array with about ARRAY_BYTES of its own
ARRAY_BYTES = 112
# A swap sweep's map of every pair, per text: an (n, n) float64 table, and its record
# (SwapMap.to_dict) an object array and lists of Python floats, about 48 bytes a cell more
SWAP_CELL = 56


@dataclass(frozen=True)
class Orders:
    """A sweep's orders: ``count`` asked of ``kind``, of texts whose most movable
    tokens are ``movable`` (for "prefix": before the last token); ``every_layer``: a
    swap sweep keeps its map at every layer (the window's layer chooser), not one;
    ``at_least``: ``movable`` is the fewest the texts can have (their words, a tokenizer
    not read yet), so its runs are the fewest the sweep can run."""

    kind: str
    count: int
    movable: int | None             # None: not known yet (a tokenizer not read)
    texts: int = 1
    every_layer: bool = False
    at_least: bool = False

    @property
    def distinct(self) -> int | None:
        """How many different orders exist (None: more than any count asks, or not
        known yet)."""
        known = self.movable is not None and self.movable <= 20 and not self.at_least
        return math.factorial(self.movable) if known else None

    fewest = property(lambda self: "at least " if self.at_least else "")  # of tokens
    # before ``runs``: a fixed set of orders of uncounted tokens is bounded; a count exact
    fewest_runs = property(lambda self: "" if self.kind in RANDOM_KINDS else self.fewest)

    @property
    def runs(self) -> int:
        """How many orders the sweep runs (0: not known yet): a swap every pair of
        movable tokens (its map; the neighbours' make its bands), reverse one order a
        text, all every order but the text's own."""
        if self.kind in RANDOM_KINDS:
            return self.count * self.texts
        m = self.movable
        if m is None or m < 2:
            return 0
        each = {"swap": m * (m - 1) // 2, "reverse": 1,
                "all": math.factorial(m) - 1 if m <= ALL_AT_MOST else 0}.get(self.kind, 0)
        return each * self.texts

    def measured(self, count: int | None = None) -> int:
        """How many runs keep their measurements (a swap's neighbours only)."""
        if self.kind in RANDOM_KINDS:
            return (self.count if count is None else count) * self.texts
        if self.kind == "swap":
            return 0 if self.movable is None else max(self.movable - 1, 0) * self.texts
        return self.runs

    def kept(self, layers: int, n: int, count: int | None = None) -> int:
        """Bytes the sweep keeps of ``count`` (default: its own) orders' runs of n
        tokens on a model of ``layers`` layers (and a swap's maps: one layer's, or the
        float64 map of every layer, input included, when ``every_layer``)."""
        per_run = 4 * (ARRAY_BYTES + 8 * (layers + 1)) + ARRAY_BYTES + 8 * n
        cell = SWAP_CELL + (8 * (layers + 1) if self.every_layer else 0)
        maps = cell * n * n * self.texts if self.kind == "swap" and self.runs else 0
        return self.measured(count) * per_run + maps


def orders_of_words(kind: str, count: int, texts: list[str], exact: bool) -> Orders:
    """A sweep's Orders before its model is loaded, from its texts' words: its movable
    tokens are known when ``exact`` (the built-in model's random weights run words, none
    pinned), else at least the whitespace-separated words (each gives a tokenizer one
    token or more, and only special tokens are pinned)."""
    from ..backend import split_words
    count_words = (lambda text: len(split_words(text))) if exact else words_in
    words = max(map(count_words, texts), default=0)
    return Orders(kind, count, words - (kind == "prefix"), len(texts), at_least=not exact)


def all_refused(movable: int, at_least: bool = False) -> str:
    """Why kind "all" cannot run ``movable`` (over ALL_AT_MOST; ``at_least``: or more)."""
    return (f"'all' runs every reorder of at most {ALL_AT_MOST} movable tokens, this text "
            f"has {'at least ' if at_least else ''}{movable}; use random instead")


def check_sweep(backend, seqs, kind: str, count: int, offset: int = 0,
                every_layer: bool = False) -> None:
    """``check`` for a sweep of ``kind`` and ``count`` over the tokenized texts ``seqs``
    (TokenSequence each) on a loaded ``backend``: the longest against the positions,
    the count against the orders that exist, the runs' values against the memory
    (``every_layer``: a swap's map kept at every layer, as sweep's)."""
    if not seqs:
        return                                  # the sweep itself says there are none
    movable = max(int(seq.movable()[:len(seq) - (kind == "prefix")].sum()) for seq in seqs)
    check(backend, max(map(len, seqs)), offset=offset,
          orders=Orders(kind, count, movable, len(seqs), every_layer))


def check_probe(backend, lengths: list[int], quadratic: bool, offset: int = 0,
                folds: int | None = None) -> None:
    """``check`` for a probe of texts of ``lengths`` tokens on a loaded ``backend``, held
    out in ``folds``."""
    if lengths:
        check(backend, max(lengths), offset=offset, probe_tokens=sum(lengths),
              quadratic=quadratic, folds=None if folds is None else (folds, len(lengths)))


def check_folds(folds: int, texts: int, generated: bool = False) -> None:
    """Refuse (reason "count") more folds than a probe has texts to hold out: each fold
    holds out one group of texts. ``generated``: ``texts`` is how many the probe makes up
    for its features (it makes 2 a fold, so a fold count past them only grows the run)."""
    if folds <= texts:
        return
    if texts < 2:                  # no fold count helps: folds are at least 2
        raise Refused(f"the probe holds texts out to score it, so it needs at least 2 "
                      f"texts (got {texts})", "count")
    if generated:
        raise Refused(f"{argument('folds', folds)} asks for more folds than the probe's "
                      f"generated texts hold: it makes {texts:,} for its features, so at "
                      f"most {texts:,} folds (or give texts of your own: at most one fold a text)",
                      "count")
    raise Refused(f"{argument('folds', folds)} asks for more folds than there are texts: "
                  f"each fold holds out texts, and {texts:,} texts make at most {texts:,}",
                  "count")

def words_in(text: str) -> int:
    """The text's whitespace-separated words: the fewest tokens any tokenizer gives it."""
    return len(text.split())


def reads_words(model, weights: str = "random") -> bool:
    """Whether ``model`` (a ModelConfig with ``weights``, a source, or a loaded Backend)
    tokenizes as the built-in model with random weights does: words and punctuation
    marks (backend.split_words), so its tokens are counted exactly without a tokenizer."""
    if isinstance(model, ModelConfig):
        return weights == "random"
    return isinstance(getattr(model, "config", None), ModelConfig) and \
        getattr(model, "tokenizer", None) is None


def tokens_of(model, texts, weights: str = "random") -> tuple[int, bool]:
    """(tokens of the longest of ``texts``, exact): as every entry point counts them
    before a tokenizer is read, cheaply: the built-in model with random weights reads
    words and punctuation marks, exactly; any other tokenizer gives each
    whitespace-separated word one token or more (not exact: the fewest it can give)."""
    from ..backend import split_words
    exact = reads_words(model, weights)
    count = (lambda text: len(split_words(text))) if exact else words_in
    return max(map(count, texts), default=0), exact


def check_texts(model, texts, *, weights: str = "random", folds: int | None = None,
                **options):
    """``check`` for ``texts`` before they are tokenized: the one way the window's,
    the command line's and the API's runs count a text (tokens_of) and are refused, so
    the same input meets the same refusal, in the same words, on every entry point.
    ``folds``: a probe's, held out of ``texts`` (none given: the texts it generates
    bound them once made). ``options``: check's (offset, device, dtype, offloaded,
    orders …). Returns, for a pretrained model's load (``tokens_read``), the same check
    of their tokens as its tokenizer counts them, before its weights (400 words of 3,202
    MiniLM tokens were refused after them, 15 s); None when the words were exact."""
    texts = list(texts)
    check_encodable(texts)
    n, exact = tokens_of(model, texts, weights)
    held_out = (folds, len(texts)) if folds is not None and texts else None
    check(model, n, counted=exact, folds=held_out, **options)
    if not exact and texts and isinstance(model, str):
        return lambda count: check(model, max(map(count, texts)), folds=held_out, **options)
    return None


def check(model, n_tokens: int = 0, *, offset: int = 0, device: str | None = None,
          counted: bool = True, dtype: str = "float32", offloaded: bool = False,
          orders: Orders | None = None, probe_tokens: int = 0,
          quadratic: bool = False, folds: tuple[int, int] | None = None,
          memory: bool = True, view: tuple = ()) -> None:
    """Refuse (errors.Refused) what ``model`` cannot run at ``n_tokens`` from position
    ``offset`` on ``device``, or what would not fit in memory with ``orders`` of a sweep
    or the hidden states of ``probe_tokens`` a probe fits (``quadratic``: with their
    squares), held out in ``folds`` (folds, texts). ``model``: a ModelConfig or a pretrained model's source (not loaded: the
    weights, read as ``dtype``, count unless ``offloaded``), or a loaded Backend (its
    weights already in memory). ``counted`` False: ``n_tokens`` is a text's words, the
    fewest tokens it can have. ``memory`` False leaves out the memory check (the user
    asked to run it anyway). ``view``: check_view's (layer, head[, first]), refused as
    soon as the model's config is read, before its weights."""
    check_device(device)
    target = target_of(model, dtype)
    if target is None:              # a model this machine does not hold: its load says why
        if folds is not None:       # (its positions are not known: the folds are)
            check_folds(*folds)
        return
    if view:
        check_view(*target.view(), *view)
    limit = target.max_positions
    if limit is not None and offset + n_tokens > limit:
        from ..backend import too_long
        raise Refused(too_long(n_tokens, offset, limit, target.name, counted), "positions",
                      offset=offset if n_tokens <= limit else None)
    if folds is not None:
        check_folds(*folds)
    if orders is not None:
        _check_count(orders)
        check_time(orders, *target.sizes(), max(n_tokens, 1))
    if not memory:
        return
    extra = 0
    if probe_tokens:
        layers, width = target.sizes()
        extra += (layers + 1) * probe_tokens * width * 8 * (4 if quadratic else 2)
    n = max(n_tokens, 1)
    target.check_memory(n, extra, offloaded)      # the runs themselves: "memory"
    if orders is not None and orders.runs:
        _check_kept(target, orders, n, extra, offloaded)


def _check_kept(target: "Target", orders: Orders, n: int, extra: int,
                offloaded: bool) -> None:
    """Refuse (reason "count") a count whose kept measurements would not fit beside
    the runs, naming the largest count that fits."""
    layers, _ = target.sizes()

    def fits(count: int) -> bool:
        try:
            target.check_memory(n, extra + orders.kept(layers, n, count), offloaded)
        except Refused:
            return False
        return True
    if fits(orders.count):
        return
    low, high = 0, 0
    if orders.kind in RANDOM_KINDS:
        low, high = 0, orders.count              # fits(low), not fits(high)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (middle, high) if fits(middle) else (low, middle)
    free = limit_bytes()
    runs = f"{orders.fewest_runs}{orders.runs:,} run{'' if orders.runs == 1 else 's'}"
    kept = (f"would keep {orders.fewest or 'about '}{size_text(orders.kept(layers, n))} of "
            f"measurements ({runs} of {orders.fewest}{n:,} tokens"
            f"{f' and a {n}×{n} map' if orders.kind == 'swap' else ''}), but only "
            f"{size_text(free or 0)} are free ({SAFETY:.0%} of the available memory) "
            f"with the model and its runs")
    if orders.kind not in RANDOM_KINDS:             # a fixed set of orders: no count
        raise Refused(f"{argument('kind', orders.kind)} {kept}: use a shorter text, or "
                      f"{argument('kind', 'random')} with a count", "count")
    raise Refused(f"{argument('count', orders.count)} {kept}: use a smaller count "
                  f"(at most {low:,} fit)", "count")


def _check_count(orders: Orders) -> None:
    if orders.kind == "all" and (orders.movable or 0) > ALL_AT_MOST:
        raise Refused(all_refused(orders.movable, orders.at_least), "count")
    if orders.kind not in RANDOM_KINDS or orders.distinct is None:
        return
    if orders.count > orders.distinct:
        # "all" runs each order once, but moves the last token too: not a prefix's fix
        fix = (f"use a count of at most {orders.distinct:,}" if orders.kind == "prefix"
               else f"{argument('kind', 'all')} runs each once")
        one = orders.movable == 1
        what = (("token" if one else "tokens") + " before the last" if orders.kind == "prefix"
                else "movable token" if one else "movable tokens")
        raise Refused(f"{argument('count', orders.count)} asks for more orders than exist: "
                      f"{orders.movable} {what} {'has' if one else 'have'} "
                      f"{orders.distinct:,} ({fix})", "count")
