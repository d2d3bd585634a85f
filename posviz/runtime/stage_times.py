"""This machine's seconds of each stage (and each counted step) of a long run, from its
last whole run of the same check, so the next run's time left weighs its stages as they
take here, not as their declared work says.

Declared work missed each long check (press2022's lengths took 1 : 1.6 : 4.2 where
their tokens declare 1 : 1.3 : 2.0: told 0.5 × the truth); learned, its second run was
told 0.79-1.07 × from its 13th second, sinha2022's 0.95-1.32 × throughout
(benchmarks/README.md, "Time left learned from the last run"). A run is known by its
stages' count, declared work and kinds and its first stage's words; the file is
``$POSVIZ_STAGE_TIMES``, else ``stage-times.json`` in posviz's cache."""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path


KEPT_STEPS = 500        # a stage's step times kept up to this many steps
KEPT_RUNS = 64          # runs remembered, the latest


def times_path() -> Path:
    if os.environ.get("POSVIZ_STAGE_TIMES"):
        return Path(os.environ["POSVIZ_STAGE_TIMES"]).expanduser()
    from ..models.hf.converted import cache_root
    return cache_root() / "stage-times.json"


def run_key(stage) -> str:
    """The run a Stage belongs to: its stages' count, work, kinds and the first's words."""
    work = None if stage.work is None else [f"{w:.6g}" for w in stage.work]
    told = f"{stage.stages}|{work}|{stage.kinds}|{str(stage) if stage.number == 1 else ''}"
    return hashlib.sha1(told.encode("utf-8")).hexdigest()[:16]


class StageTimes:
    """Reads and writes the last run's seconds of each run kept (``path``: times_path)."""

    def __init__(self, path: Path | str | None = None):
        self.path = Path(path) if path is not None else None

    def _file(self) -> Path:
        return self.path if self.path is not None else times_path()

    def _all(self) -> dict:
        try:
            runs = json.loads(self._file().read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return runs if isinstance(runs, dict) else {}

    def read(self, key: str, stages: int) -> dict | None:
        """{"stages": seconds of each, "steps": each stage's step seconds or None}."""
        last = self._all().get(key)
        try:
            seconds = [float(s) for s in last["stages"]]
            steps = [None if s is None else [float(x) for x in s] for s in last["steps"]]
        except (TypeError, KeyError, ValueError):
            return None
        if len(seconds) != stages or len(steps) != stages or sum(seconds) <= 0:
            return None
        return {"stages": seconds, "steps": steps}

    def write(self, key: str, seconds: list[float], steps: list) -> None:
        """The run just ended whole; a file that cannot be written is left as it is."""
        runs = self._all()
        runs.pop(key, None)
        runs[key] = {"stages": [round(s, 3) for s in seconds],
                     "steps": [None if s is None or len(s) > KEPT_STEPS
                               else [round(x, 3) for x in s] for s in steps]}
        runs = dict(list(runs.items())[-KEPT_RUNS:])
        path = self._file()
        from ..document.files import whole_file       # (numpy: not at posviz's import)
        try:                    # whole or not at all, no temporary left (Ctrl+C too)
            path.parent.mkdir(parents=True, exist_ok=True)
            whole_file(path, lambda temporary: temporary.write_text(json.dumps(runs),
                                                                    encoding="utf-8"))
        except OSError:
            pass


class NoTimes(StageTimes):
    """Keeps nothing and reads nothing: a run whose stages should teach no later run
    (a test's, a made-up clock's)."""

    def read(self, key: str, stages: int) -> dict | None:
        return None

    def write(self, key: str, seconds: list[float], steps: list) -> None:
        pass
