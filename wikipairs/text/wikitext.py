"""Wikitext to an Article: sections, paragraphs of sentences, links with spans, categories.

Speed comes from stripping with a few linear passes what mwparserfromhell need not see (comments,
refs, math/code-like tags, templates, tables, File links, categories, bold/italic quotes) and giving
it only what is left: short paragraphs of text and links. Kept inline templates (templates.py) are
parsed by mwparserfromhell one at a time and replaced by their text.
"""
from __future__ import annotations

import html
import re
from bisect import bisect_right
from urllib.parse import unquote
from collections import Counter
from dataclasses import dataclass, field

import mwparserfromhell
import regex
from mwparserfromhell.nodes import (Argument, Comment, ExternalLink, Heading, HTMLEntity, Tag,
                                    Template, Text, Wikilink)

from ..records import Article, Link, Page, Section
from .sentences import CASED_SCRIPTS, SentenceSplitter
from .template_drops import (NOT_WORDS, add_page as add_dropped_templates, display_name,
                             in_running_text)
from .link_trails import DEFAULT, LINK_TRAILS
from .templates import LITERAL, QUOTE_CLOSE, QUOTE_OPEN, renderer_for, superscript
from .titles import (INTERWIKI_PREFIXES, LANGUAGE_CODES, TitleParser, clean_spaces,
                     names_namespace)
from .tokens import UNSPACED_SCRIPTS

# Sections dropped with their subsections (casefolded headings); English is always included.
BOILERPLATE_SECTIONS = {
    "en": {"references", "notes", "see also", "external links", "further reading", "bibliography",
           "sources", "citations", "footnotes", "notes and references", "references and notes",
           "external link", "works cited", "general references", "explanatory notes",
           "related pages", "other websites", "gallery", "reference list", "primary sources",
           "secondary sources", "references cited", "literature cited", "further readings",
           "suggested reading", "recommended reading", "additional reading",
           "selected bibliography"},
    "de": {"einzelnachweise", "literatur", "weblinks", "siehe auch", "anmerkungen", "quellen",
           "belege", "fußnoten", "sekundärliteratur", "primärliteratur",
           "weiterführende literatur"},
    "fr": {"notes et références", "références", "voir aussi", "liens externes", "bibliographie",
           "articles connexes", "notes", "annexes", "notes et sources", "sources",
           "sites internet"},
    "es": {"referencias", "véase también", "enlaces externos", "bibliografía", "notas"},
    "el": {"παραπομπές", "εξωτερικοί σύνδεσμοι", "δείτε επίσης", "βιβλιογραφία", "σημειώσεις",
           "πηγές", "υποσημειώσεις", "περαιτέρω ανάγνωση", "προτεινόμενη βιβλιογραφία",
           "επιπλέον βιβλιογραφία", "διαβάστε επίσης", "δείτε ακόμη", "δικτυακοί τόποι"},
    "it": {"note", "bibliografia", "voci correlate", "collegamenti esterni", "altri progetti"},
    "nl": {"referenties", "bronnen", "zie ook", "externe links", "noten", "externe link",
           "literatuur", "voetnoten", "bronnen, noten en/of referenties"},
    "pt": {"referências", "ver também", "ligações externas", "bibliografia", "notas"},
    "ru": {"примечания", "литература", "ссылки", "см. также", "источники"},
    "uk": {"примітки", "джерела", "посилання", "див. також", "література"},
    "pl": {"przypisy", "bibliografia", "linki zewnętrzne", "zobacz też", "uwagi"},
    "cs": {"reference", "literatura", "externí odkazy", "související články", "poznámky",
           "odkazy"},
    "sv": {"referenser", "källor", "externa länkar", "se även", "noter"},
    "fi": {"lähteet", "aiheesta muualla", "katso myös", "viitteet"},
    "hu": {"jegyzetek", "források", "további információk", "lásd még",
           "kapcsolódó szócikkek"},
    "tr": {"kaynakça", "dış bağlantılar", "ayrıca bakınız", "notlar", "kaynaklar"},
    "id": {"referensi", "pranala luar", "lihat pula", "catatan", "lihat juga", "daftar pustaka",
           "bacaan lanjutan", "rujukan", "catatan kaki"},
    "vi": {"tham khảo", "liên kết ngoài", "xem thêm", "chú thích", "ghi chú", "đọc thêm",
           "thư mục"},
    "ar": {"مراجع", "المراجع", "مصادر", "المصادر", "وصلات خارجية", "روابط خارجية", "انظر أيضًا",
           "انظر أيضا", "ملاحظات"},
    "fa": {"منابع", "پانویس", "جستارهای وابسته", "پیوند به بیرون", "یادداشت‌ها", "یادداشت ها",
           "کتاب‌شناسی", "برای مطالعهٔ بیشتر", "برای مطالعه بیشتر"},
    "he": {"ראו גם", "קישורים חיצוניים", "הערות שוליים", "לקריאה נוספת", "ביאורים", "מקורות"},
    "hi": {"सन्दर्भ", "संदर्भ", "इन्हें भी देखें", "बाहरी कड़ियाँ"},
    "bn": {"তথ্যসূত্র", "আরও দেখুন", "আরো দেখুন", "বহিঃসংযোগ", "টীকা", "পাদটীকা", "আরও পড়ুন",
           "আরো পড়ুন", "গ্রন্থপঞ্জি", "গ্রন্থপঞ্জী", "গ্রন্থসূত্র", "উৎস"},
    "hy": {"ծանոթագրություններ", "արտաքին հղումներ", "տես նաև", "գրականություն"},
    "ja": {"脚注", "出典", "参考文献", "関連項目", "外部リンク", "注釈", "関連文献", "推薦文献",
           "参考資料", "関連書籍"},
    "zh": {"参考文献", "參考文獻", "参考资料", "參考資料", "参见", "參見", "外部链接", "外部連結",
           "注釋",
           "注释", "註釋", "相关条目", "相關條目", "延伸阅读", "延伸閱讀", "参考来源", "參考來源",
           "脚注", "腳註", "注解", "参考书目", "參考書目"},
    "ko": {"각주", "참고 문헌", "같이 보기", "외부 링크", "참고 자료", "참고문헌", "더 읽어보기",
           "출처", "바깥 고리", "내용주", "주해"},
}
# More wikis, a line each (language: its titles, separated by " | ").
_MORE_BOILERPLATE = """
ca: referències | vegeu també | enllaços externs | bibliografia | notes
ro: referințe | note | vezi și | legături externe | bibliografie
da: referencer | eksterne henvisninger | se også | kilder | litteratur | noter
no: referanser | eksterne lenker | se også | litteratur | kilder | noter
th: อ้างอิง | แหล่งข้อมูลอื่น | ดูเพิ่ม | เชิงอรรถ | บรรณานุกรม
ta: மேற்கோள்கள் | வெளி இணைப்புகள் | இவற்றையும் பார்க்கவும் | குறிப்புகள்
ur: حوالہ جات | بیرونی روابط | مزید دیکھیے
ms: rujukan | pautan luar | lihat juga | bacaan lanjut
bg: източници | външни препратки | вижте също | бележки | литература
sr: референце | спољашње везе | види још | литература | напомене
hr: izvori | vanjske poveznice | vidi još | literatura | bilješke
sl: sklici | zunanje povezave | glej tudi | viri | literatura
sk: referencie | externé odkazy | pozri aj | literatúra | poznámky
et: viited | välislingid | vaata ka | kirjandus | märkused
lv: atsauces | ārējās saites | skatīt arī | literatūra
lt: išnašos | nuorodos | šaltiniai | literatūra
eu: erreferentziak | kanpo estekak | ikus, gainera | bibliografia | oharrak
gl: notas | véxase tamén | ligazóns externas | bibliografía | referencias
az: istinadlar | xarici keçidlər | həmçinin bax | ədəbiyyat
ka: სქოლიო | რესურსები ინტერნეტში | იხილეთ აგრეთვე | ლიტერატურა
mr: संदर्भ | बाह्य दुवे | हे सुद्धा पहा
ml: അവലംബം | പുറത്തേക്കുള്ള കണ്ണികൾ | ഇതും കാണുക
te: మూలాలు | బయటి లింకులు | ఇవి కూడా చూడండి
"""
for _line in _MORE_BOILERPLATE.strip().splitlines():
    _lang, _titles = _line.split(": ", 1)
    BOILERPLATE_SECTIONS[_lang] = set(_titles.split(" | "))
BOILERPLATE_SECTIONS["nb"] = BOILERPLATE_SECTIONS["no"]
# as headings are compared (in_boilerplate): casefolded ("Fußnoten" is "fussnoten")
BOILERPLATE_SECTIONS = {lang: {title.casefold() for title in titles}
                        for lang, titles in BOILERPLATE_SECTIONS.items()}

# Tags removed with their content. (<noinclude>'s content is the page's own: shown, its tags go
# as leftover; <includeonly>'s shows only where the page is transcluded.)
DROPPED_TAGS = ("ref", "references", "math", "chem", "ce", "score", "code", "syntaxhighlight",
                "source", "pre", "gallery", "timeline", "graph", "mapframe", "maplink", "imagemap",
                "templatedata", "hiero", "inputbox", "categorytree", "includeonly",
                "templatestyles", "charinsert", "indicator", "section", "tabs", "table")

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.S)
# A comment alone on its line goes with its line break (MediaWiki's preprocessor), and a <ref>
# alone on its line leaves a footnote mark there: neither ends the paragraph ("born in 1900\n
# <!-- check -->\nin Paris." is one sentence).
_ALONE_ON_LINE = re.compile(
    r"\n(?:<!--(?:[^-]|-(?!->)){0,4000}-->|<(?i:ref)\b(?:[^>/]|/(?!>)){0,400}"
    r"(?:/>|>(?:[^<]|<(?!/(?i:ref)\b)){0,4000}</(?i:ref)\s*>))[ \t]*(?=\n)")
# (a comment or ref ends at its first end, none holds the next; bounded, so that many unclosed
# ones cost no square of the page)
_DROPPED = re.compile(
    r"<(%s)\b(?:[^>/]|/(?!>))*(?:/>|>.*?(?:</\1\s*>|\Z))" % "|".join(DROPPED_TAGS), re.S | re.I)
# Dropped tags whose content the page shows in its text (a formula, code): each is counted.
_SHOWN_DROPS = re.compile(r"<(?i:(math|chem|ce|code|syntaxhighlight|source|score|hiero)\b)")
_CODE_TAGS = frozenset({"code", "syntaxhighlight"})
_SHOWN_DROPPED = re.compile(r"<(math|chem|ce|code|syntaxhighlight|source|score|hiero)\b"
                            r"(?:[^>/]|/(?!>))*(?:/>|>.*?(?:</\1\s*>|\Z))", re.S | re.I)
_FORMULA_TAGS = frozenset({"math", "chem", "ce"})
# Formulas on lines of their own (":<math>..</math>", "<math display=block>..</math>."), one or
# several; see _display_formula.
_DISPLAY_FORMULAS = re.compile(
    r"(?m)^(?:[ \t:]*<(?i:math|chem|ce)\b(?:[^>/]|/(?!>))*>"
    r"(?:[^<]|<(?!/?(?i:math|chem|ce)\b))*</(?i:math|chem|ce)\s*>[ \t]*[.,;:]?[ \t]*(?:\n|\Z))+")
