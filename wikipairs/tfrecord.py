"""`tf.train.Example` records and TFRecord files without TensorFlow.

The Beam workers that write TFRecord shards must not need TensorFlow; the trainer reads the
files with `tf.data.TFRecordDataset` and `tf.io.parse_single_example`. This module provides:

* `encode_example(features) -> bytes` / `decode_example(data) -> dict[str, list]`: the
  `tf.train.Example` wire format (tensorflow/core/example/{example,feature}.proto), through
  message classes declared here in a private protobuf `DescriptorPool` (package
  `wikipairs.tfexample`), so they never clash with TensorFlow's own `tensorflow.Example`
  registration when both are imported in one process. Neither apache-beam nor protobuf ships
  these messages (apache-beam only references TensorFlow's), so they are declared here.
* `frame_record(data) -> bytes` / `frame_records(records) -> bytes`: TFRecord framing, i.e.
  uint64-LE length, masked crc32c(length), data, masked crc32c(data).
* `TFRecordWriter(fileobj, compression="gzip"|None)`: writes framed records to an open binary
  file; gzip output is deterministic (mtime 0, no file name).
* `read_tfrecords(path_or_fileobj, compression="auto")`: yields record payloads, checking both
  CRCs; gzip is recognised by its magic bytes.

CRC32C: `apache_beam.io.tfrecordio` computes it with python-snappy, google-crc32c or crcmod and
raises without them; none of them is a dependency of this project. This module uses
google-crc32c or crcmod's C extension when installed, and otherwise its own NumPy CRC32C that
checksums many buffers at once (slicing-by-4 across lanes of 256-byte chunks, chunks combined
with CRC shift tables); `TFRecordWriter` and `read_tfrecords` batch records to use it.
"""
from __future__ import annotations

import functools
import gzip
import struct
import zlib
from collections.abc import Iterable, Iterator, Mapping
from typing import BinaryIO

from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

try:
    from isal import igzip  # ISA-L's gzip: the shards' compression at ~4x zlib's speed
except ImportError:  # a platform without its wheels: zlib
    igzip = None

from . import fileio

__all__ = [
    "Example", "Feature", "TFRecordWriter", "crc32c", "crc32c_many", "decode_example",
    "encode_example",
    "frame_record", "frame_records", "masked_crc32c", "read_tfrecords",
]

# --------------------------------------------------------------------------------------------
# tf.train.Example messages
# --------------------------------------------------------------------------------------------

_PACKAGE = "wikipairs.tfexample"


def _file_descriptor() -> descriptor_pb2.FileDescriptorProto:
    """The FileDescriptorProto of example.proto + feature.proto (same field numbers and types)."""
    F = descriptor_pb2.FieldDescriptorProto
    fdp = descriptor_pb2.FileDescriptorProto(name="wikipairs/tfexample.proto", package=_PACKAGE,
                                             syntax="proto3")

    def message(name: str, *fields: tuple) -> descriptor_pb2.DescriptorProto:
        msg = fdp.message_type.add(name=name)
        for fname, number, ftype, label, type_name, extra in fields:
            field = msg.field.add(name=fname, number=number, type=ftype, label=label, **extra)
            if type_name:
                field.type_name = f".{_PACKAGE}.{type_name}"
        return msg

    rep, opt = F.LABEL_REPEATED, F.LABEL_OPTIONAL
    message("BytesList", ("value", 1, F.TYPE_BYTES, rep, None, {}))
    packed = {"options": descriptor_pb2.FieldOptions(packed=True)}
    message("FloatList", ("value", 1, F.TYPE_FLOAT, rep, None, packed))
    message("Int64List", ("value", 1, F.TYPE_INT64, rep, None, packed))
    feature = message("Feature",
                      ("bytes_list", 1, F.TYPE_MESSAGE, opt, "BytesList", {"oneof_index": 0}),
                      ("float_list", 2, F.TYPE_MESSAGE, opt, "FloatList", {"oneof_index": 0}),
                      ("int64_list", 3, F.TYPE_MESSAGE, opt, "Int64List", {"oneof_index": 0}))
    feature.oneof_decl.add(name="kind")
    features = message("Features",
                       ("feature", 1, F.TYPE_MESSAGE, rep, "Features.FeatureEntry", {}))
    entry = features.nested_type.add(name="FeatureEntry",
                                     options=descriptor_pb2.MessageOptions(map_entry=True))
    entry.field.add(name="key", number=1, type=F.TYPE_STRING, label=opt)
    entry.field.add(name="value", number=2, type=F.TYPE_MESSAGE, label=opt,
                    type_name=f".{_PACKAGE}.Feature")
    message("Example", ("features", 1, F.TYPE_MESSAGE, opt, "Features", {}))
    return fdp


