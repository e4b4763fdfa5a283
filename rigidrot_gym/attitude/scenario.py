"""Scenarios: the data that defines an attitude-control task, read from TOML files.

One file per scenario in the top-level ``envs/`` folder (shipped inside the package as
``rigidrot_gym/scenarios``); each becomes a registered Gymnasium id. A file has a few
top-level keys, a ``[body]`` and one table per part of the task; the keys left out here
take their defaults::

    id = "RigidRot/Reorient-v0"

    [body]                           # exactly one of: moments, tensor, parts
    moments = [0.08, 0.10, 0.05]     # principal moments, kg·m²

    [actuator]
    max_torque = [0.01, 0.01, 0.01]  # N·m per body axis

    [simulation]
    dt = 0.2                         # control period, s
    substeps = 1
    integrator = "rk4"
    max_episode_steps = 250

    [start]
    attitude = "random"

    [target]
    attitude = "random"

    [tolerance]
    pointing_deg = 2.0
    rate = 0.01                      # rad/s

    [termination]
    max_rate = 1.5                   # rad/s

Each table is a :class:`~rigidrot_gym.attitude.settings.Table`, each key declared once
with its unit, range, default and keyword name: the task's tables below, and each
component's in its own module, which its declaration names
(:data:`~rigidrot_gym.attitude.components.COMPONENTS`); :class:`Scenario` lists the task's
tables and takes the components' from that list, whose needs and rules it checks. Every
key, the realism options (all off by default) included, is on the
[scenario file format][scenario-file-format] page, which :func:`format_reference`
generates from these declarations.

Every field is checked against its range, whether the scenario comes from a file, from
keyword overrides or from the :class:`Scenario` constructor (``dataclasses.replace``
included); an error names the file and the field. Keyword arguments of the environment
override fields by their keyword names (``dt=0.1``, ``max_torque=[...]``,
``wheel_layout="pyramid"``; see :data:`FIELDS`).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import os
import sys
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from rigidrot_gym.attitude.components import COMPONENTS, PLUGINS, declaration
from rigidrot_gym.attitude.settings import (
    REQUIRED,
    Check,
    ScenarioError,
    Table,
    attitude,
    bounded,
    compose,
    integer,
    invalid,
    non_negative,
    number,
    positive,
    quaternion,
    read,
    reals,
    reference,
    setting,
    settings_of,
    tables_of,
    text,
    vector,
)
from rigidrot_gym.physics.rotation import inertia as inertia_module
from rigidrot_gym.physics.rotation import integrators

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

# Ranges of the fields whose real range is narrower than "positive" or "non-negative".
# Integration steps per control period: a compiled loop cannot be interrupted, and 10⁵
# steps of the costliest compiled method take about a second per body.
MAX_SUBSTEPS = 100_000
# Each reward weight: the reward's bounds add up to four of them and must stay finite in
# float32, the dtype stable-baselines3 stores rewards in (its largest value is 3.4e38).
MAX_REWARD_WEIGHT = 1e37

# The keys of [body], of which a file gives exactly one, and what each means.
BODY = {
    "moments": "principal moments [I₁, I₂, I₃], kg·m²: the body axes are principal axes; "
    "positive, and each at most the sum of the other two",
    "tensor": "the 3 × 3 inertia tensor in the body frame about the centre of mass, kg·m²: "
    "symmetric, positive definite, triangle inequality on its eigenvalues",
    "parts": "an array of tables `[[body.parts]]`, composed about their common centre of mass "
    "([`compose`][rigidrot_gym.physics.rotation.inertia.compose])",
}
# The shapes of a part: functions of rigidrot_gym.physics.rotation.inertia.
SHAPES = (
    "solid_box",
    "solid_cylinder",
    "hollow_cylinder",
    "solid_sphere",
    "ellipsoid",
    "thin_rod",
    "thin_plate",
)


def _integrator(value: Any, where: str) -> str:
    if not isinstance(value, str) or value not in integrators.names():
        raise invalid(where, f"a registered integrator ({', '.join(integrators.names())})", value)
    if not integrators.get(value).accepts_torque:
        raise invalid(where, "an integrator that accepts a torque", value)
    return value


# --------------------------------------------------------------------------- the tables


class Simulation(Table, key="simulation"):
    """How the motion is integrated, and for how long."""

    dt: float = setting(REQUIRED, check=positive, unit="s", doc="control period")
    substeps: int = setting(
        REQUIRED, check=integer(1, MAX_SUBSTEPS), doc="integration steps per control period"
    )
    integrator: str = setting(
        REQUIRED,
        check=Check("a registered integrator that accepts a torque", _integrator),
        doc="the integration method, by name (see Integrators)",
    )
    max_episode_steps: int = setting(
        REQUIRED, check=integer(1), doc="control steps per episode (then truncated)"
    )
    random_stream: int = setting(
        0,
        check=integer(0, 1),
        doc="how the noise's normals are drawn from each body's counter-based stream: 0 by the C "
        "library's log, sin and cos, one body at a time; 1 by branch-free polynomials that vectorise "
        "across bodies (the same uniforms, normals within a few units in the last place of 0's; "
        "WheelReorient-v0's)",
    )


class Start(Table, key="start"):
    """The state an episode starts from, drawn at every reset."""

    attitude: Any = setting(
        REQUIRED,
        check=attitude(("random", "near_target")),
        flat="start_attitude",
        doc='"random" (uniform), "near_target" (within max_angle_deg of the target) or fixed',
    )
    max_angle_deg: float = setting(
        180.0,
        check=bounded(180.0),
        unit="deg",
        flat="start_max_angle_deg",
        doc='"near_target": uniform axis, angle uniform in [0, this]',
    )
    rate: np.ndarray = setting(
        (0.0, 0.0, 0.0), check=vector(), unit="rad/s", flat="start_rate", doc="mean initial body rates"
    )
    rate_spread: float = setting(
        0.0,
        check=non_negative,
        unit="rad/s",
        flat="start_rate_spread",
        doc="each axis adds a uniform draw in ±this",
    )


class Target(Table, key="target"):
    """The attitude to reach, drawn at every reset."""

    attitude: Any = setting(
        REQUIRED,
        check=attitude(("random", "nadir", "sun")),
        flat="target_attitude",
        doc='"random" (uniform), fixed, or moving (needs [orbit]): "nadir", the orbit\'s LVLH frame, '
        'or "sun", body z at the Sun and body x along the equator',
    )


class Tolerance(Table, key="tolerance"):
    """Inside the tolerance: the pointing error and the rates both below their bounds."""

    pointing_deg: float = setting(
        REQUIRED,
        check=bounded(180.0, positive=True),
        unit="deg",
        flat="pointing_tolerance_deg",
        doc="inside: the pointing error below this ...",
    )
    rate: float = setting(
        REQUIRED, check=positive, unit="rad/s", flat="rate_tolerance", doc="... and |ω| below this"
    )


class Termination(Table, key="termination"):
    """What ends an episode before its time limit."""

    max_rate: float = setting(
        REQUIRED, check=positive, unit="rad/s", doc="|ω| above this ends the episode (terminated, unsafe)"
    )
    success_hold_steps: int = setting(
        0,
        check=integer(0),
        doc="consecutive steps inside the tolerance that end the episode (success); 0: never",
    )


class Reward(Table, key="reward"):
    """Weights of the reward terms (see AttitudeEnv)."""

    angle: float = setting(
        1.0, check=bounded(MAX_REWARD_WEIGHT), flat="reward_angle", doc="w_θ, of the pointing error θ/π"
    )
    rate: float = setting(
        0.1, check=bounded(MAX_REWARD_WEIGHT), flat="reward_rate", doc="w_ω, of min(|ω|/max_rate, 1)"
    )
    torque: float = setting(
        0.01, check=bounded(MAX_REWARD_WEIGHT), flat="reward_torque", doc="w_u, of the action's |a|²/n"
    )
    success: float = setting(
        1.0, check=bounded(MAX_REWARD_WEIGHT), flat="reward_success", doc="w_s, a bonus at each step inside"
    )
    unsafe: float = setting(
        10.0, check=bounded(MAX_REWARD_WEIGHT), flat="reward_unsafe", doc="w_x, the penalty of an unsafe step"
    )
    energy: float = setting(
        0.0,
        check=bounded(MAX_REWARD_WEIGHT),
        flat="reward_energy",
        doc="w_E, of the kinetic energy the step removed, (E − E′)/E_max, E_max = ½ J_max max_rate²",
    )


# --------------------------------------------------------------------------- the scenario


@dataclass(frozen=True, eq=False)  # numpy fields: identity, not ==
class BodyPart:
    """A part of a ``[[body.parts]]`` body as its file declares it: what the pictures draw
    (:func:`~rigidrot_gym.attitude.pictures.spacecraft_of`); the inertia is composed from
    the :attr:`part` of each alone.

    Attributes:
        shape: one of :data:`SHAPES`.
        dimensions: its dimensions by the keys of its shape's function (``size``,
            ``radius``, ``height``...), m: numbers or read-only arrays.
        part: its mass, tensor, position and orientation (part frame to body frame).
    """

    shape: str
    dimensions: dict[str, Any]
    part: inertia_module.Part


# The tables whose settings enter the digest only away from their defaults: those of other
# packages' components (components.plugins) and of the package's own declared
# ``keeps_digests`` (added after digests were published): a scenario that leaves them at
# their defaults keeps its digest.
_QUIET_TABLES = frozenset(c.table.key for c in PLUGINS if c.table is not None) | frozenset(
    c.table.key for c in COMPONENTS if c.table is not None and c.keeps_digests
)


def _equal(value: Any, default: Any) -> bool:
    """A setting's value is its default (numbers, text, or arrays of them)."""
    a, b = np.asarray(value), np.asarray(default)
    return a.shape == b.shape and bool(np.all(a == b))


