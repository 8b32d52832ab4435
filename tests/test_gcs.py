"""`wikipairs build`, `verify`, `stats` and `show` on gs:// paths, against a GCS emulator.

The emulator (gcp-storage-emulator, pure Python, in the dev extra) serves the GCS JSON API on
127.0.0.1 from threads of this process; STORAGE_EMULATOR_HOST sends wikipairs.fileio (pyarrow's
GcsFileSystem, anonymous over http), in the CLI and in its DirectRunner worker processes, which
inherit the environment, and google-cloud-storage (the `Gcs` helper below) there. Nothing leaves
the machine, and no credentials are needed.

The emulator's own server answers one request at a time, and Arrow streams an object from an
offset to its end: a reader holding a half-read download open (the first stage peeks at a dump,
then decodes it on every core) stalled every other request until the client's retries gave up.
So requests get a thread each, are handled one at a time (its storage is not thread-safe), and
are answered outside that lock.
"""
from __future__ import annotations

import bz2
import functools
import hashlib
import io
import json
import subprocess
import sys
import textwrap
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import assert_one_line_error, describe, run_cli, wiki_file
from test_layout import loaded_after
from test_splits import make_multistream
from wikipairs import fileio

emulator = pytest.importorskip(
    "gcp_storage_emulator.server",
    reason="gcp-storage-emulator is not installed (pip install -e '.[dev]'): no GCS emulator")

BUCKET = "wikipairs-test"
GS = f"gs://{BUCKET}"
GENSIM = "enwiki-sample-gensim.xml.bz2"


class Gcs:
    """The running emulator: upload, download and list objects with google-cloud-storage
    directly (not through wikipairs.fileio, which is what is tested)."""

    def __init__(self):
        from google.auth.credentials import AnonymousCredentials
        from google.cloud import storage
        self.bucket = storage.Client(project="test", credentials=AnonymousCredentials()
                                     ).bucket(BUCKET)

    @staticmethod
    def _name(url: str) -> str:
        assert url.startswith(GS + "/"), url
        return url[len(GS) + 1:]

    def upload(self, local: Path | str, url: str) -> str:
        self.bucket.blob(self._name(url)).upload_from_filename(str(local))
        return url

    def put(self, url: str, data: bytes) -> None:
        self.bucket.blob(self._name(url)).upload_from_string(data)

    def get(self, url: str) -> bytes:
        return self.bucket.blob(self._name(url)).download_as_bytes()

    def delete(self, url: str) -> None:
        self.bucket.blob(self._name(url)).delete()

    def exists(self, url: str) -> bool:
        return self.bucket.blob(self._name(url)).exists()

    def names(self, url: str) -> list[str]:
        prefix = self._name(url).rstrip("/") + "/"
        return sorted(b.name[len(prefix):] for b in self.bucket.list_blobs(prefix=prefix))


class _Handler(emulator.RequestHandler):
    """One request at a time, answered after the lock is released (see the module docstring)."""
    lock = threading.Lock()

    def _serially(self, handle):
        socket_file, self.wfile = self.wfile, io.BytesIO()
        try:
            with self.lock:
                handle()
        finally:
            answer, self.wfile = self.wfile.getvalue(), socket_file
        try:
            socket_file.write(answer)
        except (BrokenPipeError, ConnectionResetError):
            pass  # a download closed before its end (Arrow does so on close and seek)

    def do_GET(self):
        self._serially(super().do_GET)

    def do_POST(self):
        self._serially(super().do_POST)

    def do_PUT(self):
        self._serially(super().do_PUT)

    def do_PATCH(self):
        self._serially(super().do_PATCH)

    def do_DELETE(self):
        self._serially(super().do_DELETE)


@pytest.fixture(scope="module")
def gcs():
    import logging

    from gcp_storage_emulator.handlers.buckets import create_bucket
    from gcp_storage_emulator.storage import Storage
    logging.getLogger("gcp_storage_emulator").setLevel(logging.ERROR)  # one warning a request
    storage = Storage(use_memory_fs=True)
    create_bucket(BUCKET, storage)
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Handler, storage))
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("STORAGE_EMULATOR_HOST", f"http://127.0.0.1:{server.server_address[1]}")
        try:
            yield Gcs()
        finally:
            server.shutdown()
            server.server_close()


def cli_ok(*args):
    result = run_cli(*args)
    assert result.returncode == 0, describe(result)
    return result


def manifest(folder) -> dict:
    return json.loads(Path(folder, "manifest.json").read_text())


def shard_sums(data: dict) -> list[tuple]:
    return [(e["path"], e["format"], e["rows"], e["bytes"], e["sha256"]) for e in data["shards"]]


def without_time(stats: dict) -> dict:
    return {k: v for k, v in stats.items() if k != "seconds"}


@pytest.fixture(scope="module")
def gensim_gs(gcs):
    return gcs.upload(wiki_file(GENSIM), f"{GS}/in/{GENSIM}")


