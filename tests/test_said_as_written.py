"""A value or an argument a message names is written as the entry point running takes it:
``extend --factors 0,3`` was refused "(got (0, 3))", the tuple it was read into, and
``order-use --length 100000`` was told to "give a shorter length", a word the command
line has no flag for; Python's ``factors=(0, 3)`` and ``length=`` are named as Python
writes them. Each case runs on both surfaces from one table."""
from __future__ import annotations

import re

import pytest

import posviz
from posviz.cli import main
from posviz.errors import PosvizInputError

# (command line, the same call in Python, what the command line says, what Python says)
CASES = {
    "factors": (["extend", "--factors", "0,3"],
                lambda: posviz.extend(factors=(0, 3)),
                "--factors must be whole numbers rising from 1 to at most 64, such as "
                "1,2,4,8 (got '0,3')",
                "factors must be whole numbers rising from 1 to at most 64, such as "
                "(1, 2, 4, 8) (got (0, 3))"),
    "length": (["order-use", "--pe", "rope", "--weights", "trained", "--length", "100000"],
               lambda: posviz.order_use(pe="rope", length=100_000),
               r"the [\d,]+ held-out tokens make no window of 100000 slots: give a "
               r"shorter --length",
               r"the [\d,]+ held-out tokens make no window of 100000 slots: give a "
               r"shorter length"),
}
PYTHON_WORDS = re.compile(r"\b[a-z_]+=\S|\(\d+,|\bNone\b|\bTrue\b|\bFalse\b")
FLAG = re.compile(r"(?<![\w-])--[a-z]")


@pytest.mark.parametrize("case", CASES)
def test_a_message_names_what_was_given_as_each_surface_writes_it(case, capsys):
    argv, call, on_command_line, in_python = CASES[case]
    assert main([*argv, "--quiet"]) == 2
    err = capsys.readouterr().err
    said = err.removeprefix("posviz: error: ").rstrip("\n")
    assert err.count("\n") == 1 and re.fullmatch(re.escape(on_command_line) if case ==
                                                 "factors" else on_command_line, said), said
    assert not PYTHON_WORDS.search(said), said
    with pytest.raises(PosvizInputError) as raised:
        call()
    told = str(raised.value)
    assert re.fullmatch(re.escape(in_python) if case == "factors" else in_python, told), told
    assert not FLAG.search(told), told
