"""The demo: the integrators on a tumbling T-handle, then a controller flying the default env.

1. A free asymmetric body spun about its intermediate axis flips over periodically (the
   Dzhanibekov effect). Every registered method integrates the same motion at the same
   step; the table reports the attitude error against the exact Jacobi-elliptic solution
   after several flips, the drift of the kinetic energy and of the world angular
   momentum, and the wall time. The plot shows each method's attitude error against time,
   the methods grouped by order. An engine whose extra is not installed is left out, and
   the report says which extra brings it.
2. A short GIF of the tumbling body, drawn by PyBullet (needs the ``[render]`` extra;
   without it the demo runs the rest and says in one line what the extra would add).
3. One episode of the default environment (``RigidRot/Reorient-v0``) under a quaternion
   feedback controller (rate damping plus attitude feedback), printing how the pointing
   error falls.
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import textwrap
import time
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from gymnasium.error import DependencyNotInstalled

from rigidrot_gym.control import QuaternionFeedback
from rigidrot_gym.physics.rotation import integrators
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.exact import torque_free
from rigidrot_gym.physics.rotation.propagate import propagate
from rigidrot_gym.physics.rotation.trajectory import Trajectory
from rigidrot_gym.tools.plot_style import floor_note, floored, method_styles
from rigidrot_gym.tools.report import markdown_table

if TYPE_CHECKING:  # matplotlib is imported where a figure is drawn
    from matplotlib.figure import Figure

# The built-in tumbler: principal moments (kg·m²), spin mostly about the intermediate
# axis (rad/s), attitude, step (s) and duration (s).
INERTIA = np.array([1.0, 2.0, 3.0])
OMEGA0 = np.array([0.01, 2.0, 0.01])
Q0 = quat.identity()
DT = 0.01
DURATION = 30.0
DEFAULT_ENV = "RigidRot/Reorient-v0"
# The extra that installs each foreign engine (``Method.engine``).
ENGINE_EXTRAS = {"PyBullet": "render", "MuJoCo": "mujoco", "Basilisk": "basilisk"}
FIGURE = "attitude_error.png"
# Curves per panel of the figure at most: more, and colours and dashes stop telling them apart.
PANEL_CURVES = 6
# The arrows of the animation, as BodyRenderer draws them.
ARROWS = (
    ("body x", "red"),
    ("body y", "green"),
    ("body z", "blue"),
    ("L", "magenta"),
    ("ω", "orange"),
)


def body(inertia=INERTIA, omega0=OMEGA0) -> str:
    """A body's (3,) principal moments (kg·m²) and initial body rates (rad/s), in words;
    by default the tumbler's."""
    moments = ", ".join(f"{m:g}" for m in inertia)
    rates = ", ".join(f"{w:g}" for w in omega0)
    return f"I = ({moments}) kg·m², ω0 = ({rates}) rad/s"


def describe(dt: float = DT, duration: float = DURATION, inertia=INERTIA, omega0=OMEGA0) -> str:
    """The tumbler in words, for titles: body, ω0, dt (s) and duration (s)."""
    return f"intermediate-axis tumbler: {body(inertia, omega0)}, dt = {dt:g} s, {duration:g} s"


@dataclass(frozen=True)
class Row:
    """One method's result on the tumbler."""

    method: str
    attitude_error_deg: float
    rate_error: float
    energy_drift: float
    momentum_drift: float
    wall_ms: float


@dataclass(frozen=True)
class Comparison:
    """Every method on the tumbler against the exact solution.

    Attributes:
        rows: the table, one row per method that ran.
        runs: each method that ran, by name, to its trajectory (at the times ``t``).
        t: (n,) sample times, s.
        q_ref: (n, 4) the exact attitude (Jacobi-elliptic solution) at ``t``.
        omega_ref: (n, 3) the exact body rates at ``t``, rad/s.
        missing: each engine that did not run because its extra is not installed, to the
            names of its methods.
        problem: what ran, in words (:func:`describe`).
    """

    rows: list[Row]
    runs: dict[str, Trajectory]
    t: np.ndarray
    q_ref: np.ndarray
    omega_ref: np.ndarray
    missing: dict[str, list[str]]
    problem: str