@pytest.fixture(scope="module")
def local_build(tmp_path_factory):
    out = tmp_path_factory.mktemp("local") / "out"
    cli_ok("build", "--task", "all", "-i", wiki_file(GENSIM), "-o", out, "--workers", "1")
    return out


@pytest.fixture(scope="module")
def gs_builds(gcs, gensim_gs):
    """gs:// input, gs:// output, with one worker (in-process) and two (worker processes)."""
    outputs = {}
    for workers in (1, 2):
        out = f"{GS}/out-{workers}w"
        cli_ok("build", "--task", "all", "-i", gensim_gs, "-o", out, "--workers", workers)
        outputs[workers] = out
    return outputs


@pytest.mark.parametrize("workers", [1, 2])
def test_gs_build_is_byte_identical_to_the_local_build(gcs, gs_builds, local_build, workers):
    out = gs_builds[workers]
    remote, local = json.loads(gcs.get(f"{out}/manifest.json")), manifest(local_build)
    assert shard_sums(remote) == shard_sums(local)
    # ict, bfs: 2 splits and 1 eval shard each (the held-out query pages); wlp: 1 train shard and
    # 1 eval shard; 2 formats
    assert len(remote["shards"]) == (3 + 3 + 2) * 2
    for entry in remote["shards"]:  # the manifest's checksums are those of the objects
        data = gcs.get(f"{out}/{entry['path']}")
        assert len(data) == entry["bytes"]
    stats = json.loads(gcs.get(f"{out}/stats.json"))
    assert without_time(stats) == without_time(json.loads(Path(local_build, "stats.json")
                                                          .read_text()))
    assert stats["counters"]["pages_read"] == 206 and stats["tasks"]["wlp"]["pairs"] > 0
    [source] = remote["inputs"]
    assert source["path"] == f"{GS}/in/{GENSIM}"
    assert (source["bytes"], source["sha256"]) == (local["inputs"][0]["bytes"],
                                                   local["inputs"][0]["sha256"])
    # Nothing else is left: no temporary names, no plain copy (.work), no shard notes.
    listed = {e["path"] for e in remote["shards"]} | {"manifest.json", "stats.json", "README.md"}
    assert set(gcs.names(out)) == listed


