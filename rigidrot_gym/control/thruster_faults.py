"""A thruster stuck off or on, found by a residual test on what the controller sees, and the
torque request mapped without it once it is found (not from the truth).

The test (a parity-space residual with a bank of fault hypotheses, Isermann, *Fault-Diagnosis
Systems*, 2006, ch. 10 and 11): the body rates ω the observation shows (float32, ω/ω_max, body
frame) are compared after each control period with those the model predicts from the
on-times the controller sent. To first order the period changes them by

    Δω_pred = Δt J⁻¹ (Σ_k τ_k t_k/Δt − ω × J ω)

(J the nominal inertia, τ_k thruster k's torque at full thrust, t_k its on-time as fired:
whole sub-steps, none below the minimum on-time). The prediction here integrates Euler's
equations J ω̇ = τ(t) − ω × J ω over the period's sub-steps (RK4, one step per sub-step, the
torque of the thrusters firing in each) from the observed ω: what the env integrates, so
that the gyroscopic term's variation over the period, which the first-order formula leaves
(Δt |ω| |Δω| J_max/J_min, as large as a 10 ms pulse's effect at 0.1 rad/s), is no error.
What remains is the observation's rounding, ω_max 2⁻²⁵ per component of each reading, a
difference of two within √3 2⁻²⁴ ω_max; a period's residual r = ω_obs − ω_pred is tested
against

    |r| > margin · √3 2⁻²⁴ ω_max + ratio · |Δω_obs|

(``ratio``, 1e-6 by default, for the integrators' and the inertia's differences; raise it
for an inertia known less well). A thruster stuck off removes −t_k J⁻¹τ_k from the change
(only in a period where it was commanded), one stuck on adds (Δt − t_k) J⁻¹τ_k: each of the
16 hypotheses (thruster, off or on) is integrated in the same way, and one whose prediction
meets the observed rates within the threshold while the healthy one does not explains the
period. A hypothesis explaining ``confirm`` periods flags its thruster, and the fault's kind;
the test then predicts with the fault (the flagged thruster silent, or firing whole periods)
and stops (one fault per episode, as the env's).

Thrusters whose torques are parallel and equal cannot be told apart: the same residual
explains either. In :func:`~rigidrot_gym.physics.actuators.thrusters.eight_thrusters` every
thruster has such a twin (0 and 7, 1 and 6, 2 and 5, 3 and 4: the two thrusters of a face's
corner pair whose torques (0, ±c, m), (±c, 0, −m) coincide), and the mapping gives twins the
same force, so the test flags the pair: what it can tell.

:class:`ThrusterReallocating` (thrusters commanded by on-times) maps its controller's torque
request (N·m, clipped to ±τ_max about each axis, as a torque command of ±1) to forces by the
library's :func:`~rigidrot_gym.physics.actuators.thrusters.map_forces` and to on-times by its
remainder modulation (:func:`~rigidrot_gym.physics.actuators.thrusters.remainder_on_time`,
memory per row), action t/Δt (no copy of either). Without a flag it maps over all eight
(what the env's torque command does: the plain mapping). The mapping's last step (F ← F −
min F, non-negative forces) assumes that the set's thrusters firing together give no torque:
true of the eight, false of seven (its second loop, over those with a positive force, missed
the request in 3 of 6 random ones with a thruster left out), true of one thruster of each
pair (their four torques sum to zero). So with a flagged pair:

* stuck off: the mapping over all eight, and each twin commanded the pair's force (the sum
  of theirs): the one that works gives the pair's torque, whichever it is, and the dead one
  burns nothing;
* stuck on: the thruster's torque τ_k, which it gives whatever is commanded, is taken from
  the request (τ_req − τ_k) by firing one twin of each other pair for whole periods (their
  three torques sum to −τ_k), and τ_req is mapped over the four left, one of each pair (the
  stuck pair's twins both commanded its force: the healthy one fires it). Cancelled through
  each period, not only on average: a cancellation that fires from the period's start and
  stops (τ_req − τ_k mapped over the seven others, tried first) leaves a drift within each
  period that a PD law holds with a rate at the period's ends of about the rate tolerance,
  5e-3 rad/s (seen: 0.5° and 4.5e-3 rad/s, then drifting off).

A thruster flagged alone (a layout without twins) is left out and τ_req (− τ_k, stuck on)
mapped over the others with the second loop.

Measured on ThrusterSlew-v0 commanded by on-times (``thruster_command = "on_times"``), one
thruster (drawn) stuck from a time drawn in [1, 10] s (``fault_window``), the request from
quaternion feedback (ω_n 0.5 rad/s), seeds 10000–10049 (50 episodes each):

============================  =========  ==============  ==============
case                          success    steps (mean)    propellant, g
============================  =========  ==============  ==============
no fault, with the test       50/50      75.8            0.596
stuck off, plain mapping      50/50      88.8            0.601
stuck off, reallocated        50/50      75.7            0.595
stuck on, plain mapping       0/50       300 (timeout)   19.0
stuck on, reallocated         50/50      85.4            4.25
============================  =========  ==============  ==============

No flag in the 50 fault-free episodes. Stuck on: the pair and kind flagged in all 50, two
periods after the first faulty one (``confirm`` = 2), never before. Stuck off: the pair and
kind flagged in 39 of 50, 2 to 38 periods after the fault (median 3): on the second period
after it that fired the thruster; the 11 others fired it in one period at most after the
fault (the slew's end asks little of that direction), showed nothing and were not flagged,
and succeeded. The plain mapping loses half of a pair's torque to a thruster stuck off,
which the loop rides out more slowly; against one stuck on it holds a PD error far outside
0.5° (the stuck torque, 0.0104 N·m, over K = 2ω_n² J) and burns what the others fire
against it. Reallocated, the stuck thruster's torque is cancelled through each period by
three thrusters fired whole periods (the 4.2 g: the stuck one's and theirs).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rigidrot_gym.attitude.components import thrusters as component
from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.attitude.task import decode_observation
from rigidrot_gym.physics.actuators import thrusters as model
from rigidrot_gym.physics.rotation.inertia import principal_frame

NONE, OFF, ON = 0, 1, 2  # the fault's kind (faults.THRUSTER_FAULTS)
# The observation holds ω/ω_max as float32: each component within 2⁻²⁵ ω_max of the truth
# (|ω| < ω_max), a difference of two within 2⁻²⁴ ω_max, √3 of it in norm.
_ROUNDING = np.sqrt(3.0) * 2.0**-24


def twins(thrusters: model.ThrusterSet) -> list[np.ndarray]:
    """The groups of thrusters whose torques at full thrust are equal (to 1e-12 of the
    largest): what a rate residual cannot tell apart, each group's indices ascending."""
    torques = thrusters.max_thrust[:, None] * thrusters.torque_arms
    scale = 1e-12 * np.abs(torques).max()
    groups: list[np.ndarray] = []
    seen = np.zeros(thrusters.count, dtype=bool)
    for k in range(thrusters.count):
        if not seen[k]:
            same = np.all(np.abs(torques - torques[k]) <= scale, axis=1)
            seen |= same
            groups.append(np.flatnonzero(same))
    return groups


