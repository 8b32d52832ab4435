"""Splits of a Wikimedia-style multistream dump (wikipairs.reading.splits), a build over one, and the
Beam redirect resolution (pipelines/transforms.py ResolveRedirects) against RedirectMap."""
from __future__ import annotations

import bz2
import glob
import json
import re
import shutil
from collections import Counter
from pathlib import Path

import apache_beam as beam
import nltk.data
import pyarrow.parquet as pq
import pytest
from apache_beam.testing.test_pipeline import TestPipeline as BeamTestPipeline
from apache_beam.testing.util import assert_that, equal_to

from conftest import (NLTK_DATA, SAMPLE_DUMP, assert_one_line_error, describe, punkt_free_paths,
                      run_cli, wiki_file)
from wikipairs.reading import read_pages
from wikipairs.errors import DumpError
from wikipairs.shards.pair_shards import pair_row
from wikipairs.pairs.tasks import PairBuilder, PairConfig, approx_token_count, build_pairs_in_memory
from wikipairs.pipelines.transforms import ResolveRedirects
from wikipairs.records import Redirect
from wikipairs.text.redirects import RedirectMap
from wikipairs.reading.splits import (Split, index_for, plan_splits, read_split, stream_offsets,
                              write_multistream)

GENSIM = "enwiki-sample-gensim.xml.bz2"
PAGES_PER_STREAM = 10


def make_multistream(src: Path, folder: Path, name: str = "x") -> tuple[Path, Path, int]:
    """A Wikimedia-style copy of `src` in `folder` with PAGES_PER_STREAM pages per stream.
    Returns (dump, index, number of page streams)."""
    dump = folder / f"{name}-multistream.xml.bz2"
    index = folder / f"{name}-multistream-index.txt.bz2"
    streams = write_multistream(str(src), str(dump), str(index), PAGES_PER_STREAM)
    assert streams > 5
    return dump, index, streams


def page_tuple(page):
    return (page.id, page.ns, page.title, page.text, page.redirect)


@pytest.fixture(scope="module")
def multistream(tmp_path_factory):
    folder = tmp_path_factory.mktemp("multistream")
    return make_multistream(wiki_file(GENSIM), folder)


@pytest.fixture(scope="module")
def original_pages():
    return [page_tuple(p) for p in read_pages([str(wiki_file(GENSIM))])]


def test_the_copy_is_really_multistream(multistream):
    dump, index, streams = multistream
    assert index_for(str(dump)) == str(index)
    assert len(re.findall(rb"BZh9", dump.read_bytes())) >= streams + 2
    offsets = stream_offsets(str(index))
    assert len(offsets) == streams and offsets == sorted(offsets) and offsets[0] > 0


