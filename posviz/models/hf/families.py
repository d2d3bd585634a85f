"""Every Hugging Face family posviz reads, one record each: the ``model_type`` values it
covers, how it encodes position (an encoding kind of models.encodings, with the
parameters its configuration gives), how it masks, which head it is loaded with, how
non-default positions reach it, where its modules keep the values posviz records, and
what it can do besides an ordinary run. The loader, the backend, the facts, the
machinery figures and prefix reuse read these records and nothing else.

Positions are computed by transformers itself, the way the model does when called the
ordinary way (default position ids, eager attention); the only family arithmetic here is
where position 0 lies in a learned table. Nothing here imports torch.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..facts import ModelFacts, weight_facts


def _zero(config) -> int:
    return 0


def _lm_head(model, hidden):
    """The usual head: a module ``lm_head`` (GPT-2, OPT, RoBERTa, Llama, BLOOM)."""
    return model.lm_head(hidden)


def _neox_head(model, hidden):
    """GPT-NeoX's head: ``embed_out`` in older transformers, ``lm_head`` in newer ones."""
    return (getattr(model, "embed_out", None) or model.lm_head)(hidden)


def config_value(config, *names, default=None):
    """The first of these attributes the configuration sets (families name them
    differently: num_attention_heads, n_head, ...)."""
    for name in names:
        value = getattr(config, name, None)
        if value is not None:
            return value
    return default


def rope_parameters(config, layer_type: str | None = None) -> dict:
    """θ and the rotated share of each head, whichever way transformers stores them
    (``rope_parameters`` per layer type, or flat attributes)."""
    params = getattr(config, "rope_parameters", None) or {}
    if layer_type is not None and isinstance(params.get(layer_type), dict):
        params = params[layer_type]
    elif params and all(isinstance(v, dict) for v in params.values()):
        params = next(iter(params.values()))
    theta = params.get("rope_theta", config_value(config, "rope_theta", "rotary_emb_base"))
    fraction = params.get("partial_rotary_factor", config_value(
        config, "partial_rotary_factor", "rotary_pct", default=1.0))
    return {"base": None if theta is None else float(theta),
            "rotary_fraction": float(fraction or 1.0)}


@dataclass(frozen=True, kw_only=True)
class Family:
    """One layout posviz reads, its fields given by keyword."""

    name: str
    model_types: tuple[str, ...]       # config.json's model_type values it covers
    encoding: str                      # a kind of models.encodings
    mask: str                          # "causal" or "bidirectional"
    head: str | None                   # the LM head it is loaded with: "causal", "masked"
    position_ids: bool                 # its forward takes position ids (else: the slots)
    final_norm: bool                   # its last hidden state is after a final norm
    scheme: str                        # in words, for the README and describe()
    embeddings: Callable               # base model -> (token table, position table or None)
    blocks: Callable                   # base model -> [(layer, attention module returning
                                       #   (output, ..., weights), attention branch, MLP
                                       #   branch)], the branches adding to the residual
    logits: Callable = _lm_head        # (model with its head, (k, d) hidden) -> (k, V)
                                       #   logits through its LM head (default: lm_head)
    bias_table: Callable | None = None  # base model -> its learned table of score biases
                                       #   by relative distance bucket (T5), if any
    aligned: bool = False              # runs an order in the original tokens' frame: every
                                       #   position signal is in the position ids, and a
                                       #   causal model takes its mask as a 4D tensor as
                                       #   given (transformers' masking utilities)
    prefix: bool = False               # suffix runs from a DynamicCache equal full runs
                                       #   (tested): a causal reorder runs from its first
                                       #   moved slot on
    decoder_capable: bool = False      # config.is_decoder makes transformers mask it causally
    lean_attention: str | None = None  # "llama", "bert": its eager attention, run in
                                       #   place (models.hf.attention: the same numbers)
    encoder_only: bool = False         # the encoder of an encoder-decoder, loaded alone
    table_offset: Callable = _zero     # config -> rows of a learned table before position 0
    ids_index_table: bool = False      # position ids index that table directly (RoBERTa)
    parameters: Callable = field(default=lambda config: {})  # config -> the encoding's
                                       #   parameters (models.encodings' describe)

    def mask_of(self, config) -> str:
        """How the model masks attention: "causal" for a BERT or RoBERTa configured as a
        decoder, else as the family does."""
        if self.decoder_capable and getattr(config, "is_decoder", False):
            return "causal"
        return self.mask

    def encoding_of(self, config) -> str:
        """The encoding kind (DistilBERT may use a fixed sinusoidal table)."""
        if getattr(config, "sinusoidal_pos_embds", False):
            return "sinusoidal"
        return self.encoding

    def id_shift(self, config) -> int:
        """What to add to posviz's 0-based position ids before passing them."""
        return self.table_offset(config) if self.ids_index_table else 0

    def max_positions(self, config) -> int | None:
        """The largest position id + 1 the model accepts (None without a table)."""
        if not self.position_ids:
            return None
        table = config_value(config, "max_position_embeddings", "n_positions")
        return None if table is None else int(table) - self.id_shift(config)


