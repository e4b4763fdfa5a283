"""The Sun as the body sees it along the orbit: the direction to the Sun from the body and
the Earth's shadow, by the library's :mod:`~rigidrot_gym.physics.environment.sun` (the Astronomical
Almanac's low-precision ephemeris, 0.01°; the conical shadow with penumbra of Basilisk's
``eclipse`` module) at each body's position (:mod:`~rigidrot_gym.attitude.components.orbit`)
and episode time, counted from the orbit's epoch as UTC.

Each evaluation writes body i's Sun direction and shadow factor at its episode time
(:func:`update`): the observation gains four columns, the unit vector to the Sun in the
body frame and the shadow factor ν (1 in sunlight, 0 in the umbra), the truth a Sun
sensor would measure (the sensors come with the estimation issue). The direction is from
the body, not the Earth's centre: the parallax of a low orbit is 0.003°.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from rigidrot_gym.attitude.components import orbit
from rigidrot_gym.attitude.components.declaration import Column, Component, Feature, Need, State
from rigidrot_gym.attitude.settings import Table, flag, setting
from rigidrot_gym.physics.environment import earth, sun
from rigidrot_gym.physics.plumbing.jit import jitable, kernel
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.quaternion import qrotate, qrotate_inv

# Entries of Equipment.sunlight[i]: the unit vector to the Sun (world frame), then ν.
SHADOW = 3
COLUMNS = 4
# The most episode steps whose Sun is kept (Equipment.sun_steps, 2.4 MB); later steps of a
# longer episode compute theirs.
KEPT_STEPS = 100_000


class SunModel(NamedTuple):
    """Equipment.sun_model (zeros without an orbit)."""

    epoch_jd: float  # the Julian date of the orbit's epoch


class SunTable(Table, key="sun"):
    """The Sun's direction and the Earth's shadow along the orbit (needs ``[orbit]``)."""

    enabled: bool = setting(
        False,
        check=flag,
        flat="sun",
        switch=True,
        doc="the direction to the Sun in the body frame and the Earth's shadow factor (4 more columns)",
    )


def constants(orbit_table: orbit.OrbitTable) -> SunModel:
    """Equipment.sun_model, for the Sun's columns and a Sun target; zeros without an orbit."""
    return SunModel(earth.julian_date(orbit_table.epoch) if orbit_table.enabled else 0.0)


@jitable
def seen_from(equipment, r, t):
    """The vector from the position ``r`` (3-tuple, m, world frame) to the Sun (m) and the
    shadow factor ν there at episode time ``t`` (s)."""
    s = sun.position(equipment.sun_model.epoch_jd + t / earth.SECONDS_PER_DAY)
    return vec.sub(s, r), sun.shadow_factor(r, s, earth.RADIUS, sun.RADIUS)


@jitable
def seen_at_step(equipment, r, step, t):
    """:func:`seen_from` at episode step ``step`` (its time ``t`` = ``step`` dt): the Sun's
    position is the same for every body at that step, kept once for the batch
    (:func:`along_steps`), and computed only past the kept steps."""
    kept = equipment.sun_steps
    if step >= kept.shape[0]:
        return seen_from(equipment, r, t)
    s = (kept[step, 0], kept[step, 1], kept[step, 2])
    return vec.sub(s, r), sun.shadow_factor(r, s, earth.RADIUS, sun.RADIUS)


@kernel
def _along(epoch_jd, dt, out):
    for k in range(out.shape[0]):
        t = dt * k  # as the sensors' period reads its episode time (stages.sense)
        out[k, 0], out[k, 1], out[k, 2] = sun.position(epoch_jd + t / earth.SECONDS_PER_DAY)


