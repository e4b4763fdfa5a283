"""Attitude-control thrusters: eight thrusters on the body's box
(:func:`~rigidrot_gym.physics.actuators.thrusters.eight_thrusters`, the layout of Basilisk's
thrForceMapping tests), each firing at full thrust for an on-time within the control period.

Two ways to command them (``thruster_command``):

* ``"torque"``: the action is a body torque request, a ⊙ τ_max (τ_max about each axis: what
  the thrusters with a positive arm about it give together at full thrust), mapped to
  thruster forces as Basilisk's ``thrForceMapping`` does
  (:func:`~rigidrot_gym.physics.actuators.thrusters.map_torque`: minimum-norm forces made
  non-negative, scaled down where one exceeds its thrust) and the forces to on-times by pulse
  modulation, Basilisk's ``thrFiringRemainder`` (the remainder below the minimum on-time
  carried to the next period) or ``thrFiringSchmitt`` (a Schmitt trigger on the duty level
  below it), each thruster's memory carried from period to period;
* ``"on_times"``: one action per thruster, its on-time max(a, 0) · Δt (a command shorter
  than the minimum on-time fires nothing, as Basilisk's effector drops it).

A firing starts with the period and lasts its on-time, rounded to whole sub-steps of the
period (``substeps``: the on-time's resolution is Δt / substeps; at 0.2 s and 20 sub-steps,
10 ms, the VACCO MiPS's minimum pulse). The integrator takes the period one sub-step at
a time, each under the torque of the thrusters firing in it
(:func:`substep`): it sees the thrusters switch between its steps, never within one, so the
firings are integrated exactly as the steps they are, not as a torque averaged over the
period. A request at or above the whole period (which Basilisk's modules send as 1.1 Δt, to
be cut by the next command) fires for the whole period. The propellant burnt, F t/(Isp g₀),
adds up over the episode (``info["propellant"]``, kg), with each period's on-times
(``info["thruster_on_times"]``, s). A thruster stuck off or on (``faults.thruster``,
:mod:`~rigidrot_gym.attitude.components.faults`) fires nothing or the whole period from the
fault on, whatever its command.

Left out: thrust build-up and tail-off (Basilisk's ramps, off by default), the mass that the
propellant takes away (the inertia stays), the thrusters' force on the orbit, and plume
impingement.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from rigidrot_gym.attitude.components import faults
from rigidrot_gym.attitude.components.declaration import Component, Feature, Info, State, Torque
from rigidrot_gym.attitude.settings import ScenarioError, Table, bounded, choice, setting, vector
from rigidrot_gym.physics.actuators import thrusters as model
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import torques
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.quaternion import qrotate_inv

COUNT = 8  # thrusters of the layout
PRESETS = {"MiPS": model.VACCO_MIPS, "MONARC-1": model.MOOG_MONARC_1}
COMMANDS = ("torque", "on_times")
MODULATIONS = ("remainder", "schmitt")

# Layout of the term's parameters, the period's work (a period that commits nothing leaves
# the bodies' state as it was): the torque of the thrusters firing in the sub-step (3), then
# per thruster its torque at full thrust (3, principal axes), the whole sub-steps it fires,
# its modulation's memory after the period and its mapped force (N).
ACTIVE = 0
FIRST = 3
PER_THRUSTER = 6
SUBSTEPS, MEMORY, FORCE = 3, 4, 5  # within a thruster's rows
SIZE = FIRST + PER_THRUSTER * COUNT


class ThrustersTable(Table, key="thrusters"):
    """Thrusters instead of ideal torques: actions are torque requests or on-times."""

    layout: str = setting(
        "none",
        check=choice(("none", "eight")),
        flat="thruster_layout",
        switch=True,
        doc='"none", or "eight" (two at each end of two opposite vertical edges of the box)',
    )
    model: str = setting(
        "MiPS",
        check=choice(tuple(PRESETS)),
        flat="thruster_model",
        doc='the thrusters\' preset: "MiPS" (VACCO cold gas: 55 mN, 10 ms minimum pulse, Isp 65 s) or '
        '"MONARC-1" (MOOG hydrazine: 0.9 N, 20 ms, Isp 227.5 s)',
    )
    half_sizes: np.ndarray = setting(
        (0.05, 0.11315, 0.183),
        check=vector(3, positive=True),
        unit="m",
        flat="thruster_half_sizes",
        doc="the half-sizes of the box they sit on, body axes (a 6U CubeSat's)",
    )
    command: str = setting(
        "torque",
        check=choice(COMMANDS),
        flat="thruster_command",
        doc='"torque" (a body torque, mapped and pulse-modulated) or "on_times" (one per thruster)',
    )
    modulation: str = setting(
        "remainder",
        check=choice(MODULATIONS),
        flat="thruster_modulation",
        doc='"remainder" (thrFiringRemainder) or "schmitt" (thrFiringSchmitt), with torque commands',
    )
    level_on: float = setting(
        0.75,
        check=bounded(1.0),
        flat="thruster_level_on",
        doc="the Schmitt trigger's on level (duty of t_min)",
    )
    level_off: float = setting(
        0.25, check=bounded(1.0), flat="thruster_level_off", doc="the Schmitt trigger's off level"
    )


class ThrusterModel(NamedTuple):
    """Equipment.thruster_model: the preset's figures and the modulation's levels (zeros
    without thrusters)."""

    max_thrust: float  # N
    min_on_time: float  # s
    isp: float  # s
    level_on: float
    level_off: float
    torque_command: bool  # torque requests (else on-times)
    schmitt: bool  # the Schmitt trigger (else the remainder)
    resolution: float  # the on-time's, Δt / substeps, s


def thruster_set(table: ThrustersTable) -> model.ThrusterSet:
    """The library's set of the table's thrusters."""
    return model.eight_thrusters(table.half_sizes, PRESETS[table.model])


def max_torque(table: ThrustersTable) -> np.ndarray:
    """(3,) τ_max about each body axis: the torque of the thrusters whose arm about it is
    positive, together at full thrust (N·m): what a torque command of ±1 requests."""
    s = thruster_set(table)
    return (s.max_thrust[:, None] * np.maximum(s.torque_arms, 0.0)).sum(axis=0)


def _constants(scenario) -> ThrusterModel:
    table = scenario.propulsion
    if table.layout == "none":
        return ThrusterModel(0.0, 0.0, 0.0, 0.0, 0.0, False, False, 0.0)
    preset = PRESETS[table.model]
    return ThrusterModel(
        preset.max_thrust,
        preset.min_on_time,
        preset.isp,
        table.level_on,
        table.level_off,
        table.command == "torque",
        table.modulation == "schmitt",
        scenario.dt / scenario.substeps,
    )


def _full_torques(table: ThrustersTable) -> np.ndarray:
    """(COUNT, 3) each thruster's torque at full thrust, body frame, N·m."""
    if table.layout == "none":
        return np.zeros((COUNT, 3))
    s = thruster_set(table)
    return s.max_thrust[:, None] * s.torque_arms


