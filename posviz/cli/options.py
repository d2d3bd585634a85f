"""The options every command shares: the model, its settings, the text and the order.

Each model and position flag is built from ``models.options.OPTIONS``: its default, its
choices or range and its help text are read from there, never written here. Building the
parser imports no torch; only ``evaluate`` runs a model, through the Python API
(posviz.api), which is what the commands print.

The built-in model's flags are left out of the parsed options unless given (their
default is argparse.SUPPRESS, the registry's default is filled in by ``model_config``),
so a flag given together with ``--model`` is told, not silently ignored.
"""
from __future__ import annotations

import argparse
import sys

from ..errors import PosvizInputError, TextRefused
from ..models.training.checkpoint import ARCHITECTURE, RANDOM, TRAINED, WEIGHTS_TIP
from ..models.config import ModelConfig, Positions
from ..models.hf.sources import BUNDLED
from ..models.options import (MODEL_OPTIONS, OPTIONS, POSITION_OPTIONS, PRECISIONS, Option,
                              check_scale, pretrained_dtype_problem)
from .texts import Once, add_text_arguments

# Option name -> its flag, where the flag is not the name with dashes.
FLAGS = {"mode": "--positions"}
NOT_ON_THE_COMMAND_LINE = tuple(n for n, o in OPTIONS.items() if not o.chosen)
# The settings of the built-in model: a pretrained model (--model) has its own, but for
# the precision it computes in, which may also be half (models.options.PRECISIONS)
BUILTIN_ONLY = tuple(n for n in MODEL_OPTIONS if n not in NOT_ON_THE_COMMAND_LINE)
# The commands whose built-in model's seed is --model-seed (their --seed, if any, seeds
# the orders they run)
EXPERIMENTS = ("sweep", "probe")


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


def _add_option(group, name: str, pretrained: bool = True) -> None:
    """``pretrained``: the command takes --model too (a help text names it only then)."""
    option = OPTIONS[name]
    # A built-in model's setting stays out of the namespace unless the user gives it.
    default = argparse.SUPPRESS if name in BUILTIN_ONLY else option.default
    if option.kind is bool:
        group.add_argument(flag(name), dest=name, default=default,
                           action="store_false" if option.default else "store_true",
                           help=help_text(option))
    elif name == "dtype":                       # a --model also reads half precision
        group.add_argument(flag(name), dest=name, choices=PRECISIONS if pretrained else
                           option.choices, default=default, help=help_text(option)
                           if not pretrained else help_text(option).removesuffix(")")
                           + "; a --model: float32, bfloat16 or float16)")
    elif option.choices:
        group.add_argument(flag(name), dest=name, choices=option.choices,
                           default=default, help=help_text(option))
    else:
        group.add_argument(flag(name), dest=name, type=option.kind, default=default,
                           help=help_text(option))


def add_builtin_options(group, leave_out: tuple[str, ...] = (),
                        pretrained: bool = True) -> None:
    """The built-in model's flags (the registry's default filled in by model_config);
    ``pretrained`` False: the command takes no --model, and its help names none."""
    for name in BUILTIN_ONLY:
        if name not in leave_out:
            _add_option(group, name, pretrained)


def bundled_models() -> str:
    """The bundled model names with their labels, for --help ('minilm (all-MiniLM...)')."""
    return ", ".join(f"'{spec}' ({bundled.name})" for spec, bundled in BUNDLED.items())


