"""The demo: the integrators on a tumbling T-handle, then a controller flying the default env.

1. A free asymmetric body spun about its intermediate axis flips over periodically (the
   Dzhanibekov effect). Every registered method integrates the same motion at the same
   step; the table reports the attitude error against the exact Jacobi-elliptic solution
   after several flips, the drift of the kinetic energy and of the world angular
   momentum, and the wall time. The plot shows ω(t) per method and the energy drift.
2. A short GIF of the tumbling body, drawn by PyBullet (needs the ``[render]`` extra).
3. One episode of the default environment (``RigidRot/Reorient-v0``) under a quaternion
   feedback controller (rate damping plus attitude feedback), printing how the pointing
   error falls.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from gymnasium.error import DependencyNotInstalled

from rigidrot_gym.control import QuaternionFeedback
from rigidrot_gym.physics import integrators
from rigidrot_gym.physics import quaternion as quat
from rigidrot_gym.physics.exact import torque_free
from rigidrot_gym.physics.propagate import propagate
from rigidrot_gym.tools.report import markdown_table

# The built-in tumbler: principal moments (kg·m²), spin mostly about the intermediate
# axis (rad/s), attitude, step (s) and duration (s).
INERTIA = np.array([1.0, 2.0, 3.0])
OMEGA0 = np.array([0.01, 2.0, 0.01])
Q0 = quat.identity()
DT = 0.01
DURATION = 30.0
DEFAULT_ENV = "RigidRot/Reorient-v0"


@dataclass(frozen=True)
class Row:
    """One method's result on the tumbler."""

    method: str
    attitude_error_deg: float
    rate_error: float
    energy_drift: float
    momentum_drift: float
    wall_ms: float


def compare_methods(
    q0=Q0, omega0=OMEGA0, inertia=INERTIA, dt: float = DT, duration: float = DURATION
) -> tuple[list[Row], dict]:
    """Run every torque-free-capable method; return the table rows and the trajectories."""
    steps = round(duration / dt)
    q_ref, w_ref = torque_free(q0, omega0, inertia, dt * np.arange(steps + 1))
    rows, runs = [], {}
    for name in integrators.names():
        try:
            propagate(q0, omega0, inertia, dt, 1, method=name)  # compile (or load) the kernel first
        except DependencyNotInstalled:
            continue  # pybullet without the [render] extra

        start = time.perf_counter()
        traj = propagate(q0, omega0, inertia, dt, steps, method=name)
        wall = time.perf_counter() - start
        energy = traj.kinetic_energy
        momentum = traj.angular_momentum
        rows.append(
            Row(
                method=name,
                attitude_error_deg=float(np.degrees(np.max(quat.angle_between(traj.q, q_ref)))),
                rate_error=float(np.max(np.abs(traj.omega - w_ref))),
                energy_drift=float(np.max(np.abs(energy - energy[0])) / energy[0]),
                momentum_drift=float(
                    np.max(np.linalg.norm(momentum - momentum[0], axis=-1)) / np.linalg.norm(momentum[0])
                ),
                wall_ms=1e3 * wall,
            )
        )
        runs[name] = traj
    runs["exact"] = (dt * np.arange(steps + 1), w_ref)
    return rows, runs


def format_table(rows: list[Row]) -> str:
    """Markdown table of the rows."""
    header = (
        "method",
        "max attitude error (deg)",
        "max rate error (rad/s)",
        "energy drift (rel.)",
        "|L| drift (rel.)",
        "wall time (ms)",
    )
    cells = [
        (
            r.method,
            f"{r.attitude_error_deg:.3g}",
            f"{r.rate_error:.3g}",
            f"{r.energy_drift:.2e}",
            f"{r.momentum_drift:.2e}",
            f"{r.wall_ms:.2f}",
        )
        for r in rows
    ]
    return markdown_table(header, cells)


