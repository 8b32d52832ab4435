"""`wikipairs export` (wikipairs/export/) and the PyTorch dataset over a build's shards.

One build of the bundled sample per module (a 200-piece vocabulary, so the shards carry token
ids; Parquet only; 3 WLP shards), exported once per target; a copy of it in the layout of older
builds (DIR/<task>/ shards, no doc_id/passage_id, `anchor`) checks the derived ids. Nothing is
downloaded: the sentence-transformers model is a 2-layer BERT made from a local config and a
WordPiece vocabulary written here (HF_HUB_OFFLINE=1).
"""
from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from conftest import NLTK_DATA, assert_one_line_error, describe, run_cli
from wikipairs.export.output import MARKER
from wikipairs.pairs.tasks import doc_id
from wikipairs.export.st import frame_document
from wikipairs.shards.report import task_shards

TASKS = ("ict", "bfs", "wlp")
TARGETS = ("hf", "sentence-transformers", "tevatron", "jsonl", "beir")


def ok(*args, timeout: float = 300) -> subprocess.CompletedProcess:
    result = run_cli(*args, timeout=timeout)
    assert result.returncode == 0, describe(result)
    return result


def shard_rows(folder: Path, task: str) -> list[dict]:
    rows = []
    for shard in task_shards(str(folder), task):
        rows.extend(pq.read_table(shard).to_pylist())
    assert rows, f"no {task} rows in {folder}"
    return rows


def read_jsonl(path: Path) -> list[dict]:
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def doc_ids(rows: list[dict]) -> list[str]:
    """The doc_id each row must be exported with: the shard's, or derived in older builds."""
    return [r.get("doc_id") or doc_id(r["doc_title"], r["doc_text"]) for r in rows]


@pytest.fixture(scope="module")
def build(tmp_path_factory) -> Path:
    work = tmp_path_factory.mktemp("export")
    model = work / "spm.model"
    ok("vocab", "-o", model, "--vocab-size", "200", "-q")
    out = work / "build"
    ok("build", "-o", out, "--vocab", model, "--workers", "1", "--format", "parquet",
       "--num-shards", "3", "-q")
    return out


@pytest.fixture(scope="module")
def old_build(build, tmp_path_factory) -> Path:
    """The build as older versions wrote it: DIR/<task>/ shards without doc_id or passage_id,
    the anchor column named `anchor`."""
    old = tmp_path_factory.mktemp("old") / "build"
    old.mkdir()
    for name in ("manifest.json", "stats.json"):
        shutil.copy(build / name, old / name)
    for task in TASKS:
        (old / task).mkdir()
        for shard in task_shards(str(build), task):
            table = pq.read_table(shard)
            table = table.drop_columns([c for c in ("doc_id", "passage_id", "split")
                                        if c in table.column_names])
            table = table.rename_columns(["anchor" if c == "link_anchor" else c
                                          for c in table.column_names])
            pq.write_table(table, old / task / os.path.basename(shard))
    return old


@pytest.fixture(scope="module")
def exports(build, tmp_path_factory) -> dict[str, Path]:
    """target -> OUT of `wikipairs export BUILD --to target` (all tasks)."""
    base = tmp_path_factory.mktemp("exports")
    outs = {}
    for target in TARGETS:
        out = base / target
        result = ok("export", build, "--to", target, "-o", out)
        assert result.stderr == "", describe(result)
        for task in TASKS:
            assert f"{len(shard_rows(build, task)):,} pairs" in result.stdout, describe(result)
        outs[target] = out
    return outs


def test_every_target_writes_each_task_and_its_marker(build, exports):
    for target, out in exports.items():
        assert sorted(p.name for p in out.iterdir()) == sorted([*TASKS, MARKER]), target
        info = json.loads((out / MARKER).read_text())
        assert info["target"] == target and info["source"] == str(build)
        assert set(info["tasks"]) == set(TASKS)
        assert not list(out.parent.glob(f"{target}.tmp-export-*")), "temporary folder left"


def test_jsonl_has_every_column_of_every_pair(build, exports):
    for task in TASKS:
        rows = shard_rows(build, task)
        lines = read_jsonl(exports["jsonl"] / task / "pairs.jsonl")
        assert len(lines) == len(rows)
        by_id = {line["pair_id"]: line for line in lines}
        assert len(by_id) == len(rows)
        for row, doc_id in zip(rows, doc_ids(rows)):
            line = by_id[row["pair_id"]]
            assert {k: line[k] for k in row} == row  # token id lists too
            assert line["doc_id"] == doc_id
        assert all(isinstance(line["query_ids"], list) and line["query_ids"] for line in lines)


