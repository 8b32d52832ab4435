"""Parsoid HTML (Wikimedia Enterprise HTML dumps) to an Article, as `wikitext.Cleaner` makes one
from wikitext: sections of paragraphs of sentences, links with spans, categories.

Every template is already expanded there, so the text a reader sees is all in the HTML: what is
not prose is dropped by Parsoid's own markers (`typeof`, `rel`) and the classes MediaWiki and the
wikis give it, each drop counted as `html_dropped_<reason>`:

- references: `sup.reference`/`mw:Extension/ref`, `ol.references`, `.mw-references-wrap`,
  `mw:Extension/references`, reflist wrappers;
- infoboxes (`.infobox*`, `.taxobox`), navboxes (`.navbox*`, `.NavFrame`, portal bars, sidebars,
  sister-project boxes, tables of contents), notices (hatnotes, `.ambox`/`.mbox`, `.metadata`,
  `.noprint`, "citation needed" marks);
- tables, figures (`<figure>`, `mw:File*`, galleries), math (`mw:Extension/math`, MathML),
  code (`<pre>`, `<code>`, syntaxhighlight), other extensions (score, timeline, graph, ...),
  hidden elements (`style="display:none"`), edit-section links, error messages;
- sections whose heading is boilerplate (References, See also, ...; `wikitext.BOILERPLATE_SECTIONS`).

The rest follows the wikitext path's rules: a heading (h2-h6; `<section>` elements are only
containers) starts a section, the lead is section 0; each `<p>` is a paragraph, and each list
item (`<li>`, `<dt>`, `<dd>`) a paragraph of its own (ParseOptions.keep_lists); inline text
outside them (in a `<div>` or `<blockquote>`) is a paragraph too. Sentences come from the same
splitter and links are placed in them by the same code (`Cleaner._sentences`), so
`sentence[start:end] == anchor` holds alike. Links are `<a rel="mw:WikiLink">` to main-namespace
pages, targets normalized by the wiki's TitleParser and resolved through the redirects; the links
of dropped infoboxes and tables are kept after the text links with no position (-1), as the
wikitext path keeps those of dropped templates and tables. Categories are the
`<link rel="mw:PageProp/Category">` elements.

The HTML is parsed by selectolax's Lexbor backend (C): on the shared frwiki sample it parses and
walks ~5x faster than lxml and ~30x faster than mwparserfromhtml (BeautifulSoup); see README.
"""
from __future__ import annotations

import html as htmllib
import json
import re
from collections import Counter
from dataclasses import dataclass, field

from selectolax.lexbor import LexborHTMLParser

from ..records import Article, HtmlPage, Link, Section
from .sentences import SentenceSplitter
from .templates import superscript
from .titles import TitleParser, clean_spaces
from .wikitext import (_FORMULA, _INVISIBLE, _MARKS_OUT, _NOTE, _OTHER_SPACE,
                       _END_MARKS, _VARIANT_ORDER,
                       BOILERPLATE_SECTIONS, ParseOptions, _ANY_WORD, _Piece,
                       in_boilerplate,
                       prose_spans, pseudo_heading_level, sentence_goes_on, stops_mid_sentence,
                       typed_note_marks, without_holes)

HEADINGS = {"h1": 1, "h2": 2, "h3": 3, "h4": 4, "h5": 5, "h6": 6}
# Elements whose boundaries end a paragraph (their inline content is a paragraph of its own).
BLOCK_TAGS = frozenset({
    "p", "div", "ul", "ol", "dl", "li", "dd", "dt", "blockquote", "section", "table", "figure",
    "center", "pre", "hr", "figcaption", "header", "footer", "aside", "nav", "main", "article",
    "details", "summary", "address", "caption", "tbody", "thead", "tfoot", "tr", "td", "th",
    "h1", "h2", "h3", "h4", "h5", "h6", "body", "html", "gallery"})
# Elements that hold no text a reader sees as prose (categories are read separately).
SILENT_TAGS = frozenset({"style", "script", "meta", "link", "img", "audio", "video", "source",
                         "track", "map", "area", "noscript", "svg", "button", "input", "template",
                         "head", "title", "base", "wbr", "object", "embed", "iframe", "canvas"})
LIST_TAGS = frozenset({"ul", "ol", "dl"})

