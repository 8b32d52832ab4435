"""The fast paths of parsing give exactly what the code they replace gives.

Sentence splitting restates nltk's Punkt (`sentences._FastPunkt`): its spans must be those of
`PunktSentenceTokenizer.span_tokenize` on every paragraph of the real dumps (English with the
punkt_tab model, Greek and German with Punkt trained on the dump) and on tricky text. The other
fast paths (template arguments without mwparserfromhell, brace and bracket scanning, quote
removal, plain titles, whitespace collapsing and link placement in `_sentences`, the punkt_tab
loader) are compared with the code they replace, kept here as reference implementations, on the
real dumps and on random text. The decompressed copy kept by the first pass must give the second
pass the same pages as reading the file again.
"""
from __future__ import annotations

import bz2
import random
import re
import string
from collections import Counter

import mwparserfromhell
import nltk.data
import pytest
from mwparserfromhell.nodes import Template
from nltk.tokenize.punkt import load_punkt_params

from conftest import NLTK_DATA, wiki_file
from wikipairs.reading import sources as xml_sources
from wikipairs.text import sentences as sentences_module
from wikipairs.text import wikitext
from wikipairs.reading import DumpFile
from wikipairs.errors import TruncatedDumpError
from wikipairs.parse import ParseConfig, iter_articles
from wikipairs.records import Link
from wikipairs.text.sentences import SentenceSplitter, _FastPunkt, _load_punkt_tab
from wikipairs.text.wikitext import Cleaner, _Piece, shown_in_text

DUMPS = ["enwiki-sample-gensim.xml.bz2", "enwiki-minidump-dbpedia.xml.bz2",
         "enwiki-table-markup.xml.bz2", "elwiki-sample.xml.bz2", "dewiki-minidump-dbpedia.xml.bz2"]


@pytest.fixture(scope="module")
def recorded(monkeypatch_module):
    """name -> (splitter, paragraph texts given to it, rendered pieces given to _sentences,
    template sources, page texts, link targets), recorded while parsing each real dump."""
    monkeypatch_module.setenv("NLTK_DATA", str(NLTK_DATA))
    out = {}
    for name in DUMPS:
        seen = {"texts": [], "pieces": [], "templates": [], "paragraphs": [], "splitter": None}
        spans, sentences_of = SentenceSplitter.spans, Cleaner._sentences
        render_template, render = Cleaner._render_template, Cleaner.render

        def record_spans(self, text, seen=seen):
            seen["splitter"] = self
            seen["texts"].append(text)
            return spans(self, text)

        def record_pieces(self, pieces, counts=None, paragraph=None, seen=seen):
            seen["pieces"].append([_Piece(p.text, p.target, p.raw_target) for p in pieces])
            return sentences_of(self, pieces, counts, paragraph)

        def record_template(self, source, work, depth, *context, seen=seen):
            seen["templates"].append(source)
            return render_template(self, source, work, depth, *context)

        def record_paragraph(self, paragraph, counts=None, seen=seen):
            if self.splitter is not None:  # not the cleaner that gathers Punkt training text
                seen["paragraphs"].append(paragraph)
            return render(self, paragraph, counts)

        monkeypatch_module.setattr(SentenceSplitter, "spans", record_spans)
        monkeypatch_module.setattr(Cleaner, "render", record_paragraph)
        monkeypatch_module.setattr(Cleaner, "_sentences", record_pieces)
        monkeypatch_module.setattr(Cleaner, "_render_template", record_template)
        # Punkt on every dump: punkt_tab for English, a model trained on the dump for Greek
        # (auto would take sentencex there), so _FastPunkt meets both kinds of parameters.
        method = "punkt-trained" if name.startswith("elwiki") else "auto"
        for _ in iter_articles(ParseConfig(inputs=[str(wiki_file(name))], output="",
                                           sentence_splitter=method)):
            pass
        monkeypatch_module.undo()
        monkeypatch_module.setenv("NLTK_DATA", str(NLTK_DATA))
        dump = DumpFile(str(wiki_file(name)))
        seen["pages"] = [p.text for p in dump.pages()]
        seen["titles"] = dump.titles
        out[name] = seen
    return out


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


# ---- Punkt ---------------------------------------------------------------------------------

