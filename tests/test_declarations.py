"""The components' declarations: the list names every component once, and what the core
derives from it (the scenario's tables, Features, Equipment, the draws' and the noise's
layouts, the observation's columns) is what the hand-laid code of earlier versions held,
so that every id keeps its numbers."""

from __future__ import annotations

import importlib
import pkgutil
import re

import numpy as np
import pytest

import rigidrot_gym.attitude.components as components
from rigidrot_gym.attitude import data, randomization, starts, task, variates
from rigidrot_gym.attitude.components import COMPONENTS, declaration
from rigidrot_gym.attitude.scenario import Scenario, ScenarioError, find
from rigidrot_gym.attitude.settings import tables_of


def test_the_list_names_every_declared_component_once_by_its_module():
    declared = {}
    for module in pkgutil.iter_modules(components.__path__):
        found = getattr(importlib.import_module(f"{components.__name__}.{module.name}"), "COMPONENT", None)
        if found is not None:
            declared[module.name] = found
    # Every module that declares a component is listed, by its own name; domain
    # randomisation is declared beside its functions (attitude.randomization).
    listed = {c.name: c for c in COMPONENTS}
    assert len(listed) == len(COMPONENTS)
    assert set(declared) == set(listed) - {"randomization"}
    assert all(declared[name] is listed[name] for name in declared)
    assert listed["randomization"] is randomization.COMPONENT


def test_the_scenario_holds_each_declared_table_under_its_attribute():
    tables = tables_of(Scenario)
    for c in COMPONENTS:
        if c.table is not None:
            assert tables[c.table_attribute] is c.table
    assert list(tables)[:6] == ["simulation", "start", "target", "tolerance", "termination", "reward"]


def test_features_and_equipment_are_the_declared_ones():
    declared = [f.name for c in COMPONENTS for f in c.features]
    assert list(data.Features._fields) == [*declared, "energy_reward", "fast_noise", "rotated_frames"]
    state = [s.name for c in COMPONENTS for s in c.state]
    assert list(data.Equipment._fields) == ["keys", "axes", "sign", *state]
    assert tuple(data.EQUIPMENT_READERS) == data.Equipment._fields


def test_the_realism_draws_keep_their_places():
    # The hand-laid layout of earlier versions: 12 normals, then the key, the orbit phase and
    # the domain randomisation's uniforms.
    assert starts.REALISM_VARIATES == 24
    expected = {
        "sensors.bias": (True, slice(0, 3)),
        "disturbances.constant": (True, slice(3, 6)),
        "disturbances.walk": (True, slice(6, 9)),
        "randomization.turn_axis": (True, slice(9, 12)),
        "key": (False, 12),
        "orbit.phase": (False, 13),
        "randomization.inertia": (False, slice(14, 17)),
        "randomization.turn_angle": (False, 17),
        "randomization.torque": (False, slice(18, 22)),
        "randomization.start_angle": (False, 22),
        "randomization.start_rate": (False, 23),
    }
    assert starts.REALISM_DRAWS == expected
    variates_ = np.random.default_rng(0).random((5, starts.BASE_VARIATES + starts.REALISM_VARIATES))
    draws = starts.realism_draws(variates_, find("RigidRot/Reorient-v0").with_overrides(actuator_noise=0.1))
    normals = variates.box_muller(variates_[:, 12:24])
    np.testing.assert_array_equal(draws["disturbances.walk"], normals[:, 6:9])
    np.testing.assert_array_equal(draws["orbit.phase"], variates_[:, 12 + 13])


def test_the_noise_streams_keep_their_places():
    # Pairs of the main stream and first normals of the navigation stream, as earlier
    # versions laid them out by hand.
    assert (
        variates.STEP_PAIRS,
        variates.ACTUATOR_PAIRS,
        variates.SENSOR_PAIRS,
        variates.DISTURBANCE_PAIRS,
    ) == (
        7,
        0,
        2,
        5,
    )
    assert variates.NAVIGATION_PAIRS == 16
    assert (
        variates.GYRO_NORMALS,
        variates.TRACKER_NORMALS,
        variates.MAGNETOMETER_NORMALS,
        variates.SUN_SENSOR_NORMALS,
    ) == (0, 6, 10, 14)
    assert (
        variates.START_BIAS_NORMALS,
        variates.START_ERROR_NORMALS,
        variates.START_MAGNETOMETER_NORMALS,
    ) == (
        20,
        24,
        28,
    )


