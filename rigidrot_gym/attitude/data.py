"""The data a control period reads and writes, with names: what the compiled pipeline
(:mod:`~rigidrot_gym.attitude.pipeline`) takes instead of positional bundles of arrays.

Every per-body array is component-major (structure of arrays: ``state[c, i]`` is
component c of body i), so that the loops over bodies vectorise; the tuples are
``NamedTuple`` s, which numba compiles as records of their fields. Which components a
period runs is fixed when its kernel is built (:class:`Features`); the tuples always hold
every field, empty where a scenario has no use for it.
"""

from __future__ import annotations

import functools
import typing
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from rigidrot_gym.attitude.components import COMPONENTS
from rigidrot_gym.attitude.components.declaration import Build, Episode, Feature, State
from rigidrot_gym.attitude.rows import (  # noqa: F401 (re-exported: the period's rows by name)
    ANGLE,
    EFFORT,
    ESTIMATE,
    FLAGS,
    IN_TOLERANCE,
    OBS_SIZE,
    OBSERVED,
    POINTING_DEG,
    RATE,
    REWARD,
    SENSORS,
    SPEED,
    SUCCESS,
    TERMINATED,
    TRUNCATED,
    TRUTH,
    VALUES,
)
from rigidrot_gym.attitude.variates import NAVIGATION_PAIRS, keys_of
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation.inertia import principal_frame
from rigidrot_gym.physics.rotation.integrators.base import STATE_SIZE
from rigidrot_gym.physics.rotation.torques import SIZE as TORQUE_PARAMETERS

# Rows of a body's state: the attitude q (principal axes to world) and the body rates ω
# (principal axes), then the method's own scalar (only ``rkn`` uses it).
Q, W, METHOD_SCALAR = slice(0, 4), slice(4, 7), 7

# Episode starts: the start attitude's law (StartLaw.mode).
RANDOM, NEAR_TARGET, FIXED = 0, 1, 2


# The flags that belong to no component: the task's and the body's.
CORE_FEATURES = (
    Feature(
        "energy_reward",
        lambda s, f: bool(s.reward_energy),
        "the reward credits the kinetic energy each step removes (no realism)",
        realism=False,
    ),
    # only where there is noise: a plain id's kernel is one, whatever the stream
    Feature(
        "fast_noise",
        lambda s, f: s.random_stream == 1 and any(f[c.noisy] for c in COMPONENTS if c.step_pairs),
        "the noise's normals drawn by the vectorising stream (random_stream 1)",
    ),
    # else the plain task's turns between the two frames are not compiled
    Feature(
        "rotated_frames",
        lambda s, f: principal_frame(s.inertia)[1] is not None or bool(s.randomize_inertia_rotation_deg),
        "some body's frame is turned from its principal axes (B ≠ 1)",
        realism=False,
    ),
)
_FEATURES = tuple(feature for c in COMPONENTS for feature in c.features) + CORE_FEATURES
# The features that are not realism components (Features.realistic).
NOT_REALISM = tuple(feature.name for feature in _FEATURES if not feature.realism)
_REALISM_FLAGS = tuple(k for k, feature in enumerate(_FEATURES) if feature.realism)


def _realistic(self) -> bool:
    """Any realism component: the actuators' and loads' components run, and the torque
    model is the library's compiled model of the terms the loads hold
    (:func:`~rigidrot_gym.physics.rotation.torques.model_of`); else the body torque alone, held
    from the action."""
    return any(self[k] for k in _REALISM_FLAGS)


# The components a scenario enables, fixed when its control period is compiled: the kernel
# of each combination is its own (a branch on a constant is pruned before numba types the
# code, so what a scenario does not use costs neither compile time nor a branch in the
# loops over bodies). One field per declared feature (each component's ``features``, in
# the list's order, then the core's): a hashable key of compiled kernels.
Features = NamedTuple("Features", [(feature.name, bool) for feature in _FEATURES])  # type: ignore[misc]
Features.__doc__ = "The flags of a scenario's components, fixed when its period is compiled:\n\n" + "\n".join(
    f"* ``{feature.name}``: {feature.doc}" for feature in _FEATURES
)
Features.realistic = property(_realistic)  # type: ignore[attr-defined]


def features_of(scenario: Any) -> Features:
    """The components the scenario enables: each declared feature's value, in order."""
    found: dict[str, Any] = {}
    for feature in _FEATURES:
        found[feature.name] = feature.of(scenario, found)
    return Features(**found)


