"""What the wikitext path could not render: templates dropped inline, per name and per page.

A template that templates.py cannot render is dropped with its text. Infoboxes, navboxes,
maintenance banners, portals and other block templates stand on lines of their own and are
meant to go; a dropped template in running text (a word on its line outside it: "au
{{s|XIX}}.", "le {{date|14 février}}") took words out of a sentence. Those are counted, but for
footnote and maintenance markers (NOT_WORDS: {{sfn}}, {{efn}}, {{citation needed}}, {{,}},
{{référence nécessaire}}, ...), which render no words of the sentence, and for templates in the
sections the article drops anyway (references, external links...):

- while a page is cleaned, a Counter increment per dropped inline template (wikitext.Cleaner);
- per page, into the run's counts: `templates_dropped_inline` (templates),
  `pages_with_templates_dropped_inline`, and per template name
  `templates_dropped_inline:NAME` and `pages_with_templates_dropped_inline:NAME`;
- in parse_stats.json and a build's stats.json, `templates_dropped_inline`: the totals and the
  TOP names with their templates and pages (`summary`), shown by `wikipairs stats`.

A build's counters are Beam counters: each split sends its TOP_PER_SPLIT names and sums the
rest into `templates_dropped_inline_other` (`cap`), so that a wiki's thousands of template
names do not become thousands of counters; the names a summary shows are exact where they are
among every split's top (the frequent ones are).

Templates the Enterprise HTML dumps render are not counted there: Parsoid expanded them.
"""
from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache

TOTAL = "templates_dropped_inline"
PAGES = "pages_with_templates_dropped_inline"
OTHER = "templates_dropped_inline_other"  # a build's names outside its splits' top
NAME = TOTAL + ":"
NAME_PAGES = PAGES + ":"
TOP = 30  # names in stats.json
# Footnote and maintenance markers: inline, but they render a superscript note or a tag, no
# words of the sentence (the Enterprise HTML path drops them too, as references). Not counted.
NOT_WORDS = frozenset({
    "sfn", "sfnp", "sfnm", "sfn whole", "harvnb", "harv", "harvp", "harvsp",
    "efn", "efn-ua", "efn-lr", "efn-lg", "efn-la", "refn", "r", "rp", "ref label", "note label",
    "citation needed", "cn", "fact", "clarify", "when", "who", "which", "according to whom",
    "by whom", "dubious", "verify", "failed verification", "better source needed",
    "page needed", "full citation needed", "citation needed span", "vague", "update inline",
    "dead link", "cbignore", "webarchive", "toc limit", "anchor", "anchors", "-", "clear",
    ",", "note", "référence nécessaire", "refnec", "réf nec", "référence souhaitée", "refsou",
    "référence incomplète", "réf incomplète", "précision nécessaire", "pas clair", "quand",
    "qui", "lequel", "non neutre", "citation nécessaire", "référence insuffisante",
    "lien brisé", "ancre", "note groupe", "appel de note",
    "要出典", "要出典範囲", "要検証", "要説明", "sfn2", "efn2", "refnest", "脚注の不足",
    "belege fehlen", "fn", "fnbib", "いつ", "誰", "どこ", "リンク切れ", "要ページ番号",
    "better source", "better source needed", "relevance inline", "según quién", "cita requerida",
    "ref", "ref harvard", "rf", "inflation-fn", "update after", "πηγή", "πηγές", "παραπομπή",
    "εκκρεμεί παραπομπή", "ασαφές", "তথ্যসূত্র প্রয়োজন", "সত্যতা", "ওয়েব আর্কাইভ", "誰2",
    "要曖昧さ回避", "year missing", "nowrap begin", "nowrap end", "clarification needed",
    "where", "by whom?", "dn", "disambiguation needed", "notetag", "unreliable source?",
    "original research inline", "or", "clr", "reflist", "combien", "réf. nécessaire",
    "нет аи", "уточнить", "источник?", "бс", "بحاجة لمصدر", "مصدر", "उद्धरण आवश्यक",
    "উদ্ধৃতি প্রয়োজন", "출처 필요", "来源请求", "来源", "需要来源", "fakt", "דרוש מקור",
    "הערה", "הבהרה", "ללא מקור", "cref", "cref2", "verify source", "self-published inline",
    "#tag:ref",  # {{#tag:ref|...}}: a reference (display_name keeps its tag)
    "sin referencias", "quem", "carece de fontes", "citazione necessaria", "senza fonte",
    # hatnotes and icons: a line of their own in the HTML, or an image
    "main", "see also", "further", "details", "main article", "article détaillé", "loupe",
    "詳細", "flagicon", "flag icon", "flagdeco", "κύριο", "মূল নিবন্ধ", "মূল",
})
TOP_PER_SPLIT = 200  # names a build's split sends as counters
_WORD = re.compile(r"\w")
_TEMPLATE = re.compile(r"\{\{[^{}]*\}\}")


