"""wikipairs.shards.tfrecord: Example encoding and TFRecord files, with protobuf (tests/tfexample.py)
and TensorFlow as the oracles.

The TensorFlow tests are skipped where TensorFlow is not installed; the others (CRC, framing,
corruption, determinism, RowEncoder against protobuf) never import it.
"""
from __future__ import annotations

import gzip
import hashlib
import io
import math
import os
import random
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from tfexample import crc32c_reference, decode_example, encode_example, encode_typed_example
from wikipairs.shards import tfrecord
from wikipairs.shards.tfrecord import (RowEncoder, TFRecordWriter, crc32c, frame_record, frame_records,
                                read_tfrecords)

TESTS = os.path.dirname(os.path.abspath(__file__))

# One record per row: every kind, non-ASCII text, int64 extremes, empty lists.
ROWS = [
    {"query": "Zürich – 東京 🚀", "context": ["a", "ß", ""], "raw": b"\x00\xff\x80",
     "id": 7, "ids": [-1, 0, 2**31, 2**40, -(2**63), 2**63 - 1], "score": 0.25,
     "scores": [1.5, -2.0, 3.0e-5], "empty": [], "flag": True},
    {"query": "", "context": ["x" * 5000], "raw": b"", "id": -(2**33), "ids": [],
     "score": -0.0, "scores": [], "empty": [], "flag": False},
]
VAR_KEYS = ["context", "ids", "scores", "empty"]


def _f32(x: float) -> float:
    """x rounded to float32, as stored in a FloatList."""
    import struct
    return struct.unpack("<f", struct.pack("<f", x))[0]


def _expected(row: dict) -> dict[str, list]:
    """What decode_example should return for `row`."""
    out = {}
    for key, value in row.items():
        values = list(value) if isinstance(value, list) else [value]
        out[key] = [v.encode() if isinstance(v, str) else _f32(v) if isinstance(v, float)
                    else int(v) if isinstance(v, bool) else v for v in values]
    return out


def _write(records: list[bytes], compression: str | None) -> bytes:
    buf = io.BytesIO()
    with TFRecordWriter(buf, compression=compression) as writer:
        for record in records:
            writer.write(record)
    return buf.getvalue()


# ------------------------------------------------------------------ without TensorFlow

def test_crc32c_known_values():
    # The check value of CRC-32C and the test vectors of RFC 3720 (iSCSI), appendix B.4.
    vectors = {b"123456789": 0xE3069283, b"": 0, bytes(32): 0x8A9136AA,
               b"\xff" * 32: 0x62A8AB43, bytes(range(32)): 0x46DD794E,
               bytes(range(31, -1, -1)): 0x113FDB5C}
    for data, expected in vectors.items():
        assert crc32c_reference(data) == expected, data
        assert crc32c(data) == expected, data
    assert crc32c(bytearray(b"123456789")) == crc32c(memoryview(b"123456789")) == 0xE3069283
    rng = random.Random(0)
    sizes = [0, 1, 3, 4, 5, 59, 60, 61, 124, 125, 255, 256, 257, 1000, 5000, 70000]
    buffers = [rng.randbytes(n) for n in sizes * 2]
    assert [crc32c(b) for b in buffers] == [crc32c_reference(b) for b in buffers]