_BLANK_LINES = re.compile(r"(?:[ \t]*\n)*")
# A number in brackets, which may be a citation mark typed as text (see typed_note_marks).
# "[1][2][3]": one run (opening with the literal "[": a pattern opening with a group is tried
# at every character, 25x slower)
_BRACKETED_SMALL_NUMBER = re.compile(r"\[\d{1,3}\](?:\[\d{1,3}\])*")
_MARK_FOLLOWER = frozenset(".,;:!?।॥。)")
_LAST_REF = re.compile(r"<(?i:ref)\b[^>]*/>\Z|<(?i:ref)\b[^>]*>(?:(?!</?(?i:ref)\b).){0,4000}"
                       r"</(?i:ref)\s*>\Z", re.S)  # (one ref: its body holds no other)
_NOT_PROSE_START = frozenset("*#:;={|!")
_LETTER = regex.compile(r"\p{L}")
# Inline code on one line is text the reader sees in the sentence ("the file is named
# <code>build.xml</code>."), as in Parsoid's HTML; a block of code is dropped (<pre>, ...).
_NOWIKI = re.compile(r"<nowiki>(.*?)</nowiki>", re.S)
_INLINE_CODE = re.compile(r"<(?i:code)(?:\s[^<>\n]*)?>([^<\n]{0,400})</(?i:code)\s*>"
                          r"|<(?i:syntaxhighlight)\s[^<>\n]*\binline\b[^<>\n]*>([^<\n]{0,400})"
                          r"</(?i:syntaxhighlight)\s*>")
_STRAY_CLOSE = re.compile(r"</(?:%s)\s*>" % "|".join(DROPPED_TAGS), re.I)
# Block elements: MediaWiki ends the paragraph before and after them, so the last line of a poem
# or a quotation never runs into the text that follows it (as in Parsoid HTML, see parsoid.py).
# A poem's lines stay joined: a verse sentence often spans them.
_BLOCK_TAG = re.compile(r"<(?i:/?(?:poem|blockquote|div|center|p)\b)[^<>]*>")  # (a literal "<" first:
# the regex engine skips to it, which a pattern wholly case-insensitive does not)
# Behaviour switches in the wiki's own language as in English: __NOTOC__, __БЕЗ_ОГЛАВЛЕНИЯ__,
# __لا_فهرس__, __无目录__. Capitals or caseless letters joined by single underscores; a word with a
# lower-case letter (Python's __init__ in running text) is not a switch.
_MAGIC = regex.compile(r"__[\p{Lu}\p{Lt}\p{Lo}](?:[\p{Lu}\p{Lt}\p{Lo}\p{Lm}\p{M}\p{Nd}]|_(?!_))*__")
_DOUBLE_ESCAPED = re.compile(r"&amp;(?=(?:[A-Za-z][A-Za-z0-9]{1,31}|#[0-9]{1,7}|#[xX][0-9A-Fa-f]{1,6});)")
_QUOTES = re.compile(r"'{2,}")
# What _QUOTES.sub(lambda m: "'" if len(m.group()) == 4 else "", text) does, without a call per
# match: a run of exactly four quotes (bold plus an apostrophe) keeps one, other runs go.
# (It starts with a quote, not a lookbehind, so that the regex engine can skip to quotes.)
_QUOTE_MARKUP = re.compile(r"'(?:(?<!'')''(?='(?!'))|'+)")
_QUOTE_RUN = re.compile(r"(''+)")
_QUOTES_AFTER_LINK = re.compile(r"\]\](?=''+[^\W\d_])")  # "[[Syllabe|silab]]'''o'''"
# Put where a dropped template stood between two quote runs, which MediaWiki sees apart.
_RUN_BREAK = "\x02"
_BRACES = re.compile(r"\{\{|\}\}|^[ \t:]*\{\||^[ \t]*\|\}(?!\})", re.M)  # see _brace_tokens
_BRACE_CANDIDATES = re.compile(r"\{[{|]|\}\}|\|\}")
_BRACKETS = re.compile(r"\[\[|\]\]|\n[ \t]*\n")  # links never span a blank line
# The same tokens, but a link with no brackets or newline inside is one token (see
# strip_special_links): the tokens of _BRACKETS are found at the same places.
_BRACKET_TOKENS = re.compile(r"\[\[[^\[\]\n]*\]\]|\[\[|\]\]|\n[ \t]*\n")
_HEADING = re.compile(r"^(={1,6})[ \t]*(.+?)[ \t]*\1[ \t]*$", re.M)
_PARA_BREAK = re.compile(r"\n[ \t]*\n+")
# A line of nothing but pipes, bangs, braces and dashes: what is left of a table or of a
# multi-column template's separators ("|", "|}", "----"), never text.
_DEBRIS_LINE = re.compile(r"[\s|!{}\-]*\Z")
_DEBRIS_START = frozenset("|!{}-")
# Link brackets left in text: markup the source leaves unbalanced ("[[Thrissur]", "[[[x]]]"),
# shown as typed by MediaWiki but never words of a sentence.
_STRAY_BRACKETS = re.compile(r"\[\[+(?:([^\[\]\n]*)\](?!\]))?|\]\]+")  # "[[x]" too
# A link's target and bar left after a stray run of brackets: "[[Target|anchor)", "[[[Target|
# anchor]]", "]]Target|anchor]]", "[[Target [x]|anchor]]": the reader sees the anchor, so the
# target goes with its bar (a title: no newline, no "]" but one closing a "[", at most 255
# characters; possessive, so never tried again from inside). "[[Target|anchor]" is left to
# _STRAY_BRACKETS (the lookahead after the bar).
_STRAY_TARGET = re.compile(r"(?:\[\[++|\]\]++)(?=[^\s|\[\]])"
                           r"(?:[^\[\]|\n]|\[[^\[\]|\n]*\]|\[(?!\[)){1,255}+\|"
                           r"(?![^\[\]|\n]*\](?!\]))")
_LIST_ITEM = re.compile(r"^[*#:;]+[ \t]*")
# A link's trail: the letters right after `]]` that join its anchor ("[[bus]]es"): those of
# MediaWiki's $linkTrail for the wiki's language (link_trails.py, see `link_trail`).
_URL = re.compile(r"\b(?:https?|ftp)://\S+")
# Tags left over in text: those MediaWiki renders as markup (HTML its Sanitizer allows, the
# extension tags of Wikimedia's wikis). Any other "<...>" MediaWiki shows as typed: "x<y and
# y>z", "the &lt;blink&gt; element".
MARKUP_TAGS = (
    "a abbr b bdi bdo big blockquote br caption center cite code data dd del dfn div dl dt em "
    "font h1 h2 h3 h4 h5 h6 hr i ins kbd li link mark meta ol p pre q rb rp rt rtc ruby s samp "
    "small span strike strong sub sup table tbody td th thead time tr tt u ul var wbr "
    "ref references math chem ce poem gallery nowiki syntaxhighlight source score timeline "
    "templatestyles templatedata section indicator hiero graph mapframe maplink categorytree "
    "charinsert inputbox imagemap includeonly noinclude onlyinclude langconvert tabs tab "
    "phonos chart").split()
_SUP_NUMBER = re.compile(r"<(?i:sup)\b[^<>]*>\s*((?:[0-9+\-−–]|&minus;)+)\s*</(?i:sup)\s*>"
                         r"(?!\s*(?:⁄|&frasl;|/\s*<(?i:sub)))")  # (a fraction's numerator: "¹⁄2")
# A footnote's mark typed in superscript, "<sup>[37]</sup>" (pasted on bnwiki after "।” "):
# left as "[37]", it was a sentence of its own
_SUP_NOTE_MARK = re.compile(r"<(?i:sup)\b[^<>]*>(?:\[\d{1,3}\]\s*)+</(?i:sup)\s*>")
_TAG_LEFTOVER = re.compile(r"(?i)</?(?:%s)\b[^<>]*>" % "|".join(MARKUP_TAGS))
_SPACES = re.compile(r"\s+")
# Whitespace (what \s and str.isspace match) other than the space: a set of characters is
# searched much faster than \s (tests/test_speed_equivalence.py checks the list).
_OTHER_SPACE = re.compile(
    "[\t\n\x0b\x0c\r\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]")
# Characters that show nothing (soft hyphen, zero-width space, word joiner, BOM, the marks and
# controls of text direction, &lrm; &rlm;): removed from sentences. The zero-width (non-)joiners
# stay: Persian and Indic words need them.
_INVISIBLE = re.compile("[\xad\u200b\u2060\ufeff\u200e\u200f\u061c\u202a-\u202e\u2066-\u2069]")
# Brackets a dropped template leaves empty: "Alpha ({{IPA|...}}) is" -> "Alpha is"; not the
# call of rename() or match()-step, written so in running text (see `_without_empty_brackets`).
_EMPTY_BRACKETS = re.compile(r"[(（][\s,;:、，；]*[)）]")
_IDENTIFIER_END = re.compile(r"[A-Za-z0-9_]")
# ... or opening with the separator that followed it: "({{IPA|...}}; born 1900)" -> "(born 1900)".
_BRACKET_OPENS_WITH_SEPARATOR = re.compile(r"([(（])\s*[,;:、，；][\s,;:、，；]*")
# ... or closing after one: "(서울特別市, {{llang|...}})" -> "(서울特別市)", "（Neumann János，{{bd|...}}）"
# (not ";": "&beta;)" is an entity not yet decoded)
_BRACKET_CLOSES_AFTER_SEPARATOR = re.compile(r"[,、，；][\s,、，；]*([)）])")  # (space before: below)
# (a target holding the mark of a dropped template is no simple link: see _render_link)
_SIMPLE_LINK = r"\[\[([^\[\]|{}<>\x03-\x05]*)(?:\|([^\[\]{}<>]*))?\]\](%s)"  # trail: link_trail()
_HIDDEN_LINK = re.compile(r"\[\[([^\[\]|{}<>#]+)(?:#[^\[\]|]*)?(?:\|([^\[\]{}]*))?\]\]")
_NOT_SIMPLE = re.compile(r"[\[\]<>{}]|://")
# Inline HTML tags that _render_nodes reduces to their content, and line breaks (a space).
_INLINE_TAG = re.compile(
    r"</?(?:sub|sup|span|small|big|b|i|u|s|em|strong|abbr|cite|blockquote|center|var|dfn|kbd|"
    r"samp|tt|q|ins|del|strike|font|bdi|bdo|mark)\b[^<>]*>|(<br\s*/?>)", re.I)

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
class _PageWork:
    """What stripping one page gathers besides its text, handed down the template and table
    rendering: the page's counts and the links of its dropped templates and tables. It lives for
    one call, so that a Cleaner keeps no page's state."""
    counts: Counter
    hidden_links: list[Link] = field(default_factory=list)
    dropped_inline: Counter = field(default_factory=Counter)  # template name -> count
    boilerplate: list | None = None  # (start, end) of the boilerplate sections, when needed


def _inline_code(m: re.Match) -> str:
    """Inline <code>'s text as wikitext (MediaWiki reads markup in it, but "()" is typed, not
    the brackets a dropped template leaves); <syntaxhighlight inline>'s as typed."""
    if m.group(1) is not None:
        return m.group(1).replace("()", "&#40;&#41;")
    return m.group(2).translate(LITERAL)


def _literal(m: re.Match) -> str:
    """<nowiki>'s content as typed: its markup characters as entities, which no later pass reads
    as markup and the text decodes ("<nowiki>[[x]]</nowiki>" reads "[[x]]"). Its entities are
    read, once ("<nowiki>&lt;br&gt;</nowiki>" shows "<br>"; it read "<;br>;")."""
    content = m.group(1)
    if "&" in content:
        return html.unescape(content).translate(_NOWIKI_LITERAL)
    return content.translate(LITERAL)