def test_plan_splits_covers_the_streams(multistream):
    dump, index, streams = multistream
    splits = plan_splits([str(dump)], streams_per_split=3)
    assert len(splits) == -(-streams // 3) >= 5
    offsets = stream_offsets(str(index))
    assert [s.start for s in splits] == offsets[::3]
    assert [s.end for s in splits] == offsets[3::3] + [None]
    assert all(s.path == str(dump) and s.header_end == offsets[0] for s in splits)
    assert not any(s.whole_file for s in splits)
    assert plan_splits([str(dump)], streams_per_split=3) == splits, "the plan is deterministic"


def test_split_pages_equal_the_original_in_order(multistream, original_pages):
    dump, _, _ = multistream
    splits = plan_splits([str(dump)], streams_per_split=3)
    pages, per_split = [], []
    counts = Counter()
    for split in splits:
        mine = list(read_split(split, counts))
        assert mine, f"split {split} has no pages"
        assert all(p.source == str(dump) for p in mine)
        per_split.append(len(mine))
        pages.extend(page_tuple(p) for p in mine)
    assert len(pages) == len(original_pages) == 206
    assert pages == original_pages
    assert counts["pages_read"] == 206
    assert per_split[:-1] == [3 * PAGES_PER_STREAM] * (len(splits) - 1)


def test_whole_file_reads_the_same(multistream, original_pages):
    dump, _, _ = multistream
    assert [page_tuple(p) for p in read_pages([str(dump)])] == original_pages


@pytest.fixture(scope="module")
def gensim_reference(parsed_dumps):
    articles = parsed_dumps(GENSIM).articles
    pairs = build_pairs_in_memory(articles, ("ict", "bfs", "wlp"),
                                  PairBuilder(PairConfig(), approx_token_count))
    return {t: sorted((pair_row(p, approx_token_count) for p in ps), key=lambda r: r["pair_id"])
            for t, ps in pairs.items()}


def _rows(folder: Path, task: str) -> list[dict]:
    files = sorted(glob.glob(str(folder / "parquet" / task / "part-*.parquet")))
    assert files, f"no {task} shards in {folder}"
    rows = [r for f in files for r in pq.read_table(f).to_pylist()]
    return sorted(rows, key=lambda r: r["pair_id"])


def test_build_over_the_multistream_copy(multistream, gensim_reference, tmp_path):
    """Several splits, one worker: the same pairs as the in-memory reference over the original
    file (which is what a build of the original gives, see test_build.py)."""
    dump, _, _ = multistream
    out = tmp_path / "out"
    result = run_cli("build", "-i", dump, "-o", out, "--workers", "1", "--num-shards", "2",
                     "--format", "parquet")
    assert result.returncode == 0, describe(result)
    stats = json.loads((out / "stats.json").read_text())
    assert stats["splits"] == len(plan_splits([str(dump)]))
    assert stats["counters"]["pages_read"] == 206 and stats["counters"]["articles"] == 96
    assert stats["counters"]["redirects"] == 100
    for task in ("ict", "bfs", "wlp"):
        rows = _rows(out, task)
        expected = gensim_reference[task]
        assert [r["pair_id"] for r in rows] == [r["pair_id"] for r in expected], task
        assert rows == expected, task


def _with_index(multistream, folder: Path, index_bytes: bytes) -> Path:
    dump, _, _ = multistream
    folder.mkdir()
    copy = folder / dump.name
    shutil.copy(dump, copy)
    (folder / dump.name.replace(".xml.bz2", "-index.txt.bz2")).write_bytes(index_bytes)
    assert index_for(str(copy))
    return copy


@pytest.mark.parametrize("kind", ["not-bz2", "bad-offset", "truncated-bz2"])
def test_a_corrupt_index_is_a_one_line_error(multistream, tmp_path, kind):
    _, index, _ = multistream
    good = index.read_bytes()
    data = {"not-bz2": b"this is not an index\n",
            "bad-offset": bz2.compress(b"12x:10:Foo\n"),
            "truncated-bz2": good[:len(good) // 2]}[kind]
    copy = _with_index(multistream, tmp_path / kind, data)
    with pytest.raises(DumpError) as caught:
        plan_splits([str(copy)], streams_per_split=3)
    assert "\n" not in str(caught.value) and "index" in str(caught.value)
    out = tmp_path / "out"
    line = assert_one_line_error(run_cli("build", "-i", copy, "-o", out, "--workers", "1"),
                                 "index")
    assert "multistream-index" in line
    assert not (out / "manifest.json").exists()


def test_offsets_off_stream_boundaries_are_a_dump_error(multistream, tmp_path):
    dump, index, _ = multistream
    lines = bz2.decompress(index.read_bytes()).decode().splitlines(keepends=True)
    shifted = "".join(f"{int(o) + 1}:{rest}" for o, _, rest in
                      (line.partition(":") for line in lines))
    copy = _with_index(multistream, tmp_path / "shifted", bz2.compress(shifted.encode()))
    splits = plan_splits([str(copy)], streams_per_split=3)
    with pytest.raises(DumpError) as caught:
        list(read_split(splits[1]))
    assert "\n" not in str(caught.value) and str(copy) in str(caught.value)


# ---- ResolveRedirects (Beam) against RedirectMap ---------------------------------------------

def _redirects(path) -> list[tuple[str, str]]:
    return [(p.title, p.redirect) for p in read_pages([str(path)]) if p.redirect]


def _expected(redirects) -> list[tuple[str, str]]:
    final = RedirectMap(Redirect(s, t) for s, t in redirects).final
    return sorted((s, f) for s, f in final.items() if f is not None)


def _resolve_in_beam(redirects, expected) -> None:
    with BeamTestPipeline() as p:
        finals = (p | beam.Create(redirects) | ResolveRedirects())
        assert_that(finals, equal_to(expected))


def test_resolve_redirects_on_the_bundled_sample():
    redirects = _redirects(SAMPLE_DUMP)
    assert len(redirects) == 11
    expected = _expected(redirects)
    resolved = dict(expected)
    assert resolved["VVU"] == "Vell Valley University"
    assert "Vell Bridge Trust" not in resolved and "Vell Bridge Company" not in resolved
    assert len(expected) == 9
    _resolve_in_beam(redirects, expected)


def test_resolve_redirects_on_the_gensim_dump():
    redirects = _redirects(wiki_file(GENSIM))
    assert len(redirects) == 100
    expected = _expected(redirects)
    assert expected
    _resolve_in_beam(redirects, expected)


def test_resolve_redirects_depth_cap_and_self_redirects():
    chain = [(f"C{i}", f"C{i + 1}") for i in range(11)]  # C0 needs 11 hops: unresolved
    redirects = chain + [("Self", "Self"), ("A", "B"), ("B", "A"), ("X", "C2")]
    expected = _expected(redirects)
    assert ("C1", "C11") in expected and not any(s == "C0" for s, _ in expected)
    assert not any(s in ("Self", "A", "B") for s, _ in expected)
    _resolve_in_beam(redirects, expected)