# class tokens -> reason (the first rule that matches wins; see drop_reason)
_CLASS_REASONS = {
    "references": {"reference", "mw-ref", "references", "mw-references", "mw-references-wrap",
                   "reflist", "references-small", "refbegin", "mw-cite-backlink",
                   "cite_virgule"},
    "infoboxes": {"taxobox", "infobox"},
    "navboxes": {"navbox", "navbox-container", "navbox-inner", "vertical-navbox", "navframe",
                 "navcontent", "navigation-box", "bandeau-portail", "portal", "portal-bar",
                 "portail", "sidebar", "sistersitebox", "sister-box", "autres-projets",
                 "catlinks", "toc", "mw-toc", "printfooter"},
    "notices": {"hatnote", "dablink", "rellink", "ambox", "metadata", "bandeau-container",
                "bandeau-article", "homonymie", "shortdescription", "noprint", "need_ref_tag",
                "template-fact", "navigation-not-searchable", "mw-indicators",
                "indicateur-langue"},  # frwiki's "(en)" after a link to another wiki
    # (not "noexcerpt": enwiki's {{IPA}} has it, and "YAML (/ˈjæməl/, rhymes" read "YAML (,")
    # a quotation's attribution ({{Quote}}) and boxed pull quotes, which the wikitext path drops
    "quote_citations": {"templatequotecite", "quotebox", "pullquote"},
    # text for screen readers only: "1<span class=sr-only>+</span>1⁄2" shows "1 1⁄2"
    "screen_reader": {"sr-only"},
    "figures": {"gallery", "thumb", "thumbinner", "mw-gallery-traditional", "mw-gallery-packed",
                "mw-gallery-nolines", "mw-gallery-slideshow", "mw-gallery-packed-hover",
                "mw-gallery-packed-overlay", "wikimedia-video"},
    "math": {"mwe-math-element", "mwe-math-fallback-image-inline",
             "mwe-math-fallback-image-display", "mwe-math-mathml-inline",
             "mwe-math-mathml-display"},
    "edit_sections": {"mw-editsection", "mw-editsection-bracket"},
    "errors": {"error", "mw-ext-cite-error", "mw-parser-output-error", "scribunto-error"},
}
_CLASS_PREFIXES = (("infobox", "infoboxes"), ("navbox", "navboxes"), ("ambox", "notices"),
                   ("mbox", "notices"), ("tmbox", "notices"), ("ombox", "notices"),
                   ("imbox", "notices"), ("cmbox", "notices"), ("fmbox", "notices"),
                   ("toc", "navboxes"))
_CLASS_REASON = {token: reason for reason, tokens in _CLASS_REASONS.items() for token in tokens}
_PREFIX_REASON = dict(_CLASS_PREFIXES)
_CLASS_PREFIX = re.compile("(%s)(?:[-_]|$)" % "|".join(_PREFIX_REASON))
# Parsoid extension elements whose content is prose (the others are dropped as "extensions").
KEPT_EXTENSIONS = frozenset({"poem", "section", "blockquote", "nowiki", "ref", "references"})
_EXTENSION = re.compile(r"mw:Extension/([\w-]+)")
_DISPLAY_NONE = re.compile(r"display\s*:\s*none", re.I)
_MATH_EXTENSIONS = frozenset({"math", "chem", "ce"})
_FORMULA_EXTENSIONS = re.compile(r"mw:Extension/(?:math|chem|ce)\b")
_TYPED_ENTITY = re.compile(r"&(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});")
_CODE_EXTENSIONS = frozenset({"syntaxhighlight", "source", "pre"})


def _class_reason(cls: str) -> str | None:
    """The reason a class attribute gives (the first of its tokens that has one), or None;
    cached by the attribute's value (a few hundred values make nearly all of a wiki's)."""
    reason = None
    for token in cls.lower().split():
        reason = _CLASS_REASON.get(token)
        if reason is None:
            prefix = _CLASS_PREFIX.match(token)
            reason = _PREFIX_REASON[prefix.group(1)] if prefix else None
        if reason is not None:
            break
    if len(_CLASS_REASONS_SEEN) >= 100_000:  # bound memory on odd dumps
        _CLASS_REASONS_SEEN.clear()
    _CLASS_REASONS_SEEN[cls] = reason
    return reason


_CLASS_REASONS_SEEN: dict[str, str | None] = {}


def drop_reason(tag: str, attrs) -> str | None:
    """Why an element is not prose (a key of the html_dropped_* counts), or None. `attrs`: a
    dict, or Lexbor's attributes (read one by one: the most telling first)."""
    if tag == "style" or tag == "script":
        return "styles"  # CSS of TemplateStyles: text for the browser, not the reader
    if tag in SILENT_TAGS:
        return None  # no text anyway: not counted
    cls = attrs.get("class")
    if cls:
        reason = _CLASS_REASONS_SEEN.get(cls, "")
        if reason == "":
            reason = _class_reason(cls)
        if reason is not None:
            return reason
    typeof = attrs.get("typeof")
    if typeof:
        if "mw:Extension/ref" in typeof:
            return "references"
        if "mw:File" in typeof or "mw:Image" in typeof or "mw:Video" in typeof \
                or "mw:Audio" in typeof:
            return "figures"
        if "mw:Error" in typeof:
            return "errors"
        if "mw:Extension/" in typeof:
            for name in _EXTENSION.findall(typeof):
                name = name.lower()
                if name in _MATH_EXTENSIONS:
                    return "math"
                if name in _CODE_EXTENSIONS:
                    return "code"
                if name == "gallery":
                    return "figures"
                if name not in KEPT_EXTENSIONS:
                    return "extensions"
    style = attrs.get("style")
    if style and _DISPLAY_NONE.search(style):
        return "hidden"
    if "hidden" in attrs:
        return "hidden"
    if tag == "table":
        return "tables"
    if tag == "figure" or tag == "figcaption":
        return "figures"
    if tag == "math":
        return "math"
    if tag == "pre" or tag == "code":
        return "code"
    if tag == "a":
        rel = attrs.get("rel") or ""
        if "mw:ExtLink" in rel:
            if "action=edit" in (attrs.get("href") or ""):
                return "edit_sections"
            link_class = (attrs.get("class") or "").split()
            if "free" in link_class or "autonumber" in link_class:
                return "bare_urls"  # a bare URL, or "[1]": the wikitext path drops them too
    return None


