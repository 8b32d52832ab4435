"""Shared fixtures: the real dumps in ../shared/data, each parsed once per session, and the CLI.

The real data lives next to the project (`../shared/data`, see its README.md); tests read it in
place and never copy it into the repository. Nothing is downloaded.
"""
from __future__ import annotations

import os
import json
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

# Every test sees the shared punkt_tab models, whatever NLTK_DATA the caller has (`make test`
# sets the same; a bare `pytest` without it failed the tests that parse in their own process).
# Before nltk is imported: nltk.data.path is read from the environment then.
REPO = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO.parent / "shared" / "data"
NLTK_DATA = SHARED_DATA / "nltk_data"
os.environ["NLTK_DATA"] = str(NLTK_DATA)

import nltk.data  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402
import pytest  # noqa: E402

from wikipairs.parse import ParseConfig, iter_articles  # noqa: E402
from wikipairs.records import Article  # noqa: E402

WIKI = SHARED_DATA / "wiki"
SAMPLE_DUMP = REPO / "wikipairs" / "data" / "sample.xml.bz2"  # bundled with the package


def wiki_file(name: str) -> Path:
    path = WIKI / name
    if not path.is_file():
        pytest.fail(f"real test data missing: {path} (the tests read ../shared/data, see "
                    f"../shared/data/README.md)", pytrace=False)
    return path


def punkt_free_paths() -> list[str]:
    """nltk.data.path without folders holding a punkt_tab model: with NLTK_DATA pointing
    elsewhere, no model can then be found (wikipairs.text.sentences looks in NLTK_DATA, then there)."""
    return [p for p in nltk.data.path if not os.path.isdir(os.path.join(p, "tokenizers", "punkt_tab"))]


@dataclass
class ParsedDump:
    path: Path
    articles: list[Article]
    counts: Counter
    info: dict

    def article(self, title: str) -> Article:
        for article in self.articles:
            if article.title == title:
                return article
        raise AssertionError(f"{self.path.name}: no article {title!r} among {len(self.articles)}")


@pytest.fixture(scope="session")
def parsed_dumps():
    """name -> ParsedDump; each real dump is parsed at most once per session.

    Parsing sees only the shared punkt_tab models (NLTK_DATA=../shared/data/nltk_data, and no
    other folder with a punkt_tab model), so English uses punkt_tab and Greek a trained model on
    every machine, whatever NLTK_DATA the caller has."""
    cache: dict[tuple, ParsedDump] = {}

    def parse(name: str, lang: str | None = None) -> ParsedDump:
        if (name, lang) not in cache:
            path = wiki_file(name)
            counts, info = Counter(), {}
            with pytest.MonkeyPatch.context() as mp:
                mp.setenv("NLTK_DATA", str(NLTK_DATA))
                mp.setattr(nltk.data, "path", punkt_free_paths())
                config = ParseConfig(inputs=[str(path)], output="", lang=lang,
                                     allow_truncated="truncated" in name)  # a dump cut on purpose
                articles = list(iter_articles(config, counts, info))
            cache[name, lang] = ParsedDump(path, articles, counts, info)
        return cache[name, lang]

    return parse


@pytest.fixture(scope="session")
def enwiki_gensim(parsed_dumps) -> ParsedDump:
    return parsed_dumps("enwiki-sample-gensim.xml.bz2")


@pytest.fixture(scope="session")
def enwiki_tables(parsed_dumps) -> ParsedDump:
    return parsed_dumps("enwiki-table-markup.xml.bz2")


@pytest.fixture(scope="session")
def elwiki_sample(parsed_dumps) -> ParsedDump:
    return parsed_dumps("elwiki-sample.xml.bz2")


# ---- small fake dumps --------------------------------------------------------------------------

_NAMESPACES = {-2: "Media", -1: "Special", 0: "", 1: "Talk", 2: "User", 4: "Wikipedia", 6: "File",
               10: "Template", 14: "Category"}


def write_fake_dump(path: Path | str, pages: list[tuple[str, str]], lang: str = "en",
                    dbname: str | None = None, namespaces: dict[int, str] | None = None) -> Path:
    """An export-0.10 dump of `pages` ((title, wikitext) in the main namespace, ids 1, 2, ...)
    whose siteinfo declares `lang` (xml:lang, dbname `{lang}wiki`, base URL) and `namespaces`."""
    from xml.sax.saxutils import escape
    names = {**_NAMESPACES, **(namespaces or {})}
    ns_xml = "".join(f'<namespace key="{k}" case="first-letter">{escape(v)}</namespace>'
                     for k, v in sorted(names.items()))
    page_xml = "".join(
        f"<page><title>{escape(title)}</title><ns>0</ns><id>{i}</id><revision><id>{1000 + i}</id>"
        f'<timestamp>2024-01-01T00:00:00Z</timestamp><model>wikitext</model><format>text/x-wiki'
        f'</format><text xml:space="preserve">{escape(text)}</text></revision></page>'
        for i, (title, text) in enumerate(pages, 1))
    xml = (f'<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/" version="0.10" '
           f'xml:lang="{lang}"><siteinfo><sitename>Wikipedia</sitename>'
           f"<dbname>{dbname or lang + 'wiki'}</dbname>"
           f"<base>https://{lang}.wikipedia.org/wiki/Main_Page</base><case>first-letter</case>"
           f"<namespaces>{ns_xml}</namespaces></siteinfo>{page_xml}</mediawiki>")
    Path(path).write_text(xml, encoding="utf-8")
    return Path(path)


