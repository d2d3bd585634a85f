"""posviz from Python: the functions the commands run, with the command line's checks.

    import posviz
    m = posviz.load("minilm")              # a bundled name, a folder, a .gguf, a hub name
    m = posviz.load(pe="rope", mask="causal", layers=4, seed=0)   # the built-in model
    r = m.compare("the cat sat on the mat", order=[5, 4, 3, 2, 1, 0])   # posviz report
    r.layers                               # the per-layer rows of `posviz report --json`
    r.attention(layer=1, head=0).difference        # (n, n) numpy array
    r.figure("symmetry").save("symmetry.pdf")      # a figure of the window, off screen
    s = posviz.sweep(posviz.read_texts("sentences.txt"), kind="random", count=64)
    p = posviz.probe(pe="none", mask="causal")      # posviz probe
    c = posviz.paper("alibi-slopes")                # posviz paper
    e = posviz.compare_encodings("the cat sat on the mat", encodings=["none", "rope"])
    x = posviz.extend(factors=(1, 2, 4, 8))         # posviz extend: the lab
    u = posviz.order_use(pe="rope")                 # posviz order-use: a trained model's
    s.figure()                                      # each draws its command's figure

The command line parses its options into these calls and prints what they return, so
every result's ``to_dict()`` is what its command's ``--json`` prints (to the type).
Before anything large is loaded or allocated each call passes the command line's guard
(models.limits.guard: memory, tokens against the model's positions, the device, counts),
which raises errors.Refused, a posviz.errors.PosvizInputError; every bad input raises
one, in one line naming the arguments as Python writes them. Importing this package
imports neither torch nor Qt: a model imports torch, a figure Qt. Imported before
torch, it puts torch's idle threads asleep as a command does (OMP_WAIT_POLICY=PASSIVE
unless the environment sets it; posviz.boot): spinning, they starved each next op on a
busy machine (a probe of the built-in model of width 384: 195 s from Python, 23 s on
the command line, on 2 shared cores).
"""
import os

from .experiments import compare_encodings, extend, order_use, paper, probe, sweep
from .training import train
from .model import Model, builtin_config, load, load_session, read_texts
from .report import Report
from .steps import StepPrinter

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")   # read once, when torch loads

# a new command's function joins here and in posviz.__all__ (see api.experiments)
__all__ = ["Model", "Report", "StepPrinter", "load", "load_session", "read_texts",
           "builtin_config", "sweep", "probe", "paper", "compare_encodings", "train",
           "extend", "order_use"]
