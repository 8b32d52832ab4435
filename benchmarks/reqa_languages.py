"""ReQA and BM25 in every language of ../shared/data/xquad (issue 19): the quality bar.

    .venv/bin/python benchmarks/reqa_languages.py            # every XQuAD file there, ~30 s
    .venv/bin/python benchmarks/reqa_languages.py --langs hi,th --analyzer none --markdown

Each XQuAD file (240 SQuAD v1.1 dev paragraphs and their 1,190 questions, translated) is built as
`wikipairs reqa build` builds it (language detected from the text, that language's sentence
splitter) and evaluated with `reqa eval --model bm25` (that language's analysis). The English
row is SQuAD dev limited to the same 240 paragraphs (the XQuAD question ids). Bars, per language:
- candidates within 10% of the English count on the same paragraphs (Thai: 25%);
- BM25 R@1 ("reqa" protocol) at least the independent figure of ../shared/data/README.md minus
  2 points (es/ru/vi/ro "74-76": 74 taken; hi 72, tr 69, ar 67). Thai has no independent figure
  (the independent check leaves Thai unsplit): its bar guards against a regression only.
tests/test_reqa_languages.py runs `language_row` for every file against the same bars.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data"
XQUAD = SHARED / "xquad"
SQUAD_DEV = SHARED / "squad" / "dev-v1.1.json"

# The independent BM25 R@1 of ../shared/data/README.md (the lower end of "74-76"), in %.
INDEPENDENT_R1 = {"es": 74.0, "ru": 74.0, "vi": 74.0, "ro": 74.0, "hi": 72.0, "tr": 69.0,
                  "ar": 67.0}
MARGIN = 2.0
THAI_R1_FLOOR = 60.0  # no independent figure: a regression guard (64.9 when written)
CANDIDATE_TOLERANCE = {"th": 0.25}  # else 0.10


def xquad_files() -> dict[str, Path]:
    return {p.name.split(".")[1]: p for p in sorted(XQUAD.glob("xquad.*.json"))}


def english_same_paragraphs() -> dict:
    """SQuAD dev limited to the paragraphs XQuAD translates (those holding its question ids)."""
    ids = set()
    for path in xquad_files().values():
        ids |= {q["id"] for a in json.loads(path.read_text("utf-8"))["data"]
                for p in a["paragraphs"] for q in p["qas"]}
        break  # every file has the same ids
    squad = json.loads(SQUAD_DEV.read_text("utf-8"))
    data = []
    for article in squad["data"]:
        paragraphs = [p for p in article["paragraphs"] if any(q["id"] in ids for q in p["qas"])]
        if paragraphs:
            data.append(dict(article, paragraphs=paragraphs))
    return {"version": squad.get("version", ""), "data": data}


def bars(lang: str) -> dict:
    r1 = INDEPENDENT_R1.get(lang)
    return {"candidate_tolerance": CANDIDATE_TOLERANCE.get(lang, 0.10),
            "independent_r1": r1, "min_r1": (r1 - MARGIN) if r1 is not None else
            THAI_R1_FLOOR if lang == "th" else None}


def language_row(lang: str, squad: dict | None = None, analyzer: str = "auto",
                 stopwords: bool = False, english_candidates: int | None = None) -> dict:
    """Build and BM25-evaluate one language as the CLI does; the figures and the bars."""
    from wikipairs.trainer.reqa.bm25 import BM25Config, BM25Scorer
    from wikipairs.trainer.reqa.data import build_reqa, load_squad
    from wikipairs.trainer.reqa.metrics import EvalSet, evaluate_chunks

    started = time.monotonic()
    path = xquad_files().get(lang)
    if squad is None:
        squad = load_squad(str(path))
    data = build_reqa(squad, source=str(path or lang))
    eval_set = EvalSet.from_data(data)
    scorer = BM25Scorer(data.candidates, BM25Config(analyzer=analyzer, stopwords=stopwords),
                        lang=data.manifest["lang"])
    results = evaluate_chunks(eval_set, scorer.score_chunks(eval_set.texts, 1024,
                                                            eval_set.text_langs))
    analysis = scorer.describe()["analysis"][data.manifest["lang"]]
    row = {"lang": lang, "detected": data.manifest["lang"], "evidence": data.manifest["lang_evidence"],
           "splitter": data.manifest["splitter"], "candidates": data.num_candidates,
           "stemmer": analysis["stemmer"], "stopwords": analysis["stopwords"],
           "R@1 paper": 100 * results["paper"]["R@1"], "R@1": 100 * results["reqa"]["R@1"],
           "R@5": 100 * results["reqa"]["R@5"], "MRR": 100 * results["reqa"]["MRR"],
           "seconds": time.monotonic() - started, **bars(lang)}
    if english_candidates:
        row["vs_english"] = data.num_candidates / english_candidates - 1
    return row


def failures(row: dict) -> list[str]:
    """The bars a row misses (empty: it passes)."""
    out = []
    if row["detected"] != row["lang"]:
        out.append(f"detected {row['detected']}, not {row['lang']}")
    if "vs_english" in row and abs(row["vs_english"]) > row["candidate_tolerance"]:
        out.append(f"candidates {row['vs_english']:+.1%} of English "
                   f"(limit {row['candidate_tolerance']:.0%})")
    if row["min_r1"] is not None and row["R@1"] < row["min_r1"]:
        out.append(f"R@1 {row['R@1']:.2f} < {row['min_r1']:.1f}")
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--langs", default="", help="comma-separated (default: every file)")
    parser.add_argument("--analyzer", default="auto", help="auto, none or a language code")
    parser.add_argument("--stopwords", action="store_true", help="drop stopwords where listed")
    parser.add_argument("--markdown", action="store_true", help="print a README table")
    args = parser.parse_args()
    langs = [lang for lang in args.langs.split(",") if lang] or list(xquad_files())
    english = language_row("en", english_same_paragraphs(), args.analyzer, args.stopwords)
    rows = [english] + [language_row(lang, None, args.analyzer, args.stopwords,
                                     english["candidates"]) for lang in langs]
    failed = 0
    if args.markdown:
        print("| XQuAD | splitter | candidates | vs English | stemmer | R@1 (reqa) | bar | "
              "R@5 | MRR |")
        print("|---|---|---:|---:|---|---:|---:|---:|---:|")
    for row in rows:
        bad = failures(row) if row["lang"] != "en" else []
        failed += bool(bad)
        vs = f"{row['vs_english']:+.1%}" if "vs_english" in row else "-"
        bar = f"{row['min_r1']:.0f}" if row["min_r1"] is not None else "-"
        if args.markdown:
            print(f"| {row['lang']} | {row['splitter']} | {row['candidates']:,} | {vs} | "
                  f"{row['stemmer']} | {row['R@1']:.2f} | {bar} | {row['R@5']:.2f} | "
                  f"{row['MRR']:.2f} |")
        else:
            print(f"{row['lang']:<3} {row['splitter']:<18} {row['candidates']:>6,} {vs:>7} "
                  f"{row['stemmer']:<44} R@1 {row['R@1']:6.2f} (bar {bar:>2}) "
                  f"R@5 {row['R@5']:6.2f} MRR {row['MRR']:6.2f} {row['seconds']:5.1f} s"
                  + (f"  FAILS: {'; '.join(bad)}" if bad else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
