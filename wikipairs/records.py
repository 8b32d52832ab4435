"""Plain dataclasses that flow between the stages. They know nothing of Beam or TensorFlow."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Namespace:
    id: int
    name: str  # canonical local name, "" for the main namespace
    case: str = "first-letter"
    aliases: tuple[str, ...] = ()


@dataclass
class SiteInfo:
    """What a dump says about its wiki: language, case rule, namespaces (with aliases)."""

    dbname: str = ""
    base: str = ""
    lang: str = "en"
    case: str = "first-letter"
    namespaces: dict[int, Namespace] = field(default_factory=dict)
    export_version: str = ""


@dataclass
class Page:
    """One <page> of a dump, latest revision only."""

    id: int
    ns: int
    title: str  # normalized, with its namespace prefix
    text: str
    # normalized target title (fragment dropped); "" for a redirect out of this wiki's pages
    # (#REDIRECT [[wikt:foo]]: no article, no link target); None for a page that is no redirect
    redirect: str | None = None
    source: str = ""  # file the page came from


@dataclass(frozen=True)
class Redirect:
    source: str
    target: str


@dataclass
class Link:
    """A wikilink in article text. `span` is [start, end) of the anchor in its sentence."""

    target: str  # normalized and redirect-resolved title
    anchor: str
    section: int
    paragraph: int
    sentence: int
    start: int
    end: int
    raw_target: str = ""  # normalized title before redirect resolution


@dataclass
class Section:
    heading: str  # "" for the lead (section 0)
    level: int  # 0 for the lead, 2 for ==h==, ...
    paragraphs: list[list[str]] = field(default_factory=list)  # paragraphs of sentences


@dataclass
class Article:
    id: int
    title: str
    lang: str
    sections: list[Section] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)

    @property
    def lead(self) -> Section | None:
        return self.sections[0] if self.sections and self.sections[0].level == 0 else None

    def sentences(self):
        """Yield (section, paragraph, sentence index, text) for every sentence."""
        for s, section in enumerate(self.sections):
            for p, paragraph in enumerate(section.paragraphs):
                for i, sentence in enumerate(paragraph):
                    yield s, p, i, sentence


@dataclass
class Pair:
    """A (query, document) pre-training pair with its provenance; see schemas/pair.py."""

    pair_id: str
    passage_id: str  # the document's passage as the page has it (tasks.passage_id)
    doc_id: str  # the exact document text: title and text (tasks.doc_id)
    task: str  # "ict", "bfs" or "wlp"
    lang: str
    query: str
    query_page_id: int
    query_title: str
    query_section: int
    query_paragraph: int
    query_sentence: int
    doc_page_id: int
    doc_title: str
    doc_section: int
    doc_passage: int
    doc_text: str
    link_anchor: str = ""  # WLP: anchor text of the document page's link to the query page
    query_in_doc: bool = False  # ICT: the query sentence was kept in the document
    link_in_doc: bool = False  # WLP: the document passage holds the link
    query_tokens: int = -1  # token counts, when the builder knows them (-1: count when written)
    doc_tokens: int = -1
    split: str = "train"  # "train" or "eval": by the query page (pairs.heldout.split_of)
    # `build --hard-negatives N`: up to N Negatives, written as the neg_* columns (schemas/pair.py)
    negatives: tuple = ()


@dataclass(frozen=True)
class Negative:
    """A hard negative document of a pair: a passage that is close to the query but is not its
    document (wikipairs/pairs/negatives.py)."""

    passage_id: str
    page_id: int
    title: str
    text: str  # capped like a pair's doc_text
    doc_id: str  # of (title, text), as Pair.doc_id
    tokens: int = 0  # title and text


@dataclass
class HtmlPage:
    """One record of a Wikimedia Enterprise HTML dump: an article as Parsoid HTML."""

    id: int
    ns: int
    title: str  # normalized, with its namespace prefix
    html: str
    revision: int = 0
    lang: str = ""
    redirects: list[str] = field(default_factory=list)  # normalized titles redirecting here
    redirect: str | None = None  # a redirect page's normalized target (Parsoid's marker)
    source: str = ""

    @property
    def text(self) -> str:
        """No wikitext: the filters that look for templates in it find none (Parsoid expanded
        them); disambiguation pages are known by their categories."""
        return ""


@dataclass
class PassageRecord:
    """One record of a plain passage corpus (reading/passages.py)."""

    title: str
    text: str
    section: int = 0
    order: float = 0
    position: int = 0  # in the file (byte offset of its line, or its row): a stable order
    heading: str = ""
    page_id: int | None = None


@dataclass
class PassagePage:
    """The passages of one title of a plain passage corpus (reading/passages.py), in page
    order: section, order, file position."""

    id: int
    title: str
    passages: list[PassageRecord] = field(default_factory=list)
    ns: int = 0
    redirect: str | None = None
    source: str = ""

    @property
    def text(self) -> str:
        """No wikitext (the filters that read templates find none)."""
        return ""
