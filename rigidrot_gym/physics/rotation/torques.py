"""Loads as the integrators see them: a torque and, for conservative loads, a potential.

Every integrator evaluates the torque at each of its stages through one signature,
``torque(t, q, omega, p) -> τ``: ``t`` the stage time (s), ``q`` and ``omega`` the
stage attitude and body rates as component tuples, ``p`` the body's torque parameters
as a SIZE-tuple (:func:`parameters`: floats compiled, arrays over the batch in numpy
mode; a tuple rather than an array row, which would cost reference counting at every
call); it returns the body-frame torque (N·m, principal axes) as a 3-tuple.
Stage quaternions of Runge–Kutta methods are slightly off unit length, so every torque
sees ``q/|q|``. Methods that use a potential (``nielsen_krenk``) also call
``potential(q, p) -> (V, ∇V)``, with ∇V the 4-vector gradient with respect to q.

Two implementations exist of each:

* :func:`model_torque` / :func:`model_potential`, compiled into the kernels: sums of the
  terms :class:`BodyTorque`, :class:`WorldTorque`, :class:`PointForce`,
  :class:`WheelMomentum`, :class:`GravityGradient` and :class:`MagneticDipole`,
  read from the parameter row ``p`` (layout below); :func:`body_torque` is its special
  case for batches with a body torque only (the env's case), which a kernel picks once
  per batch so that its loop over bodies stays free of branches and vectorises. Their
  potential is zero: the conservative terms, a constant force F at a body point r
  (V = −r · (q* F q)) and a body-fixed magnetic dipole m in a constant field B
  (V = −m · (q* B q), the same form), are quadratic in q, for which
  the torque at the midpoint attitude already is the exact discrete gradient.
* closures built by :func:`resolve` around a user's Python ``torque(t, q, omega)`` and
  ``potential`` on batched ``(..., 4)`` / ``(..., 3)`` arrays; methods then run
  vectorised in numpy, and the compiled terms are evaluated by the same functions.

A potential V(q) acts on a body as the torque τ = −½ vec(q* ⊗ ∇V) (virtual work with
δq = ½ q ⊗ (0, δθ)); methods without a potential of their own get it that way.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

import numpy as np

from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.plumbing.jit import any_true, jitable
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.quaternion import qnormalize, qrotate_inv

# Layout of a parameter row of the compiled model.
BODY = 0  # [0:3] constant torque in the body frame, N·m
WORLD = 3  # [3:6] constant torque in the world frame, N·m
POINT = 6  # [6:9] body point where a constant world force acts, m
FORCE = 9  # [9:12] that force, world frame, N
WHEEL_H = 12  # [12:15] reaction-wheel momentum h at t = 0, body frame, N·m·s
WHEEL_HDOT = 15  # [15:18] its rate of change (the wheels' motor torques A u), N·m
GG_RATE = 18  # [18] 3n² of the gravity gradient, n the orbit's mean motion, 1/s²
GG_MOTION = 19  # [19] n, rad/s
GG_PHASE = 20  # [20] orbit phase at t = 0, rad
GG_MOMENTS = 21  # [21:24] the principal moments the gravity gradient acts on, kg·m²
MAG_DIPOLE = 24  # [24:27] magnetic dipole fixed in the body (magnetorquers' total), A·m²
MAG_FIELD = 27  # [27:30] magnetic field, constant in the world frame, T
GG_PLANE = 30  # [30:36] the orbit plane's axes P (phase 0) and Q (phase π/2), world frame
SIZE = 36

FRAMES = ("body", "world")


@jitable
def parameters(params, i):
    """Body ``i``'s parameters as a SIZE-tuple, from component-major ``params`` (SIZE, N)."""
    return (
        params[0, i],
        params[1, i],
        params[2, i],
        params[3, i],
        params[4, i],
        params[5, i],
        params[6, i],
        params[7, i],
        params[8, i],
        params[9, i],
        params[10, i],
        params[11, i],
        params[12, i],
        params[13, i],
        params[14, i],
        params[15, i],
        params[16, i],
        params[17, i],
        params[18, i],
        params[19, i],
        params[20, i],
        params[21, i],
        params[22, i],
        params[23, i],
        params[24, i],
        params[25, i],
        params[26, i],
        params[27, i],
        params[28, i],
        params[29, i],
        params[30, i],
        params[31, i],
        params[32, i],
        params[33, i],
        params[34, i],
        params[35, i],
    )