def _mapping(table: ThrustersTable) -> np.ndarray:
    return np.zeros((COUNT, 3)) if table.layout == "none" else model.mapping_matrix(thruster_set(table))


@jitable
def whole_substeps(on_time, resolution):
    """The sub-steps a firing of ``on_time`` (s) lasts: rounded to the nearest whole one."""
    return np.floor(on_time / resolution + 0.5)


@jitable
def _on_time(equipment, work, dt, at, k, i):
    """Thruster k's on-time (s) this period for body i, and its modulation's memory after
    it: from its mapped force (row ``at + FORCE``) by the modulation, or the commanded
    on-time (a command under the minimum on-time fires nothing)."""
    m, memory = equipment.thruster_model, equipment.thruster_memory
    if not m.torque_command:
        on = min(max(work.commands[k, i], 0.0), dt)
        return (on if on >= m.min_on_time else 0.0), 0.0
    force = work.params[at + FORCE, i]
    if m.schmitt:
        on, fired = model.schmitt_on_time(
            force, memory[i, k] > 0.5, m.max_thrust, dt, m.min_on_time, m.level_on, m.level_off, 0
        )
        return min(on, dt), (1.0 if fired else 0.0)
    on, kept = model.remainder_on_time(force, memory[i, k], m.max_thrust, dt, m.min_on_time, 0)
    return min(on, dt), kept


@jitable
def hold(bodies, equipment, work, dt, row, i):
    """Body i's parameters of the term for the period: per thruster its torque at full
    thrust in principal axes, the whole sub-steps it fires (its on-time from the torque
    request's mapped force and the modulation, or as commanded; a failed thruster's as it
    fires, :func:`~rigidrot_gym.attitude.components.faults.thruster_substeps`) and its
    modulation's memory after the period, as the flight software computed it (committed by
    the advance hook)."""
    p, o, full, m = work.params, bodies.principal, equipment.thruster_torques, equipment.thruster_model
    if m.torque_command:  # the request's forces into their rows
        request = (work.commands[0, i], work.commands[1, i], work.commands[2, i])
        forces = p[row + FIRST + FORCE : row + SIZE : PER_THRUSTER, i]
        model.map_torque(equipment.thruster_mapping, equipment.thruster_thrust, request, forces)
    b = (o[0, i], o[1, i], o[2, i], o[3, i])
    t, substeps = dt * bodies.steps[i], whole_substeps(dt, m.resolution)  # episode time, the period's
    for k in range(COUNT):
        at = row + FIRST + PER_THRUSTER * k
        p[at, i], p[at + 1, i], p[at + 2, i] = qrotate_inv(b, (full[k, 0], full[k, 1], full[k, 2]))
        on, kept = _on_time(equipment, work, dt, at, k, i)
        whole = faults.thruster_substeps(equipment, substeps, whole_substeps(on, m.resolution), t, k, i)
        p[at + SUBSTEPS, i], p[at + MEMORY, i] = whole, kept


