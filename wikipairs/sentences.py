"""Sentence splitting with NLTK Punkt, offline.

The punkt_tab model for the dump's language is used when installed (NLTK_DATA or NLTK's default
folders). Otherwise Punkt parameters are trained on the input text itself, which is deterministic
for the same text, so any language works without a download. Nothing is ever downloaded.
"""
from __future__ import annotations

import os
import re
from collections.abc import Iterable

import nltk.data
from nltk.tokenize.punkt import (PunktLanguageVars, PunktSentenceTokenizer, PunktTrainer,
                                 load_punkt_params)

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


class SentenceSplitter:
    """Splits paragraphs into sentences; `spans(text)` gives [start, end) character offsets."""

    def __init__(self, tokenizer: PunktSentenceTokenizer, source: str):
        self.tokenizer = tokenizer
        self.source = source  # "punkt_tab:english" or "trained:<chars> chars"

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
            tokenizer._params = load_punkt_params(nltk.data.FileSystemPathPointer(folder))
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
        if not _HAS_END.search(text):
            return [(0, len(text))] if text.strip() else []
        return list(self.tokenizer.span_tokenize(text))

    def split(self, text: str) -> list[str]:
        return [text[a:b] for a, b in self.spans(text)]


_HAS_END = re.compile(r"[.?!;。！？।؟]\W*\s")
