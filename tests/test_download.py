"""`wikipairs download` against a local HTTP server (127.0.0.1, Range support, dropped
connections): nothing is fetched from the internet.

The dump run is tests/fixtures/download/dumpstatus.json (Wikimedia's layout); the files served are
made-up bytes whose sizes and checksums are written into it at test time.
"""
from __future__ import annotations

import hashlib
import json
import os
import random
import re
import socket
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import assert_one_line_error, describe
from wikipairs.cli import main
from wikipairs.download import ChecksumError, DownloadConfig, choose_job, download, run_dates

FIXTURES = Path(__file__).parent / "fixtures" / "download"
DATE = "20240501"
MULTISTREAM = f"enwiki-{DATE}-pages-articles-multistream.xml.bz2"
INDEX = f"enwiki-{DATE}-pages-articles-multistream-index.txt.bz2"
SIZES = {"index": 20_000, "xml": 300_000}  # bytes of the files served (index files, the others)


# ---- a dumps server on 127.0.0.1 ----------------------------------------------------------------

class DumpServer:
    """Serves `routes` (path -> bytes) with HTTP/1.1, byte ranges (unless `range_support` is
    False), one-shot dropped connections (`drops`: path -> bytes sent before the connection is
    cut), and logs every request as (path, Range header or None)."""

    def __init__(self):
        self.routes: dict[str, bytes] = {}
        self.drops: dict[str, int] = {}
        self.stalls: dict[str, int] = {}  # path -> bytes sent before the server goes silent
        self.range_support = True
        self.head_lengths: dict[str, int] = {}  # path -> Content-Length a HEAD answers
        self.requests: list[tuple[str, str | None]] = []
        self.lock = threading.Lock()
        dump = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def do_HEAD(self):
                path = self.path.split("?")[0]
                with dump.lock:
                    dump.requests.append((path, "HEAD"))
                    body = dump.routes.get(path)
                    length = dump.head_lengths.get(path, len(body or b""))
                self.send_response(200 if body is not None else 404)
                self.send_header("Content-Length", str(length))
                self.end_headers()

            def do_GET(self):
                path = self.path.split("?")[0]
                range_header = self.headers.get("Range")
                with dump.lock:
                    dump.requests.append((path, range_header))
                    body = dump.routes.get(path)
                    drop = dump.drops.pop(path, None)
                    stall = dump.stalls.pop(path, None)
                if stall is not None:
                    drop = -stall  # negative: go silent instead of cutting
                if body is None:
                    return self._send(404, b"<html>404 Not Found</html>", "text/html")
                ctype = ("application/json" if path.endswith(".json") else
                         "text/html" if path.endswith("/") else "application/octet-stream")
                match = re.fullmatch(r"bytes=(\d+)-(\d*)", range_header or "")
                if match and dump.range_support:
                    start = int(match.group(1))
                    end = int(match.group(2)) if match.group(2) else len(body) - 1
                    if start >= len(body):
                        return self._send(416, b"", ctype,
                                          {"Content-Range": f"bytes */{len(body)}"})
                    end = min(end, len(body) - 1)
                    return self._send(206, body[start:end + 1], ctype,
                                      {"Content-Range": f"bytes {start}-{end}/{len(body)}"}, drop)
                return self._send(200, body, ctype, {"Accept-Ranges": "bytes"}
                                  if dump.range_support else {}, drop)

            def _send(self, code, body, ctype, headers=None, drop=None):
                self.send_response(code)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                if drop is None:
                    self.wfile.write(body)
                    return
                self.wfile.write(body[:abs(drop)])  # then cut the connection mid-body
                self.wfile.flush()
                if drop < 0:
                    time.sleep(1.5)  # ... or say nothing for longer than the client's timeout
                self.close_connection = True
                self.connection.shutdown(socket.SHUT_RDWR)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)
        self.thread.start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()

    def gets(self, name: str) -> list[str | None]:
        """Range headers of the GET requests for file `name` (None: no Range)."""
        return [r for path, r in self.requests if path.endswith("/" + name) and r != "HEAD"]


