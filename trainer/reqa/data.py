"""ReQA data: SQuAD JSON -> sentence candidates and questions, splits, fine-tuning pairs.

The construction is ReQA's (google/retrieval-qa-eval, squad_eval.py), with the project's
sentence splitter of the file's language instead of ReQA's own sentence-break detector (the
language is detected from the text by wikipairs.text.language_check unless given, and split by
SentenceSplitter.for_language, as `wikipairs build` does; both are in the manifest):

- every paragraph that has questions is split into sentences; the candidates are the unique
  (sentence, passage) pairs over the file, numbered in order of first appearance;
- each answer maps to the sentence whose span holds its `answer_start` (an answer that starts
  between two sentences, in the whitespace, goes to the next one); a question's gold candidates
  are the distinct sentences of its answers. A (question, gold sentence) is one "QA input"
  (ReQA counts 11,426 on dev-v1.1.json, with 10,250 candidates and 10,539 distinct questions).

`reqa build` writes DIR/candidates.parquet (candidate_id, sentence, passage, title,
paragraph_id, start, end, lang), DIR/questions.parquet (question_id, question,
gold_candidate_ids, answers, answer_starts, title, paragraph_id, lang: one row per SQuAD
question id) and DIR/manifest.json (source, lang, splitter, counts). Several files make one
multilingual pool (LAReQA, XQuAD-R: `merge_reqa`): each file is built in its own language,
candidate and paragraph ids run on, and the `lang` column tells the parts apart (question ids
may repeat across languages: XQuAD's do).

Fine-tuning splits (Chang et al. 4.2): `split_questions` splits the DISTINCT question texts
(cold start: no test question text is ever seen in training) into train/test by
`train_percent` (1, 5, 10 or 80 in the paper), and holds out 10% of the training part as
validation; the choice is a seeded stable hash of the text, so the same data and seed give the
same split anywhere. Candidates are always the full set.
"""
from __future__ import annotations

import bisect
import glob
import json
import os
from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.parquet as pq

from wikipairs import fileio
from wikipairs.errors import WikipairsError
from wikipairs.pairs.sampling import sample, stable_id
from wikipairs.shards.output import sha256_file, write_parquet

CANDIDATES_FILE = "candidates.parquet"
QUESTIONS_FILE = "questions.parquet"
MANIFEST_FILE = "manifest.json"
PAPER_TRAIN_PERCENTS = (1, 5, 10, 80)
VALID_PERCENT = 10.0
SPLITS = ("all", "train", "valid", "test")
FINETUNE_TASK = "reqa"

CANDIDATE_SCHEMA = pa.schema([
    ("candidate_id", pa.int64()), ("sentence", pa.string()), ("passage", pa.string()),
    ("title", pa.string()), ("paragraph_id", pa.int64()), ("start", pa.int32()),
    ("end", pa.int32()), ("lang", pa.string())])
QUESTION_SCHEMA = pa.schema([
    ("question_id", pa.string()), ("question", pa.string()),
    ("gold_candidate_ids", pa.list_(pa.int64())), ("answers", pa.list_(pa.string())),
    ("answer_starts", pa.list_(pa.int32())), ("title", pa.string()),
    ("paragraph_id", pa.int64()), ("lang", pa.string())])
# Letters of text needed to tell a SQuAD file's language: the script tells most languages, and a
# Latin-script one is told by its function words, which a sentence or two holds.
DETECT_MIN_LETTERS = 20


class ReqaError(WikipairsError):
    """Bad ReQA input or usage (one line; the CLI prints it and exits with status 2)."""


