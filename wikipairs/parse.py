"""`wikipairs parse`: dump files -> Parquet shards of Articles, the redirect table, a manifest.

The input is XML dumps, Wikimedia Enterprise HTML dumps or plain passage corpora (JSON lines or
Parquet), told apart by their content (`open_dump`); each has its cleaner (`cleaner_for`:
wikitext, Parsoid HTML or passages), and the rest of the job is the same for all.

Two passes over the input: the first collects redirects (and, with `--sentence-splitter
punkt-trained`, text to train Punkt on); the second parses articles, resolving link targets
through the redirects.
Memory stays flat: pages stream one at a time in both passes. A compressed file is decompressed
once: the first pass keeps the XML in a temporary file (dump.DecompressedCopy, bounded in size)
that the second pass reads.
"""
from __future__ import annotations

import hashlib
import os
from collections import Counter
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field

import pyarrow as pa

from . import __version__, fileio
from .errors import DumpError
from .reading import DumpFile, expand_inputs
from .reading.enterprise_html import ENTERPRISE_HTML, EnterpriseDump, input_kind
from .reading.passages import PassageCorpus, input_kind as passages_kind
from .text import template_drops
from .text.filters import skip_reason
from .progress import ProgressLines
from .records import Article, HtmlPage, Page, PassagePage, Redirect
from .text.redirects import RedirectMap
from .text.sentences import TRAINING_CHARS, SentenceSplitter
from wikipairs.schemas import ARTICLE, REDIRECT, arrow_schema
from .shards.card import check_card, parse_card, remove_card, write_card
from .shards.output import (MANIFEST, OWN_SHARD_FILE, ParquetShards, file_entry, prepare_output,
                     sha256_file, write_json, write_parquet)
from .text.parsoid import ParsoidCleaner
from .text.passages import PassageCleaner
from .text.wikitext import Cleaner, ParseOptions


@dataclass
class ParseConfig:
    inputs: list[str]
    output: str
    namespaces: tuple[int, ...] = (0,)
    lang: str | None = None
    allow_truncated: bool = False
    keep_tables: bool = False
    sentence_splitter: str = "auto"  # sentences.METHODS: auto, punkt, sentencex, punkt-trained
    keep_disambiguation: bool = False
    keep_lists: bool = False
    rows_per_shard: int = 50_000
    quiet: bool = False
    command: list[str] = field(default_factory=list)


def article_row(article: Article) -> dict:
    """An Article as a row of the `schemas.ARTICLE` Arrow schema."""
    return {
        "id": article.id, "title": article.title, "lang": article.lang,
        "sections": [{"heading": s.heading, "level": s.level,
                      "paragraphs": [{"sentences": p} for p in s.paragraphs]}
                     for s in article.sections],
        # vars, not asdict: a Link is flat, and asdict's deep copy took ~40% of `parse`.
        "links": [vars(link) for link in article.links],
        "categories": article.categories,
    }


class Progress:
    """parse's progress lines on stderr: pages read, articles, pages/s (the rule of when:
    wikipairs.progress)."""

    def __init__(self, quiet: bool, every: float = 5.0):
        self.lines = ProgressLines(every=every, quiet=quiet)

    def tick(self, counts: Counter, final: bool = False) -> None:
        self.lines.report(counts["pages_read"], lambda rate: (
            f"  {counts['pages_read']:,} pages read, {counts['articles']:,} articles, "
            f"{rate:,.0f} pages/s"), final)


class TrainingText:
    """The paragraphs Punkt is trained on (--sentence-splitter punkt-trained), the one rule for
    parse and build: the first TRAINING_CHARS characters of main-namespace article text, in dump
    order, markup removed."""

    def __init__(self):
        self.paragraphs: list[str] = []
        self.size = 0

    @property
    def full(self) -> bool:
        return self.size >= TRAINING_CHARS

    def add(self, page: Page, cleaner: Cleaner | ParsoidCleaner) -> None:
        if self.full or page.redirect is not None or page.ns != 0:
            return
        for paragraph in cleaner.plain_paragraphs(page):
            self.paragraphs.append(paragraph)
            self.size += len(paragraph)


