"""Attitude-control thrusters as Basilisk models them: the set's force and torque, the
torque-to-force mapping, the pulse modulation of forces into on-times and a torque term.

A set of k thrusters at body points r_k (m, from the centre of mass, the body origin) pushes
the body along the unit directions d_k. Forces f_k (N, 0 ≤ f_k ≤ F_max,k) give

    F = Σ f_k d_k,   τ = Σ f_k r_k × d_k,

and a firing of t_k seconds at full thrust burns F_max,k t_k / (Isp_k g₀) of propellant
(g₀ = 9.80665 m/s², Basilisk's ``EARTH_GRAV``; the mass flow ṁ = F/(Isp g₀) of
``ThrusterDynamicEffector::computeStateContribution``).

A controller's body torque request becomes thruster forces by :func:`map_forces`, Basilisk's
``thrForceMapping``, and the forces become on-times per control period by
:func:`schmitt_on_time` (``thrFiringSchmitt``) or :func:`remainder_on_time`
(``thrFiringRemainder``). A period's on-times act on the body through :func:`term`, a term of
the compiled torque model (:mod:`rigidrot_gym.physics.rotation.torques`): each thruster's full
torque from the period's start until its on-time ends.

Source: AVSLab/basilisk, ``src/fswAlgorithms/effectorInterfaces/thrForceMapping/thrForceMapping.c``
(``Update_thrForceMapping``, ``findMinimumNormForce``, ``substractMin``,
``computeTorqueAngErr``; the equation numbers of its ``_Documentation/secModuleDescription.tex``
are quoted below), ``thrFiringSchmitt/thrFiringSchmitt.c`` and
``thrFiringRemainder/thrFiringRemainder.c`` (their ``Update_`` functions),
``src/simulation/dynamics/Thrusters/thrusterDynamicEffector/thrusterDynamicEffector.cpp``
(``computeForceTorque``, ``computeStateContribution``) and the preset of
``src/utilities/simIncludeThruster.py`` (read at the development head, whose changes to these
files since 2.12.1 touch only their logging; checked against the ``bsk`` 2.12.1 wheel by the
side-by-side tests in ``tests/test_thrusters.py``).

Units: SI (N, m, s, kg, N·m). Left out: Basilisk's thrust ramps (none unless a ramp is given),
thrust dispersion, swirl torque, blow-down and the mass-flow ("jet damping") force and torque,
which ``updateOnly`` (default ``True``) switches off.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.plumbing.jit import jitable, select
from rigidrot_gym.physics.rotation import torques

G0 = 9.80665  # m/s², standard gravity: Isp (s) to exhaust speed (Basilisk's EARTH_GRAV)

# Basilisk's MAX_EFF_CNT: its thruster messages hold at most this many.
MAX_THRUSTERS = 36

# Basilisk's factor for an on-time request of a whole control period or more
# (thrFiringSchmitt.c, thrFiringRemainder.c: "oversaturate to avoid numerical error"): the
# firing then outlasts the period, and the next period's command cuts it.
OVERSATURATION = 1.1


def _per_thruster(value, name: str, count: int, minimum: str) -> np.ndarray:
    """``value`` (a number or (count,) numbers) as a (count,) float array, each > 0
    (``minimum="positive"``) or ≥ 0 (``"non-negative"``)."""
    a = validation.floats(value, name)
    if a.ndim > 1 or (a.ndim == 1 and a.shape != (count,)):
        raise ValueError(f"{name} must be a number or have shape ({count},), got shape {a.shape}")
    bad = ~np.isfinite(a) | ((a <= 0.0) if minimum == "positive" else (a < 0.0))
    if np.any(bad):
        raise ValueError(f"{name} must be {minimum} finite numbers, got {validation.show(a.tolist())}")
    out = np.array(np.broadcast_to(a, (count,)))
    out.setflags(write=False)
    return out


@dataclass(frozen=True)
class ThrusterSet:
    """k thrusters fixed in the body. The constructor checks every field (a ``ValueError``
    names it) and stores each as a read-only float array.

    Attributes:
        positions: (k, 3) points r_k where the thrusts act, body frame, m, from the centre of
            mass (Basilisk ``thrLoc_B`` / ``rThrust_B``).
        directions: (k, 3) unit directions d_k of the force on the body (``thrDir_B`` /
            ``tHatThrust_B``); within 1e-6 of unit norm they are normalised, as Basilisk's
            factory normalises them.
        max_thrust: (k,) or one number, F_max, N, > 0 (``MaxThrust``).
        min_on_time: (k,) or one number, s, ≥ 0 (``MinOnTime``): a shorter command to an idle
            thruster fires nothing (the factory zeroes it unless ``useMinPulseTime=True``).
        isp: (k,) or one number, specific impulse, s, > 0 (``steadyIsp``).
    """

    positions: np.ndarray
    directions: np.ndarray
    max_thrust: np.ndarray
    min_on_time: np.ndarray
    isp: np.ndarray

    def __post_init__(self) -> None:
        positions = validation.vectors(self.positions, "positions", 3)
        if positions.ndim != 2 or not 1 <= positions.shape[0] <= MAX_THRUSTERS:
            raise ValueError(
                f"positions must have shape (k, 3) with 1 ≤ k ≤ {MAX_THRUSTERS}, got shape {positions.shape}"
            )
        k = positions.shape[0]
        directions = validation.vectors(self.directions, "directions", 3)
        if directions.shape != (k, 3):
            raise ValueError(
                f"directions must have shape ({k}, 3) as positions, got shape {directions.shape}"
            )
        norms = np.linalg.norm(directions, axis=1)
        off = np.abs(norms - 1.0)
        if np.any(off > validation.UNIT_TOLERANCE):
            i = int(np.argmax(off))
            raise ValueError(
                f"directions must be unit vectors, got {directions[i].tolist()} (row {i}) "
                f"with norm {norms[i]:.9g}"
            )
        for name, value in (("positions", positions), ("directions", directions / norms[:, None])):
            value = np.array(value)
            value.setflags(write=False)
            object.__setattr__(self, name, value)
        object.__setattr__(self, "max_thrust", _per_thruster(self.max_thrust, "max_thrust", k, "positive"))
        object.__setattr__(
            self, "min_on_time", _per_thruster(self.min_on_time, "min_on_time", k, "non-negative")
        )
        object.__setattr__(self, "isp", _per_thruster(self.isp, "isp", k, "positive"))

    @property
    def count(self) -> int:
        """k, the number of thrusters."""
        return self.positions.shape[0]

    @property
    def torque_arms(self) -> np.ndarray:
        """(k, 3) r_k × d_k: each thruster's torque per newton, m (the columns of Basilisk's
        [D], Eq. 6 of thrForceMapping's description)."""
        return np.cross(self.positions, self.directions)

    def _forces(self, forces) -> np.ndarray:
        f = validation.finite_floats(forces, "forces")
        if f.shape[-1:] != (self.count,):
            raise ValueError(f"forces must have shape (..., {self.count}), got shape {f.shape}")
        return f

    def force(self, forces) -> np.ndarray:
        """(..., 3) F = Σ f_k d_k, N, body frame, for thruster forces (..., k), N."""
        return self._forces(forces) @ self.directions

    def torque(self, forces) -> np.ndarray:
        """(..., 3) τ = Σ f_k r_k × d_k, N·m, body frame, about the centre of mass."""
        return self._forces(forces) @ self.torque_arms

    def propellant(self, on_times) -> np.ndarray:
        """(...) propellant burnt, kg, by full-thrust firings of on-times (..., k), s:
        Σ F_max,k t_k / (Isp_k g₀) (:func:`propellant_mass`)."""
        t = validation.finite_floats(on_times, "on_times")
        if t.shape[-1:] != (self.count,):
            raise ValueError(f"on_times must have shape (..., {self.count}), got shape {t.shape}")
        return np.sum(propellant_mass(self.max_thrust, t, self.isp), axis=-1)