def _message_classes() -> dict[str, type]:
    """Message classes by name, from a private pool (TensorFlow's default pool is untouched)."""
    pool = descriptor_pool.DescriptorPool()
    pool.Add(_file_descriptor())
    names = ("BytesList", "FloatList", "Int64List", "Feature", "Features", "Example")
    return {n: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{_PACKAGE}.{n}"))
            for n in names}


_MESSAGES = _message_classes()
Example = _MESSAGES["Example"]   # wire-compatible with tf.train.Example
Feature = _MESSAGES["Feature"]   # wire-compatible with tf.train.Feature

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _kind(value: object) -> str:
    """The Feature kind ("bytes_list", "int64_list", "float_list") of one scalar value."""
    if isinstance(value, (str, bytes, bytearray, memoryview)):
        return "bytes_list"
    if isinstance(value, int) or hasattr(value, "__index__") and not isinstance(value, float):
        return "int64_list"
    if isinstance(value, float) or hasattr(value, "__float__"):
        return "float_list"
    raise TypeError(f"unsupported feature value {value!r} ({type(value).__name__})")


def _fill_feature(feature, key: str, value: object) -> None:
    """Sets `feature` (a Feature message) from a scalar or a list/tuple of one kind.

    An empty list leaves the Feature with no kind set: TensorFlow reads that as an empty value
    for a VarLenFeature of any dtype (an empty int64_list would fail for tf.string, and so on).
    """
    values = list(value) if isinstance(value, (list, tuple)) else [value]
    if not values:
        return
    kinds = {_kind(v) for v in values}
    if len(kinds) != 1:
        raise TypeError(f"feature {key!r} mixes value kinds {sorted(kinds)}")
    kind = kinds.pop()
    if kind == "bytes_list":
        values = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in values]
    elif kind == "int64_list":
        values = [int(v) for v in values]
        if min(values) < _INT64_MIN or max(values) > _INT64_MAX:
            raise ValueError(f"feature {key!r}: integer out of int64 range")
    else:
        values = [float(v) for v in values]
    getattr(feature, kind).value.extend(values)


def encode_example(features: Mapping[str, object]) -> bytes:
    """Serializes a `tf.train.Example`.

    Input: {name: value}, value a str (-> bytes_list, UTF-8), bytes (bytes_list), int (incl.
    bool and NumPy integers; int64_list), float (float_list, stored as float32), or a
    list/tuple of values of one of those kinds; an empty list gives a Feature with no kind
    (an empty VarLenFeature of any dtype in TensorFlow).
    Output: the serialized Example; features are written in sorted key order (deterministic
    serialization), so equal inputs give equal bytes in every process.
    """
    example = Example()
    feature_map = example.features.feature
    for key, value in features.items():
        if not isinstance(key, str):
            raise TypeError(f"feature names must be str, got {key!r}")
        _fill_feature(feature_map[key], key, value)
    return example.SerializeToString(deterministic=True)


_LIST_FIELDS = {"bytes": "bytes_list", "int64": "int64_list", "float": "float_list"}


def encode_typed_example(features: Mapping[str, tuple[str, list]]) -> bytes:
    """Serializes a `tf.train.Example` from {name: (kind, values)} with kind "bytes" | "int64" |
    "float" known in advance (e.g. from a schema): no per-value type checks, so several times
    faster than `encode_example`, and byte-identical to it for the same values."""
    example = Example()
    feature_map = example.features.feature
    for key, (kind, values) in features.items():
        feature = feature_map[key]
        if values:
            getattr(feature, _LIST_FIELDS[kind]).value.extend(values)
    return example.SerializeToString(deterministic=True)


