"""Record schemas (wikipairs.schemas) and the Parquet files written with them (wikipairs.shards.output)."""
from __future__ import annotations

import os
from collections import Counter
from importlib.resources import files
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from wikipairs.parse import ParseConfig, article_row, iter_articles
from wikipairs.records import Article, Link, Section
from wikipairs.schemas import ARTICLE, REDIRECT, Field, arrow_schema, markdown_table, to_arrow_rows
from wikipairs.shards.output import ParquetRows, ParquetShards, shard_name, write_parquet

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = str(files("wikipairs") / "data" / "sample.xml.bz2")

ARTICLE_PATHS = [
    "id", "title", "lang",
    "sections", "sections[].heading", "sections[].level", "sections[].paragraphs",
    "sections[].paragraphs[].sentences",
    "links", "links[].target", "links[].raw_target", "links[].anchor", "links[].section",
    "links[].paragraph", "links[].sentence", "links[].start", "links[].end",
    "categories",
]


def small_article() -> Article:
    return Article(
        id=41001, title="River Vell", lang="en",
        sections=[
            Section("", 0, [["The River Vell is a river.", "It drains the Vell Valley."]]),
            Section("Course", 2, [["Ünïcödé — ok."], ["Second paragraph."]]),
            Section("Empty heading kept", 3, []),
        ],
        links=[Link(target="Vell Valley", anchor="Vell Valley", section=0, paragraph=0, sentence=1,
                    start=14, end=25, raw_target="Vell Valley"),
               Link(target="Vell Valley University", anchor="university", section=1, paragraph=1,
                    sentence=0, start=0, end=10, raw_target="VVU")],
        categories=["Rivers of the Vell Valley", "Vell Valley"],
    )


@pytest.fixture(scope="module")
def sample_articles():
    return list(iter_articles(ParseConfig(inputs=[SAMPLE], output=""), Counter()))


def roundtrip(rows, fields, path):
    table = to_arrow_rows(fields, rows)
    pq.write_table(table, path)
    back = pq.read_table(path)
    assert back.schema.equals(arrow_schema(fields)), back.schema
    return back.to_pylist()


# ---- the Arrow schema of an article ------------------------------------------------------

def test_article_schema_types():
    schema = arrow_schema(ARTICLE)
    assert schema.names == ["id", "title", "lang", "sections", "links", "categories"]
    assert schema.field("id").type == pa.int64()
    assert schema.field("categories").type == pa.list_(pa.string())
    section = schema.field("sections").type.value_type
    assert [f.name for f in section] == ["heading", "level", "paragraphs"]
    assert section.field("level").type == pa.int32()
    paragraph = section.field("paragraphs").type.value_type
    assert paragraph.field("sentences").type == pa.list_(pa.string())
    link = schema.field("links").type.value_type
    assert [f.name for f in link] == ["target", "raw_target", "anchor", "section", "paragraph",
                                      "sentence", "start", "end"]
    assert all(link.field(n).type == pa.int32()
               for n in ("section", "paragraph", "sentence", "start", "end"))


def test_article_row_matches_the_schema():
    row = article_row(small_article())
    assert set(row) == {f.name for f in ARTICLE}
    link_fields = {f.name for f in ARTICLE[4].item.fields}
    assert all(set(link) == link_fields for link in row["links"])


def test_article_roundtrip_through_parquet(tmp_path):
    article = small_article()
    rows = roundtrip([article_row(article)], ARTICLE, tmp_path / "a.parquet")
    assert rows == [article_row(article)]
    back = rows[0]
    assert back["sections"][1]["paragraphs"][0]["sentences"] == ["Ünïcödé — ok."]
    assert back["sections"][2] == {"heading": "Empty heading kept", "level": 3, "paragraphs": []}
    assert back["links"][1] == {"target": "Vell Valley University", "raw_target": "VVU",
                                "anchor": "university", "section": 1, "paragraph": 1,
                                "sentence": 0, "start": 0, "end": 10}