_NOWIKI_LITERAL = {**LITERAL, ord("&"): "&#38;"}  # (an "&" decoded there is shown as it is)


def _without_empty_brackets(text: str) -> str:
    """`text` without the brackets dropped templates left: empty ones, with the space before
    them, and a separator that opens a bracket. A pattern that began with the optional space
    would be tried at every character (~7x slower on a page); the brackets are found first,
    marked, and the marks then go with a space before them."""
    def mark(m: re.Match) -> str:
        before = text[m.start() - 1:m.start()]
        return m.group() if _IDENTIFIER_END.match(before) else "\x00"
    marked = _EMPTY_BRACKETS.sub(mark, text)
    if "\x00" in marked:
        marked = marked.replace(" \x00", "").replace("\t\x00", "").replace("\x00", "")
    marked = _BRACKET_OPENS_WITH_SEPARATOR.sub(r"\1", marked)
    marked = _BRACKET_CLOSES_AFTER_SEPARATOR.sub("\x00\\1", marked)
    return marked.replace(" \x00", "").replace("\x00", "") if "\x00" in marked else marked


# Templates whose text is a footnote or a citation ({{efn|...}}, {{sfn|...}}, {{cite book|...}}):
# their links are the reference's, not the page's, as <ref>s' are (and as on the HTML path).
_FOOTNOTE = re.compile(r"(?i)(?:template:)?\s*(?:efn|refn|sfn|sfnp|sfnm|harvn?b?|harvp|notetag|"
                       r"cite|citation|ref label|note label)\b")


def _without_quote_markup(text: str) -> str:
    """`text` without its bold and italic quote runs, keeping the apostrophes MediaWiki shows
    (Parser::doQuotes, line by line): one of a run of four, all but five of a longer run, and,
    where a line has an odd number of both bold and italic runs, the first quote of the bold run
    that best follows a word's apostrophe: "l'''Homme de Vitruve''" reads "l'Homme de Vitruve",
    "''Eagle'''s engine" reads "Eagle's engine". The other lines need only _QUOTE_MARKUP, and
    only lines with a bold run can be one of these: they are found by a string search."""
    if "'''" not in text:
        return _QUOTE_MARKUP.sub("", text)
    out, last, at = [], 0, text.find("'''")
    while at != -1:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end == -1 else end
        bold = text.count("'''", at, end)  # runs of two and three only, where no "''''"
        if bold % 2 and (text.count("''", start, end) - bold) % 2 \
                or text.find("''''", at, end) != -1:
            out.append(_QUOTE_MARKUP.sub("", text[last:start]))
            out.append(_line_without_quote_markup(text[start:end]))
            last = end
        at = text.find("'''", end)
    out.append(_QUOTE_MARKUP.sub("", text[last:]))
    return "".join(out)


def _line_without_quote_markup(line: str) -> str:
    parts = _QUOTE_RUN.split(line)  # text, run, text, run, ..., text
    italics = bold = 0
    for i in range(1, len(parts), 2):
        n = len(parts[i])
        if n == 4 or n > 5:  # bold (or both) after apostrophes
            parts[i - 1] += "'" * (1 if n == 4 else n - 5)
            n = 3 if n == 4 else 5
            parts[i] = "'" * n
        italics += n != 3
        bold += n != 2
    if italics % 2 and bold % 2:  # one bold run is an apostrophe and an italic run
        single = multi = space = None
        for i in range(1, len(parts), 2):
            if len(parts[i]) == 3:
                before = parts[i - 1].encode()  # MediaWiki looks at bytes
                if before[-1:] == b" ":
                    space = i if space is None else space
                elif before[-2:-1] == b" ":
                    single = i
                    break
                elif multi is None:
                    multi = i
        chosen = next((i for i in (single, multi, space) if i is not None), None)
        if chosen is not None:
            parts[chosen - 1] += "'"
    return "".join(parts[0::2])


def _list_item(line: str) -> list[str]:
    """The text of a list line: "; Term : definition" is two items, as MediaWiki shows it (the
    first colon outside a link or template ends the term)."""
    if line[0] == ";" and ":" in line:
        text = _LIST_ITEM.sub("", line)
        depth = 0
        for i, ch in enumerate(text):
            if ch in "[{":
                depth += 1
            elif ch in "]}":
                depth -= 1
            elif ch == ":" and depth <= 0:
                return [part for part in (text[:i].strip(), text[i + 1:].strip()) if part]
        return [text]
    return [_LIST_ITEM.sub("", line)]


@dataclass
class _Paragraph:
    """A paragraph's wikitext and the fragments of a sentence that a list, indented lines or a
    block quotation in its middle cut ("the vowels are\n* a, i, u\nin that order."; "彼は\n
    {{Quote|…}}\nと述べている。"): its first sentence ends the cut one (`cut_first`), its last
    one begins it (`cut_last`). Neither is a sentence a reader would take for whole, so both
    are dropped (`Cleaner._sentences`, counted as `interrupted_sentences`)."""

    text: str
    cut_first: bool = False
    cut_last: bool = False


class _ParagraphRuns:
    """Reads a section's body block by block (`Cleaner.paragraph_runs`) and marks the ends of
    the sentences that list lines or a block quotation (templates.QUOTE_OPEN ... QUOTE_CLOSE,
    at the starts of the blocks they open and follow) interrupted."""

    def __init__(self, keep_lists: bool, min_chars: int):
        self.keep_lists, self.min_chars = keep_lists, min_chars
        self.out: list[_Paragraph] = []
        self.quote_depth = 0
        self.quote_before: _Paragraph | None = None  # the text before the open quotation
        self.last_text: _Paragraph | None = None  # the block read last ended with it

    def block(self, block: str) -> None:
        if "\n" not in block and not self.quote_depth and QUOTE_OPEN not in block \
                and QUOTE_CLOSE not in block and not _LIST_ITEM.match(block):
            self._text_line(block.strip())  # the common block: a line of text
            return
        after_quote = False
        if QUOTE_OPEN in block or QUOTE_CLOSE in block:
            after_quote = self._quote_marks(block)
            block = block.replace(QUOTE_OPEN, "").replace(QUOTE_CLOSE, "")
        self.lines: list[_Paragraph] = []
        self.current: list[str] = []
        self.cut_first = False  # `current` opens with the end of a sentence cut
        # the text just before the list lines (or the quotation) read; whether they were read
        before = self.quote_before if after_quote else None
        interrupted = after_quote
        self.last_text = None
        for line in block.split("\n"):
            item = _LIST_ITEM.match(line)
            if item:
                if self.current:
                    before = self._flush()
                elif not interrupted:
                    before = None
                # (an indented line left empty held a display formula: its rule's, not this)
                interrupted = interrupted or item.end() < len(line.rstrip())
                if self.keep_lists:
                    self.lines.extend(_Paragraph(text) for text in _list_item(line))
                continue
            line = line.strip()
            if line and (line[0] not in _DEBRIS_START or not _DEBRIS_LINE.match(line)):
                if interrupted and not self.quote_depth and _continues_after_list(before, line):
                    self.cut_first = True
                    if before is not None and _unfinished(before.text):
                        before.cut_last = True
                interrupted = False
                self.current.append(line)
            elif line:  # a rule ("----") or a table's edge: a block ends
                if self.current:
                    self._flush()
                interrupted, before = False, None
        if self.current:
            self.last_text = self._flush()
        if self.quote_depth:
            self.last_text = None
        self.out.extend(p for p in self.lines if len(p.text.strip()) >= self.min_chars)

    def _text_line(self, line: str) -> None:
        """What `block` does with a block of one line of text, outside quotations: no list."""
        self.last_text = None
        if line and (line[0] not in _DEBRIS_START or not _DEBRIS_LINE.match(line)):
            self.last_text = paragraph = _Paragraph(line)
            if len(line) >= self.min_chars:
                self.out.append(paragraph)

    def _quote_marks(self, block: str) -> bool:
        """Follows the quotation marks of `block`, nested ones too; whether the block starts
        right after a quotation, text following it on the same line or the next (a blank
        line there makes it a paragraph of its own: "</quote>\n\nA new one")."""
        after_quote = False
        for mark in _QUOTE_MARK.findall(block):
            if mark == QUOTE_OPEN:
                if not self.quote_depth:
                    self.quote_before = self.last_text
                self.quote_depth += 1
            elif self.quote_depth:
                self.quote_depth -= 1
                after_quote = not self.quote_depth and block.lstrip().startswith(QUOTE_CLOSE) \
                    and bool(block.lstrip()[1:].strip())
        return after_quote

    def _flush(self) -> _Paragraph:
        paragraph = _Paragraph(" ".join(self.current), cut_first=self.cut_first)
        self.lines.append(paragraph)
        self.current, self.cut_first = [], False
        return paragraph


_QUOTE_MARK = re.compile(f"[{QUOTE_OPEN}{QUOTE_CLOSE}]")
# What may open a line's text before its first letter: bold or italic quotes, a link's
# brackets and target, the marks of dropped templates, spaces.
_LINE_OPENING = re.compile(r"(?:'{2,}|\[\[(?:[^|\]\n]*\|)?|[\s\x03\x04\x05\ue005\ue006])*")
# Japanese particles that go on with a sentence after a list or quotation ("と述べている",
# "などの特徴", "に近い", "という文", "が同一に帰した"), not the words that open one ("では、",
# "もっとも、", "というのも、", "また、", "この", "これは", "なお"); a line of kanji or katakana is a
# label's
_PARTICLE_OPENING = re.compile(
    r"(?:など|から|まで|より|(?:と|に|を|が|は|で|の|も|や|へ)"
    r"(?!(?:は|も|し|ち|っと|ちろん|じめ|くに|りわけ|ころ|にかく|ともと|いうのも|いえば)[、，]?))")
_CASED_LOWER = regex.compile(rf"(?V1)[[{CASED_SCRIPTS}]&&\p{{Ll}}]")


def _continues_after_list(before: _Paragraph | None, line: str) -> bool:
    """Whether `line`, right after list lines or a block quotation, goes on with the sentence
    they interrupted (never after a sentence's end mark): it opens with a lower-case letter of a
    script with capitals ("such as:\n* a\n* b\nwhich differ"; not Georgian, whose letters are
    all "lower case"), or with a Japanese particle after text that stopped mid-sentence (jawiki
    "基本の5母音は、それぞれ\n*ä、i̠ ...\nに近い発音と捉えられる。", "彼は\n{{Quote|…}}\nと述べ
    ている。"). In other scripts without capitals a line may well begin a sentence after
    "X wrote," and a quotation (bnwiki's "হার্ডি লিখেছেন,\n{{cquote|…}}\nকেমব্রিজ এর ..."): kept."""
    end = _paragraph_end(before.text) if before is not None else ""
    if end in _END_MARKS:
        return False
    opening = line[_LINE_OPENING.match(line).end():]
    if _CASED_LOWER.match(opening):
        return True
    return before is not None and _PARTICLE_OPENING.match(opening) is not None \
        and _unfinished(before.text)


def _paragraph_end(text: str) -> str:
    """The last character of a paragraph's words (`_words_end`: a link's anchor's, not "]]")."""
    return _words_end(text.rstrip(" \t\x03\x04\x05"))[-1:]


def _unfinished(text: str) -> bool:
    """Whether a paragraph stops mid-sentence (`stops_mid_sentence`)."""
    return stops_mid_sentence(_paragraph_end(text))


