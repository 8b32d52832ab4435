"""The token measure used when no SentencePiece model is given (`wikipairs build` without --vocab).

It approximates what a subword tokenizer gives, in every script, so that packing, the query
length rules, the caps and the stats mean the same in Japanese, Bengali or English:
- a word is a run of word characters *with their combining marks* (\\p{M}: Indic vowel signs,
  viramas, Thai tone marks...), so "বাংলা ভাষা" is 2 tokens, not 9;
- scripts written without spaces between words are cut into short runs of characters (with
  their marks): each Han character is a token (as BERT's basic tokenizer splits CJK), kana
  come two to a token, Thai, Lao, Khmer and Myanmar three to a token; a whole Japanese
  sentence is no longer one "word";
- every other non-space character (punctuation, symbols) is a token of its own.
ASCII text takes a fast path through `re` (`\\w+|[^\\w\\s]`), which counts exactly as the full
rule does on ASCII. benchmarks/token_measure.py compares the measure with SentencePiece models
trained on each real dump.

`token_count`, `truncate_tokens` and `is_prose` share one tokenization, so a text truncated to
n tokens counts n tokens. Nothing here imports Beam or TensorFlow.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable

import regex

# Scripts whose words are not separated by spaces are cut into short runs of characters (each
# with its combining marks), sized by what SentencePiece models trained on real dumps give
# (benchmarks/token_measure.py): a Han character is a token, as BERT's basic tokenizer has it;
# kana come two to a token (one per character overshot jawiki's pieces 1.6x: inflections such
# as です, した and katakana words merge); Thai, Lao, Khmer and Myanmar three to a token (one per
# character overshot XQuAD Thai's pieces 3.2x: a syllable is a consonant with vowel letters).
_HAN = r"\p{Han}\p{Bopomofo}\p{Yi}"  # (a Yi character is a syllable, as a Han one is)
_KANA = r"\p{Hiragana}\p{Katakana}\u30fc"  # U+30FC, the prolonged sound mark, is script Common
# ... and the other scripts of South-East Asia written without spaces (Javanese, Balinese, Tai
# Tham, Buginese: a sentence of them was one "word", a query too short to be used)
_SOUTHEAST_ASIAN = (r"\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}\p{Javanese}\p{Balinese}\p{Tai_Tham}"
                    r"\p{Buginese}\p{New_Tai_Lue}\p{Tai_Le}")
UNSPACED_SCRIPTS = _HAN + _KANA + _SOUTHEAST_ASIAN  # written without spaces between words
# Tibetan writes a tsheg (U+0F0B, U+0F0C) between syllables: a separator, as a space is, not a
# token (a sentence of 13 syllables counted 26 tokens, a long one went as too long).
_SEPARATORS = "\u0f0b\u0f0c"
# regex's \w is Unicode's word class: letters, digits, connector punctuation *and marks*.
# V1 for set difference: a word never runs into an unspaced-script character.
_TOKENS = regex.compile(
    rf"(?V1)[{_HAN}]\p{{M}}*"
    rf"|(?:[{_KANA}]\p{{M}}*){{1,2}}"
    rf"|(?:[{_SOUTHEAST_ASIAN}]\p{{M}}*){{1,3}}"
    rf"|[\w--[{UNSPACED_SCRIPTS}]]+"
    rf"|[^\w\s{_SEPARATORS}]")
_ASCII_TOKENS = re.compile(r"\w+|[^\w\s]")  # the same count as _TOKENS on ASCII text, faster
_LETTER = regex.compile(r"\p{L}")
_WORD_START = regex.compile(r"\w")
_ASCII_WORDS = re.compile(r"\w+")
_ASCII_LETTERLESS_WORDS = re.compile(r"\b[0-9_]+\b")


# How `wikipairs build` names its token measure (stats.json, the card, the CLI's first line).
SCRIPT_AWARE = "script-aware-words"


def token_measure(vocab: str | None) -> str:
    """The name of the token measure of a build: its SentencePiece model's, or this module's."""
    return f"sentencepiece:{os.path.basename(vocab)}" if vocab else SCRIPT_AWARE


def _pattern(text: str):
    return _ASCII_TOKENS if text.isascii() else _TOKENS


def token_count(text: str) -> int:
    """Tokens of `text` under the script-aware measure (see the module docstring)."""
    return len(_pattern(text).findall(text))


def tokens(text: str) -> list[str]:
    """The tokens of `text` as strings (whitespace dropped)."""
    return _pattern(text).findall(text)


def truncate_tokens(text: str, max_tokens: int) -> str:
    """The longest prefix of `text` that holds at most `max_tokens` tokens, cut at the end of a
    token (trailing whitespace dropped). Reads only as far as the cut, so a huge text costs
    max_tokens matches, not its length."""
    if max_tokens <= 0:
        return ""
    matches = _pattern(text).finditer(text)
    for n, match in enumerate(matches, 1):
        if n == max_tokens:
            return text if next(matches, None) is None else text[:match.end()]
    return text


def truncate_by_count(text: str, max_tokens: int, count: Callable[[str], int]) -> str:
    """`truncate_tokens` for another counting function (a SentencePiece model's piece count):
    the longest prefix, cut at a token boundary of this module's measure, that `count` puts at
    <= max_tokens. A binary search over the first 4 x max_tokens + 4 boundaries, so the cost is
    bounded by max_tokens, not by the length of `text`. (A model giving fewer than one piece per
    4 of these tokens would get a shorter cut than it could hold, never a longer one; on the real
    dumps it gives 0.6 to 1.3 pieces per token: benchmarks/token_measure.py.)"""
    if max_tokens <= 0:
        return ""
    matches = zip(_pattern(text).finditer(text), range(4 * max_tokens + 4))
    ends = [match.end() for match, _ in matches]
    fitting = 0  # prefixes up to ends[fitting - 1] fit
    low, high = 1, len(ends)
    while low <= high:
        mid = (low + high) // 2
        if count(text[:ends[mid - 1]]) <= max_tokens:
            fitting, low = mid, mid + 1
        else:
            high = mid - 1
    return text[:ends[fitting - 1]] if fitting else ""


def is_prose(text: str, min_letter_share: float = 0.5) -> bool:
    """True when at least `min_letter_share` of the *word* tokens of `text` hold a letter
    (\\p{L}) and there is at least one: "Born in 1990 in Paris." is prose, while table debris
    ("1 | 2 | 3 ----"), lists of numbers ("12, 14, 16") and bare punctuation (", , ,") are not.
    Punctuation tokens are left out of the share, so a sentence's commas and parentheses never
    count against it."""
    if text.isascii():  # the same answer, in C: words are \w runs, letterless ones [0-9_] runs
        words = len(_ASCII_WORDS.findall(text))
        lettered = words - len(_ASCII_LETTERLESS_WORDS.findall(text))
        return words > 0 and lettered >= min_letter_share * words
    words = lettered = 0
    for token in tokens(text):
        if _WORD_START.match(token):
            words += 1
            lettered += _LETTER.search(token) is not None
    return words > 0 and lettered >= min_letter_share * words


def is_unspaced_fragment(text: str) -> bool:
    """True for a text mostly in a script written without spaces that ends its sentences with
    a mark (Chinese, Japanese; Khmer ។, Myanmar ။) and does not end as a sentence does (。！？
    or another end mark, closing brackets after it): a list item or a label ("上野病院", "監督 -
    荒牧伸志"), whose characters count as the words of a sentence would (see token_count)
    though they are a name. Thai and Lao have no end mark: a sentence of theirs is no fragment
    for lack of one (every Thai query needed twice the tokens)."""
    if _ENDED.search(text):
        return False
    unspaced = len(_MARKED_UNSPACED_CHAR.findall(text))
    return unspaced > 0 and 2 * unspaced >= len(_LETTER.findall(text))


_MARKED_UNSPACED_CHAR = regex.compile(r"[%s%s\p{Khmer}\p{Myanmar}]" % (_HAN, _KANA))
_ENDED = regex.compile(r"[\p{Sentence_Terminal}][\p{Pe}\p{Pf}\"']*\s*$")

__all__ = ["token_count", "tokens", "truncate_tokens", "truncate_by_count", "is_prose",
           "is_unspaced_fragment"]
