"""`wikipairs stats` (Table 1 and the plot), `wikipairs show`, and progress lines of `build`."""
import json
import struct

import pyarrow.parquet as pq
import pytest

from conftest import assert_one_line_error, describe, run_cli


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


def test_stats_prints_table_1_and_plots(sample_build, tmp_path):
    out, _ = sample_build
    png = tmp_path / "stats.png"
    result = run_cli("stats", out, "--plot", png)
    assert result.returncode == 0, describe(result)
    stats = json.loads((out / "stats.json").read_text())
    for task, row in stats["tasks"].items():
        assert f"{row['pairs']:,}" in result.stdout and task in result.stdout
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 1000 and height >= 300


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