def stops_mid_sentence(words: str) -> bool:
    """Whether text whose words end with `words` stops mid-sentence: on a word or a comma, not
    on an end mark, a colon, a closing bracket or quote. One rule for the lines before a
    display formula (both paths) and before a list or quotation."""
    end = words[-1:]
    return end in _SEPARATORS or bool(end) and bool(_WORD_END.match(end))


def _without_cut_ends(bounds: list[tuple[int, int]], size: int, paragraph: _Paragraph,
                      counts: Counter | None) -> list[tuple[int, int]]:
    """A paragraph's sentence spans without the fragments an interruption cut (`_Paragraph`):
    its first span if it opens the text, its last if it ends it (one that `prose_spans` left
    out already is not replaced by its neighbour)."""
    first = 1 if paragraph.cut_first and bounds and bounds[0][0] == 0 else 0
    last = len(bounds) - 1 if paragraph.cut_last and bounds and bounds[-1][1] == size \
        else len(bounds)
    kept = bounds[first:max(first, last)]
    if counts is not None:
        counts["interrupted_sentences"] += len(bounds) - len(kept)
    return kept


def with_pseudo_headings(text: str, counts: Counter | None = None) -> str:
    """`text` with its pseudo-headings made headings: a definition list of terms alone (lines
    "; Term" in a row, none with a definition, on the line after a colon or on a line ": ..."),
    bold text on lines of their own that the page uses as headings (MOS:PSEUDOHEAD: ";Official",
    ";Κυβέρνηση", ";ヘタウマ文字"), one level below the heading they stand under
    (`pseudo_heading_level`). As headings they are no sentences, and a boilerplate one (";Notes",
    ";Bibliography") drops what follows it; on the HTML path a <dl> of <dt>s alone is one.
    Counted as pseudo_headings."""
    out, last, real, starts = [], 0, None, None
    at = 0 if text[:1] == ";" else text.find("\n;")
    while at >= 0:
        at += text[at] == "\n"  # (the line's start)
        lines, end = _definition_list(text, at)
        start, at = at, text.find("\n;", end)
        if not all(line[:1] == ";" and line[1:2] != ";" and len(_list_item(line)) == 1
                   and line[1:].strip() for line in lines):
            continue  # a definition list: its terms have definitions
        if real is None:
            real = [(m.start(), len(m.group(1))) for m in _HEADING.finditer(text)]
            starts = [start for start, _ in real]
        i = bisect_right(starts, start) - 1
        marks = "=" * pseudo_heading_level(real[i][1] if i >= 0 else 0)
        out.append(text[last:start])
        out.append("\n".join(f"{marks} {line[1:].strip()} {marks}" for line in lines))
        last = end
        if counts is not None:
            counts["pseudo_headings"] += len(lines)
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def _definition_list(text: str, at: int) -> tuple[list[str], int]:
    """The lines of the definition list that starts at `at` (lines opened by ";" or ":", in a
    row) and where it ends."""
    lines = []
    while True:
        stop = text.find("\n", at)
        stop = len(text) if stop < 0 else stop
        lines.append(text[at:stop].rstrip())
        if text[stop + 1:stop + 2] not in (";", ":"):  # ("" at the text's end)
            return lines, stop
        at = stop + 1


def pseudo_heading_level(level: int) -> int:
    """The level of a pseudo-heading under a heading of `level` (the lead's is 0): one below."""
    return min(6, level + 1) if level else 2


def heading_text(raw: str) -> str:
    """A wikitext heading as shown: tags out (a <br> a space), entities decoded ("XIX<sup>e</sup>
    &nbsp;siècle" reads "XIXe siècle", "Career<br />and work" "Career and work")."""
    if "<" in raw:
        raw = _TAG_LEFTOVER.sub(lambda m: " " if m.group()[1:3].lower() == "br" else "", raw)
    if "&" in raw:
        raw = html.unescape(raw)
    if _MARK_CHARS.search(raw):  # (the marks of dropped templates)
        raw = raw.translate(_MARKS_OUT)
    return clean_spaces(raw if raw.isascii() else _INVISIBLE.sub("", raw))  # (U+2060 too)


def in_boilerplate(title: str, boilerplate, level: int = 2) -> bool:
    """Whether a section titled `title` (a heading of `level`) is one of `boilerplate`
    ("Références :", "See also"), or joins some of them ("References and further reading",
    "Notes and citations", "Quellen und Literatur"). A title that also names a topic
    ("Literatur", "Primary sources") is boilerplate only at level 2: "=== Litteratur ===" under
    "== Kultur ==" is about literature."""
    key = title.casefold().rstrip(": ")
    if key[-1:] in ")）" and key not in boilerplate:  # a qualifier: "Βιβλιογραφία (στα αγγλικά)",
        key = _QUALIFIER.sub("", key) or key       # "Literatur (Auswahl)", "Weblinks (englisch)"
    if key in boilerplate:
        return level <= 2 or key not in TOPIC_TITLES
    parts = _TITLE_JOINS.split(key) if " " in key or "," in key or "/" in key or "-" in key \
        or "–" in key else ()
    return len(parts) > 1 and all(part in boilerplate for part in parts)


TOPIC_TITLES = frozenset({
    "literatur", "литература", "література", "literatura", "literatúra", "literatuur",
    "litteratur", "kirjandus", "literatūra", "ədəbiyyat", "ლიტერატურა", "primary sources",
    "secondary sources", "উৎস"})  # (Bengali "sources", also a river's source)
# A qualifier of one or two words ("(στα αγγλικά)", "(Auswahl)"), not a topic's "(of the Nile)"
_QUALIFIER = re.compile(r"\s*[(（][^()（）\s]+(?:\s[^()（）\s]+)?[)）]$")
# What joins two section titles in one: "and", "&", a comma, a slash, and their kin in other
# languages ("et", "und", "y", "e", "i", "и", "і", "ve", "en", "och", "og", "ja", "és", "a"), a
# hyphen or dash ("Βιβλιογραφία-Πηγές").
_TITLE_JOINS = re.compile(r"\s+(?:and|&|et|und|y|e|i|и|і|ve|en|och|og|ja|és|a)\s+|\s*[,/\-–]\s*")


def shown_in_text(parsed, target: str) -> bool:
    """Whether a File, Media or Category link (`target` as written, `parsed` its title) shows in
    the running text as a link, its label or else its name: [[:Category:X]], [[:File:X|label]],
    [[Media:X|label]]. The rest is a picture (caption and all) or the page's category tag."""
    return bool(parsed) and (parsed.ns == -2 or parsed.ns in (6, 14)
                             and target.lstrip().startswith(":"))


