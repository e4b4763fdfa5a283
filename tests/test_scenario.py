"""The scenario's declarations, against the format written out here.

Each setting's TOML key, keyword, default, a valid value and a value out of its range are
listed below (:data:`EXPECTED`), independently of the declarations in
``rigidrot_gym/attitude/scenario.py``: a file and a keyword give the same scenario, a
file that leaves a key out gets the default written here, a value out of range is
refused with the file and the key in the message, and the generated docs page lists
exactly these keys. A table declared in this module (:class:`Magnet`) shows that a
component can add its own table, read from a legacy key too, without touching the
machinery.

No ``from __future__ import annotations`` here: the made-up documents declared inside
tests annotate their tables with local classes, which string annotations could not name.
"""

import copy
import dataclasses
import json
import re
import shutil
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from rigidrot_gym.attitude import scenario as scenario_module
from rigidrot_gym.attitude.components.wheels import Wheels
from rigidrot_gym.attitude.scenario import FIELDS, Scenario, ScenarioError, Simulation, load
from rigidrot_gym.attitude.settings import (
    REQUIRED,
    Table,
    flag,
    non_negative,
    positive,
    read,
    reference,
    setting,
    settings_of,
)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# The smallest valid file: the required keys only.
MINIMAL = {
    "id": "Test/Minimal-v0",
    "body": {"moments": [0.08, 0.10, 0.05]},
    "actuator": {"max_torque": [0.01, 0.01, 0.01]},
    "simulation": {"dt": 0.2, "substeps": 1, "integrator": "rk4", "max_episode_steps": 250},
    "start": {"attitude": "random"},
    "target": {"attitude": "random"},
    "tolerance": {"pointing_deg": 2.0, "rate": 0.01},
    "termination": {"max_rate": 1.5},
}
# keyword: (TOML key, default, a valid value other than MINIMAL's, a value out of range)
EXPECTED = {
    "id": ("id", REQUIRED, "Test/Other-v1", 3),
    "description": ("description", "", "another task", 1),
    "max_torque": ("actuator.max_torque", REQUIRED, [0.5, 0.5, 0.5], [0.1, 0.0, 0.1]),
    "actuator_noise": ("actuator.noise", 0.0, 0.1, 1.0),
    "actuation_delay": ("actuator.delay", False, True, 1),
    "wheel_layout": ("wheels.layout", "none", "pyramid", "tetrahedron"),
    "wheel_max_torque": ("wheels.max_torque", 0.01, 0.02, 0.0),
    "wheel_max_momentum": ("wheels.max_momentum", 0.05, 0.1, -1.0),
    "wheel_model": ("wheels.model", "ideal", "RW0", "HR17"),
    "wheel_terminate_on_saturation": ("wheels.terminate_on_saturation", False, True, "yes"),
    "dt": ("simulation.dt", REQUIRED, 0.05, 0),
    "substeps": ("simulation.substeps", REQUIRED, 3, 100_001),
    "integrator": ("simulation.integrator", REQUIRED, "nielsen_krenk", "exact"),  # exact: no torque
    "random_stream": ("simulation.random_stream", 0, 1, 2),
    "max_episode_steps": ("simulation.max_episode_steps", REQUIRED, 99, 0),
    "start_attitude": ("start.attitude", REQUIRED, [0.0, 1.0, 0.0, 0.0], "upside_down"),
    "start_max_angle_deg": ("start.max_angle_deg", 180.0, 30.0, 181.0),
    "start_rate": ("start.rate", [0.0, 0.0, 0.0], [0.01, 0.0, -0.01], [0.0, 0.0]),
    "start_rate_spread": ("start.rate_spread", 0.0, 0.02, -0.1),
    "target_attitude": ("target.attitude", REQUIRED, [0.0, 0.0, 0.0, 1.0], "near_target"),
    "pointing_tolerance_deg": ("tolerance.pointing_deg", REQUIRED, 5.0, 0.0),
    "rate_tolerance": ("tolerance.rate", REQUIRED, 0.02, -1),
    "max_rate": ("termination.max_rate", REQUIRED, 2.5, "fast"),
    "success_hold_steps": ("termination.success_hold_steps", 0, 4, 1.5),
    "reward_angle": ("reward.angle", 1.0, 2.0, -1.0),
    "reward_rate": ("reward.rate", 0.1, 0.3, 1e38),
    "reward_torque": ("reward.torque", 0.01, 0.0, "x"),
    "reward_success": ("reward.success", 1.0, 5.0, [1.0]),
    "reward_unsafe": ("reward.unsafe", 10.0, 20.0, -0.5),
    "reward_energy": ("reward.energy", 0.0, 5.0, -1.0),
    "disturbance_constant": ("disturbance.constant", 0.0, 1e-5, -1e-5),
    "disturbance_random_walk": ("disturbance.random_walk", 0.0, 1e-5, True),
    "disturbance_correlation_time": ("disturbance.correlation_time", 300.0, 100.0, 0.0),
    "gravity_gradient": ("gravity_gradient.enabled", False, True, 0),
    "orbit_altitude": ("gravity_gradient.orbit_altitude", 500e3, 7e5, -1.0),
    "orbit": ("orbit.enabled", False, True, 0),
    "orbit_semi_major_axis": ("orbit.semi_major_axis", 6878137.0, 7e6, -1.0),
    "orbit_eccentricity": ("orbit.eccentricity", 0.0, 0.01, 1.0),
    "orbit_inclination_deg": ("orbit.inclination_deg", 97.4, 51.6, 181.0),
    "orbit_raan_deg": ("orbit.raan_deg", 0.0, 30.0, -1.0),
    "orbit_argp_deg": ("orbit.argp_deg", 0.0, 90.0, 361.0),
    "orbit_epoch": ("orbit.epoch", "2026-01-01T00:00:00Z", "2027-03-20T12:00:00", "noon"),
    "orbit_j2": ("orbit.j2", False, True, 1),
    "magnetic_field": ("magnetic_field.enabled", False, True, "yes"),
    "magnetorquers": ("magnetorquers.enabled", False, True, 1),
    "magnetorquer_max_dipole": ("magnetorquers.max_dipole", [0.2, 0.2, 0.2], [0.1, 0.2, 0.3], [0.2, 0, 0.2]),
    "magnetorquer_duty_cycle": ("magnetorquers.duty_cycle", 1.0, 0.5, 0.0),
    "sun": ("sun.enabled", False, True, "yes"),
    "attitude_noise_deg": ("sensors.attitude_noise_deg", 0.0, 0.1, 200.0),
    "rate_noise": ("sensors.rate_noise", 0.0, 1e-4, 2e6),
    "rate_bias": ("sensors.rate_bias", 0.0, 1e-4, -1e-4),
    "gyro_model": ("gyro.model", "none", "42", "43"),
    "gyro_initial_bias_deg_per_hour": ("gyro.initial_bias_deg_per_hour", 1.0, 0.5, -1.0),
    "gyro_arw_deg_per_sqrt_hour": ("gyro.arw_deg_per_sqrt_hour", "preset", 0.14, -0.1),
    "gyro_bias_stability_deg_per_hour": ("gyro.bias_stability_deg_per_hour", "preset", 0.2, "stable"),
    "gyro_pulse_arcsec": ("gyro.pulse_arcsec", "preset", 0.0, -1.0),
    "star_tracker_model": ("star_tracker.model", "none", "42", 42),
    "star_tracker_mounting": (
        "star_tracker.mounting",
        [1.0, 0.0, 0.0, 0.0],
        [0.0, 1.0, 0.0, 0.0],
        [1, 1, 0, 0],
    ),
    "star_tracker_period": ("star_tracker.period", 1, 5, 0),
    "star_tracker_noise_across_arcsec": ("star_tracker.noise_across_arcsec", "preset", 5.0, -5.0),
    "star_tracker_noise_about_arcsec": ("star_tracker.noise_about_arcsec", "preset", 50.0, "loud"),
    "magnetometer_model": ("magnetometer.model", "none", "42", "HMC5883"),
    "magnetometer_bias": ("magnetometer.bias", 0.0, 1e-7, 1.0),
    "sun_sensor_model": ("sun_sensors.model", "none", "cube", "pyramid"),
    "sun_sensor_noise": ("sun_sensors.noise", 0.01, 0.02, -0.01),
    "observe": ("navigation.observe", "truth", "estimate", "belief"),
    "estimator_initial_attitude_deg": ("navigation.initial_attitude_deg", 1.0, 2.0, 0.0),
    "randomize_inertia": ("randomization.inertia", 0.0, 0.1, 1.0),
    "randomize_inertia_rotation_deg": ("randomization.inertia_rotation_deg", 0.0, 5.0, 181.0),
    "randomize_torque": ("randomization.torque", 0.0, 0.05, 1.5),
    "randomize_start": ("randomization.start", 0.0, 0.2, -0.2),
    "sensor_errors": ("sensor_errors.enabled", False, True, "yes"),
    "sensor_misalignment_deg": ("sensor_errors.misalignment_deg", 0.0573, 0.1, 10.5),
    "gyro_scale_factor_ppm": ("sensor_errors.gyro_scale_factor_ppm", 500.0, 100.0, -1.0),
    "magnetometer_scale_factor_ppm": ("sensor_errors.magnetometer_scale_factor_ppm", 5000.0, 1000.0, 1.5e5),
    "sun_sensor_scale_factor_ppm": ("sensor_errors.sun_sensor_scale_factor_ppm", 10000.0, 2000.0, "big"),
    "sun_sensor_bias": ("sensor_errors.sun_sensor_bias", 0.005, 0.01, 1.5),
    "surfaces": ("surfaces.enabled", False, True, "yes"),
    "surface_facets": ("surfaces.facets", "6U", "6U-stowed", "7U"),
    "surface_centre_of_mass": ("surfaces.centre_of_mass", [0.0, 0.0, 0.0], [0.01, 0.0, -0.02], [0.0, 0.0]),
    "surface_drag": ("surfaces.drag", True, False, 1),
    "surface_solar_pressure": ("surfaces.solar_pressure", True, False, "no"),
    "solar_flux": ("surfaces.solar_flux", 1360.8, 1368.0, 0.0),
    "thruster_layout": ("thrusters.layout", "none", "eight", "six"),
    "thruster_model": ("thrusters.model", "MiPS", "MONARC-1", "R4D"),
    "thruster_half_sizes": ("thrusters.half_sizes", [0.05, 0.11315, 0.183], [0.1, 0.1, 0.2], [0.1, 0.0, 0.2]),
    "thruster_command": ("thrusters.command", "torque", "on_times", "duty"),
    "thruster_modulation": ("thrusters.modulation", "remainder", "schmitt", "pwm"),
    "thruster_level_on": ("thrusters.level_on", 0.75, 0.8, 1.5),
    "thruster_level_off": ("thrusters.level_off", 0.25, 0.2, -0.1),
    "wheel_fault": ("faults.wheel", "none", "stick", "jam"),
    "wheel_fault_index": ("faults.wheel_index", -1, 2, 4),
    "wheel_fault_share": ("faults.share", 0.5, 0.25, 1.5),
    "thruster_fault": ("faults.thruster", "none", "on", "jam"),
    "thruster_fault_index": ("faults.thruster_index", -1, 7, 8),
    "fault_time": ("faults.time", "drawn", 10.0, -1.0),
    "fault_window": ("faults.window", [0.0, 60.0], [10.0, 20.0], [1.0]),
    "star_tracker_dropout": ("faults.star_tracker_dropout", 0.0, 5.0, -1.0),
    "magnetometer_dropout": ("faults.magnetometer_dropout", 0.0, 5.0, "long"),
    "gyro_dropout": ("faults.gyro_dropout", 0.0, 5.0, -5.0),
    "gyro_dropout_axis": ("faults.gyro_dropout_axis", 0, 2, 3),
    "faults_hidden": ("faults.hidden", True, False, 1),
}
# What a keyword's valid value needs besides: the field is the orbit's, the rods need the field.
NEEDS = {
    "magnetic_field": {"orbit": True},
    "magnetorquers": {"orbit": True, "magnetic_field": True},
    "magnetorquer_duty_cycle": {"orbit": True, "magnetic_field": True, "magnetorquers": True, "substeps": 2},
    "sun": {"orbit": True},
    "wheel_model": {"wheel_layout": "pyramid"},
    "observe": {"gyro_model": "42", "star_tracker_model": "42"},
    "magnetometer_model": {"orbit": True, "magnetic_field": True},
    "sun_sensor_model": {"orbit": True},
    "sensor_errors": {"gyro_model": "42"},
    "surfaces": {"orbit": True},
    "wheel_fault": {"wheel_layout": "pyramid"},
    "thruster_fault": {"thruster_layout": "eight"},
    "star_tracker_dropout": {"star_tracker_model": "42"},
    "magnetometer_dropout": {"orbit": True, "magnetic_field": True, "magnetometer_model": "42"},
    "gyro_dropout": {"gyro_model": "42"},
}


