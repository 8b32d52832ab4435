"""Title normalization (wikipairs.text.titles.TitleParser) against what MediaWiki does.

Oracles are MediaWiki's rules (Title::newFromText, MediaWikiTitleCodec, Parser link handling),
written out by hand for each input.
"""
from __future__ import annotations

import pytest

from wikipairs.records import Namespace, SiteInfo
from wikipairs.text.titles import TitleParser, clean_spaces, upper_first

# The namespaces of the bundled sample's siteinfo (an enwiki export).
ENWIKI_NAMESPACES = [
    (-2, "Media"), (-1, "Special"), (0, ""), (1, "Talk"), (2, "User"), (3, "User talk"),
    (4, "Wikipedia"), (5, "Wikipedia talk"), (6, "File"), (7, "File talk"), (8, "MediaWiki"),
    (9, "MediaWiki talk"), (10, "Template"), (11, "Template talk"), (12, "Help"), (13, "Help talk"),
    (14, "Category"), (15, "Category talk"), (100, "Portal"), (101, "Portal talk"), (118, "Draft"),
    (119, "Draft talk"), (710, "TimedText"), (711, "TimedText talk"), (828, "Module"),
    (829, "Module talk"),
]

# elwiki's siteinfo (from the real Greek dump), including a case-sensitive namespace.
ELWIKI_NAMESPACES = [
    (-2, "Μέσο", "first-letter"), (-1, "Ειδικό", "first-letter"), (0, "", "first-letter"),
    (1, "Συζήτηση", "first-letter"), (2, "Χρήστης", "first-letter"),
    (4, "Βικιπαίδεια", "first-letter"), (5, "Συζήτηση Βικιπαίδεια", "first-letter"),
    (6, "Αρχείο", "first-letter"), (10, "Πρότυπο", "first-letter"),
    (14, "Κατηγορία", "first-letter"), (15, "Συζήτηση κατηγορίας", "first-letter"),
    (2300, "Gadget", "case-sensitive"),
]


def site(namespaces, lang="en", case="first-letter", dbname="enwiki"):
    nss = {}
    for entry in namespaces:
        key, name = entry[0], entry[1]
        ns_case = entry[2] if len(entry) > 2 else case
        nss[key] = Namespace(key, name, ns_case)
    return SiteInfo(dbname=dbname, lang=lang, case=case, namespaces=nss)


@pytest.fixture(scope="module")
def en():
    return TitleParser(site(ENWIKI_NAMESPACES))


@pytest.fixture(scope="module")
def default():
    """No namespaces in the siteinfo: English defaults."""
    return TitleParser(SiteInfo())


@pytest.fixture(scope="module")
def el():
    return TitleParser(site(ELWIKI_NAMESPACES, lang="el", dbname="elwiki"))


@pytest.fixture(params=["siteinfo", "defaults"])
def parser(request, en, default):
    return en if request.param == "siteinfo" else default


# ---- spaces, colons, fragments, case ---------------------------------------------------------

@pytest.mark.parametrize("raw, expected", [
    ("foo_bar", "Foo bar"),
    ("Foo__bar___baz", "Foo bar baz"),
    ("  foo   bar  ", "Foo bar"),
    ("_Foo_bar_", "Foo bar"),
    ("Foo\tbar\nbaz", "Foo bar baz"),
    ("Foo\u00a0bar", "Foo bar"),          # no-break space
    ("Foo\u3000bar", "Foo bar"),          # ideographic space
    ("Foo\u200ebar", "Foobar"),           # left-to-right mark is dropped
    (":foo", "Foo"),
    (" : foo", "Foo"),
    ("foo#History", "Foo"),
    ("foo_bar#Early_life", "Foo bar"),
    ("river Vell", "River Vell"),
    ("iPod", "IPod"),
    ("ñandú", "Ñandú"),
    ("élan", "Élan"),
    ("1888 flood", "1888 flood"),
    ("Foo:bar", "Foo:bar"),               # not a namespace: stays in the main namespace
    ("eBay: the story", "EBay: the story"),
])
def test_spaces_colon_fragment_case(parser, raw, expected):
    assert parser.normalize(raw) == expected, raw


