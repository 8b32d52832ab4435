"""Named two-tower model configurations (`ModelConfig.from_name("tiny")`), JSON round-trip.

No TensorFlow or Keras import here: a checkpoint's `model_config.json` can be read anywhere.
The special token ids come from `wikipairs.special_tokens`, which imports nothing.
"""
from __future__ import annotations

import dataclasses
import difflib
import json
from dataclasses import dataclass

from wikipairs.special_tokens import NUM_SPECIAL_TOKENS

ENCODERS = ("transformer", "bow")
POOLINGS = ("cls", "mean")
# the batch field of the clean-negative keys (trainer.data makes it, TwoTower.compute_loss reads it)
NEGATIVE_KEYS = "negative_keys"
# the batch fields of hard negatives (trainer.data with hard_negatives=H > 0, TwoTower reads them):
# ids int32 [B, H, Ld], mask [B, H] (which are real), keys int32 [B, H, 2, 2] (document, passage)
HARD_NEGATIVE_IDS = "hard_negative_ids"
HARD_NEGATIVE_MASK = "hard_negative_mask"
HARD_NEGATIVE_KEYS = "hard_negative_keys"

# name -> overrides of the ModelConfig defaults
NAMED_CONFIGS: dict[str, dict] = {
    # for tests and smoke runs
    "tiny": dict(num_layers=2, hidden_size=128, num_heads=2, ff_size=512),
    "small": dict(num_layers=4, hidden_size=512, num_heads=8, ff_size=2048),
    # the paper's towers: BERT-base sized Transformers (~110M parameters each with 32k pieces)
    "base": dict(num_layers=12, hidden_size=768, num_heads=12, ff_size=3072),
    # the paper's BoW-MLP baseline: unigram embeddings, mean pooling, two tanh layers -> 512-d
    "bow": dict(encoder="bow", num_layers=0, hidden_size=512, num_heads=0, ff_size=0),
}