@jitable
def substep(work, row, m, lo, hi):
    """The torque of the thrusters firing in sub-step m (those whose whole sub-steps
    exceed m) into the term's first rows, for bodies ``lo`` … ``hi`` − 1."""
    p = work.params
    for i in range(lo, hi):
        tau = (0.0, 0.0, 0.0)
        for k in range(COUNT):
            at = row + FIRST + PER_THRUSTER * k
            if m < p[at + SUBSTEPS, i]:
                tau = vec.add(tau, (p[at, i], p[at + 1, i], p[at + 2, i]))
        p[row, i], p[row + 1, i], p[row + 2, i] = tau


@jitable
def add(tau, t, q, omega, own):
    """τ + the torque of the thrusters firing in the sub-step (held over it)."""
    return vec.add(tau, (own[ACTIVE], own[ACTIVE + 1], own[ACTIVE + 2]))


TERM = torques.Term("thrusters", SIZE, add)


def _advance_of(features):
    if not features.thrusters:
        return None
    from rigidrot_gym.attitude.data import TORQUE_ROWS  # laid out once every component is

    first = TORQUE_ROWS["thrusters"] + FIRST

    @jitable
    def advance(call, bodies, equipment, work, walk, lo, i):
        """Body i's modulation memory and on-times committed, its propellant added: the
        on-times as fired (whole sub-steps)."""
        m, p = equipment.thruster_model, work.params
        burnt = 0.0
        for k in range(COUNT):
            at = first + PER_THRUSTER * k
            fired = m.resolution * p[at + SUBSTEPS, i]
            equipment.thruster_memory[i, k] = p[at + MEMORY, i]
            equipment.thruster_on_times[i, k] = fired
            burnt += model.propellant_mass(m.max_thrust, fired, m.isp)
        equipment.propellant[i] += burnt

    return advance


def _alone(s) -> None:
    if s.thruster_layout != "none" and (s.wheels or s.magnetorquers):
        raise ScenarioError(
            "thrusters.layout fly the body alone: leave wheels.layout and magnetorquers.enabled out "
            f"(got wheels.layout={s.wheel_layout!r}, magnetorquers.enabled={s.magnetorquers!r})"
        )
    if s.thruster_layout != "none" and s.thruster_level_off > s.thruster_level_on:
        raise ScenarioError(
            "field thrusters.level_off must be ≤ thrusters.level_on, "
            f"got {s.thruster_level_off!r} > {s.thruster_level_on!r}"
        )


def _reset(episode) -> None:
    e, rows = episode.equipment, episode.rows
    e.thruster_memory[rows] = 0.0
    e.thruster_on_times[rows] = 0.0
    e.propellant[rows] = 0.0


def _per_body(width: int):
    return lambda b: np.zeros((b.bodies, width)) if b.features.thrusters else np.zeros((b.bodies, 0))


COMPONENT = Component(
    name="thrusters",
    summary="eight thrusters on the box, fired for whole sub-steps by torque requests (mapped and "
    "pulse-modulated as Basilisk's) or on-times",
    table=ThrustersTable,
    attribute="propulsion",
    on=lambda s: s.thruster_layout != "none",
    switch="thrusters.layout",
    rules=(_alone,),
    features=(
        Feature("thrusters", lambda s, f: s.thruster_layout != "none", "thrusters fire for whole sub-steps"),
    ),
    state=(
        State(
            "thruster_model",
            "the preset and levels (ThrusterModel)",
            lambda b: _constants(b.scenario),
            lambda f: f.thrusters,
            record=ThrusterModel,
        ),
        State(
            "thruster_torques",
            "(COUNT, 3) each thruster's torque at full thrust, body frame, N·m",
            lambda b: _full_torques(b.scenario.propulsion),
            lambda f: f.thrusters,
        ),
        State(
            "thruster_mapping",
            "(COUNT, 3) the mapping's matrix Dᵀ(DDᵀ)⁻¹",
            lambda b: _mapping(b.scenario.propulsion),
            lambda f: f.thrusters,
        ),
        State(
            "thruster_thrust",
            "(COUNT,) each thruster's full thrust, N",
            lambda b: np.full(COUNT, _constants(b.scenario).max_thrust),
            lambda f: f.thrusters,
        ),
        State(
            "thruster_memory",
            "(N, COUNT) the modulation's memory (remainder, or Schmitt's last state)",
            _per_body(COUNT),
            lambda f: f.thrusters,
        ),
        State(
            "thruster_on_times",
            "(N, COUNT) the last period's on-times as fired, s",
            _per_body(COUNT),
            lambda f: f.thrusters,
        ),
        State(
            "propellant",
            "(N,) the propellant burnt in the episode, kg",
            lambda b: np.zeros(b.bodies),
            lambda f: f.thrusters,
        ),
    ),
    reset=_reset,
    info=(
        Info(
            "propellant",
            "the propellant burnt in the episode, kg",
            lambda f: f.thrusters,
            lambda e: e.propellant,
        ),
        Info(
            "thruster_on_times",
            "each thruster's on-time in the last period, s",
            lambda f: f.thrusters,
            lambda e: e.thruster_on_times,
        ),
    ),
    advance=_advance_of,
    torque=Torque(TERM, lambda f: f.thrusters, hold, substep),
    keeps_digests=True,
)