@jitable
def propellant_mass(force, on_time, isp):
    """Propellant burnt, kg, by a thrust ``force`` (N) held ``on_time`` (s) at specific impulse
    ``isp`` (s): F t / (Isp g₀), Basilisk's mass flow ṁ = F/(Isp g₀) over the firing."""
    return force * on_time / (isp * G0)


@dataclass(frozen=True)
class ThrusterModel:
    """One thruster type's figures: ``max_thrust`` (N), ``min_on_time`` (s), ``isp`` (s)."""

    max_thrust: float
    min_on_time: float
    isp: float

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "max_thrust", validation.scalar(self.max_thrust, "max_thrust", positive=True)
        )
        min_on_time = validation.scalar(self.min_on_time, "min_on_time")
        if min_on_time < 0.0:
            raise ValueError(f"min_on_time must be a finite number ≥ 0, got {min_on_time!r}")
        object.__setattr__(self, "min_on_time", min_on_time)
        object.__setattr__(self, "isp", validation.scalar(self.isp, "isp", positive=True))


# MOOG MONARC-1 hydrazine monopropellant thruster, as Basilisk's simIncludeThruster.py
# (thrusterFactory "MOOG_Monarc_1", after MOOG's "Monopropellant Thrusters" data sheet, rev
# 0613): 0.9 N, 20 ms minimum on-time, Isp 227.5 s. Its nozzle area 7.9e-5 m² only enters
# Basilisk's mass-flow torque, which is off by default (updateOnly) and left out here.
MOOG_MONARC_1 = ThrusterModel(max_thrust=0.9, min_on_time=0.020, isp=227.5)

