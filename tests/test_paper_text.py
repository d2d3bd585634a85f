"""A paper check's text tables: a measure by layer is printed at one precision, so the
same value reads alike in each of its columns and in each of its tables."""
from __future__ import annotations

import re

from posviz.cli.paper import values_lines


def probe(first: float, rest: list[float]) -> list[dict]:
    return [{"layer": k, "r2": v} for k, v in enumerate([first, *rest])]


def test_one_value_reads_alike_in_the_quadratic_and_the_linear_tables():
    """haviv2022 printed R² at the embeddings as "-0.010" in the quadratic table and as
    "-9.98e-03" in the linear one: each column chose its format from its own values."""
    values = {"causal": probe(-0.01002, [0.356, 0.360, 0.369, 0.351]),
              "bidirectional": probe(-0.01002, [-0.064, -0.083, -0.078, -0.077]),
              "linear": {"causal": probe(-0.00998, [0.024, 0.039, 0.069, 0.033]),
                         "bidirectional": probe(-0.00998, [-0.032, -0.031, -0.027, -0.028])}}
    text = "\n".join(values_lines(values))
    rows = [line.split()[1:] for line in text.splitlines()
            if line.split() and line.split()[0] in ("causal", "bidirectional")]
    assert len(rows) == 4 and all(len(row) == 5 for row in rows), text
    assert {row[0] for row in rows} == {"-0.010"}, text
    for row in rows:                          # one format across the layers: 3 decimals
        assert all(re.fullmatch(r"-?\d\.\d{3}", cell) for cell in row), text

