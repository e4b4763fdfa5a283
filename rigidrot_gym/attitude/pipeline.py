"""The control period as one compiled call: the components of
:mod:`~rigidrot_gym.attitude.components`, in their fixed order, over the named data of
:mod:`~rigidrot_gym.attitude.data`.

:func:`kernel_of` compiles, for a method's step function and the :class:`~rigidrot_gym.attitude.data.Features`
a scenario enables, one function that runs a whole control period of every body:

1. the action (ideal torquers hold their body torque; other actuators clip it);
2. the actuators (delay, noise, wheel momentum limits) and 3. the loads (the torque
   parameters held over the period; magnetorquers, alone or after the wheels, hold their
   dipole and the field);
4. the integration by the method's own step (through the library's
   :func:`~rigidrot_gym.physics.rotation.integrators.base.advance`), staged, then checked (with a
   gyro, the body rates integrated over the period too);
5. once every check has passed: the autoreset's draws, and the actuators' and
   disturbances' own state moves on;
6. a moving target's attitude and rate, the sensors and 7. the evaluation (observation,
   reward, flags) of the staged states, and the magnetic field at each body's new episode
   time.

A period either completes or changes nothing the caller keeps: failures are counted, not
searched (an early exit stops a loop vectorising), and the caller finds the first and
raises; once it returns zeros, the caller commits by swapping the staged states with the
bodies' states. Bodies marked ``waiting`` (a vector env's rows about to autoreset) are
staged as they are and not checked; their outputs and counters are written like every
body's, and the caller puts back what they had, unless they restart in the call.

An engine's method is not a compiled step: :func:`kernel_of` then compiles the period in
two parts, up to the loads (``"before"``) and from the commit on (``"after"``), and the
engine runs between them (:class:`~rigidrot_gym.attitude.batch.AttitudeBatch`).

The arguments are the records of :mod:`~rigidrot_gym.attitude.data` passed as plain
tuples (``tuple(record)``: numba unboxes a plain tuple of arrays and numbers through its
fast path, a ``NamedTuple`` through a slow one) and rebuilt as records in the first lines
of the compiled code, so that the components read every field by its name. Each
combination of method, features and part is compiled once and cached on disk (the kernel
is a closure over them, which numba's cache tells apart); a branch on a feature is a
branch on a constant, pruned before numba types the code. The passes run over blocks of
bodies (``prange``): compiled with ``parallel=True``, numba's threads share the blocks.

The passes create no array, so that the one-thread kernel compiles without numba's
reference counts (:func:`~rigidrot_gym.physics.plumbing.jit.kernel`; on threads numba's reductions
create their partial sums). A restart's uniforms go to ``Work.variates``; the realism
components' normals to ``Work.normals`` and the estimator's work to ``Work.estimator``,
one block after the other (the batch runs realism components on one thread only).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np
from numba import prange

from rigidrot_gym.attitude.components import (
    actions,
    actuator_noise,
    delay,
    disturbances,
    evaluation,
    gravity_gradient,
    gyro,
    integration,
    loads,
    magnetic_field,
    magnetometer,
    magnetorquers,
    navigation,
    orbit,
    restart,
    sensors,
    star_tracker,
    sun_sensors,
    sunlight,
    targets,
    torquers,
    wheels,
)
from rigidrot_gym.attitude.data import (
    ACTIONS_ROW,
    BLOCK,
    BODY,
    ESTIMATE,
    RATE_INTEGRAL,
    RESULTS,
    SENSORS,
    STATS,
    THREAD_BLOCK,
    VARIATES,
    Bodies,
    Carried,
    Equipment,
    Features,
    Outputs,
    Period,
    Rules,
    StartLaw,
    Work,
    equipment_expander,
    equipment_fields,
    unpacker,
)
from rigidrot_gym.attitude.variates import (
    ACTUATOR_PAIRS,
    DISTURBANCE_PAIRS,
    NAVIGATION_PAIRS,
    NAVIGATION_SALT,
    SENSOR_PAIRS,
    STEP_PAIRS,
    block_normals,
)
from rigidrot_gym.physics.plumbing.jit import jitable, kernel
from rigidrot_gym.physics.rotation import torques
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.quaternion import qconj, qmul, qrotate, qrotate_inv

ZERO = np.uint64(0)  # the first stream's salt (block_normals)
# The records of numbers travel packed together (data.pack); this rebuilds their fields.
_NUMBERS = unpacker(Rules, StartLaw)
PARTS = ("period", "before", "after")


def _compile(step: Callable | None, features: Features, part: str, parallel: bool) -> Callable:
    # Each feature a constant of the closure: numba prunes the branches on it.
    realistic, with_wheels, with_delay = features.realistic, features.wheels, features.delay
    with_noise, with_disturbances = features.actuator_noise, features.disturbances
    with_walk, with_gravity = features.random_walk, features.gravity_gradient
    with_sensors, with_ending = features.sensors, features.end_on_saturation
    with_field, with_rods = features.magnetic_field, features.magnetorquers
    with_orbit = features.orbit_gravity
    with_energy, with_real_wheels = features.energy_reward, features.real_wheels
    with_moving_target, with_sun, sun_target = features.moving_target, features.sun, features.sun_target
    with_duty_cycle = features.duty_cycle
    rotated_frames = features.rotated_frames
    with_gyro, with_tracker, with_estimator = features.gyro, features.star_tracker, features.estimator
    with_magnetometer, with_sun_sensors = features.magnetometer, features.sun_sensors
    with_navigation = with_gyro or with_tracker or with_magnetometer or with_sun_sensors
    observe_sensors, observe_estimate = features.observed == SENSORS, features.observed == ESTIMATE
    with_sensed = with_sensors or observe_sensors or observe_estimate
    fast_noise = features.fast_noise
    with_columns = (
        with_wheels or with_delay or with_ending or with_field or with_sun or with_tracker or with_sun_sensors
    )
    # The torque terms this scenario's loads hold, and no others (torques.model_of).
    torque = torques.model_of(with_wheels, with_gravity, with_rods)
    # The Equipment fields these components read: the rest are None (data.equipment_fields).
    expand = equipment_expander(equipment_fields(features))
    integrate, before, after = part == "period", part in ("period", "before"), part in ("period", "after")
    per_block = THREAD_BLOCK if parallel else BLOCK
    # One thread stages each body straight from its state; on threads that was slower than
    # a copy first (2 threads, 4096 envs: 12.1-12.2 ns per env-step against 11.2-11.7).
    from_states = not parallel

    @jitable
    def command(call, bodies, equipment, work, noise, i):
        """Body i's actuator torques u after delay, noise and wheel momentum limits (real
        wheels: after their motor rule, with their friction); with the vectorising stream,
        ``noise`` holds its normals (column i of the block)."""
        xi = (0.0, 0.0)
        if with_real_wheels:  # the body's rates in its own frame, which the wheels' speeds are relative to
            p, s = bodies.principal, bodies.state
            rates = qrotate((p[0, i], p[1, i], p[2, i], p[3, i]), (s[4, i], s[5, i], s[6, i]))
        # the first actuators; rods, if any, follow
        wheel_count = equipment.wheel_momentum.shape[1] if with_wheels else 0
        for k in range(work.actions.shape[0]):
            a = equipment.pending[i, k] if with_delay else work.actions[k, i]
            u = a * bodies.max_torque[k, i]
            if with_noise:
                if fast_noise:
                    xi = (noise[k], noise[k])
                elif k % 2 == 0:
                    xi = actuator_noise.normals(equipment.keys[i], bodies.steps[i], k)
                u = actuator_noise.perturb(u, bodies.max_torque[k, i], equipment.actuator_noise, xi[k % 2])
            if with_real_wheels and k < wheel_count:
                axes = equipment.axes
                spin = axes[0, k] * rates[0] + axes[1, k] * rates[1] + axes[2, k] * rates[2]
                limit, h = bodies.max_torque[k, i], equipment.wheel_momentum[i, k]
                u = wheels.net_torque(equipment.wheel_model, u, limit, h, spin, call.dt)
            elif with_wheels and k < wheel_count:
                u = wheels.limit_by_momentum(
                    u, equipment.wheel_momentum[i, k], equipment.max_momentum[k], call.dt
                )
            work.commands[k, i] = u

    @jitable
    def hold_loads(bodies, equipment, work, dt, i):
        """Body i's torque parameters held over the period."""
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

    @jitable
    def actuate(call, bodies, frames, equipment, work, lo, hi):
        """Stages 1-3 of bodies ``lo`` … ``hi`` − 1: the non-finite actions counted."""
        if not realistic:
            return torquers.hold(call, bodies, frames, work, lo, hi)
        nonfinite = actions.clip(call, work, lo, hi)
        rows = 2 * ((work.actions.shape[0] + 1) // 2) if with_noise and fast_noise else 0
        noise = work.normals[:rows]
        if with_noise and fast_noise and call.stepped:
            block_normals(equipment.keys, ZERO, bodies.steps, 0, ACTUATOR_PAIRS, STEP_PAIRS, noise, lo, hi)
        for i in range(lo, hi):
            if call.stepped and not call.waiting[i]:
                command(call, bodies, equipment, work, noise[:, i - lo], i)
                hold_loads(bodies, equipment, work, call.dt, i)
        return nonfinite

    @jitable
    def move_on(call, bodies, equipment, work, lo, hi):
        """Stage 5 of the bodies that stepped: wheel momenta, random walk, pending action."""
        walk = work.normals[: 4 if with_walk and fast_noise else 0]
        if with_walk and fast_noise and call.stepped:
            block_normals(equipment.keys, ZERO, bodies.steps, 0, DISTURBANCE_PAIRS, STEP_PAIRS, walk, lo, hi)
        for i in range(lo, hi):
            if call.stepped and not call.waiting[i]:
                if with_wheels:
                    wheels.advance(equipment, work, call.dt, with_real_wheels, i)
                if with_walk:
                    if fast_noise:
                        xi = (walk[0, i - lo], walk[1, i - lo], walk[2, i - lo])
                    else:
                        xi = disturbances.normals(equipment.keys[i], bodies.steps[i])
                    disturbances.advance(equipment, xi, call.dt, i)
                if with_delay:
                    delay.advance(equipment, work, i)

    @jitable
    def sense(call, bodies, equipment, work, step, normals, scratch, i):
        """Body i's sensors and estimator at its staged state, episode step ``step``:
        started at step 0, else moved on by the period it stepped."""
        state, p = work.staged, bodies.principal
        t = call.dt * step
        b = (p[0, i], p[1, i], p[2, i], p[3, i])
        q = qmul((state[0, i], state[1, i], state[2, i], state[3, i]), qconj(b))  # the body frame's
        guess = q
        if step == 0:  # what is known before a first measurement
            guess = navigation.initial_attitude(equipment, q, normals, i)
        r, to_sun, shadow = (0.0, 0.0, 0.0), (1.0, 0.0, 0.0), 1.0
        if with_sun_sensors or (with_tracker and equipment.tracker_model[star_tracker.SEES_ORBIT] != 0.0):
            r = orbit.position(equipment, t, i)
            to_sun, shadow = sunlight.seen_from(equipment, r, t)
        if with_gyro:
            dt = call.dt
            if step == 0:  # the rates at the start
                gyro.start(equipment, qrotate(b, (state[4, i], state[5, i], state[6, i])), dt, normals, i)
            else:  # the mean rate over the period, (1/Δt) ∫ω dt (integration.stage)
                w = work.rate_integral
                gyro.read(equipment, qrotate(b, (w[0, i] / dt, w[1, i] / dt, w[2, i] / dt)), dt, normals, i)
        if with_estimator:
            if step == 0:
                navigation.start(equipment, guess, i)
            else:
                navigation.predict(equipment, gyro.reading(equipment, i), call.dt, scratch, i)
        tracked = False
        if with_tracker:
            if step == 0:
                star_tracker.hold(equipment, guess, i)
            tracked = star_tracker.measure(equipment, q, r, to_sun, step, normals, i)
        field, sun_variance, sun_body = (0.0, 0.0, 0.0), 0.0, (0.0, 0.0, 0.0)
        if with_magnetometer:
            if step == 0:
                magnetometer.start(equipment, normals, i)
            field = (equipment.field[i, 0], equipment.field[i, 1], equipment.field[i, 2])
            magnetometer.read(equipment, qrotate_inv(q, field), normals, i)
        if with_sun_sensors:
            sun_sensors.read(equipment, q, to_sun, shadow, normals, i)
            sun_body, sun_variance = sun_sensors.direction(equipment, i)
        if with_estimator:
            # the period's measurements one after the other, each residual at the last correction
            n = equipment.covariance.shape[1]
            z, h, rr, dx = scratch[3, 0, :3], scratch[3, 1:4, :n], scratch[3, 4:7, :3], scratch[3, 7, :n]
            for kind in range(3):
                if kind == 0 and tracked:
                    navigation.attitude_measurement(
                        equipment, star_tracker.measured(equipment, i), z, h, rr, i
                    )
                elif kind == 1 and with_magnetometer:
                    reading, variance = magnetometer.reading(equipment, i), magnetometer.variance(equipment)
                    if not navigation.vector_measurement(
                        equipment, reading, field, variance, True, z, h, rr, i
                    ):
                        continue
                elif kind == 2 and sun_variance > 0.0:
                    reference = vec.scale(1.0 / vec.norm(to_sun), to_sun)
                    if not navigation.vector_measurement(
                        equipment, sun_body, reference, sun_variance, False, z, h, rr, i
                    ):
                        continue
                else:
                    continue
                navigation.correct(equipment, z, h, rr, scratch[:3, :n, :n], dx, i)

    @jitable
    def navigate(call, bodies, equipment, work, lo, hi):
        """The sensors and the estimator of bodies ``lo`` … ``hi`` − 1 at their staged states:
        started with an episode (step 0), moved on by a period a body stepped, left as they
        are otherwise (an evaluation without a step, a waiting body); then what the
        observation shows of them into ``work.sensed``."""
        scratch = work.estimator  # the MEKF's work, then a measurement's z, H and R
        # every normal the step may need, by the vectorising draw (for a body not live, unused)
        normals = work.normals[: 2 * NAVIGATION_PAIRS]
        after = 1 if call.stepped else 0
        block_normals(
            equipment.keys, NAVIGATION_SALT, bodies.steps, after, 0, NAVIGATION_PAIRS, normals, lo, hi
        )
        for i in range(lo, hi):
            live = call.stepped and not call.waiting[i]
            step = bodies.steps[i] + (1 if live else 0)  # the episode step the readings belong to
            if with_magnetometer:  # the field at the body now (the evaluation reads it too)
                magnetic_field.update(equipment, call.dt * step, i)
            if step == 0 or live:
                sense(call, bodies, equipment, work, step, normals[:, i - lo], scratch, i)
            if observe_sensors:  # without a star tracker, no attitude: shown as the target's
                t = bodies.target
                shown = (
                    star_tracker.measured(equipment, i)
                    if with_tracker
                    else (t[0, i], t[1, i], t[2, i], t[3, i])
                )
                navigation.write_sensed(shown, gyro.reading(equipment, i), bodies.principal, work.sensed, i)
            elif observe_estimate:
                q_hat, _ = navigation.estimate(equipment, i)
                w_hat = navigation.sensed_rates(equipment, gyro.reading(equipment, i), i)
                navigation.write_sensed(q_hat, w_hat, bodies.principal, work.sensed, i)

    @jitable
    def evaluate(call, bodies, frames, equipment, rules, work, out, lo, hi):
        """Stages 6-7 of bodies ``lo`` … ``hi`` − 1 at their staged states."""
        state = work.staged
        if with_moving_target:
            targets.track(call, bodies, equipment, sun_target, lo, hi)
        if with_navigation:
            navigate(call, bodies, equipment, work, lo, hi)
        if with_sensed:
            after = 1 if call.stepped else 0  # the episode step the readings belong to
            if with_sensors:
                noise = work.normals[: 6 if fast_noise else 0]
                if fast_noise:
                    block_normals(
                        equipment.keys, ZERO, bodies.steps, after, SENSOR_PAIRS, STEP_PAIRS, noise, lo, hi
                    )
                for i in range(lo, hi):
                    if fast_noise:
                        j = i - lo
                        xi = (noise[0, j], noise[1, j], noise[2, j])
                        eta = (noise[3, j], noise[4, j], noise[5, j])
                    else:
                        xi, eta = sensors.normals(equipment.keys[i], bodies.steps[i] + after)
                    sensors.sense(state, bodies.principal, equipment, xi, eta, i, work.sensed)
            body = evaluation.body_frame(frames, work.sensed, work.body, lo, hi)
            evaluation.observe(bodies, rules, work.sensed, body, work, lo, hi)
            if with_moving_target:
                targets.relative_rates(body, rules, equipment, work, lo, hi)
            evaluation.write_observation(work.results, out.obs, lo, hi)
        body = evaluation.body_frame(frames, state, work.body, lo, hi)
        evaluation.observe(bodies, rules, state, body, work, lo, hi)
        if with_moving_target:
            targets.relative_rates(body, rules, equipment, work, lo, hi)
        evaluation.assess(call, bodies, rules, work, out, lo, hi)
        if with_energy:
            evaluation.reward_dissipation(call, bodies, rules, work, out, lo, hi)
        if not with_sensed:
            evaluation.write_observation(work.results, out.obs, lo, hi)
        if with_columns:
            # The columns after the first seven: wheels, pending action, star tracker, Sun
            # sensors, Sun, field, in that order (the field last, where controllers read it).
            field_column = out.obs.shape[1] - (magnetic_field.COLUMNS if with_field else 0)
            sun_column = field_column - (sunlight.COLUMNS if with_sun else 0)
            sensor_column = sun_column - (equipment.sun_sensors.shape[1] if with_sun_sensors else 0)
            tracker_column = sensor_column - (star_tracker.COLUMNS if with_tracker else 0)
            pending_column = tracker_column - (equipment.pending.shape[1] if with_delay else 0)
            for i in range(lo, hi):
                if with_wheels:
                    wheels.observe(equipment, out.obs, i)
                if with_delay:
                    delay.observe(equipment, out.obs, pending_column, i)
                if with_sun:  # at the episode time the counters have just reached
                    sunlight.update(equipment, call.dt * bodies.steps[i], i)
                    sunlight.observe(equipment, state, bodies.principal, out.obs, sun_column, i)
                if with_field:  # at the episode time the counters have just reached
                    if not with_magnetometer:  # (the sensors have updated it already)
                        magnetic_field.update(equipment, call.dt * bodies.steps[i], i)
                    if with_magnetometer and (observe_sensors or observe_estimate):
                        magnetometer.observe(equipment, out.obs, field_column, i)
                    else:
                        magnetic_field.observe(equipment, state, bodies.principal, out.obs, field_column, i)
                if with_tracker:
                    star_tracker.observe(equipment, out.obs, tracker_column, i)
                if with_sun_sensors:
                    sun_sensors.observe(equipment, out.obs, sensor_column, i)
                if with_ending and call.stepped:
                    evaluation.end_on_saturation(equipment, out, i)

    def control_period(call, settings, carried, equipment, numbers, out):
        """One control period (or its part) of every body; the arguments are plain tuples
        of the records of :mod:`~rigidrot_gym.attitude.data`: the first five fields of a
        ``Period`` and its ``Settings``, ``Carried`` (the bodies and their staging area),
        ``Equipment`` (the fields its components read:
        :func:`~rigidrot_gym.attitude.data.equipment_fields`), ``Rules`` and ``StartLaw``
        (packed together: :func:`~rigidrot_gym.attitude.data.pack`) and ``Outputs`` (see the module
        docstring). Returns how many bodies not waiting have
        (a) a non-finite action (then nothing is staged), (b) an implicit step that did not
        converge and (c) an invalid staged state; all zero once the period completed."""
        # One record per statement, each built by its class: numba's parallel loops find a
        # record's type by the call that built it, which a tuple or a function would hide.
        call = Period(*(call + settings))
        actuators = call.action.shape[1]
        carried = Carried(*carried)
        bodies = Bodies(
            state=carried.state,
            moments=carried.moments,
            principal=carried.principal,
            target=carried.target,
            max_torque=carried.max_torque,
            steps=carried.steps,
            hold=carried.hold,
            sources=carried.sources,
        )
        scratch = carried.scratch
        work = Work(
            staged=carried.staged,
            params=carried.params,
            stats=scratch[STATS],
            results=scratch[RESULTS],
            body=scratch[BODY],
            actions=scratch[ACTIONS_ROW : ACTIONS_ROW + actuators],
            commands=carried.commands,
            sensed=carried.sensed,
            variates=scratch[VARIATES],
            rate_integral=scratch[RATE_INTEGRAL],
            normals=carried.normals,
            estimator=carried.estimator,
        )
        if realistic:
            equipment = Equipment(*expand(equipment))
        rule_values, law_values = _NUMBERS(*numbers)
        rules = Rules(*rule_values)
        law = StartLaw(*law_values)
        out = Outputs(*out)
        # The frames the plain task turns between body and principal axes: None where every
        # frame is principal, which the components test first, so that numba prunes the turns.
        frames = bodies.principal if rotated_frames else None
        n = bodies.state.shape[1]
        blocks = (n + per_block - 1) // per_block
        if before:
            nonfinite = 0
            for block in prange(blocks):
                nonfinite += actuate(
                    call, bodies, frames, equipment, work, block * per_block, min(n, (block + 1) * per_block)
                )
            if nonfinite:
                return nonfinite, 0, 0
        if integrate:
            failed = invalid = 0
            for block in prange(blocks):
                lo, hi = block * per_block, min(n, (block + 1) * per_block)
                rods_off = equipment.rods_off if with_duty_cycle else None
                source = bodies.state if from_states else None
                integral = work.rate_integral if with_gyro else None  # what the gyro reads
                counts = integration.stage(
                    step, torque, call, bodies, work, lo, hi, rods_off, source, integral
                )
                failed += counts[0]
                invalid += counts[1]
            if failed or invalid:
                return 0, failed, invalid
        if after:
            if with_gyro and not integrate and call.stepped:  # an engine advanced the bodies
                for block in prange(blocks):
                    lo, hi = block * per_block, min(n, (block + 1) * per_block)
                    integration.integrate_rates_over_period(
                        torque, call, bodies, work, work.rate_integral, lo, hi
                    )
            # Every check has passed: the restarting bodies' new episodes can be drawn.
            if call.restart:
                restart.restart(call, bodies, frames, law, work)
            for block in prange(blocks):
                lo, hi = block * per_block, min(n, (block + 1) * per_block)
                if realistic:
                    move_on(call, bodies, equipment, work, lo, hi)
                evaluate(call, bodies, frames, equipment, rules, work, out, lo, hi)
        return 0, 0, 0

    # Numba's cache tells kernels apart by name, code and closure, not by their flags.
    control_period.__qualname__ += f"_{part}" + ("_parallel" if parallel else "")
    return kernel(control_period, parallel, allocates=parallel)


@functools.cache
def kernel_of(
    step: Callable | None, features: Features, part: str = "period", parallel: bool = False
) -> Callable:
    """The compiled control period (``part`` ``"period"``) of the method whose step function
    is ``step`` for the components ``features`` enables, or, for an engine's method
    (``step`` None), its part ``"before"`` or ``"after"`` the integration; with
    ``parallel``, its passes over blocks of bodies run on numba's threads."""
    if part not in PARTS or (part == "period") == (step is None):
        raise ValueError(
            f"part must be one of {PARTS} ('period' with a step, the others without), got {part!r}"
        )
    return _compile(step, features, part, parallel)
