"""The `wikipairs` command: help, version, usage errors, outputs and manifest, a truncated dump."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pyarrow.parquet as pq

from conftest import (SAMPLE_DUMP, assert_one_line_error, cli_command, describe, read_articles,
                      run_cli, wiki_file)
from wikipairs import __version__
from wikipairs.schemas import ARTICLE, REDIRECT, arrow_schema
from wikipairs.shards.output import sha256_file


# ---- basics ---------------------------------------------------------------------------------

def test_help():
    result = run_cli("--help")
    assert result.returncode == 0, describe(result)
    assert "parse" in result.stdout and "--version" in result.stdout, describe(result)
    assert result.stderr == "", describe(result)
    result = run_cli("parse", "--help")
    assert result.returncode == 0, describe(result)
    for option in ("--input", "--output", "--allow-truncated", "--namespaces"):
        assert option in result.stdout, describe(result)


def test_version():
    result = run_cli("--version")
    assert result.returncode == 0, describe(result)
    assert result.stdout.strip() == f"wikipairs, version {__version__}", describe(result)


def test_console_script_is_declared():
    scripts = metadata.entry_points(group="console_scripts", name="wikipairs")
    assert [s.value for s in scripts] == ["wikipairs.cli:main"]


def test_python_m_wikipairs_is_the_command():
    """`python -m wikipairs` prints what `wikipairs` does, under the same program name."""
    for args in (["--help"], ["--version"], ["parse", "--help"]):
        _, env = cli_command()
        module = subprocess.run([sys.executable, "-m", "wikipairs", *args], env=env,
                                capture_output=True, text=True, encoding="utf-8", timeout=300)
        command = run_cli(*args)
        assert module.returncode == command.returncode == 0, describe(module)
        assert module.stdout == command.stdout, describe(module) + describe(command)
        assert module.stderr == "", describe(module)
    assert module.stdout.startswith("Usage: wikipairs parse "), describe(module)


def test_unknown_option_is_one_error_line(tmp_path):
    line = assert_one_line_error(run_cli("--no-such-option"), "--no-such-option")
    assert "Usage" not in line
    assert_one_line_error(run_cli("parse", "-o", tmp_path / "out", "--bogus"), "--bogus")
    assert_one_line_error(run_cli("no-such-command"), "no-such-command")
    assert_one_line_error(run_cli("parse"), "--output")  # a required option missing
    assert_one_line_error(run_cli("parse", "-o", tmp_path / "out", "--namespaces", "a,b"),
                          "--namespaces")
    assert_one_line_error(run_cli("parse", "-o", tmp_path / "out", "--rows-per-shard", "0"),
                          "--rows-per-shard")
    assert not (tmp_path / "out").exists()


def test_debug_after_the_subcommand_shows_the_traceback(tmp_path):
    missing = tmp_path / "missing.xml"
    result = run_cli("parse", "-i", missing, "-o", tmp_path / "out", "--debug")
    assert result.returncode == 2, describe(result)
    assert "Traceback (most recent call last)" in result.stderr, describe(result)
    assert result.stderr.splitlines()[-1] == f"wikipairs: error: {missing}: no such file"
    assert_one_line_error(run_cli("parse", "-i", missing, "-o", tmp_path / "out"),
                          f"{missing}: no such file")


def test_every_subcommand_takes_debug():
    """Subcommands of subgroups too: --debug is added to whatever the group registers."""
    from wikipairs.cli import main

    def subcommands(group, path=()):
        for name, command in getattr(group, "commands", {}).items():
            yield path + (name,), command
            yield from subcommands(command, path + (name,))

    for path, command in subcommands(main):
        assert "--debug" in [opt for param in command.params for opt in param.opts], path


# ---- parse with no input: the bundled sample -------------------------------------------------

def _check_output_folder(out: Path, input_path: Path) -> dict:
    """The files `parse` writes, the manifest's sha256 and sizes, the schemas; returns the manifest."""
    assert (out / "articles" / "part-00000-of-00001.parquet").is_file()
    for name in ("redirects.parquet", "parse_stats.json", "manifest.json"):
        assert (out / name).is_file(), name
    on_disk = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert not [p for p in on_disk if p.endswith(".tmp")], on_disk

    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    listed = {entry["path"].replace(os.sep, "/"): entry for entry in manifest["outputs"]}
    assert sorted(listed) == sorted(p for p in on_disk if p != "manifest.json"), \
        f"manifest outputs {sorted(listed)} != files on disk {on_disk}"
    for rel, entry in listed.items():
        path = out / rel
        assert entry["sha256"] == sha256_file(str(path)), f"{rel}: sha256 differs from the file"
        assert entry["bytes"] == path.stat().st_size, rel
        if rel.endswith(".parquet"):
            assert entry["rows"] == pq.ParquetFile(path).metadata.num_rows, rel
    assert manifest["version"] == __version__
    [source] = manifest["inputs"]
    assert Path(source["path"]).resolve() == input_path.resolve()
    assert source["sha256"] == sha256_file(str(input_path))
    assert source["bytes"] == input_path.stat().st_size

    stats = json.loads((out / "parse_stats.json").read_text(encoding="utf-8"))
    assert manifest["counts"] == stats
    articles = pq.read_table(out / "articles" / "part-00000-of-00001.parquet")
    assert articles.schema.equals(arrow_schema(ARTICLE)), \
        f"{articles.schema}\n!=\n{arrow_schema(ARTICLE)}"
    assert articles.num_rows == stats["articles"] > 0
    redirects = pq.read_table(out / "redirects.parquet")
    assert redirects.schema.equals(arrow_schema(REDIRECT))
    return manifest


