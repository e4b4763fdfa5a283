"""Episode starts: the variates each body draws at reset, and the start states they give.

Randomness comes only from the per-body generators the caller passes: one generator call per
body and reset, the same draws in the same order, so seeded runs repeat and row i of a
batch repeats a single env. A body's start is :func:`start_state` of its variates, in
compiled code: for rows of a batch at once (:func:`start_states`), and inside the plain
task's step for the rows it restarts (:mod:`~rigidrot_gym.attitude.components.restart`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence

import numpy as np

from rigidrot_gym.attitude import randomization
from rigidrot_gym.attitude.components import COMPONENTS
from rigidrot_gym.attitude.components.declaration import Component
from rigidrot_gym.attitude.data import FIXED, NEAR_TARGET, RANDOM, StartLaw
from rigidrot_gym.attitude.draws import draw, sources
from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.attitude.variates import box_muller, normal_pair
from rigidrot_gym.physics.plumbing.jit import jitable, kernel
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.quaternion import qexp, qmul, qnorm

# Uniform variates per episode start, one generator call per body. Every scenario draws
# 12: 8 become standard normals by Box–Muller (target, attitude or axis), 4 stay uniform
# (angle, rates). A realistic scenario draws the realism block after them, whether or not
# each option uses its own: first the normal draws of the block's components in the list's
# order (rate bias, direction of the constant disturbance, initial random-walk torque, axis
# of the inertia turn), as many uniforms as normals (by Box–Muller, an even number), then
# the noise key and their uniform draws in the list's order (orbit phase, inertia scales,
# turn angle, torque-limit scales, start-range scales). Then each other component that is
# on draws its own, in the list's order: its normals (Box–Muller of their own uniforms),
# then its uniforms, so that a component added to the list changes no existing id.
NORMALS, UNIFORMS = 8, 4
BASE_VARIATES = NORMALS + UNIFORMS


def _layout(
    components: tuple[Component, ...], key: bool = False
) -> tuple[int, int, dict[str, tuple[bool, slice | int]]]:
    """(normal slots, variates, {"component.draw": (normal, where)}) of a block of the
    ``components``' draws, with the noise ``key``'s uniform first among them: ``where``
    indexes the block's normals or its uniforms (the block itself), a draw of one by an int."""
    found: dict[str, tuple[bool, slice | int]] = {}
    start = 0
    for c in components:
        for d in c.draws:
            if d.normal:
                found[f"{c.name}.{d.name}"] = (True, slice(start, start + d.size))
                start += d.size
    slots = start + start % 2
    draws = [("key", 1)] if key else []
    draws += [(f"{c.name}.{d.name}", d.size) for c in components for d in c.draws if not d.normal]
    start = slots
    for name, size in draws:
        found[name] = (False, start if size == 1 else slice(start, start + size))
        start += size
    return slots, start, found


_BLOCK = tuple(c for c in COMPONENTS if c.realism_block)
_NORMAL_SLOTS, REALISM_VARIATES, REALISM_DRAWS = _layout(_BLOCK, key=True)


_OUTSIDE = tuple(c for c in COMPONENTS if c.draws and not c.realism_block)


def _appended(scenario: Scenario) -> tuple[tuple[int, int, dict[str, tuple[bool, slice | int]]], ...]:
    """The blocks of the components outside the realism block that the scenario has on."""
    return _blocks_of(tuple(c.on(scenario) for c in _OUTSIDE)) if _OUTSIDE else ()


@functools.cache
def _blocks_of(on: tuple[bool, ...]) -> tuple[tuple[int, int, dict[str, tuple[bool, slice | int]]], ...]:
    return tuple(_layout((c,)) for c, enabled in zip(_OUTSIDE, on, strict=True) if enabled)


# The start ranges' scales, which the compiled start reads (start_state).
START_ANGLE = REALISM_DRAWS["randomization.start_angle"][1]
START_RATE = REALISM_DRAWS["randomization.start_rate"][1]


def variate_count(scenario: Scenario) -> int:
    """Uniforms each body draws at an episode start: 12, or 36 with realism options (and
    the draws of the components on outside the realism block)."""
    if not scenario.realistic:
        return BASE_VARIATES
    return BASE_VARIATES + REALISM_VARIATES + sum(count for _, count, _ in _appended(scenario))


def start_law(scenario: Scenario) -> StartLaw:
    """The scenario's start and target law, as :func:`start_state` reads it."""
    random_target = isinstance(scenario.target_attitude, str)
    fixed = isinstance(scenario.start_attitude, str)
    mode = FIXED if not fixed else (RANDOM if scenario.start_attitude == "random" else NEAR_TARGET)
    return StartLaw(
        random_target=random_target,
        target=_four(np.zeros(4) if random_target else scenario.target_attitude),
        mode=mode,
        attitude=_four(scenario.start_attitude if mode == FIXED else np.zeros(4)),
        max_angle=float(np.radians(scenario.start_max_angle_deg)),
        rate=tuple(float(x) for x in scenario.start_rate),
        rate_spread=float(scenario.start_rate_spread),
        randomize=float(scenario.randomize_start),
    )


def _four(q) -> tuple[float, float, float, float]:
    return tuple(float(x) for x in q)


