"""Reaction wheels: n wheels with unit spin axes A (3, n); an action commands the motor
torques u = a ⊙ u_max, which spin the wheels up (ḣ_w = u) and turn the body the other way
(τ = −A u); the wheels' momentum h = A h_w enters Euler's equations,
J ω̇ = τ_ext − A u − ω × (Jω + h). Wheel speeds are limited: |h_w| ≤ h_max, and a wheel at
its top speed can only slow down.

Layouts: ``orthogonal`` (three wheels along the body axes) and ``pyramid`` (four wheels
at β = arccos(1/√3) ≈ 54.7° from body z, 90° apart in azimuth: every body axis gets the
same authority, and any one wheel can fail).

Real wheels (``wheel_model``, a Basilisk preset of
:mod:`~rigidrot_gym.physics.actuators.reaction_wheels`): each wheel's speed relative to the body is
Ω = h_w/J_s − ĝ·ω (h_w its spin momentum about ĝ); the command u_max·a goes through
Basilisk's motor rule (saturation at the same u_max, the episode's, which
``randomize_torque`` draws; deadband; no driving beyond Ω_max) and the bearing
friction τ_f(Ω) (Coulomb and viscous; Stribeck is off in every preset) joins it, both at
the speed of the period's start and held over the period, as Basilisk holds its motor
torque over a task step (its friction it re-evaluates at every integration stage: the
same for the presets' Coulomb friction away from Ω = 0). The net torque u + τ_f spins the
wheel and turns the body the other way; nothing clips the momentum, which the motor rule
bounds to about J_s Ω_max.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np

from rigidrot_gym.attitude.components.declaration import Column, Component, Feature, Info, State
from rigidrot_gym.attitude.rows import OBS_SIZE
from rigidrot_gym.attitude.settings import ScenarioError, Table, choice, flag, positive, setting
from rigidrot_gym.physics.actuators import reaction_wheels
from rigidrot_gym.physics.plumbing.jit import jitable


class WheelParameters(NamedTuple):
    """Equipment.wheel_model: a real wheel's preset, as the library's
    :class:`~rigidrot_gym.physics.actuators.reaction_wheels.WheelModel` names it (zeros for
    ideal wheels)."""

    js: float  # spin inertia, kg·m²
    u_max: float  # motor torque limit, N·m
    u_min: float  # the smallest motor torque (a smaller command gives none), N·m
    omega_max: float  # top speed, rad/s
    coulomb: float  # Coulomb friction torque, N·m
    static: float  # static friction torque, N·m
    beta_static: float  # the Stribeck speed, rad/s (negative: no Stribeck friction)
    viscous: float  # viscous friction, N·m·s
    omega_limit_cycle: float  # the speed of the linear friction zone, rad/s


_PYRAMID_TILT = np.arccos(1.0 / np.sqrt(3.0))
# A momentum within this relative distance of its limit counts as saturated (the clip in
# advance() removes the round-off that would keep it a hair below).
_SATURATION_RTOL = 1e-9


class Wheels(Table, key="wheels"):
    """Reaction wheels instead of ideal torques: actions are wheel torques."""

    layout: str = setting(
        "none",
        check=choice(("none", "orthogonal", "pyramid")),
        flat="wheel_layout",
        switch=True,
        doc='"none" (ideal torques), "orthogonal" (3 wheels) or "pyramid" (4 wheels)',
    )
    max_torque: float = setting(
        0.01, check=positive, unit="N·m", flat="wheel_max_torque", doc="torque limit per wheel"
    )
    max_momentum: float = setting(
        0.05,
        check=positive,
        unit="N·m·s",
        flat="wheel_max_momentum",
        doc="momentum limit per wheel (the speed limit)",
    )
    model: str = setting(
        "ideal",
        check=choice(("ideal", *reaction_wheels.PRESETS)),
        flat="wheel_model",
        switch=True,
        doc='"ideal" (torque and momentum limits only) or a Basilisk preset with its motor limits and '
        'bearing friction: "HR16" (Honeywell, 50 N·m·s), "RWP015" (BCT), "RW0" (NanoAvionics)',
    )
    terminate_on_saturation: bool = setting(
        False,
        check=flag,
        flat="wheel_terminate_on_saturation",
        doc="a wheel at its momentum limit ends the episode (terminated, rewarded as unsafe)",
    )


def wheel_axes(layout: str) -> np.ndarray:
    """(3, n) unit spin axes of the wheels in the body frame."""
    if layout == "orthogonal":
        return np.eye(3)
    if layout == "pyramid":
        azimuth = np.radians([0.0, 90.0, 180.0, 270.0])
        s, c = np.sin(_PYRAMID_TILT), np.cos(_PYRAMID_TILT)
        return np.stack([s * np.cos(azimuth), s * np.sin(azimuth), np.full(4, c)])
    raise ValueError(f"unknown wheel layout {layout!r}; valid: 'orthogonal', 'pyramid'")


def model_constants(name: str) -> WheelParameters:
    """Equipment.wheel_model of the preset ``name``; zeros for ``"ideal"`` (the pipeline
    then never reads them)."""
    if name == "ideal":
        return WheelParameters(*[0.0] * len(WheelParameters._fields))
    return WheelParameters(**dataclasses.asdict(reaction_wheels.PRESETS[name]))


@jitable
def net_torque(model, u_cmd, u_max, h, spin, dt):
    """A real wheel's net torque on itself (N·m) over a period ``dt`` (s): Basilisk's motor
    torque for the command ``u_cmd``, saturated at ``u_max`` (the episode's limit: the
    preset's, × (1 ± r) with ``randomize_torque`` r), plus the bearing friction, at the relative speed
    Ω = h/J_s − ``spin`` (``spin`` = ĝ·ω, the body's rate about the wheel's axis, rad/s;
    ``h`` its spin momentum, N·m·s). The friction is capped at J_s|Ω|/dt, what stops the
    wheel relative to the body within the period: held over a period longer than the
    wheel takes to stop, the Coulomb torque would otherwise drive it backwards and chatter
    (a small wheel's J_s/τ_c is ~0.6 s at 1 rad/s: RW0)."""
    omega = h / model.js - spin
    u = reaction_wheels.motor_torque(u_cmd, omega, u_max, model.u_min, model.omega_max)
    friction = reaction_wheels.friction_torque(
        omega,
        False,
        model.coulomb,
        model.static,
        model.beta_static,
        model.viscous,
        model.omega_limit_cycle,
    )
    stop = model.js * abs(omega) / dt
    return u + min(max(friction, -stop), stop)


@jitable
def limit_by_momentum(u, h, h_max, dt):
    """Wheel torque u (N·m) cut so that the wheel, at momentum h (N·m·s), does not pass
    its limit h_max within dt (s): h + u dt ∈ [−h_max, h_max] (a wheel at its top speed
    can only slow down). Scalars or arrays."""
    return np.minimum(np.maximum(u, (-h_max - h) / dt), (h_max - h) / dt)


@jitable
def advance(equipment, work, dt, real, i):
    """End of body i's committed period: h_w += u dt and its saturation flag. Ideal wheels'
    momenta are clipped to their limits (their commands were cut to stay within them, so
    the clip only removes round-off); a ``real`` wheel's are not (the motor rule bounds its
    speed, friction may carry it a little past: a clip would break the momentum balance)."""
    hit = False
    for k in range(equipment.wheel_momentum.shape[1]):  # the first actuators (rods may follow)
        limit = equipment.max_momentum[k]
        h = equipment.wheel_momentum[i, k] + work.commands[k, i] * dt
        if not real:
            h = min(max(h, -limit), limit)
        equipment.wheel_momentum[i, k] = h
        hit = hit or abs(h) >= limit * (1.0 - _SATURATION_RTOL)
    equipment.saturated[i] = hit


@jitable
def observe(equipment, obs, i):
    """Body i's wheel momenta h_w / h_max (clipped to ±1: a real wheel may pass its limit by
    a little), the observation's columns after the first seven."""
    for k in range(equipment.wheel_momentum.shape[1]):
        obs[i, OBS_SIZE + k] = min(max(equipment.wheel_momentum[i, k] / equipment.max_momentum[k], -1.0), 1.0)


def _preset_needs_wheels(s) -> None:
    if s.wheel_model != "ideal" and not s.wheels:
        raise ScenarioError("wheels.model needs wheels.layout (the wheels it models)")


def _preset_sets_limits(s) -> None:
    limits = (s.wheel_max_torque, s.wheel_max_momentum) != (Wheels.max_torque, Wheels.max_momentum)
    if s.wheel_model != "ideal" and limits:
        raise ScenarioError(
            "wheels.model sets the wheels' limits: leave wheels.max_torque and max_momentum out"
        )


def _reset(episode) -> None:
    episode.equipment.wheel_momentum[episode.rows] = 0.0
    episode.equipment.saturated[episode.rows] = False


def _advance_of(features):
    """The advance's hook: body i's wheel momenta and saturation flag one period on."""
    if not features.wheels:
        return None
    real = features.real_wheels

    @jitable
    def momenta(call, bodies, equipment, work, walk, lo, i):
        advance(equipment, work, call.dt, real, i)

    return momenta


def _observe_of(features):
    """The observation's hook: body i's wheel momenta (the first columns after the seven)."""
    if not features.wheels:
        return None

    @jitable
    def write(call, bodies, equipment, state, out, column, i):
        observe(equipment, out.obs, i)
        return column + equipment.wheel_momentum.shape[1]

    return write


COMPONENT = Component(
    name="wheels",
    summary="reaction wheels: actions are motor torques, τ = −A u; momentum limits or a Basilisk "
    "preset's motor rule and bearing friction",
    table=Wheels,
    attribute="reaction_wheels",  # not `wheels`: that is the bool "wheels instead of torquers"
    on=lambda s: s.wheels,
    switch="wheels.layout",
    rules=(_preset_needs_wheels, _preset_sets_limits),
    features=(
        Feature("wheels", lambda s, f: s.wheels, "reaction wheels (n wheel torques), else ideal torquers"),
        Feature(
            "real_wheels",
            lambda s, f: s.wheels and s.wheel_model != "ideal",
            "the wheels' motor rule and bearing friction (a Basilisk preset)",
        ),
        Feature(
            "end_on_saturation",
            lambda s, f: s.wheels and s.wheel_terminate_on_saturation,
            "a saturated wheel ends the episode",
        ),
    ),
    state=(
        State(
            "wheel_momentum",
            "(N, wheels) wheel momenta about their spin axes, N·m·s",
            lambda b: np.zeros((b.bodies, b.actuators.torquing if b.scenario.wheels else 0)),
            lambda f: f.wheels,
        ),
        State(
            "saturated",
            "(N,) bool: a wheel at its momentum limit",
            lambda b: np.zeros(b.bodies, dtype=bool),
            lambda f: f.wheels,
        ),
        State(
            "max_momentum",
            "(n,) wheel momentum limits, N·m·s (inf for the others)",
            lambda b: b.actuators.max_momentum,
            lambda f: f.wheels,
        ),
        State(
            "end_on_saturation",
            "the unsafe penalty a saturation costs when it ends the episode",
            lambda b: float(b.scenario.reward_unsafe) if b.scenario.wheel_terminate_on_saturation else 0.0,
            lambda f: f.end_on_saturation,
        ),
        State(
            "wheel_model",
            "a real wheel's constants (WheelParameters)",
            lambda b: model_constants(b.scenario.wheel_model),
            lambda f: f.real_wheels,
            record=WheelParameters,
        ),
    ),
    reset=_reset,
    columns=(
        Column(
            "wheel_momenta",
            "each wheel's momentum h_w / its limit",
            -1.0,
            1.0,
            lambda s, actuators: actuators.torquing if s.wheels else 0,
            "one per wheel",
            "``wheel_layout``",
            unit="the wheel's momentum limit (N·m·s)",
        ),
    ),
    info=(
        Info(
            "wheel_momentum",
            "(N, n) each wheel's momentum, N·m·s",
            lambda f: f.wheels,
            lambda e: e.wheel_momentum,
        ),
        Info(
            "wheel_saturated", "(N,) a wheel at its momentum limit", lambda f: f.wheels, lambda e: e.saturated
        ),
    ),
    advance=_advance_of,
    observe=_observe_of,
)
