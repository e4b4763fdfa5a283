"""What compiled libraries print straight to the standard streams, kept off standard output.

A C library prints to file descriptors 1 and 2 directly, past ``sys.stdout`` and
``sys.stderr``: ``contextlib.redirect_stdout`` does not see it, and it lands in the middle
of a user's piped output or across a progress bar. PyBullet writes ``pybullet build time:
<date>`` to stderr when it is first imported (to stdout in its releases before 2021), and
its GUI client writes its threads' start and end (``startThreads creating 1 threads.``,
``argv[0] = ...``) to stdout when it connects and disconnects; two lines its window's
thread prints later (``ven = ...``) are out of reach.

:func:`c_output_to_stderr` runs such a call with both descriptors pointed at a scratch file,
then writes what was printed to stderr, less the lines a user has no use for;
:func:`import_quietly` imports a module that way, its banner dropped.

Only the standard library: the engines and the render layer both use it, and this is the
layer below them.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from types import ModuleType

# The line each library prints on its first import, by module: dropped.
BANNERS = {"pybullet": "pybullet build time:"}

_STANDARD = (1, 2)  # stdout, stderr
# The descriptors are the process's: a capture started in another thread during this one
# would restore them to this one's scratch file. Re-entrant, as a capture nested in one
# thread restores them in order.
_lock = threading.RLock()
# C's stdio buffers a stream fully while it points at a file: flushed before a descriptor
# is restored, or a library's printf would reach the real stdout later. Windows has no
# process-wide C library to flush; each extension's runtime keeps its own buffers.
_LIBC = ctypes.CDLL(None) if os.name == "posix" else None


def _flush() -> None:
    """Hand what the Python and C streams hold to the descriptors now."""
    for stream in (sys.stdout, sys.stderr):
        if stream is not None:
            # A closed or broken stream (at interpreter exit, a closed pipe) holds nothing to
            # hand over, and this capture must not fail the call it wraps for it.
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
    if _LIBC is not None:
        _LIBC.fflush(None)


@contextlib.contextmanager
def c_output_to_stderr(drop: tuple[str, ...] = ()) -> Iterator[None]:
    """Run the body with what it prints to descriptors 1 and 2 held back, and write it to
    stderr when the body ends (raised or not), less the lines that start with one of ``drop``.

    Output of other threads during the body is held back with it: meant for short calls
    into a library (an import, a connection), not for long runs.
    """
    try:
        scratch = tempfile.TemporaryFile()
    except OSError:  # no writable temp folder: better printed than the call failing
        yield
        return
    with _lock, scratch:
        _flush()
        saved: dict[int, int] = {}
        try:
            for fd in _STANDARD:
                try:
                    saved[fd] = os.dup(fd)
                except OSError:
                    continue  # not open (a daemon): nothing printed there to keep clean
                os.dup2(scratch.fileno(), fd)
            yield
        finally:
            _flush()
            for fd, copy in saved.items():
                os.dup2(copy, fd)
                os.close(copy)
            scratch.seek(0)
            drop_bytes = tuple(prefix.encode() for prefix in drop)
            kept = b"".join(line for line in scratch if not line.startswith(drop_bytes))
            if kept and 2 in saved:
                with open(2, "wb", closefd=False) as stderr:
                    stderr.write(kept)


def import_quietly(name: str) -> ModuleType:
    """``import name``, its banner (:data:`BANNERS`) dropped and anything else it prints from
    C sent to stderr. Once imported, a module is returned as is: it prints nothing again.

    Raises:
        ImportError: as ``import name`` does (what the import printed written to stderr).
    """
    if name in sys.modules:
        return importlib.import_module(name)
    banner = BANNERS.get(name)
    with c_output_to_stderr(drop=(banner,) if banner else ()):
        return importlib.import_module(name)
