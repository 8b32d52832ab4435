"""The three pre-training tasks of Chang et al. (ICLR 2020, Section 3) over Articles.

Rules (also in the README):
- Tokens: the SentencePiece pieces with `--vocab`, else the script-aware measure of
  wikipairs.text.tokens: words with their combining marks, each punctuation mark, and in scripts
  written without spaces short runs of characters (a Han character; two kana; three Thai, Lao,
  Khmer or Myanmar characters). Every count, cap and truncation below uses the same measure.
- Passages: consecutive sentences of one section (joined by one space, or by nothing after a
  CJK mark such as 。 or 」, as Chinese and Japanese are written), packed greedily until the
  next sentence would push the document (title, text and the [CLS]/[SEP] framing) past
  `doc_max_tokens`; a sentence longer than that alone is a passage of its own. Never across
  sections.
- Documents are capped: a document over `doc_max_tokens` (framing and title included) has its
  text truncated at a token boundary (`{task}_doc_truncated`), so doc_text, doc_tokens and the
  doc ids agree, and memory is bounded by the cap, not by the page.
- ICT: one pair per passage of at least two sentences: the query is a sentence of the passage
  chosen by the seeded sampler, the document the title plus the passage without that sentence.
  With `ict_queries` N > 1, up to N pairs per passage: the same first choice, then other
  sentences in a seeded order (a small corpus gets more distinct queries). A sentence that
  cannot be a query (below) is passed over for the next in that order.
  In a share `ict_keep_rate` of pairs (seeded) the sentence stays in the document, as ORQA does.
- BFS: one pair per passage outside the lead: the query is a sentence of the lead (seeded), the
  document that passage.
- WLP: one pair per (page B, page A) where B links to A (redirects resolved, A != B): the query
  is a lead sentence of A (seeded), the document the first passage of B that holds a link to A
  (or, when every link to A is outside the text, e.g. in an infobox, B's first passage), with the
  anchor text. `link_in_doc` is True only when the anchor is in doc_text (not cut off by the cap).
- Query sentences are used only when they have at least `min_query_tokens` tokens (twice that
  for a text of a script written without spaces that does not end as a sentence: "上野病院"), fit in
  `query_max_tokens` with [CLS]/[SEP] (so query ids are never cut), and are prose: at least half
  of their word tokens (punctuation left out) hold a letter, which drops table debris, number
  lists and bare punctuation. Each reason is counted: `{task}_skipped_{short,long,not_prose}_query`
  (ICT: sentences passed over; BFS and WLP: lead sentences left out of the choice).
- Caps keep, per page and task, the pairs with the smallest seeded hash (for WLP: per query
  page A), so capping is deterministic.
Every choice is `sampling.sample(seed, task, page id, position)`; no process state.
Ids: `pair_id` (task, query position, document passage), `passage_id` (the passage as the page
has it, the same in every task) and `doc_id` (the exact document text) are hashes of their key.
"""
from __future__ import annotations

import hashlib
import heapq
import re
import zlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from ..records import Article, Negative, Pair
from .negatives import attach_wlp_negatives, page_negatives, wlp_candidates
from .sampling import choose, coin, sample, stable_id
from .heldout import query_key, split_of
from ..text.tokens import (is_prose, is_unspaced_fragment, token_count, truncate_by_count,
                           truncate_tokens)

TASKS = ("ict", "bfs", "wlp")
FRAMING = 3  # [CLS] title [SEP] text [SEP]

# The token measure when no SentencePiece model is given (wikipairs.text.tokens owns it).
approx_token_count = token_count


def truncator_for(count: Callable[[str], int]) -> Callable[[str, int], str]:
    """(text, max_tokens) -> the longest prefix of text that `count` puts at <= max_tokens."""
    if count is token_count:
        return truncate_tokens
    return lambda text, max_tokens: truncate_by_count(text, max_tokens, count)


@dataclass(frozen=True)
class PairConfig:
    seed: int = 0
    doc_max_tokens: int = 288  # including the title and the [CLS]/[SEP] framing
    query_max_tokens: int = 64
    min_query_tokens: int = 4
    ict_keep_rate: float = 0.0  # ORQA keeps the query sentence in 10% of ICT documents
    ict_queries: int = 1  # query sentences (pairs) per passage; the paper and ORQA: one
    pairs_per_page: int = 0  # 0: no cap for ICT/BFS
    wlp_docs_per_page: int = 1000  # cap on documents per WLP query page (fan-in is skewed)
    eval_percent: float = 5.0  # share of query pages whose pairs are "eval" (pairs.heldout)
    hard_negatives: int = 0  # negatives per pair (pairs.negatives); 0: none


