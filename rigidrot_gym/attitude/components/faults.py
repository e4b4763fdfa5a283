"""Faults: a reaction wheel that stops, sticks or loses a share of its torque, a thruster
stuck off or on, and a star tracker, magnetometer or gyro axis that drops out for a span,
at a time given or drawn per episode (seeded, as every per-episode draw), reported in
``info`` and, if asked, shown to the agent.

Each body has one fault time t_f per episode: ``faults.time`` if given, else drawn uniformly
in ``faults.window`` = [t₀, t₁] from its per-episode variates (t_f = t₀ + (t₁ − t₀) u). The
failing wheel is ``faults.wheel_index``, or drawn uniformly among the n wheels (⌊n u⌋); the
failing thruster ``faults.thruster_index``, or drawn among the eight by the same variate
(⌊8 u⌋: wheels and thrusters never fly together, so one draw, ``faults.actuator``, serves
both, and a thruster's fault adds no draw to any scenario's stream).

Wheels (the torque u of stage 2, :mod:`~rigidrot_gym.attitude.stages.actuate`, from the first
control period that starts at or after t_f, i.e. at episode time k Δt ≥ t_f, on):

* ``stop``: its motor torque is zero (the motor is lost). An ideal wheel has no friction, so
  it keeps its momentum h_w; a real wheel (a Basilisk preset) coasts down under its bearing
  friction, which still acts.
* ``stick``: the wheel turns with the body (a seized bearing): its speed relative to the body
  is held and no torque passes between it and the body, so h_w is held where it was at the
  fault and the body's total angular momentum J ω + A h_w is conserved with the wheel's share
  of it frozen. In this package's model h_w is the wheel's relative spin momentum, which the
  seized bearing holds exactly; what the real wheel's spin inertia J_s carries of the body's
  rate (J_s ĝ·ω) is left in the body's inertia, as it is for every wheel. For an ideal wheel
  stick and stop coincide (no friction to tell them apart); for a real one, stick also
  removes the friction (no relative motion, nothing to rub).
* ``degrade``: its motor torque × (1 − ``share``) (the command, before a real wheel's motor
  rule and friction and an ideal wheel's momentum limit).

Thrusters (:func:`~rigidrot_gym.attitude.components.thrusters.hold`, from the first control
period that starts at or after t_f on): the failing thruster's whole sub-steps of firing,
computed as the flight software commands them (its torque request mapped and modulated, or
its commanded on-time), are replaced by what it does:

* ``off``: none (stuck closed: it fires nothing, whatever is commanded);
* ``on``: all of the period's ``substeps`` (stuck open: on-time Δt every period, burning
  F Δt/(Isp g₀) each).

The modulation's memory is kept as the flight software computed it (it does not know), and
``info["thruster_on_times"]`` and ``info["propellant"]`` report what fired.

Sensors (stage 7, :mod:`~rigidrot_gym.attitude.stages.sense`; a reading at episode time
t = s Δt is lost while t_f ≤ t ≤ t_f + span):

* the star tracker measures nothing (its fresh flag is 0; the estimator propagates);
* the magnetometer's reading is held at its last (a stale sample, as a flight computer keeps
  its last good value); at the episode's first reading there is none to hold, and it reads;
* one gyro axis (``gyro_dropout_axis``) reads zero.

``info``: ``fault_time`` (t_f, s), ``fault_wheel`` (the failing wheel's index, where a wheel
fails), ``fault_thruster`` (the failing thruster's, where a thruster fails) and
``fault_happened`` (whether the episode time has reached t_f). The observation shows nothing
of a fault (``faults.hidden``, the default), or one more column: 0 until the episode time
reaches t_f, then the failing wheel's or thruster's index + 1, or 1 where only a sensor
fails. :mod:`rigidrot_gym.control.fault_detection` and
:mod:`rigidrot_gym.control.thruster_faults` find a failed wheel or thruster from what a
controller sees, and reallocate.

Left out: faults that clear (but the dropouts), several faults at once, a fault time per
fault kind, and a thruster's partial thrust.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from rigidrot_gym.attitude.components import star_tracker
from rigidrot_gym.attitude.components.declaration import Column, Component, Draw, Feature, Info, State
from rigidrot_gym.attitude.settings import (
    Check,
    ScenarioError,
    Table,
    bounded,
    choice,
    flag,
    integer,
    invalid,
    non_negative,
    setting,
    vector,
)
from rigidrot_gym.physics.plumbing.jit import jitable

# Features.wheel_fault: none, or the kind of the wheel's fault.
WHEEL_FAULTS = ("none", "stop", "stick", "degrade")
NONE, STOP, STICK, DEGRADE = range(4)
# Features.thruster_fault and FaultModel.thruster: none, or the kind of the thruster's fault.
THRUSTER_FAULTS = ("none", "off", "on")
STUCK_OFF, STUCK_ON = 1, 2
THRUSTERS = 8  # the thrusters of the layout (thrusters.COUNT)
DRAWN = "drawn"
# The observation column's top: a failing actuator's index + 1 (eight thrusters at most).
_TOP = float(THRUSTERS)


class FaultModel(NamedTuple):
    """Equipment.fault_model: what fails and for how long."""

    share: float  # the share of a degraded wheel's torque that it loses
    tracker_span: float  # s, the star tracker's dropout (0: none)
    magnetometer_span: float  # s
    gyro_span: float  # s
    gyro_axis: float  # the gyro axis that drops out, 0, 1 or 2
    thruster: float  # the thruster's fault: 0 none, 1 stuck off (STUCK_OFF), 2 stuck on (STUCK_ON)


def _time(value: Any, where: str) -> float | str:
    if isinstance(value, str) and value == DRAWN:
        return DRAWN
    try:
        return non_negative(value, where)
    except ScenarioError:
        raise invalid(where, f'a number ≥ 0 (s), or "{DRAWN}"', value) from None


class FaultsTable(Table, key="faults"):
    """A wheel's fault and sensor dropouts, at one time per episode, given or drawn."""

    wheel: str = setting(
        "none",
        check=choice(WHEEL_FAULTS),
        flat="wheel_fault",
        switch=True,
        doc='"none", or a wheel\'s fault from the fault time on: "stop" (motor torque zero), "stick" '
        '(seized: its momentum held, no torque to the body) or "degrade" (torque × (1 − share))',
    )
    wheel_index: int = setting(
        -1,
        check=integer(-1, 3),
        flat="wheel_fault_index",
        doc="the failing wheel (0-based); -1: drawn uniformly among the wheels per episode",
    )
    thruster: str = setting(
        "none",
        check=choice(THRUSTER_FAULTS),
        flat="thruster_fault",
        switch=True,
        doc='"none", or a thruster\'s fault from the fault time on: "off" (stuck off: it fires nothing) '
        'or "on" (stuck on: it fires the whole period)',
    )
    thruster_index: int = setting(
        -1,
        check=integer(-1, THRUSTERS - 1),
        flat="thruster_fault_index",
        doc="the failing thruster (0-based); -1: drawn uniformly among the eight per episode",
    )
    share: float = setting(
        0.5,
        check=bounded(1.0, positive=True),
        flat="wheel_fault_share",
        doc='the share of its torque a "degrade" wheel loses',
    )
    time: float | str = setting(
        DRAWN,
        check=Check(f'a number ≥ 0, or "{DRAWN}"', _time),
        unit="s",
        flat="fault_time",
        doc=f'the fault time t_f, or "{DRAWN}": uniform in the window, per episode',
    )
    window: tuple[float, float] = setting(
        (0.0, 60.0),
        check=vector(2),
        unit="s",
        flat="fault_window",
        doc="[t₀, t₁], 0 ≤ t₀ ≤ t₁: where a drawn fault time lies",
    )
    star_tracker_dropout: float = setting(
        0.0,
        check=non_negative,
        unit="s",
        flat="star_tracker_dropout",
        switch=True,
        doc="the star tracker measures nothing over [t_f, t_f + this] (0: no dropout)",
    )
    magnetometer_dropout: float = setting(
        0.0,
        check=non_negative,
        unit="s",
        flat="magnetometer_dropout",
        switch=True,
        doc="the magnetometer holds its last reading over [t_f, t_f + this] (0: no dropout)",
    )
    gyro_dropout: float = setting(
        0.0,
        check=non_negative,
        unit="s",
        flat="gyro_dropout",
        switch=True,
        doc="one gyro axis reads zero over [t_f, t_f + this] (0: no dropout)",
    )
    gyro_dropout_axis: int = setting(
        0, check=integer(0, 2), flat="gyro_dropout_axis", doc="the axis that drops out"
    )
    hidden: bool = setting(
        True,
        check=flag,
        flat="faults_hidden",
        doc="the observation shows nothing of a fault; false: one column, 0 until t_f, then the "
        "failing wheel's or thruster's index + 1 (1 where only a sensor fails)",
    )