class RowEncoder:
    """Serializes rows of one flat schema as `tf.train.Example`s, byte-identical to
    `encode_typed_example(example_values(fields, row))` and several times faster: the wire
    format is written directly (Example -> Features -> map entries -> Feature -> *List), in
    the map order protobuf's deterministic serialization uses (read once off an example that
    protobuf serializes), and the entries of recurring scalar values (task, language, titles,
    small ints) are remembered.

    `kinds`: name -> (kind "bytes" | "int64" | "float", is_list), as schemas.example_kinds gives.
    Rows hold str (UTF-8) or bytes, int or bool, float, or lists of one of those."""

    _CACHE_SIZE = 10_000  # remembered entries per field (a few MB in all)

    def __init__(self, kinds: Mapping[str, tuple[str, bool]]):
        self.kinds = dict(kinds)
        self.plan = []
        for name in _map_order(self.kinds):
            kind, is_list = self.kinds[name]
            key = name.encode("utf-8")
            prefix = b"\x0a" + _varint(len(key)) + key + b"\x12"  # entry: key, then value
            self.plan.append((name, prefix, kind, is_list, {}))

    def encode(self, row: Mapping[str, object]) -> bytes:
        parts = []
        for name, prefix, kind, is_list, cache in self.plan:
            value = row[name]
            if is_list:
                parts.append(self._entry(prefix, kind, value))
                continue
            entry = cache.get(value)
            if entry is None:
                entry = self._entry(prefix, kind, (value,))
                if len(cache) >= self._CACHE_SIZE:
                    cache.clear()
                if kind != "bytes" or len(entry) < 512:  # not passages: they seldom recur
                    cache[value] = entry
            parts.append(entry)
        body = b"".join(parts)
        return b"\x0a" + _varint(len(body)) + body

    @staticmethod
    def _entry(prefix: bytes, kind: str, values) -> bytes:
        """One map entry (field 1 of Features), length-delimited, holding `values`."""
        if not values:
            feature = b""  # a Feature with no kind
        elif kind == "bytes":
            items = [v.encode("utf-8") if isinstance(v, str) else bytes(v) for v in values]
            inner = b"".join([b"\x0a" + _varint(len(v)) + v for v in items])
            feature = b"\x0a" + _varint(len(inner)) + inner  # Feature.bytes_list = 1
        elif kind == "int64":
            packed = b"".join([_varint(int(v)) for v in values])
            inner = b"\x0a" + _varint(len(packed)) + packed
            feature = b"\x1a" + _varint(len(inner)) + inner  # Feature.int64_list = 3
        else:
            packed = struct.pack(f"<{len(values)}f", *values)
            inner = b"\x0a" + _varint(len(packed)) + packed
            feature = b"\x12" + _varint(len(inner)) + inner  # Feature.float_list = 2
        entry = prefix + _varint(len(feature)) + feature
        return b"\x0a" + _varint(len(entry)) + entry


_SMALL_VARINTS = [bytes((n,)) for n in range(128)]


def _varint(n: int) -> bytes:
    """Protobuf's base-128 varint; negative numbers as their 64-bit two's complement."""
    if 0 <= n < 128:
        return _SMALL_VARINTS[n]
    n &= 0xFFFFFFFFFFFFFFFF
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _map_order(kinds: Mapping[str, tuple[str, bool]]) -> list[str]:
    """The order of the feature names in protobuf's deterministic serialization (its map
    sorting is an implementation detail: ask it)."""
    data = encode_typed_example({name: ("int64", [0]) for name in kinds})
    names, at = [], 0
    _, at = _read_varint(data, 1)
    while at < len(data):
        size, start = _read_varint(data, at + 1)  # an entry of Features.feature
        key_size, key_start = _read_varint(data, start + 1)
        names.append(data[key_start:key_start + key_size].decode("utf-8"))
        at = start + size
    return names


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at += 1
        if byte < 0x80:
            return value, at
        shift += 7


