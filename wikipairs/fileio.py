"""Files on local disks and on Google Cloud Storage (gs://...), behind a few operations.

Local paths go to `open`/`os`/`shutil` exactly as before (same bytes, same speed: os.replace,
seek, temporary files). gs:// URLs go to `pyarrow.fs.GcsFileSystem` (Arrow's client, on
google-cloud-cpp). Why this library: pyarrow is already a dependency of the core and its wheels
carry GCS, so gs:// needs no other package and the core no Beam. Against the tests' emulator the
first gs:// operation of a process took ~0.2 s (Beam's `FileSystems`, used before: ~0.9 s, most
of it importing Beam); fsspec+gcsfs would add three packages, and gcsfs 2026 first probes each
bucket over gRPC (60 s against the emulator unless switched off). Streams are opened with
`compression=None`, not Arrow's "detect" by extension: wikipairs recognizes compression itself.

Credentials are Application Default Credentials; STORAGE_EMULATOR_HOST (which google-cloud-storage
and Beam honour too) sends gs:// to an emulator, anonymously. A failing request is retried for a
minute, not google-cloud-cpp's 15: that is also how long a machine with no credentials at all
waits for its error.

Remote failures come out as OSError (FileNotFoundError where the object or bucket is missing)
with a short message, in the middle of a transfer too (_Stream), so callers handle both kinds of
path alike. Object stores have no folders: `makedirs` does nothing there and `rmtree` deletes
every object under the prefix; `rename` is a copy and a delete (see write_atomic for the writes
that need none).
"""
from __future__ import annotations

import contextlib
import datetime
import errno
import fnmatch
import glob as _glob
import hashlib
import io
import os
import re
import shutil
from urllib.parse import urlsplit

_SCHEME = re.compile(r"^[a-zA-Z][-a-zA-Z0-9+.]*://")
_GS = "gs://"
_GLOB_MAGIC = re.compile(r"[*?[]")
_GCS_STATUS = re.compile(r"google::cloud::Status\((\w+): (?:[^,]*, with a last message of )?"
                         r"(.*?)(?: error_info=|$)")
_RETRY = datetime.timedelta(seconds=60)
TMP_SUFFIX = ".tmp"
_BUFFER = 1 << 20
_gcs_by_process: dict[int, object] = {}


def is_url(path: str) -> bool:
    """Whether `path` is a URL (gs://...) rather than a local path."""
    return bool(_SCHEME.match(str(path)))


def _gcs():
    """This process's GcsFileSystem (a client made before a fork stays with the parent)."""
    fs = _gcs_by_process.get(os.getpid())
    if fs is None:
        try:
            from pyarrow.fs import GcsFileSystem
        except ImportError:
            raise OSError(errno.ENOTSUP, "this pyarrow has no GCS support (pip install pyarrow "
                                         "from PyPI)") from None
        fs = _gcs_by_process[os.getpid()] = GcsFileSystem(**_gcs_options())
    return fs


def _gcs_options() -> dict:
    emulator = os.environ.get("STORAGE_EMULATOR_HOST")
    if not emulator:
        return {"retry_time_limit": _RETRY}
    url = urlsplit(emulator if "://" in emulator else "http://" + emulator)
    return {"retry_time_limit": _RETRY, "anonymous": True, "scheme": url.scheme,
            "endpoint_override": url.netloc}


def _short(error: BaseException) -> str:
    """The gist of an Arrow / google-cloud-cpp error, e.g. "PERMISSION_DENIED: ... denied"."""
    text = (str(error).strip().splitlines() or [type(error).__name__])[0]
    status = _GCS_STATUS.search(text)
    if status:
        text = f"{status.group(1)}: {status.group(2).split('. ')[0]}"
    return text[:300]


@contextlib.contextmanager
def _errors(path: str):
    """Any error of a remote operation on `path` as an OSError with a short message."""
    try:
        yield
    except FileNotFoundError:
        raise FileNotFoundError(errno.ENOENT, "no such file or bucket", path) from None
    except (OSError, ValueError) as e:  # Arrow: OSError, ArrowInvalid (a ValueError)
        raise OSError(getattr(e, "errno", None) or errno.EIO, _short(e), path) from None


