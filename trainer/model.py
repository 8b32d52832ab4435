"""Two-tower retriever (Chang et al., ICLR 2020): BERT-style Transformer or BoW-MLP towers, an
MLM head and token masking for the MLM baseline.

Keras layers and keras.ops only: the same code trains with KERAS_BACKEND=tensorflow (default) or
jax. Token ids are int [B, L], [CLS]=1 first, padded with [PAD]=0; attention ignores padding.
"""
from __future__ import annotations

import keras
from keras import layers, ops

from wikipairs.special_tokens import CLS_ID, MASK_ID, NUM_SPECIAL_TOKENS, PAD_ID, SEP_ID

from .configs import (HARD_NEGATIVE_IDS, HARD_NEGATIVE_KEYS, HARD_NEGATIVE_MASK, NEGATIVE_KEYS,
                      ModelConfig, get_config)
from .fast_layers import Dropout, SelfAttention, tf_xla_step
from .losses import cross_replica_in_batch_loss


def _init(config: ModelConfig):
    return keras.initializers.TruncatedNormal(stddev=config.initializer_range)


def masked_mean(sequence, token_ids):
    """sequence [B, L, H], token_ids int [B, L] -> [B, H]: the mean over the non-[PAD] positions
    (appending pads changes nothing; a row of pads only gives zeros)."""
    mask = ops.cast(ops.not_equal(ops.cast(token_ids, "int32"), PAD_ID), sequence.dtype)
    total = ops.sum(sequence * mask[:, :, None], axis=1)
    return total / ops.maximum(ops.sum(mask, axis=1, keepdims=True), 1.0)


@keras.saving.register_keras_serializable("wikipairs")
class TransformerBlock(layers.Layer):
    """One post-layer-norm BERT layer: x [B, L, H], attention_mask bool [B, L, L], key_lengths
    int32 [B] (real tokens per row; fast_layers.SelfAttention) -> [B, L, H]; with first_only
    -> [B, 1, H], the output at position 0 alone (every position still serves as a key)."""

    def __init__(self, config: ModelConfig, **kwargs):
        super().__init__(**kwargs)
        c, init = config, _init(config)
        self.attention = SelfAttention(
            c.num_heads, c.hidden_size // c.num_heads, dropout=c.attention_dropout,
            kernel_initializer=init, name="attention")
        self.attention_dropout = Dropout(c.dropout)
        self.attention_norm = layers.LayerNormalization(epsilon=c.layer_norm_epsilon,
                                                        name="attention_norm")
        self.ff_in = layers.Dense(c.ff_size, activation="gelu", kernel_initializer=init,
                                  name="ff_in")
        self.ff_out = layers.Dense(c.hidden_size, kernel_initializer=init, name="ff_out")
        self.ff_dropout = Dropout(c.dropout)
        self.ff_norm = layers.LayerNormalization(epsilon=c.layer_norm_epsilon, name="ff_norm")

    def call(self, x, attention_mask, key_lengths=None, training=False, first_only=False):
        a = self.attention(x, attention_mask, key_lengths, training=training,
                           first_only=first_only)
        if first_only:  # position 0 alone from here on: [B, 1, H]
            x = x[:, :1, :]
        x = self.attention_norm(x + self.attention_dropout(a, training=training))
        f = self.ff_out(self.ff_in(x))
        return self.ff_norm(x + self.ff_dropout(f, training=training))


