"""The fourth-order Runge–Kutta–Nyström step for ÿ = f(t, y, ẏ), on component tuples.

    y₁ = y₀ + h ẏ₀ + h²/6 (k₁ + k₂ + k₃),   ẏ₁ = ẏ₀ + h/6 (k₁ + 2k₂ + 2k₃ + k₄)
    k₁ = f(t, y₀, ẏ₀)
    k₂ = f(t + h/2, y₀ + h/2 ẏ₀ + h²/8 k₁, ẏ₀ + h/2 k₁)
    k₃ = f(t + h/2, y₀ + h/2 ẏ₀ + h²/8 k₁, ẏ₀ + h/2 k₂)
    k₄ = f(t + h, y₀ + h ẏ₀ + h²/2 k₃, ẏ₀ + h k₃)

Source: Mandre (2008) §5 and §6, after Abramowitz & Stegun 25.5.20. One scheme for the
linear motion (y = position), the quaternion's second-order ODE (y = q, the ``rkn``
method) and both together (:mod:`rigidrot_gym.physics.rotation.rigid_body`). ``axpy(s, a, b) = s a + b``
does the arithmetic on whatever tuple ``y`` is, so the step runs compiled and in numpy
(see :mod:`rigidrot_gym.physics.plumbing.jit`); ``f(t, y, ẏ, args)`` gets the caller's ``args``.
"""

from rigidrot_gym.physics.plumbing.jit import jitable


@jitable
def nystrom_step(f, args, t, h, y, yd, axpy):
    """One RKN step of size h from (y, ẏ) at time t; returns (y₁, ẏ₁)."""
    half = 0.5 * h
    k1 = f(t, y, yd, args)
    y_mid = axpy(h * h / 8.0, k1, axpy(half, yd, y))
    k2 = f(t + half, y_mid, axpy(half, k1, yd), args)
    k3 = f(t + half, y_mid, axpy(half, k2, yd), args)
    k4 = f(t + h, axpy(h * h / 2.0, k3, axpy(h, yd, y)), axpy(h, k3, yd), args)
    y1 = axpy(h * h / 6.0, axpy(1.0, k1, axpy(1.0, k2, k3)), axpy(h, yd, y))
    yd1 = axpy(h / 6.0, axpy(2.0, axpy(1.0, k2, k3), axpy(1.0, k1, k4)), yd)
    return y1, yd1
