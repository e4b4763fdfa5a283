"""Stage 3, loads: the torque parameters each body holds over the period, the terms of the
library's compiled torque model (:func:`~rigidrot_gym.physics.rotation.torques.model_of`).

The body torque is the sum of the torques the components declare (``load`` hooks,
:func:`~rigidrot_gym.attitude.stages.hooks.declared`: the disturbances', and any
component's held torque), in the list's order, then the actuators'. Reads
``work.commands``, the body frames, the components' state, the field (with
magnetorquers), the wheel momenta and the orbit (gravity gradient); writes ``work.params``
(and the magnetorquers' held dipole)."""

from __future__ import annotations

from collections.abc import Callable

from rigidrot_gym.attitude.components import gravity_gradient, loads, magnetorquers
from rigidrot_gym.attitude.data import Features
from rigidrot_gym.attitude.stages.hooks import chain, declared
from rigidrot_gym.physics.plumbing.jit import jitable
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


def stage(features: Features) -> Callable:
    """``load(bodies, equipment, work, dt, i)``: body i's torque parameters held over the
    period: the components' torques, the actuators' (the magnetorquers' dipole in the
    field), the wheels' momentum and the gravity gradient, where the scenario has them."""
    with_wheels, with_rods = features.wheels, features.magnetorquers
    with_gravity, with_orbit = features.gravity_gradient, features.orbit_gravity
    held = chain(declared("load", features), _then, _nothing)

    @jitable
    def load(bodies, equipment, work, dt, i):
        p = bodies.principal
        b = (p[0, i], p[1, i], p[2, i], p[3, i])
        tau = held(bodies, equipment, work, dt, i)
        # The actuators with torques of their own come first; rods, if any, follow them.
        wheel_count = equipment.wheel_momentum.shape[1] if with_wheels else 0
        torquing = wheel_count if with_rods else work.commands.shape[0]
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

    return load