@dataclass
class ReqaData:
    """Candidates and questions as columns (lists), plus the manifest (source, counts)."""

    candidates: dict[str, list]
    questions: dict[str, list]
    manifest: dict = field(default_factory=dict)

    @property
    def num_candidates(self) -> int:
        return len(self.candidates["candidate_id"])

    @property
    def num_questions(self) -> int:
        return len(self.questions["question_id"])

    def counts(self) -> dict:
        return {"candidates": self.num_candidates,
                "qa_inputs": sum(len(g) for g in self.questions["gold_candidate_ids"]),
                "questions": self.num_questions,
                "distinct_questions": len(set(self.questions["question"]))}

    def select_questions(self, keep) -> "ReqaData":
        """The same candidates with the question rows i where keep(i) is true."""
        rows = [i for i in range(self.num_questions) if keep(i)]
        questions = {k: [v[i] for i in rows] for k, v in self.questions.items()}
        return ReqaData(self.candidates, questions, self.manifest)


# ---- reading SQuAD ---------------------------------------------------------------------------

def load_json_file(path: str, what: str = "SQuAD JSON"):
    if not os.path.exists(path):
        raise ReqaError(f"{path}: no such file")
    if os.path.isdir(path):
        raise ReqaError(f"{path}: is a folder, expected a {what} file")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except json.JSONDecodeError as e:
        raise ReqaError(f"{path}: not {what} ({e.msg} at line {e.lineno})") from None
    except UnicodeDecodeError:
        raise ReqaError(f"{path}: not {what} (not UTF-8 text)") from None
    except OSError as e:
        raise ReqaError(f"{path}: cannot read ({e.strerror})") from None


def load_squad(path: str) -> dict:
    """A SQuAD v1.1-format JSON file, checked for the top-level layout."""
    data = load_json_file(path)
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise ReqaError(f"{path}: not SQuAD JSON (expected an object with a 'data' list)")
    return data


def sentence_index(starts: list[int], ends: list[int], position: int) -> tuple[int, bool]:
    """The sentence holding character `position` (spans are sorted and disjoint); a position
    between two sentences (whitespace) gives the next one, after the last the last one.
    Returns (index, inside)."""
    i = bisect.bisect_right(starts, position) - 1
    if i >= 0 and position < ends[i]:
        return i, True
    return min(i + 1, len(starts) - 1), False


def default_splitter(texts=(), lang: str = "en", method: str = "auto"):
    """The sentence splitter `wikipairs build` uses for `lang` (SentenceSplitter.for_language:
    punkt_tab where installed via NLTK_DATA, else sentencex; `texts` train "punkt-trained")."""
    from wikipairs.errors import WikipairsError
    from wikipairs.text.sentences import SentenceSplitter

    try:
        return SentenceSplitter.for_language(lang, texts, method=method)
    except WikipairsError as e:
        raise ReqaError(str(e)) from None


def detect_language(squad: dict, source: str = "squad") -> tuple[str, str]:
    """(language, evidence) of a SQuAD file's paragraphs, by the detector the pair builds use
    (wikipairs.text.language_check); a file it cannot tell is an error that asks for --lang."""
    from wikipairs.text.language_check import detect

    articles = squad.get("data") if isinstance(squad, dict) else None
    found = detect(_contexts(articles if isinstance(articles, list) else []),
                   min_letters=DETECT_MIN_LETTERS)
    if not found.lang:
        raise ReqaError(f"{source}: cannot tell the language of its text ({found.evidence}); "
                        f"pass --lang")
    return found.lang, found.evidence


