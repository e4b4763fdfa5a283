"""``rigidrot export``: the C and ONNX policies against the agent's own ``predict``, on
observations of real episodes; 100 held-out episodes flown by the C policy against the
agent's; a non-finite observation; the command's errors."""

from __future__ import annotations

import ctypes
import itertools
import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from rigidrot_gym.control import agents
from rigidrot_gym.tools import export
from rigidrot_gym.tools.cli import main

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = sorted(p.parent.parent for p in (ROOT / "training" / "agents").glob("*/*/*/args.yml"))
REORIENT = ROOT / "training" / "agents" / "ppo" / "RigidRot-Reorient-v0_1"
# Largest |C - predict| and |ONNX - predict| allowed: float32 rounding of a 64x64 tanh MLP
# (measured: at most 1.61e-6 for C and 1.79e-6 for ONNX over every committed agent's
# 10,240 observations, both on RigidRot-Detumble-v0_1; a few float32 ulps of 1).
TOLERANCE = 1e-5
GCC = ["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", "-shared", "-fPIC"]


class Exported:
    """An agent exported into ``folder``: its C policy compiled and loaded, its ONNX session.
    ``run`` is a run folder (exported as the command does) or a loaded agent."""

    def __init__(self, run: Path | agents.Agent, folder: Path):
        import onnxruntime

        if isinstance(run, agents.Agent):
            self.agent, self.info = run, export.write(run, folder)
        else:
            self.agent, self.info = agents.load(run), export.export(run, folder)
        self.folder = folder
        library = folder / "policy.so"
        compiled = subprocess.run(
            [*GCC, "policy.c", "-o", str(library), "-lm"], cwd=folder, capture_output=True, text=True
        )
        assert compiled.returncode == 0, compiled.stderr
        self.lib = ctypes.CDLL(str(library))
        self.lib.rr_policy.argtypes = [ctypes.POINTER(ctypes.c_float), ctypes.POINTER(ctypes.c_float)]
        self.lib.rr_policy.restype = ctypes.c_int
        self.session = onnxruntime.InferenceSession(
            str(folder / "policy.onnx"), providers=["CPUExecutionProvider"]
        )

    def c(self, observation: np.ndarray, action: np.ndarray) -> int:
        """rr_policy on one observation, into ``action`` (float32, written in place)."""
        obs = np.ascontiguousarray(observation, dtype=np.float32)
        pointer = ctypes.POINTER(ctypes.c_float)
        return self.lib.rr_policy(obs.ctypes.data_as(pointer), action.ctypes.data_as(pointer))

    def c_batch(self, observations: np.ndarray) -> np.ndarray:
        actions = np.empty((len(observations), self.info["action_size"]), dtype=np.float32)
        for obs, action in zip(observations, actions, strict=True):
            assert self.c(obs, action) == 0
        return actions

    def predict(self, observations: np.ndarray, deterministic: bool = True) -> tuple[np.ndarray, None]:
        """The C policy with SB3's ``predict`` signature, for the control benchmark."""
        return self.c_batch(np.atleast_2d(observations)), None

    def onnx(self, observations: np.ndarray) -> np.ndarray:
        return self.session.run(["action"], {"observation": observations.astype(np.float32)})[0]


def _episodes(agent, envs: int = 64, steps: int = 160) -> np.ndarray:
    """(envs * steps, n) observations of the agent's own episodes (the agent acting, a
    finished env reset within the step), in the env it was trained on."""
    from rigidrot_gym.attitude.sb3 import AttitudeSB3VecEnv

    venv = AttitudeSB3VecEnv(envs, agent.config["env"], **agent.config["env_kwargs"])
    venv.seed(12345)
    obs = venv.reset()
    seen = []
    for _ in range(steps):
        seen.append(obs.copy())
        action, _ = agent.predict(obs, deterministic=True)
        obs, _, _, _ = venv.step(action)
    venv.close()
    return np.concatenate(seen).astype(np.float32)


def _gcc() -> None:
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed")


@pytest.fixture(scope="module")
def reorient(tmp_path_factory) -> Exported:
    _gcc()
    return Exported(REORIENT, tmp_path_factory.mktemp("reorient"))


def _differences(exported: Exported, observations: np.ndarray) -> tuple[float, float]:
    """Largest |C - predict| and |ONNX - predict| over ``observations``."""
    expected, _ = exported.agent.predict(observations, deterministic=True)
    c = np.max(np.abs(exported.c_batch(observations) - expected))
    onnx = np.max(np.abs(exported.onnx(observations) - expected))
    return float(c), float(onnx)


