"""Shared test set-up: headless Qt, one BLAS thread, no network, private settings."""
import contextlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

# Before any Qt or numpy import: Qt tests run without a display unless a test asks for
# one, numpy's BLAS does not compete with torch for the cores, nothing is downloaded.
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_OFFLINE", "1")

import pytest  # noqa: E402

from posviz.models.builtin.backend import BuiltinBackend  # noqa: E402

COLLECT_ALL_EVERY = 20      # tests: the oldest generation is collected this often


def pytest_configure(config):
    """No automatic garbage collection, as in the window (posviz.boot): started by an
    allocation on a worker thread (a model being built), a collection frees the closed
    windows' Qt objects there and can deadlock against the GUI thread (the suite hung
    so in test_gui_fuzz and test_hub_gui). Tests collect between them instead."""
    import gc
    gc.disable()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """Collect on the main thread once the test and its fixtures (its windows, their
    workers) are gone; a test that turned collection on finds it off again after."""
    yield
    import gc
    item.session.posviz_tests = getattr(item.session, "posviz_tests", 0) + 1
    gc.collect() if item.session.posviz_tests % COLLECT_ALL_EVERY == 0 else gc.collect(1)
    gc.disable()


try:                # as the app does (posviz.gui.app.main), before torch is imported
    import PySide6.QtCore  # noqa: E402,F401
except ImportError:
    pass
else:
    from posviz.boot import answer_pyside_hook  # noqa: E402
    answer_pyside_hook()


class ReadOnce:
    """``posviz.models.hf.loading._read`` reading each bundled model (MiniLM, SmolLM2)
    from disk once a test session: a later read of the same model on the same device in
    the same dtype gets a deep copy of the first (its own tokenizer and model, the
    first's weights) and is told the same steps, with a stop between two (Cancelled),
    and its ``tokens_read`` after the tokenizer's step. Any other folder is read as
    ever."""

    def __init__(self, read, folders):
        self.read, self.folders, self.kept = read, folders, {}

    def __call__(self, folder, extra, gguf, family, say, stop, device, dtype,
                 tokens_read=None):
        import copy

        from posviz.models.hf.loading import _check, token_counter
        if Path(folder).resolve() not in self.folders or set(extra) - {"gguf_file"}:
            return self.read(folder, extra, gguf, family, say, stop, device, dtype,
                             tokens_read)
        key = (Path(folder).resolve(), extra.get("gguf_file"), family.name, device, dtype)
        if key not in self.kept:
            told = []
            outcome = self.read(folder, extra, gguf, family,
                                lambda *step: (told.append(step), say(*step)), stop,
                                device, dtype, tokens_read)
            self.kept[key] = told, outcome
            return copy.deepcopy(outcome)
        told, outcome = self.kept[key]
        for step in told:
            _check(stop)
            say(*step)
            if step[0] == "loading tokenizer" and tokens_read is not None:
                tokens_read(token_counter(outcome[0]))
        _check(stop)
        return copy.deepcopy(outcome)


@pytest.fixture(scope="session", autouse=True)
def bundled_models_read_once():
    """De-quantising SmolLM2's GGUF file took 11-20 s for each test that loaded it (five
    golden cases, the claims, the scenarios): read once, copied after (about 1 s)."""
    from posviz.errors import PosvizInputError
    try:
        from posviz.models.hf import loading, sources
    except ImportError:                 # no real-model extra: nothing to keep
        yield
        return
    folders = set()
    for name in sources.BUNDLED:
        with contextlib.suppress(PosvizInputError):         # not installed
            folders.add(sources.resolve(name)[0].resolve())
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(loading, "_read", ReadOnce(loading._read, folders))
        yield


@pytest.fixture(autouse=True)
def private_settings(tmp_path, monkeypatch):
    """The window never reads or writes the user's real settings in a test, nor a run
    the stages' times kept in the user's cache (runtime.stage_times)."""
    path = tmp_path / "posviz-settings.ini"
    monkeypatch.setenv("POSVIZ_SETTINGS", str(path))
    monkeypatch.setenv("POSVIZ_STAGE_TIMES", str(tmp_path / "stage-times.json"))
    return path


