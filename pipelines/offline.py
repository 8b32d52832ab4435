"""What `wikipairs build` settles before any request to Google Cloud (issue 20): the runner's
name, project IDs and bucket names by GCP's naming rules, whether the storage host answers at all,
and a dry run's plan, made without reading a bucket or an input.

Beam leaves each of these to the network: a bucket name GCS would reject sends its validator to
look up (or create) a default staging bucket, which offline retries for ~130 s and ends in a
RetryError; an unreachable storage host is retried for a minute per request; an unknown runner
name is a ValueError. Here each is one line (a BuildError: exit status 2) within seconds.
"""
from __future__ import annotations

import os
import re
import socket
import threading
from urllib.parse import urlsplit

from wikipairs.errors import WikipairsError
from wikipairs.reading.splits import Split
from wikipairs.records import SiteInfo

TESTED_RUNNERS = ("DirectRunner", "DataflowRunner")
# Runners Beam offers that wikipairs refuses, and why.
REFUSED_RUNNERS = {
    "DaskRunner": "Beam 2.77's DaskRunner misroutes tagged outputs (ParDo.with_outputs), which "
                  "this pipeline uses for titles, splits and WLP's link pairs",
}
GCS_HOST = "storage.googleapis.com"
ADC = ("credentials are Application Default Credentials (gcloud auth application-default login, "
       "or GOOGLE_APPLICATION_CREDENTIALS)")
PROBE_SECONDS = 10.0


class OfflineCheckError(WikipairsError):
    """A runner, project or bucket name refused locally, or a storage host that does not answer."""


# ---- runners ---------------------------------------------------------------------------------

def beam_runner_names() -> list[str]:
    from apache_beam.options.pipeline_options import StandardOptions
    return list(StandardOptions.KNOWN_RUNNER_NAMES)


def check_runner(name: str) -> tuple[str, str | None]:
    """(the runner's canonical name, a warning or None) for `--runner NAME`, resolved as Beam
    does (case-insensitive, "Runner" optional, or a fully qualified class). Raises
    OfflineCheckError for a name Beam does not know and for a refused runner."""
    from apache_beam.runners.runner import _RUNNER_MAP
    tested = ", ".join(TESTED_RUNNERS)
    key = name.lower()
    path = _RUNNER_MAP.get(key) or _RUNNER_MAP.get(key + "runner")
    if path is None and "." not in name:
        refused = next((r for r in REFUSED_RUNNERS if r.lower() in (key, key + "runner")), None)
        if refused:
            raise OfflineCheckError(f"--runner {name}: not supported: {REFUSED_RUNNERS[refused]} "
                                    f"(tested: {tested})")
        raise OfflineCheckError(f"--runner {name}: Beam knows no such runner; tested with "
                                f"wikipairs: {tested}; Beam offers: "
                                f"{', '.join(beam_runner_names())} (or a PipelineRunner class "
                                f"by its full name)")
    canonical = (path or name).rsplit(".", 1)[-1]
    if canonical in REFUSED_RUNNERS:  # given by its full class name
        raise OfflineCheckError(f"--runner {name}: not supported: {REFUSED_RUNNERS[canonical]} "
                                f"(tested: {tested})")
    if canonical in TESTED_RUNNERS:
        return canonical, None
    note = ""
    if canonical in ("FlinkRunner", "SparkRunner", "PortableRunner"):
        note = ": it needs a job server (a Java one, downloaded unless you give its jar or address)"
    return name, f"--runner {name} is not tested with wikipairs (tested: {tested}){note}"


# ---- project IDs and bucket names ------------------------------------------------------------

# https://cloud.google.com/resource-manager/docs/creating-managing-projects: 6 to 30 lowercase
# letters, digits and hyphens, a letter first, no hyphen last; "example.com:id" for the older
# domain-scoped projects.
_PROJECT = re.compile(r"(?:[a-z0-9][-a-z0-9.]*[a-z0-9]:)?[a-z][-a-z0-9]{4,28}[a-z0-9]")
_BUCKET_CHARS = re.compile(r"[a-z0-9][-_a-z0-9.]*[a-z0-9]")
_IPV4 = re.compile(r"\d{1,3}(\.\d{1,3}){3}")
_GOOGLE_LIKE = re.compile(r"g[o0]{2}g[l1]e")