@keras.saving.register_keras_serializable("wikipairs")
class TransformerEncoder(layers.Layer):
    """BERT-style encoder: token ids int [B, L] -> sequence output float [B, L, hidden_size].

    Token + learned position embeddings, layer norm, dropout, `num_layers` TransformerBlocks.
    Keys at [PAD] positions are masked out of attention, so appending pads changes no output at
    non-pad positions. `token_embedding.embeddings` [vocab_size, H] is the matrix an MLM head
    ties to. `pool(sequence, token_ids, pooling)` -> [B, H] pools it for a tower.
    """

    def __init__(self, config: ModelConfig, **kwargs):
        super().__init__(**kwargs)
        self.config = c = get_config(config)
        self.token_embedding = layers.Embedding(c.vocab_size, c.hidden_size,
                                                embeddings_initializer=_init(c),
                                                name="token_embedding")
        self.embedding_norm = layers.LayerNormalization(epsilon=c.layer_norm_epsilon,
                                                        name="embedding_norm")
        self.embedding_dropout = Dropout(c.dropout)
        self.blocks = [TransformerBlock(c, name=f"layer_{i}") for i in range(c.num_layers)]

    def build(self, input_shape=None):
        c = self.config
        self.position_embeddings = self.add_weight(
            shape=(c.max_positions, c.hidden_size), initializer=_init(c),
            name="position_embeddings")

    def call(self, token_ids, training=False, first_only=False):
        """first_only: -> [B, 1, H], position 0's output alone. The last layer then computes
        its query, attention output, feed-forward and norms for position 0 only, the same
        values as the full output's first row: what [CLS] pooling uses (for `small`, ~20% of
        a tower's matmul FLOPs; dropout masks differ, being drawn for another shape)."""
        token_ids = ops.cast(token_ids, "int32")
        length = ops.shape(token_ids)[1]
        x = self.token_embedding(token_ids) + self.position_embeddings[None, :length, :]
        x = self.embedding_dropout(self.embedding_norm(x), training=training)
        keys = ops.not_equal(token_ids, PAD_ID)[:, None, :]  # [B, 1, L]
        mask = ops.logical_and(keys, ops.ones((1, length, 1), dtype="bool"))  # [B, L, L]
        # right-padded rows: the real tokens are the first `lengths`; >= 1 keeps a row of pads
        # finite on the fused path (its output is never used)
        lengths = ops.maximum(ops.sum(ops.cast(keys[:, 0, :], "int32"), axis=1), 1)
        for i, block in enumerate(self.blocks):
            last = i == len(self.blocks) - 1
            x = block(x, mask, lengths, training=training, first_only=first_only and last)
        return x

    @staticmethod
    def pool(sequence, token_ids, pooling: str = "cls"):
        """sequence [B, L, H], token_ids int [B, L] -> [B, H]: the [CLS] (position 0) hidden
        state, or with pooling "mean" the mean over the non-pad positions (so appending pads
        changes nothing, as in the encoder)."""
        if pooling == "cls":
            return sequence[:, 0, :]
        return masked_mean(sequence, token_ids)

    def get_config(self):
        return {**super().get_config(), "config": self.config.to_dict()}


@keras.saving.register_keras_serializable("wikipairs")
class BowEncoder(layers.Layer):
    """The paper's BoW-MLP baseline: token ids int [B, L] -> float [B, embedding_dim].

    Unigram embeddings (width hidden_size), averaged over the non-[PAD] tokens ([CLS]/[SEP]
    included), dropout, then two Dense tanh layers of width embedding_dim; the last is the output.
    """

    def __init__(self, config: ModelConfig, **kwargs):
        super().__init__(**kwargs)
        self.config = c = get_config(config)
        self.token_embedding = layers.Embedding(c.vocab_size, c.hidden_size,
                                                embeddings_initializer=_init(c),
                                                name="token_embedding")
        self.dropout = Dropout(c.dropout)
        self.hidden = layers.Dense(c.embedding_dim, activation="tanh", name="hidden")
        self.output_layer = layers.Dense(c.embedding_dim, activation="tanh", name="output")

    def call(self, token_ids, training=False):
        token_ids = ops.cast(token_ids, "int32")
        pooled = masked_mean(self.token_embedding(token_ids), token_ids)
        return self.output_layer(self.hidden(self.dropout(pooled, training=training)))

    def get_config(self):
        return {**super().get_config(), "config": self.config.to_dict()}


