"""What the guard (models.limits.guard) reads of a model before it checks it: its name,
its positions, its size, its memory check and its layers and heads, from a ModelConfig,
a pretrained model's files (config.json or a GGUF header, its weights not read) or a
loaded Backend."""
from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace

from ...errors import PosvizInputError
from ..config import ModelConfig


@dataclass
class Target:
    """What the checks read of a model: its name, positions, size, and its memory check."""

    name: str
    max_positions: int | None
    sizes: object                   # () -> (layers, width)
    check_memory: object            # (n, extra bytes, offloaded) -> None or Refused
    view: object = lambda: (0, 0)   # () -> (layers, heads); 0: not known


def model_shape(model, dtype: str = "float32") -> tuple[int, int] | None:
    """(layers, heads) of ``model`` (as ``check`` takes it) read from its config before
    it is loaded, 0 where the config does not say; None for a model this machine does not
    hold. A ModelConfig that is not valid raises its PosvizInputError."""
    target = target_of(model, dtype)
    return None if target is None else target.view()


def target_of(model, dtype: str) -> Target | None:
    """What the checks read of ``model``, or None for a pretrained model this machine
    does not hold (its load says why)."""
    from . import memory
    if isinstance(model, ModelConfig):
        from ..encodings import ENCODINGS
        config = model.validate()
        return Target("the built-in model", ENCODINGS[config.pe].table_length(config.max_len),
                       lambda: (config.layers, config.d_model),
                       lambda n, extra, _: memory.check_fits(config, n, extra),
                       lambda: (config.layers, config.heads))
    if isinstance(model, str):
        return _pretrained(model, dtype)
    if isinstance(getattr(model, "config", None), ModelConfig):      # the built-in model
        built = model.config         # its weights are small: counted as when not built
        return Target("the built-in model", model.max_positions,
                       lambda: (built.layers, built.d_model),
                       lambda n, extra, _: memory.check_fits(built, n, extra),
                       lambda: (built.layers, built.heads))

    def sizes() -> tuple[int, int]:                            # a loaded Backend's
        facts = model.describe()
        return int(facts.get("layers") or 1), int(facts.get("d_model") or 1)

    def run_fits(n: int, extra: int, placed: bool) -> None:
        """In the words of its load, read from its files only now (a pretrained model),
        else its weights held as no longer free."""
        source = getattr(model, "source", None)
        offloaded = bool(getattr(getattr(model, "model", None), "hf_device_map", None))
        files = _pretrained(source, getattr(model, "dtype", "float32"), held=True,
                            offloaded=offloaded) if isinstance(source, str) else None
        if files is not None:
            return files.check_memory(n, extra, placed)
        memory.check_run_fits(memory.held_bytes(model), memory.run_bytes(model, n) + extra,
                               n)
    def view() -> tuple[int, int]:
        facts = model.describe()
        return int(facts.get("layers") or 0), int(facts.get("heads") or 0)
    return Target(model.name, model.max_positions, sizes, run_fits, view)


def _pretrained(source: str, dtype: str, held: bool = False,
                offloaded: bool = False) -> Target | None:
    """A pretrained model's target read from its files, or None when this machine does
    not hold it (a hub name not downloaded yet) or cannot read it: its load says why.
    ``held``: the model is loaded, its weights in memory (memory.check_model_fits);
    ``offloaded``: placed by accelerate, whatever the check is told."""
    from ..formats.gguf_header import gguf_config
    from . import memory
    from ..hf.families import BY_MODEL_TYPE
    from ..hf.precision import arithmetic_of
    from ..hf.sources import read_config, resolve
    try:
        folder, gguf_file, name = resolve(source)
        config = read_config(folder) if gguf_file is None else gguf_config(folder / gguf_file)
    except (PosvizInputError, OSError, ValueError):
        return None
    family = BY_MODEL_TYPE.get(config.get("model_type", ""))
    limit = None if family is None else family.max_positions(SimpleNamespace(**config))
    # the layer count (0: the config does not say), one lookup for its size and its view
    known = memory._first(config, "num_hidden_layers", "n_layer", "num_layers", "n_layers")
    layers = known or 1
    width = memory._first(config, "hidden_size", "n_embd", "d_model", "dim", default=1)
    heads = memory._first(config, "num_attention_heads", "n_head", "num_heads", "n_heads")

    def fits(n: int, extra: int, placed: bool) -> None:
        memory.check_model_fits(folder, gguf_file, config, n, dtype, placed or offloaded,
                                extra, computes_in=arithmetic_of(dtype), held=held)
    return Target(name, limit, lambda: (layers, width), fits, lambda: (known, heads))
