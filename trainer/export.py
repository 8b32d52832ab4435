"""Export a trained `TwoTower` as a self-contained TensorFlow SavedModel for ReQA-style tools.

    export_saved_model(model, "vocab/spm.model", "out/export")
    encoders = load_encoders("out/export")          # tensorflow + tensorflow_text only
    q = encoders.query(["Who founded the city?"])                       # float32 [1, D]
    r = encoders.response(["It was founded in 1200."], ["History. It was founded ..."])

Signatures (what retrieval-qa-eval, ReQA, looks up; every input is tf.string [None]):

- `query_encoder(input)` -> {"outputs": float32 [None, D]}: questions, tokenized as
  `[CLS] question [SEP]` (at most `query_max_len` ids) for the query tower.
- `question_encoder(input)`: the same function under the name of the Universal Sentence Encoder
  QA modules, so `squad_eval.py --tfhub EXPORT_DIR` of retrieval-qa-eval (hub.load, then
  `question_encoder(input=...)`, `response_encoder(input=..., context=...)`) runs on an export.
- `response_encoder(input, context)` -> {"outputs": float32 [None, D]}: answer sentences and the
  passages they come from, for the document tower (see "Response layout").
- `document_encoder(title, text)` -> {"outputs": float32 [None, D]}: a wikipairs pair document
  (`doc_title`, `doc_text`), exactly the `doc_ids` layout `wikipairs build` writes. With the
  response layout below it is the same function as `response_encoder` under other input names.
- `serving_default(input)`: the query encoder once more, under the name that
  `saved_model_cli run`, TF Serving and other tools call when given no signature name. A query
  (one string) is the input such a tool has; a response needs two, so it has its own names.
- `query_ids(input)` -> {"ids": int32 [None, query_max_len]} and
  `response_ids(input, context)` -> {"ids": int32 [None, doc_max_len]}: the token ids the
  encoders feed their towers (for checking a tokenizer against the graph's).

Response layout. The document tower was pre-trained on `[CLS] title [SEP] passage [SEP]`
(`Tokenizer.encode_pair`: the passage is cut first, the title only when it alone does not fit,
the final [SEP] always kept). A ReQA response is a sentence plus its context paragraph; it maps
onto that layout as

    [CLS] sentence [SEP] context [SEP]      == Tokenizer.encode_pair(sentence, context, max_len)

i.e. the sentence takes the title slot (the short part that says what the document is about and
that survives truncation) and the context takes the passage slot. An empty context gives
`[CLS] sentence [SEP] [SEP]`. `response_ids()` below is the same in Python; ReQA fine-tuning data
must be built with it so that training and the exported graph agree.

Tokenization runs inside the graph: a `tensorflow_text.SentencepieceTokenizer` built from the
SentencePiece model's bytes (an attribute of the graph's op, so the SavedModel needs no file
outside itself), with the [CLS]/[SEP] framing and truncation of `wikipairs.pairs.vocab.Tokenizer`, padded
with [PAD]=0 to the static length. The `.model` file is also copied into the SavedModel's
`assets/` for reference, and `assets.extra/wikipairs_export.json` records the model config, the
lengths and the layout.

Loading needs `import tensorflow_text` first (it registers the SentencePiece ops) and nothing
from wikipairs:

    import tensorflow as tf
    import tensorflow_text  # noqa: F401
    m = tf.saved_model.load(EXPORT_DIR)
    m.signatures["query_encoder"](input=tf.constant(["Who founded Athens?"]))["outputs"]

Without that import, `tf.saved_model.load` fails with "Op type not registered
'SentencepieceTokenizeOp' in binary ..." (a SentencePiece op of tensorflow_text).
Retrieval-qa-eval (ReQA's `squad_eval.py`): run it with `--tfhub EXPORT_DIR`, which calls
`question_encoder(input=...)` and `response_encoder(input=..., context=...)` with raw strings as
here (add `import tensorflow_text` to the script, where it has `# import tf_sentencepiece`). Its
`--saved_model` path does not fit: it passes one batch of serialized tf.train.Example protos
(features inp_text / res_text / res_context) to `query_encoder` / `response_encoder`
positionally; the call succeeds and tokenizes the protos as text, so the scores it prints are
wrong with no error.
"""
from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterable, Sequence

import keras
import numpy as np

from wikipairs.pairs.vocab import Tokenizer

from wikipairs.special_tokens import CLS_ID, PAD_ID, SEP_ID

