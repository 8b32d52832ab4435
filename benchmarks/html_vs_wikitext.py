#!/usr/bin/env python3
"""The wikitext path and the Enterprise HTML path side by side, on the pages that exist in both
forms (issue 23): `../shared/data/wiki/frwiki-wikiplaintext-sample.xml.bz2` (wikitext) and
`../shared/data/html/frwiki-NS0-20231123-ENTERPRISE-HTML-sample.json.tar.gz` (Parsoid HTML of
about the same revisions): Saint-Valentin, Léonard de Vinci, Espéranto, Béziers, Formule brute,
Équation fonctionnelle.

What is measured, per path and over the six pages:

* prose word recall: the words of the rendered prose (below) that reach the parsed article's
  sentences, as multisets (a word counted n times in the prose is found at most n times), words
  being `\\w+` runs, casefolded;
* sentences and in-text links per article (links with a place in a sentence; infobox and table
  links, kept with no place, are counted apart), and in-text links whose
  `sentence[start:end]` is not their anchor;
* pages per second per core: `Cleaner.article` / `ParsoidCleaner.article` on the pages already
  in memory (wikitext string or HTML string: reading and decompression excluded for both), the
  same sentence splitter, `time.process_time` of this one thread, best of `--repeat` runs;
  and end to end: `wikipairs.parse.iter_articles` (both passes, decompression, XML or NDJSON
  reading, redirects) on a file holding only the six pages (the wikitext sample itself; for
  HTML a .json.tar.gz of the six records written to a temporary folder), CPU time of the
  process (its read-ahead thread included), best of `--repeat` runs.

The rendered prose, the reference for both paths, is taken from the HTML independently of either
parser: the text of every `<p>` of the article body, after removing references (`sup.reference`,
`.mw-ref`, `ol.references`, `.mw-references-wrap`), infoboxes, navboxes and notices (classes
`infobox*`, `navbox*`, `bandeau-*`, `hatnote`, `metadata`), tables, figures, math
(`mw:Extension/math`, MathML), `<style>`, hidden elements (`display:none`), marks for editors
(`.noprint`, "[réf. nécessaire]"), and the sections
whose heading is one of the boilerplate headings both paths drop (Notes et références,
Bibliographie, ...).

    .venv/bin/python benchmarks/html_vs_wikitext.py [--repeat 5] [--json OUT]
"""
from __future__ import annotations

import argparse
import gzip
import io
import json
import os
import re
import sys
import tarfile
import tempfile
import time
from collections import Counter

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "..", "shared", "data")
os.environ.setdefault("NLTK_DATA", os.path.join(DATA, "nltk_data"))
sys.path.insert(0, ROOT)

from selectolax.lexbor import LexborHTMLParser  # noqa: E402

from wikipairs.parse import ParseConfig, iter_articles  # noqa: E402
from wikipairs.reading import DumpFile  # noqa: E402
from wikipairs.reading.enterprise_html import EnterpriseDump  # noqa: E402
from wikipairs.text.parsoid import ParsoidCleaner  # noqa: E402
from wikipairs.text.sentences import SentenceSplitter  # noqa: E402
from wikipairs.text.wikitext import BOILERPLATE_SECTIONS, Cleaner  # noqa: E402

WIKITEXT = os.path.join(DATA, "wiki", "frwiki-wikiplaintext-sample.xml.bz2")
HTML = os.path.join(DATA, "html", "frwiki-NS0-20231123-ENTERPRISE-HTML-sample.json.tar.gz")
_WORD = re.compile(r"\w+")
NOT_PROSE = ", ".join([
    "sup.reference", ".mw-ref", "ol.references", ".mw-references-wrap", "style", "script",
    "table", "figure", '[class*="infobox"]', '[class*="navbox"]', '[class*="bandeau-"]',
    ".hatnote", ".metadata", '[typeof~="mw:Extension/math"]', "math",
    '[style*="display:none"]', '[style*="display: none"]',
    # marks for editors, not prose: "[réf. nécessaire]", MediaWiki's not-for-print elements
    "sup.need_ref_tag", ".noprint"])


def words(texts) -> Counter:
    found = Counter()
    for text in texts:
        found.update(w.casefold() for w in _WORD.findall(text))
    return found


def prose_words(html: str, lang: str) -> Counter:
    """The words of the rendered prose of a page (see the module docstring)."""
    tree = LexborHTMLParser(html)
    for node in tree.css(NOT_PROSE):
        node.decompose()
    boilerplate = BOILERPLATE_SECTIONS["en"] | BOILERPLATE_SECTIONS.get(lang, set())
    for heading in tree.css("h2, h3, h4, h5, h6"):
        if heading.text().strip().casefold().rstrip(":") in boilerplate:
            section = heading.parent
            if section is not None and section.tag == "section":
                section.decompose()
    for br in tree.css("p br"):
        br.replace_with(" ")
    return words(p.text() for p in tree.css("p"))


def recall(reference: Counter, found: Counter) -> float:
    total = sum(reference.values())
    return sum(min(n, found[w]) for w, n in reference.items()) / total if total else 1.0