def _valid(keyword: str) -> dict:
    """The keyword overrides that set ``keyword`` to its valid value of EXPECTED."""
    return {**NEEDS.get(keyword, {}), keyword: EXPECTED[keyword][2]}


# The realism options: each on when not at its default.
SWITCHES = {
    "actuator_noise",
    "actuation_delay",
    "wheel_layout",
    "wheel_model",
    "disturbance_constant",
    "disturbance_random_walk",
    "gravity_gradient",
    "orbit",
    "magnetic_field",
    "magnetorquers",
    "magnetorquer_duty_cycle",
    "sun",
    "attitude_noise_deg",
    "rate_noise",
    "rate_bias",
    "gyro_model",
    "star_tracker_model",
    "magnetometer_model",
    "sun_sensor_model",
    "observe",
    "randomize_inertia",
    "randomize_inertia_rotation_deg",
    "randomize_torque",
    "randomize_start",
    "sensor_errors",
    "surfaces",
    "thruster_layout",
    "wheel_fault",
    "thruster_fault",
    "star_tracker_dropout",
    "magnetometer_dropout",
    "gyro_dropout",
}
# The ends of each numeric range: (values accepted, values just outside).
TINY = 2.2250738585072014e-308  # the smallest normal float: smaller has no finite inverse
INT64_MAX = 2**63 - 1
POSITIVE = ((TINY, 1e300), (0.0, 5e-324, -1.0))
NON_NEGATIVE = ((0.0, 1e300), (-5e-324, -1.0))
FRACTION = ((0.0, 0.999), (-5e-324, 1.0))
ANGLE = ((0.0, 180.0), (-5e-324, 180.00001))
WEIGHT = ((0.0, 1e37), (-5e-324, 1.0001e37))
RATE_NOISE = ((0.0, 1e6), (-5e-324, 1.000001e6))
RANGES = {
    "actuator_noise": FRACTION,
    "wheel_max_torque": POSITIVE,
    "wheel_max_momentum": POSITIVE,
    "dt": POSITIVE,
    "substeps": ((1, 100_000), (0, 100_001)),
    "max_episode_steps": ((1, INT64_MAX), (0, INT64_MAX + 1)),
    "start_max_angle_deg": ANGLE,
    "start_rate_spread": ((0.0, 0.1), (-5e-324,)),  # more reaches max_rate
    "pointing_tolerance_deg": ((TINY, 180.0), (0.0, 180.00001)),
    "rate_tolerance": ((TINY, 1.4), (0.0,)),  # below max_rate
    "max_rate": ((0.011, 1e300), (0.0,)),  # above the rate tolerance
    "success_hold_steps": ((0, INT64_MAX), (-1, INT64_MAX + 1)),
    "reward_angle": WEIGHT,
    "reward_rate": WEIGHT,
    "reward_torque": WEIGHT,
    "reward_success": WEIGHT,
    "reward_unsafe": WEIGHT,
    "reward_energy": WEIGHT,
    "disturbance_constant": NON_NEGATIVE,
    "disturbance_random_walk": NON_NEGATIVE,
    "disturbance_correlation_time": POSITIVE,
    "orbit_altitude": POSITIVE,
    "orbit_semi_major_axis": ((TINY, 1e9), (0.0, 1.000001e9)),
    "orbit_eccentricity": ((0.0, 0.99), (-5e-324, 0.990001)),
    "orbit_inclination_deg": ANGLE,
    "orbit_raan_deg": ((0.0, 360.0), (-5e-324, 360.00001)),
    "orbit_argp_deg": ((0.0, 360.0), (-5e-324, 360.00001)),
    "attitude_noise_deg": ANGLE,
    "rate_noise": RATE_NOISE,
    "rate_bias": RATE_NOISE,
    "randomize_inertia": FRACTION,
    "randomize_inertia_rotation_deg": ANGLE,
    "randomize_torque": FRACTION,
    "randomize_start": FRACTION,
    "gyro_arw_deg_per_sqrt_hour": NON_NEGATIVE,
    "gyro_bias_stability_deg_per_hour": NON_NEGATIVE,
    "gyro_pulse_arcsec": NON_NEGATIVE,
    "star_tracker_noise_across_arcsec": NON_NEGATIVE,
    "star_tracker_noise_about_arcsec": NON_NEGATIVE,
}
REQUIRED_KEYWORDS = [k for k, (_, default, _, _) in EXPECTED.items() if default is REQUIRED]
OPTIONAL_KEYWORDS = [k for k, (_, default, _, _) in EXPECTED.items() if default is not REQUIRED]


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return f"[{', '.join(_toml_value(v) for v in value)}]"
    return repr(value)


