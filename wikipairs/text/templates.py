"""Inline templates whose text survives cleaning; every other template is dropped.

Each renderer gets the template's arguments (positional as "1", "2", ...; named as written, values as
wikitext) and returns wikitext, which is cleaned again, so links inside arguments survive.
The list is documented in the README ("Templates kept").

Templates are a wiki's own: `renderer_for(name, lang)` looks a name up in the table of the page's
wiki first (FR, JA, DE below: the frequent inline templates of those wikis whose output a reader
sees, rendered from their documented parameters), then in SHARED (templates and magic words that
many wikis have: `{{formatnum:1234}}`, `{{sup}}`, ...), then in RENDERERS, the English table
(which every wiki has used so far), then in the wiki's name patterns (`{{XIXe siècle}}`, `{{3e}}`).
English (`lang` "en") uses RENDERERS alone, as before: its output does not change.
"""
from __future__ import annotations

import html
import re

from .titles import LANGUAGE_CODES

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


# Module:Convert's symbols of the unit codes that are not written as shown ("km2" shows "km²",
# "C" "°C"); other codes are their symbols ("km", "kg", "mph").
_UNIT_SYMBOLS = {
    "km2": "km²", "m2": "m²", "cm2": "cm²", "mm2": "mm²", "sqmi": "sq mi", "mi2": "sq mi",
    "sqft": "sq ft", "ft2": "sq ft", "sqin": "sq in", "km3": "km³", "m3": "m³", "cm3": "cm³",
    "cuft": "cu ft", "ft3": "cu ft", "cuin": "cu in", "C": "°C", "F": "°F", "m/s2": "m/s²",
    "kph": "km/h", "C-change": "°C", "F-change": "°F", "oilbbl": "bbl", "m3/s": "m³/s",
    "cuft/s": "cu ft/s",
}
_UNIT_SCALES = {"e3": "thousand", "e6": "million", "e9": "billion", "e12": "trillion"}
_SCALED_UNIT = re.compile(r"(e(?:3|6|9|12))(.+)")


_TEMPERATURES = frozenset({"C", "F", "C-change", "F-change"})


def unit_symbol(code: str, convert: bool = True) -> str:
    """A {{convert}} unit code as shown: "km2" -> "km²", "e6km" -> "million km". `convert`:
    False for a unit written as its symbol ({{val|u=C}}: coulombs, not °C)."""
    symbol = _UNIT_SYMBOLS.get(code) if convert or code not in _TEMPERATURES else None
    if symbol is not None:
        return symbol
    scaled = _SCALED_UNIT.fullmatch(code)
    if scaled:
        scale, unit = scaled.groups()
        return f"{_UNIT_SCALES[scale]} {_UNIT_SYMBOLS.get(unit, unit)}"
    return code


def _convert(args):
    values = _positional(args)
    if len(values) >= 4 and values[1] in _RANGE_WORDS:
        unit = unit_symbol(values[3])
        if values[1] in _DASHES:
            return f"{values[0]}–{values[2]} {unit}"
        return f"{values[0]} {values[1]} {values[2]} {unit}"
    if len(values) >= 2:
        return f"{values[0]} {unit_symbol(values[1])}"
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


def _linked(args):
    """{{flag|France}}, {{flagcountry|France}}, {{ill|Zeta Institute|de|Zeta-Institut}}: the
    first argument, linked to that page (MediaWiki counts the link as the page's), shown as
    `name=` or `lt=` where given."""
    target = _pos(args, 1)
    label = (args.get("name") or args.get("lt") or "").strip() or target
    if not target or _COUNTRY_CODE.match(target):  # {{flag|GBR}}: the page is not "GBR"
        return label
    return f"[[{target}|{label}]]"


_COUNTRY_CODE = re.compile(r"^[A-Z]{2,3}$")


def _circa(args):
    return f"c. {_pos(args, 1)}".strip()


def _frac(args):
    values = _positional(args)
    if len(values) == 3:  # the fraction slash (U+2044), as the templates write it
        return f"{values[0]} {values[1]}\u2044{values[2]}"
    if len(values) == 2:
        return f"{values[0]}\u2044{values[1]}"
    return f"1\u2044{values[0]}" if values else ""


_SUPERSCRIPTS = str.maketrans("0123456789+-−–", "⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻⁻⁻")
_RAISABLE = re.compile(r"[0-9+\-−–]+")


def superscript(text: str) -> str | None:
    """A superscript number as a reader sees it, in the superscript characters that exist:
    "24" -> "²⁴", "−10" -> "⁻¹⁰" ("10<sup>9</sup>" read "109", "5.98{{e|24}}" "5.98"); None
    for anything else ("st", "[1]"). Entities as typed in wikitext ("&minus;7") are decoded."""
    if "&" in text:
        text = html.unescape(text)
    text = text.strip()
    return text.translate(_SUPERSCRIPTS) if _RAISABLE.fullmatch(text) else None


