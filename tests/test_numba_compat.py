"""The package outlives a numba or llvmlite that renames an internal it uses (issue 27, item 5),
and the inlining that vectorises the loop over bodies does not go unnoticed when lost.

Each internal is renamed in turn, everywhere numba and llvmlite use it (their sources are
rewritten as a fresh interpreter imports them, as a release that renamed it would read):
the package imports, warns once naming it, leaves out its feature alone, and integrates
bitwise as with the internal in place.
"""

from __future__ import annotations

import json
import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from numba import njit

from rigidrot_gym.physics.plumbing import numba_compat
from rigidrot_gym.physics.plumbing.jit import COMPILE_NOTICE, bodies, inlined
from rigidrot_gym.physics.rotation.integrators import rk4
from rigidrot_gym.physics.rotation.integrators.base import advance
from rigidrot_gym.physics.rotation.torques import SIZE, body_torque, model_potential, parameters

# argv[1]: the rename, {"pattern", "replacement", "scope"} (module-name prefixes) or null.
# Prints the run's final attitudes (bytes), the features left out, the NumbaCompatWarnings
# and how many names were renamed in which module.
CHILD = """
import importlib.abc, importlib.machinery, json, re, sys, warnings

rename = json.loads(sys.argv[1])
renamed = {}


class Renaming(importlib.machinery.SourceFileLoader):
    def get_code(self, fullname):  # from the rewritten source, never from the bytecode
        source, count = re.subn(rename["pattern"], rename["replacement"], self.get_data(self.path).decode())
        renamed[fullname] = count
        return compile(source, self.path, "exec", dont_inherit=True)


class Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if not fullname.startswith(tuple(rename["scope"])):
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or not str(spec.origin).endswith(".py"):
            return None
        with open(spec.origin, encoding="utf-8") as f:
            if not re.search(rename["pattern"], f.read()):
                return None
        spec.loader = Renaming(fullname, spec.origin)
        return spec


if rename:
    sys.meta_path.insert(0, Finder())
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import rigidrot_gym
    from rigidrot_gym import propagate
    from rigidrot_gym.physics.plumbing import numba_compat

    q = propagate([1, 0, 0, 0], [0.1, 0.2, 0.3], [1, 2, 3], 0.01, 10, method="rk4").q
    from numba import njit
    from rigidrot_gym.physics.plumbing.jit import DirectCalls

    calls = DirectCalls(njit(lambda x, y: x * y))
    direct = [calls("float64", (x, 3.0)) for x in (1.0, 2.0, 4.0)]
    import numpy as np

    ends = njit(**numba_compat.uncounted())(lambda x: x[0] + x[-1])
    uncounted = [ends(np.arange(3.0)), ends.targetoptions.get("_nrt", True) is False]
    from numba.core.registry import cpu_target
    from rigidrot_gym.physics.plumbing.jit import jitable

    def twice(x):
        return 2.0 * x

    jitable(twice)
    value = njit(lambda x: twice(x) + 1.0)(3.0)
    # How numba compiled the function the kernel calls: with its C wrapper or not.
    (template,) = cpu_target.typing_context.resolve_value_type(twice).templates
    compiled = [dispatcher for dispatcher, _ in template._impl_cache.values()]
    no_wrapper = [d.targetoptions.get("no_cfunc_wrapper", False) for d in compiled]
    unwrapped = [value, bool(no_wrapper) and all(no_wrapper)]

    def increment(x):
        return x + 1.0

    increment.__module__ = "rigidrot_gym.width_probe"  # the package's, by its module
    incremented = njit(increment)
    wide = [incremented(1.0)]
    wide.append(numba_compat.PREFER_VECTOR_WIDTH in "".join(incremented.inspect_llvm().values()))
print(json.dumps({
    "q": q.tobytes().hex(),
    "direct": direct,
    "direct_calls_past_dispatch": calls._last is not calls.dispatcher,
    "uncounted": uncounted,
    "unwrapped": unwrapped,
    "wide": wide,
    "lost": numba_compat.lost(),
    "warnings": [str(w.message) for w in caught if w.category is numba_compat.NumbaCompatWarning],
    "renamed": renamed,
}))
"""

NUMBA = ("numba",)
CACHING = "numba.core.caching"