@dataclass(frozen=True)
class ModelConfig:
    """Everything needed to rebuild a `TwoTower` model (`trainer.model`).

    encoder: "transformer" (BERT-style, post-layer-norm, embedding = Dense(embedding_dim) of the
        pooled hidden states, see `pooling`) or "bow" (mean of the non-pad token embeddings of
        width hidden_size, then two tanh Dense layers of width embedding_dim; the last one is
        the embedding).
    vocab_size: token embedding rows (ids 0..vocab_size-1; 0 is [PAD]).
    max_query_len / max_doc_len: padded lengths of query / document ids (incl. [CLS], [SEP]).
    max_positions: rows of the learned position embeddings (>= both max lengths).
    dropout: hidden dropout (embeddings, attention output, feed-forward, BoW pooling).
    attention_dropout: dropout of the attention probabilities.
    embedding_dim: width of the query/document embeddings (the paper: 512).
    pooling: how a transformer tower pools its sequence output: "cls" (the [CLS] hidden state,
        the paper's and BERT's) or "mean" (the mean over the non-pad positions, [CLS] and [SEP]
        included, as sentence-transformers pools). BoW towers always take the mean.
    normalize: L2-normalize the embeddings (scores become cosine similarities).
    temperature: the loss divides the scores by it (1.0: the paper's plain inner product).
    shared_towers: one encoder for queries and documents (phi = psi) instead of two.
    """

    name: str = "custom"
    encoder: str = "transformer"
    vocab_size: int = 32000
    num_layers: int = 2
    hidden_size: int = 128
    num_heads: int = 2
    ff_size: int = 512
    dropout: float = 0.1
    attention_dropout: float = 0.1
    max_query_len: int = 64
    max_doc_len: int = 288
    max_positions: int = 512
    embedding_dim: int = 512
    pooling: str = "cls"
    normalize: bool = False
    temperature: float = 1.0
    shared_towers: bool = False
    layer_norm_epsilon: float = 1e-12
    initializer_range: float = 0.02

    def __post_init__(self):
        if self.encoder not in ENCODERS:
            raise ValueError(f"encoder must be one of {ENCODERS}, not {self.encoder!r}")
        if self.pooling not in POOLINGS:
            raise ValueError(f"pooling must be one of {POOLINGS}, not {self.pooling!r}")
        if self.vocab_size <= NUM_SPECIAL_TOKENS:
            raise ValueError(f"vocab_size {self.vocab_size} leaves no room for real tokens")
        if self.temperature <= 0:
            raise ValueError(f"temperature must be > 0, not {self.temperature}")
        if self.encoder == "transformer":
            if self.num_layers < 1 or self.num_heads < 1 or self.ff_size < 1:
                raise ValueError("a transformer needs num_layers, num_heads and ff_size >= 1")
            if self.hidden_size % self.num_heads:
                raise ValueError(f"hidden_size {self.hidden_size} is not a multiple of "
                                 f"num_heads {self.num_heads}")
            if max(self.max_query_len, self.max_doc_len) > self.max_positions:
                raise ValueError(f"max lengths {self.max_query_len}/{self.max_doc_len} exceed "
                                 f"max_positions {self.max_positions}")

    @classmethod
    def from_name(cls, name: str, **overrides) -> "ModelConfig":
        """The named configuration (`NAMED_CONFIGS`) with `overrides` applied."""
        if name not in NAMED_CONFIGS:
            raise ValueError(f"unknown model config {name!r}; known: {', '.join(NAMED_CONFIGS)}")
        return cls(**{"name": name, **NAMED_CONFIGS[name], **overrides})

    def replace(self, **changes) -> "ModelConfig":
        return dataclasses.replace(self, **changes)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> "ModelConfig":
        """Inverse of `to_dict`; unknown keys are an error (a config from a newer version)."""
        return from_known_fields(cls, data, "unknown ModelConfig fields", ValueError)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "ModelConfig":
        return cls.from_dict(json.loads(text))

    @staticmethod
    def parse_overrides(pairs) -> dict:
        """`KEY=VALUE` strings (the `--model-opt` options) -> {KEY: VALUE}, VALUE parsed as JSON
        when it is JSON, else kept as a string (e.g. encoder=bow). ValueError on a bad pair."""
        out = {}
        for pair in pairs:
            key, sep, raw = pair.partition("=")
            if not sep or not key.strip():
                raise ValueError(f"--model-opt: expected KEY=VALUE, got {pair!r}")
            try:
                out[key.strip()] = json.loads(raw)
            except ValueError:
                out[key.strip()] = raw
        return out


def get_config(config: "ModelConfig | str | dict") -> ModelConfig:
    """A ModelConfig from itself, a name ("tiny", "base", ...) or a `to_dict()` dict."""
    if isinstance(config, ModelConfig):
        return config
    if isinstance(config, str):
        return ModelConfig.from_name(config)
    if isinstance(config, dict):
        return ModelConfig.from_dict(config)
    raise TypeError(f"cannot make a ModelConfig from {type(config).__name__}")


def from_known_fields(cls, values: dict, what: str, error: type[Exception]):
    """`cls(**values)` for a dataclass, raising `error` (`unknown_names_message`) on names it
    lacks (a typo, or a file written by a newer version)."""
    message = unknown_names_message(values, [f.name for f in dataclasses.fields(cls)], what)
    if message:
        raise error(message)
    return cls(**values)


def unknown_names_message(names, known, what: str) -> str | None:
    """None when every name is known, else one line: "WHAT: a, b; valid: ..." with the valid
    names closest to the first unknown one first (difflib), so a typo's fix leads the list."""
    unknown = sorted(set(names) - set(known))
    if not unknown:
        return None
    ranked = difflib.get_close_matches(unknown[0], list(known), n=len(known), cutoff=0.0)
    return f"{what}: {', '.join(unknown)}; valid: {', '.join(ranked)}"
