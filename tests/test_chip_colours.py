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