def _raised(sup) -> str | None:
    """A <sup> number in superscript characters (templates.superscript), "" for a footnote's
    number after a sentence's end ("closer.<sup>1</sup>"); None for other <sup>s and a
    fraction's numerator ({{frac}}: <sup>1</sup>⁄<sub>2</sub>), which read as written."""
    raised = superscript(sup.text())
    if raised is None:
        return None
    after = sup.next  # (Parsoid writes the slash as text or as <span typeof="mw:Entity">)
    slash = ((after.text_content if after.tag == "-text" else after.text()) or "").strip() \
        if after is not None else ""
    if slash.startswith("⁄") \
            or slash == "/" and after.next is not None and after.next.tag == "sub":
        return None
    before = sup.prev
    if before is not None and before.tag == "-text" \
            and (before.text_content or "")[-1:] in _END_MARKS:
        return ""
    return raised


def _is_attribution(node) -> bool:
    """Whether an element is a quotation's attribution: it opens with a dash or holds a
    <cite>."""
    return node.text().lstrip()[:1] in _DASHES or node.css_first("cite") is not None


_DASHES = frozenset("—–―-")


def _mark_inline_drop(reason: str, out: list[str]) -> None:
    """Where an inline element was dropped: a hole for a formula (it may have taken words out),
    a note mark after a space (a reference, "(en)": "Esperanto (en), a" reads "Esperanto, a");
    see wikitext.without_holes."""
    if reason == "math":
        out.append(_FORMULA)
    elif reason == "screen_reader":  # (it stands where the page shows a space)
        out.append(" ")
    elif out and out[-1][-1:].isspace():  # (frwiki's {{lien}} puts a no-break space there)
        out.append(_NOTE)


def _join_display_formulas(body, counts: Counter) -> None:
    """Display formulas (":<math>..</math>": a <dl> of <dd>s holding formulas only) in the
    middle of a sentence, as the wikitext path reads them (wikitext._display_formula): where the
    paragraph before does not end its sentence ("vérifie la formule de réflexion"), the
    formulas become a formula mark at its end, and the paragraph after, when it goes on with
    the sentence (wikitext.sentence_goes_on), is copied into it: one paragraph, whose sentence
    lost words to the formula and is dropped whole, not read as fragments. The formulas are
    counted as the walk counts dropped math (html_dropped_math)."""
    lists, k = body.css("dl"), 0
    while k < len(lists):
        block = lists[k]
        k += 1
        if not _holds_formulas_only(block):
            continue
        before = _sibling(block, "prev")
        if before is None or before.tag != "p":
            continue
        if not stops_mid_sentence(_words_end(before)):
            continue
        blocks, after = [block], _sibling(block, "next")
        while after is not None and after.tag == "dl" and _holds_formulas_only(after):
            blocks.append(after)  # (the next <dl>s in document order: none is walked again)
            after = _sibling(after, "next")
        k += len(blocks) - 1
        goes_on = after is not None and after.tag == "p" and not _ends_sentence(blocks[-1]) \
            and sentence_goes_on(after.text())
        before.insert_child(" " + _FORMULA + " ")
        for formulas in blocks:
            counts["html_dropped_math"] += len(formulas.css("dd"))
            formulas.decompose()
        if goes_on:  # (copies: selectolax inserts a copy of a node)
            for child in list(after.iter(include_text=True)):
                before.insert_child(child)
            after.decompose()


def _ends_sentence(formulas) -> bool:
    """Whether a <dl> of formulas ends with a full stop, in its last formula's source
    ("a_i.") or after it."""
    node = formulas.last_child
    while node is not None and node.tag != "dd":
        node = node.prev
    node = node.last_child if node is not None else None
    while node is not None:
        if node.tag == "-text":
            text = (node.text_content or "").strip()
            if text:
                return text.endswith(".")
        else:
            try:
                source = json.loads(node.attributes.get("data-mw") or "{}")["body"]["extsrc"]
            except (ValueError, KeyError, TypeError):
                return False
            return str(source).rstrip().endswith(".")
        node = node.prev
    return False


def _words_end(paragraph) -> str:
    """The end of a paragraph's words, past the note marks after them ("satisfait à[4]")."""
    node = paragraph.last_child
    while node is not None:
        if node.tag == "-text":
            text = (node.text_content or "").rstrip()
            if text:
                return text
        elif drop_reason(node.tag, node.attributes) is None:
            return node.text().rstrip()
        node = node.prev
    return ""


