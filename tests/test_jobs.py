"""The jobs and their runners: starting a session, evaluating, loading models.

The views are stood in for, so what the runner hands them can be checked.
"""
from __future__ import annotations

import queue
import sys

import numpy as np
import pytest
from conftest import CountingBackend

from posviz.document.spec import ModelSpec
from posviz.errors import Cancelled, PosvizInputError
from posviz.models.builtin.backend import BuiltinBackend
from posviz.models.config import ModelConfig, Positions
from posviz.runtime import scheduler as sched
from posviz.runtime.jobs import (EvaluationJob, EvaluationRunner, LoadJob, StartJob, ViewsJob,
                                 load_model)
from posviz.runtime.scheduler import Scheduler

WAIT = 30                    # seconds: a failsafe against hanging, never a measurement


@pytest.fixture
def done():
    return queue.Queue()


SMALL = ModelConfig(layers=2, heads=2, d_model=16)


def a_look(mode="reordered", levels=(0.0, 1.0)):
    from posviz.views.mosaic import MosaicLook
    return MosaicLook(mode, levels, np.arange(256, dtype=np.uint32) | np.uint32(0xFF000000))


def job_for(backend, text="a b c d", order=(3, 2, 1, 0), look=None, keep=None):
    look = a_look() if look is None else look
    return EvaluationJob(backend, backend.tokenize(text), np.array(order), Positions(), look,
                         keep)


def test_evaluation_job_gives_the_views_of_the_evaluation(views):
    backend = CountingBackend(SMALL)
    runner = EvaluationRunner()
    def stop():
        return False
    done = runner(job_for(backend), stop)
    ev = done.shown.evaluation
    assert ev.order.tolist() == [3, 2, 1, 0] and ev.seq.tokens == ("a", "b", "c", "d")
    assert done.shown.views == ("views of", (3, 2, 1, 0)) and done.ms >= 0
    (handed, look, tiles), = views.calls
    assert handed.comparison is ev.comparison and look == a_look()
    assert handed.run is not None and ev.run is None      # the views read it; the screen not
    assert set(tiles.tiles) == {"original", "reordered"}     # the look's, pooled as it ran
    from posviz.analysis.engine import Engine
    direct = Engine(BuiltinBackend(SMALL)).evaluate(ev.seq, ev.order, ev.positions)
    # the counting backend changes run, so it runs in slot order; the plain one in the
    # original tokens' frame (test_fast_path_matrix): the same numbers, rounding apart
    np.testing.assert_allclose(ev.comparison.token_change, direct.comparison.token_change,
                               rtol=1e-6)


def test_the_engine_is_kept_per_backend(views):
    backend, other = CountingBackend(SMALL), CountingBackend(SMALL)
    runner = EvaluationRunner()
    runner(job_for(backend))
    runner(job_for(backend, order=(1, 0, 2, 3)))
    assert backend.runs == [[0, 1, 2, 3], [3, 2, 1, 0], [1, 0, 2, 3]]   # reference once
    runner(job_for(other))
    assert other.runs == [[0, 1, 2, 3], [3, 2, 1, 0]]


def test_a_superseded_evaluation_stops(views):
    with pytest.raises(Cancelled):
        EvaluationRunner()(job_for(CountingBackend(SMALL)), lambda: True)


def test_evaluations_through_the_scheduler(views, done):
    backend = CountingBackend(SMALL)
    s = Scheduler(EvaluationRunner(), done.put, name="test-evaluate")
    s.submit(job_for(backend, order=(1, 0, 2, 3)))
    outcome = done.get(timeout=WAIT)
    assert outcome.result.shown.evaluation.order.tolist() == [1, 0, 2, 3]
    s.submit(EvaluationJob(backend, backend.tokenize("a b"), np.array([0, 0]), Positions()))
    failed = done.get(timeout=WAIT)
    assert failed.failed and "\n" not in failed.message
    assert isinstance(failed.error, PosvizInputError)
    s.shutdown(wait=True)


def test_start_builds_the_session_reversed_and_evaluates_it_early(views, monkeypatch):
    runner = EvaluationRunner()
    started = runner(StartJob("one two three", ModelSpec.builtin(SMALL), Positions()))
    s = started.session
    assert started.problem is None and s.tokens == ("one", "two", "three")
    assert s.order.tolist() == [2, 1, 0] and s.backend.config == SMALL
    from posviz.analysis.engine import Engine
    calls = []

    def again(*args, **kwargs):
        calls.append(args)
        raise RuntimeError("computed again")
    monkeypatch.setattr(Engine, "evaluate", again)
    look = a_look(s.selection.mosaic)                   # the mode pooled at start
    done = runner(EvaluationJob(s.backend, s.seq, s.order.copy(), s.positions, look))
    assert calls == []                              # computed at start already
    assert done.shown.evaluation.order.tolist() == [2, 1, 0]
    assert views.calls[-1][1] == look
    with pytest.raises(RuntimeError, match="again"):    # the second time: computed
        runner(EvaluationJob(s.backend, s.seq, s.order.copy(), s.positions))
    assert len(calls) == 1