def _toml(data: dict) -> str:
    lines = [f"{key} = {_toml_value(v)}" for key, v in data.items() if not isinstance(v, dict)]
    for table, entries in data.items():
        if isinstance(entries, dict):
            lines += ["", f"[{table}]", *(f"{key} = {_toml_value(v)}" for key, v in entries.items())]
    return "\n".join(lines) + "\n"


_ABSENT = object()


def _with(key: str, value, data: dict = MINIMAL) -> dict:
    """``data`` with the TOML ``key`` set to ``value`` (``_ABSENT``: left out)."""
    data = copy.deepcopy(data)
    *table, name = key.split(".")
    node = data.setdefault(table[0], {}) if table else data
    if value is _ABSENT:
        del node[name]
    else:
        node[name] = value
    return data


def _write(tmp_path: Path, data: dict, name: str = "scenario.toml") -> Path:
    path = tmp_path / name
    path.write_text(_toml(data))
    return path


def _assert_is(value, expected) -> None:
    """``value`` is ``expected`` as a scenario holds it: a read-only float64 array for a
    list, else the same value of the same type."""
    if isinstance(expected, list):
        assert isinstance(value, np.ndarray) and value.dtype == np.float64 and not value.flags.writeable
        np.testing.assert_array_equal(value, expected)
    else:
        assert type(value) is type(expected) and value == expected, (value, expected)


