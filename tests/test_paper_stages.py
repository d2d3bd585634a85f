"""Every paper check tells what it runs and counts its steps, on the command line and
to the Python API's progress callable; the long ones tell each stage's place and work,
so the window's Experiments tab can say the time left of the whole run."""
from __future__ import annotations

import inspect
from types import SimpleNamespace

import pytest

import posviz
from posviz.analysis.experiments import papers, pretrained, trained
from posviz.cli import main

QUICK = ["sinha2022", "chi2023", "rope-decay"]          # seconds, on random weights


def test_every_check_takes_progress_and_say():
    for check in [*papers.PRESETS.values(), *papers.TRAINED_PRESETS.values()]:
        assert {"progress", "say"} <= set(inspect.signature(check).parameters), check


@pytest.mark.parametrize("name", QUICK)
def test_a_paper_check_counts_its_steps_on_the_command_line(name, capsys):
    assert main(["paper", name, "--progress"]) == 0
    lines = capsys.readouterr().err.splitlines()
    assert lines[0] == f"posviz: checking {name} on random weights", lines
    assert len(lines) >= 3 and lines[-1].startswith("posviz: step "), lines
    done, total = lines[-1].removeprefix("posviz: step ").split(" of ")
    assert done == total, lines


@pytest.mark.parametrize("name", QUICK)
def test_a_paper_check_tells_the_api_s_progress_callable(name):
    told = []
    posviz.paper(name, progress=lambda done, total: told.append((done, total)))
    assert told and told[-1][0] == told[-1][1], told


def _probe_result(layers=3):
    row = SimpleNamespace(reads_position=True, mae=1.0, chance_mae=2.0, r2=0.5)
    return SimpleNamespace(layers=[row] * layers)


def test_haviv2022_tells_its_probes_forwards_and_fits_as_stages_of_the_run(monkeypatch):
    from posviz.analysis.experiments import probe as probes

    def probe(engine, texts, *args, say=None, **kw):
        say("running the texts (the probe's fits follow)")
        say("fitting the probe, one layer at a time")
        return _probe_result()
    monkeypatch.setattr(probes, "probe", probe)
    said = []
    papers.haviv2022(say=said.append)
    assert [(s.number, s.stages) for s in said] == [(k, 8) for k in range(1, 9)]
    assert said[0].kinds == ("forwards", "fits") * 4 and len(said[0].work) == 8
    assert said[1].work[1] == 4 * said[5].work[5]          # quadratic fits, then linear


def test_the_trained_checks_declare_each_stage_s_work(monkeypatch):
    """haviv2022 and sinha2022 on trained weights weigh their stages (they gave no
    whole-run time left); sinha2022 by each of its five models' size."""
    from posviz.analysis.experiments import probe as probes
    monkeypatch.setattr(probes, "probe", lambda *a, say=None, **kw: (
        say("running"), say("fitting"), _probe_result())[-1])
    said = []
    trained.haviv2022(say=said.append)
    count = said[0].stages
    assert [s.number for s in said] == list(range(1, count + 1))
    assert len(said[0].work) == len(said[0].kinds) == count and all(said[0].work)
    work = _sinha2022_work(monkeypatch)
    assert len(work) == 5 and all(work) and work[-1] == max(work), work


def _sinha2022_work(monkeypatch) -> tuple[float, ...]:
    from posviz.errors import PosvizInputError
    from posviz.models import hf
    monkeypatch.setattr(pretrained, "shift_change", lambda *a, **kw: {
        "last_layer_change": 1.0, "pooled_output_change": 1.0})

    def refused(*a, **kw):
        raise PosvizInputError("not here")
    monkeypatch.setattr(hf, "load_backend", refused)
    said = []
    pretrained.sinha2022(say=said.append)
    return said[0].work


def test_sinha2022_s_declared_work_tracks_its_stages_measured_seconds(monkeypatch):
    """Measured on trained weights (the command line, load 1-3): each model's 9 texts,
    the first step of the run 1.85 s (its warm-up), the checkpoints' others 0.02 s;
    MiniLM 3.6 s of load then 0.08 s a text, SmolLM2 1.5 s of load then 1.05 s a text
    (0.17 / 4.3 / 11 s a stage). Declared by the square root of their parameters, the
    checkpoints' pace told "about 5 s left" with 16 s to go; by parameters, the bar read
    0 % at stage 4 of 5. Replayed on a fake clock, the time left at each stage's start
    after the first is within 2 × of the truth."""
    from posviz.analysis.experiments.stage import Stage
    from posviz.runtime.time_left import RunClock
    work = _sinha2022_work(monkeypatch)
    steps = [[1.85] + [0.02] * 8, [0.018] * 9, [0.018] * 9, [3.6 + 0.08] + [0.08] * 8,
             [1.5 + 1.05] + [1.05] * 8]
    assert len(work) == len(steps)
    total = sum(map(sum, steps))
    now = [0.0]
    run = RunClock(lambda: now[0])
    for k, took in enumerate(steps, 1):
        run.stage(Stage(f"model {k} of 5", k, 5, work))
        left = total - sum(map(sum, steps[:k - 1]))
        if k > 1:
            assert left / 2 <= run.run_left() <= 2 * left, (k, run.run_left(), left)
        for done, seconds in enumerate(took, 1):
            now[0] += seconds
            run.step(done, len(took))


