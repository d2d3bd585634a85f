"""A sweep's time, bounded before anything is built (models.limits.guard calls
``check_time`` with a sweep's guard.Orders and its model's layers and width): one rule
for every kind, its runs times the declared work of one run, at a measured pace."""
from __future__ import annotations

from dataclasses import replace

from ...errors import Refused, argument

RANDOM_KINDS = ("random", "prefix")          # the sweeps whose orders are drawn, counted
# A sweep's time, one rule for every kind: its runs times the work of one run of n
# tokens on L layers of width d, L·n·d·(n + 4d) (analysis.experiments.stage.forward_work
# per layer, times the width), at PACE a second (the built-in model, 4 × 64, measured on
# the project's 2-core machine shared: 5.5-5.9e9 at 30, 300 and 1,000 tokens); a sweep
# estimated over MOST_HOURS is refused before anything is built
PACE = 6e9
MOST_HOURS = 8


def run_work(layers: int, width: int, n: int) -> float:
    """The declared work of one run of ``n`` tokens (see PACE)."""
    return float(layers) * n * width * (n + 4 * width)


def hours_text(seconds: float) -> str:
    """2,000,000 s -> "about 556 hours"; 1,000 s -> "about 17 minutes"."""
    if seconds >= 36000:
        return f"about {seconds / 3600:,.0f} hours"
    if seconds >= 5400:
        return f"about {seconds / 3600:.1f} hours"
    return f"about {max(1, round(seconds / 60)):,} minutes"


def sweep_seconds(orders, layers: int, width: int, n: int) -> float:
    """A sweep's estimated seconds: its runs of ``n`` tokens at PACE."""
    return orders.runs * run_work(layers, width, n) / PACE


def check_time(orders, layers: int, width: int, n: int) -> None:
    """Refuse (reason "count") a sweep whose runs would take more than MOST_HOURS at
    PACE, whatever its kind, naming what fits: a smaller count, or a shorter text and
    the random count that fits."""
    seconds = sweep_seconds(orders, layers, width, n)
    if seconds <= MOST_HOURS * 3600:
        return
    one = run_work(layers, width, n) / PACE
    fit = int(MOST_HOURS * 3600 / one) // max(orders.texts, 1)
    pairs = " (every pair of tokens swapped, for its map)" if orders.kind == "swap" else ""
    hours = hours_text(seconds) if not orders.at_least else \
        "at least " + hours_text(seconds).removeprefix("about ")
    what = (f"would run {orders.fewest_runs}{orders.runs:,} orders{pairs} of {orders.fewest}{n:,} "
            f"tokens, {hours} "
            f"at the pace of a 2-core machine: a sweep may take at most {MOST_HOURS} hours")
    if orders.kind in RANDOM_KINDS:
        raise Refused(f"{argument('count', orders.count)} {what}: use a smaller count (at "
                      f"most {fit:,} fit) or a shorter text", "count")
    pinned = n - (orders.movable or n)
    shorter = next((m for m in range(orders.movable or n, 1, -1) if sweep_seconds(
        replace(orders, count=1, movable=m), layers, width, m + pinned)
        <= MOST_HOURS * 3600), None) if orders.kind == "swap" else None
    text = f"a text of at most {shorter + pinned:,} tokens" if shorter else "a shorter text"
    raise Refused(f"{argument('kind', orders.kind)} {what}: use {text}, or "
                  f"{argument('kind', 'random')} {argument('count', max(fit, 1))}", "count")
