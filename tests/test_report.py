"""`wikipairs stats` (Table 1 and the plot), `wikipairs show`, and progress lines of `build`."""
import collections
import json
import statistics
import struct

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from conftest import assert_one_line_error, describe, run_cli
from wikipairs.shards.report import build_identity, plot_numbers, plot_title


@pytest.fixture(scope="module")
def sample_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "build"
    result = run_cli("build", "-o", out, "--workers", "1", "--progress")
    assert result.returncode == 0, describe(result)
    return out, result


def test_build_prints_progress_and_the_table(sample_build):
    out, result = sample_build
    assert "pages parsed" in result.stderr, describe(result)  # the final progress line
    assert "task" in result.stdout and "wlp" in result.stdout and str(out) in result.stdout


def png_text(data: bytes) -> dict[str, str]:
    """The tEXt chunks of a PNG (matplotlib writes savefig's metadata there)."""
    out, at = {}, 8
    while at < len(data):
        size, kind = struct.unpack(">I4s", data[at:at + 8])
        if kind == b"tEXt":
            key, _, value = data[at + 8:at + 8 + size].partition(b"\0")
            out[key.decode("latin-1")] = value.decode("latin-1")
        at += 12 + size
    return out


def test_stats_prints_table_1_and_plots(sample_build, tmp_path):
    out, _ = sample_build
    png = tmp_path / "stats.png"
    png.write_bytes(b"an older plot")
    result = run_cli("stats", out, "--plot", png)
    assert result.returncode == 0, describe(result)
    stats = json.loads((out / "stats.json").read_text())
    for task, row in stats["tasks"].items():
        assert f"{row['pairs']:,}" in result.stdout and task in result.stdout
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data.endswith(b"IEND\xaeB`\x82")
    width, height = struct.unpack(">II", data[16:24])
    assert 1200 <= width <= 2400 and 800 <= height <= 1600, (width, height)  # 3 rows x 3
    assert 20_000 < len(data) < 2_000_000
    assert [p.name for p in tmp_path.iterdir()] == ["stats.png"]  # renamed whole: no temp left
    # The title names the dump, the token measure and the seed, never a path.
    title = png_text(data)["Title"]
    assert title == "enwiki dump  ·  tokens: script-aware-words  ·  seed 0", title
    assert str(out) not in title and "/" not in title


def test_plot_numbers_match_the_shards(sample_build):
    """What the plot draws, recomputed straight from the Parquet files with numpy."""
    out, _ = sample_build
    limits = {"query": 64, "doc": 288}
    counters = json.loads((out / "stats.json").read_text())["counters"]
    numbers = plot_numbers(str(out), ["ict", "bfs", "wlp"], limits, counters)
    page_edges = numbers["per_page"]["edges"]
    for task in ("ict", "bfs", "wlp"):
        files = sorted(out.glob(f"**/{task}/part-*.parquet"))
        assert files, task
        table = pa.concat_tables(pq.read_table(f) for f in files)
        for key, column, framing in (("query", "query_tokens", 2), ("doc", "doc_tokens", 3)):
            lengths = np.array(table.column(column).to_pylist()) + framing
            got, edges = numbers[key]["tasks"][task], np.array(numbers[key]["edges"])
            limit = limits[key]
            assert got["n"] == len(lengths) > 0
            assert got["median"] == statistics.median(lengths.tolist())
            assert got["at_limit"] == pytest.approx(np.mean(lengths == limit))
            assert got["over_limit"] == pytest.approx(np.mean(lengths > limit))
            assert edges[0] == 0 and edges[-1] > limit and (limit + 1) in edges
            assert len(set(np.diff(edges[1:]))) == 1  # one width (the first bin may be shorter)
            expected, _ = np.histogram(np.minimum(lengths, edges[-1] - 1), bins=edges)
            assert got["counts"] == expected.tolist()
        # What the shards cannot tell comes from the build's counters.
        assert numbers["doc"]["tasks"][task]["cut"] == \
            counters.get(f"{task}_doc_truncated", 0) / table.num_rows
        assert numbers["query"]["tasks"][task]["left_out"] == \
            counters.get(f"{task}_skipped_long_query", 0)
        page = table.column("query_page_id" if task == "wlp" else "doc_page_id").to_pylist()
        per_page = np.array(list(collections.Counter(page).values()))
        got = numbers["per_page"]["tasks"][task]
        assert got["n"] == len(per_page) and got["median"] == statistics.median(per_page.tolist())
        expected, _ = np.histogram(per_page, bins=page_edges)
        assert got["counts"] == expected.tolist() and sum(got["counts"]) == len(per_page)


