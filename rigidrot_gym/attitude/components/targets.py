"""Targets that move: the orbit's local-vertical local-horizontal (LVLH) frame, the target
of nadir pointing (``[target] attitude = "nadir"``), and the Sun's frame, the target of Sun
pointing (``"sun"``); both need ``[orbit]``.

The LVLH axes (Markley & Crassidis 2014, §2.6.4): ô₃ = −r̂ towards the Earth's centre,
ô₂ = −ĥ against the orbit normal ĥ = (r × v)/|r × v|, ô₁ = ô₂ × ô₃ (the velocity's
direction on a circular orbit). The target attitude q_T maps them to the world frame:
q_T = q_z(Ω) ⊗ q_x(i) ⊗ q_z(u) ⊗ q_L, the node Ω, inclination i and argument of latitude u
of the orbit (:func:`~rigidrot_gym.attitude.components.orbit.nadir_motion`) turning the
frame (r̂, t̂, ĥ) and q_L turning that frame's axes into LVLH's. It turns at
ω_T = Ω̇ ẑ + u̇ ĥ (world frame): once an orbit, plus J₂'s drift of the node.

The Sun's frame: ẑ_T = ŝ, the unit vector from the body to the Sun
(:func:`~rigidrot_gym.attitude.components.sunlight.sight`), x̂_T = ẑ × ŝ/|ẑ × ŝ| along the
equator (ẑ the world's pole: the Sun is never within 66° of it), ŷ_T = ŝ × x̂_T. It turns at
about 2e-7 rad/s (the year, and the orbit's parallax); its rate is the central difference
of the frame over ±:data:`SUN_RATE_STEP` h, whose error is the parallax's rate (≤ 5e-8
rad/s) times (n h)²/6 as that turns at the orbit's rate n: ~4e-11 rad/s in low orbit
(a shorter h would meet the float64 Julian date's 40 µs resolution sooner).

In the control period, :func:`track` writes each body's target and the target's rate at
the time of the state evaluated; :func:`relative_rates` then makes the observed rates and
the rate the reward and tolerance read the body's rate relative to the target's,
ω − R(q)ᵀ ω_T (body frame). :func:`start` turns an episode's start into the frame of its
first target.
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude.components import orbit, sunlight
from rigidrot_gym.attitude.components.declaration import Component, Feature, Need, Start, State
from rigidrot_gym.attitude.components.evaluation import scaled_rates
from rigidrot_gym.attitude.rows import SPEED
from rigidrot_gym.physics.plumbing.jit import jitable, select
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.quaternion import qconj, qfrom_matrix, qmul, qrotate, qrotate_inv

# q_L: the LVLH axes in the frame (r̂, t̂, ĥ) are ô₁ = t̂, ô₂ = −ĥ, ô₃ = −r̂ (the columns).
_LVLH = tuple(
    float(x) for x in quat.from_matrix(np.array([[0.0, 0.0, -1.0], [1.0, 0.0, 0.0], [0.0, -1.0, 0.0]]))
)


@jitable
def _about_z(angle):
    return (np.cos(0.5 * angle), 0.0, 0.0, np.sin(0.5 * angle))


@jitable
def _about_x(angle):
    return (np.cos(0.5 * angle), np.sin(0.5 * angle), 0.0, 0.0)


@jitable
def nadir(equipment, t, i):
    """Body i's LVLH frame at its episode time ``t`` (s): the target attitude q_T (4-tuple,
    LVLH to world) and its angular velocity ω_T (3-tuple, rad/s, world frame). Plain
    Python too, for an index array ``i`` (then tuples of arrays)."""
    o = equipment.orbit
    u, u_rate, _, node, across = orbit.nadir_motion(equipment, t, i)
    raan = o[orbit.RAAN] + o[orbit.RAAN_RATE] * t
    plane = qmul(_about_z(raan), _about_x(o[orbit.INCLINATION]))
    target = qmul(plane, qmul(_about_z(u), _LVLH))
    rate = vec.axpy(u_rate, vec.cross(node, across), (0.0, 0.0, o[orbit.RAAN_RATE]))
    return target, rate


# The half-width of the Sun frame's central difference, s.
SUN_RATE_STEP = 60.0


@jitable
def sun_frame(equipment, t, i):
    """Body i's Sun frame at its episode time ``t`` (s): q_T (4-tuple, to world) of the
    columns x̂_T, ŷ_T, ẑ_T = ŝ."""
    z, _ = sunlight.sight(equipment, t, i)
    across = vec.cross((0.0, 0.0, 1.0), z)
    x = vec.scale(1.0 / vec.norm(across), across)
    y = vec.cross(z, x)
    return qfrom_matrix((x[0], y[0], z[0], x[1], y[1], z[1], x[2], y[2], z[2]))


@jitable
def sun(equipment, t, i):
    """Body i's Sun frame at its episode time ``t`` (s) and its angular velocity (3-tuple,
    rad/s, world frame) by the central difference over ±:data:`SUN_RATE_STEP`."""
    h = SUN_RATE_STEP
    before, now, after = (
        sun_frame(equipment, t - h, i),
        sun_frame(equipment, t, i),
        sun_frame(equipment, t + h, i),
    )
    turn = qmul(qconj(before), after)  # from t − h to t + h, in the frame's own axes
    sign = select(turn[0] < 0.0, -1.0, 1.0)
    rate = vec.scale(sign / h, (turn[1], turn[2], turn[3]))  # 2 sin(θ/2)/(2h) ≈ θ/(2h)
    return now, qrotate(now, rate)


@jitable
def track(call, bodies, equipment, sun_pointing, lo, hi):
    """The targets of bodies ``lo`` … ``hi`` − 1 (``bodies.target``) and their rates
    (``equipment.target_rate``, world frame) at the time of the states evaluated: a body
    that steps in this call, one period after its counter; the Sun's frame with
    ``sun_pointing``, else the LVLH frame."""
    for i in range(lo, hi):
        live = call.stepped and not call.waiting[i]
        t = call.dt * (bodies.steps[i] + (1 if live else 0))
        q, w = sun(equipment, t, i) if sun_pointing else nadir(equipment, t, i)
        bodies.target[0, i], bodies.target[1, i], bodies.target[2, i], bodies.target[3, i] = q
        equipment.target_rate[i, 0], equipment.target_rate[i, 1], equipment.target_rate[i, 2] = w


@jitable
def relative_rates(body, rules, equipment, work, lo, hi):
    """Bodies ``lo`` … ``hi`` − 1 of ``body`` (their states in the body frame:
    :func:`~rigidrot_gym.attitude.components.evaluation.body_frame`): their
    observed rates (rows 4–6 of ``work.results``) and |ω| (row SPEED) become those of
    ω − R(q)ᵀ ω_T."""
    results, rates = work.results, equipment.target_rate
    inv_max_rate = 1.0 / rules.max_rate
    for i in range(lo, hi):
        q = (body[0, i], body[1, i], body[2, i], body[3, i])
        target_rate = qrotate_inv(q, (rates[i, 0], rates[i, 1], rates[i, 2]))
        error = vec.sub((body[4, i], body[5, i], body[6, i]), target_rate)
        results[4, i], results[5, i], results[6, i] = scaled_rates(error, inv_max_rate)
        results[SPEED, i] = vec.norm(error)


def mean_rate(table: orbit.OrbitTable) -> np.ndarray:
    """The LVLH frame's mean angular velocity in its own axes, (0, −u̇, 0) with u̇ = n + ω̇
    (rad/s; constant on a circular orbit, the mean on an ellipse; the node's drift, under
    1e-6 rad/s, left out): what a controller feeds forward."""
    constants = orbit.constants(table)
    return np.array([0.0, -(constants[orbit.MEAN_RATE] + constants[orbit.ARGP_RATE]), 0.0])


def start(
    equipment,
    rows: np.ndarray,
    q: np.ndarray,
    omega: np.ndarray,
    target: np.ndarray,
    sun_pointing: bool,
    near_target: bool,
) -> None:
    """Turn the episode starts of ``rows`` (attitudes q (R, 4), body rates ω (R, 3), drawn
    targets (R, 4), in place) into their first target's frame (the Sun's with
    ``sun_pointing``, else LVLH): the target becomes it, a start drawn near the target
    keeps its offset from it (q_T ⊗ target* ⊗ q), and the start rates become rates
    relative to the target's (+ R(q)ᵀ ω_T)."""
    first, rate = sun(equipment, 0.0, rows) if sun_pointing else nadir(equipment, 0.0, rows)
    first = np.stack(np.broadcast_arrays(*first), axis=-1)
    rate = np.stack(np.broadcast_arrays(*rate), axis=-1)
    if near_target:
        q[:] = quat.multiply(first, quat.multiply(quat.conjugate(target), q))
    omega += quat.rotate_inverse(q, rate)
    target[:] = first


def _restart(drawn: Start) -> None:
    """The orbit's start is drawn: the starts into its first target's frame (:func:`start`)."""
    sun_pointing = drawn.features.sun_target
    start(drawn.equipment, drawn.rows, drawn.q, drawn.omega, drawn.target, sun_pointing, drawn.near_target)


COMPONENT = Component(
    name="targets",
    summary="a moving target: the orbit's LVLH frame (nadir pointing) or the Sun's, with its rate",
    on=lambda s: s.moving_target,
    switch=lambda s: f"target.attitude {s.target_attitude!r}",
    needs=(Need("orbit"),),
    restart=_restart,
    features=(
        Feature(
            "moving_target", lambda s, f: s.moving_target, "the target moves: the orbit's LVLH frame ..."
        ),
        Feature(
            "sun_target",
            lambda s, f: s.moving_target and s.target_attitude == "sun",
            "... or, with this, the Sun's frame (Sun pointing)",
        ),
    ),
    state=(
        State(
            "target_rate",
            "(N, 3) a moving target's angular velocity now, world frame, rad/s",
            lambda b: np.zeros((b.bodies, 3)),
            lambda f: f.moving_target,
        ),
    ),
)
