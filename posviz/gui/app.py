"""`posviz` with no subcommand: open the window.

The window is shown first, with only Qt imported, so it appears in well under a second;
then the controller's worker imports torch, the core and the plots, builds the session
and computes the first evaluation while the window builds its panels.

Settings (window geometry, docks, text, model options) live in QSettings under the
organisation "posviz"; ``POSVIZ_SETTINGS=/path/file.ini`` keeps them in a file of your
choice and ``--reset-settings`` forgets them. The last session (text, order, model and
view) is saved as ``<name>-last-session.posviz`` beside that file and opened at the
next start, unless a FILE.posviz, --text, --model or --reset-settings is given (then
one holding unsaved work is first kept in a file of its own: gui.last_session).
"""
from __future__ import annotations

import argparse
import sys

from .settings import make_settings


def window_parser() -> argparse.ArgumentParser:
    """The window's options (``posviz --help`` names them in its description)."""
    parser = argparse.ArgumentParser(prog="posviz", description="Open the posviz window.")
    parser.add_argument("--reset-settings", action="store_true",
                        help="forget the remembered window, text and model options")
    parser.add_argument("--text", help="start with this sentence")
    parser.add_argument("--model", metavar="NAME|PATH",
                        help="start with this pretrained model: a bundled one ('minilm', "
                             "'smollm2'), a hub name [ORG/]NAME[@REVISION] (from the local "
                             "Hugging Face cache, downloaded when absent unless --offline), "
                             "a model folder or a .gguf file; one that cannot be loaded is "
                             "told in the window, which starts with the built-in model "
                             "(default: the built-in model, or the last session's)")
    parser.add_argument("--offline", action="store_true",
                        help="download no model in this run (also HF_HUB_OFFLINE=1, or "
                             "the model panel's setting)")
    parser.add_argument("--device", choices=("auto", "cpu", "cuda", "mps"), default="cpu",
                        help="where real models run: auto picks an accelerator torch has, "
                             "else the CPU (default: cpu)")
    parser.add_argument("file", nargs="?", metavar="FILE.posviz",
                        help="open this session file (default: the last session)")
    parser.add_argument("--install-desktop", action="store_true",
                        help="add posviz to the application menu and open .posviz files "
                             "with it, for the current user")
    parser.add_argument("--uninstall-desktop", action="store_true",
                        help="remove what --install-desktop added")
    return parser


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = window_parser()
    # Qt's own options (-platform, -style, ...) pass through to QApplication; an unknown
    # long option is a mistake, told in one line (exit 2) rather than passed to Qt.
    args, qt_args = parser.parse_known_args(argv)
    unknown = [arg for arg in qt_args if arg.startswith("--")]
    if unknown:
        print(f"posviz: error: unrecognized arguments: {' '.join(unknown)}", file=sys.stderr)
        raise SystemExit(2)
    if args.model is not None and args.file is not None:
        print("posviz: error: --model and a session file cannot go together: the file "
              "names its own model", file=sys.stderr)
        raise SystemExit(2)
    return args, qt_args


NO_DISPLAY = ("posviz: error: no display found (DISPLAY and WAYLAND_DISPLAY are unset): "
              "work headless with the commands (posviz report, export, sweep, probe, paper, "
              "compare; posviz -h) or from Python (import posviz), or run the window off "
              "screen with QT_QPA_PLATFORM=offscreen")


def display_missing(qt_args: list[str], environ=None) -> bool:
    """Would Qt find no display to open the window on? On Linux and the BSDs a window
    needs X11 (DISPLAY) or Wayland (WAYLAND_DISPLAY), unless a platform is chosen
    (QT_QPA_PLATFORM, -platform): Qt would abort the process instead of saying so."""
    import os
    environ = os.environ if environ is None else environ
    if sys.platform in ("darwin", "win32", "cygwin") or "-platform" in qt_args:
        return False
    return not any(environ.get(name) for name in ("DISPLAY", "WAYLAND_DISPLAY",
                                                   "QT_QPA_PLATFORM"))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args, qt_args = parse_args(argv)
    if args.install_desktop or args.uninstall_desktop:
        from ..desktop import main as desktop
        return desktop("install" if args.install_desktop else "uninstall")
    if display_missing(qt_args):
        print(NO_DISPLAY, file=sys.stderr)
        return 2
    from ..errors import COMMAND_LINE, PosvizInputError, spoken_as
    from ..models.limits.guard import check_device
    try:
        with spoken_as(COMMAND_LINE):
            check_device(args.device)        # before the window, not after a load
    except PosvizInputError as error:
        print(f"posviz: error: {error}", file=sys.stderr)
        return 2
    from .. import boot
    boot.quiet_threads()
    from PySide6.QtWidgets import QApplication

    from ..version import __version__

    app = QApplication.instance() or QApplication([sys.argv[0], *qt_args])
    boot.window(app)                 # before the window's modules are imported
    from .window import MainWindow

    app.setOrganizationName("posviz")
    app.setApplicationName("posviz")
    app.setApplicationVersion(__version__)
    app.setDesktopFileName("posviz")
    settings = make_settings()
    from .folders import remember_recent
    from .last_session import keep_unsaved, kept_remark
    last = args.text is None and args.model is None and not args.reset_settings
    kept = keep_unsaved(settings) if not last or args.file is not None else None
    if args.reset_settings:
        settings.clear()
    if kept is not None:
        remember_recent(settings, kept)
        print(f"posviz: {kept_remark(kept)}", file=sys.stderr)   # a later error hides it
    if args.text is not None:
        settings.setValue("text", args.text)
    window = MainWindow(settings)
    window.controller.device = args.device
    window.controller.online = not args.offline
    if kept is not None:
        window.status.remark = window.files.kept_remark = kept_remark(kept)
    window.show()
    # torch, the core and the plots are imported on the worker from now on, beside the
    # first paint; the first evaluation follows there without waiting for the window.
    window.start(args.file, last=last, model=args.model)
    with spoken_as(COMMAND_LINE):         # the window's messages, as they always were
        return app.exec()


if __name__ == "__main__":
    sys.exit(main())
