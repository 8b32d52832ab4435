"""`build --workers 0` (the default): one DirectRunner process per core, but never more than the
splits nor than one per BYTES_PER_WORKER of compressed input, since a worker process costs
seconds to start (benchmarks/build_workers.py). The shards do not depend on the count
(test_build: two workers give byte-identical shards). `vocab --workers 0` follows the same rule
with its own rate (SAMPLING_BYTES_PER_WORKER)."""
from __future__ import annotations

import bz2

import pytest

from conftest import NLTK_DATA, SAMPLE_DUMP
from wikipairs.pipelines import driver
from wikipairs.pipelines.driver import BYTES_PER_WORKER, BuildConfig
from wikipairs.reading.splits import PLAIN_TO_COMPRESSED, auto_workers, input_work_bytes

MB = 1 << 20


@pytest.mark.parametrize("cores, splits, work, expected", [
    (2, 2, 16 * 1024, 1),  # the bundled sample: one process
    (2, 2, BYTES_PER_WORKER, 1),  # up to one worker's worth
    (2, 2, BYTES_PER_WORKER + 1, 2),
    (2, 5, 170 * MB, 2),  # never more than the cores
    (16, 5, 170 * MB, 5),  # nor than the splits
    (16, 1, 34 * MB, 1),  # one split: nothing to share
    (16, 40, 3 * BYTES_PER_WORKER, 3),
    (1, 40, 0, 1),
])
def test_auto_workers(cores, splits, work, expected):
    assert auto_workers(cores, work, BYTES_PER_WORKER, units=splits) == expected


def test_auto_workers_without_units_and_with_another_rate():
    assert auto_workers(2, 5 * MB, 4 * MB) == 2
    assert auto_workers(2, 5 * MB, BYTES_PER_WORKER) == 1
    assert auto_workers(16, 100 * MB, 4 * MB) == 16


def test_plain_input_counts_as_its_compressed_size(tmp_path):
    plain = tmp_path / "sample.xml"
    plain.write_bytes(bz2.decompress(SAMPLE_DUMP.read_bytes()))
    size = plain.stat().st_size
    assert input_work_bytes([str(SAMPLE_DUMP)]) == SAMPLE_DUMP.stat().st_size
    assert input_work_bytes([str(plain)]) == size // PLAIN_TO_COMPRESSED
    assert input_work_bytes([str(SAMPLE_DUMP), str(plain)]) == \
        SAMPLE_DUMP.stat().st_size + size // PLAIN_TO_COMPRESSED


def test_a_default_build_of_the_sample_runs_in_process_and_an_explicit_count_is_kept(
        tmp_path, monkeypatch):
    monkeypatch.setenv("NLTK_DATA", str(NLTK_DATA))
    seen = []
    runner_args = driver._runner_args

    def spy(config):
        args = runner_args(config)
        seen.append([a for a in args if a.startswith("--direct_")])
        return args

    monkeypatch.setattr(driver, "_runner_args", spy)
    stats = driver.build(BuildConfig(inputs=[str(SAMPLE_DUMP)], output=str(tmp_path / "auto"),
                                     tasks=("ict",), formats=("parquet",), quiet=True))
    assert stats["tasks"]["ict"]["pairs"] > 0
    assert seen == [["--direct_num_workers=1", "--direct_running_mode=in_memory"]]
    seen.clear()

    class Stop(Exception):
        pass

    def stop(config):  # records what the driver chose and stops before any run
        spy(config)
        raise Stop

    monkeypatch.setattr(driver, "_runner_args", stop)
    with pytest.raises(Stop):
        driver.build(BuildConfig(inputs=[str(SAMPLE_DUMP)], output=str(tmp_path / "two"),
                                 workers=2, quiet=True))
    assert seen[-1] == ["--direct_num_workers=2", "--direct_running_mode=multi_processing"]


def test_vocab_sampling_of_a_small_dump_stays_in_one_process(monkeypatch):
    """`wikipairs vocab --workers 0` on the bundled sample: no pool (1.5 s a process to start),
    the sample of one process."""
    from wikipairs.pairs import vocab
    from wikipairs.parse import ParseConfig

    monkeypatch.setenv("NLTK_DATA", str(NLTK_DATA))
    monkeypatch.setattr(vocab.os, "cpu_count", lambda: 2)
    config = ParseConfig(inputs=[str(SAMPLE_DUMP)], output="")
    one = vocab.sample_dump_sentences(config, 1000, 0, workers=1)

    def no_pool(*args, **kwargs):
        raise AssertionError("a pool was started for a 16 KB dump")

    import multiprocessing
    monkeypatch.setattr(multiprocessing, "get_context", no_pool)
    assert vocab.sample_dump_sentences(config, 1000, 0, workers=0) == one
    with pytest.raises(AssertionError, match="pool"):  # the check can fail: two workers pool
        vocab.sample_dump_sentences(config, 1000, 0, workers=2)


def test_a_parquet_passage_corpus_counts_as_compressed(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "passages.parquet"
    pq.write_table(pa.table({"id": ["a-0"], "title": ["A"], "text": ["One passage."]}), path)
    assert input_work_bytes([str(path)]) == path.stat().st_size
