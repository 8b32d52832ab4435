"""The vocabulary core of `wikipairs vocab`: sample sentences, train SentencePiece, tokenize.

Pure Python on top of `sentencepiece` (no Beam, no TensorFlow). The ids of the special tokens are
fixed: [PAD]=0, [CLS]=1, [SEP]=2, [MASK]=3, [UNK]=4, then the learned pieces.

- `sample_sentences`: a deterministic, order-independent sample of an article stream, in
  O(max_sentences) memory; `sample_dump_sentences`: the same sample of a dump, taken on many
  processes (`wikipairs vocab --workers`).
- `train_vocab`: a byte-for-byte reproducible model file (`.model`, plus the `.vocab` listing next
  to it), written under a temporary name and renamed when complete.
- `Tokenizer`: [CLS]/[SEP] framing and truncation; picklable, so it can ship to Beam workers.
"""
from __future__ import annotations

import hashlib
import heapq
import io
import os
import re
import time
from collections import Counter
from collections.abc import Iterable, Iterator

import sentencepiece as spm

from ..errors import WikipairsError
from ..records import Article
from ..fileio import write_atomic
from ..progress import ProgressLines
from ..special_tokens import (CLS, CLS_ID, MASK, MASK_ID, PAD, PAD_ID, SEP, SEP_ID,  # noqa: F401
                             SPECIAL_TOKENS, UNK, UNK_ID)
MODEL_TYPES = ("unigram", "bpe", "char", "word")


class VocabError(WikipairsError, ValueError):
    """A vocabulary that cannot be trained or loaded (a ValueError; the CLI prints one line)."""


# ---- sampling --------------------------------------------------------------------------------

def sentence_hash(seed: int, article_id: int, section: int, paragraph: int, index: int) -> int:
    """The stable 128-bit rank of one sentence position under `seed` (smaller is sampled first)."""
    key = f"{seed}\x00{article_id}\x00{section}\x00{paragraph}\x00{index}".encode()
    return int.from_bytes(hashlib.blake2b(key, digest_size=16).digest(), "big")


class _Sample:
    """The `size` smallest (rank, text) seen: a bounded max-heap of (-rank, text). Which are kept
    depends on the items only, never on the order they come in (ties of rank go by text), so
    samples of parts of the input merge into the sample of the whole."""

    def __init__(self, size: int):
        self.size, self.heap = size, []  # heap[0]: the largest kept (rank, text)

    def add(self, neg_rank: int, text: str) -> None:
        item = (neg_rank, text)
        if len(self.heap) < self.size:
            heapq.heappush(self.heap, item)
        elif self.heap and item > self.heap[0]:
            heapq.heapreplace(self.heap, item)

    def add_articles(self, articles: Iterable[Article], seed: int) -> None:
        for article in articles:
            for s, p, i, text in article.sentences():
                if text.strip():
                    self.add(-sentence_hash(seed, article.id, s, p, i), text)

    def merge(self, items: Iterable[tuple[int, str]]) -> None:
        for neg_rank, text in items:
            self.add(neg_rank, text)

    def texts(self) -> list[str]:
        return [text for _, text in sorted(self.heap, reverse=True)]


def sample_sentences(articles: Iterable[Article], max_sentences: int, seed: int) -> list[str]:
    """The `max_sentences` non-blank sentences of `articles` with the smallest `sentence_hash`.

    Input: any iterable of Articles (streamed once). Output: the sentences sorted by hash, so the
    result depends only on the sentences (with their article id and position) and `seed`, not on
    article order. Memory is O(max_sentences): a bounded max-heap of (-hash, text)."""
    if max_sentences < 0:
        raise VocabError(f"max_sentences must be >= 0, got {max_sentences}")
    sample = _Sample(max_sentences)
    sample.add_articles(articles, seed)
    return sample.texts()


# ---- sampling a dump on many cores -----------------------------------------------------------

SPLITS_PER_WORKER = 4  # files without an index: parts per worker, so that the parts balance
# A spawned sampling process takes ~1.5 s to start: on 2 cores a second one pays for itself from
# ~4 MB of bz2 dump (2026-11-29: the gensim sample, 1.6 MB, 16.6 s in one process against 18.4 s
# in two; its x10 copy, 16 MB, 46.0 against 36.4 s). Beam's workers cost more (BYTES_PER_WORKER
# in pipelines/driver.py).
SAMPLING_BYTES_PER_WORKER = 4 << 20
_WORKER: dict = {}  # the state a sampling process gets once (_init_worker)
LIVE_EVERY = 20  # pages between a worker's additions to the shared pages/sentences read
LIVE_WAIT = 1.0  # seconds the main process waits for a split before it looks at those counts


