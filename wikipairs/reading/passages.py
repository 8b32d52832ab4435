"""Plain passage corpora (JSON lines or Parquet) -> `PassagePage`s, one per title.

A record is a passage: `title` and `text` (required), and optionally `id`, `section` (an
integer; 0 is the lead), `order` (position in its page; else the file order), `heading` (the
section's heading) and `page_id` (an integer: the page's id; else a stable hash of the title,
`title_page_id`). Passages of the same title form one page. No links, no redirects: WLP makes
no pairs from such a corpus.

`input_kind(path)` tells such a file from a dump: a Parquet file (`PAR1`), or a file whose first
byte that is not whitespace is `{` (or named `.jsonl`/`.ndjson`). A file is cut into splits
(`plan_passage_splits`) by byte ranges of whole lines (JSON lines) or ranges of rows (Parquet, read
by row groups), each cut moved forward to where the title changes, so a page whose passages are
contiguous in the file is in one split; within a split, passages are grouped by title. The plan
depends on the file only (its size and `parts`), never on the runner or the worker count.
A bad record (not JSON, not an object, no text or title) is one DumpError naming the file and
its line (row, for Parquet).
"""
from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from collections.abc import Iterator

from .. import fileio
from ..errors import DumpError
from ..records import PassagePage, PassageRecord, SiteInfo
from ..text.titles import TitleParser, clean_spaces, default_namespaces

PASSAGES_JSONL = "passages-jsonl"
PASSAGES_PARQUET = "passages-parquet"
PASSAGE_KINDS = (PASSAGES_JSONL, PASSAGES_PARQUET)
JSONL_SUFFIXES = (".jsonl", ".ndjson")
SPLIT_BYTES = 64 << 20  # a split holds at most about this much of a file (more splits above)
_HEAD = 1 << 12
_SAMPLE_RECORDS = 30  # the language is detected from the first records' text
_SAMPLE_CHARS = 300_000


def input_kind(path: str) -> str | None:
    """PASSAGES_PARQUET, PASSAGES_JSONL, or None (a dump: its reader says what is wrong)."""
    try:
        with fileio.open_read(path) as f:
            head = f.read(_HEAD)
    except OSError:
        return None
    if head[:4] == b"PAR1":
        return PASSAGES_PARQUET
    named = str(path).endswith(JSONL_SUFFIXES) and head[:2] != b"\x1f\x8b"  # not gzip'd
    if head.lstrip()[:1] == b"{" or named:
        return PASSAGES_JSONL
    return None


def _has_text(path: str) -> bool:
    """Whether a JSON lines file holds anything but whitespace (read until it does)."""
    try:
        with fileio.open_read(path) as f:
            while chunk := f.read(1 << 16):
                if chunk.strip():
                    return True
    except OSError:
        return True  # reading it says what is wrong
    return False


def title_page_id(title: str) -> int:
    """A page id from a title: 52 bits of sha1 in [2**52, 2**53), the same on every machine and
    run, out of the range of Wikipedia's page ids (and exact as a JSON number)."""
    digest = hashlib.sha1(title.encode("utf-8")).digest()
    return (1 << 52) | (int.from_bytes(digest[:8], "big") >> 12)


def _number(value, name: str, where: str):
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise DumpError(f"{where}: `{name}` must be a number, not {json.dumps(value)[:40]}")
    try:
        number = float(value)
    except ValueError:
        raise DumpError(f"{where}: `{name}` must be a number, not {value!r}") from None
    if not math.isfinite(number):
        raise DumpError(f"{where}: `{name}` must be a finite number")
    return int(number) if number == int(number) else number


def record_of(raw, where: str, position: int) -> PassageRecord:
    """A passage record from a decoded JSON object or Parquet row; DumpError naming `where`."""
    if not isinstance(raw, dict):
        raise DumpError(f"{where}: not a JSON object")
    text, title = raw.get("text"), raw.get("title")
    if text is None and isinstance(raw.get("article_body"), dict):
        raise DumpError(f"{where}: an Enterprise HTML record (article_body), not a passage: "
                        "Enterprise dumps are read as Wikimedia publishes them, a .tar.gz of "
                        "NDJSON files (tar czf dump.tar.gz FILE.ndjson)")
    if not isinstance(text, str):
        raise DumpError(f"{where}: a passage without `text`" if text is None
                        else f"{where}: `text` must be a string")
    if not isinstance(title, str) or not clean_spaces(title):
        raise DumpError(f"{where}: a passage without `title`" if title is None
                        else f"{where}: `title` must be a non-empty string")
    section = _number(raw.get("section"), "section", where)
    if section is not None and (not isinstance(section, int) or section < 0):
        raise DumpError(f"{where}: `section` must be an integer >= 0 (0: the lead)")
    page_id = _number(raw.get("page_id"), "page_id", where)
    if page_id is not None and not isinstance(page_id, int):
        raise DumpError(f"{where}: `page_id` must be an integer")
    heading = raw.get("heading")
    return PassageRecord(title=clean_spaces(title), text=text, section=section or 0,
                         order=_number(raw.get("order"), "order", where) or 0, position=position,
                         heading=clean_spaces(heading) if isinstance(heading, str) else "",
                         page_id=page_id)


