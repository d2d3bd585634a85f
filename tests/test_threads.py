"""Torch's threads fitted to the cores others' work leaves free (models.limits.threads):
one thread while others hold half the cores, the default otherwise, whatever this
process's own threads add to the load average."""
import pytest

from posviz.models.limits import threads
from posviz.models.limits.threads import FewerThreadsWhenBusy, OwnCPU


@pytest.mark.parametrize("load, own, expected", [
    (2.0, 2.0, 2),      # a quiet machine, this process's 2 threads busy: the load is ours
    (2.9, 2.0, 2),
    (3.0, 2.0, 1),      # one more core's worth of others' work: half of 2 cores
    (1.0, 0.0, 1),      # another job alone on one core
    (9.0, 1.5, 1)])
def test_one_thread_only_while_others_hold_half_the_cores(monkeypatch, load, own,
                                                          expected):
    import torch
    before = torch.get_num_threads()
    monkeypatch.setattr("os.cpu_count", lambda: 2)
    monkeypatch.setattr("os.getloadavg", lambda: (load, 0.0, 0.0))
    monkeypatch.setattr(threads, "own_cpu", lambda: own)
    torch.set_num_threads(2)
    try:
        with FewerThreadsWhenBusy():
            inside = torch.get_num_threads()
        after = torch.get_num_threads()
    finally:
        torch.set_num_threads(before)
    assert (inside, after) == (expected, 2)


def test_this_process_s_cpu_is_averaged_over_the_load_average_s_minute(monkeypatch):
    """From the process's start at the first look, then each second's use weighed in as
    the load average weighs a minute."""
    monkeypatch.setattr(threads, "process_age", lambda: 10.0)
    t, used = [0.0], [5.0]
    own = OwnCPU(clock=lambda: t[0], cpu=lambda: used[0])
    assert own() == pytest.approx(0.5)               # 5 s of CPU in 10 s
    for _ in range(600):                             # then 2 cores busy for 10 minutes
        t[0] += 1.0
        used[0] += 2.0
        own()
    assert own() == pytest.approx(2.0, abs=0.01)
    t[0] += 60.0                                     # a minute idle: e^-1 of it left
    assert own() == pytest.approx(2.0 * 2.718281828 ** -1, rel=0.01)
    t[0] += 0.5                                      # under a second: as it was
    used[0] += 1.0
    assert own() == pytest.approx(2.0 * 2.718281828 ** -1, rel=0.01)


def test_the_window_s_evaluations_and_experiments_run_fitted(monkeypatch):
    """The compute worker's jobs and the Experiments tab's runs (the two threads that
    compute in the window) run on one thread while others hold the cores."""
    import torch

    from posviz.runtime import experiments
    from posviz.runtime.jobs import EvaluationJob, EvaluationRunner
    monkeypatch.setattr(threads, "others_busy", lambda: True)
    before, seen = torch.get_num_threads(), []
    torch.set_num_threads(2)
    try:
        runner = EvaluationRunner()
        monkeypatch.setattr(runner, "evaluate",
                            lambda job, stop: seen.append(torch.get_num_threads()))
        runner(EvaluationJob.__new__(EvaluationJob))
        monkeypatch.setattr(experiments, "_run",
                            lambda *args: seen.append(torch.get_num_threads()))
        experiments.run_experiment(None)
        assert seen == [1, 1] and torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)


def test_a_process_knows_its_age():
    age = threads.process_age()
    assert age is None or 0 < age < 10 ** 7
