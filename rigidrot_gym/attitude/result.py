"""What a step or a reset of the batched core hands back: one type that the single env, the
native vector env and the stable-baselines3 adapter all read (:class:`StepResult`), and the
batch's view of its outputs (:class:`Results`)."""

from __future__ import annotations

import functools
import inspect
from typing import Any

import numpy as np

from rigidrot_gym.attitude.components import COMPONENTS
from rigidrot_gym.attitude.components.declaration import Info
from rigidrot_gym.attitude.data import (
    IN_TOLERANCE,
    POINTING_DEG,
    RATE,
    REWARD,
    SUCCESS,
    TERMINATED,
    TRUNCATED,
)

# A scenario without components that add to ``info``: shared, never written.
NO_EXTRAS: dict[str, np.ndarray] = {}

# The components' info entries in the dict's order: every true value, then the estimates.
INFO: tuple[Info, ...] = tuple(
    info for estimate in (False, True) for c in COMPONENTS for info in c.info if info.estimate == estimate
)


@functools.cache
def infos_of(features: Any) -> tuple[Info, ...]:
    """The info entries that a batch with the flags ``features`` may have, in order."""
    return tuple(info for info in INFO if info.on(features))


def _info(
    pointing_error_deg: float, rate: float, success: bool, inside: bool, extras: dict[str, Any] | None = None
) -> dict[str, Any]:
    """An ``info`` dict from Python numbers (every caller reads its values with ``tolist``:
    the single env's step builds one per step) and one env's ``extras``."""
    info = {
        "pointing_error_deg": pointing_error_deg,
        "rate": rate,
        "is_success": success,
        "in_tolerance": inside,
    }
    if extras:
        info.update(extras)
    return info


def extras_of(extras: dict[str, np.ndarray], i: int) -> dict[str, Any] | None:
    """Env i's entries of ``extras`` (arrays over the envs, env first): a copy of its row,
    or a Python number where the row is one; None without any."""
    if not extras:
        return None
    return {key: value[i].copy() if value.ndim > 1 else value[i].item() for key, value in extras.items()}


def _column_info(v: list[float], f: list[bool], extras: dict[str, Any] | None) -> dict[str, Any]:
    """The ``info`` dict of one env's column of values ``v`` and flags ``f``, as Python
    numbers."""
    return _info(v[POINTING_DEG], v[RATE], f[SUCCESS], f[IN_TOLERANCE], extras)


def info_of(values: np.ndarray, flags: np.ndarray, i: int, extras: dict[str, np.ndarray]) -> dict[str, Any]:
    """Env i's ``info`` dict from ``values`` (VALUES, N), ``flags`` (FLAGS, N) and the
    components' ``extras`` (:func:`extras_of`)."""
    return _column_info(
        values[:, i].tolist(), flags[:, i].tolist(), extras_of(extras, i)
    )  # Python numbers at once


def row_of(
    obs: np.ndarray, values: np.ndarray, flags: np.ndarray, i: int, extras: dict[str, np.ndarray]
) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
    """Env i's ``(obs, reward, terminated, truncated, info)`` from ``obs`` (N, size),
    ``values``, ``flags`` and ``extras`` (as :func:`info_of`), as a single env returns them:
    the observation a copy."""
    v, f = values[:, i].tolist(), flags[:, i].tolist()
    return obs[i].copy(), v[REWARD], f[TERMINATED], f[TRUNCATED], _column_info(v, f, extras_of(extras, i))