# ---- the command line -----------------------------------------------------------------------

def cli_command(*args) -> tuple[list[str], dict]:
    """(argv, environment) of `wikipairs ARGS` in a fresh interpreter (for subprocess)."""
    env = dict(os.environ, NLTK_DATA=str(NLTK_DATA), PYTHONIOENCODING="utf-8")
    return [sys.executable, "-m", "wikipairs.cli", *map(str, args)], env


def run_cli(*args: str, cwd: Path | str | None = None, timeout: float = 300
            ) -> subprocess.CompletedProcess:
    """`wikipairs ARGS` in a fresh interpreter: real exit status, real stdout and stderr."""
    argv, env = cli_command(*args)
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                          encoding="utf-8", timeout=timeout)


def result_json(returncode: int, stdout: str, stderr: str) -> dict:
    """The JSON of the last "RESULT {...}" line a child script printed; the child must have
    exited 0 and printed one (else the assertion shows the end of its stderr)."""
    lines = [line for line in stdout.splitlines() if line.startswith("RESULT ")]
    assert returncode == 0 and lines, f"{stdout[-3000:]}\n{stderr[-5000:]}"
    return json.loads(lines[-1][len("RESULT "):])


def describe(result: subprocess.CompletedProcess) -> str:
    return (f"\n$ wikipairs {' '.join(map(str, result.args[3:]))}\nexit status {result.returncode}"
            f"\n--- stdout ---\n{result.stdout[-3000:]}\n--- stderr ---\n{result.stderr[-3000:]}")


def assert_one_line_error(result: subprocess.CompletedProcess, *fragments: str) -> str:
    """Exit status 2, exactly one error line on stderr ("wikipairs: error: ..."), no traceback.
    Warnings said before the error (a missing punkt_tab model, a declared language the text
    does not match) are lines of their own ("wikipairs: warning: ...") and are not counted."""
    lines = [line for line in result.stderr.splitlines()
             if not line.startswith("wikipairs: warning: ")]
    assert result.returncode == 2, "expected exit status 2" + describe(result)
    assert len(lines) == 1, "expected exactly one line on stderr" + describe(result)
    assert "Traceback" not in result.stderr, describe(result)
    assert lines[0].startswith("wikipairs: error: "), describe(result)
    for fragment in fragments:
        assert fragment.lower() in lines[0].lower(), \
            f"the error line should mention {fragment!r}" + describe(result)
    return lines[0]


# what TensorFlow, absl and CUDA print themselves (issue 16: none of it on the terminal unless -v)
NATIVE_MARKERS = ("tensorflow", "absl", "cuda", "e0000", "w0000", "i0000")


def native_log_lines(result: subprocess.CompletedProcess) -> list[str]:
    """The lines of a command's stdout and stderr that a native library printed."""
    return [line for line in (result.stdout + result.stderr).splitlines()
            if any(marker in line.lower() for marker in NATIVE_MARKERS)]


def read_articles(output: Path | str) -> list[dict]:
    """All article rows written by `wikipairs parse` into `output`, in shard order."""
    shards = sorted(Path(output, "articles").glob("part-*.parquet"))
    assert shards, f"no article shards in {output}"
    rows = []
    for shard in shards:
        rows.extend(pq.read_table(shard).to_pylist())
    return rows


# ---- one page of wikitext through the cleaner (tests of text rules) ---------------------------

_CLEANERS: dict = {}


def cleaner(lang: str):
    """The wikitext Cleaner of a wiki in `lang` (default namespaces, sentencex), one per lang."""
    from wikipairs.records import SiteInfo
    from wikipairs.text.sentences import SentenceSplitter
    from wikipairs.text.titles import TitleParser
    from wikipairs.text.wikitext import Cleaner
    if lang not in _CLEANERS:
        _CLEANERS[lang] = Cleaner(TitleParser(SiteInfo(lang=lang)),
                                  SentenceSplitter.for_language(lang, method="sentencex"))
    return _CLEANERS[lang]


def page_article(lang: str, text: str) -> Article:
    """The Article `text` becomes as the page "Test" of a wiki in `lang`."""
    from wikipairs.records import Page
    return cleaner(lang).article(Page(id=1, ns=0, title="Test", text=text))


def page_sentences(lang: str, text: str) -> list[str]:
    return [s for _, _, _, s in page_article(lang, text).sentences()]
