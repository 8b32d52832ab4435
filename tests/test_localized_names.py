"""Localized namespace aliases and image options of every wiki (mwconstants next to the siteinfo),
and the check that a dump's text is in the language it declares (--lang fixes it).

The fake dumps are written by the tests in the shape of each wiki's real siteinfo (its main
namespace names only, as dumps give them); the aliases the text uses (Vietnamese Hình:, Japanese
画像: and カテゴリ:, Chinese 分類:, Arabic صورة:, German Bild:) are in no siteinfo.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import describe, read_articles, run_cli, wiki_file, write_fake_dump
from wikipairs.reading import check_declared_language, language_mismatch
from wikipairs.text.language_check import mismatch
from wikipairs.text.mediawiki_names import image_option_words, local_namespaces
from wikipairs.parse import ParseConfig, iter_articles
from wikipairs.records import Namespace, SiteInfo
from wikipairs.text.titles import TitleParser

# ---- namespace names --------------------------------------------------------------------------


def parser(lang: str, names: dict[int, str] | None = None) -> TitleParser:
    namespaces = {k: Namespace(k, v) for k, v in (names or {}).items()}
    return TitleParser(SiteInfo(dbname=f"{lang}wiki", lang=lang, namespaces=namespaces))


@pytest.mark.parametrize("lang, siteinfo, raw, expected", [
    ("vi", {0: "", 6: "Tập tin", 14: "Thể loại"}, "Hình:X.jpg", "Tập tin:X.jpg"),
    ("ja", {0: "", 6: "ファイル", 14: "Category"}, "画像:X.jpg", "ファイル:X.jpg"),
    ("ja", {0: "", 6: "ファイル", 14: "Category"}, "カテゴリ:日本の都市", "Category:日本の都市"),
    ("zh", {0: "", 6: "File", 14: "Category"}, "分類:首都", "Category:首都"),
    ("zh", {0: "", 6: "File", 14: "Category"}, "圖像:X.png", "File:X.png"),
    ("ar", {0: "", 6: "ملف", 14: "تصنيف"}, "صورة:X.jpg", "ملف:X.jpg"),
    ("de", {0: "", 6: "Datei", 14: "Kategorie"}, "Bild:X.jpg", "Datei:X.jpg"),
    # A dump that declares English namespaces, read with --lang ja: its names stay the main ones.
    ("ja", {0: "", 6: "File", 14: "Category"}, "ファイル:X.jpg", "File:X.jpg"),
])
def test_aliases_that_no_siteinfo_lists(lang, siteinfo, raw, expected):
    assert parser(lang, siteinfo).normalize(raw) == expected
    assert parser("en", siteinfo).normalize(raw) != expected  # English has no such alias


def test_namespace_names_used_by_the_cleaner():
    assert parser("vi", {6: "Tập tin"}).namespace_names(6) == {"tập tin", "hình", "file", "image"}
    assert {"画像", "ファイル"} <= parser("ja", {6: "ファイル"}).namespace_names(6)
    assert {"分類", "分类"} <= parser("zh", {14: "Category"}).namespace_names(14)
    # English keeps exactly its names: the Cleaner's link regex is as fast as before.
    assert parser("en", {6: "File", 14: "Category"}).namespace_names(6) == {"file", "image"}


def test_siteinfo_wins_over_mwconstants():
    # mwconstants lists Bild as an alias of File on dewiki; this siteinfo names namespace 100 so.
    titles = parser("de", {0: "", 6: "Datei", 100: "Bild"})
    assert titles.parse("Bild:X").ns == 100
    assert "bild" not in titles.namespace_names(6)


def test_local_namespaces_of_a_wiki_without_siteinfo():
    titles = TitleParser(SiteInfo(lang="ja"))  # no namespaces in the siteinfo
    assert titles.normalize("画像:X.jpg") == "ファイル:X.jpg"
    assert TitleParser(SiteInfo()).normalize("project:Foo") == "Wikipedia:Foo"


def test_every_wiki_has_its_file_and_category_names():
    """What LOCAL_ALIASES listed by hand is all in mwconstants, and so is every wiki."""
    by_hand = {"de": "Bild Datei Kategorie Vorlage", "fr": "Fichier Catégorie Modèle",
               "es": "Archivo Imagen Categoría Plantilla", "it": "Immagine Categoria",
               "nl": "Bestand Afbeelding Categorie Sjabloon", "ru": "Файл Изображение Категория",
               "pt": "Ficheiro Arquivo Imagem Categoria Predefinição", "sv": "Fil Bild Kategori Mall",
               "pl": "Plik Grafika Kategoria Szablon", "el": "Αρχείο Εικόνα Κατηγορία Πρότυπο"}
    english = {k: v for k, v in [(-2, "Media"), (0, ""), (6, "File"), (10, "Template"),
                                 (14, "Category")]}
    for lang, words in by_hand.items():
        titles = parser(lang, english)
        names = set().union(*(titles.namespace_names(k) for k in (6, 10, 14)))
        assert {w.casefold() for w in words.split()} <= names, lang
    assert len([lang for lang in ("bn", "hi", "ko", "fa", "he", "th", "uk") if local_namespaces(lang)]) == 7


# ---- image options ----------------------------------------------------------------------------

@pytest.mark.parametrize("lang, options, captions", [
    ("vi", ["nhỏ", "trái", "250px", "x200px", "thumb", "alt=Hà Nội"], ["Chú thích", "Hà Nội"]),
    ("de", ["mini", "links", "miniatur", "hochkant=1.2", "300px", "verweis="], ["Der Dom", "Links"]),
    ("ja", ["サムネイル", "左", "250ピクセル", "リンク=東京"], ["東京の夜景"]),
    ("zh", ["缩略图", "縮圖", "左", "200像素"], ["北京的夜景"]),
    # mwconstants lists Arabic size forms as bare endings: only after a number are they options.
    ("ar", ["تصغير", "يسار", "250بك", "250px"], ["صورة عن المدينة", "بك"]),
    ("en", ["thumb", "upright", "upright=1.5", "page 3", "200x300px"], ["px", "Left bank", "thumb up"]),
])
def test_image_options(lang, options, captions):
    words = image_option_words(lang)
    assert [o for o in options if not words.is_option(o)] == []
    assert [c for c in captions if words.is_option(c)] == []


# ---- fake dumps through the parser ------------------------------------------------------------

FAKE = {
    "vi": ({-2: "Phương tiện", 6: "Tập tin", 10: "Bản mẫu", 14: "Thể loại"},
           "'''Hà Nội''' là thủ đô của [[Việt Nam]]. [[Hình:Hanoi.jpg|nhỏ|250px|trái|Chú thích ảnh]]"
           "Thành phố nằm bên bờ sông Hồng.\n\n[[Thể loại:Thủ đô châu Á]]\n[[Hình:Logo.png]]",
           ["nhỏ", "trái", "250px", "Chú thích", "Hình", "Logo"], ["Thủ đô châu Á"]),
    "ja": ({-2: "メディア", 6: "ファイル", 10: "Template", 14: "Category"},
           "'''東京'''は日本の[[首都]]である。 [[画像:Tokyo.jpg|サムネイル|250px|左|東京の夜景]]"
           "人口は約1400万人である。\n\n[[カテゴリ:日本の都市]]",
           ["サムネイル", "250px", "左|", "夜景", "カテゴリ"], ["日本の都市"]),
    "zh": ({-2: "Media", 6: "File", 10: "Template", 14: "Category"},
           "'''北京'''是中国的[[首都]]。 [[圖像:Beijing.jpg|縮圖|左|北京的夜景]]北京有三千年的历史。"
           "\n\n[[分類:中国城市]]\n[[分类:首都]]",
           ["縮圖", "夜景", "分類", "分类"], ["中国城市", "首都"]),
    "ar": ({-2: "ميديا", 6: "ملف", 10: "قالب", 14: "تصنيف"},
           "'''القاهرة''' هي عاصمة [[مصر]]. [[ملف:Cairo.jpg|تصغير|يسار|منظر المدينة]]"
           "[[صورة:Nile.jpg|تصغير|نهر النيل]] تقع المدينة على ضفاف النيل.\n\n[[تصنيف:عواصم]]",
           ["تصغير", "يسار", "منظر المدينة", "نهر النيل"], ["عواصم"]),
    "de": ({-2: "Medium", 6: "Datei", 10: "Vorlage", 14: "Kategorie"},
           "'''Köln''' ist eine Stadt am [[Rhein]]. [[Datei:Koeln.jpg|mini|links|Der Dom]]"
           "[[Bild:Rhein.jpg|miniatur|hochkant=1.2|Der Fluss]] Sie hat eine Million Einwohner."
           "\n\n[[Kategorie:Ort am Rhein]]",
           ["mini", "links", "Der Dom", "hochkant", "Der Fluss"], ["Ort am Rhein"]),
}


def parse_fake(path: Path, lang: str | None = None) -> list:
    return list(iter_articles(ParseConfig(inputs=[str(path)], output="", lang=lang)))


@pytest.mark.parametrize("lang", sorted(FAKE))
def test_file_links_and_categories_in_every_language(tmp_path, lang):
    namespaces, text, leaks, categories = FAKE[lang]
    dump = write_fake_dump(tmp_path / f"{lang}wiki.xml", [("Seite", text)], lang=lang,
                           namespaces=namespaces)
    [article] = parse_fake(dump)
    sentences = [s for _, _, _, s in article.sentences()]
    assert sentences, article
    assert [w for w in leaks if any(w in s for s in sentences)] == [], sentences
    assert article.categories == categories
    assert [link.target for link in article.links if link.start >= 0][:1] != [], article.links


# ---- the declared language against the text ---------------------------------------------------

JAPANESE = ("'''東京'''は日本の[[首都]]であり、政治と経済の中心地である。"
            "[[画像:Tokyo.jpg|サムネイル|250px|左|東京の夜景]]人口は約1400万人である。"
            "江戸時代には江戸と呼ばれ、徳川幕府が置かれていた。明治時代に東京と改称された。\n\n") * 20


@pytest.fixture(scope="module")
def japanese_declared_english(tmp_path_factory) -> Path:
    """Japanese pages in a dump whose siteinfo says enwiki, English namespaces."""
    text = JAPANESE + "[[カテゴリ:日本の都市]]\n[[Category:首都]]"
    return write_fake_dump(tmp_path_factory.mktemp("ja") / "wiki.xml",
                           [(f"東京{i}", text) for i in range(4)], lang="en")


def test_lang_fixes_a_japanese_dump_declared_english(japanese_declared_english, tmp_path):
    declared = run_cli("parse", "-q", "-i", japanese_declared_english, "-o", tmp_path / "declared")
    assert declared.returncode == 0, describe(declared)
    [warning] = declared.stderr.splitlines()
    assert warning.startswith("wikipairs: warning: ") and "declares language en" in warning
    assert "looks ja" in warning and warning.endswith("pass --lang ja"), warning

    fixed = run_cli("parse", "-q", "-i", japanese_declared_english, "-o", tmp_path / "fixed",
                    "--lang", "ja")
    assert fixed.returncode == 0 and fixed.stderr == "", describe(fixed)
    stats = json.loads((tmp_path / "fixed" / "parse_stats.json").read_text())
    assert stats["lang"] == "ja" and "english" not in stats["sentence_splitter"], stats
    rows = read_articles(tmp_path / "fixed")
    assert rows[0]["categories"] == ["日本の都市", "首都"]
    sentences = [s for sec in rows[0]["sections"] for p in sec["paragraphs"] for s in p["sentences"]]
    assert sentences and not any("サムネイル" in s or "250px" in s for s in sentences), sentences


def test_dewiki_minidump_declares_english_but_is_german(capsys):
    path = wiki_file("dewiki-minidump-dbpedia.xml.bz2")
    declared, found = language_mismatch(str(path))
    assert declared == "en" and found is not None and found.lang == "de", found
    line = check_declared_language([str(path)])
    assert capsys.readouterr().err == line + "\n"
    assert line.startswith("wikipairs: warning: dewiki-minidump-dbpedia.xml.bz2 declares language en")
    assert line.endswith("pass --lang de")
    assert check_declared_language([str(path)], lang="de") is None  # --lang given: nothing said


@pytest.mark.parametrize("name, lang", [
    ("jawiki-sample.xml.bz2", "ja"), ("bnwiki-sample.xml.bz2", "bn"), ("elwiki-sample.xml.bz2", "el"),
    ("elwiki-truncated.xml.xz", "el"), ("frwiki-wikiplaintext-sample.xml.bz2", "fr"),
    ("enwiki-sample-gensim.xml.bz2", "en"), ("enwiki-table-markup.xml.bz2", "en"),
    ("enwiki-minidump-dbpedia.xml.bz2", "en"), ("enwiki-enwik8-head.xml.bz2", "en"),
    ("enwiki-apache-category.xml.bz2", "en"), ("enwiki-2019-head.xml.bz2", "en"),
    ("enwiki-wikibrain-p.xml.bz2", "en"),
])
def test_no_warning_for_dumps_in_their_language(name, lang, capsys):
    path = str(wiki_file(name))
    assert language_mismatch(path) == (lang, None)
    assert check_declared_language([path]) is None and capsys.readouterr().err == ""


@pytest.mark.parametrize("declared, text, guess", [
    ("en", JAPANESE, "ja"),
    ("en", "'''北京'''是中华人民共和国的首都，也是全国的政治和文化中心。" * 60, "zh"),
    ("ja", "'''北京'''是中华人民共和国的首都，也是全国的政治和文化中心。" * 60, "zh"),
    ("zh", JAPANESE, "ja"),
    ("en", "'''Москва''' — столица России, крупнейший по численности населения город страны. " * 40, "ru"),
    ("ja", "'''Paris''' est la capitale de la France et le chef-lieu de la région. " * 40, "fr"),
    ("fr", "'''Berlin''' ist die Hauptstadt der Bundesrepublik und mit den meisten Einwohnern. " * 40, "de"),
])
def test_mismatch_guesses(declared, text, guess):
    found = mismatch(declared, [text])
    assert found is not None and found.lang == guess, found
    assert mismatch(guess, [text]) is None


def test_too_little_text_gives_no_verdict():
    assert mismatch("en", ["'''東京'''は日本の首都である。"]) is None