@pytest.fixture
def server():
    s = DumpServer()
    yield s
    s.close()


def payload(name: str) -> bytes:
    size = SIZES["index"] if "-index" in name else SIZES["xml"]
    return random.Random(name).randbytes(size)


def publish(server: DumpServer, date: str = DATE, statuses: dict | None = None,
            drop_jobs: tuple[str, ...] = (), md5_only: tuple[str, ...] = ()) -> dict:
    """Put the fixture run `date` on the server; every pages-articles file of it is served with
    its real size, sha1 and md5 in dumpstatus.json. Returns the dumpstatus content."""
    status = json.loads((FIXTURES / "dumpstatus.json").read_text().replace(DATE, date))
    for job in drop_jobs:
        del status["jobs"][job]
    for job, state in (statuses or {}).items():
        status["jobs"][job]["status"] = state
    for job in ("articlesdump", "articlesdumprecombine", "articlesmultistreamdump",
                "articlesmultistreamdumprecombine"):
        for name, entry in status["jobs"].get(job, {}).get("files", {}).items():
            data = payload(name)
            entry.update(size=len(data), sha1=hashlib.sha1(data).hexdigest(),
                         md5=hashlib.md5(data).hexdigest())
            if name in md5_only:
                del entry["sha1"]
            server.routes[entry["url"]] = data
    server.routes[f"/enwiki/{date}/dumpstatus.json"] = json.dumps(status).encode()
    return status


CODE = ("import sys; from wikipairs.cli import main; "
        "main(['download', *sys.argv[1:]], prog_name='wikipairs')")


