"""Uniform variates from many numpy generators, drawn in compiled code.

Each body of a batch owns a :class:`numpy.random.Generator`, so that row i repeats a single
env seeded the same way. Drawing from thousands of them one Python call each costs
microseconds per body; :func:`draw` instead calls each generator's bit generator from
compiled code through numpy's documented C interface (``bit_generator.ctypes``: the address
of its state and of its ``next_double`` function, gathered by :func:`sources`): the same
doubles, in the same order, as ``Generator.random`` draws (which calls that same function
once per value). Like every use of ``bit_generator.ctypes``, it bypasses the generator's
lock: the env's generators are not shared between threads.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from rigidrot_gym.physics.plumbing.jit import jitable


@intrinsic
def _next_double(typingctx, function, state):
    """``next_double(state)`` of a bit generator, both given as addresses (uint64)."""

    def codegen(context, builder, signature, args):
        pointer = ir.IntType(8).as_pointer()
        kind = ir.FunctionType(ir.DoubleType(), [pointer])
        call = builder.inttoptr(args[0], kind.as_pointer())
        return builder.call(call, [builder.inttoptr(args[1], pointer)])

    return types.float64(types.uint64, types.uint64), codegen


@jitable
def draw(sources, j, out):
    """Fill ``out`` (K,) with uniforms on [0, 1) from generator j of ``sources``
    (:func:`sources`): ``rngs[j].random(K)``. Compiled code only."""
    for k in range(out.shape[0]):
        out[k] = _next_double(sources[0, j], sources[1, j])


def sources(rngs: Sequence[np.random.Generator]) -> np.ndarray:
    """(2, R) uint64: the address of each generator's ``next_double`` and of its state, the
    arguments :func:`draw` calls it with. Valid while the generators live."""
    bits = [rng.bit_generator for rng in rngs]
    out = np.empty((2, len(bits)), dtype=np.uint64)
    kinds = set(map(type, bits))
    if len(kinds) == 1:  # the common case: every row a PCG64
        out[0] = _function(kinds.pop(), bits[0])
    else:
        out[0] = [_function(type(b), b) for b in bits]
    out[1] = [b.ctypes.state_address for b in bits]
    return out


_FUNCTIONS: dict[type, int] = {}


def _function(kind: type, bits: np.random.BitGenerator) -> int:
    """The address of ``next_double`` of bit generators of class ``kind`` (one per class)."""
    if kind not in _FUNCTIONS:
        _FUNCTIONS[kind] = ctypes.cast(bits.ctypes.next_double, ctypes.c_void_p).value
    return _FUNCTIONS[kind]
