"""The scheduler without Qt: newest wins, stale results dropped, errors told, shutdown.

The worker is steered with events, never with sleeps: a job waits on a gate until the
test opens it, and the test waits for what the worker delivers.
"""
from __future__ import annotations

import queue
import sys
import threading
import types
from dataclasses import dataclass

import numpy as np
import pytest

import posviz.core
from posviz.core import scheduler as sched
from posviz.core.backend import BuiltinBackend
from posviz.core.config import ModelConfig, Positions
from posviz.core.document import ModelSpec
from posviz.core.errors import Cancelled, PosvizInputError
from posviz.core.jobs import EvaluationJob, EvaluationRunner, LoadJob, StartJob, load_model
from posviz.core.scheduler import Scheduler, trim_heap

WAIT = 30                    # seconds: a failsafe against hanging, never a measurement


@dataclass(frozen=True)
class Job:
    name: str
    gate: threading.Event | None = None      # the job waits here once it runs
    error: Exception | None = None
    stops: bool = False                       # raise Cancelled when superseded


class Worker:
    """The run function: records what ran and what should_stop said, obeys the job."""

    def __init__(self):
        self.ran, self.started = [], queue.Queue()
        self.stop_seen: dict[str, list[bool]] = {}
        self.threads: dict[str, threading.Thread] = {}

    def __call__(self, job: Job, should_stop):
        self.ran.append(job.name)
        self.threads[job.name] = threading.current_thread()
        seen = self.stop_seen.setdefault(job.name, [])
        seen.append(should_stop())
        self.started.put(job.name)
        if job.gate is not None:
            assert job.gate.wait(WAIT)
        seen.append(should_stop())
        if job.stops and should_stop():
            raise Cancelled(job.name)
        if job.error is not None:
            raise job.error
        return f"result of {job.name}"


@pytest.fixture
def worker():
    return Worker()


@pytest.fixture
def done():
    return queue.Queue()


@pytest.fixture
def scheduler(worker, done):
    s = Scheduler(worker, done.put, name="test-compute")
    yield s
    s.shutdown(wait=True)


def nothing_more(q: queue.Queue) -> bool:
    return q.empty()


def test_a_job_runs_and_its_result_is_delivered(scheduler, done):
    future = scheduler.submit(Job("a"))
    outcome = done.get(timeout=WAIT)
    assert future.result(WAIT) == "result of a"
    assert outcome.result == "result of a" and not outcome.failed
    assert outcome.generation == scheduler.generation == 1 and outcome.job.name == "a"


def test_the_newest_waiting_job_wins(scheduler, worker, done):
    gate = threading.Event()
    first = scheduler.submit(Job("first", gate))
    assert worker.started.get(timeout=WAIT) == "first"
    skipped = [scheduler.submit(Job(f"skipped {k}")) for k in range(3)]
    newest = scheduler.submit(Job("newest"))
    assert all(f.cancelled() for f in skipped)
    gate.set()
    outcome = done.get(timeout=WAIT)
    assert outcome.job.name == "newest" and outcome.generation == 5
    assert newest.result(WAIT) == "result of newest"
    assert worker.ran == ["first", "newest"]
    # the superseded first job finished anyway: its future has its result, the
    # callback never heard of it
    assert first.result(WAIT) == "result of first"
    assert nothing_more(done)


def test_should_stop_turns_true_once_a_newer_job_is_submitted(scheduler, worker, done):
    gate = threading.Event()
    first = scheduler.submit(Job("first", gate, stops=True))
    assert worker.started.get(timeout=WAIT) == "first"
    scheduler.submit(Job("second"))
    gate.set()
    assert done.get(timeout=WAIT).job.name == "second"
    assert worker.stop_seen["first"] == [False, True]
    assert worker.stop_seen["second"] == [False, False]
    with pytest.raises(Cancelled):
        first.result(WAIT)
    assert nothing_more(done)


def test_a_stale_failure_is_not_told(scheduler, worker, done):
    gate = threading.Event()
    scheduler.submit(Job("bad", gate, error=RuntimeError("boom")))
    assert worker.started.get(timeout=WAIT) == "bad"
    scheduler.submit(Job("good"))
    gate.set()
    assert done.get(timeout=WAIT).job.name == "good"
    assert nothing_more(done)


def test_bad_input_is_told_in_its_own_line(scheduler, done):
    future = scheduler.submit(Job("bad", error=PosvizInputError("too many tokens\ndetails")))
    outcome = done.get(timeout=WAIT)
    assert outcome.failed and outcome.message == "too many tokens"
    assert isinstance(outcome.error, PosvizInputError)
    assert isinstance(future.exception(WAIT), PosvizInputError)


def test_an_unexpected_error_is_told_as_a_failure(scheduler, done, capsys):
    scheduler.submit(Job("broken", error=RuntimeError("index out of range\nmore")))
    outcome = done.get(timeout=WAIT)
    assert outcome.failed and outcome.message == "computation failed: index out of range"
    assert "RuntimeError" in capsys.readouterr().err          # the traceback, for a report
    scheduler.submit(Job("after"))                             # the worker lives on
    assert done.get(timeout=WAIT).result == "result of after"


