"""Write a numerical function once, run it as numpy code or as compiled numba code.

Every integrator, torque model and quaternion primitive in rigidrot_gym is written
*component-wise*: a quaternion is a tuple ``(w, x, y, z)`` and a 3-vector a tuple
``(x, y, z)`` whose entries are either floats or equally shaped numpy arrays.
Decorated with :func:`jitable` (numba's ``register_jitable``), such a function

* runs as plain Python on tuples of ``(N,)`` arrays: vectorised over a batch, so a
  user's Python torque callable can be evaluated once per stage for all bodies; and
* compiles into the numba kernels, which call it on one body's scalar components.

Both paths execute the same source, so there is exactly one implementation of each
method. Branches on values must go through :func:`select`, :func:`any_true` or
:func:`all_true`, which mean the same thing for a scalar and for an array, and loops
over a batch through :func:`bodies`.

Compiled kernels are cached on disk (``@njit(cache=True)``). Numba stamps a cache with
the source of the kernel's own file only, so an edit to a function it calls (a torque
model, a quaternion primitive) would leave a stale kernel behind; kernels of this
package are therefore stamped with a digest of the whole package's source.

A cache must never stop the package from working. Where no cache directory is writable
(a read-only install, run by a user without a writable home or with a read-only
``NUMBA_CACHE_DIR``), numba refuses to decorate a ``cache=True`` function at all; this
package's kernels are then compiled in memory, with one :class:`CacheWarning`. A cache
file that cannot be read (truncated or corrupted: ``UnpicklingError``, ``ValueError``,
``EOFError`` ...) is recompiled and rewritten, with a warning naming it, and a cache that
cannot be written is skipped.

Compiling takes seconds to a minute on first use: the first time numba compiles (not
when it loads from the cache) a kernel of this package in a process, one line,
:data:`COMPILE_NOTICE`, goes to stderr.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import sys
import warnings
from pathlib import Path

import llvmlite.binding as llvm
import numba
import numpy as np
from numba.core import caching, dispatcher, event
from numba.extending import overload, register_jitable

jitable = register_jitable
# For the functions called once per body in a kernel's inner loop (a method's step, a
# torque model): inlined into the loop at numba-IR level. Numba compiles every other
# function separately and calls it, which costs a third of an RK4 step.
inlined = register_jitable(inline="always")

# The whole rigidrot_gym package, not only this layer: kernels call across layers.
_PACKAGE = Path(__file__).resolve().parents[1]


@functools.cache
def source_digest() -> bytes:
    """SHA-256 of every source file of the package and of the numba version."""
    digest = hashlib.sha256(numba.__version__.encode())
    for path in sorted(_PACKAGE.rglob("*.py")):
        digest.update(path.relative_to(_PACKAGE).as_posix().encode())
        digest.update(path.read_bytes())
    return digest.digest()


def _package_locator(base: type) -> type:
    """``base`` locator, restricted to this package and stamped with :func:`source_digest`."""

    class Locator(base):
        def get_source_stamp(self):
            return source_digest()

        @classmethod
        def from_function(cls, py_func, py_file):
            if not Path(py_file).resolve().is_relative_to(_PACKAGE):
                return None
            return super().from_function(py_func, py_file)

    Locator.__name__ = f"Package{base.__name__}"
    return Locator


# Numba tries the locators in order; these take this package's kernels, in the same
# order of preference (NUMBA_CACHE_DIR, __pycache__ beside the file, user cache).
caching.CacheImpl._locator_classes[:0] = [
    _package_locator(caching.UserProvidedCacheLocator),
    _package_locator(caching.InTreeCacheLocator),
    _package_locator(caching.UserWideCacheLocator),
]


class CacheWarning(UserWarning):
    """A compiled kernel of this package could not use its on-disk cache."""


_warned: set[str] = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        warnings.warn(message, CacheWarning, stacklevel=3)


class _TolerantIndex(caching.IndexDataCacheFile):
    """Numba's index and data files, where a file that cannot be read is a cache miss."""

    def _load_index(self):
        try:
            return super()._load_index()
        except Exception as err:  # whatever a damaged pickle raises: recompile, then rewrite
            _warn_once(
                self._index_path, f"unreadable numba cache index {self._index_path} ({err!r}); recompiling"
            )
            return {}

    def load(self, key):
        try:
            return super().load(key)
        except Exception as err:  # a damaged data file; the save after recompiling replaces it
            # Keyed apart from the index's warning: both can happen to one kernel.
            _warn_once(
                f"{self._index_path} data",
                f"unreadable numba cache data of {self._index_path} ({err!r}); recompiling",
            )
            return None