def _nltk_spans(splitter: SentenceSplitter, text: str) -> list[tuple[int, int]]:
    return list(splitter.tokenizer.span_tokenize(text))


@pytest.mark.parametrize("name", DUMPS)
def test_punkt_spans_are_nltk_spans_on_every_paragraph(recorded, name):
    seen = recorded[name]
    splitter = seen["splitter"]
    assert splitter is not None and seen["texts"]
    if name.startswith("enwiki"):
        assert splitter.source.startswith("punkt_tab:"), splitter.source
    fast = _FastPunkt.for_tokenizer(splitter.tokenizer)
    assert fast is not None
    diffs = [(t, _nltk_spans(splitter, t), fast.spans(t)) for t in seen["texts"]
             if fast.spans(t) != _nltk_spans(splitter, t)]
    assert not diffs, f"{len(diffs)} of {len(seen['texts'])} paragraphs differ, e.g. {diffs[:3]}"
    # The public method as before: its shortcut for text with no end mark before a space (which
    # keeps "R.E.M.'s song ..." whole, where nltk cuts after "R.E.M."), else nltk's spans.
    for text in seen["texts"]:
        expected = _nltk_spans(splitter, text) if sentences_module._HAS_END.search(text) else (
            [(0, len(text))] if text.strip() else [])
        assert splitter.spans(text) == expected, repr(text)


TRICKY = [
    "", " ", "Hello.", "Hello. ", "Mr. Smith went to Washington. He arrived at 5 p.m. on Jan. 3.",
    "It cost $3.50. That was cheap!! Wasn't it?? (Yes.) \"Quite.\" 'Indeed.' [Sure.] {So.}",
    "J. S. Bach wrote it. The U.S. Army came. E.g. this, i.e. that. The end... Next one.",
    "In 1990. The year. In 1990. it rained. No. 5 is here. Vol. 2. Pp. 3-4.",
    "Word.\nNext line. Third.\n\nNew paragraph.  Two  spaces.\tTab.\rCR. \x0bVT. \x0cFF.",
    "He said \u201cno.\u201d Then left. \u00abOui.\u00bb Puis. \u2018Q.\u2019 A.",
    "ellipsis... and more. Etc. etc. . . Spaced. ?! Odd ! Spacing ?",
    "a.b.c. d. E. f-g. H-i. St. Louis. Dr. No. -3.5. ,5. 4.4.4. A: b. C; d. E, f. G) h.",
    "Ελληνικά. Κείμενο; Ερώτηση; Ναι. Όχι.", "日本語。次の文。", "x.\u00a0Y. z.\u2003W.",
]


def _fuzz_texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    words = ["Mr.", "Dr.", "St.", "U.S.", "e.g.", "i.e.", "etc.", "J.", "a.", "5.", "1990.", "No.",
             "The", "the", "It", "it", "he", "He", "(", ")", "\"", "'", "...", ".", "?", "!", ";",
             "--", ",", ":", "\u201c", "\u201d", "\u00bb", "word", "Word", "x.y.", "3.5", "-", "[1]",
             "Inc.", "vs.", "ca.", "c.", "pp.", "Jan.", "fl.", "approx."]
    spaces = [" ", " ", " ", "  ", "\n", "\t", "", " \n "]
    return ["".join(rng.choice(words) + rng.choice(spaces) for _ in range(rng.randint(0, 14)))
            for _ in range(count)]


@pytest.mark.parametrize("name", ["enwiki-sample-gensim.xml.bz2", "elwiki-sample.xml.bz2"])
def test_punkt_spans_are_nltk_spans_on_tricky_text(recorded, name):
    splitter = recorded[name]["splitter"]
    fast = _FastPunkt.for_tokenizer(splitter.tokenizer)
    for text in TRICKY + _fuzz_texts(7, 4000):
        assert fast.spans(text) == _nltk_spans(splitter, text), repr(text)
        assert fast.spans(text) == _nltk_spans(splitter, text), repr(text)  # from the caches


