"""The built-in instrumented transformer.

A small encoder (or decoder, with a causal mask) written out in full, in the spirit of
nanoGPT and minGPT, that records everything it computes into a Trace: attention is
computed explicitly (never through a fused kernel) so its weights can be shown. Each
value worth seeing passes a named HookPoint (models.hooks), which is how it is recorded.
Weights are drawn from a seeded generator (the symmetry argument holds for every choice
of weights); a model with a vocabulary can also be trained (models.training.train) and its
weights read from a checkpoint (models.training.checkpoint): the same code runs both.
"""
from __future__ import annotations

import hashlib
import math
from dataclasses import replace
from typing import Callable

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from ...errors import PosvizInputError
from ..config import ModelConfig
from ..encodings import PositionalEncoding, make_encoding
from ..hooks import KEYS, VALUES, HookPoint, Recorder, block_hook, hook_points, trace_from
from ..orders import sees_in_frame
from ..request import Request
from ..trace import Trace

# Per layer, the keys and values attention used, (h, n, d_head) each (keys after RoPE):
# what a causal run's later slots need of its earlier ones.
KeyValues = list[tuple[torch.Tensor, torch.Tensor]]

def residual_depth(cfg: ModelConfig) -> int:
    """How many branch outputs the residual stream sums: 2L with residuals, else 1.

    Output projections are scaled by 1/sqrt of it, as in GPT-2 and nanoGPT, so the stream
    keeps its scale with depth; without residuals each block keeps unit scale instead.
    """
    return 2 * cfg.layers if cfg.residual else 1


def _normal(gen: torch.Generator, *shape: int, std: float) -> nn.Parameter:
    return nn.Parameter(torch.randn(*shape, generator=gen, dtype=torch.float64) * std,
                        requires_grad=False)


class Attention(nn.Module):
    """Multi-head self-attention, computed in full so its weights can be recorded."""

    def __init__(self, cfg: ModelConfig, gen: torch.Generator):
        super().__init__()
        d, self.h, self.d_head = cfg.d_model, cfg.heads, cfg.d_head
        # std 1.5/sqrt(d) gives scores of unit-ish spread: attention neither flat nor one-hot.
        self.w_q = _normal(gen, d, d, std=1.5 / math.sqrt(d))     # (d, h*d_head)
        self.w_k = _normal(gen, d, d, std=1.5 / math.sqrt(d))
        self.w_v = _normal(gen, d, d, std=1.0 / math.sqrt(d))
        self.w_o = _normal(gen, d, d, std=1.0 / math.sqrt(d * residual_depth(cfg)))
        self.hook_k = HookPoint()                                         # (h, n, d_head)
        self.hook_v = HookPoint()                                         # (h, n, d_head)
        self.hook_attn_scores = HookPoint()                               # (h, m, n)
        self.hook_pattern = HookPoint()                                   # (h, m, n)

    def forward(self, x, position_ids, encoding: PositionalEncoding, bias, mask, past=None):
        """x: (m, d) at the (m,) position_ids -> output (m, d). With ``past`` (the keys
        and values of the slots before these, (h, n - m, d_head) each) the m rows are
        the last of n; bias and mask are then their (m, n) rows.

        A leading batch axis runs B orders at once: x (B, m, d) at (B, m) position ids,
        bias (B, h, m, n) or shared, the recorded values (B, h, ., .)."""
        *batch, m, d = x.shape
        def heads(w):                                   # (..., m, d) -> (h, B*m, d_head)
            return (x.reshape(-1, d) @ w).view(-1, self.h, self.d_head).transpose(0, 1)
        # q scaled by 1/sqrt(d_head) here, a pass over (m, d) rather than the (h, m, n)
        # scores (exact when d_head is a power of 4; RoPE's rotation is linear)
        q = heads(self.w_q) * (1 / math.sqrt(self.d_head))
        k, v = heads(self.w_k), heads(self.w_v)
        q, k = encoding.rotate(q, k, position_ids.reshape(-1))   # per row: any batch
        if batch:                                       # (h, B*m, .) -> (B, h, m, .)
            q, k, v = (t.reshape(self.h, *batch, m, self.d_head).movedim(0, -3)
                       for t in (q, k, v))
        if past is not None:
            k, v = torch.cat([past[0], k], dim=-2), torch.cat([past[1], v], dim=-2)  # (h, n, .)
        k, v = self.hook_k(k), self.hook_v(v)
        # one (h, m, n) tensor for the scores and then, in place, the weights: the
        # largest of a long input's values (268 MB a layer at n = 4,096)
        scores = q @ k.transpose(-2, -1)                                 # (h, m, n)
        if bias is not None:
            scores += bias
        if mask is not None:
            scores.masked_fill_(~mask, float("-inf"))
        weights = self.hook_pattern(_softmax_(self.hook_attn_scores(scores)))  # (h, m, n)
        out = (weights @ v).movedim(-3, -2)                              # (m, h, d_head)
        return out.reshape(*batch, m, -1) @ self.w_o                     # (m, d)


