"""The exact torque-free motion as a method: each step is the Jacobi-elliptic solution.

Source: :mod:`rigidrot_gym.physics.rotation.exact` (Celledoni, Fassò, Säfström & Zanna, SIAM J. Sci.
Comput. 30 (2008)). Exact up to round-off for torque-free motion; refuses a torque.
Torque evaluations per step: 0. Conserves energy and world angular momentum to
round-off.
"""

from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation.exact import free_rotation
from rigidrot_gym.physics.rotation.integrators.base import ComponentMethod


@jitable
def step(n, t, h, q, w, s, inertia, torque, potential, p, opts):
    q1, w1 = free_rotation(q, w, inertia, h)
    return q1, w1, s, 0.0


METHOD = ComponentMethod(
    name="exact",
    step=step,
    order=0,
    torque_evals=0,
    source="exact torque-free solution (Jacobi elliptic functions)",
    accepts_torque=False,
)