def add_model_arguments(parser: argparse.ArgumentParser, leave_out: tuple[str, ...] = (),
                        pretrained: bool = True) -> None:
    """The options that choose and configure a model, shared by every command (but the
    built-in model's options ``leave_out``); ``pretrained`` False: a command of the
    built-in model only, whose help names no --model (its flags taken to be refused)."""
    model = parser.add_argument_group("model", "The built-in model, configured by the flags "
                                      "below" + (", unless --model names a pretrained one "
                                      "(which brings its own settings)." if pretrained else "."))
    shown = None if pretrained else argparse.SUPPRESS
    model.add_argument("--model", metavar="NAME|PATH",
                       help=shown or f"a pretrained model: {bundled_models()} (bundled); "
                            "a hub name [ORG/]NAME[@REVISION] (any name that is not a "
                            "folder: gpt2, EleutherAI/pythia-70m), taken from the local "
                            "Hugging Face cache and downloaded into it when absent (unless "
                            "--offline); a model folder; or a .gguf file (default: the "
                            "built-in model)")
    model.add_argument("--offline", action="store_true",
                       help=shown or "never download: a hub name must be in the local cache (also "
                            "when HF_HUB_OFFLINE=1)")
    model.add_argument("--device", choices=("auto", "cpu", "cuda", "mps"), default="cpu",
                       help=shown or "where a --model runs: auto picks an accelerator torch has, "
                            "else the CPU (default: cpu)")
    model.add_argument("--offload-folder", metavar="DIR",
                       help=shown or "a --model larger than the memory: accelerate places its layers "
                            "on the accelerator, then the CPU, then this folder on disk "
                            "(device_map='auto'); the model facts say where they are")
    add_builtin_options(model, leave_out, pretrained)
    model.add_argument("--weights", metavar="random|trained|PATH", default=RANDOM,
                       help=f"the built-in model's weights: {WEIGHTS_TIP} (default: "
                            f"random)")
    positions = parser.add_argument_group("positions")
    for name in POSITION_OPTIONS:
        _add_option(positions, name)
    add_text_arguments(parser)
    parser.add_argument("--order", metavar="I,J,...", action=Once,
                        help="the permutation to compare against the original order: each "
                             "of 0..n-1 once, comma-separated (default: reverse the "
                             "movable tokens)")
    add_quiet(parser, "loading and running steps", pretrained)


def add_quiet(parser, what: str, pretrained: bool = False) -> None:
    """--quiet: ``what`` a command tells on stderr, silenced (progress decides)."""
    parser.add_argument("--quiet", action="store_true",
                        help=f"do not report {what} on stderr (default: report them on a "
                             f"terminal{', and always for a --model' if pretrained else ''})")


def model_config(args: argparse.Namespace) -> ModelConfig:
    """The built-in model's settings (the registry's default where none was given),
    validated against OPTIONS."""
    return ModelConfig(**{name: getattr(args, name, OPTIONS[name].default)
                          for name in BUILTIN_ONLY}).validate()


def builtin_config(args: argparse.Namespace, kinds=None) -> ModelConfig:
    """The built-in model's settings (model_config), those of its checkpoint with
    --weights trained or PATH: refused in one line when there is none, when --seed (which
    draws random weights) is given, when a flag contradicts the checkpoint's, or when
    --pe-scale is given to no encoding it scales (of ``kinds``: compare's, else --pe)."""
    config = model_config(args)
    check_scale("pe_scale" in vars(args), kinds or [config.pe])
    weights = getattr(args, "weights", RANDOM)
    if weights == RANDOM:
        return config
    seed = "--model-seed" if args.command in EXPERIMENTS else "--seed"
    if "seed" in vars(args):
        raise PosvizInputError(f"{seed} draws random weights: it does not apply to "
                               f"--weights {weights}")
    from ..models.training.checkpoint import find
    checkpoint = find(weights, config)
    if weights != TRAINED:
        for name in ARCHITECTURE:
            given = "d_ff" if name == "ff_width" else name
            ours, theirs = getattr(config, name), getattr(checkpoint.config, name)
            if given in vars(args) and ours != theirs:
                raise PosvizInputError(f"{flag(given)} {ours} contradicts the checkpoint "
                                       f"in {weights}, whose {name} is {theirs}")
    return checkpoint.config_for(config)


def builtin_flags_given(args: argparse.Namespace) -> list[str]:
    """The built-in model's flags the user gave, in the order given."""
    return [("--model-seed" if name == "seed" and getattr(args, "command", None) in EXPERIMENTS else
             flag(name)) for name in vars(args) if name in BUILTIN_ONLY]