@pytest.fixture(autouse=True)
def local_only(monkeypatch):
    """No proxy for 127.0.0.1 (in this process and in subprocesses); short retry backoffs here."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    monkeypatch.setattr("wikipairs.download.BACKOFF_FIRST", 0.05)


def run_download(*args, base_url: str | None = None, fresh: bool = False
                 ) -> subprocess.CompletedProcess:
    """`wikipairs download ARGS`: in a fresh interpreter with `fresh` (real exit status and
    streams, real 1 s backoff), else in this process with click's CliRunner (stdout and stderr
    apart). Both as a CompletedProcess."""
    argv = [*map(str, args), *(["--base-url", base_url] if base_url else [])]
    if fresh:
        env = dict(os.environ, PYTHONIOENCODING="utf-8")
        return subprocess.run([sys.executable, "-c", CODE, *argv], env=env,
                              capture_output=True, text=True, timeout=60)
    result = CliRunner().invoke(main, ["download", *argv], prog_name="wikipairs")
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception  # a bug: show its traceback
    return subprocess.CompletedProcess([sys.executable, "-c", CODE, *argv], result.exit_code,
                                       result.stdout, result.stderr)


def assert_complete(dest: Path, names: list[str], date: str = DATE) -> dict:
    """The files are there with the served bytes, no .part/.bad, and download.json lists them."""
    for name in names:
        assert (dest / name).read_bytes() == payload(name), name
    leftovers = [p.name for p in dest.iterdir() if p.suffix in (".part", ".bad", ".tmp")]
    assert not leftovers, leftovers
    manifest = json.loads((dest / "download.json").read_text())
    assert (manifest["wiki"], manifest["date"]) == ("enwiki", date)
    assert [f["name"] for f in manifest["files"]] == sorted(names)
    for entry in manifest["files"]:
        data = payload(entry["name"])
        assert entry["size"] == len(data)
        assert entry["sha1"] == hashlib.sha1(data).hexdigest()
        assert entry["url"].endswith(f"/enwiki/{date}/{entry['name']}")
    return manifest


# ---- downloads ----------------------------------------------------------------------------------

def test_good_download(server, tmp_path):
    publish(server)
    dest = tmp_path / "dump"
    result = run_download("--wiki", "enwiki", "--date", DATE, "--dest", dest,
                          base_url=server.url, fresh=True)
    assert result.returncode == 0, describe(result)
    assert result.stderr == "", describe(result)  # no terminal: no progress bar
    manifest = assert_complete(dest, [MULTISTREAM, INDEX])
    assert manifest["job"] == "articlesmultistreamdumprecombine"
    assert manifest["files"][0]["url"] == f"{server.url}/enwiki/{DATE}/{INDEX}"
    assert server.gets(MULTISTREAM) == [None] and server.gets(INDEX) == [None]
    assert "2 downloaded, 0 already complete" in result.stdout, describe(result)
    assert f"{MULTISTREAM}: sha1 ok" in result.stdout, describe(result)


def test_quiet_prints_only_the_summary(server, tmp_path):
    publish(server)
    result = run_download("--wiki", "enwiki", "--date", DATE, "--dest", tmp_path, "--quiet",
                          base_url=server.url + "/")  # a trailing slash is fine
    assert result.returncode == 0, describe(result)
    assert result.stderr == "" and len(result.stdout.splitlines()) == 2, describe(result)
    assert_complete(tmp_path, [MULTISTREAM, INDEX])


def test_latest_is_the_newest_run_whose_job_is_done(server, tmp_path):
    server.routes["/enwiki/"] = (FIXTURES / "index.html").read_bytes()
    publish(server, "20240601", statuses={"articlesmultistreamdumprecombine": "in-progress"})
    # 20240520: listed, but no dumpstatus.json (404)
    publish(server, "20240501")
    publish(server, "20240420")
    result = run_download("--wiki", "enwiki", "--date", "latest", "--dest", tmp_path,
                          base_url=server.url)
    assert result.returncode == 0, describe(result)
    assert_complete(tmp_path, [MULTISTREAM, INDEX])
    statuses = [p for p, _ in server.requests if p.endswith("dumpstatus.json")]
    assert statuses == [f"/enwiki/{d}/dumpstatus.json" for d in ("20240601", "20240520",
                                                                  "20240501")], server.requests
    assert "latest enwiki run with articlesmultistreamdumprecombine done: 20240501" in \
        result.stdout, describe(result)


def test_latest_with_no_finished_run(server, tmp_path):
    server.routes["/enwiki/"] = (FIXTURES / "index.html").read_bytes()
    publish(server, "20240601", statuses={"articlesmultistreamdumprecombine": "in-progress"})
    result = run_download("--wiki", "enwiki", "--date", "latest", "--dest", tmp_path,
                          base_url=server.url)
    assert_one_line_error(result, "newest enwiki runs", "20240601", "in-progress")


def test_resume_from_a_partial_file(server, tmp_path):
    publish(server)
    half = len(payload(MULTISTREAM)) // 2
    (tmp_path / f"{MULTISTREAM}.part").write_bytes(payload(MULTISTREAM)[:half])
    result = run_download("--wiki", "enwiki", "--date", DATE, "--dest", tmp_path,
                          base_url=server.url)
    assert result.returncode == 0, describe(result)
    assert server.gets(MULTISTREAM) == [f"bytes={half}-"]
    assert server.gets(INDEX) == [None]
    assert_complete(tmp_path, [MULTISTREAM, INDEX])
    assert f"resuming at {half / 1024:.1f} KiB" in result.stdout, describe(result)


def test_server_without_range_support_starts_over(server, tmp_path):
    publish(server)
    server.range_support = False
    half = len(payload(MULTISTREAM)) // 2
    (tmp_path / f"{MULTISTREAM}.part").write_bytes(b"x" * half)  # even bytes that are wrong
    result = run_download("--wiki", "enwiki", "--date", DATE, "--dest", tmp_path,
                          base_url=server.url)
    assert result.returncode == 0, describe(result)
    assert server.gets(MULTISTREAM) == [f"bytes={half}-"]  # answered with 200 and all bytes
    assert "does not support Range" in result.stdout, describe(result)
    assert_complete(tmp_path, [MULTISTREAM, INDEX])


def test_dropped_connection_is_resumed_by_a_retry(server, tmp_path):
    publish(server)
    cut = 100_000
    server.drops[f"/enwiki/{DATE}/{MULTISTREAM}"] = cut
    result = run_download("--wiki", "enwiki", "--date", DATE, "--dest", tmp_path,
                          base_url=server.url)
    assert result.returncode == 0, describe(result)
    ranges = server.gets(MULTISTREAM)
    assert len(ranges) == 2 and ranges[0] is None, ranges
    assert ranges[1] == f"bytes={cut}-", ranges  # from where the cut left the part
    assert "connection dropped mid-file; retry 1/5" in result.stdout, describe(result)
    assert_complete(tmp_path, [MULTISTREAM, INDEX])


def test_a_silent_server_times_out_and_the_retry_resumes(server, tmp_path):
    publish(server)
    server.stalls[f"/enwiki/{DATE}/{MULTISTREAM}"] = 50_000
    result = run_download("--wiki", "enwiki", "--date", DATE, "--dest", tmp_path,
                          "--timeout", "0.3", base_url=server.url)
    assert result.returncode == 0, describe(result)
    assert server.gets(MULTISTREAM) == [None, "bytes=50000-"]
    assert "timed out (no data for 0.3 s); retry 1/5" in result.stdout, describe(result)
    assert_complete(tmp_path, [MULTISTREAM, INDEX])


def test_retries_exhausted(server, tmp_path):
    publish(server)
    server.drops[f"/enwiki/{DATE}/{MULTISTREAM}"] = 1000
    result = run_download("--wiki", "enwiki", "--date", DATE, "--dest", tmp_path,
                          "--retries", "0", base_url=server.url)
    assert_one_line_error(result, MULTISTREAM, "download failed", "run again to resume")
    assert (tmp_path / f"{MULTISTREAM}.part").stat().st_size == 1000
    assert not (tmp_path / MULTISTREAM).exists() and not (tmp_path / "download.json").exists()


def test_corrupted_file_is_never_under_its_final_name(server, tmp_path):
    publish(server)
    url = f"/enwiki/{DATE}/{MULTISTREAM}"
    good = server.routes[url]
    server.routes[url] = good[:1000] + bytes(b ^ 0xFF for b in good[1000:1010]) + good[1010:]
    result = run_download("--wiki", "enwiki", "--date", DATE, "--dest", tmp_path,
                          base_url=server.url, fresh=True)
    line = assert_one_line_error(result, MULTISTREAM, "checksum mismatch",
                                 hashlib.sha1(good).hexdigest())
    assert not (tmp_path / MULTISTREAM).exists()
    assert not (tmp_path / f"{MULTISTREAM}.part").exists()
    assert (tmp_path / f"{MULTISTREAM}.bad").read_bytes() == server.routes[url]
    assert not (tmp_path / "download.json").exists()
    assert (tmp_path / INDEX).read_bytes() == payload(INDEX), line  # verified before it


def test_wrong_size_is_a_mismatch_too(server, tmp_path):
    publish(server)
    url = f"/enwiki/{DATE}/{INDEX}"
    server.routes[url] = server.routes[url] + b"more"
    result = run_download("--wiki", "enwiki", "--date", DATE, "--dest", tmp_path, "--quiet",
                          base_url=server.url)
    assert_one_line_error(result, INDEX, "checksum mismatch", "size 20,004 instead of 20,000")
    assert not (tmp_path / INDEX).exists() and (tmp_path / f"{INDEX}.bad").exists()


def test_missing_date(server, tmp_path):
    publish(server)
    result = run_download("--wiki", "enwiki", "--date", "20240502", "--dest", tmp_path,
                          base_url=server.url, fresh=True)
    assert_one_line_error(result, "no dump of enwiki for 20240502", "HTTP 404")
    assert list(tmp_path.iterdir()) == []


def test_job_not_done(server, tmp_path):
    publish(server, statuses={"articlesmultistreamdumprecombine": "in-progress"})
    result = run_download("--wiki", "enwiki", "--date", DATE, "--dest", tmp_path,
                          base_url=server.url)
    assert_one_line_error(result, "articlesmultistreamdumprecombine", "'in-progress'",
                          "not done")
    assert server.gets(MULTISTREAM) == []


def test_complete_files_are_not_requested_again(server, tmp_path):
    publish(server)
    args = ("--wiki", "enwiki", "--date", DATE, "--dest", tmp_path)
    assert run_download(*args, base_url=server.url).returncode == 0
    first = json.loads((tmp_path / "download.json").read_text())
    server.requests.clear()
    result = run_download(*args, base_url=server.url)
    assert result.returncode == 0, describe(result)
    assert server.requests == [(f"/enwiki/{DATE}/dumpstatus.json", None)]
    assert "0 downloaded, 2 already complete" in result.stdout, describe(result)
    assert f"{INDEX}: already complete (sha1 ok), skipped" in result.stdout, describe(result)
    assert json.loads((tmp_path / "download.json").read_text())["files"] == first["files"]


def test_a_wrong_file_under_the_final_name_is_replaced(server, tmp_path):
    publish(server)
    (tmp_path / INDEX).write_bytes(b"an older index")
    result = run_download("--wiki", "enwiki", "--date", DATE, "--dest", tmp_path,
                          base_url=server.url)
    assert result.returncode == 0, describe(result)
    assert (tmp_path / f"{INDEX}.bad").read_bytes() == b"an older index"
    (tmp_path / f"{INDEX}.bad").unlink()
    assert_complete(tmp_path, [MULTISTREAM, INDEX])


def test_network_unreachable(tmp_path):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    result = run_download("--wiki", "enwiki", "--date", DATE, "--dest", tmp_path,
                          "--retries", "1", base_url=f"http://127.0.0.1:{port}")
    assert_one_line_error(result, f"cannot reach 127.0.0.1:{port}", "refused",
                          "after 1 retry")
    assert "retry 1/1" in result.stdout, describe(result)


# ---- which files ----------------------------------------------------------------------------------

def test_articles_parts_and_unsplit_wikis(server, tmp_path):
    status = publish(server, md5_only=(f"enwiki-{DATE}-pages-articles.xml.bz2",))
    result = run_download("--wiki", "enwiki", "--date", DATE, "--dest", tmp_path / "a",
                          "--files", "articles", base_url=server.url)
    assert result.returncode == 0, describe(result)
    manifest = assert_complete(tmp_path / "a", [f"enwiki-{DATE}-pages-articles.xml.bz2"])
    assert manifest["job"] == "articlesdumprecombine" and manifest["verified_with"] == ["md5"]
    assert "md5 ok" in result.stdout, describe(result)

    parts = sorted(status["jobs"]["articlesmultistreamdump"]["files"])
    result = run_download("--wiki", "enwiki", "--date", DATE, "--dest", tmp_path / "p",
                          "--parts", "--quiet", base_url=server.url)
    assert result.returncode == 0, describe(result)
    assert len(parts) == 4
    assert assert_complete(tmp_path / "p", parts)["job"] == "articlesmultistreamdump"

    # a small wiki: no parts, so no recombine jobs; the parts job has the whole dump
    publish(server, "20240601", drop_jobs=("articlesdumprecombine",
                                           "articlesmultistreamdumprecombine"))
    result = run_download("--wiki", "enwiki", "--date", "20240601", "--dest", tmp_path / "s",
                          "--files", "articles", "--quiet", base_url=server.url)
    assert result.returncode == 0, describe(result)
    names = [n.replace(DATE, "20240601") for n in status["jobs"]["articlesdump"]["files"]]
    assert assert_complete(tmp_path / "s", names, "20240601")["job"] == "articlesdump"


def test_choose_job_and_run_dates():
    jobs = json.loads((FIXTURES / "dumpstatus.json").read_text())["jobs"]
    assert choose_job(jobs, "multistream") == "articlesmultistreamdumprecombine"
    assert choose_job(jobs, "articles") == "articlesdumprecombine"
    assert choose_job(jobs, "multistream", parts=True) == "articlesmultistreamdump"
    assert choose_job({"articlesdump": {}}, "articles") == "articlesdump"
    listing = (FIXTURES / "index.html").read_text()
    assert run_dates(listing) == ["20240601", "20240520", "20240501", "20240420", "20240401"]


# ---- the command line ---------------------------------------------------------------------------

@pytest.mark.parametrize("args, fragment", [
    (["--date", DATE, "--dest", "x"], "--wiki"),
    (["--wiki", "enwiki", "--date", "2024-05-01", "--dest", "x"], "YYYYMMDD"),
    (["--wiki", "en/../wiki", "--dest", "x"], "--wiki"),
    (["--wiki", "enwiki", "--dest", "x", "--files", "meta"], "--files"),
    (["--wiki", "enwiki", "--dest", "x", "--base-url", "ftp://mirror"], "--base-url"),
])
def test_usage_errors_are_one_line(args, fragment):
    result = run_download(*args, fresh=args[0] == "--date")
    assert_one_line_error(result, fragment, "--help")


def test_help():
    result = run_download("--help")
    assert result.returncode == 0, describe(result)
    for option in ("--wiki", "--date", "--dest", "--files", "--parts", "--base-url",
                   "--retries", "--timeout", "--quiet"):
        assert option in result.stdout


def test_under_the_wikipairs_group(server, tmp_path, monkeypatch):
    """Errors go through the group's handler: one line, exit status 2."""
    group = main
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    publish(server)
    runner = CliRunner()
    result = runner.invoke(group, ["download", "--wiki", "enwiki", "--date", "20240502",
                                   "--dest", str(tmp_path), "--base-url", server.url])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"wikipairs: error: no dump of enwiki for 20240502 "
        f"({server.url}/enwiki/20240502/dumpstatus.json: HTTP 404)"]
    result = runner.invoke(group, ["download", "--wiki", "enwiki", "--date", "May",
                                   "--dest", str(tmp_path)])
    assert result.exit_code == 2 and len(result.stderr.splitlines()) == 1, result.output
    result = runner.invoke(group, ["download", "--wiki", "enwiki", "--date", DATE, "--quiet",
                                   "--dest", str(tmp_path), "--base-url", server.url])
    assert result.exit_code == 0, result.output
    assert_complete(tmp_path, [MULTISTREAM, INDEX])


