"""The scheduler without Qt: newest wins, stale results dropped, errors told, shutdown.

The worker is steered with events, never with sleeps: a job waits on a gate until the
test opens it, and the test waits for what the worker delivers.
"""
from __future__ import annotations

import queue
import sys
import threading
from dataclasses import dataclass

import pytest

from posviz import boot as sched
from posviz.boot import trim_heap
from posviz.errors import Cancelled, PosvizInputError
from posviz.runtime.scheduler import Scheduler

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


def test_a_worker_that_ends_when_idle_ends_after_each_burst_and_loses_no_job(worker, done):
    """Its thread (and the OpenMP threads torch gave it) is gone once no job waits; a job
    submitted while the last one runs still runs on it, a later one on a new thread."""
    s = Scheduler(worker, done.put, name="test-idle", ends_when_idle=True)
    gate = threading.Event()
    first = s.submit(Job("first", gate))
    assert worker.started.get(timeout=WAIT) == "first"
    s.submit(Job("queued"))                         # while "first" runs
    gate.set()
    assert first.result(WAIT) == "result of first"
    assert done.get(timeout=WAIT).job.name == "queued"       # the newest is told
    assert worker.threads["queued"] is worker.threads["first"]
    worker.threads["first"].join(WAIT)
    assert not worker.threads["first"].is_alive()  # no job waits: it ended
    assert s.submit(Job("later")).result(WAIT) == "result of later"
    assert worker.threads["later"] is not worker.threads["first"]
    worker.threads["later"].join(WAIT)
    assert not worker.threads["later"].is_alive()
    for i in range(50):                             # a submit racing the thread's end
        assert s.submit(Job(f"race {i}")).result(WAIT) == f"result of race {i}"
    s.shutdown(wait=True)


def test_no_thread_before_the_first_job(worker):
    s = Scheduler(worker, name="test-lazy")
    assert not any(t.name == "test-lazy" for t in threading.enumerate())
    assert s.submit(Job("a")).result(WAIT) == "result of a"
    s.shutdown(wait=True)


# -- synchronous, for tests ----------------------------------------------------------
def test_inside_force_sync_a_job_runs_in_submit_on_the_calling_thread(scheduler, worker,
                                                                      done):
    with scheduler.force_sync():
        future = scheduler.submit(Job("a"))
        assert future.done() and future.result() == "result of a"
        assert done.get_nowait().result == "result of a"       # told before it returned
        assert worker.threads["a"] is threading.current_thread()
        failed = scheduler.submit(Job("bad", error=PosvizInputError("too long")))
        assert failed.done() and done.get_nowait().message == "too long"
    assert not any(t.name == "test-compute" for t in threading.enumerate())
    scheduler.submit(Job("after"))                  # outside: on a worker again
    assert done.get(timeout=WAIT).result == "result of after"
    assert worker.threads["after"] is not threading.current_thread()


def test_force_sync_waits_for_the_superseded_job_and_tells_only_its_own(scheduler, worker,
                                                                        done):
    """A job the worker runs is asked to stop and has stopped before the synchronous one
    runs (never two at once); its result is never told."""
    gate = threading.Event()
    running = scheduler.submit(Job("running", gate, stops=True))
    assert worker.started.get(timeout=WAIT) == "running"
    threading.Timer(0.2, gate.set).start()          # it stops once it looks again
    with scheduler.force_sync():
        assert scheduler.submit(Job("newest")).result() == "result of newest"
    assert running.done() and isinstance(running.exception(), Cancelled)
    assert worker.stop_seen["running"] == [False, True]
    assert done.get_nowait().job.name == "newest" and nothing_more(done)


def test_force_sync_runs_a_detached_job_in_submit_too(worker, done):
    loads = Scheduler(worker, done.put, name="test-load-sync", detach=True)
    with loads.force_sync():
        assert loads.submit(Job("load")).result() == "result of load"
    assert worker.threads["load"] is threading.current_thread()
    assert done.get_nowait().job.name == "load"
    loads.shutdown(wait=True)


# -- giving memory back -------------------------------------------------------------
def test_trim_heap_only_after_large_evaluations_and_can_be_turned_off(monkeypatch):
    assert trim_heap(sched.TRIM_FROM - 1) is False
    monkeypatch.setenv("POSVIZ_WORKAROUNDS_OFF", "malloc-trim")
    assert trim_heap(sched.TRIM_FROM) is False
    monkeypatch.delenv("POSVIZ_WORKAROUNDS_OFF")
    assert trim_heap(sched.TRIM_FROM) is (sched._glibc("malloc_trim") is not None)


def test_trim_heap_runs_where_glibc_is():
    import platform
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        pytest.skip("glibc only")
    assert sched._glibc("malloc_trim") is not None


HEAP_PROBE = """
import ctypes, sys
from posviz.boot import keep_heap_pages
from posviz.models.hooks import Recorder
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = libc.sbrk.restype = ctypes.c_void_p
libc.malloc.argtypes, libc.free.argtypes = [ctypes.c_size_t], [ctypes.c_void_p]
kept = keep_heap_pages()
block = libc.malloc(8 << 20)          # the first block of 8 MB: below the heap's end?
print(kept, block < libc.sbrk(0))
Recorder(trim=True)                   # a long input's forward: its blocks mapped
print(libc.malloc(8 << 20) < libc.sbrk(0))
Recorder()                            # a short one's from the heap again
print(libc.malloc(8 << 20) < libc.sbrk(0))
"""


def test_keep_heap_pages_serves_large_blocks_from_the_heap_but_a_long_forwards_not():
    import os
    import platform
    import subprocess
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        pytest.skip("glibc only")

    def probe(**env):
        out = subprocess.run([sys.executable, "-c", HEAP_PROBE], capture_output=True,
                             text=True, env={**os.environ, **env}, check=True)
        return out.stdout.split()

    assert probe() == ["True", "True", "False", "True"]
    # glibc's default maps a block of 8 MB on fresh pages of its own, a forward's too
    assert probe(POSVIZ_WORKAROUNDS_OFF="malloc-thresholds") == ["False"] * 4


def test_a_superseded_job_lets_go_of_what_its_frames_held(done):
    """A cancelled forward's tensors go when it stops, not at the next collection: the
    future keeps the Cancelled without the traceback whose frames hold them."""
    import gc
    import weakref

    class Tensors:                          # stands for a layer's maps
        pass

    held, gate, started = [], threading.Event(), threading.Event()

    def run(job, should_stop):
        tensors = Tensors()
        held.append(weakref.ref(tensors))
        if job == "first":
            started.set()
            assert gate.wait(WAIT)
            if should_stop():
                raise Cancelled("superseded")
        return job

    s = Scheduler(run, done.put, name="test-frees")
    gc.disable()
    try:
        first = s.submit("first")
        assert started.wait(WAIT)
        s.submit("second")
        gate.set()
        assert done.get(timeout=WAIT).job == "second"
        with pytest.raises(Cancelled):
            first.result(WAIT)
        assert held[0]() is None            # no collection ran: nothing held it
    finally:
        gc.enable()
        s.shutdown(wait=True)
