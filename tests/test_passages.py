"""Pairs from any passage corpus (issue 17): `wikipairs build|parse -i passages.jsonl|parquet`.

Records: title and text, optional id, section (0: the lead), order, heading, page_id. Passages
of one title are one Article (wikipairs/reading/passages.py, wikipairs/text/passages.py); ICT
and BFS pairs come from it as from a Wikipedia page, WLP none (said in one line).
"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import SAMPLE_DUMP, SHARED_DATA, assert_one_line_error, read_articles, run_cli
from wikipairs.errors import DumpError
from wikipairs.parse import open_dump
from wikipairs.reading.passages import (PASSAGES_JSONL, PASSAGES_PARQUET, input_kind,
                                        plan_passage_splits, read_passage_pages, title_page_id)
from wikipairs.reading.splits import plan_splits, read_split

SQUAD_DEV = SHARED_DATA / "squad" / "dev-v1.1.json"


def sentences(page: str, part: str, n: int = 3) -> list[str]:
    return [f"The {part} of {page} holds sentence number {i} with enough words in it."
            for i in range(n)]


def split_sentences(text: str) -> list[str]:
    return re.split(r"(?<=\.)\s+", text.strip())


def corpus_records() -> list[dict]:
    """Three pages: two with a lead and two body sections, their records out of order in the
    file; one without sections (all lead: ICT only). A page's records are contiguous."""
    records = []
    for page in ("Alpha", "Beta"):
        for section, order in ((1, 2), (0, 0), (1, 1), (2, 3)):
            records.append({"id": f"{page}-{order}", "title": page, "section": section,
                            "order": order, "heading": f"Part {section}" if section else "",
                            "text": " ".join(sentences(page, f"part {order}"))})
    records.append({"id": "Gamma-0", "title": "Gamma", "text": " ".join(sentences("Gamma", "text"))
                    + "\n\n" + " ".join(sentences("Gamma", "second paragraph", 2))})
    return records


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def write_parquet(path: Path, records: list[dict], row_group_size: int = 3) -> Path:
    columns = {key: [r.get(key) for r in records]
               for key in ("id", "title", "text", "section", "order", "heading")}
    pq.write_table(pa.table(columns), path, row_group_size=row_group_size)
    return path


def read_pairs(out: Path, task: str) -> list[dict]:
    return [row for shard in sorted((out / "parquet" / task).glob("*.parquet"))
            for row in pq.read_table(shard).to_pylist()]


def build(corpus: Path, out: Path, *args: str):
    result = run_cli("build", "-i", corpus, "-o", out, "-q", *args)
    assert result.returncode == 0, result.stderr
    return result


def shard_bytes(out: Path) -> dict[str, bytes]:
    return {str(p.relative_to(out)): p.read_bytes() for p in sorted(out.rglob("part-*"))}


def test_kinds_are_told_by_content(tmp_path):
    jsonl = write_jsonl(tmp_path / "corpus.txt", corpus_records())  # no telling extension
    parquet = write_parquet(tmp_path / "corpus.bin", corpus_records())
    assert input_kind(str(jsonl)) == PASSAGES_JSONL
    assert input_kind(str(parquet)) == PASSAGES_PARQUET
    assert input_kind(str(SAMPLE_DUMP)) is None
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    assert input_kind(str(bad)) == PASSAGES_JSONL  # by its name: then its error names the line


def test_pages_group_passages_by_title_in_order(tmp_path):
    corpus = write_jsonl(tmp_path / "c.jsonl", corpus_records())
    dump = open_dump(str(corpus))
    assert dump.site.lang == "en"
    pages = {p.title: p for p in dump.pages()}
    assert list(pages) == ["Alpha", "Beta", "Gamma"]
    assert [r.text.split(" holds")[0] for r in pages["Alpha"].passages] == [
        "The part 0 of Alpha", "The part 1 of Alpha", "The part 2 of Alpha",
        "The part 3 of Alpha"]  # by section, then order
    assert pages["Alpha"].id == title_page_id("Alpha")
    assert title_page_id("Alpha") == 6052131468755864  # stable: sha1 of the title
    assert 2 ** 52 <= title_page_id("Beta") < 2 ** 53