class _PackageCache(caching.FunctionCache):
    """Numba's cache of one kernel of this package, which never fails a compilation."""

    def __init__(self, py_func):
        super().__init__(py_func)
        self._cache_file = _TolerantIndex(
            self._cache_path, self._impl.filename_base, self._impl.locator.get_source_stamp()
        )

    def load_overload(self, sig, target_context):
        try:
            return super().load_overload(sig, target_context)
        except Exception as err:  # e.g. an entry that unpickles but cannot be rebuilt
            _warn_once(self._cache_path, f"unusable numba cache in {self._cache_path} ({err!r}); recompiling")
            return None

    def save_overload(self, sig, data):
        try:
            super().save_overload(sig, data)
        except OSError as err:  # the directory turned read-only, or the disk is full: run uncached
            _warn_once(self._cache_path, f"cannot write the numba cache in {self._cache_path} ({err!r})")


def _in_package(py_func) -> bool:
    try:
        return Path(inspect.getfile(py_func)).resolve().is_relative_to(_PACKAGE)
    except (TypeError, OSError):
        return False


_numba_enable_caching = dispatcher.Dispatcher.enable_caching


def _enable_caching(self) -> None:
    """``Dispatcher.enable_caching`` (what ``cache=True`` calls at decoration), for this
    package's kernels: the tolerant cache, or none where no location is writable."""
    if not _in_package(self.py_func):
        _numba_enable_caching(self)
        return
    try:
        self._cache = _PackageCache(self.py_func)
    except RuntimeError as err:  # numba: "cannot cache function ...: no locator available"
        if "no locator" not in str(err):
            raise
        _warn_once(
            "no locator",
            "rigidrot_gym: no writable cache directory for its compiled kernels (NUMBA_CACHE_DIR, the "
            "package's __pycache__, the user cache directory); they are compiled in memory, in every "
            "process, on first use. Set NUMBA_CACHE_DIR to a writable directory to cache them.",
        )
        self._cache = caching.NullCache()


dispatcher.Dispatcher.enable_caching = _enable_caching

COMPILE_NOTICE = (
    "rigidrot_gym: compiling numerical kernels (first use only; later runs load them from the cache)"
)


class _CompileNotice(event.Listener):
    """Prints :data:`COMPILE_NOTICE` to stderr the first time numba compiles a function of
    this package in this process. Numba broadcasts ``numba:compile`` only on a cache miss,
    so loading cached kernels stays silent."""

    def __init__(self):
        self.shown = False

    def on_start(self, ev: event.Event) -> None:
        module = getattr(ev.data["dispatcher"].py_func, "__module__", None) or ""
        if not self.shown and module.split(".")[0] == _PACKAGE.name:
            self.shown = True
            print(COMPILE_NOTICE, file=sys.stderr, flush=True)

    def on_end(self, ev: event.Event) -> None:
        pass


event.register("numba:compile", _CompileNotice())

# LLVM options while numba compiles a kernel of this package, and their defaults (-O3) after:
# they are process-wide, and other code's compilation is left as it was. The inliner keeps a
# method's step (a few hundred instructions) out of line in the loop over bodies at its
# default threshold, and a loop with a call in it does not vectorise: inlined, RK4 runs four
# bodies per AVX2 instruction, 3-4× faster.
_OPTIONS = {"inline-threshold": (5000, 250)}  # 250: LLVM's threshold at -O3


def _set_options(which: int) -> None:
    for name, values in _OPTIONS.items():
        llvm.set_option("", f"-{name}={values[which]}")


class _InlineSteps(event.Listener):
    def __init__(self):
        self.depth = 0

    def on_start(self, ev: event.Event) -> None:
        module = getattr(ev.data["dispatcher"].py_func, "__module__", None) or ""
        if self.depth or module.split(".")[0] == _PACKAGE.name:
            if not self.depth:
                _set_options(0)
            self.depth += 1

    def on_end(self, ev: event.Event) -> None:
        if self.depth:
            self.depth -= 1
            if not self.depth:
                _set_options(1)


event.register("numba:compile", _InlineSteps())


def select(condition, if_true, if_false):
    """Element-wise ``if_true if condition else if_false`` (``np.where`` for arrays)."""
    return np.where(condition, if_true, if_false)


def any_true(condition) -> bool:
    """True when ``condition`` holds for at least one element."""
    return bool(np.any(condition))


def all_true(condition) -> bool:
    """True when ``condition`` holds for every element."""
    return bool(np.all(condition))


def bodies(lo: int, hi: int):
    """The index that addresses bodies ``lo`` … ``hi`` − 1 of a batch: in numpy mode one
    slice over all of them at once; compiled, ``range(lo, hi)``, one body at a time."""
    return (slice(lo, hi),)


@overload(bodies)
def _bodies_compiled(lo, hi):
    # Unsigned: numba wraps a negative signed index around, and that select on every access
    # keeps a loop from vectorising unless its start is the constant 0.
    def impl(lo, hi):
        return range(np.uint64(lo), np.uint64(hi))

    return impl


@overload(select)
def _select_scalar(condition, if_true, if_false):
    def impl(condition, if_true, if_false):
        return if_true if condition else if_false

    return impl


@overload(any_true)
def _any_true_scalar(condition):
    def impl(condition):
        return bool(condition)

    return impl


@overload(all_true)
def _all_true_scalar(condition):
    def impl(condition):
        return bool(condition)

    return impl