def project_problem(project: str) -> str | None:
    """Why GCP would refuse `project` as a project ID, or None."""
    if _PROJECT.fullmatch(project):
        return None
    if project.isdigit():
        return "a project number; Dataflow wants the project ID"
    return ("a project ID is 6 to 30 lowercase letters, digits and hyphens, starting with a "
            "letter and not ending with a hyphen")


def bucket_problem(bucket: str) -> str | None:
    """Why GCS would refuse `bucket` as a bucket name
    (https://cloud.google.com/storage/docs/buckets#naming), or None."""
    if not _BUCKET_CHARS.fullmatch(bucket):
        return ("bucket names use lowercase letters, digits, '-', '_' and '.' only, and start "
                "and end with a letter or digit")
    parts = bucket.split(".")
    if not 3 <= len(bucket) <= (222 if len(parts) > 1 else 63):
        return "a bucket name is 3 to 63 characters (222 with dots)"
    if any(not 1 <= len(p) <= 63 for p in parts):
        return "each dot-separated part of a bucket name is 1 to 63 characters"
    if _IPV4.fullmatch(bucket):
        return "a bucket name cannot be an IP address"
    if bucket.startswith("goog") or _GOOGLE_LIKE.search(bucket):
        return "a bucket name cannot start with 'goog' or contain 'google'"
    return None


def check_names(paths: list[tuple[str, str]], project: str | None) -> None:
    """Raise OfflineCheckError for a project ID GCP would refuse, or the first gs:// URL of
    `paths` ((option it was given to, path) pairs) whose bucket GCS would refuse. Local paths
    pass."""
    if project is not None:
        problem = project_problem(project)
        if problem:
            raise OfflineCheckError(f"--project {project}: not a valid project ID ({problem})")
    for option, path in paths:
        if not str(path).startswith("gs://"):
            continue
        bucket = str(path)[len("gs://"):].split("/", 1)[0]
        problem = bucket_problem(bucket)
        if problem:
            raise OfflineCheckError(f"{option} {path}: {bucket!r} is not a valid bucket name "
                                    f"({problem})")


# ---- can the storage host be reached at all? -------------------------------------------------

def storage_endpoint() -> tuple[str, int, str]:
    """(host, port, how it was chosen) of the gs:// requests: STORAGE_EMULATOR_HOST where set
    (as wikipairs.fileio, google-cloud-storage and Beam do), else storage.googleapis.com:443."""
    emulator = os.environ.get("STORAGE_EMULATOR_HOST")
    if not emulator:
        return GCS_HOST, 443, "GCS"
    url = urlsplit(emulator if "://" in emulator else "http://" + emulator)
    port = url.port or (443 if url.scheme == "https" else 80)
    return url.hostname or "", port, "the GCS emulator (STORAGE_EMULATOR_HOST)"


def unreachable(host: str, port: int, seconds: float = PROBE_SECONDS) -> str | None:
    """Why a TCP connection to host:port cannot be made within `seconds` (name lookup
    included, in a thread of its own since getaddrinfo takes no timeout), or None."""
    outcome: list = []

    def connect():
        try:
            socket.create_connection((host, port), timeout=seconds).close()
            outcome.append(None)
        except OSError as e:
            outcome.append(e.strerror or str(e) or type(e).__name__)

    thread = threading.Thread(target=connect, daemon=True)
    thread.start()
    thread.join(seconds)
    return outcome[0] if outcome else f"no answer in {seconds:.0f} s"


def check_reachable(seconds: float = PROBE_SECONDS) -> None:
    """Raise OfflineCheckError, naming the host and ADC, where the storage host cannot be
    reached: before the run, instead of a minute of retries per request."""
    host, port, what = storage_endpoint()
    why = unreachable(host, port, seconds)
    if why:
        raise OfflineCheckError(f"cannot reach {what} at {host}:{port} ({why}); gs:// paths and "
                                f"DataflowRunner need it; {ADC}")