def _with_component_tables(cls: type) -> type:
    """``cls`` with a field per component's table (:data:`COMPONENTS`), after its own
    tables and before ``source``: the scenario's tables are declared by the components."""
    annotations = dict(cls.__annotations__)
    source = annotations.pop("source")
    for component in COMPONENTS:
        if component.table is not None:
            annotations[component.table_attribute] = component.table
    cls.__annotations__ = {**annotations, "source": source}
    return cls


@dataclass(frozen=True, init=False)
@_with_component_tables
class Scenario:
    """An attitude-control task: one attribute per table of its file, and every setting
    by its keyword name too (``scenario.dt`` is ``scenario.simulation.dt``; see
    :data:`FIELDS`). Arrays are read-only.

    Built from keyword arguments: ``inertia`` (what ``[body]`` gives, or moments, or a
    3 × 3 tensor), ``source`` (where it was read from, for the messages), the tables by
    attribute name and any setting by keyword name, on top of the tables given
    (``dataclasses.replace(scenario, dt=0.1)``). Every value is checked.

    Raises:
        ScenarioError: naming the source and the field at fault.
    """

    id: str = setting(REQUIRED, check=text, doc="the Gymnasium id it is registered as")
    description: str = setting("", check=text, doc="the task, in one line")
    inertia: np.ndarray  # (3, 3) body-frame tensor about the centre of mass, kg·m²
    # The [[body.parts]] the inertia was composed from (empty for moments or a tensor);
    # drawn by the pictures, in no digest: kept by dataclasses.replace as long as the
    # inertia stays theirs, dropped when it is replaced.
    parts: tuple[BodyPart, ...] = dataclasses.field(default=(), compare=False, repr=False)
    simulation: Simulation
    start: Start
    target: Target
    tolerance: Tolerance
    termination: Termination
    reward: Reward
    # then each component's table (its ``table_attribute``), in the list's order
    source: str = "<keywords>"

    def __init__(
        self, *, inertia: Any, source: str = "<keywords>", parts: tuple[BodyPart, ...] = (), **values: Any
    ) -> None:
        source = source if isinstance(source, str) else repr(source)
        object.__setattr__(self, "source", source)
        for name, value in compose(type(self), values, source).items():
            object.__setattr__(self, name, value)
        # Every setting by its keyword name too, as a plain attribute: the env reads some
        # at every step, where __getattr__ would cost half a microsecond a read.
        for keyword, declared in settings_of(type(self)).items():
            object.__setattr__(self, keyword, declared.value(self))
        tensor, declared = _body_of(inertia, f"{source}: field body")
        object.__setattr__(self, "inertia", tensor)
        object.__setattr__(self, "parts", declared or _kept_parts(parts, tensor, f"{source}: field parts"))
        _check_consistency(self, source)

    @property
    def wheels(self) -> bool:
        """Reaction wheels rather than ideal torques."""
        return self.reaction_wheels.layout != "none"

    @property
    def moving_target(self) -> bool:
        """The target moves: the orbit's LVLH frame or the Sun's (``target_attitude``
        "nadir" or "sun")."""
        return isinstance(self.target_attitude, str) and self.target_attitude in ("nadir", "sun")

    @functools.cached_property
    def realistic(self) -> bool:
        """Any realism option on: actuator noise or delay, wheels, disturbances, sensor
        noise or domain randomisation (the settings declared ``switch=True`` not at
        their defaults). Cached: a scenario is frozen, and envs ask at every step."""
        return any(s.switch and s.value(self) != s.default for s in settings_of(type(self)).values())

    def digest(self) -> str:
        """A SHA-256 of every field that decides the task's numbers (all but ``source``,
        where it was read from), floats exactly: two scenarios with the same digest run
        the same episodes, whatever their files or ids say. Keyed by keyword name and
        sorted, so moving a setting to another table keeps it; the settings of other
        packages' components (:mod:`~rigidrot_gym.attitude.components.plugins`) and of
        the package's components declared ``keeps_digests`` only where they are not at
        their defaults, so that installing or adding one changes no digest."""
        values = {"inertia": self.inertia}
        for keyword, declared in settings_of(type(self)).items():
            value = declared.value(self)
            # another package's component, left at its default, changes no number
            if declared.key.partition(".")[0] not in _QUIET_TABLES or not _equal(value, declared.default):
                values[keyword] = value
        text = repr({k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in sorted(values.items())})
        return hashlib.sha256(text.encode()).hexdigest()

    def with_overrides(self, **overrides: Any) -> Scenario:
        """A copy with fields replaced by keyword name (see :data:`FIELDS`), ``inertia``
        included."""
        settings = settings_of(type(self))
        unknown = sorted(set(overrides) - set(settings) - {"inertia"})
        if unknown:
            raise ScenarioError(
                f"unknown scenario field(s) {unknown}; valid names: {', '.join(['inertia', *settings])}"
            )
        values = {}
        for name, value in overrides.items():
            where = f"{self.source}: override {name}"
            values[name] = (
                _inertia_of(value, where) if name == "inertia" else settings[name].check(value, where)
            )
        try:
            return dataclasses.replace(self, **values)
        except ScenarioError as err:
            # Fields valid one by one that conflict with the others: the overrides did it,
            # not the file they were applied to.
            shown = ", ".join(f"{name}={value!r}" for name, value in overrides.items())
            reason = str(err).removeprefix(f"{self.source}: ")
            raise ScenarioError(f"override(s) {shown} of {self.source}: {reason}") from None


