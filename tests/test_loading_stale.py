"""While a model loads, nothing shown reads as its: the model panel names what loads
(not the running model's facts and weight size), and the plots are veiled as the model
that ran before it, until its first result."""
import pytest

pytest.importorskip("PySide6")

from posviz.document.spec import ModelSpec  # noqa: E402
from posviz.gui.stale import STALE_AFTER_MS  # noqa: E402

TIMEOUT = 30_000


def loaded(qtbot, window, spec):
    """Load ``spec`` and wait for its first result."""
    with qtbot.waitSignal(window.controller.evaluated, timeout=TIMEOUT):
        with qtbot.waitSignal(window.controller.modelLoaded, timeout=TIMEOUT):
            window.controller.load(spec)


@pytest.mark.asynchronous
def test_switching_models_shows_what_loads_not_the_running_model_s_facts(
        qtbot, window, slow_model_file):
    _, _, release = slow_model_file
    release.set()
    loaded(qtbot, window, ModelSpec.pretrained("first"))
    panel, veil = window.model_panel, window.veil
    running_facts = panel.model_facts.text()
    assert "Layers × heads" in running_facts and not veil.isVisible()
    panel.precision.estimate.setText("weights about 90.9 MB in float32")   # the first's
    release.clear()
    window.controller.load(ModelSpec.pretrained("second"))
    assert "Loading second" in panel.model_facts.text()
    assert "Layers" not in panel.model_facts.text() and panel.precision.estimate.text() == ""
    qtbot.waitUntil(veil.isVisible, timeout=STALE_AFTER_MS + 2000)
    assert veil.text.startswith("Loading second… these plots still show the model that "
                                "ran before it")
    window.session.reverse()             # a result of the running model meanwhile
    qtbot.wait(300)
    assert "Loading second" in panel.model_facts.text() and veil.isVisible()
    with qtbot.waitSignal(window.controller.evaluated, timeout=TIMEOUT):
        release.set()
    qtbot.waitUntil(lambda: not veil.isVisible(), timeout=TIMEOUT)
    assert "Layers × heads" in panel.model_facts.text()


@pytest.mark.asynchronous
def test_a_cancelled_load_gives_back_the_running_model_s_facts(qtbot, window,
                                                               slow_model_file):
    _, _, release = slow_model_file
    release.set()
    loaded(qtbot, window, ModelSpec.pretrained("first"))
    panel, veil = window.model_panel, window.veil
    running_facts = panel.model_facts.text()
    release.clear()
    window.controller.load(ModelSpec.pretrained("second"))
    qtbot.waitUntil(veil.isVisible, timeout=STALE_AFTER_MS + 2000)
    panel._cancel()
    assert panel.model_facts.text() == running_facts and not veil.isVisible()


@pytest.mark.asynchronous
def test_opening_a_file_of_a_slow_model_veils_the_previous_session_s_plots(
        qtbot, window, slow_model_file):
    path, doc, release = slow_model_file
    panel, veil = window.model_panel, window.veil
    assert window.files.open_file(path)
    assert panel.load.isVisible() or "Loading slow" in window.status.label.text()
    qtbot.waitUntil(veil.isVisible, timeout=STALE_AFTER_MS + 2000)
    assert veil.text.startswith("Loading slow…")
    with qtbot.waitSignal(window.controller.evaluated, timeout=TIMEOUT):
        release.set()
    qtbot.waitUntil(lambda: not veil.isVisible(), timeout=TIMEOUT)
    assert window.session.text == doc.text
