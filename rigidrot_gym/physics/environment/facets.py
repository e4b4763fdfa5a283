"""Aerodynamic drag and solar radiation pressure on a spacecraft made of flat facets, and
the torque they make about its centre of mass.

A facet has an area A, an outward unit normal n̂, a centre of pressure r (from the centre
of mass), a drag coefficient C_D and optical coefficients: the specular and diffuse
reflectivities ρ_s and ρ_d (the rest of the light, 1 − ρ_s − ρ_d, is absorbed). Each facet
sees the flow and the light only through its own orientation: it is lit or struck when it
faces them, whatever other parts of the spacecraft stand in the way (no self-shadowing, no
multiple reflections), and its back is a facet of its own.

* **Drag** on a facet of a body moving at v relative to the air of density ρ (free
  molecular flow, the momentum of the air that the facet's projected area A (n̂·v̂) sweeps
  up, Vallado 4th ed. §8.6.2; Basilisk's ``facetDragDynamicEffector``, ``plateDrag``):

      F = −½ ρ |v|² C_D A (n̂·v̂) v̂ = −½ ρ C_D A (n̂·v) v   where n̂·v > 0, else 0.

* **Solar radiation pressure** on a facet lit from the unit direction ŝ (towards the Sun)
  at the angle cos θ = n̂·ŝ (Wertz, *Spacecraft Attitude Determination and Control*, 1978,
  §17.2, eq. 17-17; Basilisk's ``facetSRPDynamicEffector``, ``computeForceTorque``):

      F = −P A cos θ [(1 − ρ_s) ŝ + 2 (ρ_d/3 + ρ_s cos θ) n̂]   where cos θ > 0, else 0,

  P = ν (Φ/c) (AU/d)² the pressure at the distance d from the Sun, Φ the solar flux at
  1 AU, c the speed of light and ν the shadow factor (1 in sunlight, 0 in the umbra).

* The torque about the centre of mass is Σ r × F over the facets.

Basilisk's ``facetSRPDynamicEffector`` takes Φ = 1368 W/m² (its newer ``facetedSRPEffector``
1361 W/m²: their forces differ by 0.51 %); :data:`SOLAR_FLUX` is the measured total solar
irradiance of 1360.8 ± 0.5 W/m² at solar minimum (Kopp & Lean, Geophys. Res. Lett. 38,
L01706, 2011). Basilisk does not normalise the normals it is given; these functions take
unit normals (:class:`Facet` makes them so).

`TERM` is the drag and pressure torque as a term of the compiled torque model
(:class:`~rigidrot_gym.physics.rotation.torques.Term`): evaluated at every integrator stage
from the stage's attitude, with the air's velocity (world frame) moving linearly over the
step, the density linearly, and the Sun's direction and the pressure held.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import torques
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.quaternion import qnormalize, qrotate_inv

SPEED_OF_LIGHT = 299792458.0  # m/s (exact, SI)
ASTRONOMICAL_UNIT = 149597870700.0  # m (exact, IAU 2012 resolution B2)
SOLAR_FLUX = 1360.8  # W/m², the total solar irradiance at 1 AU (Kopp & Lean 2011)


@dataclass(frozen=True)
class Facet:
    """A flat facet of a spacecraft's surface, checked (a ``ValueError`` names the field).

    Attributes:
        area: A, m², > 0.
        normal: (3,) its outward normal in the body frame, normalised here.
        centre: (3,) its centre of pressure, m, body frame (from the body frame's origin).
        drag_coefficient: C_D, ≥ 0 (2.2 is the usual value for a flat plate in free
            molecular flow, Vallado §8.6.2).
        specular: ρ_s, the share of the light reflected as by a mirror, in [0, 1].
        diffuse: ρ_d, the share reflected diffusely (Lambert), in [0, 1 − ρ_s].
    """

    area: float
    normal: tuple[float, float, float]
    centre: tuple[float, float, float]
    drag_coefficient: float = 2.2
    specular: float = 0.0
    diffuse: float = 0.0

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "area", validation.scalar(self.area, "area", positive=True))
        normal = validation.finite_floats(self.normal, "normal")
        length = float(np.linalg.norm(normal)) if normal.shape == (3,) else 0.0
        if length == 0.0:
            raise ValueError(
                f"normal must be a non-zero vector of 3 numbers, got {validation.show(self.normal)}"
            )
        set_(self, "normal", tuple(float(x) for x in normal / length))
        centre = validation.finite_floats(self.centre, "centre")
        if centre.shape != (3,):
            raise ValueError(f"centre must be a vector of 3 numbers (m), got {validation.show(self.centre)}")
        set_(self, "centre", tuple(float(x) for x in centre))
        drag = validation.scalar(self.drag_coefficient, "drag_coefficient")
        if drag < 0.0:
            raise ValueError(f"drag_coefficient must be ≥ 0, got {validation.show(self.drag_coefficient)}")
        set_(self, "drag_coefficient", drag)
        for name in ("specular", "diffuse"):
            value = validation.scalar(getattr(self, name), name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {validation.show(getattr(self, name))}")
            set_(self, name, value)
        if self.specular + self.diffuse > 1.0:
            raise ValueError(
                f"specular + diffuse must be ≤ 1 (the rest is absorbed), got {self.specular} + {self.diffuse}"
            )


def box(
    size: tuple[float, float, float], drag_coefficient: float, specular: float, diffuse: float
) -> list[Facet]:
    """The six faces of a box of edge lengths ``size`` (m, along body x, y, z) centred on
    the origin, in the order +x, −x, +y, −y, +z, −z."""
    out = []
    for axis in range(3):
        area = size[(axis + 1) % 3] * size[(axis + 2) % 3]
        for sign in (1.0, -1.0):
            normal = [0.0, 0.0, 0.0]
            normal[axis] = sign
            centre = [0.0, 0.0, 0.0]
            centre[axis] = sign * size[axis] / 2
            out.append(Facet(area, tuple(normal), tuple(centre), drag_coefficient, specular, diffuse))
    return out


# A 6U CubeSat (CubeSat Design Specification rev. 14.1, 2022: 100 × 226.3 × 366 mm) with
# two deployed solar panels the size of its large face, hinged on the long edges of its +x
# face and unfolded in that face's plane to ±y, cells on +x: the six faces of the box,
# then each panel's front (+x) and back (−x). C_D = 2.2 (flat plates, Vallado §8.6.2). The
# optical coefficients are assumed, not measured: structure (anodised aluminium)
# ρ_s = 0.1, ρ_d = 0.3; solar cells (cover glass) ρ_s = 0.05, ρ_d = 0.05; panel backs
# (painted) ρ_s = 0.0, ρ_d = 0.5. Replace them with your spacecraft's.
SIZE_6U = (0.1, 0.2263, 0.366)
_PANEL = SIZE_6U[1] * SIZE_6U[2]
CUBESAT_6U: tuple[Facet, ...] = (
    *box(SIZE_6U, 2.2, 0.1, 0.3),
    Facet(_PANEL, (1.0, 0.0, 0.0), (0.05, SIZE_6U[1], 0.0), 2.2, 0.05, 0.05),
    Facet(_PANEL, (-1.0, 0.0, 0.0), (0.05, SIZE_6U[1], 0.0), 2.2, 0.0, 0.5),
    Facet(_PANEL, (1.0, 0.0, 0.0), (0.05, -SIZE_6U[1], 0.0), 2.2, 0.05, 0.05),
    Facet(_PANEL, (-1.0, 0.0, 0.0), (0.05, -SIZE_6U[1], 0.0), 2.2, 0.0, 0.5),
)
PRESETS: dict[str, tuple[Facet, ...]] = {
    "6U": CUBESAT_6U,
    "6U-stowed": CUBESAT_6U[:6],
}  # stowed: the box alone


@jitable
def pressure(distance, flux):
    """P = (Φ/c) (AU/d)², the radiation pressure (N/m²) on a black surface facing the Sun
    at ``distance`` d (m) from it, of the solar flux Φ (W/m²) at 1 AU (:data:`SOLAR_FLUX`,
    or Basilisk's 1368)."""
    return flux / SPEED_OF_LIGHT * (ASTRONOMICAL_UNIT / distance) ** 2


@jitable
def _positive(x):
    """max(x, 0), for a float or an array: exact where x > 0 (x + x and the halving are)."""
    return 0.5 * (x + abs(x))


@jitable
def drag_force(normal, area, drag_coefficient, air, density):
    """A facet's drag force −½ ρ C_D A (n̂·v)⁺ v (N, a 3-tuple in the frame of ``normal``
    and ``air``): ``air`` the body's velocity relative to the air (m/s), ``density`` ρ."""
    return vec.scale(-0.5 * density * drag_coefficient * area * _positive(vec.dot(normal, air)), air)


@jitable
def pressure_force(normal, area, specular, diffuse, sun, pressure):
    """A facet's radiation force −P A cos⁺θ [(1 − ρ_s) ŝ + 2 (ρ_d/3 + ρ_s cos θ) n̂] (N, a
    3-tuple): ``sun`` the unit vector towards the Sun, ``pressure`` P (N/m², the shadow
    factor included)."""
    cos = vec.dot(normal, sun)
    lit = -pressure * area * _positive(cos)
    return vec.scale(
        lit, vec.axpy(2.0 * (diffuse / 3.0 + specular * cos), normal, vec.scale(1.0 - specular, sun))
    )


def forces(facets, air, density, sun, pressure) -> tuple[np.ndarray, np.ndarray]:
    """The drag and radiation force on the facets together (N) and their torque about the
    origin (N·m), in the body frame.

    Args:
        facets: a sequence of :class:`Facet`.
        air: (..., 3) the body's velocity relative to the air, body frame, m/s.
        density: (...) the air's density, kg/m³.
        sun: (..., 3) the unit vector towards the Sun, body frame.
        pressure: (...) the radiation pressure P, N/m² (shadow factor included).

    Returns:
        (F, τ), each (..., 3).
    """
    air = validation.vectors(air, "air", 3)
    sun = validation.vectors(sun, "sun", 3)
    density = validation.finite_floats(density, "density")
    pressure = validation.finite_floats(pressure, "pressure")
    a, s = tuple(np.moveaxis(air, -1, 0)), tuple(np.moveaxis(sun, -1, 0))
    force = torque = (0.0, 0.0, 0.0)
    for f in facets:
        on_facet = vec.add(
            drag_force(f.normal, f.area, f.drag_coefficient, a, density),
            pressure_force(f.normal, f.area, f.specular, f.diffuse, s, pressure),
        )
        force = vec.add(force, on_facet)
        torque = vec.add(torque, vec.cross(f.centre, on_facet))
    shape = np.broadcast_shapes(air.shape, sun.shape, density.shape + (3,), pressure.shape + (3,))
    force, torque = (
        np.broadcast_to(np.stack(np.broadcast_arrays(*x), axis=-1), shape) for x in (force, torque)
    )
    return force, torque


# Layout of the term's parameters (:func:`term`).
AIR = 0  # [0:3] the body's velocity relative to the air at the step's start, world frame, m/s
AIR_RATE = 3  # [3:6] its rate of change, m/s²
DENSITY = 6  # [6] the air's density at the step's start, kg/m³
DENSITY_RATE = 7  # [7] its rate of change, kg/m³/s
SUN = 8  # [8:11] the unit vector towards the Sun, world frame
PRESSURE = 11  # [11] the radiation pressure P, N/m², shadow factor included
FACETS = 12  # [12 + FACET_SIZE k …] facet k: normal (3) and centre of pressure from the
# centre of mass (3), integrator frame; area, C_D, ρ_s, ρ_d
FACET_SIZE = 10
MAX_FACETS = 10
SIZE = FACETS + FACET_SIZE * MAX_FACETS


@jitable
def add(tau, t, q, omega, own):
    """τ + Σ_k r_k × (F_drag,k + F_srp,k) at the stage time ``t`` (from the step's start) and
    attitude ``q`` (integrator frame to world), ``own`` the :data:`SIZE` parameters: the
    air's velocity v(t) = v₀ + v̇ t and the Sun's direction turned into the integrator frame,
    the density ρ₀ + ρ̇ t; a facet of zero area adds nothing."""
    turn = qnormalize(q)
    air = qrotate_inv(
        turn,
        (
            own[AIR] + t * own[AIR_RATE],
            own[AIR + 1] + t * own[AIR_RATE + 1],
            own[AIR + 2] + t * own[AIR_RATE + 2],
        ),
    )
    sun = qrotate_inv(turn, (own[SUN], own[SUN + 1], own[SUN + 2]))
    density = own[DENSITY] + t * own[DENSITY_RATE]
    for k in range(MAX_FACETS):
        at = FACETS + FACET_SIZE * k
        normal = (own[at], own[at + 1], own[at + 2])
        area = own[at + 6]
        on_facet = vec.add(
            drag_force(normal, area, own[at + 7], air, density),
            pressure_force(normal, area, own[at + 8], own[at + 9], sun, own[PRESSURE]),
        )
        tau = vec.add(tau, vec.cross((own[at + 3], own[at + 4], own[at + 5]), on_facet))
    return tau


# The facets' drag and radiation torque as a term of the compiled torque model.
TERM = torques.Term("facets", SIZE, add)
