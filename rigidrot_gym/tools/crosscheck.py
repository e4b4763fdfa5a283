"""Game engines against the exact solution (``rigidrot crosscheck``).

Every engine variant (PyBullet multibody and maximal coordinates; MuJoCo Euler,
implicitfast, implicit, RK4; Basilisk RK4, RKF45, RKF78) runs beside our own methods,
all through the same :func:`~rigidrot_gym.physics.rotation.propagate.propagate`, on three
problems (:data:`PROBLEMS`), at every step of :data:`STEPS` (0.4 … 1/2560 s):

* ``tumbler``: spin about the intermediate axis, I = (1, 2, 3) kg·m²,
  ω0 = (0.01, 2, 0.01) rad/s, 30 s (three Dzhanibekov flips); reference: the exact
  Jacobi-elliptic solution (:func:`~rigidrot_gym.physics.rotation.exact.torque_free`);
* ``torque``: a constant body torque (0.05, −0.03, 0.04) N·m on the same body from
  ω0 = (0.4, 1.1, −0.3) rad/s, 20 s; reference: scipy's DOP853 at rtol = atol = 1e-13;
* ``spin``: a fast symmetric spin, I = (1, 1, 1.8) kg·m², ω0 = (1, 0, 30) rad/s
  (nutation at 24 rad/s), 10 s; reference exact.

Measured per (problem, method, step), each run recording every step of one body: the
largest attitude error over the run (rad, angle of q_ref⁻¹ q), the largest relative
error of the kinetic energy and of |L| against the reference's (drifts when
torque-free), and on the tumbler the mean interval between reversals of the spin about
the intermediate axis against the exact one, 2K(k)/λ (Landau & Lifshitz §37; K from
scipy); and apart, the cost: µs per body-step of a batch of :data:`BATCH` bodies
(``time.perf_counter``, best of a few runs of at most :data:`TIMED_STEPS` steps, after a
warm-up call; an engine's wrapper included, its set-up excluded). A step a method
refuses (PyBullet's rotation clamp) or that blows up is recorded with its reason.

Derived: the measured order (least-squares slope of log error against log step over
the finest :data:`ORDER_POINTS` steps whose error lies below :data:`ORDER_MAX` and
above 100 × the problem's floor), the error at a fixed budget of :data:`BUDGET` µs of
CPU per simulated second, and how many times the cheapest of our methods is cheaper
than each engine variant at equal attitude error (:data:`TARGETS`), interpolated in
log-log on each work-precision curve (extrapolated with the measured order where an
engine does not reach the error in the sweep, and marked so). Also: every variant for
10⁵ steps of 0.01 s on the tumbler (energy and |L| drift against time), MuJoCo's
implicitfast damping per step against h|ω|, and each engine's set-up time.
"""

from __future__ import annotations

import itertools
import math
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rigidrot_gym.physics.rotation import integrators
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.exact import torque_free
from rigidrot_gym.physics.rotation.inertia import principal_frame
from rigidrot_gym.physics.rotation.integrators import ConvergenceError
from rigidrot_gym.physics.rotation.propagate import propagate
from rigidrot_gym.tools.bench.throughput import machine
from rigidrot_gym.tools.report import markdown_table, write_results

OURS = ("semi_implicit", "rk4", "nielsen_krenk", "strang", "yoshida4")
BATCH = 32  # bodies of a timed run
TIMED_STEPS = 1000  # steps of a timed run at most (the cost per step does not depend on it)
# 0.4 s … 1/2560 s: nested grids, and whole nanoseconds (Basilisk's clock counts integer
# ns: a step such as 1/60 s is off by up to 0.5 ns at each step's end, a floor of ~1e-9 rad).
STEPS = tuple(0.4 / 2**k for k in range(11))
REPORT_STEPS = (1 / 80, 1 / 320)  # the steps the tables show errors at, s
ORDER_MAX = 0.3  # rad: errors above it are outside the asymptotic range of an order fit
ORDER_POINTS = 4  # the finest steps an order is fitted over
FLOOR_MARGIN = 100.0  # an error within this factor of the problem's floor is round-off
BUDGET = 1000.0  # µs of CPU per simulated second, for the error at equal cost
TARGETS = (1e-2, 1e-4, 1e-6)  # attitude errors (rad) for the cost ratios
LONG_DT, LONG_STEPS, LONG_CHUNK = 0.01, 100_000, 1000
REFERENCE_TOLERANCE = 1e-13