# --------------------------------------------------------------------------- the fields


def test_the_keywords_keys_and_switches_are_the_expected_ones():
    assert {k: key for k, (key, _) in FIELDS.items()} == {k: e[0] for k, e in EXPECTED.items()}
    assert {k for k, s in settings_of(Scenario).items() if s.switch} == SWITCHES


def test_a_file_with_the_required_keys_only_takes_every_default(tmp_path):
    s = load(_write(tmp_path, MINIMAL))
    for keyword in OPTIONAL_KEYWORDS:
        _assert_is(getattr(s, keyword), EXPECTED[keyword][1])
    assert not s.realistic and not s.wheels


@pytest.mark.parametrize("keyword", REQUIRED_KEYWORDS)
def test_a_required_key_left_out_is_refused(tmp_path, keyword):
    key = EXPECTED[keyword][0]
    path = _write(tmp_path, _with(key, _ABSENT))
    with pytest.raises(ScenarioError, match=re.escape(f"{path}: missing field {key}")):
        load(path)


@pytest.mark.parametrize("keyword", list(EXPECTED))
def test_a_value_out_of_range_is_refused_naming_the_file_and_the_key(tmp_path, keyword):
    key, _, _, bad = EXPECTED[keyword]
    path = _write(tmp_path, _with(key, bad))
    with pytest.raises(ScenarioError, match=re.escape(f"{path}: field {key}: expected ")):
        load(path)
    base = load(_write(tmp_path, MINIMAL, "base.toml"))
    with pytest.raises(ScenarioError, match=re.escape(f"base.toml: override {keyword}: expected ")):
        base.with_overrides(**{keyword: bad})