# Keyword name -> (TOML key, check), derived from the declarations: ``FIELDS["dt"]`` is
# ``("simulation.dt", positive)``. The body is read separately (keyword ``inertia``).
FIELDS: dict[str, tuple[str, Check]] = {k: (s.key, s.check) for k, s in settings_of(Scenario).items()}


# --------------------------------------------------------------------------- the body


def _part(entry: Any, where: str) -> BodyPart:
    if not isinstance(entry, dict):
        raise invalid(where, "a table", entry)
    entry = dict(entry)
    shape = entry.pop("shape", None)
    if shape not in SHAPES:
        raise invalid(f"{where}.shape", f"one of {list(SHAPES)}", shape)
    mass = positive(entry.pop("mass", None), f"{where}.mass")
    position = vector()(entry.pop("position", [0.0, 0.0, 0.0]), f"{where}.position")
    orientation = quaternion(entry.pop("orientation", [1.0, 0.0, 0.0, 0.0]), f"{where}.orientation")
    make = getattr(inertia_module, shape)
    wanted = _dimensions(shape)
    extra = sorted(set(entry) - set(wanted))
    if extra:
        raise ScenarioError(f"{where}: unknown key(s) {extra} for shape {shape!r}; it takes {wanted}")
    missing = [p for p in wanted if p not in entry]
    if missing:
        raise ScenarioError(f"{where}: shape {shape!r} needs {missing}")
    # Numbers only: a TOML true or "0.2" is not a length (numpy would read them as 1 and 0.2).
    dimensions = {
        key: reals(value, f"{where}.{key}", "a number or a list of numbers")
        if isinstance(value, list)
        else number(value, f"{where}.{key}")
        for key, value in entry.items()
    }
    try:
        tensor = make(mass, **dimensions)
        part = inertia_module.Part(mass, tensor, position, orientation)
    except (TypeError, ValueError) as err:
        raise ScenarioError(f"{where}: {err}") from None
    for value in dimensions.values():
        if isinstance(value, np.ndarray):
            value.setflags(write=False)
    return BodyPart(shape, dimensions, part)