def plot(runs: dict, path: Path) -> None:
    """ω(t) per method (rows) and the relative energy drift (last row), as a PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n in runs if n != "exact"]
    t_ref, w_ref = runs["exact"]
    fig, axes = plt.subplots(len(names) + 1, 1, figsize=(9, 2.0 * (len(names) + 1)), sharex=True)
    for ax, name in zip(axes, names, strict=False):
        traj = runs[name]
        for i, colour in enumerate("rgb"):
            ax.plot(t_ref, w_ref[:, i], color=colour, lw=2.5, alpha=0.25)
            ax.plot(traj.t, traj.omega[:, i], color=colour, lw=1, label=f"ω{'xyz'[i]}")
        ax.set_ylabel(f"{name}\nω (rad/s)")
    axes[0].legend(loc="upper right", ncol=3, fontsize=8, title="thin: method, wide: exact")
    for name in names:
        energy = runs[name].kinetic_energy
        axes[-1].semilogy(runs[name].t, np.abs(energy - energy[0]) / energy[0] + 1e-17, label=name)
    axes[-1].set_ylabel("|ΔT|/T")
    axes[-1].set_xlabel("t (s)")
    axes[-1].legend(fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def control_episode(env_id: str = DEFAULT_ENV, seed: int = 0, natural_frequency: float = 0.5) -> str:
    """One episode of ``env_id`` under :class:`QuaternionFeedback`: the pointing error
    every 5 s of simulated time, and how the episode ended."""
    import gymnasium as gym

    env = gym.make(env_id)
    obs, info = env.reset(seed=seed)
    scenario = env.unwrapped.scenario
    controller = QuaternionFeedback.for_scenario(scenario, natural_frequency)
    every = max(1, round(5.0 / scenario.dt))
    lines = [
        f"{env_id}: quaternion feedback, ωn = {natural_frequency} rad/s, ζ = 1 "
        f"(torque limit {scenario.max_torque.tolist()} N·m, dt = {scenario.dt} s)",
        "",
    ]
    samples = [("0.0", f"{info['pointing_error_deg']:.3f}", f"{info['rate']:.4f}")]
    step, done = 0, False
    while not done:
        action, _ = controller.predict(obs)
        obs, _, terminated, truncated, info = env.step(action)
        step, done = step + 1, terminated or truncated
        if step % every == 0 or done:
            samples.append(
                (f"{step * scenario.dt:.1f}", f"{info['pointing_error_deg']:.3f}", f"{info['rate']:.4f}")
            )
    outcome = (
        "success (tolerance held)" if info["is_success"] else ("terminated" if terminated else "time limit")
    )
    lines += [markdown_table(("t (s)", "pointing error (deg)", "|ω| (rad/s)"), samples, "rrr")]
    lines += ["", f"Episode ended after {step} steps ({step * scenario.dt:.1f} s): {outcome}."]
    return "\n".join(lines)


def tumble_gif(path: Path, seconds: float = 12.0, fps: int = 15) -> None:
    """The tumbler of the table (exact solution) as a GIF, with L and ω drawn."""
    import imageio.v2 as imageio

    from rigidrot_gym.render import BodyRenderer

    t = np.arange(0.0, seconds, 1.0 / fps)
    q, omega = torque_free(Q0, OMEGA0, INERTIA, t)
    with BodyRenderer(INERTIA, width=240, height=180) as renderer:
        frames = [renderer.render(qk, wk) for qk, wk in zip(q, omega, strict=True)]
    imageio.mimsave(path, frames, duration=1.0 / fps, loop=0)


def run(out_dir: Path) -> str:
    """Run the demo, write ``methods.md`` and ``omega.png`` into ``out_dir``; return the report."""
    out_dir.mkdir(parents=True, exist_ok=True)
    rows, runs = compare_methods()
    table = format_table(rows)
    (out_dir / "methods.md").write_text(table + "\n")
    plot(runs, out_dir / "omega.png")
    header = (
        f"Intermediate-axis tumbler: I = {INERTIA.tolist()} kg·m², ω0 = {OMEGA0.tolist()} rad/s, "
        f"dt = {DT} s, {DURATION:g} s; errors against the exact solution."
    )
    files = ["methods.md", "omega.png", "control.md"]
    try:
        tumble_gif(out_dir / "tumbler.gif")
        files.append("tumbler.gif")
    except DependencyNotInstalled as err:
        header += f"\n(no GIF and no PyBullet row: {err})"
    episode = control_episode()
    (out_dir / "control.md").write_text(episode + "\n")
    written = ", ".join(str(out_dir / f) for f in files)
    return f"{header}\n\n{table}\n\n{episode}\n\nWrote {written}"
