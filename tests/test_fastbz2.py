"""wikipairs.reading.fastbz2: indexed_bzip2 where it is faster, Python's bz2 output and errors always."""
from __future__ import annotations

import bz2

import pytest

from wikipairs.reading import fastbz2
from wikipairs.reading.fastbz2 import open_bz2

from conftest import wiki_file


def _read_all(stream, size: int = 1 << 16) -> tuple[bytes, str | None]:
    """(bytes read by read1 until the end or an error, the error's type name or None)."""
    out = bytearray()
    try:
        while True:
            data = stream.read1(size)
            if not data:
                return bytes(out), None
            out += data
    except (OSError, EOFError) as e:
        return bytes(out), type(e).__name__
    finally:
        stream.close()


@pytest.fixture(scope="module")
def real_bz2() -> bytes:
    return wiki_file("enwiki-sample-gensim.xml.bz2").read_bytes()


def _cases(data: bytes) -> dict[str, bytes]:
    flipped = bytearray(data)
    flipped[len(data) // 2] ^= 0x10
    return {
        "whole": data,
        "two streams": data + bz2.compress(b"<more/>"),
        "trailing garbage": data + b"not bz2",
        "cut mid-file": data[: len(data) * 2 // 3],
        "cut in the header": data[:30],
        "corrupt block": bytes(flipped),
        "no block at all": b"BZh9 no blocks here",
    }


@pytest.mark.parametrize("threads", [1, 2])
def test_same_bytes_and_errors_as_python_bz2(real_bz2, tmp_path, threads):
    for name, data in _cases(real_bz2).items():
        path = tmp_path / "case.bz2"
        path.write_bytes(data)
        expected, expected_error = _read_all(bz2.open(path, "rb"))
        got, error = _read_all(open_bz2(str(path), threads))
        assert error == expected_error, name
        if name == "corrupt block":
            # Both stop in the corrupt block; Python's bz2 may hand out a few more unverified
            # bytes of it first, depending on its buffering.
            assert expected.startswith(got) and len(expected) - len(got) < 1 << 20, name
        else:
            assert got == expected, name


def test_good_files_are_decoded_by_indexed_bzip2(real_bz2, tmp_path):
    if fastbz2.indexed_bzip2 is None:
        pytest.skip("indexed_bzip2 is not installed")
    path = tmp_path / "good.bz2"
    path.write_bytes(real_bz2)
    reader = open_bz2(str(path))
    while reader.read1(1 << 20):
        pass
    assert reader.fast  # no fallback on a good file
    reader.close()


def test_without_indexed_bzip2_python_bz2_reads(real_bz2, tmp_path, monkeypatch):
    monkeypatch.setattr(fastbz2, "indexed_bzip2", None)
    path = tmp_path / "good.bz2"
    path.write_bytes(real_bz2)
    got, error = _read_all(open_bz2(str(path)))
    assert error is None and got == bz2.decompress(real_bz2)