def test_sinha2022_runs_the_window_s_loaded_model_on_its_weights_without_a_load(
        monkeypatch):
    """SmolLM2 loaded in the window: the check ran "loading smollm2 (model 5 of 5)…" for
    about a second, loading it again. Lent, it is not loaded, says so, and its stage
    declares less work (no load's time); MiniLM, not lent, is loaded as before."""
    from posviz.models import hf
    from posviz.runtime.experiments import ExperimentJob, run_experiment
    from posviz.document.spec import ModelSpec
    shifted, loads = [], []
    monkeypatch.setattr(pretrained, "shift_change", lambda backend, *a, **kw: (
        shifted.append(backend), {"last_layer_change": 1.0,
                                  "pooled_output_change": 1.0})[1])

    class Backend:
        dtype, device = "float32", "cpu"

        def __init__(self, name):
            self.name = name

        def twin(self):
            return Backend(f"twin of {self.name}")

        def describe(self):
            return {"model": self.name}
    monkeypatch.setattr(hf, "load_backend", lambda name, **kw: (
        loads.append(name), Backend(name))[1])
    said = []
    job = ExperimentJob("paper", spec=ModelSpec(source="smollm2"),
                        backend=Backend("window's smollm2"), paper="sinha2022",
                        weights="trained")
    run_experiment(job, say=said.append)
    assert loads == ["minilm"]
    assert shifted[-1].name == "twin of window's smollm2"
    assert not any(s.startswith("loading smollm2") for s in said)
    assert said[-1].startswith("shifting every position id of smollm2 on the window's "
                               "loaded weights")
    assert said[-1].work[-1] < _sinha2022_work(monkeypatch)[-1]



def test_a_check_s_model_load_tells_its_conversion_s_time_left():
    """sinha2022 with trained weights converts SmolLM2's GGUF file on its first load: its
    line told the load's counts, not the conversion's time left (the analysis does not
    import the runtime; the runtime hands it in). Here each step takes its seconds in
    converted.STEPS on a made-up clock: the time left is the steps' after it."""
    from posviz.models.hf.converted import STEPS
    from posviz.runtime.conversion_left import ConversionLeft
    from posviz.runtime.stage_times import NoTimes
    now, lines, own = [0.0], [], []
    told = pretrained.load_told(lambda line, own_left: (lines.append(line),
                                                        own.append(own_left)), "smollm2",
                                ConversionLeft(lambda: now[0], NoTimes()))
    for number, (words, counted, seconds) in enumerate(STEPS):
        told(words + ("smollm2" if number == 0 else ""), *((0, 10) if counted else ()))
        if number == 4:
            break
        now[0] += seconds
    left = sum(seconds for *_, seconds in STEPS[4:])
    assert lines[0] == "loading smollm2: converting smollm2"
    assert lines[-1] == f"loading smollm2: de-quantizing weights, about {left:.0f} s left " \
                        f"of the conversion"
    # the line that tells the conversion's time left says so as data (Stage.own_left):
    # its seconds, for the run's time left in all
    assert [bool(o) for o in own] == ["left of the conversion" in line for line in lines]
    assert own[-1] == pytest.approx(left)


def test_the_window_s_and_the_command_line_s_check_get_a_load_s_time_left(monkeypatch):
    from posviz.api.experiments import paper
    from posviz.runtime.conversion_left import ConversionLeft
    from posviz.runtime.experiments import ExperimentJob, run_experiment
    given = []

    def check(should_stop=None, progress=None, say=None, loaded=None, load_left=None):
        given.append(load_left())
        raise posviz.errors.PosvizInputError("checked")
    monkeypatch.setitem(papers.TRAINED_PRESETS, "sinha2022", check)
    with pytest.raises(posviz.errors.PosvizInputError):
        run_experiment(ExperimentJob("paper", paper="sinha2022", weights="trained"))
    with pytest.raises(posviz.errors.PosvizInputError):
        paper("sinha2022", weights="trained")
    assert len(given) == 2 and all(isinstance(left, ConversionLeft) for left in given)


def test_sinha2022_s_load_that_converts_waits_for_its_own_time_in_all(monkeypatch):
    """On a fresh cache SmolLM2's load converts first: while MiniLM loaded (model 4 of
    5) the run said "about 6 s left in all" and took 27 s more. The converting stage is
    work of its own kind: no time left in all is told until one of it is timed."""
    from posviz.analysis.experiments.stage import Stage
    from posviz.models import hf
    from posviz.runtime.time_left import RunClock
    monkeypatch.setattr(hf, "converts", lambda name: name == "smollm2")
    stage = _sinha2022_stage(monkeypatch)
    assert stage.kinds == ("", "", "", "", pretrained.CONVERTING), stage.kinds
    now = [0.0]
    run = RunClock(lambda: now[0])
    for k in range(1, 5):                 # the checkpoints, then MiniLM's load begins
        run.stage(Stage(f"model {k} of 5", k, 5, stage.work, kinds=stage.kinds))
        now[0] += 1.0
    assert not run.timed_past_warm_up() and run.after_left() is None
    monkeypatch.setattr(hf, "converts", lambda name: False)          # converted before
    assert _sinha2022_stage(monkeypatch).kinds == ("",) * 5


def _sinha2022_stage(monkeypatch):
    from posviz.errors import PosvizInputError
    from posviz.models import hf
    monkeypatch.setattr(pretrained, "shift_change", lambda *a, **kw: {
        "last_layer_change": 1.0, "pooled_output_change": 1.0})

    def refused(*a, **kw):
        raise PosvizInputError("not here")
    monkeypatch.setattr(hf, "load_backend", refused)
    said = []
    pretrained.sinha2022(say=said.append)
    return said[0]
