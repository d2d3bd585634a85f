"""A swap sweep has two counts: every pair of tokens is swapped (its map; 44,850 at 300
tokens) and the neighbouring swaps make its table ("runs": 299). Its progress counted
"run 3 of 44,850" while its JSON said runs 299: progress, JSON and text now name the
pairs as pairs ("pair 3 of 44,850", "pairs_run": 44850, "of the 44,850 pairs run")."""
from __future__ import annotations

import json

import posviz
from posviz.api import steps
from posviz.cli import main

TEXT = "w0 w1 w2 w3 w4 w5 w6 w7 w8 w9"           # 45 pairs, 9 neighbouring swaps


class Heard:
    """runtime.run_lines.RunLines's stand-in: the unit it is given and the counts it hears."""
    units, counts = [], []

    def __init__(self, stream=None, unit="run", **_):
        Heard.units.append(unit)
        self.stream = stream            # (the sweep's first forward is told on it)

    def __call__(self, done, total):
        Heard.counts.append((done, total))

    def end(self):
        """(RunLines.end: a run's lines told again no more; this one tells none)"""


def test_a_swap_sweeps_progress_json_and_text_count_its_pairs_as_pairs(monkeypatch, capsys):
    monkeypatch.setattr(steps, "RunLines", Heard)
    result = posviz.sweep(TEXT, kind="swap", layers=1, progress=True)
    said = result.to_dict()
    assert (said["runs"], said["pairs_run"]) == (9, 45)
    assert Heard.units == ["pair"] and Heard.counts[-1] == (45, 45)
    Heard.units, Heard.counts = [], []
    assert main(["sweep", "--text", TEXT, "--kind", "swap", "--layers", "1", "--progress",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == said
    assert Heard.units == ["pair"] and Heard.counts[-1] == (45, 45)
    assert main(["sweep", "--text", TEXT, "--kind", "swap", "--layers", "1"]) == 0
    assert "9 neighbouring swaps (the table) of the 45 pairs run" in capsys.readouterr().out
    Heard.units = []
    posviz.sweep(TEXT, kind="random", count=3, layers=1, progress=True)
    assert Heard.units == ["run"] and "pairs_run" not in posviz.sweep(
        TEXT, count=3, layers=1).to_dict()
