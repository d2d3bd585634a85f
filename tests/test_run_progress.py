"""A report's progress lines tell the whole command's time left (all its forwards, not
the one running) and come at least every two seconds, inside a block too: a fake clock
moved by the blocks' parts, no timed assertion."""
from __future__ import annotations

import io
import re

import pytest

from posviz.api.steps import QUIET_S, StepPrinter, layer_ticks
from posviz.models import reached

STEPS = ("running the original order", "running the original order at shifted "
         "positions, for the noise floor", "running the chosen order")


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Lines(io.StringIO):
    """A stream that keeps the time of each line."""

    def __init__(self, clock):
        super().__init__()
        self.clock, self.times = clock, []

    def write(self, text):
        if text.strip():
            self.times.append(self.clock())
        return super().write(text)


def drive(monkeypatch, layers: int, attention: float, feed_forward: float,
          forwards: int = 3):
    """The three forwards of a report, each of ``layers`` blocks whose attention and
    feed-forward take the seconds given (half the attention's keeping the maps, which
    only the original order's forward does): the lines told, and when."""
    clock = Clock()
    monkeypatch.setattr(reached, "clock", clock)
    stream = Lines(clock)
    say = StepPrinter(stream, tick=2.0)
    with reached.planning(forwards):
        for step in STEPS[:forwards]:
            say(step)
            keeping = attention / 2 if step == STEPS[0] else 0.0    # its maps, kept
            with layer_ticks(None, say, step):
                for layer in range(layers):
                    reached.reach(layer, layers)
                    clock.now += attention / 2
                    reached.reach(layer, layers, reached.MAPS)
                    clock.now += keeping
                    reached.reach(layer, layers, reached.FEED_FORWARD)
                    clock.now += feed_forward
    return stream.getvalue().splitlines(), stream.times, clock.now


def test_a_report_s_time_left_is_that_of_all_its_forwards(monkeypatch):
    """SmolLM2's report said "layer 29 of 30, about 2 s left" with 50 s to go: the noise
    floor's forward and the chosen order's were still to run."""
    lines, times, end = drive(monkeypatch, layers=30, attention=0.4, feed_forward=0.4)
    last = [(t, line) for t, line in zip(times, lines)
            if "forward 1 of 3, layer 29 of 30" in line or
            "forward 1 of 3, layer 30 of 30" in line]
    assert last, lines
    at, line = last[0]
    said = float(re.search(r"about (\d+) s left", line).group(1))
    assert abs(said - (end - at)) <= 3, (line, end - at)
    assert any(line.startswith(f"posviz: {STEPS[2]}: forward 3 of 3, layer ")
               for line in lines), lines


@pytest.mark.parametrize("attention, feed_forward", [(1.6, 0.6), (1.1, 1.1), (0.3, 2.6)])
def test_lines_come_every_two_seconds_and_no_slow_block_goes_untold(
        monkeypatch, attention, feed_forward):
    """The built-in model at 6,000 words told a line only at a block's start, at most
    one per 2 s: 2.2-3.9 s apart, and a 2.2 s block untold ("layer 2 of 4", then none
    for the chosen order's layer 2). Its attention and its feed-forward are told now."""
    lines, times, _ = drive(monkeypatch, layers=4, attention=attention,
                            feed_forward=feed_forward)
    gaps = [b - a for a, b in zip(times, times[1:])]
    # after the first block (whose parts' times are not known yet when it starts)
    assert max(gaps[3:]) <= max(2.0, attention / 2, feed_forward) + 1e-9, (gaps, lines)
    assert max(gaps) <= attention + feed_forward + 1e-9, (gaps, lines)
    for step in STEPS:
        block = attention / 2 + feed_forward + (attention / 2 if step == STEPS[0] else 0)
        for layer in range(1, 5) if block > 2.0 else ():
            assert any(line.startswith(f"posviz: {step}: ") and f"layer {layer} of 4"
                       in line for line in lines), (step, layer, lines)