def build_reqa(squad: dict, splitter=None, source: str = "squad", lang: str | None = None,
               method: str = "auto") -> ReqaData:
    """Candidates and questions of a parsed SQuAD-format JSON object (see the module doc), in
    `lang` (None: detected from the text); `splitter` None: the language's (`method`)."""
    articles = squad.get("data") if isinstance(squad, dict) else None
    if not isinstance(articles, list):
        raise ReqaError(f"{source}: not SQuAD JSON (expected an object with a 'data' list)")
    evidence = "given"
    if not lang:
        lang, evidence = detect_language(squad, source)
    if splitter is None:
        splitter = default_splitter(_contexts(articles), lang, method)
    cand = {k: [] for k in CANDIDATE_SCHEMA.names}
    ques = {k: [] for k in QUESTION_SCHEMA.names}
    index: dict[tuple[str, str], int] = {}
    stats = {"articles": len(articles), "paragraphs": 0, "paragraphs_without_questions": 0,
             "answers": 0, "answers_between_sentences": 0, "questions_without_answers": 0}
    paragraph_id = -1
    for a, article in enumerate(articles):
        where = f"{source}: article {a}"
        try:
            title = str(article.get("title", ""))
            paragraphs = article["paragraphs"]
        except (KeyError, TypeError, AttributeError):
            raise ReqaError(f"{where}: not SQuAD JSON (no 'paragraphs')") from None
        for p, paragraph in enumerate(paragraphs):
            paragraph_id += 1
            stats["paragraphs"] += 1
            try:
                context = paragraph["context"]
                qas = paragraph.get("qas") or []
                if not isinstance(context, str) or not isinstance(qas, list):
                    raise TypeError
            except (KeyError, TypeError, AttributeError):
                raise ReqaError(f"{where} paragraph {p}: not SQuAD JSON (no 'context' text "
                                f"or 'qas' list)") from None
            spans = [(s, e) for s, e in splitter.spans(context) if e > s]
            if not qas or not spans:
                stats["paragraphs_without_questions"] += 1
                continue
            starts, ends = [s for s, _ in spans], [e for _, e in spans]
            ids = []
            for s, e in spans:
                key = (context[s:e], context)
                cid = index.get(key)
                if cid is None:
                    cid = index[key] = len(cand["candidate_id"])
                    for k, v in (("candidate_id", cid), ("sentence", key[0]),
                                 ("passage", context), ("title", title),
                                 ("paragraph_id", paragraph_id), ("start", s), ("end", e),
                                 ("lang", lang)):
                        cand[k].append(v)
                ids.append(cid)
            for q, qa in enumerate(qas):
                try:
                    question, answers = qa["question"], qa.get("answers") or []
                    qid = str(qa.get("id", f"{paragraph_id}-{q}"))
                    golds, texts, offsets = [], [], []
                    for answer in answers:
                        start = int(answer["answer_start"])
                        k, inside = sentence_index(starts, ends, start)
                        stats["answers"] += 1
                        stats["answers_between_sentences"] += not inside
                        texts.append(str(answer.get("text", "")))
                        offsets.append(start)
                        if ids[k] not in golds:
                            golds.append(ids[k])
                except (KeyError, TypeError, ValueError, AttributeError):
                    raise ReqaError(f"{where} paragraph {p} question {q}: not SQuAD JSON "
                                    f"(needs 'question' and answers with 'answer_start')") from None
                if not golds:  # SQuAD 2.0 unanswerable questions: nothing to retrieve
                    stats["questions_without_answers"] += 1
                    continue
                for k, v in (("question_id", qid), ("question", str(question)),
                             ("gold_candidate_ids", golds), ("answers", texts),
                             ("answer_starts", offsets), ("title", title),
                             ("paragraph_id", paragraph_id), ("lang", lang)):
                    ques[k].append(v)
    data = ReqaData(cand, ques)
    data.manifest = {"source": source, "lang": lang, "lang_evidence": evidence,
                     "splitter": getattr(splitter, "source", type(splitter).__name__),
                     "counts": data.counts(), "stats": stats}
    return data