def _dimensions(shape: str) -> list[str]:
    """The keys of a part of ``shape`` besides mass: the parameters of its function."""
    return [p for p in inspect.signature(getattr(inertia_module, shape)).parameters if p != "mass"]


def _inertia_of(body: Any, where: str) -> np.ndarray:
    """The body-frame tensor from ``moments``, ``tensor`` or ``parts`` (exactly one)."""
    return _body_of(body, where)[0]


def _kept_parts(parts: Any, tensor: np.ndarray, where: str) -> tuple[BodyPart, ...]:
    """``parts`` (a scenario's, handed on by ``dataclasses.replace``) if they compose into
    ``tensor`` bit for bit, else none: an inertia given anew is no longer theirs."""
    if not isinstance(parts, tuple) or not all(isinstance(p, BodyPart) for p in parts):
        raise invalid(where, "a tuple of BodyPart", parts)
    if parts and np.array_equal(inertia_module.compose([p.part for p in parts]).inertia, tensor):
        return parts
    return ()


def _body_of(body: Any, where: str) -> tuple[np.ndarray, tuple[BodyPart, ...]]:
    """The body-frame tensor from ``moments``, ``tensor`` or ``parts`` (exactly one), and
    the parts it was composed from (none for moments or a tensor)."""
    declared: tuple[BodyPart, ...] = ()
    if not isinstance(body, dict):
        try:
            rank = np.ndim(body)
        except ValueError:  # ragged nested lists
            rank = -1
        body = {"tensor" if rank == 2 else "moments": body}
    given = [k for k in BODY if k in body]
    extra = sorted(set(body) - set(BODY))
    if extra:
        raise ScenarioError(f"{where}: unknown key(s) {extra}; a body has one of {', '.join(BODY)}")
    if len(given) != 1:
        raise ScenarioError(f"{where}: give exactly one of {', '.join(BODY)}; got {given or 'none'}")
    kind = given[0]
    try:
        if kind == "moments":
            tensor = np.diag(inertia_module.validate_moments(vector()(body["moments"], f"{where}.moments")))
        elif kind == "tensor":
            tensor = reals(body["tensor"], f"{where}.tensor", "one 3 × 3 tensor of numbers")
            if tensor.shape != (3, 3):
                raise invalid(f"{where}.tensor", "one 3 × 3 tensor (3 rows of 3 numbers)", body["tensor"])
            tensor = inertia_module.validate_inertia(tensor)
        else:
            parts = body["parts"]
            if not isinstance(parts, list) or not parts:
                raise invalid(f"{where}.parts", "a non-empty array of tables", parts)
            declared = tuple(_part(p, f"{where}.parts[{i}]") for i, p in enumerate(parts))
            tensor = inertia_module.compose([p.part for p in declared]).inertia
            inertia_module.validate_inertia(tensor)
    except ScenarioError:
        raise
    except (TypeError, ValueError) as err:
        raise ScenarioError(f"{where}.{kind}: {err}") from None
    tensor = np.array(tensor, dtype=float)
    tensor.setflags(write=False)
    return tensor, declared


