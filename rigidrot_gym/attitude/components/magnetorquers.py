"""Magnetorquers: three magnetic torque rods along the body axes, alone or beside reaction
wheels (then the action's last three entries: the rods unload the wheels). Their actions
a ∈ [-1, 1]³ (clipped) are their dipoles m = a ⊙ m_max, A·m² (after the actuators' delay and noise),
held over the control period; the torque τ = m × R(q)ᵀ B (Wertz 1978 §17.2) is the
library's compiled term (:class:`~rigidrot_gym.physics.rotation.torques.MagneticDipole`), evaluated
at every integrator stage with the field B of the period's start held in the world frame
(:mod:`~rigidrot_gym.attitude.components.magnetic_field`), as Basilisk's ``MtbEffector``
reads its field message once per task step.

With a duty cycle d < 1 the rods are off for the first 1 − d of each period, while a
magnetometer would measure the field undisturbed by them, and act for the rest ("measure,
then actuate"): the sub-steps of the off part run with no dipole (the rods switch between
sub-steps, so d × substeps is a whole number), and the field observed at the period's end
is the one the next period's rods act in.

Not modelled: the rods' own field on the magnetometer when they are on, their current and
power limits beyond the dipole limit.
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude.components.declaration import Component, Feature, Need, State
from rigidrot_gym.attitude.settings import ScenarioError, Table, bounded, flag, setting, vector
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import torques
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.quaternion import qrotate_inv


class MagnetorquerTable(Table, key="magnetorquers"):
    """Three magnetic torque rods along the body axes (needs ``[magnetic_field]``)."""

    enabled: bool = setting(
        False,
        check=flag,
        flat="magnetorquers",
        switch=True,
        doc="the actions are the rods' dipoles, a ⊙ max_dipole, instead of torques",
    )
    max_dipole: np.ndarray = setting(
        (0.2, 0.2, 0.2),
        check=vector(positive=True),
        unit="A·m²",
        flat="magnetorquer_max_dipole",
        doc="dipole limit per rod (0.2 A·m²: ISISpace iMTQ, a 6U CubeSat's magnetorquer board)",
    )
    duty_cycle: float = setting(
        1.0,
        check=bounded(1.0, positive=True),
        flat="magnetorquer_duty_cycle",
        switch=True,
        doc="the share of each period the rods act, at its end (off before: a magnetometer measures); "
        "× substeps a whole number",
    )


@jitable
def hold(equipment, work, b, params, first, i):
    """Body i's dipole m = Σ_k u_k a_k (its rods' dipoles u_k along their axes a_k, the
    actuators from ``first`` on: wheels, if any, come before them), turned into principal
    axes (B* m B), and its field (world frame) into the torque parameters."""
    axes = equipment.axes
    m = (0.0, 0.0, 0.0)
    for k in range(first, work.commands.shape[0]):
        m = vec.axpy(work.commands[k, i], (axes[0, k], axes[1, k], axes[2, k]), m)
    d, f = torques.MAG_DIPOLE, torques.MAG_FIELD
    params[d, i], params[d + 1, i], params[d + 2, i] = qrotate_inv(b, m)
    params[f, i], params[f + 1, i], params[f + 2, i] = (
        equipment.field[i, 0],
        equipment.field[i, 1],
        equipment.field[i, 2],
    )


def off_substeps(duty_cycle: float, substeps: int) -> int:
    """The sub-steps at the start of a period with the rods off, (1 − d) × substeps.

    Raises:
        ValueError: unless d × substeps is a whole number (within 1e-9).
    """
    on = duty_cycle * substeps
    if abs(on - round(on)) > 1e-9:
        raise ValueError(
            f"magnetorquer_duty_cycle × substeps must be a whole number of sub-steps (the rods switch "
            f"between sub-steps), got {duty_cycle!r} × {substeps!r} = {on!r}"
        )
    return substeps - round(on)


@jitable
def switch_off(params, saved, lo, hi):
    """Bodies ``lo`` … ``hi`` − 1: their held dipoles into ``saved`` (3, N), zero in ``params``."""
    d = torques.MAG_DIPOLE
    for c in range(3):
        for i in range(lo, hi):
            saved[c, i] = params[d + c, i]
            params[d + c, i] = 0.0


@jitable
def switch_on(params, saved, lo, hi):
    """Bodies ``lo`` … ``hi`` − 1: their dipoles back from ``saved``."""
    d = torques.MAG_DIPOLE
    for c in range(3):
        for i in range(lo, hi):
            params[d + c, i] = saved[c, i]


def _whole_off_part(s) -> None:
    if s.magnetorquers:
        try:
            off_substeps(s.magnetorquer_duty_cycle, s.substeps)
        except ValueError as err:
            raise ScenarioError(str(err)) from None


COMPONENT = Component(
    name="magnetorquers",
    summary="three magnetic torque rods (actions are dipoles, τ = m × B), alone or after the wheels, "
    "with a duty cycle",
    table=MagnetorquerTable,
    attribute="rods",
    on=lambda s: s.magnetorquers,
    switch="magnetorquers.enabled",
    needs=(Need("magnetic_field"),),
    rules=(_whole_off_part,),
    features=(
        Feature("magnetorquers", lambda s, f: s.magnetorquers, "magnetic torque rods (actions are dipoles)"),
        Feature(
            "duty_cycle",
            lambda s, f: s.magnetorquers and s.magnetorquer_duty_cycle < 1.0,
            "the rods are off for the first part of each period",
        ),
    ),
    state=(
        State(
            "rods_off",
            "sub-steps at the start of a period with the rods off (their duty cycle)",
            lambda b: (
                off_substeps(b.scenario.magnetorquer_duty_cycle, b.scenario.substeps)
                if b.scenario.magnetorquers
                else 0
            ),
            lambda f: f.duty_cycle,
        ),
    ),
)
