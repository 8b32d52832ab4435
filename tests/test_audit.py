"""`wikipairs audit DIR --against FILE` and `wikipairs build --exclude FILE` (issue 20): hashed
13-token n-grams, SQuAD/BEIR/jsonl eval sets, and a decontaminated build that audits to 0."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from conftest import SAMPLE_DUMP, SHARED_DATA, describe, run_cli, write_fake_dump
from wikipairs.shards.audit import (Exclusion, EvalSet, audit, load_eval_set, ngram_hashes,
                                    sentences, text_ngram_hashes)

SQUAD_DEV = SHARED_DATA / "squad" / "dev-v1.1.json"
TASKS = ("ict", "bfs", "wlp")
WORDS = "one two three four five six seven eight nine ten eleven twelve thirteen fourteen".split()


def ok(*args):
    result = run_cli(*map(str, args), timeout=600)
    assert result.returncode == 0, describe(result)
    return result


# ---- units -------------------------------------------------------------------------------------

def test_ngram_hashes_are_per_text_and_ignore_case_and_punctuation():
    text = " ".join(WORDS)
    rows, hashes = ngram_hashes([text, "too short", text.upper().replace(" ", ", "), ""])
    assert rows.tolist() == [0, 0, 2, 2]  # 14 tokens: 2 n-grams; 12 tokens or fewer: none
    assert hashes.dtype == np.uint64 and hashes[:2].tolist() == hashes[2:].tolist()
    # n-grams never cross texts: 7 + 7 tokens in two rows give none
    assert len(ngram_hashes([" ".join(WORDS[:7]), " ".join(WORDS[7:])])[1]) == 0
    greek = "Η Αθήνα είναι η πρωτεύουσα και η μεγαλύτερη πόλη της Ελλάδας με πολλούς κατοίκους"
    assert len(ngram_hashes([greek])[1]) == len(greek.split()) - 12


def test_characters_of_scripts_without_spaces_are_tokens():
    """A run of Han, kana or Thai is a clause, not a word: each character is a token, so a
    copied Japanese or Thai passage has 13-grams to be found by (895 of the jawiki sample's
    3,272 BFS documents had none; a test set copied from it was found 5 times in 10)."""
    japanese = "東京は日本の首都であり、最大の都市です。"  # 18 characters, 2 punctuation marks
    assert len(ngram_hashes([japanese])[1]) == 18 - 12
    thai = "ภาษาไทยเป็นภาษาราชการ"
    assert len(ngram_hashes([thai])[1]) == len(thai) - 12
    mixed = "Tokyo 東京 x"  # Latin words stay runs: Tokyo, 東, 京, x
    assert len(ngram_hashes([mixed], n=4)[1]) == 1
    assert ngram_hashes([japanese])[1].tolist() == ngram_hashes(["「" + japanese + "」"])[1].tolist()


def test_one_text_path_equals_the_arrow_path():
    texts = ["Η Αθήνα είναι η πρωτεύουσα και η μεγαλύτερη πόλη της Ελλάδας με πολλούς κατοίκους "
             "και ΜΕΓΑΛΗ ιστορία.",
             "বাংলা ভাষা একটি ইন্দো-আর্য ভাষা যা দক্ষিণ এশিয়ার বাঙালি জাতির প্রধান কথ্য ও লেখ্য ভাষা। "
             "মাতৃভাষীর সংখ্যায় বাংলা বিশ্বের ষষ্ঠ বৃহত্তম ভাষা।",
             "Die Straße in İstanbul heißt ÄUSSERE Ring-Straße, 2024 gebaut; sie ist 13 km lang "
             "und hat viele Kurven und Brücken über den Fluss.",
             " ".join(WORDS) + " " + " ".join(WORDS)]
    for text in texts:
        assert text_ngram_hashes([text]).tolist() == ngram_hashes([text])[1].tolist(), text
    assert text_ngram_hashes(texts[:2]).tolist() == ngram_hashes(texts[:2])[1].tolist()


def test_sentences_and_answer_sentences(tmp_path):
    assert sentences("A cat sat. The dog ran! Did it?") == ["A cat sat.", "The dog ran!", "Did it?"]
    assert sentences("यह एक वाक्य है। यह दूसरा है।") == ["यह एक वाक्य है।", "यह दूसरा है।"]
    assert sentences("これは文です。これも文です。") == ["これは文です。", "これも文です。"]
    squad = {"data": [{"title": "Some_Page", "paragraphs": [{
        "context": "First sentence here. The answer is forty-two. Last one.",
        "qas": [{"question": "q", "id": "1", "answers": [{"text": "forty-two",
                                                          "answer_start": 35}]}]}]}]}
    path = tmp_path / "squad.json"
    path.write_text(json.dumps(squad))
    eval_set = load_eval_set(str(path))
    assert eval_set.titles == ["Some Page"]
    assert eval_set.answer_sentences == [(0, "The answer is forty-two.")]
    jsonl = tmp_path / "e.jsonl"
    jsonl.write_text('{"text": "a b c", "title": "T"}\n{"text": "d"}\n')
    assert load_eval_set(str(jsonl)).passages == ["a b c", "d"]
    beir = tmp_path / "beir"
    beir.mkdir()
    (beir / "corpus.jsonl").write_text('{"_id": "1", "title": "X", "text": "x y"}\n')
    assert load_eval_set(str(beir)).titles == ["X"]


def test_exclusion_by_title_and_ngram():
    class P:
        query, doc_text = "a query", " ".join(WORDS) + " and more"
    ex = Exclusion([EvalSet("e", ["Some page"], ["Before. " + " ".join(WORDS[:13]) + "."])])
    assert ex.page_excluded("Some page") and not ex.page_excluded("Other")
    assert ex.pair_excluded(P)
    P.doc_text = " ".join(WORDS[1:])  # 13 tokens, but not the eval's 13
    assert not ex.pair_excluded(P)


def test_squad_dev_loads_fast():
    eval_set = load_eval_set(str(SQUAD_DEV))
    assert len(eval_set.passages) == 2067 and len(set(eval_set.titles)) == 48
    assert len(eval_set.answer_sentences) > 5000


# ---- builds ------------------------------------------------------------------------------------

def _rows(folder: Path, task: str) -> list[dict]:
    return pq.read_table(folder / "parquet" / task).to_pylist()


@pytest.fixture(scope="module")
def contaminated(tmp_path_factory):
    """The bundled sample, and a SQuAD-format file whose paragraphs copy sentences of its
    documents (one per page, from a few pages), with those pages' titles."""
    work = tmp_path_factory.mktemp("audit")
    build = work / "build"
    ok("build", "-q", "-o", build, "--format", "parquet", "--workers", "1")
    docs = {}
    for task in TASKS:
        for row in _rows(build, task):
            for s in sentences(row["doc_text"]):
                if len(s.split()) >= 20 and row["doc_title"] not in docs:
                    docs[row["doc_title"]] = s
    chosen = sorted(docs.items())[:4]
    assert len(chosen) == 4
    squad = {"data": [{"title": "Not_in_the_dump", "paragraphs": [{
        "context": "An invented opening sentence. " + " ".join(s for _, s in chosen),
        "qas": [{"question": "?", "id": "x", "answers": [{"text": chosen[0][1][:5],
                                                          "answer_start": 30}]}]}]}]}
    path = work / "squad-like.json"
    path.write_text(json.dumps(squad))
    return build, path, [t for t, _ in chosen]