@dataclass
class Passage:
    """Consecutive sentences of one section. `sentences` holds (paragraph, sentence, text)."""

    index: int  # position among the article's passages
    section: int
    sentences: list[tuple[int, int, str]] = field(default_factory=list)
    counts: list[int] = field(default_factory=list)  # tokens of each sentence
    title_tokens: int = 0

    def text(self, skip: int | None = None) -> str:
        """The sentences (without sentence `skip`) as the page writes them: see `joiner`."""
        kept, joins = self._joins(skip)
        return "".join(t + j for t, j in zip(kept, joins + [""]))

    def _joins(self, skip: int | None) -> tuple[list[str], list[str]]:
        """The sentences kept (all but `skip`) and what joins each to the next (`joiner`)."""
        kept = [t for i, (_, _, t) in enumerate(self.sentences) if i != skip]
        return kept, [joiner(t, following) for t, following in zip(kept, kept[1:])]

    def offset(self, k: int) -> int:
        """Where sentence k starts in `text()`."""
        texts = [t for _, _, t in self.sentences]
        return sum(len(t) + len(joiner(t, texts[i + 1])) for i, t in enumerate(texts[:k]))

    def doc_tokens(self, skip: int | None = None) -> int:
        """Tokens of the document: title and sentences (counted one by one)."""
        return self.title_tokens + sum(n for i, n in enumerate(self.counts) if i != skip)

    def tight(self, skip: int | None = None) -> bool:
        """Whether two of its sentences (without `skip`) join with no space between them (see
        `joiner`): then the sum of their counts is not the text's (a subword model starts each
        sentence counted alone with a word-start piece that the joined text lacks)."""
        return "" in self._joins(skip)[1]


def joiner(sentence: str, following: str = "") -> str:
    """What follows `sentence` in a document before the next one: nothing after a character of
    the CJK punctuation or full-width blocks (Chinese and Japanese write no space after a
    sentence's 。！？ or its closing 」』）, nor after 。” ), as the page has it; else one space."""
    last = sentence[-1:]
    if last in _CLOSING_QUOTES:  # "…一切。”此后": the mark before the quote decides, where
        if not _CJK_START.match(following):  # a CJK sentence follows ("…之。” It was": a space)
            return " "
        last = sentence.rstrip(_CLOSING_QUOTES)[-1:]
    return "" if "\u3000" <= last <= "\u303f" or "\uff00" <= last <= "\uffef" else " "


_CLOSING_QUOTES = "\"'\u201d\u2019\u00bb\u203a)"
_CJK_START = re.compile("[\u201c\u2018]?[\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
                        "\uff00-\uffef]")


def passage_id(lang: str, page_id: int, passage: Passage) -> str:
    """The passage's stable id: language, page, section and its first and last sentence
    (paragraph, index), before any sentence is taken out or the cap cuts its text. No seed, no
    task, no passage index: the same sentences of a page have one id in every task and build."""
    (p0, i0, _), (p1, i1, _) = passage.sentences[0], passage.sentences[-1]
    return stable_id("passage", lang, page_id, passage.section, p0, i0, p1, i1)


def doc_id(title: str, text: str) -> str:
    """The exact document's id: 16 hex digits of sha1(title, newline, text) (titles hold no
    newline), so two documents share it if and only if they are the same text."""
    return hashlib.sha1(f"{title}\n{text}".encode("utf-8")).hexdigest()[:16]


def pack_passages(article: Article, doc_max_tokens: int,
                  count: Callable[[str], int] = approx_token_count) -> list[Passage]:
    """The article's passages (see the module rules). Framing: [CLS] title [SEP] text [SEP]."""
    title_tokens = count(article.title)
    budget = max(1, doc_max_tokens - title_tokens - FRAMING)
    passages: list[Passage] = []
    for s, section in enumerate(article.sections):
        current, used = None, 0
        for p, paragraph in enumerate(section.paragraphs):
            for i, sentence in enumerate(paragraph):
                n = count(sentence)
                if current is None or used + n > budget:
                    current, used = Passage(len(passages), s, title_tokens=title_tokens), 0
                    passages.append(current)
                current.sentences.append((p, i, sentence))
                current.counts.append(n)
                used += n
    return passages