def _check_consistency(s: Scenario, source: str) -> None:
    """Each component's needs and rules (:func:`~rigidrot_gym.attitude.components.declaration.check`),
    then the task's own."""
    try:
        declaration.check(COMPONENTS, s)
    except ScenarioError as err:
        raise ScenarioError(f"{source}: {err}") from None
    if s.rate_tolerance >= s.max_rate:
        raise ScenarioError(
            f"{source}: tolerance.rate ({s.rate_tolerance}) must be below termination.max_rate ({s.max_rate})"
        )
    start_speed = np.linalg.norm(s.start_rate) + np.sqrt(3) * s.start_rate_spread
    if start_speed >= s.max_rate:
        raise ScenarioError(
            f"{source}: start rates up to {start_speed:.4g} rad/s reach termination.max_rate ({s.max_rate})"
        )


# --------------------------------------------------------------------------- files


def parse(data: dict, source: str) -> Scenario:
    """A :class:`Scenario` from the parsed TOML ``data`` of the file ``source``."""
    values = read(Scenario, data, source, own=("body",))
    if "body" not in data:
        raise ScenarioError(f"{source}: missing table [body]")
    if not isinstance(data["body"], dict):
        raise ScenarioError(f"{source}: [body] must be a table")
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


# --------------------------------------------------------------------------- the docs