def test_a_conversion_tells_its_steps_and_tensors_from_python_by_default(monkeypatch):
    """SmolLM2's first load from Python said its conversion in one line, then nothing for
    44 s; on the command line "reading the GGUF file again, for its weights" then 10.5 s
    with no count, and "loading tokenizer" twice (the second: the saved copy's)."""
    from posviz.models.hf.converted import CONVERTING, SAVING
    from posviz.models.hf.workarounds import READING_AGAIN
    clock = Clock()
    monkeypatch.setattr(reached, "clock", clock)
    stream = Lines(clock)
    say = StepPrinter(stream, steps=False, tick=2.0)        # posviz.load's default
    say("reading config")
    say(f"{CONVERTING}x.gguf once: …")
    say("loading tokenizer")
    say(READING_AGAIN)
    for done in range(1, 273):
        clock.now += 0.0625                                 # 17 s in all
        say("de-quantizing weights", done, 272)
    say(f"{SAVING} into the cache")
    say("loading tokenizer")
    say("ready")
    say("running the original order")                       # a run's steps: not told
    lines = stream.getvalue().splitlines()
    assert lines[0].startswith(f"posviz: {CONVERTING}x.gguf"), lines
    assert "posviz: loading tokenizer" in lines and f"posviz: {READING_AGAIN}" in lines
    counts = [line for line in lines if ": tensor " in line]
    # one time a line: the conversion's, at least the step's own 15 s at its pace
    # (a count tells itself once QUIET_S passed without a line: 1.5 s, 24 tensors here)
    first = round(QUIET_S / 0.0625)
    found = re.fullmatch(rf"posviz: de-quantizing weights: tensor {first} of 272, about "
                         r"(\d+) s left of the conversion", counts[0])
    assert found and int(found.group(1)) >= 15, counts
    assert counts[-1].startswith("posviz: de-quantizing weights: tensor 272 of 272"), counts
    assert len(counts) == 272 // first + 1, counts  # each 1.5 s, and the last
    assert lines[-2:] == ["posviz: loading tokenizer (from the saved copy)",
                          "posviz: ready"], lines


def test_a_conversion_s_estimate_is_this_machine_s_last_pace(monkeypatch, tmp_path):
    """The estimate "about 44-98 s" was 2-4 × the real 23.5 s: after one conversion the
    next is estimated at the pace measured here."""
    from posviz.models.hf import converted
    monkeypatch.setenv("POSVIZ_CACHE", str(tmp_path))
    (tmp_path / "gguf").mkdir()
    assert "on 2 cores" in converted.conversion_time(98_000_000)
    converted.keep_pace(23.5 / 98)
    assert converted.conversion_time(98_000_000) == (
        "about 19-35 s at this machine's last conversion's pace")


def test_a_layer_s_maps_on_their_way_to_disk_are_told_by_head(monkeypatch):
    """A long input's layer of maps (576 MB, 7.5 s to the temporary file at 6,000
    tokens) is written a head (or a PIECE of one) at a time, each told: the printer's
    lines come at least every two seconds through it, and through the rest of the part
    after it (the next piece's time, or that rest's as last timed, would pass the tick),
    and name the head. A fake clock: 1 s a piece written, 1.5 s from the last piece to
    the feed-forward. The maps in the file equal the maps put."""
    import numpy as np
    import torch

    from posviz.models import maps as maps_module
    from posviz.models.hooks import ATTN_OUT, PATTERN, RESID_PRE, Recorder, block_hook
    clock = Clock()
    monkeypatch.setattr(reached, "clock", clock)
    monkeypatch.setattr(maps_module, "IN_MEMORY", 0)          # every layer to the file
    monkeypatch.setattr(maps_module, "PIECE", 5 * 5 * 4, raising=False)   # one head
    stream = Lines(clock)
    say = StepPrinter(stream, tick=2.0)
    pattern = torch.rand(3, 5, 5)

    def writing(now):                  # each piece written takes a second
        if getattr(now, "within", ()):
            clock.now += 1.0
    with reached.listening(writing), layer_ticks(None, say, STEPS[0]):
        recorder = Recorder(layers=3)
        for layer in range(3):
            recorder.record(block_hook(layer, RESID_PRE), torch.zeros(5, 3))
            clock.now += 0.1
            recorder.record(block_hook(layer, PATTERN), pattern + layer)
            clock.now += 1.5
            recorder.record(block_hook(layer, ATTN_OUT), torch.zeros(5, 3))
    lines, times = stream.getvalue().splitlines(), stream.times
    assert np.array_equal(recorder.maps[2], (pattern + 2).numpy())
    assert len(times) > 2 and max(b - a for a, b in zip(times, times[1:])) <= 2.0, lines
    assert any(line.startswith(f"posviz: {STEPS[0]}: layer 3 of 3 (attention maps: head "
                               "3 of 3), about ") for line in lines), lines