def test_fragment_is_kept_apart(en):
    parsed = en.parse("Vell_Railway#Stations_and_halts")
    assert (parsed.ns, parsed.title, parsed.fragment, parsed.interwiki) == \
        (0, "Vell Railway", "Stations and halts", "")


def test_only_the_first_letter_is_upper_cased(en):
    assert en.normalize("bRIDGE of sighs") == "BRIDGE of sighs"
    assert en.normalize("Vell valley") == "Vell valley"  # the rest keeps its case


@pytest.mark.parametrize("raw, expected", [
    # MediaWiki (Wikimedia config) leaves a letter whose upper case is two letters alone:
    # the articles are at "ß" and "ﬁ", not "SS" and "FI".
    ("ß", "ß"),
    ("ßtraße", "ßtraße"),
    ("ﬁsh", "ﬁsh"),
    # Georgian is not upper-cased to Mtavruli on Wikimedia wikis.
    ("თბილისი", "თბილისი"),
])
def test_first_letter_special_cases(en, raw, expected):
    assert en.normalize(raw) == expected


def test_turkish_dotted_i():
    tr = TitleParser(SiteInfo(lang="tr"))
    assert tr.normalize("istanbul") == "İstanbul"
    assert TitleParser(SiteInfo(lang="en")).normalize("istanbul") == "Istanbul"
    assert upper_first("istanbul", "az") == "İstanbul"


def test_case_sensitive_wiki_is_left_alone():
    wiktionary = TitleParser(site(ENWIKI_NAMESPACES, case="case-sensitive", dbname="enwiktionary"))
    assert wiktionary.normalize("ford") == "ford"
    assert wiktionary.normalize("category:fords") == "Category:fords"
    # and with no namespaces in the siteinfo, the wiki's case rule applies to the defaults
    bare = TitleParser(SiteInfo(case="case-sensitive"))
    assert bare.normalize("ford_crossing") == "ford crossing"


def test_case_sensitive_namespace_in_first_letter_wiki(el):
    assert el.normalize("gadget:foo_bar") == "Gadget:foo bar"  # prefix matched, title kept
    assert el.normalize("ποταμός") == "Ποταμός"                # main namespace: first-letter


def test_mixed_namespace_case_rules():
    parser = TitleParser(site([(0, "", "case-sensitive"), (14, "Category", "first-letter")],
                              case="case-sensitive"))
    assert parser.normalize("ford") == "ford"
    assert parser.normalize("category:fords") == "Category:Fords"


# ---- namespaces --------------------------------------------------------------------------------

@pytest.mark.parametrize("raw, expected, ns", [
    ("File:Vell bridge.jpg", "File:Vell bridge.jpg", 6),
    ("file:vell_bridge.jpg", "File:Vell bridge.jpg", 6),
    ("FILE : vell bridge.jpg", "File:Vell bridge.jpg", 6),
    ("image:Lake Ossary.jpg", "File:Lake Ossary.jpg", 6),
    ("IMAGE:Lake Ossary.jpg", "File:Lake Ossary.jpg", 6),
    ("Image talk:X.jpg", "File talk:X.jpg", 7),
    ("category:towns", "Category:Towns", 14),
    ("Category_talk:towns", "Category talk:Towns", 15),
    ("category talk:towns", "Category talk:Towns", 15),
    ("template:Infobox_river", "Template:Infobox river", 10),
    ("user:riverwatcher", "User:Riverwatcher", 2),
    ("talk:River Vell", "Talk:River Vell", 1),
    ("media:Sound.ogg", "Media:Sound.ogg", -2),
    ("special:Search", "Special:Search", -1),
    ("portal:Rivers", "Portal:Rivers", 100),
    ("module:Convert", "Module:Convert", 828),
])
def test_namespace_prefixes(parser, raw, expected, ns):
    parsed = parser.parse(raw)
    assert parsed is not None and (parsed.title, parsed.ns) == (expected, ns), raw


