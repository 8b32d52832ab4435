"""Inline templates whose text survives cleaning; every other template is dropped.

Each renderer gets the template's arguments (positional as "1", "2", ...; named as written, values as
wikitext) and returns wikitext, which is cleaned again, so links inside arguments survive.
The list is documented in the README ("Templates kept").
"""
from __future__ import annotations

import re

MONTHS = ("January February March April May June July August September October November "
          "December").split()
_RANGE_WORDS = {"-", "–", "to", "and", "or", "by", "x", "×", "&", "+", "+/-", "±", "to(-)"}


def _pos(args: dict[str, str], n: int, default: str = "") -> str:
    return args.get(str(n), default).strip()


def _positional(args: dict[str, str]) -> list[str]:
    out, n = [], 1
    while str(n) in args:
        out.append(args[str(n)].strip())
        n += 1
    return out


_DASHES = {"-", "–"}  # {{convert|2|-|5|km}} shows "2–5 km", no spaces around the dash


def _convert(args):
    values = _positional(args)
    if len(values) >= 4 and values[1] in _RANGE_WORDS:
        if values[1] in _DASHES:
            return f"{values[0]}–{values[2]} {values[3]}"
        return f"{values[0]} {values[1]} {values[2]} {values[3]}"
    if len(values) >= 2:
        return f"{values[0]} {values[1]}"
    return values[0] if values else ""


def _date(args):
    values = [v for v in _positional(args) if v]
    if not values:
        return ""
    year = values[0]
    if len(values) >= 3 and values[1].isdigit() and values[2].isdigit() and 1 <= int(values[1]) <= 12:
        month = MONTHS[int(values[1]) - 1]
        if args.get("mf", "").strip().lower() in ("y", "yes"):
            return f"{month} {int(values[2])}, {year}"
        return f"{int(values[2])} {month} {year}"
    if len(values) >= 2 and values[1].isdigit() and 1 <= int(values[1]) <= 12:
        return f"{MONTHS[int(values[1]) - 1]} {year}"
    return year


def _as_of(args):
    values = _positional(args)
    when = _date({str(i + 1): v for i, v in enumerate(values)}) if values else ""
    lead = "as of" if args.get("lc", "").strip().lower() in ("y", "yes", "on") else "As of"
    return f"{lead} {when}".strip()


def _nihongo(args):
    english, native, roman = _pos(args, 1), _pos(args, 2), _pos(args, 3)
    inner = ", ".join(v for v in (native, roman) if v)
    return f"{english} ({inner})" if english and inner else english or inner


_IPA_LABELS = {"lang", "local", "us", "uk", "pron", "pronunciation", "audio", "also", "or", ",", ";"}


_IPA_SEPARATORS = {",": ", ", ";": "; ", "_": " "}
_LANG_CODE = re.compile(r"^[a-z]{2,3}(?:-[a-z0-9]+)*$")


def _ipac(args):
    """{{IPAc-en|ˈ|v|ɛ|l}} -> /ˈvɛl/; labels (lang, us, ...) dropped, `_` a space, `,` a comma."""
    parts = [_IPA_SEPARATORS.get(v, v) for v in _positional(args)
             if v.lower() not in _IPA_LABELS or v in _IPA_SEPARATORS]
    body = " ".join("".join(parts).split()).strip(" ,;")
    return f"/{body}/" if body else ""


def _respell(args):
    """{{respell|KESS|ing|əm}} -> KESS-ing-əm (syllables joined by hyphens, `_` a space)."""
    parts = [v for v in _positional(args) if v]
    return "-".join(parts).replace("-_-", " ").replace("_", " ")


def _ipa(args):
    """{{IPA|/vɛl/}} and the newer {{IPA|fr|pɔ̃ nœf}} (a language code first)."""
    values = _positional(args)
    if len(values) >= 2 and _LANG_CODE.match(values[0]):
        return values[1]
    return values[0] if values else ""


def _first(args):
    return _pos(args, 1)


def _second(args):
    return _pos(args, 2)


def _last(args):
    values = [v for v in _positional(args) if v]
    return values[-1] if values else ""


def _sortname(args):
    """{{sortname|Anna|Keller}} shows "Anna Keller", linked to that page (or to the third argument,
    plus `dab=`) unless `nolink=` is set."""
    text = f"{_pos(args, 1)} {_pos(args, 2)}".strip()
    if not text or args.get("nolink", "").strip():
        return text
    target = _pos(args, 3) or text
    dab = args.get("dab", "").strip()
    return f"[[{target} ({dab})|{text}]]" if dab else f"[[{target}|{text}]]"


