"""An export's work after its forwards, planned from its options: the model's shape,
whether the head drawn is run again, the text's words (its drawing and writing told by
api.drawing.Drawing)."""
from __future__ import annotations

from ..analysis.experiments.texts import MAX_TEXT_BYTES
from ..api.drawing import ROW_S, Drawing  # noqa: F401   (the export's teller)


def model_shape(args) -> tuple[int, int] | None:
    """(layers, heads) of the model the options name, read from its config before it is
    loaded (None for a --session, or a model this machine does not hold)."""
    if getattr(args, "session", None) is not None:
        return None
    from ..document.spec import ModelSpec
    from ..errors import PosvizInputError
    from ..models.limits.guard import model_shape
    from .options import builtin_config
    try:
        model = args.model or ModelSpec.builtin(builtin_config(args), args.weights).config
        return model_shape(model, getattr(args, "dtype", "float32"))
    except PosvizInputError:    # refused by the run itself, in its own words
        return None


def maps_run_again(shape, tokens: int, args) -> bool:
    """Will the export run its order again for the head drawn: its L × h maps of
    ``tokens`` past models.maps.KEEP_ALL (api.Report.run_for)?"""
    from ..models.maps import KEEP_ALL
    if shape is None:
        return False
    itemsize = 2 if "16" in str(getattr(args, "dtype", "float32")) else 4
    return shape[0] * shape[1] * tokens * tokens * itemsize > KEEP_ALL


def words(args) -> int:
    """The text's words, as the tokens' estimate before the tokenizer reads them."""
    text = getattr(args, "text", None)
    path = getattr(args, "text_file", None)
    if text is None and path not in (None, "-"):
        try:
            with open(path, "rb") as handle:          # an estimate: its head will do
                text = handle.read(MAX_TEXT_BYTES).decode("utf-8", errors="replace")
        except OSError:
            text = None
    return len(text.split()) if text else 1000
