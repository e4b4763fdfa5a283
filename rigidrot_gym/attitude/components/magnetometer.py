"""A three-axis magnetometer on each body: the library's
:mod:`~rigidrot_gym.physics.sensors.magnetometer` (white noise, a bias drawn per episode, whole
quanta, saturation) reading the field of :mod:`~rigidrot_gym.attitude.components.magnetic_field`
in the body frame at the end of each period.

With ``navigation.observe`` "sensors" or "estimate" the observation's field columns show
its reading instead of the true field; with "estimate" the MEKF corrects its attitude with
it (:func:`~rigidrot_gym.physics.estimation.mekf.vector_residual`: the reading against the field's
model at the body's position plus the estimated bias, whose error the filter takes as
white, of variance σ² + q²/12); where the bias has a std σ_b > 0 the filter estimates it,
three states of prior σ_b (:mod:`~rigidrot_gym.attitude.components.navigation`), as the
constant it is. The noise comes from the body's navigation stream.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from rigidrot_gym.attitude import variates
from rigidrot_gym.attitude.components.declaration import Component, Feature, Info, Need, State
from rigidrot_gym.attitude.settings import Table, bounded, choice, setting
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.sensors import magnetometer as magnetometer_model


class MagnetometerModel(NamedTuple):
    """Equipment.magnetometer_model: its errors, as the library's
    :class:`~rigidrot_gym.physics.sensors.magnetometer.MagnetometerModel` names them (zeros
    without one)."""

    noise: float  # per-axis white noise std, T
    bias_std: float  # per-axis std of the bias drawn per episode, T
    quantum: float  # the reading's quantum, T (0: unquantised)
    saturation: float  # the largest field it reads per axis, T


# Columns of Equipment.magnetometer: the episode's bias, the last reading (T).
BIAS, READING = slice(0, 3), slice(3, 6)
STATE = 6


class MagnetometerTable(Table, key="magnetometer"):
    """A three-axis magnetometer (needs ``[magnetic_field]``)."""

    model: str = setting(
        "none",
        check=choice(("none", *magnetometer_model.PRESETS)),
        flat="magnetometer_model",
        switch=True,
        doc='"none" or a preset of physics.sensors.magnetometer: "42" (NASA 42: 1 µT noise and quanta, 60 µT '
        'saturation); with navigation.observe not "truth", the field\'s columns show its reading',
    )
    bias: float = setting(
        0.0,
        check=bounded(1e-3),
        unit="T",
        flat="magnetometer_bias",
        doc="per-axis std of a constant bias, drawn per episode",
    )


def constants(table: MagnetometerTable) -> MagnetometerModel:
    """Equipment.magnetometer_model: the preset's errors and the table's bias; zeros
    without one."""
    if table.model == "none":
        return MagnetometerModel(0.0, 0.0, 0.0, 0.0)
    model = magnetometer_model.PRESETS[table.model]
    return MagnetometerModel(model.noise, table.bias, model.quantum, model.saturation)


def biased(equipment) -> bool:
    """The batch's magnetometer has a bias (a std above 0; none without a magnetometer)."""
    return bool(equipment.magnetometer_model.bias_std > 0.0)


@jitable
def variance(equipment):
    """The variance the estimator takes for each axis of a reading's white error, T²: the
    noise's and the rounding's (uniform over a quantum q: q²/12); the bias is a state."""
    m = equipment.magnetometer_model
    return m.noise**2 + m.quantum**2 / 12.0


@jitable
def start(equipment, normals, i):
    """Body i's bias at its episode's start; ``normals``: step 0's of its navigation stream."""
    sigma, out, n = (
        equipment.magnetometer_model.bias_std,
        equipment.magnetometer,
        variates.START_MAGNETOMETER_NORMALS,
    )
    out[i, 0], out[i, 1], out[i, 2] = sigma * normals[n], sigma * normals[n + 1], sigma * normals[n + 2]


@jitable
def read(equipment, field_body, normals, i):
    """Body i's reading of the body-frame field ``field_body`` (3-tuple, T) into
    ``equipment.magnetometer[i, READING]``; ``normals``: the step's normals of its
    navigation stream."""
    m, out, n = equipment.magnetometer_model, equipment.magnetometer, variates.MAGNETOMETER_NORMALS
    out[i, 3], out[i, 4], out[i, 5] = magnetometer_model.read(
        field_body,
        (out[i, 0], out[i, 1], out[i, 2]),
        m.noise,
        m.quantum,
        m.saturation,
        (normals[n], normals[n + 1], normals[n + 2]),
    )


@jitable
def reading(equipment, i):
    """Body i's last reading (3-tuple, T)."""
    out = equipment.magnetometer
    return (out[i, 3], out[i, 4], out[i, 5])


COMPONENT = Component(
    name="magnetometer",
    summary="a magnetometer: the field with white noise, quantisation, saturation and a bias drawn "
    "per episode",
    table=MagnetometerTable,
    on=lambda s: s.magnetometer_model != "none",
    switch="magnetometer.model",
    needs=(Need("magnetic_field", "the field it reads"),),
    features=(
        Feature(
            "magnetometer", lambda s, f: s.magnetometer_model != "none", "a magnetometer reads the field"
        ),
    ),
    state=(
        State(
            "magnetometer",
            "(N, STATE) its bias and last reading",
            lambda b: np.zeros((b.bodies if b.features.magnetometer else 0, STATE)),
            lambda f: f.magnetometer,
        ),
        State(
            "magnetometer_model",
            "its errors (MagnetometerModel)",
            lambda b: constants(b.scenario.magnetometer),
            lambda f: f.magnetometer,
            record=MagnetometerModel,
        ),
    ),
    navigation_normals=3,
    start_normals=3,  # its bias at an episode's start
    noisy="magnetometer",
    info=(
        Info(
            "magnetometer_bias",
            "(N, 3) its true bias, T, where the bias has a std",
            lambda f: f.magnetometer,
            lambda e: e.magnetometer[:, BIAS] if biased(e) else None,
        ),
    ),
)
