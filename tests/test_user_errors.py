"""What a new user meets first, through the real command line: bad XML named by the user's file,
line and page (parse and build alike, never a temporary split file); `verify` of a parse
output; a rebuild that refuses to delete files wikipairs did not write; `show` of an empty task."""
from __future__ import annotations

import bz2
import json
from pathlib import Path

import pytest

from conftest import SAMPLE_DUMP, assert_one_line_error, describe, run_cli, write_fake_dump
from old_builds import to_old_layout
from wikipairs.reading.splits import write_multistream

PAGES = [(f"Page {i}", f"Page {i} is a page about things. It has two sentences.\n\n== Section =="
                       f"\nMore text here about page {i}. Another sentence follows.")
         for i in range(120)]


def _dump_xml(tmp_path: Path, pages=PAGES) -> str:
    """A fake dump's XML with one page per line group (pages start on lines of their own)."""
    return write_fake_dump(tmp_path / "source.xml", pages).read_text(encoding="utf-8") \
        .replace("<page>", "\n  <page>")


def _line(xml: str, at: int) -> int:
    return xml.count("\n", 0, at) + 1


# ---- 1. malformed XML: the user's file, its line, the page ----------------------------------

@pytest.fixture(scope="module")
def unclosed(tmp_path_factory) -> tuple[Path, int]:
    """A dump of 120 pages whose page 'Page 70' (id 71) opens a tag it never closes; and the
    line of the user's file where the XML parser finds out (the revision's end tag)."""
    folder = tmp_path_factory.mktemp("unclosed")
    xml = _dump_xml(folder)
    page = xml.index("<title>Page 70</title>")
    at = xml.index("<model>", page)
    xml = xml[:at] + "<comment>never closed" + xml[at:]
    path = folder / "unclosed.xml"
    path.write_text(xml, encoding="utf-8")
    return path, _line(xml, xml.index("</revision>", page))


def _errors(path: Path, tmp_path: Path, *build_args: str) -> tuple[str, str]:
    parse = run_cli("parse", "-q", "-i", path, "-o", tmp_path / "parse")
    build = run_cli("build", "-q", "-i", path, "-o", tmp_path / "build", "--workers", "1",
                    *build_args)
    lines = []
    for result in (parse, build):
        line = assert_one_line_error(result, str(path), "not a readable MediaWiki XML dump")
        assert "wikipairs-split" not in line and "split.xml" not in line, \
            "the error names a temporary file" + describe(result)
        lines.append(line)
    return lines[0], lines[1]


@pytest.mark.parametrize("compression", ["plain", "bz2"])
def test_unclosed_tag_names_the_file_line_and_page_in_parse_and_build(unclosed, tmp_path,
                                                                      compression):
    path, line = unclosed
    if compression == "bz2":
        path = tmp_path / "unclosed.xml.bz2"
        path.write_bytes(bz2.compress(unclosed[0].read_bytes()))
    parse, build = _errors(path, tmp_path)
    assert f"at line {line}, in page 'Page 70' (id 71)" in parse, parse
    assert build == parse, "parse and build say the same"


def test_bad_xml_in_a_later_page_names_the_page_before(tmp_path):
    xml = _dump_xml(tmp_path).replace("<title>Page 90</title>", "<title>Page & 90</title>")
    path = tmp_path / "ampersand.xml"
    path.write_text(xml, encoding="utf-8")
    parse, build = _errors(path, tmp_path)
    line = _line(xml, xml.index("<title>Page & 90</title>"))
    assert f"at line {line}, after page 'Page 89' (id 90)" in parse, parse
    assert build == parse


def test_multistream_split_names_the_file_and_page(tmp_path):
    """A multistream split decompresses some streams only: no line, but the file and page."""
    xml = _dump_xml(tmp_path).replace("<title>Page 70</title>", "<title>Page & 70</title>")
    source = tmp_path / "ampersand.xml"
    source.write_text(xml, encoding="utf-8")
    dump = tmp_path / "ampersand-multistream.xml.bz2"
    write_multistream(str(source), str(dump), str(tmp_path / "ampersand-multistream-index.txt.bz2"),
                      pages_per_stream=10)
    result = run_cli("build", "-q", "-i", dump, "-o", tmp_path / "build", "--workers", "1",
                     "--streams-per-split", "3")
    line = assert_one_line_error(result, str(dump), "after page 'Page 69' (id 70)")
    assert "wikipairs-split" not in line


# ---- 2. verify of a parse output ------------------------------------------------------------

@pytest.fixture()
def parsed(tmp_path) -> Path:
    out = tmp_path / "parsed"
    result = run_cli("parse", "-q", "-i", SAMPLE_DUMP, "-o", out)
    assert result.returncode == 0, describe(result)
    return out


