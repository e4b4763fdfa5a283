"""A model is one file: a component written outside the package, in a temporary module,
registered through an entry point (``rigidrot_gym.components``) and nothing else. Its
table, per-body state, per-episode draw, held torque and observation column reach an env,
checked against the closed form of a sphere under a constant body torque."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from importlib.metadata import EntryPoint

import numpy as np
import pytest

from rigidrot_gym.attitude.components import BUILT_IN, COMPONENTS, plugins
from rigidrot_gym.attitude.scenario import find
from rigidrot_gym.physics.plumbing import jit

# A motor that holds a torque about body z, its size drawn per episode: the whole component.
TOY = '''
"""A motor holding a constant torque about body z, its size drawn per episode."""

import numpy as np

from rigidrot_gym.attitude.components.declaration import Column, Component, Draw, Feature, State
from rigidrot_gym.attitude.settings import ScenarioError, Table, flag, non_negative, setting
from rigidrot_gym.physics.plumbing.jit import jitable


class MotorTable(Table, key="toy_motor"):
    """A motor holding a torque about body z."""

    enabled: bool = setting(False, check=flag, flat="motor_on", switch=True, doc="the motor on")
    low: float = setting(0.0, check=non_negative, unit="N·m", flat="motor_low", doc="least torque")
    high: float = setting(1e-4, check=non_negative, unit="N·m", flat="motor_high", doc="most torque")


def _ordered(s):
    if s.motor_on and s.motor_low > s.motor_high:
        raise ScenarioError(f"toy_motor.low ({s.motor_low}) must not exceed toy_motor.high")


def _reset(episode):
    s, size = episode.batch.scenario, episode.draws["toy_motor.size"]
    torque = s.motor_low + (s.motor_high - s.motor_low) * size
    episode.equipment.motor_torque[episode.rows] = torque


def _load_of(features):
    if not features.toy_motor:
        return None

    @jitable
    def load(bodies, equipment, work, dt, i):
        return (0.0, 0.0, equipment.motor_torque[i])

    return load


def _observe_of(features):
    if not features.toy_motor:
        return None

    @jitable
    def write(call, bodies, equipment, state, out, column, i):
        out.obs[i, column] = equipment.motor_torque[i] / equipment.motor_high
        return column + 1

    return write


COMPONENT = Component(
    name="toy_motor",
    summary="a motor holding a torque about body z",
    table=MotorTable,
    on=lambda s: s.motor_on,
    switch="toy_motor.enabled",
    rules=(_ordered,),
    features=(Feature("toy_motor", lambda s, f: s.motor_on, "the motor's torque"),),
    state=(
        State("motor_torque", "(N,) its torque, N·m", lambda b: np.zeros(b.bodies), lambda f: f.toy_motor),
        State("motor_high", "its most, N·m", lambda b: b.scenario.motor_high, lambda f: f.toy_motor),
    ),
    reset=_reset,
    draws=(Draw("size", 1),),
    columns=(Column("motor", "its torque / its most", 0.0, 1.0, lambda s, a: int(s.motor_on)),),
    load=_load_of,
    observe=_observe_of,
)
'''

# A torque fixed in the world frame, its direction drawn per episode: a term of the compiled
# model, evaluated at every integrator stage from the stage's attitude.
WORLD = '''
"""A torque fixed in the world frame, its direction drawn per episode."""

import numpy as np

from rigidrot_gym.attitude.components.declaration import Component, Draw, Feature, State, Torque
from rigidrot_gym.attitude.settings import Table, non_negative, setting
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import torques
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.quaternion import qnormalize, qrotate_inv


class WorldTorqueTable(Table, key="toy_world_torque"):
    """A torque fixed in the world frame."""

    size: float = setting(0.0, check=non_negative, unit="N·m", flat="world_torque", switch=True, doc="size")


def _reset(episode):
    direction = episode.draws["toy_world_torque.direction"]
    direction /= np.linalg.norm(direction, axis=1)[:, None]
    episode.equipment.world_torque[episode.rows] = episode.batch.scenario.world_torque * direction


@jitable
def add(tau, t, q, omega, own):
    return vec.add(tau, qrotate_inv(qnormalize(q), own))


@jitable
def hold(bodies, equipment, work, dt, row, i):
    for k in range(3):
        work.params[row + k, i] = equipment.world_torque[i, k]


COMPONENT = Component(
    name="toy_world_torque",
    summary="a torque fixed in the world frame",
    table=WorldTorqueTable,
    on=lambda s: s.world_torque > 0.0,
    switch="toy_world_torque.size",
    features=(Feature("world_torque", lambda s, f: s.world_torque > 0.0, "a world-fixed torque"),),
    state=(
        State("world_torque", "(N, 3) it, N·m", lambda b: np.zeros((b.bodies, 3)), lambda f: f.world_torque),
    ),
    reset=_reset,
    draws=(Draw("direction", 3, normal=True),),
    torque=Torque(torques.Term("world", 3, add), lambda f: f.world_torque, hold),
)
'''

# Run where the toy is installed: a sphere (I = 0.1 kg·m²) at rest, the action zero.
RUN = """
import json
import numpy as np
import gymnasium as gym
import rigidrot_gym
from rigidrot_gym.attitude import scenario
from rigidrot_gym.attitude.components import COMPONENTS