def power_of_ten(exponent: str) -> str:
    """10 to `exponent`: "24" -> "10²⁴", "−7" -> "10⁻⁷" (other exponents: "10^x")."""
    raised = superscript(exponent)
    if raised is None:
        exponent = html.unescape(exponent).strip()
        return f"10^{exponent}" if exponent else "10"
    return f"10{raised}"


def _sup(args):
    """{{sup|2}} -> "²" (a number, see `superscript`); other text as written."""
    text = _pos(args, 1)
    return superscript(text) or text


def _e(args):
    """{{e|24}} -> "×10²⁴" ("5.98{{e|24}} kg": the mass is not 5.98 kg)."""
    return "×" + power_of_ten(_pos(args, 1))


def _val(args):
    """{{val|6.241|e=18|u=C}} -> "6.241×10¹⁸ C"; an uncertainty: {{val|1.2|0.1}} -> "1.2±0.1",
    {{val|1.2|(3)}} -> "1.2(3)", {{val|1.2|+0.1|-0.2}} -> "1.2+0.1−0.2"."""
    number, plus, minus = _pos(args, 1), _pos(args, 2), _pos(args, 3)
    if plus.startswith("("):
        number += plus
    elif plus and minus:
        number += f"+{plus.lstrip('+')}−{minus.lstrip('-−')}"
    elif plus:
        number += f"±{plus}"
    exponent = args.get("e", "").strip()
    if exponent:
        number = f"{number}×{power_of_ten(exponent)}" if number else power_of_ten(exponent)
    unit = unit_symbol(args.get("u", args.get("ul", "")).strip(), convert=False)
    return f"{number} {unit}".strip()


# A block quotation's paragraphs, marked so that a sentence it interrupts is known
# (wikitext.Cleaner.paragraph_runs removes the marks): "彼は\n{{Quote|…}}\nと述べている。". The
# closing mark opens the paragraph after it, so that a blank line after the quotation still
# tells a new paragraph ("}}\n\nA new one") from the rest of a sentence ("}}\nと述べている").
QUOTE_OPEN, QUOTE_CLOSE = "\x06", "\x07"


def _block_quote(text: str) -> str:
    return f"\n\n{QUOTE_OPEN}{text}\n\n{QUOTE_CLOSE}" if text else ""


def _quote(args):
    """{{quote|text}}: a block quotation, a paragraph of its own (MediaWiki's <blockquote>)."""
    return _block_quote(args.get("text", args.get("quote", _pos(args, 1))).strip())


def _const(text):
    return lambda args: text


# Markup characters as entities: text shown as typed, never read as markup (<nowiki>, {{code}}).
LITERAL = str.maketrans({c: f"&#{ord(c)};" for c in "[]{}|'<>=~_*#;-"})


def _harvtxt(args):
    """{{harvtxt|Smith|Jones|2000}} -> "Smith & Jones (2000)": a citation in running text."""
    values = [v for v in _positional(args) if v]
    if not values:
        return ""
    year = values.pop() if len(values) > 1 and values[-1][:4].isdigit() else ""
    names = values[0] if len(values) == 1 else (
        f"{values[0]} et al." if len(values) > 3 else ", ".join(values[:-1]) + f" & {values[-1]}")
    return f"{names} ({year})" if year else names


def _code(args):
    """{{code|lang=sql|SELECT 1}} and {{code|code=...}}: the code, as the sentence shows it
    (syntax highlighting reads no wiki markup in it)."""
    return args.get("code", _pos(args, 1)).strip().translate(LITERAL)


_TAG_FORMS = {"open": "&lt;{0}&gt;", "o": "&lt;{0}&gt;", "close": "&lt;/{0}&gt;",
              "c": "&lt;/{0}&gt;", "single": "&lt;{0} /&gt;", "s": "&lt;{0} /&gt;",
              "void": "&lt;{0}&gt;", "v": "&lt;{0}&gt;"}


def _tag(args):
    """{{tag|exec|open}} -> <exec>; {{tag|ref}} -> <ref>...</ref> (Template:Tag's forms)."""
    name = _pos(args, 1)
    if not name:
        return ""
    form = _TAG_FORMS.get(_pos(args, 2).lower())
    if form:
        return form.format(name)
    content = args.get("content", "...").strip()
    return f"&lt;{name}&gt;{content}&lt;/{name}&gt;"


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
    "val": _val, "e": _e, "sup": _sup, "smsup": _sup, "smallsup": _sup,
    "flag": _linked, "flagcountry": _linked, "flagu": _first,
    "ill": _linked, "interlanguage link": _linked, "lang-rtl": _second,
    "quote": _quote, "blockquote": _quote, "quotation": _quote, "cquote": _quote,
    "nbsp": _const(" "), "ndash": _const("–"), "mdash": _const("—"), "snd": _const(" – "),
    "spaced ndash": _const(" – "), "dash": _const(" – "), "'": _const("&#39;"), "'s": _const("&#39;s"),
    "`": _const("'"),
    "bull": _const("•"), "middot": _const("·"), "pi": _const("π"), "=": _const("="),
    "!": _const("|"), "us$": lambda a: f"US${_pos(a, 1)}", "usd": lambda a: f"US${_pos(a, 1)}",
    "code": _code, "mono": _first, "monospace": _first, "kbd": _first, "samp": _first,
    "tag": _tag, "unicode": _first, "polytonic": _first, "angbr": lambda a: f"⟨{_pos(a, 1)}⟩",
    "isbn": lambda a: f"ISBN {_pos(a, 1)}".strip(), "thinsp": _const("\u2009"),
    "sic": _first, "harvtxt": _harvtxt,
    "spaces": _const(" "), "endash": _const("–"), "en dash": _const("–"),
    "emdash": _const("—"), "em dash": _const("—"), "mdashb": _const("—"),
    # marks around words of the sentence: the words stay, the mark goes
    "citation needed span": _first, "cns": _first, "clarify span": _first,
    "dubious span": _first, "vague span": _first, "when span": _first,
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