class Bodies(NamedTuple):
    """What defines each of the N bodies and its episode (component-major)."""

    state: np.ndarray  # (8, N) rows Q, W, METHOD_SCALAR, principal axes
    moments: np.ndarray  # (3, N) principal moments, kg·m²
    principal: np.ndarray  # (4, N) principal frames B (principal axes to body frame)
    target: np.ndarray  # (4, N) target attitudes
    limits: np.ndarray  # (n, N) each actuator's limit, in its kind's unit (N·m; A·m² for rods)
    steps: np.ndarray  # (N,) int64 steps of the episode
    hold: np.ndarray  # (N,) int64 consecutive steps inside the tolerance
    sources: np.ndarray  # (2, N) uint64: each body's generator (draws.sources), for restarts


# The fields of Equipment that belong to no component: each body's noise key, which every
# stream is keyed by, and the actuators' axes and sign, which the loads read.
CORE_STATE = (
    State(
        "keys",
        "(N,) uint64 key of each body's counter-based noise stream",
        lambda b: np.zeros(b.bodies, dtype=np.uint64),
        lambda f: any(getattr(f, c.noisy) for c in COMPONENTS if c.noisy),
    ),
    State(
        "axes",
        "(3, n) actuator axes, body frame (torquers' or wheels', then rods')",
        lambda b: np.ascontiguousarray(b.actuators.axes),
        lambda f: f.realistic,
    ),
    State(
        "sign",
        "+1 torquers, −1 wheels (a motor torque turns the body backwards)",
        lambda b: b.actuators.sign,
        lambda f: f.realistic,
    ),
)
_STATE = CORE_STATE + tuple(state for c in COMPONENTS for state in c.state)

# The realism components' per-body state (rows by body) and their constants: one field per
# declared state (the core's, then each component's in the list's order).
Equipment = NamedTuple("Equipment", [(state.name, Any) for state in _STATE])  # type: ignore[misc]
Equipment.__doc__ = (
    "The realism components' per-body state (rows by body) and their constants:\n\n"
    + "\n".join(f"* ``{state.name}``: {state.doc}" for state in _STATE)
)

# The components that read each field of Equipment (by its Features). Only the fields a
# scenario's components read travel into the compiled call: numba unboxes every array and
# number of its arguments on every call (about 50 ns an array), read or not. The others are
# None there, so that code reading a field its scenario lacks fails to compile rather than
# read an empty array.
EQUIPMENT_READERS: dict[str, Callable[[Features], bool]] = {state.name: state.read for state in _STATE}


def equipment_of(build: Build) -> Equipment:
    """Every field of :class:`Equipment` for a batch (``build``, what each field is made
    from): zeros and empty arrays where its scenario has no use for them (the pipeline
    never reads those)."""
    return Equipment(*(state.make(build) for state in _STATE))


def _reset_keys(episode: Episode) -> None:
    """Each body's noise key for its new episode: every stream's numbers of it are new."""
    episode.equipment.keys[episode.rows] = keys_of(episode.draws["key"])


def _always(scenario: Any) -> bool:
    return True


# The per-episode starts of the realism options, the core's then each component's in the
# list's order (each writes its own fields: the order changes no number), each with when it
# runs: a component's where it is on (where it is off, nothing reads its state; a start of
# NadirPoint-v0's vector env spent a fifth of its time in the resets of components it lacks).
RESETS = ((_always, _reset_keys), *((c.on, c.reset) for c in COMPONENTS if c.reset is not None))


@functools.cache
def equipment_fields(features: Features) -> tuple[str, ...]:
    """The fields of :class:`Equipment` that the components ``features`` enables read, in
    the record's order (none without realism components): what travels into the compiled
    call (:func:`equipment_expander` rebuilds the record there)."""
    if not features.realistic:
        return ()
    return tuple(name for name in Equipment._fields if EQUIPMENT_READERS[name](features))


# The fields of Equipment that are a model's named parameters (State.record): their types.
RECORDS: dict[str, type] = {state.name: state.record for state in _STATE if state.record is not None}


def passed(equipment: Equipment, features: Features) -> tuple:
    """The fields of ``equipment`` that travel into the compiled call
    (:func:`equipment_fields`), a record as one float64 array (:func:`pack`)."""
    return tuple(
        pack(getattr(equipment, name))[0] if name in RECORDS else getattr(equipment, name)
        for name in equipment_fields(features)
    )


