"""A real model's precision (and accelerate's placement) chosen in the model panel: the
model loads in it, the estimate shown follows it, and session files keep it."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers")

import torch  # noqa: E402
from test_hf import save_tiny  # noqa: E402

from posviz.document import session_file  # noqa: E402
from posviz.document.session_file import SessionDocument  # noqa: E402
from posviz.document.spec import ModelSpec  # noqa: E402
from posviz.errors import PosvizInputError  # noqa: E402
from posviz.gui.model_panel.precision_choice import weights_text  # noqa: E402
from posviz.gui.settings import make_settings  # noqa: E402
from posviz.gui.window import MainWindow  # noqa: E402
from posviz.models.limits import memory  # noqa: E402

TIMEOUT = 60_000

pytestmark = pytest.mark.usefixtures("collect_between_tests")


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    folder = tmp_path_factory.mktemp("precision") / "llama"
    save_tiny("llama", folder)
    return folder


def test_the_precision_and_offload_folder_are_saved_and_read(tmp_path):
    spec = ModelSpec.pretrained("org/model", dtype="bfloat16", offload_folder="/tmp/off")
    doc = SessionDocument("a b", (1, 0), spec, ("a", "b"))
    again = session_file.read(session_file.write(tmp_path / "half.posviz", doc))
    assert again.spec == spec
    assert (again.spec.dtype, again.spec.offload_folder) == ("bfloat16", "/tmp/off")
    plain = session_file.write(tmp_path / "plain.posviz",
                               doc.replace(spec=ModelSpec.pretrained("org/model")))
    model = json.loads(plain.read_text())["model"]
    assert "dtype" not in model and "offload_folder" not in model    # files as before
    assert session_file.read(plain).spec.dtype == "float32"


def test_an_unknown_precision_in_a_file_is_one_line(tmp_path):
    path = session_file.write(tmp_path / "a.posviz", SessionDocument(
        "a b", (1, 0), ModelSpec.pretrained("org/model"), ("a", "b")))
    doc = json.loads(path.read_text())
    doc["model"]["dtype"] = "int8"
    path.write_text(json.dumps(doc))
    with pytest.raises(PosvizInputError, match=r"must be one of float32, float64, "
                       r"bfloat16, float16 \(got 'int8'\)"):
        session_file.read(path)


def _parameter_dtypes(backend) -> set:
    return {p.dtype for p in backend.model.parameters()}


def test_the_panels_precision_loads_the_model_in_it_and_comes_back(qtbot, window, llama,
                                                                   tmp_path):
    w = window
    with qtbot.waitSignal(w.controller.modelLoaded, timeout=TIMEOUT):
        w.controller.load(ModelSpec.pretrained(str(llama), "llama"))
    choice = w.model_panel.precision
    assert choice.isVisible() and choice.dtype.currentData() == "float32"
    assert _parameter_dtypes(w.session.backend) == {torch.float32}
    count = memory.checkpoint_weights(llama, None, None)         # float32 bytes
    assert choice.estimate.text() == f"weights about {memory.size_text(count)} in float32"
    index = choice.dtype.findData("bfloat16")
    choice.dtype.setCurrentIndex(index)
    with qtbot.waitSignal(w.controller.modelLoaded, timeout=TIMEOUT):
        choice.dtype.activated.emit(index)
    assert w.session.spec.dtype == "bfloat16"
    assert _parameter_dtypes(w.session.backend) == {torch.bfloat16}
    assert choice.estimate.text() == (f"weights about {memory.size_text(count // 2)} in "
                                      f"bfloat16") == weights_text(w.session.spec)
    path = tmp_path / "half.posviz"
    assert w.files.save_to(path)
    assert session_file.read(path).spec.dtype == "bfloat16"
    again = MainWindow(make_settings())
    qtbot.addWidget(again)
    again.show()
    with qtbot.waitSignal(again.controller.modelLoaded, timeout=TIMEOUT):
        again.start(str(path))
    assert again.session.spec.dtype == "bfloat16"
    assert _parameter_dtypes(again.session.backend) == {torch.bfloat16}
    assert again.model_panel.precision.dtype.currentData() == "bfloat16"
    again.close()


def test_the_built_in_model_shows_no_precision_of_a_real_model(qtbot, window):
    assert window.session.spec.is_builtin and not window.model_panel.precision.isVisible()


def test_offload_to_a_folder_loads_through_accelerate(qtbot, window, llama, tmp_path,
                                                      monkeypatch):
    pytest.importorskip("accelerate")
    from posviz.models import hf
    asked, load = [], hf.load_backend
    monkeypatch.setattr(hf, "load_backend", lambda *args, **kwargs: asked.append(
        kwargs.get("offload_folder")) or load(*args, **kwargs))
    w = window
    with qtbot.waitSignal(w.controller.modelLoaded, timeout=TIMEOUT):
        w.controller.load(ModelSpec.pretrained(str(llama), "llama"))
    choice = w.model_panel.precision
    assert choice.offload.isVisible()
    choice.folder = str(tmp_path / "offload")
    choice.offload.setChecked(True)
    with qtbot.waitSignal(w.controller.modelLoaded, timeout=TIMEOUT):
        choice.chosen.emit()
    assert w.session.spec.offload_folder == str(tmp_path / "offload")
    assert asked == [None, str(tmp_path / "offload")]           # hf.placement's folder
    assert choice.offload.text() == f"Offload to {tmp_path / 'offload'}"