def test_a_component_reads_its_places_in_the_streams_by_its_name():
    assert variates.gyro__navigation == variates.GYRO_NORMALS
    assert variates.sensors__step == variates.SENSOR_PAIRS
    assert components.NOISE["navigation.start"] == variates.navigation__start == 24
    with pytest.raises(AttributeError):
        variates.toy__step  # noqa: B018 (the attribute access is the test)


def test_the_observation_blocks_follow_the_list():
    names = [b.name for b in task._BLOCKS]
    assert names == [
        "error_w",
        "error_xyz",
        "rates",
        "wheel_momenta",
        "pending_action",
        "star_tracker_flag",
        "sun_sensors",
        "sun",
        "magnetic_field",
        "fault",
    ]


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"magnetorquers": True}, "magnetorquers.enabled needs magnetic_field.enabled"),
        ({"magnetic_field": True}, "magnetic_field.enabled needs orbit.enabled (the orbit's field)"),
        ({"target_attitude": "nadir"}, "target.attitude 'nadir' needs orbit.enabled"),
    ],
)
def test_a_need_names_both_switches(overrides, message):
    with pytest.raises(ScenarioError, match=re.escape(message)):
        find("RigidRot/Reorient-v0").with_overrides(**overrides)


def test_a_toy_declaration_is_checked_by_its_needs_and_rules():
    def rule(s):
        if s.dt > 1.0:
            raise ScenarioError("field simulation.dt: the toy needs dt ≤ 1")

    toy = declaration.Component(
        "toy",
        "a toy",
        on=lambda s: True,
        switch="toy.enabled",
        needs=(declaration.Need("orbit", "its orbit"),),
        rules=(rule,),
    )
    orbit = next(c for c in COMPONENTS if c.name == "orbit")
    s = find("RigidRot/Reorient-v0")
    with pytest.raises(ScenarioError, match=re.escape("toy.enabled needs orbit.enabled (its orbit)")):
        declaration.check((orbit, toy), s)
    with pytest.raises(ScenarioError, match="toy needs dt"):
        declaration.check((orbit, toy), s.with_overrides(dt=2.0, orbit=True))


def test_a_component_added_to_the_list_draws_after_the_others_where_it_is_on(monkeypatch):
    toy = declaration.Component(
        "toy",
        "a toy",
        on=lambda s: s.dt < 0.15,
        draws=(declaration.Draw("kick", 3, normal=True), declaration.Draw("when", 1)),
    )
    # the components with draws outside the realism block, as the list would give them
    monkeypatch.setattr(starts, "_OUTSIDE", (toy,))
    starts._blocks_of.cache_clear()
    off = find("RigidRot/Reorient-v0").with_overrides(actuator_noise=0.1, dt=0.2)
    on = off.with_overrides(dt=0.1)
    assert starts.variate_count(off) == starts.BASE_VARIATES + starts.REALISM_VARIATES == 36
    assert starts.variate_count(on) == 36 + 4 + 1  # 3 normals from 4 uniforms, then 1 uniform
    variates_ = np.random.default_rng(1).random((5, 41))
    before, after = starts.realism_draws(variates_[:, :36], off), starts.realism_draws(variates_, on)
    assert set(after) == set(before) | {"toy.kick", "toy.when"}
    for name, value in before.items():
        np.testing.assert_array_equal(after[name], value)
    np.testing.assert_array_equal(after["toy.kick"], variates.box_muller(variates_[:, 36:40])[:, :3])
    np.testing.assert_array_equal(after["toy.when"], variates_[:, 40])
    starts._blocks_of.cache_clear()
