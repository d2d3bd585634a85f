"""The README's recipes hold: a throwaway positional encoding and a throwaway figure,
written at run time into a copy of the package exactly where the recipes say (a module
each, listed in its registry), run through the figures, export, the trained checkpoints
and the Python API in a process of their own; and the README's lists of encodings,
families and figures are the registries'."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")

ENCODING = '''"""A throwaway encoding: a fixed penalty -log(1 + |i - j|) on every score."""
from __future__ import annotations

from .base import PositionalEncoding


class LogBias(PositionalEncoding):
    kind = "logbias"
    title = "log-distance bias (throwaway)"
    acts = "bias"
    summary = "a fixed penalty of the log of the distance on the attention scores"
    where = "adds a log-distance penalty to the attention scores"
    short = "log bias"

    def __init__(self, n_heads: int, scale: float = 1.0):
        super().__init__(scale)
        self.n_heads = n_heads

    @classmethod
    def build(cls, *, d_model, n_heads, scale=1.0, seed=0, max_len=1024):
        return cls(n_heads, scale)

    def bias(self, position_ids, causal):
        import torch

        pos = position_ids.to(torch.float64)
        distance = (pos[:, None] - pos[None, :]).abs()               # (n, n)
        return (-self.scale * torch.log1p(distance)).expand(self.n_heads, -1, -1).clone()
'''

FIGURE = '''"""A throwaway figure: the mean-pooled output's change per layer."""
from __future__ import annotations

import numpy as np

from . import style
from .base import Figure
from .layer_axis import LAYER_AXIS
from .tabs import TOKENS


class PooledFigure(Figure):
    name = "pooled"
    title = "Pooled output change"
    tab = TOKENS
    row = 2
    dims = ("layer",)
    guide = "‖mean H′ − mean H‖ / ‖mean H‖ at each layer."

    def __init__(self, parent=None):
        super().__init__(parent)
        self.plot = self.canvas.addPlot(row=0, col=0)
        style.style_plot(self.plot, "", "pooled change", LAYER_AXIS)
        self.curve = self.plot.plot([], [])

    def update_from(self, shown, layer, head):
        change = shown.evaluation.comparison.pooled_change                  # (L+1,)
        self.curve.setData(np.arange(len(change)), change)
        self.data = {"pooled_change": change.copy()}
'''

# what runs in the copy: the API, its figures, export, the trained checkpoints
SCRIPT = r'''
import contextlib, io, json, sys
from pathlib import Path
import posviz
from posviz.cli import main
from posviz.gui.plots import FIGURES
from posviz.models.training.checkpoint import zoo
from posviz.models.encodings import KINDS

out = Path(sys.argv[1])
TEXT = "the cat sat on the mat"
small = dict(layers=2, heads=2, d_model=16, seed=0)
facts = {"kinds": list(KINDS), "figures": list(FIGURES)}
m = posviz.load(pe="logbias", **small)
r = m.compare(TEXT, order=[5, 4, 3, 2, 1, 0])
facts["config"] = r.to_dict()["config"]["pe"]
facts["layers"] = len(r.layers)
facts["pooled"] = [row["pooled_change"] for row in r.layers]
figure = r.figure("pooled")
facts["figure"] = figure.data["pooled_change"].tolist()
facts["saved"] = [figure.save(out / f"pooled.{fmt}").stat().st_size
                  for fmt in ("png", "svg", "pdf", "csv")]
facts["profile"] = r.figure("relative_profile").data is not None
facts["sweep"] = m.sweep([TEXT], kind="reverse").to_dict()["runs"]
def cli(*argv):
    stdout, stderr = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            status = main(list(argv))
        except SystemExit as exit:
            status = exit.code
    return status, stdout.getvalue(), stderr.getvalue()
status, printed, _ = cli("export", "--pe", "logbias", "--layers", "2", "--heads", "2",
                         "--d-model", "16", "--text", TEXT, "--format", "png",
                         "--out", str(out / "export"))
facts["export"] = [status, sorted(Path(p).name for p in printed.split())]
facts["help"] = "logbias" in cli("report", "-h")[1]
facts["trained"] = [c.config.pe for c in zoo()]
status, _, told = cli("report", "--weights", "trained", "--pe", "logbias", "--mask",
                      "causal", "--text", TEXT)
