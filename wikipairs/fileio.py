"""Files on local disks and on any Beam file system (gs://..., ...), behind a few operations.

Local paths go to `open`/`os`/`shutil` exactly as before (same bytes, same speed: os.replace,
seek, temporary files); a path with a scheme (`gs://bucket/...`) goes to
`apache_beam.io.filesystems.FileSystems`, imported only then, always with
`CompressionTypes.UNCOMPRESSED` (wikipairs recognizes compression itself, by magic bytes).
Remote failures come out as OSError (FileNotFoundError where the object or bucket is missing),
so callers handle both kinds of path alike. Object stores have no folders: `makedirs` does
nothing there and `rmtree` deletes every object under the prefix; `rename` is copy + delete.
"""
from __future__ import annotations

import contextlib
import errno
import glob as _glob
import hashlib
import io
import os
import re
import shutil

_SCHEME = re.compile(r"^[a-zA-Z][-a-zA-Z0-9+.]*://")
TMP_SUFFIX = ".tmp"
_BUFFER = 1 << 20


def is_url(path: str) -> bool:
    """Whether `path` names a Beam file system URL (gs://...) rather than a local path."""
    return bool(_SCHEME.match(str(path)))


def _filesystems():
    from apache_beam.io.filesystems import FileSystems
    return FileSystems


def _uncompressed():
    from apache_beam.io.filesystem import CompressionTypes
    return CompressionTypes.UNCOMPRESSED


def _not_found(error: BaseException) -> bool:
    if getattr(error, "code", None) == 404 or type(error).__name__ == "NotFound":
        return True
    nested = getattr(error, "exception_details", None) or {}  # BeamIOError: {path: error}
    if any(_not_found(e) for e in nested.values() if isinstance(e, BaseException)):
        return True
    return " 404" in str(error) or "NotFound(" in str(error)


@contextlib.contextmanager
def _remote(path: str):
    """Any error of a remote operation on `path` as an OSError with a short message."""
    try:
        yield
    except OSError:
        raise
    except Exception as e:  # google.api_core, BeamIOError, requests, ...
        if _not_found(e):
            raise FileNotFoundError(errno.ENOENT, "no such file or bucket", path) from None
        detail = (str(e).strip().splitlines() or [type(e).__name__])[0][:300]
        raise OSError(errno.EIO, f"{type(e).__name__}: {detail}", path) from None


class _RemoteReader(io.RawIOBase):
    """A Beam file system read channel as a raw stream (errors as OSError)."""

    def __init__(self, path: str):
        self.path = path
        with _remote(path):
            self._f = _filesystems().open(path, compression_type=_uncompressed())

    def readable(self):
        return True

    def seekable(self):
        return True

    def readinto(self, buffer):
        with _remote(self.path):
            data = self._f.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)

    def seek(self, offset, whence=io.SEEK_SET):
        with _remote(self.path):
            return self._f.seek(offset, whence)

    def tell(self):
        return self._f.tell()

    def close(self):
        if not self.closed:
            with _remote(self.path):
                self._f.close()
        super().close()


class _RemoteWriter(io.RawIOBase):
    """A Beam file system write channel (the object appears when it is closed)."""

    def __init__(self, path: str):
        self.path, self._size = path, 0
        with _remote(path):
            self._f = _filesystems().create(path, compression_type=_uncompressed())

    def writable(self):
        return True

    def write(self, data):
        with _remote(self.path):
            self._f.write(data)
        n = memoryview(data).nbytes
        self._size += n
        return n

    def tell(self):
        return self._size

    def close(self):
        if not self.closed:
            with _remote(self.path):
                self._f.close()
        super().close()


def open_read(path: str):
    """A binary, seekable, buffered (peek) stream of the file."""
    if not is_url(path):
        return open(path, "rb")
    return io.BufferedReader(_RemoteReader(path), _BUFFER)


def create(path: str):
    """A binary stream writing the file (replacing it); on a remote file system the file
    appears whole when the stream is closed."""
    if not is_url(path):
        return open(path, "wb")
    return io.BufferedWriter(_RemoteWriter(path), _BUFFER)


def exists(path: str) -> bool:
    if not is_url(path):
        return os.path.exists(path)
    with _remote(path):
        return _filesystems().exists(path)


def isdir(path: str) -> bool:
    """A local folder (remote URLs name objects, never folders, here)."""
    return not is_url(path) and os.path.isdir(path)


def size(path: str) -> int:
    if not is_url(path):
        return os.path.getsize(path)
    with _remote(path):
        return _filesystems().get_filesystem(path).size(path)


def glob(pattern: str) -> list[str]:
    """Files matching a glob pattern, sorted ([] for a missing folder or bucket)."""
    if not is_url(pattern):
        return sorted(_glob.glob(pattern))
    try:
        with _remote(pattern):
            result = _filesystems().match([pattern])[0]
    except FileNotFoundError:
        return []
    return sorted(m.path for m in result.metadata_list)


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
    with _remote(source):
        _filesystems().rename([source], [destination])


def remove(path: str) -> None:
    if not is_url(path):
        os.remove(path)
        return
    with _remote(path):
        _filesystems().delete([path])


def rmtree(folder: str) -> None:
    """Delete a folder and everything under it, if it is there."""
    if not is_url(folder):
        if os.path.isdir(folder):
            shutil.rmtree(folder)
        return
    with contextlib.suppress(FileNotFoundError), _remote(folder):
        _filesystems().delete([join(folder, "")])


def sha256(path: str, chunk: int = _BUFFER) -> str:
    """The file's sha256, read in chunks (memory stays flat for any size)."""
    digest = hashlib.sha256()
    with open_read(path) as f:
        while block := f.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def arrow_input(path: str):
    """What pyarrow should read a file from: a local path itself (Arrow's own I/O, as before), or
    a URL's bytes in an Arrow buffer (the whole file in memory). Never a Python file object:
    pq.read_table on one (open() or a gs:// stream alike) aborted the interpreter at exit in
    ~1 run of 6 here ("terminate called without an active exception"; apache/arrow#34314,
    #50482)."""
    if not is_url(path):
        return path
    import pyarrow as pa
    with open_read(path) as f:
        return pa.BufferReader(f.read())


def read_text(path: str) -> str:
    with open_read(path) as f:
        return f.read().decode("utf-8")


# Every file wikipairs writes appears whole or not at all: it is written under a temporary name
# beside its final one and renamed when complete. These two are the only ways to do that.

def write_atomic(path: str, data: bytes) -> None:
    """Write `data` under a temporary name, then rename it to `path`: `path` is never partial."""
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
