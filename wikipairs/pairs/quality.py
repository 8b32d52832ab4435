"""Quality metrics of parsed text and pairs, shared by the tests and the benchmarks."""
from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from ..text.mediawiki_names import image_option_words, local_namespaces
from ..records import Article

# Markup that must not survive cleaning, in any language: templates, links, table rows, refs,
# English image options and namespace prefixes, entities left encoded (&nbsp; &amp; &#91;),
# behaviour switches (__TOC__), language-conversion markup (-{zh-hans:...}-) and image sizes.
_GENERIC_LEAK = (r"\{\{|\}\}|\[\[|\]\]|^\s*[|!](?:-|\}|\+)?\s|\|\||<ref|thumb\||"
                 r"(?:File|Image|Category):(?=\S)(?!//)|&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});|"
                 r"__[A-Z]{3,}__|-\{|\}-|\b\d+\s*px\b")
MARKUP_LEAK = re.compile(_GENERIC_LEAK, re.I)

# Namespaces whose prefix in text means a file or category link was not recognized.
_LEAK_NAMESPACES = {"File", "Category"}


@functools.lru_cache(maxsize=None)
def markup_leak(lang: str = "en") -> re.Pattern:
    """MARKUP_LEAK plus the `lang` wiki's own File/Category prefixes ("Hình:", "カテゴリ:") and
    its image options between pipes ("|nhỏ|", "|mini|", "|links|": a caption cut loose)."""
    prefixes = {name for ns in local_namespaces(lang) if ns.canonical in _LEAK_NAMESPACES
                for name in ns.names if name}
    options = image_option_words(lang)
    words = sorted(options.keywords | options.params, key=len, reverse=True)
    units = sorted(options.suffixes, key=len, reverse=True)
    parts = [_GENERIC_LEAK]
    if prefixes:
        names = sorted(prefixes, key=len, reverse=True)
        parts.append("(?:%s):(?=\\S)(?!//)" % "|".join(map(re.escape, names)))
    if words:  # an option alone between pipes, or "name=value" before one
        parts.append(r"(?:^|\|)\s*(?:%s)\s*(?:=[^|\n]*)?\|" % "|".join(map(re.escape, words)))
    if units:
        parts.append(r"\|\s*\d+(?:\s*x\s*\d+)?\s*(?:%s)\s*(?:\||$)" % "|".join(map(re.escape, units)))
    return re.compile("|".join(parts), re.I | re.M)


def is_leak(text: str, lang: str = "en") -> bool:
    return markup_leak(lang).search(text) is not None


def leaking_sentences(articles: Iterable[Article], lang: str | None = None
                      ) -> tuple[int, list[str]]:
    """(number of sentences, the sentences that still contain markup). `lang`: the wiki's
    language (default: each article's)."""
    total, leaks = 0, []
    for article in articles:
        pattern = markup_leak(lang or article.lang)
        for _, _, _, sentence in article.sentences():
            total += 1
            if pattern.search(sentence):
                leaks.append(sentence)
    return total, leaks


def leak_rate(articles: Iterable[Article], lang: str | None = None) -> float:
    total, leaks = leaking_sentences(articles, lang)
    return len(leaks) / total if total else 0.0


def leaking_texts(texts: Iterable[str], lang: str = "en") -> tuple[int, list[str]]:
    """(number of texts, those that still contain markup): for pair queries and documents."""
    pattern = markup_leak(lang)
    total, leaks = 0, []
    for text in texts:
        total += 1
        if pattern.search(text):
            leaks.append(text)
    return total, leaks