@contextlib.contextmanager
def _remote(path: str):
    """Yields (file system, its path for `path`), errors translated by _errors."""
    if not str(path).startswith(_GS):
        raise OSError(errno.EPROTONOSUPPORT, "only local paths and gs:// URLs are supported", path)
    fs = _gcs()
    with _errors(path):
        yield fs, path[len(_GS):]


class _Stream(io.RawIOBase):
    """Arrow's stream of an object as the raw stream under io's buffers (peek, readline...),
    its errors in the middle of a transfer as short as any other remote operation's."""

    def __init__(self, path: str, native):
        self.path, self._native = path, native

    def readable(self):
        return self._native.readable()

    def writable(self):
        return self._native.writable()

    def seekable(self):
        return self._native.seekable()

    def readinto(self, buffer):
        with _errors(self.path):
            return self._native.readinto(buffer)

    def write(self, data):
        with _errors(self.path):
            return self._native.write(data)

    def seek(self, offset, whence=io.SEEK_SET):
        with _errors(self.path):
            return self._native.seek(offset, whence)

    def tell(self):
        return self._native.tell()

    def close(self):
        try:
            if not self.closed:
                with _errors(self.path):
                    self._native.close()  # a GCS upload is finished here
        finally:
            super().close()


def _is_object(path: str) -> bool:
    from pyarrow.fs import FileType
    with _remote(path) as (fs, key):
        return fs.get_file_info(key).type == FileType.File


def open_read(path: str):
    """A binary, seekable, buffered (peek) stream of the file."""
    if not is_url(path):
        return open(path, "rb")
    with _remote(path) as (fs, key):
        return io.BufferedReader(_Stream(path, fs.open_input_file(key)), _BUFFER)


def create(path: str):
    """A binary stream writing the file (replacing it); on GCS the object appears, whole, when
    the stream is closed. An abandoned GCS stream is finished too, by its destructor (seen on
    the emulator): streamed output keeps a temporary name and a rename (ShardWriter), which
    write_atomic does without."""
    if not is_url(path):
        return open(path, "wb")
    with _remote(path) as (fs, key):
        return io.BufferedWriter(_Stream(path, fs.open_output_stream(key, compression=None)),
                                 _BUFFER)


def exists(path: str) -> bool:
    return os.path.exists(path) if not is_url(path) else _is_object(path)


def isdir(path: str) -> bool:
    """A local folder (remote URLs name objects, never folders, here)."""
    return not is_url(path) and os.path.isdir(path)


def size(path: str) -> int:
    if not is_url(path):
        return os.path.getsize(path)
    with _remote(path) as (fs, key):
        info = fs.get_file_info(key)
    if info.size is None:  # no such object (or only a prefix of some)
        raise FileNotFoundError(errno.ENOENT, "no such file or bucket", path)
    return info.size


def glob(pattern: str) -> list[str]:
    """Files matching a glob pattern, sorted ([] for a missing folder or bucket). On GCS as
    locally, `*`, `?` and `[...]` stay within one path segment."""
    if not is_url(pattern):
        return sorted(_glob.glob(pattern))
    magic = _GLOB_MAGIC.search(pattern)
    if magic is None:
        return [pattern] if _is_object(pattern) else []
    folder = pattern[:pattern.rfind("/", 0, magic.start())]
    from pyarrow.fs import FileSelector, FileType
    deep = "/" in pattern[magic.start():]  # a wildcard in a folder's name: list below it too
    with _remote(folder) as (fs, key):
        infos = fs.get_file_info(FileSelector(key, recursive=deep, allow_not_found=True))
    urls = (_GS + info.path for info in infos if info.type == FileType.File)
    return sorted(url for url in urls if _matches(pattern, url))


def _matches(pattern: str, path: str) -> bool:
    parts, names = pattern.split("/"), path.split("/")
    return len(parts) == len(names) and all(map(fnmatch.fnmatchcase, names, parts))


def listdir(folder: str) -> list[str]:
    """Names of the files directly in `folder`, sorted ([] if there is no such folder)."""
    if not is_url(folder):
        return sorted(os.listdir(folder)) if os.path.isdir(folder) else []
    prefix = join(folder, "")
    return [p[len(prefix):] for p in glob(prefix + "*")]


