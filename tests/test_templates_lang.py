"""Inline templates of non-English wikis (wikipairs.text.templates: FR, JA, DE, SHARED): wikitext
in, sentence text out, link spans exact; and on the real frwiki and jawiki samples, fewer
templates dropped inline than with the English table alone (what every wiki used before)."""
from __future__ import annotations

from collections import Counter

import pytest

import wikipairs.text.wikitext as wikitext
from conftest import cleaner, page_article as article, page_sentences as sentences, wiki_file
from wikipairs.parse import ParseConfig, iter_articles
from wikipairs.text import template_drops
from wikipairs.text.templates import renderer_for

# (lang, wikitext, the sentences it becomes)
CASES = [
    # French: centuries (Modèle:Siècle and its variants)
    ("fr", "La fête devient laïque au {{s|XX}}.", ["La fête devient laïque au XXe siècle."]),
    ("fr", "Attestée au {{s-|XIV}} en Angleterre.", ["Attestée au XIVe siècle en Angleterre."]),
    ("fr", "Au {{siècle|I|er}} vivait Valentin.", ["Au Ier siècle vivait Valentin."]),
    ("fr", "Au {{s mini-|XVI|e}} siècle on peint.", ["Au XVIe siècle on peint."]),
    ("fr", "Entre les {{s2|XIX|XX}} il change.", ["Entre les XIXe et XXe siècles il change."]),
    ("fr", "Aux {{s2-|I|e|II|e}} elle naît.", ["Aux Ier et IIe siècles elle naît."]),
    ("fr", "Du {{sp-|I|e|-|II|e|s}} il reste peu.", ["Du Ier – IIe siècles il reste peu."]),
    ("fr", "Au {{XIXe siècle}} la ville grandit.", ["Au XIXe siècle la ville grandit."]),
    ("fr", "Le pape Gélase {{Ier}} et Louis {{XXVIII}} régnèrent.",
     ["Le pape Gélase Ier et Louis XXVIII régnèrent."]),
    ("fr", "Le {{1er}} jour et la {{3e|série}} du {{17e|régiment}} partent.",
     ["Le 1er jour et la 3e série du 17e régiment partent."]),
    ("fr", "Le XX{{e}} et le I{{er}} arrivent.", ["Le XXe et le Ier arrivent."]),
    # dates (Modèle:Date, Date-, Date de naissance)
    ("fr", "Il naît le {{Date de naissance|14|4|1452|julien=oui}} à Vinci.",
     ["Il naît le 14 avril 1452 à Vinci."]),
    ("fr", "Fêté le {{date-|14 février}} chaque année.", ["Fêté le 14 février chaque année."]),
    ("fr", "Le {{date|1|mai|1519|en France}} il meurt.", ["Le 1er mai 1519 il meurt."]),
    ("fr", "En {{date||septembre|1499}} il part.", ["En septembre 1499 il part."]),
    ("fr", "En {{date|1482}} il part.", ["En 1482 il part."]),
    ("fr", "Le {{date|1 janvier 2000}} commence.", ["Le 1er janvier 2000 commence."]),
    ("fr", "À {{heure|19|30|fuseau=UTC}} tout ferme.", ["À 19 h 30 UTC tout ferme."]),
    # numbers and units (Modèle:Unité, Nombre, formatnum)
    ("fr", "Il a {{unité|16|ans}} et {{nombre|6000|feuillets}}.",
     ["Il a 16 ans et 6 000 feuillets."]),
    ("fr", "Une surface de {{unité|95.48|km|2}} environ.", ["Une surface de 95,48 km2 environ."]),
    ("fr", "Entre {{unité|2|à|3|m}} de haut.", ["Entre 2 à 3 m de haut."]),
    ("fr", "La ville compte {{formatnum:16780}} habitants.", ["La ville compte 16 780 habitants."]),
    ("fr", "Il fait {{tmp|21.5| °C}} en été.", ["Il fait 21,5 °C en été."]),
    ("fr", "Le budget est de {{euro|14172}} par an.", ["Le budget est de 14 172 € par an."]),
    ("fr", "L'éthanol {{fchim|C|2|H|5|OH}} et le {{CO2}} brûlent.",
     ["L'éthanol C2H5OH et le CO2 brûlent."]),
    # quotations, languages, asides
    ("fr", "Il dit {{citation|chère et douce mère}} à son père.",
     ["Il dit « chère et douce mère » à son père."]),
    ("fr", "Le mot {{langue|pt|''dia dos namorados''}} désigne la fête.",
     ["Le mot dia dos namorados désigne la fête."]),
    ("fr", "Ses carnets {{incise|la plupart fragmentaires}} survivent.",
     ["Ses carnets — la plupart fragmentaires — survivent."]),
    ("fr", "Il part {{incise|vers 1464|fin}}.", ["Il part — vers 1464."]),
    ("fr", "Des fleurs, des cœurs{{etc.}} sont offerts.",
     ["Des fleurs, des cœurs, etc. sont offerts."]),
    ("fr", "On parle de {{japonais|''honmei choco''|本命チョコ}} au Japon.",
     ["On parle de honmei choco (本命チョコ) au Japon."]),
    ("fr", "{{Qui|Certains}} le disent.", ["Certains le disent."]),
    # Russian, Hebrew, Chinese, Arabic: links to pages not yet written, words of other languages
    ("ru", "Фильм «{{Не переведено 3|Онегин (фильм)|Онегин|en|Onegin}}» вышел.",
     ["Фильм «Онегин» вышел."]),
    ("ru", "Пётр Чайковский ({{ДатаРождения|25|4|1840|7|5}}, Воткинск — {{ДатаСмерти|6|11|1893}}, "
           "Санкт-Петербург) — композитор.",
     ["Пётр Чайковский (25 апреля (7 мая) 1840, Воткинск — 6 ноября 1893, Санкт-Петербург) — "
      "композитор."]),
    ("he", "(בערבית: {{ערבית|القُدس}}; באנגלית: {{אנ|Jerusalem}}) עיר. פיתגורס {{דרוש מקור}}.",
     ["(בערבית: القُدس; באנגלית: Jerusalem) עיר.", "פיתגורס."]),
    ("zh", "他出演了{{link-en|星球大战|Star Wars}}和{{tsl|en|The Matrix|黑客帝国}}。",
     ["他出演了星球大战和黑客帝国。"]),
    ("ar", "اللغة {{لغة|en|English}} مهمة.", ["اللغة English مهمة."]),
    # Spanish, Italian, Polish, Ukrainian, Korean: dates, centuries, numbers kept up to date,
    # pages not yet written, a word of another language
    ("es", "Fundada el {{fecha|3|5|1850}} por colonos. En el {{siglo|XIX|d}} creció. Tiene "
           "{{esd|10 km²}}.", ["Fundada el 3 de mayo de 1850 por colonos.",
                               "En el siglo XIX d. C. creció.", "Tiene 10 km²."]),
    ("it", "La città ha {{TA|12 345|fonte}} abitanti.", ["La città ha 12 345 abitanti."]),
    ("pl", "Nakręcił {{link-interwiki|pl=Wojna i pokój (film)|lang=en|tekst=film}} w 1956. Ma "
           "{{formatnum:1234}} i {{formatnum:12345}} stron.",
     ["Nakręcił film w 1956.", "Ma 1234 i 12 345 stron."]),  # (no separator in four digits)
    ("uk", "Фільм «{{Не перекладено|Онєгін (фільм)|Онєгін|en|Onegin}}» вийшов.",
     ["Фільм «Онєгін» вийшов."]),
    ("ko", "사과({{llang|en|apple}})는 과일이다.", ["사과(apple)는 과일이다."]),
    # Bengali, Greek: their own names of {{IPA}} and {{convert}}
    ("bn", "ধ্বনি {{আধ্বব|[s]}} শব্দ ধরে রাখে। আয়তন {{রূপান্তর|306|km2|sqmi}}।",
     ["ধ্বনি [s] শব্দ ধরে রাখে।", "আয়তন 306 km²।"]),
    ("el", "Μια μετατόπιση προς το {{ΔΦΑ|/i/}} ([[ιωτακισμός]]).",
     ["Μια μετατόπιση προς το /i/ (ιωτακισμός)."]),
    # German
    ("de", "Er schreibt: {{\"|Es liegt am Tage.}} Dann geht er.",
     ["Er schreibt: „Es liegt am Tage.“", "Dann geht er."]),
    ("de", "Es sind {{formatnum:16780}} Einwohner.", ["Es sind 16.780 Einwohner."]),
    # Japanese
    ("ja", "欧州連合（{{en|European Union}}）は連合である。", ["欧州連合（European Union）は連合である。"]),
    ("ja", "彼は{{ilq|そうね}}と言った。", ["彼は「そうね」と言った。"]),
    ("ja", "{{読み仮名|'''物理学'''|ぶつりがく|{{lang-en-short|physics}}}}は学問である。",
     ["物理学（ぶつりがく、physics）は学問である。"]),
    ("ja", "{{interlang|en|E.U. (TV series)|E.U.}}は番組である。", ["E.U.は番組である。"]),
    ("ja", "{{要出典範囲|最近の研究|date=2021年5月}}が示す。", ["最近の研究が示す。"]),
    # unknown templates are still dropped; the sentence they took words out of goes with them
    ("fr", "Un {{modèle inconnu|mot}} reste. Une autre phrase reste.", ["Une autre phrase reste."]),
]


