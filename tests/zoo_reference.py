"""An independent forward pass of a zoo checkpoint, in numpy (float64), written from the
papers and the checkpoint's own files (config.json, model.safetensors, tokenizer.json),
sharing no code with posviz's model: what the zoo's numbers are checked against.

The model is a pre-norm causal transformer: token embeddings (plus a sinusoidal or
learned position vector), L blocks of x + attention(LN(x)) then x + MLP(LN(x)), a final
LN and the embedding table as the head, its logits scaled by 1/sqrt(d).
"""
from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
from safetensors.numpy import load_file
import torch

EPS = 1e-5                          # torch.nn.LayerNorm's


def layer_norm(x, weight, bias):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + EPS) * weight + bias


def gelu(x):
    """The exact GELU (erf from torch: numpy has none)."""
    return 0.5 * x * (1 + torch.special.erf(torch.from_numpy(x / math.sqrt(2))).numpy())


def softmax(x):
    """Over the last axis, in place (x is a fresh array of scores: no copy of it)."""
    x -= x.max(-1, keepdims=True)
    np.exp(x, out=x)
    x /= x.sum(-1, keepdims=True)
    return x


def sinusoids(n: int, d: int) -> np.ndarray:
    """Vaswani et al. 2017, §3.5: PE(p, 2i) = sin(p / 10000^(2i/d)), PE(p, 2i+1) = cos."""
    p = np.arange(n)[:, None]
    i = np.arange(0, d, 2)[None, :]
    table = np.zeros((n, d))
    table[:, 0::2] = np.sin(p / 10000 ** (i / d))
    table[:, 1::2] = np.cos(p / 10000 ** (i / d))[:, : d // 2]
    return table


def rotate(x: np.ndarray) -> np.ndarray:
    """RoFormer's rotation, pairs (i, i + d/2) ("rotate half"): (..., n, d) at 0..n-1."""
    n, d = x.shape[-2:]
    angle = np.arange(n)[:, None] * 10000.0 ** (-np.arange(0, d, 2) / d)[None, :]
    cos, sin = np.cos(angle), np.sin(angle)
    a, b = x[..., : d // 2], x[..., d // 2:]
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], -1)


def alibi(n: int, heads: int) -> np.ndarray:
    """Press et al. 2022: head k (from 1) adds -2^(-8k/h) (i - j); (h, n, n)."""
    slopes = 2.0 ** (-8.0 * np.arange(1, heads + 1) / heads)
    distance = np.abs(np.arange(n)[:, None] - np.arange(n)[None, :])
    return -slopes[:, None, None] * distance[None]


def t5_buckets(n: int, buckets: int = 32, max_distance: int = 128) -> np.ndarray:
    """Raffel et al. 2020, causal: distance i - j exact below buckets/2, then
    logarithmic up to max_distance; (n, n) bucket ids."""
    distance = np.maximum(np.arange(n)[:, None] - np.arange(n)[None, :], 0)
    exact = buckets // 2
    with np.errstate(divide="ignore"):
        far = exact + (np.log(np.maximum(distance, 1) / exact) / math.log(max_distance / exact)
                       * (buckets - exact)).astype(np.int64)
    return np.where(distance < exact, distance, np.minimum(far, buckets - 1))


