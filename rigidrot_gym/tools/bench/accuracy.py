"""Accuracy against cost of every method of the library (``rigidrot bench accuracy``;
the foreign engines' methods are compared by ``rigidrot crosscheck``).

Three problems, each on a batch of bodies (the problem's state with small seeded random
perturbations of q0 and ω0):

* ``free``: asymmetric free body, I = (1, 2, 3) kg·m², 100 s; reference: the exact
  Jacobi-elliptic solution (:func:`rigidrot_gym.physics.rotation.exact.torque_free`).
* ``tumbler``: spin about the intermediate axis (Dzhanibekov), several flips in 30 s;
  reference exact.
* ``top``: a fast heavy top (40 rad/s, tilted 0.5 rad) for 2 s under gravity; reference
  scipy's DOP853 at rtol = atol = 1e-13 on the rigid-body ODE written out in numpy.

Per (problem, method, step): the error — max over the batch of the final attitude error
(rad, angle of q_ref⁻¹ ⊗ q) plus the relative body-rate error |ω − ω_ref|/|ω_ref| —, the
torque evaluations per body and the wall time of the whole batch (best of a few runs,
compile time excluded). Per method: the drift of energy, world angular momentum and |q|
over 100 000 steps of 0.01 s on the free body. Outputs: ``accuracy.csv``,
``accuracy.md``, ``headline.md`` and ``work_precision.png``.
"""

from __future__ import annotations

import csv
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rigidrot_gym.physics.rotation import integrators
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.exact import torque_free
from rigidrot_gym.physics.rotation.heavy_top import HeavyTop
from rigidrot_gym.physics.rotation.propagate import propagate
from rigidrot_gym.tools.bench.throughput import machine
from rigidrot_gym.tools.report import markdown_table

SEED = 20240601
BATCH = 32
QUICK_BATCH = 4
# Perturbations of the batch: attitude (rad, per rotation-vector component) and body
# rates (relative to |ω0|, per component).
ATTITUDE_SPREAD = 1e-2
RATE_SPREAD = 1e-2
REPEATS = 2
# The empirical order is fitted to points with errors below ASYMPTOTIC_MAX (larger steps
# are not yet asymptotic) and above FLOOR_MARGIN times the problem's floor, the smallest
# error any method reached on it (round-off and the reference's own error; the tumbler
# amplifies round-off, so the floor differs between problems).
ASYMPTOTIC_MAX = 1e-2
FLOOR_MARGIN = 100.0
# Of those, the finest few: the coarser ones may still carry higher-order terms.
ASYMPTOTIC_POINTS = 4
# A method whose next (finer) step is projected to take longer than this on the batch
# skips its remaining steps, so one slow method cannot stall the benchmark.
MAX_RUN_S = 30.0
DRIFT_DT = 0.01
DRIFT_STEPS = 100_000
QUICK_DRIFT_STEPS = 5_000
REFERENCE_TOLERANCE = 1e-13

TOP = HeavyTop.symmetric(mass=1.0, i_transverse=0.012, i_axial=0.02, length=0.12)

