"""Stage 8, estimate: the MEKF between the spacecraft's sensors and the agent
(:mod:`~rigidrot_gym.attitude.components.navigation`), body by body after its readings
(stage 7, :mod:`~rigidrot_gym.attitude.stages.sense`), and what the observation shows of
the sensors or the estimate.

Reads the sensors' readings (the gyro's, the star tracker's, the magnetometer's, the Sun
sensors' direction) and the field and Sun in the world frame; writes the estimate and its
covariance (in ``equipment``), its work into ``work.estimator``, and what the observation
shows into ``work.sensed``."""

from __future__ import annotations

from collections.abc import Callable

from rigidrot_gym.attitude.components import gyro, magnetometer, navigation, star_tracker
from rigidrot_gym.attitude.data import ESTIMATE, SENSORS, Features
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import vector as vec


def stage(features: Features) -> Callable:
    """``estimate(call, equipment, step, seen, scratch, i)``: body i's estimate at episode
    step ``step``, started (step 0) or carried over the period by the gyro's reading, then
    corrected by the period's measurements one after the other, each residual at the last
    correction; ``seen`` is what the sensors returned
    (:func:`~rigidrot_gym.attitude.stages.sense.readings`), ``scratch`` the estimator's work
    (the MEKF's, then a measurement's z, H and R). For a scenario with an estimator."""
    with_magnetometer = features.magnetometer

    @jitable
    def estimate(call, equipment, step, seen, scratch, i):
        guess, tracked, field, to_sun, sun_body, sun_variance = seen
        if step == 0:
            navigation.start(equipment, guess, i)
        else:
            navigation.predict(equipment, gyro.reading(equipment, i), call.dt, scratch, i)
        n = equipment.covariance.shape[1]
        z, h, rr, dx = scratch[3, 0, :3], scratch[3, 1:4, :n], scratch[3, 4:7, :3], scratch[3, 7, :n]
        for kind in range(3):
            if kind == 0 and tracked:
                navigation.attitude_measurement(equipment, star_tracker.measured(equipment, i), z, h, rr, i)
            elif kind == 1 and with_magnetometer:
                reading, variance = magnetometer.reading(equipment, i), magnetometer.variance(equipment)
                if not navigation.vector_measurement(equipment, reading, field, variance, True, z, h, rr, i):
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

    return estimate


def shown(features: Features) -> Callable:
    """``show(bodies, equipment, work, i)``: what body i's observation shows of its
    sensors (the star tracker's last attitude, else the target's, and the gyro's reading)
    or of its estimate (q̂ and ω̃ − β̂), into ``work.sensed``; nothing where it observes
    the truth."""
    with_tracker = features.star_tracker
    observe_sensors, observe_estimate = features.observed == SENSORS, features.observed == ESTIMATE

    @jitable
    def show(bodies, equipment, work, i):
        if observe_sensors:  # without a star tracker, no attitude: shown as the target's
            t = bodies.target
            shown = (
                star_tracker.measured(equipment, i) if with_tracker else (t[0, i], t[1, i], t[2, i], t[3, i])
            )
            navigation.write_sensed(shown, gyro.reading(equipment, i), bodies.principal, work.sensed, i)
        elif observe_estimate:
            q_hat, _ = navigation.estimate(equipment, i)
            w_hat = navigation.sensed_rates(equipment, gyro.reading(equipment, i), i)
            navigation.write_sensed(q_hat, w_hat, bodies.principal, work.sensed, i)

    return show