def lead_sentences(article: Article) -> list[tuple[int, int, str]]:
    """(paragraph, sentence, text) of the lead section (section 0)."""
    lead = article.lead
    if lead is None:
        return []
    return [(p, i, t) for p, paragraph in enumerate(lead.paragraphs) for i, t in enumerate(paragraph)]


class PairBuilder:
    """Builds Pairs from Articles under a PairConfig; counts what it skips in `counts`."""

    def __init__(self, config: PairConfig = PairConfig(),
                 count: Callable[[str], int] = approx_token_count,
                 counts: Counter | None = None):
        """`count`: the token measure (approx_token_count, or a Tokenizer's count_tokens);
        documents are truncated by the same measure. `counts`: where skips are counted."""
        self.config, self._count = config, count
        self._truncate = truncator_for(count)
        self.counts = counts if counts is not None else Counter()
        self._cache: dict[str, int] = {}
        self._problems: dict[str, str | None] = {}

    def count(self, text: str) -> int:
        """Tokens of `text`, remembered (sentences are counted for packing and again as queries)."""
        n = self._cache.get(text)
        if n is None:
            if len(self._cache) > 50_000:
                self._cache.clear()
            n = self._cache[text] = self._count(text)
        return n

    def passages(self, article: Article) -> list[Passage]:
        return pack_passages(article, self.config.doc_max_tokens, self.count)

    def _query_problem(self, text: str) -> str | None:
        """Why `text` cannot be a query ("short", "long", "not_prose"), or None when it can;
        remembered (BFS and WLP both ask about every lead sentence)."""
        if text not in self._problems:
            if len(self._problems) > 50_000:
                self._problems.clear()
            self._problems[text] = self._find_query_problem(text)
        return self._problems[text]

    def _find_query_problem(self, text: str) -> str | None:
        n = self.count(text)  # first: a 20 MB "sentence" is rejected before it is scanned again
        if n < self.config.min_query_tokens:
            return "short"
        if n < 2 * self.config.min_query_tokens and is_unspaced_fragment(text):
            return "short"  # a label of a script without spaces: its characters are no words
        if n + 2 > self.config.query_max_tokens:  # [CLS] query [SEP] must fit
            return "long"
        return None if is_prose(text) else "not_prose"

    def _usable_lead(self, article: Article, task: str) -> list[tuple[int, int, str]]:
        """The lead sentences that can be queries; the others counted by reason under `task`."""
        usable = []
        for sentence in lead_sentences(article):
            problem = self._query_problem(sentence[2])
            if problem is None:
                usable.append(sentence)
            else:
                self.counts[f"{task}_skipped_{problem}_query"] += 1
        return usable

    def document(self, passage: Passage, skip: int | None = None) -> tuple[str, int, bool]:
        """(text, tokens, truncated) of the document of `passage` without sentence `skip`:
        tokens count the title and the text, and the text is cut at a token boundary when the
        document would pass `doc_max_tokens` with its framing (see the module rules)."""
        text, tokens = passage.text(skip), passage.doc_tokens(skip)
        if passage.tight(skip):  # Chinese, Japanese: the joined text counted as it is written
            tokens = passage.title_tokens + self.count(text)
        room_for_title = max(0, self.config.doc_max_tokens - FRAMING)
        title_tokens = min(passage.title_tokens, room_for_title)  # ids cut a long title too
        room = room_for_title - title_tokens
        if tokens - passage.title_tokens <= room:
            return text, tokens, False
        text = self._truncate(text, room)
        return text, title_tokens + (self.count(text) if text else 0), True

    # ---- ICT --------------------------------------------------------------------------------
    def ict(self, article: Article, passages: list[Passage] | None = None) -> list[Pair]:
        pairs = []
        passages = passages if passages is not None else self.passages(article)
        for passage in passages:
            if len(passage.sentences) < 2:
                self.counts["ict_skipped_single_sentence_passage"] += 1
                continue
            pairs.extend(self._ict_pair(article, passage, q, n)
                         for n, q in enumerate(self._ict_queries(article, passage)))
        return self._with_negatives(self._cap(pairs, "ict", article.id), article, passages)

    def _ict_queries(self, article: Article, passage: Passage) -> list[int]:
        """The passage's query sentences: up to `ict_queries` of the sentences that can be
        queries, taken in a seeded order: the seeded first choice, then the others by their own
        seeded key. A sentence that cannot be a query (too short or long, not prose) is passed
        over and counted (`ict_skipped_{reason}_query`), and the next one in the order taken, so
        a passage yields its pairs whenever it holds enough usable sentences (as BFS and WLP
        choose among the usable lead sentences). A sentence the passage holds twice is no query
        (`ict_skipped_repeated_query`): its document would hold it. Each query is one pair: a
        small corpus yields more distinct queries with `ict_queries` > 1, as ORQA's sampling of a
        new sentence per epoch does."""
        seed, n, want = self.config.seed, len(passage.sentences), self.config.ict_queries
        first = choose(n, seed, "ict", article.id, passage.index)

        def order() -> Iterator[int]:
            yield first  # the rest is ordered only if needed: most first choices are usable
            yield from sorted((k for k in range(n) if k != first),
                              key=lambda k: sample(seed, "ict-more", article.id, passage.index, k))

        texts = [t for _, _, t in passage.sentences]
        repeated = {t for t in texts if texts.count(t) > 1} if len(set(texts)) < n else ()
        queries = []
        for k in order():
            problem = self._query_problem(texts[k])
            if problem is None and texts[k] in repeated:
                problem = "repeated"  # the document would hold the query still
            if problem is not None:
                self.counts[f"ict_skipped_{problem}_query"] += 1
                continue
            queries.append(k)
            if len(queries) == want:
                break
        return queries

    def _ict_pair(self, article: Article, passage: Passage, q: int, n: int) -> Pair:
        """The ICT pair of query sentence q (a usable one), the n-th query of the passage."""
        p, i, query = passage.sentences[q]
        key = (article.id, passage.index) if n == 0 else (article.id, passage.index, q)
        keep = coin(self.config.ict_keep_rate, self.config.seed, "ict-keep", *key)
        text, tokens, truncated = self.document(passage, None if keep else q)
        if truncated:
            self.counts["ict_doc_truncated"] += 1
            keep = keep and passage.offset(q) + len(query) <= len(text)
        return _pair("ict", article, (passage.section, p, i), query, article, passage, text,
                     query_in_doc=keep, tokens=(passage.counts[q], tokens))

    # ---- BFS --------------------------------------------------------------------------------
    def bfs(self, article: Article, passages: list[Passage] | None = None) -> list[Pair]:
        seed, pairs = self.config.seed, []
        lead = self._usable_lead(article, "bfs")
        passages = passages if passages is not None else self.passages(article)
        body = [x for x in passages if x.section != 0]
        if not lead or not body:
            self.counts["bfs_skipped_no_lead" if not lead else "bfs_skipped_no_body"] += 1
            return []
        for passage in body:
            p, i, query = lead[choose(len(lead), seed, "bfs", article.id, passage.index)]
            text, tokens, truncated = self.document(passage)
            if query in text:  # (a lead sentence said again in the section)
                self.counts["bfs_skipped_query_in_doc"] += 1
                continue
            if truncated:
                self.counts["bfs_doc_truncated"] += 1
            pairs.append(_pair("bfs", article, (0, p, i), query, article, passage,
                               text, tokens=(self.count(query), tokens)))
        return self._with_negatives(self._cap(pairs, "bfs", article.id), article, passages)

    def _with_negatives(self, pairs: list[Pair], article: Article, passages: list[Passage]
                        ) -> list[Pair]:
        """ICT/BFS pairs with their hard negatives (`hard_negatives` > 0; pairs.negatives)."""
        n = self.config.hard_negatives
        if n <= 0 or not pairs:
            return pairs
        made: dict[int, Negative] = {}

        def negative_of(passage: Passage) -> Negative:
            if passage.index not in made:
                made[passage.index] = self.negative(article, passage)
            return made[passage.index]
        for pair in pairs:
            pair.negatives = page_negatives(pair, passages, negative_of, n, self.config.seed,
                                            self.counts)
        return pairs

    def negative(self, article: Article, passage: Passage) -> Negative:
        """`passage` of `article` as a hard negative: its document (capped like a pair's)."""
        text, tokens, _ = self.document(passage)
        return Negative(passage_id(article.lang, article.id, passage), article.id, article.title,
                        text, doc_id(article.title, text), tokens)

    def _cap(self, pairs: list[Pair], task: str, page_id: int) -> list[Pair]:
        cap = self.config.pairs_per_page
        if cap <= 0 or len(pairs) <= cap:
            return pairs
        self.counts[f"{task}_capped"] += len(pairs) - cap
        keep = heapq.nsmallest(cap, pairs, key=lambda x: sample(self.config.seed, task, "cap",
                                                                 page_id, x.doc_passage))
        return sorted(keep, key=lambda x: x.doc_passage)

    # ---- WLP: the two sides of the join, then the pairs of one query page ------------------
    def wlp_query(self, article: Article, passages: list[Passage] | None = None
                  ) -> "WlpQuery | None":
        """The query side of page A, keyed by its title; None when its lead has no usable sentence.
        With hard negatives it carries A's first passage (a negative of pages linking to A)."""
        lead = self._usable_lead(article, "wlp")
        if not lead:
            self.counts["wlp_skipped_no_lead"] += 1
            return None
        first = None
        if self.config.hard_negatives > 0:
            passages = passages if passages is not None else self.passages(article)
            first = self.negative(article, passages[0]) if passages else None
        return WlpQuery(article.id, article.title, article.lang, lead,
                        [self.count(t) for _, _, t in lead], first)

    def wlp_documents(self, article: Article, passages: list[Passage] | None = None,
                      may_exist: Callable[[str], bool] | None = None
                      ) -> Iterator[tuple[str, "WlpDoc"]]:
        """(link target as written, WlpDoc) for each distinct target page B links to.

        Targets are resolved through redirects later (a join), so the same A may come twice from
        one B under two spellings; `WlpDoc.order` (link position) lets the join keep the first.
        `may_exist(target)` False drops a target at once (counted: it cannot be a page).
        Each passage's text is made (and truncated) once, however many targets it serves."""
        passages = passages if passages is not None else self.passages(article)
        if not passages:
            return
        where = {(x.section, p, i): (x, k) for x in passages for k, (p, i, _) in enumerate(x.sentences)}
        seen, texts = set(), {}
        for order, link in enumerate(article.links):
            target = link.target
            if target in seen or not target:
                continue
            seen.add(target)
            if may_exist is not None and not may_exist(target):
                self.counts["wlp_links_to_missing_pages"] += 1
                continue
            passage, k = where.get((link.section, link.paragraph, link.sentence), (None, 0))
            in_text = passage is not None
            passage = passage or passages[0]
            if passage.index not in texts:
                texts[passage.index] = self._wlp_text(passage)
            text, tokens, truncated = texts[passage.index]
            if in_text and truncated:  # the anchor may lie in the part the document cap cut off
                in_text = passage.offset(k) + link.end <= len(text)
            yield target, WlpDoc(article.id, article.title, article.lang, passage.section,
                                 passage.index, text, link.anchor, in_text, order, tokens,
                                 passage_id(article.lang, article.id, passage))

    def _wlp_text(self, passage: Passage) -> tuple[str, int, bool]:
        """`document(passage)`, counted once per passage however many targets it serves."""
        text, tokens, truncated = self.document(passage)
        if truncated:
            self.counts["wlp_doc_truncated"] += 1
        return text, tokens, truncated

    def wlp_pairs(self, query: "WlpQuery", docs: Iterable["WlpDoc"]) -> list[Pair]:
        """Pairs of one query page A with the documents of pages linking to it (any order in).

        Keeps one document per linking page (its first link to A), drops self-links, caps at
        `wlp_docs_per_page` by seeded hash; the result is sorted by document page id."""
        best: dict[int, WlpDoc] = {}
        links = 0
        for doc in docs:
            if is_self_link(query.title, doc):
                self.counts["wlp_skipped_self_link"] += 1
                continue
            links += 1
            old = best.get(doc.page_id)
            if old is None or doc.order < old.order:
                best[doc.page_id] = doc
        chosen = select_wlp_docs(best.values(), query.title, self.config)
        # links not made into pairs: a page's later links to A, and pages over the cap (what
        # the Beam path can count exactly whatever its bundles: links, not distinct pages)
        self.counts["wlp_capped"] += links - len(chosen)
        pairs = []
        for doc in sorted(chosen, key=lambda d: d.page_id):
            q = choose(len(query.lead), self.config.seed, "wlp", query.page_id, doc.page_id)
            p, i, text = query.lead[q]
            pairs.append(Pair(
                pair_id=stable_id("wlp", query.page_id, 0, p, i, doc.page_id, doc.passage),
                passage_id=doc.passage_id, doc_id=doc_id(doc.title, doc.text), task="wlp",
                lang=query.lang, query=text, query_page_id=query.page_id,
                query_title=query.title, query_section=0, query_paragraph=p, query_sentence=i,
                doc_page_id=doc.page_id, doc_title=doc.title, doc_section=doc.section,
                doc_passage=doc.passage, doc_text=doc.text, link_anchor=doc.anchor,
                link_in_doc=doc.link_in_text, query_tokens=query.counts[q],
                doc_tokens=doc.tokens))
        return pairs