def test_api_raises_checksum_error(server, tmp_path, monkeypatch):
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    publish(server)
    server.routes[f"/enwiki/{DATE}/{INDEX}"] = bytes(SIZES["index"])
    sleeps = []
    config = DownloadConfig(wiki="enwiki", date=DATE, dest=str(tmp_path), base_url=server.url,
                            quiet=True, sleep=sleeps.append)
    with pytest.raises(ChecksumError, match=re.escape(INDEX)):
        download(config)
    assert sleeps == []


def test_progress_bar_on_a_terminal_only(server, tmp_path, monkeypatch):
    import io

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    publish(server)
    lines = []
    for quiet, dest in ((False, tmp_path / "bar"), (True, tmp_path / "quiet")):
        terminal = Terminal()
        with monkeypatch.context() as patch:
            patch.setattr(sys, "stderr", terminal)
            download(DownloadConfig(wiki="enwiki", date=DATE, dest=str(dest),
                                    base_url=server.url, quiet=quiet, echo=lines.append))
        if quiet:
            assert terminal.getvalue() == ""
        else:
            assert MULTISTREAM in terminal.getvalue() and "100%" in terminal.getvalue()
    assert f"{INDEX}: sha1 ok" in lines


# ---- Enterprise HTML dumps (--files enterprise-html) --------------------------------------------

