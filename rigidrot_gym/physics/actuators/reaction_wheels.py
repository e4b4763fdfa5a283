"""Reaction-wheel motor and friction as Basilisk's balanced-wheel model has them.

Pure functions of one wheel's spin-axis quantities: the motor torque that Basilisk applies
for a commanded torque (:func:`motor_torque`), the bearing friction torque
(:func:`friction_torque`) and the switch between its two friction laws
(:func:`stribeck_engaged`). With them a balanced wheel of spin inertia J_s on a hub obeys

    J_s (Ω̇ + ĝ·ω̇) = u + τ_f,

Ω the wheel speed relative to the body, ĝ its spin axis, ω the hub's angular velocity (Basilisk's
``OmegasDot = (u_current + frictionTorque)/Js − gsHat_B·omegaDot_BN_B``). For one wheel on a
principal axis of a hub of inertia I about ĝ (I including J_s, as Basilisk's hub inertia does),
the total momentum I ω + J_s Ω is constant and J_s (1 − J_s/I) Ω̇ = u + τ_f.

Source: AVSLab/basilisk, ``src/simulation/dynamics/reactionWheels/reactionWheelStateEffector.cpp``
(``ConfigureRWRequests``: the command; ``updateContributions``: the friction), its model
description ``_Documentation/secModelDescription.tex`` (§ "Friction Model", after Olsson et al.,
"Friction models and friction compensation", Eur. J. Control 4, 176 (1998)), the defaults of
``RWConfigPayload.h`` and the presets of ``src/utilities/simIncludeRW.py`` (read at the 2.12
development head, checked against the ``bsk`` 2.12.1 wheel's ``simIncludeRW.py`` and by the
side-by-side tests in ``tests/test_reaction_wheels.py``).

Units: SI (N·m, rad/s, kg·m², N·m·s). Left out: Basilisk's optional power limit ``P_max`` (off
unless set; no preset sets it), its clamp on wheel acceleration (10⁶ rad/s²) and the
jitter (imbalance) models.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.plumbing.jit import jitable, select

# Basilisk's default ``omegaLimitCycle`` (RWConfigPayload.h): below this wheel speed the
# friction is replaced by a straight line through zero, which avoids a limit cycle about Ω = 0.
OMEGA_LIMIT_CYCLE = 1e-4  # rad/s

# Basilisk's ``macros.RPM``: the presets' speeds are given in rpm and converted with it.
RPM = 2.0 * math.pi / 60.0  # rad/s per rpm


def _limit(value, name: str) -> float:
    """A positive limit, finite or ``math.inf`` (none)."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_) and value == math.inf:
        return math.inf
    try:
        return validation.scalar(value, name, positive=True)
    except ValueError:
        raise ValueError(
            f"{name} must be a positive number (math.inf: no limit), got {validation.show(value)}"
        ) from None


@dataclass(frozen=True)
class WheelModel:
    """One reaction wheel's spin inertia, motor limits and friction coefficients.

    The constructor checks every field (a ``ValueError`` names it). ``u_max`` and ``omega_max``
    may be ``math.inf`` (no saturation, no speed limit: what Basilisk's negative values mean).

    Attributes:
        js: spin-axis inertia J_s of the rotor, kg·m², > 0 (Basilisk ``Js``).
        u_max: largest motor torque, N·m, > 0 (``u_max``).
        u_min: smallest motor torque, N·m, in [0, u_max]: a smaller command gives none
            (``u_min``; Basilisk applies it only with ``useMinTorque=True``).
        omega_max: wheel speed at which the motor stops driving the wheel faster, rad/s, > 0
            (``Omega_max``).
        coulomb: Coulomb friction τ_c, N·m, ≥ 0 (``fCoulomb``; Basilisk zeroes it unless the
            wheel is created with ``useRWfriction=True``).
        static: static friction τ_st, N·m, ≥ 0, and ≥ τ_c when Stribeck friction is on
            (``fStatic``).
        beta_static: Stribeck speed β_st, rad/s, non-zero: positive turns Stribeck friction on,
            negative leaves it off (``betaStatic``, default −1).
        viscous: viscous coefficient c_v, N·m·s, ≥ 0 (``cViscous``).
        omega_limit_cycle: speed ω_lc below which the friction is linear in Ω, rad/s, > 0
            (``omegaLimitCycle``, default :data:`OMEGA_LIMIT_CYCLE`).
    """

    js: float
    u_max: float
    u_min: float
    omega_max: float
    coulomb: float
    static: float = 0.0
    beta_static: float = -1.0
    viscous: float = 0.0
    omega_limit_cycle: float = OMEGA_LIMIT_CYCLE

    def __post_init__(self) -> None:
        def put(name: str, value: float) -> None:
            object.__setattr__(self, name, value)

        put("js", validation.scalar(self.js, "js", positive=True))
        for name in ("u_max", "omega_max"):  # a limit may be inf: none
            put(name, _limit(getattr(self, name), name))
        for name in ("u_min", "coulomb", "static", "viscous"):
            value = validation.scalar(getattr(self, name), name)
            if value < 0.0:
                raise ValueError(f"{name} must be a finite number ≥ 0, got {value!r}")
            put(name, value)
        if self.u_min > self.u_max:
            raise ValueError(f"u_min must be at most u_max = {self.u_max!r}, got {self.u_min!r}")
        beta = validation.scalar(self.beta_static, "beta_static")
        if beta == 0.0:  # as simIncludeRW refuses it: the sign is the switch
            raise ValueError(
                "beta_static must be non-zero (positive: Stribeck friction on, negative: off), got 0.0"
            )
        put("beta_static", beta)
        if beta > 0.0 and self.static < self.coulomb:
            raise ValueError(
                f"static must be at least coulomb = {self.coulomb!r} when Stribeck friction is on "
                f"(beta_static > 0), got {self.static!r}"
            )
        put(
            "omega_limit_cycle", validation.scalar(self.omega_limit_cycle, "omega_limit_cycle", positive=True)
        )

    @property
    def stribeck(self) -> bool:
        """Whether Stribeck friction is on (β_st > 0)."""
        return self.beta_static > 0.0

    @property
    def max_momentum(self) -> float:
        """J_s Ω_max, N·m·s."""
        return self.js * self.omega_max


