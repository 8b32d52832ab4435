"""TFRecord files of `tf.train.Example`s, written and read without TensorFlow.

The Beam workers that write the pair shards must not need TensorFlow (the trainer reads them
with `tf.data.TFRecordDataset` and `tf.io.parse_single_example`), nor protobuf at run time.
This module holds:

* `RowEncoder(kinds).encode(row) -> bytes`: one row of a flat schema as a serialized
  `tf.train.Example`, wire format written directly, byte-identical to protobuf's
  deterministic serialization (tests/tfexample.py is the protobuf oracle it is tested against).
* `frame_record(data)` / `frame_records(records)`: TFRecord framing, i.e. uint64-LE length,
  masked crc32c(length), data, masked crc32c(data); `crc32c` / `masked_crc32c` (google-crc32c).
* `TFRecordWriter(fileobj, compression="gzip"|None)`: writes framed records to an open binary
  file; gzip through zlib (CPython's gzip), with mtime 0 and no file name, so the same records
  give the same bytes (zlib's deflate is a function of its input, level and write sizes; ISA-L's,
  faster, is not: one build here gave a shard whose records were identical and whose gzip bytes
  differed, intel/isa-l issue 140).
* `read_tfrecords(path_or_fileobj, compression="auto")`: yields record payloads, checking both
  CRCs; gzip is recognised by its magic bytes.
"""
from __future__ import annotations

import functools
import gzip
import struct
import zlib
from collections.abc import Iterable, Iterator, Mapping
from typing import BinaryIO

import google_crc32c  # C implementation where its wheels have one; else its (slower) Python one

from .. import fileio

__all__ = [
    "RowEncoder", "TFRecordWriter", "crc32c", "frame_record", "frame_records", "masked_crc32c",
    "read_tfrecords",
]

# --------------------------------------------------------------------------------------------
# tf.train.Example rows
# --------------------------------------------------------------------------------------------

class RowEncoder:
    """Serializes rows of one flat schema as `tf.train.Example`s, byte-identical to protobuf's
    deterministic serialization of the same Example (tests/tfexample.py's
    `encode_typed_example(example_values(fields, row))`) and several times faster: the wire
    format is written directly (Example -> Features -> map entries -> Feature -> *List), map
    entries in the order protobuf's deterministic serialization writes them (`_map_key`), and
    the entries of recurring scalar values (task, language, titles, small ints) are remembered.

    `kinds`: name -> (kind "bytes" | "int64" | "float", is_list), as schemas.example_kinds gives.
    Rows hold str (UTF-8) or bytes, int or bool, float, or lists of one of those."""

    _CACHE_SIZE = 10_000  # remembered entries per field (a few MB in all)

    def __init__(self, kinds: Mapping[str, tuple[str, bool]]):
        self.kinds = dict(kinds)
        self.plan = []
        for name in sorted(self.kinds, key=_map_key):
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
                if kind == "bytes":  # passages and queries seldom recur: a header by length
                    data = value.encode("utf-8") if isinstance(value, str) else bytes(value)
                    entry = self._bytes_header(prefix, cache, len(data)) + data
                    if len(entry) < 512:
                        self._remember(cache, value, entry)
                else:
                    entry = self._remember(cache, value, self._entry(prefix, kind, (value,)))
            parts.append(entry)
        body = b"".join(parts)
        return b"\x0a" + _varint(len(body)) + body

    def _remember(self, cache: dict, value, entry: bytes) -> bytes:
        if len(cache) >= self._CACHE_SIZE:
            cache.clear()
        cache[value] = entry
        return entry

    @staticmethod
    def _bytes_header(prefix: bytes, cache: dict, size: int) -> bytes:
        """The bytes of a one-value bytes entry before its `size` data bytes: they depend on the
        size only, so they are remembered by it (under an int key, beside the str/bytes values
        of the same field's cache: a bytes field holds no ints)."""
        header = cache.get(size)
        if header is None:
            empty = RowEncoder._entry(prefix, "bytes", (b"\0" * size,))
            header = cache[size] = empty[:len(empty) - size]
        return header

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


def _map_key(name: str) -> bytes:
    """Sort key of a feature name, giving the map order of protobuf's deterministic
    serialization in its upb runtime (protobuf 4.25 to 6.33 alike): by the names' UTF-8 bytes,
    except that a name comes after the names it is a prefix of ("query_ids" before "query":
    upb sorts by descending memcmp, ties by ascending length, then emits in reverse). 0xFF never
    occurs in UTF-8, so appending it gives that order. Fixed here, the shard bytes do not depend
    on the protobuf runtime (its pure-Python one puts "query" first)."""
    return name.encode("utf-8") + b"\xff"


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


# --------------------------------------------------------------------------------------------
# CRC32C (Castagnoli)
# --------------------------------------------------------------------------------------------

def crc32c(data: bytes) -> int:
    """CRC32C (Castagnoli) of `data` as an unsigned 32-bit int."""
    return google_crc32c.value(bytes(data))


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
    return encoded + struct.pack("<I", _mask(crc32c(encoded)))


def frame_record(data: bytes) -> bytes:
    """One TFRecord: length (uint64 LE), masked crc32c(length), data, masked crc32c(data)."""
    return b"".join((_header(len(data)), data, struct.pack("<I", masked_crc32c(data))))


def frame_records(records: Iterable[bytes]) -> bytes:
    """Many TFRecords, concatenated (one join: faster than `frame_record` per record)."""
    value = google_crc32c.value
    parts = []
    for data in records:
        data = bytes(data)
        parts += (_header(len(data)), data, struct.pack("<I", _mask(value(data))))
    return b"".join(parts)


def _gzip_writer(fileobj: BinaryIO, compresslevel: int):
    """A deterministic gzip stream (mtime 0, no file name) into `fileobj`: zlib's deflate, whose
    output depends only on the bytes, the level and the sizes of the writes (all fixed here).
    Not ISA-L's, although 5.6x faster at level 1 here (759 against 136 MB/s): its output for
    the same input varied (seen once in a test build under load: same records, same length,
    other bytes), and ISA-L does not promise deterministic output (intel/isa-l issue 140)."""
    return gzip.GzipFile(filename="", mode="wb", fileobj=fileobj, mtime=0,
                         compresslevel=compresslevel)


class TFRecordWriter:
    """Writes TFRecords to an open binary file object (a context manager).

    `fileobj`: e.g. from open(path, "wb") or fileio.create(path) (uncompressed: this class
    compresses itself).
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
        """Appends one record (bytes, e.g. from `RowEncoder.encode`)."""
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
    value = google_crc32c.value
    for offset, data, stored in batch:
        if _mask(value(data)) != stored:
            raise ValueError(f"corrupt TFRecord at offset {offset}: data CRC mismatch")
    for _, data, _ in batch:
        yield data