def _holds_formulas_only(block) -> bool:
    """Whether a <dl> holds <dd>s of formulas and nothing else (but spaces and punctuation)."""
    found = False
    for dd in block.iter(include_text=True):
        if dd.tag == "-text":
            if _ANY_WORD.search(dd.text_content or ""):
                return False
            continue
        if dd.tag != "dd":
            return False
        for child in dd.iter(include_text=True):
            if child.tag == "-text":
                if _ANY_WORD.search(child.text_content or ""):
                    return False
            elif drop_reason(child.tag, child.attributes) == "math":
                found = True
            else:
                return False
    return found


def _sibling(node, direction: str):
    """The next or previous sibling element of `node`, past spaces; None at text or the end."""
    sibling = getattr(node, direction)
    while sibling is not None and sibling.tag == "-text" \
            and not (sibling.text_content or "").strip():
        sibling = getattr(sibling, direction)
    return None if sibling is None or sibling.tag == "-text" else sibling


def _pseudo_headings(dl) -> list:
    """The <dt>s of a <dl> that holds nothing else: what ";Term" alone on its line gives, a
    pseudo-heading (see wikitext.with_pseudo_headings); [] for a definition list."""
    terms = []
    for child in dl.iter(include_text=False):
        if child.tag != "dt":
            return []
        terms.append(child)
    return terms


def _is_inline_code(tag: str, node) -> bool:
    """Whether a dropped code element is inline code on one line, in running text (words of its
    parent outside it): text of the sentence ("the file is named <code>build.xml</code>"), as on
    the wikitext path; a line of code alone is dropped."""
    if tag != "code":
        return False
    code = node.text()
    if "\n" in code:
        return False
    parent = node.parent
    return parent is not None and _ANY_WORD.search(parent.text().replace(code, "", 1)) is not None


# Dropped blocks whose transclusion's other elements go with them (see _Work.dropped_about).
_GROUP_REASONS = frozenset({"tables", "infoboxes", "navboxes"})
_GROUP_TAGS = frozenset({"table", "div"})
# Tags dropped whatever their attributes (an element without attributes is otherwise kept).
_DROPPED_TAGS = frozenset({"table", "figure", "figcaption", "math", "pre", "code", "style",
                           "script"})
_SKIPPED_TAGS = SILENT_TAGS - _DROPPED_TAGS  # not walked, not counted
# Lexbor's tag ids: text nodes are 2, HTML's tags have small fixed ids (names cached here), other
# tags an id of their own in each document (a pointer, above _FIXED_TAG_IDS: never cached).
_TEXT_ID = 2
_FIXED_TAG_IDS = 1 << 12
_TAG_NAMES: dict[int, str] = {}


def _tag_name(node, tag_id: int) -> str:
    """`node.tag` (a new string on each call; `tag_id` is an int), cached for HTML's tags."""
    tag = node.tag
    if tag_id < _FIXED_TAG_IDS:
        _TAG_NAMES[tag_id] = tag
    return tag
# A link's text in a paragraph's text: OPEN, the link's number, NUMBER_END, the anchor, CLOSE.
_OPEN, _NUMBER_END, _CLOSE = "\ue000", "\ue002", "\ue001"
# Read off the HTML text (a category link may lie in a section cut before parsing).
_CATEGORY_REL = '"mw:PageProp/Category"'
_HREF = re.compile(r'\bhref="([^"]*)"')
_H2_SECTION = re.compile(r'<section\b[^>]*>\s*(?:<div\b[^>]*>\s*)?<h2\b[^>]*>(.*?)</h2>', re.S)
_ANY_TAG = re.compile(r"<[^>]*>")
_MARK_TOKEN = re.compile("\ue000(\\d+)\ue002|\ue001")
_SPACE_AFTER_OPEN = re.compile("(\ue000\\d+\ue002) ")
_MARKS = re.compile("\ue000\\d+\ue002|[\ue000-\ue002]")


@dataclass
class _Work:
    """What one page gathers while it is walked (a ParsoidCleaner keeps no page's state)."""
    counts: Counter
    article: Article
    section: Section | None = None
    skip_below: int | None = None  # inside a boilerplate section of this level
    texts: list[str] = field(default_factory=list)  # the open paragraph's text (links marked)
    links: list[_Piece] = field(default_factory=list)  # the page's text links, by number
    hidden_links: list[Link] = field(default_factory=list)
    # `about` of the transclusions one of whose elements was dropped -> its reason: the other
    # elements of the same template's output go with it (a climate table's "Source : ..." line)
    dropped_about: dict[str, str] = field(default_factory=dict)
    heading_level: int = 0  # of the last heading (not pseudo-heading): pseudo-headings go below
    quote_about: set[str] = field(default_factory=set)  # transclusions holding a <blockquote>