def test_verify_checks_every_file_of_a_parse_output(parsed):
    result = run_cli("verify", parsed)
    assert result.returncode == 0 and result.stderr == "", describe(result)
    listed = json.loads((parsed / "manifest.json").read_text(encoding="utf-8"))["outputs"]
    names = sorted(Path(e["path"]).as_posix() for e in listed)
    assert names == ["README.md", "articles/part-00000-of-00001.parquet", "parse_stats.json",
                     "redirects.parquet"], names
    assert f"ok: {len(names)} files match" in result.stdout, describe(result)


@pytest.mark.parametrize("name", ["articles/part-00000-of-00001.parquet", "redirects.parquet",
                                  "parse_stats.json"])
def test_verify_catches_a_changed_byte_in_a_parse_output(parsed, name):
    path = parsed / name
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    assert_one_line_error(run_cli("verify", parsed), str(path), "sha256")


def test_verify_catches_an_unlisted_article_shard(parsed):
    extra = parsed / "articles" / "part-00001-of-00002.parquet"
    extra.write_bytes((parsed / "articles" / "part-00000-of-00001.parquet").read_bytes())
    assert_one_line_error(run_cli("verify", parsed), str(extra), "does not list")


def test_verify_of_a_folder_without_manifest_is_one_line(tmp_path):
    assert_one_line_error(run_cli("verify", tmp_path), "manifest.json")


# ---- 3. a rebuild never deletes what wikipairs did not write --------------------------------

def _tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_parse_refuses_to_replace_a_folder_holding_a_users_file(parsed):
    mine = parsed / "articles" / "my-notes.txt"
    mine.write_text("mine", encoding="utf-8")
    before = _tree(parsed)
    assert_one_line_error(run_cli("parse", "-q", "-i", SAMPLE_DUMP, "-o", parsed), str(mine),
                          "not written by wikipairs parse", "nothing was deleted")
    assert _tree(parsed) == before, "nothing may change"


def test_parse_refuses_a_shard_its_manifest_does_not_list(parsed):
    stray = parsed / "articles" / "part-00003-of-00004.parquet"
    stray.write_bytes(b"someone else's shard")
    before = _tree(parsed)
    assert_one_line_error(run_cli("parse", "-q", "-i", SAMPLE_DUMP, "-o", parsed), str(stray),
                          "not listed in")
    assert _tree(parsed) == before


def test_parse_runs_again_over_its_own_and_an_interrupted_output(parsed):
    again = run_cli("parse", "-q", "-i", SAMPLE_DUMP, "-o", parsed)
    assert again.returncode == 0, describe(again)
    # Interrupted: no manifest, leftover shards of another count and temporary files.
    (parsed / "manifest.json").unlink()
    (parsed / "articles" / "part-00001-of-00002.parquet").write_bytes(b"old")
    (parsed / "articles" / "shard-00000.tmp").write_bytes(b"half")
    again = run_cli("parse", "-q", "-i", SAMPLE_DUMP, "-o", parsed)
    assert again.returncode == 0, describe(again)
    assert sorted(p.name for p in (parsed / "articles").iterdir()) == \
        ["part-00000-of-00001.parquet"]
    assert run_cli("verify", parsed).returncode == 0