def test_sample_articles_roundtrip_through_parquet(tmp_path, sample_articles):
    rows = [article_row(a) for a in sample_articles]
    assert roundtrip(rows, ARTICLE, tmp_path / "sample.parquet") == rows
    # the sentences and link spans read back are the ones parsed
    back = pq.read_table(tmp_path / "sample.parquet").to_pylist()
    for article, row in zip(sample_articles, back):
        assert [s for _, _, _, s in article.sentences()] == [
            s for sec in row["sections"] for p in sec["paragraphs"] for s in p["sentences"]]
        for link in row["links"]:
            if link["section"] == -1:  # a link outside the text has no span
                continue
            sentence = row["sections"][link["section"]]["paragraphs"][link["paragraph"]][
                "sentences"][link["sentence"]]
            assert sentence[link["start"]:link["end"]] == link["anchor"]


def test_schema_rejects_a_wrong_row():
    row = article_row(small_article())
    row["id"] = "not a number"
    with pytest.raises((pa.ArrowInvalid, pa.ArrowTypeError)):
        to_arrow_rows(ARTICLE, [row])


# ---- the redirect schema -----------------------------------------------------------------

def test_redirect_schema_fields(tmp_path):
    schema = arrow_schema(REDIRECT)
    assert schema.names == ["source", "target", "resolved"]
    assert all(f.type == pa.string() for f in schema)
    assert schema.field("resolved").nullable
    rows = [{"source": "VVU", "target": "Vell University", "resolved": "Vell Valley University"},
            {"source": "Vell Bridge Trust", "target": "Vell Bridge Company", "resolved": None}]
    assert roundtrip(rows, REDIRECT, tmp_path / "r.parquet") == rows


# ---- documentation -------------------------------------------------------------------------

def test_markdown_table_lists_every_field_path():
    table = markdown_table(ARTICLE)
    lines = table.splitlines()
    assert lines[:2] == ["| field | type | meaning |", "|---|---|---|"]
    paths = [line.split("|")[1].strip().strip("`") for line in lines[2:]]
    assert paths == ARTICLE_PATHS
    assert "| `sections` | list<struct{heading, level, paragraphs}> |" in table
    assert "| `links[].start` | int32 |" in table
    assert "| `categories` | list<string> |" in table
    redirect_paths = [line.split("|")[1].strip().strip("`")
                      for line in markdown_table(REDIRECT).splitlines()[2:]]
    assert redirect_paths == ["source", "target", "resolved"]


def test_every_field_has_a_doc():
    def walk(fields):
        for f in fields:
            yield f
            yield from walk(f.fields)
            if isinstance(f.item, Field):
                yield f.item
                yield from walk(f.item.fields)
    for f in walk(ARTICLE + REDIRECT):
        assert f.doc.strip(), f.name


def test_schemas_readme_is_generated():
    from wikipairs.schemas.__main__ import render
    readme = (ROOT / "schemas" / "README.md").read_text(encoding="utf-8")
    assert readme == render(), \
        "schemas/README.md is stale: python -m wikipairs.schemas > schemas/README.md"


def test_struct_field_paths_and_unknown_types():
    point = Field("point", "struct", "A point.", fields=(Field("x", "int32", "X."),
                                                         Field("y", "int32", "Y.")))
    fields = (point, Field("tags", "list", "Tags.", item="string"))
    assert [line.split("|")[1].strip().strip("`")
            for line in markdown_table(fields).splitlines()[2:]] == ["point", "point.x", "point.y",
                                                                    "tags"]
    assert arrow_schema(fields).field("point").type == pa.struct([("x", pa.int32()),
                                                                  ("y", pa.int32())])
    with pytest.raises(ValueError):
        Field("bad", "decimal", "No such type.").arrow_type()


# ---- shards ---------------------------------------------------------------------------------