def _init_worker(state: dict, live) -> None:
    _WORKER.clear()
    _WORKER.update(state, cleaners={}, live=live)


def _add_live(counts: Counter, noted: list[int]) -> None:
    """Add what this worker read since it last noted (`noted`: pages, sentences) to the
    shared counts the main process shows in its progress lines while splits are under way."""
    live = _WORKER["live"]
    pages, sentences = counts["pages_read"], counts["sentences"]
    with live.get_lock():
        live[0] += pages - noted[0]
        live[1] += sentences - noted[1]
    noted[:] = [pages, sentences]


def _sample_split(split) -> tuple[Counter, list[tuple[int, str]]]:
    """One split's pages -> (its counts, its own sample): the work of one task of the pool."""
    from ..parse import cleaner_kind, parse_page
    from ..text.titles import TitleParser
    from ..text.wikitext import ParseOptions
    from ..reading.splits import read_split

    config, counts, cleaners = _WORKER["config"], Counter(), _WORKER["cleaners"]
    sample, noted = _Sample(_WORKER["max_sentences"]), [0, 0]

    def articles():
        for page in read_split(split, counts, config.allow_truncated, config.lang):
            if page.source not in cleaners:  # links are not resolved: sentences never need it
                cleaners[page.source] = cleaner_kind(page)(  # wikitext, HTML or passages
                    TitleParser(_WORKER["sites"][page.source]), _WORKER["splitter"],
                    ParseOptions(keep_tables=config.keep_tables), resolve=None)
            article = parse_page(page, cleaners[page.source], config, counts)
            if counts["pages_read"] - noted[0] >= LIVE_EVERY:
                _add_live(counts, noted)
            if article is not None:
                counts["articles"] += 1
                yield article
    sample.add_articles(articles(), _WORKER["seed"])
    _add_live(counts, noted)
    return counts, sample.heap


def _plan(paths: list[str], parts: int, workdir: str, sites: dict) -> list:
    """Splits of the inputs for `parts` workers: stream ranges of a multistream file with an
    index, else byte ranges of a plain copy decompressed once into `workdir` (where that cannot
    be done, parts that each read the file and parse every parts-th block of pages)."""
    from ..reading.splits import plan_splits, prepare_file
    from ..text.titles import TitleParser

    splits = []
    for path in paths:
        planned = plan_splits([path], parts_per_file=parts)
        if planned and planned[0].parts > 1 and not planned[0].kind:  # no index, not passages
            prepared, _, _ = prepare_file(path, parts, workdir, TitleParser(sites[path]), 1)
            planned = prepared or planned
        splits.extend(planned)
    return splits


