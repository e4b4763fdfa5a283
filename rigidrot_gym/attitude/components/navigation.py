"""What the agent observes of its own attitude and rates, and the estimator between the
sensors and it: the library's multiplicative EKF (:mod:`~rigidrot_gym.physics.estimation.mekf`) per
body, inside the control period.

``observe`` chooses the observation's first seven columns (the error quaternion to the
target and the body rates):

* ``"truth"``: the true state (the reward and the flags always read it);
* ``"sensors"``: the star tracker's last measurement (held between measurements and
  through outages; without a star tracker, none: the error quaternion (1, 0, 0, 0)) and
  the gyro's last reading;
* ``"estimate"``: the MEKF's attitude q̂ and rates ω̃ − β̂ (the gyro's reading less the
  estimated bias).

The estimate starts each episode at the true attitude turned by a random rotation of
per-axis std ``initial_attitude_deg`` (the navigation stream's step-0 normals), with zero
biases, P₀ = diag(σ_θ0² I, σ_β0² I[, σ_m0² I]) (σ_β0 the gyro's
``initial_bias_deg_per_hour``; σ_m0 the magnetometer's ``bias``, whose three states the
filter has only where it is positive: :func:`states`), and is corrected at once by a star
tracker that sees the stars; its residual is exact at any angle, so that this first fix
acquires the attitude whatever the initial error. Each period it is propagated with the
gyro's reading (its σ_v and σ_u are the gyro model's, which the filter knows exactly) and
corrected with the star tracker's measurement when there is one, then with a
magnetometer's reading and the coarse Sun sensors' direction, where the scenario has them,
each once the attitude is known well enough for its linearisation
(:func:`~rigidrot_gym.physics.estimation.mekf.linear_enough`: before a first fix from a large initial
error, the filter only propagates). The batch's ``info`` shows the estimate, its
covariance and the true biases (:meth:`~rigidrot_gym.attitude.batch.AttitudeBatch.extras`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from rigidrot_gym.attitude import variates
from rigidrot_gym.attitude.components import gyro, magnetometer, star_tracker
from rigidrot_gym.attitude.components.declaration import Component, Feature, Info, State
from rigidrot_gym.attitude.settings import ScenarioError, Table, bounded, choice, setting
from rigidrot_gym.physics.estimation import mekf
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.quaternion import qexp, qmul, qrotate_inv

OBSERVED = ("truth", "sensors", "estimate")
_NINE = tuple[float, float, float, float, float, float, float, float, float]


class EstimatorModel(NamedTuple):
    """Equipment.estimator_model: the MEKF's start and the star tracker's R."""

    initial_attitude: float  # σ_θ0, rad
    initial_bias: float  # σ_β0, rad/s
    tracker_covariance: _NINE  # the star tracker's error covariance (3 × 3, row by row), rad²
    initial_field_bias: float  # σ_m0 of the magnetometer's bias, T (0: none)


# Columns of Equipment.estimate: q̂ (body to world), β̂ (rad/s), the magnetometer's bias m̂ (T).
Q, BIAS, FIELD_BIAS = slice(0, 4), slice(4, 7), slice(7, 10)
STATE = 10
# The filter's states: δϑ and Δβ (mekf.STATES), then, where the magnetometer has a bias,
# its error Δm (T), a constant the filter estimates (it is drawn once per episode: taken
# as white noise instead, it made the filter overconfident, a NEES of 65 for 6).
MOST_STATES = mekf.STATES + 3


def states(field_bias: float) -> int:
    """How many states the filter has with a magnetometer whose bias's per-axis std is
    ``field_bias`` (0 without a magnetometer or a bias)."""
    return MOST_STATES if field_bias > 0.0 else mekf.STATES


class NavigationTable(Table, key="navigation"):
    """What the agent observes of its attitude and rates: the truth, the sensors' readings
    or the MEKF's estimate."""

    observe: str = setting(
        "truth",
        check=choice(OBSERVED),
        flat="observe",
        switch=True,
        doc='"truth", "sensors" (the star tracker\'s and the gyro\'s last readings; needs a gyro) or '
        '"estimate" (the MEKF\'s; needs a gyro and a star tracker)',
    )
    initial_attitude_deg: float = setting(
        1.0,
        check=bounded(30.0, positive=True),
        unit="°",
        flat="estimator_initial_attitude_deg",
        doc="per-axis std of the estimate's attitude error at an episode's start",
    )


def constants(
    table: NavigationTable, initial_bias: float, tracker_covariance: np.ndarray, field_bias: float
) -> EstimatorModel:
    """Equipment.estimator_model, from the gyro's initial bias std (rad/s), the star
    tracker's error covariance (3 × 3, rad²) and the magnetometer bias's std (T; 0 for none)."""
    return EstimatorModel(
        initial_attitude=float(np.radians(table.initial_attitude_deg)),
        initial_bias=initial_bias,
        tracker_covariance=tuple(float(x) for x in np.asarray(tracker_covariance).reshape(-1)),
        initial_field_bias=field_bias,
    )


