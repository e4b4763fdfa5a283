"""A component's declaration: what the env core needs to know of it, in one record.

Each component module exports one :class:`Component` (``COMPONENT = Component(...)``), and
the list of them (:data:`rigidrot_gym.attitude.components.COMPONENTS`) is the one place
that names every component. The core derives from that list, and from nothing else:

* the scenario's tables (:class:`~rigidrot_gym.attitude.scenario.Scenario`), its format
  page and its consistency rules (each component's ``needs`` and ``rules``);
* the compile-time flags (:class:`~rigidrot_gym.attitude.data.Features`, from each
  component's ``features``) and the per-body state and constants that travel into the
  compiled period (:class:`~rigidrot_gym.attitude.data.Equipment`, from ``state``), with
  how each is made for a batch and at each episode start (``reset``), and the side of the
  per-body work matrices (``work``);
* what its turn of every episode start does to the drawn starts (``restart``);
* the per-episode draws (``draws``) and the per-step noise (``step_pairs``,
  ``navigation_normals``, ``start_normals``), laid out in the list's order;
* the observation's columns (``columns``) and the reward's bounds (``reward``);
* the entries of each env's ``info`` dict (``info``);
* its parts of the compiled period's stages (``load``, ``advance``, ``observe``: hooks that
  the stages of :mod:`~rigidrot_gym.attitude.stages` chain in the list's order).

Like Basilisk's effectors (a model implements one interface and the spacecraft hub knows
none of them), but resolved when a kernel is built: what a scenario does not enable is
neither compiled nor carried.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from rigidrot_gym.attitude.settings import ScenarioError, Table


def _never(scenario: Any) -> bool:
    return False


@dataclass(frozen=True)
class Feature:
    """A compile-time flag of the period (a field of :class:`~rigidrot_gym.attitude.data.Features`):
    ``of(scenario, found)`` its value (a bool, or an int such as an enumeration), ``found``
    the flags of the components before it by name; ``realism``: an option that makes the
    scenario realistic (the actuators' and loads' components run)."""

    name: str
    of: Callable[[Any, dict[str, Any]], Any]
    doc: str
    realism: bool = True


@dataclass(frozen=True)
class Build:
    """What a component's per-body state is made from: the scenario, the bodies N, the
    actuators (:class:`~rigidrot_gym.attitude.actuators.Actuators`) and the flags."""

    scenario: Any
    bodies: int
    actuators: Any
    features: Any


@dataclass(frozen=True)
class State:
    """A field of :class:`~rigidrot_gym.attitude.data.Equipment`: per-body state (rows by
    body) or a constant, ``make(build)`` its value for a batch (:class:`Build`), and
    ``read(features)`` whether a scenario's period reads it (only what it reads travels
    into the compiled call). A model's parameters are a ``record``: a ``NamedTuple`` of
    floats, bools and tuples of floats, read by name in compiled code as in Python; it
    travels into the compiled call as one float64 array and is rebuilt there
    (:func:`~rigidrot_gym.attitude.data.equipment_expander`)."""

    name: str
    doc: str
    make: Callable[[Build], Any]
    read: Callable[[Any], bool]
    record: type | None = None


@dataclass(frozen=True)
class Episode:
    """What a component's per-episode start reads and writes (:attr:`Component.reset`):
    the batch (:class:`~rigidrot_gym.attitude.batch.AttitudeBatch`), its ``Equipment``,
    the scenario's ``nominal`` body (principal moments (3,) and frame (4,)), the rows
    starting their episodes and the variates drawn for them, by ``"component.draw"``
    name: (R,) for a draw of one, (R, k) of k."""

    batch: Any
    equipment: Any
    nominal: tuple[np.ndarray, np.ndarray]
    rows: np.ndarray
    draws: Mapping[str, np.ndarray]


@dataclass(frozen=True)
class Start:
    """What a component's turn of each episode start reads and writes
    (:attr:`Component.restart`): the batch's flags (``features``), its ``Equipment``,
    whether its start attitudes are drawn near the targets (``near_target``), the rows
    starting their episodes and their drawn starts, changed in place: attitudes q (R, 4),
    body rates ω (R, 3) and targets (R, 4)."""

    features: Any
    equipment: Any
    near_target: bool
    rows: np.ndarray
    q: np.ndarray
    omega: np.ndarray
    target: np.ndarray


@dataclass(frozen=True)
class Info:
    """An entry of each env's ``info`` dict: ``on(features)`` whether a batch with these
    flags has it; ``of(equipment)`` its array over the bodies (a view of ``Equipment``,
    body first), or None where the batch's constants leave it out; ``estimate``: an
    estimator's entry (the dict holds every component's true values first, then the
    estimates, each in the list's order)."""

    name: str
    doc: str
    on: Callable[[Any], bool]
    of: Callable[[Any], np.ndarray | None]
    estimate: bool = False