I, DT, STEPS = 0.1, 0.2, 20
found = {"names": [c.name for c in COMPONENTS], "digest": scenario.find("RigidRot/Reorient-v0").digest()}
found["plain_shape"] = list(gym.make("RigidRot/Reorient-v0").observation_space.shape)
found["reference"] = "[toy_motor]" in scenario.format_reference()
try:
    gym.make("RigidRot/Reorient-v0", motor_on=True, motor_low=2e-4, motor_high=1e-4)
except scenario.ScenarioError as err:
    found["error"] = str(err)
env = gym.make(
    "RigidRot/Reorient-v0", inertia=[I, I, I], start_rate_spread=0.0,
    motor_on=True, motor_low=1e-4, motor_high=3e-4,
).unwrapped
column = {c.name: c.columns for c in env.observation_columns()}["motor"]
found["shape"] = list(env.observation_space.shape)
found["episodes"] = []
for seed in (1, 2):
    obs, _ = env.reset(seed=seed)
    q0, episode = env.attitude.copy(), {"q0": env.attitude.tolist(), "column": [float(obs[column][0])]}
    episode["rates"], episode["q"] = [], []
    for _ in range(STEPS):
        obs = env.step(np.zeros(3, dtype=np.float32))[0]
        episode["rates"].append(env.body_rates.tolist())
        episode["q"].append(env.attitude.tolist())
        episode["column"].append(float(obs[column][0]))
    found["episodes"].append(episode)
# The world torque on a sphere from spin: I ω_world(t) = I ω_world(0) + τ_world t, on our
# integrator (at every stage) and on an engine's (the batch's model, in numpy).
found["world"] = {}
for integrator in ("rk4", "pybullet"):
    env = gym.make(
        "RigidRot/Reorient-v0", inertia=[I, I, I], start_rate=[0.2, -0.1, 0.15], world_torque=3e-4,
        integrator=integrator,
    ).unwrapped
    env.reset(seed=3)
    runs = {"q": [env.attitude.tolist()], "rates": [env.body_rates.tolist()]}
    for _ in range(STEPS):
        env.step(np.zeros(3, dtype=np.float32))
        runs["q"].append(env.attitude.tolist())
        runs["rates"].append(env.body_rates.tolist())
    runs["torque"] = env.batch._equipment.world_torque[0].tolist()
    found["world"][integrator] = runs