# ---- planning: byte ranges of whole lines, ranges of rows ---------------------------------

def _parts(size: int, parts: int) -> int:
    return max(1, parts, math.ceil(size / SPLIT_BYTES))


def _line_number(path: str, offset: int) -> int:
    """The line (from 1) that starts at byte `offset` (only asked when there is an error)."""
    lines, done = 1, 0
    with fileio.open_read(path) as f:
        while done < offset and (chunk := f.read(min(1 << 20, offset - done))):
            lines += chunk.count(b"\n")
            done += len(chunk)
    return lines


def _decode_line(path: str, line: bytes, line_no) -> dict:
    """A JSON line as an object; `line_no`: the number, or a callable that gives it."""
    try:
        value = json.loads(line)
    except ValueError as e:
        number = line_no() if callable(line_no) else line_no
        raise DumpError(f"{path}: line {number} is not a JSON record ({e})") from None
    if not isinstance(value, dict):
        number = line_no() if callable(line_no) else line_no
        raise DumpError(f"{path}: line {number} is not a JSON object")
    return value


def _title_at(path: str, f, offset: int) -> str | None:
    """The title of the line starting at `offset` (f is positioned there), or None at the end."""
    line = f.readline()
    while line and not line.strip():
        offset += len(line)
        line = f.readline()
    if not line:
        return None
    value = _decode_line(path, line, lambda: _line_number(path, offset))
    title = value.get("title")
    return clean_spaces(title) if isinstance(title, str) else ""


