"""Torch's threads fitted to the cores that others' work leaves free.

On 2 shared cores two torch threads wait on each other when another job holds a core.
Measured here at load 6-10, one torch thread against the default two: MiniLM in the
window, painted 147 against 1,089 ms a reorder at n = 64 and 280 against 1,904 at 128
(`benchmarks/lockstep.py --env-b OMP_NUM_THREADS=1`); a window's sweep of 2,000 orders
10 s against 56 s; one zoo checkpoint's perplexity at 128 tokens 3.6 s against 63-79 s,
the same numbers to the last digit. On a quiet machine the default stays: one thread
is taken only while others' work holds at least half the cores, that is the load
average less this process's own CPU (its threads count in the load too), both over
about a minute. torch's count is each thread's own (OpenMP): it is set in the thread
that computes, for the work inside ``FewerThreadsWhenBusy``.
"""
from __future__ import annotations

import math
import os
import threading
import time

AVERAGED_S = 60.0       # the load average's minute, over which this process's CPU is too


class OwnCPU:
    """This process's CPU seconds a second (all its threads), averaged as the load
    average is; from its start at the first look (Linux: /proc), else from then."""

    def __init__(self, clock=time.monotonic, cpu=time.process_time):
        self.clock, self.cpu, self._lock = clock, cpu, threading.Lock()
        self.when: float | None = None
        self.used = self.rate = 0.0

    def __call__(self) -> float:
        with self._lock:
            now, used = self.clock(), self.cpu()
            if self.when is None:
                age = process_age()
                self.rate = used / age if age else 0.0
            elif now - self.when >= 1.0:
                keep = math.exp(-(now - self.when) / AVERAGED_S)
                self.rate = keep * self.rate + (1 - keep) * (used - self.used) / (
                    now - self.when)
            else:
                return self.rate
            self.when, self.used = now, used
            return self.rate


def process_age() -> float | None:
    """Seconds since this process started (Linux), else None."""
    try:
        with open("/proc/self/stat") as stat:
            started = int(stat.read().rsplit(")", 1)[1].split()[19])   # field 22
        with open("/proc/uptime") as uptime:
            up = float(uptime.read().split()[0])
        return max(up - started / os.sysconf("SC_CLK_TCK"), 1e-3)
    except (OSError, ValueError, IndexError):
        return None


own_cpu = OwnCPU()


def others_busy() -> bool:
    """Does others' work hold at least half of this machine's cores?"""
    if not hasattr(os, "getloadavg"):
        return False
    return os.getloadavg()[0] - own_cpu() >= (os.cpu_count() or 1) / 2


class FewerThreadsWhenBusy:
    """While inside, this thread's torch work runs on one thread when others_busy."""

    def __enter__(self):
        import torch
        self.threads = torch.get_num_threads()
        if self.threads > 1 and others_busy():
            torch.set_num_threads(1)
        return self

    def __exit__(self, *exc):
        import torch
        if torch.get_num_threads() != self.threads:
            torch.set_num_threads(self.threads)
        return False