@pytest.fixture
def window(qtbot, request):
    """The real main window, shown offscreen, with its first evaluation painted. Its
    evaluations and loads run on the GUI thread, each told before the call that asked
    for it returns (Controller.force_sync), unless the test is marked ``asynchronous``
    (it tests what the workers do: supersession, cancellation, stale results)."""
    from posviz.gui.settings import make_settings
    from posviz.gui.window import MainWindow

    w = MainWindow(make_settings())
    qtbot.addWidget(w)
    w.resize(1200, 800)
    w.show()
    qtbot.waitExposed(w)
    asynchronous = request.node.get_closest_marker("asynchronous") is not None
    with contextlib.nullcontext() if asynchronous else w.controller.force_sync():
        with qtbot.waitSignal(w.controller.evaluated, timeout=30_000):
            w.start()
        yield w


@contextlib.contextmanager
def xvfb(screen: str, needs=("Xvfb",)):
    """A private X server (Xvfb) of this screen size, e.g. "1600x1000"; the display name.
    The server picks a free display number itself (-displayfd), so test runs side by
    side never race for one. Skips the test where a needed program is missing or no
    server starts."""
    import select
    missing = [program for program in needs if not shutil.which(program)]
    if missing:
        pytest.skip(f"needs {' and '.join(missing)} (apt-get install xvfb xdotool)")
    read, write = os.pipe()
    server = subprocess.Popen(["Xvfb", "-displayfd", str(write), "-screen", "0",
                               f"{screen}x24", "-nolisten", "tcp"], pass_fds=(write,),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write)
    with os.fdopen(read) as told:           # its number, written once it listens
        number = told.readline().strip() if select.select([told], [], [], 30)[0] else ""
    if not number.isdigit():
        server.kill()
        server.wait(5)
        pytest.skip("Xvfb did not start")
    try:
        yield f":{number}"
    finally:
        server.terminate()
        server.wait(5)


def on_screen(qtbot, widget, width: int, height: int):
    """``widget`` shown at width × height and exposed; closed with the test."""
    qtbot.addWidget(widget)
    widget.resize(width, height)
    widget.show()
    qtbot.waitExposed(widget)
    return widget


@pytest.fixture
def views(monkeypatch):
    """Stands in for views.shown: records what it is handed and on which thread, and
    answers ("views of", order)."""
    import threading
    import types
    from dataclasses import dataclass

    import posviz.runtime.after_left  # noqa: F401  (reads the real views.shown's names)
    import posviz.views

    fake = types.ModuleType("posviz.views.shown")

    @dataclass(frozen=True)
    class Shown:
        evaluation: object
        views: object
        model: object = None

    def build_views(ev, look, tiles=None, mosaic=None, head=None):
        fake.calls.append((ev, look, tiles))
        fake.threads.append(threading.current_thread())
        return ("views of", tuple(ev.order))
    fake.Shown, fake.build_views, fake.calls, fake.threads = Shown, build_views, [], []
    monkeypatch.setitem(sys.modules, "posviz.views.shown", fake)
    monkeypatch.setattr(posviz.views, "shown", fake, raising=False)
    return fake


class CountingBackend(BuiltinBackend):
    """The built-in backend, keeping every order it runs in ``runs`` (those of a batch
    too)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.runs = []

    def run(self, seq, request, should_stop=None):
        self.runs.append(list(map(int, request.order)))
        return super().run(seq, request, should_stop)

    def record(self, seq, request, recorder):
        self.runs.extend(list(map(int, order)) for order in request.order)
        return super().record(seq, request, recorder)


@pytest.fixture
def collect_between_tests():
    """Collect the closed windows' reference cycles after a test, while no worker runs.
    Left to Python's automatic collector, that collection ran on the GUI thread during
    the next window's start, beside its worker building a model, and crashed the
    interpreter about once in five runs of the session and help tests (the app itself
    collects only on its GUI-thread timer, posviz.boot)."""
    yield
    import gc
    gc.collect()


@pytest.fixture
def slow_model_file(tmp_path, monkeypatch):
    """A session file whose pretrained model ("slow") loads only once ``release`` is set
    (the built-in model stands in for it): (path, document, release)."""
    import threading

    from posviz.document import session_file
    from posviz.document.spec import ModelSpec
    from posviz.models import hf
    release = threading.Event()

    def slow(spec, *args, **kwargs):
        release.wait(30)
        return BuiltinBackend()
    monkeypatch.setattr(hf, "load_backend", slow)
    doc = session_file.SessionDocument("x y z", (2, 1, 0), ModelSpec.pretrained("slow"),
                                       ("x", "y", "z"))
    yield session_file.write(tmp_path / "slow.posviz", doc), doc, release
    release.set()
