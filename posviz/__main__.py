"""Entry point: `posviz [FILE.posviz]` opens the window; `posviz report|export ...` run
headless."""
from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    whole = argv is None                  # this process is the command (not a caller's)
    argv = sys.argv[1:] if argv is None else argv
    # A first word is a command (a misspelt one is told, not taken for the window).
    # A session file opens the window.
    command = bool(argv) and not argv[0].endswith(".posviz") and (
        not argv[0].startswith("-") or argv[0] in ("-h", "--help", "--version"))
    from .boot import quiet_threads
    quiet_threads(command)           # before the window or a command imports numpy or torch
    if command:
        try:
            from .cli import main as cli_main
            status = cli_main(argv)
        except KeyboardInterrupt:        # while importing the command line: as cli.stopped
            print("posviz: stopped (Ctrl+C)", file=sys.stderr)
            status = 128 + 2
        if whole:
            leave(status)
        return status
    from .gui.app import main as gui_main
    status = gui_main(argv)
    if whole:                         # an experiment's worker may still be in torch: a
        leave(status)                 # teardown under it aborted the process (status 134)
    return status


def leave(status) -> None:
    """End the process once a command or the window is done: its output flushed, its
    threads and exit handlers run, without the interpreter's teardown of torch's and
    transformers' modules (2-8 s of silence after a command's last line:
    benchmarks/README.md; under a window's worker still in torch, an abort)."""
    import atexit
    import contextlib
    import os
    import signal
    import threading

    from .boot import enabled
    # the work is done: a Ctrl+C now printed an 8-line "Exception ignored in atexit
    # callback ... KeyboardInterrupt" from torch's exit handler (a user's run)
    with contextlib.suppress(ValueError):           # ValueError: not the main thread
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    if not enabled("quick-exit"):
        return
    for thread in threading.enumerate():
        if thread is not threading.main_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status if isinstance(status, int) else 0 if status is None else 1)


if __name__ == "__main__":
    sys.exit(main())