@dataclass
class WlpQuery:
    page_id: int
    title: str
    lang: str
    lead: list[tuple[int, int, str]]  # usable lead sentences: (paragraph, sentence, text)
    counts: list[int] = field(default_factory=list)  # their tokens
    first: Negative | None = None  # with hard negatives: the first passage (pairs.negatives)

    def __reduce__(self):  # see _packed
        return _unpack_query, (self.page_id, self.title, self.lang,
                               [(p, i) for p, i, _ in self.lead],
                               _packed([t for _, _, t in self.lead]), self.counts, self.first)


@dataclass
class WlpDoc:
    page_id: int
    title: str
    lang: str
    section: int
    passage: int
    text: str
    anchor: str
    link_in_text: bool
    order: int  # index of the link in the article's links: the first link to A wins
    tokens: int = 0  # title and passage tokens
    passage_id: str = ""  # of the passage, as the pairs carry it (tasks.passage_id)

    def __reduce__(self):  # see _packed
        return _unpack_doc, (self.page_id, self.title, self.lang, self.section, self.passage,
                             _packed_passage(self.text), self.anchor, self.link_in_text,
                             self.order, self.tokens, self.passage_id)


def _packed(texts: list[str]) -> tuple[list[int], bytes]:
    """Texts as their lengths and their zlib-compressed UTF-8: how the two WLP sides are pickled
    for the join's shuffle, which a local runner keeps in memory (texts are most of their bytes,
    and compress ~2x)."""
    return [len(t) for t in texts], zlib.compress("".join(texts).encode("utf-8"), 1)