def test_punkt_fast_path_sees_parameter_changes():
    splitter = SentenceSplitter.for_language("en")
    text = "It was made by Foo. Corp. workers. Then they left."
    assert splitter.spans(text) == _nltk_spans(splitter, text)
    splitter.tokenizer._params.abbrev_types.add("foo")  # the same set: seen by the fast path
    assert splitter.spans(text) == _nltk_spans(splitter, text)
    assert splitter.spans(text) == [(0, 34), (35, 50)]
    splitter.tokenizer._params = load_punkt_params(nltk.data.FileSystemPathPointer(
        SentenceSplitter.installed_model("en")))  # new parameters: a new fast path
    assert splitter.spans(text) == _nltk_spans(splitter, text)


def test_punkt_subclass_keeps_nltk_code():
    class Custom(type(SentenceSplitter.for_language("en").tokenizer)):
        def _second_pass_annotation(self, aug_tok1, aug_tok2):
            return None

    assert _FastPunkt.for_tokenizer(Custom()) is None


def test_punkt_tab_loader_matches_nltk():
    folder = SentenceSplitter.installed_model("en")
    assert folder is not None
    fast, slow = _load_punkt_tab(folder), load_punkt_params(nltk.data.FileSystemPathPointer(folder))
    assert fast.abbrev_types == slow.abbrev_types
    assert fast.collocations == slow.collocations
    assert fast.sent_starters == slow.sent_starters
    assert dict(fast.ortho_context) == dict(slow.ortho_context)
    assert type(fast.ortho_context) is type(slow.ortho_context)


def test_other_space_is_every_whitespace_but_the_space():
    chars = [chr(c) for c in range(0x110000)]
    assert {c for c in chars if wikitext._OTHER_SPACE.match(c)} == \
        {c for c in chars if re.match(r"\s", c) and c != " "}
    assert {c for c in chars if c.isspace()} == {c for c in chars if re.match(r"\s", c)}
    assert {c for c in chars if sentences_module._OTHER_ASCII_SPACE.match(c)} == \
        set(string.whitespace) - {" "}


# ---- templates, braces, brackets, quotes ------------------------------------------------------

def _reference_template_args(source: str):
    nodes = mwparserfromhell.parse(source).nodes
    template = nodes[0] if nodes else None
    if not isinstance(template, Template):
        return None
    return {str(p.name).strip(): str(p.value) for p in template.params}


def test_template_args_match_mwparserfromhell(recorded):
    sources = {s for seen in recorded.values() for s in seen["templates"]}
    assert len(sources) > 1000
    rng = random.Random(1)
    alphabet = list("ab =|'&#;:*-!/ \t_~") + ["&amp;", "''", "'''", "&#124;", "==", "__TOC__",
                                           "<", "{", "}", "[", "]", "\n", "http://x", "\u00e9", "\r"]
    names = ["convert", " lang", "x", "", " ", "a=b", "'", "&amp;", "#if:", "a#b", "a:b", "!", "=",
             "A_b", "Template:Nowrap", "\n"]
    for _ in range(30000):
        body = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        sources.add("{{" + rng.choice(names) + body + "}}")
    diffs = [s for s in sources if wikitext.template_args(s) != _reference_template_args(s)]
    assert not diffs, diffs[:5]


_REFERENCE_BRACES = re.compile(r"\{\{|\}\}|^[ \t:]*\{\||^[ \t]*\|\}(?!\})", re.M)


def _reference_brace_tokens(text: str):
    return [(m.group().strip(" \t:"), m.start(), m.end()) for m in _REFERENCE_BRACES.finditer(text)]


def test_brace_tokens_match_the_line_anchored_pattern(recorded):
    texts = [t for seen in recorded.values() for t in seen["pages"]]
    rng = random.Random(2)
    alphabet = ["{", "}", "|", "\n", " ", ":", "\t", "a", "{|", "|}", "{{", "}}"]
    texts += ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
              for _ in range(50000)]
    for text in texts:
        assert list(wikitext._brace_tokens(text)) == _reference_brace_tokens(text), repr(text[:200])


def test_quote_markup_matches_the_callback():
    rng = random.Random(3)
    for _ in range(50000):
        text = "".join(rng.choice(["'", "'", "a", " ", "''", "'''"]) for _ in range(rng.randint(0, 14)))
        expected = wikitext._QUOTES.sub(lambda m: "'" if len(m.group()) == 4 else "", text)
        assert wikitext._QUOTE_MARKUP.sub("", text) == expected, repr(text)