HTML_RUNS = "/other/enterprise_html/runs"
HTML = f"frwiki-NS0-{DATE}-ENTERPRISE-HTML.json.tar.gz"


def html_payload(name: str) -> bytes:
    return random.Random(name).randbytes(250_000)


def publish_html(server: DumpServer, date: str = DATE, wikis: tuple[str, ...] = ("frwiki",),
                 sums: str | None = None) -> None:
    """A run folder of Enterprise HTML dumps as Wikimedia publishes it (an nginx index of
    WIKI-NS0-DATE-ENTERPRISE-HTML.json.tar.gz files, no checksum listing), plus `sums` (a
    checksum file name) where given."""
    names = [f"{wiki}-NS{ns}-{date}-ENTERPRISE-HTML.json.tar.gz" for wiki in wikis
             for ns in (0, 14)]
    for name in names:
        server.routes[f"{HTML_RUNS}/{date}/{name}"] = html_payload(name)
    if sums:
        server.routes[f"{HTML_RUNS}/{date}/{sums}"] = "".join(
            f"{hashlib.md5(html_payload(n)).hexdigest()}  {n}\n" for n in names).encode()
        names.append(sums)
    rows = "".join(f'<a href="{n}">{n}</a>   23-Nov-2023 10:00   123\n' for n in names)
    server.routes[f"{HTML_RUNS}/{date}/"] = (
        f'<html><body><pre><a href="../">../</a>\n{rows}</pre></body></html>').encode()