def in_running_text(text: str, start: int, end: int) -> bool:
    """Whether the template text[start:end] sits in running text: its line has a word outside
    it (other templates on the line do not count)."""
    before = text[text.rfind("\n", 0, start) + 1:start]
    stop = text.find("\n", end)
    after = text[end:] if stop < 0 else text[end:stop]
    for side in (before, after):
        if _WORD.search(side) and ("{{" not in side or _WORD.search(_without_templates(side))):
            return True
    return False


def _without_templates(text: str) -> str:
    for _ in range(5):
        text, n = _TEMPLATE.subn("", text)
        if not n:
            break
    return text.replace("{{", "").replace("}}", "")


@lru_cache(maxsize=65536)
def display_name(name: str) -> str:
    """The name counted: "Template:Unité " -> "unité"; a parser function by its name
    ("#if:", "formatnum:")."""
    key = " ".join(name.replace("_", " ").split()).lower()
    if key.startswith("template:"):
        key = key[9:].strip()
    if key.startswith("#tag:ref"):  # a reference written as a parser function: a note
        return "#tag:ref"
    if ":" in key:
        key = key.split(":", 1)[0] + ":"
    return key[:80]


def add_page(counts: Counter, dropped: Counter) -> None:
    """One page's dropped inline templates (name -> count) into the run's counts."""
    if not dropped:
        return
    for name in NOT_WORDS.intersection(dropped):
        del dropped[name]
    if not dropped:
        return
    counts[PAGES] += 1
    for name, n in dropped.items():
        counts[TOTAL] += n
        counts[NAME + name] += n
        counts[NAME_PAGES + name] += 1


def is_per_name(key: str) -> bool:
    return key.startswith(NAME) or key.startswith(NAME_PAGES)


def cap(counts: Counter, top: int = TOP_PER_SPLIT) -> None:
    """Keep the `top` names (by templates) of `counts`; the others' templates are summed into
    OTHER and their keys removed (a build's split, before its counts become Beam counters)."""
    names = [(key[len(NAME):], n) for key, n in counts.items() if key.startswith(NAME)]
    if len(names) <= top:
        return
    names.sort(key=lambda item: (-item[1], item[0]))
    for name, n in names[top:]:
        counts[OTHER] += n
        del counts[NAME + name]
        counts.pop(NAME_PAGES + name, None)


def summary(counts: dict, top: int = TOP) -> dict:
    """stats.json's `templates_dropped_inline`: {"templates", "pages", "names" (distinct, where
    every name was counted), "top": {name: {"templates", "pages"}} (most templates first),
    "other_templates" (those of the names not shown)}."""
    by_name = {key[len(NAME):]: n for key, n in counts.items() if key.startswith(NAME)}
    ranked = sorted(by_name.items(), key=lambda item: (-item[1], item[0]))
    shown = {name: {"templates": n, "pages": counts.get(NAME_PAGES + name, 0)}
             for name, n in ranked[:top]}
    total = counts.get(TOTAL, 0)
    out = {"templates": total, "pages": counts.get(PAGES, 0)}
    if not counts.get(OTHER):
        out["names"] = len(by_name)
    out["top"] = shown
    out["other_templates"] = total - sum(v["templates"] for v in shown.values())
    return out


def without_per_name(counts: dict) -> dict:
    """`counts` without the per-name keys (a build's counters in stats.json)."""
    return {k: v for k, v in counts.items() if not is_per_name(k)}


def lines(found: dict | None, articles: int | None = None, top: int = 15) -> list[str]:
    """What `wikipairs stats` (and parse) print about it: the totals and the top names."""
    if not found or not found.get("templates"):
        return []
    share = f" ({found['pages'] / articles:.0%} of {articles:,} articles)" if articles else ""
    names = found.get("names")
    rows = [f"templates dropped inline: {found['templates']:,} on {_pages(found['pages'])}{share}"
            + (f", {names:,} names" if names else "")
            + "; their words are not in the sentences (the Enterprise HTML dump has them)"]
    for name, v in list(found.get("top", {}).items())[:top]:
        rows.append(f"  {name:<28}{v['templates']:>10,} on {_pages(v['pages'])}")
    rest = found["templates"] - sum(v["templates"]
                                    for v in list(found.get("top", {}).values())[:top])
    if rest:
        rows.append(f"  {'(other names)':<28}{rest:>10,}")
    return rows


def _pages(n: int) -> str:
    return f"{n:,} page" if n == 1 else f"{n:,} pages"