def test_the_plot_takes_the_builds_limits_and_names_its_model(tmp_path):
    out = tmp_path / "build"
    model = tmp_path / "tiny.model"
    trained = run_cli("vocab", "-q", "-o", model, "--vocab-size", "200", "--workers", "1")
    assert trained.returncode == 0, describe(trained)
    built = run_cli("build", "-o", out, "--workers", "1", "--task", "ict,bfs",
                    "--query-max-tokens", "24", "--doc-max-tokens", "40", "--vocab", model,
                    "--seed", "5")
    assert built.returncode == 0, describe(built)
    stats = json.loads((out / "stats.json").read_text())
    identity = build_identity(str(out), stats)
    assert (identity["query"], identity["doc"], identity["seed"]) == (24, 40, 5)
    assert plot_title(identity) == "enwiki dump  ·  tokens: sentencepiece:tiny.model  ·  seed 5"
    numbers = plot_numbers(str(out), ["ict", "bfs"], identity, stats["counters"])
    assert numbers["doc"]["limit"] == 40 and numbers["doc"]["edges"][-1] < 60
    bfs = numbers["doc"]["tasks"]["bfs"]
    assert bfs["cut"] > 0 and bfs["over_limit"] == 0  # cut to the limit, never past it
    png = tmp_path / "two.png"
    result = run_cli("stats", out, "--plot", png)
    assert result.returncode == 0, describe(result)
    width, height = struct.unpack(">II", png.read_bytes()[16:24])
    assert height < width / 1.6  # two rows, not three
    assert "tiny.model" in png_text(png.read_bytes())["Title"]


def test_show_prints_pairs_with_provenance(sample_build):
    out, _ = sample_build
    result = run_cli("show", out, "--task", "wlp", "-n", "3", "--seed", "1")
    assert result.returncode == 0, describe(result)
    assert result.stdout.count("[wlp] pair ") == 3
    assert "anchor" in result.stdout and "Q: " in result.stdout and "D: " in result.stdout
    rows = pq.read_table(next((out / "parquet" / "wlp").glob("part-*.parquet"))).to_pylist()
    shown = [line.split()[2] for line in result.stdout.splitlines() if line.startswith("[wlp]")]
    by_id = {r["pair_id"]: r for r in rows}
    for pair_id in shown:
        assert by_id[pair_id]["query_title"] in result.stdout
    again = run_cli("show", out, "--task", "wlp", "-n", "3", "--seed", "1")
    assert again.stdout == result.stdout  # seeded
    other = run_cli("show", out, "--task", "wlp", "-n", "3", "--seed", "2")
    assert other.stdout != result.stdout


def test_stats_and_show_on_a_folder_without_a_build(tmp_path):
    assert_one_line_error(run_cli("stats", tmp_path), "not a finished build")
    assert_one_line_error(run_cli("show", tmp_path), "not a finished build")


def test_a_task_without_pairs_is_plotted_as_empty(tmp_path):
    out = tmp_path / "build"
    built = run_cli("build", "-o", out, "--workers", "1", "--task", "ict",
                    "--min-query-tokens", "60")  # no sentence of the sample is that long
    assert built.returncode == 0, describe(built)
    numbers = plot_numbers(str(out), ["ict"], {"query": 64, "doc": 288})
    for key in ("query", "doc", "per_page"):
        got = numbers[key]["tasks"]["ict"]
        assert got["n"] == 0 and not any(got["counts"])
    png = tmp_path / "empty.png"
    result = run_cli("stats", out, "--plot", png)
    assert result.returncode == 0, describe(result)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_title_names_wiki_and_dump_date_from_file_names():
    from wikipairs.shards.card import dump_date, wiki_name

    dated = "/data/dumps/elwiki-20240601-pages-articles-multistream.xml.bz2"
    assert (wiki_name([dated]), dump_date(dated)) == ("elwiki", "2024-06-01")
    html = "/w/frwiki-NS0-20231123-ENTERPRISE-HTML-sample.json.tar.gz"
    assert (wiki_name([html]), dump_date(html)) == ("frwiki", "2023-11-23")
    assert wiki_name(["/w/jawiki-sample.xml.bz2"]) == "jawiki"
    assert wiki_name(["/w/sample.xml.bz2"], "en") == "enwiki"
    identity = {"wiki": "elwiki", "dates": ["2024-06-01"], "tokens": "sentencepiece:el.model",
                "seed": 3}
    assert plot_title(identity) == \
        "elwiki dump of 2024-06-01  ·  tokens: sentencepiece:el.model  ·  seed 3"