def renderer_for(name: str, lang: str = "en"):
    """The renderer of a kept template on the wiki of language `lang`, or None for templates that
    are dropped. `name` is as written between "{{" and the first "|"; a parser function or magic
    word (`formatnum:1234`) is kept only where its language has it (not English)."""
    try:
        return _RENDERER_CACHE[lang, name]
    except KeyError:
        pass
    if len(_RENDERER_CACHE) > 100_000:
        _RENDERER_CACHE.clear()
    found = _RENDERER_CACHE[lang, name] = _renderer_for(name, lang)
    return found


_RENDERER_CACHE: dict[tuple[str, str], object] = {}


def _renderer_for(name: str, lang: str = "en"):
    if ":" in name and not name.lower().startswith("template:"):
        return _magic_word(name, lang) if lang != "en" else None
    key = template_key(name)
    if lang == "en":
        found = RENDERERS.get(key)
        if found is None and _LANG_X.match(key):
            return _first  # {{lang-fr|text}}, {{IPA-fr|transcription|label}}
        return found
    base = lang.split("-")[0]
    table = BY_LANG.get(lang) or BY_LANG.get(base) or {}
    found = table.get(key) or SHARED.get(key) or RENDERERS.get(key)
    if found is not None:
        return found
    for pattern, make in PATTERNS.get(lang) or PATTERNS.get(base) or ():
        m = pattern.match(key)
        found = make(m, name) if m else None
        if found is not None:
            return found
    if _LANG_X.match(key):
        return _first
    return None


# ---- shared by many wikis (every language but English, whose table stays as it was) ---------

def _group(digits: str, sep: str) -> str:
    head = len(digits) % 3 or 3
    return sep.join([digits[:head]] + [digits[i:i + 3] for i in range(head, len(digits), 3)])


# MediaWiki's separatorTransformTable of the content language: (thousands, decimal). Others:
# the digits as MediaWiki's default writes them (1,234.5).
NUMBER_SEPARATORS = {
    **dict.fromkeys(("fr", "ru", "uk", "pl", "cs", "sv", "fi"), (" ", ",")),
    **dict.fromkeys(("de", "nl", "el", "tr", "vi", "id", "da"), (".", ",")),
}
# MediaWiki's $minimumGroupingDigits = 2: no separator in a number of four digits (MessagesPl,
# MessagesRu, MessagesUk).
MINIMUM_GROUPING_2 = frozenset({"pl", "ru", "uk"})
_PLAIN_NUMBER = re.compile(r"^([-−+]?)(\d+)(?:[.](\d+))?$")


def format_number(value: str, lang: str) -> str:
    """{{formatnum:}} as the wiki of `lang` shows it: "16780" -> "16 780" (fr), "16.780" (de),
    "16,780" (others); "1.5" -> "1,5" (fr, de). What is not a plain number stays as written."""
    m = _PLAIN_NUMBER.match(value.strip())
    if not m:
        return value.strip()
    base = lang.split("-")[0]
    thousands, decimal = NUMBER_SEPARATORS.get(base, (",", "."))
    sign, whole, fraction = m.groups()
    if len(whole) <= 4 and base in MINIMUM_GROUPING_2:
        thousands = ""  # (a four-digit number is not grouped there: "1234")
    out = sign.replace("-", "−") + _group(whole, thousands)
    return out + decimal + fraction if fraction else out


def _formatnum(value: str, args: dict, lang: str) -> str:
    flag = _pos(args, 1).upper()
    if flag in ("R", "NOSEP"):  # R: read a formatted number back; NOSEP: no separators
        return value.strip()
    return format_number(value, lang)


MAGIC_WORDS = {  # {{name:value|...}}: the value is part of the name
    "formatnum:": _formatnum,
    "uc:": lambda value, args, lang: value.strip().upper(),
    "lc:": lambda value, args, lang: value.strip().lower(),
    "ucfirst:": lambda value, args, lang: value.strip()[:1].upper() + value.strip()[1:],
    "lcfirst:": lambda value, args, lang: value.strip()[:1].lower() + value.strip()[1:],
}