# VACCO's MiPS cold-gas thruster (isobutane at 40 psia) of the MEPSI picosatellite, as
# Osiander et al., "MEMS and Microstructures in Aerospace Applications" (CRC, 2005), Table
# 11.8 gives it: 55 mN, 10 ms minimum pulse (0.55 mN·s minimum impulse bit), Isp 65 s.
VACCO_MIPS = ThrusterModel(max_thrust=0.055, min_on_time=0.010, isp=65.0)


def eight_thrusters(half_sizes, model: ThrusterModel = MOOG_MONARC_1, inset: float = 0.0) -> ThrusterSet:
    """Eight thrusters on a box of half-sizes (a, b, c) (m, body axes), two at each end of the
    vertical edges (−a, −b) and (a, b): the layout of Basilisk's thrForceMapping tests
    (``test_thrForceMapping.py``, its 8-thruster RCS set), for any box.

    At each of the four corners (∓a, ∓b, ±c) one thruster on the x face pushes along ±x and
    one on the y face along ±y, each at m = min(a, b) − ``inset`` from the other face's mid
    plane, so that their torques about z are ±m alike:

        +x at (−a, −m, ±c), +y at (−m, −b, ±c), −y at (m, b, ±c), −x at (a, m, ±c)

    (top face first, then the bottom one). Their torques r × d, (0, ±c, m) and (±c, 0, −m),
    sum to zero (all eight firing: no torque, what Basilisk's ``substractMin`` assumes), and
    non-negative forces give any torque: e.g. +x from the −y thruster on top and the +y one at
    the bottom, their −z torque cancelled by the two x-thrusters whose z torques are +m. The
    two x-thrusters of a corner pair (one at each corner, opposite directions) are a pure
    couple: no net force. Basilisk's test set is ``half_sizes=(0.8636, 0.8636, 1.7907)``,
    ``inset=0.0381``.
    """
    sizes = validation.vectors(half_sizes, "half_sizes", 3)
    if sizes.shape != (3,) or not np.all(sizes > 0.0):
        raise ValueError(f"half_sizes must be three positive numbers, got {validation.show(half_sizes)}")
    a, b, c = sizes.tolist()
    inset = validation.scalar(inset, "inset")
    m = min(a, b) - inset
    if not 0.0 < m <= min(a, b):
        raise ValueError(f"inset must be in [0, min(a, b)) = [0, {min(a, b)!r}), got {inset!r}")
    if not isinstance(model, ThrusterModel):
        raise ValueError(f"model must be a ThrusterModel, got {validation.show(model)}")
    positions, directions = [], []
    for z in (c, -c):
        positions += [(-a, -m, z), (-m, -b, z), (m, b, z), (a, m, z)]
        directions += [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, -1.0, 0.0), (-1.0, 0.0, 0.0)]
    return ThrusterSet(positions, directions, model.max_thrust, model.min_on_time, model.isp)


# -- thrForceMapping --------------------------------------------------------------------------


def _minimum_norm_forces(
    axes: np.ndarray, arms: np.ndarray, request: np.ndarray, epsilon: float
) -> np.ndarray:
    """``findMinimumNormForce``: F = (C D)ᵀ [(C D)(C D)ᵀ]⁻¹ L̄ (Eq. 15), the inverse taken as
    zero unless its determinant exceeds ε. [C] has the n control axes as its first rows and
    zeros below; the lower right block of (C D)(C D)ᵀ is the identity (the C source starts from
    one), so that with fewer than three axes the matrix stays invertible and L̄'s zeros map to
    nothing. ``arms`` is [D] (3, k)."""
    n = axes.shape[0]
    cd = np.zeros((3, arms.shape[1]))
    cd[:n] = axes @ arms
    gram = np.eye(3)
    gram[:n, :n] = cd[:n] @ cd[:n].T
    inverse = np.linalg.inv(gram) if np.linalg.det(gram) > epsilon else np.zeros((3, 3))
    return cd.T @ (inverse @ request)