def _any(s) -> bool:
    return (
        s.wheel_fault != "none"
        or s.thruster_fault != "none"
        or (s.star_tracker_dropout, s.magnetometer_dropout, s.gyro_dropout)
        != (
            0.0,
            0.0,
            0.0,
        )
    )


def _switch(s) -> str:
    if s.wheel_fault != "none":
        return "faults.wheel"
    if s.thruster_fault != "none":
        return "faults.thruster"
    for key in ("star_tracker_dropout", "magnetometer_dropout", "gyro_dropout"):
        if getattr(s, key):
            return f"faults.{key}"
    return "faults.wheel"


def _needs_what_fails(s) -> None:
    """Each fault needs what it fails (the wheels, the thrusters, the sensor), and a given
    index its wheel."""
    wheels = {"none": 0, "orthogonal": 3, "pyramid": 4}[s.wheel_layout]
    if s.wheel_fault != "none" and not wheels:
        raise ScenarioError(f"faults.wheel = {s.wheel_fault!r} needs wheels.layout (the wheel that fails)")
    if s.wheel_fault != "none" and s.wheel_fault_index >= wheels:
        raise ScenarioError(
            f"faults.wheel_index: expected -1 or a wheel's index in [0, {wheels - 1}] "
            f"({s.wheel_layout}), got {s.wheel_fault_index}"
        )
    if s.thruster_fault != "none" and s.thruster_layout == "none":
        raise ScenarioError(
            f"faults.thruster = {s.thruster_fault!r} needs thrusters.layout (the thruster that fails)"
        )
    for key, model in (
        ("star_tracker_dropout", "star_tracker.model"),
        ("magnetometer_dropout", "magnetometer.model"),
        ("gyro_dropout", "gyro.model"),
    ):
        if getattr(s, key) and getattr(s, model.replace(".", "_")) == "none":
            raise ScenarioError(f"faults.{key} needs {model} (the sensor that drops out)")


