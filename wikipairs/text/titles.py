"""MediaWiki title normalization: namespaces (with aliases), case rules, fragments, interwiki.

MediaWiki turns `[[ :file:Foo_bar#Baz ]]` into the page `File:Foo bar`: underscores and runs of
whitespace become one space, HTML entities and %-escapes are decoded, the fragment is dropped,
the namespace prefix is matched case-insensitively against names and aliases, and the first letter
is upper-cased where the namespace's case rule is `first-letter`.

A namespace's names are, first come first kept: the dump's siteinfo (its own word, main names
only), the canonical English names (valid on every wiki), and the names and aliases that
mwconstants lists for the wiki's language (Vietnamese Hình:, Japanese 画像:, Chinese 分類:; see
wikipairs.text.mediawiki_names), so `--lang` brings that language's aliases.
"""
from __future__ import annotations

import functools
import html
import re
from dataclasses import dataclass
from urllib.parse import unquote

from .mediawiki_names import LocalNamespace, local_namespaces
from ..records import Namespace, SiteInfo

# Canonical (English) namespace names work on every wiki, whatever its language.
CANONICAL_NAMESPACES = {
    -2: ("Media",), -1: ("Special",), 0: ("",), 1: ("Talk",), 2: ("User",), 3: ("User talk",),
    4: ("Project", "WP"), 5: ("Project talk", "WT"), 6: ("File", "Image"), 7: ("File talk", "Image talk"),
    8: ("MediaWiki",), 9: ("MediaWiki talk",), 10: ("Template",), 11: ("Template talk",),
    12: ("Help",), 13: ("Help talk",), 14: ("Category",), 15: ("Category talk",),
    100: ("Portal",), 101: ("Portal talk",), 118: ("Draft",), 119: ("Draft talk",),
    710: ("TimedText",), 711: ("TimedText talk",), 828: ("Module",), 829: ("Module talk",),
}

# Keys of CANONICAL_NAMESPACES' names, for placing mwconstants' entries by their canonical name.
_CANONICAL_IDS = {name.casefold(): ns_id for ns_id, names in CANONICAL_NAMESPACES.items()
                  for name in names}

# Wikipedia language codes: `[[xx:Title]]` with one of these prefixes is an interlanguage link.
LANGUAGE_CODES = frozenset("""
aa ab ace ady af ak als alt am ami an ang anp ar arc ary arz as ast atj av avk awa ay az azb ba ban
bar bat-smg bcl be be-tarask be-x-old bg bh bi bjn blk bm bn bo bpy br bs bug bxr ca cbk-zam cdo ce
ceb ch cho chr chy ckb co cr crh cs csb cu cv cy da dag de din diq dsb dty dv dz ee el eml en eo es et
eu ext fa fat ff fi fiu-vro fj fo fon fr frp frr fur fy ga gag gan gcr gd gl glk gn gom gor got gpe gu
guc gur guw gv ha hak haw he hi hif ho hr hsb ht hu hy hyw hz ia id ie ig ii ik ilo inh io is it iu ja
jam jbo jv ka kaa kab kbd kbp kcg kg ki kj kk kl km kn ko koi kr krc ks ksh ku kv kw ky la lad lb lbe
lez lfn lg li lij lld lmo ln lo lrc lt ltg lv mad mai map-bms mdf mg mh mhr mi min mk ml mn mni mnw mr
mrj ms mt mus mwl my myv mzn na nah nap nds nds-nl ne new ng nia nl nn no nov nqo nrm nso nv ny oc olo
om or os pa pag pam pap pcd pcm pdc pfl pi pih pl pms pnb pnt ps pt pwn qu rm rmy rn ro roa-rup
roa-tara ru rue rw sa sah sat sc scn sco sd se sg sh shi shn si simple sk skr sl sm smn sn so sq sr srn
ss st stq su sv sw szl szy ta tay tcy te tet tg th ti tk tl tn to tpi tr trv ts tt tum tw ty tyv udm ug
uk ur uz ve vec vep vi vls vo wa war wo wuu xal xh xmf yi yo za zea zh zh-classical zh-min-nan zh-yue
zu zh-cn zh-tw nb
""".split())

