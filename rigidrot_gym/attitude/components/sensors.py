"""Noisy attitude and rate sensors: the observed attitude is the true one turned by a small
random body rotation (a star tracker, per-axis std σ_θ), the observed rates the true ones
plus a bias drawn per episode and white noise (a gyro, std σ_ω). The noise is drawn from
the body's counter-based stream (:mod:`~rigidrot_gym.attitude.variates`) at its episode
step, so a body's readings are the same whether it steps alone or in a batch (by the C
library's functions, or, with ``random_stream`` 1, by the pipeline's vectorising draw). The reward
and flags see the truth."""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude import variates
from rigidrot_gym.attitude.components.declaration import Component, Draw, Feature, State
from rigidrot_gym.attitude.settings import Table, bounded, setting
from rigidrot_gym.attitude.variates import counter_normals
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.quaternion import qexp, qmul, qrotate_inv

MAX_RATE_NOISE = 1e6  # rad/s, rate-sensor noise and bias (the observation saturates far below)


class Sensors(Table, key="sensors"):
    """Errors of the observed attitude and rates (the true state is in ``info``)."""

    attitude_noise_deg: float = setting(
        0.0,
        check=bounded(180.0),
        unit="deg",
        switch=True,
        doc="per-axis std of a small random rotation of the observed attitude",
    )
    rate_noise: float = setting(
        0.0,
        check=bounded(MAX_RATE_NOISE),
        unit="rad/s",
        switch=True,
        doc="std of a white noise on the observed body rates",
    )
    rate_bias: float = setting(
        0.0,
        check=bounded(MAX_RATE_NOISE),
        unit="rad/s",
        switch=True,
        doc="std of a constant bias on them, drawn per episode",
    )


@jitable
def normals(key, step):
    """The six normals of a body's counter-based stream (``key``) its sensors draw at
    episode step ``step``: the attitude's three, then the rates' three."""
    first, pairs = variates.SENSOR_PAIRS, variates.STEP_PAIRS
    p0 = counter_normals(key, step, first, pairs)
    p1 = counter_normals(key, step, first + 1, pairs)
    p2 = counter_normals(key, step, first + 2, pairs)
    return (p0[0], p0[1], p1[0]), (p1[1], p2[0], p2[1])


@jitable
def sense(state, principal, equipment, xi, eta, i, sensed):
    """Body i's state as its sensors report it with the standard normals ``xi`` (the
    attitude's) and ``eta`` (the rates'; both its stream's at the episode step:
    :func:`normals`), into column i of ``sensed`` (8, N): in principal axes, as the kernels
    read states (B* v B for a body-frame vector v)."""
    attitude_std, rate_std = equipment.attitude_noise, equipment.rate_noise
    b = (principal[0, i], principal[1, i], principal[2, i], principal[3, i])
    turn = qrotate_inv(b, vec.scale(attitude_std, xi))
    rate_error = qrotate_inv(b, vec.axpy(rate_std, eta, vec.row3(equipment.bias, i)))
    q = qmul((state[0, i], state[1, i], state[2, i], state[3, i]), qexp(vec.scale(0.5, turn)))
    w = vec.add((state[4, i], state[5, i], state[6, i]), rate_error)
    sensed[0, i], sensed[1, i], sensed[2, i], sensed[3, i] = q
    sensed[4, i], sensed[5, i], sensed[6, i] = w
    sensed[7, i] = state[7, i]


def _on(s) -> bool:
    return bool(s.attitude_noise_deg or s.rate_noise or s.rate_bias)


def _reset(episode) -> None:
    s = episode.batch.scenario
    episode.equipment.bias[episode.rows] = s.rate_bias * episode.draws["sensors.bias"]


COMPONENT = Component(
    name="sensors",
    summary="Gaussian noise on the observed attitude and rates, and a rate bias drawn per episode",
    table=Sensors,
    on=_on,
    switch="[sensors]",
    features=(
        Feature("sensors", lambda s, f: _on(s), "the observation is the state as noisy sensors report it"),
    ),
    state=(
        State(
            "bias",
            "(N, 3) rate-sensor bias, body frame, rad/s",
            lambda b: np.zeros((b.bodies, 3)),
            lambda f: f.sensors,
        ),
        State(
            "attitude_noise",
            "star-tracker noise, per-axis std, rad",
            lambda b: float(np.radians(b.scenario.attitude_noise_deg)),
            lambda f: f.sensors,
        ),
        State(
            "rate_noise",
            "gyro white noise, std, rad/s",
            lambda b: float(b.scenario.rate_noise),
            lambda f: f.sensors,
        ),
    ),
    reset=_reset,
    realism_block=True,
    draws=(Draw("bias", 3, normal=True),),
    step_pairs=3,  # the attitude's three normals, then the rates'
    noisy="sensors",
)
