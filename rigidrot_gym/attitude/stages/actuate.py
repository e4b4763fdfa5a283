"""Stage 2, actuate: each actuator's torque from its clipped action, after delay, noise and
the wheels' momentum limits (real wheels: their motor rule and friction).

Reads ``work.actions`` (or, with a delay, ``equipment.pending``), ``bodies.limits``,
the body rates (real wheels), the wheel momenta and the actuator noise's stream; writes
``work.commands`` (and, with the vectorising stream, the noise's normals into
``work.normals``). The loads (stage 3) follow body by body in the same pass."""

from __future__ import annotations

from collections.abc import Callable

from rigidrot_gym.attitude.components import actuator_noise, faults, wheels
from rigidrot_gym.attitude.data import Features
from rigidrot_gym.attitude.stages import FIRST_STREAM
from rigidrot_gym.attitude.variates import ACTUATOR_PAIRS, STEP_PAIRS, block_normals
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation.quaternion import qrotate


def command(features: Features) -> Callable:
    """``command(call, bodies, equipment, work, noise, i)``: body i's actuator torques u
    into ``work.commands`` after delay, noise and wheel momentum limits (real wheels: after
    their motor rule, with their friction); with the vectorising stream, ``noise`` holds
    its normals (column i of the block)."""
    with_wheels, with_real_wheels, with_delay = features.wheels, features.real_wheels, features.delay
    with_noise, fast_noise = features.actuator_noise, features.fast_noise
    wheel_fault = features.wheel_fault

    @jitable
    def command(call, bodies, equipment, work, noise, i):
        xi = (0.0, 0.0)
        if with_real_wheels:  # the body's rates in its own frame, which the wheels' speeds are relative to
            p, s = bodies.principal, bodies.state
            rates = qrotate((p[0, i], p[1, i], p[2, i], p[3, i]), (s[4, i], s[5, i], s[6, i]))
        # the first actuators; rods, if any, follow
        wheel_count = equipment.wheel_momentum.shape[1] if with_wheels else 0
        for k in range(work.actions.shape[0]):
            a = equipment.pending[i, k] if with_delay else work.actions[k, i]
            u = a * bodies.limits[k, i]
            if with_noise:
                if fast_noise:
                    xi = (noise[k], noise[k])
                elif k % 2 == 0:
                    xi = actuator_noise.normals(equipment.keys[i], bodies.steps[i], k)
                u = actuator_noise.perturb(u, bodies.limits[k, i], equipment.actuator_noise, xi[k % 2])
            stuck = False
            if wheel_fault and k < wheel_count:  # a failed wheel's command (faults)
                u, stuck = faults.wheel_torque(equipment, wheel_fault, call.dt * bodies.steps[i], u, k, i)
            if with_real_wheels and k < wheel_count:
                axes = equipment.axes
                spin = axes[0, k] * rates[0] + axes[1, k] * rates[1] + axes[2, k] * rates[2]
                limit, h = bodies.limits[k, i], equipment.wheel_momentum[i, k]
                u = wheels.net_torque(equipment.wheel_model, u, limit, h, spin, call.dt)
            elif with_wheels and k < wheel_count:
                u = wheels.limit_by_momentum(
                    u, equipment.wheel_momentum[i, k], equipment.max_momentum[k], call.dt
                )
            if wheel_fault and stuck:  # a seized wheel: no torque passes, friction included
                u = 0.0
            work.commands[k, i] = u

    return command


def stage(features: Features, load: Callable) -> Callable:
    """``actuate(call, bodies, equipment, work, lo, hi)``: of each body ``lo`` … ``hi`` − 1
    that steps, its :func:`command`, then ``load`` (the loads stage's
    ``load(bodies, equipment, work, dt, i)``,
    :func:`~rigidrot_gym.attitude.stages.load.stage`)."""
    with_noise, fast_noise = features.actuator_noise, features.fast_noise
    command_of = command(features)

    @jitable
    def actuate(call, bodies, equipment, work, lo, hi):
        rows = 2 * ((work.actions.shape[0] + 1) // 2) if with_noise and fast_noise else 0
        noise = work.normals[:rows]
        if with_noise and fast_noise and call.stepped:
            block_normals(
                equipment.keys, FIRST_STREAM, bodies.steps, 0, ACTUATOR_PAIRS, STEP_PAIRS, noise, lo, hi
            )
        for i in range(lo, hi):
            if call.stepped and not call.waiting[i]:
                command_of(call, bodies, equipment, work, noise[:, i - lo], i)
                load(bodies, equipment, work, call.dt, i)

    return actuate