@dataclass(frozen=True)
class Problem:
    """One crosscheck problem: a body, its start, a constant body torque or none."""

    key: str
    title: str
    inertia: tuple[float, float, float]  # principal moments, kg·m²
    omega0: tuple[float, float, float]  # body rates, rad/s
    duration: float  # s
    torque: tuple[float, float, float] | None = None  # body frame, N·m

    def caption(self) -> str:
        load = "" if self.torque is None else f", τ_body = {self.torque} N·m"
        return f"{self.title}: I = {self.inertia} kg·m², ω0 = {self.omega0} rad/s{load}, {self.duration:g} s"


PROBLEMS = (
    Problem("tumbler", "intermediate-axis tumbler", (1.0, 2.0, 3.0), (0.01, 2.0, 0.01), 30.0),
    Problem("torque", "constant body torque", (1.0, 2.0, 3.0), (0.4, 1.1, -0.3), 20.0, (0.05, -0.03, 0.04)),
    Problem("spin", "fast symmetric spin", (1.0, 1.0, 1.8), (1.0, 0.0, 30.0), 10.0),
)
Q0 = (1.0, 0.0, 0.0, 0.0)


def engine_variants() -> list[str]:
    """Every registered method run by a foreign engine, in registration order."""
    return [name for name in integrators.names() if integrators.get(name).engine]


def default_methods() -> list[str]:
    """Every engine variant, then our methods of :data:`OURS`."""
    return engine_variants() + list(OURS)


@dataclass(frozen=True)
class Point:
    """One method at one step on one problem (NaN and a note where it did not run)."""

    problem: str
    method: str
    engine: str
    dt: float
    steps: int
    attitude_error: float  # max over the run, rad
    final_error: float  # at the end, rad
    energy_error: float  # max |E − E_ref| / E_ref(0)
    momentum_error: float  # max ||L| − |L_ref|| / |L_ref(0)|
    flip_period_error: float  # relative, tumbler only
    us_per_body_step: float
    note: str = ""

    @property
    def cost(self) -> float:
        """µs of CPU per simulated second per body."""
        return self.us_per_body_step / self.dt


def exact_flip_period(inertia, omega0) -> float:
    """Time between reversals of the spin about the intermediate axis, 2K(k)/λ (s).

    Landau & Lifshitz, Mechanics §37: with I1 < I2 < I3, energy E and |L| = M, ω2 ∝ sn(λt)
    of modulus k, λ² = (I3 − I2)(M² − 2EI1)/(I1 I2 I3) and
    k² = (I2 − I1)(2EI3 − M²)/((I3 − I2)(M² − 2EI1)) when M² > 2EI2 (I1 and I3 swap roles
    otherwise); sn changes sign every 2K(k). ``inertia``: principal moments (3,) or a body
    tensor (3, 3), ``omega0`` (3,) in the same body frame.
    """
    from scipy.special import ellipk

    moments, principal, _ = principal_frame(inertia)
    w = np.asarray(omega0, float) if principal is None else quat.rotate_inverse(principal, omega0)
    order = np.argsort(moments)
    i1, i2, i3 = moments[order]
    w = w[order]
    energy = 0.5 * float(np.sum(np.array([i1, i2, i3]) * w**2))
    m2 = float(np.sum((np.array([i1, i2, i3]) * w) ** 2))
    if m2 < 2 * energy * i2:
        i1, i3 = i3, i1
    lam = math.sqrt((i3 - i2) * (m2 - 2 * energy * i1) / (i1 * i2 * i3))
    k2 = (i2 - i1) * (2 * energy * i3 - m2) / ((i3 - i2) * (m2 - 2 * energy * i1))
    return 2.0 * float(ellipk(k2)) / lam