# -- Presets: src/utilities/simIncludeRW.py (rwFactory), as the bsk 2.12.1 wheel has it -------
# J_s is the file's maxMomentum / Omega_max (Omega_max = rpm · macros.RPM); u_min is the
# preset's (create() zeroes it unless useMinTorque=True); static, beta_static and viscous keep
# RWConfigPayload's defaults (0, −1: Stribeck off, 0), which no preset changes.

HONEYWELL_HR16_MOMENTA = (100.0, 75.0, 50.0)  # N·m·s, the three variants of the file


def honeywell_hr16(max_momentum: float = 50.0) -> WheelModel:
    """Honeywell HR16 (``Honeywell_HR16``): 6000 rpm, u_max 0.2 N·m, u_min 1e-5 N·m,
    τ_c 5e-4 N·m (the file's comment calls it "static friction torque"), J_s = H_max/Ω_max
    for H_max of 100, 75 or 50 N·m·s (Honeywell's Constellation-series data sheet)."""
    if max_momentum not in HONEYWELL_HR16_MOMENTA:
        raise ValueError(f"max_momentum must be one of {HONEYWELL_HR16_MOMENTA} N·m·s, got {max_momentum!r}")
    omega_max = 6000.0 * RPM
    return WheelModel(
        js=max_momentum / omega_max, u_max=0.200, u_min=0.00001, omega_max=omega_max, coulomb=0.0005
    )


# The 50 N·m·s variant, the one Basilisk's examples fly.
HONEYWELL_HR16 = honeywell_hr16(50.0)

# BCT RWP015 (``BCT_RWP015``): 6000 rpm, 4 mN·m, 15 mN·m·s. The file says "Not complete; fields
# not listed are estimates" (its source is BCT's data sheet; τ_c 5e-5 N·m is not on it).
BCT_RWP015 = WheelModel(
    js=0.015 / (6000.0 * RPM), u_max=0.004, u_min=0.00001, omega_max=6000.0 * RPM, coulomb=0.00005
)

# NanoAvionics RW0 (``NanoAvionics_RW0``): 6500 rpm, 3.2 mN·m, 20 mN·m·s; u_min "derived as
# u_max · 100 rpm / 6500 rpm"; τ_c 5e-5 N·m marked "Guestimate" in the file.
NANOAVIONICS_RW0 = WheelModel(
    js=20.0e-3 / (6500.0 * RPM), u_max=3.2e-3, u_min=0.04923e-3, omega_max=6500.0 * RPM, coulomb=0.00005
)


# The presets by the names Basilisk's rwFactory gives them (the scenario files' wheel_model).
PRESETS = {"HR16": HONEYWELL_HR16, "RWP015": BCT_RWP015, "RW0": NANOAVIONICS_RW0}


