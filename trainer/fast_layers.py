"""Two Keras layers with a faster path on JAX (and for dropout on TensorFlow under XLA): the same
weights, the same function.

- `SelfAttention`: Keras' MultiHeadAttention on one right-padded sequence, told how many
  tokens of each row are real (`key_lengths`, int32 [B]). On a CPU, JAX runs `blocked_attention`:
  a few batch rows at a time, the probabilities recomputed in the backward pass and never
  written out whole, dropped (if at all) by the same hashed masks as Keras' path; a `small`
  step 10-12% faster and 0.5 GB smaller than XLA's attention (benchmarks/README.md, "Attention
  in blocks of rows"). On a GPU, where the probabilities are not dropped (attention_dropout 0,
  or inference), `jax.nn.dot_product_attention` with `key_value_seq_lengths`: cuDNN's fused
  (flash) attention with its padding mask in bfloat16/float16, XLA's otherwise. No [B, L, L]
  mask is built or turned into a bias: on an H200 that conversion (a compare and transpose per
  layer) and the bias read by cuDNN took about a tenth of a `base` step (benchmarks/README.md,
  "Where the GPU time goes"). With dropout on the probabilities on a GPU, and on TensorFlow,
  Keras' own path with the boolean mask (its probabilities dropped by `fast_dropout` wherever
  `Dropout` would be).
- `Dropout`: on JAX the keep mask is a keyed integer hash of each element's index (two rounds
  of MurmurHash3's 32-bit finalizer, keyed by the layer's seed), which XLA computes inside the
  fusion that applies the mask: no random bits are drawn or stored. Keras' `jax.random.bernoulli`
  runs threefry's rounds for every element of every mask; XLA's RngBitGenerator (Philox, the
  previous path here, still `Dropout.rng = "philox"` and the path for tensors of 2^32 elements
  or more) writes its bits to memory first. On this CPU a [32, 8, 288, 288] attention mask
  applied forward took 56-75 ms hashed against 238-267 ms with Philox (benchmarks/README.md).
  The rate is kept to 2^-32; the seed still comes from the layer's SeedGenerator, so a step is
  as reproducible as before and GradCache's replay of a pass's masks still holds. TensorFlow:
  the same hash (`tf_hash_bits`, the same bits) in a step that XLA compiles (`tf_xla_step`,
  entered by the models' train_step when jit_compile is on), for the dropout layers and the
  attention probabilities alike; elsewhere Keras' own dropout, which TensorFlow's kernels run
  faster than the hash's separate integer ops.

Both keep Keras' sublayers and variables (names, shapes, the seed generator's state), so a
checkpoint written before loads unchanged. Rows must be right-padded ([PAD] only after the last
real token, as everywhere in wikipairs); a row of pads only attends to its first position.
"""
from __future__ import annotations

import contextlib
import contextvars
import functools
import math

import keras
from keras import layers, ops


def fast_dropout(inputs, rate: float, seed_generator, rng: str = "hash"):
    """inputs [...] -> inputs / (1 - rate) where the element's random bits >= rate * 2^bits,
    else 0. The bits: `hash_bits` (rng "hash"; 32 bits) or `uint16_bits` (rng "philox", and any
    tensor of 2^32 elements or more), keyed by the next seed of `seed_generator` (a
    keras.random.SeedGenerator). JAX; on TensorFlow (a step XLA compiles) always the hash."""
    if keras.backend.backend() == "tensorflow":
        return _tf_hash_dropout(inputs, rate, seed_generator)
    import jax
    import jax.numpy as jnp

    seed = jnp.asarray(seed_generator.next()).astype(jnp.uint32)  # [2], as Keras' dropout draws
    if rng == "hash" and math.prod(inputs.shape) < 2 ** 32:
        keep = hash_bits(seed, inputs.shape) >= jnp.uint32(hash_threshold(rate))
    else:
        key = jnp.concatenate([seed, seed ^ jnp.uint32(0x9E3779B9)])  # Philox takes uint32[4]
        keep = uint16_bits(key, inputs.shape) >= jnp.uint16(min(round(rate * 65536), 65535))
    return jax.lax.select(keep, inputs / jnp.asarray(1.0 - rate, inputs.dtype),
                          jnp.zeros_like(inputs))


def hash_threshold(rate: float) -> int:
    """The uint32 below which a hashed element is dropped: rate * 2^32, kept within uint32."""
    return min(round(rate * 2 ** 32), 2 ** 32 - 1)


