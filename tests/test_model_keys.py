"""Model parameters as scenario keys: a gyro's angle random walk, bias stability and pulse,
a star tracker's noise, each the preset's unless given. Given, they reach the period in the
units NASA 42 writes them, checked against the closed-form conversions and against the
spread of the readings they make (the true mean rates by DOP853; the true attitudes)."""

from __future__ import annotations

import numpy as np
import pytest
from reference import integrate_rates
from scipy import stats

from rigidrot_gym.attitude.batch import AttitudeBatch
from rigidrot_gym.attitude.components import gyro, star_tracker
from rigidrot_gym.attitude.scenario import find
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.sensors.gyro import PRESETS as GYROS
from rigidrot_gym.physics.sensors.star_tracker import PRESETS as TRACKERS

DEG, ARCSEC = np.pi / 180.0, np.pi / 180.0 / 3600.0


def _batch(n: int, **overrides) -> AttitudeBatch:
    batch = AttitudeBatch(find("RigidRot/MagDetumbleSensed-v0").with_overrides(**overrides), n)
    batch.rngs = [np.random.default_rng([31, i]) for i in range(n)]
    batch.reset()
    return batch


def test_the_presets_values_unless_the_keys_give_others():
    preset = _batch(1)._equipment.gyro_model
    assert (preset.arw, preset.rrw, preset.quantum) == (GYROS["42"].arw, GYROS["42"].rrw, GYROS["42"].quantum)
    given = _batch(
        1, gyro_arw_deg_per_sqrt_hour=0.14, gyro_bias_stability_deg_per_hour=0.3, gyro_pulse_arcsec=2.0
    )
    model = given._equipment.gyro_model
    # 42's units: ARW in °/√h (σ_v = ARW/60 per √s), bias stability in °/h over an hour
    np.testing.assert_allclose(model.arw, 0.14 * DEG / 60.0, rtol=1e-15)
    np.testing.assert_allclose(model.rrw, 0.3 * DEG / 3600.0 / 60.0, rtol=1e-15)
    np.testing.assert_allclose(model.quantum, 2.0 * ARCSEC, rtol=1e-15)
    tracker = AttitudeBatch(find("RigidRot/NadirPoint-v0"), 1)._equipment.tracker_model
    assert (tracker.noise_across, tracker.noise_about) == (
        TRACKERS["42"].noise_across,
        TRACKERS["42"].noise_about,
    )


def test_the_gyros_angle_random_walk_is_the_spread_of_its_readings():
    # No bias, no pulses, no rate walk: a reading is the mean rate plus white noise σ_v/√Δt.
    n, dt, arw = 100, 1.0, 30.0
    batch = _batch(
        n,
        dt=dt,
        substeps=10,
        gyro_arw_deg_per_sqrt_hour=arw,
        gyro_bias_stability_deg_per_hour=0.0,
        gyro_pulse_arcsec=0.0,
        gyro_initial_bias_deg_per_hour=0.0,
    )
    errors = []
    for _ in range(2):
        q0, w0 = batch.body_state()
        ends = [integrate_rates(q0[i], w0[i], batch.inertia()[i], dt) for i in range(n)]
        batch.step(np.zeros((n, 3), dtype=np.float32))
        errors.append(batch._equipment.gyro[:, gyro.READING] - np.array([end[2] for end in ends]) / dt)
    errors = np.concatenate(errors).ravel()
    sigma = arw * DEG / 60.0 / np.sqrt(dt)
    # Σ e²/σ² is χ² with as many degrees of freedom as readings (their means are zero).
    chi2 = np.sum(errors**2) / sigma**2
    assert stats.chi2.ppf(0.0005, errors.size) < chi2 < stats.chi2.ppf(0.9995, errors.size)


@pytest.mark.parametrize(("across", "about"), [(50.0, 500.0), (200.0, 20.0)])
def test_the_star_trackers_noise_is_the_spread_of_its_errors(across, about):
    # No orbit: nothing blinds it, and every period measures (its mounting the identity).
    n = 600
    scenario = find("RigidRot/Reorient-v0").with_overrides(
        gyro_model="42",
        star_tracker_model="42",
        observe="sensors",
        star_tracker_noise_across_arcsec=across,
        star_tracker_noise_about_arcsec=about,
    )
    batch = AttitudeBatch(scenario, n)
    batch.rngs = [np.random.default_rng([32, i]) for i in range(n)]
    batch.reset()
    batch.step(np.zeros((n, 3), dtype=np.float32))
    assert np.all(batch._equipment.tracker[:, star_tracker.FRESH] == 1.0)
    true, measured = batch.body_state()[0], batch._equipment.tracker[:, star_tracker.Q]
    # measured = q ⊗ exp(½ δθ): δθ, a body-frame rotation, from q* ⊗ measured
    error = quat.multiply(quat.conjugate(true), measured)
    error *= np.sign(error[:, :1])
    dtheta = 2.0 * np.arcsin(np.linalg.norm(error[:, 1:], axis=1))[:, None] * error[:, 1:]
    dtheta /= np.linalg.norm(error[:, 1:], axis=1)[:, None]
    for axis, noise in ((0, across), (1, across), (2, about)):
        chi2 = np.sum(dtheta[:, axis] ** 2) / (noise * ARCSEC) ** 2
        assert stats.chi2.ppf(0.0005, n) < chi2 < stats.chi2.ppf(0.9995, n), axis
