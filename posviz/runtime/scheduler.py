"""Computing off the GUI thread: one worker, the newest request wins, stale results dropped.

A ``Scheduler`` runs typed jobs (frozen dataclasses) on one worker thread, in the manner
of napari's layer slicer. Each ``submit`` returns a ``concurrent.futures.Future`` and
bumps a generation number. Only one job waits at a time: a newer submit cancels the
waiting one, so the worker always takes the newest. A running job is handed
``should_stop()``, which turns True as soon as a newer job is submitted (or on
``cancel``/``shutdown``); it may then raise ``errors.Cancelled`` (the engine does between
layers), so the newest request never waits for a whole superseded one. The ``done``
callback receives an ``Outcome`` only for the current generation: a stale result is never
delivered. A failure is delivered as an Outcome with a one-line ``message``.

With ``detach`` (model loads, which cannot be stopped) each job instead runs at once on a
thread of its own, and superseding it only drops its result.

Inside ``force_sync()`` (tests that wait only for a result, as napari's
``_LayerSlicer.force_sync``) a submit runs its job on the calling thread and delivers
its outcome before it returns.

``done`` runs on the worker thread. A receiver on another thread (the GUI) must check
``is_current(outcome.generation)`` again when the outcome arrives there: a newer request
may have been made while it travelled.

The jobs this application runs, and what runs them, are in ``runtime.jobs``. Nothing
here imports Qt, torch or numpy.
"""
from __future__ import annotations

import threading
import traceback
from concurrent.futures import Future
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import Cancelled, PosvizInputError, one_line

__all__ = ["Outcome", "Scheduler", "describe_failure"]

ShouldStop = Callable[[], bool]


def describe_failure(job, error: BaseException) -> str:
    """One line for the user: bad input as it reads, anything else as a failure."""
    if isinstance(error, PosvizInputError):
        return one_line(error)
    return f"computation failed: {one_line(error)}"


@dataclass(frozen=True)
class Outcome:
    """What a job of the current generation came to: a result, or an error told in one line."""

    generation: int
    job: Any
    result: Any = None
    error: BaseException | None = None
    message: str = ""                   # for the user, when error is set

    @property
    def failed(self) -> bool:
        return self.error is not None


