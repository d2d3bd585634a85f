"""A stage of a long run, told as it starts: its words, and its place among the run's
stages, so a listener can estimate the time left of the whole run from the stages done
(the window's Experiments tab does; a terminal prints the words)."""
from __future__ import annotations


class Stage(str):
    """The words of a stage ("held-out perplexity ... at 512 tokens (length 2 of 3)"),
    a str to every listener, with its place: stage ``number`` (from 1) of ``stages``
    (not str's own ``index`` and ``count``)."""

    number: int
    stages: int

    def __new__(cls, text: str, number: int, stages: int) -> "Stage":
        stage = super().__new__(cls, text)
        stage.number, stage.stages = number, stages
        return stage