@jitable
def _vector(p, start):
    return (p[start], p[start + 1], p[start + 2])


@jitable
def _nonzero(p, start):
    return any_true((p[start] != 0.0) | (p[start + 1] != 0.0) | (p[start + 2] != 0.0))


@jitable
def model_torque(t, q, omega, p):
    """τ = τ_body + q* τ_world q + r × (q* F q) − ω × h(t) + 3n² r̂ × (I r̂) + m × (q* B q),
    from ``p``.

    h(t) = h + ḣ t is the momentum of reaction wheels spun by constant motor torques;
    r̂ = q* (cos(φ + n t) P + sin(φ + n t) Q) q the direction from the Earth in a circular
    orbit whose plane has the world axes P and Q (gravity-gradient torque, Wertz 1978
    §17.2); m × (q* B q)
    the torque on a body-fixed magnetic dipole m in the world-fixed field B (magnetic
    torque, same section).
    """
    tau = _vector(p, BODY)
    # Terms that are zero for every body are skipped: the common case is a body torque alone.
    if _nonzero(p, WORLD):
        tau = vec.add(tau, qrotate_inv(qnormalize(q), _vector(p, WORLD)))
    if _nonzero(p, FORCE):
        force = qrotate_inv(qnormalize(q), _vector(p, FORCE))
        tau = vec.add(tau, vec.cross(_vector(p, POINT), force))
    if _nonzero(p, WHEEL_H) or _nonzero(p, WHEEL_HDOT):
        tau = _wheels(tau, t, omega, p)
    if any_true(p[GG_RATE] != 0.0):
        tau = _gravity(tau, t, q, p)
    if _nonzero(p, MAG_DIPOLE) and _nonzero(p, MAG_FIELD):
        tau = _magnetic(tau, q, p)
    return tau


@jitable
def _wheels(tau, t, omega, p):
    """τ − ω × h(t), h(t) = h + ḣ t."""
    momentum = vec.axpy(t, _vector(p, WHEEL_HDOT), _vector(p, WHEEL_H))
    return vec.sub(tau, vec.cross(omega, momentum))


@jitable
def _gravity(tau, t, q, p):
    """τ + 3n² r̂ × (I r̂), r̂ = q* (cos(φ + n t) P + sin(φ + n t) Q) q."""
    phase = p[GG_PHASE] + p[GG_MOTION] * t
    c, s, a, b = np.cos(phase), np.sin(phase), _vector(p, GG_PLANE), _vector(p, GG_PLANE + 3)
    r = qrotate_inv(qnormalize(q), (c * a[0] + s * b[0], c * a[1] + s * b[1], c * a[2] + s * b[2]))
    return vec.axpy(p[GG_RATE], vec.cross(r, vec.mul(_vector(p, GG_MOMENTS), r)), tau)


@jitable
def _magnetic(tau, q, p):
    """τ + m × (q* B q)."""
    field = qrotate_inv(qnormalize(q), _vector(p, MAG_FIELD))
    return vec.add(tau, vec.cross(_vector(p, MAG_DIPOLE), field))


@jitable
def body_torque(t, q, omega, p):
    """τ = τ_body: :func:`model_torque` when its other terms are zero for every body."""
    return _vector(p, BODY)


_CALLS = {
    "wheels": "_wheels(tau, t, omega, p)",
    "gravity": "_gravity(tau, t, q, p)",
    "magnetic": "_magnetic(tau, q, p)",
}


@dataclass(frozen=True, eq=False)
class Term:
    """A torque term that another layer adds to the compiled model (an env component's:
    :func:`model_of`'s ``terms``): ``size`` parameters per body, in rows of the parameter
    array after the model's own :data:`SIZE` (where :func:`model_of` places them), and
    ``add``, a :func:`~rigidrot_gym.physics.plumbing.jit.jitable` function
    ``add(tau, t, q, omega, own) -> τ`` that returns ``tau`` plus its torque (body frame,
    principal axes, N·m, a 3-tuple) at the stage time ``t``, attitude ``q`` (slightly off
    unit length at Runge–Kutta stages: normalise before turning a vector) and rates
    ``omega``, ``own`` its parameters as a ``size``-tuple."""

    name: str
    size: int
    add: Callable


