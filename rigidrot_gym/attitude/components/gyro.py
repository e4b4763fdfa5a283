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

from typing import NamedTuple

import numpy as np

from rigidrot_gym.attitude import variates
from rigidrot_gym.attitude.components.declaration import Component, Feature, Info, State
from rigidrot_gym.attitude.settings import (
    PRESET,
    Table,
    bounded,
    choice,
    non_negative,
    or_preset,
    or_preset_value,
    setting,
)
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.sensors import gyro as gyro_model

# Columns of Equipment.gyro: the bias β, the angle not yet output as pulses, the last reading.
BIAS, CARRY, READING = slice(0, 3), slice(3, 6), slice(6, 9)
STATE = 9
DEG_PER_HOUR = np.pi / 180.0 / 3600.0  # rad/s
_DEG, _ARCSEC = np.pi / 180.0, np.pi / 180.0 / 3600.0  # rad


class GyroModel(NamedTuple):
    """Equipment.gyro_model: the gyro's errors, as the library's
    :class:`~rigidrot_gym.physics.sensors.gyro.GyroModel` names them (zeros without one)."""

    arw: float  # σ_v, angle random walk, rad/√s
    rrw: float  # σ_u, rate random walk, rad/s^{3/2}
    quantum: float  # angle per output pulse, rad (0: unquantised)
    full_scale: float  # the largest rate it reads, rad/s
    initial_bias: float  # per-axis std of the bias at an episode's start, rad/s


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
    arw_deg_per_sqrt_hour: float | str = setting(
        PRESET,
        check=or_preset(non_negative),
        unit="°/√h",
        flat="gyro_arw_deg_per_sqrt_hour",
        doc="angle random walk σ_v (42's preset: 0.07)",
    )
    bias_stability_deg_per_hour: float | str = setting(
        PRESET,
        check=or_preset(non_negative),
        unit="°/h",
        flat="gyro_bias_stability_deg_per_hour",
        doc="bias stability over an hour, the rate random walk σ_u = it / 60 √s (42's preset: 0.1)",
    )
    pulse_arcsec: float | str = setting(
        PRESET,
        check=or_preset(non_negative),
        unit="″",
        flat="gyro_pulse_arcsec",
        doc="angle per output pulse, 0: unquantised (42's preset: 1)",
    )


def constants(table: GyroTable) -> GyroModel:
    """Equipment.gyro_model: the preset's errors, those the table gives in its place
    (converted as NASA 42 does: σ_v = ARW / 60 √s, σ_u = stability / 3600 s / 60 √s);
    zeros without a gyro."""
    if table.model == "none":
        return GyroModel(0.0, 0.0, 0.0, 0.0, 0.0)
    preset = gyro_model.PRESETS[table.model]
    return GyroModel(
        arw=or_preset_value(table.arw_deg_per_sqrt_hour, _DEG / 60.0, preset.arw),
        rrw=or_preset_value(table.bias_stability_deg_per_hour, _DEG / 3600.0 / 60.0, preset.rrw),
        quantum=or_preset_value(table.pulse_arcsec, _ARCSEC, preset.quantum),
        full_scale=preset.full_scale,
        initial_bias=table.initial_bias_deg_per_hour * DEG_PER_HOUR,
    )


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
        m.arw,
        m.rrw,
        m.quantum,
        m.full_scale,
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
    sigma = equipment.gyro_model.initial_bias
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
        State(
            "gyro_model",
            "its errors (GyroModel)",
            lambda b: constants(b.scenario.gyro),
            lambda f: f.gyro,
            record=GyroModel,
        ),
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
