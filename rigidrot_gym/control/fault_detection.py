"""A reaction wheel's fault found by a residual test on what the controller sees, and the
torque reallocated over the healthy wheels once it is found (not from the truth).

The test (a parity-space residual in its simplest form: compare each measured output with
what the model predicts from the known inputs, Isermann, *Fault-Diagnosis Systems*, 2006,
ch. 10): an ideal wheel's momentum moves by what its command gives, h_w ← clip(h_w + u Δt,
±h_max), u = a u_max. Over the last ``window`` periods the residual of wheel k is

    r_k = (h_k(t) − h_k(t − W)) − Σ Δh_k,expected

with h_k as the observation shows it (float32, h_w / h_max) and Δh_k,expected from the
actions the controller sent (each acting ``delay`` periods later). A healthy wheel leaves
only the noise: the observation's rounding (two float32 roundings, the sum telescopes),
and the actuator noise, u (1 + σ ξ) per period, whose sum over W periods has standard
deviation σ Δt (Σ u²)^½; a torque drawn per episode within ±r of the nominal
(``randomize_torque``) gives at most r Σ|Δh|. A real wheel gives no torque below its
deadband u_min; with the limit drawn, a command of nominal torque |u| in
[u_min/(1 + r), u_min/(1 − r)) may fall on either side of it, so it may give all of
|u|(1 + r) Δt or none: the band's B_k = Σ |u|(1 + r) Δt over such commands joins the
threshold. Wheel k is flagged when

    |r_k| > ratio · Σ|Δh_k,expected| + sigmas · σ Δt (Σ u_k²)^½ + B_k + 2⁻²² h_max

with ``ratio`` above r: a stopped or seized wheel leaves |r_k| = Σ|Δh_k,expected| (ratio
< 1), a degraded one ``share`` of it (found when share > ratio). A fault is found only
while the wheel is commanded: a wheel asked for nothing shows nothing.

:class:`Reallocating` wraps a controller: before each action it updates the test, and the
controller allocates its torque over the wheels not flagged
(:meth:`~rigidrot_gym.attitude.actuators.Actuators.commands_for`, the pseudo-inverse of the
healthy wheels' axes); a flag stays for the episode. Each row (env) of a vector env keeps
its own test: a row's new episode clears its flags and history only, and its residual is
tested again once it has a whole window of its new episode.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rigidrot_gym.attitude.actuators import Actuators
from rigidrot_gym.attitude.rows import OBS_SIZE
from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.control.base import Controller
from rigidrot_gym.physics.actuators import reaction_wheels

# The observation holds h_w / h_max as float32: each value within 2⁻²⁵ h_max of the truth,
# a difference of two within 2⁻²⁴; twice that for margin.
_ROUNDING = 2.0**-22


class WheelFaultDetector:
    """The residual test above, on N rows (envs) of n wheels.

    Args:
        actuators: the scenario's :class:`~rigidrot_gym.attitude.actuators.Actuators`
            (its wheels: axes, torque and momentum limits).
        dt: the control period Δt, s.
        noise: the actuator noise σ (relative, 1σ), 0 without.
        delay: the periods an action waits before it acts (1 with ``actuation_delay``).
        window: W, the periods the residual sums over.
        ratio: the share of the expected momentum change a residual must pass (above the
            drawn torque spread).
        sigmas: how many standard deviations of the noise it must pass besides.
        friction: a bound on each wheel's bearing friction, N·m (a real wheel's: its
            Coulomb torque plus its viscous one at top speed), which the residual may hold
            besides: W Δt of it joins the threshold.
        deadband: a real wheel's smallest motor torque u_min, N·m: a command below it is
            expected to move nothing.
        spread: the share r by which the torque limit is drawn per episode
            (``randomize_torque``), in [0, 1).
    """

    def __init__(
        self,
        actuators: Actuators,
        dt: float,
        noise: float = 0.0,
        delay: int = 0,
        window: int = 5,
        ratio: float = 0.25,
        sigmas: float = 6.0,
        friction: float = 0.0,
        deadband: float = 0.0,
        spread: float = 0.0,
    ):
        if not actuators.wheels:
            raise ValueError(f"actuators must be reaction wheels, got {actuators!r}")
        for name, value in (("dt", dt), ("ratio", ratio), ("sigmas", sigmas)):
            if not np.isfinite(value) or value <= 0:
                raise ValueError(f"{name} must be a positive number, got {value!r}")
        for name, value in (("noise", noise), ("friction", friction), ("deadband", deadband)):
            if not np.isfinite(value) or value < 0:
                raise ValueError(f"{name} must be a number ≥ 0, got {value!r}")
        if not (np.isfinite(spread) and 0.0 <= spread < 1.0):
            raise ValueError(f"spread must be a number in [0, 1), got {spread!r}")
        if int(window) != window or window < 1:
            raise ValueError(f"window must be an integer ≥ 1, got {window!r}")
        if int(delay) != delay or delay < 0:
            raise ValueError(f"delay must be an integer ≥ 0, got {delay!r}")
        self.n = actuators.torquing
        self.u_max = np.asarray(actuators.max_torque, dtype=np.float64)
        self.h_max = np.asarray(actuators.max_momentum[: self.n], dtype=np.float64)
        self.dt, self.noise, self.delay = float(dt), float(noise), int(delay)
        self.window, self.ratio, self.sigmas = int(window), float(ratio), float(sigmas)
        self.friction, self.deadband, self.spread = float(friction), float(deadband), float(spread)
        self.reset(1)

    @classmethod
    def for_scenario(cls, scenario: Scenario, **options: Any) -> WheelFaultDetector:
        """The test for a scenario's wheels (a real wheel's friction bound and deadband),
        period, actuator noise, delay and drawn torque spread."""
        real = {}
        if scenario.wheel_model != "ideal":
            m = reaction_wheels.PRESETS[scenario.wheel_model]
            real = {"friction": m.coulomb + m.viscous * m.omega_max, "deadband": m.u_min}
        return cls(
            Actuators.of(scenario),
            scenario.dt,
            noise=scenario.actuator_noise,
            delay=1 if scenario.actuation_delay else 0,
            **{**real, "spread": scenario.randomize_torque, **options},
        )

    def reset(self, rows: int) -> None:
        """Forget everything: ``rows`` new episodes, nothing flagged."""
        self.flagged = np.zeros((rows, self.n), dtype=bool)
        self.steps = np.zeros(rows, dtype=np.int64)
        self._momenta: list[np.ndarray] = []  # observed h_w, the last W + 1
        self._expected: list[np.ndarray] = []  # Δh expected, the last W
        self._torques: list[np.ndarray] = []  # the torques commanded, N·m, the last W
        self._band: list[np.ndarray] = []  # |Δh| a command at the deadband's edge may give, the last W
        self._actions: list[np.ndarray] = [np.zeros((rows, self.n)) for _ in range(self.delay)]

    def reset_rows(self, rows: np.ndarray) -> None:
        """Forget rows (a bool mask (N,) or indices) that start new episodes: their flags,
        their count of periods and the actions still waiting for them (the env starts an
        episode with none pending); the other rows keep theirs."""
        self.flagged[rows] = False
        self.steps[rows] = 0
        for waiting in self._actions:
            waiting[rows] = 0.0

    def observe(self, momenta: np.ndarray) -> np.ndarray:
        """The wheels' momenta (N, n), N·m·s, as observed now: updates the test and returns
        the flags (N, n) (a flag stays)."""
        momenta = np.asarray(momenta, dtype=np.float64).reshape(-1, self.n)
        self._momenta = [*self._momenta, momenta][-(self.window + 1) :]
        if len(self._expected) >= self.window and len(self._momenta) == self.window + 1:
            residual = (self._momenta[-1] - self._momenta[0]) - np.sum(self._expected, axis=0)
            size = np.sum(np.abs(self._expected), axis=0)
            noise = self.sigmas * self.noise * self.dt * np.sqrt(np.sum(np.square(self._torques), axis=0))
            friction = self.window * self.dt * self.friction
            band = np.sum(self._band, axis=0)
            threshold = self.ratio * size + noise + friction + band + _ROUNDING * self.h_max
            whole = (self.steps >= self.window)[:, None]  # a whole window of the row's episode
            self.flagged |= whole & (np.abs(residual) > threshold)
        return self.flagged

    def commanded(self, actions: np.ndarray) -> None:
        """The actions (N, n) sent now: what they should do to the momenta just observed."""
        actions = np.asarray(actions, dtype=np.float64).reshape(-1, self.n)
        self._actions.append(actions)
        acting = self._actions.pop(0)  # the one that acts in this period
        h = self._momenta[-1]
        torque = acting * self.u_max
        edge = (np.abs(torque) >= self.deadband / (1.0 + self.spread)) & (
            np.abs(torque) < self.deadband / (1.0 - self.spread)
        )
        self._band = [*self._band, np.where(edge, np.abs(torque) * (1.0 + self.spread) * self.dt, 0.0)]
        self._band = self._band[-self.window :]
        torque = np.where(np.abs(torque) < self.deadband, 0.0, torque)
        after = np.clip(h + torque * self.dt, -self.h_max, self.h_max)
        self._expected = [*self._expected, after - h][-self.window :]
        self._torques = [*self._torques, torque][-self.window :]
        self.steps += 1


class Reallocating:
    """A controller that allocates over the wheels its :class:`WheelFaultDetector` has not
    flagged, with the controller's ``predict`` signature (one env's observations, or N
    rows; ``episode_start`` (N,) starts the test afresh for the rows that start new episodes,
    as a vector env's autoreset needs)."""

    def __init__(self, controller: Controller, detector: WheelFaultDetector):
        self.controller, self.detector = controller, detector
        self._wheels = slice(OBS_SIZE, OBS_SIZE + detector.n)

    def predict(
        self,
        observation: np.ndarray,
        state: Any = None,
        episode_start: np.ndarray | None = None,
        deterministic: bool = True,
    ) -> tuple[np.ndarray, Any]:
        """The controller's action once the test has seen the observation."""
        obs = np.asarray(observation)
        rows = obs.reshape(-1, obs.shape[-1])
        if self.detector.flagged.shape[0] != rows.shape[0]:
            self.detector.reset(rows.shape[0])
        elif episode_start is not None:
            self.detector.reset_rows(np.asarray(episode_start, dtype=bool).reshape(rows.shape[0]))
        flagged = self.detector.observe(rows[:, self._wheels].astype(np.float64) * self.detector.h_max)
        self.controller.healthy = ~flagged if flagged.any() else None
        action, state = self.controller.predict(observation, state, episode_start, deterministic)
        self.detector.commanded(
            np.asarray(action, dtype=np.float64).reshape(rows.shape[0], -1)[:, : self.detector.n]
        )
        return action, state