QUERY_ENCODER = "query_encoder"
QUESTION_ENCODER = "question_encoder"  # the same, under the name USE-QA / TF-Hub tools look up
RESPONSE_ENCODER = "response_encoder"
DOCUMENT_ENCODER = "document_encoder"
QUERY_IDS = "query_ids"
RESPONSE_IDS = "response_ids"
SERVING_DEFAULT = "serving_default"  # the query encoder, for tools that call the default
METADATA_FILE = os.path.join("assets.extra", "wikipairs_export.json")
RESPONSE_LAYOUT = "[CLS] sentence [SEP] context [SEP] (encode_pair(sentence, context))"


# ---- the Python side of the layout -------------------------------------------------------------

def _pad(ids: list[int], max_len: int, pad: bool) -> list[int]:
    return ids + [PAD_ID] * (max_len - len(ids)) if pad else ids


def query_ids(tokenizer: Tokenizer, question: str, max_len: int, pad: bool = False) -> list[int]:
    """`[CLS] question [SEP]` in at most max_len ids, as the `query_encoder` graph tokenizes it
    (padded with [PAD]=0 to max_len when `pad`, as the graph feeds the tower)."""
    return _pad(tokenizer.encode(question, max_len), max_len, pad)


def response_ids(tokenizer: Tokenizer, sentence: str, context: str, max_len: int,
                 pad: bool = False) -> list[int]:
    """`[CLS] sentence [SEP] context [SEP]` in at most max_len ids (the context is cut first),
    exactly as the `response_encoder` graph tokenizes (sentence, context); padded with [PAD]=0 to
    max_len when `pad`. Build ReQA fine-tuning documents with this."""
    return _pad(tokenizer.encode_pair(sentence, context, max_len), max_len, pad)


# ---- the graph side ------------------------------------------------------------------------------

def _tf():
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (registers the SentencePiece ops)

    return tf


def _column(tf, nrows, value: int):
    """A ragged [nrows, 1] int32 column of `value`."""
    return tf.RaggedTensor.from_tensor(tf.fill(tf.stack([nrows, 1]), tf.constant(value, tf.int32)))


def frame_single(pieces, max_len: int):
    """Ragged int32 [B, None] pieces -> int32 [B, max_len]: [CLS] pieces[:max_len-2] [SEP], pads."""
    tf = _tf()
    pieces = pieces[:, :max_len - 2]
    nrows = tf.cast(pieces.nrows(), tf.int32)
    ids = tf.concat([_column(tf, nrows, CLS_ID), pieces, _column(tf, nrows, SEP_ID)], axis=1)
    return ids.to_tensor(default_value=PAD_ID, shape=[None, max_len])


def frame_pair(first, second, max_len: int):
    """Ragged int32 [B, None] x2 -> int32 [B, max_len]: [CLS] first [SEP] second [SEP] + pads,
    `second` cut first, `first` only when it alone does not fit (`Tokenizer.encode_pair`)."""
    tf = _tf()
    first = first[:, :max_len - 3]
    room = (max_len - 3) - first.row_lengths()
    second = second[:, :max_len - 3]
    keep = tf.minimum(second.row_lengths(), room)
    second = tf.RaggedTensor.from_tensor(
        second.to_tensor(default_value=PAD_ID, shape=[None, max_len - 3]), lengths=keep)
    nrows = tf.cast(first.nrows(), tf.int32)
    sep = _column(tf, nrows, SEP_ID)
    ids = tf.concat([_column(tf, nrows, CLS_ID), first, sep, second, sep], axis=1)
    return ids.to_tensor(default_value=PAD_ID, shape=[None, max_len])


def make_id_functions(spm_model_proto: bytes, query_max_len: int = 64, doc_max_len: int = 288):
    """The id-producing part of the export, on its own: a tf.Module with two tf.functions,

        .query_ids(texts: tf.string [None]) -> int32 [None, query_max_len]
        .response_ids(first: tf.string [None], second: tf.string [None])
            -> int32 [None, doc_max_len]

    (`query_ids` / `response_ids` of this module in Python, padded). The SavedModel's encoders
    call these and feed the result to the towers."""
    return _id_module_class()(spm_model_proto, query_max_len, doc_max_len)


def _string_spec(name: str):
    tf = _tf()
    return tf.TensorSpec([None], tf.string, name=name)


_ID_MODULE_CLASS = None


