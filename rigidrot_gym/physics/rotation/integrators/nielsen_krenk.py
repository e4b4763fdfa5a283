"""Nielsen & Krenk (2012): the energy–momentum conserving quaternion scheme.

Hamiltonian form with the extended mass matrix: J̄ = diag(J0, I1, I2, I3),
p = 2 q ⊗ (0, Iω), b(q, p) = q* ⊗ p = (q·p, 2Iω), H = ⅛ bᵀJ̄⁻¹b + V(q). The step is the
finite increment of H (bars: midpoints; b̃ = ½[b(qn, pn) + b(qn+1, pn+1)]):

    qn+1 − qn = (h/4) q̄ ⊗ J̄⁻¹b̃
    pn+1 − pn = −(h/4) p̄ ⊗ (J̄⁻¹b̃)* − h Π(q̄) ∇̃V + 2h q̄ ⊗ (0, τ)

with Π(q) = 1 − qqᵀ/qᵀq, ∇̃V Gonzalez's discrete gradient
∇V(q̄) + [ΔV − ∇V(q̄)·Δq] Δq/|Δq|² (just ∇V(q̄) for V quadratic in q), and τ an applied
body torque held over the step.

Solved in its equivalent reduced form (the notes' closed form, extended to loads): the
pair keeps q·p = 0, so J̄⁻¹b̃ = (0, 2Ω̃), Ω̃ = ½(ωn + ωn+1), whatever J0 is, and with
a = (h/8)(ωn + ωn+1), s = (1 + a)/√(1 + |a|²) and r = s ⊗ s (a Cayley rotation by
4 atan|a|) the pair becomes

    qn+1 = qn ⊗ r,   I ωn+1 = R(s)ᵀ[R(s)ᵀ I ωn + h τ/(1 + |a|²) − (h/2) vec(q̄* ⊗ ∇̃V)]

with q̄ = ½(qn + qn+1) and τ evaluated at the midpoint attitude qn ⊗ s and Ω̃ (so a
torque constant over the step is held). Three unknowns, solved by fixed-point
iteration to the relative tolerance ``tol`` (option, in (0, 1)); the step reports its
iterations and fails loudly (:class:`~rigidrot_gym.physics.rotation.integrators.base.ConvergenceError`)
after ``max_iter`` (option, an integer in [1, 10⁶]).
Carrying (q, Iω) instead of (q, p) keeps the round-off drift of energy and momentum to
~1e-15 over 10⁴ steps, where updating p additively drifts ~1e-12.

Source: M. B. Nielsen and S. Krenk, Proc. 25th Nordic Seminar on Computational
Mechanics (2012) (seed 002), discrete form as in the notes. Order 2 (symmetric, not
symplectic; steady-spin rate error −(ωh)²/48). Torque evaluations per step: one per
iteration. Conserves, to the solver tolerance: H (kinetic + potential energy),
|q| = 1, q·p = 0, and the world angular momentum when τ = 0 and V = 0 (a top: its
vertical component); with τ, the world momentum changes by exactly h q̄ (0, τ) q̄*.
A constant world force at a body point (a top's weight) is quadratic in q; its torque
at the midpoint already is the exact discrete gradient, so such a top also conserves
energy when given as a torque.
"""

import numpy as np

from rigidrot_gym.physics.plumbing.jit import all_true, jitable, select
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.integrators.base import ComponentMethod
from rigidrot_gym.physics.rotation.quaternion import qaxpy, qconj, qdot, qmul, qrotate_inv, qscale


@jitable
def _max_abs3(x):
    return np.maximum(np.maximum(np.abs(x[0]), np.abs(x[1])), np.abs(x[2]))


@jitable
def _potential_load(q0, q1, v0, potential, p):
    """vec(q̄* ⊗ ∇̃V): Gonzalez's discrete gradient at the midpoint q̄, in body axes."""
    mid = qscale(0.5, qaxpy(1.0, q0, q1))
    v1, _ = potential(q1, p)
    _, g = potential(mid, p)
    dq = qaxpy(-1.0, q0, q1)
    dd = qdot(dq, dq)
    correction = select(dd > 0.0, (v1 - v0 - qdot(g, dq)) / select(dd > 0.0, dd, 1.0), 0.0)
    y = qmul(qconj(mid), qaxpy(correction, dq, g))
    return (y[1], y[2], y[3])


@jitable
def _cayley(h, w0, w1):
    """a = (h/8)(ω0 + ω1), |a|², the half rotation s and the full rotation r = s ⊗ s."""
    a = vec.scale(h / 8.0, vec.add(w0, w1))
    aa = vec.dot(a, a)
    c = 1.0 / np.sqrt(1.0 + aa)
    half = (c, c * a[0], c * a[1], c * a[2])
    return aa, half, qmul(half, half)


@jitable
def step(n, t, h, q, w, s, inertia, torque, potential, p, opts):
    tol, max_iter = opts[0], int(opts[1])
    m0 = vec.mul(inertia, w)
    v0, _ = potential(q, p)
    w1 = w
    iterations = 1.0 + 0.0 * q[0]
    change = 0.0 * q[0]
    for k in range(max_iter):
        aa, half, full = _cayley(h, w, w1)
        tau = torque(t + 0.5 * h, qmul(q, half), vec.scale(0.5, vec.add(w, w1)), p)
        load = _potential_load(q, qmul(q, full), v0, potential, p)
        inner = vec.add(qrotate_inv(half, m0), vec.axpy(h / (1.0 + aa), tau, vec.scale(-0.5 * h, load)))
        w_next = vec.div(qrotate_inv(half, inner), inertia)
        change = _max_abs3(vec.sub(w_next, w1)) / (np.maximum(_max_abs3(w_next), _max_abs3(w)) + 1e-300)
        w1 = w_next
        # Bodies of a batch converge at different iterations: count each one's own.
        iterations = select(change > tol, k + 2.0, iterations)
        if all_true(change <= tol):
            break
    iterations = select(change > tol, np.inf, iterations)
    _, _, full = _cayley(h, w, w1)
    return qmul(q, full), w1, s, iterations


# Iteration limit of one step. The fixed point converges linearly; one that has not met the
# tolerance after 10⁶ iterations contracts by less than 1 − 3e-5 per iteration and the step
# is too large. A larger limit would only let a single step spin in compiled code for
# minutes, where Ctrl-C cannot reach it.
MAX_ITER_LIMIT = 10**6


def _check(options):
    if not 0 < options["tol"] < 1:
        raise ValueError(f"method 'nielsen_krenk' option tol must be in (0, 1), got {options['tol']}")


METHOD = ComponentMethod(
    name="nielsen_krenk",
    step=step,
    order=2,
    torque_evals=0,
    torque_evals_per_iteration=1,
    source="Nielsen & Krenk (2012): energy-momentum conserving quaternion scheme (seed 002)",
    options={"tol": 1e-15, "max_iter": 100},
    integers={"max_iter": (1, MAX_ITER_LIMIT)},
    uses_potential=True,
    check=_check,
)
