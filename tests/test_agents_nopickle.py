"""Loading a run folder runs none of its code: the normaliser from ``vecnormalize.json``
(read back bit for bit: the same statistics, the same normalised observations as the
zoo's pickle), the policy from the model file's weights (the same actions, bit for bit, as
SB3's own load), and neither the pickle nor the model file's cloudpickle entries opened."""

from __future__ import annotations

import base64
import json
import pickle
import shutil
import warnings
import zipfile
from contextlib import suppress
from pathlib import Path

import numpy as np
import pytest

import rigidrot_gym  # noqa: F401  (registers the ids)
from rigidrot_gym.control import agents

pytestmark = pytest.mark.training

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = sorted(p.parent.parent for p in (ROOT / "training" / "agents").glob("*/*/*/args.yml"))
REORIENT = ROOT / "training" / "agents" / "ppo" / "RigidRot-Reorient-v0_1"


def _pickled_normalizer(run: Path):
    """The zoo's VecNormalize of ``run``, unpickled (the committed files are ours)."""
    from stable_baselines3.common.vec_env import VecNormalize

    from rigidrot_gym.attitude.sb3 import AttitudeSB3VecEnv

    config = agents.read_config(run)
    _, params = agents.run_files(run)
    venv = AttitudeSB3VecEnv(1, config["env"], **config["env_kwargs"])
    normalizer = VecNormalize.load(str(params / "vecnormalize.pkl"), venv)
    normalizer.training = False
    return normalizer


def _observations(agent, n: int = 512) -> np.ndarray:
    """Observations inside and well outside the space (clipping included)."""
    size = agent.model.observation_space.shape[0]
    return np.random.default_rng(7).uniform(-3.0, 3.0, (n, size)).astype(np.float32)


class Trap:
    """A pickle that, when unpickled, writes ``marker`` (what a stranger's pickle could do)."""

    def __init__(self, marker: Path):
        self.marker = marker

    def __reduce__(self):
        return exec, (f"open({str(self.marker)!r}, 'w').write('ran')",)


def test_every_committed_agent_has_its_normaliser_as_json():
    for run in COMMITTED:
        _, params = agents.run_files(run)
        assert (params / "vecnormalize.pkl").is_file() and (params / agents.NORMALIZER_JSON).is_file()


@pytest.mark.parametrize("run", COMMITTED, ids=[p.name for p in COMMITTED])
def test_the_json_normaliser_is_the_pickle_bit_for_bit(run):
    pickled = _pickled_normalizer(run)
    agent = agents.load(run)
    read = agent.normalizer
    for name in ("norm_obs", "norm_reward", "clip_obs", "clip_reward", "gamma", "epsilon", "norm_obs_keys"):
        assert getattr(read, name) == getattr(pickled, name), name
    for mine, theirs in ((read.obs_rms, pickled.obs_rms), (read.ret_rms, pickled.ret_rms)):
        for field in ("mean", "var"):
            a, b = getattr(mine, field), getattr(theirs, field)
            assert a.dtype == b.dtype == np.float64 and a.shape == b.shape
            assert a.tobytes() == b.tobytes()
        assert mine.count == theirs.count
    obs = _observations(agent)
    assert read.normalize_obs(obs).tobytes() == pickled.normalize_obs(obs).tobytes()
    assert read.training is False


@pytest.mark.parametrize("run", COMMITTED, ids=[p.name for p in COMMITTED])
def test_the_weights_only_policy_acts_as_sb3_s_load_bit_for_bit(run):
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # a matrix product split over threads rounds differently
    try:
        weights = agents.load(run)
        trusted = agents.load(run, trusted=True)
        assert isinstance(weights.model, agents.Weights)
        assert type(trusted.model).__name__ == "PPO"
        obs = _observations(weights)
        mine, theirs = weights.predict(obs)[0], trusted.predict(obs)[0]
        assert mine.dtype == theirs.dtype and mine.tobytes() == theirs.tobytes()
        # and on raw policy inputs, without the normaliser or the clipping to the action space
        raw = torch.from_numpy(obs[:64])
        with torch.no_grad():
            mine = weights.model.policy.get_distribution(raw).distribution.mean.numpy()
            theirs = trusted.model.policy.get_distribution(raw).distribution.mean.numpy()
        assert mine.tobytes() == theirs.tobytes()
        assert weights.model.observation_space == trusted.model.observation_space
        assert weights.model.action_space == trusted.model.action_space
    finally:
        torch.set_num_threads(threads)


