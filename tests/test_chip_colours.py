"""The hint above the chips names each colour a chip is drawn in, as that colour."""
import pytest

pytest.importorskip("PySide6")

from posviz.gui.tokens.chips import COLORS  # noqa: E402
from posviz.gui.tokens.text_row import TextRow  # noqa: E402


def test_the_hint_names_every_chip_colour_by_its_hue(qtbot):
    """Unmoved chips are blue, and the hint named only orange and grey."""
    row = TextRow()
    qtbot.addWidget(row)
    hint = row.hint.text()
    named = {"blue": "chip", "orange": "moved", "grey": "pinned"}
    for word, state in named.items():
        assert f"{word}: " in hint, (word, hint)
        colour = COLORS[state]
        hue, saturation = colour.hslHue(), colour.hslSaturation()
        if word == "grey":
            assert saturation < 20, (state, colour.name())
        else:
            low, high = {"blue": (190, 250), "orange": (20, 45)}[word]
            assert saturation > 60 and low <= hue <= high, (state, hue, saturation)


@pytest.mark.parametrize("short", [False, True])
def test_the_colour_key_stays_in_a_short_window_at_1024_pixels(qtbot, short):
    """At 1024 × 700 the hint line gave its room to the plots and the chips' colours
    were nowhere said: a short window keeps the key, short, beside the field."""
    from posviz.gui.tokens.text_row import SHORT_KEY
    row = TextRow()
    qtbot.addWidget(row)
    row.resize(1024 - 250, 60)              # the window's width less the model panel
    row.set_short(short)
    row.show()
    qtbot.waitExposed(row)
    shown = row.key if short else row.hint
    assert shown.isVisible() and not (row.hint if short else row.key).isVisible()
    assert shown.width() >= shown.sizeHint().width()                   # whole, not cut
    assert row.edit.width() >= 300                                     # room to type
    for word in ("blue: ", "orange: ", "grey: "):
        assert word in shown.text(), (word, shown.text())
    assert SHORT_KEY in row.key.text() and "Drag the chips" in row.key.toolTip()
