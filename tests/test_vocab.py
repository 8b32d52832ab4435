"""wikipairs.pairs.vocab on the real enwiki-sample-gensim dump: sampling, training, tokenizing.

The dump is parsed once per session (conftest's `enwiki_gensim`, via `iter_articles`); one 2000
vocabulary is trained per module on a 5000-sentence sample (~3 s; the whole sample takes ~8 s).
"""
from __future__ import annotations

import os
import pickle
import random
import unicodedata

import pytest
import sentencepiece as spm

from conftest import SAMPLE_DUMP, describe, run_cli, wiki_file
from wikipairs.pairs.vocab import (CLS_ID, MASK_ID, PAD_ID, SEP_ID, SPECIAL_TOKENS, UNK_ID, Tokenizer,
                             VocabError, _Sample, sample_sentences, sentence_hash, train_vocab,
                             vocab_file_path)

VOCAB = 2000
SAMPLE = 5000


@pytest.fixture(scope="module")
def articles(enwiki_gensim):
    return enwiki_gensim.articles


@pytest.fixture(scope="module")
def sentences(articles):
    return sample_sentences(articles, SAMPLE, seed=0)


@pytest.fixture(scope="module")
def trained(sentences, tmp_path_factory):
    """(model path, train_vocab summary) of a 2000 unigram vocabulary."""
    path = str(tmp_path_factory.mktemp("vocab") / "wiki.model")
    return path, train_vocab(sentences, path, vocab_size=VOCAB, seed=0)


@pytest.fixture(scope="module")
def tok(trained):
    return Tokenizer(trained[0])


def long_sentence(sentences: list[str], tok: Tokenizer, at_least: int) -> str:
    found = [s for s in sentences if tok.count_tokens(s) >= at_least]
    assert found, f"no sentence of {at_least}+ pieces in the sample"
    return found[0]