def sample_dump_sentences(config, max_sentences: int, seed: int, workers: int = 1,
                counts: Counter | None = None, progress: "VocabProgress | None" = None,
                workdir: str | None = None) -> list[str]:
    """`sample_sentences` of the articles of a dump (`config`: a wikipairs.parse.ParseConfig) on
    `workers` processes (0: one per core, at most one per SAMPLING_BYTES_PER_WORKER of
    compressed input). The sample is the same for every number of workers: a
    sentence is kept by its hash, which no split or order changes, and the splits' samples merge
    into the sample of the whole. One worker reads the dump in one process (parse.iter_articles);
    more plan splits (as build does), sample each in a pool and merge. `workdir` (default: the
    system's temporary folder) holds the decompressed copy of a file without an index while it
    runs. `counts` gets pages_read, sentences, articles and the skip reasons. The pool's
    processes are spawned (forked ones can hang on a lock of the main process's decompression
    threads), so a script calling this with workers > 1 needs `if __name__ == "__main__":`."""
    import multiprocessing
    import tempfile

    from ..parse import iter_articles, open_header
    from ..reading import expand_inputs
    from ..text.sentences import SentenceSplitter

    counts = counts if counts is not None else Counter()
    progress = progress or VocabProgress(counts, max_sentences, quiet=True)
    if not workers:
        from ..reading.splits import auto_workers, input_work_bytes
        workers = auto_workers(os.cpu_count() or 1, input_work_bytes(expand_inputs(config.inputs)),
                               SAMPLING_BYTES_PER_WORKER)
    if max_sentences < 0:
        raise VocabError(f"max_sentences must be >= 0, got {max_sentences}")
    if workers <= 1:
        return sample_sentences(progress.articles(iter_articles(config, counts)), max_sentences,
                                seed)
    paths = expand_inputs(config.inputs)
    sites = {p: open_header(p, lang=config.lang).site for p in paths}  # XML or Enterprise HTML
    texts = []
    if SentenceSplitter.needs_training_text(config.sentence_splitter):
        from ..parse import training_text
        texts = training_text(paths, config.lang, config.allow_truncated)
    splitter = SentenceSplitter.for_language(sites[paths[0]].lang, texts,
                                             method=config.sentence_splitter)
    sample = _Sample(max_sentences)
    workdir = workdir if workdir and os.path.isdir(workdir) else None
    with tempfile.TemporaryDirectory(prefix="wikipairs-vocab-", dir=workdir) as tmp:
        splits = _plan(paths, workers * SPLITS_PER_WORKER, tmp, sites)
        state = {"config": config, "sites": sites, "splitter": splitter, "seed": seed,
                 "max_sentences": max_sentences}
        context = multiprocessing.get_context("spawn")
        live, done = context.Array("q", 2), Counter()  # live: pages, sentences read so far
        with context.Pool(min(workers, len(splits)), _init_worker, (state, live)) as pool:
            # Any order: the merged sample does not depend on it.
            results, left = pool.imap_unordered(_sample_split, splits), len(splits)
            while left:
                try:
                    split_counts, items = results.next(timeout=LIVE_WAIT)
                except multiprocessing.TimeoutError:  # a line while splits are under way
                    counts["pages_read"], counts["sentences"] = max(
                        live[0], done["pages_read"]), max(live[1], done["sentences"])
                    if counts["pages_read"]:  # none yet: the workers are starting
                        progress.tick()
                    continue
                left -= 1
                done.update(split_counts)
                sample.merge(items)
    counts.update({k: v - counts[k] for k, v in done.items()})  # the exact counts at the end
    progress.tick(final=True)
    return sample.texts()


class VocabProgress:
    """`wikipairs vocab`'s lines on stderr (the rule of when: wikipairs.progress): pages read,
    sentences seen and kept, pages/s while sampling, then a line before and after training,
    which on a full dump takes hours with nothing else to show. Nothing when `quiet`."""

    def __init__(self, counts: Counter, max_sentences: int, quiet: bool, every: float = 5.0):
        self.counts, self.max_sentences = counts, max_sentences
        self.lines = ProgressLines(every=every, quiet=quiet)
        self.training_started = 0.0

    def articles(self, articles: Iterable[Article]) -> Iterator[Article]:
        """`articles`, reporting as they pass (the counts are iter_articles')."""
        for article in articles:
            yield article
            self.tick()
        self.tick(final=True)

    def tick(self, final: bool = False) -> None:
        """A progress line, if one is due (`final`: the last, always)."""
        pages, sentences = self.counts["pages_read"], self.counts["sentences"]
        self.lines.report(pages, lambda rate: (
            f"  {pages:,} pages read, {sentences:,} sentences, "
            f"{min(sentences, self.max_sentences):,} sampled, {rate:,.0f} pages/s"), final)

    def training(self, sentences: int, vocab_size: int, model_type: str) -> None:
        self.training_started = time.monotonic()
        self._say(f"  training a {model_type} vocabulary of {vocab_size:,} pieces on "
                  f"{sentences:,} sentences")

    def trained(self) -> None:
        self._say(f"  trained in {time.monotonic() - self.training_started:,.1f} s")

    def _say(self, text: str) -> None:
        self.lines.report(0, lambda _rate: text, final=True)


# ---- training --------------------------------------------------------------------------------

def vocab_file_path(model_path: str) -> str:
    """The `.vocab` listing next to `model_path` (`x.model` -> `x.vocab`, else `x` -> `x.vocab`)."""
    root, ext = os.path.splitext(model_path)
    return (root if ext == ".model" else model_path) + ".vocab"