def compare_methods(
    q0=Q0,
    omega0=OMEGA0,
    inertia=INERTIA,
    dt: float = DT,
    duration: float = DURATION,
    pool: Executor | None = None,
) -> Comparison:
    """Run every torque-free-capable method (on ``pool``'s workers if given, else here)
    against the exact solution."""
    steps = round(duration / dt)
    t = dt * np.arange(steps + 1)
    q_ref, w_ref = torque_free(q0, omega0, inertia, t)
    names = integrators.names()
    job = functools.partial(_method_run, q0=q0, omega0=omega0, inertia=inertia, dt=dt, steps=steps)
    results = (pool or _InProcess()).map(job, names)
    rows, runs, missing = [], {}, {}
    for name, (traj, wall) in zip(names, results, strict=True):
        if traj is None:
            missing.setdefault(integrators.get(name).engine, []).append(name)
            continue
        rows.append(
            Row(
                method=name,
                attitude_error_deg=float(np.degrees(np.max(quat.angle_between(traj.q, q_ref)))),
                rate_error=float(np.max(np.abs(traj.omega - w_ref))),
                energy_drift=float(traj.relative_energy_drift),
                momentum_drift=float(traj.relative_momentum_drift),
                wall_ms=1e3 * wall,
            )
        )
        runs[name] = traj
    return Comparison(rows, runs, t, q_ref, w_ref, missing, describe(dt, duration, inertia, omega0))


def install_hint(engine: str, adds: list[str]) -> str:
    """One line: ``engine`` (a ``Method.engine``) is not installed, the pip command of its
    extra, and what that adds (``adds``, joined by "and")."""
    extra = ENGINE_EXTRAS[engine]
    return f'{engine} not installed: pip install "rigidrot-gym[{extra}]" adds {" and ".join(adds)}'


class _InProcess(Executor):
    """An executor that runs each call at once, in this process."""

    def submit(self, fn, /, *args, **kwargs) -> Future:
        future: Future = Future()
        try:
            future.set_result(fn(*args, **kwargs))
        except Exception as err:  # handed to the caller through the future, as a pool would
            future.set_exception(err)
        return future


def _method_run(name: str, q0, omega0, inertia, dt: float, steps: int) -> tuple[Trajectory | None, float]:
    """``name``'s trajectory and the wall time of the run after compiling (or loading) its
    kernel; (None, 0) for an engine whose extra is not installed."""
    try:
        propagate(q0, omega0, inertia, dt, 1, method=name)
    except DependencyNotInstalled:
        return None, 0.0
    start = time.perf_counter()
    traj = propagate(q0, omega0, inertia, dt, steps, method=name)
    return traj, time.perf_counter() - start


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


def panels(names: list[str]) -> list[tuple[str, list[str]]]:
    """``names`` grouped for the figure, as (title, names) in registration order: the
    library's methods by order (first, second, higher and exact), then the engines' (first
    and second order, higher); a group of more than :data:`PANEL_CURVES` is cut into parts."""
    groups = (
        ("first order", lambda m: not m.engine and m.order == 1),
        ("second order", lambda m: not m.engine and m.order == 2),
        ("higher order, and exact", lambda m: not m.engine and m.order not in (1, 2)),
        ("engines, first and second order", lambda m: m.engine and m.order in (1, 2)),
        ("engines, higher order", lambda m: m.engine and m.order not in (1, 2)),
    )
    out = []
    for title, member in groups:
        chosen = [n for n in names if member(integrators.get(n))]
        parts = [chosen[i : i + PANEL_CURVES] for i in range(0, len(chosen), PANEL_CURVES)]
        for k, part in enumerate(parts):
            out.append((f"{title} ({k + 1}/{len(parts)})" if len(parts) > 1 else title, part))
    return out


