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
``EOFError`` ...) is recompiled and rewritten, with a warning naming its folder, and a
cache that cannot be written is skipped.

Compiling takes seconds to a minute on first use: the first time numba compiles (not
when it loads from the cache) a kernel of this package in a process, one line,
:data:`COMPILE_NOTICE`, goes to stderr.

The cache, the notice, the raised LLVM inline threshold that lets the loops over bodies
vectorise and the full vector width they take use numba's and llvmlite's internals, all in
:mod:`rigidrot_gym.physics.plumbing.numba_compat`:
where a release lacks one, that feature alone is left out with a
:class:`~rigidrot_gym.physics.plumbing.numba_compat.NumbaCompatWarning`, and the kernels compile and
cache as numba's own ``cache=True`` has them.
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

import numba
import numpy as np
from numba.extending import overload

from rigidrot_gym.physics.plumbing import numba_compat

# Every compiled function of the package goes without numba's C wrapper (numba_compat.unwrapped).
_UNWRAPPED = numba_compat.unwrapped()


def jitable(function: Callable) -> Callable:
    """``function``, unchanged, registered so that compiled code can call it: what numba's
    ``register_jitable`` does, without the C wrapper nothing here calls
    (:func:`~rigidrot_gym.physics.plumbing.numba_compat.unwrapped`; Reorient-v0's kernel compiles in
    6.8 s instead of 7.8 on a 2-core AMD EPYC).

    Numba compiles it on its own and calls it; LLVM inlines it into the kernel (at the
    inline threshold the package raises), so a method's step vectorises in the loop over
    bodies. Numba's own inlining (``inline="always"``) copies and retypes a function at
    every call and gained nothing: on the methods' steps, the same kernel compiled in 9.6 s
    instead of 8.3 and stepped no faster."""
    return _register(function, inline="never")


def inlined(function: Callable) -> Callable:
    """``function``, unchanged, registered as :func:`jitable` does, but copied into each
    compiled caller by numba (``inline="always"``) rather than called: for a loop over
    bodies that one caller runs in place and another from one array into another. Called
    twice in one kernel, a function that large stays out of line at the package's inline
    threshold, where its arrays are arguments that may overlap: LLVM then compiles the loop
    with runtime overlap checks, which fail in place, and runs it without vectors (a vector
    env's sub-steps after its first: Detumble-v0 stepped 4× slower)."""
    return _register(function, inline="always")


def _register(function: Callable, inline: str) -> Callable:
    """``function``, registered as its own compiled implementation, without a C wrapper,
    with numba's ``inline`` option (``"never"``, numba's default, or ``"always"``)."""

    @overload(function, inline=inline, jit_options=_UNWRAPPED, strict=False)
    def _compiled(*args, **kwargs):
        return function

    return function


def kernel(function: Callable, parallel: bool = False, allocates: bool = True) -> Callable:
    """``function`` compiled as every kernel of the package is: cached on disk, with numpy's
    error model (a division by zero gives inf or NaN, which the kernels' checks catch,
    rather than an exception), optionally with ``parallel`` loops (``prange``).

    A kernel that creates no array (``allocates`` false: no ``np.empty``, no reduction over
    ``parallel`` loops, no array returned but an argument; numba refuses to compile one
    that does) compiles without numba's reference-counted memory
    (:func:`~rigidrot_gym.physics.plumbing.numba_compat.uncounted`): numba then neither wraps each
    array argument in a counted record as the kernel is called nor counts references
    wherever the kernel passes an array on. On a 2-core AMD EPYC that took a call of the
    single env's ``Reorient-v0`` kernel from 1.88 to 0.85 µs (about 200 counting
    operations and 20 records allocated and freed per call); the arrays are the caller's,
    alive for the call.

    Multiplies and adds are contracted into fused multiply-adds (``fastmath={"contract"}``,
    nothing else of fast math: no reassociation, NaN and infinity kept): one rounding where
    there were two, so a result differs from the same source run as numpy (which rounds
    each operation) in its last bits. On a 2-core AMD EPYC (znver5) it took the vector env's
    RK4 sub-step from 3.6-3.7 to 3.2-3.3 ns per body.

    Like the functions it calls (:func:`jitable`), it gets no C wrapper
    (:func:`~rigidrot_gym.physics.plumbing.numba_compat.unwrapped`): Python calls it through numba's
    dispatcher or :class:`DirectCalls`."""
    options = {**_UNWRAPPED, **({} if allocates else numba_compat.uncounted())}
    return numba.njit(cache=True, error_model="numpy", fastmath={"contract"}, parallel=parallel, **options)(
        function
    )


