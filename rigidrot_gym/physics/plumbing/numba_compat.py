"""Every use this package makes of numba's and llvmlite's private or undocumented internals.

Eight features of :mod:`rigidrot_gym.physics.plumbing.jit` rest on names that numba and llvmlite do
not promise to keep:

* distinct symbols (``numba.core.bytecode.FunctionIdentity._unique_ids``): numba names each
  compiled function by its qualified name and a per-process counter, so two processes that
  compile two closures of one factory (the pipeline's components for two scenarios, a
  method's kernel for two steps) in the same order give them the same symbol; loaded from
  the cache into one process, the linker keeps the first body for both, and the second
  kernel silently runs the first's code (numba issue 10486). Random 64-bit ids make every
  symbol distinct;
* the package's cache (``numba.core.caching``, ``Dispatcher.enable_caching``): kernels
  stamped with the whole package's source, a damaged cache file recompiled and rewritten,
  kernels compiled in memory where no cache location is writable, and one process at a
  time compiling a kernel that is not cached yet (a lock file beside its cache entry,
  named by numba's key of the entry, ``FunctionCache._index_key``): the others wait and
  load it (``fcntl``; on Windows each compiles its own);
* the compile notice (``numba.core.event``): one line on stderr when kernels compile;
* the inlining boost (``numba.core.event`` and ``llvmlite.binding.set_option``): LLVM's
  inline threshold and its limit on a vectorised loop's runtime overlap checks raised
  while a kernel of the package compiles, so that the loop over bodies has no call left
  in it and vectorises;
* the full vector width (``numba.core.cpu.CPUContext.post_lowering``, and
  ``llvmlite.ir.FunctionAttributes``, a set whose items are printed as they are): each
  function numba lowers while a kernel of the package compiles carries LLVM's
  ``"prefer-vector-width"="512"``, so that its loops use the CPU's widest vectors. LLVM's
  tuning for Intel CPUs with AVX-512 prefers 256 bits; the attribute overrides that for
  the function that carries it alone (clang's ``-mprefer-vector-width``), and a user's own
  numba code compiles as it did;
* direct calls (``Dispatcher.get_overload``): a kernel called through its compiled overload
  for known argument types, past the dispatcher's typing of every argument on every call
  (:class:`~rigidrot_gym.physics.plumbing.jit.DirectCalls`);
* uncounted kernels (``numba.core.cpu.CPUTargetOptions._nrt``): a kernel that allocates
  no array compiled without numba's reference-counted memory (NRT), so that its array
  arguments are neither wrapped in reference-counted records as it is called nor counted
  wherever it passes them on (:func:`~rigidrot_gym.physics.plumbing.jit.kernel`);
* no C wrappers (``numba.core.cpu.CPUTargetOptions.no_cfunc_wrapper``, an option numba's
  documentation does not list): the package's functions and kernels compiled without the
  C-ABI wrapper numba otherwise adds to each, for ``cfunc`` and first-class function
  calls, which the package makes none of. LLVM compiles the wrapper of every function a
  kernel calls, each taking its arguments flattened: hundreds for a component that reads
  a period's records.

A release that renames or drops one of these names must not break the package. Each
feature looks up every name it needs before it uses any of them; where one is missing,
that feature alone is left out, with one :class:`NumbaCompatWarning` naming what is
missing and what is lost, and the kernels compile, run and cache as numba's own
``cache=True`` has them. ``tests/test_numba_compat.py`` renames each name in turn.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import os
import secrets
import sys
import time
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

import llvmlite
import numba

try:
    import fcntl
except ImportError:  # Windows: no lock, each process compiles what it does not find cached
    fcntl = None

SYMBOLS = "symbols"
CACHE = "cache"
EVENTS = "events"
INLINING = "inlining"
DIRECT = "direct calls"
UNCOUNTED = "uncounted kernels"
UNWRAPPED = "no C wrappers"
WIDTH = "full vector width"

# LLVM's inline threshold while numba compiles a kernel of the package, and LLVM's own at
# -O3 after: the option is process-wide, and other code's compilation is left as it was. At
# LLVM's threshold the functions a method's step calls (a few hundred instructions) stay
# out of line in the loop over bodies, and a loop with a call in it does not vectorise:
# the vector env's RK4 integration took 98 ns per body-sub-step instead of 7, and its step
# 127 ns instead of 28 (4096 envs, an AMD EPYC with AVX-512).
INLINE_THRESHOLD = 5000
LLVM_INLINE_THRESHOLD = 250
# LLVM's limit on the runtime overlap checks a vectorised loop may start with, raised with
# the inline threshold and put back to LLVM's own after. Numba tells LLVM nothing of which
# arrays may overlap, and rows of an (8, N) array are N apart, a runtime distance: a loop
# over bodies that reads one array's rows and writes another's (an env's first sub-step,
# from the bodies' states into the staging area) needs about 150 checks, once per block of
# bodies, and at LLVM's 128 it does not vectorise (the vector env stepped 2.6× slower).
MEMORY_CHECKS = 1000
LLVM_MEMORY_CHECKS = 128
# The function attribute that takes the package's loops to 512-bit vectors on a CPU that has
# them. Compiled on an AMD EPYC (znver5) for an Intel Xeon (NUMBA_CPU_NAME=emeraldrapids),
# the vector env stepped at 1.81-1.96x CartPole-v1 without it and 2.44-2.67x with it (three
# process pairs at 4096 envs). For znver4 and znver5, whose tuning already prefers 512
# bits, it changes nothing; without AVX-512 LLVM takes the widest vectors there are, and
# for a CPU other than x86 it ignores it.
PREFER_VECTOR_WIDTH = '"prefer-vector-width"="512"'

_CACHING = "numba.core.caching"
# Numba tries its locators in order; the package's take its kernels in the same order of
# preference (NUMBA_CACHE_DIR, __pycache__ beside the file, the user's cache directory).
_LOCATORS = ("UserProvidedCacheLocator", "InTreeCacheLocator", "UserWideCacheLocator")
_CACHE_NAMES = (
    "CacheImpl._locator_classes",
    *(f"{locator}.{method}" for locator in _LOCATORS for method in ("from_function", "get_source_stamp")),
    *(
        f"FunctionCache.{method}"
        for method in ("load_overload", "save_overload", "flush", "cache_path", "_index_key")
    ),
    *(
        f"IndexDataCacheFile.{method}"
        for method in ("_load_index", "_save_index", "_data_name", "_save_data", "_dump")
    ),
    "NullCache",
)
# What each feature's loss costs a user.
_LOSSES = {
    SYMBOLS: (
        "kernels compiled in different processes could share symbols, so the package's "
        "kernels are not cached on disk: they compile in memory in every process"
    ),
    CACHE: (
        "they use numba's plain cache: stamped with their own file only (clear the cache "
        "after editing the package), and a damaged cache file or no writable cache location "
        "raises instead of recompiling"
    ),
    EVENTS: (
        "no notice goes to stderr while they compile, and they compile at LLVM's default inline "
        "threshold and vector width: the loops over bodies do not vectorise (vector env steps "
        "about 4× slower)"
    ),
    INLINING: (
        "they compile at LLVM's default inline threshold: the loops over bodies do not vectorise "
        "(vector env steps about 4× slower)"
    ),
    DIRECT: "every call of a kernel goes through numba's dispatch (about 1 µs more per env step)",
    UNCOUNTED: (
        "kernels that allocate nothing count references to their arrays like the others "
        "(about 1 µs more per call of an env's kernel)"
    ),
    UNWRAPPED: (
        "every compiled function gets numba's C wrapper: an env's first use compiles about "
        "15 % longer (Reorient-v0 7.8 s instead of 6.8 on a 2-core AMD EPYC)"
    ),
    WIDTH: (
        "they compile at the vector width LLVM prefers for the CPU: 256 bits on Intel CPUs "
        "with AVX-512, where the vector env steps about 1.3× slower"
    ),
}

# The longest a process waits for another that compiles the same kernel, then compiles it
# itself (s), and how often it looks meanwhile: an env's kernel compiles in 5-50 s.
COMPILE_WAIT = 600.0
_LOCK_POLL = 0.05

_ABSENT = object()
_lost: dict[str, tuple[str, ...]] = {}


class NumbaCompatWarning(UserWarning):
    """An internal of numba or llvmlite that a feature of this package uses is missing: the
    feature is left out, and the kernels work as with plain numba."""


@dataclass(frozen=True)
class Package:
    """What the features need to know of the package whose kernels they serve.

    Attributes:
        root: the package's source folder; a kernel is the package's when its file is in it.
        stamp: the digest its cached kernels are stamped with.
        cache_warning: the warning when a kernel cannot use its cache.
        notice: the line printed to stderr when its kernels first compile in a process.
    """

    root: Path
    stamp: Callable[[], bytes]
    cache_warning: type[Warning]
    notice: str


def activate(package: Package) -> None:
    """Install each feature for ``package`` whose internals are all present; warn once for
    each one left out."""
    _install_unique_symbols()
    _install_cache(package)
    listener = _install_listener(package, inline=_inlining_available())
    if listener is not None:
        _install_vector_width(listener)


def lost() -> dict[str, tuple[str, ...]]:
    """The features left out in this process (:data:`SYMBOLS`, :data:`CACHE`, :data:`EVENTS`,
    :data:`INLINING`, :data:`DIRECT`, :data:`UNCOUNTED`, :data:`UNWRAPPED`, :data:`WIDTH`), each
    with the internals it missed."""
    return dict(_lost)


def overload_of(dispatcher: Callable, args: tuple) -> Callable:
    """The compiled overload that numba's ``dispatcher`` runs for ``args`` (it has been
    called with them: ``Dispatcher.get_overload`` of their types), to call past the
    dispatcher's typing of every argument; the dispatcher itself where the method is missing
    (with one warning) or numba types the arguments otherwise."""
    get_overload = getattr(dispatcher, "get_overload", _ABSENT)
    if get_overload is _ABSENT:
        _lose(DIRECT, ["numba.core.dispatcher.Dispatcher.get_overload"])
        return dispatcher
    try:
        return get_overload(tuple(numba.typeof(arg) for arg in args))
    except KeyError:  # no overload of exactly these types (numba converted an argument)
        return dispatcher


def uncounted() -> dict[str, bool]:
    """The options of ``numba.njit`` that compile a kernel without numba's reference-counted
    memory: ``{"_nrt": False}``; none where numba lacks the option (with one warning), and
    the kernel counts references like any other."""
    missing = _missing("numba.core.cpu", ["CPUTargetOptions._nrt"])
    if missing:
        _lose(UNCOUNTED, missing)
        return {}
    return {"_nrt": False}


def unwrapped() -> dict[str, bool]:
    """The options of ``numba.njit`` (and an ``overload``'s ``jit_options``) that compile a function
    without its C wrapper: ``{"no_cfunc_wrapper": True}``; none where numba lacks the option
    (with one warning), and the function gets its wrapper like any other."""
    missing = _missing("numba.core.cpu", ["CPUTargetOptions.no_cfunc_wrapper"])
    if missing:
        _lose(UNWRAPPED, missing)
        return {}
    return {"no_cfunc_wrapper": True}


def _module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def _missing(module_name: str, paths: Iterable[str]) -> list[str]:
    """The names, in full, that stop the dotted ``paths`` under module ``module_name`` from
    resolving (the module itself where it cannot be imported)."""
    module = _module(module_name)
    if module is None:
        return [module_name]
    found = []
    for path in paths:
        owner, parts = module, path.split(".")
        for depth, name in enumerate(parts, 1):
            owner = getattr(owner, name, _ABSENT)
            if owner is _ABSENT:
                found.append(".".join([module_name, *parts[:depth]]))
                break
    return list(dict.fromkeys(found))


def _lose(feature: str, missing: Iterable[str]) -> None:
    """Record ``feature`` as left out, with one warning."""
    if feature in _lost:
        return
    _lost[feature] = tuple(missing)
    warnings.warn(
        f"{__name__.split('.')[0]}: numba {numba.__version__} / llvmlite {llvmlite.__version__} lack "
        f"{', '.join(_lost[feature])}; the kernels still work, but {_LOSSES[feature]}",
        NumbaCompatWarning,
        stacklevel=2,
    )


def _in_package(py_func: Callable, package: Package) -> bool:
    try:
        return Path(inspect.getfile(py_func)).resolve().is_relative_to(package.root)
    except (TypeError, OSError):
        return False


# Distinct symbols.


class _RandomIds:
    """An endless iterator of random 64-bit integers, in place of numba's counter of the
    functions it compiles (``FunctionIdentity._unique_ids``)."""

    def __iter__(self) -> _RandomIds:
        return self

    def __next__(self) -> int:
        return secrets.randbits(64)


def _install_unique_symbols() -> None:
    missing = _missing("numba.core.bytecode", ["FunctionIdentity._unique_ids"])
    if missing:
        _lose(SYMBOLS, missing)
        return
    identity = _module("numba.core.bytecode").FunctionIdentity
    if not isinstance(identity._unique_ids, _RandomIds):
        identity._unique_ids = _RandomIds()


# The package's cache.


def _install_cache(package: Package) -> None:
    missing = _missing(_CACHING, _CACHE_NAMES) + _missing(
        "numba.core.dispatcher", ["Dispatcher.enable_caching"]
    )
    if not missing and not isinstance(_module(_CACHING).CacheImpl._locator_classes, list):
        missing = [f"{_CACHING}.CacheImpl._locator_classes (a list)"]
    if missing:
        _lose(CACHE, missing)
        return
    caching, dispatcher = _module(_CACHING), _module("numba.core.dispatcher")
    locators = [_package_locator(getattr(caching, name), package) for name in _LOCATORS]
    caching.CacheImpl._locator_classes[:0] = locators
    plain = dispatcher.Dispatcher.enable_caching
    package_cache = _package_cache(caching.FunctionCache, package)

    def uninstall() -> None:
        for locator in locators:
            caching.CacheImpl._locator_classes.remove(locator)
        dispatcher.Dispatcher.enable_caching = plain

    def enable_caching(self) -> None:
        """``Dispatcher.enable_caching`` (what ``cache=True`` calls at decoration), for the
        package's kernels: the package's cache, or none where no location is writable."""
        if not hasattr(self, "_cache"):  # where numba keeps a dispatcher's cache
            uninstall()
            _lose(CACHE, ["numba.core.dispatcher.Dispatcher._cache"])
        if CACHE in _lost or not _in_package(self.py_func, package):
            plain(self)
            return
        if SYMBOLS in _lost:  # a kernel from another process might run a third one's code
            self._cache = caching.NullCache()
            return
        try:
            self._cache = package_cache(self.py_func)
        except RuntimeError as err:  # numba: "cannot cache function ...: no locator available"
            if "no locator" not in str(err):
                raise
            _warn_cache(
                package,
                "no locator",
                f"{package.root.name}: no writable cache directory for its compiled kernels "
                "(NUMBA_CACHE_DIR, the package's __pycache__, the user cache directory); they are "
                "compiled in memory, in every process, on first use. Set NUMBA_CACHE_DIR to a "
                "writable directory to cache them.",
            )
            self._cache = caching.NullCache()

    dispatcher.Dispatcher.enable_caching = enable_caching


_cache_warned: set[str] = set()


def _warn_cache(package: Package, key: str, message: str) -> None:
    if key not in _cache_warned:
        _cache_warned.add(key)
        warnings.warn(message, package.cache_warning, stacklevel=3)


def _package_locator(base: type, package: Package) -> type:
    """``base`` locator, restricted to the package's files and stamped with its digest."""

    class Locator(base):
        def get_source_stamp(self):
            return package.stamp()

        @classmethod
        def from_function(cls, py_func, py_file):
            if not Path(py_file).resolve().is_relative_to(package.root):
                return None
            return super().from_function(py_func, py_file)

    Locator.__name__ = f"Package{base.__name__}"
    return Locator


class _CompileLock:
    """An exclusive lock (``fcntl.flock``) on a file beside a kernel's cache entry, held by
    the one process that compiles the kernel, so that the others of a run (pytest-xdist's
    workers, Ray's, ``rigidrot compile``'s) load it from the cache rather than compile it
    again. Closing the file releases it, and so does the process's end."""

    def __init__(self, fd: int):
        self.fd: int | None = fd

    @classmethod
    def acquire(cls, path: Path) -> _CompileLock | None:
        """The lock on ``path``, once no other process holds it; None where the file cannot
        be opened (a read-only cache) or after :data:`COMPILE_WAIT` seconds (a process that
        hangs holding it delays the others that long, no longer)."""
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError:
            return None
        deadline = time.monotonic() + COMPILE_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return cls(fd)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    return None
                time.sleep(_LOCK_POLL)
            except OSError:  # a file system without locks: compile unlocked
                os.close(fd)
                return None

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _package_cache(base: type, package: Package) -> type:
    """Numba's cache of one kernel (``base``: ``FunctionCache``), which never fails a
    compilation: a cache that cannot be read is a miss, one that cannot be written is skipped."""

    class PackageCache(base):
        def __init__(self, py_func):
            super().__init__(py_func)
            files = getattr(self, "_cache_file", None)  # where numba keeps them
            if files is not None:
                files.__class__ = _keyed_files(type(files))

        def load_overload(self, sig, target_context):
            found = self._load(sig, target_context)
            if found is not None or fcntl is None:
                return found
            # A miss: another process may be compiling this kernel. Wait for it (it saves
            # the kernel, which this one then loads), or compile it holding the lock.
            key = repr(self._index_key(sig, target_context.codegen())).encode()
            name = hashlib.sha256(key).hexdigest()[:32]
            lock = _CompileLock.acquire(Path(self.cache_path) / f"{name}.lock")
            if lock is None:
                return None
            found = self._load(sig, target_context)
            if found is not None:
                lock.release()
                return found
            self.release_lock()
            self._lock = lock  # released once saved (save_overload) or once the compile failed
            return None

        def _load(self, sig, target_context):
            try:
                return super().load_overload(sig, target_context)
            except Exception as err:  # whatever a damaged index or data file raises: recompile
                _warn_cache(
                    package,
                    self.cache_path,
                    f"unusable numba cache in {self.cache_path} ({err!r}); recompiling",
                )
                return None

        def save_overload(self, sig, data):
            try:
                self._save(sig, data)
            except Exception as err:  # a read-only directory, a full disk: run uncached
                _warn_cache(
                    package, self.cache_path, f"cannot write the numba cache in {self.cache_path} ({err!r})"
                )
            finally:
                self.release_lock()

        def release_lock(self) -> None:
            """Let the other processes waiting to compile this kernel go on."""
            lock, self._lock = getattr(self, "_lock", None), None
            if lock is not None:
                lock.release()

        def _save(self, sig, data):
            try:
                super().save_overload(sig, data)
            except OSError:
                raise
            except Exception:  # the damaged index load_overload warned of: a new, empty one, then save
                self.flush()
                super().save_overload(sig, data)

    return PackageCache


@functools.cache
def _keyed_files(base: type) -> type:
    """Numba's index and data files of one kernel (``base``: ``IndexDataCacheFile``), each
    entry's data file named by its key. Numba names a new entry's file by the first number
    its index leaves free: two processes that save at once (test workers, Ray workers, the
    subprocesses of a vector env, sharing one cache folder) take the same number, and the
    index one of them writes may then point its kernel's key at the file the other wrote
    last, another kernel's code, which later runs in its place, silently (seen here: an
    ``rkn`` run loading another method's step). Named by the key's hash, two keys never share
    a file. The index is read, added to and written holding a lock beside it: two processes
    saving two kernels of one function at once would otherwise each write the index they
    read, the last dropping the other's entry, and that kernel would compile again."""

    class KeyedFiles(base):
        def save(self, key, data):
            digest = hashlib.sha256(self._dump(key)).digest()
            name = self._data_name(int.from_bytes(digest[:8], "big"))
            self._save_data(name, data)  # before the index points at it
            index = getattr(self, "_index_path", None)
            lock = None if fcntl is None or index is None else _CompileLock.acquire(Path(f"{index}.lock"))
            try:
                overloads = self._load_index()
                if overloads.get(key) != name:
                    overloads[key] = name
                    self._save_index(overloads)
            finally:
                if lock is not None:
                    lock.release()

    KeyedFiles.__name__ = f"Keyed{base.__name__}"
    return KeyedFiles


# The compile notice, the inlining boost and the full vector width, on numba's compile events.


def _inlining_available() -> bool:
    missing = _missing("llvmlite.binding", ["set_option"])
    if missing:
        _lose(INLINING, missing)
    return not missing


def _set_thresholds(raised: bool) -> None:
    set_option = _module("llvmlite.binding").set_option
    set_option("", f"-inline-threshold={INLINE_THRESHOLD if raised else LLVM_INLINE_THRESHOLD}")
    set_option("", f"-vectorize-memory-check-threshold={MEMORY_CHECKS if raised else LLVM_MEMORY_CHECKS}")


def _install_listener(package: Package, inline: bool) -> object | None:
    """The listener to numba's compile events, registered; None where they are missing."""
    missing = _missing("numba.core.event", ["Listener", "register"])
    if missing:
        _lose(EVENTS, missing)
        return None
    event = _module("numba.core.event")
    listener = _compile_listener(event.Listener, package, inline)
    try:
        event.register("numba:compile", listener)
    except (TypeError, ValueError) as err:  # numba refuses a "numba:" kind it does not broadcast
        _lose(EVENTS, [f'numba.core.event kind "numba:compile" ({err})'])
        return None
    return listener


def _compile_listener(base: type, package: Package, inline: bool):
    """A listener (``base``: ``event.Listener``) to ``numba:compile``: prints the notice the
    first time numba compiles a function of the package in this process (numba broadcasts
    it only on a cache miss, so loading cached kernels stays silent), and counts in
    ``depth`` the compilations under way since a kernel of the package began, the
    functions that kernel calls among them (they compile inside its event); with
    ``inline`` it raises LLVM's inline threshold while that count is not zero."""

    class CompileListener(base):
        def __init__(self):
            self.noticed = False
            self.depth = 0

        def on_start(self, ev) -> None:
            ours = _compiles_package(ev, package)
            if ours and not self.noticed:
                self.noticed = True
                print(package.notice, file=sys.stderr, flush=True)
            if self.depth or ours:
                if inline and not self.depth:
                    _set_thresholds(True)
                self.depth += 1

        def on_end(self, ev) -> None:
            failed = getattr(ev, "exc_details", None)
            if failed and failed[0] is not None:  # no save follows: the other processes go on
                data = ev.data if isinstance(getattr(ev, "data", None), dict) else {}
                release = getattr(getattr(data.get("dispatcher"), "_cache", None), "release_lock", None)
                if release is not None:
                    release()
            if self.depth:
                self.depth -= 1
                if inline and not self.depth:
                    _set_thresholds(False)

    return CompileListener()


def _compiles_package(ev, package: Package) -> bool:
    """Whether the ``numba:compile`` event ``ev`` compiles a function of the package."""
    if EVENTS in _lost:
        return False
    data = getattr(ev, "data", None)
    compiled = data.get("dispatcher") if isinstance(data, dict) else None
    if compiled is None:
        _lose(EVENTS, ['numba.core.event.Event.data["dispatcher"] of "numba:compile"'])
        return False
    module = getattr(getattr(compiled, "py_func", None), "__module__", None) or ""
    return module.split(".")[0] == package.root.name


def _install_vector_width(listener) -> None:
    """Give each function numba lowers while ``listener`` counts a kernel of the package
    compiling (its ``depth``) the attribute :data:`PREFER_VECTOR_WIDTH`, through
    ``CPUContext.post_lowering``, which numba calls with each function's module before
    LLVM optimises it. ``FunctionAttributes.add`` takes only the attributes llvmlite knows by
    name, none with a value; ``set.add`` puts one in the set beneath, which llvmlite prints
    in the function's definition as it is."""
    missing = _missing("numba.core.cpu", ["CPUContext.post_lowering"]) + _missing(
        "llvmlite.ir", ["Module", "Function", "FunctionType", "VoidType", "FunctionAttributes"]
    )
    if not missing and not _prints_vector_width(_module("llvmlite.ir")):
        missing = ["llvmlite.ir.FunctionAttributes (a set, printed in the function's definition)"]
    if missing:
        _lose(WIDTH, missing)
        return
    context = _module("numba.core.cpu").CPUContext
    plain = context.post_lowering

    def post_lowering(self, mod, library) -> None:
        if listener.depth:
            for function in mod.functions:
                if not function.is_declaration:
                    set.add(function.attributes, PREFER_VECTOR_WIDTH)
        plain(self, mod, library)

    context.post_lowering = post_lowering


def _prints_vector_width(ir: ModuleType) -> bool:
    """Whether llvmlite prints :data:`PREFER_VECTOR_WIDTH`, added to a function's attributes,
    on the line that declares the function (where LLVM reads function attributes)."""
    if not issubclass(ir.FunctionAttributes, set):
        return False
    function = ir.Function(ir.Module(), ir.FunctionType(ir.VoidType(), ()), "probe")
    set.add(function.attributes, PREFER_VECTOR_WIDTH)
    return PREFER_VECTOR_WIDTH in str(function).splitlines()[0]