def training_text(paths: list[str], lang: str | None, allow_truncated: bool) -> list[str]:
    """The TrainingText of dump files, read only as far as it needs."""
    text = TrainingText()
    for path in paths:
        dump = open_dump(path, lang=lang)
        cleaner = cleaner_for(dump, splitter=None)
        for page in dump.pages(allow_truncated=allow_truncated):
            if text.full:
                return text.paragraphs
            text.add(page, cleaner)
    return text.paragraphs


def open_dump(path: str, lang: str | None = None, keep_copy: bool = False,
              redirects_only: bool = False) -> DumpFile | EnterpriseDump | PassageCorpus:
    """The reader of a dump file by its content: a passage corpus (JSON lines or Parquet), an
    Enterprise HTML dump (a tar of NDJSON records) or an XML dump (`keep_copy` and
    `redirects_only` are the XML reader's options)."""
    kind = passages_kind(path)
    if kind is not None:
        return PassageCorpus(path, lang=lang, redirects_only=redirects_only, kind=kind)
    if input_kind(path) == ENTERPRISE_HTML:
        return EnterpriseDump(path, lang=lang, redirects_only=redirects_only)
    return DumpFile(path, lang=lang, keep_copy=keep_copy, redirects_only=redirects_only)


def open_header(path: str, lang: str | None = None) -> DumpFile | EnterpriseDump | PassageCorpus:
    """The reader of a dump file opened for its site (language, namespaces) alone, never for
    its pages (a passage corpus's gives none): opened as a first pass's, it decompresses in the
    calling thread only what is read of it (a reader opened for pages starts a thread that
    decompresses 8 MiB ahead: ~0.6 s of bz2 spent for nothing by each such opening, and in a
    build's driver beside the workers)."""
    return open_dump(path, lang=lang, redirects_only=True)


def check_one_wiki(inputs: list) -> None:
    """The inputs of one job ((path, reader) in order) are files of one wiki, each given once:
    two wikis' pages share titles and ids (a WLP query of one language was paired with the
    other's documents, which worker counts decided, and pages of one were taken for duplicates
    of the other's), and a file given twice gives every pair twice. A passage corpus is a
    user's own: its language (guessed without --lang) is not compared. Raises DumpError."""
    dumps = [(path, reader.site) for path, reader in inputs
             if not isinstance(reader, PassageCorpus)]
    if dumps:
        first_path, first = dumps[0]
        for path, site in dumps:
            if site.lang != first.lang or site.dbname and first.dbname \
                    and site.dbname != first.dbname:
                raise DumpError(f"{path}: a dump of {site.dbname or site.lang}, but {first_path} "
                                f"is one of {first.dbname or first.lang}: give one wiki's files "
                                "to a job")
    seen: dict[tuple, str] = {}
    for path, _ in inputs:
        key = _file_key(path)
        if key in seen:
            raise DumpError(f"{path}: the same file as {seen[key]}: give each file once")
        seen[key] = path


def _file_key(path: str) -> tuple:
    """What tells two input files apart: size and the hash of the first MiB (copies of one file
    under two names have the same)."""
    with fileio.open_read(path) as f:
        head = f.read(1 << 20)
    return fileio.size(path), hashlib.sha256(head).hexdigest()


def cleaner_for(dump: DumpFile | EnterpriseDump | PassageCorpus, splitter: SentenceSplitter | None,
                options: ParseOptions | None = None, resolve=None
                ) -> Cleaner | ParsoidCleaner | PassageCleaner:
    """The cleaner of a dump's pages: wikitext, Parsoid HTML or passages; the same Article
    either way."""
    kind = (ParsoidCleaner if isinstance(dump, EnterpriseDump)
            else PassageCleaner if isinstance(dump, PassageCorpus) else Cleaner)
    return kind(dump.titles, splitter, options or ParseOptions(), resolve=resolve)


def cleaner_kind(page) -> type:
    """The cleaner class of a page: Parsoid HTML (an Enterprise HTML record), passages (a
    passage corpus's page) or wikitext."""
    return (ParsoidCleaner if isinstance(page, HtmlPage)
            else PassageCleaner if isinstance(page, PassagePage) else Cleaner)