def merge_reqa(parts: list[ReqaData]) -> ReqaData:
    """One candidate pool of several builds (a multilingual pool, LAReQA/XQuAD-R): candidate
    and paragraph ids run on from part to part, gold ids follow; the manifest lists the parts
    (source, lang, splitter, counts) and `langs`; `lang` is theirs where they share one, else
    "multi". One part is returned as it is."""
    if len(parts) == 1:
        return parts[0]
    cand = {k: [] for k in CANDIDATE_SCHEMA.names}
    ques = {k: [] for k in QUESTION_SCHEMA.names}
    for part in parts:
        c_off, p_off = len(cand["candidate_id"]), 1 + max(
            cand["paragraph_id"] + ques["paragraph_id"], default=-1)
        for k in CANDIDATE_SCHEMA.names:
            values = part.candidates[k]
            cand[k].extend([v + c_off for v in values] if k == "candidate_id" else
                           [v + p_off if v >= 0 else v for v in values] if k == "paragraph_id"
                           else values)
        for k in QUESTION_SCHEMA.names:
            values = part.questions[k]
            ques[k].extend([[g + c_off for g in golds] for golds in values]
                           if k == "gold_candidate_ids" else
                           [v + p_off for v in values] if k == "paragraph_id" else values)
    data = ReqaData(cand, ques)
    langs = sorted({p.manifest.get("lang", "en") for p in parts})
    keys = ("source", "lang", "lang_evidence", "splitter", "counts", "stats", "source_sha256")
    data.manifest = {"source": ",".join(p.manifest.get("source", "") for p in parts),
                     "lang": langs[0] if len(langs) == 1 else "multi", "langs": langs,
                     "splitter": ",".join(sorted({p.manifest.get("splitter", "") for p in parts})),
                     "parts": [{k: p.manifest[k] for k in keys if k in p.manifest}
                               for p in parts],
                     "counts": data.counts()}
    return data


def parse_langs(value: str | None, files: int) -> list[str | None]:
    """--lang: one language code for all files, or one per file (comma-separated), or None."""
    if not value:
        return [None] * files
    langs = [v.strip() for v in value.split(",")]
    if len(langs) == 1:
        langs = langs * files
    from wikipairs.text.analysis import is_language_code

    if len(langs) != files or not all(is_language_code(v) for v in langs):
        raise ReqaError(f"--lang {value}: expected one language code (en, es, zh-yue...) or one "
                        f"per --squad file ({files})")
    return langs


def build_squad_files(paths, langs, method: str = "auto") -> ReqaData:
    """Each SQuAD file built in its language (langs[i], None: detected), then one pool of all
    (merge_reqa); each part's manifest records its source's sha256."""
    parts = []
    for path, lang in zip(paths, langs):
        squad = load_squad(path)
        if not squad["data"]:
            raise ReqaError(f"{path}: no questions to build from")
        part = build_reqa(squad, source=os.path.abspath(path), lang=lang, method=method)
        if part.num_questions == 0:
            raise ReqaError(f"{path}: no answered questions found")
        if len(paths) > 1:
            part.manifest["source_sha256"] = sha256_file(path)
        parts.append(part)
    return merge_reqa(parts)


def language_lines(manifest: dict) -> list[tuple[str, str]]:
    """(label, value) lines that say each part's language, how it was told and its splitter."""
    parts = manifest.get("parts") or [manifest]
    lines = []
    for part in parts:
        how = part.get("lang_evidence", "")
        how = "--lang" if how == "given" else f"detected: {how}" if how else "recorded"
        label = "language" if len(parts) == 1 else f"language {part.get('lang', '')}"
        lines.append((label, f"{part.get('lang', 'en')} ({how}); sentences: "
                             f"{part.get('splitter', '')}"
                      + (f"; candidates {part['counts']['candidates']:,}" if len(parts) > 1
                         else "")))
    return lines


def _contexts(articles):
    for article in articles:
        for paragraph in (article.get("paragraphs") or []) if isinstance(article, dict) else ():
            if isinstance(paragraph, dict) and isinstance(paragraph.get("context"), str):
                yield paragraph["context"]


# ---- the ReQA folder -------------------------------------------------------------------------