def format_reference() -> str:
    """The scenario file format as a Markdown page, from the declarations: the top-level
    keys, the ``[body]`` variants, each table's keys (key, keyword, unit, range,
    default, what) and a complete file as the example. The docs build serves it."""
    top_level = [s for s in settings_of(Scenario).values() if len(s.path) == 1]
    body = "\n".join(f"| `{key}` | {what} |" for key, what in BODY.items())
    shapes = "\n".join(
        f"| `{shape}` | {', '.join(f'`{p}`' for p in _dimensions(shape))} | "
        f"{' '.join(inspect.getdoc(getattr(inertia_module, shape)).split(chr(10) * 2)[0].split())} |"
        for shape in SHAPES
    )
    tables = "\n".join(
        f"## `[{table.key}]`\n\n{inspect.getdoc(table)}\n\n{reference(table.settings())}"
        for table in tables_of(Scenario).values()
    )
    example = next(path for path in builtin_files() if path.name == "reorient.toml")
    return f"""# Scenario file format

A scenario is a TOML file (UTF-8): the top-level keys, a `[body]`, and the tables below.
A key with a default may be left out, and so may a table whose keys all have one; a key
or table not listed here is refused, and so is a value out of its range, with the file
and the key in the message. Each key is also a keyword argument of the environment (the
*keyword* column), which overrides the file: `gym.make("RigidRot/Reorient-v0", dt=0.1,
wheel_layout="pyramid")`. A realism option is off at its default; see
[Realism options](../realism.md).

This page is generated from the declarations, made with
[`settings`][rigidrot_gym.attitude.settings], of the task's tables in
[`scenario`][rigidrot_gym.attitude.scenario] and of each component's table in its module
(the list of [`components`][rigidrot_gym.attitude.components]), which read and check the
files.

## Top level

{reference(top_level)}
## `[body]`

The rigid body, given by exactly one of these keys; the keyword `inertia` takes moments
or a tensor.

| key | what |
|---|---|
{body}

Each part has a `shape`, a `mass` (kg), a `position` (its centre of mass in the body
frame, m; default `[0.0, 0.0, 0.0]`), an `orientation` (the unit quaternion [w, x, y, z]
from its frame to the body frame; default `[1.0, 0.0, 0.0, 0.0]`), and the dimensions of
its shape, in m:

| shape | dimensions | what |
|---|---|---|
{shapes}

{tables}
## Example

`envs/{example.name}`, a complete file:

```toml
{example.read_text().rstrip()}
```
"""