def page_redirects(page) -> list[Redirect]:
    """The redirects a page tells of: itself when it is one (XML dumps, Parsoid's marker), and
    the titles an Enterprise HTML record lists as redirecting to it."""
    if page.redirect:
        return [Redirect(page.title, page.redirect)]
    return [Redirect(source, page.title) for source in getattr(page, "redirects", ())]


def read_redirects_and_training_text(dumps: list, need_text: bool, counts: Counter,
                                     allow_truncated: bool) -> tuple[RedirectMap, list[str]]:
    """Pass 1: redirects of every file; plus article text for Punkt training when `need_text`."""
    redirects, text = [], TrainingText()
    for dump in dumps:
        cleaner = cleaner_for(dump, splitter=None) if need_text else None
        for page in dump.pages(counts, allow_truncated):
            redirects.extend(page_redirects(page))
            if cleaner is not None and page.redirect is None:
                text.add(page, cleaner)
    return RedirectMap(redirects), text.paragraphs


def iter_articles(config: ParseConfig, counts: Counter | None = None,
                  info: dict | None = None) -> Iterator[Article]:
    """Articles of the dumps in `config.inputs`, in dump order (both passes; nothing written).

    `counts` receives per-reason counts; `info` receives the redirect map, language, the
    sentence splitter's source and the wiki (dbname, base URL) once the first pass is done."""
    counts = counts if counts is not None else Counter()
    info = info if info is not None else {}
    paths = expand_inputs(config.inputs)
    # Pass 1 keeps each compressed file's decompressed XML (on disk, within limits: see
    # reading.sources.DecompressedCopy) so that pass 2 need not decompress it again. It needs only the
    # redirects (read by a scan, not an XML parse), unless Punkt must be trained on the text.
    need_text = SentenceSplitter.needs_training_text(config.sentence_splitter)
    first = open_dump(paths[0], lang=config.lang, keep_copy=True, redirects_only=True)
    site = first.site
    if need_text:
        first = open_dump(paths[0], lang=config.lang, keep_copy=True)
    dumps = [first] + [open_dump(p, lang=config.lang, keep_copy=True, redirects_only=not need_text)
                       for p in paths[1:]]
    check_one_wiki(list(zip(paths, dumps)))
    redirects, texts = read_redirects_and_training_text(dumps, need_text, Counter(),
                                                        config.allow_truncated)
    splitter = SentenceSplitter.for_language(site.lang, texts, method=config.sentence_splitter)
    info.update(redirects=redirects, lang=site.lang, sentence_splitter=splitter.source,
                dbname=site.dbname, base=site.base)
    for first in dumps:  # reopen: pass 2
        dump = first.reopen()
        cleaner = cleaner_for(dump, splitter, ParseOptions(keep_tables=config.keep_tables),
                              resolve=redirects.resolve)
        for page in dump.pages(counts, config.allow_truncated):
            article = parse_page(page, cleaner, config, counts)
            if article is not None:
                counts["articles"] += 1
                yield article


