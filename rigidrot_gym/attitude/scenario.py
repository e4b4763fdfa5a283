"""Scenarios: the data that defines an attitude-control task, read from TOML files.

One file per scenario in the top-level ``envs/`` folder (shipped inside the package as
``rigidrot_gym/scenarios``); each becomes a registered Gymnasium id. A file::

    id = "RigidRot/Reorient-v0"
    description = "..."

    [body]                       # exactly one of: moments, tensor, parts
    moments = [0.03, 0.035, 0.025]          # principal moments, kg·m²
    # tensor = [[...], [...], [...]]        # body-frame tensor, kg·m²
    # [[body.parts]]                        # composed with rigidrot_gym.physics.inertia
    # shape = "solid_box"; mass = 10.0; size = [0.3, 0.3, 0.5]
    # position = [0, 0, 0]; orientation = [1, 0, 0, 0]

    [actuator]
    max_torque = [0.002, 0.002, 0.002]      # N·m per body axis

    [simulation]
    dt = 0.2                 # control period, s
    substeps = 2             # integration steps per control period
    integrator = "rk4"       # any registered method
    max_episode_steps = 300

    [start]
    attitude = "random"      # "random" (uniform), "near_target", or [w, x, y, z]
    max_angle_deg = 180.0    # "near_target": uniform axis, angle uniform in [0, this]
    rate = [0.0, 0.0, 0.0]   # mean initial body rates, rad/s
    rate_spread = 0.01       # each axis adds a uniform draw in ±this, rad/s

    [target]
    attitude = "random"      # "random" (uniform) or [w, x, y, z]

    [tolerance]
    pointing_deg = 2.0       # success: pointing error below this, deg ...
    rate = 0.01              # ... and |ω| below this, rad/s

    [termination]
    max_rate = 0.5           # |ω| above this ends the episode (terminated), rad/s
    success_hold_steps = 0   # consecutive successful steps that end it; 0: never

    [reward]                 # weights of the reward terms (see AttitudeEnv)
    angle = 1.0
    rate = 0.1
    torque = 0.01
    success = 1.0
    unsafe = 10.0

Realism options, all off by default:

    [actuator]
    noise = 0.0              # relative std of a multiplicative noise on each torque
    delay = false            # apply each action one control period late

    [wheels]                 # reaction wheels instead of ideal torques
    layout = "none"          # "none", "orthogonal" (3 wheels) or "pyramid" (4 wheels)
    max_torque = 0.01        # per wheel, N·m (actions are wheel torques)
    max_momentum = 0.05      # per wheel, N·m·s (the speed limit)
    terminate_on_saturation = false

    [disturbance]
    constant = 0.0           # |τ| of a constant body torque in a random direction, N·m
    random_walk = 0.0        # std of a slowly varying (Ornstein–Uhlenbeck) body torque, N·m
    correlation_time = 300.0 # of that torque, s
    gravity_gradient = false # circular orbit about the Earth, orbit normal = world z
    orbit_altitude = 500e3   # m

    [sensors]
    attitude_noise_deg = 0.0 # per-axis std of a small random rotation of the observed attitude
    rate_noise = 0.0         # white noise on the observed body rates, rad/s
    rate_bias = 0.0          # std of a per-episode constant bias on them, rad/s

    [randomization]          # re-drawn at every reset
    inertia = 0.0            # each principal moment × (1 ± this), uniform, redrawn until physical
    inertia_rotation_deg = 0.0  # principal axes turned by up to this: products of inertia
    torque = 0.0             # each torque limit × (1 ± this)
    start = 0.0              # start rate spread and start angle × (1 ± this)

Every field is checked against its range, whether the scenario comes from a file, from
keyword overrides or from the :class:`Scenario` constructor (``dataclasses.replace``
included); an error names the file and the field. Keyword arguments of the environment
override fields by their flat names (``dt=0.1``, ``max_torque=[...]``,
``integrator="nielsen_krenk"``; see :data:`FIELDS`).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import numbers
import os
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from rigidrot_gym.physics import inertia as inertia_module
from rigidrot_gym.physics import integrators

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# Ranges of the fields whose real range is narrower than "positive" or "non-negative".
INT64_MAX = 2**63 - 1  # the step counters are int64
# Integration steps per control period: a compiled loop cannot be interrupted, and 10⁵
# steps of the costliest compiled method take about a second per body.
MAX_SUBSTEPS = 100_000
# Each reward weight: the reward's bounds add up to four of them and must stay finite in
# float32, the dtype stable-baselines3 stores rewards in (its largest value is 3.4e38).
MAX_REWARD_WEIGHT = 1e37
MAX_RATE_NOISE = 1e6  # rad/s, rate-sensor noise and bias (the observation saturates far below)
# Smallest positive value of a field that is divided by (a subnormal's reciprocal is inf).
_TINY = float(np.finfo(np.float64).tiny)

SHAPES = (
    "solid_box",
    "solid_cylinder",
    "hollow_cylinder",
    "solid_sphere",
    "ellipsoid",
    "thin_rod",
    "thin_plate",
)


class ScenarioError(ValueError):
    """A scenario file or override is malformed; the message names the file and field."""


@dataclass(frozen=True)
class Scenario:
    """An attitude-control task. Arrays are read-only; units in :data:`FIELDS`."""

    id: str
    description: str
    inertia: np.ndarray
    max_torque: np.ndarray
    dt: float
    substeps: int
    integrator: str
    max_episode_steps: int
    start_attitude: Any
    start_max_angle_deg: float
    start_rate: np.ndarray
    start_rate_spread: float
    target_attitude: Any
    pointing_tolerance_deg: float
    rate_tolerance: float
    max_rate: float
    success_hold_steps: int
    reward_angle: float
    reward_rate: float
    reward_torque: float
    reward_success: float
    reward_unsafe: float
    actuator_noise: float
    actuation_delay: bool
    wheel_layout: str
    wheel_max_torque: float
    wheel_max_momentum: float
    wheel_terminate_on_saturation: bool
    disturbance_constant: float
    disturbance_random_walk: float
    disturbance_correlation_time: float
    gravity_gradient: bool
    orbit_altitude: float
    attitude_noise_deg: float
    rate_noise: float
    rate_bias: float
    randomize_inertia: float
    randomize_inertia_rotation_deg: float
    randomize_torque: float
    randomize_start: float
    source: str = "<keywords>"

    def __post_init__(self) -> None:
        """Check and normalise every field, however the scenario was built (a file, keyword
        overrides, the constructor or ``dataclasses.replace``).

        Raises:
            ScenarioError: naming the source and the field at fault.
        """
        source = self.source if isinstance(self.source, str) else repr(self.source)
        object.__setattr__(self, "source", source)
        for name, (key, convert) in FIELDS.items():
            object.__setattr__(self, name, convert(getattr(self, name), f"{source}: field {key}"))
        object.__setattr__(self, "inertia", _inertia_of(self.inertia, f"{source}: field body"))
        _check_consistency(self, source)

    @property
    def wheels(self) -> bool:
        """Reaction wheels rather than ideal torques."""
        return self.wheel_layout != "none"

    @property
    def realistic(self) -> bool:
        """Any realism option on: actuator noise or delay, wheels, disturbances, sensor
        noise or domain randomisation."""
        return self.wheels or any(getattr(self, name) for name in _REALISM_SWITCHES)

    def digest(self) -> str:
        """A SHA-256 of every field that decides the task's numbers (all but ``source``,
        where it was read from), floats exactly: two scenarios with the same digest run
        the same episodes, whatever their files or ids say."""
        values = {name: getattr(self, name) for name in ("inertia", *FIELDS)}
        text = repr({k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in values.items()})
        return hashlib.sha256(text.encode()).hexdigest()

    def with_overrides(self, **overrides) -> Scenario:
        """A copy with fields replaced by keyword (flat names of :data:`FIELDS`)."""
        unknown = sorted(set(overrides) - set(FIELDS) - {"inertia"})
        if unknown:
            raise ScenarioError(
                f"unknown scenario field(s) {unknown}; valid names: {', '.join(['inertia', *FIELDS])}"
            )
        values = {}
        for name, value in overrides.items():
            where = f"{self.source}: override {name}"
            values[name] = _inertia_of(value, where) if name == "inertia" else FIELDS[name][1](value, where)
        try:
            return dataclasses.replace(self, **values)
        except ScenarioError as err:
            # Fields valid one by one that conflict with the others: the overrides did it,
            # not the file they were applied to.
            shown = ", ".join(f"{name}={value!r}" for name, value in overrides.items())
            reason = str(err).removeprefix(f"{self.source}: ")
            raise ScenarioError(f"override(s) {shown} of {self.source}: {reason}") from None


# --------------------------------------------------------------------------- converters


def _fail(where: str, expected: str, value) -> ScenarioError:
    return ScenarioError(f"{where}: expected {expected}, got {value!r}")


def _is_real(value) -> bool:
    """A real number: an int or a float (numpy's included), not a bool."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_)


def _number(value, where: str, positive: bool = False, minimum: float | None = None) -> float:
    """A finite real number (ints and numpy scalars too; a Python int too large for a
    float is rejected, not raised as ``OverflowError``)."""
    try:
        x = float(value) if _is_real(value) else np.nan
    except OverflowError:
        x = np.nan
    if not np.isfinite(x):
        raise _fail(where, "a finite number", value)
    if positive and x <= 0:
        raise _fail(where, "a positive number", value)
    if positive and x < _TINY:
        raise _fail(where, f"a positive number ≥ {_TINY:.17g} (smaller has no finite inverse)", value)
    if minimum is not None and x < minimum:
        raise _fail(where, f"a number ≥ {minimum}", value)
    return x


def _positive(value, where: str) -> float:
    return _number(value, where, positive=True)


def _non_negative(value, where: str) -> float:
    return _number(value, where, minimum=0.0)


def _bounded(maximum: float, positive: bool = False):
    """Converter of a number in [0, ``maximum``] (or (0, ``maximum``] if ``positive``)."""

    def convert(value, where: str) -> float:
        x = _number(value, where, positive=positive, minimum=None if positive else 0.0)
        if x > maximum:
            low = "(0" if positive else "[0"
            raise _fail(where, f"a number in {low}, {maximum:g}]", value)
        return x

    return convert


def _integer(value, where: str, minimum: int, maximum: int = INT64_MAX) -> int:
    integral = isinstance(value, numbers.Integral) and not isinstance(value, bool | np.bool_)
    if not integral or not minimum <= value <= maximum:
        raise _fail(where, f"an integer in [{minimum}, {maximum}]", value)
    return int(value)


def _has_bool(value) -> bool:
    if isinstance(value, list | tuple):
        return any(_has_bool(v) for v in value)
    return isinstance(value, bool | np.bool_)


def _reals(value, where: str, expected: str) -> np.ndarray:
    """``value`` (nested lists or an array of real numbers) as a float64 array; bools,
    strings, complex numbers and values too large for a float are rejected."""
    if isinstance(value, np.ndarray) and value.dtype.kind in "fiu":
        arr = value
    elif isinstance(value, list | tuple) and not _has_bool(value):
        try:
            arr = np.array(value)
        except (TypeError, ValueError):  # ragged
            raise _fail(where, expected, value) from None
        if arr.dtype == object and not all(_is_real(v) for v in arr.flat):
            raise _fail(where, expected, value)
        if arr.dtype != object and arr.dtype.kind not in "fiu":
            raise _fail(where, expected, value)
    else:
        raise _fail(where, expected, value)
    try:
        return arr.astype(np.float64)
    except OverflowError:
        raise _fail(where, expected, value) from None


def _vector(value, where: str, size: int = 3, positive: bool = False) -> np.ndarray:
    expected = f"a list of {size} {'positive ' if positive else ''}finite numbers"
    arr = _reals(value, where, expected)
    if arr.shape != (size,) or not np.all(np.isfinite(arr)) or (positive and np.any(arr <= 0)):
        raise _fail(where, expected, value)
    arr.setflags(write=False)
    return arr


def _quaternion(value, where: str) -> np.ndarray:
    q = _vector(value, where, 4)
    if abs(np.linalg.norm(q) - 1.0) > 1e-6:
        raise _fail(where, "a unit quaternion [w, x, y, z]", value)
    q = q / np.linalg.norm(q)
    q.setflags(write=False)
    return q


def _attitude(choices: tuple[str, ...]):
    def convert(value, where: str):
        if isinstance(value, str):
            if value not in choices:
                raise _fail(where, f"one of {list(choices)} or a unit quaternion [w, x, y, z]", value)
            return value
        return _quaternion(value, where)

    return convert


def _integrator(value, where: str) -> str:
    if not isinstance(value, str) or value not in integrators.names():
        raise _fail(where, f"a registered integrator ({', '.join(integrators.names())})", value)
    if not integrators.get(value).accepts_torque:
        raise _fail(where, "an integrator that accepts a torque", value)
    return value


def _flag(value, where: str) -> bool:
    if not isinstance(value, bool):
        raise _fail(where, "true or false", value)
    return value


def _fraction(value, where: str) -> float:
    """A relative amount in [0, 1)."""
    value = _number(value, where, minimum=0.0)
    if value >= 1.0:
        raise _fail(where, "a fraction in [0, 1)", value)
    return value


def _choice(choices: tuple[str, ...]):
    def convert(value, where: str) -> str:
        if not isinstance(value, str) or value not in choices:
            raise _fail(where, f"one of {list(choices)}", value)
        return value

    return convert


def _text(value, where: str) -> str:
    if not isinstance(value, str):
        raise _fail(where, "a string", value)
    return value


# Flat field name -> (TOML key, converter). The body is read separately.
FIELDS = {
    "id": ("id", _text),
    "description": ("description", _text),
    "max_torque": ("actuator.max_torque", lambda v, w: _vector(v, w, positive=True)),  # N·m
    "dt": ("simulation.dt", _positive),  # s
    "substeps": ("simulation.substeps", lambda v, w: _integer(v, w, 1, MAX_SUBSTEPS)),
    "integrator": ("simulation.integrator", _integrator),
    "max_episode_steps": ("simulation.max_episode_steps", lambda v, w: _integer(v, w, 1)),
    "start_attitude": ("start.attitude", _attitude(("random", "near_target"))),
    "start_max_angle_deg": ("start.max_angle_deg", _bounded(180.0)),  # deg
    "start_rate": ("start.rate", _vector),  # rad/s
    "start_rate_spread": ("start.rate_spread", _non_negative),  # rad/s
    "target_attitude": ("target.attitude", _attitude(("random",))),
    "pointing_tolerance_deg": ("tolerance.pointing_deg", _bounded(180.0, positive=True)),  # deg
    "rate_tolerance": ("tolerance.rate", _positive),  # rad/s
    "max_rate": ("termination.max_rate", _positive),  # rad/s
    "success_hold_steps": ("termination.success_hold_steps", lambda v, w: _integer(v, w, 0)),
    "reward_angle": ("reward.angle", _bounded(MAX_REWARD_WEIGHT)),
    "reward_rate": ("reward.rate", _bounded(MAX_REWARD_WEIGHT)),
    "reward_torque": ("reward.torque", _bounded(MAX_REWARD_WEIGHT)),
    "reward_success": ("reward.success", _bounded(MAX_REWARD_WEIGHT)),
    "reward_unsafe": ("reward.unsafe", _bounded(MAX_REWARD_WEIGHT)),
    "actuator_noise": ("actuator.noise", _fraction),
    "actuation_delay": ("actuator.delay", _flag),
    "wheel_layout": ("wheels.layout", _choice(("none", "orthogonal", "pyramid"))),
    "wheel_max_torque": ("wheels.max_torque", _positive),  # N·m
    "wheel_max_momentum": ("wheels.max_momentum", _positive),  # N·m·s
    "wheel_terminate_on_saturation": ("wheels.terminate_on_saturation", _flag),
    "disturbance_constant": ("disturbance.constant", _non_negative),  # N·m
    "disturbance_random_walk": ("disturbance.random_walk", _non_negative),  # N·m
    "disturbance_correlation_time": ("disturbance.correlation_time", _positive),  # s
    "gravity_gradient": ("disturbance.gravity_gradient", _flag),
    "orbit_altitude": ("disturbance.orbit_altitude", _positive),  # m
    "attitude_noise_deg": ("sensors.attitude_noise_deg", _bounded(180.0)),  # deg
    "rate_noise": ("sensors.rate_noise", _bounded(MAX_RATE_NOISE)),  # rad/s
    "rate_bias": ("sensors.rate_bias", _bounded(MAX_RATE_NOISE)),  # rad/s
    "randomize_inertia": ("randomization.inertia", _fraction),
    "randomize_inertia_rotation_deg": ("randomization.inertia_rotation_deg", _bounded(180.0)),  # deg
    "randomize_torque": ("randomization.torque", _fraction),
    "randomize_start": ("randomization.start", _fraction),
}
# The realism options that are off when zero or false (the rest are their parameters).
_REALISM_SWITCHES = (
    "actuator_noise",
    "actuation_delay",
    "disturbance_constant",
    "disturbance_random_walk",
    "gravity_gradient",
    "attitude_noise_deg",
    "rate_noise",
    "rate_bias",
    "randomize_inertia",
    "randomize_inertia_rotation_deg",
    "randomize_torque",
    "randomize_start",
)
DEFAULTS = {
    "description": "",
    "start_max_angle_deg": 180.0,
    "start_rate": np.zeros(3),
    "start_rate_spread": 0.0,
    "success_hold_steps": 0,
    "reward_angle": 1.0,
    "reward_rate": 0.1,
    "reward_torque": 0.01,
    "reward_success": 1.0,
    "reward_unsafe": 10.0,
    "actuator_noise": 0.0,
    "actuation_delay": False,
    "wheel_layout": "none",
    "wheel_max_torque": 0.01,
    "wheel_max_momentum": 0.05,
    "wheel_terminate_on_saturation": False,
    "disturbance_constant": 0.0,
    "disturbance_random_walk": 0.0,
    "disturbance_correlation_time": 300.0,
    "gravity_gradient": False,
    "orbit_altitude": 500e3,
    "attitude_noise_deg": 0.0,
    "rate_noise": 0.0,
    "rate_bias": 0.0,
    "randomize_inertia": 0.0,
    "randomize_inertia_rotation_deg": 0.0,
    "randomize_torque": 0.0,
    "randomize_start": 0.0,
}


# --------------------------------------------------------------------------- the body


def _part(entry, where: str) -> inertia_module.Part:
    if not isinstance(entry, dict):
        raise _fail(where, "a table", entry)
    entry = dict(entry)
    shape = entry.pop("shape", None)
    if shape not in SHAPES:
        raise _fail(f"{where}.shape", f"one of {list(SHAPES)}", shape)
    mass = _positive(entry.pop("mass", None), f"{where}.mass")
    position = _vector(entry.pop("position", [0.0, 0.0, 0.0]), f"{where}.position")
    orientation = _quaternion(entry.pop("orientation", [1.0, 0.0, 0.0, 0.0]), f"{where}.orientation")
    make = getattr(inertia_module, shape)
    wanted = [p for p in inspect.signature(make).parameters if p != "mass"]
    extra = sorted(set(entry) - set(wanted))
    if extra:
        raise ScenarioError(f"{where}: unknown key(s) {extra} for shape {shape!r}; it takes {wanted}")
    missing = [p for p in wanted if p not in entry]
    if missing:
        raise ScenarioError(f"{where}: shape {shape!r} needs {missing}")
    # Numbers only: a TOML true or "0.2" is not a length (numpy would read them as 1 and 0.2).
    dimensions = {
        key: _reals(value, f"{where}.{key}", "a number or a list of numbers")
        if isinstance(value, list)
        else _number(value, f"{where}.{key}")
        for key, value in entry.items()
    }
    try:
        tensor = make(mass, **dimensions)
        return inertia_module.Part(mass, tensor, position, orientation)
    except (TypeError, ValueError) as err:
        raise ScenarioError(f"{where}: {err}") from None


def _inertia_of(body, where: str) -> np.ndarray:
    """The body-frame tensor from ``moments``, ``tensor`` or ``parts`` (exactly one)."""
    if not isinstance(body, dict):
        try:
            rank = np.ndim(body)
        except ValueError:  # ragged nested lists
            rank = -1
        body = {"tensor" if rank == 2 else "moments": body}
    given = [k for k in ("moments", "tensor", "parts") if k in body]
    extra = sorted(set(body) - {"moments", "tensor", "parts"})
    if extra:
        raise ScenarioError(f"{where}: unknown key(s) {extra}; a body has one of moments, tensor, parts")
    if len(given) != 1:
        raise ScenarioError(f"{where}: give exactly one of moments, tensor, parts; got {given or 'none'}")
    kind = given[0]
    try:
        if kind == "moments":
            tensor = np.diag(inertia_module.validate_moments(_vector(body["moments"], f"{where}.moments")))
        elif kind == "tensor":
            tensor = _reals(body["tensor"], f"{where}.tensor", "one 3 × 3 tensor of numbers")
            if tensor.shape != (3, 3):
                raise _fail(f"{where}.tensor", "one 3 × 3 tensor (3 rows of 3 numbers)", body["tensor"])
            tensor = inertia_module.validate_inertia(tensor)
        else:
            parts = body["parts"]
            if not isinstance(parts, list) or not parts:
                raise _fail(f"{where}.parts", "a non-empty array of tables", parts)
            tensor = inertia_module.compose(
                [_part(p, f"{where}.parts[{i}]") for i, p in enumerate(parts)]
            ).inertia
            inertia_module.validate_inertia(tensor)
    except ScenarioError:
        raise
    except (TypeError, ValueError) as err:
        raise ScenarioError(f"{where}.{kind}: {err}") from None
    tensor = np.array(tensor, dtype=float)
    tensor.setflags(write=False)
    return tensor


def _check_consistency(s: Scenario, source: str) -> None:
    if s.rate_tolerance >= s.max_rate:
        raise ScenarioError(
            f"{source}: tolerance.rate ({s.rate_tolerance}) must be below termination.max_rate ({s.max_rate})"
        )
    start_speed = np.linalg.norm(s.start_rate) + np.sqrt(3) * s.start_rate_spread
    if start_speed >= s.max_rate:
        raise ScenarioError(
            f"{source}: start rates up to {start_speed:.4g} rad/s reach termination.max_rate ({s.max_rate})"
        )


def parse(data: dict, source: str) -> Scenario:
    """A :class:`Scenario` from the parsed TOML ``data`` of the file ``source``."""
    known_tables = {key.split(".")[0] for key, _ in FIELDS.values()} | {"body"}
    unknown = sorted(set(data) - known_tables)
    if unknown:
        raise ScenarioError(f"{source}: unknown key(s) {unknown}")
    for table in known_tables - {"id", "description"}:
        if table in data and not isinstance(data[table], dict):
            raise ScenarioError(f"{source}: [{table}] must be a table")
        keys = {key.split(".")[1] for key, _ in FIELDS.values() if key.startswith(f"{table}.")}
        extra = sorted(set(data.get(table, {})) - keys) if table != "body" else []
        if extra:
            raise ScenarioError(f"{source}: unknown key(s) {[f'{table}.{k}' for k in extra]}")
    values: dict[str, Any] = {}
    for name, (key, _) in FIELDS.items():
        node: Any = data
        for part in key.split("."):
            node = node.get(part, KeyError) if isinstance(node, dict) else KeyError
        if node is KeyError:
            if name not in DEFAULTS:
                raise ScenarioError(f"{source}: missing field {key}")
            values[name] = DEFAULTS[name]
        else:
            values[name] = node  # checked by Scenario itself
    if "body" not in data:
        raise ScenarioError(f"{source}: missing table [body]")
    return Scenario(**values, inertia=data["body"], source=source)


_BOM = b"\xef\xbb\xbf"


def load(path: str | os.PathLike) -> Scenario:
    """Read and check a scenario file (UTF-8 without a byte-order mark, as TOML requires).

    Raises:
        ScenarioError: naming the file and the field at fault.
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise ScenarioError(f"{path}: cannot read scenario file: {err}") from None
    if raw.startswith(_BOM):
        raise ScenarioError(
            f"{path}: starts with a UTF-8 byte-order mark, which TOML does not allow; "
            "save the file as UTF-8 without one"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        line = raw[: err.start].count(b"\n") + 1
        raise ScenarioError(
            f"{path}: not valid UTF-8 (byte {raw[err.start : err.start + 1]!r} at offset {err.start}, "
            f"line {line}); TOML files must be UTF-8"
        ) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise ScenarioError(f"{path}: not valid TOML: {err}") from None
    return parse(data, str(path))


def builtin_files() -> list[Path]:
    """The scenario files shipped with the package (``envs/*.toml`` in the source tree)."""
    try:
        folder = resources.files("rigidrot_gym.scenarios")
    except ModuleNotFoundError:
        # Source checkout or editable install: setuptools cannot map a data-only
        # subpackage there, so read the top-level envs/ folder directly.
        folder = Path(__file__).resolve().parents[2] / "envs"
    return sorted(Path(str(f)) for f in folder.iterdir() if f.name.endswith(".toml"))


@functools.cache
def builtin() -> tuple[Scenario, ...]:
    """The built-in scenarios, read once."""
    return tuple(load(f) for f in builtin_files())


def find(name: str | os.PathLike) -> Scenario:
    """A built-in scenario by id (``"RigidRot/Reorient-v0"``), file stem
    (``"reorient"``), or a path to a scenario file (``.toml``).

    Raises:
        ScenarioError: for a path that does not exist or a name that is neither.
    """
    if not isinstance(name, str | os.PathLike):
        raise ScenarioError(
            f"scenario must be a registered id, a file stem, a .toml path or a Scenario, got {name!r}"
        )
    candidate = Path(name)
    if candidate.suffix == ".toml" or isinstance(name, os.PathLike):
        if not candidate.is_file():
            raise ScenarioError(f"scenario file {str(name)!r} not found (relative to {Path.cwd()})")
        return load(candidate)
    scenarios = builtin()
    for s in scenarios:
        if name in (s.id, Path(s.source).stem):
            return s
    raise ScenarioError(
        f"unknown scenario {name!r}; built-in: {', '.join(s.id for s in scenarios)} (or a .toml path)"
    )
