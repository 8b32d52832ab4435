"""Does a dump's text look like the language its siteinfo declares?

Some dumps declare the wrong language: DBpedia's German test dump says enwiki/xml:lang="en", and a
re-wrapped export may declare enwiki around Japanese pages. The language picks the namespace
aliases, image options and sentence splitter, so a wrong one leaks markup into sentences. This
module looks at the first articles' text: the share of letters per Unicode script tells a
non-Latin language from another script (Han/Hiragana/Katakana -> ja), and for Latin-script text
the most frequent function words of a dozen large Wikipedias tell those apart (de vs en).
It only guesses, to tell the user to pass --lang; it never changes the language itself.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

import regex

# Scripts worth telling apart; any other letter counts as "Other".
SCRIPTS = ("Latin", "Han", "Hiragana", "Katakana", "Hangul", "Cyrillic", "Greek", "Arabic",
           "Hebrew", "Devanagari", "Bengali", "Gurmukhi", "Gujarati", "Oriya", "Tamil", "Telugu",
           "Kannada", "Malayalam", "Sinhala", "Thai", "Lao", "Myanmar", "Khmer", "Georgian",
           "Armenian", "Ethiopic", "Tibetan", "Thaana", "Syriac")
_SCRIPT_RUNS = regex.compile("|".join(f"(?P<{s}>\\p{{Script={s}}}+)" for s in SCRIPTS)
                             + r"|(?P<Other>\p{L}+)")
_JAPANESE = ("Han", "Hiragana", "Katakana")

# The scripts of Wikipedias not written in Latin letters (first language: the guess for the
# script); every other wiki is expected in Latin letters. Wikis written in two scripts list both.
LANGUAGES_BY_SCRIPT = {
    "Han": "zh zh-classical zh-yue wuu gan lzh yue",
    "Hangul": "ko",
    "Cyrillic": "ru uk be be-tarask be-x-old bg mk sr sh kk ky tg tt ba cv ce os sah mn udm mhr "
                "mrj myv mdf koi kv krc kbd ab av lez lbe inh tyv bxr xal rue cu ady alt",
    "Greek": "el pnt",
    "Arabic": "ar arz ary fa ur ps ckb sd ug azb mzn glk pnb lrc ks ku kk skr",
    "Hebrew": "he yi",
    "Devanagari": "hi mr ne sa new bh mai awa anp dty gom",
    "Bengali": "bn as bpy", "Gurmukhi": "pa", "Gujarati": "gu", "Oriya": "or", "Tamil": "ta",
    "Telugu": "te", "Kannada": "kn tcy", "Malayalam": "ml", "Sinhala": "si", "Thai": "th",
    "Lao": "lo", "Myanmar": "my mnw shn", "Khmer": "km", "Georgian": "ka xmf",
    "Armenian": "hy hyw", "Ethiopic": "am ti", "Tibetan": "bo dz", "Thaana": "dv", "Syriac": "arc",
}
_LATIN_TOO = {"sr", "sh", "kk", "tt", "ku", "crh", "ug"}  # also written in Latin letters


def expected_scripts(lang: str) -> set[str]:
    """The scripts the `lang` Wikipedia is written in."""
    scripts = {s for s, langs in LANGUAGES_BY_SCRIPT.items() if lang in langs.split()}
    if lang == "ja":
        scripts = set(_JAPANESE)
    elif lang in ("zh", "zh-classical", "zh-yue", "wuu", "gan", "ko"):
        scripts |= {"Han"}
    if not scripts or lang in _LATIN_TOO:
        scripts.add("Latin")
    return scripts


# The most frequent function words of large Latin-script Wikipedias (words that rarely occur in
# the others' running text); their share of all words tells the language.
STOP_WORDS = {
    "en": "the of and is was to with for which that by from as were his",
    "de": "der die und das ist von den des mit sich dem nicht eine wurde auf im",
    "fr": "le la les des et est une du dans qui sur pour par au aux",
    "es": "el los las del que por con una para fue como se al",
    "it": "il della di che è nel per una con degli delle sono gli alla",
    "pt": "os do da das dos não uma com para foi em que pelo",
    "nl": "het een van en niet zijn werd met voor op ook",
    "sv": "och är att som för med den det av på till var",
    "pl": "się na jest nie do że jak oraz przez w z",
    "vi": "của và là các những được trong có một người với cho",
    "tr": "ve bir bu ile için olarak olan gibi daha",
    "id": "yang dan di dari dengan untuk ini pada adalah dalam itu",
    "ro": "și în care pentru fost sau unui unei acest această între",
}
_STOP_WORDS = {lang: frozenset(words.split()) for lang, words in STOP_WORDS.items()}
_WORD = regex.compile(r"\p{Latin}+")

# Markup whose words are not the article's language: references, tags, comments, templates
# (innermost first, a few levels), URLs, and the target half of [[target|anchor]].
_NOISE = [re.compile(p, re.S | re.I) for p in (
    r"<!--.*?-->", r"<ref[^>]*/>", r"<ref[^>]*>.*?</ref>", r"<[^>]{0,200}>", r"https?://\S+",
    r"\[\[[^\]|]*\|")]
_TEMPLATE = re.compile(r"\{\{[^{}]*\}\}")

MIN_LETTERS = 1000  # less sampled text than this: no verdict
MIN_STOP_SHARE = 0.08  # a language whose function words are fewer than this is not the text's


@dataclass(frozen=True)
class TextLanguage:
    """What the sample of text looks like: `lang` (a guess, "" when none), the evidence."""

    lang: str
    evidence: str


def without_markup(text: str) -> str:
    for pattern in _NOISE:
        text = pattern.sub(" ", text)
    for _ in range(5):
        text, found = _TEMPLATE.subn(" ", text)
        if not found:
            break
    return text


def script_counts(text: str) -> Counter:
    """Number of letters of `text` in each script (Other: scripts not in SCRIPTS)."""
    counts = Counter()
    for match in _SCRIPT_RUNS.finditer(text):
        counts[match.lastgroup] += match.end() - match.start()
    return counts


def stop_word_shares(text: str) -> dict[str, float]:
    """Share of the Latin-letter words of `text` that are function words of each language."""
    words = Counter(word.lower() for word in _WORD.findall(text))
    total = sum(words.values())
    if not total:
        return {}
    return {lang: sum(words[w] for w in stop) / total for lang, stop in _STOP_WORDS.items()}


def mismatch(declared: str, texts: Iterable[str]) -> TextLanguage | None:
    """The language the text looks like where it is not `declared`; None where it may well be
    `declared` (or the sample is too small to say)."""
    text = without_markup("\n".join(texts))
    counts = script_counts(text)
    letters = sum(counts.values())
    if letters < MIN_LETTERS:
        return None
    shares = {script: n / letters for script, n in counts.items()}
    expected = expected_scripts(declared)
    if sum(shares.get(s, 0) for s in expected) < 0.2:
        return _script_guess(shares, text)
    if expected == {"Latin"} and declared in _STOP_WORDS:
        return _stop_word_guess(declared, stop_word_shares(text))
    if declared in ("ja", "zh"):
        return _chinese_or_japanese(declared, shares)
    return None


def _chinese_or_japanese(declared: str, shares: dict[str, float]) -> TextLanguage | None:
    """Japanese writes kana in every sentence; Chinese text has almost none."""
    kana = shares.get("Hiragana", 0) + shares.get("Katakana", 0)
    han = shares.get("Han", 0)
    if declared == "ja" and han >= 0.5 and kana < 0.02:
        return TextLanguage("zh", f"script Han {han:.0%}, kana {kana:.1%}")
    if declared == "zh" and kana >= 0.1:
        return TextLanguage("ja", f"script Han/Hiragana/Katakana {han + kana:.0%}, kana {kana:.0%}")
    return None


def _script_guess(shares: dict[str, float], text: str) -> TextLanguage | None:
    """The language of text mostly in another script than expected."""
    japanese = sum(shares.get(s, 0) for s in _JAPANESE)
    script, share = max(shares.items(), key=lambda item: item[1])
    if share < 0.5 and japanese < 0.5:
        return None  # no dominant script: markup, lists of names... no verdict
    if japanese >= 0.5 and shares.get("Hiragana", 0) + shares.get("Katakana", 0) >= 0.05:
        return TextLanguage("ja", f"script Han/Hiragana/Katakana {japanese:.0%}")
    if script == "Latin":
        guess = _best_stop_words(stop_word_shares(text))
        return TextLanguage(guess[0] if guess else "", f"script Latin {share:.0%}")
    langs = LANGUAGES_BY_SCRIPT.get(script, "").split()
    return TextLanguage(langs[0] if langs else "", f"script {script} {share:.0%}")


def _best_stop_words(shares: dict[str, float]) -> tuple[str, float] | None:
    best = max(shares.items(), key=lambda item: item[1], default=None)
    return best if best and best[1] >= MIN_STOP_SHARE else None


def _stop_word_guess(declared: str, shares: dict[str, float]) -> TextLanguage | None:
    """Another Latin-script language whose function words are far more frequent."""
    best = _best_stop_words(shares)
    if best is None or best[0] == declared or shares[declared] >= best[1] / 3:
        return None
    return TextLanguage(best[0], f"{best[0]} function words {best[1]:.0%} of words, "
                                 f"{declared} {shares[declared]:.0%}")


def detect(texts: Iterable[str], min_letters: int = MIN_LETTERS) -> TextLanguage:
    """The language a sample of text is in, by the rules `mismatch` applies (the script; for
    Latin letters the function words; Chinese or Japanese by the share of kana): lang "" where
    the sample is under `min_letters` letters or no script or language stands out."""
    text = without_markup("\n".join(texts))
    counts = script_counts(text)
    letters = sum(counts.values())
    if letters < min_letters:
        return TextLanguage("", f"{letters} letters, too few to tell")
    shares = {script: n / letters for script, n in counts.items()}
    guess = _script_guess(shares, text)
    if guess is None:
        return TextLanguage("", "no script makes half of the letters")
    if guess.lang in ("zh", "ja"):
        guess = _chinese_or_japanese("ja" if guess.lang == "zh" else "zh", shares) or guess
    if guess.lang and shares.get("Latin", 0) >= 0.5:
        share = stop_word_shares(text)[guess.lang]
        guess = TextLanguage(guess.lang, f"{guess.evidence}, {guess.lang} function words "
                                         f"{share:.0%} of words")
    elif not guess.lang:
        guess = TextLanguage("", f"{guess.evidence}, no function words of a known language")
    return guess


def warning_line(source: str, declared: str, found: TextLanguage) -> str:
    """The one-line warning for a dump whose text does not look like its declared language."""
    advice = f"pass --lang {found.lang}" if found.lang else "pass --lang with its language"
    looks = found.lang or "like another language"
    return (f"wikipairs: warning: {source} declares language {declared} but its text looks "
            f"{looks} ({found.evidence}); {advice}")


__all__ = ["TextLanguage", "detect", "expected_scripts", "mismatch", "script_counts", "stop_word_shares",
           "warning_line", "without_markup"]
