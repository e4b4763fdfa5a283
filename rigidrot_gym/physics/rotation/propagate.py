"""``propagate``: the one entry point that runs any registered method on a batch."""

from __future__ import annotations

import numpy as np

from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.rotation import integrators, torques
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.inertia import principal_frame
from rigidrot_gym.physics.rotation.integrators.base import STATE_SIZE
from rigidrot_gym.physics.rotation.torques import Potential
from rigidrot_gym.physics.rotation.trajectory import Trajectory


def propagate(
    q0,
    omega0,
    inertia,
    dt: float,
    steps: int,
    method: str = "rk4",
    torque=None,
    *,
    substeps: int = 1,
    renormalize_momentum: bool = False,
    torque_frame: str = "body",
    potential: Potential | None = None,
    t0: float = 0.0,
    check_triangle: bool = True,
    **options,
) -> Trajectory:
    """Integrate the rotation of one rigid body or a batch of them.

    Args:
        q0: (..., 4) initial attitudes, scalar-first, body to world.
        omega0: (..., 3) initial body rates, rad/s.
        inertia: (..., 3) principal moments (the body frame is principal), or a
            (..., 3, 3) body-frame tensor: then the body frame need not be principal;
            the run happens in principal axes (Mandre 2008, §7.1) and results come back
            in the given frame. kg·m².
        dt: step between recorded states, s.
        steps: number of recorded steps.
        method: a name from :func:`rigidrot_gym.physics.rotation.integrators.names`.
        torque: ``None``; a constant torque broadcastable to (..., 3); a compiled term
            (:class:`~rigidrot_gym.physics.rotation.torques.BodyTorque`, ``WorldTorque``, ``PointForce``,
            ``WheelMomentum``, ``GravityGradient``, ``MagneticDipole``) or a list of them; or a
            callable ``torque(t, q, omega) -> (..., 3)`` evaluated at every stage of the method
            (q, omega as (..., 4), (..., 3) arrays in the given body frame). N·m.
            Constants and compiled terms run in compiled kernels; a callable runs the
            same method vectorised in numpy.
        substeps: integration steps per recorded step (Mandre 2008, §7.4); steps × substeps
            may be at most 2**53. A long compiled run is interruptible (Ctrl-C).
        renormalize_momentum: torque-free runs only: after every step reset ω from the
            initial world angular momentum (Mandre 2008, §7.2). ``True`` or ``False``.
        torque_frame: ``"body"`` or ``"world"``: the frame of an array or callable torque.
        potential: a conservative load with ``energy(q)`` and ``gradient(q)`` on
            (..., 4) attitudes (:class:`~rigidrot_gym.physics.rotation.torques.Potential`). Methods that
            support it (``nielsen_krenk``) conserve its energy; the others feel its
            torque −½ vec(q* ⊗ ∇V).
        t0: initial time, s.
        check_triangle: reject principal moments that violate I1 + I2 ≥ I3, which no
            rigid body has. Seed 003's examples I = (2, 2, 8) and (2, 8, 4) do; pass
            False to integrate such moments as parameters of Euler's equations.
        **options: method options (e.g. ``project_every`` for ``rkn``); see
            :meth:`~rigidrot_gym.physics.rotation.integrators.Method.pack_options`.

    Returns:
        Trajectory with ``t`` (steps + 1,), ``q`` (steps + 1, ..., 4), ``omega``
        (steps + 1, ..., 3) and diagnostics.

    Raises:
        ValueError: on any invalid argument (the message names it and its value), or if
            the integration produced non-finite values.
        ConvergenceError: if an implicit method's solver did not converge.
    """
    m = integrators.get(method)
    opts = m.pack_options(options)
    q0 = validation.unit_quaternions(q0, "q0")
    omega0 = validation.vectors(omega0, "omega0", 3)
    renormalize_momentum = validation.boolean(renormalize_momentum, "renormalize_momentum")
    check_triangle = validation.boolean(check_triangle, "check_triangle")
    moments, principal, tensor = principal_frame(inertia, triangle=check_triangle)
    dt, t0 = validation.scalar(dt, "dt", positive=True), validation.scalar(t0, "t0")
    steps = validation.count(steps, "steps", minimum=0)
    substeps = validation.count(substeps, "substeps", minimum=1)
    if steps * substeps > validation.MAX_COUNT:
        raise ValueError(
            f"steps × substeps must be at most 2**53 (the sub-step index and the time t0 + n·dt/substeps "
            f"stay exact), got {steps} × {substeps} = {steps * substeps}"
        )
    validation.end_time(t0, dt, steps)
    torque_frame = validation.one_of(torque_frame, "torque_frame", torques.FRAMES)
    loaded = torque is not None or potential is not None
    if loaded and not m.accepts_torque:
        given = validation.show(torque if torque is not None else potential)
        raise ValueError(f"method {method!r} integrates torque-free motion only; got a load {given}")
    if renormalize_momentum and loaded:
        raise ValueError("renormalize_momentum applies to torque-free runs only; got a torque")
    batch = validation.batch_shape(q0=q0.shape[:-1], omega0=omega0.shape[:-1], inertia=moments.shape[:-1])
    loads = torques.resolve(torque, torque_frame, batch, principal, moments, potential, m.uses_potential)

    n = int(np.prod(batch, dtype=np.int64))
    if (steps + 1) * max(n, 1) * STATE_SIZE > np.iinfo(np.intp).max // 8:
        raise ValueError(
            f"steps = {steps} for {n} bodies asks for a trajectory beyond any memory "
            f"({steps + 1} × {n} × {STATE_SIZE} floats); record fewer steps (more substeps per step)"
        )
    q_p = q0 if principal is None else quat.multiply(q0, principal)
    w_p = omega0 if principal is None else quat.rotate_inverse(principal, omega0)
    state = np.zeros((n, STATE_SIZE))
    state[:, 0:4] = np.broadcast_to(q_p, batch + (4,)).reshape(n, 4)
    state[:, 4:7] = np.broadcast_to(w_p, batch + (3,)).reshape(n, 3)
    try:
        traj, stats = m.buffers(n, steps)
    except MemoryError:
        size = (steps + 1) * n * STATE_SIZE * 8 / 2**30
        raise MemoryError(
            f"steps = {steps} for {n} bodies needs {size:,.0f} GiB for the trajectory; "
            "record fewer steps (more substeps per step)"
        ) from None
    inertia_rows = np.ascontiguousarray(np.broadcast_to(moments, (*batch, 3)).reshape(n, 3))
    m.run(state, inertia_rows, loads, t0, dt, steps, substeps, opts, renormalize_momentum, traj, stats)
    bad = ~np.all(np.isfinite(traj), axis=(1, 2))
    if np.any(bad):
        k = int(np.argmax(bad))
        raise ValueError(
            f"method {method!r} produced non-finite values at step {k} (t = {t0 + k * dt:g} s) with "
            f"dt = {dt:g} s and substeps = {substeps}: the step is too large for this motion"
        )
    q = traj[..., 0:4].reshape((steps + 1, *batch, 4))
    omega = traj[..., 4:7].reshape((steps + 1, *batch, 3))
    if principal is not None:
        q = quat.multiply(q, quat.conjugate(principal))
        omega = quat.rotate(principal, omega)
    return Trajectory(
        t=t0 + dt * np.arange(steps + 1),
        q=q,
        omega=omega,
        inertia=np.broadcast_to(tensor, batch + (3, 3)),
        method=method,
        torque_evaluations=m.torque_evaluations(steps * substeps, stats[:, 1]).reshape(batch),
        iterations=stats[:, 0].reshape(batch),
    )