@dataclass
class ParsoidCleaner:
    """Turns a page's Parsoid HTML into an Article, for one wiki (see the module's docstring).
    Read-only once built, like `wikitext.Cleaner`.

    Lexbor parses (C); Python walks the tree once, not entering what it drops, and a
    paragraph's text is gathered with each wiki link's text between marks (its number), from
    which `_sentences` makes sentences and link spans. selectolax's per-node calls (a Python
    object per node, an attribute dict per element) are most of the walk's time, so the hot
    loops read tag ids, not tag names, and one-text elements without iterating them."""

    titles: TitleParser
    splitter: SentenceSplitter | None
    options: ParseOptions = field(default_factory=ParseOptions)
    resolve: callable = None  # title -> redirect-resolved title

    def __post_init__(self):
        lang = self.titles.site.lang
        self.boilerplate = BOILERPLATE_SECTIONS["en"] | BOILERPLATE_SECTIONS.get(lang, set())
        self._pieces: dict[str, _Piece] = {}  # href -> its link's piece (read-only pieces)

    # ---- the article -----------------------------------------------------------------------
    def article(self, page: HtmlPage, counts: Counter | None = None) -> Article:
        counts = counts if counts is not None else Counter()
        article = Article(id=page.id, title=page.title, lang=self.titles.site.lang)
        html = page.html
        at = html.find(_CATEGORY_REL)
        while at >= 0:  # <link rel="mw:PageProp/Category" href="./Catégorie:X"/>
            start, end = html.rfind("<", 0, at), html.find(">", at)
            href = _HREF.search(html, start, end) if html.startswith("<link", start) else None
            if href:
                self._category(htmllib.unescape(href.group(1)), article.categories)
            at = html.find(_CATEGORY_REL, end)
        work = _Work(counts, article, Section(heading="", level=0))
        tree = LexborHTMLParser(self._without_boilerplate(page.html, counts))
        body = tree.body
        if body is not None:
            if "<dd" in page.html and _FORMULA_EXTENSIONS.search(page.html):
                _join_display_formulas(body, counts)
            self._block(body, work)
        self._end_section(work)
        article.links.extend(work.hidden_links)
        return article

    def _without_boilerplate(self, html: str, counts: Counter) -> str:
        """The HTML without its boilerplate sections of level 2 (References, Bibliography, ...:
        ~28% of the bytes of the sample's articles), cut from the text before it is parsed:
        from such a section's start to the next level-2 section's (or the body's end). The
        walk drops deeper ones (and these too, were they left)."""
        found, at = [], html.find("<section")  # _H2_SECTION.finditer(html), its start found
        while at >= 0:  # by str.find (~10x faster than the regex's own search)
            m = _H2_SECTION.match(html, at)
            if m is not None:
                found.append(m)
            at = html.find("<section", m.end() if m is not None else at + 1)
        cuts = []
        for k, m in enumerate(found):
            title = clean_spaces(htmllib.unescape(_ANY_TAG.sub("", m.group(1))))
            if in_boilerplate(title, self.boilerplate):
                end = found[k + 1].start() if k + 1 < len(found) else html.rfind("</body>")
                if end > m.start():
                    cuts.append((m.start(), end))
        if not cuts:
            return html
        counts["html_dropped_boilerplate_sections"] += len(cuts)
        parts, last = [], 0
        for start, end in cuts:
            parts.append(html[last:start])
            last = end
        parts.append(html[last:])
        return "".join(parts)

    def _category(self, href: str, categories: list[str]) -> None:
        """Add the category a <link rel="mw:PageProp/Category"> names, once."""
        parsed = self.titles.parse(_href_title(href.split("#", 1)[0]))
        if parsed is not None and parsed.ns == 14 and not parsed.interwiki:
            name = parsed.title.split(":", 1)[1]
            if name not in categories:
                categories.append(name)

    def plain_paragraphs(self, page: HtmlPage) -> list[str]:
        """Paragraph texts of a page, not split into sentences (to train Punkt on)."""
        article = ParsoidCleaner(self.titles, _WholeParagraphs(), self.options).article(page)
        return [p[0] for s in article.sections for p in s.paragraphs]

    # ---- what is dropped, what is a link -----------------------------------------------------
    def _dropped(self, node, reason: str, work: _Work) -> None:
        """Count a dropped element (the outermost only); keep an infobox's or table's links."""
        work.counts[f"html_dropped_{reason}"] += 1
        about = node.attributes.get("about") if reason in _GROUP_REASONS else None
        if about and node.tag in _GROUP_TAGS:  # (a ref or a style in a template's output is
            work.dropped_about[about] = reason  # not the template: its text stays)
        if reason == "infoboxes" or reason == "tables":
            self._collect_hidden_links(node, work.hidden_links)

    def _collect_hidden_links(self, node, hidden_links: list[Link]) -> None:
        for a in node.css('a[rel~="mw:WikiLink"]'):
            parsed = self.titles.parse(_href_title(a.attributes.get("href") or ""))
            if parsed is None or parsed.interwiki or parsed.ns != 0:
                continue
            target = self.resolve(parsed.title) if self.resolve else parsed.title
            hidden_links.append(Link(target=target, anchor=clean_spaces(a.text()), section=-1,
                                     paragraph=-1, sentence=-1, start=-1, end=-1,
                                     raw_target=parsed.title))

    def _link_piece(self, href: str) -> _Piece:
        """The piece of a link, without its text yet (None target: not a link to an article);
        cached by href (the same targets recur: ~1/3 of a page's links, more over a dump)."""
        piece = self._pieces.get(href)
        if piece is None:
            if len(self._pieces) >= 200_000:  # bound memory on huge dumps
                self._pieces.clear()
            piece = self._pieces[href] = self._new_link_piece(href)
        return piece

    def _new_link_piece(self, href: str) -> _Piece:
        parsed = self.titles.parse(_href_title(href))
        if parsed is None or parsed.interwiki or parsed.ns != 0:
            return _Piece("")
        target = self.resolve(parsed.title) if self.resolve else parsed.title
        return _Piece("", target=target, raw_target=parsed.title)

    # ---- the walk --------------------------------------------------------------------------
    def _block(self, node, work: _Work) -> None:
        """Walk a block container: inline runs become paragraphs; block children are walked."""
        names = _TAG_NAMES
        for child in node.iter(include_text=True):
            tag_id = child.tag_id
            if tag_id == _TEXT_ID:
                if work.skip_below is None:
                    work.texts.append(child.text_content)
                continue
            tag = names.get(tag_id) or _tag_name(child, tag_id)
            if tag[0] == "-":  # comments, doctype
                continue
            if tag == "section" or (tag == "div" and _is_heading_wrapper(child)):
                self._flush(work)
                self._block(child, work)
                self._flush(work)
                continue
            level = HEADINGS.get(tag)
            if level is not None:
                self._flush(work)
                self._heading(child, level, work)
                continue
            if tag in _SKIPPED_TAGS or work.skip_below is not None and tag != "dl":
                continue  # (a <dl> may hold pseudo-headings, which can end a skip)
            attrs = child.attributes
            if tag == "a":  # the common case, first: what _inline does with it
                rel = attrs.get("rel")
                if rel and "mw:WikiLink" in rel:  # no drop rule
                    if rel == "mw:WikiLink" or "mw:WikiLink" in rel.split():
                        self._link(child, attrs, work.texts, work)
                    else:
                        self._inline_children(child, work.texts, work)
                    continue
            reason = drop_reason(tag, attrs) if attrs or tag in _DROPPED_TAGS else None
            if reason == "code" and _is_inline_code(tag, child):
                reason = None
            block = tag in BLOCK_TAGS
            if reason is None and work.quote_about and attrs \
                    and attrs.get("about") in work.quote_about and _is_attribution(child):
                # a quotation's attribution in its template's output after the <blockquote>
                # ("— Léonard de Vinci, Carnets" after frwiki's {{Citation bloc}}): gone, as
                # on the wikitext path
                work.counts["html_quote_attributions"] += 1
                if block:
                    self._flush(work)
                continue
            if reason is None and work.dropped_about and attrs \
                    and attrs.get("about") in work.dropped_about:
                if block:  # the rest of a dropped transclusion: gone with it, counted once
                    self._flush(work)
                continue
            if reason is not None and not (reason == "tables" and self.options.keep_tables):
                if block:
                    self._flush(work)
                else:
                    _mark_inline_drop(reason, work.texts)
                self._dropped(child, reason, work)
                continue
            if tag == "dl":
                terms = _pseudo_headings(child)
                if terms:  # ";Term" alone on its line
                    self._flush(work)
                    for term in terms:
                        work.counts["pseudo_headings"] += 1
                        self._heading(term, pseudo_heading_level(work.heading_level), work,
                                      pseudo=True)
                    continue
                if work.skip_below is not None:
                    continue
            if not block:  # inline content directly in a container
                self._inline(child, tag, attrs, work.texts, work)
                continue
            self._flush(work)
            if tag in LIST_TAGS and not self.options.keep_lists:
                work.counts["html_dropped_lists"] += 1
            elif tag == "table":  # kept (--keep-tables): each row's cells
                self._table_rows(child, work)
            else:
                self._block(child, work)
                if tag == "blockquote" and attrs and attrs.get("about"):
                    work.quote_about.add(attrs["about"])
            self._flush(work)

    def _inline(self, node, tag: str, attrs: dict, out: list[str], work: _Work) -> None:
        """Append the text of an inline element to `out`; a wiki link's text goes between
        numbered marks (its piece in `work.links`). `_inline_children` does the same for each
        child, written out there (the hottest loop)."""
        if tag == "a":
            rel = attrs.get("rel")
            if rel and (rel == "mw:WikiLink" or "mw:WikiLink" in rel.split()):
                self._link(node, attrs, out, work)
                return
        elif tag == "br":
            out.append(" ")
            return
        elif tag == "sup":
            raised = _raised(node)
            if raised is not None:
                out.append(raised)
                return
        elif "mw:LanguageVariant" in (attrs.get("typeof") or "") and not node.text():
            out.append(variant_text(attrs.get("data-mw-variant") or ""))
            return
        self._inline_children(node, out, work)

    def _link(self, node, attrs: dict, out: list[str], work: _Work) -> None:
        """A wiki link's text between numbered marks; its piece goes to `work.links`."""
        first = node.first_child
        if first is not None and first.tag_id == _TEXT_ID and first.next is None:
            anchor = first.text_content  # the common case: a link of plain text
        else:
            parts: list[str] = []
            self._inline_children(node, parts, work)
            anchor = "".join(parts)
        out.append(f"{_OPEN}{len(work.links)}{_NUMBER_END}{anchor}{_CLOSE}")
        work.links.append(self._link_piece(attrs.get("href") or ""))

    def _inline_children(self, node, out: list[str], work: _Work) -> None:
        names = _TAG_NAMES
        for child in node.iter(include_text=True):
            tag_id = child.tag_id
            if tag_id == _TEXT_ID:
                out.append(child.text_content)
                continue
            tag = names.get(tag_id) or _tag_name(child, tag_id)
            if tag[0] == "-" or tag in _SKIPPED_TAGS:
                continue
            attrs = child.attributes
            if tag == "a":  # what _inline does, written out
                rel = attrs.get("rel")
                if rel and "mw:WikiLink" in rel:  # the common case, first: no drop rule
                    if rel == "mw:WikiLink" or "mw:WikiLink" in rel.split():
                        self._link(child, attrs, out, work)
                    else:
                        self._inline_children(child, out, work)
                    continue
            if attrs or tag in _DROPPED_TAGS:
                reason = drop_reason(tag, attrs)
                if reason is None and work.dropped_about and attrs.get("about") in work.dropped_about:
                    continue  # the rest of a dropped transclusion: gone with it, counted once
                if reason == "code" and _is_inline_code(tag, child):
                    reason = None
                if reason is not None:
                    self._dropped(child, reason, work)
                    _mark_inline_drop(reason, out)
                    continue
            if tag == "sup":  # "10<sup>9</sup>" is not "109" (the wikitext path's rule)
                raised = _raised(child)
                if raised is not None:
                    out.append(raised)
                    continue
            if tag in BLOCK_TAGS:  # a block inside inline content (a list in a link): a space
                out.append(" ")
            if tag == "br":
                out.append(" ")
            elif tag != "a" and attrs and "mw:LanguageVariant" in (attrs.get("typeof") or "") \
                    and not child.text():
                out.append(variant_text(attrs.get("data-mw-variant") or ""))
            else:
                first = child.first_child
                if first is not None and first.tag_id == _TEXT_ID and first.next is None:
                    out.append(first.text_content)  # half of them: one text, no element
                else:
                    self._inline_children(child, out, work)

    def _table_rows(self, table, work: _Work) -> None:
        """--keep-tables: each row's cell texts, joined by " ; ", as a paragraph (wikitext's rule)."""
        for row in table.css("tr"):
            cells = []
            for cell in row.iter(include_text=False):
                if cell.tag in ("td", "th"):
                    out: list[str] = []
                    self._inline_children(cell, out, work)
                    text = "".join(out).strip()
                    if text:
                        cells.append(text)
            if cells:
                work.texts.append(" ; ".join(cells))
                self._flush(work)

    # ---- sections and paragraphs -----------------------------------------------------------
    def _heading(self, node, level: int, work: _Work, pseudo: bool = False) -> None:
        if not pseudo:
            work.heading_level = level
        out: list[str] = []
        self._inline_children(node, out, work)
        title = clean_spaces(_MARKS.sub("", "".join(out)).translate(_MARKS_OUT))
        if work.skip_below is not None and level > work.skip_below:
            return
        work.skip_below = None
        self._end_section(work)
        if in_boilerplate(title, self.boilerplate, level):
            work.counts["html_dropped_boilerplate_sections"] += 1
            work.skip_below = level
            work.section = None
            return
        work.section = Section(heading=title, level=level)

    def _end_section(self, work: _Work) -> None:
        self._flush(work)
        section = work.section
        if section is None:
            return
        # The lead is section 0 even without text, as in the wikitext path.
        if section.paragraphs or not section.level:
            work.article.sections.append(section)
        else:
            work.counts["empty_sections"] += 1
        work.section = None

    def _flush(self, work: _Work) -> None:
        """End the open paragraph: its sentences and links go to the current section."""
        texts, work.texts = work.texts, []
        section = work.section
        if not texts or section is None or work.skip_below is not None:
            return
        text = "".join(texts) if len(texts) > 1 else texts[0]
        if not text or text.isspace():
            return
        sentences, links = self._sentences(text, work.links, work.counts,
                                           len(work.article.sections), len(section.paragraphs))
        if not sentences or sum(map(len, sentences)) < self.options.min_paragraph_chars:
            return
        work.article.links.extend(links)
        section.paragraphs.append(sentences)

    def _sentences(self, text: str, pieces: list[_Piece], counts: Counter | None = None,
                   section: int = 0, paragraph: int = 0) -> tuple[list[str], list[Link]]:
        """A paragraph's marked text -> its sentences and the links in them (placed in
        `section` and `paragraph`). The wikitext
        path's rules (`Cleaner._sentences`): whitespace collapsed with no space at an anchor's
        ends, the text stripped, the same splitter; a link belongs to the sentence its anchor
        starts in (cut at that sentence's end). A "<div>" in a text node was typed as text
        ("&lt;div&gt;", <nowiki>): it stays, as the wikitext path keeps typed entities."""
        if "&" in text:  # "35&amp;nbsp;mm" typed: the entity, as the wikitext path reads it
            text = _TYPED_ENTITY.sub(lambda m: htmllib.unescape(m.group()), text)
        text = typed_note_marks(text)  # a citation mark typed as text (the wikitext path's)
        if _INVISIBLE.search(text):
            text = _INVISIBLE.sub("", text)
        if "  " in text or _OTHER_SPACE.search(text):
            # _SPACES.sub(" ", text) but for its ends, stripped below anyway: str.split() cuts
            # at the same whitespace as \s, ~4x faster than the regex's one match per space
            text = " ".join(text.split())
        marked = _OPEN in text
        if marked:  # no space at an anchor's ends: it goes outside the marks
            moved = False
            if _NUMBER_END + " " in text:
                text, moved = _SPACE_AFTER_OPEN.sub(r" \1", text), True
            if " " + _CLOSE in text:
                text, moved = text.replace(" " + _CLOSE, _CLOSE + " "), True
            if moved and "  " in text:
                text = " ".join(text.split())
        text = text.strip()
        spans = []
        if marked:
            # [text, link number or None (a close mark), text, ...]: `at`, the offset in the
            # text without marks, is the length of the texts before
            chunks = _MARK_TOKEN.split(text)
            at, opened, opened_at, piece = len(chunks[0]), False, 0, None
            for k in range(1, len(chunks), 2):
                number = chunks[k]
                if number is not None:
                    opened, opened_at, piece = True, at, pieces[int(number)]
                elif opened:
                    if at > opened_at and piece.target:
                        spans.append((opened_at, at, piece))
                    opened = False
                at += len(chunks[k + 1])
            text = "".join(chunks[::2])
            lead = len(text) - len(text.lstrip())  # an empty link at the start leaves a space
            if lead:
                spans = [(a - lead, b - lead, piece) for a, b, piece in spans]
            text = text.strip()
        if not text:
            return [], []
        holes = ()
        if _FORMULA in text or _NOTE in text:  # (an inline element dropped)
            text, spans, holes = without_holes(text, spans)
        bounds = prose_spans(text, self.splitter.spans(text), counts, holes)
        sentences = [text[a:b] for a, b in bounds]
        links, i = [], 0
        for start, end, piece in spans:  # spans and sentences both go left to right
            while i < len(bounds) and bounds[i][1] <= start:
                i += 1
            if i == len(bounds):
                break
            first, last = bounds[i]
            if start < first:  # in the space between two sentences
                continue
            lo, hi = start - first, min(end, last) - first
            links.append(Link(target=piece.target, anchor=sentences[i][lo:hi], section=section,
                              paragraph=paragraph, sentence=i, start=lo, end=hi,
                              raw_target=piece.raw_target))
        return sentences, links


