"""Fingerprints of everything the envs and the library compute, to prove a refactor bitwise.

    python benchmarks/bitwise.py record outputs/bitwise/before.json   # on the code before
    python benchmarks/bitwise.py record outputs/bitwise/after.json    # on the code after
    python benchmarks/bitwise.py compare outputs/bitwise/before.json outputs/bitwise/after.json

Not a test: a refactor's proof that nothing changed, on one machine and one installation
(the envs promise bitwise results there, not across CPUs). Each case runs fixed seeds and
fixed actions (uniform in ±1.3, so that clipping is exercised) through short episodes, so
that terminations, truncations and autoresets happen inside the window, and records the
SHA-256 of every array it returns, bit for bit:

* every registered id, as a single env (``gym.make``), as the native vector env (3 and
  300 rows: one block of the compiled step and two) and through the SB3 adapter;
* Reorient-v0 on every integrator that accepts a torque (the engines' too);
* Reorient-v0 with each realism option alone, and with all of them, on ``rk4`` and on
  one engine (``mujoco_rk4``, the realism path with an engine between two compiled calls);
* resets with fixed options, ``reset()`` without a seed, copies and the true state;
* ``propagate`` of every method under each kind of load (none, constant, terms, callable);
* the committed agents' actions on fixed observations.

``compare`` lists every case whose fingerprint differs or is missing, and exits 1 if any.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import gymnasium as gym
import numpy as np

import rigidrot_gym
from rigidrot_gym.physics.rotation import integrators
from rigidrot_gym.physics.rotation.propagate import propagate
from rigidrot_gym.physics.rotation.torques import (
    BodyTorque,
    GravityGradient,
    PointForce,
    WheelMomentum,
    WorldTorque,
)

ROOT = Path(__file__).resolve().parents[1]
STEPS = 60
LIMIT = 25  # episode length: two or three autoresets in a window
REALISM = {
    "actuator_noise": {"actuator_noise": 0.05},
    "actuation_delay": {"actuation_delay": True},
    "wheels_orthogonal": {"wheel_layout": "orthogonal"},
    "wheels_pyramid": {"wheel_layout": "pyramid", "wheel_max_momentum": 0.004},
    "wheels_saturation_ends": {
        "wheel_layout": "pyramid",
        "wheel_max_momentum": 0.004,
        "wheel_terminate_on_saturation": True,
    },
    "disturbance_constant": {"disturbance_constant": 1e-3},
    "disturbance_random_walk": {"disturbance_random_walk": 1e-3, "disturbance_correlation_time": 5.0},
    "gravity_gradient": {"gravity_gradient": True, "orbit_altitude": 400e3},
    "attitude_noise": {"attitude_noise_deg": 0.5},
    "rate_noise": {"rate_noise": 1e-3},
    "rate_bias": {"rate_bias": 1e-3},
    "randomize_inertia": {"randomize_inertia": 0.3},
    "randomize_inertia_rotation": {"randomize_inertia_rotation_deg": 20.0},
    "randomize_torque": {"randomize_torque": 0.2},
    "randomize_start": {"randomize_start": 0.3},
}
EVERYTHING = {k: v for options in REALISM.values() for k, v in options.items()}


def _digest(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        if isinstance(a, dict):
            for key in sorted(a):
                h.update(key.encode())
                h.update(_digest(a[key]).encode())
            continue
        a = np.ascontiguousarray(np.asarray(a))
        h.update(str(a.dtype).encode() + str(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _actions(size: int, shape: tuple[int, ...], seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(-1.3, 1.3, (STEPS, *shape, size)).astype(np.float32)


def _info_arrays(info: dict) -> dict:
    return {k: np.asarray(v) for k, v in info.items() if not k.startswith("_")}


def single(env_id: str, **kwargs) -> str:
    env = gym.make(env_id, max_episode_steps=LIMIT, **kwargs)
    obs, info = env.reset(seed=7)
    out = [obs, _info_arrays(info)]
    pending = False
    for a in _actions(env.action_space.shape[0], ()):
        if pending:
            obs, info = env.reset()
            out += [obs, _info_arrays(info)]
            pending = False
            continue
        obs, reward, terminated, truncated, info = env.step(a)
        out += [obs, np.float64(reward), terminated, truncated, _info_arrays(info)]
        out += [env.unwrapped.attitude, env.unwrapped.body_rates, env.unwrapped.target]
        pending = terminated or truncated
    env.close()
    return _digest(*out)


def vector(env_id: str, n: int, **kwargs) -> str:
    env = gym.make_vec(env_id, num_envs=n, max_episode_steps=LIMIT, **kwargs)
    obs, info = env.reset(seed=11)
    out = [obs, _info_arrays(info)]
    for a in _actions(env.single_action_space.shape[0], (n,), seed=1):
        obs, reward, terminated, truncated, info = env.step(a)
        out += [obs, reward, terminated, truncated, _info_arrays(info)]
    batch = env.unwrapped.batch
    out += [*batch.body_state(), batch.target, batch.inertia()]
    twin = copy.deepcopy(env.unwrapped)
    a = _actions(env.single_action_space.shape[0], (n,), seed=2)[0]
    out += [env.step(a)[0], twin.step(a)[0]]
    obs, info = env.reset()  # no seed: each row goes on with its stream
    out += [obs, _info_arrays(info)]
    obs, info = env.reset(seed=[3] * n, options={"rate": [0.01, -0.02, 0.005]})
    out += [obs, _info_arrays(info)]
    env.close()
    return _digest(*out)


def sb3(env_id: str, n: int) -> str:
    from rigidrot_gym.attitude.sb3 import AttitudeSB3VecEnv

    env = AttitudeSB3VecEnv(n, env_id, max_episode_steps=LIMIT)
    env.seed(5)
    out = [env.reset()]
    for a in _actions(env.action_space.shape[0], (n,), seed=3):
        obs, reward, dones, infos = env.step(a)
        out += [obs, reward, dones]
        for info in infos:
            out += [_info_arrays(info)]
    return _digest(*out)


def methods() -> Iterator[tuple[str, Callable[[], str]]]:
    q0, w0, inertia = (
        [0.9, 0.1, -0.3, 0.3] / np.linalg.norm([0.9, 0.1, -0.3, 0.3]),
        [0.4, 1.1, -0.3],
        [1.0, 2.0, 2.5],
    )
    tensor = np.array([[1.2, 0.1, 0.0], [0.1, 2.0, -0.2], [0.0, -0.2, 2.5]])
    loads = {
        "free": {},
        "constant": {"torque": [0.1, -0.2, 0.05]},
        "terms": {
            "torque": [
                BodyTorque([0.01, 0.0, -0.02]),
                WorldTorque([0.0, 0.03, 0.0]),
                PointForce([0.1, 0.0, 0.0], [0.0, 0.0, -1.0]),
                WheelMomentum([0.0, 0.1, 0.0], [0.0, 0.0, 0.01]),
                GravityGradient(0.0011, 0.3),
            ]
        },
        "callable": {"torque": lambda t, q, w: -0.5 * q[..., 1:] - 0.3 * w},
    }
    for name in integrators.names():
        method = integrators.get(name)
        for load, kwargs in loads.items():
            if load != "free" and not method.accepts_torque:
                continue
            for body, moments in (("moments", inertia), ("tensor", tensor)):

                def run(name=name, kwargs=kwargs, moments=moments) -> str:
                    traj = propagate(q0, w0, moments, 0.01, 50, method=name, substeps=2, **kwargs)
                    return _digest(traj.q, traj.omega, traj.torque_evaluations, traj.iterations)

                yield f"propagate/{name}/{load}/{body}", run


def agents() -> Iterator[tuple[str, Callable[[], str]]]:
    import torch

    from rigidrot_gym.control import agents as agent_files

    torch.set_num_threads(1)  # a matrix product split over threads rounds differently

    for folder in sorted((ROOT / "training" / "agents" / "ppo").iterdir()):
        if not folder.is_dir():
            continue

        def run(folder=folder) -> str:
            agent = agent_files.load(folder)
            env = gym.make_vec(agent.config["env"], num_envs=16, **agent.config.get("env_kwargs", {}))
            obs, _ = env.reset(seed=0)
            out = []
            for _ in range(20):
                action, _ = agent.predict(obs, deterministic=True)
                out.append(action)
                obs = env.step(action)[0]
            return _digest(*out)

        yield f"agent/{folder.name}", run


def cases() -> Iterator[tuple[str, Callable[[], str]]]:
    for env_id in rigidrot_gym.ENV_IDS:
        yield f"single/{env_id}", lambda env_id=env_id: single(env_id)
        for n in (3, 300):
            yield f"vector{n}/{env_id}", lambda env_id=env_id, n=n: vector(env_id, n)
        yield f"sb3/{env_id}", lambda env_id=env_id: sb3(env_id, 4)
    for name in integrators.names():
        if name == "exact":
            continue
        yield f"single/integrator/{name}", lambda name=name: single("RigidRot/Reorient-v0", integrator=name)
        yield (
            f"vector3/integrator/{name}",
            lambda name=name: vector("RigidRot/Reorient-v0", 3, integrator=name),
        )
    for option, kwargs in [*REALISM.items(), ("everything", EVERYTHING)]:
        for integrator in ("rk4", "mujoco_rk4"):
            options = {**kwargs, "integrator": integrator}
            yield (
                f"single/realism/{option}/{integrator}",
                lambda o=options: single("RigidRot/Reorient-v0", **o),
            )
            yield (
                f"vector3/realism/{option}/{integrator}",
                lambda o=options: vector("RigidRot/Reorient-v0", 3, **o),
            )
    yield "vector300/threads2", lambda: vector("RigidRot/Reorient-v0", 300, num_threads=2)
    yield from methods()
    yield from agents()


def record(path: Path) -> None:
    fingerprints = {}
    for name, run in cases():
        fingerprints[name] = run()
        print(f"{fingerprints[name][:12]}  {name}", flush=True)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(fingerprints, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(fingerprints)} fingerprints to {path}")


def compare(before: Path, after: Path) -> int:
    a, b = json.loads(before.read_text()), json.loads(after.read_text())
    differ = sorted(k for k in a.keys() & b.keys() if a[k] != b[k])
    missing = sorted(a.keys() ^ b.keys())
    for name in differ:
        print(f"DIFFERS  {name}")
    for name in missing:
        print(f"MISSING  {name} (in {'before' if name in a else 'after'} only)")
    same = len(a.keys() & b.keys()) - len(differ)
    print(f"{same} of {len(a.keys() | b.keys())} cases identical bit for bit")
    return 1 if differ or missing else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("record", help="run every case, write the fingerprints").add_argument("path", type=Path)
    cmp = sub.add_parser("compare", help="compare two recordings")
    cmp.add_argument("before", type=Path)
    cmp.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    if args.command == "record":
        record(args.path)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