@functools.cache
def equipment_expander(fields: tuple[str, ...]) -> Callable:
    """A compiled-code function ``(passed) -> tuple`` of :class:`Equipment`'s field values
    in order, from the tuple of its ``fields`` that travelled (the others None), each
    record rebuilt from its array: ``Equipment(*values)`` rebuilds the Equipment."""
    namespace: dict[str, Any] = {}
    items = []
    for name in Equipment._fields:
        if name not in fields:
            items.append("None")
        elif name in RECORDS:
            record = RECORDS[name]
            namespace[f"_{name}"] = record  # by its field: two records may share a class name
            values = _rebuilt(record, f"passed[{fields.index(name)}]", "", {"float": 0, "int": 0})
            items.append(f"_{name}{values}")
        else:
            items.append(f"passed[{fields.index(name)}]")
    code = f"def expand(passed):\n    return ({', '.join(items)},)\n"
    exec(code, namespace)
    return jitable(namespace["expand"])


class Rules(NamedTuple):
    """The task's tolerances, limits and reward weights, as a period reads them."""

    pointing_tolerance: float  # rad
    rate_tolerance: float  # rad/s
    max_rate: float  # rad/s: unsafe above, and the scale of the observed rates
    reward_angle: float
    reward_rate: float
    reward_torque: float
    reward_success: float
    reward_unsafe: float
    reward_energy: float
    hold_steps: int  # consecutive steps inside the tolerance that end the episode; 0: never
    max_steps: int  # steps that truncate the episode


class StartLaw(NamedTuple):
    """How an episode's start and target are drawn (:func:`~rigidrot_gym.attitude.starts.start_state`)."""

    random_target: bool
    target: tuple[float, float, float, float]  # the fixed target, if not random
    mode: int  # RANDOM, NEAR_TARGET or FIXED
    attitude: tuple[float, float, float, float]  # the fixed start attitude (FIXED)
    max_angle: float  # NEAR_TARGET: the largest angle from the target, rad
    rate: tuple[float, float, float]  # mean start body rates, rad/s
    rate_spread: float  # each axis adds a uniform draw in ±this, rad/s
    randomize: float  # the start ranges scaled by 1 ± this per episode


class Work(NamedTuple):
    """A period's staging area: the advanced states before they are committed, and the
    scratch of every component. Each array is written before it is read within every call
    that uses it: nothing in them carries over, and they are not part of the env's state.
    ``stats``, ``actions``, ``results``, ``body``, ``variates`` and ``rate_integral`` are rows of one buffer
    (:class:`Carried`), so that a pass over bodies touches one block of memory."""

    staged: np.ndarray  # (8, N) the advanced states (committed by a swap with Bodies.state)
    params: np.ndarray  # (PARAMETER_ROWS, N) the torque parameters held over the period
    stats: np.ndarray  # (2, N) the integrator's statistics (most iterations, total)
    results: np.ndarray  # (10, N) rows OBSERVED, ANGLE, SPEED, EFFORT of the state evaluated
    body: np.ndarray  # (7, N) attitude and rates in the body frame (non-principal bodies)
    actions: np.ndarray  # (n, N) the clipped actions (0 for a body not stepped)
    commands: np.ndarray  # (n, N) actuator torques after delay, noise and limits, N·m
    sensed: np.ndarray  # (8, N) the state as the sensors report it (principal axes)
    variates: np.ndarray  # (12, N) the uniforms of a restarting body's new episode
    rate_integral: np.ndarray  # (3, N) ∫ω dt over the period, principal axes, rad (with a gyro)
    normals: np.ndarray  # (NORMAL_ROWS, min(N, BLOCK)) a block's normals, pass by pass (one thread)
    estimator: np.ndarray  # (4, WORK_SIDE, WORK_SIDE) the estimator's work, one body at a time


class Outputs(NamedTuple):
    """What a period hands back: the observations and the per-body values and flags."""

    obs: np.ndarray  # (N, size) float32
    values: np.ndarray  # (VALUES, N) rows REWARD …
    flags: np.ndarray  # (FLAGS, N) bool, rows SUCCESS …


class Period(NamedTuple):
    """What one call is asked to do (the first five fields, passed per call), and the
    per-batch settings it runs with (the rest: :class:`Settings`)."""

    action: np.ndarray  # (N, n) as given (float32 or float64)
    waiting: np.ndarray  # (N,) bool: bodies not stepped (a vector env's rows to autoreset)
    stepped: bool  # advance the bodies not waiting (else: observe them as they are)
    restart: bool  # the waiting bodies start new episodes (compiled starts only)
    substeps: int  # integration steps per period
    dt: float  # the control period, s
    options: np.ndarray  # the integrator's options (Method.pack_options)