@pytest.mark.slow
def test_the_clipping_of_the_normaliser_and_of_the_action_is_exported(reorient):
    # Observations beyond anything seen in training: the normalised ones pass clip_obs and
    # the network's raw output leaves [-1, 1], so both clips decide the action.
    rng = np.random.default_rng(0)
    observations = rng.uniform(-50.0, 50.0, (2000, reorient.info["observation_size"])).astype(np.float32)
    expected, _ = reorient.agent.predict(observations, deterministic=True)
    assert np.mean(np.abs(expected) == 1.0) > 0.1  # the action clip is exercised
    c, onnx = _differences(reorient, observations)
    assert c < TOLERANCE and onnx < TOLERANCE


@pytest.mark.slow
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_a_non_finite_observation_is_refused_and_writes_no_action(reorient, value):
    n, m = reorient.info["observation_size"], reorient.info["action_size"]
    for column in range(n):
        observation = np.full(n, 0.1, dtype=np.float32)
        observation[column] = value
        action = np.full(m, 7.0, dtype=np.float32)
        assert reorient.c(observation, action) != 0
        assert np.all(action == 7.0)


@pytest.mark.slow
def test_onnx_has_one_batched_float_input_and_output(reorient):
    (given,), (taken,) = reorient.session.get_inputs(), reorient.session.get_outputs()
    n, m = reorient.info["observation_size"], reorient.info["action_size"]
    assert (given.name, given.type, given.shape[1]) == ("observation", "tensor(float)", n)
    assert (taken.name, taken.type, taken.shape[1]) == ("action", "tensor(float)", m)
    assert isinstance(given.shape[0], str)  # any batch size
    assert reorient.onnx(np.zeros((5, n))).shape == (5, m)


@pytest.mark.slow
def test_policy_json_describes_the_env_and_the_budget(reorient):
    import gymnasium as gym

    info = json.loads((reorient.folder / "policy.json").read_text())
    config = reorient.agent.config
    env = gym.make(config["env"], **config["env_kwargs"])
    assert (info["env"], info["env_kwargs"]) == (config["env"], config["env_kwargs"])
    assert info["observation_size"] == env.observation_space.shape[0]
    assert info["action_size"] == env.action_space.shape[0]
    assert info["dt"] == env.unwrapped.scenario.dt
    blocks = env.unwrapped.observation_columns()
    assert [c["name"] for c in info["observation_columns"]] == [b.name for b in blocks]
    spans = [(b.columns.start, b.columns.stop) for b in blocks]
    assert [tuple(c["columns"]) for c in info["observation_columns"]] == spans
    assert all(c["meaning"] for c in info["observation_columns"])
    # the budget against torch's own count of the actor's parameters
    policy = reorient.agent.model.policy
    actor = [*policy.mlp_extractor.policy_net.parameters(), *policy.action_net.parameters()]
    budget = info["budget"]
    assert budget["parameters"] == sum(p.numel() for p in actor)
    assert budget["weight_bytes"] == 4 * budget["parameters"]
    assert budget["multiply_adds"] == sum(p.numel() for p in actor if p.dim() == 2)
    print(f"{reorient.agent.name}: {budget}")


@pytest.mark.slow
@pytest.mark.parametrize("run", COMMITTED, ids=[p.name for p in COMMITTED])
def test_every_committed_agent_exports_to_its_own_actions(run, tmp_path):
    _gcc()
    exported = Exported(run, tmp_path)
    observations = _episodes(exported.agent)
    assert len(observations) >= 10_000
    c, onnx = _differences(exported, observations)
    print(f"{exported.agent.name}: {len(observations)} observations, max |C - predict| {c:.2e}, ", end="")
    print(f"|ONNX - predict| {onnx:.2e}")
    assert c < TOLERANCE and onnx < TOLERANCE


@pytest.mark.slow
def test_an_agent_without_an_observation_normaliser_exports_without_one(tmp_path):
    # Reorient-v0_1's model taking the raw observations (as a run without --normalize would)
    _gcc()
    trained = agents.load(REORIENT)
    bare = agents.Agent(trained.model, None, trained.config, name="bare")
    exported = Exported(bare, tmp_path)
    assert "rr_mean" not in (tmp_path / "policy.c").read_text()
    assert exported.info["normalizer"] is None and exported.info["dt"] == 0.2
    observations = _episodes(trained, envs=16, steps=100)
    c, onnx = _differences(exported, observations)
    assert c < TOLERANCE and onnx < TOLERANCE


def test_an_algorithm_not_exported_is_refused_by_name():
    agent = agents.Agent(model=None, config={"algo": "a2c", "env": "RigidRot/Reorient-v0"})
    with pytest.raises(ValueError, match="A2C"):
        export.policy_of(agent)