def _keyed_hash(index, seed0, seed1, xor, shr, u32):
    """fmix32(fmix32(index ^ k0) + k1), with k0, k1 hashed from both seed words; fmix32 is
    MurmurHash3's 32-bit finalizer (a bijection of uint32 with full avalanche). Written once over
    an array library's ops (`xor`, `shr`, `u32` for a uint32 constant) for JAX and TensorFlow,
    whose tensors do not all overload ^ and >>, so that both give the same bits."""
    def fmix32(h):
        h = xor(h, shr(h, u32(16)))
        h = h * u32(0x85EBCA6B)
        h = xor(h, shr(h, u32(13)))
        h = h * u32(0xC2B2AE35)
        return xor(h, shr(h, u32(16)))

    k0 = fmix32(xor(seed0, u32(0x9E3779B9)))
    k1 = fmix32(seed1 + fmix32(xor(k0, u32(0x7F4A7C15))))
    return fmix32(fmix32(xor(index, k0)) + k1)


def hash_bits(seed, shape, offset=0):
    """uint32[2] seed, shape (< 2^32 elements) -> uint32[shape] bits: element i (row-major
    index) gets `_keyed_hash(i + offset, seed)`, so that seeds one apart (a SeedGenerator's
    consecutive draws) give unrelated masks. `offset` (a uint32 scalar, may be traced): the bits
    of a block of consecutive elements of a larger array (`blocked_attention` draws its masks a
    block at a time, the same bits as the whole array's). Elementwise integer ops only: XLA
    fuses them into the op that uses the bits."""
    import operator

    import jax
    import jax.numpy as jnp

    index = jnp.zeros(shape, jnp.uint32)
    for axis, size in enumerate(shape):
        index = index * jnp.uint32(size) + jax.lax.broadcasted_iota(jnp.uint32, shape, axis)
    if not (isinstance(offset, int) and offset == 0):
        index = index + jnp.asarray(offset, jnp.uint32)
    return _keyed_hash(index, seed[0], seed[1], operator.xor, operator.rshift, jnp.uint32)


# Whether the step being traced on TensorFlow will be compiled by XLA (set by the models'
# train_step from their jit_compile). Only there is the hash cheap on TensorFlow: XLA fuses its
# integer ops into the op applying the mask, while TensorFlow's own kernels would write each of
# them out (one [32, 8, 288, 288] mask forward and backward: 656 ms against 235 for Keras' own
# dropout; under XLA 67 ms against 6.7 s, benchmarks/README.md).
_TF_XLA = contextvars.ContextVar("wikipairs_tf_xla", default=False)


@contextlib.contextmanager
def tf_xla_step(compiled: bool):
    """Around a TensorFlow train step's tracing: `compiled` (the model's jit_compile) says whether
    XLA compiles it, so that `Dropout` and `SelfAttention` may take the hashed masks."""
    token = _TF_XLA.set(bool(compiled) and keras.backend.backend() == "tensorflow")
    try:
        yield
    finally:
        _TF_XLA.reset(token)


def fast_dropout_applies(rng: str) -> bool:
    """Whether `fast_dropout` replaces Keras' dropout here: JAX with the hash or Philox; a
    TensorFlow step compiled by XLA with the hash."""
    backend = keras.backend.backend()
    if backend == "jax":
        return rng != "threefry"
    return backend == "tensorflow" and rng == "hash" and _TF_XLA.get()


def tf_hash_bits(seed, shape):
    """`hash_bits` in TensorFlow ops: the same bits for the same seed and shape (a tuple of
    ints, or an int tensor such as tf.shape(x) where the batch size is known only at run time;
    fewer than 2^32 elements)."""
    import tensorflow as tf

    seed = tf.cast(seed, tf.uint32)
    size = tf.reduce_prod(tf.cast(shape, tf.int64))
    index = tf.reshape(tf.cast(tf.range(size, dtype=tf.int64), tf.uint32), shape)
    return _keyed_hash(index, seed[0], seed[1], tf.bitwise.bitwise_xor, tf.bitwise.right_shift,
                       lambda v: tf.constant(v, tf.uint32))


def _tf_hash_dropout(inputs, rate: float, seed_generator):
    import tensorflow as tf

    static = inputs.shape
    if static.is_fully_defined() and static.num_elements() >= 2 ** 32:  # the index would wrap
        return keras.random.dropout(inputs, rate, seed=seed_generator)
    seed = tf.cast(seed_generator.next(), tf.uint32)  # Keras' int32 state, bits kept
    threshold = tf.constant(hash_threshold(rate), tf.uint32)
    keep = tf_hash_bits(seed, tf.shape(inputs)) >= threshold
    return tf.where(keep, inputs / tf.cast(1.0 - rate, inputs.dtype), tf.zeros_like(inputs))


