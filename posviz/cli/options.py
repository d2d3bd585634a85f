"""The options every command shares: the model, its settings, the text and the order.

Each model and position flag is built from ``core.options.OPTIONS``: its default, its
choices or range and its help text are read from there, never written here. Building the
parser imports no torch; only ``evaluate`` runs a model.
"""
from __future__ import annotations

import argparse

from ..core.config import ModelConfig, Positions
from ..core.errors import PosvizInputError
from ..core.options import MODEL_OPTIONS, OPTIONS, POSITION_OPTIONS, Option

# Option name -> its flag, where the flag is not the name with dashes.
FLAGS = {"mode": "--positions"}
NOT_ON_THE_COMMAND_LINE = tuple(n for n, o in OPTIONS.items() if not o.chosen)


def flag(name: str) -> str:
    """The command-line flag of an option ('d_model' -> '--d-model', 'residual' ->
    '--no-residual', since residual connections are on unless switched off)."""
    if name in FLAGS:
        return FLAGS[name]
    dashed = name.replace("_", "-")
    option = OPTIONS[name]
    return f"--no-{dashed}" if option.kind is bool and option.default else f"--{dashed}"


def _number(option: Option, value) -> str:
    return f"{value:g}" if option.kind is float else str(value)


def help_text(option: Option) -> str:
    """The option's tooltip, its range and its default (escaped for argparse)."""
    tip = option.tip.replace("%", "%%")
    if option.kind is bool:
        return f"{tip} (default: {'on; this flag turns it off' if option.default else 'off'})"
    if option.choices:
        return f"{tip} (default: {option.default})"
    return (f"{tip} ({_number(option, option.low)} to {_number(option, option.high)}; "
            f"default: {_number(option, option.default)})")


def _add_option(group, name: str) -> None:
    option = OPTIONS[name]
    if option.kind is bool:
        group.add_argument(flag(name), dest=name, default=option.default,
                           action="store_false" if option.default else "store_true",
                           help=help_text(option))
    elif option.choices:
        group.add_argument(flag(name), dest=name, choices=option.choices,
                           default=option.default, help=help_text(option))
    else:
        group.add_argument(flag(name), dest=name, type=option.kind, default=option.default,
                           help=help_text(option))


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that choose and configure a model, shared by every command."""
    model = parser.add_argument_group("model")
    model.add_argument("--model", metavar="NAME|PATH",
                       help="a real pretrained model: a local folder, a name in the local "
                            "Hugging Face cache, or 'minilm' (default: the built-in model)")
    for name in MODEL_OPTIONS:
        if name not in NOT_ON_THE_COMMAND_LINE:
            _add_option(model, name)
    positions = parser.add_argument_group("positions")
    for name in POSITION_OPTIONS:
        _add_option(positions, name)
    parser.add_argument("--text", help="the sentence to tokenize (default: the example "
                                       "sentence the window opens with)")
    parser.add_argument("--order", metavar="I,J,...",
                        help="the permutation to compare against the original order "
                             "(default: reverse the movable tokens)")


def model_config(args: argparse.Namespace) -> ModelConfig:
    """The built-in model's settings, validated against OPTIONS."""
    return ModelConfig(**{name: getattr(args, name) for name in MODEL_OPTIONS
                          if name not in NOT_ON_THE_COMMAND_LINE}).validate()


def positions(args: argparse.Namespace) -> Positions:
    return Positions(**{name: getattr(args, name) for name in POSITION_OPTIONS}).validate()


def build_backend(args: argparse.Namespace, config: ModelConfig | None):
    """The backend the options ask for: a pretrained model, or the built-in one."""
    if args.model:
        from ..core.hf import load_backend
        return load_backend(args.model)
    from ..core.backend import BuiltinBackend
    return BuiltinBackend(config)


def evaluate(args: argparse.Namespace):
    """Options -> (Session, Evaluation) for the order asked for.

    Every setting is checked before torch is imported, so a bad one fails fast.
    """
    if args.text is not None and not args.text.strip():
        raise PosvizInputError("the text is empty")
    config = None if args.model else model_config(args)
    where = positions(args)

    from ..core.engine import Engine
    from ..core.session import DEFAULT_TEXT, Session
    from ..core.symmetry import parse_order

    session = Session(build_backend(args, config),
                      DEFAULT_TEXT if args.text is None else args.text, where)
    if args.order is None:
        session.reverse()
    else:
        session.set_order(parse_order(args.order, len(session.seq)))
    return session, Engine(session.backend).evaluate(session.seq, session.order,
                                                      session.positions)
