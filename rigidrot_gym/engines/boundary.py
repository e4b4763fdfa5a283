"""What every engine wrapper does at its boundary with our state.

* :func:`torque_of`: the body-frame torque (principal axes, N·m) of our load model,
  evaluated from (t, q, ω) of a set of bodies, as the engine's force input needs it.
* :func:`is_torque_free`: whether the loads are zero (an engine may then skip applying
  them).
* :func:`continuous`: an engine's attitude read back with the sign of the previous one
  (q and −q are the same attitude; Basilisk's MRP switching flips it, and no engine
  promises to keep it), so a recorded trajectory has no sign jumps.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from rigidrot_gym.physics.rotation.torques import BODY, WORLD, Loads, model_torque


def is_torque_free(loads: Loads) -> bool:
    """True when ``loads`` apply no torque at all."""
    return loads.compiled and loads.model is model_torque and not np.any(loads.params)


def torque_of(
    loads: Loads, rows: slice = slice(None)
) -> Callable[[float, np.ndarray, np.ndarray], np.ndarray]:
    """The torque on bodies ``rows`` as ``tau(t, q, w)`` ((n, 4), (n, 3) -> (n, 3)).

    A Python torque (``loads.torque``) is written for the whole batch: then ``rows``
    must select every body.

    Raises:
        ValueError: for a proper subset of the bodies with a Python torque.
    """
    rows_params = loads.params[rows]
    if not loads.compiled and len(rows_params) != len(loads.params):
        raise ValueError(
            f"a Python torque is evaluated on the whole batch of {len(loads.params)} bodies, "
            f"not on {len(rows_params)} of them"
        )
    if loads.compiled and loads.model is model_torque and not np.any(rows_params[:, WORLD:]):
        # A body torque alone (the env's case) is constant over the run.
        body = rows_params[:, BODY : BODY + 3].copy()
        return lambda t, q, w: body
    params = tuple(rows_params.T)
    torque = loads.model if loads.compiled else loads.torque

    def tau(t: float, q: np.ndarray, w: np.ndarray) -> np.ndarray:
        components = torque(t, tuple(q.T), tuple(w.T), params)
        return np.broadcast_to(np.stack(np.broadcast_arrays(*components), axis=-1), (len(q), 3))

    return tau


def continuous(q: np.ndarray, previous: np.ndarray) -> np.ndarray:
    """A copy of ``q`` ((n, 4)) with each row's sign flipped where it points away from
    ``previous``."""
    q = np.array(q)
    flip = np.einsum("ij,ij->i", q, previous) < 0.0
    if flip.any():
        q[flip] = -q[flip]
    return q