def test_enterprise_html_download_is_resumed_and_checked_by_size(server, tmp_path):
    publish_html(server)
    data = html_payload(HTML)
    third = len(data) // 3
    (tmp_path / f"{HTML}.part").write_bytes(data[:third])
    result = run_download("--wiki", "frwiki", "--date", DATE, "--dest", tmp_path,
                          "--files", "enterprise-html", base_url=server.url, fresh=True)
    assert result.returncode == 0, describe(result)
    assert (tmp_path / HTML).read_bytes() == data
    assert server.gets(HTML) == [f"bytes={third}-"]  # resumed where the part ends
    manifest = json.loads((tmp_path / "download.json").read_text())
    assert manifest["job"] == "enterprise-html" and manifest["verified_with"] == ["size"]
    assert manifest["run_url"] == f"{server.url}{HTML_RUNS}/{DATE}/"
    [entry] = manifest["files"]
    assert entry == {"name": HTML, "size": len(data), "sha1": hashlib.sha1(data).hexdigest(),
                     "md5": None, "url": f"{server.url}{HTML_RUNS}/{DATE}/{HTML}",
                     "sha256": hashlib.sha256(data).hexdigest(), "verified_with": "size"}
    assert "no published checksum; sha256 recorded" in result.stdout, describe(result)
    assert "1 files" in result.stdout and "1 downloaded" in result.stdout, describe(result)
    # again: complete, not requested again
    server.requests.clear()
    result = run_download("--wiki", "frwiki", "--date", DATE, "--dest", tmp_path,
                          "--files", "enterprise-html", base_url=server.url)
    assert result.returncode == 0 and server.gets(HTML) == [], describe(result)
    assert "1 already complete" in result.stdout, describe(result)