def test_start_keeps_the_original_order_and_cuts_a_long_text():
    spec = ModelSpec.builtin(ModelConfig(layers=1, heads=2, d_model=16, pe="learned",
                                         max_len=3))
    started = EvaluationRunner()(StartJob("a b c d e", spec, Positions(), order="original"))
    assert started.session.tokens == ("a", "b", "c")
    assert started.session.order.tolist() == [0, 1, 2]


def test_start_falls_back_to_the_builtin_model_and_says_why(monkeypatch):
    from posviz.models import hf

    def missing(source, progress=None, **options):
        progress("reading config")
        raise PosvizInputError(f"no model at {source}")
    monkeypatch.setattr(hf, "load_backend", missing)
    steps = []
    started = EvaluationRunner()(StartJob("a b", ModelSpec.pretrained("/nowhere"),
                                          Positions(), progress=steps.append))
    assert started.problem == "no model at /nowhere" and steps == ["reading config"]
    assert isinstance(started.session.backend, BuiltinBackend)


@pytest.mark.parametrize("remembered, expected", [
    (ModelSpec.builtin(SMALL), SMALL),
    (ModelSpec.builtin(ModelConfig(heads=3, d_model=16)), ModelConfig()),   # cannot be built
    (ModelSpec.builtin(ModelConfig(pe="no such encoding")), ModelConfig()),
    (ModelSpec.builtin(), ModelConfig()),
])
def test_start_reads_a_remembered_spec(remembered, expected):
    started = EvaluationRunner()(StartJob("a b", remembered, Positions("token", 2)))
    assert started.problem is None and started.session.backend.config == expected
    assert started.session.positions == Positions("token", 2)


def test_start_reads_a_pretrained_spec_and_bad_positions(monkeypatch):
    from posviz.models import hf
    asked = []
    monkeypatch.setattr(hf, "load_backend",
                        lambda source, progress=None, **options: asked.append(source) or
                        BuiltinBackend(SMALL))
    spec = ModelSpec.pretrained("/models/x", "X")
    started = EvaluationRunner()(StartJob("a b", spec, Positions("token", 1)))
    assert asked == ["/models/x"] and started.problem is None
    assert started.session.positions == Positions("token", 1)
    with pytest.raises(ValueError):     # the caller validates them (the window does)
        EvaluationRunner()(StartJob("a b", spec, Positions("diagonal", -1)))