@pytest.mark.parametrize("raw, expected, ns", [
    ("Wikipedia:WikiProject Vell Valley", "Wikipedia:WikiProject Vell Valley", 4),
    ("wikipedia:Manual of Style", "Wikipedia:Manual of Style", 4),
    ("Project:Manual of Style", "Wikipedia:Manual of Style", 4),
    ("project:manual of Style", "Wikipedia:Manual of Style", 4),
    ("WP:NPOV", "Wikipedia:NPOV", 4),
    ("wp:npov", "Wikipedia:Npov", 4),
    ("Project talk:Foo", "Wikipedia talk:Foo", 5),
    ("WT:NPOV", "Wikipedia talk:NPOV", 5),
    ("Wikipedia talk:Foo", "Wikipedia talk:Foo", 5),
])
def test_project_namespace(parser, raw, expected, ns):
    """MediaWiki maps the canonical Project: and enwiki's WP: alias to the project namespace,
    which the sample's siteinfo (and English Wikipedia) names 'Wikipedia'."""
    parsed = parser.parse(raw)
    assert parsed is not None, raw
    assert (parsed.title, parsed.ns, parsed.interwiki) == (expected, ns, ""), raw


def test_namespace_alone_is_invalid(en):
    assert en.parse("Category:") is None
    assert en.parse("File: ") is None
    assert en.parse("Talk:#Section") is None


def test_namespace_names(en, el):
    assert en.namespace_names(6) == {"file", "image"}
    assert en.namespace_names(14) == {"category"}
    assert en.namespace_names(4) >= {"wikipedia", "project", "wp"}
    assert el.namespace_names(6) >= {"αρχείο", "εικόνα", "file", "image"}
    assert el.namespace_names(14) >= {"κατηγορία", "category"}


# ---- localized names from siteinfo (Greek) -------------------------------------------------

@pytest.mark.parametrize("raw, expected, ns", [
    ("Αρχείο:Γέφυρα.jpg", "Αρχείο:Γέφυρα.jpg", 6),
    ("αρχείο:γέφυρα.jpg", "Αρχείο:Γέφυρα.jpg", 6),
    ("ΑΡΧΕΊΟ:Γέφυρα.jpg", "Αρχείο:Γέφυρα.jpg", 6),      # upper-case with tonos
    ("Εικόνα:Γέφυρα.jpg", "Αρχείο:Γέφυρα.jpg", 6),      # Greek alias not in siteinfo
    ("File:Γέφυρα.jpg", "Αρχείο:Γέφυρα.jpg", 6),        # canonical English name
    ("Image:Γέφυρα.jpg", "Αρχείο:Γέφυρα.jpg", 6),
    ("Κατηγορία:Ποταμοί", "Κατηγορία:Ποταμοί", 14),
    ("κατηγορία:ποταμοί της Ελλάδας", "Κατηγορία:Ποταμοί της Ελλάδας", 14),
    ("Category:Ποταμοί", "Κατηγορία:Ποταμοί", 14),
    ("Συζήτηση_κατηγορίας:Ποταμοί", "Συζήτηση κατηγορίας:Ποταμοί", 15),
    ("Πρότυπο:Κουτί πληροφοριών", "Πρότυπο:Κουτί πληροφοριών", 10),
    ("Project:Σύνθεση", "Βικιπαίδεια:Σύνθεση", 4),
    ("ποταμός_Αλιάκμονας", "Ποταμός Αλιάκμονας", 0),
    ("άρθρο", "Άρθρο", 0),
])
def test_greek_siteinfo(el, raw, expected, ns):
    parsed = el.parse(raw)
    assert parsed is not None and (parsed.title, parsed.ns) == (expected, ns), raw


def test_greek_interlanguage_and_local_prefix(el):
    assert el.normalize("en:River") is None
    assert el.normalize("el:Ποταμός") == "Ποταμός"  # own language: a local link