def test_tevatron_train_and_corpus(build, exports):
    for task in TASKS:
        rows = shard_rows(build, task)
        train = read_jsonl(exports["tevatron"] / task / "train.jsonl")
        corpus = read_jsonl(exports["tevatron"] / task / "corpus.jsonl")
        assert len(train) == len(rows)
        assert {t["query_id"] for t in train} == {r["pair_id"] for r in rows}
        docs = {d["docid"]: d for d in corpus}
        assert len(docs) == len(corpus) == len(set(doc_ids(rows)))  # deduplicated
        by_id = {r["pair_id"]: (r, d) for r, d in zip(rows, doc_ids(rows))}
        for t in train:
            row, doc_id = by_id[t["query_id"]]
            assert set(t) == {"query_id", "query", "positive_passages", "negative_passages"}
            assert t["query"] == row["query"] and t["negative_passages"] == []
            [p] = t["positive_passages"]
            assert p == {"docid": doc_id, "title": row["doc_title"], "text": row["doc_text"]}
            assert docs[p["docid"]] == p
    # WLP: many pages link to few query pages' ... documents repeat across pairs
    wlp = shard_rows(build, "wlp")
    assert len(set(doc_ids(wlp))) < len(wlp)


def test_beir_corpus_queries_qrels_are_consistent(build, exports):
    for task in TASKS:
        rows = shard_rows(build, task)
        folder = exports["beir"] / task
        corpus = {d["_id"]: d for d in read_jsonl(folder / "corpus.jsonl")}
        queries = {q["_id"]: q for q in read_jsonl(folder / "queries.jsonl")}
        qrels = (folder / "qrels" / "train.tsv").read_text(encoding="utf-8").splitlines()
        assert qrels[0] == "query-id\tcorpus-id\tscore"
        triples = [line.split("\t") for line in qrels[1:]]
        assert len(triples) == len(rows) == len(queries)
        assert len(corpus) == len(set(doc_ids(rows)))
        for qid, docid, score in triples:
            assert qid in queries and docid in corpus and score == "1"
        assert {(q, d) for q, d, _ in triples} == {(r["pair_id"], d)
                                                   for r, d in zip(rows, doc_ids(rows))}
        for row, doc_id in zip(rows, doc_ids(rows)):
            assert queries[row["pair_id"]]["text"] == row["query"]
            assert corpus[doc_id] == {"_id": doc_id, "title": row["doc_title"],
                                      "text": row["doc_text"]}


def test_hf_loads_with_load_from_disk(build, exports):
    from datasets import load_from_disk

    for task in TASKS:
        rows = shard_rows(build, task)
        splits = load_from_disk(str(exports["hf"] / task))
        assert set(splits) == {"train", "validation"}
        assert {s: len(splits[s]) for s in splits} == {
            "train": sum(r["split"] == "train" for r in rows),
            "validation": sum(r["split"] == "eval" for r in rows)}
        assert set(splits["validation"]["split"]) <= {"eval"}
        assert not set(splits["train"]["query_page_id"]) & set(splits["validation"]["query_page_id"])
        from datasets import concatenate_datasets
        dataset = concatenate_datasets([splits["train"], splits["validation"]])
        assert len(dataset) == len(rows)
        assert set(rows[0]) | {"doc_id", "query_id"} == set(dataset.column_names)
        assert sorted(dataset["pair_id"]) == sorted(r["pair_id"] for r in rows)
        assert list(dataset["query_id"]) == list(dataset["pair_id"])
        first = dataset[0]
        row = next(r for r in rows if r["pair_id"] == first["pair_id"])
        assert {k: first[k] for k in row} == row


def test_sentence_transformers_dataset_columns_and_framing(build, exports):
    from datasets import load_from_disk

    for task in TASKS:
        rows = shard_rows(build, task)
        dataset = load_from_disk(str(exports["sentence-transformers"] / task))
        assert dataset.column_names == ["anchor", "positive"]
        assert len(dataset) == len(rows)
        assert sorted(zip(dataset["anchor"], dataset["positive"])) == sorted(
            (r["query"], f"{r['doc_title']} [SEP] {r['doc_text']}") for r in rows)
    assert frame_document("T", "x", "</s>") == "T </s> x" and frame_document("T", "x", "") == "T x"