@keras.saving.register_keras_serializable("wikipairs")
class Tower(layers.Layer):
    """One tower (phi or psi): token ids int [B, L] -> float32 embeddings [B, embedding_dim]
    (float64 under floatx float64; float16/bfloat16 policies are cast up).

    transformer: Dense(embedding_dim) (linear) of the pooled hidden states ([CLS] or the mean,
    config.pooling); bow: the BoW-MLP output. L2-normalized when config.normalize. `encoder`
    is the TransformerEncoder/BowEncoder.
    """

    def __init__(self, config: ModelConfig, **kwargs):
        super().__init__(**kwargs)
        self.config = c = get_config(config)
        if c.encoder == "transformer":
            self.encoder = TransformerEncoder(c, name="encoder")
            self.projection = layers.Dense(c.embedding_dim, kernel_initializer=_init(c),
                                           name="projection")
        else:
            self.encoder = BowEncoder(c, name="encoder")
            self.projection = None

    def call(self, token_ids, training=False):
        if self.projection is None:
            out = self.encoder(token_ids, training=training)
        else:  # [CLS] pooling needs the last layer at position 0 only
            cls = self.config.pooling == "cls"
            out = self.encoder(token_ids, training=training, first_only=cls)
            pooled = TransformerEncoder.pool(out, token_ids, self.config.pooling)
            out = self.projection(pooled)
        out = ops.cast(out, keras.backend.result_type(out.dtype, "float32"))
        if self.config.normalize:
            out = out / ops.sqrt(ops.maximum(ops.sum(out * out, axis=-1, keepdims=True), 1e-12))
        return out

    def get_config(self):
        return {**super().get_config(), "config": self.config.to_dict()}


