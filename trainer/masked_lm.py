"""The MLM baseline's training model: `MaskedLM` (TransformerEncoder + MaskedLMHead, BERT
masking of the documents, masked-LM loss) and `two_tower_from_mlm`, the TwoTower a run saves.
The layers themselves (encoder, head, `mask_tokens`) live in trainer.model."""
from __future__ import annotations

import math

import keras

from .configs import ModelConfig
from .fast_layers import tf_xla_step
from .losses import _tf_replica_context, masked_lm_loss
from .model import (MaskedLMHead, TransformerEncoder, TwoTower, gather_predictions,
                    mask_tokens)


class MaskedLM(keras.Model):
    """The MLM baseline's model: TransformerEncoder + MaskedLMHead tied to the token embeddings,
    trained with BERT masking of the documents ({"doc_ids": int [B, L]}; queries are ignored).
    New masks every step (a SeedGenerator, checkpointed with the dropout RNG states).

    At most `max_predictions` P tokens are masked per row (default 1.5 x mask_rate x L, which a
    row's Binomial count passes about once in 160 rows of 126 maskable tokens), and the head runs on those P
    positions only: the [B, P, V] logits instead of [B, L, V] (V the vocabulary), as BERT's
    max_predictions_per_seq. Outputs: logits [B, P, V], labels and weights [B, P]."""

    def __init__(self, config: ModelConfig, seed: int = 0, mask_rate: float = 0.15,
                 max_predictions: int | None = None, **kwargs):
        super().__init__(**kwargs)
        self.config, self.mask_rate = config, mask_rate
        length = config.max_doc_len
        self.max_predictions = min(length, max_predictions or math.ceil(1.5 * mask_rate * length))
        self.encoder = TransformerEncoder(config, name="encoder")
        self.head = MaskedLMHead(config, name="mlm_head")
        self.mask_seed = keras.random.SeedGenerator(seed, name="mask_seed")

    def train_step(self, *args):
        """Keras' step; on TensorFlow under XLA with hashed dropout masks (fast_layers)."""
        with tf_xla_step(self.jit_compile):
            return super().train_step(*args)

    def build(self, input_shape=None):
        ids = keras.KerasTensor((None, self.config.max_doc_len), dtype="int32")
        self.head(self.encoder(ids), self.encoder.token_embedding.embeddings)

    def call(self, inputs, training=False):
        ids = inputs["doc_ids"] if isinstance(inputs, dict) else inputs
        masked, labels, weights = mask_tokens(ids, self.config.vocab_size, self.mask_seed,
                                              mask_rate=self.mask_rate,
                                              max_predictions=self.max_predictions)
        sequence = self.encoder(masked, training=training)
        hidden, labels, weights = gather_predictions(sequence, labels, weights,
                                                     self.max_predictions)
        logits = self.head(hidden, self.encoder.token_embedding.embeddings)
        return {"logits": logits, "labels": labels, "weights": weights}

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        if y_pred is None:
            y_pred = self(x, training=training)
        loss = masked_lm_loss(y_pred["labels"], y_pred["logits"], y_pred["weights"])
        found = _tf_replica_context()
        if found is not None:  # the per-replica scaling Keras expects under tf.distribute
            loss = loss / found[1].num_replicas_in_sync
        return loss


def two_tower_from_mlm(mlm, model_config: ModelConfig):
    """A TwoTower whose query and document encoders both start from the MLM-trained encoder
    (the projections keep their fresh initialization)."""
    model = TwoTower(model_config)
    model.build()
    weights = mlm.encoder.get_weights()
    model.query_tower.encoder.set_weights(weights)
    model.doc_tower.encoder.set_weights(weights)
    return model