class DirectCalls:
    """Calls of the compiled kernel ``dispatcher`` past numba's dispatch, by a key of their
    arguments' types.

    Numba's dispatcher types every argument of every call (every array inside the tuple
    arguments too) to pick the compiled overload: about 1 µs of an env step's 6 for the
    single env's call of 22 arrays (2-core AMD EPYC). A caller that knows what can change
    its arguments' types names it by ``key``: the first call with a key goes through the
    dispatcher (compiling if need be), and later ones call the overload it picked
    (:func:`~rigidrot_gym.physics.plumbing.numba_compat.overload_of`). That overload reads each
    argument as the type it was compiled for, unchecked: the key must determine every
    argument's numba type (each array's dtype, dimensions, layout, writeability and
    alignment, each number's type), or a call would read memory as the wrong type."""

    __slots__ = ("_key", "_last", "_overloads", "dispatcher")

    def __init__(self, dispatcher: Callable):
        self.dispatcher = dispatcher
        self._overloads: dict[Hashable, Callable] = {}
        self._key: Hashable = None  # the last call's key and overload: a comparison, no hashing
        self._last: Callable = dispatcher

    def __call__(self, key: Hashable, args: tuple) -> Any:
        """``dispatcher(*args)``, whose argument types ``key`` determines."""
        if key == self._key:
            return self._last(*args)
        overload = self._overloads.get(key)
        if overload is None:
            result = self.dispatcher(*args)
            self._overloads[key] = numba_compat.overload_of(self.dispatcher, args)
            return result
        self._key, self._last = key, overload
        return overload(*args)


# The whole rigidrot_gym package (rigidrot_gym/physics/plumbing/jit.py), not only this layer:
# kernels call across layers.
_PACKAGE = Path(__file__).resolve().parents[2]


# Files outside the package whose compiled functions its kernels call (stamp_also).
_ALSO: list[Path] = []


@functools.cache
def source_digest() -> bytes:
    """SHA-256 of every source file of the package, of the files :func:`stamp_also` added
    and of the numba version."""
    digest = hashlib.sha256(numba.__version__.encode())
    for path in sorted(_PACKAGE.rglob("*.py")):
        digest.update(path.relative_to(_PACKAGE).as_posix().encode())
        digest.update(path.read_bytes())
    for path in _ALSO:
        digest.update(path.as_posix().encode())
        digest.update(path.read_bytes())
    return digest.digest()


def stamp_also(path: str | Path) -> None:
    """Stamp the package's kernels with the source file ``path`` too: a module of another
    package whose compiled functions they call (a component registered from outside), so
    that an edit to it recompiles them rather than leave a stale kernel."""
    _ALSO.append(Path(path).resolve())
    source_digest.cache_clear()


class CacheWarning(UserWarning):
    """A compiled kernel of this package could not use its on-disk cache."""


# The time: an env's first reset and step took 5-16 s on a 2-core AMD EPYC (znver5), a
# method's first propagate 1-4 s (the exact solution the longest).
COMPILE_NOTICE = (
    "rigidrot_gym: compiling numerical kernels, up to about 20 s on first use (later runs load them from "
    "the cache; `rigidrot compile` does it ahead of time)"
)

# The cache, the notice, the inlining that vectorises the loops over bodies and their full
# vector width rest on numba's and llvmlite's internals: each is left out, with a warning,
# where they are missing.
numba_compat.activate(
    numba_compat.Package(
        root=_PACKAGE, stamp=source_digest, cache_warning=CacheWarning, notice=COMPILE_NOTICE
    )
)


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
