"""Stage 3, loads: the torque parameters each body holds over the period, the terms of the
library's compiled torque model (:func:`model`,
:func:`~rigidrot_gym.physics.rotation.torques.model_of`).

The body torque is the sum of the torques the components declare (``load`` hooks,
:func:`~rigidrot_gym.attitude.stages.hooks.declared`: the disturbances', and any
component's held torque), in the list's order, then the actuators'; a component's torque
evaluated at every integrator stage (``Component.torque``) is a term of the model, whose
parameters it holds in rows of its own (:data:`~rigidrot_gym.attitude.data.TORQUE_ROWS`).
Reads ``work.commands``, the body frames, the components' state, the field (with
magnetorquers), the wheel momenta and the orbit (gravity gradient); writes ``work.params``
(and the magnetorquers' held dipole)."""

from __future__ import annotations

import functools
from collections.abc import Callable

from rigidrot_gym.attitude.components import COMPONENTS, gravity_gradient, loads, magnetorquers
from rigidrot_gym.attitude.data import TORQUE_ROWS, Features
from rigidrot_gym.attitude.stages.hooks import chain, declared
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import torques
from rigidrot_gym.physics.rotation import vector as vec

# A hook is ``load(bodies, equipment, work, dt, i) -> τ``: body i's body-frame torque (N·m).


def _then(first: Callable, second: Callable) -> Callable:
    @jitable
    def both(bodies, equipment, work, dt, i):
        return vec.add(first(bodies, equipment, work, dt, i), second(bodies, equipment, work, dt, i))

    return both


@jitable
def _nothing(bodies, equipment, work, dt, i):
    return (0.0, 0.0, 0.0)


def _terms(features: Features) -> list:
    """The components' torques (``Component.torque``) a batch with ``features`` has, in the
    list's order, with their first rows."""
    return [
        (c.torque, TORQUE_ROWS[c.name]) for c in COMPONENTS if c.torque is not None and c.torque.on(features)
    ]


@functools.cache
def model(features: Features) -> tuple[Callable, Callable]:
    """The compiled torque model of a batch with ``features``: the library's terms its
    loads hold (:func:`~rigidrot_gym.physics.rotation.torques.model_of`) and its components'
    torques, and ``read(params, i)``, the reader of each body's parameter tuple."""
    terms = tuple((torque.term, row) for torque, row in _terms(features))
    compiled = torques.model_of(features.wheels, features.gravity_gradient, features.magnetorquers, terms)
    return compiled, torques.reader(max([torques.SIZE] + [row + term.size for term, row in terms]))


def substeps(features: Features) -> Callable | None:
    """``substep(work, m, lo, hi)``: the components' torque terms that switch at sub-step
    boundaries (``Torque.substep``) set for sub-step m, in the list's order; None where a
    batch with ``features`` has none (the integrator then takes the period in one run)."""
    hooks = [(torque.substep, row) for torque, row in _terms(features) if torque.substep is not None]
    return chain((_at_substep(hook, row) for hook, row in hooks), _in_turn_substep, None)


def _at_substep(hook: Callable, row: int) -> Callable:
    @jitable
    def write(work, m, lo, hi):
        hook(work, row, m, lo, hi)

    return write


def _in_turn_substep(first: Callable, second: Callable) -> Callable:
    @jitable
    def both(work, m, lo, hi):
        first(work, m, lo, hi)
        second(work, m, lo, hi)

    return both


def _held(hold: Callable, row: int) -> Callable:
    @jitable
    def write(bodies, equipment, work, dt, i):
        hold(bodies, equipment, work, dt, row, i)

    return write


def _in_turn(first: Callable, second: Callable) -> Callable:
    @jitable
    def both(bodies, equipment, work, dt, i):
        first(bodies, equipment, work, dt, i)
        second(bodies, equipment, work, dt, i)

    return both


def stage(features: Features) -> Callable:
    """``load(bodies, equipment, work, dt, i)``: body i's torque parameters held over the
    period: the components' torques, the actuators' (the magnetorquers' dipole in the
    field), the wheels' momentum, the gravity gradient and the components' terms, where
    the scenario has them."""
    with_wheels, with_rods = features.wheels, features.magnetorquers
    with_gravity, with_orbit = features.gravity_gradient, features.orbit_gravity
    with_thrusters = features.thrusters
    held = chain(declared("load", features), _then, _nothing)
    terms = chain((_held(torque.hold, row) for torque, row in _terms(features)), _in_turn, None)
    with_terms = terms is not None

    @jitable
    def load(bodies, equipment, work, dt, i):
        p = bodies.principal
        b = (p[0, i], p[1, i], p[2, i], p[3, i])
        tau = held(bodies, equipment, work, dt, i)
        # The actuators with torques of their own come first; rods, if any, follow them.
        wheel_count = equipment.wheel_momentum.shape[1] if with_wheels else 0
        # thrusters' torque is a term that switches within the period, held by none
        torquing = wheel_count if with_rods else (0 if with_thrusters else work.commands.shape[0])
        if with_rods:  # their dipole in the field
            magnetorquers.hold(equipment, work, b, work.params, torquing, i)
        tau = loads.actuator_torque(equipment, work, tau, torquing, i)
        loads.hold_body_torque(tau, b, work.params, i)
        if with_wheels:
            h, hdot = loads.wheel_momentum(equipment, work, i)
            loads.hold_wheel_momentum(h, hdot, b, work.params, i)
        if with_gravity:
            if with_orbit:
                gravity_gradient.hold_orbit(equipment, bodies, work.params, dt * bodies.steps[i], i)
            else:
                gravity_gradient.hold(equipment, bodies, work.params, i)
        if with_terms:
            terms(bodies, equipment, work, dt, i)

    return load