@pytest.mark.parametrize("keyword", list(RANGES))
def test_each_end_of_a_numeric_range_is_where_it_is_written(tmp_path, keyword):
    base = load(_write(tmp_path, MINIMAL))
    accepted, refused = RANGES[keyword]
    for value in accepted:
        assert getattr(base.with_overrides(**{keyword: value}), keyword) == value
    for value in refused:
        with pytest.raises(
            ScenarioError, match=rf"override {keyword}: expected .*, got {re.escape(repr(value))}$"
        ):
            base.with_overrides(**{keyword: value})


@pytest.mark.parametrize("keyword", list(EXPECTED))
def test_a_key_in_the_file_and_its_keyword_give_the_same_scenario(tmp_path, keyword):
    key, _, value, _ = EXPECTED[keyword]
    data = MINIMAL
    for needed, needed_value in NEEDS.get(keyword, {}).items():
        data = _with(EXPECTED[needed][0], needed_value, data)
    from_file = load(_write(tmp_path, _with(key, value, data)))
    from_keyword = load(_write(tmp_path, MINIMAL, "base.toml")).with_overrides(**_valid(keyword))
    _assert_is(getattr(from_file, keyword), value)
    _assert_is(getattr(from_keyword, keyword), value)
    assert from_file.digest() == from_keyword.digest()


