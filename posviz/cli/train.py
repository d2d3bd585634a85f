"""``posviz train``: train the built-in model as a causal language model.

    posviz train [built-in model options] --out DIR [--corpus kjv|FILE] [--steps N]
                 [--length N] [--batch N] [--vocab N] [--lr X] [--warmup N]
                 [--tokenizer FILE] [--store float16|float32] [--threads N] [--quiet]

Its defaults are the recipe of the shipped checkpoints.

Writes a checkpoint folder (models.training.checkpoint) that ``--weights DIR`` loads in every
command and the window. Every ten seconds stderr tells the step, the loss, the tokens a
second and the time left; Ctrl+C stops the steps, and what was trained is evaluated on
the held-out text and saved (exit status 130).
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..errors import PosvizInputError
from .options import add_builtin_options, model_config

EXIT_INTERRUPTED = 130               # as a shell reports a command ended by Ctrl+C


def add_command(subparsers) -> None:
    from ..models.training.checkpoint import Recipe
    recipe = Recipe()
    parser = subparsers.add_parser(
        "train", help="train the built-in model as a causal language model on a corpus",
        description="Train the built-in model (the window's, with any encoding and size) "
                    "as a causal language model, with a byte-level BPE learnt from the "
                    "corpus, and write a checkpoint folder, which the other commands "
                    "load as their weights.")
    model = parser.add_argument_group("model", "the built-in model (always causal)")
    add_builtin_options(model, leave_out=("mask",), pretrained=False)
    data = parser.add_argument_group("recipe")
    data.add_argument("--corpus", default=recipe.corpus, metavar="kjv|FILE",
                      help="kjv: the King James Bible from the Debian package bible-kjv; "
                           "or a UTF-8 text file, one section a paragraph; one section in "
                           "20 is held out (default: kjv)")
    for name, kind, tip in (
            ("steps", int, "optimiser steps"), ("length", int, "tokens a window predicts: "
             "the training length"), ("batch", int, "windows a step"),
            ("vocab", int, "BPE tokens to learn"), ("lr", float, "AdamW's peak learning "
             "rate"), ("warmup", int, "steps of linear warm-up before the cosine decay")):
        data.add_argument(f"--{name}", type=kind, default=getattr(recipe, name),
                          help=f"{tip} (default: {getattr(recipe, name)})")
    data.add_argument("--start-token", action=argparse.BooleanOptionalAction,
                      default=recipe.start,
                      help="begin every window with a start-of-text token at slot 0, "
                           "which the model then always runs with (default: on, as the "
                           "shipped checkpoints)")
    data.add_argument("--init", metavar="CHECKPOINT", default="",
                      help="start from this checkpoint's weights instead of the seed's: "
                           "the same model but for the encoding (e.g. --pe none from a "
                           "RoPE checkpoint: DroPE's recalibration); its tokenizer too")
    data.add_argument("--tokenizer", metavar="FILE",
                      help="a tokenizer.json to use instead of learning one (another "
                           "checkpoint's, so that both read the same tokens)")
    data.add_argument("--store", choices=("float16", "float32"), default=recipe.store,
                      help="the stored weights' precision: float32 keeps the weights as "
                           "trained (default: float16, as the shipped checkpoints)")
    parser.add_argument("--order-every", type=int, default=500, metavar="N",
                        help="measure the use of order every N steps into the record's "
                             "curve, on 100 held-out windows, its time not counted as "
                             "training (default: 500; 0: only at the end)")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch's threads for the run (default: torch's own choice; "
                             "on a machine other work shares, 1 can be faster: see "
                             "benchmarks/README.md)")
    parser.add_argument("--out", required=True, metavar="DIR",
                        help="the checkpoint folder to write")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")
    parser.add_argument("--json", action="store_true",
                        help="print the checkpoint's folder, training record and "
                             "provenance as one JSON object (posviz.train's to_dict())")
    parser.set_defaults(func=run)


def duration(seconds: float) -> str:
    minutes, seconds = divmod(int(round(seconds)), 60)
    return f"{minutes} min {seconds:02d} s" if minutes else f"{seconds} s"


def reporter(args: argparse.Namespace):
    """(say, progress): lines on stderr, or nothing with --quiet."""
    if args.quiet:
        return None, None

    name = Path(args.out).name              # which run, when several share a log

    def say(text: str) -> None:
        print(f"posviz: {name}: {text}", file=sys.stderr, flush=True)

    def progress(p) -> None:
        from ..api.steps import training_line
        say(training_line(p))
    return say, progress


def note(text: str) -> None:
    """With --quiet, only a note (a recipe posviz changed) is told on stderr."""
    if text.startswith("note: "):
        print(f"posviz: {text}", file=sys.stderr, flush=True)


def run(args) -> int:
    from ..models.training.checkpoint import Recipe, plural
    config = model_config(argparse.Namespace(**{**vars(args), "mask": "causal"}))
    recipe = Recipe(corpus=args.corpus, vocab=args.vocab, length=args.length,
                    batch=args.batch, steps=args.steps, lr=args.lr, warmup=args.warmup,
                    store=args.store, start=args.start_token, init=args.init)
    problems = recipe.problems()
    if problems:
        raise PosvizInputError(problems[0])
    if args.order_every < 0:
        raise PosvizInputError(f"--order-every must be a whole number of at least 0 (got "
                               f"{args.order_every})")           # as api.train says
    if args.threads is not None and not 1 <= args.threads <= 256:
        raise PosvizInputError(f"--threads must be from 1 to 256 (got {args.threads})")
    from ..api import train
    if args.threads is not None:
        import torch
        torch.set_num_threads(args.threads)
    say, progress = reporter(args)
    try:
        trained = train(args.out, recipe=recipe, tokenizer=args.tokenizer, config=config,
                        progress=progress, say=say or note, order_every=args.order_every)
    except KeyboardInterrupt:
        print("posviz: interrupted: nothing saved", file=sys.stderr)
        return EXIT_INTERRUPTED
    checkpoint = trained.checkpoint
    r = checkpoint.record
    if args.json:
        import json
        print(json.dumps(trained.to_dict(), indent=2))
        return EXIT_INTERRUPTED if r["interrupted"] else 0
    print(f"{checkpoint.folder}: {plural(r['steps'], 'step')} in {duration(r['seconds'])}, "
          f"final loss {r['final_loss']:.3f}, held-out perplexity "
          f"{r['held_out_perplexity']:.1f} (unigram {r['unigram_perplexity']:.1f})")
    return EXIT_INTERRUPTED if r["interrupted"] else 0