def parse_dump(config: ParseConfig) -> dict:
    """Run the parse job; returns the summary counts. Raises WikipairsError on bad input."""
    paths = expand_inputs(config.inputs)
    check_card(config.output, "wikipairs parse")  # before anything is deleted
    prepare_output(config.output, "wikipairs parse", {"articles": OWN_SHARD_FILE})
    remove_card(config.output)  # the old run's: a failed run leaves none
    counts, info = Counter(), {}
    progress = Progress(config.quiet)
    articles = ParquetShards(os.path.join(config.output, "articles"),
                             arrow_schema(ARTICLE), config.rows_per_shard)
    for article in iter_articles(config, counts, info):
        articles.write(article_row(article))
        progress.tick(counts)
    progress.tick(counts, final=True)
    shards = articles.close()
    redirects = info["redirects"]
    redirect_path = os.path.join(config.output, "redirects.parquet")
    write_parquet(redirect_path, _redirect_table(redirects))
    summary = {
        "pages": counts["pages_read"], "articles": counts["articles"],
        "redirects": counts["redirects"],
        "skipped": {k[len("skipped_"):]: v for k, v in sorted(counts.items())
                    if k.startswith("skipped_")},
        "truncated_files": counts["truncated_files"],
        "sentences": counts["sentences"], "links": counts["links"],
        # markup debris left out of sentences (text/wikitext.py prose_spans)
        "debris": {"wordless_sentences": counts["wordless_sentences"],
                   "leading_pipes": counts["leading_pipes"],
                   "link_bars": counts["link_bars"],
                   "lost_words_sentences": counts["lost_words_sentences"],
                   # the two ends of a sentence a list or a quotation interrupted
                   # (text/wikitext.py _Paragraph)
                   "interrupted_sentences": counts["interrupted_sentences"]},
        "pseudo_headings": counts["pseudo_headings"],  # ";Term" lines made headings
        "redirect_cycles_or_too_deep": sum(1 for _, _, r in redirects.rows() if r is None),
        "lang": info["lang"], "sentence_splitter": info["sentence_splitter"],
        # the wikitext path's templates dropped in running text (text/template_drops.py)
        "templates_dropped_inline": template_drops.summary(counts),
    }
    write_json(os.path.join(config.output, "parse_stats.json"), summary)
    manifest = {
        "tool": "wikipairs parse", "version": __version__, "command": config.command,
        "config": {k: v for k, v in asdict(config).items() if k not in ("command", "quiet")},
        "inputs": [{"path": os.path.abspath(p), "bytes": os.path.getsize(p),
                    "sha256": sha256_file(p)} for p in paths],
        "outputs": [file_entry(config.output, p, rows) for p, rows in shards]
        + [file_entry(config.output, redirect_path, len(redirects)),
           file_entry(config.output, os.path.join(config.output, "parse_stats.json"))],
        "counts": summary,
    }
    card = write_card(config.output, parse_card(manifest, info["dbname"], info["base"]))
    manifest["outputs"].append(file_entry(config.output, card))
    write_json(os.path.join(config.output, MANIFEST), manifest)
    return summary


def parse_page(page: Page | HtmlPage, cleaner: Cleaner | ParsoidCleaner, config: ParseConfig, counts: Counter) -> Article | None:
    """The Article of a page, or None (counted by reason) for pages that are not articles."""
    if page.redirect is not None:
        if page.redirect:
            counts["redirects"] += 1
        else:  # a redirect to another wiki ([[wikt:foo]]): not an article, no edge
            counts["skipped_redirect_elsewhere"] += 1
        return None
    counts["redirects"] += len(getattr(page, "redirects", ()))  # an HTML record's list
    if page.ns not in config.namespaces:
        counts["skipped_namespace"] += 1
        return None
    plain = isinstance(page, PassagePage)  # a passage corpus's pages are all kept
    reason = None if plain else skip_reason(page, None)  # most need no parse to be known
    if reason is None or _kept(reason, config):
        article = cleaner.article(page, counts)
        reason = None if plain else skip_reason(page, article.categories)
    if reason is not None and not _kept(reason, config):
        counts[f"skipped_{reason}"] += 1
        return None
    sentences = sum(1 for _ in article.sentences())
    if sentences == 0:
        counts["skipped_empty"] += 1
        return None
    counts["sentences"] += sentences
    counts["links"] += len(article.links)
    return article


def _kept(reason: str, config: ParseConfig) -> bool:
    return config.keep_disambiguation if reason == "disambiguation" else config.keep_lists


def _redirect_table(redirects: RedirectMap) -> pa.Table:
    rows = list(redirects.rows())
    return pa.table({"source": [r[0] for r in rows], "target": [r[1] for r in rows],
                     "resolved": [r[2] for r in rows]}, schema=arrow_schema(REDIRECT))


__all__ = ["ParseConfig", "check_one_wiki", "cleaner_for", "cleaner_kind", "iter_articles",
           "open_dump", "page_redirects", "parse_dump", "parse_page", "article_row",
           "training_text"]