def _rename(internal: str, feature: str, pattern: str, replacement: str, scope: tuple = NUMBA):
    """A case: ``internal`` (as the warning names it), the feature it serves, and its rename,
    the regex ``pattern`` replaced in the modules named by the prefixes ``scope``."""
    rename = {"pattern": pattern, "replacement": replacement, "scope": scope}
    return pytest.param(internal, feature, rename, id=internal)


def _name(internal: str, feature: str, scope: tuple = NUMBA):
    """A case: the last name of ``internal`` renamed wherever ``scope`` uses it (a name only
    numba's own code uses, in all of numba; a common word, where it is the internal)."""
    name = internal.rsplit(".", 1)[-1]
    return _rename(internal, feature, rf"\b{name}\b", f"{name}_v2", scope)


INTERNALS = [
    _name("numba.core.bytecode.FunctionIdentity._unique_ids", numba_compat.SYMBOLS, ("numba.core.bytecode",)),
    *(
        _name(f"{CACHING}.{path}", numba_compat.CACHE)
        for path in (
            "CacheImpl",
            "CacheImpl._locator_classes",
            "UserProvidedCacheLocator",
            "InTreeCacheLocator",
            "UserWideCacheLocator",
            "UserProvidedCacheLocator.from_function",
            "UserProvidedCacheLocator.get_source_stamp",
            "FunctionCache",
            "FunctionCache.load_overload",
            "FunctionCache.save_overload",
            "FunctionCache.cache_path",
            "NullCache",
        )
    ),
    _name(f"{CACHING}.FunctionCache.flush", numba_compat.CACHE, (CACHING, "numba.core.dispatcher")),
    _name(f"{CACHING}.IndexDataCacheFile._data_name", numba_compat.CACHE, (CACHING,)),
    _name("numba.core.dispatcher.Dispatcher.enable_caching", numba_compat.CACHE),
    _name("numba.core.dispatcher.Dispatcher._cache", numba_compat.CACHE),
    _name("numba.core.event.Listener", numba_compat.EVENTS, ("numba.core.event",)),
    _name("numba.core.event.register", numba_compat.EVENTS, ("numba.core.event",)),
    _rename('"numba:compile"', numba_compat.EVENTS, '"numba:compile"', '"numba:compile_v2"'),
    _rename(
        'Event.data["dispatcher"]',
        numba_compat.EVENTS,
        r"\bdispatcher=self,",
        "function=self,",
        ("numba.core.dispatcher",),
    ),
    _name("llvmlite.binding.set_option", numba_compat.INLINING, ("numba", "llvmlite")),
    _name("numba.core.dispatcher.Dispatcher.get_overload", numba_compat.DIRECT),
    _name("numba.core.cpu.CPUTargetOptions._nrt", numba_compat.UNCOUNTED),
    _name("numba.core.cpu.CPUTargetOptions.no_cfunc_wrapper", numba_compat.UNWRAPPED),
    _name("numba.core.cpu.CPUContext.post_lowering", numba_compat.WIDTH),
    _name("llvmlite.ir.FunctionAttributes", numba_compat.WIDTH, ("llvmlite.ir",)),
    # A release that printed only the attributes it knows would drop the package's.
    _rename(
        "llvmlite.ir.FunctionAttributes (a set, printed in the function's definition)",
        numba_compat.WIDTH,
        r"for i in sorted\(self\)\]",
        "for i in sorted(self) if i in self._known]",
        ("llvmlite.ir.values",),
    ),
]