def _subtract_min(forces: np.ndarray) -> np.ndarray:
    """``substractMin``: F − min(0, min F), so that the smallest force becomes zero (adding a
    multiple of the all-ones vector, assumed in the null space of [D])."""
    return forces - min(0.0, float(np.min(forces))) if forces.size else forces


def _angle_error(arms: np.ndarray, request: np.ndarray, forces: np.ndarray, max_thrust: np.ndarray, epsilon):
    """``computeTorqueAngErr`` (Eq. 16): the angle between L̄ and the torque [D] F of the forces
    clipped to ±F_max, zero where |L̄| ≤ ε. As the C source has it, L̄ is compared in control-axis
    components with a body-frame torque (the same thing for the three body axes)."""
    if np.linalg.norm(request) <= epsilon:
        return 0.0
    clipped = np.where(np.abs(forces) < max_thrust, forces, max_thrust * np.sign(forces))
    actual = arms @ clipped
    norm = np.linalg.norm(actual)
    # Basilisk's v3Normalize leaves a zero vector zero (below its DB0_EPS, 1e-30).
    cosine = float(request / np.linalg.norm(request) @ (actual / norm if norm > 1e-30 else actual))
    return float(np.arccos(min(1.0, max(-1.0, cosine)))) if cosine < 1.0 else 0.0


def map_forces(
    torque,
    thrusters: ThrusterSet,
    *,
    center_of_mass=(0.0, 0.0, 0.0),
    control_axes=((1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)),
    thr_force_sign: int = 1,
    ang_err_thresh: float = 0.0,
    epsilon: float = 0.0,
    use_2nd_loop: bool = False,
) -> np.ndarray:
    """Thruster forces (k,), N, for a body torque request ``torque`` (3,), N·m: Basilisk's
    ``thrForceMapping`` (``Update_thrForceMapping``), step by step.

    1. Arms about the centre of mass: [D] = [(r_k − r_CoM) × d_k] (Eqs. 4, 6). With
       ``thr_force_sign`` = −1 (off-pulsing: thrusters on by default, commanded down) the
       request is offset by the torque of all thrusters at full thrust,
       L ← L − Σ F_max,k (r_k − r_CoM) × d_k (Eqs. 5, 7).
    2. L̄ = [C] L, the request in the ``control_axes`` (normalised; counted up to the first of
       norm ≤ ε; [C] their rows, zero below).
    3. The minimum-norm forces F = (C D)ᵀ [(C D)(C D)ᵀ]⁻¹ L̄ (Eq. 15); with ``thr_force_sign``
       = +1, F ← F − min(0, min F) (valid where all thrusters firing together give no torque,
       as with :func:`eight_thrusters`).
    4. With ``thr_force_sign`` = −1 or ``use_2nd_loop``: the same again with only the thrusters
       whose force has the sign wanted (F_k · sign > 0; Eqs. 11, 12), the others zero.
    5. If the angle between L̄ and the torque of the forces clipped to ±F_max (Eq. 16) exceeds
       ``ang_err_thresh`` (rad) and a force exceeds its F_max, all are scaled down by the
       largest ratio |F_k|/F_max,k. A negative threshold scales always, one of π never.

    The forces are not clipped otherwise (a request beyond the set's reach comes out beyond
    F_max where the angle stays within the threshold), and with ``thr_force_sign`` = −1 they
    are the (negative) reductions from full thrust, as Basilisk outputs them. ``epsilon``
    (Basilisk's, default 0) bounds the axes' norms, the determinant and |L̄| below which each
    counts as zero.
    """
    request = validation.vectors(torque, "torque", 3)
    if request.shape != (3,):
        raise ValueError(f"torque must have shape (3,), got shape {request.shape}")
    if not isinstance(thrusters, ThrusterSet):
        raise ValueError(f"thrusters must be a ThrusterSet, got {validation.show(thrusters)}")
    com = validation.vectors(center_of_mass, "center_of_mass", 3)
    if com.shape != (3,):
        raise ValueError(f"center_of_mass must have shape (3,), got shape {com.shape}")
    axes = validation.vectors(control_axes, "control_axes", 3)
    if axes.ndim != 2 or not 1 <= axes.shape[0] <= 3:
        raise ValueError(f"control_axes must have shape (n, 3), 1 ≤ n ≤ 3, got shape {axes.shape}")
    if thr_force_sign not in (1, -1) or isinstance(thr_force_sign, bool):
        raise ValueError(f"thr_force_sign must be +1 or -1, got {validation.show(thr_force_sign)}")
    ang_err_thresh = validation.scalar(ang_err_thresh, "ang_err_thresh")
    epsilon = validation.scalar(epsilon, "epsilon")
    if epsilon < 0.0:
        raise ValueError(f"epsilon must be a finite number ≥ 0, got {epsilon!r}")
    use_2nd_loop = validation.boolean(use_2nd_loop, "use_2nd_loop")

    # Reset_thrForceMapping: the axes up to the first one of norm ≤ ε, normalised as
    # v3Normalize does (times 1/|v|).
    norms = np.linalg.norm(axes, axis=1)
    n = int(np.argmin(np.append(norms > epsilon, False)))
    if n == 0:
        raise ValueError(f"control_axes must start with an axis of norm > epsilon, got {axes.tolist()}")
    axes = axes[:n] * (1.0 / norms[:n, None])

    arms = np.cross(thrusters.positions - com, thrusters.directions).T  # [D], 3 × k
    request = request.copy()
    if thr_force_sign < 0:
        request = request - arms @ thrusters.max_thrust
    request_bar = np.zeros(3)
    request_bar[:n] = axes @ request

    forces = _minimum_norm_forces(axes, arms, request_bar, epsilon)
    if thr_force_sign > 0:
        forces = _subtract_min(forces)
    if thr_force_sign < 0 or use_2nd_loop:
        used = forces * thr_force_sign > 0.0
        reduced = _minimum_norm_forces(axes, arms[:, used], request_bar, epsilon)
        if thr_force_sign > 0:
            reduced = _subtract_min(reduced)
        forces = np.zeros(thrusters.count)
        forces[used] = reduced

    if _angle_error(arms, request_bar, forces, thrusters.max_thrust, epsilon) > ang_err_thresh:
        largest = float(np.max(np.abs(forces) / thrusters.max_thrust))
        if largest > 1.0:
            forces = forces * (1.0 / largest)
    return forces