class _Counted:
    """Iterates `sentences` for the trainer, counting sentences and characters and keeping an
    exception raised by the caller's iterable (sentencepiece would flatten it to a RuntimeError)."""

    def __init__(self, sentences: Iterable[str]):
        self._it, self.sentences, self.chars, self.nonblank = iter(sentences), 0, 0, 0
        self.error: BaseException | None = None

    def __iter__(self) -> Iterator[str]:
        try:
            for text in self._it:
                self.sentences += 1
                self.chars += len(text)
                self.nonblank += bool(text.strip())
                yield text
        except Exception as e:
            self.error = e
            raise


def trainer_options(vocab_size: int, model_type: str, character_coverage: float) -> dict:
    """SentencePiece trainer options (without input/output) for reproducible models.

    [PAD] is sentencepiece's pad piece (id 0) and [CLS]/[SEP]/[MASK] are *control* symbols (ids
    1-3): control pieces are never produced by encoding text, so a literal "[MASK]" in an article
    stays plain text, while they can still be looked up with `piece_to_id` and `decode` drops
    them. (User-defined symbols would be matched in the text, which we do not want.) [UNK] is the
    unk piece (id 4); sentencepiece adds no BOS/EOS of its own; the Tokenizer frames instead."""
    return dict(
        vocab_size=vocab_size, model_type=model_type, character_coverage=character_coverage,
        pad_id=PAD_ID, pad_piece=PAD, unk_id=UNK_ID, unk_piece=UNK, bos_id=-1, eos_id=-1,
        control_symbols=[CLS, SEP, MASK],
        hard_vocab_limit=False,  # a vocab_size too large for the input shrinks instead of failing
        num_threads=1, input_sentence_size=0, shuffle_input_sentence=False,  # deterministic
        minloglevel=2,  # sentencepiece's own progress log is very long; errors still raise
    )


def _sp_message(error: Exception) -> str:
    """sentencepiece's error text without the source location: one line for the user."""
    text = re.sub(r"^[A-Z_]+: (src/\S+ \[.*?\]\s*)?", "", str(error).strip())
    return " ".join(text.split()) or type(error).__name__


def _train_model_proto(sentences: Iterable[str], options: dict, seed: int) -> tuple[bytes, _Counted]:
    """Train in memory; returns (serialized ModelProto, counts). Raises VocabError on failure."""
    counted, out = _Counted(sentences), io.BytesIO()
    spm.set_random_generator_seed(seed)
    try:
        spm.SentencePieceTrainer.train(sentence_iterator=iter(counted), model_writer=out,
                                       **options)
    except (RuntimeError, ValueError) as e:
        if counted.error is not None:
            raise counted.error from None
        if counted.nonblank == 0:
            raise VocabError("cannot train a vocabulary: no sentences (or only empty ones)") from None
        raise VocabError(f"cannot train a vocabulary of {options['vocab_size']} "
                         f"({options['model_type']}): {_sp_message(e)}") from None
    return out.getvalue(), counted


def vocab_listing(processor: spm.SentencePieceProcessor) -> str:
    """The `.vocab` text sentencepiece writes itself: "piece<TAB>score" per id, in id order."""
    return "".join(f"{processor.id_to_piece(i)}\t{processor.get_score(i):g}\n"
                   for i in range(processor.get_piece_size()))


def train_vocab(sentences: Iterable[str], model_path: str, vocab_size: int = 32000,
                model_type: str = "unigram", character_coverage: float = 0.9995,
                seed: int = 0) -> dict:
    """Train a SentencePiece model on `sentences` and write `model_path` and its `.vocab` file.

    Inputs: sentences (streamed once; sentencepiece keeps them in memory, so pass a sample), the
    model path and trainer settings. The same sentences and settings give a byte-identical model
    (one trainer thread: the result depends on the thread count). `seed` seeds sentencepiece's
    random generator; with input shuffling off, training draws nothing from it today (the seed of
    `sample_sentences` is what chooses the input), so it only guards future options.
    An old model at `model_path` is removed first and the new files are written under a temporary
    name, then renamed (the model last), so a failed run leaves no model. Raises VocabError (a
    ValueError) on bad settings or input. Returns {"vocab_size", "requested_vocab_size",
    "model_type", "sentences", "characters", "model", "vocab"}."""
    if model_type not in MODEL_TYPES:
        raise VocabError(f"unknown model type {model_type!r} (choose from {', '.join(MODEL_TYPES)})")
    if vocab_size <= len(SPECIAL_TOKENS):
        raise VocabError(f"vocab_size must be larger than {len(SPECIAL_TOKENS)}, got {vocab_size}")
    if not 0 < character_coverage <= 1:
        raise VocabError(f"character_coverage must be in (0, 1], got {character_coverage}")
    vocab_path = vocab_file_path(model_path)
    for path in (model_path, vocab_path):
        if os.path.exists(path):
            os.remove(path)
    proto, counted = _train_model_proto(
        sentences, trainer_options(vocab_size, model_type, character_coverage), seed)
    processor = spm.SentencePieceProcessor(model_proto=proto)
    os.makedirs(os.path.dirname(os.path.abspath(model_path)), exist_ok=True)
    write_atomic(vocab_path, vocab_listing(processor).encode("utf-8"))
    write_atomic(model_path, proto)
    return {"vocab_size": processor.get_piece_size(), "requested_vocab_size": vocab_size,
            "model_type": model_type, "sentences": counted.sentences,
            "characters": counted.chars, "model": model_path, "vocab": vocab_path}