class StepResult:
    """One batched step's arrays over the N bodies, safe to keep (the batch never writes
    them again).

    ``obs`` (N, size) float32; ``values`` (VALUES, N), rows ``REWARD`` …, and ``flags``
    (FLAGS, N) bool, rows ``SUCCESS`` …, of :mod:`~rigidrot_gym.attitude.data`;
    ``extras``: the info entries of the scenario's components, by name, arrays over the
    envs (env first): with reaction wheels ``wheel_momentum`` (N, n) N·m·s and
    ``wheel_saturated`` (N,); with an estimator its estimate and covariance
    (:meth:`~rigidrot_gym.attitude.batch.AttitudeBatch.extras`).
    ``is_success``: the task's success, the tolerance held for ``success_hold_steps``
    consecutive steps (at least one) up to this step, which ends the episode when
    ``success_hold_steps`` > 0; ``in_tolerance``: within both tolerances at this step.
    """

    __slots__ = ("extras", "flags", "obs", "values")

    def __init__(
        self, obs: np.ndarray, values: np.ndarray, flags: np.ndarray, extras: dict[str, np.ndarray]
    ) -> None:
        # The extras, which the batch updates in place, are the caller's to copy.
        self.obs, self.values, self.flags, self.extras = obs, values, flags, extras

    @property
    def reward(self) -> np.ndarray:
        return self.values[REWARD]

    @property
    def terminated(self) -> np.ndarray:
        return self.flags[TERMINATED]

    @property
    def truncated(self) -> np.ndarray:
        return self.flags[TRUNCATED]

    @property
    def is_success(self) -> np.ndarray:
        return self.flags[SUCCESS]

    @property
    def in_tolerance(self) -> np.ndarray:
        return self.flags[IN_TOLERANCE]

    @property
    def pointing_error_deg(self) -> np.ndarray:
        return self.values[POINTING_DEG]

    @property
    def rate(self) -> np.ndarray:
        return self.values[RATE]

    def info(self, i: int) -> dict[str, Any]:
        """Env i's ``info`` dict (the extras' entries only where the scenario has them)."""
        return info_of(self.values, self.flags, i, self.extras)

    def row(self, i: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Env i's ``(obs, reward, terminated, truncated, info)``, as a single env returns them."""
        return row_of(self.obs, self.values, self.flags, i, self.extras)

    def infos(self) -> list[dict[str, Any]]:
        """Every env's ``info`` dict (as :meth:`info`), from each array's values as a list at
        once (a numpy scalar read per env costs more than the dict). An extra's row is a view
        of this step's array, not a copy as :meth:`info` makes: the batch never writes these
        arrays again (copying each row again took half of the SB3 adapter's 175 µs of infos
        per step of 64 ``NadirPoint-v0`` envs; they take 65 µs now)."""
        if not self.extras:
            columns = (self.pointing_error_deg, self.rate, self.is_success, self.in_tolerance)
            return [_info(*values) for values in zip(*(c.tolist() for c in columns), strict=True)]
        entries = self.info_arrays()
        # per env, each entry's row (a view) or, where the row is one value, a Python number
        columns = (list(v) if v.ndim > 1 else v.tolist() for v in entries.values())
        names = tuple(entries)
        return [dict(zip(names, row, strict=True)) for row in zip(*columns, strict=True)]

    def info_arrays(self) -> dict[str, np.ndarray]:
        """The same entries as arrays over the envs (Gymnasium's vector ``info``)."""
        return {
            "pointing_error_deg": self.pointing_error_deg,
            "rate": self.rate,
            "is_success": self.is_success,
            "in_tolerance": self.in_tolerance,
            **self.extras,
        }


class Results:
    """The outputs of :class:`~rigidrot_gym.attitude.batch.AttitudeBatch` (a part of it):
    the arrays its last call wrote (``obs``, ``_values``, ``_flags``), handed out whole
    (:meth:`result`) or by rows (:meth:`info`, :meth:`row`), and its components' ``info``
    entries (:meth:`extras`, views of ``_equipment``)."""

    def result(self) -> StepResult:
        """The last step's arrays: the batch's own (its next call writes new ones); the
        extras, which the batch updates in place, copied."""
        self._handed_out = True
        extras = self._extras
        if extras:
            extras = {key: value.copy() for key, value in extras.items()}
        return StepResult(self.obs, self._values, self._flags, extras)

    def info(self, i: int) -> dict[str, Any]:
        """Body i's ``info`` dict now (as :meth:`StepResult.info`, without copying the batch)."""
        return info_of(self._values, self._flags, i, self._extras)

    def row(self, i: int) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        """Body i's ``(obs, reward, terminated, truncated, info)`` now (as
        :meth:`StepResult.row`: copies, so the batch's arrays are not handed out)."""
        return row_of(self.obs, self._values, self._flags, i, self._extras)

    def extras(self) -> dict[str, np.ndarray]:
        """The ``info`` entries of the scenario's components (each declaration's ``info``, in
        :data:`INFO`'s order), by name, arrays over the bodies (views, body first; each
        env's info holds its row). Those a scenario may have:
        """
        return dict(self._extras)


def extras_views(equipment: Any, features: Any) -> dict[str, np.ndarray]:
    """The ``info`` entries of a batch with ``equipment`` and the flags ``features``, by
    name: views of the equipment's arrays, which every period updates in place, so that a
    batch makes them once, with the records it hands the compiled call
    (:mod:`~rigidrot_gym.attitude.transport`), not at every step of a single env."""
    infos = infos_of(features)
    if not infos:  # the plain task: nothing to build
        return NO_EXTRAS
    out: dict[str, np.ndarray] = {}
    for info in infos:
        value = info.of(equipment)
        if value is not None:
            out[info.name] = value
    return out


# The entries' list in the docstring is the declarations' own.
Results.extras.__doc__ = (
    inspect.cleandoc(Results.extras.__doc__)
    + "\n\n"
    + "\n".join(f"* ``{info.name}``: {info.doc}" for info in INFO)
)