# A passage serves as the document of every distinct page it links to (~8 in the real dumps
# here: gensim 20,838 documents of 2,433 passages, jawiki 24,368 of 3,017), and the
# runner pickles each WlpDoc on its own: the passage is compressed once and its bytes reused
# (compressing was half of the CPU time of making the WLP documents).
_PACKED_PASSAGES: dict[str, tuple[list[int], bytes]] = {}


def _packed_passage(text: str) -> tuple[list[int], bytes]:
    packed = _PACKED_PASSAGES.get(text)
    if packed is None:
        if len(_PACKED_PASSAGES) >= 256:
            _PACKED_PASSAGES.clear()
        packed = _PACKED_PASSAGES[text] = _packed([text])
    return packed


def _unpacked(packed: tuple[list[int], bytes]) -> list[str]:
    lengths, data = packed
    joined, texts, at = zlib.decompress(data).decode("utf-8"), [], 0
    for length in lengths:
        texts.append(joined[at:at + length])
        at += length
    return texts


def _unpack_query(page_id, title, lang, positions, texts, counts, first=None) -> WlpQuery:
    lead = [(p, i, t) for (p, i), t in zip(positions, _unpacked(texts))]
    return WlpQuery(page_id, title, lang, lead, counts, first)


def _unpack_doc(page_id, title, lang, section, passage, text, anchor, link_in_text, order,
                tokens, passage_key) -> WlpDoc:
    return WlpDoc(page_id, title, lang, section, passage, _unpacked(text)[0], anchor,
                  link_in_text, order, tokens, passage_key)