def test_enterprise_html_dropped_connection_and_wrong_size(server, tmp_path):
    publish_html(server)
    url = f"{HTML_RUNS}/{DATE}/{HTML}"
    server.drops[url] = 100_000
    args = ("--wiki", "frwiki", "--date", DATE, "--files", "enterprise-html")
    result = run_download(*args, "--dest", tmp_path / "a", base_url=server.url)
    assert result.returncode == 0, describe(result)
    assert server.gets(HTML) == [None, "bytes=100000-"]
    assert (tmp_path / "a" / HTML).read_bytes() == html_payload(HTML)

    # the server sends other bytes than the size it announced: a mismatch, never the final name
    server.routes[url] += b"late"
    server.head_lengths[url] = len(html_payload(HTML))
    result = run_download(*args, "--dest", tmp_path / "b", base_url=server.url)
    assert_one_line_error(result, HTML, "checksum mismatch", "size 250,004 instead of 250,000")
    assert not (tmp_path / "b" / HTML).exists() and (tmp_path / "b" / f"{HTML}.bad").exists()
    assert not (tmp_path / "b" / "download.json").exists()


def test_enterprise_html_uses_a_published_checksum_where_there_is_one(server, tmp_path):
    publish_html(server, sums=f"enterprise-html-{DATE}-md5sums.txt")
    url = f"{HTML_RUNS}/{DATE}/{HTML}"
    good = server.routes[url]
    server.routes[url] = good[:10] + bytes(b ^ 1 for b in good[10:20]) + good[20:]  # same size
    result = run_download("--wiki", "frwiki", "--date", DATE, "--dest", tmp_path,
                          "--files", "enterprise-html", base_url=server.url)
    assert_one_line_error(result, HTML, "checksum mismatch", hashlib.md5(good).hexdigest())
    server.routes[url] = good
    result = run_download("--wiki", "frwiki", "--date", DATE, "--dest", tmp_path,
                          "--files", "enterprise-html", base_url=server.url)
    assert result.returncode == 0, describe(result)
    manifest = json.loads((tmp_path / "download.json").read_text())
    assert manifest["verified_with"] == ["md5"]
    assert manifest["files"][0]["md5"] == hashlib.md5(good).hexdigest()
    assert manifest["files"][0]["sha256"] == hashlib.sha256(good).hexdigest()