def test_parquet_shards(tmp_path):
    schema = arrow_schema(REDIRECT)
    shards = ParquetShards(str(tmp_path / "out"), schema, rows_per_shard=3, row_group=2)
    rows = [{"source": f"S{i}", "target": f"T{i}", "resolved": None if i % 2 else f"R{i}"}
            for i in range(8)]
    for row in rows:
        shards.write(row)
    done = shards.close()
    names = [os.path.basename(p) for p, _ in done]
    assert names == [shard_name(i, 3, ".parquet") for i in range(3)] == [
        "part-00000-of-00003.parquet", "part-00001-of-00003.parquet", "part-00002-of-00003.parquet"]
    assert [n for _, n in done] == [3, 3, 2]
    assert sorted(os.listdir(tmp_path / "out")) == names  # no .tmp left
    back = [r for p, _ in done for r in pq.read_table(p).to_pylist()]
    assert back == rows
    assert all(pq.read_schema(p).equals(schema) for p, _ in done)
    # Each shard's row groups depend on its own rows only: groups of 2, then the rest.
    groups = [[pq.ParquetFile(p).metadata.row_group(g).num_rows
               for g in range(pq.ParquetFile(p).metadata.num_row_groups)] for p, _ in done]
    assert groups == [[2, 1], [2, 1], [2]]


def test_parquet_rows_size_groups_by_bytes(tmp_path):
    """ParquetRows: the first group holds `first_group` rows, later ones about `buffer_bytes`."""
    schema = arrow_schema(REDIRECT)
    rows = ParquetRows(str(tmp_path / "a.parquet"), schema, row_group=1000,
                       buffer_bytes=2_000, first_group=4)
    for i in range(100):
        rows.write({"source": "s" * 50 + str(i), "target": "t" * 50, "resolved": None})
    rows.close()
    meta = pq.ParquetFile(tmp_path / "a.parquet").metadata
    sizes = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
    assert sum(sizes) == 100 and sizes[0] == 4 and 4 < max(sizes) < 100, sizes
    empty = ParquetRows(str(tmp_path / "b.parquet"), schema, row_group=10)
    empty.close()
    assert pq.read_table(tmp_path / "b.parquet").num_rows == 0
    assert pq.read_schema(tmp_path / "b.parquet").equals(schema)


def test_empty_shards_keep_the_schema(tmp_path):
    schema = arrow_schema(ARTICLE)
    done = ParquetShards(str(tmp_path / "out"), schema).close()
    assert [(os.path.basename(p), n) for p, n in done] == [("part-00000-of-00001.parquet", 0)]
    table = pq.read_table(done[0][0])
    assert table.num_rows == 0 and table.schema.equals(schema)


def test_write_parquet_is_atomic(tmp_path):
    path = str(tmp_path / "redirects.parquet")
    write_parquet(path, to_arrow_rows(REDIRECT, [{"source": "A", "target": "B", "resolved": "B"}]))
    assert os.listdir(tmp_path) == ["redirects.parquet"]
    assert pq.read_table(path).to_pylist() == [{"source": "A", "target": "B", "resolved": "B"}]


def test_shards_of_an_earlier_run_are_removed(tmp_path):
    folder = tmp_path / "articles"
    schema = arrow_schema(REDIRECT)
    rows = [{"source": f"S{i}", "target": "T", "resolved": "T"} for i in range(5)]
    first = ParquetShards(str(folder), schema, rows_per_shard=1)
    for row in rows:
        first.write(row)
    assert len(first.close()) == 5
    (folder / "shard-00009.tmp").write_bytes(b"left by a crash")
    (folder / "notes.txt").write_text("not ours")
    second = ParquetShards(str(folder), schema, rows_per_shard=10)
    second.write(rows[0])
    done = second.close()
    assert sorted(os.listdir(folder)) == ["notes.txt", "part-00000-of-00001.parquet"]
    assert [n for _, n in done] == [1]