def _magic_word(name: str, lang: str):
    function, _, value = name.partition(":")
    render = MAGIC_WORDS.get(function.strip().lower() + ":")
    if render is None or "{" in value or "}" in value:  # an unexpanded argument: dropped
        return None
    return lambda args: render(value, args, lang)


SHARED = {
    "sub": _first, "unicode": _first, "polytonic": _first,
}

# ---- French (fr.wikipedia) ------------------------------------------------------------------

FR_MONTHS = ("janvier février mars avril mai juin juillet août septembre octobre novembre "
             "décembre").split()
_FR_MONTH_NAMES = {m: i for i, m in enumerate(FR_MONTHS)}
_FR_MONTH_NAMES.update({m.lower(): i for i, m in enumerate(MONTHS)})
_FR_MONTH_NAMES.update({a: i for i, names in enumerate([
    "janv jan", "févr fév fev fevrier feb", "mar", "avr apr", "", "", "juil jul", "aout aug",
    "sept sep", "oct", "nov", "déc dec decembre"]) for a in names.split()})


def _fr_month(value: str) -> str | None:
    """A month as Module:Date reads it (number, French or English name, abbreviation) -> its
    French name; None for anything else."""
    v = value.strip().lower().rstrip(".")
    if v.isdigit():
        return FR_MONTHS[int(v) - 1] if 1 <= int(v) <= 12 else None
    i = _FR_MONTH_NAMES.get(v)
    return FR_MONTHS[i] if i is not None else None


def _fr_day(value: str) -> str:
    v = value.strip()
    return "1er" if v in ("1", "01", "1er") else str(int(v)) if v.isdigit() else v


def _fr_date(args):
    """{{date|14|février|2020}} (or {{date|14 février 2020}}) -> "14 février 2020"; numeric
    months named, day 1 is "1er"; {{date||septembre|1499}} -> "septembre 1499"; a qualification
    (the 4th argument, or the 2nd of the one-argument form) only chooses links; avJC=oui adds
    "av. J.-C.". Modèle:Date, Date-, Date de naissance, Date de décès."""
    day, month, year = _pos(args, 1), _pos(args, 2), _pos(args, 3)
    if "3" in args or _fr_month(month):
        parts = [_fr_month(month) or month, year]
        if day:
            parts.insert(0, _fr_day(day) if month else day)
        text = " ".join(p for p in parts if p)
    else:  # one argument: "14 février 2020", "1 mai", "1482"
        words = day.split()
        if len(words) >= 2 and _fr_month(words[1]) and not words[1].isdigit():
            words[0], words[1] = _fr_day(words[0]), _fr_month(words[1])
        text = " ".join(words)
    if args.get("avJC", "").strip().lower() in ("oui", "o", "1"):
        text += " av. J.-C."
    return text


_ROMAN = re.compile(r"^(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})$")
_CENTURY_SEPARATORS = {"-": "–", "–": "–", "—": "–", "à": "à", "au": "au", "et": "et", "ou": "ou"}


def _ordinal_roman(roman: str) -> str:
    return roman + ("er" if roman == "I" else "e")


def _centuries(word: str = "siècle", bc: bool = False, default_plural: bool = False,
               linked: bool = False):
    """The century templates: {{s|XIX}} -> "XIXe siècle" linked to that page (`linked`: one
    century), {{s-|XIX}} the same unlinked, {{s|19}} "19e siècle",
    {{s mini-|XIX}} -> "XIXe" (word ""), {{s2|XIX|XX}} -> "XIXe et XXe siècles",
    {{sp-|I|e|-|II|e|s}} -> "Ier – IIe siècles" (a final "s" makes the word plural),
    {{-s|I|er}} -> "Ier siècle av. J.-C." (bc). Suffix arguments (e, er) only mark the ordinal, which is "er" for I and "e" otherwise."""
    def render(args):
        values = [v for v in _positional(args) if v]
        plural = default_plural or (len(values) > 1 and values[-1] == "s")
        out, romans = [], 0
        for v in values:
            if _ROMAN.match(v.upper()) or v.isdigit():  # (values are not empty)
                if romans and (not out or out[-1] not in _CENTURY_SEPARATORS.values()):
                    out.append("et")
                out.append(_ordinal_roman(v.upper()) if not v.isdigit()
                           else v + ("er" if v == "1" else "e"))
                romans += 1
            elif v in _CENTURY_SEPARATORS and romans:
                out.append(_CENTURY_SEPARATORS[v])
        if not romans:
            return ""
        text = " ".join(out)
        if word:
            text += " " + word + ("s" if plural and romans > 1 else "")
        if linked and romans == 1 and word and not bc:
            return f"[[{text}|{text}]]"  # {{s|XV}}: a link to "XVe siècle", the page's link
        return text + " av. J.-C." if bc else text
    return render


_NUMBER_THEN_TEXT = re.compile(r"^([-−+]?\d+(?:[.,]\d+)?)\s*([^\W\d_].*)$")


