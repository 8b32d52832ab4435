"""Sentence splitting with NLTK Punkt, offline.

The punkt_tab model for the dump's language is used when installed (NLTK_DATA or NLTK's default
folders). Otherwise Punkt parameters are trained on the input text itself, which is deterministic
for the same text, so any language works without a download. Nothing is ever downloaded.
"""
from __future__ import annotations

import os
import re
import string
from collections.abc import Iterable

import nltk.data
from nltk.tokenize.punkt import (_ORTHO_BEG_LC, _ORTHO_LC, _ORTHO_MID_UC, _ORTHO_UC,
                                 PunktLanguageVars, PunktParameters, PunktSentenceTokenizer,
                                 PunktToken, PunktTrainer, load_punkt_params)
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
           "jul", "aug", "sep", "sept", "oct", "nov", "dec"),
}
EXTRA_ABBREVIATIONS["simple"] = EXTRA_ABBREVIATIONS["en"]

# Training text needed before the trained parameters are worth using (~a few hundred articles).
TRAINING_CHARS = 2_000_000


class _WikiLanguageVars(PunktLanguageVars):
    # Other scripts end sentences with their own marks.
    sent_end_chars = (".", "?", "!", "。", "！", "？", "।", "؟")


class _GreekLanguageVars(PunktLanguageVars):
    # Greek uses ";" as its question mark.
    sent_end_chars = (".", "?", "!", ";")


def _language_vars(lang: str) -> PunktLanguageVars:
    return _GreekLanguageVars() if lang == "el" else _WikiLanguageVars()


def _find_punkt_tab(language: str) -> str | None:
    paths = [p for p in os.environ.get("NLTK_DATA", "").split(os.pathsep) if p] + list(nltk.data.path)
    for root in paths:
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


class SentenceSplitter:
    """Splits paragraphs into sentences; `spans(text)` gives [start, end) character offsets."""

    def __init__(self, tokenizer: PunktSentenceTokenizer, source: str):
        self.tokenizer = tokenizer
        self.source = source  # "punkt_tab:english" or "trained:<chars> chars"
        self._fast: _FastPunkt | None = None

    @staticmethod
    def installed_model(lang: str) -> str | None:
        """Folder of the installed punkt_tab model for `lang`, or None."""
        language = PUNKT_LANGUAGES.get(lang)
        return _find_punkt_tab(language) if language else None

    @classmethod
    def for_language(cls, lang: str, training_text: Iterable[str] = ()) -> "SentenceSplitter":
        """The installed punkt_tab model for `lang`, else Punkt trained on `training_text`."""
        folder = cls.installed_model(lang)
        if folder is not None:
            tokenizer = PunktSentenceTokenizer()
            tokenizer._params = _load_punkt_tab(folder)
            tokenizer._lang_vars = _language_vars(lang)
            tokenizer._params.abbrev_types.update(EXTRA_ABBREVIATIONS.get(lang, ()))
            return cls(tokenizer, f"punkt_tab:{os.path.basename(folder)}")
        return cls.trained(training_text, lang)

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
        return cls(tokenizer, f"trained:{size} chars")

    def spans(self, text: str) -> list[tuple[int, int]]:
        """What `self.tokenizer.span_tokenize(text)` gives, computed faster (see `_FastPunkt`)."""
        if not _HAS_END.search(text):
            return [(0, len(text))] if text.strip() else []
        fast = self._fast
        tokenizer = self.tokenizer
        if fast is None or not fast.valid_for(tokenizer):
            fast = self._fast = _FastPunkt.for_tokenizer(tokenizer)
            if fast is None:
                return list(tokenizer.span_tokenize(text))
        return fast.spans(text)

    def split(self, text: str) -> list[str]:
        return [text[a:b] for a, b in self.spans(text)]


_HAS_END = re.compile(r"[.?!;。！？।؟]\W*\s")


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
