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
        from .cli import main as cli_main
        status = cli_main(argv)
        if whole:
            from .boot import leave
            leave(status)
        return status
    from .gui.app import main as gui_main
    return gui_main(argv)


if __name__ == "__main__":
    sys.exit(main())
