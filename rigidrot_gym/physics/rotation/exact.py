"""Exact torque-free rigid-body motion: the Euler–Poinsot problem in closed form.

Implements the Jacobi-elliptic solution of Celledoni, Fassò, Säfström & Zanna, "The exact
computation of the free rigid body motion and its use in splitting methods", SIAM J.
Sci. Comput. 30 (2008) 2084–2112, as written in the project notes
(``notes/integrators.md``, "Exact torque-free motion"), with the same conventions as
:mod:`rigidrot_gym.physics.rotation.quaternion`: q scalar-first and body to world, ω in the body frame,
m = Iω the body angular momentum, G = |m|, 2T = ω·Iω.

Regimes (each evaluated exactly, none by perturbing the input):

* asymmetric body, m circulating about the minor or the major axis (Δ_mid < 0 or > 0),
  including pure spins about those axes (A_b = A_c = 0);
* orbits arbitrarily close to the separatrix, such as a spin about the intermediate axis
  with an off-axis part of 1e-16, to the same accuracy (the precession angle and the
  Jacobi functions are evaluated in forms that stay well conditioned as k → 1);
* the separatrix Δ_mid = 0 (sech/tanh form, with the integral of the precession rate in
  closed form), including the unstable pure spin about the intermediate axis;
* symmetric bodies (two moments equal to 1e-12 relative), spheres and ω = 0 by the
  symmetric-top closed form;
* moments of any magnitude (only their ratios matter; see :func:`free_rotation`).

:func:`free_rotation` is component-wise (see :mod:`rigidrot_gym.physics.plumbing.jit`): it runs on one
body's floats inside numba kernels (e.g. as the exact sub-step of a splitting method) and
on tuples of arrays in numpy. :func:`torque_free` and :func:`symmetric_top` are the
batched numpy front ends.
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.plumbing.jit import jitable, select
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.elliptic import ellipfe_reduced_mc, ellipj_reduced_mc, sech
from rigidrot_gym.physics.rotation.inertia import principal_frame, validate_moments
from rigidrot_gym.physics.rotation.quaternion import qconj, qexp, qmul, qnormalize, qrotate

# Two principal moments this close (relative to the largest) count as equal, and the
# body is propagated as a symmetric top.
SYMMETRY_RTOL = 1e-12

# A generic asymmetric state that stands in for a symmetric body (or ω = 0) in the
# asymmetric formulas, which are evaluated but not selected there, so they stay finite.
_DUMMY_INERTIA = (1.0, 2.0, 3.0)
_DUMMY_MOMENTUM = (1.0, 1.0, 1.0)


# ----------------------------------------------------------------------------------
# Component-wise helpers
# ----------------------------------------------------------------------------------


@jitable
def _where3(condition, a, b):
    """Component-wise select for 3-tuples."""
    return (select(condition, a[0], b[0]), select(condition, a[1], b[1]), select(condition, a[2], b[2]))


@jitable
def _where4(condition, a, b):
    """Component-wise select for 4-tuples."""
    return (
        select(condition, a[0], b[0]),
        select(condition, a[1], b[1]),
        select(condition, a[2], b[2]),
        select(condition, a[3], b[3]),
    )


@jitable
def _pick(v, i):
    """Component i ∈ {0, 1, 2} of the 3-tuple v (i may be an integer array)."""
    return select(i == 0, v[0], select(i == 1, v[1], v[2]))


@jitable
def _unit(i):
    """Body basis vector e_i."""
    return (select(i == 0, 1.0, 0.0), select(i == 1, 1.0, 0.0), select(i == 2, 1.0, 0.0))


@jitable
def _moment_scale(inertia):
    """2^⌊log₂ I_max⌋: dividing the moments by it is exact and brings the largest to [1, 2)."""
    return 2.0 ** np.floor(np.log2(np.maximum(np.maximum(inertia[0], inertia[1]), inertia[2])))


@jitable
def _symmetry(inertia):
    """(symmetric, axis): whether two moments coincide to SYMMETRY_RTOL, and the index of
    the remaining (symmetry) axis; axis 2 for a sphere or an asymmetric body."""
    i0, i1, i2 = inertia
    tol = SYMMETRY_RTOL * np.maximum(np.maximum(i0, i1), i2)
    eq01 = np.abs(i0 - i1) <= tol
    eq12 = np.abs(i1 - i2) <= tol
    eq02 = np.abs(i0 - i2) <= tol
    axis = select(eq01, 2, select(eq12, 0, select(eq02, 1, 2)))
    return eq01 | eq12 | eq02, axis


# ----------------------------------------------------------------------------------
# Symmetric top
# ----------------------------------------------------------------------------------


@jitable
def _symmetric_motion(q, m, axis, i_perp, i_axial, t):
    """Symmetric top about the body unit vector ``axis`` (notes, "Symmetric top"):

    q(t) = exp(½ (t/I⊥) L) ⊗ q ⊗ exp(−½ Ωb t axis),  m(t) = R_axis(Ωb t) m,
    Ωb = (I_axial − I⊥) ω_axial / I⊥,  L = q m q* (world). Writing G t/I⊥ · L̂ as t L/I⊥
    needs no division by G, so ω = 0 and the sphere (Ωb = 0) are included.
    """
    m_axial = vec.dot(axis, m)
    angle = (i_axial - i_perp) * m_axial / (i_axial * i_perp) * t
    precession = qexp(vec.scale(0.5 * t / i_perp, qrotate(q, m)))
    q_t = qmul(qmul(precession, q), qexp(vec.scale(-0.5 * angle, axis)))
    # Rodrigues' rotation of m about the axis by the body-cone angle Ωb t.
    c, s = np.cos(angle), np.sin(angle)
    parallel = vec.scale(m_axial, axis)
    m_t = vec.add(vec.axpy(c, vec.sub(m, parallel), parallel), vec.scale(s, vec.cross(axis, m)))
    return q_t, m_t


# ----------------------------------------------------------------------------------
# Asymmetric body
# ----------------------------------------------------------------------------------


@jitable
def _regime_axes(inertia, m):
    """Right-handed principal axes (f1, f2, f3) = (e_a, e_b, ±e_c) of the notes' regime.

    b is the intermediate axis; a is the minor axis when Δ_mid = G² − 2T I_mid ≤ 0 and the
    major axis when Δ_mid > 0, c the other one. Taking f3 = f1 × f2 makes the relabelling
    a proper rotation (the notes' (3, 2, 1) labelling is left-handed), so one set of
    formulas holds in both regimes.
    """
    i0, i1, i2 = inertia
    i_min = select(i0 <= i1, select(i0 <= i2, 0, 2), select(i1 <= i2, 1, 2))
    i_max = select(i0 > i1, select(i0 > i2, 0, 2), select(i1 > i2, 1, 2))
    i_mid = 3 - i_min - i_max
    lo, mid, hi = _pick(inertia, i_min), _pick(inertia, i_mid), _pick(inertia, i_max)
    m_lo, m_hi = _pick(m, i_min), _pick(m, i_max)
    delta_mid = m_lo * m_lo * (lo - mid) / lo + m_hi * m_hi * (hi - mid) / hi
    f1 = _unit(select(delta_mid > 0.0, i_max, i_min))
    f2 = _unit(i_mid)
    return f1, f2, vec.cross(f1, f2)


@jitable
def _moment(inertia, f):
    """Principal moment about the signed basis vector f = ±e_i."""
    return vec.dot(vec.mul(f, f), inertia)


@jitable
def _reduced_amplitude(s, c):
    """(j, sin r, cos r) with φ = jπ + r, |r| ≤ π/2, for the amplitude φ ∈ [−π, π] given by
    s = sin φ and c = cos φ; no angle is formed, so a small cos φ keeps its digits."""
    back = c < 0.0
    j = select(back, select(s < 0.0, -1.0, 1.0), 0.0)
    return j, select(back, -s, s), np.abs(c)


@jitable
def _precession_phase(n, beta, alpha, j, s, c, kc2):
    """B(φ) = α E_n(φ|k²) − (1/β) arctan(β tan φ) at φ = jπ + r (s = sin r, c = cos r ≥ 0),
    the arctan on its continuous branch jπ + atan2(β s, c).

    dB/dφ = (α√(1 − k² sin²φ) − 1)/(1 − n sin²φ) = −(1 − α²)/(1 + α√(1 − k² sin²φ)) lies
    in [−1, 0], so B is as accurate as φ itself, also where dφ/du = dn u → 0.
    """
    _, e_n = ellipfe_reduced_mc(n, j, s, c, kc2)
    return alpha * e_n - (j * np.pi + np.arctan2(beta * s, c)) / beta


@jitable
def _generic_motion(inertia_abc, mu, sigma, amp, two_t, k2, kc2, lam, tau):
    """Unit momentum along (f1, f2, f3) and precession angle ψ off the separatrix.

    In units G = 1 (μ = m/G, τ = G t, λ per unit τ):
    μ = (σ A_a dn u, −A_b sn u, A_c cn u), u = λτ + u0, u0 = F(φ0|k²),
    (sin φ0, cos φ0) ∝ (−μ_b/A_b, μ_c/A_c), where the common factor √|Δa| of A_b, A_c is
    dropped (a pure spin about f1 gives φ0 = 0: φ0 is arbitrary there, no 0/0). u0 comes
    from sin φ0 and cos φ0 through Carlson's form, not through the angle φ0: near the
    intermediate axis cos φ0 and k' are both small and F has slope 1/√(cos²φ0 + k'² sin²φ0).

    Precession. The notes give ψ = (G/I_a) t − Δa/(G I_a λ) [F_α(u) − F_α(u0)] with
    (1 − α²) F_α(u) = Π(n; am u|k²) − (α/β) arctan(β tan am u), α = A_a. Evaluated so,
    ψ fails near the intermediate axis: there am u ≈ ±π/2 (mod π), where
    ∂Π/∂φ = 1/((1 − n sin²φ)√(1 − k² sin²φ)) ≈ 1/((1 − n) k') with k' ∝ ε, the off-axis
    part, so the one-ulp rounding of am u (and of φ0) becomes an error of ~1e-16/ε in ψ,
    a rotation about L (π rad at ε = 1e-16) that leaves energy and |L| untouched. The
    singular part of Π is (1 − α²) F(φ), and F(am u) = u is known exactly: with
    n(α² − 1) = α²k², Π(n; φ) = (1 − α²) F(φ) + α² E_n(φ),
    E_n(φ) = ∫₀^φ √(1 − k² sin²θ)/(1 − n sin²θ) dθ (:func:`ellipfe_reduced_mc`), whose
    slope is at most 1. Hence, using u − u0 = λτ, 1 − α² = A_c² = I_c Δa/(I_c − I_a)
    and Δa = 1 − 2T I_a,
    ψ = 2T τ − (I_c − I_a) α/(I_a I_c λ) [B(am u) − B(φ0)],
    B(φ) = α E_n(φ) − (1/β) arctan(β tan φ) = −(1 − α²) ∫₀^φ dθ/(1 + α√(1 − k² sin²θ)),
    whose slope in φ is bounded: accurate uniformly as ε → 0, and on the separatrix
    (k = 1) it is the closed form of :func:`_separatrix_motion`. No division by 1 − α²
    either, so spins about f1 (α → 1) stay accurate. n = α²k²/(α² − 1) =
    I_a(I_b − I_c)/(I_c(I_b − I_a)) ≤ 0 does not depend on m.

    Near the intermediate axis μ_a and μ_c are small (down to k'), and the splitting
    methods restart from μ(t) every step: am u is therefore never formed, and dn u and
    cn u = ±cn r come from :func:`ellipj_reduced_mc` to relative accuracy. Through
    cos(am u) they had only 1e-16 absolute accuracy, which froze the off-axis growth
    e^(λt) once a step's increment fell below it (ε ≲ 1e-16/(|λ| h)).
    """
    ia, ib, ic = inertia_abc
    aa, ab, ac = amp
    x0 = -mu[1] * np.sqrt(np.abs(ib - ia) / ib)
    y0 = mu[2] * np.sqrt(np.abs(ic - ia) / ic)
    h0 = np.sqrt(x0 * x0 + y0 * y0)
    pole = h0 == 0.0
    h0_safe = select(pole, 1.0, h0)
    j0, s0, c0 = _reduced_amplitude(select(pole, 0.0, x0 / h0_safe), select(pole, 1.0, y0 / h0_safe))
    n = ia * (ib - ic) / (ic * (ib - ia))
    u0, _ = ellipfe_reduced_mc(n, j0, s0, c0, kc2)
    j, s, c, dn = ellipj_reduced_mc(lam * tau + u0, k2, kc2)
    beta = np.sqrt(1.0 - n)
    phase = _precession_phase(n, beta, aa, j, s, c, kc2) - _precession_phase(n, beta, aa, j0, s0, c0, kc2)
    psi = two_t * tau - (ic - ia) * aa / (ia * ic * lam) * phase
    parity = select(j - 2.0 * np.floor(0.5 * j) == 0.0, 1.0, -1.0)
    return (sigma * aa * dn, -ab * parity * s, ac * parity * c), psi


@jitable
def _separatrix_motion(inertia_abc, mu, sigma, amp, delta_a, lam_abs, two_t, tau):
    """Unit momentum and ψ on the separatrix Δ_b = 0 (k = 1), in units G = 1.

    μ = (σ A_a sech u, −A_b tanh u, σ_c A_c sech u): μ_a and μ_c keep their signs σ, σ_c
    on this orbit. u = λτ + u0 with λ = −σ σ_c sgn(I_c − I_a)|λ| and
    sinh u0 = −μ_b A_c / (A_b |μ_c|);
    the pure intermediate spin (μ_c = 0) has u0 = ±∞ and stays put.
    ψ = 2T τ + Δa/(I_a λ) [H(u) − H(u0)], H(u) = (2A_a/A_c) arctan(A_c tanh(u/2)/(1 + A_a)),
    the closed form of the notes' integral ∫ du/(1 + α sech u) (α = A_a); written in u,
    not through am u → ±π/2, it stays accurate as u grows.
    """
    ia, ib, ic = inertia_abc
    aa, ab, ac = amp
    sigma_c = select(mu[2] < 0.0, -1.0, 1.0)
    lam = -sigma * sigma_c * np.sign(ic - ia) * lam_abs
    still = mu[2] == 0.0
    ratio = np.sqrt(ic * (ib - ia) / (ib * (ic - ia)))
    sinh_u0 = select(
        still, select(mu[1] > 0.0, -np.inf, np.inf), -mu[1] * ratio / select(still, 1.0, np.abs(mu[2]))
    )
    u0 = np.arcsinh(sinh_u0)
    u = lam * tau + u0
    # A_c > 0 on the separatrix; the guard only keeps the unselected evaluation finite.
    ac_safe = select(ac > 0.0, ac, 1.0)
    slope = ac_safe / (1.0 + aa)
    h = 2.0 * aa / ac_safe * (np.arctan(slope * np.tanh(0.5 * u)) - np.arctan(slope * np.tanh(0.5 * u0)))
    psi = two_t * tau + delta_a / (ia * lam) * h
    sech_u = sech(u)
    return (sigma * aa * sech_u, -ab * np.tanh(u), sigma_c * ac * sech_u), psi


@jitable
def _to_axis(mu, sigma, f1):
    """p(m): the minimal rotation taking m/G (= μ, unit) to σ f1, (1 + μ·σf1, μ × σf1)/norm."""
    axis = vec.scale(sigma, vec.cross(mu, f1))
    return qnormalize((1.0 + sigma * vec.dot(mu, f1), axis[0], axis[1], axis[2]))


@jitable
def _asymmetric_motion(q, m, inertia, t):
    """(q(t), m(t)) for three distinct moments and m ≠ 0 (notes, "Exact torque-free motion").

    Works in units G = 1 (μ = m/G, τ = G t). The cancellation-free discriminants are
    Δ_i = Σ_j μ_j² (I_j − I_i)/I_j = 1 − 2T I_i; A_a² = I_a Δc/(I_a − I_c),
    A_b² = I_b Δa/(I_b − I_a), A_c² = I_c Δa/(I_c − I_a); k² = Δa(I_b − I_c)/(Δc(I_b − I_a))
    and k'² = 1 − k² = Δb(I_c − I_a)/(Δc(I_b − I_a)), each without cancellation;
    |λ| = √(Δc(I_a − I_b)/(I_a I_b I_c)), λ = −σ sgn(I_c − I_a)|λ| so that Euler's
    equations hold in the right-handed frame (f1, f2, f3). Attitude:
    q(t) = q ⊗ p̄(m) ⊗ exp(½ψ σ f1) ⊗ p(m(t)).
    """
    g = vec.norm(m)
    mu_body = vec.scale(1.0 / g, m)
    # Δ_b below is then bit-identical to the Δ_mid that chose the regime.
    f1, f2, f3 = _regime_axes(inertia, mu_body)
    ia, ib, ic = _moment(inertia, f1), _moment(inertia, f2), _moment(inertia, f3)
    mu = (vec.dot(f1, mu_body), vec.dot(f2, mu_body), vec.dot(f3, mu_body))
    sq = (mu[0] * mu[0], mu[1] * mu[1], mu[2] * mu[2])
    delta_a = sq[1] * (ib - ia) / ib + sq[2] * (ic - ia) / ic
    delta_b = sq[0] * (ia - ib) / ia + sq[2] * (ic - ib) / ic
    delta_c = sq[0] * (ia - ic) / ia + sq[1] * (ib - ic) / ib
    sigma = select(mu[0] < 0.0, -1.0, 1.0)
    amp = (
        np.sqrt(ia * delta_c / (ia - ic)),
        np.sqrt(ib * delta_a / (ib - ia)),
        np.sqrt(ic * delta_a / (ic - ia)),
    )
    lam_abs = np.sqrt(delta_c * (ia - ib) / (ia * ib * ic))
    separatrix = delta_b == 0.0
    # Stand-in parameters on the separatrix, where the generic branch is not selected.
    k2 = select(separatrix, 0.5, delta_a * (ib - ic) / (delta_c * (ib - ia)))
    kc2 = select(separatrix, 0.5, delta_b * (ic - ia) / (delta_c * (ib - ia)))
    lam = -sigma * np.sign(ic - ia) * lam_abs
    tau = g * t
    inertia_abc = (ia, ib, ic)
    two_t = sq[0] / ia + sq[1] / ib + sq[2] / ic
    mu_gen, psi_gen = _generic_motion(inertia_abc, mu, sigma, amp, two_t, k2, kc2, lam, tau)
    mu_sep, psi_sep = _separatrix_motion(inertia_abc, mu, sigma, amp, delta_a, lam_abs, two_t, tau)
    mu_t = _where3(separatrix, mu_sep, mu_gen)
    psi = select(separatrix, psi_sep, psi_gen)
    mu_t_body = vec.axpy(mu_t[0], f1, vec.axpy(mu_t[1], f2, vec.scale(mu_t[2], f3)))
    spin = qexp(vec.scale(0.5 * psi * sigma, f1))
    q_t = qmul(qmul(qmul(q, qconj(_to_axis(mu_body, sigma, f1))), spin), _to_axis(mu_t_body, sigma, f1))
    return q_t, vec.scale(g, mu_t_body)


# ----------------------------------------------------------------------------------
# Any body
# ----------------------------------------------------------------------------------


@jitable
def free_rotation(q, w, inertia, t):
    """Exact torque-free motion from (q, ω) over a time offset t (any sign).

    Args:
        q: attitude (w, x, y, z), unit, body to world.
        w: body rates (x, y, z).
        inertia: positive principal moments (I1, I2, I3) of the body axes, in any order
            (unchecked here; :func:`torque_free` validates them).
        t: time offset, broadcastable with the components.

    Returns:
        (q(t), ω(t)) as a 4-tuple and a 3-tuple. Symmetric bodies (two moments equal to
        SYMMETRY_RTOL), spheres and ω = 0 take the symmetric-top closed form; all other
        bodies the elliptic solution, on or off the separatrix.

    The motion depends on the moments only through their ratios (I ω̇ = Iω × ω is
    unchanged by I → sI), so they are first divided by a power of two near the largest
    (:func:`_moment_scale`): exact in floating point, so the result is the same, bit for
    bit, as for unscaled moments, and products such as I_a I_b I_c in λ or |m|² neither
    overflow nor underflow for moments scaled by 1e±150 or beyond.
    """
    scale = _moment_scale(inertia)
    inertia = (inertia[0] / scale, inertia[1] / scale, inertia[2] / scale)
    m = vec.mul(inertia, w)
    symmetric, axis_index = _symmetry(inertia)
    use_symmetric = symmetric | (vec.dot(m, m) == 0.0)
    i_axial = _pick(inertia, axis_index)
    i_perp = 0.5 * (inertia[0] + inertia[1] + inertia[2] - i_axial)
    q_sym, m_sym = _symmetric_motion(q, m, _unit(axis_index), i_perp, i_axial, t)
    q_asym, m_asym = _asymmetric_motion(
        q,
        _where3(use_symmetric, _DUMMY_MOMENTUM, m),
        _where3(use_symmetric, _DUMMY_INERTIA, inertia),
        t,
    )
    m_t = _where3(use_symmetric, m_sym, m_asym)
    return _where4(use_symmetric, q_sym, q_asym), vec.div(m_t, inertia)


# ----------------------------------------------------------------------------------
# Public batched API
# ----------------------------------------------------------------------------------


def _times(t) -> np.ndarray:
    t = np.asarray(t, dtype=np.float64)
    if t.ndim > 1:
        raise ValueError(f"t must be a scalar or a 1-D array of times, got shape {t.shape}")
    if not np.all(np.isfinite(t)):
        raise ValueError(f"t must be finite, got {t[~np.isfinite(t)][0] if t.ndim else t}")
    return t


def _broadcast(t: np.ndarray, *arrays: np.ndarray) -> tuple[list[tuple], np.ndarray]:
    """Component tuples of the (..., n) arrays and the times, all broadcast to the output
    shape t.shape + batch, the batch being the broadcast of the arrays' leading shapes."""
    batch = np.broadcast_shapes(*(a.shape[:-1] for a in arrays))
    shape = t.shape + batch
    components = [tuple(np.broadcast_to(a[..., i], shape) for i in range(a.shape[-1])) for a in arrays]
    return components, np.broadcast_to(t.reshape(t.shape + (1,) * len(batch)), shape)


def _stack(components) -> np.ndarray:
    return np.stack(np.broadcast_arrays(*components), axis=-1)


def torque_free(q0, omega0, inertia, t, *, check_triangle: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Exact torque-free attitude and body rates at the times t, from the initial state.

    Each time is evaluated directly from (q0, ω0), with no stepping, so the error does not
    grow with the number of outputs.

    Args:
        q0 ((..., 4) array): unit initial attitudes, scalar-first, body to world.
        omega0 ((..., 3) array): initial body rates (rad/s).
        inertia ((..., 3) or (..., 3, 3) array): principal moments of the body axes, in
            any order, or body-frame tensors (read as
            :func:`~rigidrot_gym.physics.rotation.inertia.principal_frame` reads them, as
            ``propagate`` does: an array whose last two axes are 3 × 3 is a tensor; three
            bodies' moments are (3, 1, 3)). A tensor's motion is solved in its principal
            axes and returned in the body frame given.
        t (scalar or (T,) array): times after the initial state (negative allowed).
        check_triangle: reject moments violating I1 + I2 ≥ I3 (no rigid body has them;
            pass False for seed 003's I = (2, 2, 8) as a bare ODE).

    Returns:
        q ((T, ..., 4) or (..., 4)) and omega ((T, ..., 3) or (..., 3)); the batch shape
        ``...`` is the broadcast of the inputs' leading shapes.

    Raises:
        ValueError: on wrong shapes, non-finite values, non-unit q0, non-positive moments
            or moments that violate the triangle inequality.
    """
    q0 = validation.unit_quaternions(q0, "q0")
    omega0 = validation.vectors(omega0, "omega0", 3)
    check_triangle = validation.boolean(check_triangle, "check_triangle")
    moments, principal, _ = principal_frame(inertia, triangle=check_triangle)
    if principal is not None:  # q_p = q ⊗ B and ω_p = B* ω B in principal axes
        q0, omega0 = quat.multiply(q0, principal), quat.rotate_inverse(principal, omega0)
    (q, w, moments), times = _broadcast(_times(t), q0, omega0, moments)
    q_t, w_t = free_rotation(q, w, moments, times)
    q_t, w_t = _stack(q_t), _stack(w_t)
    if principal is None:
        return q_t, w_t
    return quat.multiply(q_t, quat.conjugate(principal)), quat.rotate(principal, w_t)


def symmetric_top(
    q0, omega0, i_perp, i_axial, t, *, check_triangle: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Closed-form torque-free motion of a symmetric top, I = diag(I⊥, I⊥, I_axial).

    q(t) = exp(½ (G t/I⊥) L̂) ⊗ q0 ⊗ exp(−½ Ωb t e3), m(t) = Rz(Ωb t) m0,
    Ωb = (I_axial − I⊥) ω3 / I⊥ (notes, "Symmetric top"; exp(v) = (cos|v|, sin|v| v̂)).
    The symmetry axis is body z.

    Args:
        q0 ((..., 4) array): unit initial attitudes.
        omega0 ((..., 3) array): initial body rates.
        i_perp (scalar or (...) array): transverse moment, broadcast with the batch.
        i_axial (scalar or (...) array): axial moment, broadcast with the batch.
        t (scalar or (T,) array): times (negative allowed).

    Returns:
        q ((T, ..., 4) or (..., 4)) and omega ((T, ..., 3) or (..., 3)), as
        :func:`torque_free`.

    Raises:
        ValueError: as :func:`torque_free`.
    """
    q0 = validation.unit_quaternions(q0, "q0")
    omega0 = validation.vectors(omega0, "omega0", 3)
    i_perp = np.asarray(i_perp, dtype=np.float64)
    i_axial = np.asarray(i_axial, dtype=np.float64)
    moments = np.stack(np.broadcast_arrays(i_perp, i_perp, i_axial), axis=-1)
    moments = validate_moments(moments, "(i_perp, i_perp, i_axial)", triangle=check_triangle)
    (q, w, moments), times = _broadcast(_times(t), q0, omega0, moments)
    scale = _moment_scale(moments)  # exact; see free_rotation
    moments = (moments[0] / scale, moments[1] / scale, moments[2] / scale)
    q_t, m_t = _symmetric_motion(q, vec.mul(moments, w), (0.0, 0.0, 1.0), moments[0], moments[2], times)
    return _stack(q_t), _stack(vec.div(m_t, moments))