def test_a_report_s_time_left_holds_the_work_after_its_forwards(monkeypatch):
    """A 3,000-word export said "about 1 s left" at its forwards' end, 20 s before its
    own: the drawing and writing after them (reached.afterwards) count in the time left."""
    with reached.afterwards(20.0):
        lines, times, end = drive(monkeypatch, layers=4, attention=1.0, feed_forward=1.0)
    said = [(t, float(re.search(r"about (\d+) s left", line).group(1)))
            for t, line in zip(times, lines) if "left" in line]
    assert said and all(abs(left - (end + 20.0 - t)) <= 4 for t, left in said[1:]), said


def test_an_export_counts_its_figures_drawn_and_written_with_the_time_left():
    """Replays a 3,064-token export (2 cores, load 4-8): its drawing and writing took
    10-18 s with no count after "drawing the figures"; each figure, the parts of the
    attention map's own panel and its 27 MB table's bytes are told now, with a time
    left that follows the parts' seconds as measured."""
    from posviz.cli.export import Drawing
    clock = Clock()
    lines = []
    told = Drawing(lambda line: lines.append((clock.now, line)), tokens=3064, clock=clock)
    before = told.left()                         # told by the forwards, as they run
    assert 8 <= before <= 16, before
    names = ["attention_mosaic", "symmetry", "attention", "token_change", "branch_norms",
             "relative_profile", "outputs"]
    told.names, told.files = names, ["png", "svg", "csv"]
    took = {"views": 1.4, "panel": 2.0, "own": 1.2, "square": 1.2, "draw": 0.02}
    told.begin()
    for part, seconds in (("the views of the runs", took["views"]),
                          ("all in one panel", took["panel"])):
        told.drawing("", part)
        clock.now += seconds
    for name in names:
        told.drawing(name, "")
        clock.now += took["draw"]
        if name == "attention":
            for part in ("its own panel", "squaring its maps"):
                told.drawing(name, part)
                clock.now += took["own"]
    files = [f"{n}.{f}" for n in names for f in ("png", "svg", "csv")]
    writes = {"attention.csv": 4.0, "attention_mosaic.csv": 0.5}
    for done, file in enumerate(files):
        told.writing(done, len(files), file)
        clock.now += writes.get(file, 0.1)
    end = clock.now
    texts = [line for _, line in lines]
    assert [t for t in texts if t.startswith("drawing figure ") and "(" not in t] == [
        f"drawing figure {i} of 7: {n.replace('_', ' ')}, " + t.split(", ", 1)[1]
        for i, (n, t) in enumerate(zip(names, [t for t in texts if t.startswith(
            "drawing figure ") and "(" not in t]), 1)]
    assert any("attention (its own panel)" in t for t in texts), texts
    assert any(t.startswith("writing 7 figures: 3 of 7 (attention.csv), about") for t in
               texts), texts
    for at, line in lines:                       # within 40 % (and 2 s) of the real
        left = float(re.search(r"about (\d+) s left", line).group(1))
        assert abs(left - (end - at)) <= max(2.0, 0.4 * (end - at)), (line, end - at)