@dataclass
class Cleaner:
    """Turns a page's wikitext into sections of paragraphs and links, for one wiki.

    It holds only the wiki's configuration, read-only once built: what a page gathers while it
    is cleaned (counts, hidden links) goes into a `_PageWork` of that call. One Cleaner may
    therefore clean pages in any order, interleaved, and gives each the same Article."""

    titles: TitleParser
    splitter: SentenceSplitter | None  # None: only strip/render, no sentences
    options: ParseOptions = field(default_factory=ParseOptions)
    resolve: callable = None  # title -> redirect-resolved title

    def __post_init__(self):
        lang = self._lang = self.titles.site.lang  # inline templates are the wiki's own
        # -{...}- is markup only where MediaWiki converts between variants; elsewhere it is text.
        self._converts_variants = lang.split("-")[0] in VARIANT_LANGUAGES
        trail = link_trail(lang)
        self._simple_link = re.compile(_SIMPLE_LINK % trail)
        self._trail = re.compile(trail)
        self._trail_end = re.compile(r"\]\]%s\Z" % trail)  # a link and its trail end here
        self.boilerplate = BOILERPLATE_SECTIONS["en"] | BOILERPLATE_SECTIONS.get(lang, set())
        self.file_names = self.titles.namespace_names(6) | self.titles.namespace_names(-2)
        self.category_names = self.titles.namespace_names(14)
        # "Tập tin:" is also written "Tập_tin:" or "Tập  tin:": MediaWiki reads all as one name
        names = "|".join(re.escape(n).replace(r"\ ", r"[ _]+")
                         for n in sorted(self.file_names | self.category_names))
        self._special_link = re.compile(r"\[\[\s*:?\s*(%s)\s*:" % names, re.I) if names else None
        self._brackets_before_special = re.compile(
            r"\[+(?=\[\[\s*:?\s*(?:%s)\s*:)" % names, re.I) if names else None

    # ---- stripping passes -------------------------------------------------------------------
    def strip(self, text: str, counts: Counter) -> tuple[str, list[str], list[Link]]:
        """Wikitext without noise, templates, tables, files; plus the categories found and the
        links of the dropped templates and tables (see `_collect_hidden_links`)."""
        work = _PageWork(counts)
        if "\n<!--" in text or "\n<ref" in text:  # (a line opened by spaces is preformatted)
            text = _ALONE_ON_LINE.sub("", text)
        text = _COMMENT.sub("", text)
        if "<nowiki>" in text:
            text = _NOWIKI.sub(_literal, text)
        shown = _SHOWN_DROPS.findall(text)
        if shown and any(tag.lower() in _CODE_TAGS for tag in shown):  # (one scan of the page)
            text = _INLINE_CODE.sub(lambda m: _inline_code(m) if in_running_text(
                text, m.start(), m.end()) else m.group(), text)  # (a line of code: dropped)
            shown = _SHOWN_DROPS.findall(text)
        if shown:  # content a reader sees, not in the text: counted (dropped_math, ...)
            for tag in shown:
                counts["dropped_" + tag.lower()] += 1
            if "\n" in text and any(tag.lower() in _FORMULA_TAGS for tag in shown):
                text = _with_display_formulas(text)
            # in running text, a formula leaves a hole: "for {{math}}, if a ≤ b"
            text = _SHOWN_DROPPED.sub(lambda m: _FORMULA if in_running_text(
                text, m.start(), m.end()) else "", text)
        if " <ref" in text:  # a note mark where it stood: "Gamma <ref>..</ref>, delta"
            text = text.replace(" <ref", " " + _NOTE + "<ref")
        if ">[" in text and ("<sup" in text or "<SUP" in text):  # "<sup>[37]</sup>": a note
            text = _SUP_NOTE_MARK.sub(_NOTE, text)                # mark anywhere
        text = typed_note_marks(text)  # "[59]" typed, pasted from another site: a note mark
        text = _DROPPED.sub("", text)
        text = _STRAY_CLOSE.sub("", text)
        if self._converts_variants and "-{" in text:
            text = _LANG_CONVERSION.sub(_converted, text)
        # File links before templates: a caption's legend templates ({{legend|...}} a line each)
        # would otherwise leave blank lines that end the link early and leak the caption.
        if "[[[" in text and self._special_link is not None:  # "[[[[Image:x]]": one link
            text = self._brackets_before_special.sub("", text)
        text, categories = self.strip_special_links(text)
        text = self.expand_templates(text, work)
        add_dropped_templates(counts, work.dropped_inline)
        if "<sup" in text or "<SUP" in text:  # "10<sup>9</sup>" is not "109"
            text = _SUP_NUMBER.sub(_raised, text)
        text = _BLOCK_TAG.sub("\n\n", text)
        if "__" in text:
            text = _MAGIC.sub("", text)
        if "()" in text or "( " in text or "(," in text or "(;" in text or "（" in text \
                or ", )" in text or ",)" in text:
            text = _without_empty_brackets(text)  # the gates above: str searches, ~10x cheaper
        if "&amp;" in text:  # a double-escaped entity (&amp;nbsp;) is the entity
            text = _DOUBLE_ESCAPED.sub("&", text)
        if "''" in text:
            if "]]''" in text:  # MediaWiki takes a link's trail before its quotes: none here
                text = _QUOTES_AFTER_LINK.sub("]]\u2060", text)  # (removed as invisible)
            text = _without_quote_markup(text)
        if _RUN_BREAK in text:  # ("'{{x}}'" leaves one where no quote run is)
            text = text.replace(_RUN_BREAK, "")
        return text, categories, work.hidden_links

    def expand_templates(self, text: str, work: _PageWork, depth: int = 0) -> str:
        """Replace each outermost {{template}} by its text (kept ones) or nothing; same for tables."""
        if "{" not in text:
            return text
        out, stack, last = [], [], 0
        for token, begin, end in _brace_tokens(text):
            if token == "{{":
                stack.append(("t", begin))
            elif token == "{|":
                stack.append(("table", begin))
            elif token == "}}":
                if stack and stack[-1][0] == "t":
                    kind, start = stack.pop()
                    if not stack:
                        out.append(text[last:start])
                        rendered = self._render_template(text[start:end], work, depth, text,
                                                         start)
                        if not rendered and text[start - 1:start] == "'" == text[end:end + 1]:
                            rendered = _RUN_BREAK  # '''{{chem|..}}''': two runs, not six quotes
                        out.append(rendered)
                        last = end
            elif stack and stack[-1][0] == "table":
                kind, start = stack.pop()
                if not stack:
                    out.append(text[last:start])
                    out.append(self._render_table(text[start:end], work, depth, text, start))
                    last = end
        if stack:  # unclosed: MediaWiki shows it as text; we drop the opening markup only
            start = stack[0][1]
            out.append(text[last:start])
            rest = text[start:]
            rest = rest.replace("{{", "", 1) if stack[0][0] == "t" else ""
            work.counts["unclosed_template_or_table"] += 1
            out.append(self.expand_templates(rest, work, depth + 1) if depth < 20 else "")
            return "".join(out)
        out.append(text[last:])
        return "".join(out)

    def _render_template(self, source: str, work: _PageWork, depth: int, context: str = "",
                         start: int = 0) -> str:
        name = source[2:].split("|", 1)[0].split("}}", 1)[0]
        renderer = renderer_for(name, self._lang)
        if renderer is None or depth > 20:
            # Its words are lost where it stood in running text; its links (an infobox's) are
            # the page's, unless it is a footnote or in a boilerplate section (a publisher in a
            # {{cite book}} under "Sources"): the rule of the HTML path's hidden links.
            running = renderer is None and in_running_text(context, start, start + len(source))
            links = "[[" in source and not _FOOTNOTE.match(name.strip())
            if (running or links) and not (depth == 0 and self._in_boilerplate(context, start,
                                                                               work)):
                if links:
                    self._collect_hidden_links(source, work.hidden_links)
                if running:
                    name = display_name(name)
                    work.dropped_inline[name] += 1
                    # its words are missing there, or a note mark (see without_holes); a template
                    # of many lines (an infobox closed on the text's line) is no hole
                    return _HOLE if name not in NOT_WORDS and "\n" not in source else _NOTE
            return ""
        work.counts["templates_kept"] += 1
        args = template_args(source)
        if args is None:
            return ""
        rendered = renderer(args)
        if not rendered and context and in_running_text(context, start, start + len(source)):
            return _NOTE  # a mark that shows no words ({{refnec}}): its space goes with it
        return self.expand_templates(rendered, work, depth + 1)

    def _in_boilerplate(self, text: str, position: int, work: _PageWork) -> bool:
        """Whether `position` of the page's text is in a section that `sections` drops
        (references, external links...: a template there takes no words from the article).
        The sections are found once per page, and only for a page with a dropped inline
        template or a table with links."""
        if work.boilerplate is None:
            work.boilerplate, skip_level, skip_start = [], None, 0
            for m in _headings(text):
                level = len(m.group(1))
                if skip_level is not None and level > skip_level:
                    continue
                if skip_level is not None:
                    work.boilerplate.append((skip_start, m.start()))
                    skip_level = None
                if in_boilerplate(heading_text(m.group(2)), self.boilerplate, level):
                    skip_level, skip_start = level, m.start()
            if skip_level is not None:
                work.boilerplate.append((skip_start, len(text)))
        return any(start <= position < end for start, end in work.boilerplate)

    def _render_table(self, source: str, work: _PageWork, depth: int, context: str = "",
                      start: int = 0) -> str:
        work.counts["tables"] += 1
        if not self.options.keep_tables:
            # its links are the page's, but in a section the page drops (a table of sources
            # under "References"), as a template's are (_render_template)
            if "[[" in source and not (depth == 0 and context
                                       and self._in_boilerplate(context, start, work)):
                self._collect_hidden_links(source, work.hidden_links)
            return "\n\n"
        rows, cells = [], []
        # Templates first: a cell's first "|" separates attributes only outside templates.
        body = source.split("\n", 1)[1] if "\n" in source else ""
        body = self.expand_templates(body[: body.rfind("|}")], work, depth + 1)
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

    def _collect_hidden_links(self, source: str, hidden_links: list[Link]) -> None:
        """Links inside dropped templates (infoboxes) and tables are not in the text, but they are
        in the page's link graph: append them to `hidden_links` with no position (section,
        sentence... = -1)."""
        if "[[" not in source:
            return
        marked = _MARK_CHARS.search(source) is not None  # (one scan; rare)
        for m in _HIDDEN_LINK.finditer(source):
            if marked and _MARK_CHARS.search(m.group(1)):  # a dropped template in the target:
                continue  # which page is not known
            parsed = self.titles.parse(m.group(1))
            if parsed is None or parsed.interwiki or parsed.ns != 0:
                continue
            target = self.resolve(parsed.title) if self.resolve else parsed.title
            raw = m.group(2) if m.group(2) is not None else m.group(1)
            anchor = _unescape(raw)
            if marked or "&" in raw:  # (typed angle brackets come back as themselves)
                anchor = anchor.translate(_PLAIN_MARKS)
            anchor = anchor.strip()
            hidden_links.append(Link(target=target, anchor=anchor, section=-1, paragraph=-1,
                                     sentence=-1, start=-1, end=-1, raw_target=parsed.title))

    def strip_special_links(self, text: str) -> tuple[str, list[str]]:
        """Remove File/Image links (captions too) and categories; return the categories. Links
        that MediaWiki shows in the text stay for `render`: [[Media:X|label]], [[:File:X|label]]
        and [[:Category:X|label]].
        Links in captions, even in a caption's templates, are not counted as the page's links."""
        if self._special_link is None or not self._special_link.search(text):
            return text, []
        categories: list[str] = []
        out, last, depth, start = [], 0, 0, None
        breaks = 0  # blank lines inside the open link: File captions may hold one or two
        for m in _BRACKET_TOKENS.finditer(text):
            token = m.group()
            if len(token) > 2 and token[0] == "[":
                # A whole link with no brackets or newline inside: "[[" then "]]" at once.
                if depth:
                    continue  # nested in an open link: depth back where it was
                breaks = 0
                if not self._special_link.match(text, m.start()):
                    continue
                start = m.start()
                token = "]]"
                depth = 1
            if token[0] == "\n":  # an unclosed [[ must not swallow the rest of the page
                breaks += 1
                if depth and (start is None or breaks > 2):
                    depth, start = 0, None
            elif token == "[[":
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
                    if not shown_in_text(parsed, target):
                        out.append(text[last:start])
                        last = m.end()
                    start = None
        out.append(text[last:])
        return "".join(out), categories

    # ---- structure -----------------------------------------------------------------------
    def sections(self, text: str, counts: Counter | None = None) -> list[tuple[str, int, str]]:
        """(heading, level, body) of the lead and each section, boilerplate sections dropped;
        pseudo-headings are headings (`with_pseudo_headings`)."""
        if "\n;" in text or text[:1] == ";":
            text = with_pseudo_headings(text, counts)
        found, pos, heading, level = [], 0, "", 0
        skip_below = None
        for m in _HEADING.finditer(text):
            found.append((heading, level, text[pos:m.start()]))
            heading, level, pos = m.group(2), len(m.group(1)), m.end()
        found.append((heading, level, text[pos:]))
        kept = []
        for heading, level, body in found:
            title = heading_text(heading) if level else ""
            if level and "[[" in title:
                title = clean_spaces(mwparserfromhell.parse(title).strip_code())
            if skip_below is not None and level > skip_below:
                continue
            skip_below = None
            if level and in_boilerplate(title, self.boilerplate, level):
                skip_below = level
                continue
            kept.append((title, level, body))
        return kept

    def paragraphs(self, body: str) -> list[str]:
        return [paragraph.text for paragraph in self.paragraph_runs(body)]

    def paragraph_runs(self, body: str) -> list[_Paragraph]:
        """The paragraphs of a section's body, each with what a list or a block quotation in
        the middle of its sentence took from it (`_Paragraph`, `_continues_after_list`)."""
        runs = _ParagraphRuns(self.options.keep_lists, self.options.min_paragraph_chars)
        for block in _PARA_BREAK.split(body):
            runs.block(block)
        return runs.out

    # ---- rendering with link offsets -----------------------------------------------------
    def render(self, paragraph: str, counts: Counter | None = None) -> list[_Piece]:
        """Text pieces of a paragraph; link pieces carry their target. Link brackets the source
        leaves unbalanced are removed (counted in `counts`): only mwparserfromhell's path can
        meet them, the fast paths take no text with a bracket outside a whole link."""
        if "[" not in paragraph and "]" not in paragraph and "<" not in paragraph \
                and "&" not in paragraph and "://" not in paragraph and "----" not in paragraph:
            return [_Piece(paragraph)]
        original = paragraph
        if "<" in paragraph:  # inline tags: their markup goes, their content stays
            paragraph = _strip_inline_tags(paragraph, self._trail_end) or original
        links = list(self._simple_link.finditer(paragraph))
        if links:
            gaps, last = [], 0
            for m in links:
                gaps.append(paragraph[last:m.start()])
                last = m.end()
            gaps.append(paragraph[last:])
            rest = "".join(gaps)  # _SIMPLE_LINK.sub("", paragraph)
        else:
            rest = paragraph
        # "----" is a horizontal rule; "://" may be an external link, even inside [[ ]].
        if not _NOT_SIMPLE.search(rest) and "----" not in paragraph and "://" not in paragraph:
            return self._render_simple(paragraph, links)
        pieces: list[_Piece] = []
        self._render_nodes(mwparserfromhell.parse(original, skip_style_tags=True).nodes, pieces)
        return _without_stray_brackets(pieces, counts)

    def _render_simple(self, paragraph: str, links=None) -> list[_Piece]:
        """Fast path for the common paragraph: plain text, entities and [[target|anchor]] links,
        nothing nested. It gives what the mwparserfromhell path gives for such text.
        `links`: the matches of self._simple_link in `paragraph`, when already found."""
        pieces, last = [], 0
        link_piece = self._link_piece
        for m in (links if links is not None else self._simple_link.finditer(paragraph)):
            start = m.start()
            if start > last:
                pieces.append(_Piece(_unescape(paragraph[last:start])))
            raw, anchor, trail = m.groups()
            piece = link_piece(raw, _unescape(anchor) if anchor is not None else None)
            if piece is not None:
                if piece.target and trail:
                    piece.text += trail
                    pieces.append(piece)
                else:
                    pieces.append(piece)
                    if trail:
                        pieces.append(_Piece(trail))
            elif trail:
                pieces.append(_Piece(trail))
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
                    trail = self._trail.match(value)
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
                elif node.brackets:  # "[http://...]" shows a number, "[1]": a note mark
                    pieces.append(_Piece(_NOTE))
            elif isinstance(node, HTMLEntity):
                value = node.normalize()
                pieces.append(_Piece(_LT if value == "<" else _GT if value == ">" else value))
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
        raw = str(node.title)
        if _MARK_CHARS.search(raw):  # a dropped template in the target:
            return _Piece(anchor if anchor is not None else raw)  # which page is not known
        return self._link_piece(raw, anchor)

    def _link_piece(self, raw: str, anchor: str | None) -> _Piece | None:
        """The piece a [[raw|anchor]] link renders to (anchor None: no pipe); None: no text."""
        parsed = self.titles.parse(raw)
        if anchor is not None and parsed is not None and parsed.ns == 0 and not parsed.interwiki:
            title = parsed.title  # the common [[Target|anchor]]: what the code below gives
            return _Piece(anchor, self.resolve(title) if self.resolve else title, title)
        if parsed is not None and parsed.interwiki and not raw.lstrip().startswith(":") \
                and parsed.interwiki not in _INTERWIKI_ONLY:
            return None  # an interlanguage link, piped or not: in the sidebar, not in the text
        if anchor is None:
            anchor = raw.lstrip().lstrip(":")
            if "&" in anchor:  # [[35&nbsp;mm film]] reads "35 mm film"
                anchor = html.unescape(anchor)
            if "%" in anchor:  # [[Caf%C3%A9]] reads "Café" (MediaWiki's rawurldecode)
                anchor = unquote(anchor)
            if parsed is not None and parsed.interwiki:
                anchor = anchor.split(":", 1)[1] if ":" in anchor else anchor
                other = self.titles.parse(anchor)  # [[:en:Category:X]] reads "X", as below
                if other is not None and other.ns != 0 and not other.interwiki or ":" in anchor \
                        and names_namespace(parsed.interwiki, anchor.split(":", 1)[0]):
                    anchor = anchor.split(":", 1)[1]  # (the other wiki's name: "Kategorie:")
            anchor = anchor.split("#", 1)[0] if not anchor.startswith("#") else anchor[1:]
        if parsed is not None and parsed.ns != 0 and not parsed.interwiki and anchor == raw.strip(" :"):
            anchor = parsed.title.split(":", 1)[1]  # [[:Category:Towns]] reads "Towns" in text
        if parsed is None or parsed.interwiki or parsed.ns != 0:
            return _Piece(anchor)
        target = self.resolve(parsed.title) if self.resolve else parsed.title
        return _Piece(anchor, target=target, raw_target=parsed.title)

    def plain_paragraphs(self, page: Page) -> list[str]:
        """Clean paragraph texts of a page, not split into sentences (to train Punkt on)."""
        text = self.strip(page.text, Counter())[0]
        return [_SPACES.sub(" ", "".join(p.text for p in self.render(paragraph)).translate(
                    _PLAIN_MARKS)).strip()
                for _, _, body in self.sections(text) for paragraph in self.paragraphs(body)]

    # ---- the article ---------------------------------------------------------------------
    def article(self, page: Page, counts: Counter | None = None) -> Article:
        counts = counts if counts is not None else Counter()
        text, categories, hidden_links = self.strip(page.text, counts)
        article = Article(id=page.id, title=page.title, lang=self.titles.site.lang,
                          categories=categories)
        for heading, level, body in self.sections(text, counts):
            section = Section(heading=heading, level=level)
            for paragraph in self.paragraph_runs(body):
                sentences, links = self._sentences(self.render(paragraph.text, counts), counts,
                                                   paragraph)
                if not sentences:
                    continue
                s, p = len(article.sections), len(section.paragraphs)
                for link in links:
                    link.section, link.paragraph = s, p
                article.links.extend(links)
                section.paragraphs.append(sentences)
            # The lead is section 0 even without text (an infobox alone): links already placed
            # count sections as appended, so it cannot be inserted afterwards.
            if section.paragraphs or not level:
                article.sections.append(section)
            else:
                counts["empty_sections"] += 1
        article.links.extend(hidden_links)
        return article

    def _sentences(self, pieces: list[_Piece], counts: Counter | None = None,
                   paragraph: _Paragraph | None = None) -> tuple[list[str], list[Link]]:
        """Join pieces collapsing whitespace, split sentences, and place the links in them
        (without the ends an interruption cut, `paragraph`'s flags).

        Link pieces are wrapped in two private-use marks so that whitespace is collapsed in one
        pass over the paragraph; the marks are then removed and their offsets kept
        (`_join_marked`). Most paragraphs need none of that (`_join_plain`)."""
        joined, spans = self._join_plain(pieces)
        if joined is None:
            joined, spans = self._join_marked(pieces)
        if not joined:
            return [], []
        holes = ()
        if _HOLE in joined or _NOTE in joined or _FORMULA in joined:
            joined, spans, holes = without_holes(joined, spans)
        bounds = prose_spans(joined, self.splitter.spans(joined), counts, holes)
        if paragraph is not None and (paragraph.cut_first or paragraph.cut_last):
            bounds = _without_cut_ends(bounds, len(joined), paragraph, counts)
        sentences = [joined[a:b] for a, b in bounds]
        links = []
        if spans:
            # Sentence spans are increasing and disjoint: the one holding a link's start is the
            # last that starts at or before it, if it ends after it.
            starts = [a for a, _ in bounds]
            for start, end, piece in spans:
                i = bisect_right(starts, start) - 1
                if i >= 0:
                    a, b = bounds[i]
                    if start < b:
                        lo, hi = start - a, min(b, end) - a
                        links.append(Link(target=piece.target, anchor=sentences[i][lo:hi],
                                          section=0, paragraph=0, sentence=i, start=lo, end=hi,
                                          raw_target=piece.raw_target))
        return sentences, links

    @staticmethod
    def _join_plain(pieces: list[_Piece]):
        """(text, link spans) for the common paragraph, where _join_marked would change no
        whitespace but strip one space at either end: no tag, no whitespace but single spaces, no
        link anchor empty or with a space at either end, no private-use mark; else (None, None)."""
        parts, spans, size = [], [], 0
        for piece in pieces:
            text = piece.text
            if piece.target:
                if not text or text[0] == " " or text[-1] == " ":
                    return None, None
                spans.append((size, size + len(text), piece))
            parts.append(text)
            size += len(text)
        joined = "".join(parts)
        if "<" in joined or "  " in joined or _NOT_PLAIN.search(joined):
            return None, None
        if joined[:1] == " ":
            joined = joined[1:]
            spans = [(start - 1, end - 1, piece) for start, end, piece in spans]
        if joined[-1:] == " ":
            joined = joined[:-1]
        return joined, spans

    @staticmethod
    def _join_marked(pieces: list[_Piece]):
        """(text, link spans): the pieces joined, tags left over removed, whitespace collapsed
        (link anchors get no space at their ends) and stripped."""
        joined = "".join([f"{_OPEN}{p.text}{_CLOSE}" if p.target else p.text for p in pieces])
        if "<" in joined:
            joined = _TAG_LEFTOVER.sub("", joined)
        if _LT in joined or _GT in joined:  # typed as entities: text, never a tag
            joined = joined.replace(_LT, "<").replace(_GT, ">")
        if _INVISIBLE.search(joined):
            joined = _INVISIBLE.sub("", joined)
        if "  " in joined or _OTHER_SPACE.search(joined):  # else _SPACES.sub changes nothing
            joined = _SPACES.sub(" ", joined)
        links_marked = _OPEN in joined
        if links_marked:  # keep spaces outside the marks so the anchor has none at its ends
            joined = joined.replace(_OPEN + " ", " " + _OPEN).replace(" " + _CLOSE, _CLOSE + " ")
            if "  " in joined:  # only spaces are left
                joined = _SPACES.sub(" ", joined)
        joined = joined.strip()
        spans: list[tuple[int, int, _Piece]] = []
        if links_marked:
            # A mark's offset in the text without marks: its offset less the marks before it.
            targets = iter([p for p in pieces if p.target])
            start = 0
            for k, m in enumerate(_MARK.finditer(joined)):
                if m.group() == _OPEN:
                    start = m.start() - k
                else:
                    piece = next(targets)
                    if m.start() - k > start:
                        spans.append((start, m.start() - k, piece))
            joined = joined.replace(_OPEN, "").replace(_CLOSE, "")
        return joined, spans