def check_model_flags(args: argparse.Namespace) -> None:
    """Refuse built-in settings next to --model: they would be silently ignored."""
    given = [f for f in builtin_flags_given(args) if f != "--dtype"] if args.model else []
    if args.model and pretrained_dtype_problem(getattr(args, "dtype", "float32")):
        raise PosvizInputError(pretrained_dtype_problem(args.dtype))
    if not args.model and getattr(args, "offload_folder", None):
        raise PosvizInputError("--offload-folder applies to a --model only")
    if not args.model and getattr(args, "device", "cpu") in ("cuda", "mps"):
        raise PosvizInputError(f"--device {args.device} applies to a --model only: the "
                               f"built-in model runs on the CPU")
    if args.model and getattr(args, "weights", RANDOM) != RANDOM:
        given.append("--weights")
    if given:
        verb = "applies" if len(given) == 1 else "apply"
        raise PosvizInputError(f"{', '.join(given)} only {verb} to the built-in model, not "
                               f"to --model {args.model} (a pretrained model has its own "
                               f"settings)")


def positions(args: argparse.Namespace) -> Positions:
    return Positions(**{name: getattr(args, name) for name in POSITION_OPTIONS}).validate()


def progress(args: argparse.Namespace, stream=None):
    """Where the steps of a long run are reported, one line each on stderr, unless
    --quiet: always on a terminal; and for a pretrained model (loading and running it
    takes from seconds to minutes, downloading it longer) also on a log or a pipe, so
    the log shows what ran; with --progress always. The built-in model answers at once,
    so a pipe gets only its results. None when only a download or a first load's
    conversion is reported (load_model). Bad options, a model that is not there and
    an order no text could take are refused before the first step is told (evaluate),
    so they give one line; an order that does not fit the tokens, once the tokenizer
    has read them (before the weights), as the one line after its steps."""
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    terminal = bool(isatty and isatty())
    forced = getattr(args, "progress", False)              # --progress: on a pipe too
    if getattr(args, "quiet", False) or not (forced or terminal or getattr(args, "model",
                                                                            None)):
        return None                     # a download or a first load's conversion: told
    from ..api import StepPrinter
    return StepPrinter(stream)


def tell_written(paths, stream=None) -> None:
    """One line on stderr naming the files a command wrote beside its results (stdout
    keeps the results), so no file appears unannounced; nothing when none was."""
    paths = [str(path) for path in paths]
    if paths:
        sys.stdout.flush()                 # after the results, on a terminal too
        print(f"posviz: wrote {', '.join(paths)}", file=sys.stderr if stream is None
              else stream, flush=True)


def online(args: argparse.Namespace) -> bool:
    """May a hub name be downloaded? Not with --offline, nor with HF_HUB_OFFLINE=1."""
    from ..models.hf.cache import network_allowed
    return not getattr(args, "offline", False) and network_allowed()


def check_order_form(text: str) -> None:
    """Refuse an order that no token count makes valid (not whole numbers, negative, a
    number twice) before a pretrained model is loaded, so the refusal is the one line on
    stderr; whether it fits the tokens is known once they are."""
    parts = [part for part in text.replace(" ", "").split(",") if part != ""]
    bad = [repr(part) for part in parts if not part.lstrip("+-").isdigit()]
    values = [int(part) for part in parts if not bad]
    negative = [str(v) for v in dict.fromkeys(values) if v < 0]
    repeated = sorted({str(v) for v in values if values.count(v) > 1}, key=int)
    if bad:
        problem = f"whole numbers only, and {', '.join(bad)} {_is(bad)} not"
    elif not parts:
        problem = "no entries"
    elif negative:
        problem = f"{', '.join(negative)} {_is(negative)} out of range"
    elif repeated:
        problem = (f"not a permutation: {', '.join(repeated)} "
                   f"{'repeats' if len(repeated) == 1 else 'repeat'}")
    else:
        return
    raise PosvizInputError(f"--order must be a permutation of 0..n-1 for n tokens, "
                           f"comma-separated (got {text.strip()!r}: {problem})")


def _is(items) -> str:
    return "is" if len(items) == 1 else "are"


def check_model_source(spec: str, may_download: bool = False) -> None:
    """Refuse a pretrained model that is not there (no folder, no config.json, a family
    posviz does not read, a hub name not cached when it may not be downloaded) before
    any step is reported; reads no weights, imports no torch."""
    from ..models.hf.cache import NotCached
    from ..models.hf.sources import read_config, resolve
    try:
        folder, gguf_file, _ = resolve(spec)
    except NotCached:
        if may_download:
            return                              # the hub answers for it, in one line
        raise
    if gguf_file is None:
        read_config(folder)