facts["refused"] = [status, told.strip()]
print(json.dumps(facts))
'''


def follow_the_recipes(root: Path) -> Path:
    """A copy of the package with the throwaway encoding and figure added where the
    README's recipes say; the resources beside it, as in a checkout."""
    package = root / "posviz"
    shutil.copytree(ROOT / "posviz", package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    (root / "resources").symlink_to(ROOT / "resources")
    encodings = package / "models" / "encodings"
    (encodings / "logbias.py").write_text(ENCODING, encoding="utf-8")
    listed(encodings / "__init__.py", "T5RelativeBias)}", "T5RelativeBias, LogBias)}",
           "from .logbias import LogBias\n")
    plots = package / "gui" / "plots"
    (plots / "pooled.py").write_text(FIGURE, encoding="utf-8")
    listed(plots / "figures.py", "TokenChangeFigure, BranchNormsFigure,",
           "TokenChangeFigure, BranchNormsFigure, PooledFigure,",
           "from .pooled import PooledFigure\n")
    return package


def listed(path: Path, entry: str, with_ours: str, import_line: str) -> None:
    """Add a class to a registry's tuple and import it, as the recipe says."""
    text = path.read_text(encoding="utf-8")
    assert text.count(entry) == 1, f"{path.name} no longer lists {entry!r}"
    text = text.replace(entry, with_ours)
    first = text.index("\nfrom .")
    path.write_text(text[:first + 1] + import_line + text[first + 1:], encoding="utf-8")


def test_a_throwaway_encoding_and_figure_run_everywhere_the_recipes_promise(tmp_path):
    pytest.importorskip("PySide6")
    follow_the_recipes(tmp_path / "tree")
    out = tmp_path / "out"
    out.mkdir()
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "tree"), "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run([sys.executable, "-c", SCRIPT, str(out)], capture_output=True,
                            text=True, env=env, cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    facts = json.loads(result.stdout.splitlines()[-1])
    # the registries list both; the options, the model and the API take the encoding
    assert facts["kinds"][-1] == "logbias" and "pooled" in facts["figures"]
    assert facts["config"] == "logbias" and facts["help"]
    assert facts["layers"] == 3 and facts["figure"] == pytest.approx(facts["pooled"],
                                                                     nan_ok=True)
    assert all(size > 0 for size in facts["saved"]) and facts["profile"]
    assert facts["sweep"] == 1
    # export writes the new figure with the others, the encoding's positions figures too
    status, written = facts["export"]
    assert status == 0 and {"pooled.png", "pooled.csv", "relative_profile.png"} <= set(
        written)
    # the trained kinds stay those shipped; the new one is refused in one line naming them
    from posviz.models.training.checkpoint import zoo
    assert facts["trained"] == [c.config.pe for c in zoo()]
    status, told = facts["refused"]
    assert status == 2 and "\n" not in told and "no trained checkpoint" in told
    if facts["trained"]:
        assert facts["trained"][0] in told


# -- the README's lists against the registries ----------------------------------------------
def test_the_readme_names_every_encoding():
    from posviz.models.encodings import ENCODINGS
    first = " ".join(README[:README.index("![posviz main window]")].split())
    listed_ = re.search(r"Switch the positional encoding \(([^)]*)\)", first).group(1)
    assert listed_.split(", ") == [encoding.short for encoding in ENCODINGS.values()]


def test_the_readme_table_lists_every_family():
    from posviz.models.hf.families import FAMILIES
    table = README[README.index("| family (`model_type`) |"):]
    table = table[:table.index("\n\n")]
    named = set(re.findall(r"`(\w[\w-]*)`", table)) - {"model_type"}
    kin = re.search(r"\| Llama, Mistral, Qwen2, Phi-3, Gemma \|", table)
    for family in FAMILIES:
        for model_type in family.model_types:
            shown = model_type in named or (kin and family.name == "llama") or (
                model_type == "xlm-roberta")                # RoBERTa's own row
            assert shown, f"the README's table of families does not name {model_type}"