class Scheduler:
    """One worker thread running ``run(job, should_stop)``; the newest job wins.

    ``detach``: for work that cannot be stopped (a model load). Each job then runs at
    once on a thread of its own, which ends with it; a newer submit or ``cancel`` does
    not prevent or wait for it, it only drops its result. So a cancelled load never
    holds up the next one (at the price of both running for a while).
    Without it (evaluations) there is one worker, and the newest job waits until the
    superseded one stops at its next ``should_stop()``.

    ``ends_when_idle``: the worker thread ends as soon as no job waits, and the next
    submit starts another (experiments, which run seldom). torch's OpenMP threads
    belong to the thread that ran torch and end with it; a second thread's staying
    beside the compute worker's slows every small operation of it (benchmarks/README.md,
    "The measurements behind the code's choices").

    Threads are daemons: call ``shutdown`` to stop the work before the program ends.
    """

    def __init__(self, run: Callable[[Any, ShouldStop], Any],
                 done: Callable[[Outcome], None] | None = None, *, name: str = "posviz-worker",
                 describe: Callable[[Any, BaseException], str] = describe_failure,
                 detach: bool = False, ends_when_idle: bool = False):
        self._run, self._done, self._describe = run, done, describe
        self._name, self._detach, self._ends_when_idle = name, detach, ends_when_idle
        self._lock = threading.Condition(threading.RLock())
        self._generation = 0
        self._pending: tuple[int, Any, Future] | None = None    # the one waiting job
        self._threads: set[threading.Thread] = set()            # the worker(s) alive
        self._running = 0                   # jobs the worker(s) are running now
        self._sync = False                  # force_sync: jobs run in submit
        self._closed = False

    @property
    def generation(self) -> int:
        """The newest submit's (or cancel's) generation."""
        return self._generation

    @property
    def closed(self) -> bool:
        return self._closed

    def stopping(self) -> bool:
        """Does the newest job wait for a superseded one to stop (at its next
        ``should_stop()``)?"""
        with self._lock:
            return self._running > 0 and self._pending is not None

    def is_current(self, generation: int) -> bool:
        return generation == self._generation and not self._closed

    @contextmanager
    def force_sync(self):
        """While inside, ``submit`` runs the job on the calling thread, once a job the
        worker still runs has stopped (it is superseded), and delivers its outcome
        before returning: for tests that wait only for a result."""
        before, self._sync = self._sync, True
        try:
            yield self
        finally:
            self._sync = before

    def submit(self, job) -> Future:
        """Queue ``job`` in place of any waiting one; it runs as soon as the worker is free
        (with ``detach``: at once; inside ``force_sync``: here)."""
        future: Future = Future()
        dropped = thread = None
        with self._lock:
            if self._closed:
                raise RuntimeError(f"{self._name} is shut down")
            self._generation += 1
            generation, sync = self._generation, self._sync
            if sync:
                dropped, self._pending = self._pending, None
                while (self._running and not self._detach     # one evaluation at a time
                       and threading.current_thread() not in self._threads):
                    self._lock.wait()
            elif self._detach:
                future.set_running_or_notify_cancel()
                thread = self._thread(self._execute, (self._generation, job, future))
            else:
                dropped, self._pending = self._pending, (self._generation, job, future)
                if not self._threads:
                    thread = self._thread(self._work, ())
                self._lock.notify_all()
        if dropped is not None:
            dropped[2].cancel()
        if thread is not None:
            thread.start()
        elif sync and future.set_running_or_notify_cancel():
            self._execute(generation, job, future)
        return future

    def cancel(self) -> None:
        """Drop the waiting job; the running one is asked to stop and its result dropped."""
        with self._lock:
            self._generation += 1
            dropped, self._pending = self._pending, None
        if dropped is not None:
            dropped[2].cancel()

    def shutdown(self, wait: bool = False) -> None:
        """Take no more jobs; the running one is asked to stop. ``wait``: until every
        thread has ended (a detached job that cannot stop runs to its end first)."""
        with self._lock:
            self._closed = True
            dropped, self._pending = self._pending, None
            threads = set(self._threads) - {threading.current_thread()}
            self._lock.notify_all()
        if dropped is not None:
            dropped[2].cancel()
        for thread in threads if wait else ():
            thread.join()

    # -- the worker(s) ------------------------------------------------------------------
    def _thread(self, target, args) -> threading.Thread:
        """(locked) A new worker thread, counted until it ends."""
        def body():
            try:
                target(*args)
            finally:
                with self._lock:
                    self._threads.discard(threading.current_thread())
        thread = threading.Thread(target=body, name=self._name, daemon=True)
        self._threads.add(thread)
        return thread

    def _work(self) -> None:
        while True:
            with self._lock:
                if self._pending is None and self._ends_when_idle:
                    # gone from the count under the lock: a submit now starts a new one
                    self._threads.discard(threading.current_thread())
                    return
                while self._pending is None and not self._closed:
                    self._lock.wait()
                if self._closed:
                    return
                (generation, job, future), self._pending = self._pending, None
                self._running += 1          # (force_sync waits until it is 0)
            try:
                if future.set_running_or_notify_cancel():
                    self._execute(generation, job, future)
            finally:
                with self._lock:
                    self._running -= 1
                    self._lock.notify_all()
            del job, future                 # the worker keeps nothing between jobs

    def _execute(self, generation: int, job, future: Future) -> None:
        def should_stop() -> bool:
            return self._generation != generation or self._closed

        try:
            result = self._run(job, should_stop)
        except Cancelled as error:          # superseded: a newer job runs next
            # without its traceback: its frames hold the abandoned forward's tensors (a
            # layer's maps), and the traceback, the future and this frame form a cycle
            # that only a collection would free
            future.set_exception(error.with_traceback(None))
            return
        except Exception as error:
            if not isinstance(error, PosvizInputError):
                traceback.print_exc()       # shown in one line; the details go to stderr
            error = error.with_traceback(None)      # as above: its frames go now
            future.set_exception(error)
            self._deliver(Outcome(generation, job, error=error,
                                  message=self._describe(job, error)))
            return
        future.set_result(result)
        self._deliver(Outcome(generation, job, result=result))

    def _deliver(self, outcome: Outcome) -> None:
        """Call ``done`` if the generation is still the newest (checked under the lock,
        so a submit cannot slip in between; ``done`` must be quick and must not wait for
        the thread that submits)."""
        with self._lock:
            if self._done is None or not self.is_current(outcome.generation):
                return
            try:
                self._done(outcome)
            except Exception:               # the worker outlives a broken receiver
                traceback.print_exc()
