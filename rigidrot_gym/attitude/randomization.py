"""Domain randomisation of a body: inertia, actuator limits and start ranges, from
uniforms and normals drawn at reset (:func:`rigidrot_gym.attitude.starts.start_states`).

Every randomised inertia is a valid tensor: positive principal moments that satisfy the
triangle inequality I_a + I_b ≥ I_c (the moments of any real mass distribution do).
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude.components.declaration import Component, Draw
from rigidrot_gym.attitude.settings import Table, bounded, fraction, setting
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import quaternion as quat

# Redraws of one body's moments before giving up. A draw is accepted with probability
# about ½ or more (a nominal body on the boundary, a thin plate, accepts the half-space of
# draws that keeps it physical; any other nominal body more): 200 rejections in a row
# happen with probability below 10⁻⁶⁰.
MAX_REDRAWS = 200


class Randomization(Table, key="randomization"):
    """Domain randomisation, re-drawn at every reset."""

    inertia: float = setting(
        0.0,
        check=fraction,
        flat="randomize_inertia",
        switch=True,
        doc="each principal moment × (1 ± this), uniform, redrawn until physical",
    )
    inertia_rotation_deg: float = setting(
        0.0,
        check=bounded(180.0),
        unit="deg",
        flat="randomize_inertia_rotation_deg",
        switch=True,
        doc="principal axes turned by up to this: products of inertia",
    )
    torque: float = setting(
        0.0,
        check=fraction,
        flat="randomize_torque",
        switch=True,
        doc="each torque limit × (1 ± this), a preset wheel's motor limit too "
        "(beside wheels, the rods keep theirs)",
    )
    start: float = setting(
        0.0,
        check=fraction,
        flat="randomize_start",
        switch=True,
        doc="start rate spread and start angle × (1 ± this)",
    )


@jitable
def spread(nominal, fraction, u):
    """nominal × (1 + fraction (2u − 1)): uniform within ±``fraction`` of ``nominal``
    (scalars, or arrays broadcast against uniforms ``u`` on [0, 1))."""
    return nominal * (1.0 + fraction * (2.0 * u - 1.0))


def physical(moments: np.ndarray) -> np.ndarray:
    """(...) whether principal moments (..., 3) satisfy I_a + I_b ≥ I_c for every c."""
    total = moments[..., 0] + moments[..., 1] + moments[..., 2]
    return np.all(total[..., None] - 2.0 * moments >= 0.0, axis=-1)


def scaled_moments(
    moments: np.ndarray, fraction: float, u: np.ndarray, rngs: list[np.random.Generator]
) -> np.ndarray:
    """Principal moments (R, 3), each uniform within ±``fraction`` of ``moments`` (3,),
    conditioned on the triangle inequality: m ⊙ (1 + fraction (2u − 1)) from the uniforms
    ``u`` (R, 3), and for a row whose body is not :func:`physical`, again from three new
    uniforms of that row's generator ``rngs[r]``, until it is (rejection sampling). The law
    is the uniform one on the box of ±``fraction`` restricted to physical bodies; no body
    is pushed onto the boundary I_a + I_b = I_c (a flat plate), and a row whose first draw
    is physical draws nothing more.

    Raises:
        RuntimeError: if a row draws :data:`MAX_REDRAWS` unphysical bodies in a row.
    """
    m = np.asarray(moments, dtype=np.float64)
    scaled = spread(m, fraction, np.asarray(u))
    for r in np.flatnonzero(~physical(scaled)).tolist():
        for _ in range(MAX_REDRAWS):
            scaled[r] = spread(m, fraction, rngs[r].random(3))
            if physical(scaled[r]):
                break
        else:
            raise RuntimeError(
                f"no physical body in {MAX_REDRAWS} draws of moments within ±{fraction} of {m.tolist()}"
            )
    return scaled


def turned_axes(
    principal: np.ndarray, max_angle: float, axis_normals: np.ndarray, u: np.ndarray
) -> np.ndarray:
    """Principal frames (R, 4) turned from ``principal`` (4,) by an angle uniform in
    [0, ``max_angle``] (rad, uniforms ``u`` (R,)) about a uniform axis (normals
    ``axis_normals`` (R, 3)), turning the body-frame inertia J = B diag(m) Bᵀ so that it
    gains products of inertia."""
    axis = axis_normals / np.linalg.norm(axis_normals, axis=-1, keepdims=True)
    turn = quat.from_rotvec((max_angle * np.asarray(u))[:, None] * axis)
    return quat.multiply(turn, principal)


def _reset(episode) -> None:
    """The body itself: its moments, principal axes and actuator limits (the start ranges
    are drawn by the compiled start, :func:`~rigidrot_gym.attitude.starts.start_state`)."""
    batch, rows, draws = episode.batch, episode.rows, episode.draws
    s = batch.scenario
    moments, principal = episode.nominal
    if s.randomize_inertia:
        rngs = [batch.rngs[i] for i in rows.tolist()]
        batch.moments[rows] = scaled_moments(
            moments, s.randomize_inertia, draws["randomization.inertia"], rngs
        )
    if s.randomize_inertia_rotation_deg:
        turn = np.radians(s.randomize_inertia_rotation_deg)
        batch.principal[rows] = turned_axes(
            principal, turn, draws["randomization.turn_axis"], draws["randomization.turn_angle"]
        )
    if s.randomize_torque:  # the torquing actuators' limits (the rods' when they act alone)
        m = batch.actuators.torquing or batch.actuators.count
        batch.limits[rows, :m] = spread(
            batch.actuators.limits[:m], s.randomize_torque, draws["randomization.torque"][:, :m]
        )


COMPONENT = Component(
    name="randomization",
    summary="domain randomisation: inertia, principal axes, actuator limits and start ranges, per episode",
    table=Randomization,
    on=lambda s: bool(
        s.randomize_inertia or s.randomize_inertia_rotation_deg or s.randomize_torque or s.randomize_start
    ),
    switch="[randomization]",
    reset=_reset,
    realism_block=True,
    draws=(
        Draw("turn_axis", 3, normal=True),
        Draw("inertia", 3),
        Draw("turn_angle", 1),
        Draw("torque", 4),  # up to 4 wheels
        Draw("start_angle", 1),
        Draw("start_rate", 1),
    ),
)