@keras.saving.register_keras_serializable("wikipairs")
class TwoTower(keras.Model):
    """Query tower phi and document tower psi; score f(q, d) = <phi(q), psi(d)>.

    TwoTower(config): config is a ModelConfig, a name ("tiny", "base", "bow") or a dict.
    call({"query_ids": int [B, Lq], "doc_ids": int [B, Ld]}, training) ->
        {"query_emb": float32 [B, D], "doc_emb": float32 [B, D]}; with "hard_negative_ids"
        int [B, H, Ld] in the inputs (`trainer.data`, hard negatives) also "hard_negative_emb"
        float32 [B * H, D] (row b * H + h: negative h of row b), from the document tower in the
        same call as the documents.
    `query_tower` / `doc_tower` are `Tower`s, the same object when config.shared_towers.
    `compute_loss` is the in-batch softmax over the documents of all replicas
    (`losses.cross_replica_in_batch_loss`, temperature from the config; clean negatives when
    the batch has "negative_keys", int [B, K, W]: `trainer.data`, `losses.duplicate_mask`; hard
    negatives as extra columns when it has "hard_negative_ids", with "hard_negative_mask" and
    "hard_negative_keys": `losses.in_batch_softmax_loss`), so
    `model.compile(optimizer=...); model.fit(dataset_of_id_dicts)` trains it, also under a
    tf.distribute strategy scope. `build()` creates all weights (dummy forward pass).
    """

    def __init__(self, config: ModelConfig | str | dict = "tiny", **kwargs):
        super().__init__(**kwargs)
        self.config = c = get_config(config)
        self.query_tower = Tower(c, name="query_tower")
        self.doc_tower = self.query_tower if c.shared_towers else Tower(c, name="doc_tower")
        self.chunk_size = None  # GradCache training steps of this many rows (trainer.gradcache)

    def build(self, input_shape=None):
        """Creates every weight (a symbolic call of each tower; `input_shape` is ignored)."""
        c = self.config
        self.query_tower(keras.KerasTensor((None, c.max_query_len), dtype="int32"))
        self.doc_tower(keras.KerasTensor((None, c.max_doc_len), dtype="int32"))

    def call(self, inputs, training=False):
        hard = inputs.get(HARD_NEGATIVE_IDS) if isinstance(inputs, dict) else None
        if hard is None:
            return {"query_emb": self.query_tower(inputs["query_ids"], training=training),
                    "doc_emb": self.doc_tower(inputs["doc_ids"], training=training)}
        docs = ops.cast(inputs["doc_ids"], "int32")
        batch, length = ops.shape(docs)[0], ops.shape(docs)[1]
        hard = ops.reshape(ops.cast(hard, "int32"), (-1, length))  # [B * H, Ld]
        emb = self.doc_tower(ops.concatenate([docs, hard], axis=0), training=training)
        return {"query_emb": self.query_tower(inputs["query_ids"], training=training),
                "doc_emb": emb[:batch], "hard_negative_emb": emb[batch:]}

    def encode_queries(self, query_ids, training=False):
        """int [B, Lq] -> float32 [B, D]."""
        return self.query_tower(query_ids, training=training)

    def encode_docs(self, doc_ids, training=False):
        """int [B, Ld] -> float32 [B, D]."""
        return self.doc_tower(doc_ids, training=training)

    @staticmethod
    def score(query_emb, doc_emb):
        """Pairwise scores <q_i, d_j>: [B, D] x [N, D] -> [B, N] (no temperature)."""
        return ops.matmul(query_emb, ops.transpose(doc_emb))

    def train_step(self, *args):
        """Keras' step, or with `chunk_size` set the gradient-cached one (trainer.gradcache:
        the same loss and gradients, with the activations of `chunk_size` rows at a time).
        On TensorFlow under XLA the dropout masks are hashed (fast_layers.tf_xla_step)."""
        with tf_xla_step(self.jit_compile):
            if not self.chunk_size:
                return super().train_step(*args)
            from .gradcache import train_step

            return train_step(self, *args)

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """Keras hook: in-batch softmax loss of y_pred (or of self(x)) plus any added losses,
        scaled as Keras scales losses under tf.distribute (1 / replicas per replica)."""
        if y_pred is None:
            y_pred = self(x, training=training)
        loss = cross_replica_in_batch_loss(y_pred["query_emb"], y_pred["doc_emb"],
                                           self.config.temperature,
                                           **loss_inputs(x, y_pred.get("hard_negative_emb")))
        for extra in self.losses:
            loss = loss + self._aggregate_additional_loss(extra)
        return loss

    def get_config(self):
        return {"config": self.config.to_dict(), "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)


def loss_inputs(x, hard_emb=None) -> dict:
    """The batch's extras of `losses.cross_replica_in_batch_loss`: keys (clean negatives) and,
    with `hard_emb` [B * H, D], the hard negatives' embeddings, mask [B * H] and keys
    [B * H, 2, 2]."""
    x = x if isinstance(x, dict) else {}
    out = {"keys": x.get(NEGATIVE_KEYS)}
    if hard_emb is not None:
        mask, keys = x.get(HARD_NEGATIVE_MASK), x.get(HARD_NEGATIVE_KEYS)
        out.update(hard_emb=hard_emb, hard_mask=None if mask is None else ops.reshape(mask, (-1,)),
                   hard_keys=None if keys is None else ops.reshape(
                       keys, (-1, *ops.shape(keys)[2:])))
    return out


@keras.saving.register_keras_serializable("wikipairs")
class MaskedLMHead(layers.Layer):
    """BERT MLM head: sequence [B, L, H] and the tied token embeddings [V, H] -> logits [B, L, V].

    Dense(H, gelu) -> LayerNorm -> x @ embeddings^T + bias. The embedding matrix is passed at
    call time (`encoder.token_embedding.embeddings`), so it is tied without being tracked twice:
        logits = head(encoder(ids, training=True), encoder.token_embedding.embeddings)
    """

    def __init__(self, config: ModelConfig, **kwargs):
        super().__init__(**kwargs)
        self.config = c = get_config(config)
        self.transform = layers.Dense(c.hidden_size, activation="gelu",
                                      kernel_initializer=_init(c), name="transform")
        self.norm = layers.LayerNormalization(epsilon=c.layer_norm_epsilon, name="norm")

    def build(self, input_shape=None):
        self.bias = self.add_weight(shape=(self.config.vocab_size,), initializer="zeros",
                                    name="bias")

    def call(self, sequence, embeddings):
        h = self.norm(self.transform(sequence))
        return ops.matmul(h, ops.transpose(ops.cast(embeddings, h.dtype))) + self.bias

    def get_config(self):
        return {**super().get_config(), "config": self.config.to_dict()}


def mask_tokens(token_ids, vocab_size: int, seed, mask_rate: float = 0.15,
                mask_token_rate: float = 0.8, random_token_rate: float = 0.1,
                special_ids=(PAD_ID, CLS_ID, SEP_ID, MASK_ID), max_predictions: int | None = None):
    """BERT masking for the MLM baseline: each token not in `special_ids` is selected with
    probability `mask_rate`; a selected token becomes [MASK] (80%), a random non-special token
    (id in [NUM_SPECIAL_TOKENS, vocab_size), 10%) or stays (10%).

    token_ids: int [B, L]. seed: an int (the same int -> the same masks) or a
    `keras.random.SeedGenerator` (advances on every call: new masks each step).
    Returns (masked_ids int32 [B, L], labels int32 [B, L] = the original ids, 0 where not
    selected, weights float32 [B, L] = 1.0 where selected).
    `max_predictions` P: at most P tokens selected per row (those of the P smallest draws; as
    BERT's max_predictions_per_seq), so that the head needs only P positions a row
    (`gather_predictions`); None: no cap.
    """
    ids = ops.cast(token_ids, "int32")
    u = keras.random.uniform((3, *ops.shape(ids)), seed=seed)  # one draw: stateless under an int
    eligible = ops.ones_like(ids, dtype="bool")
    for special in special_ids:
        eligible = ops.logical_and(eligible, ops.not_equal(ids, special))
    selected = ops.logical_and(eligible, u[0] < mask_rate)
    length = ids.shape[1]  # static; None in a graph traced without it: cap then too
    if max_predictions is not None and (length is None or max_predictions < length):
        draws = ops.where(selected, u[0], 2.0)  # the unselected last
        kth = -ops.top_k(-draws, max_predictions, sorted=True)[0][:, -1:]  # P-th smallest [B, 1]
        selected = ops.logical_and(selected, draws <= kth)
    to_mask = ops.logical_and(selected, u[1] < mask_token_rate)
    to_random = ops.logical_and(
        selected, ops.logical_and(u[1] >= mask_token_rate,
                                  u[1] < mask_token_rate + random_token_rate))
    span = vocab_size - NUM_SPECIAL_TOKENS
    random_ids = NUM_SPECIAL_TOKENS + ops.minimum(ops.cast(u[2] * span, "int32"), span - 1)
    masked = ops.where(to_mask, MASK_ID, ops.where(to_random, random_ids, ids))
    labels = ops.where(selected, ids, 0)
    return ops.cast(masked, "int32"), ops.cast(labels, "int32"), ops.cast(selected, "float32")


def gather_predictions(sequence, labels, weights, max_predictions: int):
    """The P = `max_predictions` positions a row that the MLM loss needs, so that the head's
    [*, V] logits are computed for B x P positions instead of B x L (BERT's gather_indexes).

    sequence: [B, L, H] encoder output; labels int [B, L], weights float [B, L] from
    `mask_tokens(..., max_predictions=P)` (at most P selected per row). Returns (hidden [B, P, H],
    labels [B, P], weights [B, P]): the selected positions first, in order, then unselected ones
    with weight 0, so `masked_lm_loss` of the head on them equals the loss over all L positions."""
    length = ops.shape(labels)[1]
    order = ops.cast(length - ops.arange(length), "float32")  # earlier positions first
    score = ops.where(weights > 0, order + ops.cast(length, "float32"), order)
    positions = ops.top_k(score, max_predictions, sorted=True)[1]  # [B, P]
    hidden = ops.take_along_axis(sequence, ops.expand_dims(positions, -1), axis=1)
    return (hidden, ops.take_along_axis(labels, positions, axis=1),
            ops.take_along_axis(weights, positions, axis=1))