def test_parse_without_input_uses_the_bundled_sample(tmp_path):
    out = tmp_path / "sample"
    result = run_cli("parse", "-o", out)
    assert result.returncode == 0, describe(result)
    assert "Traceback" not in result.stderr, describe(result)
    manifest = _check_output_folder(out, SAMPLE_DUMP)
    stats = manifest["counts"]
    assert stats["pages"] == 48 and stats["lang"] == "en", stats
    assert stats["sentence_splitter"] == "punkt_tab:english", stats
    assert stats["pages"] == stats["articles"] + stats["redirects"] + sum(stats["skipped"].values())
    for label in ("pages read", "articles written", "redirects", "sentences", "links"):
        assert label in result.stdout, describe(result)
    rows = read_articles(out)
    assert all(row["sections"][0]["level"] == 0 for row in rows)

    # A second run into the same folder replaces everything, and gives the same articles.
    again = run_cli("parse", "-q", "-o", out, "-i", SAMPLE_DUMP)
    assert again.returncode == 0 and again.stderr == "", describe(again)
    _check_output_folder(out, SAMPLE_DUMP)
    assert read_articles(out) == rows


def test_failed_run_leaves_no_manifest(tmp_path):
    out = tmp_path / "out"
    assert run_cli("parse", "-q", "-o", out).returncode == 0
    assert (out / "manifest.json").is_file()
    bad = tmp_path / "bad.xml"
    bad.write_text("<html><body>not a dump</body></html>", encoding="utf-8")
    assert_one_line_error(run_cli("parse", "-q", "-i", bad, "-o", out), str(bad))
    assert not (out / "manifest.json").exists(), "a failed run must not leave the old manifest"


# ---- a truncated dump -----------------------------------------------------------------------

def test_truncated_dump_fails_with_one_line(tmp_path):
    truncated = wiki_file("elwiki-truncated.xml.xz")
    out = tmp_path / "out"
    result = run_cli("parse", "-i", truncated, "-o", out)
    line = assert_one_line_error(result, str(truncated), "truncated")
    assert "--allow-truncated" in line
    assert not (out / "manifest.json").exists()