def check_storage(paths: list[str], seconds: float = PROBE_SECONDS) -> None:
    """For a command that reads or writes `paths` (`verify`, `stats`, `show`): where one is a
    gs:// URL, the storage host must answer and, but against the emulator (anonymous), ADC must
    be found; else OfflineCheckError, one line within 2 x `seconds`, instead of a minute of
    retries per request."""
    if not any(str(p).startswith("gs://") for p in paths):
        return
    check_reachable(seconds)
    if not os.environ.get("STORAGE_EMULATOR_HOST"):
        check_credentials(seconds)


def check_dataflow_reachable(endpoint: str, seconds: float = PROBE_SECONDS) -> None:
    """The same for the Dataflow API (--dataflow_endpoint), which a submission talks to."""
    url = urlsplit(endpoint if "://" in endpoint else "https://" + endpoint)
    host, port = url.hostname or "", url.port or (80 if url.scheme == "http" else 443)
    why = unreachable(host, port, seconds)
    if why:
        raise OfflineCheckError(f"cannot reach the Dataflow API at {host}:{port} ({why}); "
                                f"DataflowRunner needs it; {ADC}")


def check_credentials(seconds: float = PROBE_SECONDS) -> None:
    """Raise OfflineCheckError where no Application Default Credentials are found (google.auth
    looks where google-cloud-cpp and Beam look: GOOGLE_APPLICATION_CREDENTIALS, gcloud's file,
    the metadata server), within `seconds`; a no-op without google-auth."""
    try:
        import google.auth
    except ImportError:
        return
    outcome: list = []

    def find():
        try:
            google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
            outcome.append(None)
        except Exception as e:  # DefaultCredentialsError, or a malformed credentials file
            outcome.append((str(e).strip().splitlines() or [type(e).__name__])[0][:200])

    thread = threading.Thread(target=find, daemon=True)
    thread.start()
    thread.join(seconds)
    why = outcome[0] if outcome else f"none found in {seconds:.0f} s"
    if why:
        raise OfflineCheckError(f"no Application Default Credentials ({why}); GCS and Dataflow "
                                f"need them: gcloud auth application-default login, or "
                                f"GOOGLE_APPLICATION_CREDENTIALS=key.json")


def cloud_error(error: BaseException) -> OfflineCheckError | None:
    """One line for a Google Cloud client error that ended a run (no credentials, requests
    that kept failing), or None for any other error."""
    module = type(error).__module__ or ""
    if not module.startswith(("google.", "googleapiclient", "apitools")):
        return None
    text = (str(error).strip().splitlines() or [""])[0][:300]
    host, port, _ = storage_endpoint()
    return OfflineCheckError(f"Google Cloud request failed: {type(error).__name__}: {text} "
                             f"({host}:{port}, dataflow.googleapis.com; {ADC})")


def validation_error(error: BaseException) -> OfflineCheckError | None:
    """Beam's refusal of the pipeline options ("Pipeline has validations errors: ..."), its
    reasons on one line, or None for any other error."""
    text = str(error)
    if not isinstance(error, ValueError) or "validations errors" not in text:
        return None
    reasons = [r.strip() for r in text.split("\n")[1:] if r.strip()]
    return OfflineCheckError("Beam refused the options: " + "; ".join(reasons))


# ---- a dry run's plan ------------------------------------------------------------------------

def dry_run_plan(inputs: list[str], lang: str | None) -> tuple[list[Split], dict[str, SiteInfo]]:
    """One whole-file split per input as given (a glob stays one input), and its site info from
    --lang or the file name ("dewiki-..." -> de; else en): a dry run reads no input."""
    splits = [Split(path) for path in dict.fromkeys(inputs)]
    return splits, {s.path: SiteInfo(lang=lang or lang_from_name(s.path)) for s in splits}


def lang_from_name(path: str) -> str:
    name = os.path.basename(str(path).rstrip("/"))
    match = re.match(r"([a-z][a-z_]*?)wiki-", name)
    return match.group(1).replace("_", "-") if match else "en"


__all__ = ["OfflineCheckError", "TESTED_RUNNERS", "check_runner", "check_names",
           "check_reachable", "check_storage", "check_dataflow_reachable", "check_credentials",
           "cloud_error", "validation_error", "dry_run_plan"]