def test_a_slow_table_s_megabytes_are_told_while_it_is_written(tmp_path):
    """attention.csv at 3,064 tokens (27 MB) is written in one call, 3.7-4.4 s: a thread
    watches its file under the name it has until it is whole and tells its size before
    a tick passes without a line."""
    import time as real

    from posviz.cli.export import Drawing
    from posviz.document.files import writing_name
    clock = Clock()
    lines = []
    told = Drawing(lines.append, tokens=3064, clock=clock)
    told.names, told.files, told.folder = ["attention"], ["png", "csv"], tmp_path
    told.begin()
    writing_name(tmp_path / "attention.csv").write_bytes(b"0" * 16_000_000)
    told.writing(1, 2, "attention.csv")
    clock.now += 2.0                             # a tick on since the line above
    waited = 0.0
    while len(lines) < 2 and waited < 30:        # a hang limit, not a timing
        real.sleep(0.05)
        waited += 0.05
    told.close()
    assert lines[0].startswith("writing 1 figure: 1 of 1 (attention.csv), about"), lines
    assert len(lines) >= 2 and lines[1].startswith(
        "writing 1 figure: 1 of 1 (attention.csv, 16 MB so far), about"), lines


def test_the_views_of_the_runs_are_told_again_while_they_last():
    """SmolLM2's export on 3,000 words drew the views of its runs for 30 s between two
    lines (a user's run): a part with no count is told again, with its seconds,
    before a tick passes without a line, until the next part begins."""
    import time as real

    from posviz.cli.export import Drawing
    clock = Clock()
    lines = []
    told = Drawing(lines.append, tokens=3000, clock=clock)
    told.begin()
    told.drawing("", "the views of the runs")
    clock.now += 5.0                             # 5 s on, no line since the first
    waited = 0.0
    while len(lines) < 2 and waited < 30:        # a hang limit, not a timing
        real.sleep(0.05)
        waited += 0.05
    told.drawing("", "all in one panel")
    told.close()
    assert lines[0].startswith("drawing the figures: the views of the runs, about"), lines
    assert lines[1] == "drawing the figures: the views of the runs (5 s so far)", lines
    assert lines[-1].startswith("drawing the figures: all in one panel, about"), lines
    assert told._watch is None


def test_a_square_figure_s_own_panel_is_told_again_while_it_is_drawn():
    """export on 600 words was 3.0 s silent between "attention (its own panel)" and
    "(squaring its maps)" (a user's run): each part of a figure's drawing is
    told again, with its seconds, before a tick passes without a line."""
    import time as real

    from posviz.cli.export import Drawing
    clock = Clock()
    lines = []
    told = Drawing(lines.append, tokens=600, clock=clock)
    told.names = ["symmetry", "attention"]
    told.begin()
    told.drawing("attention", "its own panel")
    clock.now += 3.0                             # 3 s on, no line since the first
    waited = 0.0
    while len(lines) < 2 and waited < 30:        # a hang limit, not a timing
        real.sleep(0.05)
        waited += 0.05
    told.drawing("attention", "squaring its maps")
    told.close()
    assert lines[0].startswith("drawing figure 2 of 2: attention (its own panel), about"), \
        lines
    assert lines[1] == "drawing figure 2 of 2: attention (its own panel) (3 s so far)", lines
    assert lines[-1].startswith("drawing figure 2 of 2: attention (squaring its maps)"), lines
    assert told._watch is None


def test_every_figure_of_square_maps_plans_its_own_panel_so_the_time_left_falls():
    """export on 600 words told "encoding similarity, about 9 s left", then "(its own
    panel), about 16 s left", "(squaring its maps), about 17 s left", then 10 s (a
    user's run): only the attention map's own panel was planned, so another's
    part counted the whole export again."""
    from posviz.cli.export import Drawing
    clock = Clock()
    told = Drawing(lambda line: None, tokens=600, clock=clock)
    told.names = ["symmetry", "attention", "encoding_similarity", "outputs"]
    told.squared = ["attention", "encoding_similarity"]
    told.files = ["png", "csv"]
    told.begin()
    keys = [key for key, _ in told.parts()]
    assert "own:encoding_similarity" in keys and "square:encoding_similarity" in keys
    planned, lefts = dict(told.parts()), []
    clock.now += sum(planned[key] for key in keys[:keys.index("draw:encoding_similarity")])
    for key in ("draw:encoding_similarity", "own:encoding_similarity",
                "square:encoding_similarity", "draw:outputs"):
        lefts.append(told.left(key))
        clock.now += planned[key]               # each part as long as planned
    assert lefts == sorted(lefts, reverse=True), lefts
    assert lefts[0] < told.left(None) - 1.0, lefts


