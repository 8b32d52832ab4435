"""Sentence splitting, offline: NLTK Punkt where a punkt_tab model is installed, else sentencex;
then one rule for the sentence marks of other scripts, whatever the backend.

* Backend. `method="auto"` (the default) uses the punkt_tab model of the dump's language when
  installed (NLTK_DATA or NLTK's default folders), else sentencex (Wikimedia's rule-based
  segmenter, which knows the punctuation and abbreviations of many languages: Greek `;` is a
  question mark, for instance). Punkt trained on the input text itself is kept as an option
  (`method="punkt-trained"`): it learns real boundaries as collocations ("Ευρώπης. Βρέχεται"
  never splits) and needs a first pass over the dump, so it is no longer the default.
* The universal rule (`_universal_cuts`, applied on top of either backend): unambiguous sentence
  terminators of scripts that Punkt does not know end a sentence. CJK full stops and marks (。！？)
  end it right after the mark and any closing brackets, with no whitespace needed (unless a
  closing quote is followed by a particle that continues the sentence: 「…。」と述べた); the other
  Unicode Sentence_Terminal marks (։ । ॥ ။ ۔ ؟ ። ...), and the Bengali ৷, end it when whitespace
  follows. Thai has no sentence punctuation: a space between two stretches of Thai text that are
  each long enough to be sentences ends one (`THAI_MIN_CHARS`). ASCII . ! ? stay the backend's.

Nothing is ever downloaded.
"""
from __future__ import annotations

import functools
import os
import re
import string
import sys
from bisect import bisect_right
from collections.abc import Iterable

import regex


