"""The pair record written by `wikipairs build` (Parquet and TFRecord shards)."""
from .fields import Field

# The version of the pair record, in the build manifest ("schema_version") and in each Parquet
# shard's metadata. 2: `passage_id` and `doc_id` added, `anchor` renamed `link_anchor`, shards in
# DIR/parquet/<task>/ and DIR/tfrecord/<task>/. Builds without it are version 1. 3: `split`
# (train/eval by the query page); readers of versions 1 and 2 derive it from `query_page_id`.
SCHEMA_VERSION = 3
# Version 1 names of renamed fields (readers of older builds map them: `current_pair_row`).
RENAMED_SINCE_V1 = {"anchor": "link_anchor"}

PAIR = (
    Field("pair_id", "string", "Stable id: a hash of task, query position and document passage "
          "(the same pair has the same id under any seed, runner or worker count)."),
    Field("passage_id", "string", "Stable id of the document's passage as the page has it, "
          "before ICT takes the query sentence out or the cap cuts it: a hash of language, page "
          "id, section and the passage's first and last sentence (paragraph, index), so the "
          "same passage has the same id in every task, under any seed, runner or worker count."),
    Field("doc_id", "string", "Id of the exact document: 16 hex digits of sha1 of `doc_title`, "
          "a newline and `doc_text`; two pairs share it if and only if their documents are the "
          "same text (an ICT document without its query sentence is another document)."),
    Field("task", "string", "`ict`, `bfs` or `wlp`."),
    Field("lang", "string", "Wiki language code."),
    Field("query", "string", "The query sentence."),
    Field("query_page_id", "int64", "Page id of the page the query sentence comes from."),
    Field("query_title", "string", "Title of that page."),
    Field("query_section", "int32", "Section of the query sentence (0: the lead)."),
    Field("query_paragraph", "int32", "Paragraph of the query sentence in its section."),
    Field("query_sentence", "int32", "Index of the query sentence in its paragraph."),
    Field("doc_page_id", "int64", "Page id of the document's page."),
    Field("doc_title", "string", "Title of the document's page (the first part of the document)."),
    Field("doc_section", "int32", "Section of the document passage."),
    Field("doc_passage", "int32", "Index of the passage among its page's passages."),
    Field("doc_text", "string", "The passage text (for ICT without the query sentence unless "
          "`query_in_doc`)."),
    Field("link_anchor", "string", "WLP: anchor text of the document page's link to the query "
          "page; empty for ICT and BFS. (`anchor` in schema version 1.)"),
    Field("query_in_doc", "bool", "ICT: the query sentence was kept in the document "
          "(`--ict-keep-rate`)."),
    Field("link_in_doc", "bool", "WLP: the passage holds the link (false: the link is outside the "
          "text, e.g. in an infobox, and the passage is the page's first)."),
    Field("query_tokens", "int32", "Query length in tokens (SentencePiece pieces with `--vocab`, "
          "otherwise words and punctuation marks), before framing and truncation."),
    Field("doc_tokens", "int32", "Document length in tokens: title and passage sentences, each "
          "counted on its own and summed, as above."),
    Field("split", "string", "`train` or `eval`, decided by the query page: a stable hash of "
          "`query_page_id` (no seed), so a page is on one side in every task; `--eval-percent` "
          "(5) of pages are eval, and an eval pair whose query text is also a train pair's query "
          "is left out. (Schema version 3; older builds: the same rule from `query_page_id`.)"),
)

TOKEN_IDS = (
    Field("query_ids", "list", "With `--vocab`: `[CLS] query [SEP]` token ids, at most "
          "`--query-max-tokens` (64).", item="int32"),
    Field("doc_ids", "list", "With `--vocab`: `[CLS] title [SEP] passage [SEP]` token ids, at most "
          "`--doc-max-tokens` (288); the passage is truncated first.", item="int32"),
)


# With `build --hard-negatives N`: up to N negatives per pair, one list entry each, in the order
# of their seeded rank (wikipairs/pairs/negatives.py has the rules).
HARD_NEGATIVES = (
    Field("neg_doc_id", "list", "Hard negatives: each negative document's `doc_id` (sha1 of its "
          "title, a newline and its text).", item="string"),
    Field("neg_passage_id", "list", "Hard negatives: each negative's `passage_id`.",
          item="string"),
    Field("neg_page_id", "list", "Hard negatives: each negative's page id.", item="int64"),
    Field("neg_title", "list", "Hard negatives: each negative's page title.", item="string"),
    Field("neg_text", "list", "Hard negatives: each negative's passage text (capped like "
          "`doc_text`). ICT/BFS: other passages of the query page, other sections first; WLP: "
          "the first passage of pages the query page links to that do not link back.",
          item="string"),
)
HARD_NEGATIVE_IDS = (
    Field("neg_ids", "list", "Hard negatives with `--vocab`: each negative's `[CLS] title [SEP] "
          "passage [SEP]` token ids (as `doc_ids`), concatenated.", item="int32"),
    Field("neg_ids_lengths", "list", "Hard negatives with `--vocab`: the length of each "
          "negative's ids in `neg_ids`.", item="int32"),
)


def pair_fields(with_ids: bool, with_negatives: bool = False) -> tuple[Field, ...]:
    """The pair schema; `with_ids` adds the token id lists (builds with a vocabulary),
    `with_negatives` the hard-negative lists (`build --hard-negatives N`)."""
    fields = PAIR + TOKEN_IDS if with_ids else PAIR
    if with_negatives:
        fields += HARD_NEGATIVES + (HARD_NEGATIVE_IDS if with_ids else ())
    return fields


def current_pair_row(row: dict) -> dict:
    """A pair row read from a shard of any schema version, with the current names of renamed
    fields (`anchor` -> `link_anchor`); fields a version lacks (the ids) stay absent."""
    if not any(old in row for old in RENAMED_SINCE_V1):
        return row
    return {RENAMED_SINCE_V1.get(name, name): value for name, value in row.items()}