_OPEN, _CLOSE = "\ue000", "\ue001"
_MARK = re.compile("[\ue000\ue001]")
# What sends a paragraph to `_join_marked`: other whitespace, link marks, invisible characters,
# angle brackets typed as entities (_LT, _GT) (one scan for all).
_NOT_PLAIN = re.compile("[\ue005\ue006%s%s%s]" % (_OTHER_SPACE.pattern[1:-1], _MARK.pattern[1:-1],
                                      _INVISIBLE.pattern[1:-1]))
_INTERWIKI_ONLY = INTERWIKI_PREFIXES - LANGUAGE_CODES


def _brace_tokens(text: str):
    """(token, start, end) of each match of _BRACES in `text`, token "{{", "}}", "{|" or "|}" (a
    table start or end, at the start of a line but for spaces, tabs and, before "{|", colons;
    `start` is that of the line). Same as _BRACES.finditer, about four times faster: the
    candidates are found by a pattern without line anchors (which the regex engine scans
    quickly), and a table token is checked against its line by hand."""
    search, pos = _BRACE_CANDIDATES.search, 0
    while True:
        m = search(text, pos)
        if m is None:
            return
        at = m.start()
        token = m.group()
        if token == "{{" or token == "}}":
            yield token, at, at + 2
            pos = at + 2
            continue
        line = text.rfind("\n", 0, at) + 1
        # _BRACES can match from the line's start only if its last match ended before it.
        if line >= pos and not text[line:at].strip(" \t:" if token == "{|" else " \t") \
                and (token == "{|" or text[at + 2:at + 3] != "}"):
            yield token, line, at + 2
            pos = at + 2
        else:
            pos = at + 1


# A template with none of these in it is split into its arguments by hand: nothing nested.
_NOT_PLAIN_TEMPLATE = re.compile(r"[\[\]{}<>\n]|://|''")


def _headings(text: str):
    """_HEADING.finditer(text), looking only at the lines that start with "=" (a page's few)."""
    pos, size = 0, len(text)
    while pos < size:
        if text[pos] != "=":
            pos = text.find("\n=", pos)
            if pos < 0:
                return
            pos += 1
        m = _HEADING.match(text, pos)
        if m:
            yield m
        end = text.find("\n", pos)
        if end < 0:
            return
        pos = end + 1


def template_args(source: str) -> dict[str, str] | None:
    """The arguments of the template `source` ("{{name|a|k=v}}") as mwparserfromhell gives them:
    positional ones as "1", "2", ..., named ones by their stripped name, values as written; None
    where it is no template for mwparserfromhell. Plain templates (no brackets, braces, tags,
    newlines, URLs or bold/italic quotes inside) are split on "|" and "=" directly, which gives the same."""
    inner = source[2:-2]
    if source.startswith("{{") and source.endswith("}}") and len(source) >= 4 \
            and not _NOT_PLAIN_TEMPLATE.search(inner):
        name, *params = inner.split("|")
        if name.strip():
            args, position = {}, 1
            for param in params:
                key, equals, value = param.partition("=")
                if equals:
                    args[key.strip()] = value
                else:
                    args[str(position)] = param
                    position += 1
            return args
    nodes = mwparserfromhell.parse(source).nodes
    template = nodes[0] if nodes else None
    if not isinstance(template, Template):
        return None
    return {str(p.name).strip(): str(p.value) for p in template.params}