def test_the_callback_sees_only_the_current_generation(worker):
    seen = []
    got = threading.Event()
    s = Scheduler(worker, lambda o: (seen.append((o.generation, s.is_current(o.generation))),
                                     got.set()), name="test-current")
    s.submit(Job("a"))
    assert got.wait(WAIT)
    s.shutdown(wait=True)
    assert seen == [(1, True)]


def test_a_broken_callback_does_not_kill_the_worker(worker, done, capsys):
    calls = []

    def callback(outcome):
        calls.append(outcome.job.name)
        if outcome.job.name == "a":
            raise ValueError("receiver broke")
        done.put(outcome)
    s = Scheduler(worker, callback, name="test-broken")
    s.submit(Job("a"))
    assert worker.started.get(timeout=WAIT) == "a"
    s.submit(Job("b"))
    assert done.get(timeout=WAIT).job.name == "b"
    s.shutdown(wait=True)
    assert "receiver broke" in capsys.readouterr().err


def test_cancel_drops_the_waiting_job_and_the_running_result(scheduler, worker, done):
    gate = threading.Event()
    running = scheduler.submit(Job("running", gate))
    assert worker.started.get(timeout=WAIT) == "running"
    waiting = scheduler.submit(Job("waiting"))
    scheduler.cancel()
    assert waiting.cancelled()
    assert not scheduler.is_current(2)
    gate.set()
    assert running.result(WAIT) == "result of running"
    scheduler.submit(Job("next"))
    assert done.get(timeout=WAIT).job.name == "next"
    assert worker.ran == ["running", "next"] and worker.stop_seen["running"] == [False, True]
    assert nothing_more(done)


def test_a_detached_job_does_not_hold_the_next_one(worker, done):
    """A model load cannot be stopped: the next load gets a fresh thread at once."""
    loads = Scheduler(worker, done.put, name="test-load", detach=True)
    stuck = threading.Event()
    first = loads.submit(Job("slow load", stuck))
    assert worker.started.get(timeout=WAIT) == "slow load"
    loads.cancel()
    loads.submit(Job("next load"))
    outcome = done.get(timeout=WAIT)                # while the slow load is still stuck
    assert outcome.job.name == "next load" and not first.done()
    assert worker.threads["next load"] is not worker.threads["slow load"]
    stuck.set()
    assert first.result(WAIT) == "result of slow load"
    worker.threads["slow load"].join(WAIT)          # its thread ends once it is done
    assert not worker.threads["slow load"].is_alive()
    assert nothing_more(done)                       # and its result was dropped
    loads.submit(Job("third load"))
    assert done.get(timeout=WAIT).job.name == "third load"
    loads.shutdown(wait=True)


def test_a_detached_job_cancelled_at_once_still_runs_to_its_end(worker, done):
    loads = Scheduler(worker, done.put, name="test-load-at-once", detach=True)
    gate = threading.Event()
    future = loads.submit(Job("load", gate))
    loads.cancel()
    assert future.running()                         # it started with its submit
    gate.set()
    assert future.result(WAIT) == "result of load"
    worker.threads["load"].join(WAIT)
    assert nothing_more(done) and worker.stop_seen["load"][-1] is True
    loads.shutdown(wait=True)


def test_shutdown_stops_the_running_job_and_cancels_the_waiting_one(worker, done):
    s = Scheduler(worker, done.put, name="test-shutdown")
    gate = threading.Event()
    running = s.submit(Job("running", gate, stops=True))
    assert worker.started.get(timeout=WAIT) == "running"
    waiting = s.submit(Job("waiting"))
    s.shutdown()
    assert waiting.cancelled()
    gate.set()
    with pytest.raises(Cancelled):
        running.result(WAIT)
    s.shutdown(wait=True)                           # twice is harmless; joins the worker
    assert not worker.threads["running"].is_alive()
    assert nothing_more(done) and worker.ran == ["running"]
    with pytest.raises(RuntimeError):
        s.submit(Job("late"))


def test_no_thread_before_the_first_job(worker):
    s = Scheduler(worker, name="test-lazy")
    assert not any(t.name == "test-lazy" for t in threading.enumerate())
    assert s.submit(Job("a")).result(WAIT) == "result of a"
    s.shutdown(wait=True)


# -- the runners --------------------------------------------------------------------
@pytest.fixture
def views(monkeypatch):
    """Stands in for core.views: records what the runner hands it."""
    fake = types.ModuleType("posviz.core.views")

    @dataclass(frozen=True)
    class Shown:
        evaluation: object
        views: object

    def build_views(ev, look, should_stop=None):
        fake.calls.append((ev, look, should_stop))
        if should_stop is not None and should_stop():
            raise Cancelled("views")
        return ("views of", tuple(ev.order))
    fake.Shown, fake.build_views, fake.calls = Shown, build_views, []
    monkeypatch.setitem(sys.modules, "posviz.core.views", fake)
    monkeypatch.setattr(posviz.core, "views", fake, raising=False)
    return fake