def decode_example(data: bytes) -> dict[str, list]:
    """Parses a serialized `tf.train.Example` into {name: list of values}.

    bytes_list -> list[bytes] (not decoded: the format does not say which are text),
    int64_list -> list[int], float_list -> list[float] (float32 values); a Feature with no
    kind -> []. Raises ValueError on bytes that are not an Example.
    """
    example = Example()
    try:
        example.ParseFromString(data)
    except Exception as exc:  # protobuf's DecodeError is a subclass of Exception only
        raise ValueError(f"not a serialized tf.train.Example: {exc}") from exc
    out: dict[str, list] = {}
    for key, feature in example.features.feature.items():
        kind = feature.WhichOneof("kind")
        out[key] = list(getattr(feature, kind).value) if kind else []
    return out


# --------------------------------------------------------------------------------------------
# CRC32C (Castagnoli), reflected, init and xorout 0xFFFFFFFF
# --------------------------------------------------------------------------------------------

_POLY = 0x82F63B78


def _byte_table() -> list[int]:
    """The 256-entry table for byte-at-a-time reflected CRC32C."""
    table = []
    for i in range(256):
        c = i
        for _ in range(8):
            c = (c >> 1) ^ _POLY if c & 1 else c >> 1
        table.append(c)
    return table


_TABLE = _byte_table()


def _raw_crc(data: bytes, crc: int = 0) -> int:
    """CRC register after feeding `data` to register `crc` (no init/xorout): pure Python."""
    table = _TABLE
    for b in data:
        crc = table[(crc ^ b) & 0xFF] ^ (crc >> 8)
    return crc


def _crc32c_python(data: bytes) -> int:
    """CRC32C of `data`, pure Python (about 5 MB/s): used for short buffers only."""
    return _raw_crc(data, 0xFFFFFFFF) ^ 0xFFFFFFFF


def _native_crc32c():
    """A C implementation `fn(bytes) -> int` (google-crc32c or crcmod's extension), or None."""
    try:
        import google_crc32c
        if google_crc32c.implementation == "c":
            return google_crc32c.value
    except (ImportError, AttributeError):
        pass
    try:
        import crcmod.predefined
        if crcmod._usingExtension:
            return crcmod.predefined.mkPredefinedCrcFun("crc-32c")
    except (ImportError, AttributeError):
        pass
    return None


_NATIVE = _native_crc32c()


