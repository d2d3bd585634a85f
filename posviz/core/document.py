"""What a session holds besides its tokens: which model runs, and what the user looks at.

Both are plain, frozen values, so a session can be saved, compared and restored, and an
undo step can hold the one before.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from .config import ModelConfig

MOSAIC_MODES = ("difference", "original", "reordered")
DIFFERENCE_RANGES = (1.0, 0.3, 0.1, 0.03, 0.01)    # choices of the symmetric range ±r


@dataclass(frozen=True)
class ModelSpec:
    """Which model runs: the built-in transformer with a config, or a pretrained model.

    ``source`` of a pretrained model is what ``posviz.core.hf.load_backend`` takes: a
    bundled name ("minilm"), a folder, or a name in the local Hugging Face cache.
    """

    config: ModelConfig | None = ModelConfig()     # the built-in model's, or None
    source: str = ""                                # a pretrained model's
    label: str = field(default="", compare=False)   # what a menu shows for it

    @classmethod
    def builtin(cls, config: ModelConfig | None = None) -> "ModelSpec":
        return cls(config=config or ModelConfig())

    @classmethod
    def pretrained(cls, source: str, label: str = "") -> "ModelSpec":
        return cls(config=None, source=source, label=label or source)

    @property
    def is_builtin(self) -> bool:
        return self.config is not None

    @property
    def name(self) -> str:
        return "built-in" if self.is_builtin else (self.label or self.source)

    def to_dict(self) -> dict:
        if self.is_builtin:
            return {"kind": "builtin", "config": self.config.to_dict()}
        return {"kind": "pretrained", "source": self.source, "label": self.label}


@dataclass(frozen=True)
class Selection:
    """What the plots show of an evaluation: a layer (1..L), a head (0..h-1), what the
    mosaic's tiles hold, the colour range of difference maps, and the open tab."""

    layer: int = 1
    head: int = 0
    mosaic: str = "difference"
    difference_range: float = 0.3
    tab: int = 0

    def replace(self, **changes) -> "Selection":
        return replace(self, **changes)

    def clamped(self, layers: int, heads: int) -> "Selection":
        """The same selection with layer and head inside a model of this size."""
        return replace(self, layer=min(max(self.layer, 1), max(layers, 1)),
                       head=min(max(self.head, 0), max(heads - 1, 0)))