# Wikimedia's wikis whose content language has another code than the wiki (its dbname).
_WIKI_LANGUAGES = {"no": "nb", "simple": "en", "zh-yue": "yue", "zh-classical": "lzh",
                   "zh-min-nan": "nan", "be-x-old": "be-tarask", "bat-smg": "sgs",
                   "roa-rup": "rup", "fiu-vro": "vro", "als": "gsw"}


def link_trail(lang: str) -> str:
    """A pattern of the letters that join a link's anchor after its `]]` on a wiki in `lang`,
    as MediaWiki's $linkTrail (with the language's fallbacks) says: "[a-z]*" on enwiki (Latin
    small letters only: "[[NASA]]'s", "[[대한민국]]의" end at the link), the whole Bengali block
    with its vowel signs on bnwiki ("[[বাংলা লিপি]]তে" is one link), nothing on zhwiki."""
    code = _WIKI_LANGUAGES.get(lang, lang)
    unit = LINK_TRAILS.get(code, LINK_TRAILS.get(code.split("-")[0], DEFAULT))
    return f"(?:{unit})*" if unit else ""


def _strip_inline_tags(paragraph: str, trail_end: re.Pattern) -> str | None:
    """The paragraph with its inline tags replaced as _render_nodes renders them (content kept,
    <br> a space), for the render fast path; None where a tag is inside a link or right after
    one and its trail (it ends the trail; `trail_end` finds them), which mwparserfromhell must
    see.
    tests/test_speed_equivalence.py checks that the fast path then gives the same."""
    out, last = [], 0
    opened = closed = counted = 0  # "[[" and "]]" in paragraph[:counted], counted on (a tag
    # starts with "<", so no bracket pair spans a tag's start): linear in the paragraph
    for m in _INLINE_TAG.finditer(paragraph):
        at = m.start()
        opened += paragraph.count("[[", counted, at)
        closed += paragraph.count("]]", counted, at)
        counted = at
        if trail_end.search(paragraph, max(0, at - 256), at) or opened != closed:
            return None
        out.append(paragraph[last:at])
        out.append(" " if m.group(1) else "")
        last = m.end()
    if not out:
        return None
    out.append(paragraph[last:])
    return "".join(out)


# Wikis whose MediaWiki has a LanguageConverter (variants of one language in two scripts or
# spellings), where -{...}- is markup: -{text}-, -{zh-hans:X; zh-hant:Y}-, -{H|rule}-.
VARIANT_LANGUAGES = frozenset({"zh", "gan", "wuu", "sr", "sh", "kk", "ku", "iu", "ike", "shi",
                               "tg", "uz", "crh", "ban", "tly", "zgh", "mni"})
_LANG_CONVERSION = re.compile(r"-\{(?!\{)(.*?)\}-", re.S)
_CONVERSION_FLAGS = re.compile(r"\s*([A-Za-z\-;\s]{1,12})\|")
_VARIANT = re.compile(r"\s*([a-z]{2,3}(?:-[a-z]{2,4})*)\s*:(.*)", re.S)
# Shown variant, first found: Simplified Chinese, then the others (a pair keeps one spelling).
_VARIANT_ORDER = ("zh-hans", "zh-cn", "zh-sg", "zh-my", "zh", "zh-hant", "zh-tw", "zh-hk", "zh-mo",
                  "sr-el", "sr-latn", "sr-ec", "sr-cyrl", "kk-cyrl", "kk-latn", "kk-arab")


def _converted(m: re.Match) -> str:
    """What a reader sees of one -{...}- block: a conversion rule that is only declared
    (flags H, T, D, - : nothing), the raw text (R or no variants), or one variant's text."""
    inner = m.group(1)
    flags = _CONVERSION_FLAGS.match(inner)
    if flags and ":" not in flags.group(1):
        names = {f.strip() for f in flags.group(1).split(";")}
        inner = inner[flags.end():]
        if names & {"H", "T", "D", "-"}:
            return ""
        if "R" in names:
            return inner
    variants = {}
    for part in inner.split(";"):
        variant = _VARIANT.match(part)
        if variant is None:
            if part.strip() or not variants:
                return inner if not variants else _first_variant(variants)
            continue
        variants.setdefault(variant.group(1), variant.group(2).strip())
    return _first_variant(variants) if variants else inner


def _first_variant(variants: dict[str, str]) -> str:
    for code in _VARIANT_ORDER:
        if code in variants:
            return variants[code]
    return next(iter(variants.values()))


def _without_stray_brackets(pieces: list[_Piece], counts: Counter | None) -> list[_Piece]:
    """`pieces` with link brackets left in their text removed (each run counted as
    `stray_link_brackets`)."""
    found = 0
    for piece in pieces:
        text = piece.text
        if "[[" in text or "]]" in text:
            if "|" in text:
                text, found_targets = _STRAY_TARGET.subn("", text)
                found += found_targets
            piece.text, n = _STRAY_BRACKETS.subn(_stray_link_text, text)
            found += n
    if found and counts is not None:
        counts["stray_link_brackets"] += found
    return pieces


def _stray_link_text(m: re.Match) -> str:
    """What a reader sees of a stray run of brackets: nothing, or the anchor of "[[x|anchor]"."""
    inside = m.group(1)
    return inside.rsplit("|", 1)[-1] if inside else ""


def _unescape(text: str) -> str:
    """Entities decoded; "&lt;" and "&gt;" as placeholders (_LT, _GT) that the leftover-tag pass
    does not read as a tag ("{{tag|div}}", "<code>&lt;div&gt;</code>" show "<div>")."""
    if "&" not in text:
        return text
    if "&lt;" in text or "&gt;" in text or "&#" in text:
        text = _ENTITY_ANGLE.sub(_angle_placeholder, text)
    return html.unescape(text)


_LT, _GT = "\ue005", "\ue006"
_PLAIN_MARKS = str.maketrans({"\x03": None, "\x04": None, "\x05": None, _LT: "<", _GT: ">"})
_ENTITY_ANGLE = re.compile(r"&(?:(lt|#0*60|#[xX]0*3[cC])|gt|#0*62|#[xX]0*3[eE]);")


def _with_display_formulas(text: str) -> str:
    """`text` with its display formulas in the middle of a sentence joined (see
    `_display_formula`): each run of formula lines with the blank lines around it, found from
    the formula lines (a run of thousands of blank lines is read once, not once per line)."""
    out, last = [], 0
    for m in _DISPLAY_FORMULAS.finditer(text):
        start = _end_of_line_before(text, m.start())
        if start < last:
            continue  # no line of text before it (the text's start, or the last formulas')
        end = _BLANK_LINES.match(text, m.end()).end()
        joined = _display_formula(text, start, m, end)
        if joined is not None:
            out.append(text[last:start])
            out.append(joined)
            last = end
    out.append(text[last:])
    return "".join(out)


def _end_of_line_before(text: str, position: int) -> int:
    """The line break that ends the last line with anything on it before the line starting at
    `position`; -1 if there is none."""
    start = position - 1
    while start >= 0:
        line_start = text.rfind("\n", 0, start) + 1
        if text[line_start:start].strip(" \t"):
            return start
        if line_start == 0:
            return -1
        start = line_start - 1
    return -1


def _display_formula(text: str, start: int, m: re.Match, end: int) -> str | None:
    """Display formulas m (text[start:end]: from the line break that ends the line before,
    blank lines around them included) in the middle of a sentence ("the area is given by\\n
    :<math>A = \\pi r^2</math>\\nwhere r is the radius."; Japanese "面積 S は" / "で与えられ
    る。"): a formula mark at the end of the line before, which did not end its sentence, joined
    to the line after where that one goes on with the sentence (`sentence_goes_on`), so that the
    sentence, words lost, is dropped whole rather than read as fragments. None: formulas after a
    finished sentence ("... as follows:"), dropped as before."""
    line_start = text.rfind("\n", 0, start) + 1
    before = _words_end(text[line_start:start])
    if not before or before[0] in _NOT_PROSE_START or not stops_mid_sentence(before):
        return None
    formulas = m.group()
    close = formulas.rfind("</")
    blank_after = end > m.end() or not formulas.endswith("\n")
    if ":" not in formulas[:formulas.index("<")] and text.count("\n", start, m.start()) == 1:
        # not indented, no blank line before: a formula in the paragraph, on a line of its
        # own (a line break is a space there)
        return " " + _FORMULA + ("\n\n" if blank_after else " ")
    ends = formulas[:close].rstrip().endswith(".") or formulas[close:].rstrip().endswith(".")
    stop = text.find("\n", end)
    after = text[end:] if stop < 0 else text[end:stop]
    goes_on = not ends and sentence_goes_on(after)
    return " " + _FORMULA + (" " if goes_on else "\n\n")


def _words_end(line: str) -> str:
    """A line of wikitext up to the end of its last words: without the notes after them
    ("satisfait à<ref>..</ref>{{sfn|..}}"), a link's closing brackets or quote marks ("of a
    [[circle]]" ends with the anchor's "e")."""
    for _ in range(50):
        line = line.rstrip()
        if line.endswith("}}"):
            cut = _before_last_template(line)
        elif line.endswith(">"):
            ref = _LAST_REF.search(line)
            cut = line[:ref.start()] if ref else None
        elif line.endswith("]]"):
            cut = _into_last_link(line)
        elif line.endswith("'"):
            cut = line.rstrip("'")
        else:
            cut = None
        if cut is None:
            break
        line = cut
    return line


def _into_last_link(line: str) -> str | None:
    """`line` without the closing brackets of the link that ends it, whose anchor's words end
    the line's; None where that link shows no words there (a File or Category link: a line of
    its own is no prose) or is unbalanced."""
    opening = _last_opening(line, "[[", "]]")
    if opening is None or ":" in line[opening + 2:].split("|", 1)[0]:
        return None
    return line[:-2]


def _before_last_template(line: str) -> str | None:
    """`line` without the template that ends it (nested ones within), or None if unbalanced."""
    opening = _last_opening(line, "{{", "}}")
    return None if opening is None else line[:opening]


def _last_opening(line: str, opening: str, closing: str) -> int | None:
    """Where the bracketed construct that ends `line` opens ("{{" ... "}}", nested ones
    within), or None if unbalanced."""
    depth, i = 0, len(line)
    while i > 1:
        pair = line[i - 2:i]
        if pair == closing:
            depth, i = depth + 1, i - 2
        elif pair == opening:
            depth, i = depth - 1, i - 2
            if depth == 0:
                return i
        else:
            i -= 1
    return None


def sentence_goes_on(after: str) -> bool:
    """Whether the text `after` a display formula goes on with the sentence before it: it is
    prose whose first letter is no capital ("where r is the radius."; "(See summation)." is
    not). In a script without capitals it is taken to ("と書くことができる。"): a sentence
    dropped with the formula's is better than a fragment in a pair."""
    after = after.lstrip()
    letter = _LETTER.search(after)
    return letter is not None and after[0] not in _NOT_PROSE_START and not letter.group().isupper()


