"""A plain passage corpus's page (`PassagePage`) to an Article, as `wikitext.Cleaner` makes one
from wikitext: sections of paragraphs of sentences, by the same sentence splitter.

Sections are the records' `section` numbers in increasing order (0 is the lead, level 0; the
others level 2, headed by a record's `heading`); each record is a paragraph, or several where
its text has blank lines; whitespace runs become one space. No links, no categories.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from ..records import Article, PassagePage, Section
from .sentences import SentenceSplitter
from .titles import TitleParser
from .wikitext import ParseOptions

_BLANK_LINE = re.compile(r"\n[^\S\n]*\n\s*")
_SPACES = re.compile(r"\s+")


@dataclass
class PassageCleaner:
    """The cleaner of passage pages, for one corpus (the same constructor as `Cleaner`)."""

    titles: TitleParser
    splitter: SentenceSplitter | None
    options: ParseOptions = field(default_factory=ParseOptions)
    resolve: callable = None  # unused: a passage corpus has no links

    def paragraphs(self, text: str) -> list[str]:
        return [p for p in (_SPACES.sub(" ", part).strip() for part in _BLANK_LINE.split(text))
                if p]

    def article(self, page: PassagePage, counts: Counter | None = None) -> Article:
        article = Article(id=page.id, title=page.title, lang=self.titles.site.lang)
        sections: dict[int, Section] = {}
        for record in page.passages:
            section = sections.get(record.section)
            if section is None:
                section = sections[record.section] = Section(
                    heading="" if record.section == 0 else record.heading,
                    level=0 if record.section == 0 else 2)
            elif not section.heading and record.section:
                section.heading = record.heading
            for paragraph in self.paragraphs(record.text):
                sentences = self.splitter.split(paragraph) if self.splitter else [paragraph]
                if sentences:
                    section.paragraphs.append(sentences)
        article.sections = [sections[k] for k in sorted(sections)]
        return article

    def plain_paragraphs(self, page: PassagePage) -> list[str]:
        """Paragraph texts of a page, not split into sentences (to train Punkt on)."""
        return [p for record in page.passages for p in self.paragraphs(record.text)]


__all__ = ["PassageCleaner"]
