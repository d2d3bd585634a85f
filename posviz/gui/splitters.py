"""The sizes of the splitters between the plots, remembered per tab across sessions."""
from __future__ import annotations

import json

from PySide6.QtWidgets import QSplitter, QTabWidget

SPLITTERS_KEY = "window/splitters"    # JSON: tab index -> each splitter's sizes
MIN_PANE = 80                         # pixels: less is a pane that was hidden or squashed


class TabSplitters:
    """Saves the splitters of ``tabs`` in ``settings`` and gives each tab its sizes back
    once, when it is first on screen (built)."""

    def __init__(self, tabs: QTabWidget, settings):
        self._tabs = tabs
        self._settings = settings
        self._restored: set[int] = set()

    def _splitters(self, index: int) -> list[QSplitter]:
        page = self._tabs.widget(index)
        return page.findChildren(QSplitter) if page is not None else []

    def _saved(self) -> dict:
        try:
            saved = json.loads(self._settings.value(SPLITTERS_KEY, "{}") or "{}")
        except (TypeError, ValueError):
            return {}
        return saved if isinstance(saved, dict) else {}

    def save(self) -> None:
        """The sizes of every splitter in the tabs built so far (others keep theirs); a
        splitter with a pane hidden for lack of content (size 0) keeps what it had."""
        saved = self._saved()
        for index in range(self._tabs.count()):
            splitters = self._splitters(index)
            if not splitters:
                continue
            before = saved.get(str(index))
            before = before if isinstance(before, list) and len(before) == len(
                splitters) else [None] * len(splitters)
            saved[str(index)] = [
                splitter.sizes() if _fits(splitter, splitter.sizes()) else old
                for splitter, old in zip(splitters, before)]
        self._settings.setValue(SPLITTERS_KEY, json.dumps(saved))

    def restore(self, index: int) -> None:
        """Give a tab's splitters their remembered sizes, once, when it is first built."""
        splitters = self._splitters(index)
        if index in self._restored or not splitters:
            return
        self._restored.add(index)
        sizes = self._saved().get(str(index))
        if isinstance(sizes, list) and len(sizes) == len(splitters):
            for splitter, each in zip(splitters, sizes):
                if _fits(splitter, each):
                    splitter.setSizes(each)


def _fits(splitter: QSplitter, sizes) -> bool:
    """``sizes`` give each of the splitter's panes room to show a figure: never a pane
    collapsed to nothing (one hidden when the sizes were taken), which would keep a pane
    with content a sliver once it is shown again."""
    return isinstance(sizes, list) and len(sizes) == splitter.count() and all(
        isinstance(size, int) and size >= MIN_PANE for size in sizes)