def typed_note_marks(text: str) -> str:
    """`text` with its citation marks typed as text ("… BTU. [59]", "χώρα [20].", pasted from
    other sites) as note marks: a number in brackets (or a run of them, "।[1][2][3]") right
    after a sentence's end mark (a space between or not) before a space, punctuation or the
    end, or after a space right before an end mark or comma; never a link ("[[59]]"), a
    word's index ("a[1]", "b [0] to get"), a set ("The set [1] is"). The brackets are searched for first: the context is read only at
    them (a pattern of lookbehinds tried at every character cost half the cleaner's time)."""
    if "[" not in text:
        return text
    out, last = [], 0
    for m in _BRACKETED_SMALL_NUMBER.finditer(text):
        start, end = m.span()
        before, after = text[max(0, start - 2):start], text[end:end + 2]
        closed = not after or after[0].isspace() or after[0] in _MARK_FOLLOWER
        spaced = before[-1:].isspace()
        if before[-1:] in _END_MARKS and closed or spaced and before[:1] in _END_MARKS and closed \
                or spaced and after[:1] in _MARK_FOLLOWER and after[:1] != ")" \
                and (len(after) < 2 or after[1].isspace()):
            out.append(text[last:start])
            out.append(_NOTE)
            last = end
    if not out:
        return text
    out.append(text[last:])
    return "".join(out)


def _raised(m: re.Match) -> str:
    if m.start() and m.string[m.start() - 1] in _END_MARKS:  # a footnote's number: "closer.¹"
        return ""
    return superscript(m.group(1)) or m.group()


def _angle_placeholder(m: re.Match) -> str:
    return _LT if m.group(1) else _GT


def parse_article(page: Page, cleaner: Cleaner, counts: Counter | None = None) -> Article:
    """The Article of one page (see `Cleaner` for what is kept and removed)."""
    return cleaner.article(page, counts)


# Where a dropped template or formula stood in running text (see template_drops): it may have
# taken words out of the sentence ("the letter {{IPA|e}} represents ..."). Removed before the
# sentences are split (`without_holes`); a sentence left with a gap in its words is dropped
# (`prose_spans`: lost_words_sentences), never a query or document with words missing.
_HOLE = "\x03"
_MARK_CHARS = re.compile("[\x03-\x05\ue005\ue006]")  # the marks below and _LT, _GT
_NOTE = "\x04"  # where a note mark stood ({{citation needed}}): no words lost, but its space
_FORMULA = "\x05"  # where a formula stood in running text: always words (symbols) lost
_HOLE_RUN = re.compile(r"( ?)[\x03-\x05](?: ?[\x03-\x05])*( ?)")
_MARKS_OUT = str.maketrans(dict.fromkeys("\x03\x04\x05"))
_AFTER_HOLE_CLOSES = frozenset(",.;:!?)]}»”’、。，；：！？）」』।॥،؛؟…")
_OPENERS = frozenset("([{«“‘„「『（")
_BRACKET_CLOSES = frozenset(")]）")
_SEPARATORS = frozenset(",;、，；،؛")
_END_MARKS = frozenset(".。।॥!?؟！？")  # a sentence's end marks (the rules of marks above too)
_CLAUSE_START = frozenset(",;:(、，；：（،؛")  # after these, a hole then a word lost words
_WORD_END = regex.compile(r"[\p{L}\p{M}\p{N}]")
_UNSPACED = regex.compile(f"[{UNSPACED_SCRIPTS}]")  # no space between words
_DASHES = frozenset("-‐‑–—־")


def without_holes(text: str, spans: list) -> tuple[str, list, list[int]]:
    """`text` without its hole, formula and note marks and the space each would leave doubled
    or before punctuation ("to {{x}}, lying" -> "to, lying", "a; {{x}}; b" -> "a; b"), the link
    spans `(start, end, piece)` moved to match, and the offsets of the holes that lost words:

    - a formula in running text, wherever it stood;
    - a template after a word and a space ("the letter {{x}} represents", "located at {{x}}.");
    - a template after a clause's start ("(", ",", ":" and a space) before a word ("( {{x}} m)",
      "1930, {{x}} was awarded");
    - a template between two letters of a script written without spaces ("東京は{{x}}に").

    A template right after a word of a spaced script ("Vinci{{x}}, dit") is taken for a mark (a
    note, an icon), as note marks are (_NOTE)."""
    out, holes, edits, last, shift = [], [], [], 0, 0
    while True:
        m = _HOLE_RUN.search(text, last)  # (from the last edit's end: runs never overlap)
        if m is None:
            break
        start, end = m.span()
        run = m.group()
        before, after = text[start - 1:start], text[end:end + 1]
        lost_at = _lost_words(run, m.group(1), before, after, text, end)
        typed_after, spaced = bool(m.group(2)), bool(m.group(1) or m.group(2))
        if before and after:  # punctuation the template leaves empty or doubled goes too
            take_before, take_after = _left_punctuation(before, after)
            if take_before and start - 1 >= last:
                start -= 1
                while start > last and text[start - 1] == " ":  # "Paris ; {{x}}." -> "Paris."
                    start -= 1
            if take_after:
                end += 1
                while end < len(text) and text[end] == " ":
                    end += 1
                    spaced, typed_after = True, False
                nxt = _HOLE_RUN.match(text, end)  # "a, {{x}}; {{y}} b": the runs are one
                if nxt is not None and nxt.group(1) == "":
                    run += nxt.group()
                    end, typed_after = nxt.end(), False
                    spaced = spaced or bool(nxt.group(2))
            before, after = text[start - 1:start], text[end:end + 1]
        if not before or not after or before in _OPENERS:
            fill = ""
        elif typed_after:  # the space after it was typed: "déjà{{sfn|..}} : le"
            fill = " "
        else:  # the space before it goes before punctuation: "to {{x}}, lying"
            fill = " " if spaced and after not in _AFTER_HOLE_CLOSES else ""
        out.append(text[last:start])
        if lost_at is not None:  # before the fill (the word it followed) or after it
            holes.append(start + shift + (len(fill) if lost_at else 0))
        out.append(fill)
        edits.append((start, end, shift, len(fill)))
        shift += len(fill) - (end - start)
        last = end
    out.append(text[last:])
    if spans:
        spans = [(a, b, piece) for a, b, piece in
                 ((_moved(a, edits, True), _moved(b, edits, False), piece) for a, b, piece in spans)
                 if b > a]
    return "".join(out), spans, holes


def _left_punctuation(before: str, after: str) -> tuple[bool, bool]:
    """Whether the punctuation before and after a dropped template goes with it: the brackets
    it leaves empty ("Alpha ({{IPA|..}}) is"), a separator that opens or closes a bracket
    ("({{IPA|..}}; born 1900)", "(Seoul, {{lang|..}})"), and the first of two separators or
    end marks, or the separator before an end mark ("a; {{x}}; b", "2005, {{ISBN|..}}.")."""
    if before in _OPENERS:
        return after in _BRACKET_CLOSES, after in _BRACKET_CLOSES or after in _SEPARATORS
    if before in _SEPARATORS:
        if after in _BRACKET_CLOSES or after in _END_MARKS:
            return True, False
        return False, after in _SEPARATORS
    if before in _END_MARKS:
        return False, after in _SEPARATORS or after in _END_MARKS
    return False, False


def _lost_words(run: str, space_before: str, before: str, after: str, text: str,
                end: int) -> bool | None:
    """Whether a run of marks lost words: None (no), False (with the word before it), True
    (with what follows it: its offset is taken after the space it leaves)."""
    if _HOLE not in run and _FORMULA not in run:
        return None
    follows = after if after != " " else text[end + 1:end + 2]
    word_before = bool(before) and _WORD_END.match(before) is not None
    if _FORMULA in run:
        return not word_before
    if before in _END_MARKS and (not follows or follows in _END_MARKS):
        return None  # "It ran. {{x}}. The river": a sentence of its own, wordless, went
    if before in _SEPARATORS and (follows in _SEPARATORS or follows in _BRACKET_CLOSES):
        return None  # an item of a list or a bracket went whole: "(서울特別市, {{llang|..}})"
    if not before:  # at the text's start a hatnote may stand: "{{about|..}}Foo is"
        return True if follows and (follows in _DASHES or follows in _SEPARATORS
                                    or follows in "():[]") else None  # "{{USA}} - Day of"
    if space_before:  # "the letter {{x}} is", "Dari: {{x}}, Afġānistān"
        return not word_before
    if before in _DASHES:  # "Площадь — {{s|..}}." has its space; "ב-{{..}}." none
        return False
    if before in _CLAUSE_START and follows and _WORD_END.match(follows):
        return True  # (not at the text's start, where an infobox may end: "}}Foo is")
    if word_before and _UNSPACED.match(before):  # "東京は{{Coord|..}}に", "位于{{coord}}。"
        return False
    if before.isdigit():  # a number's part: "5.98{{e|24}} kg" must not read "5.98 kg"
        return False
    return None


def _moved(offset: int, edits: list[tuple[int, int, int, int]], span_start: bool) -> int:
    """Where a span's start or end `offset` lands once the edits (start, end, shift before them,
    length of the fill put there) are made: a span never takes in a fill at its ends (an anchor
    that began or ended with a mark has no space at that end)."""
    for start, end, before, fill in edits:
        if offset < start or offset == start and not span_start:
            return offset + before
        if offset < end or offset == end and not span_start:
            return start + before + (fill if span_start else 0)
    start, end, before, fill = edits[-1]
    return offset + before + fill - (end - start)


def prose_spans(text: str, bounds: list[tuple[int, int]], counts: Counter | None = None,
                holes=()) -> list[tuple[int, int]]:
    """A paragraph's sentence spans without the debris MediaWiki shows as text but no reader
    takes for prose, counted per reason: a sentence with no letter or digit ("." left by a
    dropped template, "...", "|", "+ +": `wordless_sentences`), and a pipe with a space at a
    sentence's start ("| মূল নিবন্ধ: ...", a table or template pipe typed in running text:
    `leading_pipes`), which is cut off; a bar of three or more short items between " | ", " · "
    or " • " (the month and day pages' "Δεκέμβριος | Ιανουάριος | Φεβρουάριος": `link_bars`); a
    sentence holding one of the `holes` (`without_holes`: where words were lost) goes too:
    `lost_words_sentences`.
    Links are placed in the spans returned, so their offsets follow."""
    counts = counts if counts is not None else Counter()
    kept = []
    bars = "|" in text or "·" in text or "•" in text  # (str searches: ~10x a regex's speed)
    for start, end in bounds:
        if not _ANY_WORD.search(text, start, end):
            counts["wordless_sentences"] += 1
            continue
        if holes and any(start <= hole <= end for hole in holes):
            counts["lost_words_sentences"] += 1
            continue
        if bars and _BAR_CHAR.search(text, start, end) and _is_link_bar(text[start:end]):
            counts["link_bars"] += 1
            continue
        pipe = _LEADING_PIPE.match(text, start, end)
        if pipe:
            counts["leading_pipes"] += 1
            start = pipe.end()
        kept.append((start, end))
    return kept


_ANY_WORD = re.compile(r"[^\W_]")
_BAR_SEPARATOR = re.compile(r"\s[|·•]\s")
_BAR_CHAR = re.compile("[|·•]")  # found first: a pattern opening with \s would try every character


def _is_link_bar(sentence: str) -> bool:
    """Three or more items of at most four words each, between bar separators, and no end
    mark: navigation ("a · c ≤ b · c." and "E → T | E + T | (E)." are formulas)."""
    sentence = sentence.strip()
    if sentence[-1:] in ".!?。．！？":
        return False
    items = _BAR_SEPARATOR.split(sentence)
    return len(items) >= 3 and all(len(item.split()) <= 4 for item in items)
_LEADING_PIPE = re.compile(r"\|\s+")
