"""Before Run, the Experiments tab says how long a long experiment takes here: from
this machine's last run of it, else an estimate that says it is one (a teacher saw
nothing before pressing Run on Haviv 2022 with trained weights, 17.8 minutes)."""
import pytest

from posviz.gui.experiments.controls import remember_took, takes_words, took_key


@pytest.fixture
def settings(tmp_path):
    from PySide6 import QtCore
    return QtCore.QSettings(str(tmp_path / "posviz.ini"), QtCore.QSettings.Format.IniFormat)


def test_a_long_check_says_an_estimate_then_this_machine_s_last_run(settings, monkeypatch):
    haviv = took_key("paper", "haviv2022", "trained")
    assert takes_words(settings, haviv) == "about 15-18 min (an estimate: its runs on " \
                                           "other machines)"
    assert takes_words(settings, took_key("paper", "haviv2022", "random")) == ""
    assert takes_words(settings, took_key("sweep", "haviv2022", "trained")) == ""
    monkeypatch.setattr("os.getloadavg", lambda: (7.24, 0, 0))
    from types import SimpleNamespace
    tab = SimpleNamespace(settings=settings, _submitted=SimpleNamespace(
        what="paper", paper="haviv2022", weights="trained"))
    remember_took(tab, 1070.0)
    assert takes_words(settings, haviv) == ("takes about 18 min here (last run: 17 min "
                                            "50 s at load 7.2)")
    remember_took(tab, 12.0)                             # quick here: nothing to say
    assert takes_words(settings, haviv) == ""


def shown_tab(qtbot, settings):
    from posviz.gui.experiments.tab import ExperimentsTab
    tab = ExperimentsTab(settings=settings)
    qtbot.addWidget(tab)
    tab.resize(1024, 400)
    tab.show()
    return tab


def choose_haviv_trained(tab) -> None:
    tab.what.setCurrentIndex(tab.what.findData("paper"))
    tab.paper.setCurrentIndex(tab.paper.findData("haviv2022"))
    tab.weights.setCurrentIndex(tab.weights.findData("trained"))


def test_the_tab_says_it_beside_run_for_the_chosen_experiment(qtbot, settings):
    tab = shown_tab(qtbot, settings)
    try:
        choose_haviv_trained(tab)
        assert tab.takes.isVisible() and tab.takes.text().startswith("about 15-18 min")
        tab.what.setCurrentIndex(tab.what.findData("extend"))
        assert tab.takes.text() == "about 4-11 min (an estimate: its runs on other machines)"
        tab.what.setCurrentIndex(tab.what.findData("sweep"))
        assert not tab.takes.isVisible()
    finally:
        tab.shutdown()


def test_after_a_run_its_done_in_says_it_alone(qtbot, settings, monkeypatch):
    """After a long run the row beside Run read "takes about 71 s here (last run: 1 min
    11 s ...)" beside "done in 71.4 s" (a new user's run): the first is for a run to
    come, so it goes while the result shown is the controls' own."""
    from posviz.gui.experiments import controls
    tab = shown_tab(qtbot, settings)
    try:
        tab.what.setCurrentIndex(tab.what.findData("extend"))
        assert tab.takes.isVisible()
        tab.job, tab.result = tab.make_job(), object()     # as a run of it ends
        controls.tell_takes(tab)
        assert not tab.takes.isVisible()
        choose_haviv_trained(tab)                          # another: said again
        assert tab.takes.isVisible()
    finally:
        tab.job = tab.result = None
        tab.shutdown()


def test_a_long_run_is_done_in_minutes_and_seconds():
    """The lab's row read "done in 944.3 s" (a new user's run)."""
    from posviz.gui.experiments.controls import done_words
    assert done_words(71.43) == "done in 71.4 s"
    assert done_words(944.3) == "done in 15 min 44 s"


def test_a_paper_s_record_declares_whether_its_check_runs_the_model_lent(monkeypatch):
    """Whether a check runs the window's loaded model (so its time hangs on which one)
    was decided by a "loaded" among its function's parameters; its Paper declares it,
    and the check is given the model where its Paper says so, whatever it is called."""
    import inspect

    from posviz.analysis.experiments import papers
    from posviz.gui.experiments.controls import runs_loaded
    from posviz.models.training.checkpoint import RANDOM, TRAINED
    for paper in papers.CATALOGUE:                 # the records say what the checks take
        for weights, check in ((RANDOM, paper.random), (TRAINED, paper.trained)):
            takes = check is not None and "loaded" in inspect.signature(check).parameters
            assert runs_loaded(paper.name, weights) == (paper.runs_loaded == weights) \
                == takes, (paper.name, weights)
    given = []
    for presets in (papers.PRESETS, papers.TRAINED_PRESETS):   # checks called otherwise
        monkeypatch.setitem(presets, "sinha2022",
                            lambda *args, **kwargs: given.append(kwargs.get("loaded")))
    lent = {"minilm": object()}
    papers.check_paper("sinha2022", weights=TRAINED, loaded=lent)
    papers.check_paper("sinha2022", weights=RANDOM, loaded=lent)
    assert given == [lent, None]