def flip_times(t: np.ndarray, omega: np.ndarray, axis: int) -> np.ndarray:
    """Times (s) at which the body rate about ``axis`` changes sign, interpolated linearly."""
    w = omega[:, axis]
    i = np.flatnonzero(np.sign(w[1:]) != np.sign(w[:-1]))
    return t[i] - w[i] * (t[i + 1] - t[i]) / (w[i + 1] - w[i])


def reference(problem: Problem, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Reference attitudes (T, 4) and body rates (T, 3) of ``problem`` at the times ``t``:
    the exact solution torque-free, DOP853 (rtol = atol = 1e-13) under the torque."""
    if problem.torque is None:
        return torque_free(Q0, problem.omega0, problem.inertia, t)
    from scipy.integrate import solve_ivp

    inertia, tau = np.array(problem.inertia), np.array(problem.torque)

    def rhs(_, y):
        q, w = y[:4] / np.linalg.norm(y[:4]), y[4:]
        return np.concatenate(
            [0.5 * quat.multiply(q, np.r_[0.0, w]), (tau - np.cross(w, inertia * w)) / inertia]
        )

    sol = solve_ivp(
        rhs,
        (0.0, t[-1]),
        np.r_[Q0, problem.omega0],
        method="DOP853",
        t_eval=t,
        rtol=REFERENCE_TOLERANCE,
        atol=REFERENCE_TOLERANCE,
    )
    q = sol.y[:4].T
    return q / np.linalg.norm(q, axis=-1, keepdims=True), sol.y[4:].T


def _load(problem: Problem) -> dict:
    return {} if problem.torque is None else {"torque": np.array(problem.torque)}


def _invariants(inertia: np.ndarray, omega: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Kinetic energy and |L| of body rates (T, 3)."""
    return 0.5 * np.sum(inertia * omega**2, axis=-1), np.linalg.norm(inertia * omega, axis=-1)


def measure(problem: Problem, method: str, dt: float, q_ref, w_ref, timed_steps: int = TIMED_STEPS) -> Point:
    """Run ``method`` at step ``dt`` on ``problem`` against the reference at its times."""
    steps = round(problem.duration / dt)
    engine = integrators.get(method).engine
    load, inertia = _load(problem), np.array(problem.inertia)
    try:
        traj = propagate(Q0, problem.omega0, inertia, dt, steps, method=method, **load)
    except (ValueError, ConvergenceError) as err:  # refused (PyBullet's clamp) or blew up
        nan = float("nan")
        return Point(problem.key, method, engine, dt, steps, nan, nan, nan, nan, nan, nan, str(err)[:120])
    error = quat.angle_between(traj.q, q_ref)
    energy, momentum = _invariants(inertia, traj.omega)
    energy_ref, momentum_ref = _invariants(inertia, w_ref)
    flip = float("nan")
    if problem.key == "tumbler":
        axis = int(np.argsort(inertia)[1])
        times = flip_times(traj.t, traj.omega, axis)
        exact = exact_flip_period(inertia, problem.omega0)
        flip = float(np.mean(np.diff(times))) / exact - 1.0 if times.size > 1 else float("inf")
    return Point(
        problem.key,
        method,
        engine,
        dt,
        steps,
        attitude_error=float(np.max(error)),
        final_error=float(error[-1]),
        energy_error=float(np.max(np.abs(energy - energy_ref)) / energy_ref[0]),
        momentum_error=float(np.max(np.abs(momentum - momentum_ref)) / momentum_ref[0]),
        flip_period_error=flip,
        us_per_body_step=body_step_cost(problem, method, dt, min(steps, timed_steps)),
    )


def body_step_cost(problem: Problem, method: str, dt: float, steps: int, batch: int = BATCH) -> float:
    """µs per body-step of ``steps`` steps of ``dt`` on ``batch`` copies of the problem's
    body (one recorded step of ``steps`` substeps, so recording is not timed)."""
    load, n = _load(problem), max(steps, 1)
    q0, w0 = np.tile(Q0, (batch, 1)), np.tile(problem.omega0, (batch, 1))

    def run():
        propagate(q0, w0, problem.inertia, dt * n, 1, method=method, substeps=n, **load)

    run()  # compile, connect, build models
    best, spent = math.inf, 0.0
    while spent < 0.3 and best * 3 > spent:  # at least one timed run, a few when they are quick
        start = time.perf_counter()
        run()
        wall = time.perf_counter() - start
        best, spent = min(best, wall), spent + wall
    return 1e6 * best / (batch * n)


def run(
    methods=None, problems=PROBLEMS, steps=STEPS, timed_steps: int = TIMED_STEPS, progress=None
) -> list[Point]:
    """Every method at every step on every problem."""
    methods = list(methods or default_methods())
    points = []
    for problem in problems:
        finest = min(steps)
        t = finest * np.arange(round(problem.duration / finest) + 1)
        q_fine, w_fine = reference(problem, t)
        for dt in steps:
            stride = round(dt / finest)
            q_ref, w_ref = q_fine[::stride], w_fine[::stride]
            for method in methods:
                points.append(measure(problem, method, dt, q_ref, w_ref, timed_steps))
                if progress is not None:
                    progress(points[-1])
    return points


def curve(points: list[Point], problem: str, method: str) -> list[Point]:
    """The method's valid points on the problem, from the coarsest (cheapest) step."""
    chosen = [
        p for p in points if p.problem == problem and p.method == method and np.isfinite(p.attitude_error)
    ]
    return sorted(chosen, key=lambda p: -p.dt)


def floor(points: list[Point], problem: str) -> float:
    """The smallest attitude error any method reached on the problem."""
    errors = [p.attitude_error for p in points if p.problem == problem and np.isfinite(p.attitude_error)]
    return min(errors) if errors else float("nan")


def measured_order(points: list[Point], problem: str, method: str) -> float:
    """Slope of log error against log step over the finest asymptotic points: below
    :data:`ORDER_MAX`, above :data:`FLOOR_MARGIN` × the problem's floor, and before the
    error stops falling (by 20 % per halved step) into the method's own floor; NaN if < 3."""
    low = FLOOR_MARGIN * floor(points, problem)
    usable = []
    for p in curve(points, problem, method):
        if usable and p.attitude_error > usable[-1].attitude_error / 1.2:
            break  # stagnates: round-off, a clock floor, or no convergence
        if low < p.attitude_error < ORDER_MAX:
            usable.append(p)
    usable = usable[-ORDER_POINTS:]
    if len(usable) < 3:
        return float("nan")
    return float(np.polyfit(np.log([p.dt for p in usable]), np.log([p.attitude_error for p in usable]), 1)[0])


def error_at_cost(
    points: list[Point], problem: str, method: str, budget: float = BUDGET
) -> tuple[float, str]:
    """The attitude error reached at ``budget`` µs per simulated second, log-log
    interpolated; (error, "≤") beyond the finest step, (NaN, "") below the coarsest."""
    line = sorted(curve(points, problem, method), key=lambda p: p.cost)
    if not line or budget < line[0].cost:
        return float("nan"), ""
    if budget >= line[-1].cost:
        return line[-1].attitude_error, "≤"
    for a, b in itertools.pairwise(line):
        if a.cost <= budget <= b.cost:
            s = math.log(budget / a.cost) / math.log(b.cost / a.cost)
            return math.exp((1 - s) * math.log(a.attitude_error) + s * math.log(b.attitude_error)), ""
    return float("nan"), ""


def cost_at_error(points: list[Point], problem: str, method: str, target: float) -> tuple[float, str]:
    """µs per simulated second to reach attitude error ``target``: (cost, mark) with mark
    "" (interpolated between two steps), "≤" (already reached at the coarsest step),
    "~" (extrapolated from the finest step with the measured order); NaN if unknown."""
    line = curve(points, problem, method)
    for i, p in enumerate(line):
        if p.attitude_error <= target:
            if i == 0:
                return p.cost, "≤"
            a = line[i - 1]
            s = math.log(a.attitude_error / target) / math.log(a.attitude_error / p.attitude_error)
            return math.exp((1 - s) * math.log(a.cost) + s * math.log(p.cost)), ""
    order = measured_order(points, problem, method)
    if not line or not order > 0.5:
        return float("nan"), ""
    last = line[-1]
    return last.cost * (last.attitude_error / target) ** (1.0 / order), "~"


def cheaper_by(points: list[Point], problem: str, engine_method: str, ours, target: float) -> str:
    """How many times cheaper the cheapest of ``ours`` is than ``engine_method`` at
    ``target`` error, as a table cell ("—" when either cost is unknown)."""
    engine_cost, engine_mark = cost_at_error(points, problem, engine_method, target)
    best = [cost_at_error(points, problem, m, target) for m in ours]
    best = [b for b in best if np.isfinite(b[0]) and b[1] != "~"]
    if not np.isfinite(engine_cost) or not best:
        return "—"
    our_cost, our_mark = min(best)
    ratio = engine_cost / our_cost
    mark = ("~" if engine_mark == "~" else "") + (">" if our_mark == "≤" and engine_mark != "≤" else "")
    if engine_mark == "≤":
        mark = "≤" if our_mark != "≤" else "?"
    return "—" if mark == "?" else f"{mark}{ratio:.3g}"


@dataclass(frozen=True)
class Drift:
    """One method over the long horizon: energy and |L| drift, where it stopped."""

    method: str
    engine: str
    dt: float
    steps: int
    energy_drift: float  # relative, at the end
    max_energy_drift: float
    momentum_drift: float  # relative |L| change, at the end
    stopped_at: float  # s; NaN when the run finished
    note: str = ""


def long_horizon(methods, steps: int = LONG_STEPS, dt: float = LONG_DT, chunk: int = LONG_CHUNK):
    """Every method for ``steps`` steps of ``dt`` on the tumbler, in runs of ``chunk``
    steps (a blow-up ends the curve where it happened). Returns the Drift rows and the
    curves {method: (t, relative energy drift, relative |L| drift)}."""
    problem = PROBLEMS[0]
    inertia = np.array(problem.inertia)
    rows, curves = [], {}
    for method in methods:
        q, w, t0 = np.array(Q0), np.array(problem.omega0), 0.0
        e0, l0 = _invariants(inertia, w)
        times, energy, momentum, note, stopped = [0.0], [0.0], [0.0], "", float("nan")
        done = 0
        while done < steps:
            n = min(chunk, steps - done)
            try:
                traj = propagate(q, w, inertia, dt, n, method=method, t0=t0)
            except (ValueError, ConvergenceError) as err:
                note, stopped = str(err)[:120], t0
                break
            e, m = _invariants(inertia, traj.omega[1:])
            times.extend(traj.t[1:].tolist())
            energy.extend((e / e0 - 1.0).tolist())
            momentum.extend((m / l0 - 1.0).tolist())
            q, w, t0, done = traj.q[-1], traj.omega[-1], float(traj.t[-1]), done + n
        energy_a = np.array(energy)
        rows.append(
            Drift(
                method,
                integrators.get(method).engine,
                dt,
                done,
                energy_drift=float(energy_a[-1]),
                max_energy_drift=float(np.max(np.abs(energy_a))),
                momentum_drift=float(momentum[-1]),
                stopped_at=stopped,
                note=note,
            )
        )
        curves[method] = (np.array(times), energy_a, np.array(momentum))
    return rows, curves


@dataclass(frozen=True)
class DampingPoint:
    """One step's relative change of kinetic energy and |L| from the generic start."""

    method: str
    h: float
    rate: float  # |ω| at the start, rad/s
    energy_change: float  # relative, per step
    momentum_change: float


DAMPING_W0 = (0.4, 1.1, -0.3)  # rad/s: a generic tumble of I = (1, 2, 3)


def damping(
    methods=("mujoco_implicitfast", "mujoco_euler"), hs=(0.04, 0.02, 0.01, 0.005, 0.0025), scales=(1.0, 4.0)
):
    """One step of each method from ``scales`` × :data:`DAMPING_W0` at each step ``h``:
    MuJoCo documents for implicitfast a damping of the tumble ∝ (h|ω|)² per step."""
    inertia = np.array(PROBLEMS[0].inertia)
    out = []
    for method in methods:
        for scale in scales:
            w0 = scale * np.array(DAMPING_W0)
            for h in hs:
                traj = propagate(Q0, w0, inertia, h, 1, method=method)
                e, m = _invariants(inertia, traj.omega)
                out.append(
                    DampingPoint(method, h, float(np.linalg.norm(w0)), e[1] / e[0] - 1.0, m[1] / m[0] - 1.0)
                )
    return out


def damping_slope(points: list[DampingPoint], method: str) -> float:
    """Slope of log |ΔE/E| per step against log(h|ω|)."""
    chosen = [p for p in points if p.method == method]
    x = np.log([p.h * p.rate for p in chosen])
    return float(np.polyfit(x, np.log([abs(p.energy_change) for p in chosen]), 1)[0])


@dataclass(frozen=True)
class SetUp:
    """An engine's one-off costs: importing it, and its first call on a batch."""

    method: str
    engine: str
    import_s: float
    setup_ms: float  # first call of BATCH bodies in a fresh thread, less the steady cost


_IMPORTS = {"PyBullet": "pybullet", "MuJoCo": "mujoco", "Basilisk": "Basilisk.simulation.spacecraft"}


def import_seconds(module: str) -> float:
    """Wall time of ``import module`` in a fresh interpreter (s)."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def set_up(methods) -> list[SetUp]:
    """Set-up cost of each engine variant: a first call on :data:`BATCH` bodies in a new
    thread (whose engine state starts empty) less the median of three more calls."""
    problem = PROBLEMS[0]
    q0, w0 = np.tile(Q0, (BATCH, 1)), np.tile(problem.omega0, (BATCH, 1))
    imports: dict[str, float] = {}
    rows = []
    for method in methods:
        engine = integrators.get(method).engine
        if not engine:
            continue
        if engine not in imports:
            imports[engine] = import_seconds(_IMPORTS[engine])
        walls = []

        def work(walls=walls, method=method):
            for _ in range(4):
                start = time.perf_counter()
                propagate(q0, w0, problem.inertia, 0.01, 1, method=method)
                walls.append(time.perf_counter() - start)

        thread = threading.Thread(target=work)
        thread.start()
        thread.join()
        rows.append(SetUp(method, engine, imports[engine], 1e3 * (walls[0] - float(np.median(walls[1:])))))
    return rows


def _g(value: float, spec: str = ".2g") -> str:
    return "—" if not np.isfinite(value) else format(value, spec)


def step_label(dt: float) -> str:
    return f"1/{round(1 / dt)}" if abs(1 / dt - round(1 / dt)) < 1e-9 else f"{dt:.3g}"


def _at(points: list[Point], problem: str, method: str, dt: float) -> Point | None:
    found = [p for p in points if p.problem == problem and p.method == method and math.isclose(p.dt, dt)]
    return found[0] if found else None


def _label(method: str) -> str:
    engine = integrators.get(method).engine
    return f"{method} ({engine})" if engine else method


def problem_table(points: list[Point], problem: Problem, methods) -> str:
    """Per method on ``problem``: order, errors at :data:`REPORT_STEPS`, invariants and
    flip period at the finer one, cost, and the error at :data:`BUDGET`."""
    fine, coarse = min(REPORT_STEPS), max(REPORT_STEPS)
    header = [
        "method",
        "order",
        f"attitude error, dt {step_label(coarse)} (rad)",
        f"dt {step_label(fine)} (rad)",
        "energy error",
        "|L| error",
        "flip period error",
        "µs/body-step",
        f"error at {BUDGET:g} µs/s",
    ]
    cells = []
    for method in methods:
        a, b = _at(points, problem.key, method, coarse), _at(points, problem.key, method, fine)
        if a is None or b is None:
            continue
        flip = "—"
        if problem.key == "tumbler":
            flips = [p.flip_period_error for p in (a, b)]
            flip = " / ".join("no flip" if np.isinf(f) else _g(100 * f, "+.2f") + "%" for f in flips)
        error, mark = error_at_cost(points, problem.key, method)
        cells.append(
            [
                _label(method),
                _g(measured_order(points, problem.key, method), ".2f"),
                _g(a.attitude_error) if not a.note else "refused" if "clamp" in a.note else "blew up",
                _g(b.attitude_error) if not b.note else "refused" if "clamp" in b.note else "blew up",
                _g(b.energy_error),
                _g(b.momentum_error),
                flip,
                _g(b.us_per_body_step, ".3g"),
                mark + _g(error),
            ]
        )
    return markdown_table(header, cells, "l" + "r" * (len(header) - 1))


def ratio_table(points: list[Point], problems, engines, ours) -> str:
    """How many times cheaper the cheapest of ``ours`` is than each engine variant at equal
    attitude error, per problem and target."""
    header = ["engine variant"] + [f"{p.key} {t:.0e}" for p in problems for t in TARGETS]
    cells = [
        [_label(m)] + [cheaper_by(points, p.key, m, ours, t) for p in problems for t in TARGETS]
        for m in engines
    ]
    cheapest = ["cheapest of ours"]
    for p in problems:
        for t in TARGETS:
            costs = [(cost_at_error(points, p.key, m, t), m) for m in ours]
            costs = [(c, m) for (c, mark), m in costs if np.isfinite(c) and mark != "~"]
            cheapest.append(min(costs)[1] if costs else "—")
    return markdown_table(header, [*cells, cheapest])


def drift_caption(rows: list[Drift]) -> str:
    """What the long-horizon run (:func:`long_horizon`, on the tumbler) ran, in one line."""
    tumbler = PROBLEMS[0]
    return (
        f"Long horizon: the tumbler (I = {tumbler.inertia} kg·m², ω0 = {tumbler.omega0} rad/s, "
        f"q0 = {list(Q0)}), {max(r.steps for r in rows)} steps of {rows[0].dt:g} s"
    )


def drift_table(rows: list[Drift]) -> str:
    header = ["method", "energy drift at the end", "largest energy drift", "|L| drift at the end", "ran to"]
    cells = [
        [
            _label(r.method),
            _g(r.energy_drift),
            _g(r.max_energy_drift),
            _g(r.momentum_drift),
            f"{r.steps * r.dt:g} s" + ("" if not r.note else " (blew up)"),
        ]
        for r in rows
    ]
    return markdown_table(header, cells)


def setup_table(rows: list[SetUp]) -> str:
    header = ["method", "import (s, fresh interpreter)", f"set-up of {BATCH} bodies (ms)"]
    return markdown_table(
        header, [[_label(r.method), f"{r.import_s:.2f}", f"{r.setup_ms:.1f}"] for r in rows]
    )


def damping_text(points: list[DampingPoint]) -> str:
    methods = sorted({p.method for p in points}, key=[p.method for p in points].index)
    lines = []
    for method in methods:
        chosen = [p for p in points if p.method == method]
        ratio = np.mean([p.momentum_change / p.energy_change for p in chosen])
        sign = "loses" if all(p.energy_change < 0 for p in chosen) else "gains"
        lines.append(
            f"* {method}: {sign} kinetic energy at every step; |ΔE/E| per step ∝ (h|ω|)^"
            f"{damping_slope(points, method):.3f}, and |L| changes by {ratio:.3f} × ΔE/E per step."
        )
    return "\n".join(lines)


@dataclass
class Results:
    """What one crosscheck measured."""

    points: list[Point]
    methods: list[str]
    problems: tuple
    drifts: list[Drift]
    curves: dict
    damping: list[DampingPoint]
    setups: list[SetUp]


def markdown(results: Results) -> str:
    """Every table of the results, with their captions."""
    engines = [m for m in results.methods if integrators.get(m).engine]
    ours = [m for m in results.methods if not integrators.get(m).engine and m != "semi_implicit"]
    steps = sorted({p.dt for p in results.points}, reverse=True)
    parts = [
        "# Game engines against the exact solution",
        "",
        f"Each method on {', '.join(f'`{p.key}`' for p in results.problems)} (the sections below) at "
        f"dt = {', '.join(step_label(dt) for dt in steps)} s from q0 = {list(Q0)}; costs timed on "
        f"{machine()}.",
        "",
        "Attitude error: largest over the run (rad). Energy and |L| error: largest relative "
        "difference from the reference's (drift when torque-free), at the finer step. Flip period: "
        "mean time between reversals of the intermediate-axis spin against 2K(k)/λ. Order: slope "
        "of log error against log dt. Cost: µs per body-step in a batch of "
        f"{BATCH} (wrapper included); error at equal cost: interpolated at {BUDGET:g} µs of CPU per "
        "simulated second (≤: reached at the finest step already). 'refused': PyBullet clamps a "
        "rotation over π/4 per step; 'blew up': non-finite or MuJoCo's instability warning.",
    ]
    for problem in results.problems:
        parts += ["", f"## {problem.caption()}", "", problem_table(results.points, problem, results.methods)]
    parts += [
        "",
        f"## Times cheaper: the cheapest of {', '.join(ours)} against each engine variant at equal "
        "attitude error",
        "",
        "Cost per simulated second interpolated in log-log on each work-precision curve. ~: the "
        "engine does not reach the error in the sweep (finest step "
        f"{step_label(min(STEPS))} s); its cost is extrapolated with its measured order. >: our method "
        "reaches the error at its coarsest step already (a lower bound). ≤: so does the engine "
        "(an upper bound).",
        "",
        ratio_table(results.points, results.problems, engines, ours),
    ]
    if results.drifts:
        parts += ["", f"## {drift_caption(results.drifts)}", "", drift_table(results.drifts)]
    if results.damping:
        parts += ["", "## One step from ω0 = s·(0.4, 1.1, −0.3) rad/s, I = (1, 2, 3) kg·m²", ""]
        parts.append(damping_text(results.damping))
    if results.setups:
        parts += ["", "## Set-up", "", setup_table(results.setups)]
    return "\n".join(parts)


def write(out_dir: Path, results: Results) -> str:
    """``crosscheck.md``, ``crosscheck.csv`` (every point), ``drift.md``/``.csv``, and the plots
    ``work_precision.png``, ``drift.png``, ``damping.png`` into ``out_dir``; the Markdown."""
    from rigidrot_gym.tools import crosscheck_plots as plots

    text = markdown(results)
    write_results(out_dir, "crosscheck", text, results.points)
    if results.drifts:
        drift = f"{drift_caption(results.drifts)}.\n\n{drift_table(results.drifts)}"
        write_results(out_dir, "drift", drift, results.drifts)
        plots.drift(results.curves, results.drifts, out_dir / "drift.png")
    plots.work_precision(results.points, results.problems, results.methods, out_dir / "work_precision.png")
    if results.damping:
        plots.damping(results.damping, out_dir / "damping.png")
    return text


QUICK_PROBLEMS = tuple(
    Problem(p.key, p.title, p.inertia, p.omega0, p.duration / 10, p.torque) for p in PROBLEMS
)
QUICK_STEPS = (1 / 40, 1 / 80, 1 / 160, 1 / 320)


def compare(methods=None, quick: bool = False, progress=None) -> Results:
    """Everything ``rigidrot crosscheck`` measures; ``quick``: problems a tenth as long,
    four steps, short timed runs and long horizon, no import timing (seconds, for tests)."""
    methods = list(methods or default_methods())
    problems = QUICK_PROBLEMS if quick else PROBLEMS
    points = run(methods, problems, QUICK_STEPS if quick else STEPS, 50 if quick else TIMED_STEPS, progress)
    drifts, curves = long_horizon(methods, steps=2000 if quick else LONG_STEPS)
    mujoco = [m for m in ("mujoco_implicitfast", "mujoco_euler") if m in methods]
    damped = damping(mujoco) if mujoco else []
    setups = [] if quick else set_up(methods)
    return Results(points, methods, problems, drifts, curves, damped, setups)
