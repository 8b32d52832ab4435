"""In-batch sampled softmax (Chang et al. 2020, eq. 4), also across tf.distribute replicas, with
clean negatives (duplicates of a row's positive masked out), and the masked-LM loss.

keras.ops only, so it runs on the TensorFlow and the JAX backends; TensorFlow is imported lazily,
and only on the TensorFlow backend, for the cross-replica gather.
"""
from __future__ import annotations

import keras
from keras import ops


def in_batch_scores(query_emb, doc_emb, temperature: float = 1.0):
    """Score matrix q . d^T / temperature: query_emb [B, D], doc_emb [N, D] -> [B, N], float32
    (float64 for float64 inputs). float16/bfloat16 embeddings (mixed precision, `--bf16`) are
    cast to float32 before the product: bfloat16 scores keep ~3 significant digits, too few for
    logits (a cosine of 1 at temperature 0.05, logit 20, is rounded to a multiple of 0.125)."""
    dtype = keras.backend.result_type(query_emb.dtype, doc_emb.dtype, "float32")
    q, d = ops.cast(query_emb, dtype), ops.cast(doc_emb, dtype)
    return ops.matmul(q, ops.transpose(d)) / temperature


MASKED_SCORE = -1e9  # the score of a masked column: exp(-1e9 - max) is exactly 0 in float32


def same_key(keys, keys_global):
    """bool [B, N]: rows i of `keys` [B, K, W] and j of `keys_global` [N, K, W] share some key k
    (equal in all its W words)."""
    same = None
    for k in range(ops.shape(keys)[1]):
        equal = None
        for w in range(ops.shape(keys)[2]):
            e = ops.equal(keys[:, k, w][:, None], keys_global[:, k, w][None, :])
            equal = e if equal is None else ops.logical_and(equal, e)
        same = equal if same is None else ops.logical_or(same, equal)
    return same


def duplicate_mask(keys, keys_global=None, offset=0):
    """bool [B, N]: column j is a duplicate of row i's positive (and not that positive itself).

    keys: int [B, K, W] per-row keys of this batch (K keys, each W int32 words, e.g. the two
        halves of a 64-bit hash; `trainer.data` gives K = 4: the document text, the document
        passage (page + passage index), the query text, and the page that makes a BFS or WLP
        document a positive). Rows i and j are duplicates when
        some key k is equal in all its W words.
    keys_global: int [N, K, W], the keys of the candidate documents (e.g. of all replicas);
        None: `keys`. offset: position of this batch's positives in it (as in
        `in_batch_softmax_loss`).
    """
    keys_global = keys if keys_global is None else keys_global
    same = same_key(keys, keys_global)
    rows = ops.arange(ops.shape(keys)[0], dtype="int32") + ops.cast(offset, "int32")
    columns = ops.arange(ops.shape(keys_global)[0], dtype="int32")
    positive = ops.equal(rows[:, None], columns[None, :])
    return ops.logical_and(same, ops.logical_not(positive))


def hard_negative_drop(keys, hard_mask=None, hard_keys=None):
    """bool [B, M]: the hard-negative columns left out of row i's softmax.

    keys: int [B, K, W] the rows' keys (None: no duplicate test), hard_mask: [M] or [B', H]
    (M = B' * H) true for real negatives (None: all real), hard_keys: int [M, Kh, W] with
    Kh <= K, compared with the first Kh keys of the rows (`trainer.data`: Kh = 2, the document
    and the passage). Column m is dropped for row i when it is padding or shares a key with
    row i's positive. Needs keys or hard_mask (for the shapes).
    """
    drop = None
    if hard_mask is not None:
        padding = ops.logical_not(ops.cast(ops.reshape(hard_mask, (-1,)), "bool"))[None, :]
        drop = padding
    if keys is not None and hard_keys is not None:
        dup = same_key(keys[:, :ops.shape(hard_keys)[1]], hard_keys)
        drop = dup if drop is None else ops.logical_or(drop, dup)
    return drop