def test_json_round_trips_any_float64_bit_for_bit(tmp_path):
    from stable_baselines3.common.vec_env import VecNormalize

    from rigidrot_gym.attitude.sb3 import AttitudeSB3VecEnv

    venv = AttitudeSB3VecEnv(1, "RigidRot/Reorient-v0")
    normalizer = VecNormalize(venv, clip_obs=7.25, gamma=0.995, epsilon=3e-9)
    rng = np.random.default_rng(0)
    mean = rng.standard_normal(7) * 10.0 ** rng.integers(-300, 300, 7)
    mean[0] = 5e-324  # a subnormal
    normalizer.obs_rms.mean = mean
    normalizer.obs_rms.var = rng.random(7) / 3.0
    normalizer.obs_rms.count = 123456789.0001
    normalizer.ret_rms.var = np.float64(1.0 / 7.0)
    path = agents.save_normalizer(normalizer, tmp_path / "vecnormalize.json")
    read = agents.load_normalizer(path, venv)
    assert read.obs_rms.mean.tobytes() == mean.tobytes()
    assert read.obs_rms.var.tobytes() == normalizer.obs_rms.var.tobytes()
    assert read.obs_rms.count == normalizer.obs_rms.count
    assert read.ret_rms.var.tobytes() == normalizer.ret_rms.var.tobytes() and read.ret_rms.var.shape == ()
    assert (read.clip_obs, read.gamma, read.epsilon) == (7.25, 0.995, 3e-9)
    assert json.loads(path.read_text())["format"] == agents.NORMALIZER_FORMAT
    (tmp_path / "other.json").write_text(json.dumps({"format": "something else"}))
    with pytest.raises(ValueError, match="format"):
        agents.load_normalizer(tmp_path / "other.json", venv)


def _copy(run: Path, tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / run.name
    shutil.copytree(run, folder)
    return folder, agents.run_files(folder)[1]


def test_a_pickle_next_to_the_json_is_never_opened(tmp_path):
    folder, params = _copy(REORIENT, tmp_path)
    marker = tmp_path / "marker"
    (params / "vecnormalize.pkl").write_bytes(pickle.dumps(Trap(marker)))
    reference = agents.load(REORIENT)
    agent = agents.load(folder)
    assert not marker.exists()
    obs = _observations(agent, 16)
    assert agent.predict(obs)[0].tobytes() == reference.predict(obs)[0].tobytes()
    # The trap is real: without the JSON file the pickle is read (with a warning) and runs.
    (params / agents.NORMALIZER_JSON).unlink()
    with (
        pytest.warns(UserWarning, match=r"vecnormalize\.pkl: no vecnormalize\.json"),
        pytest.raises(AttributeError),  # exec gave None, no VecNormalize
    ):
        agents.load(folder)
    assert marker.read_text() == "ran"


def _with_entry(model: Path, key: str, blob: bytes) -> None:
    """``model`` with the data entry ``key`` a cloudpickle blob ``blob``, as SB3 stores one."""
    with zipfile.ZipFile(model) as archive:
        files = {name: archive.read(name) for name in archive.namelist()}
    data = json.loads(files["data"])
    data[key] = {":type:": "<class 'numpy.ndarray'>", ":serialized:": base64.b64encode(blob).decode()}
    files["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(model, "w") as archive:
        for name, content in files.items():
            archive.writestr(name, content)


def test_the_model_file_s_cloudpickle_entries_are_never_opened(tmp_path):
    folder, params = _copy(REORIENT, tmp_path)
    marker = tmp_path / "marker"
    model = folder / f"{params.name}.zip"
    for key in ("policy_class", "policy_kwargs", "observation_space", "action_space", "_last_obs"):
        _with_entry(model, key, pickle.dumps(Trap(marker)))
    reference = agents.load(REORIENT)
    agent = agents.load(folder)
    assert not marker.exists()
    obs = _observations(agent, 16)
    assert agent.predict(obs)[0].tobytes() == reference.predict(obs)[0].tobytes()
    # The trap is real: SB3's own load unpickles the entries, and runs it.
    with warnings.catch_warnings(), suppress(Exception):
        warnings.simplefilter("ignore")  # SB3 warns of the entries that gave no object
        agents.load(folder, trusted=True)
    assert marker.read_text() == "ran"


def test_policy_kwargs_are_read_from_the_zoo_s_text_without_evaluating_it():
    import torch

    data = {"policy_kwargs": {":type:": "<class 'dict'>", ":serialized:": "..."}}
    text = "dict(net_arch=dict(pi=[64, 64], vf=[32]), activation_fn=nn.ReLU, log_std_init=-1.0, "
    text += "ortho_init=False)"
    kwargs = agents._policy_kwargs(data, {"policy_kwargs": text})
    assert kwargs == {
        "net_arch": {"pi": [64, 64], "vf": [32]},
        "activation_fn": torch.nn.ReLU,
        "log_std_init": -1.0,
        "ortho_init": False,
    }
    named = {"net_arch": [8], "activation_fn": "torch.nn.modules.activation.Tanh"}
    assert agents._policy_kwargs(data, {"policy_kwargs": named})["activation_fn"] is torch.nn.Tanh
    for bad in ("dict(activation_fn=os.system)", "dict(net_arch=__import__('os').getcwd())"):
        with pytest.raises(ValueError):
            agents._policy_kwargs(data, {"policy_kwargs": bad})
    # the model file's own, where they are plain JSON
    plain = {"policy_kwargs": {"net_arch": [dict(pi=[4], vf=[4])], "device": "cuda"}}
    assert agents._policy_kwargs(plain, {"policy_kwargs": text}) == {"net_arch": {"pi": [4], "vf": [4]}}
