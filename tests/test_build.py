"""`wikipairs build` (Beam pipeline), `wikipairs verify` and `wikipairs vocab` on real dumps.

Each build configuration runs once per module (fixtures below) and several tests read it:

- gensim_build: enwiki-sample-gensim, tasks ict,bfs,wlp, 3 WLP shards, a 2,000-piece vocabulary,
  one worker (in-process runner);
- gensim_build_2w: the same on two workers (multi-process DirectRunner);
- gensim_build_seed1: ICT only, --seed 1 --ict-keep-rate 0.5, same vocabulary;
- sample builds of the bundled dump (CLI defaults; --wlp-docs-per-page 1 --pairs-per-page 2);
- the truncated Greek dump into a folder holding a build, then with --allow-truncated;
- the wheel of the package Dataflow stages.

They run in a small thread pool, started when the module starts (see `jobs`).

The reference is the in-memory path (`build_pairs_in_memory` over the session fixture
`enwiki_gensim`, whose links are redirect-resolved by the plain parser).
"""
from __future__ import annotations

import dataclasses
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from collections import Counter, defaultdict
from pathlib import Path

import nltk.data
import pyarrow.parquet as pq
import pytest

from conftest import (NLTK_DATA, REPO, SAMPLE_DUMP, assert_one_line_error, describe,
                      punkt_free_paths, run_cli, wiki_file)
from old_builds import to_old_layout, to_schema_v1
from wikipairs.shards.pair_shards import pair_row
from wikipairs.pairs.tasks import PairBuilder, PairConfig, approx_token_count, build_pairs_in_memory
from wikipairs.parse import ParseConfig, iter_articles
from wikipairs.schemas import pair_fields
from wikipairs.pairs.vocab import CLS_ID, SEP_ID, Tokenizer

TASKS = ("ict", "bfs", "wlp")
GENSIM = "enwiki-sample-gensim.xml.bz2"
DOC_MAX, QUERY_MAX = 288, 64
_PART = re.compile(r"^part-(\d{5})-of-(\d{5})\.(parquet|tfrecord\.gz)$")


# ---- helpers ----------------------------------------------------------------------------------

def build_cli(*args, timeout: float = 300):
    result = run_cli("build", *args, timeout=timeout)
    assert result.returncode == 0, "build failed" + describe(result)
    return result


def shard_files(folder: Path | str, task: str, suffix: str = ".parquet") -> list[str]:
    """A task's shards of one format: DIR/parquet/<task>/ or DIR/tfrecord/<task>/."""
    fmt = "parquet" if suffix == ".parquet" else "tfrecord"
    files = sorted(glob.glob(os.path.join(str(folder), fmt, task, "part-*" + suffix)))
    assert files, f"no {suffix} shards in {folder}/{fmt}/{task}"
    for f in files:
        assert _PART.match(os.path.basename(f)), f
    return files


def read_rows(folder: Path | str, task: str) -> list[dict]:
    """Every Parquet row of a task, sorted by pair_id."""
    rows = []
    for f in shard_files(folder, task):
        rows.extend(pq.read_table(f).to_pylist())
    return sorted(rows, key=lambda r: r["pair_id"])


def load_json(path) -> dict:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def reference_rows(articles, tasks, config: PairConfig, tokenizer=None) -> dict[str, list[dict]]:
    count = tokenizer.count_tokens if tokenizer else approx_token_count
    pairs = build_pairs_in_memory(articles, tasks, PairBuilder(config, count))
    return {t: sorted((pair_row(p, count, tokenizer, config.query_max_tokens,
                                config.doc_max_tokens) for p in pairs[t]),
                      key=lambda r: r["pair_id"]) for t in tasks}


def assert_rows_equal(actual: list[dict], expected: list[dict], what: str) -> None:
    """Field-for-field equality, with a readable first difference."""
    a_ids = [r["pair_id"] for r in actual]
    e_ids = [r["pair_id"] for r in expected]
    assert len(set(a_ids)) == len(a_ids), f"{what}: duplicate pair ids in the build"
    only_a, only_e = set(a_ids) - set(e_ids), set(e_ids) - set(a_ids)
    assert not only_a and not only_e, (
        f"{what}: {len(actual)} rows built, {len(expected)} expected; {len(only_a)} only in the "
        f"build (e.g. {sorted(only_a)[:3]}), {len(only_e)} only in the reference "
        f"(e.g. {[(r['query_title'], r['doc_title']) for r in expected if r['pair_id'] in only_e][:3]})")
    for a, e in zip(actual, expected):
        if a != e:
            diff = {k: (a.get(k), e.get(k)) for k in set(a) | set(e) if a.get(k) != e.get(k)}
            pytest.fail(f"{what}: pair {a['pair_id']} differs (build, reference): {diff}")


def parse_with_shared_punkt(path) -> list:
    """Articles of a dump parsed as the session fixtures do (shared punkt_tab models only)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("NLTK_DATA", str(NLTK_DATA))
        mp.setattr(nltk.data, "path", punkt_free_paths())
        return list(iter_articles(ParseConfig(inputs=[str(path)], output="")))


# ---- module fixtures: each configuration is built once ------------------------------------
#
# The builds are subprocesses that mostly wait on one another's CPU, so the ones the selected
# tests need start together in a small thread pool when the module starts (`jobs`), and each
# fixture waits for its own. A failed build fails (errors) only the tests that use it.

def _job_vocab(work: Path, _) -> Path:
    model = work / "spm" / "v2000.model"
    result = run_cli("vocab", "-i", wiki_file(GENSIM), "-o", model, "--vocab-size", "2000",
                     "--max-sentences", "5000")
    assert result.returncode == 0, describe(result)
    assert model.is_file() and model.with_suffix(".vocab").is_file()
    return model


def _gensim_job(name: str, *extra: str, own_model: bool = False):
    """A build of the gensim sample with the shared vocabulary; `own_model`: with a copy of its
    .model alone (no .vocab beside it), in a folder of the build's own that a test may move."""
    def job(work: Path, jobs) -> Path:
        out, model = work / name, jobs.result("vocab_model")
        if own_model:
            (work / f"{name}-spm").mkdir()
            model = Path(shutil.copy(model, work / f"{name}-spm" / model.name))
        build_cli("-i", wiki_file(GENSIM), "-o", out, "--vocab", model, *extra)
        return out
    return job


def _job_sample_defaults(work: Path, _) -> Path:
    out = work / "sample-defaults"
    build_cli("-o", out)  # no --input: the bundled sample; every other option at its default
    return out


def _job_sample_join(work: Path, _) -> Path:
    out = work / "sample-join"
    build_cli("-o", out, "--redirects", "join")  # the bundled sample: chains, a cycle
    return out


def _job_sample_cap1(work: Path, _) -> Path:
    out = work / "sample-cap1"
    build_cli("-o", out, "--wlp-docs-per-page", "1", "--pairs-per-page", "2", "--workers", "1",
              "--format", "parquet")
    return out


TRUNCATED = "elwiki-truncated.xml.xz"