class CountingBackend(BuiltinBackend):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.runs = []

    def run(self, seq, order, position_ids, should_stop=None):
        self.runs.append(order.tolist())
        return super().run(seq, order, position_ids, should_stop)


SMALL = ModelConfig(layers=2, heads=2, d_model=16)


def job_for(backend, text="a b c d", order=(3, 2, 1, 0), look="a look"):
    return EvaluationJob(backend, backend.tokenize(text), np.array(order), Positions(), look)


def test_evaluation_job_gives_the_views_of_the_evaluation(views):
    backend = CountingBackend(SMALL)
    runner = EvaluationRunner()
    def stop():
        return False
    done = runner(job_for(backend), stop)
    ev = done.shown.evaluation
    assert ev.order.tolist() == [3, 2, 1, 0] and ev.seq.tokens == ("a", "b", "c", "d")
    assert done.shown.views == ("views of", (3, 2, 1, 0)) and done.ms >= 0
    assert views.calls == [(ev, "a look", stop)]
    from posviz.core.engine import Engine
    direct = Engine(BuiltinBackend(SMALL)).evaluate(ev.seq, ev.order, ev.positions)
    np.testing.assert_allclose(ev.comparison.token_change, direct.comparison.token_change)


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
    from posviz.core.engine import Engine
    calls = []

    def again(*args, **kwargs):
        calls.append(args)
        raise RuntimeError("computed again")
    monkeypatch.setattr(Engine, "evaluate", again)
    done = runner(EvaluationJob(s.backend, s.seq, s.order.copy(), s.positions, "look"))
    assert calls == []                              # computed at start already
    assert done.shown.evaluation.order.tolist() == [2, 1, 0]
    assert views.calls[-1][1] == "look"
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
    from posviz.core import hf

    def missing(source, progress=None):
        progress("reading config")
        raise PosvizInputError(f"no model at {source}")
    monkeypatch.setattr(hf, "load_backend", missing)
    steps = []
    started = EvaluationRunner()(StartJob("a b", ModelSpec.pretrained("/nowhere"),
                                          Positions(), progress=steps.append))
    assert started.problem == "no model at /nowhere" and steps == ["reading config"]
    assert isinstance(started.session.backend, BuiltinBackend)


@pytest.mark.parametrize("remembered, expected", [
    ({"kind": "builtin", "config": SMALL.to_dict()}, SMALL),
    (SMALL.to_dict(), SMALL),                                   # a bare config, as settings
    ({"heads": 3, "d_model": 16}, ModelConfig()),               # no longer valid: default
    ({"no such field": 1}, ModelConfig()),
    (None, ModelConfig()),
])
def test_start_reads_a_remembered_spec(remembered, expected):
    started = EvaluationRunner()(StartJob("a b", remembered, ("token", 2)))
    assert started.problem is None and started.session.backend.config == expected
    assert started.session.positions == Positions("token", 2)


def test_start_reads_a_pretrained_spec_and_bad_positions(monkeypatch):
    from posviz.core import hf
    asked = []
    monkeypatch.setattr(hf, "load_backend",
                        lambda source, progress=None: asked.append(source) or
                        BuiltinBackend(SMALL))
    spec = {"kind": "pretrained", "source": "/models/x", "label": "X"}
    started = EvaluationRunner()(StartJob("a b", spec, ("diagonal", -1)))
    assert asked == ["/models/x"] and started.problem is None
    assert started.session.positions == Positions()


def test_importing_the_scheduler_imports_neither_qt_nor_torch():
    import subprocess
    code = ("import sys, posviz.core.scheduler, posviz.core.jobs\n"
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
    from posviz.core import hf
    reached = []

    def fake(source, progress=None):
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
    from posviz.core import hf

    def broken(source, progress=None):
        raise OSError("disk on fire")
    monkeypatch.setattr(hf, "load_backend", broken)
    loads = Scheduler(load_model, done.put, name="test-load-fail", detach=True,
                      describe=lambda job, e: f"could not load {job.spec.name}: "
                                              f"{sched.one_line(e)}")
    loads.submit(LoadJob(ModelSpec.pretrained("fake", "A fake model")))
    assert done.get(timeout=WAIT).message == "could not load A fake model: disk on fire"
    loads.shutdown(wait=True)


# -- giving memory back -------------------------------------------------------------
def test_trim_heap_only_after_large_evaluations_and_can_be_turned_off(monkeypatch):
    assert trim_heap(sched.TRIM_FROM - 1) is False
    monkeypatch.setenv("POSVIZ_WORKAROUNDS_OFF", "malloc-trim")
    assert trim_heap(sched.TRIM_FROM) is False
    monkeypatch.delenv("POSVIZ_WORKAROUNDS_OFF")
    assert trim_heap(sched.TRIM_FROM) is (sched._malloc_trim() is not None)


def test_trim_heap_runs_where_glibc_is():
    import platform
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        pytest.skip("glibc only")
    assert sched._malloc_trim() is not None