@jitable
def initial_attitude(equipment, q, normals, i):
    """Body i's attitude as known at its episode's start, before a first measurement: the
    true ``q`` (4-tuple) turned by a random rotation of per-axis std σ_θ0; ``normals``:
    step 0's of its navigation stream."""
    half, n = 0.5 * equipment.estimator_model.initial_attitude, variates.START_ERROR_NORMALS
    return qmul(q, qexp((half * normals[n], half * normals[n + 1], half * normals[n + 2])))


@jitable
def start(equipment, guess, i):
    """Body i's estimate at its episode's start: q̂ = ``guess`` (:func:`initial_attitude`),
    β̂ = 0, m̂ = 0, P₀ = diag(σ_θ0² I, σ_β0² I, σ_m0² I)."""
    m, e, p = equipment.estimator_model, equipment.estimate, equipment.covariance
    sigmas = (m.initial_attitude, m.initial_bias, m.initial_field_bias)
    e[i, 0], e[i, 1], e[i, 2], e[i, 3] = guess
    for j in range(4, STATE):
        e[i, j] = 0.0
    n = p.shape[1]
    for j in range(n):
        for k in range(n):
            p[i, j, k] = 0.0
        p[i, j, j] = sigmas[j // 3] ** 2


@jitable
def estimate(equipment, i):
    """Body i's q̂ (4-tuple) and β̂ (3-tuple)."""
    e = equipment.estimate
    return (e[i, 0], e[i, 1], e[i, 2], e[i, 3]), (e[i, 4], e[i, 5], e[i, 6])


@jitable
def _store(equipment, q, bias, i):
    e = equipment.estimate
    e[i, 0], e[i, 1], e[i, 2], e[i, 3] = q
    e[i, 4], e[i, 5], e[i, 6] = bias


@jitable
def predict(equipment, reading, dt, work, i):
    """Body i's estimate carried over the period by the gyro's ``reading`` (3-tuple);
    ``work`` (≥ 2, n, n) is scratch."""
    q, bias = estimate(equipment, i)
    g, n = equipment.gyro_model, equipment.covariance.shape[1]
    q = mekf.predict(
        q, bias, equipment.covariance[i], reading, dt, g.arw, g.rrw, work[0, :n, :n], work[1, :n, :n]
    )
    _store(equipment, q, bias, i)


@jitable
def attitude_measurement(equipment, measured, z, h, r, i):
    """A star tracker's ``measured`` attitude (4-tuple) as body i's estimate sees it now:
    the residual ``z`` (3,), its sensitivity ``h`` (3 × n) = [I 0] and covariance ``r``
    (3 × 3)."""
    q, _ = estimate(equipment, i)
    m = equipment.estimator_model
    z[0], z[1], z[2] = mekf.attitude_residual(q, measured)
    for j in range(3):
        for k in range(h.shape[1]):
            h[j, k] = 1.0 if j == k else 0.0
        for k in range(3):
            r[j, k] = m.tracker_covariance[3 * j + k]


@jitable
def vector_measurement(equipment, measured, reference, variance, field_bias, z, h, r, i):
    """A vector ``measured`` in the body frame whose value in the world frame is
    ``reference`` (3-tuples), each axis's error of ``variance``, as body i's estimate sees it
    now: the residual ``z`` (3,), its sensitivity ``h`` (3 × n) and covariance ``r`` (3 × 3).
    With ``field_bias`` (the magnetometer, where the filter estimates its bias m) the
    prediction is R(q̂)ᵀ r + m̂ and H = [[b̂×] 0 I], else H = [[b̂×] 0]. Returns whether the
    update is linear enough to apply (:func:`~rigidrot_gym.physics.estimation.mekf.linear_enough`)."""
    q, _ = estimate(equipment, i)
    n = h.shape[1]
    z[0], z[1], z[2] = mekf.vector_residual(q, measured, reference, h)
    for j in range(3):
        for k in range(3, n):
            h[j, k] = 0.0
        for k in range(3):
            r[j, k] = variance if j == k else 0.0
    if field_bias and n > mekf.STATES:
        e = equipment.estimate
        for j in range(3):
            z[j] -= e[i, FIELD_BIAS.start + j]
            h[j, mekf.STATES + j] = 1.0
    return mekf.linear_enough(equipment.covariance[i], vec.norm(reference), np.sqrt(variance))


@jitable
def correct(equipment, z, h, r, work, dx, i):
    """Body i's estimate corrected by one measurement (:func:`attitude_measurement`,
    :func:`vector_measurement`); ``work`` (3, n, n) and ``dx`` (n,) are scratch."""
    q, bias = estimate(equipment, i)
    q, bias = mekf.correct(q, bias, equipment.covariance[i], (z[0], z[1], z[2]), h, r, work, dx)
    _store(equipment, q, bias, i)
    e = equipment.estimate
    for j in range(mekf.STATES, dx.shape[0]):
        e[i, FIELD_BIAS.start + j - mekf.STATES] += dx[j]


@jitable
def sensed_rates(equipment, reading, i):
    """ω̃ − β̂ of body i (3-tuple, body frame)."""
    e = equipment.estimate
    return (reading[0] - e[i, 4], reading[1] - e[i, 5], reading[2] - e[i, 6])


@jitable
def write_sensed(q, w, principal, sensed, i):
    """An observed attitude ``q`` and rates ``w`` (body frame) of body i into column i of
    ``sensed`` in principal axes, as the kernels read states (q ⊗ B, B* w B)."""
    b = (principal[0, i], principal[1, i], principal[2, i], principal[3, i])
    sensed[0, i], sensed[1, i], sensed[2, i], sensed[3, i] = qmul(q, b)
    sensed[4, i], sensed[5, i], sensed[6, i] = qrotate_inv(b, w)
    sensed[7, i] = 0.0


def _sources_of_what_it_observes(s) -> None:
    if s.observe == "sensors" and s.gyro_model == "none":
        raise ScenarioError(
            'navigation.observe "sensors" needs gyro.model (and shows the attitude of a star_tracker.model)'
        )
    if s.observe == "estimate" and (s.gyro_model == "none" or s.star_tracker_model == "none"):
        raise ScenarioError(
            'navigation.observe "estimate" needs gyro.model and star_tracker.model (the MEKF\'s propagation '
            "and updates)"
        )
    if s.observe != "truth" and bool(s.attitude_noise_deg or s.rate_noise or s.rate_bias):
        raise ScenarioError(
            f"navigation.observe {s.observe!r} replaces the [sensors] table's Gaussian noise: leave one of "
            "them out"
        )


def _sun_sensors_weigh(s) -> None:
    if s.observe == "estimate" and s.sun_sensor_model != "none" and s.sun_sensor_noise == 0.0:
        # The MEKF weighs a measurement by its noise: a direction without any has no weight
        # (S = H P Hᵀ is singular for a vector's H = [b×]).
        raise ScenarioError(
            "field sun_sensors.noise must be positive where the MEKF uses the Sun sensors "
            f'(navigation.observe "estimate"), got {s.sun_sensor_noise!r}'
        )


def _read(f) -> bool:
    """The spacecraft's sensors: the start attitude is known before a first measurement."""
    return f.gyro or f.star_tracker or f.magnetometer or f.sun_sensors


def _field_bias(s) -> float:
    return magnetometer.constants(s.magnetometer).bias_std


def _model(b) -> EstimatorModel:
    s = b.scenario
    return constants(
        s.navigation,
        gyro.constants(s.gyro).initial_bias,
        star_tracker.covariance(s.star_tracker) if b.features.star_tracker else np.zeros((3, 3)),
        _field_bias(s),
    )


def _covariance(b) -> np.ndarray:
    n = states(_field_bias(b.scenario))
    return np.zeros((b.bodies if b.features.estimator else 0, n, n))


COMPONENT = Component(
    name="navigation",
    summary="what the agent observes of its attitude and rates: the truth, the sensors' readings or "
    "the MEKF's estimate",
    table=NavigationTable,
    on=lambda s: s.observe != "truth",
    switch="navigation.observe",
    rules=(_sources_of_what_it_observes, _sun_sensors_weigh),
    features=(
        Feature(
            "estimator", lambda s, f: s.observe == "estimate", "the MEKF runs on the gyro and star tracker"
        ),
        Feature(
            "observed",
            lambda s, f: OBSERVED.index(s.observe),
            "what the observation shows: TRUTH, SENSORS or ESTIMATE",
        ),
    ),
    state=(
        State(
            "estimate",
            "(N, STATE) the MEKF's q̂, β̂ and m̂",
            lambda b: np.zeros((b.bodies if b.features.estimator else 0, STATE)),
            lambda f: f.estimator,
        ),
        State("covariance", "(N, n, n) and its P (n: states)", _covariance, lambda f: f.estimator),
        State(
            "estimator_model", "its start and the tracker's R (EstimatorModel)", _model, _read, EstimatorModel
        ),
    ),
    work=MOST_STATES,  # the filter's matrices, one body at a time
    start_normals=3,  # the estimate's attitude error at an episode's start
    info=(
        Info(
            "estimated_attitude",
            "(N, 4) the MEKF's q̂, body to world",
            lambda f: f.estimator,
            lambda e: e.estimate[:, Q],
            estimate=True,
        ),
        Info(
            "estimated_gyro_bias",
            "(N, 3) its gyro bias β̂, rad/s",
            lambda f: f.estimator,
            lambda e: e.estimate[:, BIAS],
            estimate=True,
        ),
        Info(
            "estimated_magnetometer_bias",
            "(N, 3) its magnetometer bias m̂, T, where it estimates one",
            lambda f: f.estimator,
            lambda e: e.estimate[:, FIELD_BIAS] if magnetometer.biased(e) else None,
            estimate=True,
        ),
        Info(
            "estimate_covariance",
            "(N, n, n) its P, of the error state (δϑ, the rotation vector of q̂* ⊗ q, rad; "
            "Δβ = β − β̂; then Δm = m − m̂): the NEES εᵀ P⁻¹ ε (mekf.nees) and the 3σ bounds "
            "are the user's to take",
            lambda f: f.estimator,
            lambda e: e.covariance,
            estimate=True,
        ),
    ),
)