class Settings(NamedTuple):
    """The per-batch part of a :class:`Period`, passed as one tuple."""

    dt: float
    options: np.ndarray


def _torque_rows() -> dict[str, int]:
    """Each component's torque term (Component.torque): its first row of Work.params, after
    the compiled model's own and the terms of the components before it."""
    rows, row = {}, TORQUE_PARAMETERS
    for component in COMPONENTS:
        if component.torque is not None:
            rows[component.name], row = row, row + component.torque.term.size
    return rows


TORQUE_ROWS = _torque_rows()
PARAMETER_ROWS = TORQUE_PARAMETERS + sum(c.torque.term.size for c in COMPONENTS if c.torque is not None)

# Bodies per block of a pass. On one thread, as many as keep a block's arrays in a core's
# L2 cache: each block pays a call of each component and the runtime checks (of overlap
# between arrays) of each of their vectorised loops, a tenth of a vector env-step with
# blocks of 256 (2-core AMD EPYC). On numba's threads, a block is a thread's unit of work:
# small enough that a thousand bodies make four.
BLOCK = 1024
THREAD_BLOCK = 256
# The most normals a pass over a block draws per body: the navigation's (the actuators' at
# most 2 · ⌈MAX_ACTUATORS / 2⌉ = 8, the sensors' 6, the random walk's 4).
NORMAL_ROWS = 2 * NAVIGATION_PAIRS
# The side of the per-body work matrices (Work.estimator): the largest that a component
# declares (the estimator's, with the magnetometer's bias).
WORK_SIDE = max(c.work for c in COMPONENTS)

# How the records travel into the compiled call. Numba unboxes every argument, and every
# array or number inside a tuple argument, one by one (about 50 ns an array), so Work's
# scratch arrays travel as rows of one, which the compiled call slices back into Work's
# fields by these names (:mod:`~rigidrot_gym.attitude.pipeline`), as the scratch of a
# period always was. The bodies' arrays stay arrays of their own: stacked as rows of one
# (measured), the vectorised passes over bodies ran a third slower.
MAX_ACTUATORS = 8  # rows kept for the actions (eight thrusters; the pyramid's four wheels and three rods)
STATS = slice(0, 2)  # rows of Carried.scratch
ACTIONS_ROW = STATS.stop  # then one row per actuator
RESULTS = slice(ACTIONS_ROW + MAX_ACTUATORS, ACTIONS_ROW + MAX_ACTUATORS + 10)
BODY = slice(RESULTS.stop, RESULTS.stop + 7)
# A restarting body's uniforms for its new episode (starts.BASE_VARIATES), in its column:
# a kernel that allocates nothing draws them into memory it was given.
VARIATES = slice(BODY.stop, BODY.stop + 12)
RATE_INTEGRAL = slice(VARIATES.stop, VARIATES.stop + 3)
SCRATCH_ROWS = RATE_INTEGRAL.stop


class Carried(NamedTuple):
    """The fields of :class:`Bodies` and :class:`Work` as they travel into the compiled
    call (Work's ``stats``, ``actions``, ``results``, ``body``, ``variates`` and
    ``rate_integral`` as rows of ``scratch``)."""

    state: np.ndarray  # (8, N)
    moments: np.ndarray  # (3, N)
    principal: np.ndarray  # (4, N)
    target: np.ndarray  # (4, N)
    limits: np.ndarray  # (n, N)
    steps: np.ndarray  # (N,) int64
    hold: np.ndarray  # (N,) int64
    sources: np.ndarray  # (2, N) uint64
    staged: np.ndarray  # (8, N)
    params: np.ndarray  # (PARAMETER_ROWS, N)
    scratch: np.ndarray  # (SCRATCH_ROWS, N) rows STATS, ACTIONS_ROW …, RESULTS, BODY, VARIATES, RATE_INTEGRAL
    commands: np.ndarray  # (n, N)
    sensed: np.ndarray  # (8, N)
    normals: np.ndarray  # (NORMAL_ROWS, min(N, BLOCK))
    estimator: np.ndarray  # (4, WORK_SIDE, WORK_SIDE)


# Memory addresses equal in their low 12 bits (a page apart, or a whole number of pages)
# look the same to a core's check of a load against the stores before it: the load waits.
PAGE = 4096