def normalized(text: str) -> str:
    """What sentencepiece's nmt_nfkc normalization makes of text: NFKC, whitespace runs to one."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


# ---- sampling --------------------------------------------------------------------------------

def test_sample_is_deterministic_and_bounded(articles):
    first = sample_sentences(articles, 1000, seed=7)
    assert len(first) == 1000 and len(set(first)) > 990
    assert sample_sentences(articles, 1000, seed=7) == first
    everything = sample_sentences(articles, 10**9, seed=7)
    assert len(everything) == sum(1 for a in articles for *_, t in a.sentences() if t.strip())
    assert everything[:1000] == first  # the smallest hashes, in hash order


def test_sample_ignores_article_order(articles):
    shuffled = list(articles)
    random.Random(1).shuffle(shuffled)
    assert shuffled != list(articles)
    assert sample_sentences(iter(shuffled), 500, seed=3) == sample_sentences(articles, 500, seed=3)


def test_samples_of_parts_merge_into_the_sample_of_the_whole(articles):
    """What the workers of `wikipairs vocab --workers N` do: each samples its splits, the
    samples merge in any order; the result is the single-process sample, a uniform one."""
    whole = sample_sentences(articles, 1000, seed=3)
    parts = [articles[k::3] for k in range(3)]
    for order in ([0, 1, 2], [2, 0, 1]):
        merged = _Sample(1000)
        for k in order:
            part = _Sample(1000)
            part.add_articles(parts[k], seed=3)
            merged.merge(part.heap)
        assert merged.texts() == whole
    # The kept sentences are those of the 1000 smallest hashes of all sentence positions.
    ranked = sorted((sentence_hash(3, a.id, s, p, i), text) for a in articles
                    for s, p, i, text in a.sentences() if text.strip())
    assert whole == [text for _, text in ranked[:1000]]


def test_sample_changes_with_the_seed(articles):
    a, b = sample_sentences(articles, 500, seed=0), sample_sentences(articles, 500, seed=1)
    assert a != b and len(set(a) & set(b)) < 100  # ~2.4% of 20,985 sentences each
    assert sample_sentences(articles, 0, seed=0) == []
    with pytest.raises(ValueError):
        sample_sentences(articles, -1, seed=0)


# ---- training --------------------------------------------------------------------------------

def test_train_summary_and_files(trained, sentences):
    path, summary = trained
    assert summary["vocab_size"] == VOCAB and summary["requested_vocab_size"] == VOCAB
    assert summary["sentences"] == SAMPLE == len(sentences)
    assert summary["characters"] == sum(map(len, sentences))
    vocab_path = vocab_file_path(path)
    assert vocab_path.endswith("wiki.vocab") and summary["vocab"] == vocab_path
    lines = open(vocab_path, encoding="utf-8").read().splitlines()
    assert len(lines) == VOCAB
    assert [line.split("\t")[0] for line in lines[:5]] == list(SPECIAL_TOKENS)
    assert not [p for p in os.listdir(os.path.dirname(path)) if p.endswith(".tmp")]


def test_special_ids(tok):
    assert SPECIAL_TOKENS == ("[PAD]", "[CLS]", "[SEP]", "[MASK]", "[UNK]")
    assert (PAD_ID, CLS_ID, SEP_ID, MASK_ID, UNK_ID) == (0, 1, 2, 3, 4)
    assert [tok.piece_to_id(p) for p in SPECIAL_TOKENS] == [0, 1, 2, 3, 4]
    assert [tok.id_to_piece(i) for i in range(5)] == list(SPECIAL_TOKENS)
    assert tok.vocab_size == VOCAB


def test_specials_never_come_from_text(tok, sentences):
    """Control symbols: literal "[CLS]"/"[MASK]" in an article is plain text."""
    text = "[PAD] [CLS] the [MASK] of [SEP] the river"
    ids = tok.tokenize(text)
    assert not set(ids) & {PAD_ID, CLS_ID, SEP_ID, MASK_ID}
    assert all(not set(tok.tokenize(s)) & {PAD_ID, CLS_ID, SEP_ID, MASK_ID} for s in sentences[:500])
    assert UNK_ID in tok.tokenize("\u2603\u2604")  # characters the sample never shows: [UNK]


def test_same_seed_gives_a_byte_identical_model(trained, sentences, tmp_path):
    again = str(tmp_path / "elsewhere" / "again.model")  # another folder and name: not in the model
    train_vocab(sentences, again, vocab_size=VOCAB, seed=0)
    assert open(again, "rb").read() == open(trained[0], "rb").read()
    assert open(vocab_file_path(again), "rb").read() == open(vocab_file_path(trained[0]), "rb").read()


def test_tiny_input_shrinks_the_vocabulary(tmp_path):
    path = str(tmp_path / "tiny.model")
    summary = train_vocab(["a small river runs through the valley", "the valley has a river"],
                          path, vocab_size=VOCAB)
    assert len(SPECIAL_TOKENS) < summary["vocab_size"] < 100
    assert Tokenizer(path).vocab_size == summary["vocab_size"] == spm.SentencePieceProcessor(
        model_file=path).get_piece_size()


@pytest.mark.parametrize("bad", [[], ["", "   "]], ids=["empty", "blank"])
def test_failed_training_leaves_no_model(tmp_path, bad):
    path = tmp_path / "m.model"
    path.write_bytes(b"an old model")  # a failed run must not leave an older model behind either
    with pytest.raises(ValueError, match="no sentences"):
        train_vocab(bad, str(path), vocab_size=100)
    assert os.listdir(tmp_path) == []


def test_bad_settings_are_value_errors(tmp_path):
    path = str(tmp_path / "m.model")
    with pytest.raises(VocabError, match="smaller than required"):  # 2 + 5 > the chars needed
        train_vocab(["abcdefghij klmnop"] * 5, path, vocab_size=8)
    with pytest.raises(ValueError, match="model type"):
        train_vocab(["abc"], path, model_type="wordpiece")
    assert os.listdir(tmp_path) == []


def test_errors_of_the_caller_iterable_pass_through(tmp_path):
    def broken():
        yield "a first sentence"
        raise KeyError("reading failed")
    with pytest.raises(KeyError, match="reading failed"):
        train_vocab(broken(), str(tmp_path / "m.model"), vocab_size=100)
    assert os.listdir(tmp_path) == []


# ---- tokenizing ------------------------------------------------------------------------------

def test_encode_frames_and_truncates(tok, sentences):
    text = long_sentence(sentences, tok, 60)
    pieces = tok.tokenize(text)
    full = tok.encode(text, 10_000)
    assert full == [CLS_ID, *pieces, SEP_ID] and tok.count_tokens(text) == len(pieces)
    for max_len in (2, 3, 16, 32, len(pieces) + 2):
        ids = tok.encode(text, max_len)
        assert len(ids) == max_len and ids[0] == CLS_ID and ids[-1] == SEP_ID
        assert ids[1:-1] == pieces[:max_len - 2]
    with pytest.raises(ValueError):
        tok.encode(text, 1)


def test_encode_pair_layout(tok, sentences, articles):
    title = articles[0].title
    text = long_sentence(sentences, tok, 60)
    t, x = tok.tokenize(title), tok.tokenize(text)
    assert tok.encode_pair(title, text, 10_000) == [CLS_ID, *t, SEP_ID, *x, SEP_ID]
    ids = tok.encode_pair(title, text, 32)  # the text is cut, the title kept
    assert ids == [CLS_ID, *t, SEP_ID, *x[:32 - 3 - len(t)], SEP_ID] and len(ids) == 32
    ids = tok.encode_pair(title, text, len(t) + 3)  # no room for text
    assert ids == [CLS_ID, *t, SEP_ID, SEP_ID]
    ids = tok.encode_pair(text, "more", 10)  # a title that alone does not fit is cut too
    assert ids == [CLS_ID, *x[:7], SEP_ID, SEP_ID]
    with pytest.raises(ValueError):
        tok.encode_pair(title, text, 2)


def test_decode_round_trips(tok, sentences):
    checked = 0
    for text in sentences[:300]:
        ids = tok.encode(text, 10_000)
        if UNK_ID in ids:
            continue  # a character outside the vocabulary's coverage
        assert tok.decode(ids) == normalized(text)
        checked += 1
    assert checked > 250
    assert tok.decode([PAD_ID, CLS_ID, *tok.tokenize("the river"), MASK_ID, SEP_ID]) == "the river"
    with pytest.raises(ValueError):
        tok.decode([VOCAB])


def test_tokenizer_pickles(tok, sentences):
    clone = pickle.loads(pickle.dumps(tok))
    assert clone.vocab_size == tok.vocab_size
    for text in sentences[:200]:
        assert clone.encode(text, 64) == tok.encode(text, 64)
        assert clone.encode_pair("Title", text, 64) == tok.encode_pair("Title", text, 64)


def test_not_a_model(tmp_path):
    path = tmp_path / "junk.model"
    path.write_bytes(b"not a model at all")
    with pytest.raises(ValueError, match="not a sentencepiece model"):
        Tokenizer(str(path))


# ---- the command: progress lines and -q (issue 16) --------------------------------------------

def test_vocab_command_progress_and_quiet(tmp_path):
    loud = run_cli("vocab", "-i", SAMPLE_DUMP, "-o", tmp_path / "loud.model", "--vocab-size", "200")
    assert loud.returncode == 0, describe(loud)
    assert loud.stdout.splitlines()[0] == "sentences: punkt_tab:english", describe(loud)
    lines = loud.stderr.splitlines()
    assert any("pages read" in line and "sampled" in line and "pages/s" in line
               for line in lines), describe(loud)
    assert any(line.startswith("  training a unigram vocabulary of 200 pieces on ")
               for line in lines), describe(loud)
    assert lines[-1].startswith("  trained in "), describe(loud)

    quiet = run_cli("vocab", "-q", "-i", SAMPLE_DUMP, "-o", tmp_path / "quiet.model",
                    "--vocab-size", "200")
    assert quiet.returncode == 0 and quiet.stderr == "", describe(quiet)
    assert quiet.stdout.replace("quiet.model", "loud.model") == \
        loud.stdout.split("\n", 1)[1]  # all but the sentences line
    # Progress changes nothing in the model: the same bytes with and without it.
    assert (tmp_path / "quiet.model").read_bytes() == (tmp_path / "loud.model").read_bytes()
    assert (tmp_path / "quiet.vocab").read_bytes() == (tmp_path / "loud.vocab").read_bytes()


@pytest.mark.parametrize("dump, extra", [
    (SAMPLE_DUMP, ["--vocab-size", "200"]),
    # A real non-English dump, sampled below its size so that the sample chooses.
    ("frwiki-wikiplaintext-sample.xml.bz2", ["--vocab-size", "300", "--max-sentences", "400"]),
    # Wikimedia Enterprise HTML (Parsoid pages): 1,000 of its 3,060 sentences.
    ("../html/frwiki-NS0-20231123-ENTERPRISE-HTML-sample.json.tar.gz",
     ["--vocab-size", "300", "--max-sentences", "1000"]),
])
def test_vocab_workers_give_the_same_model(tmp_path, dump, extra):
    dump = dump if dump == SAMPLE_DUMP else wiki_file(dump)
    results = {}
    for workers in ("1", "2"):
        result = run_cli("vocab", "-i", dump, "-o", tmp_path / f"w{workers}.model",
                         "--workers", workers, *extra)
        assert result.returncode == 0, describe(result)
        assert any("pages read" in line and "sampled" in line
                   for line in result.stderr.splitlines()), describe(result)
        results[workers] = result
    assert (tmp_path / "w1.model").read_bytes() == (tmp_path / "w2.model").read_bytes()
    assert (tmp_path / "w1.vocab").read_bytes() == (tmp_path / "w2.vocab").read_bytes()
    last = [r.stderr.splitlines() for r in results.values()]
    pages = [next(line for line in reversed(lines) if "pages read" in line).split(",")[0]
             for lines in last]
    assert pages[0] == pages[1], pages  # the same pages read, counted across the workers
    assert not list(tmp_path.glob("wikipairs-vocab-*"))  # the workers' copy is gone


def test_vocab_workers_on_a_multistream_dump(tmp_path):
    """A multistream file with its index: the workers take ranges of streams (4 splits of 50
    streams here), and the model is the one a single process trains."""
    from wikipairs.reading.splits import plan_splits, write_multistream

    dump = tmp_path / "enwiki-multistream.xml.bz2"
    write_multistream(str(wiki_file("enwiki-2019-head.xml.bz2")), str(dump),
                      str(tmp_path / "enwiki-multistream-index.txt.bz2"), 1)
    assert len(plan_splits([str(dump)])) >= 3
    for workers in ("1", "2"):
        result = run_cli("vocab", "-q", "-i", dump, "-o", tmp_path / f"w{workers}.model",
                         "--workers", workers, "--vocab-size", "300", "--max-sentences", "1000")
        assert result.returncode == 0, describe(result)
    assert (tmp_path / "w1.model").read_bytes() == (tmp_path / "w2.model").read_bytes()


def test_sampling_on_two_workers_reports_as_it_goes(articles, enwiki_gensim, monkeypatch):
    """The pool's progress: lines while splits are under way (pages and sentences the workers
    have read so far), the exact counts at the end, and the single-process sample."""
    from collections import Counter

    import wikipairs.pairs.vocab as vocab
    from wikipairs.parse import ParseConfig

    class Lines:
        def __init__(self):
            self.lines = []

        def line(self, text, final=False):
            self.lines.append(text)

    monkeypatch.setattr(vocab, "LIVE_WAIT", 0.05)
    counts, writer = Counter(), Lines()
    progress = vocab.VocabProgress(counts, 1000, quiet=False, every=0.0)
    progress.lines.writer = writer
    config = ParseConfig(inputs=[str(enwiki_gensim.path)], output="")
    got = vocab.sample_dump_sentences(config, 1000, 0, workers=2, counts=counts,
                                      progress=progress)
    assert got == sample_sentences(articles, 1000, seed=0)
    assert counts["pages_read"] == enwiki_gensim.counts["pages_read"]
    assert counts["sentences"] == enwiki_gensim.counts["sentences"]
    pages = [int(line.split()[0].replace(",", "")) for line in writer.lines]
    assert pages[-1] == counts["pages_read"] and len(pages) > 2, writer.lines
    assert pages == sorted(pages) and 0 < pages[0] < pages[-1], writer.lines
