"""Wikitext to an Article: sections, paragraphs of sentences, links with spans, categories.

Speed comes from stripping with a few linear passes what mwparserfromhell need not see (comments,
refs, math/code-like tags, templates, tables, File links, categories, bold/italic quotes) and giving
it only what is left: short paragraphs of text and links. Kept inline templates (templates.py) are
parsed by mwparserfromhell one at a time and replaced by their text.
"""
from __future__ import annotations

import html
import re
from collections import Counter
from dataclasses import dataclass, field

import mwparserfromhell
from mwparserfromhell.nodes import (Argument, Comment, ExternalLink, Heading, HTMLEntity, Tag,
                                    Template, Text, Wikilink)

from .records import Article, Link, Page, Section
from .sentences import SentenceSplitter
from .templates import renderer_for
from .titles import INTERWIKI_PREFIXES, LANGUAGE_CODES, TitleParser, clean_spaces

# Sections dropped with their subsections (casefolded headings); English is always included.
BOILERPLATE_SECTIONS = {
    "en": {"references", "notes", "see also", "external links", "further reading", "bibliography",
           "sources", "citations", "footnotes", "notes and references", "references and notes",
           "external link", "works cited", "general references", "explanatory notes",
           "related pages", "other websites", "gallery"},
    "de": {"einzelnachweise", "literatur", "weblinks", "siehe auch", "anmerkungen", "quellen",
           "belege", "fußnoten"},
    "fr": {"notes et références", "références", "voir aussi", "liens externes", "bibliographie",
           "articles connexes", "notes"},
    "es": {"referencias", "véase también", "enlaces externos", "bibliografía", "notas"},
    "el": {"παραπομπές", "εξωτερικοί σύνδεσμοι", "δείτε επίσης", "βιβλιογραφία", "σημειώσεις",
           "πηγές", "υποσημειώσεις", "περαιτέρω ανάγνωση"},
    "it": {"note", "bibliografia", "voci correlate", "collegamenti esterni", "altri progetti"},
    "nl": {"referenties", "bronnen", "zie ook", "externe links", "noten"},
    "pt": {"referências", "ver também", "ligações externas", "bibliografia", "notas"},
}

# Tags removed with their content.
DROPPED_TAGS = ("ref", "references", "math", "chem", "ce", "score", "code", "syntaxhighlight",
                "source", "pre", "gallery", "timeline", "graph", "mapframe", "maplink", "imagemap",
                "templatedata", "hiero", "inputbox", "categorytree", "noinclude", "includeonly",
                "templatestyles", "charinsert", "indicator", "section", "tabs", "table")

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
_DROPPED = re.compile(
    r"<(%s)\b(?:[^>/]|/(?!>))*(?:/>|>.*?(?:</\1\s*>|\Z))" % "|".join(DROPPED_TAGS), re.S | re.I)
_STRAY_CLOSE = re.compile(r"</(?:%s)\s*>" % "|".join(DROPPED_TAGS), re.I)
_MAGIC = re.compile(r"__[A-Z]+__")
_QUOTES = re.compile(r"'{2,}")
_BRACES = re.compile(r"\{\{|\}\}|^[ \t:]*\{\||^[ \t]*\|\}(?!\})", re.M)
_BRACKETS = re.compile(r"\[\[|\]\]|\n[ \t]*\n")  # links never span a blank line
_HEADING = re.compile(r"^(={1,6})[ \t]*(.+?)[ \t]*\1[ \t]*$", re.M)
_PARA_BREAK = re.compile(r"\n[ \t]*\n+")
_LIST_ITEM = re.compile(r"^[*#:;]+[ \t]*")
_TRAIL = re.compile(r"^[^\W\d_]+")
_URL = re.compile(r"\b(?:https?|ftp)://\S+")
_TAG_LEFTOVER = re.compile(r"</?[a-zA-Z][a-zA-Z0-9]*\b[^<>]*>")
_SPACES = re.compile(r"\s+")
_SIMPLE_LINK = re.compile(r"\[\[([^\[\]|{}<>]*)(?:\|([^\[\]{}<>]*))?\]\]([^\W\d_]*)")
_HIDDEN_LINK = re.compile(r"\[\[([^\[\]|{}<>#]+)(?:#[^\[\]|]*)?(?:\|([^\[\]{}]*))?\]\]")
_NOT_SIMPLE = re.compile(r"[\[\]<>{}]|://")