def test_unknown_keys_tables_and_keywords_are_refused(tmp_path):
    for data, message in [
        ({**MINIMAL, "bogus": {"x": 1}}, "unknown key(s) ['bogus']"),
        ({**MINIMAL, "name": "x"}, "unknown key(s) ['name']"),
        (_with("simulation.step", 0.1), "unknown key(s) ['simulation.step']"),
        (_with("wheels.count", 4), "unknown key(s) ['wheels.count']"),
        ({**MINIMAL, "simulation": 3}, "[simulation] must be a table"),
        ({k: v for k, v in MINIMAL.items() if k != "body"}, "missing table [body]"),
    ]:
        path = _write(tmp_path, data)
        with pytest.raises(ScenarioError, match=re.escape(f"{path}: {message}")):
            load(path)
    s = load(_write(tmp_path, MINIMAL))
    with pytest.raises(
        ScenarioError, match=r"unknown scenario field\(s\) \['time_step'\]; valid names: inertia, "
    ):
        s.with_overrides(time_step=0.1)
    with pytest.raises(ScenarioError, match=r"unknown scenario field\(s\) \['time_step'\]"):
        dataclasses.replace(s, time_step=0.1)


def test_the_realism_switches_are_the_declared_ones(tmp_path):
    base = load(_write(tmp_path, MINIMAL))
    for keyword in EXPECTED:
        on = base.with_overrides(**_valid(keyword)).realistic
        assert on == (keyword in SWITCHES), keyword
    assert base.with_overrides(wheel_layout="orthogonal").wheels


def test_the_digest_ignores_the_path_and_changes_with_every_field(tmp_path):
    a = load(_write(tmp_path, MINIMAL, "a.toml"))
    (tmp_path / "elsewhere").mkdir()
    b = load(shutil.copy(tmp_path / "a.toml", tmp_path / "elsewhere" / "b.toml"))
    assert a.source != b.source and a.digest() == b.digest()
    digests = {a.digest()} | {a.with_overrides(inertia=[0.08, 0.10, 0.06]).digest()}
    for keyword in EXPECTED:
        digests.add(a.with_overrides(**_valid(keyword)).digest())
    assert len(digests) == len(EXPECTED) + 2


def test_tables_and_scenarios_built_in_code_are_checked(tmp_path):
    assert Wheels().max_torque == 0.01 and Wheels(layout="pyramid").layout == "pyramid"
    with pytest.raises(ScenarioError, match=r"^field wheels.max_torque: expected a positive number, got -1$"):
        Wheels(max_torque=-1)
    s = load(_write(tmp_path, MINIMAL))
    with pytest.raises(ScenarioError, match=rf"{re.escape(str(s.source))}: field simulation.dt: expected"):
        dataclasses.replace(s, dt=-0.2)
    faster = dataclasses.replace(
        s, simulation=Simulation(dt=0.1, substeps=2, integrator="rk4", max_episode_steps=9)
    )
    assert (faster.dt, faster.max_episode_steps, faster.max_rate) == (0.1, 9, 1.5)
    with pytest.raises(ScenarioError, match=r"field simulation: expected a Simulation, got \{'dt': 0.1\}"):
        dataclasses.replace(s, simulation={"dt": 0.1})
    # From keywords only: the file's values, the body as moments.
    keywords = {keyword: EXPECTED[keyword][2] for keyword in REQUIRED_KEYWORDS}
    built = Scenario(inertia=[0.08, 0.10, 0.05], **keywords)
    assert built.source == "<keywords>"
    for keyword, value in keywords.items():
        _assert_is(getattr(built, keyword), value)
    with pytest.raises(ScenarioError, match=r"^<keywords>: missing field simulation.dt$"):
        Scenario(inertia=[0.08, 0.10, 0.05], **{k: v for k, v in keywords.items() if k != "dt"})


def test_a_conflict_between_fields_names_the_overrides(tmp_path):
    s = load(_write(tmp_path, MINIMAL))
    with pytest.raises(
        ScenarioError,
        match=re.escape(f"override(s) max_rate=0.005 of {s.source}: tolerance.rate (0.01) must be below"),
    ):
        s.with_overrides(max_rate=0.005)


def test_every_array_of_the_built_in_scenarios_is_read_only():
    for s in scenario_module.builtin():
        arrays = [s.inertia] + [getattr(s, k) for k in FIELDS if isinstance(getattr(s, k), np.ndarray)]
        assert len(arrays) >= 3 and not any(a.flags.writeable for a in arrays), s.id