def state_and_staging(state: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A copy of the bodies' ``state`` (8, N) and a staging area for it (zeros), each
    C-contiguous, placed half a page apart modulo a page. A period's first sub-step reads
    each body from the one and writes it to the other at the same index; at addresses
    equal in their low 12 bits its loads wait on its stores (4K aliasing: 4096 envs of
    Reorient-v0 stepped in 12.4–13.8 ns instead of 11.9–12.1, AMD EPYC znver5). The two
    are views of one buffer and share no element."""
    size = state.size
    # the staging area begins (size + gap)·8 bytes after the state: half a page, modulo a page
    gap = ((PAGE // 2 - size * 8) % PAGE) // 8
    buffer = np.zeros(2 * size + gap)
    placed = buffer[:size].reshape(state.shape)
    placed[:] = state
    return placed, buffer[size + gap :].reshape(state.shape)


def carried(n: int, actuators: int) -> Carried:
    """Zeros for N bodies with ``actuators`` actuators (no generators yet: an empty
    ``sources``), the state and its staging area half a page apart
    (:func:`state_and_staging`)."""
    state, staged = state_and_staging(np.zeros((STATE_SIZE, n)))
    return Carried(
        state=state,
        moments=np.zeros((3, n)),
        principal=np.zeros((4, n)),
        target=np.zeros((4, n)),
        limits=np.zeros((actuators, n)),
        steps=np.zeros(n, dtype=np.int64),
        hold=np.zeros(n, dtype=np.int64),
        sources=np.zeros((2, 0), dtype=np.uint64),
        staged=staged,
        params=np.zeros((PARAMETER_ROWS, n)),
        scratch=np.zeros((SCRATCH_ROWS, n)),
        commands=np.zeros((actuators, n)),
        sensed=np.zeros((STATE_SIZE, n)),
        normals=np.zeros((NORMAL_ROWS, min(n, BLOCK))),
        estimator=np.zeros((4, WORK_SIDE, WORK_SIDE)),
    )


# Records of numbers only (Rules, StartLaw) travel packed: numba unboxes a number inside a
# tuple argument for about 25 ns, an array for about 40, so the records' floats travel as
# one float64 array and their ints as one int64 array, and the compiled call rebuilds the
# records from them (:func:`unpacker`). Both directions follow the records' own annotations.


@functools.cache
def _leaves(record_type: type) -> tuple[tuple[str, str, int], ...]:
    """(field, kind, count) of each field of ``record_type``: kind "float", "int" or
    "bool" (a bool travels as a float, 0 or 1), count 0 for a number and k for a k-tuple."""
    leaves = []
    for name, hint in typing.get_type_hints(record_type).items():
        if typing.get_origin(hint) is tuple:
            items = typing.get_args(hint)
            leaves.append((name, items[0].__name__, len(items)))
        else:
            leaves.append((name, hint.__name__, 0))
    return tuple(leaves)


def pack(*records: NamedTuple) -> tuple[np.ndarray, np.ndarray]:
    """Records of numbers as (float64 array, int64 array), record by record and field by
    field in order."""
    floats: list[float] = []
    ints: list[int] = []
    for record in records:
        for name, kind, count in _leaves(type(record)):
            values = getattr(record, name) if count else (getattr(record, name),)
            (ints if kind == "int" else floats).extend(values)
    return np.array(floats, dtype=np.float64), np.array(ints, dtype=np.int64)


def _rebuilt(record_type: type, floats: str, ints: str, cursor: dict[str, int]) -> str:
    """The source of a tuple of ``record_type``'s field values read from the arrays named
    ``floats`` and ``ints`` as :func:`pack` laid them, from ``cursor`` on (moved past)."""
    fields = []
    for _, kind, count in _leaves(record_type):
        source = ints if kind == "int" else floats
        start = cursor["int" if kind == "int" else "float"]
        items = [f"{source}[{start + k}]" for k in range(max(count, 1))]
        cursor["int" if kind == "int" else "float"] = start + len(items)
        if kind == "bool":
            items = [f"({item} != 0.0)" for item in items]
        fields.append(f"({', '.join(items)},)" if count else items[0])
    return f"({', '.join(fields)},)"


@functools.cache
def unpacker(*record_types: type) -> Callable:
    """A compiled-code function ``(floats, ints) -> tuple`` of one tuple per record type,
    its field values in order, from what :func:`pack` made of records of these types:
    ``record_type(*values)`` rebuilds each. Generated from the annotations, so that it can
    never read a field from another's place."""
    cursor = {"float": 0, "int": 0}
    records = [_rebuilt(record_type, "floats", "ints", cursor) for record_type in record_types]
    code = f"def unpack(floats, ints):\n    return ({', '.join(records)},)\n"
    namespace: dict[str, Any] = {}
    exec(code, namespace)
    return jitable(namespace["unpack"])