def _id_module_class():
    """tf.Module subclasses are made lazily, so importing this module does not import TF."""
    global _ID_MODULE_CLASS
    if _ID_MODULE_CLASS is None:
        tf = _tf()
        import tensorflow_text as tft

        class IdModule(tf.Module):
            def __init__(self, spm_model_proto: bytes, query_max_len: int, doc_max_len: int):
                super().__init__(name="wikipairs_ids")
                if query_max_len < 2 or doc_max_len < 3:
                    raise ValueError(f"query_max_len must be >= 2 and doc_max_len >= 3, got "
                                     f"{query_max_len} and {doc_max_len}")
                self.query_max_len, self.doc_max_len = int(query_max_len), int(doc_max_len)
                self.sentencepiece = tft.SentencepieceTokenizer(model=spm_model_proto,
                                                                out_type=tf.int32)
                self.query_ids = tf.function(
                    self._query_ids, input_signature=[_string_spec("input")])
                self.response_ids = tf.function(
                    self._response_ids,
                    input_signature=[_string_spec("input"), _string_spec("context")])

            def _query_ids(self, texts):
                return frame_single(self.sentencepiece.tokenize(texts), self.query_max_len)

            def _response_ids(self, first, second):
                return frame_pair(self.sentencepiece.tokenize(first),
                                  self.sentencepiece.tokenize(second), self.doc_max_len)

        _ID_MODULE_CLASS = IdModule
    return _ID_MODULE_CLASS


def export_saved_model(model, spm_model_path: str, export_dir: str,
                       query_max_len: int | None = None, doc_max_len: int | None = None) -> dict:
    """Write `model` (a built TwoTower on the TensorFlow backend) as a SavedModel in `export_dir`.

    spm_model_path: the SentencePiece model the training ids were made with (`wikipairs vocab`).
    query_max_len / doc_max_len: padded lengths fed to the towers (None: the model config's
        max_query_len / max_doc_len, 64 / 288 by default); at most the config's max_positions.
    Signatures: see the module docstring. Returns the metadata written to
    `export_dir/assets.extra/wikipairs_export.json`.
    """
    if keras.backend.backend() != "tensorflow":
        raise RuntimeError(f"export needs the Keras TensorFlow backend, not "
                           f"{keras.backend.backend()!r} (set KERAS_BACKEND=tensorflow)")
    tf = _tf()
    config = model.config
    query_max_len = int(query_max_len or config.max_query_len)
    doc_max_len = int(doc_max_len or config.max_doc_len)
    if config.encoder == "transformer" and max(query_max_len, doc_max_len) > config.max_positions:
        raise ValueError(f"lengths {query_max_len}/{doc_max_len} exceed the model's "
                         f"max_positions {config.max_positions}")
    tokenizer = Tokenizer(spm_model_path)  # checks the special tokens
    if tokenizer.vocab_size > config.vocab_size:
        raise ValueError(f"{spm_model_path} has {tokenizer.vocab_size} ids but the model embeds "
                         f"only {config.vocab_size}")
    with open(spm_model_path, "rb") as f:
        proto = f.read()
    if not model.built:
        model.build()

    ids = make_id_functions(proto, query_max_len, doc_max_len)
    root = tf.Module(name="wikipairs_two_tower")
    root.ids = ids
    root.query_tower = model.query_tower
    root.doc_tower = model.doc_tower
    root.spm_model = tf.saved_model.Asset(os.path.abspath(spm_model_path))

    def encode_queries(texts):
        emb = model.query_tower(ids.query_ids(texts), training=False)
        return {"outputs": tf.cast(emb, tf.float32)}

    def encode_pairs(first, second):
        emb = model.doc_tower(ids.response_ids(first, second), training=False)
        return {"outputs": tf.cast(emb, tf.float32)}

    root.query_encoder = tf.function(encode_queries, input_signature=[_string_spec("input")])
    root.response_encoder = tf.function(
        encode_pairs, input_signature=[_string_spec("input"), _string_spec("context")])
    root.document_encoder = tf.function(
        lambda title, text: encode_pairs(title, text),
        input_signature=[_string_spec("title"), _string_spec("text")])
    root.query_id_signature = tf.function(lambda texts: {"ids": ids.query_ids(texts)},
                                          input_signature=[_string_spec("input")])
    root.response_id_signature = tf.function(
        lambda first, second: {"ids": ids.response_ids(first, second)},
        input_signature=[_string_spec("input"), _string_spec("context")])
    signatures = {
        QUERY_ENCODER: root.query_encoder.get_concrete_function(),
        QUESTION_ENCODER: root.query_encoder.get_concrete_function(),
        SERVING_DEFAULT: root.query_encoder.get_concrete_function(),
        RESPONSE_ENCODER: root.response_encoder.get_concrete_function(),
        DOCUMENT_ENCODER: root.document_encoder.get_concrete_function(),
        QUERY_IDS: root.query_id_signature.get_concrete_function(),
        RESPONSE_IDS: root.response_id_signature.get_concrete_function(),
    }
    tf.saved_model.save(root, export_dir, signatures=signatures)

    metadata = {
        "format": "wikipairs two-tower SavedModel",
        "signatures": {
            QUERY_ENCODER: {"inputs": ["input"], "outputs": ["outputs"]},
            QUESTION_ENCODER: {"inputs": ["input"], "outputs": ["outputs"]},
            SERVING_DEFAULT: {"inputs": ["input"], "outputs": ["outputs"]},
            RESPONSE_ENCODER: {"inputs": ["input", "context"], "outputs": ["outputs"]},
            DOCUMENT_ENCODER: {"inputs": ["title", "text"], "outputs": ["outputs"]},
            QUERY_IDS: {"inputs": ["input"], "outputs": ["ids"]},
            RESPONSE_IDS: {"inputs": ["input", "context"], "outputs": ["ids"]},
        },
        "embedding_dim": int(config.embedding_dim),
        "query_max_len": query_max_len,
        "doc_max_len": doc_max_len,
        "query_layout": "[CLS] question [SEP] (encode(question))",
        "response_layout": RESPONSE_LAYOUT,
        "document_layout": "[CLS] title [SEP] text [SEP] (encode_pair(title, text))",
        "spm_model": os.path.basename(spm_model_path),
        "vocab_size": tokenizer.vocab_size,
        "model_config": config.to_dict(),
    }
    os.makedirs(os.path.join(export_dir, "assets.extra"), exist_ok=True)
    with open(os.path.join(export_dir, METADATA_FILE), "w", encoding="utf-8") as f:
        json.dump(metadata, f, indent=2, sort_keys=True)
    return metadata


