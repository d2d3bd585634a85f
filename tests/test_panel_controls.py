"""Small controls say what they do: a field without effect is disabled saying why, and
an encoding reads the same in every box that names it."""
import pytest

pytest.importorskip("PySide6")

from posviz.document.spec import ModelSpec  # noqa: E402
from posviz.models.config import ModelConfig  # noqa: E402
from posviz.models.options import OPTIONS, TITLES  # noqa: E402


@pytest.fixture
def panel(qtbot):
    from posviz.gui.model_panel.panel import ModelPanel
    running = [ModelSpec.builtin(ModelConfig())]
    widget = ModelPanel(lambda: running[0])
    qtbot.addWidget(widget)
    widget.resize(200, 700)                  # the model dock's width at 1024 pixels
    widget.show()
    return widget, running


def test_position_scale_is_disabled_with_no_encoding_and_says_why(panel):
    widget, running = panel
    scale, pe = widget.field("pe_scale"), widget.field("pe")
    assert scale.isEnabled() and scale.toolTip() == OPTIONS["pe_scale"].tip
    pe.setCurrentIndex(pe.findData("none"))               # the user picks NoPE
    assert not scale.isEnabled()
    assert scale.toolTip().startswith("No effect with NoPE: it adds no position")
    assert OPTIONS["pe_scale"].tip in scale.toolTip()
    pe.setCurrentIndex(pe.findData("alibi"))
    assert scale.isEnabled() and scale.toolTip() == OPTIONS["pe_scale"].tip
    widget.show_spec(ModelSpec.builtin(ModelConfig(pe="none")))     # shown, not picked
    assert not scale.isEnabled()
    widget.show_spec(ModelSpec.builtin(ModelConfig(pe="rope")))
    assert scale.isEnabled()


def test_each_encoding_reads_as_its_entry_in_the_closed_box(panel):
    """The closed box showed "T5" for "T5 relative bias (Raffel 2020)" (and "learned"
    for "learned absolute"): the first word of a short name, though the entry's name
    without its paper fitted."""
    widget, _ = panel
    pe = widget.field("pe")
    for i in range(pe.count()):
        head = TITLES[pe.itemData(i)].split(" (")[0]
        assert pe.short_form(i) == head
        assert pe.shown_text(i) in (TITLES[pe.itemData(i)], head)


def test_the_t5_facts_name_it_as_its_entry(panel):
    from posviz.models.encodings import T5RelativeBias
    words = T5RelativeBias.describe(0, **T5RelativeBias.parameters(64, 4))
    assert words.startswith("T5 relative bias (") and "buckets" in words


def test_the_compare_box_names_encodings_as_its_entries_and_looks_like_a_box(qtbot):
    from PySide6 import QtWidgets

    from posviz.gui.experiments.checklist import EncodingsButton
    button = EncodingsButton()
    qtbot.addWidget(button)
    for action in button.menu().actions():
        action.setChecked(action.data() in ("none", "rope", "t5"))
    assert button.text() == "none, RoPE, T5 relative bias"
    assert button.toolTip().startswith("Compares: none, RoPE, T5 relative bias.")
    # drawn as a combo box holding its text (a tool button drew a stray arrow in its
    # corner), at least as wide as that box
    box = QtWidgets.QComboBox()
    box.addItem(button.text())
    qtbot.addWidget(box)
    assert button.sizeHint().width() >= box.sizeHint().width() - 2
    for widget in (button, box):
        widget.resize(button.sizeHint())
        widget.show()
        qtbot.waitExposed(widget)
    assert button.grab().toImage() == box.grab().toImage()