def test_jsonl_corpus_makes_ict_and_bfs_pairs(tmp_path):
    corpus = write_jsonl(tmp_path / "corpus.jsonl", corpus_records())
    one = build(corpus, tmp_path / "w1", "--task", "all", "--workers", "1")
    assert sum("a passage corpus has no links" in line for line in one.stderr.splitlines()) == 1
    build(corpus, tmp_path / "w2", "--task", "all", "--workers", "2")
    first, second = shard_bytes(tmp_path / "w1"), shard_bytes(tmp_path / "w2")
    assert first and first == second  # byte-identical shards whatever the worker count
    sections = {}  # (title, section) -> its sentences, records by order
    for r in sorted(corpus_records(), key=lambda r: r.get("order", 0)):
        sections.setdefault((r["title"], r.get("section", 0)), []).extend(
            split_sentences(r["text"]))
    passages = {}  # title -> the sentences of each section, in order
    for (title, _), texts in sorted(sections.items()):
        passages.setdefault(title, []).append(texts)
    ict = read_pairs(tmp_path / "w1", "ict")
    # one pair per passage: a section's records are packed as a page's paragraphs (here each
    # section fits one passage: Alpha's and Beta's section 1 holds two records), Gamma's two
    # paragraphs one passage of the lead
    assert sorted(r["doc_title"] for r in ict) == ["Alpha"] * 3 + ["Beta"] * 3 + ["Gamma"]
    for row in ict:
        assert row["query_page_id"] == row["doc_page_id"] == title_page_id(row["doc_title"])
        doc = split_sentences(row["doc_text"])
        assert row["query"] not in doc  # ICT: the query sentence taken out of its passage
        assert sorted(doc + [row["query"]]) in [sorted(p) for p in passages[row["doc_title"]]]
        assert row["lang"] == "en"
    gamma = next(r for r in ict if r["doc_title"] == "Gamma")
    assert len(gamma["doc_text"].split(". ")) == 4  # 5 sentences, the query taken out
    bfs = read_pairs(tmp_path / "w1", "bfs")
    assert sorted((r["doc_title"], r["doc_section"]) for r in bfs) == [
        ("Alpha", 1), ("Alpha", 2), ("Beta", 1), ("Beta", 2)]  # Gamma has no body: no BFS
    for row in bfs:
        assert row["query"] in sentences(row["doc_title"], "part 0")  # a lead sentence
        assert split_sentences(row["doc_text"]) in passages[row["doc_title"]][1:]
    assert read_pairs(tmp_path / "w1", "wlp") == []
    stats = json.loads((tmp_path / "w1" / "stats.json").read_text())
    assert stats["tasks"]["wlp"]["pairs"] == 0 and stats["counters"]["articles"] == 3
    verify = run_cli("verify", tmp_path / "w1")
    assert verify.returncode == 0, verify.stderr


def test_parquet_corpus_gives_the_same_pairs(tmp_path):
    records = corpus_records()
    build(write_jsonl(tmp_path / "c.jsonl", records), tmp_path / "j", "--task", "ict,bfs",
          "--workers", "1")
    parquet = write_parquet(tmp_path / "c.parquet", records, row_group_size=2)
    build(parquet, tmp_path / "p1", "--task", "ict,bfs", "--workers", "1")
    build(parquet, tmp_path / "p2", "--task", "ict,bfs", "--workers", "2")
    assert shard_bytes(tmp_path / "p1") == shard_bytes(tmp_path / "p2")
    for task in ("ict", "bfs"):
        rows = lambda out: sorted((r["pair_id"], r["query"], r["doc_text"])  # noqa: E731
                                  for r in read_pairs(out, task))
        assert rows(tmp_path / "p1") == rows(tmp_path / "j") and rows(tmp_path / "j")


