"""Uniform variates from many numpy generators in one compiled call.

Each body of a batch owns a :class:`numpy.random.Generator`, so that row i repeats a single
env seeded the same way. Drawing from thousands of them one Python call each costs
microseconds per body; :func:`uniforms` instead reads each generator's bit generator through
numpy's documented C interface (``bit_generator.ctypes``: the address of its state and of its
``next_double`` function) and calls it from compiled code: the same doubles, in the same
order, as ``Generator.random`` draws (which calls that same function once per value).
Like every use of ``bit_generator.ctypes``, it bypasses the generator's lock: the env's
generators are not shared between threads.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

# Below this many bodies a Python call per body is cheaper than the compiled call (and a
# single env never compiles it).
MIN_COMPILED = 16


@intrinsic
def _next_double(typingctx, function, state):
    """``next_double(state)`` of a bit generator, both given as addresses (uint64)."""

    def codegen(context, builder, signature, args):
        pointer = ir.IntType(8).as_pointer()
        kind = ir.FunctionType(ir.DoubleType(), [pointer])
        call = builder.inttoptr(args[0], kind.as_pointer())
        return builder.call(call, [builder.inttoptr(args[1], pointer)])

    return types.float64(types.uint64, types.uint64), codegen


@njit(cache=True)
def _draw(functions, states, out):
    for j in range(out.shape[0]):
        for k in range(out.shape[1]):
            out[j, k] = _next_double(functions[j], states[j])


def uniforms(rngs: Sequence[np.random.Generator], count: int) -> np.ndarray:
    """(len(rngs), count) doubles in [0, 1): row j is ``rngs[j].random(count)``."""
    out = np.empty((len(rngs), count))
    if len(rngs) < MIN_COMPILED:
        for j, rng in enumerate(rngs):
            out[j] = rng.random(count)
        return out
    bits = [rng.bit_generator for rng in rngs]
    kinds = set(map(type, bits))
    if len(kinds) == 1:  # the common case: every row a PCG64
        functions = np.full(len(bits), _function(kinds.pop(), bits[0]), dtype=np.uint64)
    else:
        functions = np.array([_function(type(b), b) for b in bits], dtype=np.uint64)
    states = np.array([b.ctypes.state_address for b in bits], dtype=np.uint64)
    _draw(functions, states, out)
    return out


_FUNCTIONS: dict[type, int] = {}


def _function(kind: type, bits: np.random.BitGenerator) -> int:
    """The address of ``next_double`` of bit generators of class ``kind`` (one per class)."""
    if kind not in _FUNCTIONS:
        _FUNCTIONS[kind] = ctypes.cast(bits.ctypes.next_double, ctypes.c_void_p).value
    return _FUNCTIONS[kind]
