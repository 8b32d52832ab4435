"""Where TensorFlow's, absl's, XLA's and CUDA's own log lines go (`native_logs`): into a log file
of the run (OUTPUT/native.log), or nowhere where a command has no run folder, unless --verbose.

They are written by C++ code straight to file descriptor 2 ("I0000 ... cudart_stub.cc:31] Could
not find cuda drivers", "E0000 ... failed call to cuInit", oneDNN and CPU-feature notices), so
the descriptor itself is pointed at the file while the command runs, and Python's sys.stderr (the
command's progress, warnings and one-line errors) at a copy of the terminal's. Their Python
loggers (tensorflow, absl, jax, keras) and Python warnings go to the same file. Importing this
module imports neither TensorFlow nor Keras: set it up before they are imported, as
TF_CPP_MIN_LOG_LEVEL is read when TensorFlow loads."""
from __future__ import annotations

import contextlib
import io
import logging
import os
import sys

LOGGERS = ("tensorflow", "absl", "jax", "keras", "h5py")


@contextlib.contextmanager
def native_logs(log_path: str | None, verbose: bool = False):
    """While the block runs: native log lines to `log_path` (appended), or to the null device
    when it is None; everything as before with `verbose`."""
    if verbose:
        yield
        return
    if log_path is None:  # nothing to keep them in: TensorFlow need not even format them
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    else:
        os.makedirs(os.path.dirname(os.path.abspath(log_path)), exist_ok=True)
    with _fd2_to(log_path or os.devnull) as stream, _python_logs_to(stream):
        yield


@contextlib.contextmanager
def _fd2_to(path: str):
    """File descriptor 2 on `path`, sys.stderr (when it is the process's) on the old fd 2;
    yields a text stream on `path` for the Python-side logs."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no descriptor 2 (a detached process): nothing reaches a terminal anyway
        with open(path, "a", encoding="utf-8") as log:
            yield log
        return
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(target, 2)
    os.close(target)
    own_stderr = sys.stderr
    if _is_fd2(sys.stderr):
        sys.stderr = io.TextIOWrapper(os.fdopen(os.dup(saved), "wb", buffering=0),
                                      encoding=sys.stderr.encoding or "utf-8",
                                      errors="backslashreplace", line_buffering=True,
                                      write_through=True)
    log = open(path, "a", encoding="utf-8", buffering=1)
    try:
        yield log
    finally:
        log.close()
        if sys.stderr is not own_stderr:
            with contextlib.suppress(Exception):
                sys.stderr.flush()
                sys.stderr.close()
            sys.stderr = own_stderr
        os.dup2(saved, 2)
        os.close(saved)


def _is_fd2(stream) -> bool:
    try:
        return stream.fileno() == 2
    except (AttributeError, OSError, ValueError):  # click's CliRunner, pytest's capture
        return False


@contextlib.contextmanager
def _python_logs_to(stream):
    """The Python loggers of the native libraries, and Python warnings, into `stream`."""
    handler = logging.StreamHandler(stream)
    handler.setFormatter(logging.Formatter("%(levelname)s:%(name)s:%(message)s"))
    saved = []
    for name in LOGGERS + ("py.warnings",):
        logger = logging.getLogger(name)
        saved.append((logger, logger.handlers[:], logger.propagate))
        logger.handlers[:] = [handler]
        logger.propagate = False
    logging.captureWarnings(True)
    try:
        yield
    finally:
        logging.captureWarnings(False)
        for logger, handlers, propagate in saved:
            logger.handlers[:] = handlers
            logger.propagate = propagate