TRAIN = """
import json, math, os, sys
import torch
from datasets import load_from_disk
from transformers import BertConfig, BertModel, BertTokenizerFast
from sentence_transformers import SentenceTransformer, SentenceTransformerTrainer
from sentence_transformers import SentenceTransformerTrainingArguments
try:
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from sentence_transformers.sentence_transformer.losses import MultipleNegativesRankingLoss
except ImportError:  # sentence-transformers < 6
    from sentence_transformers.models import Pooling, Transformer
    from sentence_transformers.losses import MultipleNegativesRankingLoss

data, work = sys.argv[1], sys.argv[2]
dataset = load_from_disk(data)
words = sorted({w for text in list(dataset["anchor"]) + list(dataset["positive"])
                for w in text.lower().split() if w.isalpha()})[:300]
chars = "abcdefghijklmnopqrstuvwxyz0123456789.,;:()'-"
vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *chars, *("##" + c for c in chars), *words]
model_dir = os.path.join(work, "tiny-bert")
os.makedirs(model_dir)
with open(os.path.join(work, "vocab.txt"), "w") as f:
    f.write("\\n".join(dict.fromkeys(vocab)) + "\\n")
tokenizer = BertTokenizerFast(vocab_file=os.path.join(work, "vocab.txt"), do_lower_case=True)
config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2,
                    num_attention_heads=2, intermediate_size=64, max_position_embeddings=128)
torch.manual_seed(0)
BertModel(config).save_pretrained(model_dir)
tokenizer.save_pretrained(model_dir)
word = Transformer(model_dir, max_seq_length=64)
model = SentenceTransformer(modules=[word, Pooling(word.get_word_embedding_dimension(), "mean")],
                            device="cpu")
sep = tokenizer("Title [SEP] text")["input_ids"]
before = {k: v.detach().clone() for k, v in model.state_dict().items()}
args = SentenceTransformerTrainingArguments(
    output_dir=os.path.join(work, "run"), max_steps=4, per_device_train_batch_size=8,
    learning_rate=1e-3, report_to="none", save_strategy="no", logging_steps=1, use_cpu=True,
    dataloader_num_workers=0, seed=0, disable_tqdm=True)
trainer = SentenceTransformerTrainer(model=model, args=args, train_dataset=dataset,
                                     loss=MultipleNegativesRankingLoss(model))
result = trainer.train()
changed = sum(not torch.equal(before[k], v) for k, v in model.state_dict().items())
print(json.dumps({"loss": result.training_loss, "steps": result.global_step, "changed": changed,
                  "tensors": len(before), "sep_ids": sep, "sep_id": tokenizer.sep_token_id}))
"""