# ---- tokenizing ------------------------------------------------------------------------------

class Tokenizer:
    """A trained model with BERT-style framing. Picklable: the state is the model's bytes."""

    def __init__(self, model_path: str):
        with open(model_path, "rb") as f:
            self._load(f.read(), model_path)

    def _load(self, proto: bytes, source: str = "model") -> None:
        self._proto = proto
        self._sp = spm.SentencePieceProcessor()
        try:
            self._sp.load_from_serialized_proto(proto)
        except (RuntimeError, OSError):
            raise VocabError(f"{source}: not a sentencepiece model") from None
        found = tuple(self._sp.id_to_piece(i) for i in range(min(5, self._sp.get_piece_size())))
        if found != SPECIAL_TOKENS:
            raise VocabError(f"{source}: expected special tokens {SPECIAL_TOKENS} at ids 0-4, "
                             f"found {found} (train it with wikipairs vocab)")

    def __getstate__(self) -> dict:
        return {"model_proto": self._proto}

    def __setstate__(self, state: dict) -> None:
        self._load(state["model_proto"])

    @property
    def vocab_size(self) -> int:
        """Number of ids, specials included."""
        return self._sp.get_piece_size()

    def piece_to_id(self, piece: str) -> int:
        return self._sp.piece_to_id(piece)

    def id_to_piece(self, id_: int) -> str:
        return self._sp.id_to_piece(id_)

    def tokenize(self, text: str) -> list[int]:
        """The ids of `text`'s pieces, no framing and no truncation."""
        return self._sp.encode(text, out_type=int)

    def count_tokens(self, text: str) -> int:
        """Number of pieces of `text`, without [CLS]/[SEP]."""
        return len(self.tokenize(text))

    def encode(self, text: str, max_len: int) -> list[int]:
        """[CLS] pieces... [SEP], the pieces cut so the whole list has at most max_len (>= 2) ids."""
        if max_len < 2:
            raise ValueError(f"max_len must be >= 2 for [CLS] and [SEP], got {max_len}")
        return [CLS_ID, *self.tokenize(text)[:max_len - 2], SEP_ID]

    def encode_pair(self, title: str, text: str, max_len: int) -> list[int]:
        """[CLS] title [SEP] text [SEP] in at most max_len (>= 3) ids: the text is cut first, the
        title only when it alone does not fit; the final [SEP] is always kept."""
        if max_len < 3:
            raise ValueError(f"max_len must be >= 3 for [CLS], [SEP] and [SEP], got {max_len}")
        title_ids = self.tokenize(title)[:max_len - 3]
        room = max_len - 3 - len(title_ids)
        text_ids = self.tokenize(text)[:room] if room else []
        return [CLS_ID, *title_ids, SEP_ID, *text_ids, SEP_ID]

    def decode(self, ids: Iterable[int]) -> str:
        """Text of `ids` without [PAD]/[CLS]/[SEP]/[MASK]; an [UNK] shows as sentencepiece's " ⁇ "."""
        ids = [int(i) for i in ids]
        bad = [i for i in ids if not 0 <= i < self.vocab_size]
        if bad:
            raise ValueError(f"ids out of range [0, {self.vocab_size}): {bad[:5]}")
        return self._sp.decode([i for i in ids if i not in (PAD_ID, CLS_ID, SEP_ID, MASK_ID)])