@jitable
def motor_torque(u_cmd, omega, u_max, u_min, omega_max):
    """The motor torque (N·m) Basilisk applies for the command ``u_cmd`` (N·m) at the wheel
    speed ``omega`` (rad/s), in the order of ``ConfigureRWRequests``:

    1. saturation: u = clip(u_cmd, −u_max, u_max);
    2. deadband: u = 0 where |u| < u_min (applied to the saturated command);
    3. speed limit: u = 0 where |Ω| ≥ Ω_max and Ω·u ≥ 0, i.e. the motor may still slow a wheel
       at or beyond Ω_max but not drive it faster; a single threshold, no hysteresis.

    Basilisk evaluates this once per simulation tick, with Ω the wheel speed at the start of the
    integration step, and holds u over the step. Floats or arrays (broadcast); branch-free.
    """
    u = select(u_cmd > u_max, u_max, select(u_cmd < -u_max, -u_max, u_cmd))
    u = select(np.abs(u) < u_min, 0.0, u)
    return select((np.abs(omega) >= omega_max) & (omega * u >= 0.0), 0.0, u)


@jitable
def stribeck_engaged(engaged, omega, omega_before, beta_static, omega_limit_cycle):
    """Basilisk's switch between its friction laws (``updateContributions``): whether the
    Stribeck law applies at the wheel speed ``omega``, given whether it applied at the previous
    evaluation (``engaged``) and the speed ``omega_before`` at the start of the current tick.

    The Stribeck law describes a wheel starting from rest: it engages where
    |Ω| < 0.1 ω_lc (and β_st > 0) and stays engaged while Ω and Ω − Ω_before do not have
    opposite signs, i.e. while the wheel is not slowing down; once it slows (it has "broken
    free"), the Coulomb law applies until the speed comes within 0.1 ω_lc of zero again.

    Basilisk evaluates this at every integration stage, so whether a stage lands within
    0.1 ω_lc of zero (and the law engages at all) depends on the step. Floats or arrays.
    """
    on = (engaged | (np.abs(omega) < 0.1 * omega_limit_cycle)) & (beta_static > 0.0)
    # Basilisk: abs(sgn Ω − sgn(Ω − Ω_before)) < 2, false only for opposite signs.
    return on & (np.abs(np.sign(omega) - np.sign(omega - omega_before)) < 2.0)


@jitable
def _stribeck_law(omega, coulomb, static, beta, viscous):
    # The magnitude of Basilisk's Stribeck friction, sign included (it is odd in Ω).
    x = omega / (beta * np.sqrt(2.0))
    return (
        np.sqrt(2.0 * np.e) * (static - coulomb) * np.exp(-x * x) * x
        + coulomb * np.tanh(10.0 * omega / beta)
        + viscous * omega
    )


@jitable
def friction_torque(omega, stribeck, coulomb, static, beta_static, viscous, omega_limit_cycle):
    """The bearing friction torque τ_f (N·m) on a wheel spinning at ``omega`` (rad/s) relative
    to the body, as Basilisk's ``updateContributions`` computes it.

    Where ``stribeck`` is true and β_st > 0 (a wheel starting from rest, see
    :func:`stribeck_engaged`), the Stribeck law with x = Ω/(√2 β_st):

        τ_f = −√(2e) (τ_st − τ_c) e^(−x²) x − τ_c tanh(10 Ω/β_st) − c_v Ω;

    its first term peaks at x = 1/√2, i.e. at Ω = β_st, with magnitude τ_st − τ_c. (The model
    description, eq. "friction", prints the first term without the factor Ω/β_st and with
    e^(−(Ω/β_st)²); this is the source's form.) Otherwise the Coulomb law

        τ_f = −τ_c sgn(Ω) − c_v Ω,  sgn(0) = 0.

    Below ω_lc both are replaced by the straight line τ_f = (τ_f(ω_lc)/ω_lc) Ω through zero,
    continuous at |Ω| = ω_lc (Basilisk: "avoids the limit cycle that can occur with friction"),
    so that the friction is finite-slope and zero at rest. Floats or arrays (broadcast).
    """
    # A non-positive β (Stribeck off) would still be divided by in the branch not taken.
    beta = select(beta_static > 0.0, beta_static, 1.0)
    use_stribeck = stribeck & (beta_static > 0.0)
    resisting = select(
        use_stribeck,
        _stribeck_law(omega, coulomb, static, beta, viscous),
        np.sign(omega) * coulomb + viscous * omega,
    )
    at_limit = select(
        use_stribeck,
        _stribeck_law(omega_limit_cycle, coulomb, static, beta, viscous),
        coulomb + viscous * omega_limit_cycle,
    )
    resisting = select(np.abs(omega) < omega_limit_cycle, at_limit / omega_limit_cycle * omega, resisting)
    return -resisting
