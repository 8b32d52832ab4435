"""Natural Questions -> SQuAD JSON, as ReQA's nq_to_squad.py (google/retrieval-qa-eval) does.

A record is kept when its FIRST annotation has exactly one short answer and a long answer whose
first token is `<P>` (a paragraph, not a table or list). The paragraph and the answer text are
rebuilt from the non-HTML tokens of their token ranges; `answer_start` is the length of the
rebuilt text before the short answer. Each kept record becomes one SQuAD article (title, one
paragraph, one question, id = example_id).

Both NQ layouts are read, from `.jsonl.gz` or `.jsonl` files (recognized by their first bytes):

- original (`document_html`, `document_tokens` with byte offsets and `html_token`): spacing as
  ReQA rebuilds it: one space between two kept tokens iff the bytes between them hold whitespace
  outside an HTML tag (`token1</A>token2` stays joined);
- simplified (`document_text`, tokens separated by single spaces, no byte offsets): tokens that
  look like HTML tags (`<...>`) are dropped and the rest joined by single spaces (the spacing
  inside the original HTML is not recoverable); the title comes from `document_title` when
  present, else from the `title=` parameter of `document_url`.
"""
from __future__ import annotations

import glob
import gzip
import json
import os
import re
import urllib.parse
from collections import Counter
from collections.abc import Iterator

from .data import ReqaError

_HTML_TOKEN = re.compile(r"^<[^<>]*>$")
_SPACE = re.compile(r"\s")


def clean_text(start_token: int, end_token: int, doc_tokens: list[dict], doc_bytes: bytes,
               ignore_final_whitespace: bool = True) -> str:
    """Text of tokens [start, end) without HTML tokens, spaced as in the HTML (ReQA's rule)."""
    text = []
    for index in range(start_token, end_token):
        token = doc_tokens[index]
        if token["html_token"]:
            continue
        text.append(token["token"])
        next_token = token
        last_index = end_token if ignore_final_whitespace else end_token + 1
        for next_token in doc_tokens[index + 1:last_index]:
            if not next_token["html_token"]:
                break
        chars = doc_bytes[token["end_byte"]:next_token["start_byte"]].decode("utf-8", "replace")
        unclosed = 0  # some tags are missing from the token list: count brackets
        for char in chars:
            if char == "<":
                unclosed += 1
            elif char == ">":
                unclosed -= 1
            elif unclosed == 0 and _SPACE.match(char):
                text.append(" ")
                break
    return "".join(text)


def _simplified_tokens(record: dict) -> list[dict]:
    return [{"token": t, "html_token": bool(_HTML_TOKEN.match(t))}
            for t in record["document_text"].split(" ")]


def _simple_clean(start: int, end: int, tokens: list[dict], trailing_space: bool = False) -> str:
    words = [t["token"] for t in tokens[start:end] if not t["html_token"] and t["token"]]
    text = " ".join(words)
    if trailing_space and words:
        text += " "
    return text


def _title(record: dict) -> str:
    if record.get("document_title"):
        return str(record["document_title"])
    query = urllib.parse.urlparse(record.get("document_url", "").replace("&amp;", "&")).query
    title = urllib.parse.parse_qs(query).get("title", [""])[0]
    return title.replace("_", " ")


def nq_layout(record: dict) -> str:
    if "document_tokens" in record and "document_html" in record:
        return "original"
    if "document_text" in record:
        return "simplified"
    raise ValueError("neither document_tokens/document_html nor document_text")


def nq_to_squad(record: dict) -> tuple[dict | None, str]:
    """(SQuAD article or None, reason): "kept" or why the record was skipped."""
    layout = nq_layout(record)
    annotations = record.get("annotations") or []
    if not annotations:
        return None, "no annotation"
    annotation = annotations[0]
    short_answers = annotation.get("short_answers") or []
    if len(short_answers) != 1:
        return None, "not exactly one short answer"
    short = short_answers[0]
    long = annotation.get("long_answer") or {}
    if long.get("start_token", -1) == -1:
        return None, "no long answer"
    if layout == "original":
        tokens, doc_bytes = record["document_tokens"], record["document_html"].encode("utf-8")
    else:
        tokens = _simplified_tokens(record)
    if tokens[long["start_token"]]["token"] != "<P>":
        return None, "long answer not a <P> paragraph"
    ls, le, ss, se = long["start_token"], long["end_token"], short["start_token"], short["end_token"]
    if layout == "original":
        paragraph = clean_text(ls, le, tokens, doc_bytes)
        answer = clean_text(ss, se, tokens, doc_bytes)
        before = clean_text(ls, ss, tokens, doc_bytes, ignore_final_whitespace=False)
    else:
        paragraph = _simple_clean(ls, le, tokens)
        answer = _simple_clean(ss, se, tokens)
        before = _simple_clean(ls, ss, tokens, trailing_space=True)
    return {"title": _title(record),
            "paragraphs": [{"context": paragraph,
                            "qas": [{"answers": [{"answer_start": len(before), "text": answer}],
                                     "id": str(record["example_id"]),
                                     "question": record["question_text"]}]}]}, "kept"


def nq_files(patterns) -> list[str]:
    paths = []
    for pattern in patterns:
        found = sorted(glob.glob(pattern)) if any(c in pattern for c in "*?[") else [pattern]
        for path in found:
            if not os.path.isfile(path):
                raise ReqaError(f"{path}: no such file")
            paths.append(path)
    if not paths:
        raise ReqaError(f"{', '.join(patterns)}: no Natural Questions files found")
    return paths


def iter_nq_records(path: str) -> Iterator[tuple[int, dict]]:
    """(line number, record) of a .jsonl.gz or .jsonl file."""
    with open(path, "rb") as f:
        gzipped = f.read(2) == b"\x1f\x8b"
    opener = gzip.open if gzipped else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as e:
                    raise ReqaError(f"{path}:{number}: not JSON Lines ({e.msg})") from None
                if not isinstance(record, dict):
                    raise ReqaError(f"{path}:{number}: not a Natural Questions record")
                yield number, record
    except (OSError, EOFError, UnicodeDecodeError) as e:
        raise ReqaError(f"{path}: cannot read ({type(e).__name__}: {e})") from None


def convert_nq(patterns, version: str = "nq") -> tuple[dict, Counter]:
    """SQuAD JSON (version, data) of the kept records of every file, and counts by reason."""
    squad, counts = {"version": version, "data": []}, Counter()
    for path in nq_files(patterns):
        for number, record in iter_nq_records(path):
            counts["records"] += 1
            try:
                article, reason = nq_to_squad(record)
            except (KeyError, IndexError, TypeError, ValueError, AttributeError) as e:
                raise ReqaError(f"{path}:{number}: not a Natural Questions record "
                                f"({type(e).__name__}: {e})") from None
            counts[reason] += 1
            if article is not None:
                squad["data"].append(article)
    return squad, counts


__all__ = ["clean_text", "nq_to_squad", "nq_layout", "convert_nq", "iter_nq_records", "nq_files"]