def _masked_reference(data: bytes) -> bytes:
    crc = crc32c_reference(data)
    return ((((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF).to_bytes(4, "little")


def test_frame_record_layout():
    data = b"hello"
    framed = frame_record(data)
    assert len(framed) == len(data) + 16
    assert framed[:8] == (5).to_bytes(8, "little")
    assert framed[8:12] == tfrecord.masked_crc32c(framed[:8]).to_bytes(4, "little")
    assert framed[8:12] == _masked_reference(framed[:8])
    assert framed[12:17] == data
    assert framed[17:] == tfrecord.masked_crc32c(data).to_bytes(4, "little")
    assert framed[17:] == _masked_reference(data)
    assert frame_records([data, b"", data]) == framed + frame_record(b"") + framed
    for n in (0, 1, 300, 1 << 20, 1 << 40):  # the cached length headers
        header = tfrecord._header(n)
        assert header == n.to_bytes(8, "little") + _masked_reference(n.to_bytes(8, "little"))


@pytest.mark.parametrize("compression", ["gzip", None])
def test_roundtrip_without_tensorflow(compression):
    records = [encode_example(row) for row in ROWS] + [b"", os.urandom(100_000)]
    blob = _write(records, compression)
    assert (blob[:2] == b"\x1f\x8b") == (compression == "gzip")
    assert list(read_tfrecords(io.BytesIO(blob))) == records
    assert [decode_example(r) for r in records[:2]] == [_expected(row) for row in ROWS]


def test_gzip_output_is_deterministic(tmp_path):
    records = [encode_example(row) for row in ROWS] * 50
    digests = set()
    for name in ("a.tfrecord.gz", "b.tfrecord.gz"):
        with open(tmp_path / name, "wb") as f, TFRecordWriter(f) as writer:
            for record in records:
                writer.write(record)
        digests.add(hashlib.sha256((tmp_path / name).read_bytes()).hexdigest())
    assert len(digests) == 1
    header = (tmp_path / "a.tfrecord.gz").read_bytes()[:10]
    assert header[3] & 0x08 == 0 and header[4:8] == b"\0\0\0\0"  # no FNAME, mtime 0
    # Feature order does not matter: keys are serialized in protobuf's map order.
    assert encode_example(dict(reversed(list(ROWS[0].items())))) == encode_example(ROWS[0])


def test_corruption_is_detected(tmp_path):
    records = [encode_example(row) for row in ROWS]
    blob = bytearray(_write(records, None))
    second = len(records[0]) + 16
    for pos, what in [(second + 12 + 3, "data CRC"), (second + 2, "length CRC"),
                      (second + 16 + len(records[1]) - 1, "data CRC")]:
        bad = bytearray(blob)
        bad[pos] ^= 0x01
        with pytest.raises(ValueError, match=f"offset {second}: {what}"):
            list(read_tfrecords(io.BytesIO(bytes(bad))))
    with pytest.raises(ValueError, match="truncated"):
        list(read_tfrecords(io.BytesIO(bytes(blob[:-3]))))
    gz = bytearray(gzip.compress(bytes(blob), mtime=0))
    with pytest.raises(ValueError, match="truncated gzip"):
        list(read_tfrecords(io.BytesIO(bytes(gz[:-20]))))
    (tmp_path / "bad.gz").write_bytes(gzip.compress(bytes(bad), mtime=0))
    with pytest.raises(ValueError, match=f"offset {second}"):
        list(read_tfrecords(tmp_path / "bad.gz"))


def test_bad_feature_values():
    with pytest.raises(TypeError, match="mixes"):
        encode_example({"x": [1, "a"]})
    with pytest.raises(ValueError, match="int64"):
        encode_example({"x": [2**63]})
    with pytest.raises(TypeError):
        encode_example({"x": {"nested": 1}})
    with pytest.raises(ValueError):
        decode_example(b"\xff\xff\xff")


def test_no_tensorflow_import():
    """Writing and reading shards needs neither TensorFlow nor protobuf."""
    code = textwrap.dedent("""
        import io, sys
        import wikipairs.shards.tfrecord as t
        buf = io.BytesIO()
        with t.TFRecordWriter(buf) as writer:
            writer.write(t.RowEncoder({"a": ("int64", False)}).encode({"a": 1}))
        assert len(list(t.read_tfrecords(io.BytesIO(buf.getvalue())))) == 1
        assert "tensorflow" not in sys.modules, "tensorflow imported"
        assert "google.protobuf" not in sys.modules, "protobuf imported"
    """)
    subprocess.run([sys.executable, "-c", code], check=True)


# ------------------------------------------------------------------ TensorFlow as the oracle

@pytest.fixture(scope="module")
def tf():
    tf = pytest.importorskip("tensorflow")
    return tf


def _tf_example(tf, row: dict):
    """The same features as a tf.train.Example, built by TensorFlow's own classes."""
    feature = {}
    for key, value in row.items():
        values = list(value) if isinstance(value, list) else [value]
        if not values:
            feature[key] = tf.train.Feature()
        elif isinstance(values[0], (str, bytes)):
            feature[key] = tf.train.Feature(bytes_list=tf.train.BytesList(
                value=[v.encode() if isinstance(v, str) else v for v in values]))
        elif isinstance(values[0], float):
            feature[key] = tf.train.Feature(float_list=tf.train.FloatList(value=values))
        else:
            feature[key] = tf.train.Feature(int64_list=tf.train.Int64List(
                value=[int(v) for v in values]))
    return tf.train.Example(features=tf.train.Features(feature=feature))


def _spec(tf) -> dict:
    fixed = {"query": tf.string, "raw": tf.string, "id": tf.int64, "score": tf.float32,
             "flag": tf.int64}
    var = {"context": tf.string, "ids": tf.int64, "scores": tf.float32, "empty": tf.string}
    spec = {k: tf.io.FixedLenFeature([], dtype) for k, dtype in fixed.items()}
    spec.update({k: tf.io.VarLenFeature(dtype) for k, dtype in var.items()})
    return spec


def _parsed_values(tf, parsed: dict) -> dict[str, list]:
    out = {}
    for key, tensor in parsed.items():
        if isinstance(tensor, tf.sparse.SparseTensor):
            tensor = tensor.values
        out[key] = [v.item() if hasattr(v, "item") else v
                    for v in np.asarray(tensor.numpy(), dtype=object).reshape(-1)]
    return out


@pytest.mark.parametrize("compression", ["gzip", None])
def test_tensorflow_reads_our_files(tf, tmp_path, compression):
    path = tmp_path / "pairs.tfrecord"
    with open(path, "wb") as f, TFRecordWriter(f, compression=compression) as writer:
        for row in ROWS:
            writer.write(encode_example(row))
    dataset = tf.data.TFRecordDataset(str(path), compression_type="GZIP" if compression else "")
    got = [_parsed_values(tf, tf.io.parse_single_example(r, _spec(tf))) for r in dataset]
    assert len(got) == len(ROWS)
    for parsed, row in zip(got, ROWS):
        assert parsed == _expected(row)
        assert parsed["query"][0].decode("utf-8") == row["query"]
    # An empty list is an empty VarLenFeature of any dtype.
    record = encode_example({"e": []})
    for dtype in (tf.string, tf.int64, tf.float32):
        parsed = tf.io.parse_single_example(record, {"e": tf.io.VarLenFeature(dtype)})
        assert parsed["e"].values.shape == (0,)


@pytest.mark.parametrize("compression", ["GZIP", ""])
def test_we_read_tensorflow_files(tf, tmp_path, compression):
    path = str(tmp_path / "tf.tfrecord")
    records = [_tf_example(tf, row).SerializeToString() for row in ROWS] + [b""]
    with tf.io.TFRecordWriter(path, options=tf.io.TFRecordOptions(compression_type=compression)
                              ) as writer:
        for record in records:
            writer.write(record)
    got = list(read_tfrecords(path))
    assert got == records
    assert [decode_example(r) for r in got[:-1]] == [_expected(row) for row in ROWS]
    assert decode_example(b"") == {}


def test_encoding_matches_tensorflow_bytes(tf):
    for row in ROWS:
        ours = encode_example(row)
        theirs = _tf_example(tf, row)
        # Map entries are serialized sorted by key; TensorFlow's default serialization uses
        # the hash-table order of its protobuf runtime, so compare with deterministic=True.
        assert ours == theirs.SerializeToString(deterministic=True)
        assert tf.train.Example.FromString(ours) == theirs
        assert decode_example(theirs.SerializeToString()) == _expected(row)
    for key, value in [("q", "é"), ("i", [1, -2**40]), ("f", [0.5, math.inf])]:
        single = {key: value}
        assert encode_example(single) == _tf_example(tf, single).SerializeToString()


def test_tensorflow_imported_first():
    """TensorFlow's tensorflow.Example registration and ours coexist in either import order
    (this process imports ours first; the subprocess imports TensorFlow first)."""
    pytest.importorskip("tensorflow")
    code = textwrap.dedent("""
        import tensorflow as tf
        from tfexample import Example, encode_example
        data = encode_example({"a": [1, 2], "b": "x"})
        parsed = tf.io.parse_single_example(data, {"a": tf.io.VarLenFeature(tf.int64),
                                                   "b": tf.io.FixedLenFeature([], tf.string)})
        assert parsed["a"].values.numpy().tolist() == [1, 2] and parsed["b"].numpy() == b"x"
        assert Example.DESCRIPTOR.full_name != tf.train.Example.DESCRIPTOR.full_name
        assert Example.FromString(tf.train.Example.FromString(data).SerializeToString()) \\
            == Example.FromString(data)
    """)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3",
               PYTHONPATH=os.pathsep.join(filter(None, [TESTS, os.environ.get("PYTHONPATH")])))
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def test_typed_encoding_equals_checked_encoding():
    typed = {"s": ("bytes", ["Ωμέγα".encode(), b""]), "i": ("int64", [1, -2, 2**40]),
             "f": ("float", [0.5]), "empty": ("int64", []), "b": ("int64", [1])}
    plain = {k: v for k, (_, v) in typed.items()}
    assert encode_typed_example(typed) == encode_example(plain)


def test_row_encoder_is_byte_identical_to_protobuf():
    """RowEncoder writes the wire format itself: the same bytes as protobuf's deterministic
    serialization, for every field kind, empty lists, negative and large ints, repeats (its
    cache) and unicode; and for the pair schema's real rows."""
    from wikipairs.schemas import example_kinds, example_values, pair_fields

    kinds = {"query": ("bytes", False), "ids": ("int64", True), "n": ("int64", False),
             "flag": ("int64", False), "w": ("float", True), "tags": ("bytes", True),
             "query_in_doc": ("int64", False), "a": ("bytes", False), "x" * 200: ("int64", False)}
    encoder, rng = RowEncoder(kinds), random.Random(3)
    words = ["", "Ωμέγα", "a", "x" * 300, "line\nbreak", "🙂"]
    for _ in range(2000):
        row = {"query": rng.choice(words), "ids": [rng.randint(-2**63, 2**63 - 1)
                                                   for _ in range(rng.randint(0, 4))],
               "n": rng.choice([0, 1, 127, 128, 300, -1, 2**40, 2**63 - 1]),
               "flag": rng.choice([True, False]), "w": [rng.random() for _ in range(rng.randint(0, 3))],
               "tags": [rng.choice(words).encode() for _ in range(rng.randint(0, 3))],
               "query_in_doc": rng.randint(0, 3), "a": rng.choice(words), "x" * 200: 5}
        typed = {name: (kind, ([v.encode() if isinstance(v, str) else v for v in row[name]]
                               if is_list else [row[name].encode() if isinstance(row[name], str)
                                                else int(row[name]) if kind == "int64"
                                                else row[name]]))
                 for name, (kind, is_list) in kinds.items()}
        assert encoder.encode(row) == encode_typed_example(typed), row
    fields = pair_fields(True)
    pair_encoder = RowEncoder(example_kinds(fields))
    row = {"pair_id": "00ff", "passage_id": "a1", "doc_id": "b2", "task": "wlp", "split": "eval",
           "lang": "en",
           "query": "Q?", "query_page_id": 12,
           "query_title": "A", "query_section": 0, "query_paragraph": 1, "query_sentence": 2,
           "doc_page_id": 2**33, "doc_title": "B", "doc_section": 3, "doc_passage": 4,
           "doc_text": "text " * 100, "link_anchor": "", "query_in_doc": False,
           "link_in_doc": True,
           "query_tokens": 5, "doc_tokens": 300, "query_ids": [1, 5, 2], "doc_ids": []}
    assert pair_encoder.encode(row) == encode_typed_example(example_values(fields, row))


def _wire_names(data: bytes) -> list[str]:
    """The feature names of a serialized Example, in the order its map entries are written."""
    def varint(at):
        value = shift = 0
        while True:
            value |= (data[at] & 0x7F) << shift
            at += 1
            if data[at - 1] < 0x80:
                return value, at
            shift += 7
    names, (_, at) = [], varint(1)
    while at < len(data):
        size, start = varint(at + 1)  # an entry of Features.feature
        key_size, key_start = varint(start + 1)
        names.append(data[key_start:key_start + key_size].decode("utf-8"))
        at = start + size
    return names


# Names whose map order is not the naive one: case, non-ASCII (UTF-8 bytes, not UTF-16 units:
# U+FFFF before U+1F642), digits, and names that are prefixes of others, which protobuf (upb)
# writes after them ("query_ids" before "query", "日本" before "日", "" last).
ODD_NAMES = ["query", "query_ids", "Query", "QUERY", "a", "ab", "B", "b", "é", "e", "E", "Ä",
             "z", "日本", "日", "本", "🙂", "\uffff", "ｱ", "10", "9", "_", "", "a b", "doc", "doc_ids"]


def test_row_encoder_map_order_matches_protobuf():
    """RowEncoder's fixed map order (tfrecord._map_key) is protobuf's: byte-identical to the
    oracle for names in any input order, and written in the order spelled out here."""
    expected = ["10", "9", "B", "E", "QUERY", "Query", "_", "a b", "ab", "a", "b", "doc_ids",
                "doc", "e", "query_ids", "query", "z", "Ä", "é", "日本", "日", "本", "ｱ", "\uffff",
                "🙂", ""]
    assert sorted(expected) == sorted(ODD_NAMES)
    kinds_cycle = ["bytes", "int64", "float"]
    values = {"bytes": ["x", "ÿ"], "int64": [3, -1], "float": [0.5, 2.0]}
    rng = random.Random(5)
    for _ in range(20):
        names = ODD_NAMES[:]
        rng.shuffle(names)
        kinds = {n: (kinds_cycle[ODD_NAMES.index(n) % 3], ODD_NAMES.index(n) % 2 == 0)
                 for n in names}
        row = {n: values[kind] if is_list else values[kind][0]
               for n, (kind, is_list) in kinds.items()}
        rng.shuffle(names)
        typed = {n: (kinds[n][0], [v.encode() if isinstance(v, str) else v
                                   for v in (row[n] if kinds[n][1] else [row[n]])])
                 for n in names}
        oracle = encode_typed_example(typed)
        assert _wire_names(oracle) == expected
        assert RowEncoder(kinds).encode(row) == oracle
    # Every pair of names, each inserted first once: the pairwise order is protobuf's too.
    for a in ODD_NAMES:
        for b in ODD_NAMES:
            if a != b:
                kinds = {a: ("int64", False), b: ("bytes", True)}
                oracle = encode_typed_example({b: ("bytes", [b"v"]), a: ("int64", [1])})
                assert RowEncoder(kinds).encode({a: 1, b: ["v"]}) == oracle, (a, b)