def _fr_unit(args):
    """{{unité|6000|km|2}} -> "6 000 km2": the value in French digits (a range "1|à|3" kept),
    then each unit with its exponent (the number after it); `e=` a power of ten. Modèle:Unité,
    Modèle:Nombre."""
    values = _positional(args)
    if not values:
        return ""
    number = _NUMBER_THEN_TEXT.match(values[0].strip())  # "10622 immigrés", "252ans"
    if number:
        values = [number.group(1), number.group(2)] + values[1:]
    text, rest = format_number(values[0], "fr"), values[1:]
    if len(rest) >= 2 and rest[0] in ("à", "et", "ou", "-", "–", "x", "×", "/") \
            and _PLAIN_NUMBER.match(rest[1]):
        text += f" {'–' if rest[0] == '-' else rest[0]} {format_number(rest[1], 'fr')}"
        rest = rest[2:]
    for word in ("à", "et", "ou"):  # a range given by name: {{unité|15000|à=50000|habitants}}
        if _PLAIN_NUMBER.match(args.get(word, "").strip()):
            text += f" {word} {format_number(args[word], 'fr')}"
    power = args.get("e", "").strip()
    if power:
        text += "×10" + power.replace("-", "−")
    units, i = [], 0
    while i < len(rest):
        unit = rest[i]
        exponent = rest[i + 1] if i + 1 < len(rest) and re.match(r"^[-−]?\d+$", rest[i + 1]) else ""
        if unit:
            units.append(unit + exponent.replace("-", "−"))
        i += 2 if exponent else 1
    return " ".join([text] + units)


def _fr_quote(args):
    """{{citation|texte}} -> « texte » (an inline quotation; Modèle:Citation étrangère too)."""
    text = args.get("texte", args.get("citation", _pos(args, 1))).strip()
    return f"« {text} »" if text else ""


def _fr_block_quote(args):
    """{{citation bloc|texte}}: a block quotation, « texte » as a paragraph of its own."""
    return _block_quote(_fr_quote(args))


def _fr_langue(args):
    """{{langue|en|texte}}: the text (`texte=` or the 2nd argument)."""
    return args.get("texte", args.get("text", _pos(args, 2))).strip()


def _fr_incise(args):
    """{{incise|texte}} -> "— texte —"; {{incise|texte|fin}} or {{incise|texte|non}}: no closing
    dash (a sentence end)."""
    text = _pos(args, 1)
    return f"— {text}" if _pos(args, 2) in ("fin", "non") else f"— {text} —"


def _fr_lien(args):
    """{{lien|fr=Titre français|lang=en|trad=Title|texte=...}}: an article not yet written in
    French, shown as its French title (or `texte`) linked to it (a red link there; the small
    "(en)" after it is the link to the other wiki, not text)."""
    target = args.get("fr", _pos(args, 1)).strip()
    text = args.get("texte", "").strip() or target or args.get("trad", "").strip()
    return f"[[{target}|{text}]]" if target and text else text


_DISAMBIGUATION = re.compile(r"\s*\([^()]*\)$")  # "Paul VI (pape)" -> "Paul VI"


def _fr_noble(link: bool):
    """{{noble|Paul VI (pape)}} -> "Paul VI", linked to the page; a 2nd argument is the text."""
    def render(args):
        target = _pos(args, 1)
        text = _pos(args, 2) or _DISAMBIGUATION.sub("", target)
        return f"[[{target}|{text}]]" if link and target else text
    return render


def _fr_souverain(link: bool):
    """{{souverain|Louis|XII}} or {{souverain|Louis XII}} -> "Louis XII", linked to it."""
    def render(args):
        text = " ".join(v for v in _positional(args)[:2] if v)
        target = _DISAMBIGUATION.sub("", text)
        return f"[[{text}|{target}]]" if link and text else target
    return render


def _fr_page_h(args):
    """{{page h'|Saint Valentin|Valentin}}: the 2nd argument (else the 1st), linked to the 1st."""
    target, text = _pos(args, 1), _pos(args, 2) or _pos(args, 1)
    return f"[[{target}|{text}]]" if target else text


def _fr_heure(args):
    """{{heure|19|30|fuseau=UTC}} -> "19 h 30 UTC"."""
    hours, minutes, seconds = _pos(args, 1), _pos(args, 2), _pos(args, 3)
    text = f"{hours} h" + (f" {minutes}" if minutes else "")
    if seconds:
        text = f"{hours} h {minutes or '0'} min {seconds} s"
    zone = args.get("fuseau", "").strip()
    return f"{text} {zone}" if zone else text


def _fr_ordinal(args):
    """{{ordinal|14|comte}} -> "14e comte" (1 -> "1er"; `f`/`fém`: "1re")."""
    n, noun = _pos(args, 1), _pos(args, 2)
    feminine = noun in ("f", "fém", "féminin")
    suffix = ("re" if feminine else "er") if n == "1" else "e"
    return n + suffix + (f" {noun}" if noun and not feminine else "")


def _joined(args):
    return "".join(_positional(args))