@dataclass(frozen=True)
class Draw:
    """Variates a body draws at each episode start: ``size`` standard normals
    (``normal``, by Box–Muller) or uniforms on [0, 1)."""

    name: str
    size: int
    normal: bool = False


@dataclass(frozen=True)
class Torque:
    """A torque a component adds to the compiled model, evaluated at every integrator
    stage from the stage's attitude and rates: ``term``, its
    :class:`~rigidrot_gym.physics.rotation.torques.Term`; ``on(features)``, whether a batch
    with these flags has it; ``hold``, a compiled ``hold(bodies, equipment, work, dt, row,
    i)`` that writes body i's ``term.size`` parameters, held over the period, into
    ``work.params[row : row + size, i]`` (its rows, after the model's own and those of the
    components before it); ``substep``, if given, a compiled ``substep(work, row, m, lo,
    hi)`` that rewrites them for sub-step m of bodies ``lo`` … ``hi`` − 1 before the
    integrator takes it: a torque that switches at sub-step boundaries (thrusters firing
    for whole sub-steps), which the integrator then sees switch between its steps, never
    within one."""

    term: Any
    on: Callable[[Any], bool]
    hold: Callable
    substep: Callable | None = None


@dataclass(frozen=True)
class Need:
    """Another component this one needs on, by name, and why (shown in the message)."""

    component: str
    why: str = ""


@dataclass(frozen=True)
class Column:
    """A block of the observation: always there with ``width`` columns (an int), or with as
    many as ``width(scenario, actuators)`` gives (0: absent), described in the table by
    ``size`` and the ``option`` that adds it; ``unit``: what a value of 1 in its columns
    stands for (``"1"``: a dimensionless quantity, the default), as the env's table and
    ``rigidrot export``'s ``policy.json`` state it."""

    name: str
    meaning: str
    low: float
    high: float
    width: int | Callable[[Any, Any], int]
    size: str = ""
    option: str = ""
    unit: str = "1"