# --------------------------------------------------------------------------- a table declared here


class Magnet(Table, key="magnet"):
    """A made-up magnetic disturbance; older files gave its strength under [disturbance]."""

    strength: float = setting(
        0.0,
        check=non_negative,
        unit="A·m²",
        flat="magnet_strength",
        legacy=("disturbance.magnet_strength",),
        switch=True,
        doc="residual dipole",
    )
    inclination_deg: float = setting(90.0, check=positive, unit="deg", doc="of the orbit")


@dataclass(frozen=True, init=False)
class WithMagnet(Scenario):
    magnet: Magnet


def _read_with_magnet(data: dict, source: str = "magnet.toml") -> WithMagnet:
    return WithMagnet(**read(WithMagnet, data, source, own=("body",)), inertia=data["body"], source=source)


def test_a_table_declared_elsewhere_is_read_from_its_key_or_its_legacy_key():
    assert _read_with_magnet(MINIMAL).magnet == Magnet(strength=0.0, inclination_deg=90.0)
    new = _read_with_magnet({**MINIMAL, "magnet": {"strength": 2.0, "inclination_deg": 51.6}})
    old = _read_with_magnet({**MINIMAL, "disturbance": {"magnet_strength": 2.0, "constant": 1e-5}})
    assert (new.magnet_strength, new.magnet.inclination_deg, old.magnet_strength) == (2.0, 51.6, 2.0)
    assert old.disturbance_constant == 1e-5 and new.realistic and not _read_with_magnet(MINIMAL).realistic
    both = "magnet.strength and disturbance.magnet_strength are one field; give it once, as magnet.strength"
    with pytest.raises(ScenarioError, match=re.escape(f"magnet.toml: {both}")):
        _read_with_magnet({**MINIMAL, "magnet": {"strength": 1.0}, "disturbance": {"magnet_strength": 2.0}})
    with pytest.raises(ScenarioError, match=re.escape("magnet.toml: unknown key(s) ['magnet.dipole']")):
        _read_with_magnet({**MINIMAL, "magnet": {"dipole": 1.0}})
    with pytest.raises(
        ScenarioError, match=r"magnet.toml: field magnet.strength: expected a number ≥ 0.0, got -1"
    ):
        _read_with_magnet({**MINIMAL, "disturbance": {"magnet_strength": -1}})
    # Its keyword, digest, defaults and docs come with it.
    stronger = new.with_overrides(magnet_strength=3.0)
    assert isinstance(stronger, WithMagnet) and stronger.magnet.strength == 3.0
    assert stronger.magnet.inclination_deg == 51.6 and stronger.digest() != new.digest()
    with pytest.raises(ScenarioError, match=r"magnet.toml: override magnet_strength: expected"):
        new.with_overrides(magnet_strength=-3.0)
    row = reference(Magnet.settings()).splitlines()[2]
    assert row == (
        "| `strength` | `magnet_strength` | A·m² | a number ≥ 0 | `0.0` | residual dipole (realism option); "
        "older files give it as `disturbance.magnet_strength` |"
    )


def test_declarations_that_clash_are_refused():
    class Again(Table, key="again"):
        max_rate: float = setting(1.0, check=positive, doc="a second max_rate")

    @dataclass(frozen=True, init=False)
    class TwoMaxRates(Scenario):
        again: Again

    with pytest.raises(TypeError, match=r"keyword 'max_rate' of again\.max_rate is already taken"):
        settings_of(TwoMaxRates)

    class Shadow(Table, key="shadow"):
        on: bool = setting(False, check=flag, flat="wheels", doc="shadows Scenario.wheels")

    @dataclass(frozen=True, init=False)
    class Shadowed(Scenario):
        shadow: Shadow

    with pytest.raises(TypeError, match=r"keyword 'wheels' of shadow\.on is already taken"):
        settings_of(Shadowed)

    class Moved(Table, key="moved"):
        dt: float = setting(1.0, check=positive, flat="moved_dt", legacy=("simulation.dt",), doc="taken")

    @dataclass(frozen=True, init=False)
    class TakenKey(Scenario):
        moved: Moved

    with pytest.raises(TypeError, match=r"TOML key 'simulation\.dt' of moved\.dt is taken"):
        settings_of(TakenKey)
    with pytest.raises(TypeError, match="a realism switch needs a default"):
        setting(REQUIRED, check=positive, doc="on or off?", switch=True)
    with pytest.raises(TypeError, match="a table key is one TOML name"):

        class Nested(Table, key="a.b"):
            pass

    class Plain(Table, key="plain"):
        x: float = 1.0

    with pytest.raises(TypeError, match=r"fields \['x'\] are not declared with setting\(\)"):
        Plain()