def _reference_strip_special_links(self: Cleaner, text: str):
    if self._special_link is None or not self._special_link.search(text):
        return text, []
    categories = []
    out, last, depth, start = [], 0, 0, None
    breaks = 0
    for m in wikitext._BRACKETS.finditer(text):
        if m.group()[0] == "\n":
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
                if not shown_in_text(parsed, target):
                    out.append(text[last:start])
                    last = m.end()
                start = None
    out.append(text[last:])
    return "".join(out), categories


def test_strip_special_links_matches_token_by_token_scan(recorded):
    seen = recorded["enwiki-sample-gensim.xml.bz2"]
    cleaner = Cleaner(seen["titles"], None)
    texts = [t for s in recorded.values() for t in s["pages"]]
    rng = random.Random(4)
    pieces = ["[[", "]]", "[[File:a", "[[Category:B", "[[:Category:C", "[[x", "|", "a", " ", "\n",
              "\n\n", "\n \n", "[", "]", "[[Image:y|cap [[link]] more]]", "[[Category:Z]]", "[[q]]"]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(0, 14))) for _ in range(50000)]
    for text in texts:
        assert cleaner.strip_special_links(text) == _reference_strip_special_links(cleaner, text), \
            repr(text[:200])


# ---- titles ------------------------------------------------------------------------------------

def test_plain_title_fast_path_matches_full_parse(recorded):
    rng = random.Random(5)
    for name in ("enwiki-sample-gensim.xml.bz2", "elwiki-sample.xml.bz2"):
        parser = recorded[name]["titles"]
        raws = {m.group(1) for t in recorded[name]["pages"]
                for m in re.finditer(r"\[\[([^\[\]|]*)", t)}
        alphabet = list("ab Xé_:%#&|[]") + ["&amp;", "%20", "  ", "\u00a0", "\u200e", "ß", "i",
                                          "ǆ", "ﬁ", "Talk", "en", "File", "\t", "\u10d0", "ς"]
        raws |= {"".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
                 for _ in range(20000)}
        raws |= {"a" * n for n in (250, 255, 256, 300)} | {"é" * n for n in (100, 127, 128, 200)}
        for raw in raws:
            assert parser._parse(raw) == parser._parse_any(raw), repr(raw)


# ---- _sentences ---------------------------------------------------------------------------------

_REF_SPACES = re.compile(r"\s+")
_REF_MARKS = re.compile("([\ue000\ue001])")


def _reference_sentences(cleaner: Cleaner, pieces):
    """Cleaner._sentences before its speed-up."""
    joined = "".join(f"\ue000{p.text}\ue001" if p.target else p.text for p in pieces)
    if "<" in joined:
        joined = wikitext._TAG_LEFTOVER.sub("", joined)
    joined = wikitext._INVISIBLE.sub("", joined)  # a rule of 2026-12-05, not a speed-up
    joined = _REF_SPACES.sub(" ", joined)
    links_marked = "\ue000" in joined
    if links_marked:
        joined = _REF_SPACES.sub(" ", joined.replace("\ue000 ", " \ue000")
                                 .replace(" \ue001", "\ue001 "))
    joined = joined.strip()
    spans = []
    if links_marked:
        targets = iter([p for p in pieces if p.target])
        parts, size, start = [], 0, 0
        for part in _REF_MARKS.split(joined):
            if part == "\ue000":
                start = size
            elif part == "\ue001":
                piece = next(targets)
                if size > start:
                    spans.append((start, size, piece))
            else:
                parts.append(part)
                size += len(part)
        joined = "".join(parts)
    if not joined:
        return [], []
    holes = ()
    joined = joined.replace("\ue005", "<").replace("\ue006", ">")  # typed as entities (a later rule)
    if "\x03" in joined or "\x04" in joined or "\x05" in joined:  # a later rule, as on both paths
        joined, spans, holes = wikitext.without_holes(joined, spans)
    if sentences_module._HAS_END.search(joined):
        bounds = list(cleaner.splitter.tokenizer.span_tokenize(joined))
    else:
        bounds = [(0, len(joined))] if joined.strip() else []
    bounds = wikitext.prose_spans(joined, bounds, None, holes)  # a later rule, as holes
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


