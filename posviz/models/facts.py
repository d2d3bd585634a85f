"""What a model is: its family, positional scheme and sizes, as its configuration states
them. Each backend says its own (``Backend.facts()``): the built-in model from its
ModelConfig, a Hugging Face model from its configuration and family record. Nothing
here imports torch.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field

__all__ = ["ModelFacts", "weight_facts"]


@dataclass(frozen=True)
class ModelFacts:
    """A model's architecture as its configuration states it."""

    model: str
    family: str                      # "built-in" or a family of models.hf.families
    model_type: str                  # transformers' model_type ("built-in" for ours)
    scheme: str                      # its encoding: a kind of models.encodings
    layers: int                      # L
    heads: int                       # h
    kv_heads: int                    # key-value heads (grouped-query attention: < h)
    width: int                       # d
    max_positions: int | None        # None: no table bounds the positions
    mask: str                        # "causal" or "bidirectional"
    parameters: int
    dtype: str
    device: str
    head: str | None = None          # "causal" / "masked" language-model head, or None
    position_offset: int = 0         # learned table rows before position 0
    encoding_parameters: dict = field(default_factory=dict)   # θ, rotated share, buckets:
                                     #   what the encoding's ``describe`` reads
    weights: str = ""                # the built-in model's: "random weights (seed 0)" or how
                                     #   its checkpoint was trained; a real model's when they
                                     #   are not the checkpoint's as it is (a de-quantized GGUF)
    computes_in: str = ""            # the precision it computes in, when not ``dtype``

    def to_dict(self) -> dict:
        return asdict(self)

    def scheme_text(self) -> str:
        """The positional scheme in a few words, with its parameters."""
        from .encodings import ENCODINGS
        encoding = ENCODINGS.get(self.scheme)
        if encoding is None:
            return self.scheme
        return encoding.describe(offset=self.position_offset, **self.encoding_parameters)

    def rows(self) -> list[tuple[str, str]]:
        """(label, value) pairs for a compact table."""
        heads = f"{self.heads}" if self.kv_heads == self.heads else \
            f"{self.heads} ({self.kv_heads} key-value)"
        family = self.family if self.model_type in (self.family, "built-in") else \
            f"{self.family} ({self.model_type})"
        rows = [("Family", family), ("Positions", self.scheme_text()),
                ("Layers × heads", f"{self.layers} × {heads}"), ("Width d", str(self.width)),
                ("Max positions", "unbounded (no position table)" if self.max_positions is None
                 else str(self.max_positions)),
                ("Mask", self.mask), ("Parameters", _count(self.parameters)),
                ("Weights", f"{self.weights + ', ' if self.weights else ''}{self.dtype} "
                            f"{self._computed()}"
                            f"on {self.device}")]
        if self.head:
            rows.insert(1, ("Head", f"{self.head} language model"))
        return rows

    def _computed(self) -> str:
        return f"(computed in {self.computes_in}) " \
            if self.computes_in and self.computes_in != self.dtype else ""


def _count(n: int) -> str:
    for size, unit in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if n >= size:
            return f"{n / size:.3g}{unit}"
    return str(n)


def weight_facts(module) -> tuple[int, str, str]:
    """(parameter count, dtype, device) of a torch module (shared tensors once)."""
    count, dtype, device = 0, "float32", "cpu"
    for k, p in enumerate(module.parameters()):
        if k == 0:
            dtype, device = str(p.dtype).replace("torch.", ""), str(p.device)
        count += p.numel()
    return count, dtype, device