def write_reqa(data: ReqaData, output: str, source_path: str | None = None) -> dict:
    """Write candidates.parquet, questions.parquet and manifest.json (last) into `output`."""
    os.makedirs(output, exist_ok=True)
    manifest_path = os.path.join(output, MANIFEST_FILE)
    if os.path.exists(manifest_path):
        os.remove(manifest_path)
    for name, columns, schema in ((CANDIDATES_FILE, data.candidates, CANDIDATE_SCHEMA),
                                  (QUESTIONS_FILE, data.questions, QUESTION_SCHEMA)):
        write_parquet(os.path.join(output, name), pa.Table.from_pydict(columns, schema=schema))
    manifest = dict(data.manifest)
    manifest["counts"] = data.counts()
    manifest["files"] = {name: {"rows": rows, "bytes": os.path.getsize(os.path.join(output, name))}
                         for name, rows in ((CANDIDATES_FILE, data.num_candidates),
                                            (QUESTIONS_FILE, data.num_questions))}
    if source_path and os.path.isfile(source_path):
        manifest["source_sha256"] = sha256_file(source_path)
    fileio.write_atomic(manifest_path, json.dumps(manifest, indent=2, sort_keys=True).encode())
    data.manifest = manifest
    return manifest


def read_reqa(folder: str) -> ReqaData:
    """What write_reqa wrote (manifest.json is written last: without it the folder is incomplete)."""
    manifest_path = os.path.join(folder, MANIFEST_FILE)
    if not os.path.isdir(folder):
        raise ReqaError(f"{folder}: no such folder (make it with wikipairs reqa build)")
    if not os.path.isfile(manifest_path):
        raise ReqaError(f"{folder}: no {MANIFEST_FILE}: not a complete reqa build output")
    try:
        with open(manifest_path, encoding="utf-8") as f:
            manifest = json.load(f)
        tables = [pq.read_table(os.path.join(folder, name)).to_pydict()
                  for name in (CANDIDATES_FILE, QUESTIONS_FILE)]
    except (OSError, ValueError, pa.ArrowException) as e:
        raise ReqaError(f"{folder}: cannot read the reqa build output ({type(e).__name__}: "
                        f"{str(e).splitlines()[0] if str(e) else ''})") from None
    for table, schema in zip(tables, (CANDIDATE_SCHEMA, QUESTION_SCHEMA)):
        missing = [n for n in schema.names if n not in table and n != "lang"]
        if missing:
            raise ReqaError(f"{folder}: columns missing: {', '.join(missing)}")
        if "lang" not in table:  # a build from before the lang column: one language
            table["lang"] = [manifest.get("lang", "en")] * len(table[schema.names[0]])
    return ReqaData(tables[0], tables[1], manifest)


# ---- splits ----------------------------------------------------------------------------------

def split_questions(texts, train_percent: float, seed: int = 0,
                    valid_percent: float = VALID_PERCENT) -> dict[str, str]:
    """Distinct question text -> "train", "valid" or "test".

    round(n * train_percent / 100) of the n distinct texts (those with the smallest seeded hash)
    form the training part, the rest is "test"; round(that * valid_percent / 100) of the
    training part (smallest second hash) is "valid". Depends only on the set of texts and seed."""
    if not 0 < train_percent < 100:
        raise ReqaError(f"train percent must be in (0, 100), got {train_percent}")
    if not 0 <= valid_percent < 100:
        raise ReqaError(f"valid percent must be in [0, 100), got {valid_percent}")
    distinct = sorted(set(texts))
    order = sorted(distinct, key=lambda t: (sample(seed, "reqa-split", t), t))
    n_train = int(round(len(order) * train_percent / 100))
    train = order[:n_train]
    n_valid = int(round(n_train * valid_percent / 100))
    valid = set(sorted(train, key=lambda t: (sample(seed, "reqa-valid", t), t))[:n_valid])
    out = {t: "test" for t in order[n_train:]}
    out.update({t: "valid" if t in valid else "train" for t in train})
    return out