def in_batch_softmax_loss(query_emb, doc_emb, temperature: float = 1.0, doc_emb_global=None,
                          offset=0, keys=None, keys_global=None, hard_emb=None, hard_mask=None,
                          hard_keys=None):
    """Mean softmax cross-entropy of each query against the documents of the batch (and any hard
    negatives).

    query_emb: [B, D] query embeddings phi(q_i).
    doc_emb: [B, D] their positive documents psi(d_i) (row i is the positive of query i).
    temperature: scores are divided by it.
    doc_emb_global: [N, D] the candidate documents, when they are more than `doc_emb` (e.g. the
        documents of all replicas); `doc_emb` rows must be rows offset..offset+B-1 of it.
        None: the candidates are `doc_emb` (N = B, offset 0).
    offset: int or scalar tensor, the position of this batch's positives in `doc_emb_global`.
    keys / keys_global: clean negatives: int [B, K, W] / [N, K, W] row keys (`duplicate_mask`);
        a column that duplicates row i's positive (same document, same passage or same query
        text) is left out of row i's softmax: its score becomes MASKED_SCORE, so the loss is
        the loss with those columns removed (they are neither negatives nor positives).
        keys_global None: `keys` (N = B). keys None: every column is a negative.
    hard_emb: [M, D] extra negative documents (hard negatives; `trainer.data` gives M = B * H,
        row b * H + h the h-th negative of row b), appended as columns N..N+M-1 after the
        candidates: every query is scored against all of them (like sentence-transformers'
        MultipleNegativesRankingLoss with negatives). None (or M = 0): exactly the loss without.
    hard_mask: bool/int [M] or [B, H]: which hard negatives are real; padding ones are masked
        (MASKED_SCORE) for every row. None: all real.
    hard_keys: int [M, Kh, W], Kh <= K: a hard negative sharing one of the first Kh keys of
        row i (`trainer.data`: the document and the passage) duplicates row i's positive and is
        masked for row i (only with `keys`).

    Returns a float32 scalar (float64 for float64 inputs):
        mean_i [logsumexp_j s_ij - s_(i, offset + i)],  s = q [docs; hard]^T / temperature,
    over the columns j not masked for row i.
    The scores, the softmax and the cross-entropy are float32 also for bfloat16/float16
    embeddings (`in_batch_scores` casts them up first), so mixed precision rounds the towers'
    outputs but not the logits or the loss.
    """
    docs = doc_emb if doc_emb_global is None else doc_emb_global
    scores = in_batch_scores(query_emb, docs, temperature)  # [B, N]
    if keys is not None:
        masked = duplicate_mask(keys, keys_global, offset)
        scores = ops.where(masked, ops.cast(MASKED_SCORE, scores.dtype), scores)
    if hard_emb is not None and ops.shape(hard_emb)[0] != 0:
        hard = ops.cast(in_batch_scores(query_emb, hard_emb, temperature), scores.dtype)  # [B, M]
        drop = hard_negative_drop(keys, hard_mask, hard_keys)
        if drop is not None:
            hard = ops.where(drop, ops.cast(MASKED_SCORE, hard.dtype), hard)
        scores = ops.concatenate([scores, hard], axis=1)
    labels = ops.arange(ops.shape(query_emb)[0], dtype="int32") + ops.cast(offset, "int32")
    losses = ops.sparse_categorical_crossentropy(labels, scores, from_logits=True)
    return ops.mean(losses)


def _tf_replica_context():
    """(tf, replica context) in a tf.distribute replica function with > 1 replicas, else None."""
    if keras.backend.backend() != "tensorflow":
        return None
    import tensorflow as tf  # the TensorFlow backend is running, so this is already imported

    if not tf.distribute.has_strategy() or tf.distribute.in_cross_replica_context():
        return None
    ctx = tf.distribute.get_replica_context()
    if ctx is None or ctx.num_replicas_in_sync <= 1:
        return None
    return tf, ctx