def test_every_large_file_s_megabytes_are_told_while_it_is_written(tmp_path):
    """SmolLM2's mosaic table on 1,000 words (65 MB, planned as 0.6 s) was written in
    4.2 s with no line (a user's run): every file is watched, not only those
    planned as slow."""
    import time as real

    from posviz.cli.export import Drawing
    from posviz.document.files import writing_name
    clock = Clock()
    lines = []
    told = Drawing(lines.append, tokens=1000, clock=clock)
    told.names, told.files, told.folder = ["attention_mosaic"], ["png", "svg", "csv"], tmp_path
    told.begin()
    writing_name(tmp_path / "attention_mosaic.csv").write_bytes(b"0" * 30_000_000)
    told.writing(2, 3, "attention_mosaic.csv")
    clock.now += 2.0                             # a tick on since the last line
    waited = 0.0
    while not lines and waited < 30:             # a hang limit, not a timing
        real.sleep(0.05)
        waited += 0.05
    told.close()
    assert lines and lines[0].startswith(
        "writing 1 figure: 1 of 1 (attention_mosaic.csv, 30 MB so far), about"), lines


def test_a_converted_copy_s_saving_says_its_size_and_counts_its_megabytes(
        monkeypatch, tmp_path):
    """SmolLM2's copy (538 MB) was saved in 5 s with nothing said after "saving the
    converted copy into ...": its size and time are said before, its megabytes counted
    as they are written (aligned), the file's sha256 taken on the way."""
    import hashlib
    import json
    import struct

    from posviz.models.hf import converted
    monkeypatch.setenv("POSVIZ_CACHE", str(tmp_path))
    assert converted.save_time(538_000_000) == "about 5-19 s"
    (tmp_path / "gguf").mkdir()
    converted.keep_pace(0.3)
    converted.keep_pace(save_seconds_per_mb=0.02)            # kept beside the other
    assert converted.save_time(538_000_000) == "about 9-27 s"
    assert converted.measured_pace() == 0.3
    header = json.dumps({"w": {"dtype": "F32", "shape": [1 << 22],
                               "data_offsets": [0, 1 << 24]}}).encode()
    path = tmp_path / "model.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + bytes(1 << 24) * 3)
    told = []
    monkeypatch.setattr(converted, "CHUNK", 1 << 22)
    digest = converted._align(path, say=lambda *now: told.append(now))
    assert digest == hashlib.sha256(path.read_bytes()).hexdigest()
    assert [t[0] for t in told] == [converted.SAVING] * 12
    assert [t[1] for t in told] == sorted(t[1] for t in told) and told[-1][1] == told[-1][2]
    clock = Clock()
    monkeypatch.setattr(reached, "clock", clock)
    stream = Lines(clock)
    say = StepPrinter(stream, steps=False, tick=2.0)
    say(f"{converted.CONVERTING}x.gguf once: …")
    for done in range(16, 539, 16):
        say(converted.SAVING, done, 538)
        clock.now += 0.15
    lines = stream.getvalue().splitlines()
    first = 16 + 16 * round(QUIET_S / 0.15)             # told once 1.5 s passed quiet
    assert lines[1].startswith(f"posviz: saving the converted copy: {first} of 538 MB, "
                               "about "), lines


def test_a_busier_machine_s_parts_are_told_before_two_seconds_pass(monkeypatch):
    """SmolLM2 at 1,000 words (load 9-12): 34 of 126 lines came over 2 s after the last,
    15 of them 2.0-2.3 s, each part a little slower than the same part before (the
    next was awaited at the last one's pace). Now with room for a later one."""
    clock = Clock()
    monkeypatch.setattr(reached, "clock", clock)
    stream = Lines(clock)
    say = StepPrinter(stream, tick=2.0)
    layers = 12
    with reached.planning(1), layer_ticks(None, say, STEPS[0]):
        say(STEPS[0])
        for layer in range(layers):
            slower = 1.06 ** layer                  # each block a little slower
            for part, seconds in ((0, 0.45), (reached.MAPS, 0.2),
                                  (reached.FEED_FORWARD, 0.5)):
                reached.reach(layer, layers, part)
                clock.now += seconds * slower
    gaps = [b - a for a, b in zip(stream.times, stream.times[1:])]
    assert gaps and max(gaps) <= 2.0 + 1e-9, gaps