def select_split(data: ReqaData, split: str, train_percent: float, seed: int = 0) -> ReqaData:
    """The question rows of one split ("all": every row); candidates stay the full set."""
    if split not in SPLITS:
        raise ReqaError(f"unknown split {split!r} (expected one of {', '.join(SPLITS)})")
    if split == "all":
        return data
    of = split_questions(data.questions["question"], train_percent, seed)
    texts = data.questions["question"]
    return data.select_questions(lambda i: of[texts[i]] == split)


# ---- fine-tuning pairs -----------------------------------------------------------------------

def finetune_rows(data: ReqaData, tokenizer, query_max: int = 64, doc_max: int = 288,
                  lang: str | None = None) -> list[dict]:
    """One pair-schema row per (question row, gold candidate): query = question, doc_title =
    the gold sentence, doc_text = its passage (the response's sentence in the title slot of
    `[CLS] title [SEP] text [SEP]`), token ids from `tokenizer` (a wikipairs.pairs.vocab.Tokenizer);
    each pair's lang is the question's (`lang`, where given, for all)."""
    from wikipairs.pairs.tasks import doc_id
    from wikipairs.shards.pair_shards import pair_row
    from wikipairs.records import Pair

    cand, ques = data.candidates, data.questions
    rows = []
    for i in range(data.num_questions):
        for cid in ques["gold_candidate_ids"][i]:
            paragraph = int(cand["paragraph_id"][cid])
            pair = Pair(pair_id=stable_id(FINETUNE_TASK, ques["question_id"][i], int(cid)),
                        passage_id=stable_id("passage", FINETUNE_TASK, paragraph),
                        doc_id=doc_id(cand["sentence"][cid], cand["passage"][cid]),
                        task=FINETUNE_TASK, lang=lang or _row_lang(data, i),
                        query=ques["question"][i],
                        query_page_id=int(ques["paragraph_id"][i]), query_title=ques["title"][i],
                        query_section=0, query_paragraph=0, query_sentence=0,
                        doc_page_id=paragraph, doc_title=cand["sentence"][cid],
                        doc_section=0, doc_passage=int(cid), doc_text=cand["passage"][cid])
            rows.append(pair_row(pair, tokenizer.count_tokens, tokenizer, query_max, doc_max))
    return rows


def _row_lang(data: ReqaData, i: int) -> str:
    langs = data.questions.get("lang")
    return langs[i] if langs else data.manifest.get("lang", "en")


def write_finetune_pairs(data: ReqaData, output: str, vocab: str, train_percent: float,
                         seed: int = 0, formats=("parquet", "tfrecord"), query_max: int = 64,
                         doc_max: int = 288) -> dict:
    """Write the training part as pair shards OUTPUT/parquet/reqa/part-00000-of-00001.parquet and
    OUTPUT/tfrecord/reqa/part-00000-of-00001.tfrecord.gz (what `wikipairs train finetune --data
    OUTPUT` reads) and the validation part likewise under OUTPUT/valid/; OUTPUT/split.json
    records the split. Returns that record."""
    from wikipairs.shards.pair_shards import write_shard
    from wikipairs.pairs.vocab import Tokenizer

    if not os.path.isfile(vocab):
        raise ReqaError(f"{vocab}: no such file (a SentencePiece model from wikipairs vocab)")
    tokenizer = Tokenizer(vocab)
    of = split_questions(data.questions["question"], train_percent, seed)
    counts = {s: sum(1 for v in of.values() if v == s) for s in ("train", "valid", "test")}
    record = {"train_percent": train_percent, "valid_percent": VALID_PERCENT, "seed": seed,
              "distinct_questions": counts, "task": FINETUNE_TASK, "vocab": os.path.abspath(vocab),
              "source": data.manifest.get("source", ""), "pairs": {}}
    texts = data.questions["question"]
    for split, folder in (("train", output), ("valid", os.path.join(output, "valid"))):
        part = data.select_questions(lambda i: of[texts[i]] == split)
        rows = finetune_rows(part, tokenizer, query_max, doc_max)
        note = write_shard(folder, FINETUNE_TASK, 0, 1, rows, tuple(formats), with_ids=True)
        record["pairs"][split] = {"pairs": note["pairs"], "questions": part.num_questions,
                                  "files": [os.path.relpath(os.path.join(folder, f["path"]), output)
                                            for f in note["files"]]}
    fileio.write_atomic(os.path.join(output, "split.json"),
                        json.dumps(record, indent=2, sort_keys=True).encode())
    return record


