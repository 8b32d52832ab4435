"""A Dataflow path that never waits on the network (issue 20): a dry run reads no bucket or input
and checks project and bucket names offline, in seconds; a real run that cannot reach GCS is one
line naming the host and Application Default Credentials; runner names Beam does not know, or
that wikipairs refuses or has not tested, get a line of their own. `verify`, `stats` and `show` on
a gs:// folder that cannot be reached: one line, the same check."""
from __future__ import annotations

import socket
import subprocess
import time

import pytest

from conftest import SHARED_DATA, assert_one_line_error, cli_command, describe
from wikipairs.pipelines.offline import bucket_problem, lang_from_name, project_problem

GS_INPUT = "gs://test-bucket/dewiki-20240101-pages-articles-multistream.xml.bz2"
DATAFLOW = ["--runner", "DataflowRunner", "--project", "test-project", "--region",
            "us-central1"]


def _run(*args, cwd, emulator: str | None, timeout: float, command: str = "build"
         ) -> tuple[subprocess.CompletedProcess, float]:
    """(result, seconds) of `wikipairs COMMAND ARGS` with STORAGE_EMULATOR_HOST=`emulator`."""
    argv, env = cli_command(command, *args)
    env.pop("STORAGE_EMULATOR_HOST", None)
    if emulator:
        env["STORAGE_EMULATOR_HOST"] = emulator
    started = time.monotonic()
    result = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True,
                            encoding="utf-8", timeout=timeout)
    return result, time.monotonic() - started