@pytest.mark.parametrize("lang, text, expected", CASES, ids=[f"{c[0]}:{c[1][:40]}" for c in CASES])
def test_rendered(lang, text, expected):
    assert sentences(lang, text) == expected


# (lang, wikitext, the sentence, [(link target, anchor)])
LINK_CASES = [
    # (a punctuation mark after each link: the wikitext path's link trail takes the letters that
    # follow a link into its anchor, on every wiki)
    ("ja", "{{仮リンク|アダム・ビード|en|Adam Bede}}（1859年）は小説である。",
     "アダム・ビード（1859年）は小説である。", [("アダム・ビード", "アダム・ビード")]),
    ("ja", "雑誌「{{仮リンク|マダム・フィガロ|fr|Madame Figaro|label=Madame Figaro}}」に載る。",
     "雑誌「Madame Figaro」に載る。", [("マダム・フィガロ", "Madame Figaro")]),
    ("ja", "{{ill2|2007年トルコ憲法改正国民投票|en|Turkish constitutional referendum, 2007"
           "|label=2007年の憲法改正}}、2010年に決まった。", "2007年の憲法改正、2010年に決まった。",
     [("2007年トルコ憲法改正国民投票", "2007年の憲法改正")]),
    ("ja", "[[言語]]、{{仮リンク|言語中枢|en|Language center}}、[[脳]]。", "言語、言語中枢、脳。",
     [("言語", "言語"), ("言語中枢", "言語中枢"), ("脳", "脳")]),
    ("fr", "L'église de la {{Lien|langue=en|trad=Whitefriar Street Carmelite Church"
           "|fr=Église carmélite de la rue Whitefriar|texte=rue Whitefriar}} à Dublin.",
     "L'église de la rue Whitefriar à Dublin.",
     [("Église carmélite de la rue Whitefriar", "rue Whitefriar")]),
    ("fr", "Le pape {{noble|Alexandre VI (pape)}} et le roi {{Souverain|Louis|XII}} règnent.",
     "Le pape Alexandre VI et le roi Louis XII règnent.",
     [("Alexandre VI (pape)", "Alexandre VI"), ("Louis XII", "Louis XII")]),
    ("fr", "Voir les {{page h'|Saint Valentin|Valentin}} connus.", "Voir les Valentin connus.",
     [("Saint Valentin", "Valentin")]),
    # {{s|XV}} is a link of the page (Parsoid's HTML of frwiki's Léonard de Vinci: 41 of them)
    ("fr", "Au {{s|XV}}, au {{s-|XVI}} et au {{s-|19}}.",
     "Au XVe siècle, au XVIe siècle et au 19e siècle.", [("XVe siècle", "XVe siècle")]),
]