def _bert(base):
    return base.embeddings.word_embeddings, base.embeddings.position_embeddings


def _bert_blocks(base):
    return [(layer, layer.attention.self, layer.attention.output.dense, layer.output.dense)
            for layer in base.encoder.layer]


def _decoder_blocks(base):            # Llama and its kin: the default layout
    return [(layer, layer.self_attn, layer.self_attn, layer.mlp) for layer in base.layers]


def _rope(config, layer_type: str | None = None) -> dict:
    """θ (10000 when the configuration does not say) and the rotated share."""
    params = rope_parameters(config, layer_type)
    return {**params, "base": params["base"] or 10000.0}


def _t5(config) -> dict:
    return {"buckets": int(config.relative_attention_num_buckets),
            "max_distance": int(getattr(config, "relative_attention_max_distance", 128))}


def _modernbert(config) -> dict:
    return {**_rope(config, "full_attention"),
            "local_base": _rope(config, "sliding_attention")["base"]}


FAMILIES: tuple[Family, ...] = (
    Family(name="bert", model_types=("bert",), encoding="learned", mask="bidirectional",
           head="masked", position_ids=True, final_norm=False,
           scheme="learned absolute positions", embeddings=_bert, blocks=_bert_blocks,
           logits=lambda model, hidden: model.cls(hidden), aligned=True,
           decoder_capable=True, lean_attention="bert"),
    Family(name="roberta", model_types=("roberta", "xlm-roberta"), encoding="learned",
           mask="bidirectional", head="masked", position_ids=True, final_norm=False,
           scheme="learned absolute positions, offset by the padding index + 1",
           embeddings=_bert, blocks=_bert_blocks, aligned=True, decoder_capable=True,
           table_offset=lambda c: int(getattr(c, "pad_token_id", None) or 0) + 1,
           ids_index_table=True),
    Family(name="distilbert", model_types=("distilbert",), encoding="learned",
           mask="bidirectional", head="masked", position_ids=True, final_norm=False,
           scheme="learned absolute positions",
           embeddings=lambda b: (b.embeddings.word_embeddings,
                                 b.embeddings.position_embeddings),
           blocks=lambda b: [(layer, layer.attention, layer.attention.out_lin,
                              layer.ffn.lin2) for layer in b.transformer.layer],
           logits=lambda m, h: m.vocab_projector(m.vocab_layer_norm(m.activation(
               m.vocab_transform(h)))), aligned=True),
    Family(name="gpt2", model_types=("gpt2",), encoding="learned", mask="causal",
           head="causal", position_ids=True, final_norm=True,
           scheme="learned absolute positions", embeddings=lambda b: (b.wte, b.wpe),
           blocks=lambda b: [(block, block.attn, block.attn, block.mlp) for block in b.h],
           aligned=True, prefix=True),
    Family(name="opt", model_types=("opt",), encoding="learned", mask="causal",
           head="causal", position_ids=True, final_norm=True,
           scheme="learned absolute positions, offset by 2",
           embeddings=lambda b: (b.decoder.embed_tokens, b.decoder.embed_positions),
           blocks=lambda b: [(layer, layer.self_attn, layer.self_attn, layer.fc2)
                             for layer in b.decoder.layers],
           table_offset=lambda c: 2),             # added inside its embedding module
    Family(name="gpt_neox", model_types=("gpt_neox",), encoding="rope", mask="causal",
           head="causal", position_ids=True, final_norm=True,
           scheme="RoPE on a fraction of each head (rotary_pct)",
           embeddings=lambda b: (b.embed_in, None),
           blocks=lambda b: [(layer, layer.attention, layer.attention, layer.mlp)
                             for layer in b.layers],
           logits=_neox_head, parameters=_rope),
    Family(name="llama", model_types=("llama", "mistral", "qwen2", "phi3", "gemma"),
           encoding="rope", mask="causal", head="causal", position_ids=True,
           final_norm=True, scheme="RoPE, grouped-query attention",
           embeddings=lambda b: (b.embed_tokens, None), blocks=_decoder_blocks,
           aligned=True, prefix=True, lean_attention="llama", parameters=_rope),
    Family(name="bloom", model_types=("bloom",), encoding="alibi", mask="causal",
           head="causal", position_ids=False, final_norm=True,
           scheme="ALiBi: a linear bias per head against distance",
           embeddings=lambda b: (b.word_embeddings, None),
           # its attention and MLP add the residual themselves
           blocks=lambda b: [(block, block.self_attention, block.self_attention.dense,
                              block.mlp.dense_4h_to_h) for block in b.h]),
    Family(name="t5", model_types=("t5",), encoding="t5", mask="bidirectional", head=None,
           position_ids=False, final_norm=True,
           scheme="relative position buckets, a learned bias per head (encoder only)",
           embeddings=lambda b: (b.encoder.embed_tokens, None),
           blocks=lambda b: [(block, block.layer[0].SelfAttention,
                              block.layer[0].SelfAttention, block.layer[1].DenseReluDense)
                             for block in b.encoder.block],
           bias_table=lambda b: b.encoder.block[0].layer[0].SelfAttention
           .relative_attention_bias, encoder_only=True, parameters=_t5),
    Family(name="modernbert", model_types=("modernbert",), encoding="rope",
           mask="bidirectional", head="masked", position_ids=True, final_norm=True,
           scheme="RoPE, alternating global and local attention",
           embeddings=lambda b: (b.embeddings.tok_embeddings, None),
           blocks=lambda b: [(layer, layer.attn, layer.attn, layer.mlp)
                             for layer in b.layers],
           logits=lambda model, hidden: model.decoder(model.head(hidden)),
           parameters=_modernbert),
)
FAMILY: dict[str, Family] = {family.name: family for family in FAMILIES}
BY_MODEL_TYPE: dict[str, Family] = {t: f for f in FAMILIES for t in f.model_types}


def facts_of(model, family: Family, name: str, head: str | None = None,
             device: str | None = None) -> ModelFacts:
    """The facts of a transformers ``model`` of ``family``, read from its configuration
    (``head`` the LM head it was loaded with; ``device`` where it runs)."""
    cfg = model.config
    heads = int(config_value(cfg, "num_attention_heads", "n_head", "num_heads", "n_heads"))
    count, dtype, where = weight_facts(model)
    return ModelFacts(
        model=name, family=family.name, model_type=str(cfg.model_type),
        scheme=family.encoding_of(cfg),
        layers=int(config_value(cfg, "num_hidden_layers", "n_layer", "num_layers",
                                "n_layers")),
        heads=heads, kv_heads=int(config_value(cfg, "num_key_value_heads", default=heads)),
        width=int(config_value(cfg, "hidden_size", "n_embd", "d_model", "dim")),
        max_positions=family.max_positions(cfg), mask=family.mask_of(cfg),
        parameters=count, dtype=dtype, device=device or where, head=head,
        position_offset=family.table_offset(cfg), encoding_parameters=family.parameters(cfg))
