"""The token measure of wikipairs.text.tokens: script-aware counts, truncation, the prose rule."""
from __future__ import annotations

import re

import pytest

from wikipairs.pairs.tasks import approx_token_count
from wikipairs.text.tokens import is_prose, token_count, tokens, truncate_by_count, truncate_tokens

OLD_MEASURE = re.compile(r"\w+|[^\w\s]")  # the measure before script-aware counting


def test_pairs_still_exports_the_measure():
    assert approx_token_count is token_count


def test_bengali_words_keep_their_vowel_signs():
    # 4 words; `re`'s \w leaves out the vowel signs (\p{M}), which made it 15 "tokens"
    text = "বাংলা ভাষা একটি ভাষা"
    assert len(OLD_MEASURE.findall(text)) == 15
    assert tokens(text) == ["বাংলা", "ভাষা", "একটি", "ভাষা"]


def test_devanagari_and_greek_are_counted_by_words():
    assert token_count("हिन्दी भारत की भाषा है।") == 6  # 5 words and the danda
    assert token_count("Η Αθήνα είναι η πρωτεύουσα.") == 6


def test_japanese_counts_han_per_character_and_kana_in_pairs():
    text = "日本語の文です。"  # 日 本 語 の 文 です 。
    assert tokens(text) == ["日", "本", "語", "の", "文", "です", "。"]
    sentence = "東京都は日本の首都であり、人口は約千四百万人である。"
    assert len(OLD_MEASURE.findall(sentence)) == 4  # two "words" and two marks
    assert len(sentence) / 2 <= token_count(sentence) <= len(sentence)


def test_thai_counts_character_runs_of_three():
    text = "ภาษาไทยเป็นภาษา"  # no spaces between words
    assert token_count(text) == 5
    assert "".join(tokens(text)) == text


def test_tibetan_counts_syllables_and_other_unspaced_scripts_runs():
    """A tsheg separates Tibetan syllables as a space separates words: no token (a sentence of
    13 syllables counted 26). Javanese, Balinese, Tai Tham are written without spaces, as Thai
    is (a sentence was one "word"); a Yi character is a syllable, as a Han one."""
    assert token_count("བོད་ཀྱི་སྐད་ཡིག་ནི་ཡིན།") == 7  # six syllables and the shad
    assert token_count("ꦧꦱꦗꦮ ꦲꦶꦏꦸ") == 3
    assert token_count("ꆈꌠꁱꂷ") == 4
    assert len(truncate_tokens("ꦧ" * 22000, 5)) == 15


def test_mixed_scripts_split_at_script_changes():
    assert tokens("abc東京です1,000円 বাংলা") == ["abc", "東", "京", "です", "1", ",", "000", "円",
                                                "বাংলা"]


def test_ascii_counts_are_unchanged(enwiki_gensim):
    sentences = [s for a in enwiki_gensim.articles[:20] for *_, s in a.sentences()]
    ascii_ones = [s for s in sentences if s.isascii()]
    assert len(ascii_ones) > 500
    for s in ascii_ones:
        assert token_count(s) == len(OLD_MEASURE.findall(s)), s


def test_latin_text_with_accents_counts_as_before():
    # non-ASCII Latin (the slow path) agrees with the old measure: no marks, no unspaced scripts
    text = "Léonard de Vinci, né à Vinci — « peintre » et ingénieur."
    assert token_count(text) == len(OLD_MEASURE.findall(text))


@pytest.mark.parametrize("text", ["Hello, world! How are you?", "বাংলা ভাষা একটি ইন্দো-আর্য ভাষা।",
                                  "日本語の文です。東京。", "mixed 東京 and ভাষা, ok."])
def test_truncation_cuts_at_a_token_boundary(text):
    total = token_count(text)
    for n in range(total + 2):
        cut = truncate_tokens(text, n)
        assert text.startswith(cut)
        assert token_count(cut) == min(n, total)
        assert truncate_by_count(text, n, token_count) == cut.rstrip()
    assert truncate_tokens(text, total) == text


def test_truncation_reads_only_as_far_as_the_cut():
    giant = "word " * 4_000_000  # 20 MB, no punctuation
    assert truncate_tokens(giant, 10) == " ".join(["word"] * 10)
    words = truncate_by_count(giant, 10, lambda t: len(t.split()))
    assert words == " ".join(["word"] * 10)


@pytest.mark.parametrize("text", ["Born in 1990 in Paris.", "東京は日本の首都です。", "C6H12O6 → 3 CH4",
                                  "বেনিনের জনসংখ্যা ১১ লক্ষ।", "(See Gomeisa.)"])
def test_prose(text):
    assert is_prose(text)


@pytest.mark.parametrize("text", [", , , ,", "1 | 2 | 3 | 4 ----", "12, 14, 16, 18.", "--- === ---",
                                  "62.5 x 47 cm.", "", "   "])
def test_not_prose(text):
    assert not is_prose(text)
