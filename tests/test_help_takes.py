"""A command's -h describes only what it takes: ``compare -h``
no longer listed --model, yet its --quiet, its description and its --dtype still spoke of
one; ``paper`` was the only command without --quiet."""
from __future__ import annotations

import argparse
import io
import re
import sys

import pytest

from posviz.cli import main, make_parser


def commands() -> dict[str, argparse.ArgumentParser]:
    parser = make_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


@pytest.mark.parametrize("name", sorted(commands()))
def test_no_command_s_help_names_an_option_it_does_not_take(name):
    command = commands()[name]
    text = command.format_help()
    taken = {option for action in command._actions if action.help != argparse.SUPPRESS
             for option in action.option_strings}
    named = set(re.findall(r"(?<![\w-])--[a-z][a-z0-9-]*", text))
    assert not named - taken, (sorted(named - taken), text)


@pytest.mark.parametrize("name", sorted(commands()))
def test_every_command_takes_quiet(name):
    assert "--quiet" in commands()[name]._option_string_actions


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_paper_quiet_silences_its_telling_on_a_terminal(monkeypatch, capsys):
    told = Terminal()
    monkeypatch.setattr(sys, "stderr", told)
    assert main(["paper", "chi2023", "--json"]) == 0
    assert "checking chi2023" in told.getvalue()
    told = Terminal()
    monkeypatch.setattr(sys, "stderr", told)
    assert main(["paper", "chi2023", "--quiet", "--json"]) == 0
    assert told.getvalue() == ""