def _run(cache: Path, rename: dict | None) -> tuple[dict, str]:
    """The child's report and its stderr, compiling into the empty cache folder ``cache``."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps(rename)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1]), done.stderr


@pytest.fixture(scope="module")
def untouched(tmp_path_factory) -> tuple[dict, str, Path]:
    cache = tmp_path_factory.mktemp("numba-cache")
    return (*_run(cache, None), cache)


@pytest.mark.slow
def test_untouched_numba_leaves_every_feature_in(untouched):
    report, stderr, cache = untouched
    assert report["lost"] == {} and report["warnings"] == []
    assert report["direct"] == [3.0, 6.0, 12.0] and report["direct_calls_past_dispatch"]
    assert report["uncounted"] == [2.0, True]
    assert report["unwrapped"] == [7.0, True]
    assert report["wide"] == [2.0, True]
    assert stderr.count(COMPILE_NOTICE) == 1
    assert any(cache.rglob("*.nbi"))


@pytest.mark.parametrize(("internal", "feature", "rename"), INTERNALS)
@pytest.mark.slow
def test_a_renamed_internal_loses_its_feature_alone(untouched, tmp_path, internal, feature, rename):
    report, stderr = _run(tmp_path, rename)
    assert sum(report["renamed"].values()) > 0, f"nothing was renamed: {rename}"
    assert list(report["lost"]) == [feature]
    assert any(internal in name for name in report["lost"][feature]), report["lost"]
    (warning,) = report["warnings"]
    assert internal in warning
    assert report["q"] == untouched[0]["q"]  # bitwise
    assert report["direct"] == [3.0, 6.0, 12.0]  # through the dispatcher where the feature is lost
    assert report["direct_calls_past_dispatch"] == (feature != numba_compat.DIRECT)
    # compiled with numba's reference counts where the option is lost, to the same result
    assert report["uncounted"] == [2.0, feature != numba_compat.UNCOUNTED]
    # a function a kernel calls gets numba's C wrapper where the option is lost
    assert report["unwrapped"] == [7.0, feature != numba_compat.UNWRAPPED]
    # the package's functions prefer LLVM's vector width for the CPU where the feature is lost
    assert report["wide"] == [2.0, feature not in (numba_compat.WIDTH, numba_compat.EVENTS)]
    # Cached by numba's plain cache where the package's is lost; not at all without distinct
    # symbols, where a kernel loaded from the cache might run another's code.
    assert any(tmp_path.rglob("*.nbi")) == (feature != numba_compat.SYMBOLS)
    assert stderr.count(COMPILE_NOTICE) == (0 if feature == numba_compat.EVENTS else 1)


@inlined
def _rk4_steps(x, state, inertia, p, h, opts):
    """One RK4 step of every body from ``x`` into ``state``."""
    for i in bodies(0, state.shape[1]):
        q = (x[0, i], x[1, i], x[2, i], x[3, i])
        w = (x[4, i], x[5, i], x[6, i])
        moments = (inertia[0, i], inertia[1, i], inertia[2, i])
        q, w, s, _ = rk4.step(
            0, 0.0, h, q, w, x[7, i], moments, body_torque, model_potential, parameters(p, i), opts
        )
        state[0, i], state[1, i], state[2, i], state[3, i] = q
        state[4, i], state[5, i], state[6, i] = w
        state[7, i] = s


def _body_steps(state, inertia, p, h, opts):
    """One RK4 step of every body, as the package's kernels loop over bodies."""
    _rk4_steps(state, state, inertia, p, h, opts)


# The package raises LLVM's inline threshold for the kernels it compiles, which it tells by
# their module; uncached, so that numba keeps the optimised module to inspect.
_body_steps.__module__ = "rigidrot_gym.inlining_probe"


def test_the_rk4_step_is_inlined_and_the_loop_over_bodies_vectorised():
    kernel = njit(error_model="numpy")(_body_steps)
    n = 64
    state = np.zeros((8, n))
    state[0], state[4:7] = 1.0, 0.1
    kernel(state, np.ones((3, n)), np.zeros((SIZE, n)), 0.01, np.zeros(0))
    ir = "\n".join(kernel.inspect_llvm().values())
    callees = set(re.findall(r"\bcall\b[^\n@]*@\"?([\w.$]+)", ir))
    # Out of line, any function the step calls keeps the loop from vectorising.
    assert not {c for c in callees if "rigidrot_gym" in c and "_body_steps" not in c}, sorted(callees)
    # No fast-math: multiplies and adds stay apart, packed (<2 x double> with SSE2 or NEON, 4 with AVX2).
    assert re.search(r"\bfmul\b[^\n]*<\d+ x double>", ir), "the loop over bodies did not vectorise"


def _staged_steps(state, staged, inertia, p, h, substeps, opts, stats):
    """A control period of every body as an env's integration runs it: the first sub-step
    from ``state`` into ``staged``, the others in place there."""
    args = (staged, inertia, p, parameters, 0.0, h, substeps, 0, substeps, opts, False, None, None, stats)
    advance(rk4.step, body_torque, model_potential, *args, 0, state.shape[1], state)


_staged_steps.__module__ = "rigidrot_gym.inlining_probe"