@pytest.mark.parametrize("lang, text, expected, links", LINK_CASES,
                         ids=[f"{c[0]}:{c[1][:40]}" for c in LINK_CASES])
def test_links_exact(lang, text, expected, links):
    found = article(lang, text)
    assert [s for _, _, _, s in found.sentences()] == [expected]
    assert [(link.target, link.anchor) for link in found.links] == links
    for link in found.links:
        sentence = found.sections[link.section].paragraphs[link.paragraph][link.sentence]
        assert sentence[link.start:link.end] == link.anchor


@pytest.mark.parametrize("name, args, expected", [
    # before Christ (the sentence splitter cuts "av. J.-C." in two, whoever wrote it)
    ("-s", {"1": "I", "2": "er"}, "Ier siècle av. J.-C."),
    ("-s-", {"1": "VI", "2": "e"}, "VIe siècle av. J.-C."),
    ("-sp-", {"1": "VIII", "2": "-", "3": "II", "4": "s"}, "VIIIe – IIe siècles av. J.-C."),
    ("VIIe siècle av. J.-C.", {}, "VIIe siècle av. J.-C."),
    ("date", {"1": "14", "2": "mars", "3": "44", "avJC": "oui"}, "14 mars 44 av. J.-C."),
    ("sp", {"1": "XIX", "2": "e", "3": "-", "4": "XX", "5": "e"}, "XIXe – XXe siècle"),
    ("millénaire", {"1": "II"}, "IIe millénaire"),
    ("ordinal", {"1": "1", "2": "f"}, "1re"),
    ("nombre", {"1": "-1234.5"}, "−1 234,5"),
    ("unité", {"1": "9.81", "2": "m", "3": "s", "4": "-2"}, "9,81 m s−2"),
    ("unité", {"1": "10622 immigrés"}, "10 622 immigrés"),  # the text in the number's argument
    ("nombre", {"1": "252ans"}, "252 ans"),
    ("unité", {"1": "15000", "à": "50000", "2": "habitants"}, "15 000 à 50 000 habitants"),
    ("unité", {"1": "15000", "et": "22000"}, "15 000 et 22 000"),
    ("incise", {"1": "mais non", "2": "non"}, "— mais non"),
    ("citation bloc", {"1": "Trouvant un nid."}, "\n\n\x06« Trouvant un nid. »\n\n\x07"),  # a block, marked
    ("formatnum:12345.5", {}, "12 345,5"),
    ("formatnum:12345", {"1": "R"}, "12345"),
    ("uc:abc", {}, "ABC"),
])
def test_french_renderers(name, args, expected):
    assert renderer_for(name, "fr")(args) == expected


