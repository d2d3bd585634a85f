"""``posviz --install-desktop`` / ``--uninstall-desktop``: the application menu entry, its
icon and the .posviz file type, for the current user (XDG base directories).

Files written under $XDG_DATA_HOME (default ~/.local/share):

    applications/posviz.desktop                    the menu entry, running this posviz
    icons/hicolor/scalable/apps/posviz.svg         its icon
    icons/hicolor/scalable/mimetypes/application-x-posviz-session.svg
    mime/packages/posviz.xml                       *.posviz is application/x-posviz-session

The desktop's caches are refreshed when their tools are installed (update-mime-database,
update-desktop-database, gtk-update-icon-cache); without them the files still count at
the next log-in. No Qt and no torch here.
"""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from .document.scenarios import resource

MIME = "application/x-posviz-session"


def data_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def desktop_files(home: Path | None = None) -> dict[str, Path]:
    """What is installed: name -> path under the data home."""
    home = home or data_home()
    icons = home / "icons" / "hicolor" / "scalable"
    return {"entry": home / "applications" / "posviz.desktop",
            "icon": icons / "apps" / "posviz.svg",
            "mime_icon": icons / "mimetypes" / f"{MIME.replace('/', '-')}.svg",
            "mime": home / "mime" / "packages" / "posviz.xml"}


def launcher() -> str:
    """The command the menu entry runs: the posviz script beside this Python, else
    ``python -m posviz``."""
    script = Path(sys.executable).with_name("posviz")
    if script.is_file():
        return shlex.quote(str(script))
    return f"{shlex.quote(sys.executable)} -m posviz"


def _refresh(home: Path) -> None:
    for tool, folder in (("update-mime-database", home / "mime"),
                         ("update-desktop-database", home / "applications"),
                         ("gtk-update-icon-cache", home / "icons" / "hicolor")):
        if shutil.which(tool) and folder.is_dir():
            args = [tool, "-f", "-t", str(folder)] if tool == "gtk-update-icon-cache" \
                else [tool, str(folder)]
            subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                           check=False)


def install(home: Path | None = None) -> list[Path]:
    """Write the entry, icons and MIME type; the paths written."""
    files = desktop_files(home)
    entry = resource("desktop", "posviz.desktop").read_text(encoding="utf-8")
    entry = entry.replace("Exec=posviz %F", f"Exec={launcher()} %F")
    for path in files.values():
        path.parent.mkdir(parents=True, exist_ok=True)
    files["entry"].write_text(entry, encoding="utf-8")
    for key in ("icon", "mime_icon"):
        shutil.copyfile(resource("icons", "posviz.svg"), files[key])
    shutil.copyfile(resource("desktop", "posviz-session.xml"), files["mime"])
    _refresh(home or data_home())
    return list(files.values())


def uninstall(home: Path | None = None) -> list[Path]:
    """Remove what ``install`` wrote; the paths removed."""
    removed = []
    for path in desktop_files(home).values():
        if path.is_file():
            path.unlink()
            removed.append(path)
    _refresh(home or data_home())
    return removed


def main(action: str) -> int:
    """--install-desktop / --uninstall-desktop: one line per file, exit 2 on failure."""
    try:
        paths = install() if action == "install" else uninstall()
    except OSError as error:
        print(f"posviz: error: {error.strerror or error}: {error.filename or ''}",
              file=sys.stderr)
        return 2
    verb = "installed" if action == "install" else "removed"
    for path in paths:
        print(f"{verb} {path}")
    if not paths:
        print("nothing to remove")
    return 0