def test_verify_gs_and_a_flipped_byte(gcs, gs_builds):
    out = gs_builds[1]
    result = cli_ok("verify", out)
    assert f"{out}/manifest.json" in result.stdout
    shard = f"{out}/tfrecord/ict/part-00000-of-00003.tfrecord.gz"
    original = gcs.get(shard)
    flipped = bytearray(original)
    flipped[len(flipped) // 2] ^= 0x01
    gcs.put(shard, bytes(flipped))
    try:
        assert_one_line_error(run_cli("verify", out), shard, "sha256")
    finally:
        gcs.put(shard, original)
    extra = f"{out}/parquet/wlp/part-00002-of-00003.parquet"  # another run's shard lying there
    gcs.put(extra, b"PAR1")
    try:
        assert_one_line_error(run_cli("verify", out), extra, "does not list")
    finally:
        gcs.delete(extra)
    cli_ok("verify", out)


def test_stats_and_show_on_gs(gs_builds, local_build):
    out = gs_builds[2]
    stats, local_stats = cli_ok("stats", out), cli_ok("stats", local_build)
    table = [line for line in stats.stdout.splitlines() if "pages read" not in line]
    assert table == [line for line in local_stats.stdout.splitlines()
                     if "pages read" not in line]
    assert any(line.startswith("wlp") for line in table)
    show = cli_ok("show", out, "--task", "wlp", "-n", "2")
    assert show.stdout == cli_ok("show", local_build, "--task", "wlp", "-n", "2").stdout
    assert show.stdout.startswith("[wlp] pair ")


def test_multistream_with_its_index_on_gs(gcs, tmp_path):
    """A multistream dump with its index beside it on gs://: split by stream offsets (read with
    ranged reads), the same shards as the local multistream build."""
    dump, index, streams = make_multistream(wiki_file(GENSIM), tmp_path)
    remote = gcs.upload(dump, f"{GS}/ms/{dump.name}")
    gcs.upload(index, f"{GS}/ms/{index.name}")
    args = ("--task", "all", "--format", "parquet", "--streams-per-split", "5", "--workers", "1")
    cli_ok("build", "-i", dump, "-o", tmp_path / "local", *args)
    out = f"{GS}/ms-out"
    cli_ok("build", "-i", f"{GS}/ms/*-multistream.xml.bz2", "-o", out, *args)
    remote_manifest = json.loads(gcs.get(f"{out}/manifest.json"))
    local_manifest = manifest(tmp_path / "local")
    assert shard_sums(remote_manifest) == shard_sums(local_manifest)
    stats = json.loads(gcs.get(f"{out}/stats.json"))
    assert stats["splits"] == -(-streams // 5) > 1  # by stream offsets: the index was read
    assert remote_manifest["inputs"][0]["path"] == remote
    cli_ok("verify", out)


def test_missing_gs_input_is_one_line(gcs):
    out = f"{GS}/missing-out"
    assert_one_line_error(run_cli("build", "-i", f"{GS}/in/nothing.xml.bz2", "-o", out),
                          f"{GS}/in/nothing.xml.bz2", "no such file")
    assert_one_line_error(run_cli("build", "-i", "gs://no-such-bucket-wikipairs/x.xml.bz2",
                                  "-o", out), "gs://no-such-bucket-wikipairs/x.xml.bz2")
    assert_one_line_error(run_cli("build", "-i", f"{GS}/in/*.nothing", "-o", out),
                          "no file matches")
    assert gcs.names(out) == []  # nothing written, no manifest


def test_output_to_a_missing_bucket_is_one_line(gcs, gensim_gs):
    assert_one_line_error(run_cli("build", "-i", gensim_gs, "-o", "gs://no-such-bucket-wp/out"),
                          "gs://no-such-bucket-wp/out", "cannot write")


def test_failed_gs_build_leaves_no_manifest(gcs, tmp_path):
    """A dump cut in the middle fails in the pipeline's workers; the old manifest was removed
    before the run and no new one is written."""
    data = bz2.decompress(wiki_file(GENSIM).read_bytes())
    cut = tmp_path / "cut.xml.bz2"
    cut.write_bytes(bz2.compress(data[: len(data) // 2]))
    remote = gcs.upload(cut, f"{GS}/in/cut.xml.bz2")
    out = f"{GS}/failed-out"
    # as if an earlier build had finished there (a manifest.json of another program, or "{}",
    # makes a build refuse the folder and delete nothing)
    gcs.put(f"{out}/manifest.json", json.dumps({"tool": "wikipairs build", "shards": [], "stats": {
        "path": "stats.json", "sha256": ""}}).encode())
    assert_one_line_error(run_cli("build", "-i", remote, "-o", out, "--workers", "1"),
                          "truncated")
    assert not gcs.exists(f"{out}/manifest.json")
    assert_one_line_error(run_cli("verify", out), "no manifest.json")
    assert_one_line_error(run_cli("stats", out), "not a finished build")


def test_gs_files_without_beam(gcs):
    """wikipairs.fileio reads and writes gs:// objects in a fresh interpreter without importing
    apache_beam (the core's floor, tests/test_layout.py); a missing object is a short
    FileNotFoundError."""
    url = f"{GS}/no-beam"
    code = f"""
        from wikipairs import fileio
        url = {url!r}
        fileio.write_atomic(url + "/a.json", b"{{}}")
        with fileio.create(url + "/b.bin.tmp") as f:
            f.write(b"x" * 300_000)  # more than one upload chunk (256 KiB)
        fileio.rename(url + "/b.bin.tmp", url + "/b.bin")
        assert fileio.read_text(url + "/a.json") == "{{}}"
        with fileio.open_read(url + "/b.bin") as f:
            assert f.peek(1)[:1] == b"x" and f.seek(-2, 2) == 299_998 and f.read() == b"xx"
        assert fileio.listdir(url) == ["a.json", "b.bin"] and fileio.size(url + "/b.bin") == 300_000
        assert fileio.glob(url + "/*.json") == [url + "/a.json"]
        try:
            fileio.open_read(url + "/missing")
            raise AssertionError("no error for a missing object")
        except FileNotFoundError as e:
            assert (e.strerror, e.filename) == ("no such file or bucket", url + "/missing")
    """
    assert loaded_after(code) == []
    assert gcs.names(url) == ["a.json", "b.bin"]  # no temporary object left
    fileio.rmtree(url)
    assert gcs.names(url) == []


def test_vocabulary_copy_on_gs(gcs, tmp_path):
    """build --vocab into gs://: spm.model and spm.vocab are uploaded whole and listed with their
    sha256; the next run into the folder removes them with the old manifest (in a fresh
    interpreter, as the build's own process does it)."""
    model, pieces = tmp_path / "v.model", tmp_path / "v.vocab"
    model.write_bytes(b"model bytes" * 1000)
    pieces.write_bytes(b"[PAD]\t0\n")
    out = f"{GS}/vocab-copy"
    code = f"""
        import json
        from wikipairs.shards.output import copy_vocab
        print(json.dumps(copy_vocab({out!r}, {str(model)!r})))
    """
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    entries = json.loads(done.stdout.strip().splitlines()[-1])
    assert gcs.get(f"{out}/spm.model") == model.read_bytes()
    assert gcs.get(f"{out}/spm.vocab") == pieces.read_bytes()
    assert entries["vocab"]["sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
    assert entries["vocab_pieces"]["path"] == "spm.vocab"
    gcs.put(f"{out}/manifest.json", json.dumps({
        "tool": "wikipairs build", "shards": [], "stats": {"path": "stats.json", "sha256": "x"},
        **entries}).encode())
    code = f"""
        from wikipairs.shards.output import prepare_output
        prepare_output({out!r}, "wikipairs build", vocab={str(model)!r})
    """
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert gcs.names(out) == []