class ThrusterFaultDetector:
    """The residual test above, on N rows (envs) of the set's thrusters.

    Args:
        thrusters: the library's :class:`~rigidrot_gym.physics.actuators.thrusters.ThrusterSet`
            (body frame, the scenario's: ``thrusters.thruster_set``).
        inertia: the nominal inertia: (3,) principal moments or a (3, 3) body-frame
            tensor, kg·m².
        dt: the control period Δt, s.
        substeps: the period's sub-steps (the on-times' resolution Δt/substeps).
        max_rate: the observation's rate scale ω_max, rad/s.
        margin: the threshold in multiples of the rounding bound √3 2⁻²⁴ ω_max.
        ratio: the share of the observed change |Δω| the residual may hold besides.
        confirm: the periods a hypothesis must explain before its thruster is flagged.
    """

    def __init__(
        self,
        thrusters: model.ThrusterSet,
        inertia,
        dt: float,
        substeps: int,
        max_rate: float,
        margin: float = 4.0,
        ratio: float = 1e-6,
        confirm: int = 2,
    ):
        if not isinstance(thrusters, model.ThrusterSet):
            raise ValueError(f"thrusters must be a ThrusterSet, got {thrusters!r}")
        for name, value in (("dt", dt), ("max_rate", max_rate), ("margin", margin)):
            if not np.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be a positive number, got {value!r}")
        if not np.isfinite(ratio) or ratio < 0:
            raise ValueError(f"ratio must be a number ≥ 0, got {ratio!r}")
        for name, value in (("substeps", substeps), ("confirm", confirm)):
            if int(value) != value or value < 1:
                raise ValueError(f"{name} must be an integer ≥ 1, got {value!r}")
        _, _, self.inertia = principal_frame(inertia)
        self.inverse = np.linalg.inv(self.inertia)
        self.set = thrusters
        self.n = thrusters.count
        self.torques = thrusters.max_thrust[:, None] * thrusters.torque_arms  # (n, 3) N·m, body frame
        self.dt, self.substeps, self.max_rate = float(dt), int(substeps), float(max_rate)
        self.resolution = self.dt / self.substeps  # as the env's: scenario.dt / scenario.substeps
        self.margin, self.ratio, self.confirm = float(margin), float(ratio), int(confirm)
        self.reset(1)

    @classmethod
    def for_scenario(cls, scenario: Scenario, **options: Any) -> ThrusterFaultDetector:
        """The test for a scenario's thrusters, inertia, period, sub-steps and rate scale."""
        if scenario.thruster_layout == "none":
            raise ValueError(
                f"scenario must have thrusters (thrusters.layout), got {scenario.thruster_layout!r}"
            )
        return cls(
            component.thruster_set(scenario.propulsion),
            scenario.inertia,
            scenario.dt,
            scenario.substeps,
            scenario.max_rate,
            **options,
        )

    def reset(self, rows: int) -> None:
        """Forget everything: ``rows`` new episodes, nothing flagged."""
        self.flagged = np.zeros((rows, self.n), dtype=bool)
        self.kind = np.zeros(rows, dtype=np.int64)  # NONE, OFF or ON
        self.flagged_at = np.full(rows, -1, dtype=np.int64)  # the periods seen when flagged
        self.steps = np.zeros(rows, dtype=np.int64)  # periods commanded
        self._counts = np.zeros((rows, self.n, 2), dtype=np.int64)  # periods each hypothesis explained
        self._rates = np.zeros((rows, 3))  # ω observed before the last period
        self._whole = np.zeros((rows, self.n))  # its whole sub-steps as commanded
        self._known = np.zeros(rows, dtype=bool)  # both from this episode

    def start(self, starting: np.ndarray) -> None:
        """New episodes for the rows where ``starting`` (N,) is true: those forgotten."""
        rows = np.flatnonzero(starting)
        self.flagged[rows], self.kind[rows], self.flagged_at[rows], self.steps[rows] = False, NONE, -1, 0
        self._counts[rows], self._known[rows] = 0, False

    def whole_substeps(self, actions: np.ndarray) -> np.ndarray:
        """(N, n) the whole sub-steps each thruster fires for on-time actions (N, n) in
        [-1, 1] (float32): what the env does with them (t = clip(a, 0, 1) Δt, none below the
        minimum on-time, rounded to whole sub-steps)."""
        a = np.asarray(actions, dtype=np.float32).astype(np.float64).reshape(-1, self.n)
        on = np.minimum(np.maximum(a * self.dt, 0.0), self.dt)
        on = np.where(on >= self.set.min_on_time, on, 0.0)
        return component.whole_substeps(on, self.resolution)

    def _believed(self, whole: np.ndarray) -> np.ndarray:
        """The whole sub-steps as the test believes they fire: a flagged group's first
        thruster silent (off) or firing the whole period (on)."""
        whole = whole.copy()
        for i in np.flatnonzero(self.kind != NONE):
            k = np.flatnonzero(self.flagged[i])[0]
            whole[i, k] = 0.0 if self.kind[i] == OFF else float(self.substeps)
        return whole

    def predict(self, rates: np.ndarray, whole: np.ndarray) -> np.ndarray:
        """ω (..., 3) after one period from ``rates`` (..., 3), rad/s, with thrusters firing
        ``whole`` (..., n) sub-steps: Euler's equations by RK4, a step per sub-step."""
        w = np.array(rates, dtype=np.float64)
        h = self.resolution

        def f(w, tau):  # J⁻¹ (τ − ω × J ω), the cross product written out (np.cross is slow on small arrays)
            jw = w @ self.inertia.T
            x, y, z = w[..., 0], w[..., 1], w[..., 2]
            a, b, c = jw[..., 0], jw[..., 1], jw[..., 2]
            gyro = np.stack((y * c - z * b, z * a - x * c, x * b - y * a), axis=-1)
            return (tau - gyro) @ self.inverse.T

        for m in range(self.substeps):
            tau = (whole > m).astype(np.float64) @ self.torques
            k1 = f(w, tau)
            k2 = f(w + 0.5 * h * k1, tau)
            k3 = f(w + 0.5 * h * k2, tau)
            k4 = f(w + h * k3, tau)
            w = w + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        return w

    def observe(self, rates: np.ndarray) -> np.ndarray:
        """The body rates (N, 3), rad/s, as observed now: tests the last period and returns
        the flags (N, n) (a flag stays for the episode)."""
        rates = np.asarray(rates, dtype=np.float64).reshape(-1, 3)
        before, whole = self._rates, self._whole
        self._rates = rates
        open_rows = np.flatnonzero(self._known & (self.kind == NONE))
        if open_rows.size == 0:
            return self.flagged
        w0, w1, n = before[open_rows], rates[open_rows], whole[open_rows]
        threshold = self.margin * _ROUNDING * self.max_rate + self.ratio * np.linalg.norm(w1 - w0, axis=-1)
        healthy = self.predict(w0, n)
        detected = np.linalg.norm(w1 - healthy, axis=-1) > threshold
        # the 2n hypotheses: thruster k off (none of its sub-steps) or on (all of them)
        hypotheses = np.repeat(n[:, None, :], 2 * self.n, axis=1)  # (R, 2n, n)
        k = np.arange(self.n)
        hypotheses[:, k, k] = 0.0
        hypotheses[:, self.n + k, k] = float(self.substeps)
        predicted = self.predict(np.repeat(w0[:, None, :], 2 * self.n, axis=1), hypotheses)
        fits = np.linalg.norm(w1[:, None, :] - predicted, axis=-1) <= threshold[:, None]
        distinct = np.linalg.norm(predicted - healthy[:, None, :], axis=-1) > 2.0 * threshold[:, None]
        explained = (fits & distinct & detected[:, None]).reshape(-1, 2, self.n).transpose(0, 2, 1)
        self._counts[open_rows] += explained
        for i in open_rows:
            confirmed = self._counts[i] >= self.confirm  # (n, 2)
            if confirmed.any():
                kind = OFF if confirmed[:, 0].any() else ON
                self.flagged[i] = confirmed[:, kind - 1]
                self.kind[i] = kind
                self.flagged_at[i] = self.steps[i]
        return self.flagged

    def commanded(self, actions: np.ndarray) -> None:
        """The on-time actions (N, n) sent now (float32, t/Δt): what the next period fires."""
        whole = self.whole_substeps(np.asarray(actions).reshape(-1, self.n))
        self._whole = self._believed(whole)
        self._known[:] = True
        self.steps += 1