@pytest.fixture
def listener():
    """A socket listening on 127.0.0.1: where STORAGE_EMULATOR_HOST points, so that any gs://
    request (wikipairs', Beam's, google-cloud-storage's) would show as a connection."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.setblocking(False)
    yield server
    server.close()


def _connections(server: socket.socket) -> int:
    count = 0
    while True:
        try:
            server.accept()[0].close()
        except BlockingIOError:
            return count
        count += 1


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---- a dry run: offline, in seconds ----------------------------------------------------------

@pytest.mark.parametrize("names, fragments", [
    (["--project", "p", "--temp_location", "gs://test-bucket/tmp"], ["--project p", "project ID"]),
    (["--project", "test-project", "--temp_location", "gs://b/tmp"], ["gs://b/tmp", "bucket"]),
    (["--project", "test-project", "--temp_location", "gs://Test_Bucket/tmp"], ["Test_Bucket"]),
    (["--project", "test-project", "--temp_location", "gs://google-pairs/tmp"], ["google"]),
])
def test_dry_run_refuses_bad_names_offline_in_seconds(tmp_path, listener, names, fragments):
    """These names sent Beam looking up a default staging bucket: 130 s offline, then
    "internal error: RetryError"."""
    result, seconds = _run("--runner", "DataflowRunner", "--dry-run", "--region", "us-central1",
                           *names, "-i", GS_INPUT, "-o", "gs://test-bucket/out", cwd=tmp_path,
                           emulator=f"127.0.0.1:{listener.getsockname()[1]}", timeout=60)
    assert_one_line_error(result, *fragments)
    assert seconds < 20, f"{seconds:.1f} s" + describe(result)
    assert _connections(listener) == 0, "a dry run sent a request"


def test_dry_run_with_gs_input_reads_nothing_in_seconds(tmp_path, listener):
    """A gs:// input made the dry run wait ~126 s to plan its splits: now one split per input,
    nothing read, nothing written, no connection made."""
    result, seconds = _run(*DATAFLOW, "--dry-run", "--temp_location", "gs://test-bucket/tmp",
                           "-i", GS_INPUT, "-o", "gs://test-bucket/out", cwd=tmp_path,
                           emulator=f"127.0.0.1:{listener.getsockname()[1]}", timeout=60)
    assert result.returncode == 0, describe(result)
    assert seconds < 20, f"{seconds:.1f} s" + describe(result)
    assert "dry run: DataflowRunner job built (1 input split: one per input, none read" in \
        result.stdout, describe(result)
    assert "sentencex:de" in result.stdout or "punkt_tab:german" in result.stdout, \
        "the language comes from the file name" + describe(result)
    assert _connections(listener) == 0, "a dry run sent a request"
    assert list(tmp_path.iterdir()) == [], "a dry run writes nothing locally"


def test_dry_run_without_a_usable_temp_location_is_one_line(tmp_path):
    """Without one, Beam would look up (or create) a default bucket: a request."""
    for location in ([], ["--temp_location", "gs://test-bucket"],
                     ["--temp_location", str(tmp_path)]):
        result, seconds = _run(*DATAFLOW, "--dry-run", *location, "-o", "gs://test-bucket/out",
                               cwd=tmp_path, emulator=f"127.0.0.1:{_closed_port()}", timeout=60)
        assert_one_line_error(result, "--temp_location gs://BUCKET/PATH")
        assert seconds < 20, f"{seconds:.1f} s" + describe(result)


def test_beam_option_errors_are_one_line_with_their_reasons(tmp_path):
    result, _ = _run(*DATAFLOW, "--dry-run", "--job_name", "Bad_Name", "--temp_location",
                     "gs://test-bucket/tmp", "-o", "gs://test-bucket/out", cwd=tmp_path,
                     emulator=f"127.0.0.1:{_closed_port()}", timeout=60)
    assert_one_line_error(result, "Beam refused the options", "Invalid job_name (Bad_Name)")


@pytest.mark.parametrize("bucket", ["b", "ab", "Bucket", "-bucket", "bucket-", "a" * 64,
                                    "192.168.5.4", "goog-pairs", "my-g00gle-pairs", "a..b",
                                    "bücket", "a b"])
def test_bad_bucket_names(bucket):
    assert bucket_problem(bucket), bucket


@pytest.mark.parametrize("bucket", ["abc", "test-bucket", "my_bucket.1", "a" * 63,
                                    "pairs.example.com", "0bucket9"])
def test_good_bucket_names(bucket):
    assert bucket_problem(bucket) is None, bucket


@pytest.mark.parametrize("project", ["p", "proj", "123456789", "Test-Project", "test-project-",
                                     "1test-project", "test_project", "a" * 31])
def test_bad_project_ids(project):
    assert project_problem(project), project


@pytest.mark.parametrize("project", ["test-project", "abcdef", "a" * 30,
                                     "example.com:my-project"])
def test_good_project_ids(project):
    assert project_problem(project) is None, project


def test_language_from_the_file_name():
    assert lang_from_name(GS_INPUT) == "de"
    assert lang_from_name("zh_yuewiki-latest-pages-articles.xml.bz2") == "zh-yue"
    assert lang_from_name("/data/sample.xml.bz2") == "en"


# ---- a real run that cannot reach GCS --------------------------------------------------------

@pytest.mark.parametrize("runner", [["--workers", "1"], DATAFLOW + ["--temp_location",
                                                                    "gs://test-bucket/tmp"]])
def test_unreachable_gcs_is_one_line_naming_the_host(tmp_path, runner):
    """fileio retries a failing request for a minute, Beam's client longer, and a Dataflow
    submission ended in "internal error": the host is tried first (connect, 10 s at most)."""
    port = _closed_port()
    result, seconds = _run(*runner, "-i", GS_INPUT, "-o", "gs://test-bucket/out", cwd=tmp_path,
                           emulator=f"127.0.0.1:{port}", timeout=60)
    assert_one_line_error(result, f"127.0.0.1:{port}", "Application Default Credentials")
    assert "internal error" not in result.stderr
    assert seconds < 40, f"{seconds:.1f} s" + describe(result)


def test_unresolvable_gcs_host_is_one_line(tmp_path):
    """A name that does not resolve (.invalid never does), as storage.googleapis.com offline."""
    result, seconds = _run("--workers", "1", "-o", "gs://test-bucket/out", cwd=tmp_path,
                           emulator="http://no-such-host.invalid:4443", timeout=60)
    assert_one_line_error(result, "no-such-host.invalid:4443", "Application Default Credentials")
    assert seconds < 40, f"{seconds:.1f} s" + describe(result)


def test_unreachable_dataflow_api_is_one_line(tmp_path, listener):
    """GCS answers (the listening socket), the Dataflow API does not."""
    port = _closed_port()
    result, seconds = _run(*DATAFLOW, "--temp_location", "gs://test-bucket/tmp",
                           "--dataflow_endpoint", f"http://127.0.0.1:{port}",
                           "-o", "gs://test-bucket/out", cwd=tmp_path,
                           emulator=f"127.0.0.1:{listener.getsockname()[1]}", timeout=60)
    assert_one_line_error(result, f"Dataflow API at 127.0.0.1:{port}",
                          "Application Default Credentials")
    assert seconds < 40, f"{seconds:.1f} s" + describe(result)


def test_no_credentials_is_one_line(tmp_path, listener):
    """Both hosts answer; GOOGLE_APPLICATION_CREDENTIALS names a file that is not there."""
    argv, env = cli_command("build", *DATAFLOW, "--temp_location", "gs://test-bucket/tmp",
                            "--dataflow_endpoint",
                            f"http://127.0.0.1:{listener.getsockname()[1]}",
                            "-o", "gs://test-bucket/out")
    env.update(STORAGE_EMULATOR_HOST=f"127.0.0.1:{listener.getsockname()[1]}",
               GOOGLE_APPLICATION_CREDENTIALS=str(tmp_path / "no-such-key.json"))
    started = time.monotonic()
    result = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                            encoding="utf-8", timeout=60)
    assert_one_line_error(result, "no Application Default Credentials", "no-such-key.json")
    assert time.monotonic() - started < 40, describe(result)


# ---- verify, stats and show on gs:// --------------------------------------------------------

SQUAD_DEV = SHARED_DATA / "squad" / "dev-v1.1.json"
# what each command needs beside the build folder
_MORE_ARGS = {"verify": (), "stats": (), "show": (), "export": ("--to", "jsonl", "-o", "exported"),
              "audit": ("--against", str(SQUAD_DEV))}


@pytest.mark.parametrize("command", list(_MORE_ARGS))
@pytest.mark.parametrize("host", ["closed port", "http://no-such-host.invalid:4443"])
def test_commands_on_unreachable_gcs_are_one_line_in_seconds(tmp_path, command, host):
    """They retried each request for a minute (verify: 97 s, then a line naming neither host
    nor credentials); now the host is tried first, as build does (pipelines/offline.py)."""
    emulator = f"127.0.0.1:{_closed_port()}" if host == "closed port" else host
    result, seconds = _run("gs://test-bucket/out", *_MORE_ARGS[command], cwd=tmp_path,
                           emulator=emulator, timeout=60, command=command)
    line = assert_one_line_error(result, emulator.split("//")[-1],
                                 "Application Default Credentials")
    assert "internal error" not in line
    assert seconds < 30, f"{seconds:.1f} s" + describe(result)


def test_commands_on_gcs_without_credentials_are_one_line(tmp_path):
    """No emulator (GCS itself, which needs ADC) and no credentials: the credentials are named
    first where storage.googleapis.com answers, the host where it does not (offline)."""
    argv, env = cli_command("verify", "gs://test-bucket/out")
    env.pop("STORAGE_EMULATOR_HOST", None)
    env["GOOGLE_APPLICATION_CREDENTIALS"] = str(tmp_path / "no-such-key.json")
    started = time.monotonic()
    result = subprocess.run(argv, cwd=tmp_path, env=env, capture_output=True, text=True,
                            encoding="utf-8", timeout=60)
    assert_one_line_error(result, "Application Default Credentials")
    assert "storage.googleapis.com:443" in result.stderr or "no-such-key.json" in result.stderr
    assert time.monotonic() - started < 30, describe(result)


# ---- runners ---------------------------------------------------------------------------------

def test_unknown_runner_names_tested_and_offered_runners(tmp_path):
    result, _ = _run("--runner", "NoSuchRunner", "--dry-run", "-o", tmp_path / "out",
                     cwd=tmp_path, emulator=None, timeout=60)
    line = assert_one_line_error(result, "NoSuchRunner", "tested with wikipairs: DirectRunner, "
                                 "DataflowRunner", "Beam offers", "FlinkRunner", "PrismRunner")
    assert "internal error" not in line


def test_dask_runner_is_refused_with_its_reason(tmp_path):
    for name in ("DaskRunner", "dask", "apache_beam.runners.dask.dask_runner.DaskRunner"):
        result, _ = _run("--runner", name, "--dry-run", "-o", tmp_path / "out", cwd=tmp_path,
                         emulator=None, timeout=60)
        assert_one_line_error(result, name, "tagged outputs", "DirectRunner, DataflowRunner")


def test_untested_runner_is_a_warning(tmp_path):
    result, _ = _run("--runner", "FlinkRunner", "--dry-run", "-o", tmp_path / "out",
                     cwd=tmp_path, emulator=None, timeout=60)
    assert result.returncode == 0, describe(result)
    warnings = [line for line in result.stderr.splitlines() if line.startswith("wikipairs: ")]
    assert warnings == ["wikipairs: warning: --runner FlinkRunner is not tested with wikipairs "
                        "(tested: DirectRunner, DataflowRunner): it needs a job server (a Java "
                        "one, downloaded unless you give its jar or address)"], describe(result)
    assert "FlinkRunner job built" in result.stdout and "not run" in result.stdout, \
        describe(result)
    assert not (tmp_path / "out").exists()
