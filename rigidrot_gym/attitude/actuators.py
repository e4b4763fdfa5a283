"""A scenario's actuators as the controllers and tools see them: ideal torquers about the
body axes (τ = a ⊙ τ_max), a reaction-wheel assembly (τ = −A u;
:mod:`~rigidrot_gym.attitude.components.wheels`), magnetorquers (dipoles m = a ⊙ m_max,
τ = m × B; :mod:`~rigidrot_gym.attitude.components.magnetorquers`), or wheels and
magnetorquers together (the rods unload the wheels), with their axes and limits, by kind,
each in its own unit. The action holds one entry per actuator: the wheels' (or torquers')
first, then the rods'."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rigidrot_gym.attitude.components import thrusters
from rigidrot_gym.attitude.components.wheels import wheel_axes
from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.physics.actuators import reaction_wheels


@dataclass(frozen=True)
class Kind:
    """Actuators of one kind, alike but for their axes.

    Attributes:
        name: ``"torquers"`` (ideal torques about their axes), ``"wheels"`` (reaction
            wheels: their motor torques turn the body backwards), ``"rods"``
            (magnetorquers: a dipole, no torque of its own) or ``"thrusters"`` (a torque
            request about each body axis, or each thruster's on-time:
            :mod:`~rigidrot_gym.attitude.components.thrusters`).
        axes: (3, k) their body-frame axes (thrusters' on-times: each one's arm r × d, m).
        limits: (k,) each one's limit, in ``unit``.
        unit: ``"N·m"`` (a torque), ``"A·m²"`` (a dipole) or ``"s"`` (an on-time).
        max_momentum: (k,) each one's momentum limit, N·m·s (inf but for wheels).
    """

    name: str
    axes: np.ndarray
    limits: np.ndarray
    unit: str
    max_momentum: np.ndarray

    @property
    def count(self) -> int:
        return self.axes.shape[1]


@dataclass(frozen=True)
class Actuators:
    """The actuators of a scenario, by kind (:class:`Kind`): the torquers or the wheels,
    then the rods. The action holds one entry per actuator in that order, each scaled by
    its limit in its kind's unit.

    Attributes:
        kinds: the kinds it has, in the action's order.
    """

    kinds: tuple[Kind, ...]

    @classmethod
    def torquers(cls, max_torque) -> Actuators:
        """Ideal torquers about the body axes with per-axis limits ``max_torque`` (3,), N·m.

        Raises:
            ValueError: unless ``max_torque`` is three positive finite numbers.
        """
        limits = np.asarray(max_torque, dtype=np.float64)
        if limits.shape != (3,) or not np.all(np.isfinite(limits)) or not np.all(limits > 0):
            raise ValueError(f"max_torque must be 3 positive numbers, got {max_torque!r}")
        return cls((Kind("torquers", np.eye(3), limits, "N·m", np.full(3, np.inf)),))

    @classmethod
    def of(cls, scenario: Scenario) -> Actuators:
        """The scenario's actuators."""
        if scenario.thruster_layout != "none":
            return cls((cls._thrusters(scenario),))
        if not scenario.wheels and not scenario.magnetorquers:
            return cls.torquers(scenario.max_torque)
        kinds = (cls._wheels(scenario),) if scenario.wheels else ()
        if scenario.magnetorquers:  # with the wheels, or in place of the torquers
            dipoles = np.asarray(scenario.magnetorquer_max_dipole, dtype=np.float64)
            kinds += (Kind("rods", np.eye(3), dipoles, "A·m²", np.full(3, np.inf)),)
        return cls(kinds)

    @staticmethod
    def _thrusters(scenario: Scenario) -> Kind:
        table = scenario.propulsion
        if table.command == "torque":  # a torque request about each body axis
            return Kind("thrusters", np.eye(3), thrusters.max_torque(table), "N·m", np.full(3, np.inf))
        arms = thrusters.thruster_set(table).torque_arms.T  # on-times: per thruster, its arm
        return Kind(
            "thrusters", arms, np.full(arms.shape[1], scenario.dt), "s", np.full(arms.shape[1], np.inf)
        )

    @staticmethod
    def _wheels(scenario: Scenario) -> Kind:
        axes = wheel_axes(scenario.wheel_layout)
        n = axes.shape[1]
        if scenario.wheel_model != "ideal":  # the preset's motor limit and momentum at top speed
            model = reaction_wheels.PRESETS[scenario.wheel_model]
            return Kind("wheels", axes, np.full(n, model.u_max), "N·m", np.full(n, model.max_momentum))
        limits, momentum = np.full(n, scenario.wheel_max_torque), np.full(n, scenario.wheel_max_momentum)
        return Kind("wheels", axes, limits, "N·m", momentum)

    def _joined(self, field: str, empty: np.ndarray) -> np.ndarray:
        parts = [getattr(kind, field) for kind in self.kinds]
        return np.concatenate(parts, axis=-1) if parts else empty

    @property
    def axes(self) -> np.ndarray:
        """(3, n) body-frame axes (torquers or wheel spin axes, then rods)."""
        return self._joined("axes", np.zeros((3, 0)))

    @property
    def limits(self) -> np.ndarray:
        """(n,) each actuator's limit in its kind's unit (N·m; A·m² for rods): what an
        action of ±1 commands."""
        return self._joined("limits", np.zeros(0))

    @property
    def max_momentum(self) -> np.ndarray:
        """(n,) wheel momentum limits, N·m·s (inf for the others)."""
        return self._joined("max_momentum", np.zeros(0))

    @property
    def wheels(self) -> bool:
        """Reaction wheels (τ_body = −A u) rather than torquers."""
        return any(kind.name == "wheels" for kind in self.kinds)

    @property
    def rods(self) -> int:
        """How many of the n are magnetorquers, the last entries (actions are their
        dipoles: no torque of their own)."""
        return sum(kind.count for kind in self.kinds if kind.name == "rods")

    @property
    def count(self) -> int:
        """Number of actuators n (the action size)."""
        return self.axes.shape[1]

    @property
    def torquing(self) -> int:
        """Number of actuators that give torques of their own (torquers or wheels): the
        first n − ``rods``."""
        return self.count - self.rods

    @property
    def max_torque(self) -> np.ndarray:
        """(n − rods,) the torquing actuators' torque limits, N·m."""
        return self.limits[: self.torquing]

    @property
    def max_dipole(self) -> np.ndarray:
        """(rods,) the magnetorquers' dipole limits, A·m² (empty without them)."""
        return self.limits[self.torquing :]

    @property
    def sign(self) -> float:
        """+1 for torquers; −1 for wheels, whose motor torque turns the body backwards."""
        return -1.0 if self.wheels else 1.0

    def _torques(self) -> None:
        if any(kind.unit == "s" for kind in self.kinds):
            raise ValueError(
                "thrusters commanded by on-times take no torque allocation: use thruster_command='torque'"
            )

    def body_torque(self, commands: np.ndarray) -> np.ndarray:
        """Body torque (..., 3), N·m, of the torquing actuators' torques (..., n − rods), N·m
        (the thrusters': their torque request)."""
        self._torques()
        return self.sign * np.asarray(commands) @ self.axes[:, : self.torquing].T

    def commands_for(self, torque: np.ndarray, healthy: np.ndarray | None = None) -> np.ndarray:
        """The torquing actuators' torques (..., n − rods), N·m, of least norm that give the
        body torque (..., 3), N·m (exact when their axes span the body frame).

        ``healthy``: (n − rods,) or (..., n − rods) bool, the actuators to allocate over (the
        pseudo-inverse of the healthy ones' axes; the others get zero); None: all."""
        self._torques()
        axes = self.axes[:, : self.torquing]
        if healthy is None:
            return self.sign * np.asarray(torque) @ np.linalg.pinv(axes).T
        torque = np.asarray(torque, dtype=np.float64)
        healthy = np.asarray(healthy, dtype=bool)
        if healthy.ndim == 0 or healthy.shape[-1] != self.torquing:
            raise ValueError(f"healthy must have {self.torquing} entries per row, got shape {healthy.shape}")
        mask = np.broadcast_to(healthy, (*torque.shape[:-1], self.torquing))
        flat_mask, flat_torque = mask.reshape(-1, self.torquing), torque.reshape(-1, 3)
        out = np.zeros_like(flat_mask, dtype=np.float64)
        for row in np.unique(flat_mask, axis=0):
            rows = np.all(flat_mask == row, axis=1)
            out[np.ix_(rows, row)] = self.sign * flat_torque[rows] @ np.linalg.pinv(axes[:, row]).T
        return out.reshape(mask.shape)

    def momentum(self, wheel_momenta: np.ndarray) -> np.ndarray:
        """Body-frame wheel momentum h = A h_w (..., 3) of wheel momenta (..., n − rods), N·m·s."""
        return np.asarray(wheel_momenta) @ self.axes[:, : self.torquing].T