def _window_is_ordered(s) -> None:
    low, high = s.fault_window
    if not 0.0 <= low <= high:
        raise ScenarioError(
            f"faults.window: expected [t₀, t₁] with 0 ≤ t₀ ≤ t₁ (s), got {list(s.fault_window)}"
        )


def _reset(episode) -> None:
    """Each starting body's fault time and failing wheel or thruster, from its draws."""
    s, e, rows, d = episode.batch.scenario, episode.equipment, episode.rows, episode.draws
    low, high = s.fault_window
    drawn = low + (high - low) * d["faults.time"]
    e.fault_time[rows] = drawn if s.fault_time == DRAWN else s.fault_time
    thruster = s.thruster_fault != "none"
    count = THRUSTERS if thruster else e.wheel_momentum.shape[1]
    index = s.thruster_fault_index if thruster else s.wheel_fault_index
    if index >= 0:
        e.fault_actuator[rows] = index
    else:  # ⌊n u⌋, u < 1
        e.fault_actuator[rows] = np.minimum(np.floor(count * d["faults.actuator"]), max(count - 1, 0))
    e.fault_happened[rows] = e.fault_time[rows] <= 0.0


@jitable
def wheel_torque(equipment, kind, t, u, k, i):
    """Body i's wheel k's motor command ``u`` (N·m) in the period that starts at episode time
    ``t`` (s), with the wheel fault ``kind`` (STOP, STICK, DEGRADE): ``(u, stuck)``, the command
    it gets and whether the wheel is seized (no torque at all passes, friction included)."""
    if k != equipment.fault_actuator[i] or t < equipment.fault_time[i]:
        return u, False
    if kind == DEGRADE:
        return u * (1.0 - equipment.fault_model.share), False
    return 0.0, kind == STICK


@jitable
def thruster_substeps(equipment, substeps, whole, t, k, i):
    """Body i's thruster k's whole sub-steps of firing in the period that starts at episode
    time ``t`` (s), commanded ``whole`` of the period's ``substeps``: from the first period
    at or after t_f, the failing thruster's 0 (stuck off) or ``substeps`` (stuck on). Reads
    ``fault_model`` (a thrusters' scenario always carries it: 0, no fault, without faults)
    and, only where a thruster fails, the fault time and index."""
    kind = equipment.fault_model.thruster
    if kind == 0.0 or k != equipment.fault_actuator[i] or t < equipment.fault_time[i]:
        return whole
    return substeps if kind == STUCK_ON else 0.0


@jitable
def dropped(equipment, span, t, i):
    """Whether body i's sensor with a dropout of ``span`` (s) reads nothing at episode time
    ``t`` (s): t_f ≤ t ≤ t_f + span."""
    start = equipment.fault_time[i]
    return start <= t <= start + span


@jitable
def miss(equipment, i):
    """Body i's star tracker measures nothing this period (its fresh flag 0); returns False,
    what :func:`~rigidrot_gym.attitude.components.star_tracker.measure` returns then."""
    equipment.tracker[i, star_tracker.FRESH] = 0.0
    return False


@jitable
def zero_gyro_axis(equipment, i):
    """Body i's gyro reading on the dropped axis is zero."""
    equipment.gyro[i, 6 + int(equipment.fault_model.gyro_axis)] = 0.0


