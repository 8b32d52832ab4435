"""Words for lexical retrieval (BM25) in any language: one analyzer per language.

`Analyzer.for_language(lang)` turns a text into index terms the way Lucene's language analyzers
do, from what is installed, never with another language's rules:

- normalization: NFC, then Unicode case folding (`str.casefold`: lower case, and ß as ss, final
  sigma as sigma); Turkish and Azerbaijani fold I to ı and İ to i first, and Turkish drops an
  apostrophe and the suffix after it (Türkiye'nin -> türkiye), as Lucene's TurkishAnalyzer;
- words: runs of letters, combining marks and digits (`[\\p{L}\\p{M}\\p{N}]+`), so Devanagari
  vowel signs and viramas and Arabic harakat stay inside their word (Python's `\\w` cuts words
  at them); words of one code point are kept, as Lucene's StandardTokenizer keeps them (dropping
  them, as `\\w\\w+` tokenizers do, lost single digits and letters: R@1 on SQuAD dev English
  69.62 kept against 69.31 dropped, XQuAD -0.17 to +0.42 per language, 6 of 8 up);
- Chinese, Japanese and Korean (Han, kana, Hangul): each run is cut into its characters and the
  pairs of neighbouring characters (unigrams + bigrams, as Lucene's CJKAnalyzer with unigrams);
- Thai: words by PyThaiNLP's dictionary segmenter (newmm) where PyThaiNLP is installed, else
  character bigrams as CJK; Lao, Khmer and Myanmar: character unigrams + bigrams;
- stopwords: the language's list in bm25s (en, de, nl, fr, es, pt, it, ru, sv, no, da, tr, zh,
  ko) where it has one, none otherwise;
- stemming: the language's Snowball stemmer from PyStemmer where it has one (Arabic, Hindi,
  Russian, Romanian, Turkish, Spanish...), none otherwise (Vietnamese, Thai, Chinese...).

`Analyzer.named(spec, lang)` reads an override: "auto" (the language's), "none" (words only:
no stopwords, no stemming), or a language code ("en": English stopwords and stemmer on any
text). `describe()` says what was used, for the eval JSON. Stemmer and stopword lists come
from optional packages (PyStemmer, bm25s: the `train` extra); without them the analyzer says so.
"""
from __future__ import annotations

import importlib.util
import unicodedata
from dataclasses import dataclass, field
from functools import lru_cache

import regex

# Wikipedia language code -> PyStemmer (Snowball) algorithm.
SNOWBALL = {
    "ar": "arabic", "hy": "armenian", "eu": "basque", "ca": "catalan", "cs": "czech",
    "da": "danish", "nl": "dutch", "en": "english", "simple": "english", "eo": "esperanto",
    "et": "estonian", "fi": "finnish", "fr": "french", "de": "german", "el": "greek",
    "hi": "hindi", "hu": "hungarian", "id": "indonesian", "ga": "irish", "it": "italian",
    "lt": "lithuanian", "ne": "nepali", "no": "norwegian", "nb": "norwegian", "fa": "persian",
    "pl": "polish", "pt": "portuguese", "ro": "romanian", "ru": "russian", "sr": "serbian",
    "st": "sesotho", "es": "spanish", "sv": "swedish", "ta": "tamil", "tr": "turkish",
    "yi": "yiddish",
}
# Wikipedia language code -> bm25s stopword list (bm25s.stopwords, from NLTK's lists).
STOPWORDS = {
    "en": "STOPWORDS_EN", "simple": "STOPWORDS_EN", "de": "STOPWORDS_GERMAN",
    "nl": "STOPWORDS_DUTCH", "fr": "STOPWORDS_FRENCH", "es": "STOPWORDS_SPANISH",
    "pt": "STOPWORDS_PORTUGUESE", "it": "STOPWORDS_ITALIAN", "ru": "STOPWORDS_RUSSIAN",
    "sv": "STOPWORDS_SWEDISH", "no": "STOPWORDS_NORWEGIAN", "nb": "STOPWORDS_NORWEGIAN",
    "da": "STOPWORDS_DANISH", "tr": "STOPWORDS_TURKISH", "zh": "STOPWORDS_CHINESE",
    "ko": "STOPWORDS_KOREAN",
}

_CJK = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\u30fc"  # U+30FC: the kana prolonged mark
_THAI = r"\p{Thai}"
_OTHER_UNSPACED = r"\p{Lao}\p{Khmer}\p{Myanmar}"
# One alternative per kind of run; V1 for set difference (a word never runs into them).
_RUNS = regex.compile(
    rf"(?V1)(?P<cjk>[{_CJK}]+)"
    rf"|(?P<thai>[{_THAI}]+)"
    rf"|(?P<unspaced>[{_OTHER_UNSPACED}]+)"
    rf"|(?P<word>[[\p{{L}}\p{{M}}\p{{N}}]--[{_CJK}{_THAI}{_OTHER_UNSPACED}]]+)")
_CHARACTER = regex.compile(r"\X")  # a character with its combining marks
_LANG_CODE = regex.compile(r"[a-z]{2,3}(-[a-z0-9]+)*|simple")
_DOTTED_I = {"tr", "az"}  # I -> ı, İ -> i before case folding (Lucene's TurkishLowerCaseFilter)
_APOSTROPHE_SUFFIX = {"tr"}  # Türkiye'nin -> Türkiye (Lucene's ApostropheFilter)
_SUFFIX_AFTER_APOSTROPHE = regex.compile(r"(?<=\p{L}\p{M}*)['\u2019]\p{L}[\p{L}\p{M}]*")