def test_a_conversion_stopped_by_ctrl_c_leaves_no_half_copy_in_the_cache(monkeypatch,
                                                                        tmp_path):
    """A Ctrl+C while SmolLM2's copy was saved left its hidden folder (538-629 MB) in the
    cache, never cleaned (a user's run)."""
    import pytest

    from posviz.models.hf import converted
    monkeypatch.setenv("POSVIZ_CACHE", str(tmp_path / "cache"))

    def interrupted(model, tokenizer, folder):
        (folder / "model.safetensors").write_bytes(b"0" * 1000)
        raise KeyboardInterrupt

    monkeypatch.setattr(converted, "_save", interrupted)
    model = type("Model", (), {"parameters": lambda self: [], "buffers": lambda self: []})()
    gguf = tmp_path / "x.gguf"
    gguf.write_bytes(b"GGUF")
    with pytest.raises(KeyboardInterrupt):
        converted.convert(gguf, "ab" * 32, None, model, lambda *told: None)
    left = [p for p in (tmp_path / "cache").rglob("*") if p.is_file()]
    assert left == [] and (tmp_path / "cache").is_dir(), left


def test_an_export_s_forwards_tell_the_head_run_again_and_its_tables_by_rows(monkeypatch):
    """SmolLM2's export of 700 words runs its order a fourth time for the head drawn (its
    maps past models.maps.KEEP_ALL), and of 402 tokens writes a mosaic table of 908,280
    rows (13 s at load 7-9, planned as 0.6 s): the three forwards told a time left
    without either (0.40-0.57 of the true remainder)."""
    from types import SimpleNamespace

    from posviz.cli.export_drawing import ROW_S, Drawing, maps_run_again
    smollm2, args = (30, 9), SimpleNamespace(dtype="float32")
    assert maps_run_again(smollm2, 700, args) and not maps_run_again(smollm2, 402, args)
    planned = []
    monkeypatch.setattr(reached, "clock", Clock())
    with reached.listening(lambda r: planned.append(r.planned)), \
            reached.more_forwards(lambda n: int(maps_run_again(smollm2, n, args))):
        for tokens in (700, 402):
            with reached.planning(3, tokens):
                reached.reach(0, 30)
    assert planned == [4, 3]
    told = Drawing(lambda line: None, tokens=402, shape=smollm2)
    mosaic = smollm2[0] * smollm2[1] * 58 ** 2      # 402 tokens pooled 7 a pixel: 58
    assert told.file_seconds("attention_mosaic.csv") >= mosaic * ROW_S
    assert told.left() >= mosaic * ROW_S + 402 ** 2 * ROW_S


def test_a_forward_s_first_blocks_are_timed_from_the_last_line_told(monkeypatch):
    """A forward whose step was told, then 1.5 s of work before its first block (a T5
    bias over 3,000 words): its blocks were timed from the forward's start, not from
    that line, and the first came 2.6 s after it."""
    clock = Clock()
    monkeypatch.setattr(reached, "clock", clock)
    stream = Lines(clock)
    say = StepPrinter(stream, tick=2.0)

    def forward(step: str, before: float) -> None:
        say(step)
        clock.now += before                     # its work before its first block
        with layer_ticks(None, say, step):
            for layer in range(4):
                for part in (0, reached.MAPS, reached.FEED_FORWARD):
                    reached.reach(layer, 4, part)
                    clock.now += 0.3
    with reached.planning(2):
        forward(STEPS[0], 0.0)
        forward(STEPS[2], 1.5)
    times = [100.0, *stream.times]
    assert max(b - a for a, b in zip(times, times[1:])) <= 2.0, \
        list(zip(stream.times, stream.getvalue().splitlines()))


