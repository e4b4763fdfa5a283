"""Stage 3, loads: the torque parameters each body holds over the period, the terms of the
library's compiled torque model (:func:`~rigidrot_gym.physics.rotation.torques.model_of`).

Reads ``work.commands``, the body frames, the disturbances' torques, the field (with
magnetorquers), the wheel momenta and the orbit (gravity gradient); writes
``work.params`` (and the magnetorquers' held dipole)."""

from __future__ import annotations

from collections.abc import Callable

from rigidrot_gym.attitude.components import disturbances, gravity_gradient, loads, magnetorquers
from rigidrot_gym.attitude.data import Features
from rigidrot_gym.physics.plumbing.jit import jitable


def stage(features: Features) -> Callable:
    """``load(bodies, equipment, work, dt, i)``: body i's torque parameters held over the
    period: the disturbances' torque, the actuators' (the magnetorquers' dipole in the
    field), the wheels' momentum and the gravity gradient, where the scenario has them."""
    with_wheels, with_rods = features.wheels, features.magnetorquers
    with_disturbances, with_gravity, with_orbit = (
        features.disturbances,
        features.gravity_gradient,
        features.orbit_gravity,
    )

    @jitable
    def load(bodies, equipment, work, dt, i):
        p = bodies.principal
        b = (p[0, i], p[1, i], p[2, i], p[3, i])
        tau = disturbances.torque(equipment, i) if with_disturbances else (0.0, 0.0, 0.0)
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