MODES = ("auto", "none")


def is_language_code(value: str) -> bool:
    """Whether `value` has the form of a Wikipedia language code (en, zh-yue, simple)."""
    return _LANG_CODE.fullmatch(value) is not None


def _ngrams(run: str) -> list[str]:
    """Unigrams and bigrams of a run of characters (each with its combining marks)."""
    chars = _CHARACTER.findall(run)
    return chars + [a + b for a, b in zip(chars, chars[1:])]


@lru_cache(maxsize=1)
def _thai_segmenter():
    """PyThaiNLP's newmm word segmenter, or None where PyThaiNLP is not installed."""
    try:
        from pythainlp.tokenize import word_tokenize
    except ImportError:
        return None
    return lambda run: word_tokenize(run, engine="newmm", keep_whitespace=False)


def _stemmer(lang: str):
    """(PyStemmer stemmer or None, its name or why none)."""
    algorithm = SNOWBALL.get(lang)
    if algorithm is None:
        return None, "none (no Snowball stemmer for this language)"
    try:
        import Stemmer
    except ImportError:
        return None, "none (PyStemmer not installed)"
    if algorithm not in Stemmer.algorithms():
        return None, f"none (this PyStemmer has no {algorithm})"
    return Stemmer.Stemmer(algorithm), f"pystemmer:{algorithm}"


def _stopwords(lang: str) -> tuple[frozenset, str]:
    name = STOPWORDS.get(lang)
    if name is None:
        return frozenset(), "none (no list for this language)"
    try:
        from bm25s import stopwords
    except ImportError:
        return frozenset(), "none (bm25s not installed)"
    return frozenset(getattr(stopwords, name)), f"bm25s:{lang} ({len(getattr(stopwords, name))})"


@dataclass
class Analyzer:
    """Text -> index terms (see the module doc); `tokens(text)`, `describe()`."""

    lang: str
    spec: str = "auto"
    stemmer_name: str = "none"
    stopwords_name: str = "none"
    stopwords: frozenset = frozenset()
    stemmer: object = field(default=None, repr=False)

    @classmethod
    def for_language(cls, lang: str, stem: bool = True, stop: bool = True) -> "Analyzer":
        stemmer, stemmer_name = _stemmer(lang) if stem else (None, "none")
        stopwords, stopwords_name = _stopwords(lang) if stop else (frozenset(), "none")
        return cls(lang, lang, stemmer_name, stopwords_name, stopwords, stemmer)

    @classmethod
    def named(cls, spec: str, lang: str, stem: bool = True, stop: bool = True) -> "Analyzer":
        """"auto": the analyzer of `lang`; "none": words only; a language code: that one's."""
        spec = (spec or "auto").strip().lower()
        if spec == "none":
            analyzer = cls.for_language(lang, stem=False, stop=False)
        else:
            analyzer = cls.for_language(lang if spec == "auto" else spec, stem=stem, stop=stop)
        analyzer.spec = spec
        return analyzer

    @staticmethod
    def valid_spec(spec: str) -> bool:
        """Whether `named` takes `spec`: a mode (auto, none) or a language code."""
        spec = (spec or "auto").strip().lower()
        return spec in MODES or is_language_code(spec)

    def words(self, text: str) -> list[str]:
        """The terms before stopwords and stemming."""
        text = unicodedata.normalize("NFC", text)
        if self.lang in _APOSTROPHE_SUFFIX:
            text = _SUFFIX_AFTER_APOSTROPHE.sub("", text)
        if self.lang in _DOTTED_I:
            text = text.replace("I", "ı").replace("İ", "i")
        text = text.casefold()
        out: list[str] = []
        for match in _RUNS.finditer(text):
            kind, run = match.lastgroup, match.group()
            if kind == "word":
                out.append(run)
            elif kind == "thai" and (segment := _thai_segmenter()) is not None:
                out.extend(w for w in segment(run) if w.strip())
            else:
                out.extend(_ngrams(run))
        return out

    def tokens(self, text: str) -> list[str]:
        words = [w for w in self.words(text) if w not in self.stopwords]
        return self.stemmer.stemWords(words) if self.stemmer is not None and words else words

    def segmentation(self) -> str:
        thai = "pythainlp newmm words" if importlib.util.find_spec("pythainlp") else \
            "character unigrams + bigrams (PyThaiNLP not installed)"
        turkish = "; I -> ı, İ -> i" if self.lang in _DOTTED_I else ""
        if self.lang in _APOSTROPHE_SUFFIX:
            turkish += "; the suffix after an apostrophe dropped"
        return ("lower-cased NFC words [\\p{L}\\p{M}\\p{N}]+ (Unicode case folding, 1-character "
                f"words kept{turkish}); Han/kana/Hangul: character unigrams + bigrams; Thai: "
                f"{thai}; Lao/Khmer/Myanmar: character unigrams + bigrams")

    def describe(self) -> dict:
        return {"lang": self.lang, "analyzer": self.spec, "stemmer": self.stemmer_name,
                "stopwords": self.stopwords_name, "tokens": self.segmentation()}


__all__ = ["Analyzer", "MODES", "is_language_code", "SNOWBALL", "STOPWORDS"]