def _softmax_(scores: torch.Tensor) -> torch.Tensor:
    """softmax over the last axis, written over the scores: torch's own kernel, so the
    numbers are torch.softmax's, in one call where exp(s - max) / sum in place took five
    (4 against 22 us a layer at n = 16); out of place while training, whose backward
    needs its input."""
    if scores.requires_grad:
        return torch.softmax(scores, dim=-1)
    return torch.softmax(scores, dim=-1, out=scores)


class MLP(nn.Module):
    def __init__(self, cfg: ModelConfig, gen: torch.Generator):
        super().__init__()
        d, f = cfg.d_model, cfg.ff_width
        self.w_in = _normal(gen, d, f, std=1.0 / math.sqrt(d))           # (d, d_ff)
        self.b_in = _normal(gen, f, std=0.1)
        self.w_out = _normal(gen, f, d, std=1.0 / math.sqrt(f * residual_depth(cfg)))  # (d_ff, d)

    def forward(self, x):
        """(n, d) -> (n, d)."""
        return F.gelu(F.linear(x, self.w_in.T, self.b_in)) @ self.w_out  # bias in the product


class Block(nn.Module):
    """One transformer block; norm placement and residuals as configured."""

    def __init__(self, cfg: ModelConfig, gen: torch.Generator):
        super().__init__()
        self.cfg = cfg
        self.attn = Attention(cfg, gen)
        self.mlp = MLP(cfg, gen)
        use_norm = cfg.norm != "none"
        self.ln1 = nn.LayerNorm(cfg.d_model, dtype=torch.float64) if use_norm else nn.Identity()
        self.ln2 = nn.LayerNorm(cfg.d_model, dtype=torch.float64) if use_norm else nn.Identity()
        self.hook_resid_pre = HookPoint()                                 # (n, d)
        self.hook_attn_out = HookPoint()                                  # (n, d)
        self.hook_mlp_out = HookPoint()                                   # (n, d)
        self.hook_resid_post = HookPoint()                                # (n, d)

    def forward(self, x, position_ids, encoding, bias, mask, past=None):
        """x: (m, d) -> (m, d); ``past`` as in Attention.forward."""
        pre, residual = self.cfg.norm == "pre", self.cfg.residual
        x = self.hook_resid_pre(x)
        a = self.hook_attn_out(self.attn(self.ln1(x) if pre else x, position_ids, encoding,
                                         bias, mask, past))
        x = x + a if residual else a
        if self.cfg.norm == "post":
            x = self.ln1(x)
        m = self.hook_mlp_out(self.mlp(self.ln2(x) if pre else x))
        x = x + m if residual else m
        if self.cfg.norm == "post":
            x = self.ln2(x)
        return self.hook_resid_post(x)


