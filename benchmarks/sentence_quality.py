#!/usr/bin/env python3
"""Sentence splitting quality per real dump, and per splitter where the choice matters.

For each dump in ../shared/data/wiki (parsed with `wikipairs.parse.iter_articles`, as `wikipairs
parse` does): the splitter used (`--sentence-splitter auto`), sentences, the share over 400
characters (paragraphs left unsplit show up there), and the mean sentence length in characters.
Dumps whose language has no installed punkt_tab model are parsed again with Punkt trained on the
dump (`punkt-trained`, the former default) for comparison. For Japanese, the share of 。 followed
by a new sentence (not a closing bracket, not the paragraph's end) that end a sentence.

Thai has no dump here: XQuAD's 240 Thai paragraphs are split with several THAI_MIN_CHARS and
compared with the sentence count of their English originals (SQuAD dev, Punkt).

Usage: NLTK_DATA=../shared/data/nltk_data .venv/bin/python benchmarks/sentence_quality.py
"""
from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

from wikipairs.text import sentences
from wikipairs.parse import ParseConfig, iter_articles
from wikipairs.text.sentences import SentenceSplitter

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"
LONG = 400
_INSIDE = re.compile(r"。(?![」』）)〉》】\"'”’]|$)")


def dump_figures(path: Path, method: str) -> dict:
    info = {}
    paragraphs = [p for article in iter_articles(
        ParseConfig(inputs=[str(path)], output="", sentence_splitter=method), Counter(), info)
        for section in article.sections for p in section.paragraphs]
    lengths = [len(s) for p in paragraphs for s in p]
    figures = {"splitter": info["sentence_splitter"], "sentences": len(lengths),
               "over_400": sum(n > LONG for n in lengths) / len(lengths),
               "mean_chars": sum(lengths) / len(lengths)}
    if info["lang"] == "ja":
        ends = sum(1 for p in paragraphs for s in p[:-1] if s.endswith("。"))
        inside = sum(len(_INSIDE.findall(s)) for p in paragraphs for s in p)
        figures["maru_boundaries"] = ends / (ends + inside)
    return {"lang": info["lang"], **figures}


def thai_figures(min_chars: tuple[int, ...] = (40, 50, 60, 70, 80)) -> list[str]:
    thai = json.loads((DATA / "xquad" / "xquad.th.json").read_text(encoding="utf-8-sig"))
    squad = json.loads((DATA / "squad" / "dev-v1.1.json").read_text(encoding="utf-8"))
    english = {q["id"]: p["context"] for a in squad["data"] for p in a["paragraphs"]
               for q in p["qas"]}
    pairs = [(p["context"].strip("\ufeff "), english[p["qas"][0]["id"]])
             for a in thai["data"] for p in a["paragraphs"]]
    punkt = SentenceSplitter.for_language("en")
    english_counts = [len(punkt.split(e)) for _, e in pairs]
    splitter = SentenceSplitter.for_language("th")
    lines = [f"XQuAD Thai, {len(pairs)} paragraphs; English originals: {sum(english_counts)} "
             "sentences (Punkt)"]
    default = sentences.THAI_MIN_CHARS
    try:
        for n in min_chars:
            sentences.THAI_MIN_CHARS = n
            counts = [len(splitter.split(t)) for t, _ in pairs]
            off = sum(abs(a - b) for a, b in zip(counts, english_counts)) / len(pairs)
            lines.append(f"  THAI_MIN_CHARS={n:<3} {sum(counts):>5} sentences, mean |Thai - "
                         f"English| per paragraph {off:.2f}" + ("  (default)" if n == default else ""))
    finally:
        sentences.THAI_MIN_CHARS = default
    return lines


def main() -> None:
    print(f"{'dump':<40}{'splitter':<30}{'sentences':>10}{'>400':>8}{'mean':>7}  ja: 。 ends")
    for path in sorted((DATA / "wiki").glob("*.xml.bz2")):
        rows = [dump_figures(path, "auto")]
        if not rows[0]["splitter"].startswith("punkt_tab"):  # the former default, to compare
            rows.append(dump_figures(path, "punkt-trained"))
        for row in rows:
            extra = f"  {row['maru_boundaries']:.3f}" if "maru_boundaries" in row else ""
            print(f"{path.name:<40}{row['splitter']:<30}{row['sentences']:>10,}"
                  f"{row['over_400']:>8.2%}{row['mean_chars']:>7.0f}{extra}")
    for line in thai_figures():
        print(line)


if __name__ == "__main__":
    main()