# ---- entities and %-escapes ------------------------------------------------------------------

@pytest.mark.parametrize("raw, expected", [
    ("AT&amp;T", "AT&T"),
    ("Caf&eacute;", "Café"),
    ("&#x41;rdmere", "Ardmere"),
    ("&#65;rdmere", "Ardmere"),
    ("Vell&nbsp;Valley", "Vell Valley"),
    ("Caf%C3%A9", "Café"),
    ("Vell%20Valley", "Vell Valley"),
    ("Old%5FBridge", "Old Bridge"),
    ("%C3%A9lan", "Élan"),
    ("Tom %26amp; Jerry", "Tom & Jerry"),  # MediaWiki: rawurldecode, then entities
    ("Vell%23History", "Vell"),            # an escaped # still starts the fragment
    ("A+B", "A+B"),                        # + is not a space in titles
    ("100%_pure", "100% pure"),            # a % that starts no escape is a plain character
])
def test_entities_and_percent_escapes(en, raw, expected):
    assert en.normalize(raw) == expected, raw


# ---- interwiki and interlanguage ---------------------------------------------------------------

@pytest.mark.parametrize("raw, prefix", [
    ("wikt:ford", "wikt"),
    ("Wiktionary:ford", "wiktionary"),
    ("commons:Category:Bridges", "commons"),
    ("s:Some text", "s"),
    ("w:Foo", "w"),
    ("de:Vell (Fluss)", "de"),
    ("fr:Vell (rivière)", "fr"),
    ("FR:Vell", "fr"),
    (":de:Vell (Fluss)", "de"),
    ("zh-min-nan:Vell", "zh-min-nan"),
    ("simple:River", "simple"),
])
def test_interwiki_and_interlanguage_are_not_local(parser, raw, prefix):
    assert parser.normalize(raw) is None, raw
    parsed = parser.parse(raw)
    assert parsed is not None and parsed.interwiki == prefix, raw


def test_interwiki_title_is_kept(en):
    parsed = en.parse("wikt:ford#Noun")
    assert (parsed.title, parsed.fragment, parsed.interwiki) == ("ford", "Noun", "wikt")


def test_own_language_prefix_is_local(en):
    """`[[en:Foo]]` on enwiki is a link to the local page Foo ($wgLocalInterwikis)."""
    assert en.normalize("en:river Vell") == "River Vell"
    assert en.normalize(":en:Category:Towns") == "Category:Towns"


# ---- invalid titles ------------------------------------------------------------------------

@pytest.mark.parametrize("raw", [
    "", " ", "_", ":", "#History", "[[]]", "[[Foo]]", "{{x}}", "Foo{{bar}}", "a|b", "a<b>",
    "Foo]]", "x" * 256, "é" * 128, "AT%2526T", "&#37;41",
])
def test_invalid_titles(parser, raw):
    assert parser.normalize(raw) is None, raw
    assert parser.parse(raw) is None, raw


def test_longest_valid_title(en):
    assert en.normalize("x" * 255) == "X" + "x" * 254
    assert en.normalize("Category:" + "x" * 255) == "Category:X" + "x" * 254  # prefix not counted


def test_cache_returns_same_results(en):
    first = [en.normalize(t) for t in ("foo", "wikt:x", "[[]]", "image:a.jpg")]
    again = [en.normalize(t) for t in ("foo", "wikt:x", "[[]]", "image:a.jpg")]
    assert first == again == ["Foo", None, None, "File:A.jpg"]


def test_clean_spaces():
    assert clean_spaces("  a__b \u2003 c\u200f ") == "a b c"


def test_own_language_prefix_is_decoded_once(en):
    assert en.normalize("en:AT%25T") == "AT%T"
    assert en.normalize("en:AT%2526T") is None  # "AT%26T": %XX is illegal in a title
    assert en.normalize("en:Talk:foo") == "Talk:Foo"
    assert en.normalize("en:de:Foo") is None  # then an interlanguage link
    assert en.normalize("en:") is None
