"""The declared-language warning for Enterprise HTML dumps: the records' `in_language` checked
against their paragraphs' text by the rules of wikipairs.text.language_check (issue 23)."""
from __future__ import annotations

from conftest import SHARED_DATA, describe, run_cli
from test_enterprise_html import lead, record, write_dump
from wikipairs.reading import check_declared_language, language_mismatch
from wikipairs.reading.language_sample import html_paragraph_text

FRENCH = ("La ville est située sur la rive gauche du fleuve, dans une plaine qui est traversée par "
          "la route nationale. Les habitants de la commune sont appelés les Vellois et la "
          "population du village est passée de mille à deux mille habitants au cours du siècle "
          "dernier, pour une superficie qui est restée la même. ")
JAPANESE = "ヴェルは海に面した町であり、人口は約二千人である。町の名前は古い言葉に由来する。" * 3
HTML_SAMPLE = SHARED_DATA / "html" / "frwiki-NS0-20231123-ENTERPRISE-HTML-sample.json.tar.gz"


def dump(tmp_path, declared: str, text: str, name: str = "d.json.tar.gz"):
    records = [record(f"Page {i}", i, lead(text * 2) + '<table class="infobox"><tr><td>'
                      'the of and is was</td></tr></table>', lang=declared) for i in range(1, 9)]
    redirect = record("Redirect", 99, "", lang=declared)
    redirect["article_body"]["html"] = ('<html><head><link rel="mw:PageProp/redirect" '
                                        'href="./Page_1"/></head><body></body></html>')
    return write_dump(tmp_path / name, {"part_0.ndjson": [redirect, *records]})


def test_a_dump_whose_records_declare_the_wrong_language_is_told(tmp_path):
    declared, found = language_mismatch(str(dump(tmp_path, "en", FRENCH)))
    assert declared == "en" and found is not None and found.lang == "fr", found
    declared, found = language_mismatch(str(dump(tmp_path, "de", JAPANESE, "ja.json.tar.gz")))
    assert declared == "de" and found is not None and found.lang == "ja", found


def test_a_dump_in_its_declared_language_is_not(tmp_path):
    assert language_mismatch(str(dump(tmp_path, "fr", FRENCH))) == ("fr", None)
    assert language_mismatch(str(dump(tmp_path, "ja", JAPANESE, "ja.json.tar.gz"))) == ("ja", None)
    assert language_mismatch(str(HTML_SAMPLE)) == ("fr", None)


def test_the_warning_line_and_lang(tmp_path, capsys):
    path = str(dump(tmp_path, "en", FRENCH))
    line = check_declared_language([path])
    assert line.startswith("wikipairs: warning: d.json.tar.gz declares language en but its "
                           "text looks fr"), line
    assert line.endswith("pass --lang fr") and capsys.readouterr().err.strip() == line
    assert check_declared_language([path], lang="fr") is None  # --lang given: nothing checked


def test_paragraph_text_only():
    page = ('<p>Un <b>mot</b><sup class="mw-ref reference"><a>[1]</a></sup> &amp; un autre.</p>'
            '<table class="infobox"><tr><td>the of</td></tr></table><p>Fin.</p>'
            '<style>.x{}</style><ol class="references"><li>the ref</li></ol>')
    assert html_paragraph_text(page) == "Un mot & un autre.\nFin."


def test_parse_warns_on_stderr_and_goes_on(tmp_path):
    path = dump(tmp_path, "en", FRENCH)
    result = run_cli("parse", "-i", path, "-o", tmp_path / "out", "--sentence-splitter",
                     "sentencex")
    assert result.returncode == 0, describe(result)
    warnings = [line for line in result.stderr.splitlines() if "declares language" in line]
    assert len(warnings) == 1 and "looks fr" in warnings[0], describe(result)