def test_truncated_dump_with_allow_truncated_keeps_complete_pages(tmp_path, elwiki_sample):
    """elwiki-sample.xml.bz2 is the same dump cut after its last complete page: the pages read,
    the counts by reason and the articles must be the same."""
    truncated = wiki_file("elwiki-truncated.xml.xz")
    out = tmp_path / "out"
    result = run_cli("parse", "-q", "-i", truncated, "-o", out, "--allow-truncated")
    assert result.returncode == 0, describe(result)
    assert "Traceback" not in result.stderr, describe(result)
    assert re.search(r"^truncated files\s+1\b", result.stdout, re.M), \
        "the printed counts should say one file was truncated" + describe(result)
    stats = json.loads((out / "parse_stats.json").read_text(encoding="utf-8"))
    counts = elwiki_sample.counts
    assert stats["truncated_files"] == 1, stats
    assert stats["pages"] == counts["pages_read"] == 933, (stats, dict(counts))
    assert stats["articles"] == counts["articles"] == len(elwiki_sample.articles), stats
    assert stats["redirects"] == counts["redirects"], stats
    assert stats["skipped"] == {k[len("skipped_"):]: v for k, v in counts.items()
                                if k.startswith("skipped_")}, (stats, dict(counts))
    assert (out / "manifest.json").is_file()
    rows = read_articles(out)
    assert [(r["id"], r["title"]) for r in rows] == \
        [(a.id, a.title) for a in elwiki_sample.articles]


def test_every_command_is_registered():
    """The trainer and ReQA commands load only where their extra is installed; in the dev
    environment they must all be there (an ImportError would hide them silently)."""
    result = run_cli("--help")
    assert result.returncode == 0, describe(result)
    for command in ("parse", "build", "vocab", "verify", "stats", "show", "download", "train",
                    "reqa"):
        assert f"  {command} " in result.stdout, f"{command} missing" + describe(result)
    assert run_cli("train", "pretrain", "--help").returncode == 0
    assert run_cli("reqa", "finetune", "--help").returncode == 0


# ---- which sentence splitter and token measure a run gets (issue 16) -------------------------

def _run_with_nltk_data(nltk_data: Path, *args) -> subprocess.CompletedProcess:
    argv, env = cli_command(*args)
    env["NLTK_DATA"] = str(nltk_data)
    return subprocess.run(argv, env=env, capture_output=True, text=True, encoding="utf-8",
                          timeout=300)


def _warnings(result: subprocess.CompletedProcess) -> list[str]:
    return [line for line in result.stderr.splitlines() if line.startswith("wikipairs: warning:")]


def test_parse_warns_once_where_the_punkt_model_is_missing(tmp_path):
    empty = tmp_path / "nltk_data"
    empty.mkdir()
    result = _run_with_nltk_data(empty, "parse", "-o", tmp_path / "out")
    assert result.returncode == 0, describe(result)
    [warning] = _warnings(result)
    assert warning.startswith("wikipairs: warning: no punkt_tab model for english under "
                              f"NLTK_DATA (searched {empty}"), warning
    assert warning.endswith("(set NLTK_DATA or pass --sentence-splitter sentencex to silence "
                            "this)"), warning
    assert "sentences: sentencex:en" in result.stdout.splitlines(), describe(result)
    quiet = _run_with_nltk_data(empty, "parse", "-q", "-o", tmp_path / "quiet")
    assert quiet.stderr.splitlines() == [warning], describe(quiet)  # a warning is not progress


def test_parse_names_its_splitter_and_warns_of_nothing_with_the_model(tmp_path):
    result = run_cli("parse", "-o", tmp_path, "-i", SAMPLE_DUMP)
    assert result.returncode == 0 and not _warnings(result), describe(result)
    assert "sentences: punkt_tab:english" in result.stdout.splitlines(), describe(result)


def test_sentencex_asked_for_is_no_warning(tmp_path):
    empty = tmp_path / "nltk_data"
    empty.mkdir()
    result = _run_with_nltk_data(empty, "parse", "-q", "--sentence-splitter", "sentencex",
                                 "-o", tmp_path / "out")
    assert result.returncode == 0 and result.stderr == "", describe(result)


def test_build_names_its_splitter_and_token_measure(tmp_path):
    result = run_cli("build", "--dry-run", "-o", tmp_path)
    assert result.returncode == 0 and not _warnings(result), describe(result)
    assert "sentences: punkt_tab:english; tokens: script-aware-words" in \
        result.stdout.splitlines(), describe(result)
