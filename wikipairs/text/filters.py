"""Which main-namespace pages are not articles for retrieval: disambiguation and list pages."""
from __future__ import annotations

import functools
import re

from ..records import Page

# Disambiguation templates (lower-case, without "Template:"), per language plus English ones.
DISAMBIGUATION_TEMPLATES = {
    "disambiguation", "disambig", "dab", "disamb", "hndis", "geodis", "surname", "given name",
    "set index article", "sia", "place name disambiguation", "human name disambiguation",
    "letter disambiguation", "school disambiguation", "hospital disambiguation", "mathdab",
    "numberdis", "species latin name disambiguation", "call sign disambiguation", "shipindex",
    "roaddis", "disambiguation cleanup", "airport disambiguation", "letter-number combination disambiguation",
    # other languages: each wiki's own template (the one that adds __DISAMBIG__, which a dump
    # cannot show), not its hatnotes ({{要曖昧さ回避}}, "needs disambiguation", is prose)
    "begriffsklärung", "bkl", "homonymie", "desambiguación", "desambiguacion", "disambigua",
    "αποσαφήνιση", "dp", "многозначность", "неоднозначность", "ujednoznacznienie", "förgrening",
    "aimai", "曖昧さ回避", "人名の曖昧さ回避", "地名の曖昧さ回避", "消歧义", "消歧義", "동음이의",
    "동음이의어", "توضيح", "ابهام‌زدایی", "פירושונים", "desambiguação", "desambig",
    "trang định hướng", "неоднозначність", "багатозначність", "anlam ayrımı", "rozcestník",
    "rozlišovacia stránka", "দ্ব্যর্থতা নিরসন", "बहुविकल्पी शब्द", "disambiguasi", "egyért",
    "täsmennyssivu", "pekerside", "flertydig", "desambiguació", "dezambiguizare",
    "แก้ความกำกวม", "вишезначна одредница", "razdvojba", "razločitev", "täpsustusleht",
    "բազմիմաստություն",
}
# Words of disambiguation categories (and of title qualifiers: "Vell (homonymie)"): only words
# that name nothing else ("định hướng" is also orientation, "توضيح" clarification, and
# "ابهام‌زدایی" the maintenance category of pages linking to a disambiguation page).
DISAMBIGUATION_WORDS = ("disambiguation", "begriffsklärung", "homonymie", "desambiguación",
                        "disambigua", "αποσαφήνιση", "многозначн", "ujednoznacznienie",
                        "消歧义", "消歧義", "동음이의", "פירושונים", "desambiguação",
                        "anlam ayrımı", "rozcestník", "দ্ব্যর্থতা নিরসন", "बहुविकल्पी",
                        "disambiguasi", "egyértelműsítő", "täsmennyssivu", "desambiguació",
                        "dezambiguizare", "แก้ความกำกวม", "вишезначн", "razdvojba",
                        "razločitev", "բազմիմաստություն")
# Title qualifiers only: as category words these would also name maintenance or topic
# categories (jawiki's 曖昧さ回避の必要なリンクのあるページ, "Неоднозначные ситуации").
DISAMBIGUATION_TITLE_WORDS = DISAMBIGUATION_WORDS + (
    "曖昧さ回避", "значения", "значення", "định hướng", "توضيح", "ابهام‌زدایی", "täpsustus",
    "неоднозначн", "багатозначн")
LIST_TITLE = re.compile(
    r"^(?:Lists? of|Index of|Outline of|Glossary of|Liste (?:der|von|des)|"
    r"Liste d[eu']|Lista de|Lista di|Lijst van|Lista över|Seznam|Luettelo|Danh sách|"
    r"Κατάλογος|Λίστα|Список|قائمة|רשימת|فهرست)\b"
    # ... or a suffix: ja 一覧, zh 列表, ko 목록, hi की सूची, bn তালিকা, tr listesi, hu listája
    # (before a title's qualifier: "ミュージシャン一覧 (グループ)")
    r"|(?:一覧|列表|목록|की सूची|তালিকা|\blistesi|\blistája)(?:\s*[(（][^()（）]*[)）])?$", re.I)
LIST_TEMPLATES = {"dynamic list", "list", "index", "set index"}
_TEMPLATE_NAME = re.compile(r"\{\{\s*(?:template:)?([^|{}\n]+?)\s*(?:\||\}\})", re.I)


def _is_disambiguation_category(category: str) -> bool:
    """'Disambiguation pages', 'All disambiguation pages', 'Begriffsklärung', 'Homonymie', ...
    but not a topic category such as 'Word-sense disambiguation' (its articles are prose)."""
    if "disambiguation" in category:
        return category == "disambiguation" or "disambiguation page" in category
    return any(word in category for word in DISAMBIGUATION_WORDS)


def skip_reason(page: Page, categories: list[str] | None = ()) -> str | None:
    """'disambiguation' or 'list' for pages that are not prose articles, else None.

    `categories` None: the page is not parsed yet; the reason is given only where the title and
    templates decide it whatever the categories are (so that such pages need no parse)."""
    title = page.title
    if "(" in title and any(f"({word}" in title.lower() for word in DISAMBIGUATION_TITLE_WORDS):
        return "disambiguation"
    names = _template_names(page.text)
    if names & DISAMBIGUATION_TEMPLATES:
        return "disambiguation"
    if categories is None:
        # A category can only say "disambiguation" with one of these words in the text.
        listed = LIST_TITLE.search(title) or names & LIST_TEMPLATES
        text = page.text.lower()
        return "list" if listed and not any(word in text for word in DISAMBIGUATION_WORDS) \
            else None
    lowered = [c.lower() for c in categories]
    if any(_is_disambiguation_category(c) for c in lowered):
        return "disambiguation"
    if LIST_TITLE.search(title) or names & LIST_TEMPLATES or any(c.startswith(("lists of", "indexes of"))
                                                                 for c in lowered):
        return "list"
    return None


@functools.lru_cache(maxsize=1)  # a page is asked twice: before and after it is parsed
def _template_names(text: str) -> frozenset[str]:
    """Lower-cased names of the templates in `text`."""
    if "{{" not in text:
        return frozenset()
    return frozenset(name.replace("_", " ").strip().lower()
                     for name in set(_TEMPLATE_NAME.findall(text)))