@pytest.mark.parametrize("lang, name, args, expected", [
    ("de", "Höhe", {"1": "1234", "2": "DE-NHN"}, "1.234 m ü. NHN"),  # "ü." ends a sentence for
    ("de", "Höhe", {"1": "512", "2": "AT"}, "512 m ü. A."),  # the splitter: tested here
    ("de", "Zitat", {"Text": "Es liegt am Tage.", "Autor": "Schopenhauer"},  # a block quotation
     "\n\n\x06„Es liegt am Tage.“\n\n\x07"),
    ("de", "\"", {"1": "Ja"}, "„Ja“"),  # an inline one
    ("es", "Cita", {"1": "La vida es sueño.", "2": "Calderón"}, "\n\n\x06La vida es sueño.\n\n\x07"),
    ("it", "Citazione", {"1": "La vita è bella."}, "\n\n\x06La vita è bella.\n\n\x07"),
    ("ru", "Цитата", {"1": "Жизнь прекрасна.", "2": "Автор"}, "\n\n\x06Жизнь прекрасна.\n\n\x07"),
    ("ja", "ISBN2", {"1": "4-89562-301-7"}, "ISBN 4-89562-301-7"),
    ("ja", "Ruby", {"1": "漢字", "2": "かんじ"}, "漢字（かんじ）"),
    ("ja", "ルビ", {"1": "漢字", "2": "かんじ"}, "漢字（かんじ）"),
    ("ja", "仮リンク", {"1": "", "2": "en", "3": "Adam Bede"}, "Adam Bede"),
    ("ru", "formatnum:1234567.5", {}, "1 234 567,5"),
    ("ko", "formatnum:1234567.5", {}, "1,234,567.5"),
    ("ko", "sup", {"1": "2"}, "²"),  # a superscript number as a reader sees it
    ("ko", "sup", {"1": "st"}, "st"),
])
def test_other_renderers(lang, name, args, expected):
    assert renderer_for(name, lang)(args) == expected


