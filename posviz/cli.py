"""Headless commands over the same core as the window.

    posviz report [model options] --text TEXT [--order I,J,...] [--json]

Bad input exits with status 2 and one line on stderr, never a traceback.
"""
from __future__ import annotations

import argparse
import json
import math
import sys

from .core.config import DTYPES, MASKS, NORMS, POSITION_MODES, ModelConfig, Positions
from .core.encodings import KINDS
from .core.errors import PosvizInputError
from .core.session import DEFAULT_TEXT

EXIT_BAD_INPUT = 2


class OneLineParser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line (status 2), without the usage."""

    def error(self, message: str):
        raise PosvizInputError(message)


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """The options that choose and configure a model, shared by every command."""
    d = ModelConfig()
    model = parser.add_argument_group("model")
    model.add_argument("--model", metavar="NAME|PATH",
                       help="a real pretrained model: a local folder, a name in the local "
                            "Hugging Face cache, or 'minilm' (default: the built-in model)")
    model.add_argument("--layers", type=int, default=d.layers, help="number of blocks L")
    model.add_argument("--heads", type=int, default=d.heads, help="attention heads h")
    model.add_argument("--d-model", type=int, default=d.d_model, help="model width d")
    model.add_argument("--d-ff", type=int, default=d.d_ff,
                       help="feed-forward width (0: 4 * d-model)")
    model.add_argument("--pe", choices=KINDS, default=d.pe, help="positional encoding")
    model.add_argument("--pe-scale", type=float, default=d.pe_scale,
                       help="weight of the positional encoding against token content")
    model.add_argument("--mask", choices=MASKS, default=d.mask)
    model.add_argument("--norm", choices=NORMS, default=d.norm, help="LayerNorm placement")
    model.add_argument("--no-residual", action="store_true",
                       help="drop the residual (skip) connections")
    model.add_argument("--seed", type=int, default=d.seed, help="weights seed")
    model.add_argument("--dtype", choices=DTYPES, default=d.dtype)
    pos = parser.add_argument_group("positions")
    pos.add_argument("--positions", choices=POSITION_MODES, default="slot",
                     help="slot: positions belong to slots; token: they travel with tokens")
    pos.add_argument("--offset", type=int, default=0, help="position id of the first slot")
    parser.add_argument("--text", default=DEFAULT_TEXT, help="the sentence to tokenize")
    parser.add_argument("--order", metavar="I,J,...",
                        help="the permutation to compare against the original order "
                             "(default: reverse the movable tokens)")


def model_config(args) -> ModelConfig:
    return ModelConfig(layers=args.layers, heads=args.heads, d_model=args.d_model,
                       d_ff=args.d_ff, pe=args.pe, pe_scale=args.pe_scale, mask=args.mask,
                       residual=not args.no_residual, norm=args.norm, seed=args.seed,
                       dtype=args.dtype).validate()


def build_backend(args):
    """The backend the options ask for."""
    if getattr(args, "model", None):
        from .core.hf import load_backend
        return load_backend(args.model)
    from .core.backend import BuiltinBackend
    return BuiltinBackend(model_config(args))


def evaluate(args):
    """Options -> (Session, Evaluation) for the order asked for."""
    from .core.engine import Engine
    from .core.session import Session
    from .core.symmetry import parse_order

    if not args.text.strip():
        raise PosvizInputError("the text is empty")
    session = Session(build_backend(args), args.text,
                      Positions(args.positions, args.offset).validate())
    if args.order is None:
        session.reverse()
    else:
        session.set_order(parse_order(args.order, len(session.seq)))
    return session, Engine(session.backend).evaluate(session.seq, session.order,
                                                      session.positions)


def _format(value) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else f"{value:.3e}"


def report(args) -> int:
    session, ev = evaluate(args)
    rows = ev.comparison.rows()
    if args.json:
        out = {
            "tokens": list(session.tokens),
            "order": ev.order.tolist(),
            "config": {**session.backend.describe(), "positions": args.positions,
                       "offset": args.offset},
            "noise_floor": ev.comparison.floor,
            "layers": rows,
        }
        print(json.dumps(out, indent=2))
        return 0
    floor = ev.comparison.floor
    print(f"model:  {session.backend.name}  "
          + " ".join(f"{k}={v}" for k, v in session.backend.describe().items() if k != "model"))
    print(f"tokens: {' '.join(session.tokens)}")
    print(f"order:  {','.join(map(str, ev.order))}  ->  {' '.join(session.current_tokens)}")
    print(f"noise floor: {floor:.1e} (differences below it are rounding)\n")
    header = ("layer", "hidden eq.", "attention eq.", "last token", "pooled", "hidden states")
    print("{:>5}  {:>11}  {:>13}  {:>11}  {:>11}  {}".format(*header))
    for row in rows:
        verdict = "equivariant" if row["hidden_equivariance"] <= floor else "changed"
        print("{:>5}  {:>11}  {:>13}  {:>11}  {:>11}  {}".format(
            row["layer"], _format(row["hidden_equivariance"]),
            _format(row["attention_equivariance"]), _format(row["last_token_change"]),
            _format(row["pooled_change"]), verdict))
    return 0


def make_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="posviz",
        description="See how positional encodings break the permutation symmetry of "
                    "self-attention. Without a command, posviz opens its window "
                    "(options: --text TEXT, --reset-settings).",
        epilog="Run 'posviz report -h' or 'posviz export -h' for a command's options.")
    parser.add_argument("--version", action="version", version=f"posviz {__import__('posviz').__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    rep = commands.add_parser("report", help="per-layer symmetry metrics for one order")
    add_model_arguments(rep)
    rep.add_argument("--json", action="store_true", help="print one JSON object")
    rep.set_defaults(func=report)
    try:
        from .export import add_export_command
    except ImportError:
        pass
    else:
        add_export_command(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = make_parser().parse_args(argv)
        return args.func(args)
    except PosvizInputError as error:
        print(f"posviz: error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except OSError as error:
        print(f"posviz: error: {error.strerror or error}: {error.filename or ''}".rstrip(": "),
              file=sys.stderr)
        return EXIT_BAD_INPUT