def plot(comparison: Comparison, path: Path) -> None:
    """:func:`figure` of ``comparison`` as a PNG."""
    import matplotlib.pyplot as plt

    fig = figure(comparison.runs, comparison.q_ref, comparison.problem)
    fig.savefig(path, dpi=100)
    plt.close(fig)


def figure(runs: dict[str, Trajectory], q_ref: np.ndarray, problem: str) -> Figure:
    """The attitude error of each method against the exact solution over time, log scale,
    one panel per group of :func:`panels` (its own key beside it): a matplotlib figure.
    ``runs`` maps each method's name to its :class:`Trajectory`; ``q_ref`` is the (n, 4)
    exact attitude at the trajectories' n times; ``problem`` (:func:`describe`) goes into
    the title."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = panels(list(runs))
    height = 2.3 * len(groups) + 1.3  # inches
    fig, axes = plt.subplots(len(groups), 1, figsize=(11, height), sharex=True, sharey=True, squeeze=False)
    # Margins fixed (the top and bottom ones in inches, for the title and the axis labels)
    # where tight_layout would measure every tick label; the right one holds the keys.
    fig.subplots_adjust(left=0.08, right=0.73, top=1.0 - 0.95 / height, bottom=0.5 / height, hspace=0.32)
    for ax, (title, names) in zip(axes[:, 0], groups, strict=True):
        styles = method_styles(names)
        zeros = {}
        for name in names:
            run = runs[name]
            # From the first step on: at t = 0 every method starts on the exact attitude.
            # An error of exactly 0 has no place on the log axis: floored() draws it at
            # ZERO_FLOOR (1e-17 deg, below the ≈1e-14 deg that one rounding of a unit
            # quaternion's component amounts to), and the panel's title says so.
            error, zero = floored(np.degrees(quat.angle_between(run.q[1:], q_ref[1:])))
            if zero:
                zeros[name] = zero
            order = integrators.get(name).order
            label = f"{name} ({'exact' if order == 0 else f'order {order}'})"
            every = max(1, len(error) // 12)
            ax.semilogy(run.t[1:], error, label=label, lw=1.1, markevery=every, ms=4, **styles[name])
        note = floor_note(zeros, "error")
        ax.set_title(title + (f" — {note}" if note else ""), fontsize=9, loc="left")
        ax.set_ylabel("attitude error (deg)", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(True, which="major", alpha=0.3)
        ax.legend(fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5), title="method", title_fontsize=8)
    axes[-1, 0].set_xlabel("t (s)", fontsize=8)
    # Wrapped: the problem and the measure do not fit one line at this width.
    title = textwrap.wrap(
        "Attitude error against the exact solution (rotation angle from the exact attitude, log "
        f"scale) — {problem}",
        110,
        break_on_hyphens=False,
    )
    fig.suptitle("\n".join(title), fontsize=10, x=0.01, ha="left")
    return fig


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
    """The tumbler of the table (exact solution) as a GIF: the body drawn by PyBullet, with a
    title, the time and a key to the arrows.

    Raises:
        gymnasium.error.DependencyNotInstalled: without PyBullet (the ``[render]`` extra).
    """
    from rigidrot_gym.render import BodyRenderer

    t = np.arange(0.0, seconds, 1.0 / fps)
    q, omega = torque_free(Q0, OMEGA0, INERTIA, t)
    with BodyRenderer(INERTIA, width=320, height=240) as renderer:
        frames = [renderer.render(qk, wk) for qk, wk in zip(q, omega, strict=True)]
    annotated = annotate(frames, t)
    # Pillow comes with matplotlib: the GIF needs nothing beyond PyBullet.
    from PIL import Image

    # One palette for every frame, from a sample of them: mapping a frame onto a given
    # palette is 4× faster than choosing one per frame (the demo's cold run waits on this).
    sample = Image.fromarray(np.concatenate(annotated[:: max(1, len(annotated) // 8)]))
    palette = sample.quantize(255, method=Image.Quantize.MEDIANCUT)
    images = [Image.fromarray(f).quantize(palette=palette, dither=Image.Dither.NONE) for f in annotated]
    images[0].save(path, save_all=True, append_images=images[1:], duration=round(1000 / fps), loop=0)


def annotate(frames: list[np.ndarray], t: np.ndarray) -> list[np.ndarray]:
    """Each (H, W, 3) frame under a title and the time ``t`` (s), beside a key to the arrows."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.lines import Line2D

    height, width = frames[0].shape[:2]
    dpi = 100
    fig = plt.figure(figsize=((width + 150) / dpi, (height + 52) / dpi), dpi=dpi)
    ax = fig.add_axes((0, 0, width / (width + 150), height / (height + 52)))
    ax.set_axis_off()
    image = ax.imshow(frames[0], animated=True)
    fig.text(0.01, 0.985, "Intermediate-axis tumbler (exact solution)", fontsize=9, va="top", weight="bold")
    fig.text(0.01, 0.92, body(), fontsize=7.5, va="top")
    clock = fig.text(0.99, 0.05, "", fontsize=9, ha="right", family="monospace", animated=True)
    key = [Line2D([], [], color=colour, lw=3, label=label) for label, colour in ARROWS]
    key.append(Line2D([], [], color="grey", lw=6, alpha=0.5, label="ellipsoid of inertia"))
    fig.legend(handles=key, loc="center right", fontsize=7.5, frameon=False, bbox_to_anchor=(1.0, 0.5))
    # The static parts drawn once; per frame only the image and the clock (blitting: 4×
    # faster than drawing the whole figure, the same pixels).
    canvas = fig.canvas
    canvas.draw()
    background = canvas.copy_from_bbox(fig.bbox)
    out = []
    for frame, time_s in zip(frames, t, strict=True):
        canvas.restore_region(background)
        image.set_data(frame)
        clock.set_text(f"t = {time_s:5.2f} s")
        ax.draw_artist(image)
        fig.draw_artist(clock)
        out.append(np.asarray(canvas.buffer_rgba())[..., :3].copy())
    plt.close(fig)
    return out