def mapping_matrix(thrusters: ThrusterSet) -> np.ndarray:
    """(k, 3) the matrix Dᵀ (D Dᵀ)⁻¹ of :func:`map_forces`' minimum-norm step for the body
    axes as control axes and the centre of mass at the origin (Eq. 15), column j the forces
    of a unit torque about body axis j: what :func:`map_torque` multiplies a request by."""
    if not isinstance(thrusters, ThrusterSet):
        raise ValueError(f"thrusters must be a ThrusterSet, got {validation.show(thrusters)}")
    arms, axes = thrusters.torque_arms.T, np.eye(3)
    return np.stack([_minimum_norm_forces(axes, arms, axes[j], 0.0) for j in range(3)], axis=1)


@jitable
def map_torque(matrix, max_thrust, request, forces):
    """Basilisk's ``thrForceMapping`` with the body axes as control axes, ``thrForceSign``
    +1, no second loop and an angle threshold of 0 (:func:`map_forces` with its defaults),
    in a form a compiled loop over bodies can call: the minimum-norm forces F = M L
    (``matrix`` M of :func:`mapping_matrix`, ``request`` L a 3-sequence, N·m), less their
    smallest where it is negative (Basilisk's ``substractMin``), then all scaled down by the
    largest F_k / F_max,k where one exceeds its ``max_thrust`` (the angle rule: clipping the
    forces turns the torque). Writes the k forces (N) into ``forces``."""
    low = 0.0
    for k in range(matrix.shape[0]):
        forces[k] = matrix[k, 0] * request[0] + matrix[k, 1] * request[1] + matrix[k, 2] * request[2]
        low = min(low, forces[k])
    largest = 0.0
    for k in range(matrix.shape[0]):
        forces[k] = forces[k] - low
        largest = max(largest, forces[k] / max_thrust[k])
    if largest > 1.0:
        scale = 1.0 / largest
        for k in range(matrix.shape[0]):
            forces[k] = forces[k] * scale