# Interwiki prefixes of sister projects and common external wikis.
INTERWIKI_PREFIXES = frozenset("""
wikipedia w wiktionary wikt wikisource s wikibooks b wikiquote q wikinews n wikiversity v
wikivoyage voy wikispecies species commons c meta m metawikimedia mw mediawikiwiki d wikidata
wikimedia foundation wmf phabricator phab mediazilla bugzilla outreach incubator oldwikisource
wikitech toollabs doi arxiv google imdb iarchive gutenberg rfc ethnologue iso639-3 sep11 wikia
wikiquote lexeme f wikifunctions
""".split())

MAX_TITLE_BYTES = 255  # MediaWiki rejects longer titles (namespace prefix not counted)

_WS = re.compile(r"[\s_\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+")
_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
_BIDI = re.compile(r"[\u200e\u200f\u202a-\u202e]")
_INVALID_TITLE_CHAR = re.compile(r"[\[\]{}|<>]")
# Words of characters that _parse leaves as they are (no whitespace or underscore but single
# spaces between words, no bidi marks, no %-escape, entity, fragment, namespace or invalid char).
_PLAIN_WORD = r"[^\s_\u200e\u200f\u202a-\u202e%&#:\[\]{}|<>]+"
_PLAIN_TITLE = re.compile(rf"{_PLAIN_WORD}(?: {_PLAIN_WORD})*")


@dataclass(frozen=True)
class Title:
    ns: int
    title: str  # full normalized title, with namespace prefix
    fragment: str = ""
    interwiki: str = ""  # prefix of an interwiki/interlanguage link, "" for local pages


def clean_spaces(text: str) -> str:
    return _WS.sub(" ", _BIDI.sub("", text)).strip()


# Turkic wikis upper-case a dotted i to İ (MediaWiki's LanguageTr/LanguageAz).
DOTTED_I_LANGS = frozenset({"tr", "az"})


def upper_first(text: str, lang: str = "") -> str:
    """MediaWiki's ucfirst as configured on Wikimedia wikis: a letter whose upper case is not one
    letter stays as it is (ß, ŉ, ligatures: the articles "ß" and "ﬁ" keep them), Georgian is never
    upper-cased (no Mtavruli), and Turkish/Azerbaijani i becomes İ."""
    if not text:
        return text
    first = text[0]
    if first == "i" and lang in DOTTED_I_LANGS:
        upper = "İ"
    elif "\u10d0" <= first <= "\u10ff":
        upper = first
    else:
        upper = first.upper()
        if len(upper) != 1:
            upper = first
    return upper + text[1:]


def _namespace_id(entry: LocalNamespace, by_name: dict[str, int]) -> int | None:
    """The id of a namespace mwconstants lists: by its canonical name, else (a namespace of this
    wiki only, such as Portal or Anexo) by its local name among the siteinfo's."""
    for name in (entry.canonical, entry.local):
        key = clean_spaces(name).casefold()
        ns_id = _CANONICAL_IDS.get(key, by_name.get(key))
        if ns_id is not None:
            return ns_id
    return None


def localized_names(lang: str, namespaces: dict[int, Namespace]) -> dict[int, tuple[str, ...]]:
    """Names and aliases (mwconstants) of the `lang` Wikipedia for each of `namespaces`."""
    by_name = {clean_spaces(ns.name).casefold(): ns.id for ns in namespaces.values() if ns.name}
    names: dict[int, tuple[str, ...]] = {}
    for entry in local_namespaces(lang):
        ns_id = _namespace_id(entry, by_name)
        if ns_id in namespaces:
            names[ns_id] = names.get(ns_id, ()) + entry.names
    return names


def default_namespaces(lang: str, case: str = "first-letter") -> dict[int, Namespace]:
    """The namespaces of a dump without them in its siteinfo: the canonical ones, named as the
    `lang` Wikipedia names them (its page titles carry those names), else in English."""
    local = {}
    for entry in local_namespaces(lang) or local_namespaces("en"):
        ns_id = _CANONICAL_IDS.get(clean_spaces(entry.canonical).casefold())
        if ns_id is not None:
            local.setdefault(ns_id, entry.local)
    return {ns_id: Namespace(ns_id, local.get(ns_id, names[0]), case)
            for ns_id, names in CANONICAL_NAMESPACES.items()}