class ThrusterReallocating:
    """A torque law's request mapped and modulated to on-time actions over the thrusters a
    :class:`ThrusterFaultDetector` has not flagged (all of them without a detector: the plain
    mapping), with the controllers' ``predict`` signature (one env's observations, or N rows;
    ``episode_start`` (N,) starts the episodes of the rows where it is true: their memory and
    test forgotten, the others' kept).

    Args:
        controller: a :class:`~rigidrot_gym.control.base.Controller` whose ``torque`` law
            gives the request (e.g. :class:`~rigidrot_gym.control.QuaternionFeedback`).
        thrusters: the scenario's set (body frame).
        dt: the control period Δt, s.
        max_torque: (3,) τ_max, the request's clip about each body axis, N·m.
        detector: the test, or None (the plain mapping).
    """

    def __init__(self, controller, thrusters: model.ThrusterSet, dt: float, max_torque, detector=None):
        if not isinstance(thrusters, model.ThrusterSet):
            raise ValueError(f"thrusters must be a ThrusterSet, got {thrusters!r}")
        if not np.isfinite(dt) or dt <= 0:
            raise ValueError(f"dt must be a positive number, got {dt!r}")
        self.controller, self.set, self.dt, self.detector = controller, thrusters, float(dt), detector
        self.max_torque = np.asarray(max_torque, dtype=np.float64)
        self.torques = thrusters.max_thrust[:, None] * thrusters.torque_arms
        self._subsets: dict[tuple[int, ...], model.ThrusterSet] = {}
        # Pairs of twins whose four torques sum to zero (eight_thrusters'): one of each pair fired
        # together gives no torque, so the library's mapping, whose non-negative shift assumes it,
        # holds over such a set of four.
        self.groups = twins(thrusters)
        firsts = np.array([self.torques[g[0]] for g in self.groups])
        self._paired = all(g.size == 2 for g in self.groups) and bool(
            np.all(np.abs(firsts.sum(axis=0)) <= 1e-12 * np.abs(self.torques).max())
        )
        self.reset(1)

    @classmethod
    def for_scenario(cls, controller, scenario: Scenario, detect: bool = True, **options: Any):
        """For a scenario whose thrusters take on-times: its set, period and τ_max, with
        the test (``options`` to :meth:`ThrusterFaultDetector.for_scenario`) or without."""
        if scenario.thruster_layout == "none" or scenario.thruster_command != "on_times":
            raise ValueError(
                "scenario must have thrusters commanded by on-times (thrusters.command = 'on_times'), got "
                f"layout {scenario.thruster_layout!r}, command {scenario.thruster_command!r}"
            )
        detector = ThrusterFaultDetector.for_scenario(scenario, **options) if detect else None
        table = scenario.propulsion
        return cls(
            controller, component.thruster_set(table), scenario.dt, component.max_torque(table), detector
        )

    def reset(self, rows: int) -> None:
        """New episodes for ``rows`` rows: the modulation's memory and the test cleared."""
        self.memory = np.zeros((rows, self.set.count))
        if self.detector is not None:
            self.detector.reset(rows)

    def _subset(self, keep: tuple[int, ...]) -> model.ThrusterSet:
        """The library's set of the thrusters ``keep`` (indices ascending)."""
        if keep not in self._subsets:
            s, k = self.set, list(keep)
            self._subsets[keep] = model.ThrusterSet(
                s.positions[k], s.directions[k], s.max_thrust[k], s.min_on_time[k], s.isp[k]
            )
        return self._subsets[keep]

    def forces(self, request: np.ndarray, flagged: np.ndarray, kind: int) -> np.ndarray:
        """(n,) forces, N, for one row's torque request (3,), N·m, with ``flagged`` (n,)
        thrusters of a fault ``kind``: see the module docstring."""
        if kind == NONE or not flagged.any():
            return model.map_forces(request, self.set)
        group = np.flatnonzero(flagged)
        if self._paired and group.size == 2:
            return self._pair_forces(request, group, kind)
        # a group of another size: the mapping over the others (its second loop, whose torque is
        # the request's where the thrusters with a positive force of the first reach it)
        if kind == ON:
            request = request - self.torques[group].sum(axis=0) / group.size
        keep = np.setdiff1d(np.arange(self.set.count), group)
        forces = np.zeros(self.set.count)
        forces[keep] = model.map_forces(request, self._subset(tuple(keep.tolist())), use_2nd_loop=True)
        return forces

    def _pair_forces(self, request: np.ndarray, pair: np.ndarray, kind: int) -> np.ndarray:
        forces = np.zeros(self.set.count)
        if kind == OFF:  # the whole set's mapping, the pair's force on each twin: the one that works gives it
            forces[:] = model.map_forces(request, self.set)
            forces[pair] = forces[pair].sum()
            return forces
        # stuck on: one twin of each other pair fires the whole period, cancelling it through the
        # period; the request is mapped over the others, one a pair (both twins its force)
        others = [g for g in self.groups if not np.array_equal(g, pair)]
        forces[[g[0] for g in others]] = self.set.max_thrust[[g[0] for g in others]]
        free = tuple(sorted([int(g[1]) for g in others] + [int(pair[0])]))
        mapped = model.map_forces(request, self._subset(free))
        forces[list(free)] = mapped
        forces[pair[1]] = forces[pair[0]]
        return forces

    def predict(
        self,
        observation: np.ndarray,
        state: Any = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = True,
    ) -> tuple[np.ndarray, Any]:
        """On-time actions t/Δt (n,) or (N, n), float32, for the observation(s)."""
        obs = np.asarray(observation)
        rows = obs.reshape(-1, obs.shape[-1])
        if self.memory.shape[0] != rows.shape[0]:
            self.reset(rows.shape[0])
        elif episode_start is not None and np.any(episode_start):  # those rows only
            starting = np.broadcast_to(np.asarray(episode_start, dtype=bool), (rows.shape[0],))
            self.memory[starting] = 0.0
            if self.detector is not None:
                self.detector.start(starting)
        error, omega, _ = decode_observation(rows, self.controller.max_rate)
        torque = np.clip(
            self.controller.torque(error, omega, np.zeros_like(omega)), -self.max_torque, self.max_torque
        )
        if self.detector is not None:
            flagged, kinds = self.detector.observe(omega), self.detector.kind
        else:
            flagged, kinds = np.zeros(self.memory.shape, dtype=bool), np.zeros(rows.shape[0], dtype=np.int64)
        forces = np.array([self.forces(torque[i], flagged[i], int(kinds[i])) for i in range(rows.shape[0])])
        on, self.memory = model.remainder_on_time(
            forces, self.memory, self.set.max_thrust, self.dt, self.set.min_on_time, 0
        )
        action = np.clip(on / self.dt, 0.0, 1.0).astype(np.float32)
        if self.detector is not None:
            self.detector.commanded(action)
        return (action[0] if obs.ndim == 1 else action), state
