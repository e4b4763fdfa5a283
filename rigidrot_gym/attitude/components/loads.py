"""The torque parameters held over a control period (the library's compiled torque model,
:func:`~rigidrot_gym.physics.rotation.torques.model_of`, reads them at every integrator stage):
the body torque τ = sign · A u + d of the actuator torques u about their axes A plus the
disturbances d, and with wheels their momentum h = A h_w and its rate A u, all turned into
principal axes. Per body, in a fixed order of operations (a matrix product's summation
order depends on the batch size, and row i of a batch must repeat a single env bit for bit).
"""

from __future__ import annotations

from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import torques
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.quaternion import qrotate_inv


@jitable
def actuator_torque(equipment, work, tau, count, i):
    """τ + sign · Σ_k u_k a_k: body i's torques of its first ``count`` actuators (torquers
    or wheels; magnetorquers follow them) about their axes, added to ``tau``."""
    axes = equipment.axes
    for k in range(count):
        tau = vec.axpy(equipment.sign * work.commands[k, i], (axes[0, k], axes[1, k], axes[2, k]), tau)
    return tau


@jitable
def wheel_momentum(equipment, work, i):
    """Body i's wheel momentum h = Σ_k h_k a_k and its rate Σ_k u_k a_k (body frame)."""
    axes = equipment.axes
    h = hdot = (0.0, 0.0, 0.0)
    for k in range(equipment.wheel_momentum.shape[1]):
        axis = (axes[0, k], axes[1, k], axes[2, k])
        h = vec.axpy(equipment.wheel_momentum[i, k], axis, h)
        hdot = vec.axpy(work.commands[k, i], axis, hdot)
    return h, hdot


@jitable
def hold_body_torque(tau, b, params, i):
    """Hold body i's body-frame torque τ, turned into principal axes (B* τ B)."""
    tau = qrotate_inv(b, tau)
    params[torques.BODY, i], params[torques.BODY + 1, i], params[torques.BODY + 2, i] = tau


@jitable
def hold_wheel_momentum(h, hdot, b, params, i):
    """Hold body i's wheel momentum and its rate (body frame), turned into principal axes."""
    h, hdot = qrotate_inv(b, h), qrotate_inv(b, hdot)
    params[torques.WHEEL_H, i], params[torques.WHEEL_H + 1, i], params[torques.WHEEL_H + 2, i] = h
    w = torques.WHEEL_HDOT
    params[w, i], params[w + 1, i], params[w + 2, i] = hdot
