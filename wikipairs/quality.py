"""Quality metrics of parsed text, shared by the tests and the benchmarks."""
from __future__ import annotations

import re
from collections.abc import Iterable

from .records import Article

# Markup that must not survive cleaning: templates, links, table rows, refs, image options,
# namespace prefixes of files and categories, and unescaped entities.
MARKUP_LEAK = re.compile(
    r"\{\{|\}\}|\[\[|\]\]|^\s*[|!](?:-|\}|\+)?\s|\|\||<ref|thumb\||File:|Image:|Category:|&nbsp;",
    re.I)


def leaking_sentences(articles: Iterable[Article]) -> tuple[int, list[str]]:
    """(number of sentences, the sentences that still contain markup)."""
    total, leaks = 0, []
    for article in articles:
        for _, _, _, sentence in article.sentences():
            total += 1
            if MARKUP_LEAK.search(sentence):
                leaks.append(sentence)
    return total, leaks


def leak_rate(articles: Iterable[Article]) -> float:
    total, leaks = leaking_sentences(articles)
    return len(leaks) / total if total else 0.0
