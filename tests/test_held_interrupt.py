"""A Ctrl+C held while Qt draws (errors.held_interrupt) is raised on the main thread
only, and is not lost when the block ends in another error."""
from __future__ import annotations

import os
import signal
import threading

import pytest

from posviz.errors import held_interrupt, raise_held


def test_a_held_ctrl_c_is_raised_when_the_block_ends_in_another_error():
    with pytest.raises(KeyboardInterrupt) as stopped:
        with held_interrupt():
            os.kill(os.getpid(), signal.SIGINT)         # held, not raised here
            raise ValueError("a bad table")
    assert isinstance(stopped.value.__cause__, ValueError)


def test_an_error_without_a_ctrl_c_stays_that_error():
    with pytest.raises(ValueError):
        with held_interrupt():
            raise ValueError("a bad table")


def test_another_thread_does_not_raise_the_main_thread_s_held_ctrl_c():
    raised = []

    def save() -> None:
        try:
            raise_held()
        except KeyboardInterrupt:
            raised.append("in the thread")
    with pytest.raises(KeyboardInterrupt):
        with held_interrupt():
            os.kill(os.getpid(), signal.SIGINT)
            thread = threading.Thread(target=save)
            thread.start()
            thread.join()
            assert raised == []                         # still held for the main thread
    assert raised == []