def join(base: str, *parts: str) -> str:
    if not is_url(base):
        return os.path.join(base, *parts)
    return "/".join([base.rstrip("/")] + [p.strip("/") for p in parts])


def relpath(path: str, folder: str) -> str:
    if not is_url(path):
        return os.path.relpath(path, folder)
    prefix = join(folder, "")
    if not path.startswith(prefix):
        raise ValueError(f"{path} is not under {folder}")
    return path[len(prefix):]


def abspath(path: str) -> str:
    return path if is_url(path) else os.path.abspath(path)


def makedirs(folder: str) -> None:
    """Create a local folder and its parents (nothing to do on an object store)."""
    if not is_url(folder):
        os.makedirs(folder, exist_ok=True)


def check_writable(folder: str) -> None:
    """Create a local folder; for a URL, write and delete an empty object there, so that a
    missing bucket or a lack of permission is an OSError now rather than in the workers."""
    if not is_url(folder):
        os.makedirs(folder, exist_ok=True)
        return
    probe = join(folder, ".wikipairs-write-check")
    create(probe).close()
    remove(probe)


def rename(source: str, destination: str) -> None:
    """Replace `destination` by `source` (os.replace locally; copy + delete on GCS)."""
    if not is_url(source):
        os.replace(source, destination)
        return
    with _remote(source) as (fs, key):
        fs.move(key, destination[len(_GS):])


def remove(path: str) -> None:
    if not is_url(path):
        os.remove(path)
        return
    with _remote(path) as (fs, key):
        fs.delete_file(key)


def rmtree(folder: str) -> None:
    """Delete a folder and everything under it, if it is there."""
    if not is_url(folder):
        if os.path.isdir(folder):
            shutil.rmtree(folder)
        return
    with contextlib.suppress(FileNotFoundError), _remote(folder) as (fs, key):
        fs.delete_dir_contents(key.rstrip("/"), missing_dir_ok=True)


def sha256(path: str, chunk: int = _BUFFER) -> str:
    """The file's sha256, read in chunks (memory stays flat for any size)."""
    digest = hashlib.sha256()
    with open_read(path) as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def arrow_input(path: str):
    """What pyarrow should read a file from: a local path itself, or Arrow's own reader of a
    remote object (ranged reads: a Parquet footer costs a footer). Never a Python file object:
    pq.read_table on one (open() or a buffered stream alike) aborted the interpreter at exit in
    ~1 run of 6 here ("terminate called without an active exception"; apache/arrow#34314,
    #50482)."""
    if not is_url(path):
        return path
    with _remote(path) as (fs, key):
        return fs.open_input_file(key)


def read_text(path: str) -> str:
    with open_read(path) as f:
        return f.read().decode("utf-8")


# Every file wikipairs writes appears whole or not at all. Locally it is written under a
# temporary name beside its final one and renamed when complete; these two are the only ways.

def write_atomic(path: str, data: bytes) -> None:
    """Write `data` so that `path` is never partial. Locally: a temporary name, then a rename.
    On GCS straight to `path`, with no copy and delete: an object becomes visible only when
    its upload is finished, the bytes are all in memory before it starts, and after a failed
    request google-cloud-cpp no longer finishes that upload (its stream is closed by the error)."""
    if is_url(path):
        with _remote(path) as (fs, key):
            stream = fs.open_output_stream(key, compression=None)
            stream.write(data)
            stream.close()
        return
    makedirs(os.path.dirname(path) or ".")
    tmp = path + TMP_SUFFIX
    with create(tmp) as f:
        f.write(data)
    rename(tmp, path)


@contextlib.contextmanager
def local_atomic(path: str, suffix: str = TMP_SUFFIX):
    """For a library that writes a local file by name (Parquet, matplotlib): yields the
    temporary name to write, renamed to `path` when the block ends; removed if it fails.
    `suffix` keeps an extension a library reads the format from (".tmp.png")."""
    tmp = path + suffix
    try:
        yield tmp
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise
    os.replace(tmp, path)


__all__ = ["is_url", "open_read", "create", "exists", "isdir", "size", "glob", "listdir", "join",
           "relpath", "abspath", "makedirs", "check_writable", "rename", "remove", "rmtree",
           "sha256", "arrow_input", "read_text", "write_atomic", "local_atomic", "TMP_SUFFIX"]