def cross_replica_in_batch_loss(query_emb, doc_emb, temperature: float = 1.0, keys=None,
                                hard_emb=None, hard_mask=None, hard_keys=None):
    """`in_batch_softmax_loss` whose negatives are the documents of every replica.

    query_emb, doc_emb: [B_local, D], this replica's batch (row i of doc_emb is the positive of
    query i). keys: None, or int [B_local, K, W] row keys for clean negatives (gathered from all
    replicas like the documents). hard_emb [M_local, D], hard_mask [M_local] (or [B_local, H]),
    hard_keys [M_local, Kh, W]: this replica's hard negatives (`in_batch_softmax_loss`), gathered
    from all replicas too, so every query sees the hard negatives of the global batch.
    Returns a float32 scalar.

    Inside a tf.distribute replica context with R > 1 replicas (e.g. `strategy.run`, or Keras
    `fit` under `strategy.scope()`), the documents of all replicas are gathered with
    `ReplicaContext.all_gather(doc_emb, axis=0)` ([R * B_local, D], replica order) and the labels
    are offset by `replica_id_in_sync_group * B_local`. All replicas must have the same B_local.
    The returned value is the mean over the local batch divided by R, i.e. the tf.distribute /
    Keras convention for custom loops (what Keras' own losses return under a strategy): the SUM
    over replicas of the returned values is the global-batch mean loss, and the SUM over replicas
    of their gradients (what `optimizer.apply_gradients` and `strategy.reduce("SUM", ...)` do) is
    the gradient of the global-batch mean loss. Gradients flow through the gather: all_gather's
    gradient all-reduces the incoming gradients and keeps this replica's slice.

    Anywhere else (no strategy, cross-replica context, one replica, the JAX backend, where
    data-parallel `keras.distribution` sees the global batch as one array) it is exactly
    `in_batch_softmax_loss(query_emb, doc_emb, temperature, keys=keys, hard_emb=hard_emb,
    hard_mask=hard_mask, hard_keys=hard_keys)`.
    """
    found = _tf_replica_context()
    hard = dict(hard_emb=hard_emb, hard_mask=hard_mask, hard_keys=hard_keys)
    if found is None:
        return in_batch_softmax_loss(query_emb, doc_emb, temperature, keys=keys, **hard)
    tf, ctx = found
    replicas = ctx.num_replicas_in_sync
    all_docs = ctx.all_gather(doc_emb, axis=0)
    all_keys = None if keys is None else ctx.all_gather(keys, axis=0)
    offset = ctx.replica_id_in_sync_group * tf.shape(doc_emb)[0]
    if hard_mask is not None:
        hard["hard_mask"] = ops.cast(ops.reshape(hard_mask, (-1,)), "int32")  # gatherable
    hard = {k: None if v is None else ctx.all_gather(v, axis=0) for k, v in hard.items()}
    loss = in_batch_softmax_loss(query_emb, doc_emb, temperature, all_docs, offset, keys,
                                 all_keys, **hard)
    return loss / replicas


def masked_lm_loss(labels, logits, weights):
    """Mean cross-entropy over the masked positions.

    labels: int [B, L] original token ids (any value where weights is 0).
    logits: [B, L, V] (`model.MaskedLMHead` output).
    weights: float [B, L], 1.0 at masked positions, 0.0 elsewhere (`model.mask_tokens`).
    L may be the P gathered positions of `model.gather_predictions` (what `MaskedLM` passes).
    Returns a float32 scalar: sum(weights * xent) / max(sum(weights), 1). Not scaled for replicas.
    """
    logits = ops.cast(logits, keras.backend.result_type(logits.dtype, "float32"))
    xent = ops.sparse_categorical_crossentropy(ops.cast(labels, "int32"), logits, from_logits=True)
    weights = ops.cast(weights, xent.dtype)
    return ops.sum(xent * weights) / ops.maximum(ops.sum(weights), 1.0)