def test_sentences_match_the_reference(recorded):
    rng = random.Random(6)
    texts = ["a", " ", "  ", "\u00a0", "\t", ". ", "End. ", "Next", "<b>", "</b>", "x < y", "\n",
             "\u2003", "(", ")", "\"", "Mr. ", "\ue000", "\ue001"]
    for name in ("enwiki-sample-gensim.xml.bz2", "elwiki-sample.xml.bz2"):
        seen = recorded[name]
        cleaner = Cleaner(seen["titles"], seen["splitter"])
        cases = list(seen["pieces"])
        for _ in range(20000):
            cases.append([_Piece("".join(rng.choice(texts) for _ in range(rng.randint(0, 4))),
                                 *(("T", "T") if rng.random() < 0.4 else (None, "")))
                          for _ in range(rng.randint(0, 6))])
        for pieces in cases:
            assert _outcome(cleaner._sentences, pieces) == \
                _outcome(lambda p: _reference_sentences(cleaner, p), pieces), pieces


def _reference_render(cleaner: Cleaner, paragraph: str):
    """What Cleaner.render gives without its fast paths: mwparserfromhell's nodes, rendered."""
    pieces = []
    cleaner._render_nodes(mwparserfromhell.parse(paragraph, skip_style_tags=True).nodes, pieces)
    return wikitext._without_stray_brackets(pieces, None)  # as the slow path of render does


def test_render_fast_paths_match_mwparserfromhell(recorded):
    """Plain paragraphs, simple links and inline tags skip mwparserfromhell: the sentences and
    links they give are those of the mwparserfromhell rendering, on every paragraph of the real
    dumps and on random mixes of markup."""
    rng = random.Random(11)
    parts = ["[[Ardmere]]", "[[River Vell|the river]]", "[[Vell]]s", "[[vell_valley#Towns|]]",
             "<sub>", "</sub>", "<sup>2</sup>", "<br>", "<br />", "</br>", "<span style=\"a:b\">",
             "</span>", "<i>", "</I>", "<blockquote>", "</blockquote>", "<nowiki>", "</nowiki>",
             "<p>", "<div>", "&nbsp;", "&amp;", "&lt;b&gt;", " ", "  ", "\n", "text", "End. ",
             "Next", "s", "----", "http://example.org/x", "[http://example.org label]", "{", "}",
             "x > y", "a < b", "[[Category:Towns]]", "[[:Category:Towns]]", "[[de:Vell]]",
             "[[wikt:vell|vell]]", "[[Ardmere|<i>the town</i>]]", "<s>", "<small>", "<em>",
             "</em>", "<span/>", "<abbr title=\"x\">", "[", "]", "'"]
    for name in ("enwiki-sample-gensim.xml.bz2", "elwiki-sample.xml.bz2",
                 "enwiki-table-markup.xml.bz2"):
        seen = recorded[name]
        cleaner = Cleaner(seen["titles"], seen["splitter"], resolve=lambda title: title)
        cases = list(seen["paragraphs"])
        assert len(cases) > 100
        for _ in range(20000):
            cases.append("".join(rng.choice(parts) for _ in range(rng.randint(1, 8))))
        for paragraph in cases:
            assert _outcome(lambda p: cleaner._sentences(cleaner.render(p)), paragraph) == \
                _outcome(lambda p: cleaner._sentences(_reference_render(cleaner, p)),
                         paragraph), paragraph


def _outcome(function, *args):
    try:
        return function(*args)
    except Exception as e:  # private-use marks in the text itself can break both alike
        return type(e)


# ---- the decompressed copy of pass 1 --------------------------------------------------------------

def _pages(dump: DumpFile, **kwargs):
    return [(p.id, p.ns, p.title, p.text, p.redirect, p.source) for p in dump.pages(**kwargs)]


@pytest.mark.parametrize("name", ["enwiki-sample-gensim.xml.bz2", "enwiki-table-markup.xml.bz2"])
def test_second_pass_reads_the_copy(name):
    path = str(wiki_file(name))
    first = DumpFile(path, keep_copy=True)
    pages = _pages(first)
    copy = first._copy
    assert copy is not None and copy.complete and not copy.cut
    again = first.reopen()
    assert again._xml._tracker._decompressor is not None and isinstance(
        again._xml._tracker._decompressor, xml_sources._CopyReader)  # no decompression the second time
    assert _pages(again) == pages == _pages(DumpFile(path))
    assert again.site == first.site