def test_page_ids_from_a_page_id_field(tmp_path):
    records = [dict(r, page_id=100 + i // 4) for i, r in enumerate(corpus_records()[:4])]
    build(write_jsonl(tmp_path / "c.jsonl", records), tmp_path / "out", "--task", "ict",
          "--workers", "1")
    assert {r["query_page_id"] for r in read_pairs(tmp_path / "out", "ict")} == {100}


def test_splits_cut_where_the_title_changes(tmp_path):
    records = [{"title": f"Page {p}", "text": f"Sentence {i} of page {p} is here. Another one.",
                "order": i} for p in range(7) for i in range(5 + p)]
    jsonl = write_jsonl(tmp_path / "c.jsonl", records)
    parquet = write_parquet(tmp_path / "c.parquet", records, row_group_size=4)
    for path, kind in ((jsonl, PASSAGES_JSONL), (parquet, PASSAGES_PARQUET)):
        ranges = plan_passage_splits(str(path), 5, kind)
        assert len(ranges) >= 3
        pages = [[p.title for p in read_passage_pages(str(path), kind, a, b)] for a, b in ranges]
        titles = [t for split in pages for t in split]
        assert titles == [f"Page {p}" for p in range(7)]  # each page in one split, in order
        splits = plan_splits([str(path)], parts_per_file=5)
        assert [t for s in splits for t in (p.title for p in read_split(s))] == titles
    counts = Counter()
    unsorted = write_jsonl(tmp_path / "unsorted.jsonl", records[:3] + records[20:22] + records[3:5])
    assert [p.title for p in read_passage_pages(str(unsorted), PASSAGES_JSONL, 0,
                                                unsorted.stat().st_size, counts)] == [
        "Page 0", "Page 3"]  # grouped within a range, counted as not sorted by page
    assert counts["passages_apart_from_their_page"] == 1 and counts["passage_records"] == 7


def test_bad_records_are_one_line_with_file_and_line(tmp_path):
    good = corpus_records()
    missing = write_jsonl(tmp_path / "missing.jsonl", good[:2] + [{"title": "X"}] + good[2:])
    result = run_cli("build", "-i", missing, "-o", tmp_path / "o1", "--task", "ict,bfs",
                     "--workers", "1", "-q")
    assert_one_line_error(result, "missing.jsonl", "line 3", "text")
    broken = tmp_path / "broken.jsonl"
    broken.write_text(json.dumps(good[0]) + "\n{not json\n")
    for workers in ("1", "2"):
        result = run_cli("build", "-i", broken, "-o", tmp_path / f"o{workers}x", "--task", "ict",
                         "--workers", workers, "-q")
        assert_one_line_error(result, "broken.jsonl", "line 2", "not a JSON record")
        assert not (tmp_path / f"o{workers}x" / "manifest.json").exists()
    result = run_cli("parse", "-i", broken, "-o", tmp_path / "parsed", "-q")
    assert_one_line_error(result, "broken.jsonl", "line 2")
    rows = [dict(r, section=None) for r in good]
    rows[5]["text"] = None
    parquet = write_parquet(tmp_path / "nulls.parquet", rows)
    result = run_cli("build", "-i", parquet, "-o", tmp_path / "o3", "--task", "ict", "-q",
                     "--workers", "1")
    assert_one_line_error(result, "nulls.parquet", "row 6", "text")
    with pytest.raises(DumpError, match="line 1: `section` must be a number"):
        list(open_dump(str(write_jsonl(tmp_path / "s.jsonl", [dict(good[0], section="x")])))
             .pages())


def test_parse_takes_a_passage_corpus(tmp_path):
    corpus = write_jsonl(tmp_path / "c.jsonl", corpus_records())
    result = run_cli("parse", "-i", corpus, "-o", tmp_path / "out", "-q")
    assert result.returncode == 0, result.stderr
    articles = {a["title"]: a for a in read_articles(tmp_path / "out")}
    alpha = articles["Alpha"]
    assert [s["heading"] for s in alpha["sections"]] == ["", "Part 1", "Part 2"]
    assert [len(s["paragraphs"]) for s in alpha["sections"]] == [1, 2, 1]
    assert alpha["sections"][1]["paragraphs"][0]["sentences"] == sentences("Alpha", "part 1")
    assert alpha["id"] == title_page_id("Alpha") and alpha["links"] == []
    assert [len(s["paragraphs"]) for s in articles["Gamma"]["sections"]] == [2]


def test_a_corpus_beside_a_dump_and_its_language(tmp_path):
    french = [{"title": "Paris", "text": "La ville de Paris est la capitale de la France. "
               "Elle est située sur la Seine et compte plus de deux millions d'habitants. "
               "Les musées de la ville sont parmi les plus visités du monde."}] * 12
    corpus = write_jsonl(tmp_path / "fr.jsonl", [dict(r, order=i) for i, r in enumerate(french)])
    assert open_dump(str(corpus)).site.lang == "fr"
    assert open_dump(str(corpus), lang="de").site.lang == "de"
    out = tmp_path / "mixed"
    build(SAMPLE_DUMP, out, "-i", write_jsonl(tmp_path / "c.jsonl", corpus_records()),
          "--task", "all", "--workers", "1")
    ict_titles = {r["doc_title"] for r in read_pairs(out, "ict")}
    assert {"Alpha", "Beta", "Gamma"} <= ict_titles and len(ict_titles) > 3
    assert read_pairs(out, "wlp")  # the dump's links still make WLP pairs


def test_reqa_passages_writes_squad_paragraphs(tmp_path):
    if not SQUAD_DEV.is_file():
        pytest.fail(f"real test data missing: {SQUAD_DEV}", pytrace=False)
    out = tmp_path / "squad.jsonl"
    result = run_cli("reqa", "passages", "--squad", SQUAD_DEV, "-o", out)
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    squad = json.loads(SQUAD_DEV.read_text(encoding="utf-8"))
    assert len(records) == sum(len(a["paragraphs"]) for a in squad["data"]) == 2067
    assert records[0]["title"] == "Super Bowl 50" and records[0]["section"] == 0
    assert records[0]["text"] == squad["data"][0]["paragraphs"][0]["context"]
    assert len({r["title"] for r in records}) == 48


def test_vocab_on_a_passage_corpus(tmp_path):
    records = [{"title": f"Page {p}", "section": k, "order": k,
                "text": f"Paragraph {k} of page {p} tells about topic {p * k % 7} at length. "
                        f"It has a second sentence with words such as river, mountain and city."}
               for p in range(40) for k in range(5)]
    corpus = write_jsonl(tmp_path / "c.jsonl", records)
    models = []
    for workers in ("1", "2"):
        model = tmp_path / f"spm{workers}.model"
        result = run_cli("vocab", "-i", corpus, "-o", model, "--vocab-size", "120",
                         "--workers", workers, "-q")
        assert result.returncode == 0, result.stderr
        models.append(model.read_bytes())
    assert models[0] == models[1]  # the same sample, the same model, whatever the workers



@pytest.mark.parametrize("lang,text", [
    ("zh", "长城是中国古代的军事防御工程。它的总长度超过两万公里！你去过长城吗？"),
    ("ar", "نهر النيل هو أطول نهر في العالم. يمر عبر إحدى عشرة دولة في أفريقيا؟"),
    ("th", "กรุงเทพมหานครเป็นเมืองหลวงและนครที่มีประชากรมากที่สุดของประเทศไทย"),
])
def test_a_small_corpus_in_another_script_is_not_taken_for_english(tmp_path, lang, text):
    # a few hundred letters, under what a dump's language check needs: the script tells
    path = tmp_path / "corpus.jsonl"
    path.write_text("".join(json.dumps({"title": f"T{i}", "text": text}, ensure_ascii=False)
                            + "\n" for i in range(5)), encoding="utf-8")
    assert open_dump(str(path)).site.lang == lang


def test_an_unclear_language_is_said_and_an_empty_corpus_is_an_error(tmp_path):
    from wikipairs.reading import check_declared_language
    path = tmp_path / "corpus.jsonl"
    path.write_text(json.dumps({"title": "A", "text": "12 34 56 -- 7 8 9"}) + "\n")
    line = check_declared_language([str(path)])
    assert line and "taken as en" in line and "--lang" in line
    assert check_declared_language([str(path)], "de") is None
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n  \n")
    with pytest.raises(DumpError, match="empty file"):
        open_dump(str(empty))
    assert check_declared_language([str(empty)]) is None  # the error says it, no warning first
    assert_one_line_error(run_cli("parse", "-i", empty, "-o", tmp_path / "out"), "empty file")


def test_an_enterprise_record_outside_its_tar_is_named(tmp_path):
    path = tmp_path / "frwiki.ndjson"
    path.write_text(json.dumps({"name": "Paris", "identifier": 1,
                                "article_body": {"html": "<p>Paris</p>"}}) + "\n")
    with pytest.raises(DumpError, match="Enterprise HTML record.*tar"):
        list(open_dump(str(path)).pages())