@jitable
def _unit(q):
    """q / |q| (a normal 4-vector: a uniform unit quaternion). Divided, not multiplied by
    1/|q| as ``qnormalize`` does: the starts stay bit for bit those of earlier versions."""
    n = qnorm(q)
    return (q[0] / n, q[1] / n, q[2] / n, q[3] / n)


@jitable
def start_state(v, law):
    """Start attitude q, body rates ω (body frame) and target of one body from its variates
    ``v`` (12 or 36 uniforms) under the start ``law`` (:func:`start_law`).

    Target: uniform on SO(3) (a normalised 4-D normal) or fixed. Attitude: uniform, or
    the target turned by an angle uniform in [0, ``start_max_angle_deg``] about a uniform
    axis, or fixed. Rates: ``start_rate`` + uniform in ±``start_rate_spread`` per axis.
    With ``randomize_start`` the angle bound and the rate spread are themselves scaled
    by 1 ± that fraction per episode (the angle bound at most 180°). The normals are
    Box–Muller's of the pairs (v0, v1) … (v6, v7): their cosines g0 … g3 and sines g4 … g7.
    """
    g0, g4 = normal_pair(v[0], v[1])
    g1, g5 = normal_pair(v[2], v[3])
    g2, g6 = normal_pair(v[4], v[5])
    g3, g7 = normal_pair(v[6], v[7])
    max_angle, rate_spread = law.max_angle, law.rate_spread
    if law.randomize > 0.0:
        max_angle = min(np.pi, randomization.spread(max_angle, law.randomize, v[BASE_VARIATES + START_ANGLE]))
        rate_spread = randomization.spread(rate_spread, law.randomize, v[BASE_VARIATES + START_RATE])
    target = _unit((g0, g1, g2, g3)) if law.random_target else law.target
    if law.mode == RANDOM:
        q = _unit((g4, g5, g6, g7))
    elif law.mode == NEAR_TARGET:
        n = vec.norm((g4, g5, g6))
        axis = (g4 / n, g5 / n, g6 / n)
        q = qmul(target, qexp(vec.scale(0.5, vec.scale(max_angle * v[NORMALS], axis))))
    else:
        q = law.attitude
    w = (
        law.rate[0] + rate_spread * (2.0 * v[NORMALS + 1] - 1.0),
        law.rate[1] + rate_spread * (2.0 * v[NORMALS + 2] - 1.0),
        law.rate[2] + rate_spread * (2.0 * v[NORMALS + 3] - 1.0),
    )
    return q, w, target


@kernel
def _start_states(generators, law, variates, starts):
    law = StartLaw(*law)
    for j in range(variates.shape[0]):
        draw(generators, j, variates[j])
        q, w, target = start_state(variates[j], law)
        starts[j, 0], starts[j, 1], starts[j, 2], starts[j, 3] = q
        starts[j, 4], starts[j, 5], starts[j, 6] = w
        starts[j, 7], starts[j, 8], starts[j, 9], starts[j, 10] = target


def start_states(
    law: StartLaw, count: int, rngs: Sequence[np.random.Generator]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Attitudes (R, 4), body rates (R, 3) and targets (R, 4) of R bodies' episode starts
    under the start law ``law`` (:func:`start_law`), and the (R, ``count``) variates
    they came from (:func:`variate_count`), row j drawn from ``rngs[j]`` as
    ``rngs[j].random(count)`` would (so seeded runs repeat and row i of a batch repeats a
    single env); in one compiled call."""
    variates = np.empty((len(rngs), count))
    starts = np.empty((len(rngs), 11))
    _start_states(sources(rngs), tuple(law), variates, starts)
    return starts[:, 0:4], starts[:, 4:7], starts[:, 7:11], variates


# Where each draw of the realism block lies: (block 0, normal, where).
_BLOCK_WHERE = {name: (0, *place) for name, place in REALISM_DRAWS.items()}


class _Draws(Mapping):
    """The draws of a block of variates by name, each made when first asked for: an
    episode start reads only those of the components it resets."""

    def __init__(self, variates: np.ndarray, scenario: Scenario):
        start = BASE_VARIATES + REALISM_VARIATES
        self._blocks, self._where = [[variates[:, BASE_VARIATES:start], _NORMAL_SLOTS, None]], _BLOCK_WHERE
        for slots, count, layout in _appended(scenario):
            self._blocks.append([variates[:, start : start + count], slots, None])
            self._where = {**self._where, **{name: (len(self._blocks) - 1, *p) for name, p in layout.items()}}
            start += count

    def __getitem__(self, name: str) -> np.ndarray:
        index, normal, where = self._where[name]
        block = self._blocks[index]
        if not normal:
            return block[0][:, where]
        if block[2] is None:  # the block's normals, by Box–Muller, once
            block[2] = box_muller(block[0][:, : block[1]])
        return block[2][:, where]

    def __iter__(self):
        return iter(self._where)

    def __len__(self) -> int:
        return len(self._where)


def realism_draws(variates: np.ndarray, scenario: Scenario) -> Mapping[str, np.ndarray]:
    """The draws of (R, :func:`variate_count`) ``variates`` after the first 12, by
    ``"component.draw"`` name (and ``"key"``, the noise key's uniform): standard normals or
    uniforms, (R,) for a draw of one, (R, k) of k; the realism block's (``REALISM_DRAWS``),
    then those of the components on outside it. Each is made when first read."""
    return _Draws(variates, scenario)