def _after(text: str):
    """A template shown as `text`, followed by its first argument: {{n°|12}} -> "no 12"."""
    return lambda args: f"{text} {_pos(args, 1)}".strip()


FR = {
    "date": _fr_date, "date-": _fr_date, "date de naissance": _fr_date,
    "date de naissance-": _fr_date, "date de décès": _fr_date, "date de décès-": _fr_date,
    "s": _centuries(linked=True), "s-": _centuries(), "siècle": _centuries(linked=True), "sp": _centuries(),
    "sp-": _centuries(), "s2": _centuries(default_plural=True),
    "s2-": _centuries(default_plural=True), "s mini": _centuries(""),
    "s mini-": _centuries(""), "-s": _centuries(bc=True), "-s-": _centuries(bc=True),
    "-sp": _centuries(bc=True), "-sp-": _centuries(bc=True),
    "-s2": _centuries(bc=True, default_plural=True),
    "-s2-": _centuries(bc=True, default_plural=True),
    "millénaire": _centuries("millénaire"), "-millénaire": _centuries("millénaire", bc=True),
    "unité": _fr_unit, "nombre": _fr_unit, "tmp": _fr_unit,
    "euro": lambda a: f"{format_number(_pos(a, 1), 'fr')} €",
    "fchim": _joined, "formule chimique": _joined,  # {{fchim|C|2|H|6|O}} -> "C2H6O"
    "citation": _fr_quote, "citation étrangère": _fr_quote, "citation bloc": _fr_block_quote,
    "guil": _fr_quote, "guillemets": _fr_quote,
    "langue": _fr_langue, "lang": _fr_langue, "japonais": _nihongo, "incise": _fr_incise,
    "lien": _fr_lien, "page h'": _fr_page_h, "page h": _fr_page_h,
    "noble": _fr_noble(True), "noble-": _fr_noble(False),
    "souverain": _fr_souverain(True), "souverain2": _fr_souverain(True),
    "souverain-": _fr_souverain(False), "heure": _fr_heure, "ordinal": _fr_ordinal,
    "e": _const("e"), "er": _const("er"), "re": _const("re"), "ère": _const("ère"),
    "ème": _const("ème"), "nd": _const("nd"), "nde": _const("nde"),
    "etc.": _const(", etc."), "ex": _const("ex. :"), "n°": _after("no"), "nº": _after("no"),
    "p.": _after("p."), "av jc": _const("av. J.-C."), "av. j.-c.": _const("av. J.-C."),
    "ap jc": _const("apr. J.-C."), "apr jc": _const("apr. J.-C."),
    "apr. j.-c.": _const("apr. J.-C."),
    "api": _first, "apib": _first, "prononciation api": _first,
    "msapi": lambda a: f"[{''.join(_positional(a))}]", "racine": lambda a: f"√{_pos(a, 1)}",
    "mathpi": _const("π"), "exp": _first, "ind": _first, "souligner": _first,
    "italique": _first, "gras": _first, "petit": _first, "petites capitales": _first,
    "pc": _first, "abréviation": _first, "abréviation discrète": _first, "sigle": _first,
    "romain": _first, "rom": _first, "rom-maj": lambda a: _pos(a, 1).upper(),
    "rom-min": lambda a: _pos(a, 1).lower(),
    # maintenance marks around words of the sentence: the words stay, the mark goes
    "référence nécessaire": _first, "refnec": _first, "réf nec": _first,
    "référence souhaitée": _first, "refsou": _first, "référence insuffisante": _first,
    "refins": _first, "référence à confirmer": _first, "qui": _first, "quand": _first,
    "où": _first, "quoi": _first, "lequel": _first, "lesquels": _first, "lesquelles": _first,
    "pas clair": _first, "précision nécessaire": _first, "non neutre": _first,
}

_FR_ORDINAL = re.compile(r"^(\d+)(er|re|e|ème|ère|nd|nde)$")  # {{3e|série}} -> "3e série"
_FR_ROMAN_ORDINAL = re.compile(r"^([ivxlc]+)(er|re|e)$")  # {{Ier}}, {{XIXe}}
_FR_ROMAN = re.compile(r"^[ivxlc]{2,}$")  # {{XXVIII}} (not a language code: {{vi}})
_FR_CENTURY_NAME = re.compile(r"^([ivxlc]+)(er|e) (siècle|millénaire)( av\. j\.-c\.)?$")
_FR_FIRST_OF_MONTH = re.compile(r"^1er (%s)$" % "|".join(FR_MONTHS))  # {{1er mai}}
_CHEMICAL = re.compile(r"^(?:[A-Z][a-z]?\d*){1,8}$")  # {{CO2}}, {{H2O}}: as written


def _fr_ordinal_name(m, name):
    return _after(m.group(1) + m.group(2))


def _fr_roman_ordinal(m, name):
    roman = m.group(1).upper()
    if not _ROMAN.match(roman):
        return None
    return _const(roman + m.group(2))


def _fr_roman(m, name):
    roman = m.group(0).upper()
    return _const(roman) if _ROMAN.match(roman) and m.group(0) not in LANGUAGE_CODES else None