@functools.cache
def reader(size: int) -> Callable:
    """``read(params, i)``: body ``i``'s first ``size`` parameters as a tuple, from
    component-major ``params`` (≥ size, N); :func:`parameters` for the model's own SIZE."""
    if size == SIZE:
        return parameters
    name = f"_parameters_{size}"
    items = ", ".join(f"params[{k}, i]" for k in range(size))
    # In this module's namespace under its own name, as model_of's functions.
    exec(f"def {name}(params, i):\n    return ({items},)\n", globals())
    globals()[name] = jitable(globals()[name])
    return globals()[name]


@functools.cache
def model_of(
    wheels: bool, gravity: bool, magnetic: bool, terms: tuple[tuple[Term, int], ...] = ()
) -> Callable:
    """:func:`model_torque` of the body torque and only the terms named (the world torque
    and the point force left out), each evaluated for every body, with no branch on the
    parameters' values: a kernel whose batch uses just these terms (the env's scenario
    decides which) gets a loop over bodies that vectorises. The same terms in the same
    order as :func:`model_torque`: where it skips a term, that term is zero, and adding a
    zero changes no bit (but the sign of a zero). Then each of ``terms`` (a :class:`Term`
    and its first row, ≥ SIZE), in order; the parameter tuple is then read by
    :func:`reader` of the rows the last one ends at."""
    chosen = [name for name, on in (("wheels", wheels), ("gravity", gravity), ("magnetic", magnetic)) if on]
    if not chosen and not terms:
        return body_torque
    name = "_model_" + "_".join(chosen + [f"{term.name}{row}" for term, row in terms])
    lines = [f"def {name}(t, q, omega, p):", "    tau = _vector(p, BODY)"]
    lines += [f"    tau = {_CALLS[term]}" for term in chosen]
    for term, row in terms:
        if row < SIZE:
            raise ValueError(f"term {term.name!r} must start at a row ≥ {SIZE} (the model's own), got {row}")
        globals()[f"_term_{term.name}{row}"] = term.add
        lines.append(f"    tau = _term_{term.name}{row}(tau, t, q, omega, p[{row}:{row + term.size}])")
    lines.append("    return tau")
    # Defined in this module's namespace under its own name: numba's cache and pickling
    # find it by module and name, as they find model_torque.
    exec("\n".join(lines), globals())
    globals()[name] = jitable(globals()[name])
    return globals()[name]


@jitable
def model_potential(q, p):
    """The compiled model carries no potential: V = 0, ∇V = 0."""
    zero = 0.0 * q[0]
    return zero, (zero, zero, zero, zero)


def _field(term, name: str, value) -> None:
    """Set a frozen term's field to ``value`` as a finite (..., 3) float array, read-only."""
    a = np.array(validation.vectors(value, f"{type(term).__name__}.{name}", 3))
    a.setflags(write=False)
    object.__setattr__(term, name, a)


@dataclass(frozen=True)
class BodyTorque:
    """A constant torque ((..., 3), N·m) in the body frame."""

    torque: np.ndarray

    def __post_init__(self) -> None:
        _field(self, "torque", self.torque)


@dataclass(frozen=True)
class WorldTorque:
    """A constant torque ((..., 3), N·m) in the world frame."""

    torque: np.ndarray

    def __post_init__(self) -> None:
        _field(self, "torque", self.torque)


@dataclass(frozen=True)
class WheelMomentum:
    """Reaction wheels: body-frame momentum h(t) = ``momentum`` + ``rate`` · t ((..., 3),
    N·m·s and N·m) in the gyroscopic term, ω̇ = I⁻¹(τ − ω × (Iω + h)). Their motor torques'
    reaction on the body, −``rate``, is a separate :class:`BodyTorque`."""

    momentum: np.ndarray
    rate: np.ndarray

    def __post_init__(self) -> None:
        _field(self, "momentum", self.momentum)
        _field(self, "rate", self.rate)