def test_a_forward_s_time_left_does_not_grow_as_a_layer_s_maps_pass_by_head(monkeypatch):
    """The built-in model on 5,000 words told "layer 2 of 4 (attention maps), about 15 s
    left", then "(attention maps: head 3 of 4), about 24 s left", then "layer 3 of 4,
    about 9 s left": the heads kept counted no work done. A fake clock at a steady pace:
    0.1 s a block's scores, 0.75 s each of 4 heads' maps, 0.3 s its feed-forward."""
    from posviz.models.reached import FEED_FORWARD, MAPS
    clock = Clock()
    monkeypatch.setattr(reached, "clock", clock)
    said = []
    with reached.listening(lambda now: said.append(now.whole_left())):
        for layer in range(3):
            reached.reach(layer, 4)
            clock.now += 0.1
            reached.reach(layer, 4, MAPS)
            for head in range(1, 5):
                clock.now += 0.75
                reached.reach(layer, 4, within=(head, 4))
            reached.reach(layer, 4, FEED_FORWARD)
            clock.now += 0.3
    told = [left for left in said[6:] if left is not None]     # from the second block
    # (a head counts half done when told: its pieces are told as they go)
    assert told and all(b <= 1.1 * a for a, b in zip(told, told[1:])), told
    assert told[-1] < told[0] - 5.0, told


def test_the_export_plans_from_the_guard_s_reading_and_lets_a_bug_through(monkeypatch):
    """The export's (layers, heads) come from the guard's public model_shape; a refused
    input gives no plan (its run says why), any other error is a bug and is raised."""
    from types import SimpleNamespace

    import pytest

    from posviz.cli.export_drawing import model_shape
    from posviz.document.spec import ModelSpec
    from posviz.models.config import ModelConfig
    from posviz.models.limits.guard import model_shape as guard_shape
    assert guard_shape(ModelConfig(layers=3, heads=2)) == (3, 2)
    args = SimpleNamespace(command="export", model=None, weights="random", session=None,
                           layers=3, heads=2)
    assert model_shape(args) == (3, 2)
    with monkeypatch.context() as patched:
        patched.setattr(ModelSpec, "builtin", lambda *a: (_ for _ in ()).throw(
            KeyError("a bug")))
        with pytest.raises(KeyError):
            model_shape(args)


def test_a_figure_s_own_panel_drawn_anew_from_python_is_told_as_its_part():
    """From Python a figure of square maps draws its own panel anew, its views and all
    in one panel again: "attention (its own panel), about 3 s left" was followed by
    "drawing the figures: the views of the runs, about 8 s left" (SmolLM2, 600
    tokens), the whole drawing counted again. They are the own panel's parts, its
    time left, which falls as each part passes as planned."""
    from posviz.api.drawing import Drawing
    clock = Clock()
    lines = []
    told = Drawing(lines.append, tokens=600, clock=clock)
    told.names, told.squared, told.files = ["attention"], ["attention"], ["png"]
    told.begin()
    planned = dict(told.parts())
    for name, part, key in (("", "the views of the runs", "views"),
                            ("", "all in one panel", "panel"),
                            ("attention", "", "draw:attention"),
                            ("attention", "its own panel", "own:attention"),
                            ("", "the views of the runs", None),
                            ("", "all in one panel", None),
                            ("attention", "squaring its maps", "square:attention")):
        told.drawing(name, part)
        clock.now += planned[key] if key else 0.0     # the redraws: within its own panel
    told.close()
    assert lines[4].startswith("drawing figure 1 of 1: attention (its own panel: the "
                               "views of the runs), about"), lines
    assert lines[5].startswith("drawing figure 1 of 1: attention (its own panel: all in "
                               "one panel), about"), lines
    lefts = [int(re.search(r"about (\d+) s left", line)[1]) for line in lines]
    assert lefts == sorted(lefts, reverse=True), lines