def article_figures(article) -> dict:
    sentences = [s for _, _, _, s in article.sentences()]
    in_text = [link for link in article.links if link.sentence >= 0]
    bad = 0
    for link in in_text:
        sentence = article.sections[link.section].paragraphs[link.paragraph][link.sentence]
        bad += sentence[link.start:link.end] != link.anchor
    return {"sentences": len(sentences), "links": len(in_text),
            "hidden_links": len(article.links) - len(in_text), "bad_spans": bad,
            "words": words(sentences)}


def pages_per_cpu_second(cleaner, pages, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.process_time()
        for page in pages:
            cleaner.article(page)
        best = min(best, time.process_time() - start)
    return len(pages) / best


def end_to_end(path: str, repeat: int) -> tuple[int, float]:
    """(articles, pages per CPU-second) of parse's article stream on one file."""
    best, articles = float("inf"), 0
    for _ in range(repeat):
        start = time.process_time()
        articles = sum(1 for _ in iter_articles(ParseConfig(inputs=[path], output="")))
        best = min(best, time.process_time() - start)
    return articles, articles / best


def html_of(titles: list[str], folder: str) -> str:
    """A .json.tar.gz holding the records of the HTML sample whose titles are `titles`."""
    dump = EnterpriseDump(HTML)
    lines = [json.dumps({"name": p.title, "identifier": p.id, "version": {"identifier": p.revision},
                         "namespace": {"identifier": 0}, "in_language": {"identifier": p.lang},
                         "is_part_of": {"identifier": dump.site.dbname},
                         "article_body": {"html": p.html}}, ensure_ascii=False)
             for p in dump.pages() if p.title in titles]
    data = ("\n".join(lines) + "\n").encode()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo(f"{dump.site.dbname}_namespace_0_0.ndjson")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    path = os.path.join(folder, "six.json.tar.gz")
    with open(path, "wb") as f:
        f.write(gzip.compress(buffer.getvalue()))
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()

    wikitext_dump = DumpFile(WIKITEXT)
    wikitext_pages = {p.title: p for p in wikitext_dump.pages() if p.ns == 0 and p.redirect is None}
    html_dump = EnterpriseDump(HTML)
    html_pages = {p.title: p for p in html_dump.pages() if p.title in wikitext_pages}
    titles = [t for t in wikitext_pages if t in html_pages]
    lang = html_dump.site.lang
    splitter = SentenceSplitter.for_language(lang)
    paths = {
        "wikitext": (Cleaner(wikitext_dump.titles, splitter), [wikitext_pages[t] for t in titles]),
        "html": (ParsoidCleaner(html_dump.titles, splitter), [html_pages[t] for t in titles]),
    }
    references = {t: prose_words(html_pages[t].html, lang) for t in titles}
    results, per_page = {}, {t: {} for t in titles}
    for name, (cleaner, pages) in paths.items():
        totals = Counter()
        found_all, reference_all = Counter(), Counter()
        for title, page in zip(titles, pages):
            figures = article_figures(cleaner.article(page))
            found = figures.pop("words")
            per_page[title][name] = round(100 * recall(references[title], found), 2)
            totals.update(figures)
            found_all.update({(title, w): n for w, n in found.items()})
            reference_all.update({(title, w): n for w, n in references[title].items()})
        n = len(pages)
        results[name] = {
            "prose_word_recall_pct": round(100 * recall(reference_all, found_all), 2),
            "sentences_per_article": round(totals["sentences"] / n, 1),
            "links_per_article": round(totals["links"] / n, 1),
            "hidden_links_per_article": round(totals["hidden_links"] / n, 1),
            "bad_link_spans": totals["bad_spans"], "links": totals["links"],
            "pages_per_cpu_second": round(pages_per_cpu_second(cleaner, pages, args.repeat), 1),
            "input_mb": round(sum(len((p.html if name == "html" else p.text).encode())
                                  for p in pages) / 1e6, 2),
        }
    with tempfile.TemporaryDirectory() as folder:
        for name, path in (("wikitext", WIKITEXT), ("html", html_of(titles, folder))):
            articles, rate = end_to_end(path, args.repeat)
            results[name]["end_to_end_pages_per_cpu_second"] = round(rate, 1)
            results[name]["end_to_end_articles"] = articles
    prose = sum(sum(r.values()) for r in references.values())
    print(f"{len(titles)} pages in both forms; {prose:,} words of rendered prose; "
          f"sentences: {splitter.source}")
    print(f"{'':34}{'wikitext':>10}{'html':>10}")
    for key in ("prose_word_recall_pct", "sentences_per_article", "links_per_article",
                "hidden_links_per_article", "bad_link_spans", "pages_per_cpu_second",
                "end_to_end_pages_per_cpu_second", "input_mb"):
        print(f"{key:34}{results['wikitext'][key]:>10}{results['html'][key]:>10}")
    print("\nprose word recall per page (%):")
    for title in titles:
        print(f"  {title:32}{per_page[title]['wikitext']:>8}{per_page[title]['html']:>8}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"pages": titles, "paths": results, "per_page_recall": per_page}, f,
                      indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