def _import_nltk_without_scipy() -> None:
    """Import NLTK with SciPy hidden: NLTK's package imports scipy.stats and scipy.sparse (~0.6 s
    of every start: `parse`, each Beam worker) for collocation statistics and a parser that
    sentence splitting never uses, and every such import of NLTK falls back when SciPy is
    missing (try/except ImportError). Hidden only while NLTK loads; a later import of SciPy
    works as usual."""
    if "nltk" in sys.modules:
        return
    hidden = [name for name in ("scipy.stats", "scipy.sparse", "scipy")
              if name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # `import NAME` raises ImportError meanwhile
    try:
        import nltk  # noqa: F401
    finally:
        for name in hidden:
            del sys.modules[name]


_import_nltk_without_scipy()

import nltk.data  # noqa: E402
from nltk.tokenize.punkt import (_ORTHO_BEG_LC, _ORTHO_LC, _ORTHO_MID_UC, _ORTHO_UC,  # noqa: E402
                                 PunktLanguageVars, PunktParameters, PunktSentenceTokenizer,
                                 PunktToken, PunktTrainer, load_punkt_params)

from ..errors import WikipairsError

try:
    from nltk.tabdata import PunktDecoder
except ImportError:  # nltk < 3.9 has no punkt_tab
    PunktDecoder = None

# Wikipedia language code -> NLTK punkt_tab folder name.
PUNKT_LANGUAGES = {
    "cs": "czech", "da": "danish", "nl": "dutch", "en": "english", "simple": "english",
    "et": "estonian", "fi": "finnish", "fr": "french", "de": "german", "el": "greek",
    "it": "italian", "ml": "malayalam", "no": "norwegian", "nb": "norwegian", "pl": "polish",
    "pt": "portuguese", "ru": "russian", "sl": "slovene", "es": "spanish", "sv": "swedish",
    "tr": "turkish",
}

# Abbreviations frequent in Wikipedia that the punkt_tab models lack (lower-case, no final period).
EXTRA_ABBREVIATIONS = {
    "en": ("approx", "c", "ca", "est", "fl", "vol", "vols", "no", "nos", "pp", "ed", "eds", "rev",
           "jr", "sr", "st", "mt", "ft", "km", "lb", "oz", "gen", "lt", "col", "capt", "sgt", "gov",
           "sen", "rep", "u.s", "u.k", "e.g", "i.e", "etc", "vs", "cf", "op", "ibid", "dept",
           "univ", "assn", "bros", "corp", "inc", "ltd", "co", "jan", "feb", "mar", "apr", "jun",
           "jul", "aug", "sep", "sept", "oct", "nov", "dec",
           # taxonomy's ranks ("Bufo spp. toads", "Agave parviflora subsp. flexiflora") and
           # grammar's ("= 'feminine', pl.")
           "spp", "ssp", "subsp", "var", "fem", "masc", "pl"),
}
EXTRA_ABBREVIATIONS["simple"] = EXTRA_ABBREVIATIONS["en"]

# Abbreviations that stand before a name or a number and so never end a sentence ("ок. 12 млн",
# "им. Ленина", "ul. Marszałkowska", "Mgr Dupont"), where sentencex's lists lack them and cut
# the sentence there (`_joined_false_ends`). Lower-case, no final period. Not those that can end
# one: "в 1990 г.", "и др.", "5 тыс.", "в Тверской обл.", "et al.", "osv.", "resp.", "CA.",
# "usw.", "19. yy.", French "sept." (seven).
PREFIX_ABBREVIATIONS = {lang: frozenset(words.split()) for lang, words in {
    "ru": "ок им св пос дер ст кн ген доц г-н г-жа англ лат нем фр реж род ум букв см ср напр "
          "прим гл нач",
    "uk": "бл ім св вул пр просп ген англ нар пом див напр с-ще м-ко",
    "pl": "ok im św ul pl os gen płk ks dr inż mgr hab ur zm zob np woj pow gm",
    "cs": "angl lat něm nar zem okr",
    "de": "geb gest hl engl lat franz",
    "fr": "mgr mme mlle st ste janv févr avr juil oct nov déc",
    "it": "pag",
    "es": "aprox d",  # "79 d. C." (después de Cristo)
    "pt": "aprox av núm vol pág cap sta séc",  # "séc. XIX" (século)
    "sv": "t.ex kl",
    "nl": "o.a",
    "tr": "doç av sok cad mah bkz",
    "vi": "tp gs ts pgs ths bs đh",  # "TP. Hồ Chí Minh" (thành phố), "GS. TS." (titles),
    # "Trường ĐH. Bách khoa" (đại học)
    # eras after a year ("۱۳۵۷ ه‍.ش. انقلاب شد"): Persian puts its verb last, so they never end
    # a sentence (a zero-width joiner in them is not compared)
    "fa": "ه ه.ش ه.ق ق.م م",
}.items()}

# Training text needed before the trained parameters are worth using (~a few hundred articles).
TRAINING_CHARS = 2_000_000


class _GreekLanguageVars(PunktLanguageVars):
    # Greek uses ";" as its question mark.
    sent_end_chars = (".", "?", "!", ";")


def _language_vars(lang: str) -> PunktLanguageVars:
    """Punkt's end marks: ASCII only (Greek: and ";"); the marks of other scripts are the
    universal rule's, so that one place decides them whatever the backend."""
    return _GreekLanguageVars() if lang == "el" else PunktLanguageVars()


def _punkt_search_paths() -> list[str]:
    """The folders searched for punkt_tab models, in order: NLTK_DATA's (read now, so a change
    after NLTK was imported counts), then NLTK's defaults."""
    paths = [p for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p] + list(nltk.data.path)
    return list(dict.fromkeys(paths))


def _find_punkt_tab(language: str) -> str | None:
    for root in _punkt_search_paths():
        folder = os.path.join(root, "tokenizers", "punkt_tab", language)
        if os.path.isfile(os.path.join(folder, "abbrev_types.txt")):
            return folder
    return None


def _load_punkt_tab(folder: str) -> PunktParameters:
    """nltk's load_punkt_params for a model folder, with the same decoder but reading each file
    at once: nltk's line reader takes longer than the rest of loading. Lines are split as
    that reader splits them (str.splitlines, line ends kept, no newline translation)."""
    try:
        decoder = PunktDecoder()

        def lines(name: str) -> list[str]:
            with open(os.path.join(folder, name), encoding="utf-8", newline="") as f:
                return f.read().splitlines(True)

        params = PunktParameters()
        params.collocations = set(decoder.tab2tups(lines("collocations.tab")))
        params.sent_starters = decoder.txt2set(lines("sent_starters.txt"))
        params.abbrev_types = decoder.txt2set(lines("abbrev_types.txt"))
        params.ortho_context = decoder.tab2intdict(lines("ortho_context.tab"))
        return params
    except Exception:  # whatever nltk makes of it (its errors, too)
        return load_punkt_params(nltk.data.FileSystemPathPointer(folder))


METHODS = ("auto", "punkt", "sentencex", "punkt-trained")


class SentenceSplitter:
    """Splits paragraphs into sentences; `spans(text)` gives [start, end) character offsets of
    each sentence, without the whitespace around it.

    The backend is a Punkt tokenizer (`tokenizer`) or sentencex for `sentencex_lang`; only those
    and `source` are state, so a splitter pickles small (Beam sends it to its workers)."""

    def __init__(self, tokenizer: PunktSentenceTokenizer | None, source: str,
                 sentencex_lang: str | None = None):
        if (tokenizer is None) == (sentencex_lang is None):
            raise ValueError("a SentenceSplitter needs a Punkt tokenizer or a sentencex language")
        self.tokenizer = tokenizer
        self.sentencex_lang = sentencex_lang
        # "punkt_tab:english", "sentencex:ja" or "punkt-trained:<chars> chars"
        self.source = source
        self._fast: _FastPunkt | None = None

    def __getstate__(self) -> dict:
        return {**self.__dict__, "_fast": None}  # the fast path's caches are rebuilt on use

    @staticmethod
    def installed_model(lang: str) -> str | None:
        """Folder of the installed punkt_tab model for `lang`, or None."""
        language = PUNKT_LANGUAGES.get(lang)
        return _find_punkt_tab(language) if language else None

    @staticmethod
    def needs_training_text(method: str) -> bool:
        """Whether `for_language(lang, method=method)` uses `training_text` (a first pass)."""
        return _checked_method(method) == "punkt-trained"

    @classmethod
    def for_language(cls, lang: str, training_text: Iterable[str] = (),
                     method: str = "auto") -> "SentenceSplitter":
        """The splitter `method` asks for: "punkt" (the installed punkt_tab model; an error
        without one), "sentencex", "punkt-trained" (Punkt trained on `training_text`), or
        "auto": punkt_tab where installed, else sentencex."""
        method = _checked_method(method)
        if method == "punkt-trained":
            return cls.trained(training_text, lang)
        folder = _model_folder(lang, method)
        if folder is not None:
            return cls.punkt_tab(folder, lang)
        return cls(None, f"sentencex:{lang}", sentencex_lang=lang)

    @classmethod
    def punkt_tab(cls, folder: str, lang: str) -> "SentenceSplitter":
        """Punkt with the punkt_tab model in `folder`, plus Wikipedia's frequent abbreviations."""
        tokenizer = PunktSentenceTokenizer()
        tokenizer._params = _load_punkt_tab(folder)
        tokenizer._lang_vars = _language_vars(lang)
        tokenizer._params.abbrev_types.update(EXTRA_ABBREVIATIONS.get(lang, ()))
        return cls(tokenizer, _punkt_tab_source(folder))

    @classmethod
    def trained(cls, texts: Iterable[str], lang: str = "") -> "SentenceSplitter":
        """Punkt parameters learnt from `texts` (same texts, same parameters)."""
        lang_vars = _language_vars(lang)
        trainer = PunktTrainer(lang_vars=lang_vars)
        trainer.INCLUDE_ALL_COLLOCS = True
        size = 0
        for text in texts:
            trainer.train(text, finalize=False)
            size += len(text)
            if size >= TRAINING_CHARS:
                break
        trainer.finalize_training()
        tokenizer = PunktSentenceTokenizer(trainer.get_params(), lang_vars=lang_vars)
        return cls(tokenizer, f"punkt-trained:{size} chars")

    def spans(self, text: str) -> list[tuple[int, int]]:
        """The backend's spans, cut further by the universal rule."""
        # _HAS_END, in two steps: str.isascii() costs nothing, and most English text is ASCII.
        universal = not text.isascii() and _UNIVERSAL_MARK.search(text)
        if not universal:  # the common case: Punkt's end marks were searched for just once
            if not _PUNKT_END.search(text) and not (
                    self.sentencex_lang in COLON_FULL_STOP and ":" in text) and not (
                    self.tokenizer is None and _END_BEFORE_WORD.search(text)):
                return [(0, len(text))] if text.strip() else []
            if self.tokenizer is not None:
                return self._punkt_spans(text)
        if not universal:
            return self._backend_spans(text)
        cuts, owned = _universal_cuts(text)
        return _apply_cuts(text, self._chunked_backend_spans(text, cuts), cuts, owned)

    def _chunked_backend_spans(self, text: str, cuts: list[int]) -> list[tuple[int, int]]:
        """The backend's spans of a long text, computed between the universal rule's cuts
        (sentence ends whatever the backend says) in chunks of about CHUNK_CHARS: sentencex
        takes time quadratic in the length of a Japanese text (a paragraph of 20,000 sentences:
        46 s). Texts up to CHUNK_CHARS, nearly all paragraphs, go whole."""
        if len(text) <= CHUNK_CHARS or not cuts:
            return self._backend_spans(text)
        spans, start = [], 0
        for cut in [*cuts, len(text)]:
            if cut - start >= CHUNK_CHARS or cut == len(text):
                spans.extend((a + start, b + start)
                             for a, b in self._backend_spans(text[start:cut]))
                start = cut
        return spans

    def split(self, text: str) -> list[str]:
        return [text[a:b] for a, b in self.spans(text)]

    def _backend_spans(self, text: str) -> list[tuple[int, int]]:
        if self.tokenizer is None:
            return _sentencex_spans(self.sentencex_lang, text)
        if not _PUNKT_END.search(text):
            return [(0, len(text))] if text.strip() else []
        return self._punkt_spans(text)

    def _punkt_spans(self, text: str) -> list[tuple[int, int]]:
        """What `self.tokenizer.span_tokenize(text)` gives, computed faster (see `_FastPunkt`)."""
        fast = self._fast
        tokenizer = self.tokenizer
        if fast is None or not fast.valid_for(tokenizer):
            fast = self._fast = _FastPunkt.for_tokenizer(tokenizer)
            if fast is None:
                return list(tokenizer.span_tokenize(text))
        return fast.spans(text)


# Texts longer than this go to the backend in pieces between the universal rule's cuts.
CHUNK_CHARS = 10_000


def _punkt_tab_source(folder: str) -> str:
    return f"punkt_tab:{os.path.basename(folder)}"


def _model_folder(lang: str, method: str) -> str | None:
    """The punkt_tab model `method` ("auto", "punkt" or "sentencex") uses for `lang`; None:
    sentencex. "punkt" without an installed model is an error."""
    folder = SentenceSplitter.installed_model(lang) if method in ("auto", "punkt") else None
    if folder is None and method == "punkt":
        raise WikipairsError(f"no punkt_tab model installed for language {lang!r} (NLTK_DATA="
                             f"{os.environ.get('NLTK_DATA', '')!r}); use --sentence-splitter "
                             "auto, sentencex or punkt-trained")
    return folder


def splitter_source(lang: str, method: str = "auto") -> str:
    """The `source` of `SentenceSplitter.for_language(lang, method=method)`, known before any
    text is read, so that a command can say at its start how it will split sentences
    ("punkt-trained" without the character count, which training decides)."""
    method = _checked_method(method)
    if method == "punkt-trained":
        return "punkt-trained"
    folder = _model_folder(lang, method)
    return _punkt_tab_source(folder) if folder is not None else f"sentencex:{lang}"


def missing_model_warning(lang: str, method: str = "auto") -> str | None:
    """The warning line where "auto" falls back to sentencex although `lang` has a Punkt model
    (PUNKT_LANGUAGES) that is not installed, else None: the same run splits differently with
    and without NLTK_DATA, and nobody should find that out from the output."""
    language = PUNKT_LANGUAGES.get(lang)
    if method != "auto" or language is None or _find_punkt_tab(language) is not None:
        return None
    searched = ", ".join(_punkt_search_paths()) or "no folder"
    return (f"wikipairs: warning: no punkt_tab model for {language} under NLTK_DATA "
            f"(searched {searched}); sentences split by sentencex instead (set NLTK_DATA or "
            "pass --sentence-splitter sentencex to silence this)")


def _checked_method(method: str) -> str:
    if method not in METHODS:
        raise WikipairsError(f"unknown sentence splitter {method!r}: expected one of "
                             + ", ".join(METHODS))
    return method


def _sentencex_spans(lang: str, text: str) -> list[tuple[int, int]]:
    """sentencex's sentences (character offsets, trailing whitespace included), without the
    whitespace around them.

    sentencex never ends a sentence inside quotes, so a quoted speech of twenty sentences, or a
    quote never closed (an apostrophe taken for one: "του '70."), became one sentence. It is
    given the text with quote marks as spaces (same offsets); each sentence then takes back the
    quote marks around it (`_with_quotes`), and a piece with no word ('".') joins the one before."""
    import sentencex  # a native module: imported where used, never pickled

    masked = text.translate(_QUOTES_AS_SPACES)
    raw = []
    for segment in sentencex.get_sentence_boundaries(lang, masked):
        start, end = segment["start_index"], segment["end_index"]
        while start < end and masked[start].isspace():
            start += 1
        while end > start and masked[end - 1].isspace():
            end -= 1
        if start < end:
            raw.append((start, end))
    spans = []
    for i, (start, end) in enumerate(raw):
        low = spans[-1][1] if spans else 0
        high = raw[i + 1][0] if i + 1 < len(raw) else len(text)
        start, end = _with_quotes(text, low, high, start, end)
        if spans and not _WORD.search(text, start, end):
            spans[-1] = (spans[-1][0], end)
        else:
            spans.append((start, end))
    if spans and text[spans[-1][1]:].strip():  # a last quote mark, spaced: 'যায়। "'
        spans[-1] = (spans[-1][0], len(text.rstrip()))
    words = FALSE_ABBREVIATIONS.get(lang)
    if words and spans and "." in text:  # "mar. Tiene"
        spans = _cut_after(text, spans, _WORD_STOP, words.__contains__)
    if spans and ". " in text and _misses_number_starts(lang):  # "berühmt. 1999 wurde"
        spans = _cut_after(text, spans, _NUMBER_START, _not_before_numbers)
    return _joined_false_ends(text, spans, lang)


# Words that sentencex's list of a language takes for abbreviations but that end sentences as
# words: Spanish "mar" (the sea; "marzo" abbreviated): "sobre el nivel del mar. Tiene un clima",
# in every geography lead, was one sentence; Portuguese and Galician Roman numerals, which take
# no ordinal period there ("construída no século XVIII. A igreja"; in German, Czech, Slovak
# "Ludwig XIV. war" is an ordinal, as sentencex has it). Single letters stay: initials.
_ROMAN = frozenset((
    "ii iii iv vi vii viii ix xi xii xiii xiv xv xvi xvii xviii xix xx xxi xxii xxiii xxiv xxv "
    "xxvi xxvii xxviii xxix xxx").split())
# "etc." and its kin end a list, and often the sentence ("du verre, etc. La décomposition",
# "κλπ. Επιπλέον", "usw. Diese Lehre"): sentencex never ends one there in these languages.
# (Not German "usw.": a noun after it has a capital too, "Märkten usw. Waren aller Art".)
FALSE_ABBREVIATIONS = {lang: frozenset(words.split()) for lang, words in {
    "es": "mar etc", "fr": "etc", "ca": "etc", "ro": "etc", "it": "ecc etc", "el": "κλπ κτλ etc",
    "nl": "enz etc", "da": "osv etc", "cs": "atd etc", "pl": "itd itp etc"}.items()}
FALSE_ABBREVIATIONS.update({"pt": _ROMAN, "gl": _ROMAN})
_WORD_STOP = regex.compile(r"(?<![\w.])(\w+)\.\s+(?=[\p{Lu}¿¡])")  # a word, its period, a capital


def _cut_after(text: str, spans: list[tuple[int, int]], pattern, cuts) -> list[tuple[int, int]]:
    """`spans` cut after the word and period of each match of `pattern` (group 1: the word)
    where `cuts(word.lower())`; the next span starts after the whitespace."""
    out = []
    for start, end in spans:
        for m in pattern.finditer(text, start, end):
            if cuts(m.group(1).lower()):
                out.append((start, m.end(1) + 1))
                start = m.end()
        out.append((start, end))
    return out


# A year that opens a sentence after a word and its period ("berühmt. 1999 wurde", "zu Wort.
# 1837 griff er"): the word of three letters or more (four with a capital, not a street's
# "-str."), the year of four digits with no period after it and a word after it. Only years:
# an abbreviation before another number is too common to list ("Hauptstr. 5", "např. 5 km",
# "aprox. 500"), and "am 3. Mai" is an ordinal.
_NUMBER_START = regex.compile(r"(?<![\w.])(\p{Ll}{3,}|\p{Lu}\p{Ll}{3,})(?<!str)\.\s+"
                              r"(?=(?:1\d|20)\d\d(?![\d.,:/])\s+\p{L})")
# Abbreviations that a year follows ("geb. 1900 in", "Aufl. 1987", "Febr. 1990"), in the
# languages whose sentencex never starts a sentence with a number; compared lower-cased.
_BEFORE_NUMBERS = frozenset((
    "geb gest get vgl bzw usw inkl ggf evtl ehem sog verh verw urspr aufl hrsg ausg lief slg "
    "jahrg jhd jhs kap abs art bde vol nr tzv resp esim pkt pág pàg núm fol sec ill eds red "
    "ref jan jän febr mär apr aug sept okt nov dez").split())


@functools.lru_cache(maxsize=None)
def _misses_number_starts(lang: str) -> bool:
    """Whether sentencex never starts a sentence with a number in `lang` (de, da, fi, cs, sk,
    ca, ...: asked once, so a later sentencex that learns it is followed). Not where a period
    is no full stop (Armenian ends sentences with ։)."""
    import sentencex

    if lang in COLON_FULL_STOP:
        return False
    probe = "Er war frei von Sorgen. 1809 begann er damals."
    return len(list(sentencex.get_sentence_boundaries(lang, probe))) < 2


def _not_before_numbers(word: str) -> bool:
    return word not in _BEFORE_NUMBERS


def _joined_false_ends(text: str, spans: list[tuple[int, int]],
                       lang: str) -> list[tuple[int, int]]:
    """`spans` with the ends sentencex puts where no sentence ends joined to what follows.

    sentencex knows a list of abbreviations per language and nothing else, so on real pages it
    cut "44 av. J.-C. à Rome" in three, "M. Dupont" and "Ε. Βενιζέλος" after the initial, "300 m
    ü. NHN" and "des 19. Jahrhunderts" in two. An end is false where (one rule each):
    * a period, `!`, `?` or `…` with no whitespace after it, followed by a digit, a hyphen or a
      letter of a cased script that does not begin a capitalized word ("J.-C.", "a.C.", "২৯.২",
      "Η.Π.Α."; not "Έντγκαρ.Το", a missing space, nor "president.」「I", Japanese needs none);
    * the next piece starts with a lower-case letter of a cased script (Latin, Greek, Cyrillic,
      Armenian): "s. fut", "т. е. пример";
    * the piece ends with a word of one letter and its period, an initial ("Ε.", "M.", "ü.",
      "S. 12"), not one joined to a hyphen ("J.-C." at a sentence's end stays an end);
    * in languages that write ordinals with a period (`ORDINAL_PERIOD_LANGUAGES`), the piece
      ends with a number of one to three digits and its period ("19. Jahrhunderts");
    * in a text that ends its sentences with a script's own full stop (। ։ ။ ...), a period
      followed by a letter of a script without case or a digit marks an abbreviation or a list
      number ("৪০০ কি. মি.", "১. আপতিত").
    * the period follows a letter of a script whose sentences never end with one (Thai, Lao,
      Khmer, Myanmar): an abbreviation, "พ.ศ. 2325", "20 กม.", "ดร.";
    * a closing quote or bracket is followed by a Japanese particle that continues the sentence
      (「I am happy.」と言う), as the universal rule keeps 「…。」と言う whole;
    * the piece ends with an abbreviation of the language that precedes a name or a number
      (`PREFIX_ABBREVIATIONS`: "ок. 12 млн", "им. Ленина");
    * a closing quote is followed at once by Hangul: a Korean particle ("…간다."라고 말했다);
    * a fullwidth full stop after a Latin initial or between digits (Ｊ．Ｒ．, ３．１４);
    * the next piece opens with a number in brackets ("чел. (2021).");
    * a fullwidth bracket is open and the next piece closes it (（中国人風。協和語を参照）).
    The initial may be two letters, a capital and a small one: Greek and Russian write J., D.
    as "Τζ.", "Ντ.", "Дж."."""
    if len(spans) < 2:
        return spans
    ordinals = lang in ORDINAL_PERIOD_LANGUAGES
    initials = lang not in WORDS_OF_ONE_SYLLABLE
    prefixes = PREFIX_ABBREVIATIONS.get(lang)
    native_stops = _NATIVE_FULL_STOP.search(text) is not None
    joined = [spans[0]]
    for start, end in spans[1:]:
        before, piece_end = joined[-1]
        if (piece_end == start and _GLUED_END.match(text, piece_end - 1)
                or _LOWER_CASED.match(text, start)
                or initials and _INITIAL.search(text, before, piece_end)
                or _CLAUSE_MARK.match(text, start)
                or text[piece_end - 1] == "." and text[piece_end - 2:piece_end - 1].isdigit()
                and _LIST_NUMBER.search(text[before:piece_end])
                or ordinals and _ORDINAL.search(text, before, piece_end)
                or native_stops and text[piece_end - 1] == "." and _CASELESS.match(text, start)
                or text[piece_end - 1] == "." and piece_end - 2 >= before
                and _PERIODLESS.match(text, piece_end - 2)
                or text[piece_end - 1] in _JA_CLOSERS and _QUOTE_CONTINUES.match(text, start)
                or prefixes and text[piece_end - 1] == "." and _ends_with_prefix(
                    text, before, piece_end, prefixes)
                or piece_end == start and text[piece_end - 1] in _CLOSING_QUOTE_MARKS
                and _HANGUL.match(text, start)
                or _fullwidth_point_in_word(text, before, piece_end, start)
                or _BRACKETED_NUMBER.match(text, start)
                or _open_fullwidth_bracket(text, before, piece_end, end)):
            joined[-1] = (before, end)
        else:
            joined.append((start, end))
    return joined


# Languages of words of one syllable, one or two letters of which end many sentences ("Nghệ An.",
# "ở Mỹ.", "đến Ý."): no initials are taken there (`_INITIAL`).
WORDS_OF_ONE_SYLLABLE = frozenset({"vi"})
# No sentence opens with a comma: "Fondata nel 753 a.C., Roma" (a period inside a sentence).
_CLAUSE_MARK = re.compile(r"[,;:،、，；]")
# ... and none ends with a list's number, alone ("১.") or, in a list opened by one, after a comma
# ("১. বাদাখশান, ২." before "বাদগিস, ৩."): it opens the next. (Not "4,779,736." nor "scored 2, 3.")
_LIST_NUMBER = regex.compile(
    r"\A\p{Nd}{1,3}\.\Z|\A\p{Nd}{1,3}\.\s.*(?<!\p{Nd})[,;]\s+\p{Nd}{1,3}\.\Z", regex.S)

# Languages whose full stop looks like a colon, typed as one where the keyboard lacks it: sentencex
# ends Armenian sentences at ":" as at "։" ("Երևանը մայրաքաղաքն է: Այն հին է:").
COLON_FULL_STOP = frozenset({"hy"})

# Languages whose ordinal numbers are written with a period ("19. Jahrhundert", "3. května").
ORDINAL_PERIOD_LANGUAGES = frozenset(
    "de als bar nds lb de-ch da no nb nn is fo fi et cs sk sl hr sr sh bs hu tr lv lt".split())
# Scripts with capitals (not Georgian, whose letters Unicode calls all lower case).
CASED_SCRIPTS = r"\p{Latin}\p{Greek}\p{Cyrillic}\p{Armenian}"
_GLUED_END = regex.compile(
    rf"(?V1)[.!?\u2026](?:[\d\-\u2010\u2011]|"
    rf"(?![[{CASED_SCRIPTS}]&&\p{{Lu}}][[{CASED_SCRIPTS}]&&\p{{Ll}}])[{CASED_SCRIPTS}])")
_LOWER_CASED = regex.compile(rf"(?V1)[^\w]*[[{CASED_SCRIPTS}]&&\p{{Ll}}]")
_INITIAL = regex.compile(  # not °C., 300 m., nor a Hebrew acronym's last letter (ארה"ב.)
    r"(?:(?<![\w.\-\u2010\u2011\u00b0]|\d\s)(?!(?<=[\"\u05f3\u05f4'])\p{Hebrew})"
    r"(?:[^\W\d_]|\p{Lu}\p{Ll})"
    r"|(?<=\d\s)\p{Arabic})\.$")  # (an Arabic era after a year, "331 ق.م.", is no unit)
# A sentence never opens with a number in brackets: "Население — 5 601 911 чел. (2021)."
_BRACKETED_NUMBER = regex.compile(r"[(（\[]\d")
# Korean: a quote closed after its end mark, then at once a particle ("…간다."라고 말했다): the
# sentence goes on (Korean puts a space between sentences).
_CLOSING_QUOTE_MARKS = "\"'\u201d\u2019\u300d\u300f"
_HANGUL = regex.compile(r"\p{Hangul}")
# Full stops of scripts that do not end sentences with "." (Devanagari and Bengali danda,
# Armenian, Myanmar, Ethiopic, Urdu, CJK).
_NATIVE_FULL_STOP = re.compile("[\u0964\u0965\u09f7\u0589\u104b\u1362\u06d4\u3002\uff61]")
_CASELESS = regex.compile(r"[\p{Lo}\d]")
# Scripts whose sentences end with a space or their own mark, never with ".": a period after
# one of their letters ends an abbreviation (Thai พ.ศ., the Buddhist era, in most dates).
_PERIODLESS = regex.compile(r"[\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}]")
_JA_CLOSERS = "」』）"
_LAST_WORD = regex.compile(r"(?<![\w.\-\u200d])[\w][\w.\-\u200d]*\.$")


def _ends_with_prefix(text: str, start: int, end: int, prefixes: frozenset) -> bool:
    """Whether text[start:end] ends with one of `prefixes` and its period ("им.", "t.ex.")."""
    word = _LAST_WORD.search(text, max(start, end - 12), end)
    return word is not None and word.group()[:-1].replace("\u200d", "").casefold() in prefixes


# A fullwidth full stop that ends no sentence: after a Latin initial (Ｊ．Ｒ．Ｒ．トールキン) or
# between digits (３．１４); in Japanese technical writing "．" is also a sentence's end.
_FULLWIDTH_INITIAL = regex.compile(r"(?<![\p{L}\p{N}])\p{Latin}\uff0e$")  # not ビタミンＣ．


def _open_fullwidth_bracket(text: str, start: int, end: int, next_end: int) -> bool:
    """Whether text[start:end] leaves a fullwidth bracket open that the next piece closes: a
    note inside （…） has its own 。 (（中国人風。協和語を参照）), a title inside 『…』 its "!"
    (『GS美神 極楽大作戦!!』, 『ヤァ! ブロード・ストリート』)."""
    for opening, closing in _TITLE_BRACKETS:
        opened = text.count(opening, start, end) - text.count(closing, start, end)
        if opened > 0 and closing in text[end:next_end]:
            return True
    return False


_TITLE_BRACKETS = (("\uff08", "\uff09"), ("\u300e", "\u300f"))  # （…）, 『…』


def _fullwidth_point_in_word(text: str, start: int, end: int, following: int) -> bool:
    if text[end - 1] != "\uff0e":
        return False
    if text[end - 2:end - 1].isdigit() and text[following:following + 1].isdigit():
        return True
    return _FULLWIDTH_INITIAL.search(text, start, end) is not None
_ORDINAL = re.compile(r"(?<![\d.,:])\d{1,3}\.$")  # not a score or time: "2:1.", "14:30."


def _with_quotes(text: str, low: int, high: int, start: int, end: int) -> tuple[int, int]:
    """[start, end) with the quote marks around it, French spaced ones too (« Oui. »), within
    [low, high); marks left alone between `low` and it (« " », spaced) go with it as well."""
    end = min(high, _TRAILING_QUOTES.match(text, end).end())  # (what follows `high` decides)
    gap = text[low:start]
    return (low + len(gap) - len(gap.lstrip()) if gap.strip() else start), end


_QUOTES = "\"'\u00ab\u00bb\u2039\u203a\u201c\u201d\u201e\u2018\u2019"  # " ' « » ‹ › “ ” „ ‘ ’
_QUOTES_AS_SPACES = str.maketrans(dict.fromkeys(_QUOTES, " "))
_WORD = re.compile(r"\w")
# Quote marks that close the sentence before them: any, but an opening one (“ ‘ „ « ‹) only if
# no word follows it at once (Chinese "。“晶体管…" opens the next sentence; German „Ja.“ closes).
_TRAILING_QUOTES = re.compile(
    f"(?:[\"'\u00bb\u203a\u201d\u2019]|[\u00ab\u2039\u201c\u201e\u2018](?![^\\s{_QUOTES}]))*"
    f"(?:[^\\S\\n]+[\u00bb\u203a](?!\\S))?")  # and a spaced " »" after


# ---- the universal rule: sentence marks of other scripts ------------------------------------

def _sentence_terminals() -> str:
    """Unicode's Sentence_Terminal characters (all below U+20000), as the `regex` module knows
    them."""
    return "".join(regex.findall(r"\p{Sentence_Terminal}", "".join(map(chr, range(0x20000)))))


# End a sentence with no whitespace after them (CJK text has none between sentences).
CJK_TERMINATORS = "\u3002\uff01\uff1f\uff61\ufe12\ufe15\ufe16\ufe56\ufe57"  # 。！？｡ and forms
# Sentence_Terminal marks that are not unambiguous sentence ends: ASCII . ! ? (the backend's);
# the fullwidth and small full stops and the one dot leader, also used in numbers and initials
# (３．５, A．J．エリス); the Myanmar little section ၊, a comma.
NOT_TERMINATORS = ".!?\uff0e\ufe52\u2024\u104a"
# End marks that are not Sentence_Terminal: the Bengali ৷ (a numeral sign typed for the danda),
# the Thai angkhankhu ๚ and khomut ๛, the Tibetan shad ། and nyis shad ༎ (before a space).
EXTRA_TERMINATORS = "\u09f7\u0e5a\u0e5b\u0f0d\u0f0e"
# End a sentence when whitespace follows (after any closing brackets and quotes).
SPACED_TERMINATORS = "".join(c for c in _sentence_terminals() + EXTRA_TERMINATORS
                             if c not in CJK_TERMINATORS and c not in NOT_TERMINATORS)
_CLOSERS = r"\p{Pe}\p{Pf}"  # closing brackets and quotes: 」』）》”’»)]
# (ASCII quotes close after a mark followed by whitespace; after 。 they mostly open: 。"&" は)
_CJK_END = regex.compile(f"[{CJK_TERMINATORS}]+([{_CLOSERS}]*)")
_SPACED_END = regex.compile(f"[{re.escape(SPACED_TERMINATORS)}]+[{_CLOSERS}\"']*"
                            "(?:[ \u00a0]+[\u0f0d\u0f0e]+|(?=\\s))")  # (Tibetan "། །": one end)
# After a quote that ends with a CJK mark, a particle or comma continues the sentence:
# 「…。」と述べた, 「…。」という, 「…。」の, 「…。」「…。」など; words that begin sentences and start
# like a particle (ところが, とはいえ, のちに, もし, やがて, でも, ...) do not.
_QUOTE_CONTINUES = regex.compile(
    r"(?!ところ|とはいえ|とにかく|とも|のち|もし|もちろん|もっとも|やがて|でも|では|はじめ)"
    r"(?:[とのはをにがもやへで、，,「『（(]|など|って)")

# Thai: letters, vowels and tone marks (ฯ and ๆ too); a sentence starts with a consonant or a
# leading vowel, never with ฯ (the abbreviation mark of กรุงเทพฯ, ฯลฯ).
_THAI_CHAR = re.compile("[\u0e01-\u0e4e]")
_THAI_SPACE = re.compile("(?<=[\u0e01-\u0e4e])[^\\S\\n]+(?=[\u0e01-\u0e2e\u0e40-\u0e44])")
# Thai separates sentences by a space, but also clauses, names, numbers and list items. A space
# between Thai words is a sentence end only if the word after it does not continue a sentence
# (a conjunction, preposition or relative word: _THAI_CONTINUING), the word before it leaves
# none open (_THAI_NOT_FINAL), and the sentence so far and the rest of the paragraph both hold THAI_MIN_CHARS Thai characters.
# 70 gives XQuAD's 240 Thai paragraphs 1,251 sentences, their English originals 1,190 (Punkt);
# 50 gives 1,497, 80 gives 1,167 (benchmarks/sentence_quality.py prints these).
THAI_MIN_CHARS = 70
_THAI_CONTINUING = ("ซึ่ง", "และ", "หรือ", "ที่", "โดย", "ของ", "กับ", "ใน", "เพื่อ", "ว่า", "คือ",
                    "เช่น", "ได้แก่", "รวม", "จาก", "ตั้งแต่", "ถึง", "ทำให้", "พร้อม", "ขณะ", "จน",
                    "แล้ว", "ก็", "จึง", "เป็น", "แต่", "ให้", "ด้วย", "อีก", "ไป", "มา", "ได้", "กว่า",
                    "ตาม", "ต่อ", "นั้น", "นี้")
_THAI_NOT_FINAL = ("ได้แก่", "ที่", "และ", "หรือ", "ซึ่ง", "คือ", "เช่น", "โดย", "ของ", "กับ", "ใน",
                   "จาก", "แก่", "ว่า", "ให้", "พร้อมด้วย", "ตั้งแต่", "ถึง", "เป็น", "ทั้ง")

# Marks a backend may take for sentence ends that are none: the Myanmar little section ၊ (a
# comma) and genitive ၏ (sentencex ends a sentence at "မြန်မာနိုင်ငံ၏ မြို့" "Myanmar's city").
NEVER_TERMINATORS = "\u104a\u104f"
_NEVER_END = re.compile(f"[{NEVER_TERMINATORS}]")

# Any character the universal rule may act on: its marks in the Basic Multilingual Plane, Thai,
# and any character beyond it (a class of the rare scripts' marks there makes `re` scan
# several times slower; _universal_cuts looks at them exactly).
_UNIVERSAL_MARK = re.compile("[%s\u0e01-\u0e5b\U00010000-\U0010ffff]" % re.escape("".join(
    c for c in CJK_TERMINATORS + SPACED_TERMINATORS + NEVER_TERMINATORS if ord(c) < 0x10000)))
# Punkt's candidates (an end mark then whitespace).
_PUNKT_END = re.compile(r"[.?!;]\W*\s")
# An end mark with no space before a capitalized word ("των οργανισμών.Συγγενής κλάδος"): a
# sentence end sentencex finds (and `_joined_false_ends` keeps), so such a paragraph goes to it.
# (After a word's small letters or a bracket: not "«...Ένα", a quotation's opening, nor "ASP.Net".)
_END_BEFORE_WORD = regex.compile(r"(?<=\p{Ll}\p{Ll}|\))[.!?]\p{Lu}\p{Ll}")


class _AnyOf:
    """`search` is truthy where one of the patterns matches: two searches that each keep `re`'s
    fast scan for a first character cost less than one search for their alternation."""

    def __init__(self, *patterns: re.Pattern):
        self.patterns = patterns

    def search(self, text: str) -> bool:
        return any(pattern.search(text) for pattern in self.patterns)


# A paragraph where this finds nothing is one sentence, returned without running a backend
# (SentenceSplitter.spans makes the same test).
_HAS_END = _AnyOf(_PUNKT_END, _UNIVERSAL_MARK)


def _universal_cuts(text: str) -> tuple[list[int], list[tuple[int, int]]]:
    """(cuts, owned): sentence ends the universal rule puts in `text` (a sentence ends at each
    cut, the next starts after the whitespace there), and the ranges of positions right after
    its marks, where it alone decides (a backend's boundary there that is no cut is undone)."""
    cuts, owned = [], []
    bracketed = _in_brackets(text) if "\uff08" in text or "(" in text else None
    for match in _CJK_END.finditer(text):
        owned.append((match.start() + 1, match.end()))
        if not (match.group(1) and _QUOTE_CONTINUES.match(text, match.end())
                or bracketed is not None and bracketed(match.end())):
            cuts.append(match.end())
    for match in _SPACED_END.finditer(text):
        owned.append((match.start() + 1, match.end()))
        cuts.append(match.end())
    owned.extend((match.end(), match.end()) for match in _NEVER_END.finditer(text))
    cuts.extend(_thai_cuts(text))
    return sorted(set(cuts)), owned


def _in_brackets(text: str):
    """A test of whether a position of `text` lies inside a pair of brackets （…）, (…) or one of
    each whose closing one ends a note (`_CLOSES_NOTE`): a note there has its own 。 (（中国人風。
    協和語を参照）, jawiki's "(アッラーウィ副大統領率いる世俗政党。但し、…取り込んでいる。)") and
    ends no sentence. Brackets pair as nested; positions are asked in order."""
    ranges, opened = [], []
    for m in _BRACKET.finditer(text):
        if m.group() in _OPENING_BRACKETS:
            opened.append(m.start())
        elif opened:
            start = opened.pop()
            if m.group() == "\uff09" or _CLOSES_NOTE.match(text, m.start() - 1):
                ranges.append((start, m.start()))
    merged: list[list[int]] = []  # the ranges' union: disjoint, in order
    for start, end in sorted(ranges):
        if merged and start < merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    state = {"k": 0}

    def inside(position: int) -> bool:
        k = state["k"]
        while k < len(merged) and merged[k][1] <= position:
            k += 1
        state["k"] = k
        return k < len(merged) and merged[k][0] < position
    return inside


_BRACKET = re.compile("[\uff08\uff09()]")
_OPENING_BRACKETS = "\uff08("
# An ASCII ")" closes a note only at a sentence's end: after its 。, or before one or the text's
# end ("…取り込んでいる。)", "…単弦となる)。"), not a list's "1)改札口"
_CLOSES_NOTE = re.compile(r"。\)|.\)(?:。|$)", re.S)


def _thai_cuts(text: str) -> list[int]:
    """Spaces between Thai words that end a sentence (see THAI_MIN_CHARS). One pass: the Thai
    characters before each space are counted on from the previous one (a paragraph of
    megabytes without punctuation must not cost its length squared)."""
    total = _thai_chars(text, 0, len(text))
    if total < 2 * THAI_MIN_CHARS:
        return []
    cuts = []
    before, counted_to = 0, 0  # Thai characters in text[:counted_to]
    at_start = 0  # ... before the current sentence (a space holds none)
    for match in _THAI_SPACE.finditer(text):
        space, after = match.span()
        before += _thai_chars(text, counted_to, space)
        counted_to = space
        if text.startswith(_THAI_CONTINUING, after) or text.endswith(_THAI_NOT_FINAL, 0, space):
            continue
        if before - at_start >= THAI_MIN_CHARS and total - before >= THAI_MIN_CHARS:
            cuts.append(space)
            at_start = before
    return cuts


def _thai_chars(text: str, start: int, end: int) -> int:
    return len(_THAI_CHAR.findall(text, start, end))


def _apply_cuts(text: str, spans: list[tuple[int, int]], cuts: list[int],
                owned: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """`spans` with the boundaries that fall in `owned` but are no cut undone, then cut at
    `cuts` (sorted; each piece without the whitespace around it). Sets and bisection: a
    paragraph of thousands of sentences costs n log n, not n squared."""
    undone = _Undone(cuts, owned)
    merged = []
    for start, end in spans:
        if merged and undone(merged[-1][1]):
            merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    out = []
    for start, end in merged:
        i = bisect_right(cuts, start)
        while i < len(cuts) and cuts[i] < end:
            cut = cuts[i]
            i += 1
            if cut <= start:  # within the whitespace skipped after the previous cut
                continue
            out.append((start, cut))
            start = cut
            while start < end and text[start].isspace():
                start += 1
        if start < end:
            out.append((start, end))
    return out


class _Undone:
    """Whether a backend's boundary at `end` is to be undone: no cut, but in an owned range."""

    def __init__(self, cuts: list[int], owned: list[tuple[int, int]]):
        self.cuts = set(cuts)
        owned = sorted(owned)
        self.starts = [a for a, _ in owned]
        self.reach, furthest = [], -1  # the furthest end of the ranges starting so far
        for _, b in owned:
            furthest = max(furthest, b)
            self.reach.append(furthest)

    def __call__(self, end: int) -> bool:
        if end in self.cuts:
            return False
        i = bisect_right(self.starts, end) - 1
        return i >= 0 and self.reach[i] >= end


def _compiled(pattern):
    """The compiled pattern behind nltk's ReDoS-guarded wrapper (nltk >= 3.10), or the pattern."""
    return getattr(pattern, "_rx", pattern)


_WHITESPACE = tuple(string.whitespace)  # what Punkt's _get_last_whitespace_index looks for
_OTHER_ASCII_SPACE = re.compile("[%s]" % re.escape(string.whitespace.replace(" ", "")))


class _FastPunkt:
    """`PunktSentenceTokenizer.span_tokenize` restated in tight code, with the same regular
    expressions (taken from the tokenizer and its language variables) and the same parameters.

    Punkt decides each candidate boundary from its context alone (the word before the end mark,
    the mark, and the next token), by a first pass on token types (abbreviation, ellipsis) and a
    second pass on the pair of tokens (collocations, orthographic heuristic, initials, numbers,
    frequent sentence starters). `_decide` is that decision, cached per context: the same contexts
    ("war. The") recur all over a dump. tests/test_speed_equivalence.py checks that the spans are
    those of nltk on every paragraph of the real dumps."""

    _CACHE_SIZE = 200_000

    def __init__(self, tokenizer: PunktSentenceTokenizer):
        params, lang_vars = tokenizer._params, tokenizer._lang_vars
        self.params, self.lang_vars = params, lang_vars
        self.period_context = _compiled(lang_vars.period_context_re())
        self.word_tokens = _compiled(lang_vars._word_tokenizer_re()).findall
        self.realign = _compiled(lang_vars.re_boundary_realignment).match
        token = tokenizer._Token
        self.ellipsis = _compiled(token._RE_ELLIPSIS).match
        self.numeric = _compiled(token._RE_NUMERIC).sub
        self.initial = _compiled(token._RE_INITIAL).match
        self.sent_end_chars = lang_vars.sent_end_chars
        self.punctuation = tokenizer.PUNCTUATION
        # The live sets: parameters updated after this (extra abbreviations) are seen.
        self.abbrev_types = params.abbrev_types
        self.collocations = params.collocations
        self.sent_starters = params.sent_starters
        self.ortho_context = params.ortho_context
        self._cache: dict[str, bool] = {}
        self._tokens: dict[str, tuple] = {}
        self._sizes = self._parameter_sizes()

    def _parameter_sizes(self) -> tuple[int, int, int]:
        return len(self.abbrev_types), len(self.collocations), len(self.sent_starters)

    def valid_for(self, tokenizer) -> bool:
        """Whether this still restates `tokenizer`: same parameters and language variables, and
        no abbreviation, collocation or sentence starter added or removed since (the cached
        decisions would be stale; so would they after other changes made in place, for which
        set new parameters: `tokenizer._params = ...`)."""
        return tokenizer._params is self.params and tokenizer._lang_vars is self.lang_vars \
            and self._parameter_sizes() == self._sizes

    @classmethod
    def for_tokenizer(cls, tokenizer) -> "_FastPunkt | None":
        """None where the tokenizer is not stock Punkt (a subclass overriding its decisions)."""
        kind = type(tokenizer)
        if tokenizer._Token is not PunktToken or any(
                getattr(kind, name) is not getattr(PunktSentenceTokenizer, name)
                for name in _PUNKT_METHODS):
            return None
        lang_vars = type(tokenizer._lang_vars)
        if any(getattr(lang_vars, name) is not getattr(PunktLanguageVars, name)
               for name in _LANG_VARS_METHODS):
            return None
        return cls(tokenizer)

    def spans(self, text: str) -> list[tuple[int, int]]:
        # PunktSentenceTokenizer._slices_from_text over _match_potential_end_contexts: each
        # candidate's context is the word before it (from the last whitespace after the previous
        # candidate), the end mark and what follows; of candidates in one word, only the last.
        slices, last_break = [], 0
        cache, decide = self._cache, self._decide
        spaces = _WHITESPACE if _OTHER_ASCII_SPACE.search(text) else (" ",)
        rfind = text.rfind
        previous, prev_start, prev_stop = None, 0, 0
        for match in self.period_context.finditer(text):
            at = match.start()
            found = max([rfind(c, prev_stop, at) for c in spaces]) if len(spaces) > 1 \
                else rfind(" ", prev_stop, at)
            word_start = found + 1 if found > prev_stop else prev_start
            if previous is not None and prev_stop <= word_start:
                context = text[prev_start:prev_stop] + previous.group() + \
                    previous.group("after_tok")
                is_break = cache.get(context)
                if is_break is None:
                    if len(cache) >= self._CACHE_SIZE:
                        cache.clear()
                    is_break = cache[context] = decide(context)
                if is_break:
                    slices.append((last_break, previous.end()))
                    last_break = previous.start("next_tok") if previous.group("next_tok") \
                        else previous.end()
            previous, prev_start, prev_stop = match, word_start, at
        if previous is not None:
            context = text[prev_start:prev_stop] + previous.group() + previous.group("after_tok")
            is_break = cache.get(context)
            if is_break is None:
                is_break = cache[context] = decide(context)
            if is_break:
                slices.append((last_break, previous.end()))
                last_break = previous.start("next_tok") if previous.group("next_tok") \
                    else previous.end()
        slices.append((last_break, len(text.rstrip())))
        if len(slices) == 1:
            return [slices[0]] if slices[0][0] < slices[0][1] else []
        # PunktSentenceTokenizer._realign_boundaries (slice ends never pass the text's end, so
        # text[start:stop] is empty exactly when start >= stop).
        out, realign, last = [], 0, len(slices) - 1
        realign_match = self.realign
        for i, (start, stop) in enumerate(slices):
            start += realign
            if i == last:
                if start < stop:
                    out.append((start, stop))
                break
            start2, stop2 = slices[i + 1]
            m = realign_match(text[start2:stop2])
            if m:
                out.append((start, start2 + len(m.group(0).rstrip())))
                realign = m.end()
            else:
                realign = 0
                if start < stop:
                    out.append((start, stop))
        return out

    def _token(self, tok: str) -> tuple:
        """What the annotation passes use of a token (PunktToken's properties and the first pass,
        PunktBaseClass._first_pass_annotation), cached per token text:
        (period_final, sentbreak, abbr_or_ellipsis, type_no_period, type_no_sentperiod,
        is_initial, first_upper, first_lower)."""
        info = self._tokens.get(tok)
        if info is not None:
            return info
        if len(self._tokens) >= self._CACHE_SIZE:
            self._tokens.clear()
        typ = self.numeric("##number##", tok.lower())
        no_period = typ[:-1] if len(typ) > 1 and typ[-1] == "." else typ
        sentbreak = abbr_or_ellipsis = False
        if tok in self.sent_end_chars:
            sentbreak = True
        elif self.ellipsis(tok):
            abbr_or_ellipsis = True
        elif tok.endswith(".") and not tok.endswith(".."):
            low = tok[:-1].lower()
            if low in self.abbrev_types or low.split("-")[-1] in self.abbrev_types:
                abbr_or_ellipsis = True
            else:
                sentbreak = True
        first = tok[0]
        info = self._tokens[tok] = (
            tok.endswith("."), sentbreak, abbr_or_ellipsis, no_period,
            no_period if sentbreak else typ, bool(self.initial(tok)), first.isupper(),
            first.islower())
        return info

    def _ortho(self, tok: str, typ: str, first_upper: bool, first_lower: bool):
        """PunktSentenceTokenizer._ortho_heuristic: True, False or "unknown"."""
        if tok in self.punctuation:
            return False
        context = self.ortho_context.get(typ, 0)
        if first_upper and (context & _ORTHO_LC) and not (context & _ORTHO_MID_UC):
            return True
        if first_lower and ((context & _ORTHO_UC) or not (context & _ORTHO_BEG_LC)):
            return False
        return "unknown"

    def _decide(self, context: str) -> bool:
        """PunktSentenceTokenizer.text_contains_sentbreak: whether a token other than the last
        is a sentence break once both annotation passes are done."""
        if "\n" in context:
            tokens = []
            for line in context.split("\n"):
                if line.strip():
                    tokens.extend(self.word_tokens(line))
        else:
            tokens = self.word_tokens(context) if context.strip() else []
        for i in range(len(tokens) - 1):
            if self._is_break(tokens[i], tokens[i + 1]):
                return True
        return False

    def _is_break(self, tok: str, next_tok: str) -> bool:
        """Whether `tok` followed by `next_tok` is a sentence break: the first annotation pass,
        then PunktSentenceTokenizer._second_pass_annotation."""
        period_final, sentbreak, abbr_or_ellipsis, typ, _, initial, _, _ = self._token(tok)
        if not period_final:
            return sentbreak
        _, _, _, _, next_typ, _, next_upper, next_lower = self._token(next_tok)
        if (typ, next_typ) in self.collocations:
            return False
        if abbr_or_ellipsis and not initial:
            if self._ortho(next_tok, next_typ, next_upper, next_lower) is True:
                return True
            if next_upper and next_typ in self.sent_starters:
                return True
        if initial or typ == "##number##":
            starter = self._ortho(next_tok, next_typ, next_upper, next_lower)
            if starter is False:
                return False
            if starter == "unknown" and initial and next_upper \
                    and not (self.ortho_context.get(next_typ, 0) & _ORTHO_LC):
                return False
        return sentbreak


# Methods whose behaviour _FastPunkt restates; a tokenizer overriding one keeps nltk's code.
_PUNKT_METHODS = ("span_tokenize", "_slices_from_text", "_realign_boundaries",
                  "_match_potential_end_contexts", "text_contains_sentbreak", "_annotate_tokens",
                  "_annotate_first_pass", "_first_pass_annotation", "_annotate_second_pass",
                  "_second_pass_annotation", "_ortho_heuristic", "_tokenize_words",
                  "_get_last_whitespace_index")
_LANG_VARS_METHODS = ("word_tokenize", "period_context_re", "_word_tokenizer_re")