def test_a_table_s_time_left_follows_the_pace_its_bytes_are_written(tmp_path):
    """SmolLM2's mosaic table (1,004,670 rows, 58 MB) was told "13 s left" with 3 s to
    go at load 2.3: planned at ROW_S, a busy machine's pace. While it is written, its
    time left is its rows' bytes at the pace written so far: a table nearly whole is
    told less left than one a tenth written in the same seconds."""
    import time as real

    from posviz.api.drawing import Drawing
    from posviz.document.files import writing_name

    def told_left(fraction: float) -> int:
        clock = Clock()
        lines = []
        told = Drawing(lines.append, tokens=300, clock=clock)
        told.names, told.files, told.folder = ["attention_mosaic"], ["csv"], tmp_path
        told.rows = {"attention_mosaic": 1_000_000}
        told.begin()
        written = writing_name(tmp_path / "attention_mosaic.csv")
        written.write_bytes(b"0" * int(58_000_000 * fraction))     # of about 58 MB
        told.writing(0, 1, "attention_mosaic.csv")
        clock.now += 2.0                         # a tick on since the line above
        waited = 0.0
        while len(lines) < 2 and waited < 30:    # a hang limit, not a timing
            real.sleep(0.05)
            waited += 0.05
        told.close()
        written.unlink()
        assert "MB so far), about" in lines[1], lines
        return int(re.search(r"about (\d+) s left", lines[1])[1])
    assert told_left(0.95) < told_left(0.1)


def test_the_files_time_left_is_not_the_drawing_s_pace():
    """Qt's drawing at twice its plan counted the files twice their plan too (SmolLM2,
    300 tokens: "16 s left" as the files began, 7 s taken at load 2.3): as the first
    file begins, the files left are told as planned; the drawing's pace stays its own."""
    from posviz.api.drawing import Drawing
    clock = Clock()
    told = Drawing(lambda line: None, tokens=600, clock=clock)
    told.names, told.files = ["symmetry", "token_change"], ["png", "svg"]
    told.squared = ["symmetry"]
    told.begin()
    parts = told.parts()

    def is_file(key: str) -> bool:              # "symmetry.png", not "own:symmetry"
        return "." in key and ":" not in key
    drawn = [seconds for key, seconds in parts if not is_file(key)]
    clock.now += 2 * sum(drawn)                   # the drawing took twice its plan
    first = next(key for key, _ in parts if is_file(key))
    files = sum(seconds for key, seconds in parts if is_file(key))
    assert told.left(first) == pytest.approx(files)


def test_a_figure_s_drawing_is_paced_from_its_first_part_not_from_its_call():
    """From Python a long input's head is run again inside the figure's call, before
    its drawing (SmolLM2, 3,589 tokens: 105 s); counted as drawing, the views' time
    left read "about 3 min" for 23 s. The drawing's time left is its plan, at the pace
    of its own parts. A fake clock."""
    from posviz.api.drawing import Drawing
    clock = Clock()
    lines = []
    told = Drawing(lines.append, tokens=3589, clock=clock)
    told.names, told.squared, told.files = ["attention"], ["attention"], ["png"]
    told.begin()
    planned = sum(seconds for _, seconds in told.parts())
    clock.now += 105.0                  # the order run again for its head
    told.drawing("", "the views of the runs")
    told.close()
    left = int(re.search(r"about (\d+) s left", lines[0])[1])
    assert planned / 1.5 <= left <= planned * 1.5, (lines, planned)


def test_a_figure_saved_under_a_name_of_its_own_is_timed_as_its_file_alone():
    """r.figure("attention").save("fig.png") said "writing 1 figure: 1 of 1, about 8 s
    left" and was written 0.3-0.6 s later: a file named not after its figure was timed
    as every part of the drawing again, at the drawing's pace."""
    from posviz.api.drawing import FILE_S, Drawing
    clock = Clock()
    lines = []
    told = Drawing(lines.append, tokens=1000, clock=clock)
    told.names, told.files = ["attention"], ["png"]
    told.begin()
    clock.now += 4.0                             # its drawing, slower than planned
    told.writing(0, 1, "fig.png")
    told.close()
    assert told.left("attention.png") < 1.0 and FILE_S < 1.0
    assert lines == ["writing 1 figure: 1 of 1, about 1 s left"], lines