def load_model(args: argparse.Namespace, config: ModelConfig | None, say=None,
               tokens_read=None):
    """The model the options ask for (posviz.api.load): a pretrained model (its count
    of tokens told to ``tokens_read``), or the built-in one; ``say`` told its steps."""
    from ..api import load
    quiet = say or False
    if args.model:
        return load(args.model, device=getattr(args, "device", "cpu"),
                    offline=not online(args), progress=quiet,
                    dtype=getattr(args, "dtype", "float32"),
                    offload_folder=getattr(args, "offload_folder", None),
                    tokens_read=tokens_read)
    return load(config=config, weights=getattr(args, "weights", RANDOM),
                device=getattr(args, "device", "cpu"), progress=quiet)


def guard_before_loading(args: argparse.Namespace, config: ModelConfig | None,
                         texts: list[str], where: Positions, **experiment):
    """models.limits.guard.check before the model is built or read: the device, the longest of
    ``texts`` against its positions and the memory (random weights read words, so their
    count is exact; other tokenizers give a word one token or more), and ``experiment``
    (guard.check's orders, probe_tokens …) where it is known already. Returns the same
    check of their tokens for a --model's load (``tokens_read``: before its weights)."""
    from ..models.limits import guard
    return guard.check_texts(config if config is not None else args.model, texts,
                      weights=getattr(args, "weights", RANDOM), offset=where.offset,
                      device=getattr(args, "device", "cpu"),
                      dtype=getattr(args, "dtype", "float32"),
                      offloaded=getattr(args, "offload_folder", None) is not None,
                      **experiment)


def evaluate(args: argparse.Namespace):
    """Options -> the api.Report of the order asked for (``report.session`` holds the
    session, ``report.evaluation`` what was computed).

    Every setting is checked before torch is imported, so a bad one fails fast; the
    guard (models.limits.guard) refuses before anything is built or read a device that
    is not there, a text longer than the model's positions and what would not fit in
    memory; an order of another length, before a --model's weights are read."""
    config, text, where, view, tokens_checked = checked(args)

    def tokens_read(count) -> None:     # the tokens, then an order, before the weights
        if tokens_checked is not None:
            tokens_checked(count)
        if args.order is not None:
            from ..models.orders import parse_order
            parse_order(args.order, count(text))
    say = progress(args)
    model = load_model(args, config, say, tokens_read)
    from ..models.limits import guard                # a model not held before: now
    facts = model.describe()
    guard.check_view(int(facts.get("layers") or 0), int(facts.get("heads") or 0), *view)
    return model.compare(text, args.order, positions=where.mode, offset=where.offset,
                         literal=where.literal, progress=say or False)


def checked(args: argparse.Namespace):
    """evaluate's checks before anything is loaded (posviz export makes them before it
    imports the plots' modules: a text too long for MiniLM was refused 3.4 s in, after
    them, where report refuses at once): (config, text, positions, view, the check of
    a --model's tokens)."""
    if args.text is not None and not args.text.strip():
        raise TextRefused("the text is empty")
    check_model_flags(args)
    config = None if args.model else builtin_config(args)
    if args.model:
        check_model_source(args.model, online(args))
        if args.order is not None:
            check_order_form(args.order)
    where = positions(args)

    from ..document.session import DEFAULT_TEXT
    from ..models.backend import split_words
    from ..models.orders import parse_order

    text = DEFAULT_TEXT if args.text is None else args.text
    view = (getattr(args, "layer", None), getattr(args, "head", None))
    # as the config is read; a --model's tokens, as its tokenizer is read
    tokens_checked = guard_before_loading(args, config, [text], where, view=view)
    if config is not None:
        words = len(split_words(text))
        if args.order is not None and args.weights == RANDOM and (
                words <= (config.table_length or words)):
            parse_order(args.order, words)       # random weights' tokens are words
    return config, text, where, view, tokens_checked