@dataclass(frozen=True)
class GravityGradient:
    """The gravity-gradient torque 3n² r̂ × (I r̂) of a circular orbit with mean motion
    ``mean_motion`` n (rad/s, positive); ``phase`` (rad) places the body on the orbit at
    t = 0: r̂ = cos φ P + sin φ Q in the world frame, ``plane`` = (P, Q) the orbit plane's
    orthonormal axes (world frame; default world x and y: the orbit normal world z)."""

    mean_motion: float
    phase: float = 0.0
    plane: tuple = ((1.0, 0.0, 0.0), (0.0, 1.0, 0.0))

    def __post_init__(self) -> None:
        n = validation.scalar(self.mean_motion, "GravityGradient.mean_motion", positive=True)
        if not np.isfinite(3.0 * n * n):
            raise ValueError(f"GravityGradient.mean_motion must have a finite 3n², got {n!r}")
        object.__setattr__(self, "mean_motion", n)
        object.__setattr__(self, "phase", validation.scalar(self.phase, "GravityGradient.phase"))
        axes = validation.vectors(self.plane, "GravityGradient.plane", 3)
        if axes.shape != (2, 3) or not np.allclose(axes @ axes.T, np.eye(2), rtol=0.0, atol=1e-12):
            raise ValueError(
                "GravityGradient.plane must be two orthonormal 3-vectors (P, Q), got "
                + validation.show(self.plane)
            )
        object.__setattr__(self, "plane", (tuple(axes[0].tolist()), tuple(axes[1].tolist())))


@dataclass(frozen=True)
class PointForce:
    """A constant world-frame force ((..., 3), N) acting at a body point ((..., 3), m,
    from the centre of rotation): torque r × (q* F q). Weight on a top about its pivot."""

    force: np.ndarray
    point: np.ndarray

    def __post_init__(self) -> None:
        _field(self, "force", self.force)
        _field(self, "point", self.point)


@dataclass(frozen=True)
class MagneticDipole:
    """A magnetic dipole fixed in the body (``dipole`` m, (..., 3), A·m², body frame: the
    magnetorquer rods' total G μ) in a magnetic field constant in the world frame over the
    run (``field`` B, (..., 3), T): torque τ = m × (q* B q) = m × R(q)ᵀ B (Wertz 1978 §17.2),
    the torque of Basilisk's ``MtbEffector`` without its per-rod clipping. It derives from
    the potential V = −m · R(q)ᵀ B, so ½ ωᵀIω + V is conserved. At most one per
    propagation (a sum of dipoles in one field is one dipole)."""

    dipole: np.ndarray
    field: np.ndarray

    def __post_init__(self) -> None:
        _field(self, "dipole", self.dipole)
        _field(self, "field", self.field)


TERMS = (BodyTorque, WorldTorque, PointForce, WheelMomentum, GravityGradient, MagneticDipole)


class Potential(Protocol):
    """A conservative load V(q) on batched unit attitudes (..., 4)."""

    def energy(self, q: np.ndarray) -> np.ndarray:
        """(...) potential energy, J."""

    def gradient(self, q: np.ndarray) -> np.ndarray:
        """(..., 4) gradient ∂V/∂q."""


@dataclass(frozen=True)
class Loads:
    """Loads resolved for one propagation in principal axes.

    Attributes:
        params: (N, SIZE) parameter rows of the compiled model.
        torque: Python torque in the integrators' signature, or ``None`` when the
            compiled model covers every load (then methods run compiled).
        potential: Python potential in the integrators' signature (``None`` compiled).
        model: the compiled model that ``params`` are the rows of (:func:`model_torque`,
            or a :func:`model_of` with terms of another layer: an env's engine period).
    """

    params: np.ndarray
    torque: Callable | None = None
    potential: Callable | None = None
    model: Callable = model_torque

    @property
    def compiled(self) -> bool:
        return self.torque is None