def variant_text(data: str) -> str:
    """What a reader sees of a -{...}- block on a wiki that converts between variants: Parsoid
    leaves its element empty and describes it in `data-mw-variant` (JSON). As the wikitext path
    shows it: the raw text, or one variant's (Simplified Chinese first); a rule only declared
    (-{H|...}-) shows nothing."""
    try:
        variant = json.loads(data) if data else {}
    except ValueError:
        return ""
    if not isinstance(variant, dict) or (variant.get("add") and not variant.get("show")):
        return ""
    text = ""
    for key in ("disabled", "filter", "name"):
        if isinstance(variant.get(key), dict):
            text = variant[key].get("t") or ""
            break
    else:
        choices = {}
        for entry in variant.get("twoway") or variant.get("oneway") or ():
            if isinstance(entry, dict) and entry.get("l"):
                choices.setdefault(entry["l"], entry.get("t") or "")
        if choices:
            text = next((choices[code] for code in _VARIANT_ORDER if code in choices),
                        next(iter(choices.values())))
    return htmllib.unescape(_ANY_TAG.sub("", text)) if text else ""


def _is_heading_wrapper(node) -> bool:
    """<div class="mw-heading mw-heading2"><h2>...</h2>[edit section]</div> (newer HTML)."""
    cls = node.attrs.get("class") or ""
    return "mw-heading" in cls.split()


def _href_title(href: str) -> str:
    """The title a Parsoid link's href names ("./Foo_bar#x" -> "Foo bar#x"); a red link's
    "?action=edit&redlink=1" dropped. Percent-escapes are left to TitleParser."""
    if href.startswith("./"):
        href = href[2:]
    elif "/wiki/" in href:
        href = href.split("/wiki/", 1)[1]
    if "?" in href:
        href = href.split("?", 1)[0]
    return href.replace("_", " ")


class _WholeParagraphs:
    """A splitter that keeps a paragraph whole (plain_paragraphs)."""

    @staticmethod
    def spans(text: str) -> list[tuple[int, int]]:
        return [(0, len(text))] if text else []


def parse_html_article(page: HtmlPage, cleaner: ParsoidCleaner,
                       counts: Counter | None = None) -> Article:
    """The Article of one Enterprise HTML record (see `ParsoidCleaner`)."""
    return cleaner.article(page, counts)


__all__ = ["ParsoidCleaner", "drop_reason", "parse_html_article"]
