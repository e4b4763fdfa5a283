"""How :func:`rigidrot_gym.physics.plumbing.jit.kernel` compiles arithmetic: a multiply and an add
contracted into one fused multiply-add (one rounding), and nothing else of fast math.
References: IEEE 754 double arithmetic, exact products from :class:`fractions.Fraction`."""

from __future__ import annotations

import math
from fractions import Fraction

import llvmlite.binding
import pytest

from rigidrot_gym.physics.plumbing.jit import kernel


@kernel
def _multiply_add(a, b, c):
    return a * b + c


@kernel
def _cancel(a, b):
    return (a + b) - b


@kernel
def _differs_from_itself(x):
    return x != x


@pytest.mark.skipif(
    "+fma" not in llvmlite.binding.get_host_cpu_features().flatten().split(","),
    reason="this CPU has no fused multiply-add instruction to contract into",
)
def test_a_multiply_and_an_add_are_rounded_once():
    a, b, c = 1.0 + 2.0**-30, 1.0 - 2.0**-30, -1.0
    exact = Fraction(a) * Fraction(b) + Fraction(c)  # -2**-60, exactly representable
    assert _multiply_add(a, b, c) == float(exact) == -(2.0**-60)
    assert a * b + c == 0.0  # rounded twice, as numpy does: the product rounds to 1


def test_nothing_else_of_fast_math():
    # Reassociation would give 1e-20; IEEE order gives 0. A NaN compares unequal to itself.
    assert _cancel(1e-20, 1.0) == 0.0
    assert _differs_from_itself(math.nan)
    assert _multiply_add(math.inf, 0.0, 1.0) != _multiply_add(math.inf, 0.0, 1.0)  # NaN kept