def _abbrlink(args):
    """{{abbrlink|VR|Vell Railway}}: the abbreviation, linked to the page it stands for."""
    abbr, meaning = _pos(args, 1), _pos(args, 2)
    return f"[[{meaning}|{abbr}]]" if abbr and meaning else abbr


def _circa(args):
    return f"c. {_pos(args, 1)}".strip()


def _frac(args):
    values = _positional(args)
    if len(values) == 3:
        return f"{values[0]} {values[1]}/{values[2]}"
    if len(values) == 2:
        return f"{values[0]}/{values[1]}"
    return f"1/{values[0]}" if values else ""


def _val(args):
    unit = args.get("u", args.get("ul", "")).strip()
    return f"{_pos(args, 1)} {unit}".strip()


def _quote(args):
    return args.get("text", args.get("quote", _pos(args, 1))).strip()


def _const(text):
    return lambda args: text


RENDERERS = {
    "convert": _convert, "cvt": _convert,
    "lang": _second, "langx": _second, "transl": _last, "transliteration": _last,
    "nowrap": _first, "nobr": _first, "small": _first, "smaller": _first, "big": _first,
    "larger": _first, "sc": _first, "smallcaps": _first, "small caps": _first, "em": _first,
    "strong": _first, "noitalic": _first, "nobold": _first, "resize": _last, "abbr": _first,
    "abbrlink": _abbrlink, "visible anchor": _first, "vanchor": _first, "mvar": _first,
    "math": _first, "var": _first, "formatnum": _first, "format price": _first, "gaps": _first,
    "nihongo": _nihongo, "nihongo2": _first,
    "ipa": _ipa, "ipac-en": _ipac, "ipa-en": _first, "respell": _respell, "ipa2": _first,
    "audio": _second,
    "birth date": _date, "death date": _date, "birth date and age": _date,
    "death date and age": _date, "birth year and age": _first, "death year and age": _first,
    "start date": _date, "end date": _date, "start date and age": _date, "date": _first,
    "dts": _date, "film date": _date, "as of": _as_of,
    "circa": _circa, "c.": _circa, "sortname": _sortname, "frac": _frac, "fraction": _frac,
    "val": _val, "flag": _first, "flagcountry": _first, "flagu": _first,
    "ill": _first, "interlanguage link": _first, "lang-rtl": _second,
    "quote": _quote, "blockquote": _quote, "quotation": _quote, "cquote": _quote,
    "nbsp": _const(" "), "ndash": _const("–"), "mdash": _const("—"), "snd": _const(" – "),
    "spaced ndash": _const(" – "), "dash": _const(" – "), "'": _const("'"), "`": _const("'"),
    "bull": _const("•"), "middot": _const("·"), "pi": _const("π"), "=": _const("="),
    "!": _const("|"), "us$": lambda a: f"US${_pos(a, 1)}", "usd": lambda a: f"US${_pos(a, 1)}",
    "hebrew": _first, "script": _second, "korean": _first, "lang-zh": _first,
    "zh": lambda a: ", ".join(v.strip() for k, v in a.items() if not k.isdigit()),
}

_LANG_X = re.compile(r"^(?:lang|ipa)-[a-z]{2,3}(?:-[a-z]+)*$")


def template_key(name: str) -> str:
    """Name as looked up: 'Template:Lang_de ' -> 'lang de'; first letter case does not matter."""
    key = name.replace("_", " ").strip()
    if key.lower().startswith("template:"):
        key = key[9:].strip()
    return " ".join(key.split()).lower()


def renderer_for(name: str):
    """The renderer of a kept template, or None for templates that are dropped."""
    try:
        return _RENDERER_CACHE[name]
    except KeyError:
        pass
    if len(_RENDERER_CACHE) > 100_000:
        _RENDERER_CACHE.clear()
    found = _RENDERER_CACHE[name] = _renderer_for(name)
    return found


_RENDERER_CACHE: dict[str, object] = {}


def _renderer_for(name: str):
    key = template_key(name)
    found = RENDERERS.get(key)
    if found is None and _LANG_X.match(key):
        return _first  # {{lang-fr|text}}, {{IPA-fr|transcription|label}}
    return found
