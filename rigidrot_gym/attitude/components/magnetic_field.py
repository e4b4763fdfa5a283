"""The Earth's magnetic field along the orbit: the tilted centred dipole of the IGRF's
first-degree coefficients at the orbit's epoch (Basilisk's
``magneticFieldCenteredDipole``), the library's :mod:`~rigidrot_gym.physics.environment.geomagnetic`,
at each body's position (:mod:`~rigidrot_gym.attitude.components.orbit`) and episode time.

The Earth turns under the inertial world frame: its rotation angle is θ(t) = θ₀ + θ̇ t,
θ₀ the Greenwich mean sidereal angle of the epoch (:func:`~rigidrot_gym.physics.environment.earth.gmst`)
and θ̇ that formula's rate (its quadratic term changes θ by ~1e-15 rad over a day). The
coefficients are those of the epoch, held for the episode.

Each evaluation writes body i's field at its episode time (:func:`update`): the
observation's last three columns are that field in the body frame over
:data:`FIELD_SCALE`, and the magnetorquers hold it over the next control period.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from rigidrot_gym.attitude.components import orbit
from rigidrot_gym.attitude.components.declaration import Column, Component, Feature, Need, State
from rigidrot_gym.attitude.rows import ESTIMATE, SENSORS
from rigidrot_gym.attitude.settings import ScenarioError, Table, flag, setting
from rigidrot_gym.physics.environment import earth, geomagnetic
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation.quaternion import qrotate, qrotate_inv

# The observed field is B over this, clipped to ±1: no field in orbit exceeds the surface's
# at the poles, 2 |g₁⁰| ≈ 59 µT (about 47 µT at 500 km).
FIELD_SCALE = 6e-5  # T
COLUMNS = 3
# dθ/dt of the IAU 1982 sidereal angle (earth.gmst): its linear term, rad/s.
SIDEREAL_RATE = ((876600.0 * 3600.0 + 8640184.812866) / (earth.DAYS_PER_CENTURY * earth.SECONDS_PER_DAY)) * (
    2.0 * np.pi / earth.SECONDS_PER_DAY
)


class FieldModel(NamedTuple):
    """Equipment.field_model: the IGRF centred dipole at the orbit's epoch (zeros when off)."""

    dipole: tuple[float, float, float]  # (g₁¹, h₁¹, g₁⁰) in the Earth-fixed frame, T
    radius: float  # the reference radius, m
    theta: float  # θ₀, the Earth's angle (GMST) at the epoch, rad
    theta_rate: float  # θ̇, rad/s


class MagneticFieldTable(Table, key="magnetic_field"):
    """The geomagnetic field along the orbit (needs ``[orbit]``)."""

    enabled: bool = setting(
        False,
        check=flag,
        flat="magnetic_field",
        switch=True,
        doc="the IGRF centred-dipole field at the orbit's epoch; observed in the body frame (3 more columns)",
    )


def constants(orbit_table: orbit.OrbitTable, table: MagneticFieldTable) -> FieldModel:
    """Equipment.field_model; zeros when off.

    Raises:
        ValueError: if the orbit's epoch lies outside the IGRF coefficients' span.
    """
    if not table.enabled:
        return FieldModel((0.0, 0.0, 0.0), 0.0, 0.0, 0.0)
    jd = earth.julian_date(orbit_table.epoch)
    dipole = geomagnetic.igrf_dipole(geomagnetic.decimal_year(jd))
    moment = tuple(float(x) for x in dipole.moment)
    return FieldModel(moment, float(dipole.radius), float(earth.gmst(jd)), SIDEREAL_RATE)


@jitable
def update(equipment, r, t, i):
    """Body i's field (world frame, T) at its position ``r`` (3-tuple, m, world frame) of its
    episode time ``t`` (s) into ``equipment.field[i]``."""
    f = equipment.field_model
    b = geomagnetic.field(f.dipole, f.radius, f.theta + f.theta_rate * t, r)
    equipment.field[i, 0], equipment.field[i, 1], equipment.field[i, 2] = b


