"""The zoo trained from two seeds: what each checkpoint of each seed measured, so that a
comparison between encodings is stated only where both seeds agree.

    python -m posviz.analysis.experiments.seeds SEED0_FOLDER SEED1_FOLDER > seeds.json

Each folder holds one checkpoint per encoding (as scripts/train-zoo writes them). For
each: its held-out perplexity and order use (from its training record), and its
held-out perplexity at 1, 2 and 4 times the training length (press2022's measure).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from ...errors import PosvizInputError
from ...models.training.checkpoint import Checkpoint, zoo

FACTORS = (1, 2, 4)


def measured(checkpoint: Checkpoint) -> dict:
    from ...models.builtin.backend import BuiltinBackend
    from ...models.training.corpus import token_stream
    from ...models.training.train import perplexity
    from .trained import PRESS_TOKENS
    r, length = checkpoint.record, checkpoint.recipe.length
    tokenizer = checkpoint.tokenizer()
    ids = token_stream(tokenizer, checkpoint.held_out())
    start = tokenizer.end_id if checkpoint.start_token else None
    longest = FACTORS[-1] * length
    count = min(PRESS_TOKENS, (len(ids) - 1) // longest * longest)
    model = BuiltinBackend(checkpoint.config, str(checkpoint.folder)).model
    table = checkpoint.config.table_length
    at = {str(f * length): (perplexity(model, ids, f * length, count, start_id=start)
                            if table is None or f * length <= table else None)
          for f in FACTORS}
    return {"held_out_perplexity": r["held_out_perplexity"],
            "order_use": r["order_use"]["ratio"],
            "order_use_all_but_last_two": r["order_use"]["ratio_all_but_last_two"],
            "final_loss": r["final_loss"], "training_minutes": round(r["seconds"] / 60, 1),
            "perplexity_at": at}


def seeds_record(folders: list[str | Path]) -> dict:
    """{"seeds": [...], "recipe": ..., "encodings": {kind: {seed: measured}}}."""
    record: dict = {"seeds": [], "encodings": {}}
    for folder in folders:
        checkpoints = zoo(folder)
        if not checkpoints:
            raise PosvizInputError(f"{folder} holds no checkpoints")
        seed = checkpoints[0].config.seed
        record["seeds"].append(seed)
        record.setdefault("recipe", checkpoints[0].record["recipe"])
        record.setdefault("tokens", {"train": checkpoints[0].record["data"]["train_tokens"],
                                     "held_out": checkpoints[0].record["data"][
                                         "held_out_tokens"]})
        for checkpoint in checkpoints:
            if checkpoint.record["recipe"] != record["recipe"]:
                raise PosvizInputError(f"{checkpoint.folder} was trained otherwise")
            record["encodings"].setdefault(checkpoint.config.pe, {})[str(seed)] = \
                measured(checkpoint)
    return record


def in_both(record: dict, holds) -> bool:
    """Does ``holds(measurements by encoding)`` hold for every seed?"""
    return all(holds({kind: seeds[str(seed)] for kind, seeds in record["encodings"].items()})
               for seed in record["seeds"])


if __name__ == "__main__":
    print(json.dumps(seeds_record(sys.argv[1:]), indent=1))
