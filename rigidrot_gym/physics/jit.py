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

Compiling takes seconds to a minute on first use: the first time numba compiles (not
when it loads from the cache) a kernel of this package in a process, one line,
:data:`COMPILE_NOTICE`, goes to stderr.
"""

from __future__ import annotations

import functools
import hashlib
import sys
from pathlib import Path

import numba
import numpy as np
from numba.core import caching, event
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


def select(condition, if_true, if_false):
    """Element-wise ``if_true if condition else if_false`` (``np.where`` for arrays)."""
    return np.where(condition, if_true, if_false)


def any_true(condition) -> bool:
    """True when ``condition`` holds for at least one element."""
    return bool(np.any(condition))


def all_true(condition) -> bool:
    """True when ``condition`` holds for every element."""
    return bool(np.all(condition))


def bodies(n: int):
    """The index that addresses a batch of ``n`` bodies: in numpy mode one slice over
    all of them at once; compiled, ``range(n)``, one body at a time."""
    return (slice(None),)


@overload(bodies)
def _bodies_compiled(n):
    def impl(n):
        return range(n)

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
