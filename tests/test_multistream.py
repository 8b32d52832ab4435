"""A multistream .bz2 (many bz2 streams concatenated, as Wikimedia publishes) reads like one stream."""
import bz2
import re
from collections import Counter

from wikipairs.cli import sample_dump
from wikipairs.reading import read_pages


def _multistream_copy(src: str, dst, pages_per_stream: int = 5) -> int:
    xml = bz2.open(src).read()
    head, _, rest = xml.partition(b"  <page>")
    body, _, tail = (b"  <page>" + rest).rpartition(b"</page>")
    pages = [p + b"</page>" for p in body.split(b"</page>")] if body else []
    chunks = [head] + [b"".join(pages[i:i + pages_per_stream])
                       for i in range(0, len(pages), pages_per_stream)] + [tail]
    with open(dst, "wb") as f:
        for chunk in chunks:
            f.write(bz2.compress(chunk))
    return len(chunks)


def test_multistream_bz2_gives_the_same_pages(tmp_path):
    dst = tmp_path / "multistream.xml.bz2"
    streams = _multistream_copy(sample_dump(), dst)
    assert streams > 5
    raw = dst.read_bytes()
    assert len(re.findall(rb"BZh9", raw)) >= streams  # really several streams
    single = [(p.id, p.title, p.text) for p in read_pages([sample_dump()])]
    counts = Counter()
    multi = [(p.id, p.title, p.text) for p in read_pages([str(dst)], counts)]
    assert multi == single
    assert counts["pages_read"] == len(single)