def resolve(
    torque,
    frame: str,
    batch_shape: tuple[int, ...],
    principal,
    moments,
    potential: Potential | None = None,
    split_potential: bool = False,
) -> Loads:
    """Turn the user's ``torque`` and ``potential`` arguments into :class:`Loads`.

    Args:
        torque: ``None``; an array-like constant torque broadcastable to
            ``batch_shape + (3,)`` in ``frame``; a term of :data:`TERMS`, or a list of
            them; or a callable
            ``torque(t, q, omega) -> (..., 3)`` in ``frame`` on the user's batched
            attitudes and body rates.
        frame: ``"body"`` or ``"world"``: the frame of an array or callable torque.
        batch_shape: leading shape of the bodies.
        principal: ((..., 4) array or None) rotation from principal axes to the user's
            body frame, or None when the body frame is principal.
        moments: (..., 3) principal moments (the gravity gradient acts on them).
        potential: optional :class:`Potential`.
        split_potential: the method takes the potential separately (else its torque is
            added to the torque).
    """
    validation.one_of(frame, "torque_frame", FRAMES)
    methods = ("energy", "gradient")
    if potential is not None and not all(callable(getattr(potential, f, None)) for f in methods):
        shown = validation.show(potential)
        raise ValueError(f"potential must have methods energy(q) and gradient(q) (a Potential), got {shown}")
    n = int(np.prod(batch_shape, dtype=np.int64))
    params = np.zeros((n, SIZE))
    if callable(torque):
        function = torque
    else:
        function = None
        for term in _terms(torque, frame, batch_shape):
            _pack(term, params, batch_shape, principal, moments)
    if function is None and potential is None:
        return Loads(params)
    if function is None and split_potential:
        # Only the compiled terms act as torque: evaluate them directly in numpy mode.
        return Loads(params, model_torque, _python_potential(potential, batch_shape, principal, True))
    return Loads(
        params,
        torque=_python_torque(function, frame, params, batch_shape, principal, potential, split_potential),
        potential=_python_potential(potential, batch_shape, principal, split_potential),
    )


def _terms(torque, frame: str, batch_shape: tuple[int, ...]) -> list:
    if torque is None:
        return []
    if isinstance(torque, TERMS):
        return [torque]
    if isinstance(torque, list | tuple) and any(isinstance(t, TERMS) for t in torque):
        if not all(isinstance(t, TERMS) for t in torque):
            names = ", ".join(t.__name__ for t in TERMS)
            shown = validation.show(torque)
            raise ValueError(f"a torque list must hold only torque terms ({names}), got {shown}")
        return list(torque)
    # Checked here, under the argument's own name rather than the term's field.
    torque = _vectors(torque, "torque", batch_shape)
    return [WorldTorque(torque) if frame == "world" else BodyTorque(torque)]


def _vectors(value, what: str, batch_shape: tuple[int, ...]) -> np.ndarray:
    """``value`` broadcast to ``batch_shape + (3,)``; ``what`` names it in the errors."""
    a = validation.floats(value, what)
    target = (*batch_shape, 3)
    if a.ndim == 0 or a.shape[-1] != 3 or not validation.broadcasts_to(a.shape, target):
        raise ValueError(f"{what} must broadcast to shape {target}, got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{what} must be finite, got {validation.show(a.tolist())}")
    return np.broadcast_to(a, target)


def _pack(term, params: np.ndarray, batch_shape: tuple[int, ...], principal, moments) -> None:
    n = params.shape[0]

    def to_principal(v):
        return v if principal is None else np.broadcast_to(quat.rotate_inverse(principal, v), v.shape)

    if isinstance(term, BodyTorque):
        tau = to_principal(_vectors(term.torque, "torque", batch_shape))
        params[:, BODY : BODY + 3] += tau.reshape(n, 3)
    elif isinstance(term, WorldTorque):
        params[:, WORLD : WORLD + 3] += _vectors(term.torque, "torque", batch_shape).reshape(n, 3)
    elif isinstance(term, WheelMomentum):
        h = to_principal(_vectors(term.momentum, "WheelMomentum.momentum", batch_shape))
        rate = to_principal(_vectors(term.rate, "WheelMomentum.rate", batch_shape))
        params[:, WHEEL_H : WHEEL_H + 3] += h.reshape(n, 3)
        params[:, WHEEL_HDOT : WHEEL_HDOT + 3] += rate.reshape(n, 3)
    elif isinstance(term, GravityGradient):
        params[:, GG_RATE] = 3.0 * term.mean_motion**2
        params[:, GG_MOTION] = term.mean_motion
        params[:, GG_PHASE] = term.phase
        params[:, GG_MOMENTS : GG_MOMENTS + 3] = np.broadcast_to(moments, (*batch_shape, 3)).reshape(n, 3)
        params[:, GG_PLANE : GG_PLANE + 6] = np.ravel(term.plane)
    elif isinstance(term, MagneticDipole):
        # One dipole row and one field row: dipoles in different fields do not add up to one.
        if np.any(params[:, MAG_DIPOLE : MAG_FIELD + 3]):
            raise ValueError("at most one MagneticDipole per propagation")
        dipole = to_principal(_vectors(term.dipole, "MagneticDipole.dipole", batch_shape))
        params[:, MAG_DIPOLE : MAG_DIPOLE + 3] = dipole.reshape(n, 3)
        params[:, MAG_FIELD : MAG_FIELD + 3] = _vectors(
            term.field, "MagneticDipole.field", batch_shape
        ).reshape(n, 3)
    else:
        if np.any(params[:, FORCE : FORCE + 3]):
            raise ValueError("at most one PointForce per propagation")
        point = to_principal(_vectors(term.point, "PointForce.point", batch_shape))
        params[:, POINT : POINT + 3] = point.reshape(n, 3)
        params[:, FORCE : FORCE + 3] = _vectors(term.force, "PointForce.force", batch_shape).reshape(n, 3)