print(json.dumps(found))
"""


def _install(folder) -> None:
    """The toy as another package would ship it: its module and a distribution's metadata
    with the entry point."""
    (folder / "rigidrot_toy_motor.py").write_text(TOY)
    (folder / "rigidrot_toy_world.py").write_text(WORLD)
    info = folder / "rigidrot_toys-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: rigidrot-toys\nVersion: 0.1\n")
    entries = "toy_motor = rigidrot_toy_motor:COMPONENT\ntoy_world = rigidrot_toy_world:COMPONENT\n"
    (info / "entry_points.txt").write_text(f"[{plugins.GROUP}]\n{entries}")


def _qmul(a, b):
    w1, x1, y1, z1 = a
    w2, x2, y2, z2 = b
    return np.array(
        [
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
        ]
    )


def _rotate(q, v):
    """v turned by the unit quaternion q (body to world)."""
    return _qmul(_qmul(q, np.concatenate([[0.0], v])), q * np.array([1.0, -1.0, -1.0, -1.0]))[1:]


@pytest.mark.slow
def test_a_component_from_outside_the_package_is_one_file(tmp_path):
    _install(tmp_path)
    environment = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]),
        # its kernels are its own: the package's cache stays the package's
        "NUMBA_CACHE_DIR": str(tmp_path / "cache"),
    }
    done = subprocess.run(
        [sys.executable, "-c", RUN], capture_output=True, text=True, env=environment, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    # Registered after every built-in component, which keep their order.
    assert found["names"] == [c.name for c in COMPONENTS] + ["toy_motor", "toy_world_torque"]
    # Off, it changes nothing a scenario shows: digest, observation, format page has its table.
    plain = find("RigidRot/Reorient-v0")
    assert found["digest"] == plain.digest()
    assert found["plain_shape"] == [7] and found["shape"] == [8]
    assert found["reference"]
    # Its rule raises a ScenarioError naming its fields.
    assert "toy_motor.low (0.0002) must not exceed toy_motor.high" in found["error"]
    sizes = []
    for episode in found["episodes"]:
        rates = np.array(episode["rates"])
        t = 0.2 * np.arange(1, 21)
        # A sphere under a constant body torque τ e_z from rest: ω = τ t / I about z ...
        torque = rates[-1, 2] * 0.1 / t[-1]
        assert 1e-4 <= torque <= 3e-4
        np.testing.assert_allclose(rates[:, 2], torque * t / 0.1, rtol=1e-12, atol=0)
        np.testing.assert_array_equal(rates[:, :2], 0.0)
        # ... turned by θ = τ t² / (2I) about z: q = q0 ⊗ (cos θ/2, 0, 0, sin θ/2).
        theta = torque * t**2 / (2 * 0.1)
        turns = np.stack([np.cos(theta / 2), 0 * theta, 0 * theta, np.sin(theta / 2)], axis=1)
        expected = np.array([_qmul(episode["q0"], turn) for turn in turns])
        np.testing.assert_allclose(episode["q"], expected, rtol=0, atol=1e-12)
        # Its column shows the drawn torque over its most, at every step.
        np.testing.assert_allclose(episode["column"], torque / 3e-4, rtol=1e-6)
        sizes.append(torque)
    assert sizes[0] != sizes[1]  # drawn per episode
    # The world torque: ω_world = ω_world(0) + τ t / I, which a torque held over each period
    # at its start's attitude would miss by 1.8e-4 rad/s here (a turn of 0.05 rad a period).
    tolerances = {"rk4": 1e-9, "pybullet": 0.02}  # pybullet: its own step's error, relative
    for integrator, run in found["world"].items():
        q, rates, torque = np.array(run["q"]), np.array(run["rates"]), np.array(run["torque"])
        assert np.linalg.norm(torque) == pytest.approx(3e-4, rel=1e-12)
        world = np.array([_rotate(qi, wi) for qi, wi in zip(q, rates, strict=True)])
        expected = world[0] + np.outer(0.2 * np.arange(21), torque) / 0.1
        error = np.abs(world - expected).max()
        assert error < tolerances[integrator] * (
            1.0 if integrator == "rk4" else np.abs(expected - world[0]).max()
        )


def _entry(tmp_path, monkeypatch, source: str, name: str = "extra") -> EntryPoint:
    module = f"rigidrot_extra_{name}"
    (tmp_path / f"{module}.py").write_text(textwrap.dedent(source))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(module, None)
    return EntryPoint(name=name, value=f"{module}:COMPONENT", group=plugins.GROUP)


def test_a_registered_object_that_is_not_a_component_is_refused_by_name(tmp_path, monkeypatch):
    entry = _entry(tmp_path, monkeypatch, "COMPONENT = 42\n")
    with pytest.raises(ValueError, match=r"entry point extra = 'rigidrot_extra_extra:COMPONENT'.*got 42"):
        plugins.checked([entry], BUILT_IN)


def test_a_component_that_takes_a_built_in_name_is_refused(tmp_path, monkeypatch):
    source = """
        from rigidrot_gym.attitude.components.declaration import Component, Feature
        COMPONENT = Component(name="mine", summary="", features=(Feature("wheels", lambda s, f: False, ""),))
    """
    entry = _entry(tmp_path, monkeypatch, source)
    with pytest.raises(ValueError, match="feature name 'wheels' is taken by the built-in component 'wheels'"):
        plugins.checked([entry], BUILT_IN)


def test_a_component_that_fails_to_import_is_named(tmp_path, monkeypatch):
    entry = _entry(tmp_path, monkeypatch, "raise RuntimeError('broken')\n")
    with pytest.raises(ValueError, match="failed to load: RuntimeError: broken"):
        plugins.checked([entry], BUILT_IN)


def test_components_follow_the_built_in_ones_by_entry_point_name_and_take_no_name_twice(
    tmp_path, monkeypatch
):
    def component(name: str) -> str:
        return f"""
            from rigidrot_gym.attitude.components.declaration import Component
            COMPONENT = Component(name="{name}", summary="")
        """

    late, early = (
        _entry(tmp_path, monkeypatch, component("first"), "b"),
        _entry(tmp_path, monkeypatch, component("second"), "a"),
    )
    stamp = jit.source_digest()
    assert [c.name for c in plugins.checked([late, early], BUILT_IN)] == ["second", "first"]
    # Checking stamps nothing (only the registration at import does): a process whose stamp
    # changed would rewrite the shared cache's indexes, and the others would compile again.
    assert jit.source_digest() == stamp
    again = _entry(tmp_path, monkeypatch, component("first"), "c")
    with pytest.raises(
        ValueError, match=r"entry point c = .*component name 'first' is taken by component 'first'"
    ):
        plugins.checked([late, again], BUILT_IN)