def _observe_of(features):
    """The observation's hook: whether body i's episode time has reached its fault time (in
    ``info``) and, where faults are shown, the column that says which actuator failed."""
    if not features.faults:
        return None
    shown = features.faults_shown
    actuator = features.wheel_fault != NONE or features.thruster_fault != NONE

    @jitable
    def write(call, bodies, equipment, state, out, column, i):
        happened = call.dt * bodies.steps[i] >= equipment.fault_time[i]
        equipment.fault_happened[i] = happened
        if shown:
            flag = 0.0
            if happened:
                flag = equipment.fault_actuator[i] + 1.0 if actuator else 1.0
            out.obs[i, column] = flag
            return column + 1
        return column

    return write


def _read(features) -> bool:
    return features.faults or features.thrusters


def _model(s) -> FaultModel:
    return FaultModel(
        float(s.wheel_fault_share),
        float(s.star_tracker_dropout),
        float(s.magnetometer_dropout),
        float(s.gyro_dropout),
        float(s.gyro_dropout_axis),
        float(THRUSTER_FAULTS.index(s.thruster_fault)),
    )


COMPONENT = Component(
    name="faults",
    summary="a wheel that stops, sticks or degrades; a thruster stuck off or on; star tracker, "
    "magnetometer or gyro-axis dropouts; at a time given or drawn per episode",
    table=FaultsTable,
    on=_any,
    switch=_switch,
    rules=(_needs_what_fails, _window_is_ordered),
    features=(
        Feature("faults", lambda s, f: _any(s), "a fault at a time given or drawn per episode"),
        Feature(
            "wheel_fault",
            lambda s, f: WHEEL_FAULTS.index(s.wheel_fault) if f["wheels"] else NONE,
            "a wheel's fault: 0 none, 1 stop, 2 stick, 3 degrade",
        ),
        Feature(
            "thruster_fault",
            lambda s, f: THRUSTER_FAULTS.index(s.thruster_fault) if f["thrusters"] else NONE,
            "a thruster's fault: 0 none, 1 stuck off, 2 stuck on",
        ),
        Feature(
            "tracker_dropout",
            lambda s, f: f["star_tracker"] and s.star_tracker_dropout > 0.0,
            "the star tracker drops out",
        ),
        Feature(
            "magnetometer_dropout",
            lambda s, f: f["magnetometer"] and s.magnetometer_dropout > 0.0,
            "the magnetometer holds its last reading",
        ),
        Feature("gyro_dropout", lambda s, f: f["gyro"] and s.gyro_dropout > 0.0, "a gyro axis reads zero"),
        Feature(
            "faults_shown", lambda s, f: _any(s) and not s.faults_hidden, "the observation shows a fault"
        ),
    ),
    state=(
        # The thrusters' hold (compiled once for every scenario with thrusters) reads the
        # fault model, and the time and index where it says a thruster fails: a thrusters'
        # scenario carries them, faults or not (empty arrays and no fault without).
        State(
            "fault_time",
            "(N,) each body's fault time t_f, s",
            lambda b: np.zeros(b.bodies if b.features.faults else 0),
            _read,
        ),
        State(
            "fault_actuator",
            "(N,) each body's failing wheel or thruster",
            lambda b: np.zeros(b.bodies if b.features.faults else 0, dtype=np.int64),
            _read,
        ),
        State(
            "fault_happened",
            "(N,) bool: each body's episode time has reached t_f",
            lambda b: np.zeros(b.bodies if b.features.faults else 0, dtype=bool),
            lambda f: f.faults,
        ),
        State(
            "fault_model",
            "what fails and for how long (FaultModel)",
            lambda b: _model(b.scenario),
            _read,
            record=FaultModel,
        ),
    ),
    reset=_reset,
    keeps_digests=True,
    # "actuator" (once "wheel": a name, not a place in the stream): the failing wheel's or thruster's
    draws=(Draw("time", 1), Draw("actuator", 1)),
    columns=(
        Column(
            "fault",
            "0 until the fault time, then the failing wheel's or thruster's index + 1 (1: a sensor's fault)",
            0.0,
            _TOP,
            lambda s, actuators: 1 if _any(s) and not s.faults_hidden else 0,
            "one",
            "``faults_hidden = false``",
            unit="1 (an index)",
        ),
    ),
    info=(
        Info("fault_time", "(N,) the fault time t_f, s", lambda f: f.faults, lambda e: e.fault_time),
        Info(
            "fault_wheel",
            "(N,) the failing wheel's index",
            lambda f: f.wheel_fault != NONE,
            lambda e: e.fault_actuator,
        ),
        Info(
            "fault_thruster",
            "(N,) the failing thruster's index",
            lambda f: f.thruster_fault != NONE,
            lambda e: e.fault_actuator,
        ),
        Info(
            "fault_happened",
            "(N,) bool: the episode time has reached t_f",
            lambda f: f.faults,
            lambda e: e.fault_happened,
        ),
    ),
    observe=_observe_of,
)