# --------------------------------------------------------------------------- the docs


def test_the_format_page_lists_every_declared_key_and_no_other():
    page = scenario_module.format_reference()
    table, rows, body, shapes = None, {}, set(), set()
    for line in page.splitlines():
        if line.startswith("## "):
            table = line[3:].strip("`[]")
        elif line.startswith("| `"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
            if len(cells) == 6:
                key = cells[0].strip("`") if table == "Top level" else f"{table}.{cells[0].strip('`')}"
                rows[cells[1].strip("`")] = (key, cells[4])
            elif table == "body" and len(cells) == 2:
                body.add(cells[0].strip("`"))
            elif table == "body":
                shapes.add(cells[0].strip("`"))
    assert {k: key for k, (key, _) in rows.items()} == {k: e[0] for k, e in EXPECTED.items()}
    for keyword, (_, default_cell) in rows.items():
        default = EXPECTED[keyword][1]
        shown = "required" if default is REQUIRED else tomllib.loads(f"x = {default_cell.strip('`')}")["x"]
        assert shown == ("required" if default is REQUIRED else default), keyword
    assert body == {"moments", "tensor", "parts"}
    assert shapes == {
        "solid_box",
        "solid_cylinder",
        "hollow_cylinder",
        "solid_sphere",
        "ellipsoid",
        "thin_rod",
        "thin_plate",
    }


def test_the_module_docstring_example_is_a_valid_file(tmp_path):
    block = scenario_module.__doc__.split("::\n", 1)[1]
    example = textwrap.dedent(block[: re.search(r"\n(?=\S)", block).start()])
    path = tmp_path / "example.toml"
    path.write_text(example)
    s = load(path)
    assert (s.id, s.dt, s.max_rate, s.start_attitude) == ("RigidRot/Reorient-v0", 0.2, 1.5, "random")


def test_the_gravity_gradient_moved_to_its_own_table_and_old_files_load_unchanged(tmp_path):
    """The component's table, ``[gravity_gradient]``, and the keys older files give it in
    ``[disturbance]``: the same scenario (digest) either way; both at once is refused."""
    new = {**MINIMAL, "gravity_gradient": {"enabled": True, "orbit_altitude": 7e5}}
    old = {**MINIMAL, "disturbance": {"gravity_gradient": True, "orbit_altitude": 7e5}}
    scenarios = []
    for name, data in (("new", new), ("old", old)):
        scenarios.append(load(_write(tmp_path, data, f"{name}.toml")))
    assert scenarios[0].digest() == scenarios[1].digest()
    assert scenarios[1].gravity_gradient is True and scenarios[1].orbit_altitude == 7e5
    assert scenarios[1].gravity.enabled is True and scenarios[1].realistic
    both = {**new, "disturbance": {"gravity_gradient": True}}
    with pytest.raises(ScenarioError, match="gravity_gradient"):
        load(_write(tmp_path, both, "both.toml"))


def test_a_body_of_parts_keeps_them_for_the_pictures_and_only_while_the_inertia_is_theirs():
    slew = scenario_module.find("RigidRot/Slew-v0")
    assert [p.shape for p in slew.parts] == ["solid_box", "thin_plate", "thin_plate", "solid_cylinder"]
    antenna = slew.parts[3]
    assert antenna.dimensions == {"radius": 0.2, "height": 0.05}
    np.testing.assert_array_equal(antenna.part.position, [0.25, 0.3, 0.45])
    assert antenna.part.mass == 3.0
    # A setting changed: the parts go along, and no digest moves (they are in none).
    faster = slew.with_overrides(dt=0.1)
    assert faster.parts is slew.parts and dataclasses.replace(slew).digest() == slew.digest()
    # The inertia replaced: the body is no longer theirs.
    assert slew.with_overrides(inertia=[1.0, 2.0, 2.5]).parts == ()
    assert dataclasses.replace(slew, inertia=np.diag([1.0, 2.0, 2.5])).parts == ()
    assert scenario_module.find("RigidRot/Reorient-v0").parts == ()
    with pytest.raises(ScenarioError, match="field parts"):
        dataclasses.replace(slew, parts=["solid_box"])