@jitable
def observe(equipment, state, principal, obs, column, i):
    """Body i's field in its body frame, B_b = B ⊗ (q_p* B_w q_p) ⊗ B* (q_p its attitude in
    principal axes, B its principal frame), over :data:`FIELD_SCALE` and clipped to ±1,
    into ``obs[i, column:column + 3]``."""
    q = (state[0, i], state[1, i], state[2, i], state[3, i])
    b = (principal[0, i], principal[1, i], principal[2, i], principal[3, i])
    world = (equipment.field[i, 0], equipment.field[i, 1], equipment.field[i, 2])
    body = qrotate(b, qrotate_inv(q, world))
    for c in range(COLUMNS):
        obs[i, column + c] = min(max(body[c] / FIELD_SCALE, -1.0), 1.0)


def _epoch_in_igrf(s) -> None:
    if s.magnetic_field:
        year = geomagnetic.decimal_year(earth.julian_date(s.orbit_epoch))
        if not geomagnetic.FIRST_YEAR <= year <= geomagnetic.LAST_YEAR:
            span = f"{geomagnetic.FIRST_YEAR:.0f}–{geomagnetic.LAST_YEAR:.0f}"
            raise ScenarioError(
                f"field orbit.epoch must lie in {span} (the IGRF coefficients of the "
                f"magnetic field), got {s.orbit_epoch!r}"
            )


def _read(f) -> bool:
    return f.magnetic_field or f.magnetorquers or f.magnetometer


@jitable
def observe_reading(equipment, obs, column, i):
    """Body i's last magnetometer reading over :data:`FIELD_SCALE`, clipped to ±1, into
    ``obs[i, column:column + 3]``: the field's columns where the agent sees through the
    sensors."""
    for c in range(COLUMNS):
        obs[i, column + c] = min(max(equipment.magnetometer[i, 3 + c] / FIELD_SCALE, -1.0), 1.0)


def _observe_of(features):
    """The observation's hook: body i's field at the episode time its counters reached
    (the magnetometer updates it when there is one), in its body frame; or, seen through
    the sensors, the magnetometer's reading."""
    if not features.magnetic_field:
        return None
    with_magnetometer = features.magnetometer
    read = with_magnetometer and features.observed in (SENSORS, ESTIMATE)

    @jitable
    def write(call, bodies, equipment, state, out, column, i):
        if not with_magnetometer:
            t = call.dt * bodies.steps[i]
            update(equipment, orbit.position(equipment, t, i), t, i)
        if read:
            observe_reading(equipment, out.obs, column, i)
        else:
            observe(equipment, state, bodies.principal, out.obs, column, i)
        return column + COLUMNS

    return write


COMPONENT = Component(
    name="magnetic_field",
    summary="the geomagnetic field (IGRF centred dipole) along the orbit, observed in the body frame",
    table=MagneticFieldTable,
    attribute="geomagnetism",
    on=lambda s: s.magnetic_field,
    switch="magnetic_field.enabled",
    needs=(Need("orbit", "the orbit's field"),),
    rules=(_epoch_in_igrf,),
    features=(
        Feature(
            "magnetic_field",
            lambda s, f: s.magnetic_field,
            "the geomagnetic field along the orbit, observed in the body frame",
        ),
    ),
    state=(
        State(
            "field",
            "(N, 3) the magnetic field at the body now, world frame, T",
            lambda b: np.zeros((b.bodies, 3)),
            _read,
        ),
        State(
            "field_model",
            "the dipole and the Earth's angle (FieldModel)",
            lambda b: constants(b.scenario.flight, b.scenario.geomagnetism),
            _read,
            record=FieldModel,
        ),
    ),
    columns=(
        Column(
            "magnetic_field",
            "the field B / 60 µT, body frame (clipped to ±1): the magnetometer's reading where "
            '``observe`` is not ``"truth"``',
            -1.0,
            1.0,
            lambda s, actuators: COLUMNS if s.magnetic_field else 0,
            "3",
            "``magnetic_field``",
            unit="60 µT",
        ),
    ),
    observe=_observe_of,
)
