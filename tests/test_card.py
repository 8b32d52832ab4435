"""The dataset card (README.md) of build and parse output folders (wikipairs/shards/card.py):
its sections, counts equal to stats.json, YAML front matter that Hugging Face `datasets` loads
offline, and a card that never breaks `wikipairs verify`, a re-run or someone's own README.md.

The bundled sample is built and parsed once per module (a few seconds each)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import SAMPLE_DUMP, assert_one_line_error, describe, run_cli, wiki_file
from wikipairs.schemas import ARTICLE, PAIR
from wikipairs.shards.card import CARD, build_card

SECTIONS = ["## The tasks", "## Counts", "## Files", "## Schema", "## How it was made",
            "## License and attribution"]
PARSE_SECTIONS = ["## Counts", "## Files", "## Schema", "## How it was made",
                  "## License and attribution"]


def cli_ok(*args):
    result = run_cli(*args)
    assert result.returncode == 0, describe(result)
    return result


def load_json(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def front_matter(text: str) -> dict:
    yaml = pytest.importorskip("yaml")
    assert text.startswith("---\n"), text[:200]
    return yaml.safe_load(text.split("---\n")[1])


def table_rows(text: str, heading: str) -> dict[str, list[str]]:
    """The first Markdown table under `heading`: first cell -> the other cells."""
    section = text.split(heading + "\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip("|").split("|") for line in section.splitlines() if line.startswith("|")]
    return {cells[0].strip(): [c.strip() for c in cells[1:]] for cells in rows[2:]}


def number(cell: str) -> float:
    return float(cell.replace(",", ""))


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("card") / "build"
    cli_ok("build", "-q", "-o", out, "--workers", "1", "--seed", "7")
    return out


@pytest.fixture(scope="module")
def parsed(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("card") / "parse"
    cli_ok("parse", "-q", "-o", out)
    return out


# ---- the build card ---------------------------------------------------------------------------

def test_build_card_says_what_how_and_under_which_license(built):
    text = (built / CARD).read_text(encoding="utf-8")
    manifest, stats = load_json(built / "manifest.json"), load_json(built / "stats.json")
    positions = [text.index(s) for s in SECTIONS]
    assert positions == sorted(positions), "sections in order"
    assert "Pre-training Tasks for Embedding-based Large-scale Retrieval" in text
    assert "ICLR 2020" in text
    for name in ("Inverse Cloze Task (ICT)", "Body First Selection (BFS)",
                 "Wiki Link Prediction (WLP)"):
        assert name in text
    assert set(table_rows(text, "## Schema")) == {f"`{f.name}`" for f in PAIR}
    assert f"Pair schema version {manifest['schema_version']} " in text.split("## Schema")[1]
    assert "- Seed: 7 " in text and "`wikipairs build -q -o " in text
    assert f"- Language: `{stats['lang']}`" in text
    assert f"- Sentence splitter: `{stats['sentence_splitter']}`" in text
    assert f"`{stats['tokens']}`" in text
    [source] = manifest["inputs"]
    inputs = table_rows(text, "Input dump files:")
    assert inputs == {f"`{SAMPLE_DUMP.name}`": [f"{source['bytes']:,}", f"`{source['sha256']}`"]}
    assert "CC BY-SA 4.0" in text and "GFDL" in text
    assert "[enwiki](https://en.wikipedia.org)" in text  # the wiki, from the dump's siteinfo


def task_table(built, heading: str) -> tuple[str, dict, dict]:
    """(card text, stats.json, rows of the card's per-task table under `heading`)."""
    text = (built / CARD).read_text(encoding="utf-8")
    rows = table_rows(text, heading)
    assert list(rows) == ["ict", "bfs", "wlp"]
    return text, load_json(built / "stats.json"), rows


def test_build_card_counts_are_those_of_stats_json(built):
    _, stats, rows = task_table(built, "## Counts")
    for task, cells in rows.items():
        s = stats["tasks"][task]
        assert [number(c) for c in cells[:4]] == [s["pairs"], s["tokens"],
                                                  s["mean_query_tokens"], s["mean_doc_tokens"]]
        shards = {p.name.split(".")[0] for fmt in ("parquet", "tfrecord")
                  for p in (built / fmt / task).iterdir()}
        assert number(cells[4]) == len(shards)


def test_build_card_shows_both_splits(built):
    """Issue 20: the train and eval counts per task, as stats.json has them."""
    text, stats, rows = task_table(built, "## Splits")
    for task, cells in rows.items():
        s = stats["tasks"][task]
        assert [number(c) for c in cells] == [s["splits"]["train"], s["splits"]["eval"],
                                              s["eval_dropped_query_on_train_page"]]
    assert "5% of pages" in text and "`validation`" in text


def test_build_card_front_matter_names_a_parquet_config_per_task(built):
    """Each task: `train` its train shards, `validation` its eval shards after them (issue 20),
    every file named, together exactly the task's Parquet shards of the manifest."""
    meta = front_matter((built / CARD).read_text(encoding="utf-8"))
    assert meta["license"] == "cc-by-sa-4.0" and meta["language"] == ["en"]
    assert "text-retrieval" in meta["task_categories"]
    assert meta["size_categories"] == ["n<1K"]
    assert [c["config_name"] for c in meta["configs"]] == ["ict", "bfs", "wlp"]
    stats, manifest = load_json(built / "stats.json"), load_json(built / "manifest.json")
    for config in meta["configs"]:
        task = config["config_name"]
        files = sorted(e["path"] for e in manifest["shards"]
                       if e["path"].startswith(f"parquet/{task}/"))
        train = stats["num_shards"] if task == "wlp" else stats["splits"]
        assert config["data_files"] == [{"split": "train", "path": files[:train]},
                                         {"split": "validation", "path": files[train:]}]
        assert len(files) > train


def test_files_without_rows_are_left_out_of_the_configs(built):
    """`datasets` cannot read a Parquet file without rows ("BatchSize must be greater than 0"):
    an empty shard is not named, a split with no rows (no eval pairs) not given."""
    manifest, stats = load_json(built / "manifest.json"), load_json(built / "stats.json")
    empty = {"parquet/ict/part-00000-of-00003.parquet", "parquet/ict/part-00002-of-00003.parquet"}
    for entry in manifest["shards"]:
        if entry["path"] in empty:
            entry["rows"] = 0
    ict = front_matter(build_card(manifest, stats))["configs"][0]
    assert ict == {"config_name": "ict", "data_files": [
        {"split": "train", "path": ["parquet/ict/part-00001-of-00003.parquet"]}]}


def load_offline(folder: Path, config: str, cache: Path, data_dir: bool = False) -> int:
    """Rows of `datasets.load_dataset(folder, config)["train"]` (data_dir: of
    `datasets.load_dataset(config, data_dir=folder)`), in a fresh interpreter where the Hub
    cannot be reached (datasets reads these variables when it is imported)."""
    pytest.importorskip("datasets")
    env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", HF_HOME=str(cache))
    call = "(sys.argv[2], data_dir=sys.argv[1])" if data_dir else "(sys.argv[1], sys.argv[2])"
    code = f"import sys, datasets; print(datasets.load_dataset{call}['train'].num_rows)"
    done = subprocess.run([sys.executable, "-c", code, str(folder), config], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return int(done.stdout.split()[-1])


def load_splits(folder: Path, configs: list[str], cache: Path) -> dict[str, dict[str, list]]:
    """config -> split -> the `split` column of `datasets.load_dataset(folder, config)`, in a
    fresh interpreter where the Hub cannot be reached (as load_offline)."""
    pytest.importorskip("datasets")
    env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", HF_HOME=str(cache))
    code = ("import json, sys, datasets; print(json.dumps({c: {k: list(v['split']) for k, v in "
            "datasets.load_dataset(sys.argv[1], c).items()} for c in sys.argv[2:]}))")
    done = subprocess.run([sys.executable, "-c", code, str(folder), *configs], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_datasets_loads_train_and_validation_of_every_task_offline(built, tmp_path):
    """Issue 20: `validation` holds exactly the eval pairs, `train` the train pairs."""
    stats = load_json(built / "stats.json")
    loaded = load_splits(built, ["ict", "bfs", "wlp"], tmp_path / "hf")
    for task, splits in loaded.items():
        counts = stats["tasks"][task]["splits"]
        assert sorted(splits) == ["train", "validation"], task
        assert splits["train"] == ["train"] * counts["train"] and counts["train"] > 0, task
        assert splits["validation"] == ["eval"] * counts["eval"] and counts["eval"] > 0, task


def test_datasets_loads_a_task_folder_as_plain_parquet_offline(built, tmp_path):
    """DIR/parquet/<task> holds nothing but Parquet: the generic "parquet" builder takes it."""
    pairs = load_json(built / "stats.json")["tasks"]["wlp"]["pairs"]
    assert load_offline(built / "parquet" / "wlp", "parquet", tmp_path / "hf",
                        data_dir=True) == pairs > 0


def test_the_manifest_lists_the_card_and_verify_passes(built):
    manifest = load_json(built / "manifest.json")
    card = manifest["card"]
    assert card["path"] == CARD and card["bytes"] == (built / CARD).stat().st_size
    result = cli_ok("verify", built)
    assert f"ok: {len(manifest['shards']) + 2} files" in result.stdout, describe(result)


def test_a_second_build_into_the_folder_replaces_the_card(built, tmp_path):
    again = shutil.copytree(built, tmp_path / "again")
    cli_ok("build", "-q", "-o", again, "--workers", "1", "--task", "ict", "--format", "parquet",
           "--eval-percent", "0")
    text = (again / CARD).read_text(encoding="utf-8")
    assert "- Seed: 0 " in text and list(table_rows(text, "## Counts")) == ["ict"]
    [config] = front_matter(text)["configs"]  # no eval split: no eval shards, no validation
    assert config["config_name"] == "ict"
    assert [f["split"] for f in config["data_files"]] == ["train"]
    assert config["data_files"][0]["path"] == sorted(
        f"parquet/ict/{p.name}" for p in (again / "parquet" / "ict").iterdir())
    assert "TFRecord" not in text.split("## Schema")[0]
    cli_ok("verify", again)


def test_without_parquet_the_card_names_no_config(built, tmp_path):
    out = tmp_path / "tfrecord-only"
    cli_ok("build", "-q", "-o", out, "--workers", "1", "--task", "bfs", "--format", "tfrecord")
    assert "configs" not in front_matter((out / CARD).read_text(encoding="utf-8"))


def test_dump_date_and_wiki_come_from_wikimedia_file_names(built):
    manifest, stats = load_json(built / "manifest.json"), load_json(built / "stats.json")
    manifest["inputs"][0]["path"] = "/data/dewiki-20240601-pages-articles-multistream.xml.bz2"
    text = build_card(manifest, stats)  # no siteinfo: the wiki is the file name's
    assert "from the `dewiki` dump of 2024-06-01 (files below)" in text
    assert "# Retrieval pre-training pairs from dewiki" in text


# ---- the parse card ---------------------------------------------------------------------------

def test_parse_card_sections_counts_and_configs(parsed, tmp_path):
    text = (parsed / CARD).read_text(encoding="utf-8")
    positions = [text.index(s) for s in PARSE_SECTIONS]
    assert positions == sorted(positions)
    counts = load_json(parsed / "parse_stats.json")
    rows = table_rows(text, "## Counts")
    for key in ("pages", "articles", "redirects", "sentences", "links"):
        assert number(rows[key][0]) == counts[key], key
    assert {f"`{f.name}`" for f in ARTICLE} <= set(table_rows(text, "### Article"))
    meta = front_matter(text)
    assert meta["license"] == "cc-by-sa-4.0"
    assert [c["config_name"] for c in meta["configs"]] == ["articles", "redirects"]
    assert load_offline(parsed, "articles", tmp_path / "hf") == counts["articles"] > 0


def test_parse_manifest_lists_the_card_and_verify_passes(parsed):
    outputs = [e["path"] for e in load_json(parsed / "manifest.json")["outputs"]]
    assert CARD in outputs
    cli_ok("verify", parsed)


def test_a_failed_parse_leaves_no_card(parsed, tmp_path):
    out = shutil.copytree(parsed, tmp_path / "failed")
    result = run_cli("parse", "-q", "-i", wiki_file("elwiki-truncated.xml.xz"), "-o", out)
    assert result.returncode == 2, describe(result)
    assert not (out / CARD).exists() and not (out / "manifest.json").exists()


# ---- someone's own README.md ------------------------------------------------------------------

@pytest.mark.parametrize("command", ["parse", "build"])
def test_a_run_never_overwrites_a_readme_it_did_not_write(tmp_path, command):
    out = tmp_path / "mine"
    out.mkdir()
    (out / CARD).write_text("# My project\n", encoding="utf-8")
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    args = ["--workers", "1"] if command == "build" else []
    assert_one_line_error(run_cli(command, "-q", "-o", out, *args), str(out / CARD),
                          "not written by wikipairs", "nothing was deleted")
    assert sorted(p.name for p in out.iterdir()) == [CARD, "notes.txt"]
    assert (out / CARD).read_text(encoding="utf-8") == "# My project\n"