def along_steps(orbit_table: orbit.OrbitTable, dt: float, steps: int) -> np.ndarray:
    """(K + 1, 3) the Sun's position (m, world frame) at the episode steps k = 0 … K
    (K = ``steps``, at most :data:`KEPT_STEPS`) of control period ``dt`` (s), computed as
    :func:`seen_from` computes it at time k·dt (compiled alike, bit for bit); (0, 3)
    without an orbit."""
    if not orbit_table.enabled:
        return np.zeros((0, 3))
    out = np.empty((min(steps, KEPT_STEPS) + 1, 3))
    _along(earth.julian_date(orbit_table.epoch), float(dt), out)
    return out


@jitable
def sight(equipment, t, i):
    """The unit vector from body i to the Sun (3-tuple, world frame) and the shadow factor
    ν at its episode time ``t`` (s). Plain Python too, for an index array ``i``."""
    to_sun, shadow = seen_from(equipment, orbit.position(equipment, t, i), t)
    return vec.scale(1.0 / vec.norm(to_sun), to_sun), shadow


@jitable
def update(equipment, t, i):
    """Body i's Sun direction and shadow factor at its episode time ``t`` (s) into
    ``equipment.sunlight[i]``."""
    direction, shadow = sight(equipment, t, i)
    out = equipment.sunlight
    out[i, 0], out[i, 1], out[i, 2] = direction
    out[i, SHADOW] = shadow


@jitable
def observe(equipment, state, principal, obs, column, i):
    """Body i's Sun direction in its body frame (q_p its attitude in principal axes, B its
    principal frame, as the field's) and its shadow factor into ``obs[i, column:column + 4]``."""
    q = (state[0, i], state[1, i], state[2, i], state[3, i])
    b = (principal[0, i], principal[1, i], principal[2, i], principal[3, i])
    s = equipment.sunlight
    body = qrotate(b, qrotate_inv(q, (s[i, 0], s[i, 1], s[i, 2])))
    obs[i, column], obs[i, column + 1], obs[i, column + 2] = body
    obs[i, column + 3] = s[i, SHADOW]


def _observe_of(features):
    """The observation's hook: body i's Sun and shadow at the episode time its counters
    reached."""
    if not features.sun:
        return None

    @jitable
    def write(call, bodies, equipment, state, out, column, i):
        update(equipment, call.dt * bodies.steps[i], i)
        observe(equipment, state, bodies.principal, out.obs, column, i)
        return column + COLUMNS

    return write


COMPONENT = Component(
    name="sunlight",
    summary="the Sun's direction and the Earth's shadow (conical, Montenbruck & Gill) along the orbit",
    table=SunTable,
    attribute="sunlight",  # not `sun`: that is the switch's keyword name
    on=lambda s: s.sun,
    switch="sun.enabled",
    needs=(Need("orbit", "the Sun seen from the orbit"),),
    features=(
        Feature(
            "sun",
            lambda s, f: s.sun,
            "the Sun's direction and the Earth's shadow, observed in the body frame",
        ),
    ),
    state=(
        State(
            "sunlight",
            "(N, 4) the direction to the Sun now (world frame) and the shadow factor",
            lambda b: np.zeros((b.bodies, COLUMNS)),
            lambda f: f.sun,
        ),
        State(
            "sun_model",
            "the epoch's Julian date (SunModel)",
            lambda b: constants(b.scenario.flight),
            # a moving target's kernel types the Sun frame's branch too (targets.track)
            lambda f: f.sun or f.moving_target or f.sun_sensors or f.star_tracker or f.surfaces,
            record=SunModel,
        ),
        State(
            "sun_steps",
            "(K + 1, 3) the Sun's position at each episode step, world frame, m (along_steps)",
            lambda b: along_steps(b.scenario.flight, b.scenario.dt, b.scenario.max_episode_steps),
            lambda f: f.sun_sensors or f.star_tracker,
        ),
    ),
    columns=(
        Column(
            "sun",
            "the unit vector to the Sun, body frame, and the shadow factor ν (1 in sunlight, 0 in the umbra)",
            -1.0,
            1.0,
            lambda s, actuators: COLUMNS if s.sun else 0,
            "4",
            "``sun``",
            unit="1 (a unit vector; ν a fraction)",
        ),
    ),
    observe=_observe_of,
)
