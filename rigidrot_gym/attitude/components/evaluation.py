"""The evaluation of every path: the observation, the reward and the episode flags.

Observation: the error quaternion δq = q_target* ⊗ q with w ≥ 0 and the body rates over
``max_rate`` (clipped to ±1), in the body frame; then, with the actuators that have them,
the wheel momenta and the pending action. Reward and flags (:func:`score`) come from the
true state, whatever the sensors report. The pointing angle θ = 2 atan2(|δq_xyz|, |δq_w|)
is finished by :func:`half_angle`, an arctangent of branch-free arithmetic that vectorises
over bodies (a loop that calls the C library's ``atan2`` does not).

The passes over a block of bodies keep to one array or a few each and have no branch, so
that they vectorise: the body frame, the attitude error, the rates, the score, then the
observation row by row.
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude.rows import (
    ANGLE,
    EFFORT,
    IN_TOLERANCE,
    OBS_SIZE,
    POINTING_DEG,
    RATE,
    REWARD,
    SPEED,
    SUCCESS,
    TERMINATED,
    TRUNCATED,
)
from rigidrot_gym.physics.plumbing import jit
from rigidrot_gym.physics.plumbing.jit import jitable, select
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.quaternion import qconj, qmul, qrotate

# Cephes ``atan`` (S. L. Moshier, Cephes Math Library 2.8, atan.c): atan x = x + x z P(z)/Q(z),
# z = x², on [0, 0.66] after reduction by π/2 − atan(1/x) or π/4 + atan((x − 1)/(x + 1)).
_ATAN_P = (
    -8.750608600031904122785e-1,
    -1.615753718733365076637e1,
    -7.500855792314704667340e1,
    -1.228866684490136173410e2,
    -6.485021904942025371773e1,
)
_ATAN_Q = (
    2.485846490142306297962e1,
    1.650270098316988542046e2,
    4.328810604912902668951e2,
    4.853903996359136964868e2,
    1.945506571482613964425e2,
)
_TAN_3PI_8 = 2.41421356237309504880
_MOREBITS = 6.123233995736765886130e-17  # π/2 − fl(π/2)
# Products with reciprocals: a division per body costs more than the rest.
_INV_PI, _TO_DEGREES = 1.0 / np.pi, 180.0 / np.pi


@jitable
def half_angle(sin_half, cos_half):
    """atan2(``sin_half``, ``cos_half``) ∈ [0, π/2] for non-negative arguments, not both zero,
    within a few units in the last place of the C library's (Cephes' ``atan`` after one
    division; selects instead of branches)."""
    x = sin_half / cos_half
    big = x > _TAN_3PI_8
    middle = x > 0.66
    # the three reductions in one division (x / 1 is x exactly): a division costs a loop
    # over bodies more than the rest of the arithmetic
    r = select(big, -1.0, select(middle, x - 1.0, x)) / select(big, x, select(middle, x + 1.0, 1.0))
    base = select(big, 0.5 * np.pi, select(middle, 0.25 * np.pi, 0.0))
    extra = select(big, _MOREBITS, select(middle, 0.5 * _MOREBITS, 0.0))
    z = r * r
    p = (((_ATAN_P[0] * z + _ATAN_P[1]) * z + _ATAN_P[2]) * z + _ATAN_P[3]) * z + _ATAN_P[4]
    q = ((((z + _ATAN_Q[0]) * z + _ATAN_Q[1]) * z + _ATAN_Q[2]) * z + _ATAN_Q[3]) * z + _ATAN_Q[4]
    return base + ((r * (z * p / q) + r) + extra)


@jitable
def attitude_error(q, target):
    """δq = target* ⊗ q with w ≥ 0 (4-tuple), and the sine and cosine of half the pointing
    error, |δq_xyz| and |δq_w|."""
    error = qmul(qconj(target), q)
    sign = select(error[0] < 0.0, -1.0, 1.0)
    signed = (sign * error[0], sign * error[1], sign * error[2], sign * error[3])
    return signed, vec.norm((error[1], error[2], error[3])), abs(error[0])


@jitable
def scaled_rates(w, inv_max_rate):
    """ω / ω_max clipped to [-1, 1] (3-tuple)."""
    return (
        min(max(w[0] * inv_max_rate, -1.0), 1.0),
        min(max(w[1] * inv_max_rate, -1.0), 1.0),
        min(max(w[2] * inv_max_rate, -1.0), 1.0),
    )


@jitable
def score(angle, rate, effort, rules, inv_max_rate, stepped, steps, hold):
    """One body's reward and flags from its pointing error ``angle`` (rad), ``rate`` |ω|
    and mean squared action ``effort``: r = −(w_θ θ/π + w_ω min(|ω|/ω_max, 1) + w_u effort)
    + w_s inside − w_x unsafe (weights of ``rules``, :class:`~rigidrot_gym.attitude.data.Rules`),
    ``inside`` the body being within both tolerances at this step.

    With ``stepped`` the body has just advanced: its episode ``steps`` and streak ``hold``
    of steps inside move on; it succeeds once the streak reaches ``hold_steps`` (at least
    one), terminates when unsafe or, if ``hold_steps`` > 0, on that success, and truncates
    whenever its ``max_steps``-th step is reached (if > 0; Gymnasium's rule: a termination
    on that step is truncated too); else every flag is false.
    Returns (reward, inside, success, terminated, truncated, steps, hold)."""
    # Bitwise operators and selects, no branches: in a loop over bodies, a branch keeps it
    # from vectorising.
    inside = (angle <= rules.pointing_tolerance) & (rate <= rules.rate_tolerance)
    unsafe = rate > rules.max_rate
    penalty = (
        rules.reward_angle * angle * _INV_PI
        + rules.reward_rate * min(rate * inv_max_rate, 1.0)
        + rules.reward_torque * effort
    )
    steps = steps + 1 if stepped else steps
    hold = (hold + 1 if inside else 0) if stepped else hold
    success = stepped & (hold >= max(rules.hold_steps, 1))
    terminated = stepped & (unsafe | ((rules.hold_steps > 0) & success))
    truncated = stepped & (rules.max_steps > 0) & (steps >= rules.max_steps)
    reward = -penalty + rules.reward_success * inside - rules.reward_unsafe * unsafe
    return reward, inside, success, terminated, truncated, steps, hold


@jitable
def body_frame(frames, state, body, lo, hi):
    """Attitude q = q_p ⊗ B* and rates ω = B ω_p of bodies ``lo`` … ``hi`` − 1 of ``state``
    (8, N, principal axes) in their own body frames B (``frames``, (4, N)): written into
    ``body`` (7, N); ``state`` itself where ``frames`` is None (every frame principal,
    which numba prunes)."""
    if frames is None:
        return state
    for i in jit.bodies(lo, hi):
        b = (frames[0, i], frames[1, i], frames[2, i], frames[3, i])
        q = (state[0, i], state[1, i], state[2, i], state[3, i])
        body[0, i], body[1, i], body[2, i], body[3, i] = qmul(q, qconj(b))
        body[4, i], body[5, i], body[6, i] = qrotate(b, (state[4, i], state[5, i], state[6, i]))
    return body


@jitable
def observe(bodies, rules, state, body, work, lo, hi):
    """The observation of bodies ``lo`` … ``hi`` − 1 of ``state`` (8, N, principal axes),
    given as ``body`` in the body frame (:func:`body_frame`), its pointing error and |ω|
    into ``work.results`` (rows OBSERVED, ANGLE, SPEED)."""
    results = work.results
    inv_max_rate = 1.0 / rules.max_rate
    for i in jit.bodies(lo, hi):
        target = (bodies.target[0, i], bodies.target[1, i], bodies.target[2, i], bodies.target[3, i])
        dq, sin_half, cos_half = attitude_error((body[0, i], body[1, i], body[2, i], body[3, i]), target)
        results[0, i], results[1, i], results[2, i], results[3, i] = dq
        results[ANGLE, i] = 2.0 * half_angle(sin_half, cos_half)
    for i in jit.bodies(lo, hi):
        w = (body[4, i], body[5, i], body[6, i])
        results[4, i], results[5, i], results[6, i] = scaled_rates(w, inv_max_rate)
        results[SPEED, i] = vec.norm((state[4, i], state[5, i], state[6, i]))  # |ω| in any frame


@jitable
def assess(call, bodies, rules, work, out, lo, hi):
    """Reward, pointing error and |ω| (into ``out.values``) and flags (``out.flags``) of
    bodies ``lo`` … ``hi`` − 1 from their true state's results (:func:`observe`) and their
    actions; their episode counters move on if stepped. A body restarting in this call
    scores reward 0."""
    results, actions, values, flags = work.results, work.actions, out.values, out.flags
    inv_max_rate = 1.0 / rules.max_rate
    inv_actions = 1.0 / actions.shape[0]
    # Σ_k a_k²: written out for three actuators; for another count in a pass of its own (a
    # loop over the actuators, or a branch, in the loop below would keep it from
    # vectorising; 0 + a₀² is a₀² exactly: the same sum, in the same order)
    three = actions.shape[0] == 3
    if not three:
        for i in jit.bodies(lo, hi):
            results[EFFORT, i] = 0.0
        for k in range(actions.shape[0]):
            for i in jit.bodies(lo, hi):
                results[EFFORT, i] += actions[k, i] ** 2
    for i in jit.bodies(lo, hi):
        sum3 = actions[0, i] ** 2 + actions[1, i] ** 2 + actions[2, i] ** 2
        effort = select(three, sum3, results[EFFORT, i]) * inv_actions
        angle, rate = results[ANGLE, i], results[SPEED, i]
        live = call.stepped & (not call.waiting[i])
        reward, inside, success, terminated, truncated, bodies.steps[i], bodies.hold[i] = score(
            angle, rate, effort, rules, inv_max_rate, live, bodies.steps[i], bodies.hold[i]
        )
        reward = select(call.stepped & call.restart & call.waiting[i], 0.0, reward)
        values[REWARD, i] = reward
        values[POINTING_DEG, i] = angle * _TO_DEGREES
        values[RATE, i] = rate
        flags[SUCCESS, i] = success
        flags[TERMINATED, i] = terminated
        flags[TRUNCATED, i] = truncated
        flags[IN_TOLERANCE, i] = inside


@jitable
def reward_dissipation(call, bodies, rules, work, out, lo, hi):
    """Add w_E · clip((E − E′)/E_max, −1, 1) to the reward of the bodies ``lo`` … ``hi`` − 1
    that stepped: E = ½ Σ J_k ω_k² the rotational kinetic energy before the step
    (``bodies.state``, not yet committed) and E′ after it (``work.staged``), E_max =
    ½ J_max ω_max² the most a body inside ``max_rate`` holds. In a free body E is
    conserved, so the term is what the step's actions (and disturbances) took out:
    a shaping term that credits each action at once with the energy it removed, which a
    rate penalty alone credits only over the slow decay that follows."""
    before, after, m, values = bodies.state, work.staged, bodies.moments, out.values
    for i in jit.bodies(lo, hi):
        live = call.stepped & (not call.waiting[i])
        e0 = m[0, i] * before[4, i] ** 2 + m[1, i] * before[5, i] ** 2 + m[2, i] * before[6, i] ** 2
        e1 = m[0, i] * after[4, i] ** 2 + m[1, i] * after[5, i] ** 2 + m[2, i] * after[6, i] ** 2
        scale = max(m[0, i], max(m[1, i], m[2, i])) * rules.max_rate**2  # 2 E_max (the ½ cancels)
        term = min(max((e0 - e1) / scale, -1.0), 1.0)
        values[REWARD, i] += select(live, rules.reward_energy * term, 0.0)


@jitable
def write_observation(results, obs, lo, hi):
    """The observed rows of ``results`` into the float32 observations, body by body."""
    if obs.shape[1] == OBS_SIZE:
        # The same copy for an observation of the observed rows alone: inside this branch
        # LLVM knows the row stride of ``obs``, a constant with which the loop vectorises.
        for i in jit.bodies(lo, hi):
            for c in range(OBS_SIZE):
                obs[i, c] = results[c, i]
    else:
        for i in jit.bodies(lo, hi):
            for c in range(OBS_SIZE):
                obs[i, c] = results[c, i]


@jitable
def end_on_saturation(equipment, out, i):
    """A saturated wheel ends body i's episode as unsafe (terminated, −w_x once; a
    truncation on the same step stands)."""
    if equipment.saturated[i] and not out.flags[TERMINATED, i]:
        out.values[REWARD, i] -= equipment.end_on_saturation
        out.flags[TERMINATED, i] = True