class InstrumentedTransformer(nn.Module):
    """Token embeddings + positional encoding + L blocks, recording a Trace per forward.

    Without a vocabulary (``vocab`` 0) its tokens are words, each embedded by a seeded
    hash of it, so any text runs. With one, its tokens are ids into an embedding table
    of ``vocab`` rows, and a final norm and that table, tied, give next-token logits
    (``logits``): what a trained checkpoint holds.
    """

    def __init__(self, cfg: ModelConfig, vocab: int = 0):
        super().__init__()
        self.cfg = cfg.validate()
        gen = torch.Generator().manual_seed(cfg.seed)
        self.encoding = make_encoding(cfg.pe, d_model=cfg.d_model, n_heads=cfg.heads,
                                      scale=cfg.pe_scale, seed=cfg.seed, max_len=cfg.max_len)
        self.blocks = nn.ModuleList(Block(cfg, gen) for _ in range(cfg.layers))
        self.vocab = vocab
        if vocab:           # drawn after the blocks: they are the random model's
            self.embed = nn.Embedding.from_pretrained(torch.randn(    # (V, d), fixed
                vocab, cfg.d_model, generator=gen, dtype=torch.float64))  # until trained
            self.ln_final = (nn.LayerNorm(cfg.d_model, dtype=torch.float64)
                             if cfg.norm == "pre" else nn.Identity())
        self.hook_embed = HookPoint()                                     # (n, d)
        self.hook_pos_embed = HookPoint()                                 # (n, d)
        self.hook_points = hook_points(self)       # "blocks.0.attn.hook_pattern" -> point
        self.dtype = getattr(torch, cfg.dtype)
        self.to(self.dtype)
        # A learned table (learned positions, T5's buckets) is a weight like the others,
        # kept in float64 as the encoding computes
        table = getattr(self.encoding, "table", None)
        if table is not None:
            self.encoding.table = self.pe_table = nn.Parameter(table, requires_grad=False)
        self._embedding_cache: dict[str, torch.Tensor] = {}
        # each Trace's extras (asdict is slow); the backend adds which weights it loaded
        self.extras = {"model": "built-in", "config": cfg.to_dict()}

    def embed_word(self, word: str) -> torch.Tensor:
        """One word -> its (d,) embedding: the same for every occurrence (case-folded)."""
        key = word.casefold()
        vector = self._embedding_cache.get(key)
        if vector is None:
            digest = hashlib.blake2b(f"{self.cfg.seed}\0{key}".encode(), digest_size=8).digest()
            gen = torch.Generator().manual_seed(int.from_bytes(digest, "little") >> 1)
            vector = torch.randn(self.cfg.d_model, generator=gen, dtype=torch.float64)
            vector = vector.to(self.dtype)
            self._embedding_cache[key] = vector
        return vector

    def embed_tokens(self, tokens) -> torch.Tensor:
        """U tokens -> (U, d): ids into the table of a model with a vocabulary, else
        words (embed_word)."""
        if self.vocab:
            return self.embed.weight[torch.as_tensor(list(tokens), dtype=torch.long)]
        return torch.stack([self.embed_word(w) for w in tokens])

    def hidden(self, ids: torch.Tensor) -> torch.Tensor:
        """Token ids (B, n) at positions 0..n-1 -> the last hidden states (B, n, d):
        the forward a training step differentiates, nothing recorded."""
        B, n = ids.shape
        pos = torch.arange(n).expand(B, n)                                  # (B, n)
        self.encoding.check(pos[0])
        mask = torch.ones(n, n, dtype=torch.bool).tril() if self.cfg.causal else None
        return self._blocks(self.embed(ids), pos, self._bias(pos[:1]), mask)

    def logits(self, hidden: torch.Tensor) -> torch.Tensor:
        """(..., d) last hidden states -> (..., V) next-token logits: the final norm,
        then the embedding table, scaled by 1/sqrt(d) as T5 scales a tied head."""
        table = self.embed.weight                                           # (V, d)
        return (self.ln_final(hidden.to(table.dtype)) @ table.T) * self.cfg.d_model ** -0.5

    def run(self, words, request: Request,
            should_stop: Callable[[], bool] | None = None) -> Trace:
        """The Trace of one order (models.request.Request) of ``words``, the n tokens in
        their original order. ``should_stop`` is asked before each block and after each
        branch; True raises errors.Cancelled. The maps go to ``request.maps`` as they
        pass when given, else into the Trace; with ``request.keep_past`` (causal) the
        Trace keeps its keys and values (``Trace.past``) for later suffix runs."""
        if request.batched:
            raise ValueError("a batch of orders runs through record, with a recorder")
        L = self.cfg.layers
        recorder = Recorder(should_stop, layers=L, maps=request.maps, scores=request.scores)
        pos = self.record(words, request, recorder)
        kv = [(recorder.values.pop(block_hook(l, KEYS)),
               recorder.values.pop(block_hook(l, VALUES))) for l in range(L)]
        trace = trace_from(recorder, L, tuple(words[i] for i in request.rows()),
                           pos[request.start:].numpy(),
                           extras={**self.extras, "config": dict(self.extras["config"])})
        return replace(trace, past=kv) if request.keep_past else trace

    @torch.inference_mode()
    def record(self, words, request: Request, recorder: Recorder) -> torch.Tensor:
        """Run ``request`` over ``words`` (the n tokens in their original order) with
        every hook point tapped by ``recorder``; returns the position ids each row was
        given, as a tensor ((n,) or (B, n)). A batch of orders (B, n) records every value
        with a leading batch axis of B.

        Aligned: each order is run in the words' own frame: row i is word i, at the
        position id and under the mask it has at its slot in that order. Every
        operation but attention works row by row, and attention sees its keys permuted
        together with their positions and mask, so what is recorded is the slot-order
        run with its rows and columns put back, to rounding.

        Suffix (causal, one order): only slots start..n-1 are computed, from
        ``request.past``, the keys and values (``Trace.past``) of a run whose first
        ``start`` slots had these words at these positions. The recorded rows are those
        slots only."""
        pos = torch.as_tensor(request.position_ids, dtype=torch.long)       # (n,) or (B, n)
        n, start, batch = request.n, request.start, request.batched
        if n == 0:
            raise PosvizInputError("there are no tokens to run")
        if len(words) != n:
            raise PosvizInputError(f"orders of {n} tokens for {len(words)} words")
        if request.aligned:
            return self._record_aligned(words, request.order, pos, recorder)
        if (start or request.keep_past) and not self.cfg.causal:
            raise ValueError("only a causal model runs a suffix from earlier keys")
        self.encoding.check(pos.reshape(-1))
        table = self.embed_tokens(words)                                    # (n, d)
        emb = table[torch.as_tensor(request.rows())]                        # (B, n, d) or (m, d)
        bias = self._bias(pos)                        # (h, n, n), (B, h, n, n) or None
        if bias is not None and not batch:
            bias = bias[:, start:]                                          # (h, m, n)
        mask = (torch.ones(n, n, dtype=torch.bool).tril()[start:] if self.cfg.causal
                else None)                                                  # (m, n)
        with recorder.watch(self.hook_points):
            self._blocks(emb, pos if batch else pos[start:], bias, mask, request.past, start)
        return pos

    def _record_aligned(self, words, orders, by_slot: torch.Tensor,
                        recorder: Recorder) -> torch.Tensor:
        """record of ``orders`` (n,) or (B, n) in the words' own frame (see record);
        returns each word's position ids, shaped as ``orders``."""
        single = orders.ndim == 1
        orders = orders.reshape(-1, orders.shape[-1])                         # (B, n)
        B, n = orders.shape
        if not (np.sort(orders, axis=1) == np.arange(n)).all():   # numpy: a tenth of torch's
            raise PosvizInputError("each order must be a permutation of the words")
        orders = torch.as_tensor(orders, dtype=torch.long)
        self.encoding.check(by_slot.reshape(-1))
        slot_of = torch.empty_like(orders).scatter_(1, orders, torch.arange(n).expand(B, n))
        pos = by_slot.reshape(B, n).gather(1, slot_of)   # (B, n) word i's id in order b
        emb = self.embed_tokens(words)                                    # (n, d)
        mask = sees_in_frame(slot_of)[:, None] if self.cfg.causal else None   # (B, 1, n, n)
        bias = self._bias(pos)                        # (h, n, n) or (B, h, n, n) or None
        with recorder.watch(self.hook_points):
            if single:
                self._blocks(emb, pos[0], bias, None if mask is None else mask[0, 0])
            else:
                self._blocks(emb.expand(B, n, -1), pos, bias, mask)
        return pos[0] if single else pos

    def _blocks(self, emb, pos, bias, mask, past=None, start=0) -> torch.Tensor:
        """The forward from token embeddings (..., m, d) at position ids (..., m) to the
        last hidden states (..., m, d), every hook point passed; any leading batch axis
        is carried through."""
        emb = self.hook_embed(emb)
        rows = pos.reshape(-1, pos.shape[-1])                               # (B, m)
        shared = rows.shape[0] > 1 and bool((rows == rows[0]).all())      # encoded once
        enc = self.encoding.absolute(rows[0] if shared else pos.reshape(-1))  # (B*m, d) or None
        x = emb if enc is None else emb + self.hook_pos_embed(
            enc.to(self.dtype).reshape((1, *enc.shape) if shared else emb.shape))
        for l, block in enumerate(self.blocks):
            kv = None if past is None else (past[l][0][:, :start], past[l][1][:, :start])
            x = block(x, pos, self.encoding, bias, mask, kv)
        return x

    def _bias(self, pos: torch.Tensor) -> torch.Tensor | None:
        """The score bias at position ids (n,) or (B, n): (h, n, n) when the rows share
        their positions, else (B, h, n, n); None for an encoding without one."""
        rows = pos.reshape(-1, pos.shape[-1])                               # (B, n)
        bias = self.encoding.bias(rows[0], self.cfg.causal)                 # (h, n, n) or None
        if bias is None or bool((rows == rows[0]).all()):
            return None if bias is None else bias.to(self.dtype)
        rest = [self.encoding.bias(p, self.cfg.causal) for p in rows[1:]]
        return torch.stack([bias, *rest]).to(self.dtype)                    # (B, h, n, n)