def test_audit_finds_the_copied_sentences(contaminated):
    build, path, titles = contaminated
    result = json.loads(ok("audit", build, "--against", path, "--json").stdout)
    assert result["passages"] == 1
    total = sum(t["passages_overlapping"] for t in result["tasks"].values())
    assert total >= 1
    found = {t for task in result["tasks"].values() for t in task["build_titles"]}
    assert set(titles) <= found
    table = ok("audit", build, "--against", path).stdout
    assert "passages_overlapping" in table and "ict" in table


def test_build_exclude_audits_to_zero(contaminated, tmp_path):
    build, path, _ = contaminated
    clean = tmp_path / "clean"
    ok("build", "-q", "-o", clean, "--format", "parquet", "--workers", "1", "--exclude", path)
    result = audit(str(clean), load_eval_set(str(path)))
    for task, t in result["tasks"].items():
        assert t["passages_overlapping"] == 0 and t["pairs_overlapping"] == 0, (task, t)
        assert t["answer_sentences_as_queries"] == 0
    stats = json.loads((clean / "stats.json").read_text())
    dropped = {k: v for k, v in stats["counters"].items() if "excluded_eval" in k}
    assert sum(dropped.values()) > 0, stats["counters"]
    assert stats["excluded"]["files"] == [path.name]
    before = json.loads((build / "stats.json").read_text())
    for task in TASKS:
        assert stats["tasks"][task]["pairs"] + stats["counters"].get(
            f"{task}_excluded_eval_ngram", 0) >= before["tasks"][task]["pairs"] - 0, task
    card = (clean / "README.md").read_text()
    assert "--exclude" in card and path.name in card
    ok("verify", clean)