# -- pulse modulation: thrFiringSchmitt and thrFiringRemainder ----------------------------------
#
# Both Basilisk modules output nothing useful at their first call after a reset: there is no
# control period yet, and they send baseThrustState × 2 s to every thruster. Their first call
# is recognised by a zero previous call time, so a module that first runs at t = 0 takes its
# second call (at t = Δt) for a first one too. The functions here are the later calls; the
# state they take starts as Basilisk's Reset leaves it (all off, no remainder).


@jitable
def _requested_on_time(force, max_thrust, period, base_thrust_state):
    """The on-time before modulation: off-pulsing (``base_thrust_state`` 1) adds F_max to the
    (negative) request; negative requests count as zero; t = f / F_max · Δt."""
    f = select(base_thrust_state == 1, force + max_thrust, force)
    f = select(f < 0.0, 0.0, f)
    return f / max_thrust * period


@jitable
def schmitt_on_time(force, last_on, max_thrust, period, min_on_time, level_on, level_off, base_thrust_state):
    """Basilisk's ``thrFiringSchmitt`` for one thruster and one control period of ``period``
    (s): the on-time (s) for the force request ``force`` (N), and the trigger's new state.

    The request t = f / F_max · Δt (negative requests as zero). Below the minimum on-time
    t_min a Schmitt trigger on the duty level ℓ = t / t_min decides: ℓ ≥ ``level_on`` fires
    t_min and turns the state on; ℓ ≤ ``level_off`` fires nothing and turns it off; between
    them, t_min if ``last_on`` else nothing, the state unchanged. From t_min up the request
    fires as it is and turns the state on; at or above Δt it comes out as 1.1 Δt
    (:data:`OVERSATURATION`: the firing outlasts the period until the next command).

    Floats (compiled) or arrays over thrusters (numpy); returns ``(on_time, last_on)``.
    """
    on = _requested_on_time(force, max_thrust, period, base_thrust_state)
    short = on < min_on_time
    # Only read where short, which needs t_min > 0 (t ≥ 0): the divisor stays non-zero.
    level = on / select(short, min_on_time, 1.0)
    trigger = (level >= level_on) | ((level > level_off) & last_on)
    fired = select(on >= period, OVERSATURATION * period, on)
    return select(short, select(trigger, min_on_time, 0.0), fired), select(short, trigger, True)


@jitable
def remainder_on_time(force, remainder, max_thrust, period, min_on_time, base_thrust_state):
    """Basilisk's ``thrFiringRemainder`` for one thruster and one control period of
    ``period`` (s): the on-time (s) for the force request ``force`` (N), and the new remainder.

    The request t = f / F_max · Δt plus the carried remainder (a count of minimum on-times,
    ``remainder`` · t_min). Below t_min nothing fires and all of it is carried (t / t_min);
    otherwise it fires and nothing is carried, at or above Δt as 1.1 Δt
    (:data:`OVERSATURATION`).

    Floats (compiled) or arrays over thrusters (numpy); returns ``(on_time, remainder)``.
    """
    on = _requested_on_time(force, max_thrust, period, base_thrust_state) + remainder * min_on_time
    short = on < min_on_time
    carried = select(short, on / select(short, min_on_time, 1.0), 0.0)
    return select(short, 0.0, select(on >= period, OVERSATURATION * period, on)), carried


def _sequence_arguments(forces, thrusters: ThrusterSet, period, base_thrust_state):
    f = validation.finite_floats(forces, "forces")
    if f.ndim != 2 or f.shape[1] != thrusters.count:
        raise ValueError(f"forces must have shape (periods, {thrusters.count}), got shape {f.shape}")
    period = validation.scalar(period, "period", positive=True)
    if base_thrust_state not in (0, 1) or isinstance(base_thrust_state, bool):
        raise ValueError(
            f"base_thrust_state must be 0 (on-pulsing) or 1 (off-pulsing), got {base_thrust_state!r}"
        )
    return f, period


def schmitt_on_times(
    forces,
    thrusters: ThrusterSet,
    period: float,
    level_on: float,
    level_off: float,
    base_thrust_state: int = 0,
) -> np.ndarray:
    """(periods, k) on-times, s, for a sequence of force requests (periods, k), N, one per
    control period of ``period`` s, by :func:`schmitt_on_time` from all thrusters off, with the
    set's F_max and minimum on-times (Basilisk's ``thrMinFireTime`` is one for all; here each
    thruster has its own)."""
    f, period = _sequence_arguments(forces, thrusters, period, base_thrust_state)
    for name, level in (("level_on", level_on), ("level_off", level_off)):
        validation.scalar(level, name)
    last = np.zeros(thrusters.count, dtype=bool)
    out = np.empty_like(f)
    for n in range(f.shape[0]):
        out[n], last = schmitt_on_time(
            f[n],
            last,
            thrusters.max_thrust,
            period,
            thrusters.min_on_time,
            level_on,
            level_off,
            base_thrust_state,
        )
    return out