@pytest.mark.parametrize("name", ["elwiki-truncated.xml.xz", "cut.xml.bz2"])
def test_copy_of_a_truncated_dump_is_still_truncated(tmp_path, name):
    """elwiki-truncated.xml.xz is cut XML in a complete xz stream; cut.xml.bz2, the gensim
    sample's first bz2 block without the rest, a download cut short (its decompressor is cut)."""
    if name == "cut.xml.bz2":
        data = wiki_file("enwiki-sample-gensim.xml.bz2").read_bytes()
        (tmp_path / name).write_bytes(data[:len(data) * 3 // 4])
        path = str(tmp_path / name)
    else:
        path = str(wiki_file(name))
    first = DumpFile(path, keep_copy=True)
    counts = Counter()
    pages = _pages(first, counts=counts, allow_truncated=True)
    assert pages and counts["truncated_files"] == 1 and first._copy.complete
    assert first._copy.cut == (name == "cut.xml.bz2")
    again = first.reopen()
    assert isinstance(again._xml._tracker._decompressor, xml_sources._CopyReader)
    counts2 = Counter()
    assert _pages(again, counts=counts2, allow_truncated=True) == pages
    assert counts2 == counts
    first = DumpFile(path, keep_copy=True)
    list(first.pages(allow_truncated=True))
    again = first.reopen()
    with pytest.raises(TruncatedDumpError, match=f"truncated dump.* after {len(pages)} complete"):
        list(again.pages())
    with pytest.raises(TruncatedDumpError, match=f"truncated dump.* after {len(pages)} complete"):
        list(DumpFile(path).pages())


def test_no_copy_when_too_large_or_not_read_to_the_end(monkeypatch):
    path = str(wiki_file("enwiki-sample-gensim.xml.bz2"))
    reference = _pages(DumpFile(path))
    monkeypatch.setattr(xml_sources, "COPY_MAX_BYTES", 1 << 20)  # the XML is 6 MB
    first = DumpFile(path, keep_copy=True)
    assert _pages(first) == reference
    assert first._copy.abandoned and not first._copy.complete
    again = first.reopen()
    assert not isinstance(again._xml._tracker._decompressor, xml_sources._CopyReader)
    assert _pages(again) == reference
    monkeypatch.undo()
    partial = DumpFile(path, keep_copy=True)
    next(iter(partial.pages()))  # stopped early: no complete copy
    assert _pages(partial.reopen()) == reference


def test_plain_files_get_no_copy(tmp_path):
    path = tmp_path / "plain.xml"
    path.write_bytes(bz2.decompress(wiki_file("enwiki-table-markup.xml.bz2").read_bytes()))
    first = DumpFile(str(path), keep_copy=True)
    pages = _pages(first)
    assert first._copy is None
    assert _pages(first.reopen()) == pages


@pytest.mark.parametrize("name", ["enwiki-sample-gensim.xml.bz2", "jawiki-sample.xml.bz2"])
def test_a_block_of_one_line_takes_the_short_path_to_the_same_paragraphs(name):
    """`_ParagraphRuns.block` reads a block of one line of text directly; the general loop
    (the same block with a trailing newline, an empty line it skips) gives the same paragraphs
    and the same state for the blocks after it, on every section of the dump."""
    from wikipairs.text.wikitext import _ParagraphRuns
    dump = DumpFile(str(wiki_file(name)))
    cleaner = Cleaner(dump.titles, None)
    short = 0
    for page in dump.pages():
        if page.ns or page.redirect is not None:
            continue
        text = cleaner.strip(page.text, Counter())[0]
        for _, _, body in cleaner.sections(text):
            fast, general = _ParagraphRuns(True, 20), _ParagraphRuns(True, 20)
            for block in wikitext._PARA_BREAK.split(body):
                short += "\n" not in block
                fast.block(block)
                general.block(block + "\n")
                assert fast.out == general.out and fast.last_text == general.last_text, block
    assert short > 1000