class TitleParser:
    """Normalizes titles of one wiki. Results are cached: the same targets recur millions of times."""

    def __init__(self, site: SiteInfo):
        self.site = site
        self._names: dict[str, Namespace] = {}
        # No namespaces in the siteinfo: the wiki's own (mwconstants), or English Wikipedia's.
        self.namespaces = dict(site.namespaces) or default_namespaces(site.lang, site.case)
        # First come, first kept: the siteinfo's names are the dump's own word, so they win over
        # the canonical English names, which win over the aliases mwconstants lists.
        for ns in self.namespaces.values():
            self._add_names(ns, (ns.name, *ns.aliases))
        for ns in self.namespaces.values():
            self._add_names(ns, CANONICAL_NAMESPACES.get(ns.id, ()))
        for ns_id, names in localized_names(site.lang, self.namespaces).items():
            self._add_names(self.namespaces[ns_id], names)
        self._cache: dict[str, Title | None] = {}

    def _add_names(self, ns: Namespace, names) -> None:
        for name in names:
            if name:
                self._names.setdefault(clean_spaces(name).casefold(), ns)

    def namespace_names(self, ns_id: int) -> set[str]:
        """All names (casefolded) that select namespace `ns_id`, e.g. {"file", "image"}."""
        return {name for name, ns in self._names.items() if ns.id == ns_id}

    def parse(self, raw: str) -> Title | None:
        """Normalize a link target or page title; None when it names no page (empty, invalid)."""
        cached = self._cache.get(raw)
        if cached is None and raw not in self._cache:
            cached = self._cache[raw] = self._parse(raw)
            if len(self._cache) > 500_000:  # bound memory on huge dumps
                self._cache.clear()
        return cached

    def _parse(self, raw: str) -> Title | None:
        if _PLAIN_TITLE.fullmatch(raw):
            # The common case, "Foo bar": nothing to decode or clean, no namespace, no fragment;
            # what _parse_any gives for it (tests/test_speed_equivalence.py checks).
            ns = self.namespaces.get(0) or Namespace(0, "", self.site.case)
            text = upper_first(raw, self.site.lang) if ns.case == "first-letter" else raw
            if len(text) * 4 > MAX_TITLE_BYTES and len(text.encode("utf-8")) > MAX_TITLE_BYTES:
                return None
            return Title(ns.id, f"{ns.name}:{text}" if ns.name else text, "")
        return self._parse_any(raw)

    def _parse_any(self, raw: str) -> Title | None:
        # As MediaWiki's parser: %-escapes first (rawurldecode), then character references.
        text = raw
        if "%" in text:
            text = unquote(text)
        if "&" in text:
            text = html.unescape(text)
        text, _, fragment = text.partition("#")
        text = clean_spaces(text)
        fragment = clean_spaces(fragment)
        text = text.lstrip(":").lstrip()
        if not text:
            return None
        if _INVALID_TITLE_CHAR.search(text) or ("%" in text and _PERCENT_ESCAPE.search(text)):
            return None  # characters MediaWiki never allows in a title, %XX left after decoding too
        ns = self.namespaces.get(0) or Namespace(0, "", self.site.case)
        prefix, colon, rest = text.partition(":")
        key = prefix.strip().casefold() if colon else ""
        if colon and key == self.site.lang and key in LANGUAGE_CODES and key not in self._names:
            # A prefix naming this wiki's own language is a local link ([[en:Foo]] on enwiki).
            text = rest.strip().lstrip(":").lstrip()
            if not text:
                return None
            prefix, colon, rest = text.partition(":")
            key = prefix.strip().casefold() if colon else ""
        if colon:
            if key in self._names:
                ns = self._names[key]
                text = rest.strip()
                if not text:
                    return None
            elif key in LANGUAGE_CODES or key in INTERWIKI_PREFIXES:
                return Title(0, clean_spaces(rest), fragment, interwiki=key)
        if ns.case == "first-letter":
            text = upper_first(text, self.site.lang)
        full = f"{ns.name}:{text}" if ns.name else text
        if len(text.encode("utf-8")) > MAX_TITLE_BYTES:
            return None
        return Title(ns.id, full, fragment)

    def normalize(self, raw: str) -> str | None:
        """The normalized local title of `raw`, or None for interwiki links and invalid titles."""
        parsed = self.parse(raw)
        return parsed.title if parsed is not None and not parsed.interwiki else None


@functools.lru_cache(maxsize=4096)
def names_namespace(lang: str, name: str) -> bool:
    """Whether `name` is the name of a namespace other than the main one (local, canonical or an
    alias, any case) on the `lang` Wikipedia: "Kategorie" on de ("[[:de:Kategorie:X]]")."""
    key = name.replace("_", " ").strip().casefold()
    return bool(key) and any(key == other.replace("_", " ").casefold()
                             for entry in local_namespaces(lang) for other in entry.names if other)