def test_enterprise_html_latest(server, tmp_path):
    server.routes[f"{HTML_RUNS}/"] = (
        b'<html><pre><a href="../">../</a>\n<a href="20231101/">20231101/</a>\n'
        b'<a href="20240501/">20240501/</a>\n<a href="20240520/">20240520/</a>\n</pre></html>')
    publish_html(server, "20240520", wikis=("enwiki",))  # newest: no frwiki yet
    publish_html(server, DATE)
    result = run_download("--wiki", "frwiki", "--date", "latest", "--dest", tmp_path,
                          "--files", "enterprise-html", "--quiet", base_url=server.url)
    assert result.returncode == 0, describe(result)
    assert (tmp_path / HTML).read_bytes() == html_payload(HTML)
    assert json.loads((tmp_path / "download.json").read_text())["date"] == DATE


@pytest.mark.parametrize("date, wiki, fragments", [
    ("20240502", "frwiki", ["no Enterprise HTML dump run 20240502", "HTTP 404"]),
    (DATE, "dewiki", ["no Enterprise HTML dump of dewiki in run 20240501", "does not list"]),
])
def test_enterprise_html_missing_run_or_wiki(server, tmp_path, date, wiki, fragments):
    publish_html(server)
    result = run_download("--wiki", wiki, "--date", date, "--dest", tmp_path,
                          "--files", "enterprise-html", base_url=server.url, fresh=True)
    assert_one_line_error(result, *fragments)
    assert list(tmp_path.iterdir()) == []


def test_enterprise_html_has_no_parts(tmp_path):
    result = run_download("--wiki", "frwiki", "--dest", tmp_path, "--files", "enterprise-html",
                          "--parts")
    assert_one_line_error(result, "--parts", "enterprise-html")


def test_parse_checksums():
    from wikipairs.download.enterprise import listed_names, parse_checksums

    name = HTML
    text = f"{'a' * 32}  {name}\n{'b' * 40} *{name}\n{'c' * 32}  other.tar.gz\n"
    assert parse_checksums(text, name) == {"md5": "a" * 32, "sha1": "b" * 40}
    assert parse_checksums(f"{'d' * 64}\n", name, sidecar=True) == {"sha256": "d" * 64}
    assert parse_checksums(f"{'d' * 64}\n", name) == {}
    assert listed_names('<a href="../">../</a><a href="./x%2By.gz">x</a><a href="20240501/">') \
        == ["x+y.gz"]
