"""Magnetorquers: three magnetic torque rods along the body axes, alone or beside reaction
wheels (then the action's last three entries: the rods unload the wheels). Their actions
a ∈ [-1, 1]³ (clipped) are their dipoles m = a ⊙ m_max, A·m² (after the actuators' delay and noise),
held over the control period; the torque τ = m × R(q)ᵀ B (Wertz 1978 §17.2) is the
library's compiled term (:class:`~rigidrot_gym.physics.torques.MagneticDipole`), evaluated
at every integrator stage with the field B of the period's start held in the world frame
(:mod:`~rigidrot_gym.attitude.components.magnetic_field`), as Basilisk's ``MtbEffector``
reads its field message once per task step.

Not modelled: a duty cycle (rods off while a magnetometer measures), the rods' own field
on the magnetometer, their current and power limits beyond the dipole limit.
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude.settings import Table, flag, setting, vector
from rigidrot_gym.physics import torques
from rigidrot_gym.physics import vector as vec
from rigidrot_gym.physics.jit import jitable
from rigidrot_gym.physics.quaternion import qrotate_inv


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