@pytest.fixture(scope="module")
def squad_dump(tmp_path_factory):
    """A dump of three SQuAD dev articles (their paragraphs as the page text) and a page that
    quotes one SQuAD sentence among sentences of its own."""
    data = json.loads(SQUAD_DEV.read_text())["data"]
    pages = [(a["title"].replace("_", " "),
              "\n\n".join(p["context"] for p in a["paragraphs"][:6]) + "\n\n== More ==\n\n"
              + "\n\n".join(p["context"] for p in a["paragraphs"][6:12]))
             for a in data[:3]]
    quoted = sentences(data[5]["paragraphs"][0]["context"])[0]
    own = ("Quotations are collected here for a test of the audit. They come from many places. "
           "Some of them are long and some of them are short. ")
    pages.append(("Quotations", own + quoted + " " + own + "\n\n== Other ==\n\n" + own * 3
                  + "\n\n[[" + pages[0][0] + "]] is linked here."))
    pages += [(f"Filler {i}", own * 2 + f"\n\n== Part ==\n\n{own}\n\n[[Quotations]]")
              for i in range(3)]
    path = tmp_path_factory.mktemp("squad-dump") / "enwiki-squad-test.xml"
    return write_fake_dump(path, pages), [t for t, _ in pages[:3]]


def test_real_squad_dev_pages_are_found_and_excluded(squad_dump, tmp_path):
    dump, titles = squad_dump
    dirty, clean = tmp_path / "dirty", tmp_path / "clean"
    ok("build", "-q", "-i", dump, "-o", dirty, "--format", "parquet", "--workers", "1")
    before = audit(str(dirty), load_eval_set(str(SQUAD_DEV)))
    assert sum(t["passages_overlapping"] for t in before["tasks"].values()) >= 30
    assert set(titles) <= {t for task in before["tasks"].values() for t in task["eval_titles"]}
    assert "Quotations" in before["tasks"]["ict"]["build_titles"]
    assert sum(t["answer_sentences_as_queries"] for t in before["tasks"].values()) > 0
    ok("build", "-q", "-i", dump, "-o", clean, "--format", "parquet", "--workers", "1",
       "--exclude", SQUAD_DEV)
    after = audit(str(clean), load_eval_set(str(SQUAD_DEV)))
    assert all(t["passages_overlapping"] == 0 and t["answer_sentences_as_queries"] == 0
               for t in after["tasks"].values()), after
    stats = json.loads((clean / "stats.json").read_text())
    assert stats["counters"]["pages_excluded_eval_title"] == 3
    assert stats["counters"].get("ict_excluded_eval_ngram", 0) >= 1
    assert after["tasks"]["ict"]["pairs"] > 0, "the other pages still give pairs"


def test_gensim_dump_against_the_real_squad_dev(tmp_path):
    """The real gensim sample shares sentences with a few SQuAD dev articles; --exclude dev
    leaves them out and audit reports 0."""
    from conftest import wiki_file
    dump = wiki_file("enwiki-sample-gensim.xml.bz2")
    dirty, clean = tmp_path / "dirty", tmp_path / "clean"
    for out, extra in ((dirty, ()), (clean, ("--exclude", SQUAD_DEV))):
        ok("build", "-q", "-i", dump, "-o", out, "--format", "parquet", "--workers", "2", *extra)
    squad = load_eval_set(str(SQUAD_DEV))
    before, after = audit(str(dirty), squad), audit(str(clean), squad)
    overlapping = sum(t["passages_overlapping"] for t in before["tasks"].values())
    assert overlapping > 0  # measured: ICT 4, BFS 4, WLP 1 (Apollo program, Black Death, Kenya)
    assert {"Apollo program", "Black Death", "Kenya"} <= set(before["tasks"]["ict"]["eval_titles"]
                                                             + before["tasks"]["wlp"]["eval_titles"])
    assert all(t["passages_overlapping"] == t["pairs_overlapping"] ==
               t["answer_sentences_as_queries"] == 0 for t in after["tasks"].values()), after
    stats = json.loads((clean / "stats.json").read_text())
    assert sum(v for k, v in stats["counters"].items() if "excluded_eval" in k) > 0
