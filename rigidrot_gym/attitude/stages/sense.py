"""Stage 7, sense: what the bodies' sensors report at their staged states, the new episode
step's readings (started with an episode, moved on by a period a body stepped, left as
they are otherwise: an evaluation without a step, a waiting body).

First a moving target's attitude and rate at the bodies' new time; then the spacecraft's
own sensors (gyro, star tracker, magnetometer, coarse Sun sensors; the gyro, magnetometer
and Sun sensors through the errors of
:mod:`~rigidrot_gym.attitude.components.sensor_errors` where they are on), each body's readings
followed by the estimate stage (:mod:`~rigidrot_gym.attitude.stages.estimate`) in the same
pass; or the plain noisy sensors (Gaussian noise on the state).

Reads ``work.staged``, the bodies' frames, counters and streams, the rates integrated over
the period (``work.rate_integral``) and the orbit; writes ``bodies.target`` (moving
target), the sensors' readings and the field at each body's new time (in ``equipment``),
and what the observation shows of them into ``work.sensed``; the streams' normals into
``work.normals``, the estimator's work into ``work.estimator``."""

from __future__ import annotations

from collections.abc import Callable

from rigidrot_gym.attitude.components import (
    faults,
    gyro,
    magnetic_field,
    magnetometer,
    navigation,
    orbit,
    sensor_errors,
    sensors,
    star_tracker,
    sun_sensors,
    sunlight,
    targets,
)
from rigidrot_gym.attitude.data import Features
from rigidrot_gym.attitude.stages import FIRST_STREAM
from rigidrot_gym.attitude.variates import (
    NAVIGATION_PAIRS,
    NAVIGATION_SALT,
    SENSOR_PAIRS,
    STEP_PAIRS,
    block_normals,
)
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation.quaternion import qconj, qmul, qrotate, qrotate_inv


def readings(features: Features) -> Callable:
    """``read(call, bodies, equipment, work, step, r, normals, i)``: body i's sensors at its
    staged state, episode step ``step``, at its position ``r`` (3-tuple, m, world frame;
    read where :func:`located`), with ``normals`` its navigation stream's; returns
    what the estimator needs of them: the attitude known before a first measurement, whether
    the star tracker measured, the field (world frame), the vector to the Sun and the Sun
    sensors' direction (body frame) with its variance."""
    with_gyro, with_tracker = features.gyro, features.star_tracker
    with_magnetometer, with_sun_sensors = features.magnetometer, features.sun_sensors
    with_errors = features.sensor_errors
    tracker_dropout, magnetometer_dropout = features.tracker_dropout, features.magnetometer_dropout
    gyro_dropout = features.gyro_dropout

    @jitable
    def read(call, bodies, equipment, work, step, r, normals, i):
        state, p = work.staged, bodies.principal
        t = call.dt * step
        b = (p[0, i], p[1, i], p[2, i], p[3, i])
        q = qmul((state[0, i], state[1, i], state[2, i], state[3, i]), qconj(b))  # the body frame's
        guess = q
        if step == 0:  # what is known before a first measurement
            guess = navigation.initial_attitude(equipment, q, normals, i)
        to_sun, shadow = (1.0, 0.0, 0.0), 1.0
        if with_sun_sensors or (with_tracker and equipment.tracker_model.sees_orbit):
            to_sun, shadow = sunlight.seen_at_step(equipment, r, step, t)
        if with_gyro:
            dt = call.dt
            if step == 0:  # the rates at the start
                rate = qrotate(b, (state[4, i], state[5, i], state[6, i]))
            else:  # the mean rate over the period, (1/Δt) ∫ω dt (integration.stage)
                w = work.rate_integral
                rate = qrotate(b, (w[0, i] / dt, w[1, i] / dt, w[2, i] / dt))
            if with_errors:  # what its turned, scaled axes read of it
                rate = sensor_errors.turned_rate(equipment, rate, i)
            if step == 0:
                gyro.start(equipment, rate, dt, normals, i)
            else:
                gyro.read(equipment, rate, dt, normals, i)
            if gyro_dropout and faults.dropped(equipment, equipment.fault_model.gyro_span, t, i):
                faults.zero_gyro_axis(equipment, i)
        tracked = False
        if with_tracker:
            if step == 0:
                star_tracker.hold(equipment, guess, i)
            if tracker_dropout and faults.dropped(equipment, equipment.fault_model.tracker_span, t, i):
                tracked = faults.miss(equipment, i)
            else:
                tracked = star_tracker.measure(equipment, q, r, to_sun, step, normals, i)
        field, sun_variance, sun_body = (0.0, 0.0, 0.0), 0.0, (0.0, 0.0, 0.0)
        if with_magnetometer:
            if step == 0:
                magnetometer.start(equipment, normals, i)
            field = (equipment.field[i, 0], equipment.field[i, 1], equipment.field[i, 2])
            if (
                magnetometer_dropout
                and step > 0
                and faults.dropped(equipment, equipment.fault_model.magnetometer_span, t, i)
            ):
                pass  # a dropout: the last reading stays (faults)
            elif with_errors:
                sensor_errors.read_magnetometer(equipment, qrotate_inv(q, field), normals, i)
            else:
                magnetometer.read(equipment, qrotate_inv(q, field), normals, i)
        if with_sun_sensors:
            if with_errors:
                sensor_errors.read_sun_sensors(equipment, q, to_sun, shadow, normals, i)
            else:
                sun_sensors.read(equipment, q, to_sun, shadow, normals, i)
            sun_body, sun_variance = sun_sensors.direction(equipment, i)
        return guess, tracked, field, to_sun, sun_body, sun_variance

    return read