def remainder_on_times(
    forces, thrusters: ThrusterSet, period: float, base_thrust_state: int = 0
) -> np.ndarray:
    """(periods, k) on-times, s, for a sequence of force requests (periods, k), N, by
    :func:`remainder_on_time` from no remainder, with the set's F_max and minimum on-times."""
    f, period = _sequence_arguments(forces, thrusters, period, base_thrust_state)
    remainder = np.zeros(thrusters.count)
    out = np.empty_like(f)
    for n in range(f.shape[0]):
        out[n], remainder = remainder_on_time(
            f[n], remainder, thrusters.max_thrust, period, thrusters.min_on_time, base_thrust_state
        )
    return out


# -- the torque term ----------------------------------------------------------------------------

PARAMETERS = 4  # per thruster in a term's parameters: its torque at full thrust (3), its on-time


def term_parameters(thrusters: ThrusterSet, on_times) -> np.ndarray:
    """(..., 4 k) parameters of :func:`term` for on-times (..., k), s: per thruster
    F_max,k r_k × d_k (N·m, the set's body frame) and t_k."""
    t = validation.finite_floats(on_times, "on_times")
    if t.shape[-1:] != (thrusters.count,):
        raise ValueError(f"on_times must have shape (..., {thrusters.count}), got shape {t.shape}")
    full = thrusters.max_thrust[:, None] * thrusters.torque_arms
    rows = np.concatenate([np.broadcast_to(full, (*t.shape, 3)), t[..., None]], axis=-1)
    return rows.reshape(*t.shape[:-1], PARAMETERS * thrusters.count)


@functools.cache
def term(count: int) -> torques.Term:
    """The torque of ``count`` thrusters over a control period, a term of the compiled torque
    model (:func:`~rigidrot_gym.physics.rotation.torques.model_of`): parameters (τ_k, t_k) per
    thruster (:func:`term_parameters`: τ_k its torque at full thrust, N·m, t_k its on-time, s)
    and

        τ(t) = Σ_k [t < t_k] τ_k,

    t the time since the period's start: the stage time of a run whose clock starts each
    period at t = 0 (an absolute stage time less the period's start can fall an ulp short of
    an on-time and switch a piece that starts there late). The thrust is a step, so the
    torque is exact only where a run's steps do not straddle an on-time's end: split the
    period there. It is right-continuous (off at
    t = t_k), so a method that samples the torque at the end of a step (Runge–Kutta's last
    stage) sees the thruster off there: a piece ending at t_k wants a method sampling at the
    start of its steps (``semi_implicit``), or the piece's parameters with t_k past its end.
    Sampled at Runge–Kutta stages across a switch instead, the delivered on-time comes in
    fractions of the step, as with Basilisk's thrusterDynamicEffector (sixths with RK4, its
    switch inclusive).

    τ_k is in the frame the integrator runs in, its principal axes
    (:mod:`~rigidrot_gym.physics.rotation.torques`): a caller whose body frame is not
    principal turns each τ_k into it. Cached per count (one compiled function each)."""
    count = validation.count(count, "count", minimum=1, maximum=MAX_THRUSTERS)
    name = f"_thrusters_{count}"
    lines = [f"def {name}(tau, t, q, omega, own):", "    x, y, z = tau"]
    for k in range(count):
        i = PARAMETERS * k
        lines += [
            f"    on = t < own[{i + 3}]",
            f"    x = x + select(on, own[{i}], 0.0)",
            f"    y = y + select(on, own[{i + 1}], 0.0)",
            f"    z = z + select(on, own[{i + 2}], 0.0)",
        ]
    lines.append("    return (x, y, z)")
    # In this module's namespace under its own name, as torques.model_of's functions: numba's
    # cache and pickling find it by module and name.
    exec("\n".join(lines), globals())
    globals()[name] = jitable(globals()[name])
    return torques.Term("thrusters", PARAMETERS * count, globals()[name])