def _jsonl_cuts(path: str, parts: int) -> list[int]:
    size = fileio.size(path)
    n = _parts(size, parts)
    cuts = [0]
    with fileio.open_read(path) as f:
        for k in range(1, n):
            target = max(size * k // n, cuts[-1])
            if target >= size:
                break
            f.seek(target - 1 if target else 0)
            if target:
                f.readline()  # to the start of the next line (a cut on a line start keeps it)
            at = f.tell()
            title = _title_at(path, f, at)
            while title is not None:  # past the run of lines of that title
                at = f.tell()
                if _title_at(path, f, at) != title:
                    break
            if title is None:
                at = size
            if at > cuts[-1] and at < size:
                cuts.append(at)
    return cuts + [size]


def _parquet_cuts(path: str, parts: int) -> list[int]:
    """Row numbers where the splits of a Parquet corpus start: near equal shares of the rows,
    each moved forward to the first row whose title differs from the row before."""
    import bisect

    import pyarrow.parquet as pq
    with fileio.open_read(path) as f:
        meta = pq.ParquetFile(f)
        if "title" not in meta.schema_arrow.names:
            raise DumpError(f"{path}: a passage corpus needs a `title` column "
                            f"(it has {', '.join(meta.schema_arrow.names)})")
        firsts = [0]
        for g in range(meta.metadata.num_row_groups):
            firsts.append(firsts[-1] + meta.metadata.row_group(g).num_rows)
        rows = firsts[-1]
        n = min(rows, _parts(fileio.size(path), parts)) or 1
        groups: dict[int, list[str]] = {}

        def title(row: int) -> str:
            g = bisect.bisect_right(firsts, row) - 1
            if g not in groups:
                groups.clear()  # one row group's titles at a time
                values = meta.read_row_group(g, columns=["title"]).column(0).to_pylist()
                groups[g] = [clean_spaces(t) if isinstance(t, str) else "" for t in values]
            return groups[g][row - firsts[g]]

        cuts = [0]
        for k in range(1, n):
            row = max(rows * k // n, cuts[-1] + 1)
            while row < rows and title(row) == title(row - 1):
                row += 1
            if cuts[-1] < row < rows:
                cuts.append(row)
    return cuts + [rows]


def plan_passage_splits(path: str, parts: int, kind: str | None = None) -> list[tuple[int, int]]:
    """[start, end) ranges of a passage corpus: bytes of whole lines (JSON lines) or rows
    (Parquet), at least `parts` (where the file has room) and one per SPLIT_BYTES of file."""
    kind = kind or input_kind(path)
    cuts = _parquet_cuts(path, parts) if kind == PASSAGES_PARQUET else _jsonl_cuts(path, parts)
    return list(zip(cuts[:-1], cuts[1:]))


# ---- reading a range --------------------------------------------------------------------

def _jsonl_records(path: str, start: int, end: int) -> Iterator[PassageRecord]:
    with fileio.open_read(path) as f:
        f.seek(start)
        at, number = start, 0
        while at < end:
            line = f.readline()
            if not line:
                break
            number += 1
            offset = at
            at += len(line)
            if not line.strip():
                continue

            def line_no(number=number):  # counted from the file's start only for an error
                return (_line_number(path, start) if start else 1) + number - 1
            value = _decode_line(path, line, line_no)
            try:
                yield record_of(value, "", offset)
            except DumpError as e:
                raise DumpError(f"{path}: line {line_no()}{e}") from None


def _parquet_records(path: str, start: int, end: int) -> Iterator[PassageRecord]:
    """The records of rows [start, end) of a Parquet corpus, read by row groups."""
    import pyarrow.parquet as pq
    with fileio.open_read(path) as f:
        meta = pq.ParquetFile(f)
        names = meta.schema_arrow.names
        if "text" not in names or "title" not in names:
            raise DumpError(f"{path}: a passage corpus needs `title` and `text` columns "
                            f"(it has {', '.join(names)})")
        columns = [c for c in ("title", "text", "section", "order", "heading", "page_id")
                   if c in names]
        first = 0
        for g in range(meta.metadata.num_row_groups):
            rows = meta.metadata.row_group(g).num_rows
            if first + rows > start and first < end:
                table = meta.read_row_group(g, columns=columns)
                lo, hi = max(start - first, 0), min(end - first, rows)
                for i, value in enumerate(table.slice(lo, hi - lo).to_pylist(), first + lo + 1):
                    yield record_of(value, f"{path}: row {i}", i)
            first += rows
            if first >= end:
                break


def read_passage_pages(path: str, kind: str, start: int, end: int,
                       counts: Counter | None = None) -> Iterator[PassagePage]:
    """The pages of a range of a passage corpus: its passages grouped by title (pages in the
    order of their first passage), each page's passages by (section, order, file position).
    `counts` gets pages_read, passage_records (the records read; "passages" counts the packed
    passages) and passages_apart_from_their_page (a record whose title came before another
    title in this range: the corpus is not sorted by page, and such a page may be in two
    splits, two Articles of one id)."""
    counts = counts if counts is not None else Counter()
    records = (_parquet_records if kind == PASSAGES_PARQUET else _jsonl_records)(path, start, end)
    pages: dict[str, list[PassageRecord]] = {}
    last = None
    for record in records:
        if record.title != last and record.title in pages:
            counts["passages_apart_from_their_page"] += 1
        pages.setdefault(record.title, []).append(record)
        last = record.title
        counts["passage_records"] += 1
    for title, passages in pages.items():
        counts["pages_read"] += 1
        passages.sort(key=lambda r: (r.section, r.order, r.position))
        ids = {r.page_id for r in passages if r.page_id is not None}
        page_id = min(ids) if ids else title_page_id(title)
        yield PassagePage(id=page_id, title=title, passages=passages, source=path)


def sample_texts(path: str, kind: str) -> list[str]:
    """The text of the first records (for the language), [] where none can be read."""
    texts, size = [], 0
    try:
        ranges = [(0, _SAMPLE_RECORDS)] if kind == PASSAGES_PARQUET else [(0, fileio.size(path))]
        read = _parquet_records if kind == PASSAGES_PARQUET else _jsonl_records
        for record in read(path, *ranges[0]):
            texts.append(record.text[:_SAMPLE_CHARS - size])
            size += len(texts[-1])
            if len(texts) >= _SAMPLE_RECORDS or size >= _SAMPLE_CHARS:
                break
    except (DumpError, OSError, ValueError):
        pass  # reading it says what is wrong
    return texts


# A corpus declares no language, so a guess from a smaller sample than a dump's check needs
# (language_check.MIN_LETTERS, which guards against false warnings) is better than none.
CORPUS_MIN_LETTERS = 100


def detected_language(texts: list[str]):
    """The language of a corpus's first records' `texts` (`sample_texts`), a TextLanguage
    (lang "": no verdict)."""
    from ..text.language_check import detect
    return detect(texts, min_letters=CORPUS_MIN_LETTERS)


def site_for(path: str, kind: str, lang: str | None) -> SiteInfo:
    """The 'wiki' of a corpus: `lang` (--lang), else detected from its first records' text as
    `parse` checks a dump's (wikipairs.text.language_check), else en (`check_declared_language`
    warns then)."""
    if not lang:
        lang = detected_language(sample_texts(path, kind)).lang or "en"
    return SiteInfo(dbname="", base="", lang=lang, namespaces=default_namespaces(lang),
                    export_version=kind)


class PassageCorpus:
    """One passage corpus file with the interface `parse` uses for a dump (`site`, `titles`,
    `pages`, `reopen`): its pages are those of its planned splits, in order, so `parse` and
    `build` make the same articles."""

    def __init__(self, path: str, lang: str | None = None, redirects_only: bool = False,
                 kind: str | None = None, parts: int = 2):
        self.path, self.lang, self.parts = path, lang, parts
        self.kind = kind or input_kind(path) or PASSAGES_JSONL
        if self.kind == PASSAGES_JSONL and not _has_text(path):
            raise DumpError(f"{path}: an empty file (no passage records)")
        self.name = path
        self.redirects_only = redirects_only  # no redirects here: such a pass reads nothing
        self.site = site_for(path, self.kind, lang)
        self.titles = TitleParser(self.site)

    def reopen(self) -> "PassageCorpus":
        return PassageCorpus(self.path, lang=self.site.lang, kind=self.kind, parts=self.parts)

    def pages(self, counts: Counter | None = None, allow_truncated: bool = False
              ) -> Iterator[PassagePage]:
        if self.redirects_only:
            return
        for start, end in plan_passage_splits(self.path, self.parts, self.kind):
            yield from read_passage_pages(self.path, self.kind, start, end, counts)


def wlp_note(patterns: list[str]) -> str | None:
    """The line that says WLP makes nothing from the passage corpora among the inputs (None:
    there are none, or the inputs cannot be read: reading them says why)."""
    from .sources import expand_inputs
    try:
        corpora = [p for p in expand_inputs(patterns) if input_kind(p) is not None]
    except DumpError:
        return None
    if not corpora:
        return None
    names = ", ".join(str(p).rsplit("/", 1)[-1] for p in corpora[:3])
    more = f" and {len(corpora) - 3} more" if len(corpora) > 3 else ""
    return (f"wikipairs: note: {names}{more}: a passage corpus has no links, so WLP makes no "
            f"pairs from it (ICT, and BFS where records give sections)")


# ---- SQuAD paragraphs as a passage corpus -----------------------------------------------

def squad_passages(squad: dict, sections: bool = True) -> Iterator[dict]:
    """Passage records from SQuAD-format JSON: one per paragraph (`context`), titled by its
    article (underscores as spaces), in file order, ids `<title>-<paragraph>`. `sections`: each
    paragraph is a section of its own (`section` = its index; the first, SQuAD's opening
    paragraph of the article, is the lead), so each is its own document and BFS has pairs;
    without, all are the lead and ICT packs short neighbours together."""
    for article in squad.get("data") or ():
        title = clean_spaces(str(article.get("title") or "").replace("_", " "))
        for k, paragraph in enumerate(article.get("paragraphs") or ()):
            record = {"id": f"{title}-{k}", "title": title, "text": paragraph.get("context", ""),
                      "order": k}
            if sections:
                record["section"] = k
            yield record


def write_jsonl(records, path: str) -> int:
    """Write records as JSON lines (UTF-8, one object per line); returns how many."""
    n = 0
    with open(path, "w", encoding="utf-8") as f:
        for record in records:
            f.write(json.dumps(record, ensure_ascii=False) + "\n")
            n += 1
    return n


__all__ = ["PASSAGES_JSONL", "PASSAGES_PARQUET", "PASSAGE_KINDS", "PassageCorpus", "PassagePage",
           "PassageRecord", "input_kind", "plan_passage_splits", "read_passage_pages",
           "record_of", "squad_passages", "title_page_id", "wlp_note", "write_jsonl"]