def located(features: Features) -> Callable:
    """``located(equipment)``: whether the sensors of :func:`readings` or the field read the
    bodies' positions along the orbit (computed once per body and step, and shared)."""
    with_magnetometer, with_sun_sensors, with_tracker = (
        features.magnetometer,
        features.sun_sensors,
        features.star_tracker,
    )

    @jitable
    def located(equipment):
        return with_magnetometer or with_sun_sensors or (with_tracker and equipment.tracker_model.sees_orbit)

    return located


def spacecraft(features: Features, estimate: Callable, show: Callable) -> Callable:
    """``sense(call, bodies, equipment, work, lo, hi)``: the spacecraft's sensors of bodies
    ``lo`` … ``hi`` − 1 (:func:`readings`), each body's followed by ``estimate``
    (:func:`~rigidrot_gym.attitude.stages.estimate.stage`) and ``show``
    (:func:`~rigidrot_gym.attitude.stages.estimate.shown`); the field at the body's new
    time first, where a magnetometer reads it (the evaluation reads it too)."""
    with_magnetometer, with_estimator = features.magnetometer, features.estimator
    read, where = readings(features), located(features)

    @jitable
    def sense(call, bodies, equipment, work, lo, hi):
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
            t = call.dt * step
            r = orbit.position(equipment, t, i) if where(equipment) else (0.0, 0.0, 0.0)
            if with_magnetometer:  # the field at the body now (the evaluation reads it too)
                magnetic_field.update(equipment, r, t, i)
            if step == 0 or live:
                seen = read(call, bodies, equipment, work, step, r, normals[:, i - lo], i)
                if with_estimator:
                    estimate(call, equipment, step, seen, scratch, i)
            show(bodies, equipment, work, i)

    return sense


def noisy(features: Features) -> Callable:
    """``noisy(call, bodies, equipment, work, lo, hi)``: the staged states of bodies ``lo``
    … ``hi`` − 1 as noisy sensors report them into ``work.sensed``
    (:func:`~rigidrot_gym.attitude.components.sensors.sense`)."""
    fast_noise = features.fast_noise

    @jitable
    def noisy(call, bodies, equipment, work, lo, hi):
        after = 1 if call.stepped else 0  # the episode step the readings belong to
        noise = work.normals[: 6 if fast_noise else 0]
        if fast_noise:
            block_normals(
                equipment.keys, FIRST_STREAM, bodies.steps, after, SENSOR_PAIRS, STEP_PAIRS, noise, lo, hi
            )
        for i in range(lo, hi):
            if fast_noise:
                j = i - lo
                xi = (noise[0, j], noise[1, j], noise[2, j])
                eta = (noise[3, j], noise[4, j], noise[5, j])
            else:
                xi, eta = sensors.normals(equipment.keys[i], bodies.steps[i] + after)
            sensors.sense(work.staged, bodies.principal, equipment, xi, eta, i, work.sensed)

    return noisy


def stage(features: Features, estimate: Callable, show: Callable) -> Callable | None:
    """``sense(call, bodies, equipment, work, lo, hi)`` of bodies ``lo`` … ``hi`` − 1: a
    moving target's attitude and rate, then the spacecraft's sensors and estimate
    (:func:`spacecraft`) and the noisy sensors (:func:`noisy`), where the scenario has them;
    None where it has none."""
    with_moving_target, sun_target = features.moving_target, features.sun_target
    with_navigation = features.gyro or features.star_tracker or features.magnetometer or features.sun_sensors
    with_sensors = features.sensors
    if not (with_moving_target or with_navigation or with_sensors):
        return None
    navigate, perturb = spacecraft(features, estimate, show), noisy(features)

    @jitable
    def sense(call, bodies, equipment, work, lo, hi):
        if with_moving_target:
            targets.track(call, bodies, equipment, sun_target, lo, hi)
        if with_navigation:
            navigate(call, bodies, equipment, work, lo, hi)
        if with_sensors:
            perturb(call, bodies, equipment, work, lo, hi)

    return sense