@dataclass(frozen=True)
class Component:
    """A component's declaration (see the module docstring).

    Attributes:
        name: its name, that of its module in ``rigidrot_gym.attitude.components``.
        summary: what it is, in one line (the components page's table).
        table: its scenario table (a :class:`~rigidrot_gym.attitude.settings.Table`), if
            it has one, and ``attribute``, the scenario's attribute that holds it (the
            table's key unless given).
        on: whether a scenario enables it; ``switch`` the key that does, as the messages
            name it (or a function of the scenario that names it).
        needs: the components it needs on (:class:`Need`): checked, with a
            :class:`~rigidrot_gym.attitude.settings.ScenarioError` naming both switches.
        rules: its other consistency rules, functions of the scenario that raise a
            ``ScenarioError`` naming the fields (the scenario's source is added).
        features: its compile-time flags (:class:`Feature`).
        state: its fields of ``Equipment`` (:class:`State`).
        reset: its per-episode start, ``reset(episode)`` (:class:`Episode`), where it is
            on (its state is not read where it is off).
        restart: its turn of each episode start drawn outside the compiled period, where
            it is on: ``restart(start)`` (:class:`Start`) changes the drawn starts.
        work: the side of the square matrices its per-body work needs (four of them,
            reused body after body: the estimator's); the largest travels.
        draws: its per-episode variates (:class:`Draw`); with ``realism_block``, in the
            block every realistic scenario draws, on or not (the components' of before
            the declarations: their places are every realistic id's); else drawn only
            where it is on, after every draw before it (so that no existing id's change).
        step_pairs: pairs of standard normals per step of a body's noise stream, and
            ``noisy``, the name of the feature that says the stream is drawn for it.
        navigation_normals, start_normals: normals per step of a body's navigation stream,
            and at an episode's start (step 0), each use starting a pair.
        columns: its observation columns (:class:`Column`), in the order the period
            writes them.
        reward: its share of the reward's bounds, ``reward(scenario) -> (low, high)``.
        info: its entries of each env's ``info`` dict (:class:`Info`).
        load, advance, observe: its parts of the period's stages, each a factory that,
            given the flags (``Features``), builds a compiled hook, or None where the
            flags leave the component out:

            * ``load(bodies, equipment, work, dt, i) -> τ``: the body-frame torque (N·m,
              a 3-tuple) body i holds over the period; the loads stage adds the
              components' torques in the list's order, then the actuators'
              (:mod:`~rigidrot_gym.attitude.stages.load`);
            * ``advance(call, bodies, equipment, work, walk, lo, i)``: body i's state
              moved on once the period is committed
              (:mod:`~rigidrot_gym.attitude.stages.advance`);
            * ``observe(call, bodies, equipment, state, out, column, i) -> column``: body
              i's observation columns from ``column`` on, at its staged ``state``;
              returns the column after its own
              (:mod:`~rigidrot_gym.attitude.stages.observe`).
        torque: a torque evaluated at every integrator stage (:class:`Torque`): a term of
            the compiled torque model with parameters of its own, which the loads stage
            holds over the period.
        keeps_digests: its table's settings enter a scenario's digest only where they are
            not at their defaults (as another package's do), so that adding it changes no
            existing scenario's digest.
    """

    name: str
    summary: str
    table: type[Table] | None = None
    attribute: str = ""
    on: Callable[[Any], bool] = _never
    switch: str | Callable[[Any], str] = ""
    needs: tuple[Need, ...] = ()
    rules: tuple[Callable[[Any], None], ...] = ()
    features: tuple[Feature, ...] = ()
    state: tuple[State, ...] = ()
    reset: Callable[[Episode], None] | None = None
    restart: Callable[[Start], None] | None = None
    work: int = 0
    draws: tuple[Draw, ...] = ()
    realism_block: bool = False
    step_pairs: int = 0
    noisy: str = ""
    navigation_normals: int = 0
    start_normals: int = 0
    columns: tuple[Column, ...] = ()
    reward: Callable[[Any], tuple[float, float]] | None = None
    info: tuple[Info, ...] = ()
    load: Callable[[Any], Callable | None] | None = None
    advance: Callable[[Any], Callable | None] | None = None
    observe: Callable[[Any], Callable | None] | None = None
    torque: Torque | None = None
    keeps_digests: bool = False

    @property
    def table_attribute(self) -> str:
        """The scenario's attribute that holds its table."""
        return self.attribute or (self.table.key if self.table is not None else "")


def noise_layout(components: tuple[Component, ...]) -> dict[str, int]:
    """Where each component's per-step noise lies, in the list's order: ``"name.step"`` its
    first pair of a body's main stream (``"step_pairs"`` of them a step), ``"name.navigation"``
    and ``"name.start"`` its first normal of the navigation stream at each step and at an
    episode's start (each use starts a pair; the starts after every step's,
    ``"navigation_pairs"`` pairs in all)."""
    found: dict[str, int] = {}
    pair = 0
    for c in components:
        if c.step_pairs:
            found[f"{c.name}.step"], pair = pair, pair + c.step_pairs
    found["step_pairs"] = pair
    normal = 0
    for kind in ("navigation", "start"):
        for c in components:
            count = c.navigation_normals if kind == "navigation" else c.start_normals
            if count:
                found[f"{c.name}.{kind}"], normal = normal, normal + count + count % 2
    found["navigation_pairs"] = normal // 2
    return found


def check(components: tuple[Component, ...], scenario: Any) -> None:
    """Each component's needs, then its rules, in the list's order.

    Raises:
        ScenarioError: naming the fields at fault (without the scenario's source).
    """
    by_name = {c.name: c for c in components}
    for component in components:
        if not component.on(scenario):
            continue
        for need in component.needs:
            other = by_name[need.component]
            if not other.on(scenario):
                why = f" ({need.why})" if need.why else ""
                switch = component.switch(scenario) if callable(component.switch) else component.switch
                raise ScenarioError(f"{switch} needs {other.switch}{why}")
    for component in components:
        for rule in component.rules:
            rule(scenario)