Reference = Callable[[np.ndarray, np.ndarray, float], tuple[np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class Problem:
    """One benchmark problem: the nominal state, the step sizes and the reference."""

    key: str
    title: str
    inertia: np.ndarray  # (3,) principal moments or (3, 3) body tensor, kg·m²
    q0: np.ndarray
    omega0: np.ndarray  # rad/s
    duration: float  # s
    steps: tuple[float, ...]  # step sizes, s, coarse to fine
    dt_ref: float  # the common moderate step of the tables, s (one of ``steps``)
    reference: Reference  # (q0 (B, 4), ω0 (B, 3), T) -> final (q, ω)
    torque: object = None


@dataclass(frozen=True)
class Point:
    """One (problem, method, step) measurement; error is NaN for a missing point."""

    problem: str
    method: str
    dt: float  # s
    steps: int
    batch: int
    error: float  # max over the batch of attitude error (rad) + relative rate error
    attitude_error: float  # rad, max over the batch
    rate_error: float  # |Δω|/|ω_ref|, max over the batch
    torque_evals: float  # per body, whole run
    wall_s: float  # whole batch, best of REPEATS
    note: str = ""

    @property
    def ok(self) -> bool:
        return math.isfinite(self.error)

    @property
    def us_per_body_step(self) -> float:
        return 1e6 * self.wall_s / (self.batch * self.steps)


@dataclass(frozen=True)
class Drift:
    """Long-run conservation of one method on the free body (relative drifts, max over the run)."""

    method: str
    steps: int
    dt: float  # s
    energy: float
    momentum: float  # max |L(t) − L0| / |L0|, world angular momentum vector
    norm: float  # max ||q| − 1|
    note: str = ""


@dataclass(frozen=True)
class Report:
    """Everything the benchmark measured."""

    problems: list[Problem]
    points: list[Point]
    orders: dict[tuple[str, str], float]  # (problem, method) -> empirical order (NaN if none)
    drifts: list[Drift]
    text: str


# ----------------------------------------------------------------------------------
# Problems and references
# ----------------------------------------------------------------------------------


def _exact_reference(inertia: np.ndarray) -> Reference:
    def reference(q0: np.ndarray, omega0: np.ndarray, duration: float) -> tuple[np.ndarray, np.ndarray]:
        return torque_free(q0, omega0, inertia, duration)

    return reference


def _top_rhs(y: np.ndarray, inertia: np.ndarray, com: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """d/dt of the stacked states (B bodies × (q, ω)): q̇ = ½ q ⊗ (0, ω),
    J ω̇ = r × (R(q)ᵀ m g) − ω × Jω, with R(q) and the Hamilton product written out."""
    y = y.reshape(-1, 7)
    q = y[:, :4] / np.linalg.norm(y[:, :4], axis=1, keepdims=True)
    a, b, c, d = q.T
    wx, wy, wz = y[:, 4:].T
    rotation = np.array(
        [
            [1 - 2 * (c * c + d * d), 2 * (b * c - a * d), 2 * (b * d + a * c)],
            [2 * (b * c + a * d), 1 - 2 * (b * b + d * d), 2 * (c * d - a * b)],
            [2 * (b * d - a * c), 2 * (c * d + a * b), 1 - 2 * (b * b + c * c)],
        ]
    )  # (3, 3, B), body to world
    force_body = np.einsum("jib,j->bi", rotation, weight)
    w = y[:, 4:]
    momentum = w @ inertia.T
    w_dot = np.linalg.solve(inertia, (np.cross(com, force_body) - np.cross(w, momentum)).T).T
    q_dot = 0.5 * np.stack(
        [
            -b * wx - c * wy - d * wz,
            a * wx + c * wz - d * wy,
            a * wy - b * wz + d * wx,
            a * wz + b * wy - c * wx,
        ],
        axis=1,
    )
    return np.concatenate([q_dot, w_dot], axis=1).ravel()


def _top_reference(q0: np.ndarray, omega0: np.ndarray, duration: float) -> tuple[np.ndarray, np.ndarray]:
    """Final states of the heavy top by DOP853 at rtol = atol = 1e-13, all bodies in one system."""
    from scipy.integrate import solve_ivp

    args = (TOP.inertia, TOP.center_of_mass, TOP.weight)
    y0 = np.concatenate([q0, omega0], axis=1).ravel()
    sol = solve_ivp(
        lambda t, y: _top_rhs(y, *args),
        (0.0, duration),
        y0,
        method="DOP853",
        rtol=REFERENCE_TOLERANCE,
        atol=REFERENCE_TOLERANCE,
    )
    if not sol.success:
        raise RuntimeError(f"heavy-top reference failed: {sol.message}")
    y = sol.y[:, -1].reshape(-1, 7)
    return y[:, :4] / np.linalg.norm(y[:, :4], axis=1, keepdims=True), y[:, 4:]


def problems(quick: bool = False) -> list[Problem]:
    """The three problems; ``quick`` shortens the runs and the step lists (for the tests)."""
    free_moments = np.array([1.0, 2.0, 3.0])
    exact = _exact_reference(free_moments)
    free_steps = (0.1, 0.05, 0.02, 0.01, 0.005) if quick else (0.2, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002)
    top_steps = (0.01, 0.005, 0.002, 1e-3, 5e-4) if quick else (0.02, 0.01, 0.005, 0.002, 1e-3, 5e-4, 2e-4)
    return [
        Problem(
            key="free",
            title="free asymmetric body, long run",
            inertia=free_moments,
            q0=quat.identity(),
            omega0=np.array([0.4, 1.1, -0.3]),
            duration=10.0 if quick else 100.0,
            steps=free_steps,
            dt_ref=0.01,
            reference=exact,
        ),
        Problem(
            key="tumbler",
            title="intermediate-axis tumbler (Dzhanibekov)",
            inertia=free_moments,
            q0=quat.identity(),
            omega0=np.array([0.01, 2.0, 0.01]),
            duration=15.0 if quick else 30.0,
            steps=free_steps,
            dt_ref=0.01,
            reference=exact,
        ),
        Problem(
            key="top",
            title="heavy top",
            inertia=TOP.inertia,
            q0=quat.from_rotvec([0.5, 0.0, 0.0]),
            omega0=np.array([0.0, 0.0, 40.0]),
            duration=0.5 if quick else 2.0,
            steps=top_steps,
            dt_ref=1e-3,
            reference=_top_reference,
            torque=TOP.torque,
        ),
    ]


def initial_states(problem: Problem, batch: int) -> tuple[np.ndarray, np.ndarray]:
    """(B, 4) attitudes and (B, 3) body rates: the problem's state, slightly perturbed (seeded)."""
    rng = np.random.default_rng(SEED)
    q0 = quat.multiply(problem.q0, quat.from_rotvec(ATTITUDE_SPREAD * rng.standard_normal((batch, 3))))
    spread = RATE_SPREAD * np.linalg.norm(problem.omega0)
    return q0, problem.omega0 + spread * rng.standard_normal((batch, 3))


# ----------------------------------------------------------------------------------
# Measurements
# ----------------------------------------------------------------------------------


def state_errors(q, omega, q_ref, omega_ref) -> tuple[np.ndarray, np.ndarray]:
    """Per-body attitude error (rad, sign-insensitive) and relative body-rate error."""
    rate = np.linalg.norm(omega - omega_ref, axis=-1) / np.linalg.norm(omega_ref, axis=-1)
    return quat.angle_between(quat.normalize(q_ref), quat.normalize(q)), rate


def _run(problem: Problem, method: str, q0, omega0, steps: int):
    # One recorded step of `steps` substeps: only the final state is stored, so the wall
    # time measures the integration, not the writing of a trajectory.
    return propagate(
        q0, omega0, problem.inertia, problem.duration, 1, method=method, torque=problem.torque, substeps=steps
    )


def measure_point(problem: Problem, method: str, dt: float, q0, omega0, reference) -> Point:
    """Error, torque evaluations and best-of-REPEATS wall time of one method at one step."""
    steps = max(1, round(problem.duration / dt))
    batch = len(q0)
    walls = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        traj = _run(problem, method, q0, omega0, steps)
        walls.append(time.perf_counter() - start)
    attitude, rate = state_errors(traj.q[-1], traj.omega[-1], *reference)
    return Point(
        problem=problem.key,
        method=method,
        dt=problem.duration / steps,
        steps=steps,
        batch=batch,
        error=float(np.max(attitude + rate)),
        attitude_error=float(np.max(attitude)),
        rate_error=float(np.max(rate)),
        torque_evals=float(np.max(traj.torque_evaluations)),
        wall_s=min(walls),
    )


def _missing(problem: Problem, method: str, dt: float, batch: int, note: str) -> Point:
    steps = max(1, round(problem.duration / dt))
    nan = float("nan")
    return Point(problem.key, method, problem.duration / steps, steps, batch, nan, nan, nan, nan, nan, note)


def measure_method(problem: Problem, method: str, q0, omega0, reference) -> list[Point]:
    """All step sizes of one method on one problem; failures become missing points."""
    batch = len(q0)
    try:
        # Compile (or load) the kernel first, so that compile time is not timed.
        propagate(q0, omega0, problem.inertia, problem.steps[-1], 1, method=method, torque=problem.torque)
    except Exception as err:  # a method registered later may fail in any way: report, go on
        return [_missing(problem, method, dt, batch, f"{type(err).__name__}: {err}") for dt in problem.steps]
    points: list[Point] = []
    for dt in problem.steps:
        last = next((p for p in reversed(points) if p.ok), None)
        if last is not None and REPEATS * last.wall_s * last.dt / dt > MAX_RUN_S:
            points.append(_missing(problem, method, dt, batch, f"skipped: projected > {MAX_RUN_S:g} s"))
            continue
        try:
            points.append(measure_point(problem, method, dt, q0, omega0, reference))
        except Exception as err:  # e.g. ValueError (non-finite state), ConvergenceError
            points.append(_missing(problem, method, dt, batch, f"{type(err).__name__}: {err}"))
    return points


def measure_problem(problem: Problem, batch: int, methods: list[str], progress=None) -> list[Point]:
    """Every method on one problem; the reference is computed once and shared.
    ``progress`` (a tqdm bar, optional) advances by one per method."""
    q0, omega0 = initial_states(problem, batch)
    reference = problem.reference(q0, omega0, problem.duration)
    points = []
    for method in methods:
        if progress is not None:
            progress.set_postfix_str(f"{problem.key}: {method}")
        if problem.torque is None or integrators.get(method).accepts_torque:
            points += measure_method(problem, method, q0, omega0, reference)
        if progress is not None:
            progress.update()
    return points


def measure_drift(method: str, steps: int = DRIFT_STEPS, dt: float = DRIFT_DT) -> Drift:
    """Max relative drift of energy and world angular momentum, and max ||q| − 1|, over
    ``steps`` steps of ``dt`` on the nominal free asymmetric body (single body)."""
    free = problems()[0]
    try:
        traj = propagate(free.q0, free.omega0, free.inertia, dt, steps, method=method)
    except Exception as err:  # as in measure_method
        nan = float("nan")
        return Drift(method, steps, dt, nan, nan, nan, f"{type(err).__name__}: {err}")
    return Drift(
        method=method,
        steps=steps,
        dt=dt,
        energy=float(traj.relative_energy_drift),
        momentum=float(traj.relative_momentum_drift),
        norm=float(np.max(np.abs(traj.norm_error))),
    )


def error_floor(points: list[Point]) -> float:
    """The smallest error measured on a problem, by any method."""
    return min((p.error for p in points if p.ok), default=0.0)


def empirical_order(points: list[Point], floor: float) -> float:
    """Least-squares slope of log(error) against log(dt) over the ASYMPTOTIC_POINTS finest
    steps with error in (FLOOR_MARGIN · floor, ASYMPTOTIC_MAX); NaN with fewer than three
    such points (e.g. an exact method, or one whose error stays O(1))."""
    window = [p for p in points if p.ok and FLOOR_MARGIN * floor < p.error < ASYMPTOTIC_MAX]
    used = sorted(window, key=lambda p: p.dt)[:ASYMPTOTIC_POINTS]
    if len(used) < 3:
        return float("nan")
    return float(np.polyfit(np.log([p.dt for p in used]), np.log([p.error for p in used]), 1)[0])


# ----------------------------------------------------------------------------------
# Reports
# ----------------------------------------------------------------------------------


def _select(points: list[Point], problem: str, method: str) -> list[Point]:
    return [p for p in points if p.problem == problem and p.method == method]


def _at(points: list[Point], problem: Problem, method: str) -> Point | None:
    """The point of ``method`` at the problem's reference step, if it was run."""
    return next((p for p in _select(points, problem.key, method) if math.isclose(p.dt, problem.dt_ref)), None)


def _fmt(value: float, spec: str = ".1e") -> str:
    return "—" if not math.isfinite(value) else format(value, spec)


def _cost(points: list[Point], problem: Problem, method: str) -> float:
    """µs per body-step of ``method`` at the problem's reference step."""
    p = _at(points, problem, method)
    return p.us_per_body_step if p is not None and p.ok else float("nan")


def write_csv(points: list[Point], path: Path) -> None:
    """All points, one row each (NaN marks a missing point; ``note`` says why)."""
    fields = [
        "problem",
        "method",
        "dt_s",
        "steps",
        "batch",
        "error",
        "attitude_error_rad",
        "rate_error_rel",
        "torque_evals_per_body",
        "wall_s",
        "us_per_body_step",
        "note",
    ]
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(fields)
        for p in points:
            writer.writerow(
                [p.problem, p.method, repr(p.dt), p.steps, p.batch, repr(p.error), repr(p.attitude_error)]
                + [repr(p.rate_error), repr(p.torque_evals), repr(p.wall_s), repr(p.us_per_body_step), p.note]
            )


def _problem_table(problem: Problem, points: list[Point], orders: dict, methods: list[str]) -> str:
    floor = error_floor([p for p in points if p.problem == problem.key])
    lines = [
        f"### {problem.title} (`{problem.key}`), T = {problem.duration:g} s, at dt = {problem.dt_ref:g} s",
        "",
        f"Error floor (smallest error of any method at any step): {floor:.1e}.",
        "",
    ]
    cells = []
    for method in methods:
        p = _at(points, problem, method)
        if p is None:
            continue
        evals = p.torque_evals / p.steps if p.ok else float("nan")
        cells.append(
            (
                method,
                integrators.get(method).order,
                _fmt(orders[problem.key, method], ".2f"),
                _fmt(evals, ".3g"),
                _fmt(p.error),
                _fmt(1e3 * p.wall_s, ".3g"),
                p.note[:60],
            )
        )
    header = ("method", "order (claimed)", "order (measured)", "torque evals/step", "error", "wall time (ms)")
    return "\n".join([*lines, markdown_table((*header, "note"), cells, "lrrrrrl")])


def _drift_table(drifts: list[Drift]) -> str:
    lines = [
        f"### Long-run drift: free body, {drifts[0].steps} steps of {drifts[0].dt:g} s (single body)",
        "",
        markdown_table(
            ("method", "energy drift (rel.)", "L drift (rel.)", "max ‖q‖ − 1"),
            [(d.method, _fmt(d.energy), _fmt(d.momentum), _fmt(d.norm)) for d in drifts],
        ),
    ]
    return "\n".join(lines)


def statement(problems_: list[Problem], batch: int) -> str:
    """What a run ran, in one line for the top of its tables: each problem's body, start
    rates, duration and steps, the perturbed batch and its seed, and the machine timed on."""
    return (
        f"Problems, each on {batch} bodies perturbed from its start (seed {SEED}): "
        f"{'; '.join(_describe(p) for p in problems_)}. Timed on {machine()}."
    )


def accuracy_markdown(problems_: list[Problem], points, orders, drifts, methods, batch: int) -> str:
    """The readable report: what ran, one table per problem and the drift table."""
    intro = (
        "# Accuracy against cost\n\n"
        f"{statement(problems_, batch)}\n\n"
        f"Error: max over {batch} perturbed bodies of the final attitude error (rad) plus the "
        "relative body-rate error |ω − ω_ref|/|ω_ref|. Wall time: the whole batch, best of "
        f"{REPEATS}, compile time excluded. Measured order: slope of log error against log dt "
        f"over the points with error below {ASYMPTOTIC_MAX:g} and above {FLOOR_MARGIN:g} × the "
        "problem's floor (its smallest error by any method); — when fewer than three.\n"
    )
    tables = [_problem_table(p, points, orders, methods) for p in problems_]
    return "\n\n".join([intro, *tables, _drift_table(drifts)]) + "\n"


def headline_markdown(problems_: list[Problem], points, orders, drifts, methods, batch: int) -> str:
    """The Integrators page's table (under :func:`statement`): error per problem at its
    reference step, measured orders, drifts, cost."""
    steps = ", ".join(f"{p.key} {p.dt_ref:g} s (T = {p.duration:g} s)" for p in problems_)
    head = [f"err {p.key}" for p in problems_] + [f"order {p.key}" for p in problems_]
    lines = [
        statement(problems_, batch),
        "",
        f"Error: max over {batch} bodies of final attitude error (rad) + relative rate error, at dt = "
        f"{steps}. Order: measured slope of log error vs log dt. Drifts: max relative drift over "
        f"{drifts[0].steps} steps of {drifts[0].dt:g} s on the free body (L: world angular momentum vector). "
        f"Cost: µs per body-step on the {problems_[0].key} body at its step (batch of {batch}, compiled).",
        "",
    ]
    drift = {d.method: d for d in drifts}
    rows = []
    for method in methods:
        at = [_at(points, p, method) for p in problems_]
        errors = [_fmt(p.error) if p is not None else "n/a" for p in at]
        order_cells = [_fmt(orders.get((p.key, method), float("nan")), ".2f") for p in problems_]
        d = drift[method]
        cost = _fmt(_cost(points, problems_[0], method), ".3g")
        rows.append((method, *errors, *order_cells, _fmt(d.energy), _fmt(d.momentum), cost))
    header = ("method", *head, "energy drift", "L drift", "µs/body-step")
    return "\n".join([*lines, markdown_table(header, rows)]) + "\n"


def _describe(problem: Problem) -> str:
    """A problem in words: body, ω0, duration and the step sizes."""
    inertia = np.asarray(problem.inertia)
    moments = np.diag(inertia) if inertia.ndim == 2 else inertia
    rates = ", ".join(f"{w:g}" for w in problem.omega0)
    return (
        f"{problem.title}: I = ({', '.join(f'{m:g}' for m in moments)}) kg·m², ω0 = ({rates}) rad/s, "
        f"T = {problem.duration:g} s, dt = {problem.steps[0]:g} … {problem.steps[-1]:g} s"
    )


def plot(problems_: list[Problem], points: list[Point], methods: list[str], path: Path) -> None:
    """Work-precision diagram: per problem, error against torque evaluations and against
    wall time, one line per method (colour and line style, legend beside the plots)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rigidrot_gym.tools.plot_style import floor_note, floored, method_styles

    styles = method_styles(methods)
    fig, axes = plt.subplots(len(problems_), 2, figsize=(14, 4.4 * len(problems_)), squeeze=False)
    notes = []
    for row, problem in zip(axes, problems_, strict=True):
        zeros, no_torque = {}, []
        for method in methods:
            done = [p for p in _select(points, problem.key, method) if p.ok]
            if not done:
                continue
            error, zero = floored([p.error for p in done])
            if zero:
                zeros[method] = zero
            style = {**styles[method], "ms": 4, "lw": 1.1}
            evals = np.array([p.torque_evals for p in done])
            if np.all(evals > 0):
                row[0].loglog(evals, error, label=method, **style)
            else:
                no_torque.append(method)
            row[1].loglog([p.wall_s for p in done], error, label=method, **style)
        row[0].set_xlabel("torque evaluations per body")
        row[1].set_xlabel(f"wall time for the batch of {points[0].batch} bodies (s)")
        for ax in row:
            ax.set_ylabel("error (rad + relative)")
            ax.grid(True, which="major", alpha=0.3)
        row[0].set_title(f"{_describe(problem)} (one marker per dt)", fontsize=9.5, loc="left")
        absent = [m for m in methods if not _select(points, problem.key, m)]
        lines = [floor_note(zeros, "error")] if zeros else []
        if no_torque:
            lines.append(f"{', '.join(no_torque)}: no torque evaluations, right panel only")
        if absent:
            lines.append(f"{', '.join(absent)}: refuses a torque, not run")
        if lines:
            row[1].text(0.99, 0.01, "\n".join(lines), transform=row[1].transAxes, fontsize=7.5, ha="right")
        notes += lines
    handles, labels = axes[0][1].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center right", fontsize=8.5, title="method", bbox_to_anchor=(0.995, 0.5))
    fig.suptitle(
        "Accuracy against cost: final attitude error (rad) + relative rate error, max over "
        f"{points[0].batch} perturbed bodies, against the exact solution (free body, tumbler) "
        "or DOP853 at 1e-13 (heavy top)",
        fontsize=10,
    )
    fig.tight_layout(rect=(0, 0, 0.885, 0.98))
    fig.savefig(path, dpi=100)
    plt.close(fig)


def run(out_dir: Path, quick: bool = False) -> Report:
    """Run the benchmark, write its four outputs into ``out_dir`` and return what it
    measured. A progress bar on stderr counts the (problem, method) runs and the drifts."""
    from tqdm import tqdm

    out_dir.mkdir(parents=True, exist_ok=True)
    batch = QUICK_BATCH if quick else BATCH
    # The library's own methods; foreign engines are compared by `rigidrot crosscheck`.
    methods = [name for name in integrators.names() if not integrators.get(name).engine]
    problems_ = problems(quick)
    with tqdm(total=len(methods) * (len(problems_) + 1), desc="accuracy", unit="run", mininterval=0.5) as bar:
        points = [p for problem in problems_ for p in measure_problem(problem, batch, methods, bar)]
        drifts = []
        for m in methods:
            bar.set_postfix_str(f"drift: {m}")
            drifts.append(measure_drift(m, steps=QUICK_DRIFT_STEPS if quick else DRIFT_STEPS))
            bar.update()
    orders = {}
    for problem in problems_:
        floor = error_floor([p for p in points if p.problem == problem.key])
        for m in methods:
            orders[problem.key, m] = empirical_order(_select(points, problem.key, m), floor)
    paths = [out_dir / name for name in ("accuracy.csv", "accuracy.md", "headline.md", "work_precision.png")]
    write_csv(points, paths[0])
    paths[1].write_text(accuracy_markdown(problems_, points, orders, drifts, methods, batch))
    headline = headline_markdown(problems_, points, orders, drifts, methods, batch)
    paths[2].write_text(headline)
    plot(problems_, points, methods, paths[3])
    text = headline + f"\nWrote {', '.join(p.name for p in paths)} into {out_dir}/"
    return Report(problems_, points, orders, drifts, text)