class Reference:
    """A checkpoint folder read into numpy; ``logits(ids)`` for (B, n) token ids."""

    def __init__(self, folder: str | Path):
        folder = Path(folder)
        head = json.loads((folder / "config.json").read_text())
        self.config = head["config"]
        self.w = {k: v.astype(np.float64) for k, v in
                  load_file(str(folder / "model.safetensors")).items()}
        self.layers, self.heads = self.config["layers"], self.config["heads"]
        self.pe = self.config["pe"]

    def logits(self, ids: np.ndarray, last: bool = False) -> np.ndarray:
        """(B, n) -> (B, n, V); with ``last`` only the last slot's, (B, V): the final norm
        and the head act on each slot alone, so the others need not be projected."""
        w, (B, n) = self.w, ids.shape
        d = w["embed.weight"].shape[1]
        h, dh = self.heads, d // self.heads
        x = w["embed.weight"][ids]                                         # (B, n, d)
        if self.pe == "sinusoidal":
            x = x + sinusoids(n, d)
        elif self.pe == "learned":
            x = x + w["pe_table"][:n]
        bias = np.zeros((h, n, n))
        if self.pe == "alibi":
            bias = alibi(n, h)
        elif self.pe == "t5":
            bias = w["pe_table"][t5_buckets(n)].transpose(2, 0, 1)           # (h, n, n)
        future = np.triu(np.ones((n, n), dtype=bool), 1)
        for l in range(self.layers):
            p = f"blocks.{l}."
            a = layer_norm(x, w[p + "ln1.weight"], w[p + "ln1.bias"])
            q, k, v = (((a @ w[p + f"attn.w_{m}"]).reshape(B, n, h, dh)).transpose(0, 2, 1, 3)
                       for m in "qkv")                                      # (B, h, n, dh)
            if self.pe == "rope":
                q, k = rotate(q), rotate(k)
            scores = q @ k.transpose(0, 1, 3, 2)                           # (B, h, n, n)
            scores /= math.sqrt(dh)
            scores += bias
            scores[..., future] = -np.inf
            out = (softmax(scores) @ v).transpose(0, 2, 1, 3).reshape(B, n, d)
            x = x + out @ w[p + "attn.w_o"]
            m = layer_norm(x, w[p + "ln2.weight"], w[p + "ln2.bias"])
            x = x + gelu(m @ w[p + "mlp.w_in"] + w[p + "mlp.b_in"]) @ w[p + "mlp.w_out"]
        if last:
            x = x[:, -1]                                                    # (B, d)
        x = layer_norm(x, w["ln_final.weight"], w["ln_final.bias"])
        return x @ w["embed.weight"].T / math.sqrt(d)


def held_out_ids(folder: str | Path) -> tuple[np.ndarray, int]:
    """The checkpoint's held-out text as one stream of token ids, each paragraph
    followed by the end-of-text token, and that token's id (the tokenizers library)."""
    from tokenizers import Tokenizer
    folder = Path(folder)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    end = tokenizer.token_to_id("<|endoftext|>")
    paragraphs = [" ".join(p.split()) for p in
                  (folder / "held-out.txt").read_text(encoding="utf-8").split("\n\n")
                  if p.strip()]
    ids = []
    for encoding in tokenizer.encode_batch(paragraphs):
        ids += encoding.ids + [end]
    return np.array(ids), end


def last_token_nll(model: Reference, inputs: np.ndarray, targets: np.ndarray) -> float:
    total = 0.0
    for k in range(0, len(inputs), 50):
        logits = model.logits(inputs[k:k + 50], last=True)                 # (b, V)
        logits = logits - logits.max(-1, keepdims=True)
        log_p = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
        total -= log_p[np.arange(len(logits)), targets[k:k + 50]].sum()
    return total / len(inputs)


def order_use(folder: str | Path, windows: int = 400, length: int = 128,
              seed: int = 12345) -> dict:
    """The last token's perplexity over ``windows`` held-out windows of ``length`` slots
    (the start token, then length - 1 tokens, predicting the next), in their order and
    with every token between the start token and the last shuffled."""
    model = Reference(folder)
    ids, end = held_out_ids(folder)
    chunks = ids[: len(ids) // length * length].reshape(-1, length)[:windows]   # (W, length)
    inputs = np.concatenate([np.full((len(chunks), 1), end), chunks[:, :-1]], 1)
    targets = chunks[:, -1]
    rng = np.random.default_rng(seed)
    shuffled = inputs.copy()
    for row in shuffled:
        row[1:-1] = rng.permutation(row[1:-1])
    original = math.exp(last_token_nll(model, inputs, targets))
    after = math.exp(last_token_nll(model, shuffled, targets))
    return {"original": original, "shuffled": after, "ratio": after / original,
            "windows": len(chunks)}