def _fr_century_name(m, name):
    roman = m.group(1).upper()
    if not _ROMAN.match(roman):
        return None
    return _const(f"{roman}{m.group(2)} {m.group(3)}" + (" av. J.-C." if m.group(4) else ""))


def _chemical(m, name):
    written = " ".join(name.replace("_", " ").split())
    if not (_CHEMICAL.match(written) and any(c.isdigit() for c in written)):
        return None
    return _const(written)


PATTERNS_FR = [
    (_FR_ORDINAL, _fr_ordinal_name), (_FR_ROMAN_ORDINAL, _fr_roman_ordinal),
    (_FR_ROMAN, _fr_roman), (_FR_CENTURY_NAME, _fr_century_name),
    (_FR_FIRST_OF_MONTH, lambda m, name: _const(m.group(0))),
    (re.compile(r"^[a-z0-9]+$"), _chemical),
]

# ---- Japanese (ja.wikipedia) ------------------------------------------------------------------


def _ja_interlanguage(args):
    """{{仮リンク|日本語版の記事名|en|English title|label=表示}}: an article not yet written in
    Japanese, shown as `label` (else its Japanese title) linked to that Japanese title (a red link
    there; the "（英語版）" after it links to the other wiki and is not text)."""
    target = _pos(args, 1)
    text = args.get("label", args.get("表示", "")).strip() or target
    if not target:
        return text or _pos(args, 3)
    return f"[[{target}|{text}]]"


def _ja_interlang(args):
    """{{interlang|en|Title|表示}}: a link to another wiki; its text (the 3rd argument, else the
    title)."""
    return _pos(args, 3) or _pos(args, 2)


def _ja_reading(args):
    """{{読み仮名|'''物理学'''|ぶつりがく|英: physics}} -> 物理学（ぶつりがく、英: physics）."""
    word, reading = _pos(args, 1), "、".join(v for v in _positional(args)[1:] if v)
    return f"{word}（{reading}）" if reading else word


JA = {
    "仮リンク": _ja_interlanguage, "ill2": _ja_interlanguage, "仮リンク2": _ja_interlanguage,
    "interlang": _ja_interlang,
    "ilq": lambda a: f"「{_pos(a, 1)}」" if _pos(a, 1) else "",
    "読み仮名": _ja_reading, "読み仮名 ruby不使用": _ja_reading, "読みがな": _ja_reading,
    "ruby": _ja_reading, "ルビ": _ja_reading, "isbn2": _after("ISBN"), "isbn": _after("ISBN"),
    "jis2004フォント": _first, "補助漢字フォント": _first, "color": _second,
    # marks around words of the sentence: the words stay, the mark goes
    "要出典範囲": _first, "独自研究範囲": _first, "疑問点範囲": _first, "要検証範囲": _first,
    "要説明範囲": _first, "要ページ番号範囲": _first,
}


def _ja_language_code(m, name):
    """{{en|European Union}}, {{fr|…}}: the text, in that language (Template:En, ...)."""
    return _first if m.group(0) in LANGUAGE_CODES else None


PATTERNS_JA = [(re.compile(r"^[a-z]{2}$"), _ja_language_code)]

# ---- German (de.wikipedia) ------------------------------------------------------------------

_DE_DATUMS = {"de-nhn": "m ü. NHN", "de-nn": "m ü. NN", "de-hn": "m ü. HN", "at": "m ü. A.",
              "ch": "m ü. M.", "ch-ln02": "m ü. M.", "ch-lhn95": "m ü. M."}


def _de_hoehe(args):
    """{{Höhe|123|DE-NHN}} -> "123 m ü. NHN" (the datum's abbreviation; others: "m")."""
    value = format_number(_pos(args, 1), "de")
    return f"{value} {_DE_DATUMS.get(_pos(args, 2).lower(), 'm')}" if value else ""


def _de_quote(args):
    """{{"|Text}} and {{Zitat|Text|...}}: „Text“ (`Text=` also; {{Zitat}} a block quotation)."""
    text = args.get("Text", _pos(args, 1)).strip()
    return f"„{text}“" if text else ""


DE = {
    "\"": _de_quote, "zitat": lambda a: _block_quote(_de_quote(a)), "höhe": _de_hoehe,
    "formatzahl": lambda a: format_number(_pos(a, 1), "de"),
    "hochgestellt": _first, "tiefgestellt": _first, "kapitälchen": _first,
    "polytonisch": _first, "anker": _const(""), "sortkey": _second,
}

def _linked_as(target: int, label: int):
    """A link to positional argument `target`, shown as argument `label` (or the target):
    ruwiki's {{Не переведено 3|Онегин (фильм)|Онегин|en|..}}, zhwiki's {{tsl|en|X|中文}}."""
    def render(args):
        page = _pos(args, target)
        shown = _pos(args, label) or page
        return f"[[{page}|{shown}]]" if page else shown
    return render


