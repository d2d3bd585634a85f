"""A dimmed experiment names what differs from the controls, and only that."""
import pytest

pytest.importorskip("PySide6")

from test_experiments_gui import run, tab  # noqa: E402,F401


def test_switching_only_the_experiment_says_so_not_that_the_text_changed(qtbot, tab):
    """After a sweep, choosing the position probe dimmed the sweep under "Computed for
    the text “the cat sat …”", though the text was the same."""
    tab.kind.setCurrentIndex(tab.kind.findData("reverse"))
    run(qtbot, tab)
    assert not tab.figure.is_stale() and not tab.figure.stale_line
    tab.what.setCurrentIndex(tab.what.findData("probe"))
    tab.refresh_stale()
    assert tab.figure.is_stale() and tab.differ == ["experiment"]
    line = "Computed for the sweep; run the position probe to replace it"
    assert tab.figure.stale_line == line and line in tab.figure.heading.text()
    assert "the text" not in tab.figure.heading.text()
    tab.what.setCurrentIndex(tab.what.findData("sweep"))
    tab.refresh_stale()
    assert not tab.figure.is_stale() and not tab.figure.stale_line


def test_a_sweep_of_fixed_orders_shows_no_seed_and_does_not_record_one(qtbot, tab, tmp_path):
    """A swap sweep runs every neighbouring swap: no seed enters it. Its Seed box hid
    as the Count box does, its file records no seed, and a seed set for a random sweep
    meanwhile does not dim it."""
    for kind, drawn in (("swap", False), ("reverse", False), ("all", False),
                        ("random", True), ("prefix", True)):
        tab.kind.setCurrentIndex(tab.kind.findData(kind))
        for box in (tab.seed, tab.count):
            assert box.isVisible() == drawn and tab._labelled[box].isVisible() == drawn
    tab.kind.setCurrentIndex(tab.kind.findData("swap"))
    run(qtbot, tab)
    assert "# seed:" not in tab.export(tmp_path / "swap.csv", "csv").read_text()
    tab.kind.setCurrentIndex(tab.kind.findData("random"))
    tab.seed.setValue(7)
    tab.kind.setCurrentIndex(tab.kind.findData("swap"))
    tab.refresh_stale()
    assert not tab.figure.is_stale() and tab.differ == []