def test_importing_the_scheduler_imports_neither_qt_nor_torch():
    import subprocess
    code = ("import sys, posviz.runtime.scheduler, posviz.runtime.jobs\n"
            "print(sorted(m for m in ('torch', 'numpy', 'PySide6') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_load_model_builds_the_builtin_one():
    backend = load_model(LoadJob(ModelSpec.builtin(SMALL)))
    assert isinstance(backend, BuiltinBackend) and backend.config == SMALL
    with pytest.raises(PosvizInputError):
        load_model(LoadJob(ModelSpec.builtin(ModelConfig(heads=3, d_model=16))))


def test_a_superseded_load_runs_to_its_end_and_tells_no_progress(monkeypatch):
    from posviz.models import hf
    reached = []

    def fake(source, progress=None, **options):
        for step in ("reading config", "loading tokenizer", "loading weights"):
            progress(step)
            reached.append(step)
        return "backend"
    monkeypatch.setattr(hf, "load_backend", fake)
    told = []
    job = LoadJob(ModelSpec.pretrained("fake"), progress=told.append)
    assert load_model(job, lambda: False) == "backend" and told == reached
    reached.clear(), told.clear()
    stop = iter([False, True, True])
    assert load_model(job, lambda: next(stop)) == "backend"
    assert told == ["reading config"] and len(reached) == 3


def test_a_failed_load_names_the_model(done, monkeypatch):
    from posviz.models import hf

    def broken(source, progress=None, **options):
        raise OSError("disk on fire")
    monkeypatch.setattr(hf, "load_backend", broken)
    loads = Scheduler(load_model, done.put, name="test-load-fail", detach=True,
                      describe=lambda job, e: f"could not load {job.spec.name}: "
                                              f"{sched.one_line(e)}")
    loads.submit(LoadJob(ModelSpec.pretrained("fake", "A fake model")))
    assert done.get(timeout=WAIT).message == "could not load A fake model: disk on fire"
    loads.shutdown(wait=True)


def test_views_job_prepares_an_evaluation_again_in_another_look():
    """Only the views: the model does not run again, and a mosaic whose mode stays keeps
    its tiles (recoloured), while another mode is made anew."""
    from posviz.views.mosaic import MosaicLook

    table = np.arange(256, dtype=np.uint32) | np.uint32(0xFF000000)
    backend = CountingBackend(SMALL)
    runner = EvaluationRunner()
    first = runner(job_for(backend, look=MosaicLook("difference", (-0.3, 0.3), table)))
    runs = list(backend.runs)
    ev, shown_views = first.shown.evaluation, first.shown.views
    mosaic = shown_views.mosaic
    narrower = MosaicLook("difference", (-0.01, 0.01), table)
    again = runner(ViewsJob(ev, narrower, shown_views))
    assert backend.runs == runs and again.shown.evaluation is ev and again.ms >= 0
    assert again.shown.views.mosaic.look == narrower
    assert again.shown.views.mosaic.tiles is mosaic.tiles
    assert not np.array_equal(again.shown.views.mosaic.argb, mosaic.argb)
    original = MosaicLook("original", (0.0, 1.0), table)
    other = runner(ViewsJob(ev, original, shown_views)).shown.views.mosaic
    assert other.look == original and backend.runs == runs
    np.testing.assert_array_equal(other.tiles, ev.reference.attention)
    assert runner(ViewsJob(ev, None, shown_views)).shown.views.mosaic is None


def test_another_mode_of_maps_not_kept_whole_runs_the_order_again(monkeypatch):
    """A reorder pools only the mode on screen; another mode comes from the aligned maps
    kept whole, or (a long input's, not kept) from running the order again: the same
    tiles as pooling every mode at once."""
    from posviz.models import maps as layer_maps
    from posviz.views.pooling import MosaicTiles

    backend = CountingBackend(SMALL)
    runner = EvaluationRunner()
    text = " ".join("abcdefgh")
    whole = runner(job_for(backend, text, order=range(7, -1, -1), look=a_look("difference")))
    every = MosaicTiles.of(whole.shown.evaluation)
    assert set(whole.shown.views.tiles.tiles) == {"original", "difference"}
    runs = len(backend.runs)
    kept = runner(ViewsJob(whole.shown.evaluation, a_look(), whole.shown.views))
    assert len(backend.runs) == runs                            # from the kept maps
    np.testing.assert_array_equal(kept.shown.views.mosaic.tiles, every.tiles["reordered"])

    monkeypatch.setattr(layer_maps, "KEEP_ALL", 0)              # as for a long input
    first = runner(job_for(backend, text, order=range(7, -1, -1), look=a_look("difference"),
                           keep=(1, 0)))
    assert first.shown.evaluation.comparison.attention_aligned is None
    runs = len(backend.runs)
    other = runner(ViewsJob(first.shown.evaluation, a_look(), first.shown.views))
    assert len(backend.runs) == runs + 1                        # the order ran again
    assert other.shown.evaluation.kept[:2] == (1, 0)            # the same head kept
    np.testing.assert_array_equal(other.shown.views.mosaic.tiles, every.tiles["reordered"])


def arrays_from(root, leave=()) -> list[np.ndarray]:
    """Every numpy array reachable from ``root`` through attributes and containers, but
    those reachable from the objects ``leave``."""
    import gc
    import types

    def reachable(roots) -> dict[int, np.ndarray]:
        seen, found, stack = set(), {}, list(roots)
        while stack:
            obj = stack.pop()
            if id(obj) in seen or isinstance(obj, (type, types.ModuleType,
                                                   types.FunctionType, str, bytes)):
                continue
            seen.add(id(obj))
            if isinstance(obj, np.ndarray):
                found[id(obj)] = obj
            else:
                stack.extend(gc.get_referents(obj))
        return found
    left = reachable(leave)
    return [a for key, a in reachable([root]).items() if key not in left]


def test_a_long_input_shown_keeps_the_head_on_screen_and_no_run(monkeypatch):
    """What the window holds of a long input's evaluation between two orders (forced
    small): no (L+1, n, d) or (n, d) run of its own, and of the reordered maps only the
    kept head (n, n) that hover reads; the reference is the engine's (shared). Another
    look is made from the views shown, with the same figures."""
    from posviz.models import maps as layer_maps
    from posviz.views import head as head_view

    monkeypatch.setattr(layer_maps, "IN_MEMORY", 0)
    monkeypatch.setattr(layer_maps, "KEEP_ALL", 0)
    monkeypatch.setattr(head_view, "HEAD_SIDE", 16)            # the head's images pooled
    backend = CountingBackend(ModelConfig(layers=2, heads=3, d_model=12, mask="causal"))
    runner = EvaluationRunner()
    text = " ".join("abcdefghij" * 8)                          # past MOSAIC_TILE
    n = len(backend.tokenize(text))
    first = runner(job_for(backend, text, order=range(n - 1, -1, -1), keep=(1, 2)))
    ev = first.shown.evaluation
    assert ev.run is None and ev.kept[:2] == (1, 2)
    other = a_look("reordered", (0.0, 0.5))                     # other colours
    again = runner(ViewsJob(ev, other, first.shown.views, first.shown.model))
    assert again.shown.evaluation is ev and len(backend.runs) == 2    # no run again
    assert again.shown.views.mosaic.look == other
    for shown in (first.shown, again.shown):
        arrays = arrays_from(shown, leave=(ev.reference, ev.backend))
        big = [a for a in arrays if a.shape[-2:] in ((n, 12), (n, n))]
        assert len(big) == 1 and big[0] is ev.kept[2], [a.shape for a in big]
    for name in ("symmetry", "branch_norms"):
        before, after = getattr(first.shown.views, name), getattr(again.shown.views, name)
        assert before.keys() == after.keys()
        for key in before:
            np.testing.assert_array_equal(after[key], before[key])
