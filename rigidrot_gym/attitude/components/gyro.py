"""A rate-integrating gyro on each body: the library's :mod:`~rigidrot_gym.physics.sensors.gyro`
(Farrenkopf's angle and rate random walk in their exact discrete form, quantised pulses, a
full scale), sampled once per control period.

Each period the gyro reads the body's mean rate over it, (1/Δt) ∫ω dt in the body frame
(what a rate-integrating gyro's angle increments measure), the integral taken over the
integrator's sub-steps by the corrected trapezoid rule ∫₀ʰ ω dt ≈ h/2 (ω₀ + ω₁) +
h²/12 (ω̇₀ − ω̇₁), ω̇ from Euler's equations
(:mod:`~rigidrot_gym.attitude.components.integration`), plus ½ (β_k + β_{k+1}) and its
white noise; its bias β walks on. An episode starts with β drawn per axis from N(0, σ_β0²),
``initial_bias_deg_per_hour``, and its first reading is of the rates at the start. The
normals come from the body's navigation stream
(:data:`~rigidrot_gym.attitude.variates.NAVIGATION_SALT`) at the episode step, drawn for a
block of bodies at once by the pipeline, so a body reads the same alone or in a batch.
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude import variates
from rigidrot_gym.attitude.components.declaration import Component, Feature, Info, State
from rigidrot_gym.attitude.settings import Table, bounded, choice, setting
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.sensors import gyro as gyro_model

# Entries of Equipment.gyro_model.
ARW, RRW, QUANTUM, FULL_SCALE, INITIAL_BIAS = range(5)
MODEL = 5
# Columns of Equipment.gyro: the bias β, the angle not yet output as pulses, the last reading.
BIAS, CARRY, READING = slice(0, 3), slice(3, 6), slice(6, 9)
STATE = 9
DEG_PER_HOUR = np.pi / 180.0 / 3600.0  # rad/s


class GyroTable(Table, key="gyro"):
    """A rate-integrating gyro (the estimator's propagation; the observed rates with
    ``navigation.observe`` "sensors")."""

    model: str = setting(
        "none",
        check=choice(("none", *gyro_model.PRESETS)),
        flat="gyro_model",
        switch=True,
        doc='"none" or a preset of physics.sensors.gyro: "42" (NASA 42: ARW 0.07°/√h, bias stability 0.1°/h, '
        "1″ pulses)",
    )
    initial_bias_deg_per_hour: float = setting(
        1.0,
        check=bounded(3.6e6),
        unit="°/h",
        flat="gyro_initial_bias_deg_per_hour",
        doc="per-axis std of the bias at an episode's start, drawn per episode",
    )


def constants(table: GyroTable) -> np.ndarray:
    """Equipment.gyro_model (entries ``ARW`` … ``INITIAL_BIAS``); zeros without a gyro."""
    out = np.zeros(MODEL)
    if table.model != "none":
        model = gyro_model.PRESETS[table.model]
        out[ARW], out[RRW], out[QUANTUM], out[FULL_SCALE] = (
            model.arw,
            model.rrw,
            model.quantum,
            model.full_scale,
        )
        out[INITIAL_BIAS] = table.initial_bias_deg_per_hour * DEG_PER_HOUR
    return out


@jitable
def read(equipment, rate, dt, normals, i):
    """Body i's gyro over the period (its mean body rate ``rate``, 3-tuple, rad/s): the
    reading into ``equipment.gyro[i, READING]``, the bias and the carried angle moved on;
    ``normals``: the step's normals of its navigation stream."""
    m, g = equipment.gyro_model, equipment.gyro
    n = variates.GYRO_NORMALS
    reading, bias, carry = gyro_model.sample(
        rate,
        (g[i, 0], g[i, 1], g[i, 2]),
        (g[i, 3], g[i, 4], g[i, 5]),
        dt,
        m[ARW],
        m[RRW],
        m[QUANTUM],
        m[FULL_SCALE],
        (normals[n], normals[n + 1], normals[n + 2]),
        (normals[n + 3], normals[n + 4], normals[n + 5]),
    )
    g[i, 0], g[i, 1], g[i, 2] = bias
    g[i, 3], g[i, 4], g[i, 5] = carry
    g[i, 6], g[i, 7], g[i, 8] = reading


@jitable
def start(equipment, rate, dt, normals, i):
    """Body i's gyro at its episode's start: the bias drawn, nothing carried, a first
    reading of the body rates ``rate`` (3-tuple, rad/s); ``normals``: step 0's of its
    navigation stream."""
    g = equipment.gyro
    sigma = equipment.gyro_model[INITIAL_BIAS]
    for k in range(3):
        g[i, k] = sigma * normals[variates.START_BIAS_NORMALS + k]
        g[i, 3 + k] = 0.0
    read(equipment, rate, dt, normals, i)


@jitable
def reading(equipment, i):
    """Body i's last reading (3-tuple, rad/s)."""
    g = equipment.gyro
    return (g[i, 6], g[i, 7], g[i, 8])


COMPONENT = Component(
    name="gyro",
    summary="a rate-integrating gyro (angle and rate random walks, quantised pulses, a full scale)",
    table=GyroTable,
    on=lambda s: s.gyro_model != "none",
    switch="gyro.model",
    features=(
        Feature(
            "gyro",
            lambda s, f: s.gyro_model != "none",
            "a rate-integrating gyro reads the body rates each period",
        ),
    ),
    state=(
        State(
            "gyro",
            "(N, STATE) bias, carried angle, last reading",
            lambda b: np.zeros((b.bodies if b.features.gyro else 0, STATE)),
            lambda f: f.gyro,
        ),
        State("gyro_model", "(MODEL,) its errors", lambda b: constants(b.scenario.gyro), lambda f: f.gyro),
    ),
    navigation_normals=6,  # the bias step N_u and the white noise N_v
    start_normals=3,  # the bias at an episode's start
    noisy="gyro",
    info=(
        Info(
            "gyro_bias",
            "(N, 3) its true bias, rad/s, body frame",
            lambda f: f.gyro,
            lambda e: e.gyro[:, BIAS],
        ),
    ),
)