def is_self_link(query_title: str, doc: WlpDoc) -> bool:
    """Whether the document's page is the query page itself (a page linking to itself, directly
    or through a redirect): no WLP pair. Decided by title, which the keyed join of a Beam build
    knows before it meets the query page (titles are unique within a wiki, as page ids are)."""
    return doc.title == query_title


def wlp_rank(config: PairConfig, query_title: str, doc_page_id: int) -> int:
    """The seeded hash that decides which documents a capped WLP query page keeps. Keyed by the
    query page's title, which the join knows before it meets the query page itself."""
    return sample(config.seed, "wlp", "cap", query_title, doc_page_id)


def select_wlp_docs(docs: Iterable[WlpDoc], query_title: str, config: PairConfig) -> list[WlpDoc]:
    """At most `wlp_docs_per_page` documents: those with the smallest `wlp_rank`."""
    docs = list(docs)
    cap = config.wlp_docs_per_page
    if cap <= 0 or len(docs) <= cap:
        return docs
    return heapq.nsmallest(cap, docs, key=lambda d: wlp_rank(config, query_title, d.page_id))


def _pair(task: str, query_article: Article, query_pos: tuple[int, int, int], query: str,
          doc_article: Article, passage: Passage, doc_text: str, query_in_doc: bool = False,
          tokens: tuple[int, int] = (-1, -1)) -> Pair:
    s, p, i = query_pos
    return Pair(
        pair_id=stable_id(task, query_article.id, s, p, i, doc_article.id, passage.index),
        passage_id=passage_id(doc_article.lang, doc_article.id, passage),
        doc_id=doc_id(doc_article.title, doc_text), task=task, lang=query_article.lang,
        query=query, query_page_id=query_article.id,
        query_title=query_article.title, query_section=s, query_paragraph=p, query_sentence=i,
        doc_page_id=doc_article.id, doc_title=doc_article.title, doc_section=passage.section,
        doc_passage=passage.index, doc_text=doc_text, query_in_doc=query_in_doc,
        query_tokens=tokens[0], doc_tokens=tokens[1])