def test_an_envs_sub_steps_vectorise_from_the_states_and_in_place():
    kernel = njit(error_model="numpy")(_staged_steps)
    n, substeps = 64, 3
    state = np.zeros((8, n))
    state[0], state[4:7] = 1.0, np.linspace(-0.2, 0.3, n)
    staged, stats = np.full((8, n), np.nan), np.zeros((2, n))
    before = state.copy()
    kernel(state, staged, np.ones((3, n)), np.zeros((SIZE, n)), 0.01, substeps, np.zeros(0), stats)
    # The same period in place on a copy, as a library run has it: bit for bit; the states unread.
    in_place = state.copy()
    args = (np.ones((3, n)), np.zeros((SIZE, n)), 0.0, 0.01, substeps, 0, substeps, np.zeros(0), False)
    _in_place(in_place, *args, np.zeros((2, n)))
    assert np.array_equal(staged, in_place) and np.array_equal(state, before)
    ir = "\n".join(kernel.inspect_llvm().values())
    callees = set(re.findall(r"\bcall\b[^\n@]*@\"?([\w.$]+)", ir))
    # The sub-step's loop copied into advance at each of its two calls, each copy with its own
    # arrays: out of line, the in-place call would hand it arrays that may overlap, and its
    # loop would run without vectors.
    assert not {c for c in callees if "_substep" in c}, sorted(callees)
    # Both loops vectorised, each with its packed square root (RK4 renormalises the attitude):
    # at LLVM's limit on runtime overlap checks, the one between two arrays does not.
    assert len(re.findall(r"\bcall\b[^\n]*@llvm\.sqrt\.v\d+f64", ir)) >= 2, "a loop did not vectorise"


@njit(error_model="numpy")
def _in_place(state, inertia, p, t0, h, substeps, first, last, opts, renormalize, stats):
    args = (inertia, p, parameters, t0, h, substeps, first, last, opts, renormalize, None, None, stats)
    advance(rk4.step, body_torque, model_potential, state, *args, 0, state.shape[1])


def _twice(state, staged, inertia, p, h, opts):
    _rk4_steps(state, staged, inertia, p, h, opts)
    _rk4_steps(staged, staged, inertia, p, h, opts)


def test_an_inlined_function_is_copied_into_each_caller():
    # Outside the package, at LLVM's own inline threshold, a loop over bodies with an RK4
    # step in it called twice stays out of line (a jitable one does) unless numba copies it.
    kernel = njit(error_model="numpy")(_twice)
    n = 16
    state, staged = np.zeros((8, n)), np.zeros((8, n))
    state[0], state[4:7] = 1.0, 0.1
    kernel(state, staged, np.ones((3, n)), np.zeros((SIZE, n)), 0.01, np.zeros(0))
    assert abs(np.linalg.norm(staged[0:4], axis=0) - 1.0).max() < 1e-12  # both steps ran
    ir = "\n".join(kernel.inspect_llvm().values())
    callees = set(re.findall(r"\bcall\b[^\n@]*@\"?([\w.$]+)", ir))
    assert not {c for c in callees if "_rk4_steps" in c}, sorted(callees)


# Compiles (never runs) a loop over bodies for an Intel Xeon, whatever this machine's CPU, as
# one of the package's functions and as one outside it; prints each one's widest registers.
XEON = """
import json, numpy as np
from numba import njit
import rigidrot_gym


def scaled(a, b):
    for i in range(a.shape[0]):
        b[i] = np.sqrt(a[i] * a[i] + 1.0)


widest = {}
for module in ("rigidrot_gym.width_probe", "elsewhere"):
    scaled.__module__ = module
    asm = "".join(njit("void(float64[:], float64[:])", error_model="numpy")(scaled).inspect_asm().values())
    widest[module] = next((name for name in ("zmm", "ymm", "xmm") if f"%{name}" in asm), None)
print(json.dumps(widest))
"""


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="compiles for an x86 CPU")
def test_the_packages_loops_take_512_bit_vectors_on_an_intel_xeon():
    # NUMBA_CPU_FEATURES empty: the Xeon's own features, AVX-512 among them. LLVM's tuning for
    # it prefers 256-bit vectors; the package's functions override that, and no other.
    env = {**os.environ, "NUMBA_CPU_NAME": "sapphirerapids", "NUMBA_CPU_FEATURES": ""}
    done = subprocess.run([sys.executable, "-c", XEON], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1]) == {"rigidrot_gym.width_probe": "zmm", "elsewhere": "ymm"}