# Other wikis' everyday templates whose words are the sentence's (a link to a page not yet
# written in the wiki's language, a word in another language, a number, a conversion).
RU_MONTHS = ("января февраля марта апреля мая июня июля августа сентября октября ноября "
             "декабря").split()  # (genitive: "7 мая 1840")


def _ru_date(args):
    """ruwiki's {{ДатаРождения|7|5|1840}} -> "7 мая 1840", as in every biography's lead; with
    the Julian date first, {{ДатаРождения|25|4|1840|7|5}} -> "25 апреля (7 мая) 1840"."""
    day, month, year, new_day, new_month = (_pos(args, n) for n in range(1, 6))
    if not (month.isdigit() and 1 <= int(month) <= 12):
        return " ".join(v for v in (day, month, year) if v)
    date = f"{day} {RU_MONTHS[int(month) - 1]}".strip()
    if new_day and new_month.isdigit() and 1 <= int(new_month) <= 12:
        date += f" ({new_day} {RU_MONTHS[int(new_month) - 1]})"
    return f"{date} {year}".strip()


RU = {"цитата": _quote, "не переведено 3": _linked_as(1, 2), "не переведено": _linked_as(1, 2),
      "iw": _linked_as(1, 2), "s": _first, "num": _first, "число": _first, "nobr": _first,
      "датарождения": _ru_date, "датасмерти": _ru_date, "дата рождения": _ru_date,
      "дата смерти": _ru_date}
HE = {"ערבית": _first, "אנ": _first, "אנגלית": _first, "ש": _const(" ")}
ZH = {"link-en": _linked_as(1, 1), "tsl": _linked_as(3, 3), "lang-en": _first}
AR = {"لغة": _second, "تحويل": _convert}
# bnwiki's and elwiki's names of {{IPA}} (আন্তর্জাতিক ধ্বনিমূলক বর্ণমালা; Διεθνές Φωνητικό Αλφάβητο)
# and of {{convert}}: their lessons of phonology and their areas read "the sound {{আধ্বব|[s]}}"
BN = {"আধ্বব": _ipa, "রূপান্তর": _convert}
ES_MONTHS = ("enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre "
             "diciembre").split()


def _es_fecha(args):
    """eswiki's {{fecha|3|5|1850}} -> "3 de mayo de 1850" (day, month, year)."""
    day, month, year = (_pos(args, n) for n in (1, 2, 3))
    if not (month.isdigit() and 1 <= int(month) <= 12):
        return " ".join(v for v in (day, month, year) if v)
    parts = [v for v in (day.lstrip("0"), ES_MONTHS[int(month) - 1], year) if v]
    return " de ".join(parts)


def _es_siglo(args):
    """eswiki's {{siglo|XIX|d}} -> "siglo XIX d. C." (the era: "a" a. C., "d" d. C.)."""
    century = _pos(args, 1).upper()
    era = {"a": " a. C.", "d": " d. C."}.get(_pos(args, 2).lower(), "")
    return f"siglo {century}{era}" if century else ""


def _pl_link(args):
    """plwiki's {{link-interwiki|pl=Tytuł|lang=en|lang-tytuł=Title|tekst=...}}: an article not
    yet written in Polish, shown as `tekst` or its Polish title, linked to that title."""
    page = args.get("pl", "").strip()
    shown = args.get("tekst", "").strip() or page
    return f"[[{page}|{shown}]]" if page else shown


# Spanish, Italian, Portuguese, Polish, Ukrainian, Korean: their everyday inline templates that
# show words (dates, centuries, small caps, a no-break span, a number kept up to date, links to
# pages not yet written, conversions with {{convert}}'s parameters, a word of another language).
# Their block quotations too ({{Cita}}, {{Citazione}}, {{Citação}}, {{Cytat}}, {{Цитата}}: the
# text, a paragraph of its own, as {{Quote}}; dropped, the quotation was lost and the sentence
# it interrupted read "Él escribió:" / "y luego se fue.").
ES = {"fecha": _es_fecha, "siglo": _es_siglo, "esd": _first, "versalita": _first,
      "convertir": _convert, "aut": _first, "cita": _quote}
IT = {"ta": _first, "tutto attaccato": _first, "maiuscoletto": _first, "converti": _convert,
      "citazione": _quote}
PT = {"versalete": _first, "converter": _convert, "citação": _quote, "citacao": _quote}
PL = {"link-interwiki": _pl_link, "cytat": _quote}
UK = {"не перекладено": _linked_as(1, 2), "нп": _linked_as(1, 2), "нп3": _linked_as(1, 2),
      "iw": _linked_as(1, 2), "comment": _first, "цитата": _quote}
KO = {"llang": _second}
EL = {"δφα": _ipa}

BY_LANG = {"fr": FR, "ja": JA, "de": DE, "ru": RU, "he": HE, "zh": ZH, "ar": AR, "bn": BN,
           "el": EL, "es": ES, "it": IT, "pt": PT, "pl": PL, "uk": UK, "ko": KO}
PATTERNS = {"fr": PATTERNS_FR, "ja": PATTERNS_JA}