def _job_truncated(work: Path, _):
    """A good build into DIR, then the truncated dump into DIR without and with
    --allow-truncated (ICT, Parquet only, to keep it short)."""
    folder = work / "reused"
    build_cli("-o", folder, "--workers", "1", "--task", "ict", "--format", "parquet")
    assert (folder / "manifest.json").exists()
    args = ["-i", wiki_file(TRUNCATED), "-o", folder, "--workers", "1", "--task", "ict",
            "--format", "parquet"]
    failed = run_cli("build", *args)
    after_failure = sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))
    allowed = run_cli("build", *args, "--allow-truncated")
    return folder, failed, after_failure, allowed


def _job_staged_wheel(work: Path, _) -> Path:
    """The wheel of the sdist Beam stages (built like the stager, without the setuptools
    version check that fails here, see STAGING_BUG)."""
    sdist_dir, wheel_dir = work / "sdist", work / "wheel"
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    result = subprocess.run([sys.executable, "-m", "build", "--no-isolation",
                             "--skip-dependency-check", "--sdist", "--outdir", str(sdist_dir),
                             str(REPO)], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    _assert_no_packaging_warnings(result)
    (sdist,) = sdist_dir.glob("wikipairs-*.tar.gz")
    return _pip_wheel(sdist, wheel_dir)


# What setuptools says of a pyproject.toml it means to stop accepting (a license table, package
# data in a folder `packages` does not list); not distutils' "byte-compiling is disabled" lines.
_PACKAGING_WARNING = re.compile(r"deprecat|is absent from|BuildBackendWarning|SetuptoolsWarning",
                                re.IGNORECASE)


def _assert_no_packaging_warnings(result: subprocess.CompletedProcess) -> None:
    output = result.stdout + result.stderr
    assert not _PACKAGING_WARNING.search(output), output[-3000:]


# fixture name -> (job, fixtures it needs); in the order they start
JOBS = {
    "vocab_model": (_job_vocab, ()),
    "truncated_runs": (_job_truncated, ()),
    "gensim_build": (_gensim_job("gensim-1w", "--task", "ict,bfs,wlp", "--num-shards", "3",
                                 "--workers", "1", "--seed", "0"), ("vocab_model",)),
    "gensim_build_2w": (_gensim_job("gensim-2w", "--task", "ict,bfs,wlp", "--num-shards", "3",
                                    "--workers", "2", "--seed", "0"), ("vocab_model",)),
    "sample_build": (_job_sample_defaults, ()),
    "gensim_build_seed1": (_gensim_job("gensim-seed1-keep", "--task", "ict", "--num-shards",
                                       "2", "--workers", "1", "--seed", "1",
                                       "--ict-keep-rate", "0.5", "--format", "parquet",
                                       own_model=True),
                           ("vocab_model",)),
    "sample_build_cap1": (_job_sample_cap1, ()),
    "sample_build_join": (_job_sample_join, ()),
    "staged_wheel": (_job_staged_wheel, ()),
}


class Jobs:
    def __init__(self, work: Path, names: set[str], threads: int = 3):
        from concurrent.futures import ThreadPoolExecutor

        self.work, self.pool, self.futures = work, ThreadPoolExecutor(threads), {}
        for name in JOBS:  # dependencies come earlier in JOBS
            if name in names:
                self.futures[name] = self.pool.submit(JOBS[name][0], work, self)

    def result(self, name: str):
        if name not in self.futures:  # not foreseen (e.g. a fixture requested dynamically)
            self.futures[name] = self.pool.submit(JOBS[name][0], self.work, self)
        return self.futures[name].result()

    def close(self):
        self.pool.shutdown(wait=True, cancel_futures=True)


@pytest.fixture(scope="module")
def work(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("build")


@pytest.fixture(scope="module", autouse=True)
def jobs(request, work):
    """Starts the builds the selected tests of this module need (and what those need)."""
    names = set()
    for item in request.session.items:
        if item.module is request.module:
            names.update(n for n in item.fixturenames if n in JOBS)
    for name in list(names):
        names.update(JOBS[name][1])
    pool = Jobs(work, names)
    yield pool
    pool.close()


@pytest.fixture(scope="module")
def vocab_model(jobs) -> Path:
    return jobs.result("vocab_model")


@pytest.fixture(scope="module")
def tokenizer(vocab_model) -> Tokenizer:
    tok = Tokenizer(str(vocab_model))
    assert tok.vocab_size == 2000
    return tok


@pytest.fixture(scope="module")
def gensim_build(jobs) -> Path:
    return jobs.result("gensim_build")


@pytest.fixture(scope="module")
def gensim_build_2w(jobs) -> Path:
    return jobs.result("gensim_build_2w")


@pytest.fixture(scope="module")
def gensim_build_seed1(jobs) -> Path:
    return jobs.result("gensim_build_seed1")


@pytest.fixture(scope="module")
def sample_build(jobs) -> Path:
    return jobs.result("sample_build")


@pytest.fixture(scope="module")
def sample_build_cap1(jobs) -> Path:
    return jobs.result("sample_build_cap1")


@pytest.fixture(scope="module")
def sample_build_join(jobs) -> Path:
    return jobs.result("sample_build_join")


@pytest.fixture(scope="module")
def truncated_runs(jobs):
    return jobs.result("truncated_runs")


@pytest.fixture(scope="module")
def staged_wheel(jobs) -> Path:
    return jobs.result("staged_wheel")


@pytest.fixture(scope="module")
def reference(enwiki_gensim, tokenizer) -> dict[str, list[dict]]:
    return reference_rows(enwiki_gensim.articles, TASKS, PairConfig(), tokenizer)


@pytest.fixture(scope="module")
def gensim_articles(enwiki_gensim) -> dict:
    return {a.id: a for a in enwiki_gensim.articles}


@pytest.fixture(scope="module")
def sample_articles() -> list:
    return parse_with_shared_punkt(SAMPLE_DUMP)


def test_wlp_join_sides_survive_beam_s_coder_and_shrink(enwiki_gensim):
    """WlpQuery/WlpDoc pickle their texts compressed (they are what the WLP join shuffles): what
    Beam's coder and pickle give back must equal the original, Greek and empty texts included."""
    import pickle

    from apache_beam import coders
    builder = PairBuilder(PairConfig())
    coder = coders.registry.get_coder(object)
    sides = [builder.wlp_query(a) for a in enwiki_gensim.articles[:20]]
    sides += [doc for a in enwiki_gensim.articles[:20] for _, doc in builder.wlp_documents(a)]
    sides = [x for x in sides if x is not None]
    greek = dataclasses.replace(sides[-1], text="Η Αθήνα είναι η πρωτεύουσα. ", anchor="Αθήνα")
    for side in sides + [greek, dataclasses.replace(greek, text="")]:
        assert pickle.loads(pickle.dumps(side)) == side
        assert coder.decode(coder.encode(side)) == side
    raw = sum(len(pickle.dumps(dataclasses.astuple(x))) for x in sides)
    assert sum(len(coder.encode(x)) for x in sides) < 0.75 * raw


# ---- 1. Beam equals the in-memory reference ---------------------------------------------------

@pytest.mark.parametrize("task", TASKS)
def test_beam_rows_equal_the_in_memory_reference(gensim_build, reference, task):
    rows = read_rows(gensim_build, task)
    assert len(rows) > (50 if task == "wlp" else 1000), f"too few {task} pairs: {len(rows)}"
    assert {r["task"] for r in rows} == {task}
    assert_rows_equal(rows, reference[task], f"{task} (1 worker)")


def test_shard_layout_and_manifest(gensim_build):
    manifest = load_json(gensim_build / "manifest.json")
    listed = [e["path"] for e in manifest["shards"]]
    on_disk = sorted(os.path.relpath(f, gensim_build) for fmt in ("parquet", "tfrecord")
                     for t in TASKS for f in glob.glob(str(gensim_build / fmt / t / "*")))
    assert sorted(listed) == on_disk, "the manifest lists exactly the shard files on disk"
    # One tree per format: DIR/parquet/<task>/*.parquet, DIR/tfrecord/<task>/*.tfrecord.gz.
    assert sorted(p.name for p in gensim_build.iterdir() if p.is_dir()) == ["parquet", "tfrecord"]
    for tree, suffix in (("parquet", ".parquet"), ("tfrecord", ".tfrecord.gz")):
        assert sorted(p.name for p in (gensim_build / tree).iterdir()) == sorted(TASKS)
        assert all(p.name.endswith(suffix) for p in (gensim_build / tree).rglob("*")
                   if p.is_file())
    for task in TASKS:
        for fmt, suffix in (("parquet", "parquet"), ("tfrecord", "tfrecord.gz")):
            parts = [_PART.match(os.path.basename(p)) for p in listed
                     if p.startswith(f"{fmt}/{task}/")]
            assert all(m.group(3) == suffix for m in parts), f"{fmt}/{task}: {parts}"
            numbers = sorted((int(m.group(1)), int(m.group(2))) for m in parts)
            count = numbers[0][1]
            assert numbers == [(i, count) for i in range(count)], f"{task} {fmt}: {numbers}"
    wlp_counts = {int(_PART.match(os.path.basename(p)).group(2)) for p in listed
                  if p.startswith(("parquet/wlp/", "tfrecord/wlp/"))}
    assert wlp_counts == {4}, "--num-shards 3: 3 WLP train shards, then 1 eval shard"
    assert not list(gensim_build.rglob("*.tmp")), "no temporary files left"
    assert manifest["seed"] == 0
    assert manifest["inputs"][0]["sha256"] and manifest["inputs"][0]["bytes"] == \
        os.path.getsize(wiki_file(GENSIM))


# ---- 2. same pairs on any worker count; seeds ---------------------------------------------

def _shard_entries(folder: Path) -> list[tuple]:
    return [(e["path"], e["format"], e["rows"], e["bytes"], e["sha256"])
            for e in load_json(folder / "manifest.json")["shards"]]


def test_two_workers_give_byte_identical_shards(gensim_build, gensim_build_2w):
    one, two = _shard_entries(gensim_build), _shard_entries(gensim_build_2w)
    assert one == two
    for path, *_ in one:  # the manifests tell the truth about the files
        assert (gensim_build / path).read_bytes() == (gensim_build_2w / path).read_bytes(), path


def test_redirect_joins_give_the_in_memory_table_s_shards(sample_build, sample_build_join):
    """WLP link targets resolve alike through the in-memory redirect table (the default for
    small inputs) and through the keyed joins (Wikipedia-size inputs): byte-identical shards
    on the bundled sample, whose WLP pairs go through a chain of three redirects and a cycle."""
    assert load_json(sample_build / "stats.json")["redirects"] == "memory"
    assert load_json(sample_build_join / "stats.json")["redirects"] == "join"
    assert _shard_entries(sample_build) == _shard_entries(sample_build_join)
    assert load_json(sample_build / "stats.json")["tasks"] == \
        load_json(sample_build_join / "stats.json")["tasks"]


def test_two_workers_give_the_same_stats(gensim_build, gensim_build_2w):
    one, two = load_json(gensim_build / "stats.json"), load_json(gensim_build_2w / "stats.json")
    assert one["tasks"] == two["tasks"]
    assert one["counters"] == two["counters"], "Beam counters differ between runners"


def test_another_seed_keeps_the_passages_and_changes_queries(gensim_build, gensim_build_seed1):
    """The passages (documents) do not depend on the seed; the query sentence chosen in each does.
    pair_id hashes task, query position and document passage (schemas/pair.py), so a pair whose
    query position is the same under both seeds keeps its id, and one whose query moved gets a
    new id."""
    seed0 = {(r["doc_page_id"], r["doc_passage"]): r for r in read_rows(gensim_build, "ict")}
    seed1 = {(r["doc_page_id"], r["doc_passage"]): r for r in read_rows(gensim_build_seed1, "ict")}
    # short- and long-query skips depend on the chosen sentence, so some passages differ: with
    # this 2000-piece vocabulary 18% of the sentences are over query_max_tokens (64) pieces
    common = seed0.keys() & seed1.keys()
    assert len(common) >= 0.8 * max(len(seed0), len(seed1))
    moved = same = 0
    for key in common:
        a, b = seed0[key], seed1[key]
        pos_a = (a["query_section"], a["query_paragraph"], a["query_sentence"])
        pos_b = (b["query_section"], b["query_paragraph"], b["query_sentence"])
        if pos_a == pos_b:
            same += 1
            assert a["pair_id"] == b["pair_id"] and a["query"] == b["query"], key
        else:
            moved += 1
            assert a["pair_id"] != b["pair_id"], key
    assert moved > 0.3 * len(common), f"only {moved} of {len(common)} queries changed with the seed"
    assert same > 0, "some passages keep their query sentence under another seed"


# ---- 3. stats.json --------------------------------------------------------------------------

def test_stats_match_the_shards(gensim_build):
    stats = load_json(gensim_build / "stats.json")
    manifest = load_json(gensim_build / "manifest.json")
    assert set(stats["tasks"]) == set(TASKS)
    for task in TASKS:
        rows = read_rows(gensim_build, task)
        q = sum(r["query_tokens"] for r in rows)
        d = sum(r["doc_tokens"] for r in rows)
        s = stats["tasks"][task]
        assert s["pairs"] == len(rows) > 0
        assert s["tokens"] == q + d
        assert s["mean_query_tokens"] == pytest.approx(q / len(rows), abs=0.006)
        assert s["mean_doc_tokens"] == pytest.approx(d / len(rows), abs=0.006)
        for fmt in ("parquet", "tfrecord"):
            assert sum(e["rows"] for e in manifest["shards"]
                       if e["path"].startswith(f"{fmt}/{task}/") and e["format"] == fmt) \
                == len(rows)
        assert stats["counters"].get(f"{task}_pairs") == len(rows)
    counters = stats["counters"]
    expected = {"pages_read": 206, "redirects": 100, "articles": 96,
                "skipped_disambiguation": 8, "skipped_list": 2}
    assert {k: counters.get(k) for k in expected} == expected
    assert stats["lang"] == "en" and stats["sentence_splitter"].startswith("punkt_tab")
    assert stats["tokens"] == "sentencepiece:v2000.model"
    assert manifest["stats"]["sha256"] and manifest["stats"]["path"] == "stats.json"


# ---- 4. TFRecord shards ---------------------------------------------------------------------

def _tf_records(path: str) -> list[dict]:
    """The records of a TFRecord shard parsed with tf.data and the schema's feature spec."""
    import tensorflow as tf

    from wikipairs.schemas import tf_feature_spec

    spec = tf_feature_spec(pair_fields(True))
    batches = list(tf.data.TFRecordDataset([path], compression_type="GZIP").batch(1 << 20))
    if not batches:
        return []
    parsed = tf.io.parse_example(batches[0], spec)
    columns = {}
    for name, value in parsed.items():
        if isinstance(value, tf.SparseTensor):
            columns[name] = tf.RaggedTensor.from_sparse(value).to_list()
        elif value.dtype == tf.string:
            columns[name] = [v.decode("utf-8") for v in value.numpy().tolist()]
        else:
            columns[name] = [int(v) for v in value.numpy().tolist()]
    n = len(columns["pair_id"])
    return [{name: col[i] for name, col in columns.items()} for i in range(n)]


def test_tfrecord_shards_parse_into_the_parquet_rows(gensim_build):
    bools = [f.name for f in pair_fields(True) if f.type == "bool"]
    assert set(bools) == {"query_in_doc", "link_in_doc"}
    seen = 0
    for task in TASKS:
        for parquet in shard_files(gensim_build, task):
            tfrecord = str(gensim_build / "tfrecord" / task /
                           os.path.basename(parquet).replace(".parquet", ".tfrecord.gz"))
            assert os.path.exists(tfrecord), tfrecord
            expected = pq.read_table(parquet).to_pylist()
            for row in expected:
                for name in bools:
                    row[name] = int(row[name])
            got = _tf_records(tfrecord)
            assert len(got) == len(expected), tfrecord
            for g, e in zip(got, expected):
                assert g == e, f"{tfrecord}: record {g['pair_id']} differs from its Parquet row"
            seen += len(got)
    assert seen > 7000  # ~7,240: queries over 64 pieces of this 2000-piece vocabulary are dropped


@pytest.mark.parametrize("task", TASKS)
def test_token_ids_are_framed_and_bounded(gensim_build, tokenizer, task):
    rows = read_rows(gensim_build, task)
    truncated_docs = 0
    for r in rows:
        q, d = r["query_ids"], r["doc_ids"]
        assert q[0] == CLS_ID and q[-1] == SEP_ID and len(q) <= QUERY_MAX, r["pair_id"]
        assert CLS_ID not in q[1:] and SEP_ID not in q[:-1]
        assert q == tokenizer.encode(r["query"], QUERY_MAX)
        assert d[0] == CLS_ID and d[-1] == SEP_ID and len(d) <= DOC_MAX, r["pair_id"]
        title = tokenizer.tokenize(r["doc_title"])
        assert d[1:1 + len(title)] == title and d[1 + len(title)] == SEP_ID, \
            f"{r['pair_id']}: doc_ids do not start with [CLS] title [SEP]"
        assert d.count(SEP_ID) == 2 and d.count(CLS_ID) == 1
        text = tokenizer.tokenize(r["doc_text"])
        assert d[2 + len(title):-1] == text[:DOC_MAX - 3 - len(title)]
        truncated_docs += len(d) == DOC_MAX
        assert r["query_tokens"] == len(tokenizer.tokenize(r["query"]))
    assert truncated_docs < 0.05 * len(rows), "passages are packed to fit, few are cut"


# ---- 5. passage rules on real articles ------------------------------------------------------

def _section_sentences(article, section: int) -> list[tuple[int, int, str]]:
    return [(p, i, t) for p, para in enumerate(article.sections[section].paragraphs)
            for i, t in enumerate(para)]


def _find_passage(flat, doc_text: str, skip: int | None):
    """(start, end) of the run of consecutive sentences whose text (without `skip`) is doc_text."""
    for a in range(len(flat)):
        if skip is not None and a > skip:
            break
        parts = []
        for b in range(a, len(flat)):
            if b != skip:
                parts.append(flat[b][2])
            if skip is not None and b < skip:
                continue
            text = " ".join(parts)
            if text == doc_text:
                return a, b + 1
            if len(text) > len(doc_text):
                break
    return None


def _truncated_sentence(flat, doc_text: str):
    """(k, k + 1) when doc_text is a sentence k cut short by the document cap (its first pieces)."""
    for k, (_, _, text) in enumerate(flat):
        if doc_text and len(doc_text) < len(text) and text.startswith(doc_text):
            return k, k + 1
    return None


def _passages(rows, articles, task: str):
    """(row, article, sentences of its passage) for every ICT/BFS row, checking that the passage
    is a run of consecutive sentences of the one section doc_section."""
    out = []
    for r in rows:
        article = articles[r["doc_page_id"]]
        assert r["doc_title"] == article.title
        assert 0 <= r["doc_section"] < len(article.sections)
        flat = _section_sentences(article, r["doc_section"])
        skip = None
        if task == "ict" and not r["query_in_doc"]:
            assert r["query_section"] == r["doc_section"], r["pair_id"]
            skip = [(p, i) for p, i, _ in flat].index((r["query_paragraph"], r["query_sentence"]))
            assert flat[skip][2] == r["query"]
        span = _find_passage(flat, r["doc_text"], skip) or _truncated_sentence(flat, r["doc_text"])
        assert span is not None, (f"{task} {r['pair_id']}: doc_text is not a run of sentences of "
                                  f"section {r['doc_section']} of {article.title!r}")
        if task == "ict":
            where = [(p, i) for p, i, _ in flat].index((r["query_paragraph"], r["query_sentence"]))
            assert span[0] <= where < span[1], f"{r['pair_id']}: the query is not in its passage"
        out.append((r, article, flat[span[0]:span[1]]))
    return out


@pytest.mark.parametrize("task", TASKS)
def test_passages_stay_in_one_section_and_respect_the_token_budget(
        gensim_build, gensim_articles, tokenizer, task):
    rows = read_rows(gensim_build, task)
    count = tokenizer.count_tokens
    over = 0
    by_page = defaultdict(dict)
    for r, article, sentences in _passages(rows, gensim_articles, task):
        used = sum(count(t) for _, _, t in sentences)
        if count(article.title) + used + 3 > DOC_MAX:
            assert len(sentences) == 1, (f"{r['pair_id']}: {len(sentences)} sentences, "
                                         f"{used} tokens + title exceed {DOC_MAX}")
            over += 1
        in_doc = [t for p, i, t in sentences if task != "ict" or r["query_in_doc"]
                  or (p, i) != (r["query_paragraph"], r["query_sentence"])]
        if len(in_doc) == 1 and r["doc_text"] != in_doc[0]:  # one sentence, cut by the cap
            assert r["doc_tokens"] == count(article.title) + count(r["doc_text"]) <= DOC_MAX - 3
            in_doc = [r["doc_text"]]
        assert r["doc_tokens"] == count(article.title) + sum(count(t) for t in in_doc), \
            f"{r['pair_id']}: doc_tokens is not title + document sentences, counted one by one"
        if task == "ict":
            assert len(sentences) >= 2, "ICT needs a passage of two sentences or more"
            assert r["query_section"] == r["doc_section"]
        elif task == "bfs":
            assert r["doc_section"] != 0 and r["query_section"] == 0, "BFS: lead x body"
            assert (0, r["query_paragraph"], r["query_sentence"]) in {
                (0, p, i) for p, i, _ in _section_sentences(article, 0)}
        by_page[r["doc_page_id"]][r["doc_passage"]] = (r["doc_section"], sentences, used)
    assert over <= 0.01 * len(rows)
    if task == "bfs":  # every body passage is there: check that packing is greedy
        checked = 0
        for page_id, passages in by_page.items():
            budget = DOC_MAX - count(gensim_articles[page_id].title) - 3
            for k, (section, sentences, used) in passages.items():
                nxt = passages.get(k + 1)
                if nxt and nxt[0] == section:
                    checked += 1
                    assert used + count(nxt[1][0][2]) > budget, \
                        f"page {page_id}: passage {k + 1}'s first sentence would have fit in {k}"
        assert checked > 100


def test_ict_documents_leave_out_the_query(gensim_build, gensim_articles):
    rows = read_rows(gensim_build, "ict")
    assert not any(r["query_in_doc"] for r in rows), "ict_keep_rate 0 keeps no query"
    # _passages checks that each document is its passage without the query's position; the
    # query's text may then only show up again where another sentence of the passage holds it
    unexplained = []
    for r, _, sentences in _passages(rows, gensim_articles, "ict"):
        if r["query"] in r["doc_text"]:
            others = [t for p, i, t in sentences
                      if (p, i) != (r["query_paragraph"], r["query_sentence"])]
            if not any(r["query"] in t for t in others):
                unexplained.append((r["pair_id"], r["query"]))
    assert not unexplained


def test_ict_keep_rate_keeps_about_half_deterministically(gensim_build_seed1, enwiki_gensim,
                                                          gensim_articles, tokenizer):
    rows = read_rows(gensim_build_seed1, "ict")
    kept = [r for r in rows if r["query_in_doc"]]
    assert 0.45 < len(kept) / len(rows) < 0.55, f"{len(kept)} of {len(rows)} keep the query"
    for r in kept:
        assert r["query"] in r["doc_text"]
    _passages(rows, gensim_articles, "ict")  # kept: the whole passage; else: without the query
    expected = reference_rows(enwiki_gensim.articles, ["ict"],
                              PairConfig(seed=1, ict_keep_rate=0.5), tokenizer)["ict"]
    assert_rows_equal(rows, expected, "ict --seed 1 --ict-keep-rate 0.5")


# ---- 6. WLP on the bundled sample -----------------------------------------------------------

def test_wlp_follows_a_chain_of_three_redirects(sample_build, sample_articles):
    rows = read_rows(sample_build, "wlp")
    assert len(rows) > 100
    hits = [r for r in rows if r["query_title"] == "Vell Valley University"
            and r["doc_title"] == "Ardmere"]
    assert len(hits) == 1, [(r["query_title"], r["doc_title"], r["link_anchor"]) for r in rows
                            if r["doc_title"] == "Ardmere"]
    pair = hits[0]
    assert pair["link_anchor"] == "university" and pair["link_in_doc"] is True
    ardmere = next(a for a in sample_articles if a.title == "Ardmere")
    link = next(l for l in ardmere.links if l.raw_target == "VVU")
    assert link.target == "Vell Valley University" and link.anchor == "university"
    sentence = ardmere.sections[link.section].paragraphs[link.paragraph][link.sentence]
    assert sentence[link.start:link.end] == "university"
    assert sentence in pair["doc_text"]
    assert pair["doc_section"] == link.section
    university = next(a for a in sample_articles if a.title == "Vell Valley University")
    assert pair["query_page_id"] == university.id and pair["doc_page_id"] == ardmere.id
    lead = [t for p in university.sections[0].paragraphs for t in p]
    assert pair["query"] in lead and pair["query_section"] == 0


def test_wlp_redirect_cycles_and_self_links_give_no_pairs(sample_build, sample_articles):
    rows = read_rows(sample_build, "wlp")
    titles = {a.title for a in sample_articles}
    cycle = {"Vell Bridge Trust", "Vell Bridge Company"}
    assert not cycle & titles
    assert not [r for r in rows if r["query_title"] in cycle or r["link_anchor"] in cycle]
    assert all(r["query_page_id"] != r["doc_page_id"] for r in rows)
    assert all(r["query_title"] in titles and r["doc_title"] in titles for r in rows)
    # Kessingham links the cycle: its link stays unresolved and leads nowhere
    kessingham = next(a for a in sample_articles if a.title == "Kessingham")
    assert any(l.target == "Vell Bridge Trust" for l in kessingham.links)
    # one pair per (query page, document page)
    pairs = Counter((r["query_page_id"], r["doc_page_id"]) for r in rows)
    assert max(pairs.values()) == 1


def test_wlp_sample_equals_the_in_memory_reference(sample_build, sample_articles):
    expected = reference_rows(sample_articles, ["wlp"], PairConfig())["wlp"]
    assert_rows_equal(read_rows(sample_build, "wlp"), expected, "sample wlp, defaults")


def test_wlp_docs_per_page_cap(sample_build, sample_build_cap1, sample_articles):
    rows = read_rows(sample_build_cap1, "wlp")
    per_query = Counter(r["query_page_id"] for r in rows)
    assert per_query and max(per_query.values()) == 1
    uncapped = read_rows(sample_build, "wlp")
    assert set(per_query) == {r["query_page_id"] for r in uncapped}, \
        "the cap keeps one document for every query page that had some"
    assert {r["pair_id"] for r in rows} <= {r["pair_id"] for r in uncapped}
    expected = reference_rows(sample_articles, ["wlp"], PairConfig(wlp_docs_per_page=1))["wlp"]
    assert_rows_equal(rows, expected, "sample wlp, --wlp-docs-per-page 1")


@pytest.mark.parametrize("task", ["ict", "bfs"])
def test_pairs_per_page_cap(sample_build, sample_build_cap1, sample_articles, task):
    rows = read_rows(sample_build_cap1, task)
    per_page = Counter(r["doc_page_id"] for r in rows)
    assert per_page and max(per_page.values()) == 2
    uncapped = read_rows(sample_build, task)
    assert len(uncapped) > len(rows)
    assert {r["pair_id"] for r in rows} <= {r["pair_id"] for r in uncapped}
    expected = reference_rows(sample_articles, [task], PairConfig(pairs_per_page=2))[task]
    assert_rows_equal(rows, expected, f"sample {task}, --pairs-per-page 2")


# ---- 7. verify --------------------------------------------------------------------------------

def test_verify_passes_on_fresh_builds(gensim_build, sample_build):
    for folder in (gensim_build, sample_build):
        result = run_cli("verify", folder)
        assert result.returncode == 0, describe(result)
        assert result.stdout.startswith("ok: "), describe(result)
        # stats.json, README.md; with --vocab spm.model and spm.vocab
        files = len(load_json(folder / "manifest.json")["shards"]) + \
            (4 if folder == gensim_build else 2)
        assert f"{files} files" in result.stdout


def _copy_build(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _first_shard(folder: Path, fmt: str) -> Path:
    entry = next(e for e in load_json(folder / "manifest.json")["shards"] if e["format"] == fmt)
    return folder / entry["path"]


@pytest.mark.parametrize("fmt", ["parquet", "tfrecord"])
def test_verify_catches_a_flipped_byte(sample_build, tmp_path, fmt):
    folder = _copy_build(sample_build, tmp_path / "b")
    shard = _first_shard(folder, fmt)
    data = bytearray(shard.read_bytes())
    data[len(data) // 2] ^= 0x01
    shard.write_bytes(bytes(data))
    assert_one_line_error(run_cli("verify", folder), shard.name)


def test_verify_catches_a_deleted_shard(sample_build, tmp_path):
    folder = _copy_build(sample_build, tmp_path / "b")
    shard = _first_shard(folder, "parquet")
    shard.unlink()
    assert_one_line_error(run_cli("verify", folder), shard.name, "missing")


def test_verify_catches_an_extra_shard(sample_build, tmp_path):
    folder = _copy_build(sample_build, tmp_path / "b")
    extra = folder / "parquet" / "ict" / "part-00009-of-00009.parquet"
    shutil.copy(_first_shard(folder, "parquet"), extra)
    assert_one_line_error(run_cli("verify", folder), extra.name)


def test_a_task_folder_reads_with_pandas(sample_build):
    """DIR/parquet/<task> holds Parquet files only, so a Parquet reader takes the folder."""
    import pandas as pd

    stats = load_json(sample_build / "stats.json")
    for task in TASKS:
        frame = pd.read_parquet(sample_build / "parquet" / task)
        assert len(frame) == stats["tasks"][task]["pairs"] > 0, task
        assert sorted(frame["pair_id"]) == [r["pair_id"] for r in read_rows(sample_build, task)]


def test_an_older_build_in_the_old_layout_is_still_read(sample_build, tmp_path):
    """A build of the layout before the per-format trees (DIR/<task>/ holding both formats) and
    of pair schema version 1 (`anchor`, no ids): verify passes (and still finds an unlisted
    shard), stats and show print what they print for the same build in the new layout."""
    folder = to_schema_v1(to_old_layout(_copy_build(sample_build, tmp_path / "old")))
    assert not (folder / "parquet").exists() and (folder / "ict").is_dir()
    names = pq.read_schema(next((folder / "wlp").glob("*.parquet"))).names
    assert "anchor" in names and "link_anchor" not in names and "doc_id" not in names
    assert run_cli("verify", folder).returncode == 0
    for command in (["stats"], ["show", "--task", "wlp", "-n", "3"], ["show", "--task", "ict"]):
        new, old = run_cli(*command[:1], sample_build, *command[1:]), \
            run_cli(*command[:1], folder, *command[1:])
        assert new.returncode == old.returncode == 0, describe(old)
        assert old.stdout.replace(str(folder), "DIR") == new.stdout.replace(str(sample_build),
                                                                           "DIR"), command
        assert "[" in old.stdout or command == ["stats"]
    extra = folder / "ict" / "part-00009-of-00009.parquet"
    shutil.copy(_first_shard(folder, "parquet"), extra)
    assert_one_line_error(run_cli("verify", folder), extra.name)


def test_the_trainer_reads_an_older_build_in_the_old_layout(gensim_build, tmp_path):
    """trainer.data finds the shards of both layouts, per format, and makes the same batches
    from a build of the old layout and pair schema version 1."""
    from wikipairs.trainer import data

    old = to_schema_v1(to_old_layout(_copy_build(gensim_build, tmp_path / "old")))
    for fmt, suffix in (("parquet", ".parquet"), ("tfrecord", ".tfrecord.gz")):
        new_files, old_files = data.find_shards(gensim_build, None, fmt), \
            data.find_shards(old, None, fmt)
        assert list(new_files) == list(old_files) == list(TASKS)
        assert {t: [os.path.basename(f) for f in fs] for t, fs in old_files.items()} == \
            {t: [os.path.basename(f) for f in shard_files(gensim_build, t, suffix)]
             for t in TASKS}
        assert all(f.startswith(str(old / t) + os.sep) for t, fs in old_files.items()
                   for f in fs)
    # a format's tree given as the data folder works too
    assert list(data.find_shards(gensim_build / "parquet", None, "parquet")) == list(TASKS)
    options = dict(batch_size=8, seed=3, repeat=False, prefetch=False)
    batches = [list(data.make_batches(d, data_format="parquet", **options))
               for d in (gensim_build, old)]
    assert len(batches[0]) > 10 and len(batches[0]) == len(batches[1])
    for a, b in zip(*batches):
        assert (a["query_ids"] == b["query_ids"]).all() and (a["doc_ids"] == b["doc_ids"]).all()
    tf_batches = [list(data.tf_dataset(d, **{**options, "prefetch": True}).take(3))
                  for d in (gensim_build, old)]  # the TFRecord reader, version 1 records
    assert len(tf_batches[0]) == len(tf_batches[1]) == 3
    for a, b in zip(*tf_batches):
        assert (a["query_ids"].numpy() == b["query_ids"].numpy()).all()
        assert (a["doc_ids"].numpy() == b["doc_ids"].numpy()).all()


def test_ids_passage_id_and_doc_id(gensim_build, gensim_build_seed1):
    """passage_id: one per page passage, the same in ICT, BFS and WLP and under another seed;
    doc_id: equal exactly where the documents (title and text) are; schema version 2."""
    rows = [r for task in TASKS for r in read_rows(gensim_build, task)]
    passage_of, ids_of = {}, defaultdict(set)
    for r in rows:
        passage_of.setdefault(r["passage_id"], set()).add((r["doc_page_id"], r["doc_passage"]))
        ids_of[(r["doc_page_id"], r["doc_passage"])].add(r["passage_id"])
    assert all(len(v) == 1 for v in passage_of.values()), "one passage per passage_id"
    assert all(len(v) == 1 for v in ids_of.values()), "one passage_id per passage, in any task"
    tasks_of = defaultdict(set)
    for r in rows:
        tasks_of[r["passage_id"]].add(r["task"])
    assert sum(1 for t in tasks_of.values() if t == set(TASKS)) >= 20, "shared by all tasks"
    docs_of, by_doc = defaultdict(set), defaultdict(set)
    for r in rows:
        docs_of[r["doc_id"]].add((r["doc_title"], r["doc_text"]))
        by_doc[(r["doc_title"], r["doc_text"])].add(r["doc_id"])
        assert r["doc_id"] == hashlib.sha1(
            f"{r['doc_title']}\n{r['doc_text']}".encode()).hexdigest()[:16]
    assert all(len(v) == 1 for v in docs_of.values()) and all(len(v) == 1 for v in by_doc.values())
    assert len(docs_of) < len(rows), "BFS and WLP pairs share documents"
    ict = [r for r in rows if r["task"] == "ict"]
    bfs = {r["passage_id"]: r for r in rows if r["task"] == "bfs"}
    shared = [(r, bfs[r["passage_id"]]) for r in ict if r["passage_id"] in bfs]
    assert shared and all(a["doc_id"] != b["doc_id"] for a, b in shared), \
        "an ICT document lacks its query sentence: another document, the same passage"
    seed1 = {(r["doc_page_id"], r["doc_passage"]): r["passage_id"]
             for r in read_rows(gensim_build_seed1, "ict")}  # seed 1, ICT keep rate 0.5
    common = [k for k in seed1 if k in ids_of]  # seed 0 and 1 skip other short queries
    assert len(common) > 1000
    assert all(ids_of[k] == {seed1[k]} for k in common)
    manifest = load_json(gensim_build / "manifest.json")
    assert manifest["schema_version"] == 3
    for entry in manifest["shards"]:
        if entry["format"] == "parquet":
            schema = pq.read_schema(gensim_build / entry["path"])
            assert schema.metadata[b"schema_version"] == b"3"
            assert "link_anchor" in schema.names and "anchor" not in schema.names
    from tfexample import decode_example
    from wikipairs.shards.tfrecord import read_tfrecords

    records = [decode_example(r) for r in
               read_tfrecords(shard_files(gensim_build, "wlp", ".tfrecord.gz")[0])]
    assert records and "link_anchor" in records[0] and "anchor" not in records[0]
    assert all(len(r["passage_id"][0]) == len(r["doc_id"][0]) == 16 for r in records)


def test_verify_catches_a_missing_manifest(sample_build, tmp_path):
    folder = _copy_build(sample_build, tmp_path / "b")
    (folder / "manifest.json").unlink()
    assert_one_line_error(run_cli("verify", folder), "manifest.json")


def test_verify_catches_a_changed_stats_file(sample_build, tmp_path):
    folder = _copy_build(sample_build, tmp_path / "b")
    with open(folder / "stats.json", "a", encoding="utf-8") as f:
        f.write(" ")
    assert_one_line_error(run_cli("verify", folder), "stats.json")


# ---- 7b. the vocabulary copied into the output folder -----------------------------------------

def test_the_vocabulary_is_copied_and_listed(gensim_build, gensim_build_seed1, vocab_model):
    manifest = load_json(gensim_build / "manifest.json")
    assert manifest["config"]["vocab"] == str(vocab_model), "the given path, for reference"
    for key, name, source in (("vocab", "spm.model", vocab_model),
                              ("vocab_pieces", "spm.vocab", vocab_model.with_suffix(".vocab"))):
        copy = gensim_build / name
        assert copy.read_bytes() == source.read_bytes(), name
        entry = manifest[key]
        assert entry["path"] == name and entry["bytes"] == copy.stat().st_size
        assert entry["sha256"] == hashlib.sha256(copy.read_bytes()).hexdigest()
        assert entry["source"] == str(source)
    # A model without its .vocab beside it: the model alone.
    seed1 = load_json(gensim_build_seed1 / "manifest.json")
    assert "vocab_pieces" not in seed1 and not (gensim_build_seed1 / "spm.vocab").exists()
    assert (gensim_build_seed1 / "spm.model").read_bytes() == vocab_model.read_bytes()
    assert "`spm.model`" in (gensim_build / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", ["spm.model", "spm.vocab"])
def test_verify_catches_a_flipped_byte_in_the_vocabulary(gensim_build, tmp_path, name):
    folder = _copy_build(gensim_build, tmp_path / "b")
    assert run_cli("verify", folder).returncode == 0
    copy = folder / name
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0x01
    copy.write_bytes(bytes(data))
    assert_one_line_error(run_cli("verify", folder), name, "sha256")


def test_a_copied_folder_finds_its_vocabulary_without_the_original(gensim_build_seed1, tmp_path):
    from wikipairs.trainer.data import manifest_vocab  # what `train` uses without --vocab

    source = Path(load_json(gensim_build_seed1 / "manifest.json")["config"]["vocab"])
    folder = _copy_build(gensim_build_seed1, tmp_path / "elsewhere" / "pairs")
    moved = tmp_path / "moved.model"
    shutil.move(source, moved)  # the build's own copy of the model: no other test reads it
    try:
        assert not source.exists()
        assert manifest_vocab(str(folder)) == str(folder / "spm.model")
        assert manifest_vocab(str(gensim_build_seed1)) == str(gensim_build_seed1 / "spm.model")
        assert run_cli("verify", folder).returncode == 0
    finally:
        shutil.move(moved, source)


def test_older_manifests_still_find_the_recorded_vocabulary(gensim_build, vocab_model, tmp_path):
    """A build before the copy: no "vocab" entry, the model at the path in its config."""
    from wikipairs.trainer.data import manifest_vocab

    folder = _copy_build(gensim_build, tmp_path / "old")
    manifest = load_json(folder / "manifest.json")
    for key in ("vocab", "vocab_pieces"):
        del manifest[key]
        (folder / ("spm.model" if key == "vocab" else "spm.vocab")).unlink()
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert manifest_vocab(str(folder)) == str(vocab_model)
    result = run_cli("verify", folder)
    assert result.returncode == 0, describe(result)


def _fake_build(folder: Path, vocab: dict | None = None) -> Path:
    """A folder with a build manifest listing only its (copied) vocabulary files."""
    folder.mkdir(parents=True)
    (folder / "stats.json").write_text("{}", encoding="utf-8")
    manifest = {"tool": "wikipairs build", "shards": [],
                "stats": {"path": "stats.json", "sha256": "x"}, **(vocab or {})}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return folder


def test_a_rerun_replaces_its_copied_vocabulary_and_nothing_else(vocab_model, tmp_path):
    from wikipairs.shards.output import OutputError, prepare_output

    model = str(vocab_model)
    other = tmp_path / "other.model"
    other.write_bytes(b"another model")
    # The previous run's copy (listed): removed with the old manifest, whatever this run copies.
    for given in (model, str(other), None):
        folder = _fake_build(tmp_path / f"own-{bool(given)}-{given == model}", {
            "vocab": {"path": "spm.model", "sha256": "x", "source": "/gone/spm.model"}})
        (folder / "spm.model").write_bytes(b"the old copy")
        prepare_output(str(folder), "wikipairs build", vocab=given)
        assert sorted(p.name for p in folder.iterdir()) == ["stats.json"]
    # Not listed (a run stopped before its manifest, or the user's): replaced only where it holds
    # the same bytes; else one error, nothing deleted.
    folder = _fake_build(tmp_path / "same")
    shutil.copy(vocab_model, folder / "spm.model")
    prepare_output(str(folder), "wikipairs build", vocab=model)
    assert (folder / "spm.model").read_bytes() == vocab_model.read_bytes()
    folder = _fake_build(tmp_path / "users")
    (folder / "spm.model").write_bytes(b"mine")
    with pytest.raises(OutputError, match="spm.model: not written by wikipairs build.*nothing"):
        prepare_output(str(folder), "wikipairs build", vocab=model)
    assert sorted(p.name for p in folder.iterdir()) == ["manifest.json", "spm.model",
                                                        "stats.json"]
    prepare_output(str(folder), "wikipairs build")  # a run without --vocab leaves it alone
    assert (folder / "spm.model").read_bytes() == b"mine"
    # The model given was the folder's own spm.model: listed, but never removed.
    folder = _fake_build(tmp_path / "source", {})
    shutil.copy(vocab_model, folder / "spm.model")
    manifest = load_json(folder / "manifest.json")
    manifest["vocab"] = {"path": "spm.model", "sha256": "x", "source": str(folder / "spm.model")}
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(OutputError, match="spm.model"):
        prepare_output(str(folder), "wikipairs build", vocab=str(other))
    prepare_output(str(folder), "wikipairs build", vocab=str(folder / "spm.model"))
    assert (folder / "spm.model").read_bytes() == vocab_model.read_bytes()


# ---- 8. failed builds -------------------------------------------------------------------------

def test_truncated_build_fails_without_a_manifest(truncated_runs):
    folder, failed, after_failure, _ = truncated_runs
    assert failed.returncode == 2, describe(failed)
    assert "manifest.json" not in after_failure, after_failure
    assert "stats.json" not in after_failure, after_failure
    last = failed.stderr.strip().splitlines()[-1]
    assert TRUNCATED in last and "truncated" in last.lower(), describe(failed)


def test_truncated_build_error_is_one_line(truncated_runs):
    _, failed, _, _ = truncated_runs
    assert_one_line_error(failed, TRUNCATED, "truncated")


def test_truncated_build_error_names_no_beam_step(truncated_runs):
    _, failed, _, _ = truncated_runs
    last = failed.stderr.strip().splitlines()[-1]
    assert last.startswith("wikipairs: error: ") and "[while running" not in last, last


def test_truncated_build_succeeds_with_allow_truncated(truncated_runs):
    folder, _, _, allowed = truncated_runs
    assert allowed.returncode == 0, describe(allowed)
    stats = load_json(folder / "stats.json")
    assert stats["counters"].get("truncated_files") == 1
    assert stats["counters"]["pages_read"] == 933
    assert stats["lang"] == "el" and stats["tasks"]["ict"]["pairs"] > 1000
    assert run_cli("verify", folder).returncode == 0


def test_missing_input_is_one_line(tmp_path):
    missing = tmp_path / "nope.xml.bz2"
    out = tmp_path / "out"
    assert_one_line_error(run_cli("build", "-i", missing, "-o", out, "--workers", "1"),
                          str(missing), "no such file")
    assert not (out / "manifest.json").exists()


@pytest.mark.parametrize("args, fragment", [
    (["--task", "ict,foo"], "--task"),
    (["--task", ""], "--task"),
    (["--format", "csv"], "--format"),
    (["--ict-keep-rate", "1.5"], "--ict-keep-rate"),
    # Options neither wikipairs nor Beam knows: refused, with the closest of either's options
    (["--wokers", "1"], "'--wokers'. did you mean '--workers'?"),
    (["--num-shard", "3"], "'--num-shard'. did you mean '--num-shards'?"),
    (["--temp_locaton", "gs://bucket/tmp"], "'--temp_locaton'. did you mean '--temp_location'?"),
    (["--num_workers", "many"], "--num_workers"),  # an option of Beam's with a bad value
    (["stray"], "stray"),
])
def test_bad_options_are_one_line(tmp_path, args, fragment):
    out = tmp_path / "out"
    assert_one_line_error(run_cli("build", "-o", out, *args), fragment)
    assert not out.exists()


def test_output_that_is_a_file_is_one_line(tmp_path):
    target = tmp_path / "a-file"
    target.write_text("not a folder")
    assert_one_line_error(run_cli("build", "-o", target, "--workers", "1", "--task", "ict"),
                          str(target))
    assert target.read_text() == "not a folder"


def test_missing_vocab_is_one_line(tmp_path):
    model = tmp_path / "none.model"
    assert_one_line_error(run_cli("build", "-o", tmp_path / "out", "--vocab", model,
                                  "--workers", "1"), str(model))


# ---- 9. Dataflow: dry run offline, and the staged package -------------------------------------

def test_dataflow_dry_run_offline(tmp_path):
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    env = dict(os.environ, NLTK_DATA=str(NLTK_DATA), PYTHONIOENCODING="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "wikipairs.cli", "build", "--runner", "DataflowRunner",
         "--dry-run", "--project", "test-project", "--region", "us-central1",
         "--temp_location", "gs://test-bucket/tmp", "-o", "gs://test-bucket/out"],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, describe(result)
    assert "dry run" in result.stdout
    assert list(cwd.iterdir()) == [], "a dry run writes nothing locally"


def test_dataflow_dry_run_with_a_given_package_writes_nothing(tmp_path, staged_wheel):
    out = tmp_path / "out"
    result = run_cli("build", "--runner", "DataflowRunner", "--dry-run", "--project",
                     "test-project", "--region", "us-central1", "--temp_location",
                     "gs://test-bucket/tmp", "-o", out, "--extra_package", staged_wheel,
                     cwd=tmp_path)
    assert result.returncode == 0, describe(result)
    assert "dry run: DataflowRunner job built" in result.stdout, describe(result)
    assert list(tmp_path.iterdir()) == [], "a dry run writes nothing locally"


def _pip_wheel(sdist: Path, wheel_dir: Path) -> Path:
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                             "--no-build-isolation", "--no-cache-dir", "-w", str(wheel_dir),
                             str(sdist)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    _assert_no_packaging_warnings(result)
    (wheel,) = wheel_dir.glob("wikipairs-*.whl")
    return wheel


def _assert_package_layout(wheel: Path) -> None:
    names = set(zipfile.ZipFile(wheel).namelist())
    for needed in ("wikipairs/pipelines/transforms.py", "wikipairs/pipelines/build.py",
                   "wikipairs/schemas/pair.py", "wikipairs/reading/splits.py",
                   "wikipairs/shards/tfrecord.py", "wikipairs/text/wikitext.py", "wikipairs/pairs/tasks.py",
                   "wikipairs/download/http.py",
                   "wikipairs/data/sample.xml.bz2", "wikipairs/pipelines/driver.py", "wikipairs/cli.py"):
        assert needed in names, f"{wheel.name} lacks {needed}"
    tops = {n.split("/")[0] for n in names}
    assert not tops & {"pipelines", "schemas", "trainer", "tests", "tools"}, sorted(tops)


def test_staged_wheel_holds_the_package(staged_wheel):
    _assert_package_layout(staged_wheel)


def test_beam_stager_builds_the_package(tmp_path):
    from apache_beam.runners.portability.stager import Stager

    cwd = os.getcwd()
    try:
        sdist = Stager._build_setup_package(str(REPO / "pyproject.toml"), str(tmp_path))
    finally:
        os.chdir(cwd)
    _assert_package_layout(_pip_wheel(Path(sdist), tmp_path / "wheel"))


# ---- WLP against the raw wikitext ------------------------------------------------------------

_RAW_LINK = re.compile(r"\[\[([^\[\]|]+)(?:\|[^\[\]]*)?\]\]")


def test_every_wlp_document_page_links_to_its_query_page_in_the_raw_wikitext(gensim_build,
                                                                              enwiki_gensim):
    """Independent of the parser: each WLP document page's raw wikitext holds a [[link]] whose
    target, normalized and followed through the dump's redirects, is the query page."""
    from wikipairs.reading import DumpFile

    dump = DumpFile(str(enwiki_gensim.path))
    raw = {page.title: page.text for page in dump.pages() if page.redirect is None}
    redirects = enwiki_gensim.info["redirects"]
    rows = read_rows(gensim_build, "wlp")
    assert len(rows) >= 50  # (links through redirects: see the bundled sample's VVU chain test)
    for row in rows:
        targets = set()
        for match in _RAW_LINK.finditer(raw[row["doc_title"]]):
            parsed = dump.titles.parse(match.group(1))
            if parsed is not None and parsed.ns == 0 and not parsed.interwiki:
                targets.add((parsed.title, redirects.resolve(parsed.title)))
        resolved = {final for _, final in targets}
        assert row["query_title"] in resolved, (row["doc_title"], row["query_title"])
        assert row["query_page_id"] != row["doc_page_id"]