def run(out_dir: Path, workers: int | None = None) -> str:
    """Run the demo, write ``methods.md`` (the problem, then the table),
    ``attitude_error.png`` (:func:`figure`), ``control.md`` and (with the ``[render]``
    extra) ``tumbler.gif`` into ``out_dir``; return the report. Each engine whose extra is
    not installed is named in both, with the extra that brings it.

    Its parts run on ``workers`` processes (default: one per core; 1: in this process): the
    methods, the animation and the control episode are independent, and a cold run is
    mostly numba compiling each method's kernels, which processes do side by side."""
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be a positive integer or None, got {workers!r}")
    out_dir.mkdir(parents=True, exist_ok=True)
    workers = workers or os.cpu_count() or 1
    # spawn: fork would copy this process's LLVM and threads into the workers
    spawn = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=spawn) if workers > 1 else _InProcess() as pool:
        gif = pool.submit(tumble_gif, out_dir / "tumbler.gif")
        control = pool.submit(control_episode)
        comparison = compare_methods(pool=pool)
        plot(comparison, out_dir / FIGURE)
        files = ["methods.md", FIGURE, "control.md"]
        adds = {engine: [f"the rows {', '.join(names)}"] for engine, names in comparison.missing.items()}
        try:
            gif.result()
            files.append("tumbler.gif")
        except DependencyNotInstalled:
            adds.setdefault("PyBullet", []).append("the animation")
        episode = control.result()
    problem = f"{comparison.problem[0].upper()}{comparison.problem[1:]}; errors against the exact solution."
    hints = [install_hint(engine, what) for engine, what in adds.items()]
    methods = "\n\n".join([problem, *(["\n".join(hints)] if hints else []), format_table(comparison.rows)])
    (out_dir / "methods.md").write_text(methods + "\n")
    (out_dir / "control.md").write_text(episode + "\n")
    written = ", ".join(files)
    return f"{methods}\n\n{episode}\n\nWrote {written} into {out_dir}/"