def uint16_bits(key, shape):
    """uint32[4] Philox key, shape -> uint16[shape] random bits: drawn as uint32 pairs and split,
    because XLA's RngBitGenerator spends a full 32-bit Philox output on each 16-bit element
    (half the work: 2.2x faster on a CPU for one [32, 8, 288, 288] attention mask)."""
    import jax
    import jax.numpy as jnp

    size = math.prod(shape)
    _, bits = jax.lax.rng_bit_generator(key, ((size + 1) // 2,), dtype=jnp.uint32,
                                        algorithm=jax.lax.RandomAlgorithm.RNG_PHILOX)
    return jax.lax.bitcast_convert_type(bits, jnp.uint16).reshape(-1)[:size].reshape(shape)


@keras.saving.register_keras_serializable("wikipairs")
class Dropout(layers.Dropout):
    """keras.layers.Dropout whose JAX masks come from `fast_dropout`; no noise_shape. `rng`
    (class attribute, also read by SelfAttention): "hash" (default), "philox", or "threefry"
    for Keras' own path, to compare."""

    rng = "hash"

    def call(self, inputs, training=False):
        if training and 0.0 < self.rate < 1.0 and fast_dropout_applies(self.rng):
            return fast_dropout(inputs, self.rate, self.seed_generator, self.rng)
        return super().call(inputs, training=training)


def fused_attention(query, key, value, key_lengths, scale: float):
    """query/key/value [B, L, N, H], key_lengths int32 [B] -> [B, L, N, H] (JAX only): softmax
    over the first key_lengths[b] keys of row b; cuDNN on a GPU in 16-bit floats, else XLA."""
    import jax
    import jax.numpy as jnp

    implementations = ["xla"]
    if jax.default_backend() == "gpu" and query.dtype in (jnp.bfloat16, jnp.float16):
        implementations.insert(0, "cudnn")
    for i, implementation in enumerate(implementations):
        try:
            return jax.nn.dot_product_attention(
                query, key, value, key_value_seq_lengths=key_lengths, scale=scale,
                implementation=implementation)
        except Exception:  # cuDNN refuses a shape or version at trace time: XLA's then
            if i == len(implementations) - 1:
                raise


# Elements of one block's scores ([rows, heads, Lq, Lk] float32: 8 MiB): what stays in this
# kind of CPU's caches between the products and the softmax. Measured on a 2-core Xeon for
# `small`'s [32, 8, 288, 288] (forward + backward): whole batch 266-279 ms, blocks of 1 row 234-253,
# of 2 rows 195-207, of 4 rows 199-217 (benchmarks/README.md, "Attention in blocks of rows").
BLOCK_ELEMENTS = 1 << 21


def block_rows(batch: int, heads: int, query_len: int, key_len: int) -> int:
    """The largest divisor of `batch` whose rows' scores fit BLOCK_ELEMENTS (at least 1)."""
    most = max(1, BLOCK_ELEMENTS // max(1, heads * query_len * key_len))
    return max(d for d in range(1, min(batch, most) + 1) if batch % d == 0)


def blocked_attention(query, key, value, key_lengths, scale: float, rate: float = 0.0,
                      seed=None, rows: int | None = None):
    """query [B, Lq, N, H], key/value [B, Lk, N, H], key_lengths int32 [B] (>= 1), scale, rate
    of attention dropout, seed uint32[2] (with rate > 0) -> [B, Lq, N, H] (JAX): the softmax of
    the scaled scores over the first key_lengths[b] keys of row b, its probabilities dropped
    where `hash_bits(seed, [B, N, Lq, Lk])` < rate * 2^32 (the masks `fast_dropout` gives Keras'
    probabilities under the same seed), times the values.

    Computed `rows` batch rows at a time (default `block_rows`), and differentiated by a custom
    backward pass that recomputes each block's probabilities from its row maxima and sums
    (flash attention's schedule, Dao et al. 2022, blocked by batch rows rather than by tiles):
    no [B, N, Lq, Lk] array is ever written to memory, forward or backward, where XLA's
    attention on a CPU writes and reads several (the scores, the probabilities, the mask, their
    gradients). The scores and the softmax are float32 whatever the inputs' dtype."""
    import jax.numpy as jnp

    batch, query_len, heads, _ = query.shape
    key_len = key.shape[1]
    rows = rows or block_rows(batch, heads, query_len, key_len)
    if batch % rows:
        raise ValueError(f"blocked_attention: {rows} rows per block do not divide batch {batch}")
    if seed is None:
        seed = jnp.zeros((2,), jnp.uint32)
    return _blocked_impl()(float(scale), float(rate), int(rows), query, key, value,
                           key_lengths.astype(jnp.int32), jnp.asarray(seed).astype(jnp.uint32))


@functools.cache
def _blocked_impl():
    """The custom-VJP function behind `blocked_attention`, made on first use (JAX is imported
    only on the JAX backend)."""
    import jax
    import jax.numpy as jnp

    def split(x, rows):  # [B, ...] -> [B / rows, rows, ...]
        return x.reshape(x.shape[0] // rows, rows, *x.shape[1:])

    def scores(scale, q, k, lengths):  # -> float32 [rows, N, Lq, Lk], -inf past each row's keys
        s = jnp.einsum("bqhd,bkhd->bhqk", q, k, preferred_element_type=jnp.float32) * scale
        real = jax.lax.broadcasted_iota(jnp.int32, s.shape, 3) < lengths[:, None, None, None]
        return jnp.where(real, s, -jnp.inf)

    def keep_mask(rate, seed, block, shape):  # the block's part of the whole batch's masks
        offset = block.astype(jnp.uint32) * jnp.uint32(math.prod(shape))
        threshold = jnp.uint32(hash_threshold(rate))
        return hash_bits(seed, shape, offset) >= threshold

    def forward(scale, rate, rows, q, k, v, lengths, seed):
        def one(args):
            block, qb, kb, vb, lb = args
            s = scores(scale, qb, kb, lb)
            top = jnp.max(s, axis=-1, keepdims=True)
            p = jnp.exp(s - top)
            total = jnp.sum(p, axis=-1, keepdims=True)
            norm = total
            if rate > 0.0:  # kept probabilities scaled by 1 / (1 - rate), as Dropout does
                p = jnp.where(keep_mask(rate, seed, block, p.shape), p, 0.0)
                norm = total * (1.0 - rate)
            out = jnp.einsum("bhqk,bkhd->bqhd", p.astype(vb.dtype), vb,
                             preferred_element_type=jnp.float32)
            out = out / jnp.swapaxes(norm, 1, 2)  # [rows, Lq, N, 1]
            return out.astype(qb.dtype), (top + jnp.log(total))[..., 0]
        blocks = jnp.arange(q.shape[0] // rows)
        out, lse = jax.lax.map(one, (blocks, split(q, rows), split(k, rows), split(v, rows),
                                     split(lengths, rows)))
        return out.reshape(q.shape), lse  # lse: [B / rows, rows, N, Lq], log of each row's sum

    @functools.partial(jax.custom_vjp, nondiff_argnums=(0, 1, 2))
    def attention(scale, rate, rows, q, k, v, lengths, seed):
        return forward(scale, rate, rows, q, k, v, lengths, seed)[0]

    def attention_fwd(scale, rate, rows, q, k, v, lengths, seed):
        out, lse = forward(scale, rate, rows, q, k, v, lengths, seed)
        return out, (q, k, v, lengths, seed, out, lse)

    def attention_bwd(scale, rate, rows, residuals, d_out):
        q, k, v, lengths, seed, out, lse = residuals

        def one(args):
            block, qb, kb, vb, lb, ob, lseb, dob = args
            p = jnp.exp(scores(scale, qb, kb, lb) - lseb[..., None])  # probabilities
            dob32 = dob.astype(jnp.float32)
            d_dropped = jnp.einsum("bqhd,bkhd->bhqk", dob, vb, preferred_element_type=jnp.float32)
            if rate > 0.0:
                keep = keep_mask(rate, seed, block, p.shape)
                dropped = jnp.where(keep, p * (1.0 / (1.0 - rate)), 0.0)
                d_p = jnp.where(keep, d_dropped * (1.0 / (1.0 - rate)), 0.0)
            else:
                dropped, d_p = p, d_dropped
            dv = jnp.einsum("bhqk,bqhd->bkhd", dropped.astype(dob.dtype), dob,
                            preferred_element_type=jnp.float32)
            # sum_k p * d_p = sum_d out * d_out (out = dropped @ v): the softmax's correction
            delta = jnp.einsum("bqhd,bqhd->bhq", ob.astype(jnp.float32), dob32)
            d_s = (p * (d_p - delta[..., None]) * scale).astype(qb.dtype)
            dq = jnp.einsum("bhqk,bkhd->bqhd", d_s, kb, preferred_element_type=jnp.float32)
            dk = jnp.einsum("bhqk,bqhd->bkhd", d_s, qb, preferred_element_type=jnp.float32)
            return dq.astype(qb.dtype), dk.astype(kb.dtype), dv.astype(vb.dtype)

        blocks = jnp.arange(q.shape[0] // rows)
        dq, dk, dv = jax.lax.map(one, (blocks, split(q, rows), split(k, rows), split(v, rows),
                                       split(lengths, rows), split(out, rows), lse,
                                       split(d_out, rows)))
        return dq.reshape(q.shape), dk.reshape(k.shape), dv.reshape(v.shape), None, None

    attention.defvjp(attention_fwd, attention_bwd)
    return attention



@keras.saving.register_keras_serializable("wikipairs")
class SelfAttention(layers.MultiHeadAttention):
    """Multi-head self-attention: x [B, L, D], attention_mask bool [B, L, L], key_lengths int32
    [B] (real tokens per right-padded row, >= 1) -> [B, L, D] ([B, 1, D] with first_only).
    `use_fused` (class attribute) switches the JAX fast paths off, e.g. to compare them with
    Keras' path; `use_blocked` the CPU's (`blocked_attention`) alone."""

    use_fused = True
    use_blocked = True  # within use_fused: blocked_attention on a CPU ("always": on any device)

    def build(self, x_shape, attention_mask_shape=None, key_lengths_shape=None):
        super().build(x_shape, x_shape)

    def compute_output_shape(self, x_shape, attention_mask_shape=None, key_lengths_shape=None,
                             first_only=False):
        return (x_shape[0], 1, x_shape[2]) if first_only else tuple(x_shape)

    def call(self, x, attention_mask, key_lengths=None, training=False, first_only=False):
        """first_only: attend from position 0 alone -> [B, 1, D] (keys and values from all of
        x; the [CLS] state of a tower's last layer, without the other L-1 queries' work)."""
        if first_only:
            attention_mask = attention_mask[:, :1, :]
        query = self._query_dense(x[:, :1, :] if first_only else x)
        key, value = self._key_dense(x), self._value_dense(x)
        dropping = bool(training) and self._dropout > 0.0
        fast = keras.backend.backend() == "jax" and self.use_fused and key_lengths is not None
        if fast and self._blocks(query, key, dropping):
            seed = self._dropout_layer.seed_generator.next() if dropping else None
            out = blocked_attention(query, key, value, key_lengths, self._scale(),
                                    self._dropout if dropping else 0.0, seed)
        elif fast and not dropping:
            out = fused_attention(query, key, value, key_lengths, self._scale())
        elif dropping and fast_dropout_applies(Dropout.rng):
            out = self._dropped_attention(query, key, value, attention_mask)
        else:
            out, _ = self._compute_attention(query, key, value, attention_mask, training)
        return self._output_dense(out)

    def _blocks(self, query, key, dropping: bool) -> bool:
        """Whether `blocked_attention` runs: on a CPU (the only device it was measured on; a GPU
        keeps cuDNN's fused kernel, unless use_blocked is "always", to measure it there), with
        static shapes, hashed dropout masks if any, and fewer than 2^32 probabilities."""
        import jax

        if not self.use_blocked:
            return False
        if self.use_blocked != "always" and jax.default_backend() != "cpu":
            return False
        if dropping and Dropout.rng != "hash":
            return False
        shape = (query.shape[0], self._num_heads, query.shape[1], key.shape[1])
        return all(isinstance(n, int) for n in shape) and math.prod(shape) < 2 ** 32

    def _scale(self) -> float:
        return 1.0 / math.sqrt(float(self._key_dim))  # as Keras scales the queries

    def _dropped_attention(self, query, key, value, attention_mask):
        """Keras' explicit path (scores, masked softmax, dropout, weighted values) with the
        probabilities dropped by `fast_dropout` under the layer's own seed generator."""
        query = ops.multiply(query, ops.cast(self._scale(), query.dtype))
        scores = ops.einsum(self._dot_product_equation, key, query)
        probs = self._masked_softmax(scores, attention_mask)
        probs = fast_dropout(probs, self._dropout, self._dropout_layer.seed_generator,
                             Dropout.rng)
        return ops.einsum(self._combine_equation, probs, value)