# The tiny runs of tests/test_training.py: an untrained actor is as good a test of the
# export as a trained one (the same layers, random weights).
TINY = {
    "sac": ["n_envs:2", "learning_starts:64", "batch_size:32", "buffer_size:1000"],
    "td3": ["n_envs:2", "learning_starts:64", "batch_size:32", "buffer_size:1000"],
}


@pytest.mark.slow
@pytest.mark.training
@pytest.mark.parametrize("algo", ["sac", "td3"])
def test_sac_and_td3_export_to_their_own_squashed_rescaled_actions(algo, tmp_path, monkeypatch):
    import importlib.util

    _gcc()
    monkeypatch.chdir(ROOT)
    spec = importlib.util.spec_from_file_location("train", ROOT / "training" / "train.py")
    train = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(train)
    argv = ["--algo", algo, "--env", "RigidRot/Reorient-v0", "--seed", "1", "-f", str(tmp_path), "-n", "256"]
    train.main([*argv, "--eval-freq", "-1", "--verbose", "0", "--hyperparams", *TINY[algo]])
    exported = Exported(tmp_path / algo / "RigidRot-Reorient-v0_1", tmp_path / "export")
    assert exported.info["action_output"] == "unscale"
    observations = _episodes(exported.agent)
    far = np.random.default_rng(1).uniform(-50.0, 50.0, (2000, observations.shape[1])).astype(np.float32)
    c, onnx = _differences(exported, np.concatenate([observations, far]))
    print(f"{exported.agent.name}: max |C - predict| {c:.2e}, |ONNX - predict| {onnx:.2e}")
    assert c < TOLERANCE and onnx < TOLERANCE