# ---- open-domain candidates (Chang et al. 4.4) -----------------------------------------------

def shard_paths(pattern: str) -> list[str]:
    """Parquet pair shards: a `wikipairs build` output folder (DIR/parquet/<task>/part-*.parquet,
    or an older build's DIR/<task>/...), a folder of shards (DIR/part-*.parquet), a single file,
    or a glob pattern."""
    if os.path.isdir(pattern):
        from wikipairs.shards.layout import find_task_shards

        paths = [p for files in find_task_shards(pattern, "parquet").values() for p in files] \
            or sorted(glob.glob(os.path.join(glob.escape(pattern), "part-*.parquet")))
    elif any(c in pattern for c in "*?["):
        paths = sorted(glob.glob(pattern))
    else:
        paths = [pattern] if os.path.isfile(pattern) else []
    if not paths:
        raise ReqaError(f"{pattern}: no Parquet pair shards found (expected a wikipairs build "
                        f"output folder, a .parquet file or a glob pattern)")
    return paths


def add_extra_candidates(data: ReqaData, patterns, splitter=None, lang: str | None = None) -> int:
    """Add (sentence, passage) candidates from pair shards (Parquet: doc_title, doc_text): each
    sentence (`lang`'s splitter; default: the build's language) of each distinct doc_text, with
    doc_text as its passage and doc_title as its title, unless that pair is already a candidate.
    Returns how many were added."""
    lang = lang or data.manifest.get("lang", "en")
    if lang == "multi":
        raise ReqaError("--extra-candidates needs a build in one language (this pool has "
                        f"{', '.join(data.manifest.get('langs', []))})")
    if splitter is None:
        splitter = default_splitter(lang=lang)
    cand = data.candidates
    # new lists: the caller's candidates (maybe shared with other ReqaData) stay as they were
    cand = data.candidates = {k: list(v) for k, v in cand.items()}
    seen = set(zip(cand["sentence"], cand["passage"]))
    passages: set[str] = set()
    added = 0
    for pattern in patterns:
        for path in shard_paths(pattern):
            try:
                table = pq.read_table(path, columns=["doc_title", "doc_text"]).to_pydict()
            except (OSError, ValueError, KeyError, pa.ArrowException) as e:
                raise ReqaError(f"{path}: not a pair shard with doc_title and doc_text "
                                f"({type(e).__name__})") from None
            for title, text in zip(table["doc_title"], table["doc_text"]):
                if not text or text in passages:
                    continue
                passages.add(text)
                for s, e in splitter.spans(text):
                    key = (text[s:e], text)
                    if e <= s or key in seen:
                        continue
                    seen.add(key)
                    cid = len(cand["candidate_id"])
                    for k, v in (("candidate_id", cid), ("sentence", key[0]), ("passage", text),
                                 ("title", title or ""), ("paragraph_id", -1), ("start", s),
                                 ("end", e), ("lang", lang)):
                        cand[k].append(v)
                    added += 1
    data.manifest = dict(data.manifest, extra_candidates=added)
    return added


__all__ = ["ReqaError", "ReqaData", "load_squad", "load_json_file", "build_reqa", "merge_reqa",
           "detect_language", "build_squad_files", "parse_langs", "language_lines", "write_reqa",
           "read_reqa", "split_questions", "select_split", "finetune_rows",
           "write_finetune_pairs", "add_extra_candidates", "shard_paths", "sentence_index",
           "default_splitter", "PAPER_TRAIN_PERCENTS", "SPLITS", "VALID_PERCENT",
           "FINETUNE_TASK"]