def test_sentence_transformer_trainer_takes_the_export(exports, tmp_path):
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               HF_HOME=str(tmp_path / "hf-home"), TOKENIZERS_PARALLELISM="false")
    done = subprocess.run([sys.executable, "-c", TRAIN, str(exports["sentence-transformers"] /
                                                            "wlp"), str(tmp_path)],
                          capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-4000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["steps"] == 4
    assert math.isfinite(result["loss"]) and result["loss"] > 0
    assert result["changed"] > result["tensors"] // 2, result
    # "title [SEP] passage" is the build's [CLS] title [SEP] passage [SEP] for a BERT tokenizer
    assert result["sep_ids"].count(result["sep_id"]) == 2, result


def test_old_shards_get_derived_ids(build, old_build, exports, tmp_path):
    out = tmp_path / "old-jsonl"
    ok("export", old_build, "--to", "jsonl", "-o", out, "--task", "wlp,ict")
    assert sorted(p.name for p in out.iterdir()) == ["ict", MARKER, "wlp"]
    for task in ("ict", "wlp"):
        rows = shard_rows(old_build, task)
        assert "doc_id" not in rows[0] and "anchor" in rows[0]
        lines = read_jsonl(out / task / "pairs.jsonl")
        assert [line["doc_id"] for line in lines] == doc_ids(rows)
        assert [line["anchor"] for line in lines] == [r["anchor"] for r in rows]
        if "doc_id" not in shard_rows(build, task)[0]:  # this build has no doc_id either
            assert lines == read_jsonl(exports["jsonl"] / task / "pairs.jsonl")
    beir = tmp_path / "old-beir"
    ok("export", old_build, "--to", "beir", "-o", beir, "--task", "bfs")
    assert len(read_jsonl(beir / "bfs" / "queries.jsonl")) == len(shard_rows(old_build, "bfs"))


def test_output_written_whole_and_never_over_other_files(build, tmp_path):
    other = tmp_path / "mine"
    other.mkdir()
    (other / "notes.txt").write_text("keep")
    assert_one_line_error(run_cli("export", build, "--to", "jsonl", "-o", other),
                          "not written by wikipairs export")
    assert [p.name for p in other.iterdir()] == ["notes.txt"]
    assert_one_line_error(run_cli("export", build, "--to", "jsonl", "-o", build), "refusing")
    out = tmp_path / "out"
    ok("export", build, "--to", "jsonl", "-o", out, "--task", "ict")
    ok("export", build, "--to", "beir", "-o", out, "--task", "bfs")  # its own export: replaced
    assert sorted(p.name for p in out.iterdir()) == ["bfs", MARKER]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine", "out"]


def test_bad_input_is_one_line(build, tmp_path):
    out = tmp_path / "out"
    assert_one_line_error(run_cli("export", tmp_path, "--to", "hf", "-o", out),
                          "not a finished build")
    assert_one_line_error(run_cli("export", build, "--to", "hf", "-o", out, "--task", "ict,qa"),
                          "unknown task 'qa'")
    assert_one_line_error(run_cli("export", build, "--to", "parquet", "-o", out), "--to")
    only_ict = tmp_path / "only-ict"  # a build of one task: another task is not there to export
    (only_ict / "ict").mkdir(parents=True)
    shutil.copy(build / "manifest.json", only_ict)
    stats = json.loads((build / "stats.json").read_text())
    stats["tasks"] = {"ict": stats["tasks"]["ict"]}
    (only_ict / "stats.json").write_text(json.dumps(stats))
    assert_one_line_error(run_cli("export", only_ict, "--to", "jsonl", "-o", out, "--task",
                                  "wlp"), "has no wlp pairs (built: ict)")
    assert not out.exists()


def test_missing_datasets_is_one_line(build, tmp_path):
    code = ("import sys; sys.modules['datasets'] = None\n"
            "from wikipairs.cli import main\n"
            "main(prog_name='wikipairs')")
    out = tmp_path / "out"
    done = subprocess.run([sys.executable, "-c", code, "export", str(build), "--to",
                           "sentence-transformers", "-o", str(out)], capture_output=True,
                          text=True, env=dict(os.environ, NLTK_DATA=str(NLTK_DATA)), timeout=300)
    assert_one_line_error(done, "needs datasets", "pip install 'wikipairs[export]'")
    assert not out.exists() and not list(tmp_path.iterdir())


# ---- PairsIterableDataset ----------------------------------------------------------------------

def test_torch_dataset_every_pair_once_with_workers(build):
    from torch.utils.data import DataLoader
    from wikipairs.export.torch_dataset import PairsIterableDataset

    for task in ("wlp", "ict"):
        rows = shard_rows(build, task)
        dataset = PairsIterableDataset(str(build), task)
        assert dataset.num_rows == len(rows)
        for workers in (0, 2):
            seen = []
            for batch in DataLoader(dataset, batch_size=16, num_workers=workers):
                assert set(batch) == {"pair_id", "query_id", "doc_id", "query", "doc_title",
                                      "doc_text"}
                seen.extend(zip(batch["pair_id"], batch["doc_id"], batch["query"]))
            assert sorted(seen) == sorted(zip((r["pair_id"] for r in rows), doc_ids(rows),
                                              (r["query"] for r in rows))), (task, workers)
    # what workers share: 3 train shards and 1 eval shard, a row group each
    assert len(PairsIterableDataset(str(build), "wlp").units) == 4


def test_torch_dataset_token_ids(build, old_build):
    from torch.utils.data import DataLoader
    from wikipairs.errors import WikipairsError
    from wikipairs.export.rows import ExportError
    from wikipairs.export.torch_dataset import PairsIterableDataset

    rows = {r["pair_id"]: r for r in shard_rows(build, "bfs")}
    dataset = PairsIterableDataset(str(build), "bfs", token_ids=True)
    got = [x for batch in DataLoader(dataset, batch_size=8, num_workers=2, collate_fn=list)
           for x in batch]
    assert len(got) == len(rows)
    for x in got:
        assert set(x) == {"pair_id", "query_ids", "doc_ids"}
        assert x["query_ids"] == rows[x["pair_id"]]["query_ids"]
        assert x["doc_ids"] == rows[x["pair_id"]]["doc_ids"]
    only = PairsIterableDataset(str(old_build), "wlp", columns=["doc_id", "anchor"])
    assert [x["doc_id"] for x in only] == doc_ids(shard_rows(old_build, "wlp"))
    with pytest.raises(ExportError, match="no column nope"):
        PairsIterableDataset(str(build), "ict", columns=["nope"])
    with pytest.raises(WikipairsError, match="not a finished build"):
        PairsIterableDataset(str(build / "ict"), "ict")


def test_torch_dataset_imports_no_tensorflow(build):
    code = textwrap.dedent(f"""
        import json, sys
        from torch.utils.data import DataLoader
        from wikipairs.export.torch_dataset import PairsIterableDataset
        n = sum(len(b["query"]) for b in DataLoader(PairsIterableDataset({str(build)!r}, "ict"),
                                                     batch_size=10))
        print(json.dumps([n, sorted({{m.split(".")[0] for m in sys.modules}}
                                    & {{"tensorflow", "keras", "apache_beam", "jax"}})]))
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    n, loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert n == len(shard_rows(build, "ict")) and loaded == []