def test_export_of_a_missing_folder_is_a_one_line_error(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["export", str(tmp_path / "missing"), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rigidrot: error: ") and "no such folder" in err and err.count("\n") == 1
    assert not out.exists()


def test_export_of_a_folder_that_is_not_a_run_is_a_one_line_error(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["export", str(tmp_path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rigidrot: error: ") and "args.yml" in err and err.count("\n") == 1
    assert not out.exists()


def test_a_missing_extra_is_named_before_any_work(tmp_path, monkeypatch, capsys):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "onnxscript" else real(name, *a)
    )
    out = tmp_path / "out"
    assert main(["export", str(REORIENT), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "[export]" in err and "onnxscript" in err and err.count("\n") == 1
    assert not out.exists()


# Closed loops where a one-ulp change of the agent's own float32 actions (np.nextafter
# upwards, every step) already moves episodes apart, measured over the same 100 seeds:
# MagDetumble-v0_1, 10 settling times by up to 524 s and 34 final errors by > 1e-3 deg
# (long episodes: a rate that lingers at the tolerance); NadirPoint-v0_1, 90 final errors
# by up to 0.17 deg and one success flipped (the MEKF and noisy sensors in the loop). There
# the C policy can only be held to the summary row; everywhere else, episode by episode.
# Agents whose episodes a float32 difference in an action can move: the pulse-modulated
# thrusters fire whole sub-steps, so a request a hair over a rounding edge fires one more
# (ThrusterSlew-v0_1: 1 of 100 final errors 7e-3° apart, success and settling equal).
# NadirPointFault-v0's agents fly NadirPoint-v0's loop, with the fault besides.
SENSITIVE = {
    "RigidRot-MagDetumble-v0_1",
    "RigidRot-NadirPoint-v0_1",
    "RigidRot-NadirPointFault-v0_1",
    "RigidRot-NadirPointFault-v0_3",
    "RigidRot-ThrusterSlew-v0_1",
    "RigidRot-ThrusterSlew-v0_2",
    "RigidRot-ThrusterSlew-v0_3",
}


@pytest.mark.slow
@pytest.mark.parametrize("run", COMMITTED, ids=[p.name for p in COMMITTED])
def test_the_c_policy_flies_the_agent_s_held_out_episodes(run, tmp_path):
    from rigidrot_gym.attitude.scenario import find
    from rigidrot_gym.tools.bench import control
    from rigidrot_gym.tools.evaluate import EVALUATION_SEEDS

    _gcc()
    exported = Exported(run, tmp_path)
    config = exported.agent.config
    scenario = find(config["env"]).with_overrides(**config["env_kwargs"])
    seeds = range(EVALUATION_SEEDS, EVALUATION_SEEDS + 100)  # none was a training start
    flown = {
        name: control.run_episodes(policy, scenario, seeds)[0]
        for name, policy in (("agent", exported.agent), ("C", exported))
    }
    rows = {
        name: control.summarise(name, scenario.id, scenario.integrator, 1.0, runs)
        for name, runs in flown.items()
    }
    for name, row in rows.items():
        print(
            f"{name}: success {row.success_rate:.2f}, settling {row.settling_time:.3f} s, "
            f"final error {row.final_error_deg:.4f} deg"
        )
    agent, c = flown["agent"], flown["C"]
    settling = np.array(
        [(a.settling_time, b.settling_time) for a, b in zip(agent, c, strict=True) if a.success]
    )
    settling = settling.reshape(-1, 2)
    gaps = np.abs(settling[:, 0] - settling[:, 1])
    print(f"settling time: {np.sum(gaps > 0)} episodes differ, by at most {np.max(gaps, initial=0.0):.3f} s")
    errors = np.array([(a.final_error_deg, b.final_error_deg) for a, b in zip(agent, c, strict=True)])
    apart = np.abs(errors[:, 0] - errors[:, 1])
    print(
        f"final error: {np.sum(apart > 1e-3)} episodes differ by > 1e-3 deg, largest {np.max(apart):.2e} deg"
    )
    if run.name in SENSITIVE:
        # the summary row, as the side-by-side table shows it
        assert rows["C"].success_rate == pytest.approx(rows["agent"].success_rate, abs=0.02)
        assert rows["C"].settling_time == pytest.approx(rows["agent"].settling_time, rel=0.01)
        assert rows["C"].final_error_deg == pytest.approx(rows["agent"].final_error_deg, rel=0.05)
    else:
        assert [e.success for e in c] == [e.success for e in agent]
        assert np.all(gaps <= scenario.dt)
        assert np.allclose(errors[:, 0], errors[:, 1], rtol=1e-3, atol=1e-3)


# policy.json's columns and budget (issue 51, parts 1 and 3).


def _description(run: Path) -> dict:
    """policy.json's content of the agent in ``run`` but for the compilers' figures."""
    agent = agents.load(run)
    return export.description(agent, export.policy_of(agent))


@pytest.mark.slow
@pytest.mark.parametrize("run", COMMITTED, ids=[p.name for p in COMMITTED])
def test_every_column_of_every_committed_agent_has_a_meaning_and_a_unit(run):
    info = _description(run)
    observed, acted = info["observation_columns"], info["action_columns"]
    assert all(c["meaning"] and c["unit"] for c in observed + acted)
    # the blocks tile the observation, one action column per entry of the action
    spans = [c["columns"] for c in observed]
    assert spans[0][0] == 0 and spans[-1][1] == info["observation_size"]
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))
    assert [c["column"] for c in acted] == list(range(info["action_size"]))
    assert all(c["full_scale"] > 0 for c in acted)


def test_the_columns_state_what_the_env_s_documentation_states():
    # Spot checks against the AttitudeEnv docstring's Action Space section (the env page)
    # and the scenario files' own values: a command of ±1 is ± the limit, in that unit.
    import gymnasium as gym

    from rigidrot_gym.attitude.env import AttitudeEnv

    doc = " ".join(AttitudeEnv.__doc__.split())
    cases = {
        "RigidRot/Reorient-v0": ("torquers", "N·m", "max_torque"),
        "RigidRot/WheelReorient-v0": ("wheels", "N·m", "wheel_max_torque"),
        "RigidRot/MagDetumble-v0": ("rods", "A·m²", "magnetorquer_max_dipole"),
    }
    for env_id, (actuator, unit, limit) in cases.items():
        scenario = gym.make(env_id).unwrapped.scenario
        acted = export.action_columns(scenario)
        assert {c["actuator"] for c in acted} == {actuator} and {c["unit"] for c in acted} == {unit}
        assert [c["full_scale"] for c in acted] == list(np.broadcast_to(getattr(scenario, limit), len(acted)))
        assert f"fraction of ``{limit}``" in doc or f"limit ``{limit}`` ({unit})" in doc
    assert "as a fraction of ``magnetorquer_max_dipole`` (A·m²" in doc
    blocks = {b.name: b for b in gym.make("RigidRot/MagDetumble-v0").unwrapped.observation_columns()}
    assert "B / 60 µT" in blocks["magnetic_field"].meaning and blocks["magnetic_field"].unit == "60 µT"
    assert "ω / ``max_rate``" in blocks["rates"].meaning and "rad/s" in blocks["rates"].unit
    assert blocks["error_w"].unit == blocks["error_xyz"].unit == "1"  # a unit quaternion's parts


def _counts(agent: agents.Agent) -> dict[str, int]:
    """The actor's operations per action from its torch layers' shapes: multiply-adds (in x
    out per Linear), tanh outputs (a Linear followed by Tanh), all Linear outputs."""
    import torch

    policy = agent.model.policy
    modules = [*policy.mlp_extractor.policy_net, policy.action_net]
    linears = [m for m in modules if isinstance(m, torch.nn.Linear)]
    tanh = sum(a.out_features for a, b in itertools.pairwise(modules) if isinstance(b, torch.nn.Tanh))
    return {
        "parameters": sum(m.in_features * m.out_features + m.out_features for m in linears),
        "multiply_add": sum(m.in_features * m.out_features for m in linears),
        "tanh": tanh,
        "neuron": sum(m.out_features for m in linears),
    }


@pytest.mark.slow
def test_the_budget_is_the_network_s_shapes_and_the_cortex_m4_model_applied_to_them(reorient):
    info = json.loads((reorient.folder / "policy.json").read_text())
    budget, counts = info["budget"], _counts(reorient.agent)
    assert budget["parameters"] == counts["parameters"]
    assert budget["multiply_adds"] == counts["multiply_add"]
    assert budget["weight_bytes"] == 4 * counts["parameters"]
    # the model's stated costs times the counts above, at 168 MHz
    cost = export.M4_CYCLES
    n, m = info["observation_size"], info["action_size"]
    cycles = (
        cost["multiply_add"] * counts["multiply_add"]
        + cost["tanh"] * counts["tanh"]
        + cost["neuron"] * counts["neuron"]
        + cost["observation_column"] * n
        + cost["action_column"] * m
    )
    estimate = budget["cortex_m4_estimate"]
    assert estimate["cycles_per_action"] == cycles
    assert estimate["us_per_action"] == pytest.approx(cycles / 168.0)
    assert estimate["share_of_1_hz_loop"] == pytest.approx(cycles / 168e6)
    assert estimate["share_of_control_period"] == pytest.approx(cycles / 168e6 / info["dt"])
    # measured here (gcc is there: the fixture compiled with it), with what it ran on
    here = budget["time_per_action_here"]
    assert here["us_per_action"] > 0 and here["cpu"] and here["compiler"].startswith("gcc")
    print(f"{reorient.agent.name}: {here['us_per_action']:.2f} µs here ({here['cpu']}), M4 {estimate}")


@pytest.mark.slow
def test_the_c_compiles_for_a_cortex_m4_and_its_object_holds_the_weights(reorient):
    if shutil.which("arm-none-eabi-gcc") is None:
        pytest.skip("arm-none-eabi-gcc is not installed (Debian: gcc-arm-none-eabi)")
    flags = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]
    flags += ["-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-c"]
    compiled = subprocess.run(
        ["arm-none-eabi-gcc", *flags, "policy.c", "-o", "policy_m4.o"],
        cwd=reorient.folder,
        capture_output=True,
        text=True,
    )
    assert compiled.returncode == 0 and not compiled.stderr, compiled.stderr
    info = json.loads((reorient.folder / "policy.json").read_text())
    m4 = info["budget"]["cortex_m4_object"]
    assert "-Werror" in m4["flags"].split()
    # the static const weights are .rodata, which size counts in text: an independent bound
    assert m4["text"] + m4["data"] >= 4 * _counts(reorient.agent)["parameters"]
    assert m4["undefined"] == ["tanhf"]  # C99 <math.h> only: newlib's libm at link


@pytest.mark.slow
def test_without_compilers_the_figures_that_need_them_are_null_with_the_reason(
    reorient, tmp_path, monkeypatch
):
    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no gcc, no arm-none-eabi-gcc
    found = export.measurements(reorient.folder, export.policy_of(reorient.agent))
    assert found["cortex_m4_object"] is None and found["time_per_action_here"] is None
    assert "arm-none-eabi-gcc is not on PATH" in found["cortex_m4_object_unavailable"]
    assert "gcc is not on PATH" in found["time_per_action_here_unavailable"]


@pytest.mark.parametrize(("argument", "value"), [("repeats", 0), ("repeat_s", 0.0)])
def test_a_timing_without_repeats_or_time_is_refused_by_name(argument, value, tmp_path):
    layer = export.Layer(np.zeros((1, 1), np.float32), np.zeros(1, np.float32), None)
    policy = export.Policy((layer,), np.full(1, -1.0, np.float32), np.ones(1, np.float32))
    with pytest.raises(ValueError, match=f"{argument} must be"):
        export.time_per_action(tmp_path, policy, **{argument: value})
