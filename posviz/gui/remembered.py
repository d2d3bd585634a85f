"""What the window remembers between runs besides the last session: the text, the
position ids and the built-in model's options, read at start and written at close."""
from __future__ import annotations

import json


def remembered(settings, model: str | None = None, fresh: bool = False) -> tuple:
    """(text, ModelSpec, Positions) to start with: the remembered ones (defaults where
    missing or no longer valid), with the pretrained ``model`` (models.hf.load_backend's
    source) instead of the built-in one when given. A ``fresh`` start (--text, --model:
    not the last session) takes the default position ids, which belong to a session."""
    from ..document.spec import ModelSpec
    from ..models.config import Positions

    positions = Positions() if fresh else _positions(settings)
    spec = builtin_remembered(settings) if model is None else \
        ModelSpec.pretrained(model, _chooser_label(model))
    return str(settings.value("text", "")), spec, positions


def builtin_remembered(settings):
    """The built-in model as the model panel last had it (its options and weights), the
    defaults where missing or no longer valid: what runs while a pretrained model loads
    at start, and what the panel offers when the user goes back to the built-in one."""
    from ..document.spec import ModelSpec
    from ..errors import PosvizInputError
    from ..models.config import ModelConfig
    from ..models.training.checkpoint import RANDOM

    try:
        config = ModelConfig(**json.loads(settings.value("model/config", "{}") or "{}"))
        config.validate()
    except (TypeError, ValueError):
        return ModelSpec.builtin()
    try:
        return ModelSpec.builtin(config, str(settings.value("model/weights", RANDOM)))
    except PosvizInputError:                # its checkpoint is gone: random weights
        return ModelSpec.builtin(config)


def _chooser_label(model: str) -> str:
    """A bundled model's name as the model chooser lists it ("all-MiniLM-L6-v2
    (bundled)" for ``minilm``): the same model as picked there, named alike everywhere."""
    try:
        from ..models.hf.sources import BUNDLED
    except ImportError:                     # no real-model extra: the load will say so
        return ""
    bundled = BUNDLED.get(model.strip())
    return bundled.label if bundled is not None else ""


def _positions(settings):
    """The remembered position ids, or the defaults where missing or no longer valid."""
    from ..models.config import Positions
    try:
        return Positions(str(settings.value("positions/mode", "slot")),
                         int(settings.value("positions/offset", 0)),
                         settings.value("positions/literal", False) in (True, "true")
                         ).validate()
    except (TypeError, ValueError):
        return Positions()


def remember(settings, session, builtin=None) -> None:
    """Keep the session's text and position ids, and the built-in model's options and
    weights, for next time: those of ``builtin`` (the last built-in ModelSpec that ran,
    also while a pretrained model runs), else of the session's, when built-in."""
    settings.setValue("text", session.text)
    settings.setValue("positions/mode", session.positions.mode)
    settings.setValue("positions/offset", session.positions.offset)
    settings.setValue("positions/literal", session.positions.literal)
    builtin = builtin if builtin is not None else session.spec
    if builtin.is_builtin:
        settings.setValue("model/config", json.dumps(builtin.config.to_dict()))
        settings.setValue("model/weights", builtin.weights)


def keep_geometry(window, settings) -> None:
    """Keep ``window``'s place for restore_geometry: saveGeometry's bytes and the
    rectangle inside its frame (normalGeometry)."""
    settings.setValue("window/geometry", window.saveGeometry())
    settings.setValue("window/normal", window.normalGeometry())


def restore_geometry(window, settings) -> None:
    """The window where it was last (keep_geometry's), held inside its screen's
    available area. restoreGeometry places the frame, adding a title bar it
    guesses before the window is shown: without a window manager (Xvfb), where there is
    none, a window came back 25 px lower than it was left; setGeometry of the inside
    puts it where it was with a frame or without. A saved size larger than the screen
    shrinks to it."""
    from PySide6.QtCore import QByteArray, QRect
    geometry, inner = settings.value("window/geometry"), settings.value("window/normal")
    if not isinstance(geometry, QByteArray) or not window.restoreGeometry(geometry):
        return
    normal = not window.isMaximized() and not window.isFullScreen()
    if normal and isinstance(inner, QRect) and inner.isValid():
        window.setGeometry(inner)
    keep_on_screen(window)


def keep_on_screen(window, shrink: bool = True) -> None:
    """``window`` (not maximised) moved (and shrunk, if ``shrink``) into its screen's
    available area."""
    screen = window.screen()
    if screen is not None and not window.isMaximized() and not window.isFullScreen():
        fit_on_screen(window, screen.availableGeometry(), shrink)


def fit_on_screen(window, area, shrink: bool = True) -> None:
    """Move (and shrink, if needed and ``shrink``) ``window`` so its frame lies inside
    ``area``; one larger than the area, not shrunk, keeps its top left corner in it."""
    frame, inner = window.frameGeometry(), window.geometry()
    extra_w, extra_h = frame.width() - inner.width(), frame.height() - inner.height()
    width, height = inner.width(), inner.height()
    if shrink:
        width = min(width, area.width() - extra_w)
        height = min(height, area.height() - extra_h)
    if (width, height) != (inner.width(), inner.height()):
        window.resize(width, height)
    x = max(min(frame.x(), area.right() + 1 - width - extra_w), area.left())
    y = max(min(frame.y(), area.bottom() + 1 - height - extra_h), area.top())
    if (x, y) != (frame.x(), frame.y()):
        window.move(x, y)