@pytest.fixture(scope="module")
def sample_build(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("rebuild") / "out"
    result = run_cli("build", "-q", "-o", out, "--workers", "1")
    assert result.returncode == 0, describe(result)
    return out


def test_build_refuses_to_delete_a_users_file_in_a_task_folder(sample_build, tmp_path):
    mine = sample_build / "parquet" / "bfs" / "picked-pairs.jsonl"
    mine.write_text("{}", encoding="utf-8")
    try:
        before = _tree(sample_build)
        result = run_cli("build", "-q", "-o", sample_build, "--workers", "1")
        assert_one_line_error(result, str(mine), "not written by wikipairs build",
                              "nothing was deleted")
        assert _tree(sample_build) == before, "nothing may change"
        assert run_cli("verify", sample_build).returncode == 0
    finally:
        mine.unlink()


def test_build_refuses_another_commands_output(parsed):
    before = _tree(parsed)
    result = run_cli("build", "-q", "-o", parsed, "--workers", "1")
    assert_one_line_error(result, str(parsed), "wikipairs parse", "choose another output folder")
    assert _tree(parsed) == before


def test_build_runs_again_over_its_own_and_an_interrupted_output(sample_build):
    before = _tree(sample_build)
    result = run_cli("build", "-q", "-o", sample_build, "--workers", "1")
    assert result.returncode == 0, describe(result)
    after = _tree(sample_build)
    assert {k: v for k, v in after.items() if k.startswith(("parquet/", "tfrecord/"))} == \
        {k: v for k, v in before.items() if k.startswith(("parquet/", "tfrecord/"))}
    # Interrupted before its manifest: leftover shards, temporary files, notes, a work folder.
    (sample_build / "manifest.json").unlink()
    (sample_build / "parquet" / "wlp" / "part-00007-of-00009.parquet.tmp").write_bytes(b"half")
    (sample_build / "tfrecord" / "ict" / "part-00005-of-00009.tfrecord.gz").write_bytes(b"old")
    (sample_build / ".shards").mkdir()
    (sample_build / ".shards" / "ict-00000.json").write_text("{}", encoding="utf-8")
    (sample_build / ".work" / "progress").mkdir(parents=True)
    result = run_cli("build", "-q", "-o", sample_build, "--workers", "1")
    assert result.returncode == 0, describe(result)
    assert _tree(sample_build).keys() == after.keys()
    assert run_cli("verify", sample_build).returncode == 0


def test_build_replaces_an_older_build_in_the_old_layout(sample_build, tmp_path):
    """A build over a folder of the layout before the per-format trees (DIR/<task>/ holding
    both formats) refuses while a task folder holds a user's file, deleting nothing, and else
    replaces it: the old task folders go, the new trees hold the same shards."""
    import shutil

    folder = to_old_layout(shutil.copytree(sample_build, tmp_path / "old"))
    mine = folder / "wlp" / "notes.txt"
    mine.write_text("mine", encoding="utf-8")
    before = _tree(folder)
    result = run_cli("build", "-q", "-o", folder, "--workers", "1")
    assert_one_line_error(result, str(mine), "not written by wikipairs build",
                          "nothing was deleted")
    assert _tree(folder) == before
    mine.unlink()
    result = run_cli("build", "-q", "-o", folder, "--workers", "1")
    assert result.returncode == 0, describe(result)
    assert not any((folder / task).exists() for task in ("ict", "bfs", "wlp"))
    new, rebuilt = _tree(sample_build), _tree(folder)
    assert {k: v for k, v in rebuilt.items() if k.startswith(("parquet/", "tfrecord/"))} == \
        {k: v for k, v in new.items() if k.startswith(("parquet/", "tfrecord/"))}
    assert run_cli("verify", folder).returncode == 0


# ---- 4. show of a task without pairs --------------------------------------------------------

def test_show_says_when_a_task_has_no_pairs(tmp_path):
    pages = [(f"Page {i}", f"Page {i} is a page about things. It has two sentences. "
                           f"A third one is here too.") for i in range(20)]  # no sections: no BFS
    dump = write_fake_dump(tmp_path / "flat.xml", pages)
    out = tmp_path / "out"
    result = run_cli("build", "-q", "-i", dump, "-o", out, "--task", "ict,bfs", "--workers", "1")
    assert result.returncode == 0, describe(result)
    shown = run_cli("show", out, "--task", "bfs")
    assert shown.returncode == 0, describe(shown)
    assert shown.stdout == "", describe(shown)
    assert shown.stderr.strip() == f"no bfs pairs in {out}", describe(shown)
    shown = run_cli("show", out, "--task", "ict", "-n", "1")
    assert shown.returncode == 0 and "[ict] pair" in shown.stdout and shown.stderr == "", \
        describe(shown)


# ---- 4. one wiki's files, each once -----------------------------------------------------------

@pytest.mark.parametrize("command", ["parse", "build"])
def test_two_wikis_or_one_file_twice_are_refused(tmp_path, command):
    """Two wikis' pages share titles and ids (a WLP query of one language was paired with the
    other's documents, and which one depended on the worker count); a file given twice gave
    every pair twice. One line, exit status 2, nothing written."""
    english = write_fake_dump(tmp_path / "en.xml", [("Berlin", "Berlin is a city. It is big.")])
    german = write_fake_dump(tmp_path / "de.xml", [("Berlin", "Berlin ist eine Stadt. Sie ist groß.")],
                             lang="de")
    copy = tmp_path / "copy.xml"
    copy.write_bytes(english.read_bytes())
    task = ["--task", "ict"] if command == "build" else []
    for inputs, fragments in (((english, german), ("de.xml", "dewiki", "enwiki")),
                              ((english, copy), ("copy.xml", "same file", "en.xml")),
                              ((english, english), ("en.xml", "same file"))):
        out = tmp_path / f"out-{command}-{inputs[0].name}-{inputs[1].name}"
        result = run_cli(command, *task, "-i", inputs[0], "-i", inputs[1], "-o", out)
        assert_one_line_error(result, *fragments)
        assert not (out / "manifest.json").exists()


def test_a_passage_corpus_goes_with_a_dump_whatever_language_is_guessed(tmp_path):
    """A passage corpus's language is guessed without --lang (Ukrainian text was taken for
    Russian): it is the user's own corpus, not compared with the dump's wiki."""
    dump = write_fake_dump(tmp_path / "uk.xml", [("Львів", "Львів є містом. Це велике місто.")],
                           lang="uk")
    corpus = tmp_path / "c.jsonl"
    corpus.write_text(json.dumps({"id": "1", "title": "Київ", "text": "Київ є столицею України. "
                                  "Це велике місто на Дніпрі."}, ensure_ascii=False) + "\n",
                      encoding="utf-8")
    result = run_cli("parse", "-q", "-i", dump, "-i", corpus, "-o", tmp_path / "out")
    assert result.returncode == 0, describe(result)