def _python_torque(function, frame, params, batch_shape, principal, potential, split_potential) -> Callable:
    """The integrators' torque for a Python callable and/or potential, plus compiled terms."""
    n = params.shape[0]
    compiled_terms = np.any(params)

    def torque(t, q, omega, p):
        q_p = quat.normalize(np.stack(q, axis=-1).reshape((*batch_shape, 4)))
        w_p = np.stack(omega, axis=-1).reshape((*batch_shape, 3))
        tau = np.zeros((*batch_shape, 3))
        if function is not None:
            q_user, w_user = _to_user(q_p, w_p, principal)
            applied = _vectors(
                function(t, q_user, w_user), f"the result of torque(t={t}, q, omega)", batch_shape
            )
            if frame == "world":
                tau = tau + quat.rotate_inverse(q_p, applied)
            else:
                tau = tau + (applied if principal is None else quat.rotate_inverse(principal, applied))
        if potential is not None and not split_potential:
            gradient = _principal_gradient(potential, q_p, principal, batch_shape)
            tau = tau - 0.5 * quat.multiply(quat.conjugate(q_p), gradient)[..., 1:]
        tau = tau.reshape(n, 3)
        if compiled_terms:
            extra = model_torque(t, tuple(q_p.reshape(n, 4).T), omega, tuple(params.T))
            return (tau[:, 0] + extra[0], tau[:, 1] + extra[1], tau[:, 2] + extra[2])
        return (tau[:, 0], tau[:, 1], tau[:, 2])

    return torque


def _python_potential(potential, batch_shape, principal, split_potential) -> Callable:
    """The integrators' potential; zero unless the method takes the potential itself."""
    n = int(np.prod(batch_shape, dtype=np.int64))
    if potential is None or not split_potential:
        return model_potential

    def split(q, p):
        q_p = np.stack(q, axis=-1).reshape((*batch_shape, 4))
        q_user, _ = _to_user(q_p, None, principal)
        energy = validation.floats(potential.energy(q_user), "potential.energy(q)")
        if not validation.broadcasts_to(energy.shape, batch_shape):
            raise ValueError(f"potential.energy(q) must return shape {batch_shape}, got shape {energy.shape}")
        if not np.all(np.isfinite(energy)):
            shown = validation.show(energy.tolist())
            raise ValueError(f"potential.energy(q) returned non-finite values: {shown}")
        gradient = _principal_gradient(potential, q_p, principal, batch_shape).reshape(n, 4)
        return np.broadcast_to(energy, batch_shape).reshape(n), tuple(gradient.T)

    return split


def _to_user(q_p, w_p, principal):
    if principal is None:
        return q_p, w_p
    w_user = None if w_p is None else quat.rotate(principal, w_p)
    return quat.multiply(q_p, quat.conjugate(principal)), w_user


def _principal_gradient(potential, q_p, principal, batch_shape):
    """∂V/∂q_p for q_user = q_p ⊗ c, c = principal*: ∂V/∂q_p = (∂V/∂q_user) ⊗ c*."""
    q_user, _ = _to_user(q_p, None, principal)
    g = validation.floats(potential.gradient(q_user), "potential.gradient(q)")
    target = (*batch_shape, 4)
    if g.ndim == 0 or g.shape[-1] != 4 or not validation.broadcasts_to(g.shape, target):
        raise ValueError(f"potential.gradient(q) must return shape {target}, got shape {g.shape}")
    if not np.all(np.isfinite(g)):
        raise ValueError(f"potential.gradient(q) returned non-finite values: {validation.show(g.tolist())}")
    g = np.broadcast_to(g, target)
    return g if principal is None else quat.multiply(g, principal)