class _NumpyCRC:
    """CRC32C of many buffers at once with NumPy.

    Each buffer, prefixed with 4 bytes that drive a zeroed register to 0xFFFFFFFF (the CRC init)
    and front-padded with zeros (which leave a zero register unchanged), is cut into `chunk`-byte
    chunks. All chunks are checksummed in parallel, 4 bytes per step with two 64K-entry tables;
    then each buffer's chunk registers are combined pairwise in a tree,
    crc(A + B) = shift_len(B)(crc(A)) ^ crc(B), with tables for "feed n zero bytes".
    """

    def __init__(self):
        import numpy as np
        self.np = np
        self.prefix = self._init_prefix()
        self._shift: dict[int, tuple] = {4: self._tables([_raw_crc(bytes(4), 1 << i)
                                                          for i in range(32)])}

    def _tables(self, images: list[int]) -> tuple:
        """(lo, hi) tables of the GF(2)-linear map with these images of the 32 register bits."""
        np = self.np
        out = []
        for half in (images[:16], images[16:]):
            table = np.zeros(1, np.uint32)
            for image in half:
                table = np.concatenate([table, table ^ np.uint32(image)])
            out.append(table)
        return tuple(out)

    def _apply(self, tables: tuple, reg):
        """The linear map of `tables` applied to a uint32 array of registers."""
        lo, hi = tables
        return lo[reg & 0xFFFF] ^ hi[reg >> 16]

    def shift(self, n: int) -> tuple:
        """Tables for feeding n zero bytes (n = 4 * 2**k or chunk * 2**k), built by squaring."""
        if n not in self._shift:
            half = self.shift(n // 2)
            basis = self.np.array([1 << i for i in range(32)], self.np.uint32)
            images = self._apply(half, self._apply(half, basis))
            self._shift[n] = self._tables([int(v) for v in images])
        return self._shift[n]

    @staticmethod
    def _init_prefix() -> bytes:
        """4 bytes taking a zero register to 0xFFFFFFFF (Gaussian elimination over GF(2))."""
        rows: dict[int, tuple[int, int]] = {}  # pivot bit -> (image, preimage)
        for i in range(32):
            image, pre = _raw_crc((1 << i).to_bytes(4, "little")), 1 << i
            for bit, (im2, pre2) in sorted(rows.items(), reverse=True):
                if image >> bit & 1:
                    image, pre = image ^ im2, pre ^ pre2
            if image:
                rows[image.bit_length() - 1] = (image, pre)
        target, pre = 0xFFFFFFFF, 0
        for bit, (image, pre2) in sorted(rows.items(), reverse=True):
            if target >> bit & 1:
                target, pre = target ^ image, pre ^ pre2
        prefix = pre.to_bytes(4, "little")
        assert target == 0 and _raw_crc(prefix) == 0xFFFFFFFF
        return prefix

    def _chunk_size(self, lengths: list[int]) -> int:
        """Chunk size for these buffer lengths: about the median length, 64 to 256 bytes."""
        median = sorted(lengths)[len(lengths) // 2] + 4
        return 64 if median <= 64 else 128 if median <= 160 else 256

    def many(self, buffers: list[bytes]) -> list[int]:
        """CRC32C of each buffer (a list of ints)."""
        np = self.np
        if not buffers:
            return []
        lengths = [len(b) for b in buffers]
        chunk = self._chunk_size(lengths)
        # Chunks per buffer, rounded up to a power of two: the missing leading chunks are zero.
        counts = [1 << max(0, (-(-(n + 4) // chunk) - 1).bit_length()) for n in lengths]
        order = sorted(range(len(buffers)), key=lambda i: -counts[i])
        parts = []
        for i in order:
            parts += (bytes(counts[i] * chunk - lengths[i] - 4), self.prefix, buffers[i])
        words = np.frombuffer(b"".join(parts), dtype="<u4").reshape(-1, chunk // 4)
        reg = self._chunks(np.ascontiguousarray(words.T))
        sizes = np.array([counts[i] for i in order])  # chunks per buffer, descending
        width = chunk  # bytes per register at this tree level
        while sizes[0] > 1:  # one level: merge adjacent pairs within each buffer
            live = sizes > 1
            split = int(sizes[live].sum())  # buffers with > 1 register come first
            head = reg[:split]
            merged = self._apply(self.shift(width), head[0::2]) ^ head[1::2]
            reg = np.concatenate([merged, reg[split:]])
            sizes = np.where(live, sizes // 2, sizes)
            width *= 2
        result = [0] * len(buffers)
        for pos, i in enumerate(order):
            result[i] = int(reg[pos]) ^ 0xFFFFFFFF
        return result

    def _chunks(self, columns):
        """Registers of all chunks; `columns[j]` holds word j of every chunk."""
        np = self.np
        lo_t, hi_t = self.shift(4)
        n = columns.shape[1]
        reg, x, tmp = np.zeros(n, np.uint32), np.empty(n, np.uint32), np.empty(n, np.uint32)
        lo, hi = np.empty(n, np.intp), np.empty(n, np.intp)
        for column in columns:
            np.bitwise_xor(reg, column, out=x)
            np.bitwise_and(x, 0xFFFF, out=lo)
            np.right_shift(x, 16, out=hi)
            np.take(lo_t, lo, out=reg)
            np.take(hi_t, hi, out=tmp)
            reg ^= tmp
        return reg


@functools.lru_cache(maxsize=1)
def _numpy_crc() -> _NumpyCRC:
    """The NumPy engine, built on first use (tables take a few milliseconds)."""
    return _NumpyCRC()


def crc32c(data: bytes) -> int:
    """CRC32C (Castagnoli) of `data` as an unsigned 32-bit int."""
    if _NATIVE is not None:
        return _NATIVE(bytes(data))
    if len(data) < 512:
        return _crc32c_python(data)
    return _numpy_crc().many([bytes(data)])[0]


def crc32c_many(buffers: list[bytes]) -> list[int]:
    """CRC32C of each buffer; much faster per byte than `crc32c` without a C backend."""
    if _NATIVE is not None:
        return [_NATIVE(b) for b in buffers]
    return _numpy_crc().many([bytes(b) for b in buffers])


def masked_crc32c(data: bytes) -> int:
    """The masked CRC32C that TFRecord files store (TensorFlow's crc32c::Mask)."""
    return _mask(crc32c(data))


def _mask(crc: int) -> int:
    """TensorFlow's crc32c::Mask of a CRC32C value."""
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


# --------------------------------------------------------------------------------------------
# TFRecord framing
# --------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1 << 16)
def _header(length: int) -> bytes:
    """The 12-byte record header: uint64-LE length and the masked CRC32C of those 8 bytes."""
    encoded = struct.pack("<Q", length)
    return encoded + struct.pack("<I", _mask(_crc32c_python(encoded)))


def frame_record(data: bytes) -> bytes:
    """One TFRecord: length (uint64 LE), masked crc32c(length), data, masked crc32c(data)."""
    return b"".join((_header(len(data)), data, struct.pack("<I", masked_crc32c(data))))


def frame_records(records: Iterable[bytes]) -> bytes:
    """Many TFRecords, concatenated; the data CRCs are computed in one batch (fast path)."""
    records = [bytes(r) for r in records]
    crcs = crc32c_many(records)
    parts = []
    for data, crc in zip(records, crcs):
        parts += (_header(len(data)), data, struct.pack("<I", _mask(crc)))
    return b"".join(parts)


def _gzip_writer(fileobj: BinaryIO, compresslevel: int):
    """A deterministic gzip stream (mtime 0, no file name) into `fileobj`. With python-isal
    installed, ISA-L's deflate (about 4x zlib's speed at level 1, compressing a little better;
    its levels are 0-3, so zlib's 4-9 become 3); else zlib's."""
    if igzip is not None:
        return igzip.GzipFile(filename="", mode="wb", fileobj=fileobj, mtime=0,
                              compresslevel=min(compresslevel, 3))
    return gzip.GzipFile(filename="", mode="wb", fileobj=fileobj, mtime=0,
                         compresslevel=compresslevel)


class TFRecordWriter:
    """Writes TFRecords to an open binary file object (a context manager).

    `fileobj`: e.g. from open(path, "wb") or apache_beam FileSystems.create(path) (pass
    compression_type=CompressionTypes.UNCOMPRESSED there: this class compresses itself).
    `compression`: "gzip" (readable by TFRecordDataset(..., compression_type="GZIP")) or None.
    Records are buffered and framed in batches of about `batch_bytes`. `close()` (or leaving
    the `with` block) flushes everything and finishes the gzip stream; it does not close
    `fileobj`, which belongs to the caller. Gzip output has mtime 0 and no file name, so the
    same records give byte-identical files.
    """

    def __init__(self, fileobj: BinaryIO, compression: str | None = "gzip",
                 batch_bytes: int = 4 << 20, compresslevel: int = 6):
        if compression not in ("gzip", None):
            raise ValueError(f"compression must be 'gzip' or None, got {compression!r}")
        self._raw = fileobj
        self._out = _gzip_writer(fileobj, compresslevel) if compression == "gzip" else fileobj
        self._batch: list[bytes] = []
        self._batch_bytes, self._pending = batch_bytes, 0
        self.records = 0
        self._closed = False

    def write(self, record: bytes) -> None:
        """Appends one record (bytes, e.g. from `encode_example`)."""
        if self._closed:
            raise ValueError("write to a closed TFRecordWriter")
        self._batch.append(bytes(record))
        self._pending += len(record) + 16
        self.records += 1
        if self._pending >= self._batch_bytes:
            self.flush()

    def flush(self) -> None:
        """Frames and writes the buffered records (the gzip stream stays open)."""
        if self._batch:
            self._out.write(frame_records(self._batch))
            self._batch, self._pending = [], 0

    def close(self) -> None:
        """Flushes, and ends the gzip stream; the caller's file object stays open."""
        if self._closed:
            return
        self.flush()
        if self._out is not self._raw:
            self._out.close()
        self._raw.flush()
        self._closed = True

    def __enter__(self) -> "TFRecordWriter":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------

_GZIP_MAGIC = b"\x1f\x8b"
_READ_SIZE = 1 << 20


def _raw_chunks(fileobj: BinaryIO, first: bytes) -> Iterator[bytes]:
    """`first`, then the rest of `fileobj` in blocks."""
    if first:
        yield first
    while block := fileobj.read(_READ_SIZE):
        yield block


def _gunzip(chunks: Iterable[bytes]) -> Iterator[bytes]:
    """Decompresses a gzip stream (several concatenated members allowed)."""
    decoder, started = zlib.decompressobj(wbits=31), False
    for block in chunks:
        while block:
            started = True
            try:
                out = decoder.decompress(block)
            except zlib.error as exc:
                raise ValueError(f"corrupt gzip stream: {exc}") from exc
            if out:
                yield out
            block = b""
            if decoder.eof:
                block = decoder.unused_data
                decoder, started = zlib.decompressobj(wbits=31), False
    if started:
        raise ValueError("truncated gzip stream")


def _open(path_or_fileobj) -> tuple[BinaryIO, bool]:
    """(binary file object, whether this module opened it and must close it)."""
    if hasattr(path_or_fileobj, "read"):
        return path_or_fileobj, False
    return fileio.open_read(str(path_or_fileobj)), True


def read_tfrecords(path_or_fileobj, compression: str | None = "auto",
                   batch_bytes: int = 4 << 20) -> Iterator[bytes]:
    """Yields the record payloads of a TFRecord file, checking both CRCs of every record.

    `path_or_fileobj`: a local path, a Beam file system path ("gs://..."), or a binary file
    object. `compression`: "auto" (gzip if the data starts with the gzip magic bytes), "gzip"
    or None. Raises ValueError naming the offset (in the uncompressed record stream) of a
    record with a bad length CRC or data CRC, or of a truncated record. Data CRCs are
    checked in batches of about `batch_bytes` before the batch's records are yielded.
    """
    if compression not in ("auto", "gzip", None):
        raise ValueError(f"compression must be 'auto', 'gzip' or None, got {compression!r}")
    fileobj, owned = _open(path_or_fileobj)
    try:
        first = fileobj.read(2)
        if compression == "gzip" or compression == "auto" and first == _GZIP_MAGIC:
            chunks = _gunzip(_raw_chunks(fileobj, first))
        else:
            chunks = _raw_chunks(fileobj, first)
        yield from _records(chunks, batch_bytes)
    finally:
        if owned:
            fileobj.close()


def _records(chunks: Iterator[bytes], batch_bytes: int) -> Iterator[bytes]:
    """Splits a stream of uncompressed blocks into verified record payloads."""
    buf, pos, base = bytearray(), 0, 0  # base: stream offset of buf[0]
    batch: list[tuple[int, bytes, int]] = []  # (offset, payload, stored masked crc)
    pending = 0
    exhausted = False
    while True:
        if len(buf) - pos < 12 and not exhausted:
            block = next(chunks, None)
            if block is None:
                exhausted = True
            else:
                del buf[:pos]
                base, pos = base + pos, 0
                buf += block
            continue
        if pos == len(buf):
            break
        offset = base + pos
        if len(buf) - pos < 12:
            raise ValueError(f"truncated TFRecord header at offset {offset}")
        length = struct.unpack_from("<Q", buf, pos)[0]
        if bytes(buf[pos:pos + 12]) != _header(length):
            raise ValueError(f"corrupt TFRecord at offset {offset}: length CRC mismatch")
        while len(buf) - pos < 16 + length and not exhausted:
            block = next(chunks, None)
            if block is None:
                exhausted = True
            else:
                buf += block
        if len(buf) - pos < 16 + length:
            raise ValueError(f"truncated TFRecord at offset {offset}")
        data = bytes(buf[pos + 12:pos + 12 + length])
        stored = struct.unpack_from("<I", buf, pos + 12 + length)[0]
        batch.append((offset, data, stored))
        pending += length + 16
        pos += 16 + length
        if pending >= batch_bytes:
            yield from _verified(batch)
            batch, pending = [], 0
    yield from _verified(batch)


def _verified(batch: list[tuple[int, bytes, int]]) -> Iterator[bytes]:
    """The payloads of `batch` after checking their data CRCs (ValueError names the offset)."""
    crcs = crc32c_many([data for _, data, _ in batch])
    for (offset, data, stored), crc in zip(batch, crcs):
        if _mask(crc) != stored:
            raise ValueError(f"corrupt TFRecord at offset {offset}: data CRC mismatch")
    for _, data, _ in batch:
        yield data