# ---- loading -----------------------------------------------------------------------------------

def load_hint(export_dir: str) -> str:
    """The line `wikipairs train export` ends with: how to load the export (tensorflow_text
    first, or the load fails with "Op type not registered 'SentencepieceTokenizeOp'")."""
    return (f"load it with: import tensorflow as tf, tensorflow_text; "
            f"tf.saved_model.load({os.path.abspath(export_dir)!r})")


class Encoders:
    """What `load_encoders` returns; unpacks as `query, response = load_encoders(path)`.

    query(questions) -> float32 [N, D]; response(sentences, contexts=None) -> float32 [N, D]
    (contexts None: empty strings); document(titles, texts) -> float32 [N, D]. Inputs are
    sequences of str, encoded in batches of `batch_size`. `saved_model` is the loaded object
    (keep it alive while the signatures are used: this object holds it)."""

    def __init__(self, saved_model, batch_size: int = 256):
        self.saved_model = saved_model
        self.batch_size = batch_size
        sigs = saved_model.signatures
        self._query, self._response = sigs[QUERY_ENCODER], sigs[RESPONSE_ENCODER]
        self.embedding_dim = int(self._query.structured_outputs["outputs"].shape[-1])

    def _run(self, fn: Callable, columns: dict[str, Sequence[str]]) -> np.ndarray:
        tf = _tf()
        n = len(next(iter(columns.values())))
        if any(len(c) != n for c in columns.values()):
            raise ValueError(f"inputs of different lengths: {[len(c) for c in columns.values()]}")
        out = [np.zeros((0, self.embedding_dim), np.float32)]
        for start in range(0, n, self.batch_size):
            batch = {k: tf.constant(list(v[start:start + self.batch_size]), tf.string)
                     for k, v in columns.items()}
            out.append(fn(**batch)["outputs"].numpy())
        return np.concatenate(out)

    def query(self, questions: Iterable[str]) -> np.ndarray:
        return self._run(self._query, {"input": list(questions)})

    def response(self, sentences: Iterable[str], contexts: Iterable[str] | None = None
                 ) -> np.ndarray:
        sentences = list(sentences)
        contexts = [""] * len(sentences) if contexts is None else list(contexts)
        return self._run(self._response, {"input": sentences, "context": contexts})

    def document(self, titles: Iterable[str], texts: Iterable[str]) -> np.ndarray:
        """The pair-document layout; identical to `response(titles, texts)`."""
        return self.response(titles, texts)

    def __iter__(self):
        return iter((self.query, self.response))


def load_encoders(export_dir: str, batch_size: int = 256) -> Encoders:
    """Load an export (tf.saved_model.load; needs tensorflow and tensorflow_text, not keras or
    wikipairs' model code) and return its `Encoders` (`query, response = load_encoders(d)`)."""
    tf = _tf()
    return Encoders(tf.saved_model.load(export_dir), batch_size)