BREAK_TAGS = {"br", "hr", "p", "div", "li", "tr", "td", "th"}


@dataclass
class ParseOptions:
    keep_tables: bool = False  # keep table cell text as paragraphs instead of dropping tables
    keep_lists: bool = True  # list items become paragraphs of their own
    min_paragraph_chars: int = 1


@dataclass
class _Piece:
    text: str
    target: str | None = None
    raw_target: str = ""


@dataclass
class Cleaner:
    """Turns a page's wikitext into sections of paragraphs and links, for one wiki."""

    titles: TitleParser
    splitter: SentenceSplitter | None  # None: only strip/render, no sentences
    options: ParseOptions = field(default_factory=ParseOptions)
    resolve: callable = None  # title -> redirect-resolved title

    def __post_init__(self):
        self._hidden_links: list[Link] = []  # links of the page being parsed that are not in text
        lang = self.titles.site.lang
        self.boilerplate = BOILERPLATE_SECTIONS["en"] | BOILERPLATE_SECTIONS.get(lang, set())
        self.file_names = self.titles.namespace_names(6) | self.titles.namespace_names(-2)
        self.category_names = self.titles.namespace_names(14)
        names = "|".join(re.escape(n) for n in sorted(self.file_names | self.category_names))
        self._special_link = re.compile(r"\[\[\s*:?\s*(%s)\s*:" % names, re.I) if names else None

    # ---- stripping passes -------------------------------------------------------------------
    def strip(self, text: str, counts: Counter) -> tuple[str, list[str]]:
        """Wikitext without noise, templates, tables, files; plus the categories found."""
        text = _COMMENT.sub("", text)
        text = _DROPPED.sub("", text)
        text = _STRAY_CLOSE.sub("", text)
        text = self.expand_templates(text, counts)
        text, categories = self.strip_special_links(text)
        text = _MAGIC.sub("", text)
        text = _QUOTES.sub(lambda m: "'" if len(m.group()) == 4 else "", text)
        return text, categories

    def expand_templates(self, text: str, counts: Counter, depth: int = 0) -> str:
        """Replace each outermost {{template}} by its text (kept ones) or nothing; same for tables."""
        if "{" not in text:
            return text
        out, stack, last = [], [], 0
        for m in _BRACES.finditer(text):
            token = m.group().strip(" \t:")
            if token == "{{":
                stack.append(("t", m.start()))
            elif token == "{|":
                stack.append(("table", m.start()))
            elif token == "}}" and stack and stack[-1][0] == "t":
                kind, start = stack.pop()
                if not stack:
                    out.append(text[last:start])
                    out.append(self._render_template(text[start:m.end()], counts, depth))
                    last = m.end()
            elif token == "|}" and stack and stack[-1][0] == "table":
                kind, start = stack.pop()
                if not stack:
                    out.append(text[last:start])
                    out.append(self._render_table(text[start:m.end()], counts, depth))
                    last = m.end()
        if stack:  # unclosed: MediaWiki shows it as text; we drop the opening markup only
            start = stack[0][1]
            out.append(text[last:start])
            rest = text[start:]
            rest = rest.replace("{{", "", 1) if stack[0][0] == "t" else ""
            counts["unclosed_template_or_table"] += 1
            out.append(self.expand_templates(rest, counts, depth + 1) if depth < 20 else "")
            return "".join(out)
        out.append(text[last:])
        return "".join(out)

    def _render_template(self, source: str, counts: Counter, depth: int) -> str:
        name = source[2:].split("|", 1)[0].split("}}", 1)[0]
        renderer = renderer_for(name) if ":" not in name or name.lower().startswith("template:") \
            else None
        if renderer is None or depth > 20:
            self._collect_hidden_links(source)
            return ""
        counts["templates_kept"] += 1
        template = mwparserfromhell.parse(source).nodes[0]
        if not isinstance(template, Template):
            return ""
        args = {str(p.name).strip(): str(p.value) for p in template.params}
        rendered = renderer(args)
        return self.expand_templates(rendered, counts, depth + 1)

    def _render_table(self, source: str, counts: Counter, depth: int) -> str:
        counts["tables"] += 1
        if not self.options.keep_tables:
            self._collect_hidden_links(source)
            return "\n\n"
        rows, cells = [], []
        # Templates first: a cell's first "|" separates attributes only outside templates.
        body = source.split("\n", 1)[1] if "\n" in source else ""
        body = self.expand_templates(body[: body.rfind("|}")], counts, depth + 1)
        for line in body.splitlines():
            line = line.strip()
            if line.startswith(("|-", "|}")):
                if cells:
                    rows.append(" ; ".join(cells))
                cells = []
            elif line.startswith(("|+",)):
                rows.append(line[2:].strip())
            elif line.startswith(("|", "!")):
                for cell in re.split(r"\|\||!!", line[1:]):
                    value = cell.split("|", 1)[-1] if "[[" not in cell.split("|", 1)[0] else cell
                    if value.strip():
                        cells.append(value.strip())
            elif cells and line:
                cells[-1] += " " + line
        if cells:
            rows.append(" ; ".join(cells))
        return "\n\n" + "\n\n".join(rows) + "\n\n"

    def _collect_hidden_links(self, source: str) -> None:
        """Links inside dropped templates (infoboxes) and tables are not in the text, but they are
        in the page's link graph: keep them with no position (section, sentence... = -1)."""
        if "[[" not in source:
            return
        for m in _HIDDEN_LINK.finditer(source):
            parsed = self.titles.parse(m.group(1))
            if parsed is None or parsed.interwiki or parsed.ns != 0:
                continue
            target = self.resolve(parsed.title) if self.resolve else parsed.title
            anchor = _unescape(m.group(2) if m.group(2) is not None else m.group(1)).strip()
            self._hidden_links.append(Link(target=target, anchor=anchor, section=-1, paragraph=-1,
                                           sentence=-1, start=-1, end=-1, raw_target=parsed.title))

    def strip_special_links(self, text: str) -> tuple[str, list[str]]:
        """Remove File/Image/Media links (captions too) and categories; return the categories."""
        if self._special_link is None or not self._special_link.search(text):
            return text, []
        categories: list[str] = []
        out, last, depth, start = [], 0, 0, None
        breaks = 0  # blank lines inside the open link: File captions may hold one or two
        for m in _BRACKETS.finditer(text):
            if m.group()[0] == "\n":  # an unclosed [[ must not swallow the rest of the page
                breaks += 1
                if depth and (start is None or breaks > 2):
                    depth, start = 0, None
            elif m.group() == "[[":
                if depth == 0:
                    special = self._special_link.match(text, m.start())
                    start, breaks = (m.start() if special else None), 0
                depth += 1
            elif depth:
                depth -= 1
                if depth == 0 and start is not None:
                    inner = text[start + 2:m.end() - 2]
                    target = inner.split("|", 1)[0]
                    parsed = self.titles.parse(target)
                    if parsed and parsed.ns == 14 and not target.lstrip().startswith(":"):
                        categories.append(parsed.title.split(":", 1)[1])
                    keep = parsed and parsed.ns == 14 and target.lstrip().startswith(":")
                    if not keep:
                        out.append(text[last:start])
                        last = m.end()
                    start = None
        out.append(text[last:])
        return "".join(out), categories

    # ---- structure -----------------------------------------------------------------------
    def sections(self, text: str) -> list[tuple[str, int, str]]:
        """(heading, level, body) of the lead and each section, boilerplate sections dropped."""
        found, pos, heading, level = [], 0, "", 0
        skip_below = None
        for m in _HEADING.finditer(text):
            found.append((heading, level, text[pos:m.start()]))
            heading, level, pos = m.group(2), len(m.group(1)), m.end()
        found.append((heading, level, text[pos:]))
        kept = []
        for heading, level, body in found:
            title = clean_spaces(_TAG_LEFTOVER.sub("", heading)) if level else ""
            if level and "[[" in title:
                title = clean_spaces(mwparserfromhell.parse(title).strip_code())
            if skip_below is not None and level > skip_below:
                continue
            skip_below = None
            if level and title.casefold().rstrip(":") in self.boilerplate:
                skip_below = level
                continue
            kept.append((title, level, body))
        return kept

    def paragraphs(self, body: str) -> list[str]:
        out = []
        for block in _PARA_BREAK.split(body):
            lines, current = [], []
            for line in block.split("\n"):
                if _LIST_ITEM.match(line):
                    if current:
                        lines.append(" ".join(current))
                        current = []
                    if self.options.keep_lists:
                        lines.append(_LIST_ITEM.sub("", line))
                elif line.strip():
                    current.append(line.strip())
            if current:
                lines.append(" ".join(current))
            out.extend(p for p in lines if len(p.strip()) >= self.options.min_paragraph_chars)
        return out

    # ---- rendering with link offsets -----------------------------------------------------
    def render(self, paragraph: str) -> list[_Piece]:
        """Text pieces of a paragraph; link pieces carry their target."""
        if "[" not in paragraph and "<" not in paragraph and "&" not in paragraph:
            return [_Piece(paragraph)]
        if not _NOT_SIMPLE.search(_SIMPLE_LINK.sub("", paragraph)):
            return self._render_simple(paragraph)
        pieces: list[_Piece] = []
        self._render_nodes(mwparserfromhell.parse(paragraph, skip_style_tags=True).nodes, pieces)
        return pieces

    def _render_simple(self, paragraph: str) -> list[_Piece]:
        """Fast path for the common paragraph: plain text, entities and [[target|anchor]] links,
        nothing nested. It gives what the mwparserfromhell path gives for such text."""
        pieces, last = [], 0
        for m in _SIMPLE_LINK.finditer(paragraph):
            if m.start() > last:
                pieces.append(_Piece(_unescape(paragraph[last:m.start()])))
            anchor = _unescape(m.group(2)) if m.group(2) is not None else None
            piece = self._link_piece(m.group(1), anchor)
            if piece is not None:
                if piece.target and m.group(3):
                    piece.text += m.group(3)
                    pieces.append(piece)
                else:
                    pieces.append(piece)
                    if m.group(3):
                        pieces.append(_Piece(m.group(3)))
            elif m.group(3):
                pieces.append(_Piece(m.group(3)))
            last = m.end()
        if last < len(paragraph):
            pieces.append(_Piece(_unescape(paragraph[last:])))
        return pieces

    def _render_nodes(self, nodes, pieces: list[_Piece]) -> None:
        trail_after = None
        for node in nodes:
            if isinstance(node, Text):
                value = node.value
                if trail_after is not None:
                    trail = _TRAIL.match(value)
                    if trail:
                        trail_after.text += trail.group()
                        value = value[trail.end():]
                    trail_after = None
                if "://" in value:
                    value = _URL.sub("", value)
                pieces.append(_Piece(value))
                continue
            trail_after = None
            if isinstance(node, Wikilink):
                piece = self._render_link(node)
                if piece is not None:
                    pieces.append(piece)
                    trail_after = piece if piece.target else None
            elif isinstance(node, ExternalLink):
                if node.brackets and node.title:
                    self._render_nodes(node.title.nodes, pieces)
            elif isinstance(node, HTMLEntity):
                pieces.append(_Piece(node.normalize()))
            elif isinstance(node, Tag):
                tag = str(node.tag).lower()
                if tag in BREAK_TAGS:
                    pieces.append(_Piece(" "))
                if node.contents is not None and tag not in DROPPED_TAGS:
                    self._render_nodes(node.contents.nodes, pieces)
            elif isinstance(node, (Template, Comment, Argument, Heading)):
                continue

    def _render_link(self, node: Wikilink) -> _Piece | None:
        anchor = None
        if node.text is not None:
            sub: list[_Piece] = []
            self._render_nodes(node.text.nodes, sub)
            anchor = "".join(p.text for p in sub)
        return self._link_piece(str(node.title), anchor)

    def _link_piece(self, raw: str, anchor: str | None) -> _Piece | None:
        """The piece a [[raw|anchor]] link renders to (anchor None: no pipe); None: no text."""
        parsed = self.titles.parse(raw)
        if anchor is None:
            anchor = raw.lstrip().lstrip(":")
            if parsed is not None and parsed.interwiki:
                anchor = anchor.split(":", 1)[1] if ":" in anchor else anchor
            anchor = anchor.split("#", 1)[0] if not anchor.startswith("#") else anchor[1:]
            if parsed is not None and parsed.interwiki and not raw.lstrip().startswith(":") \
                    and parsed.interwiki not in _INTERWIKI_ONLY:
                return None  # an interlanguage link: shown in the sidebar, not in the text
        if parsed is not None and parsed.ns != 0 and not parsed.interwiki and anchor == raw.strip(" :"):
            anchor = parsed.title.split(":", 1)[1]  # [[:Category:Towns]] reads "Towns" in text
        if parsed is None or parsed.interwiki or parsed.ns != 0:
            return _Piece(anchor)
        target = self.resolve(parsed.title) if self.resolve else parsed.title
        return _Piece(anchor, target=target, raw_target=parsed.title)

    def plain_paragraphs(self, page: Page) -> list[str]:
        """Clean paragraph texts of a page, not split into sentences (to train Punkt on)."""
        self._hidden_links = []
        text, _ = self.strip(page.text, Counter())
        return [_SPACES.sub(" ", "".join(p.text for p in self.render(paragraph))).strip()
                for _, _, body in self.sections(text) for paragraph in self.paragraphs(body)]

    # ---- the article ---------------------------------------------------------------------
    def article(self, page: Page, counts: Counter | None = None) -> Article:
        counts = counts if counts is not None else Counter()
        self._hidden_links: list[Link] = []
        text, categories = self.strip(page.text, counts)
        article = Article(id=page.id, title=page.title, lang=self.titles.site.lang,
                          categories=categories)
        for heading, level, body in self.sections(text):
            section = Section(heading=heading, level=level)
            for paragraph in self.paragraphs(body):
                sentences, links = self._sentences(self.render(paragraph))
                if not sentences:
                    continue
                s, p = len(article.sections), len(section.paragraphs)
                for link in links:
                    link.section, link.paragraph = s, p
                article.links.extend(links)
                section.paragraphs.append(sentences)
            if section.paragraphs:
                article.sections.append(section)
            elif level:
                counts["empty_sections"] += 1
        article.links.extend(self._hidden_links)
        if not article.sections or article.sections[0].level != 0:
            article.sections.insert(0, Section(heading="", level=0))  # no lead text
        return article

    def _sentences(self, pieces: list[_Piece]) -> tuple[list[str], list[Link]]:
        """Join pieces collapsing whitespace, split sentences, and place the links in them.

        Link pieces are wrapped in two private-use marks so that whitespace is collapsed in one
        pass over the paragraph; the marks are then removed and their offsets kept."""
        joined = "".join(f"{_OPEN}{p.text}{_CLOSE}" if p.target else p.text for p in pieces)
        if "<" in joined:
            joined = _TAG_LEFTOVER.sub("", joined)
        joined = _SPACES.sub(" ", joined)
        links_marked = _OPEN in joined
        if links_marked:  # keep spaces outside the marks so the anchor has none at its ends
            joined = _SPACES.sub(" ", joined.replace(_OPEN + " ", " " + _OPEN)
                                 .replace(" " + _CLOSE, _CLOSE + " "))
        joined = joined.strip()
        spans: list[tuple[int, int, _Piece]] = []
        if links_marked:
            targets = iter([p for p in pieces if p.target])
            parts, size, start = [], 0, 0
            for part in _MARKS.split(joined):
                if part == _OPEN:
                    start = size
                elif part == _CLOSE:
                    piece = next(targets)
                    if size > start:
                        spans.append((start, size, piece))
                else:
                    parts.append(part)
                    size += len(part)
            joined = "".join(parts)
        if not joined:
            return [], []
        bounds = self.splitter.spans(joined)
        sentences = [joined[a:b] for a, b in bounds]
        links = []
        for start, end, piece in spans:
            for i, (a, b) in enumerate(bounds):
                if a <= start < b:
                    lo, hi = start - a, min(b, end) - a
                    links.append(Link(target=piece.target, anchor=sentences[i][lo:hi], section=0,
                                      paragraph=0, sentence=i, start=lo, end=hi,
                                      raw_target=piece.raw_target))
                    break
        return sentences, links


_OPEN, _CLOSE = "\ue000", "\ue001"
_MARKS = re.compile("([\ue000\ue001])")
_INTERWIKI_ONLY = INTERWIKI_PREFIXES - LANGUAGE_CODES


def _unescape(text: str) -> str:
    return html.unescape(text) if "&" in text else text


def parse_article(page: Page, cleaner: Cleaner, counts: Counter | None = None) -> Article:
    """The Article of one page (see `Cleaner` for what is kept and removed)."""
    return cleaner.article(page, counts)
