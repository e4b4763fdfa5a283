"""How far a game engine drifts: PyBullet against our methods and a reference.

For one body and initial state, every method of ``methods`` (PyBullet included) runs at
each step size of ``steps``, torque-free and under a torque; the reference is the exact
solution (torque-free) or DOP853 at rtol = atol = 1e-13 (torqued). Reported per case,
method and step: the final and the largest attitude error (deg), the drift of the
energy and of |L| (conserved when torque-free; under torque they change physically,
shown for comparison between methods), the error of the
intermediate-axis flip period (time between successive reversals of the spin about the
intermediate axis) and the wall time per step. Plots: attitude error against time.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rigidrot_gym.physics import integrators
from rigidrot_gym.physics import quaternion as quat
from rigidrot_gym.physics.exact import torque_free
from rigidrot_gym.physics.inertia import principal_frame
from rigidrot_gym.physics.propagate import propagate
from rigidrot_gym.tools.report import markdown_table, write_results

DEFAULT_METHODS = ("pybullet", "semi_implicit", "rk4", "nielsen_krenk")
DEFAULT_STEPS = (1 / 60, 1 / 120, 1 / 240, 1 / 480)
# The notes' PyBullet measurement: I = (1, 2, 3) kg·m², ω0 = (0.01, 2, 0.01) rad/s.
DEFAULT_INERTIA = (1.0, 2.0, 3.0)
DEFAULT_OMEGA = (0.01, 2.0, 0.01)
# The torqued case: a constant world-frame torque (a body-frame torque that turns with
# the attitude), N·m.
DEFAULT_WORLD_TORQUE = (0.05, -0.03, 0.04)


@dataclass(frozen=True)
class Row:
    """One method at one step size in one case."""

    case: str
    method: str
    dt: float
    final_error_deg: float
    max_error_deg: float
    energy_drift: float
    momentum_drift: float
    flip_period_error: float
    us_per_step: float


def flip_times(t: np.ndarray, omega: np.ndarray, axis: int) -> np.ndarray:
    """Times (s) at which the body rate about ``axis`` changes sign, interpolated linearly."""
    w = omega[:, axis]
    i = np.flatnonzero(np.sign(w[1:]) != np.sign(w[:-1]))
    return t[i] - w[i] * (t[i + 1] - t[i]) / (w[i + 1] - w[i])


def _flip_period(t, omega, inertia) -> float:
    """Mean time between reversals of the spin about the intermediate principal axis."""
    moments, principal, _ = principal_frame(inertia)
    if principal is not None:
        omega = quat.rotate_inverse(principal, omega)
    times = flip_times(t, omega, int(np.argsort(moments)[1]))
    return float(np.mean(np.diff(times))) if times.size > 1 else float("nan")


def _reference(q0, w0, inertia, t, world_torque):
    """Exact (torque-free) or DOP853 (torqued) attitudes and rates at the times ``t``."""
    if world_torque is None:
        moments, principal, _ = principal_frame(inertia)
        if principal is None:
            return torque_free(q0, w0, moments, t)
        # The exact solution works in principal axes: convert there and back.
        q, w = torque_free(quat.multiply(q0, principal), quat.rotate_inverse(principal, w0), moments, t)
        return quat.multiply(q, quat.conjugate(principal)), quat.rotate(principal, w)
    from scipy.integrate import solve_ivp

    J, tau_w = principal_frame(inertia)[2], np.asarray(world_torque, float)
    J_inv = np.linalg.inv(J)

    def rhs(_, y):
        q, w = y[:4] / np.linalg.norm(y[:4]), y[4:]
        tau = quat.rotate_inverse(q, tau_w)
        return np.concatenate(
            [0.5 * quat.multiply(q, np.concatenate([[0.0], w])), J_inv @ (tau - np.cross(w, J @ w))]
        )

    sol = solve_ivp(
        rhs, (0.0, t[-1]), np.concatenate([q0, w0]), method="DOP853", t_eval=t, rtol=1e-13, atol=1e-13
    )
    q = sol.y[:4].T
    return q / np.linalg.norm(q, axis=-1, keepdims=True), sol.y[4:].T


def run_case(case, q0, w0, inertia, duration, methods, steps, world_torque) -> tuple[list[Row], dict]:
    """Rows and error curves of one case (``world_torque`` None: torque-free)."""
    rows, curves = [], {}
    load = {} if world_torque is None else {"torque": np.asarray(world_torque), "torque_frame": "world"}
    for dt in steps:
        n = round(duration / dt)
        t = dt * np.arange(n + 1)
        q_ref, w_ref = _reference(q0, w0, inertia, t, world_torque)
        period_ref = _flip_period(t, w_ref, inertia)
        for name in methods:
            if load and not integrators.get(name).accepts_torque:
                continue
            propagate(q0, w0, inertia, dt, 1, method=name, **load)  # compile or connect first
            start = time.perf_counter()
            traj = propagate(q0, w0, inertia, dt, n, method=name, **load)
            wall = time.perf_counter() - start
            error = np.degrees(quat.angle_between(traj.q, q_ref))
            energy, momentum = traj.kinetic_energy, traj.angular_momentum
            rows.append(
                Row(
                    case=case,
                    method=name,
                    dt=dt,
                    final_error_deg=float(error[-1]),
                    max_error_deg=float(np.max(error)),
                    energy_drift=float(np.max(np.abs(energy - energy[0])) / energy[0]),
                    momentum_drift=float(
                        np.max(np.abs(np.linalg.norm(momentum, axis=-1) - np.linalg.norm(momentum[0])))
                        / np.linalg.norm(momentum[0])
                    ),
                    flip_period_error=(_flip_period(t, traj.omega, inertia) - period_ref) / period_ref,
                    us_per_step=1e6 * wall / n,
                )
            )
            curves[(case, name, dt)] = (t, error)
    return rows, curves


def crosscheck(
    q0=(1.0, 0.0, 0.0, 0.0),
    omega0=DEFAULT_OMEGA,
    inertia=DEFAULT_INERTIA,
    duration: float = 20.0,
    methods=DEFAULT_METHODS,
    steps=DEFAULT_STEPS,
    world_torque=DEFAULT_WORLD_TORQUE,
) -> tuple[list[Row], dict]:
    """Run the torque-free case and (unless ``world_torque`` is None) the torqued case."""
    q0 = quat.normalize(q0)
    omega0 = np.asarray(omega0, dtype=float)
    rows, curves = run_case("torque-free", q0, omega0, inertia, duration, methods, steps, None)
    if world_torque is not None:
        more_rows, more_curves = run_case(
            "torqued", q0, omega0, inertia, duration, methods, steps, world_torque
        )
        rows, curves = rows + more_rows, {**curves, **more_curves}
    return rows, curves


def format_table(rows: list[Row]) -> str:
    """Markdown table of the rows."""
    header = (
        "case",
        "method",
        "dt (s)",
        "final error (deg)",
        "max error (deg)",
        "energy drift",
        "|L| drift",
        "flip period error",
        "µs/step",
    )
    cells = [
        (
            r.case,
            r.method,
            f"1/{round(1 / r.dt)}",
            f"{r.final_error_deg:.3g}",
            f"{r.max_error_deg:.3g}",
            f"{r.energy_drift:.2e}",
            f"{r.momentum_drift:.2e}",
            "no flip" if np.isnan(r.flip_period_error) else f"{r.flip_period_error:+.2%}",
            f"{r.us_per_step:.1f}",
        )
        for r in rows
    ]
    return markdown_table(header, cells, "llrrrrrrr")


def plot(curves: dict, path: Path) -> None:
    """Attitude error against time: one panel per case and step size, a line per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({(case, dt) for case, _, dt in curves}, key=lambda k: (k[0], -k[1]))
    cols = len({dt for _, dt in panels})
    rows = len({case for case, _ in panels})
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 3.0 * rows), squeeze=False, sharey=True)
    for ax, (case, dt) in zip(axes.ravel(), panels, strict=False):
        for (c, name, d), (t, error) in curves.items():
            if (c, d) == (case, dt):
                ax.semilogy(t, np.maximum(error, 1e-12), label=name, lw=1)
        ax.set_title(f"{case}, dt = 1/{round(1 / dt)} s", fontsize=9)
        ax.set_xlabel("t (s)")
        ax.grid(True, alpha=0.3)
    for ax in axes[:, 0]:
        ax.set_ylabel("attitude error (deg)")
    axes[0, 0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def write(out_dir: Path, rows: list[Row], curves: dict) -> str:
    """``crosscheck.md``, ``crosscheck.csv`` and ``crosscheck.png`` into ``out_dir``; the table."""
    table = format_table(rows)
    write_results(out_dir, "crosscheck", table, rows)
    plot(curves, out_dir / "crosscheck.png")
    return table