def test_english_table_unchanged():
    """English keeps its table: no French, Japanese or magic-word renderers there."""
    for name in ("s", "s-", "unité", "仮リンク", "formatnum:1000", "incise", "XIXe siècle", "CO2",
                 "17e", "ilq"):
        assert renderer_for(name, "en") is None, name
        assert renderer_for(name) is None, name
    assert renderer_for("date", "en")({"1": "14", "2": "février"}) == "14"  # English {{date}}
    assert renderer_for("sup", "en")({"1": "2"}) == "²"  # ("km{{sup|2}}" lost its 2 before)
    assert renderer_for("date", "fr")({"1": "14", "2": "février"}) == "14 février"
    assert renderer_for("formatnum:1000", "ja")({}) == "1,000"
    assert renderer_for("formatnum:{{x", "fr") is None  # an unexpanded argument: dropped
    assert renderer_for("vi", "fr") is None  # a language code, not a roman numeral


# ---- the real samples: the rendered templates are no longer dropped ---------------------------

def _dropped(path: str, english_only: bool, monkeypatch) -> Counter:
    with monkeypatch.context() as m:
        if english_only:  # what every wiki got before: the English table
            m.setattr(wikitext, "renderer_for", lambda name, lang="en": renderer_for(name, "en"))
        counts = Counter()
        for _ in iter_articles(ParseConfig(inputs=[path], output=""), counts):
            pass
    return Counter({key[len(template_drops.NAME):]: n for key, n in counts.items()
                    if key.startswith(template_drops.NAME)})


@pytest.mark.parametrize("dump, rendered", [
    ("frwiki-wikiplaintext-sample.xml.bz2",
     ["citation", "unité", "incise", "nombre", "date-", "s-", "langue", "s", "fchim", "heure",
      "date de naissance", "ier", "lien", "formatnum:", "s mini-", "17e", "o2", "co2"]),
    ("jawiki-sample.xml.bz2", ["仮リンク", "isbn2", "en", "ilq", "interlang", "ill2", "読み仮名"]),
])
def test_real_samples_drop_less(dump, rendered, monkeypatch):
    path = str(wiki_file(dump))
    before = _dropped(path, True, monkeypatch)
    after = _dropped(path, False, monkeypatch)
    for name in rendered:
        assert before[name] > 0, name
        assert after[name] == 0, (name, after[name])
    assert sum(after.values()) < sum(before.values()) / 3


@pytest.mark.parametrize("dump", ["frwiki-wikiplaintext-sample.xml.bz2", "jawiki-sample.xml.bz2"])
def test_real_samples_link_spans(dump):
    links = 0
    for found in iter_articles(ParseConfig(inputs=[str(wiki_file(dump))], output="")):
        for link in found.links:
            if link.sentence < 0:
                continue
            sentence = found.sections[link.section].paragraphs[link.paragraph][link.sentence]
            assert sentence[link.start:link.end] == link.anchor, (found.title, link)
            links += 1
    assert links > 1000