def build_pairs_in_memory(articles: Iterable[Article], tasks: Iterable[str],
                          builder: PairBuilder) -> dict[str, list[Pair]]:
    """All pairs of `tasks` from articles whose links are already redirect-resolved, in memory.

    The reference the Beam pipeline is tested against (and fine for small dumps). Pairs are
    sorted by pair_id per task."""
    tasks = list(tasks)
    out: dict[str, list[Pair]] = {t: [] for t in tasks}
    queries, docs = {}, {}
    for article in articles:
        passages = builder.passages(article)
        if "ict" in out:
            out["ict"].extend(builder.ict(article, passages))
        if "bfs" in out:
            out["bfs"].extend(builder.bfs(article, passages))
        if "wlp" in out:
            query = builder.wlp_query(article, passages)
            if query is not None:
                queries[article.title] = query
            for target, doc in builder.wlp_documents(article, passages):
                docs.setdefault(target, []).append(doc)
    if "wlp" in out:
        by_query, candidates = {}, {}
        for title, query in queries.items():
            by_query[title] = builder.wlp_pairs(query, docs.get(title, ()))
            for doc_title, negative in wlp_candidates(by_query[title], query.first):
                candidates.setdefault(doc_title, []).append(negative)
        n = builder.config.hard_negatives
        for title, pairs in by_query.items():
            if n > 0:
                attach_wlp_negatives(pairs, candidates.get(title, ()), n, builder.config.seed,
                                     builder.counts)
            out["wlp"].extend(pairs)
    assign_splits(out, builder.config.eval_percent, builder.counts)
    for pairs in out.values():
        pairs.sort(key=lambda x: x.pair_id)
    return out


def assign_splits(pairs: dict[str, list[Pair]], eval_percent: float, counts=None) -> None:
    """Sets each pair's `split` by its query page (pairs.heldout.split_of) and drops, in place,
    the eval pairs whose query text (`query_key`) is also the query of a train pair of any task,
    counted as `<task>_eval_dropped_query_on_train_page`. What the pipeline does with a join."""
    train_keys = set()
    for task_pairs in pairs.values():
        for pair in task_pairs:
            pair.split = split_of(pair.query_page_id, eval_percent)
            if pair.split == "train":
                train_keys.add(query_key(pair.query))
    for task, task_pairs in pairs.items():
        kept = [p for p in task_pairs if p.split == "train" or query_key(p.query) not in train_keys]
        if counts is not None and len(kept) < len(task_pairs):
            counts[f"{task}_eval_dropped_query_on_train_page"] += len(task_pairs) - len(kept)
        task_pairs[:] = kept


__all__ = ["TASKS", "PairConfig", "PairBuilder", "Passage", "WlpQuery", "WlpDoc", "pack_passages",
           "passage_id", "doc_id",
           "lead_sentences", "approx_token_count", "truncator_for", "select_wlp_docs", "wlp_rank",
           "is_self_link",
           "build_pairs_in_memory", "assign_splits"]
