"""The spacecraft a scenario declares, as convex solids to draw: its parts or surfaces,
and its thrusters.

:func:`~rigidrot_gym.attitude.pictures.spacecraft_of` reads a scenario's ``[[body.parts]]``,
``[surfaces]`` and ``[thrusters]`` tables into the :class:`Spacecraft` that
:class:`~rigidrot_gym.render.scene.Scene` draws instead of the ellipsoid of inertia (``None``
for a scenario with none of them, which keeps the ellipsoid). Every drawn piece is one
:class:`Solid`, a convex polyhedron given by its vertices and faces and drawn as a mesh of
flat faces, whatever it stands for:

* the presets of ``[surfaces]`` as what they are: ``"6U"`` the 6U box (0.1 × 0.2263 ×
  0.366 m, :data:`~rigidrot_gym.physics.environment.facets.SIZE_6U`) and its two deployed
  panels (0.2263 × 0.366 m each, in the +x face's plane at y = ±0.2263 m), ``"6U-stowed"``
  the box alone;
* a list of the user's own facets: a facet holds its area, not its outline, so each is
  drawn as a square of its area centred on its centre, in its plane (the outline is
  assumed, the area, plane and place are the facet's);
* the parts of a ``[[body.parts]]`` body (:func:`part_solid`), each at its position and
  orientation, in the axes of its shape's function in
  :mod:`~rigidrot_gym.physics.rotation.inertia`: a ``solid_box`` as its box; a
  ``thin_plate`` as a box in its x-y plane, :data:`PLATE_THICKNESS` of its shorter side
  thick; a ``solid_cylinder`` as a :data:`SIDES`-sided prism about its z axis whose
  vertices lie on its circles, a ``hollow_cylinder`` as its outer cylinder, a
  ``thin_rod`` as such a prism along z, :data:`PLATE_THICKNESS` of its length across;
  a ``solid_sphere`` and an ``ellipsoid`` as a UV sphere (:data:`SIDES` meridians,
  :data:`BANDS` bands) whose vertices lie on its surface. Thin plates (solar panels)
  take the panels' colour, every other part the structure's;
* thrusters without surfaces or parts: the box whose half sizes the ``[thrusters]``
  table gives;
* each thruster as a small nozzle at its position, pointing its exhaust along −d (d the
  direction of its force on the body).

Everything is in the body frame about the centre of mass (the facets' centres minus the
``[surfaces]`` table's ``centre_of_mass``, the parts' positions minus the centre of mass
they compose to), in metres; the scene scales it so that the farthest vertex is 1 from
the centre (the size the ellipsoid is drawn at). Pure numpy: nothing here needs PyBullet.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from rigidrot_gym.physics.environment import facets as plates
from rigidrot_gym.physics.rotation import quaternion
from rigidrot_gym.render.geometry import rotation_from_x

# A drawn plate (a panel, a facet, a thin_plate part) is this thick relative to its
# shorter side, and a thin rod this wide relative to its length, so that they show
# edge-on as a line and not as nothing.
PLATE_THICKNESS = 0.02
# Round solids: a cylinder or rod is a prism of this many sides, a sphere or ellipsoid a
# UV sphere of this many meridians and BANDS bands from pole to pole.
SIDES = 16
BANDS = 8
# The 6U preset's panels: the size of the box's large face, hinged on the +x face's long
# edges and unfolded to ±y (physics.environment.facets.CUBESAT_6U).
PANEL_SIZE = (plates.SIZE_6U[1], plates.SIZE_6U[2])

STRUCTURE_COLOR = (0.72, 0.74, 0.80, 1.0)  # the box, the parts: anodised aluminium
PANEL_COLOR = (0.10, 0.15, 0.55, 1.0)  # solar cells, thin plates, and the user's own facets


@dataclass(frozen=True, eq=False)  # numpy fields: identity, not ==
class Solid:
    """One drawn convex solid of the spacecraft.

    Attributes:
        vertices: (n, 3) its vertices in the body frame, m, from the centre of mass.
        faces: each face as the indices of its vertices (a convex polygon),
            counter-clockwise seen from outside.
        color: RGBA in [0, 1].
    """

    vertices: np.ndarray
    faces: tuple[tuple[int, ...], ...]
    color: tuple[float, float, float, float]

    def mesh(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Its faces as flat-shaded triangles: (m, 3) vertices (each face its own copies),
        (m, 3) their unit outward normals (the face's) and the (k,) vertex indices of the
        triangles, three each, fanned from each face's first vertex."""
        points, normals, indices = [], [], []
        for face in self.faces:
            corners = self.vertices[list(face)]
            # Newell's normal: the polygon's area vector, robust to a nearly flat triangle.
            area = np.cross(corners, np.roll(corners, -1, axis=0)).sum(axis=0)
            base = sum(len(p) for p in points)
            points.append(corners)
            normals.append(np.broadcast_to(area / np.linalg.norm(area), corners.shape))
            for k in range(1, len(face) - 1):
                indices += [base, base + k, base + k + 1]
        return np.concatenate(points), np.concatenate(normals), np.array(indices, dtype=np.int64)


@dataclass(frozen=True, eq=False)  # numpy fields: identity, not ==
class Spacecraft:
    """What is drawn of a spacecraft, body frame, m, about its centre of mass.

    Attributes:
        solids: the convex solids of its structure, parts and surfaces.
        thruster_positions: (k, 3) where each thruster's force acts (k may be 0).
        thruster_directions: (k, 3) unit directions of each force on the body; the exhaust,
            and the drawn plume, go the other way.
    """

    solids: tuple[Solid, ...]
    thruster_positions: np.ndarray
    thruster_directions: np.ndarray

    @property
    def scale(self) -> float:
        """Drawn units per metre: 1 over the distance of the farthest vertex or thruster
        from the centre of mass."""
        points = [s.vertices for s in self.solids] + [self.thruster_positions]
        return 1.0 / float(np.linalg.norm(np.concatenate(points), axis=1).max())


def _placed(
    points: np.ndarray, faces: tuple[tuple[int, ...], ...], centre: ArrayLike, rotation: ArrayLike, color
) -> Solid:
    """The solid of vertices ``points`` in its own axes, turned by ``rotation`` (its axes to
    the body frame, scalar-first) and moved to ``centre``."""
    turned = quaternion.rotate(np.asarray(rotation, dtype=np.float64), points)
    return Solid(np.asarray(centre, dtype=np.float64) + turned, faces, color)


def prism(outline: np.ndarray, half_height: float) -> tuple[np.ndarray, tuple[tuple[int, ...], ...]]:
    """The right prism of the convex ``outline`` ((n, 2), counter-clockwise in the x-y
    plane) from z = −``half_height`` to +``half_height``: vertices (2n, 3), the bottom
    ring first, and faces."""
    n = len(outline)
    vertices = np.concatenate(
        [np.column_stack([outline, np.full(n, z)]) for z in (-half_height, half_height)]
    )
    sides = tuple((k, (k + 1) % n, n + (k + 1) % n, n + k) for k in range(n))
    return vertices, (tuple(range(n - 1, -1, -1)), tuple(range(n, 2 * n)), *sides)


def uv_sphere(semi_axes: ArrayLike) -> tuple[np.ndarray, tuple[tuple[int, ...], ...]]:
    """The UV sphere inscribed in the ellipsoid of ``semi_axes`` (along x, y, z): its
    poles on ±z and :data:`SIDES` vertices on each of :data:`BANDS` − 1 parallels, at
    longitudes 2πk/SIDES from x; vertices (2 + SIDES (BANDS − 1), 3), the +z pole first and
    the −z pole last, and faces."""
    n, m = SIDES, BANDS
    polar = np.pi * np.arange(1, m) / m
    longitude = 2.0 * np.pi * np.arange(n) / n
    rings = np.stack(
        [
            np.outer(np.sin(polar), np.cos(longitude)),
            np.outer(np.sin(polar), np.sin(longitude)),
            np.outer(np.cos(polar), np.ones(n)),
        ],
        axis=-1,
    ).reshape(-1, 3)
    unit = np.concatenate([[[0.0, 0.0, 1.0]], rings, [[0.0, 0.0, -1.0]]])
    south = len(unit) - 1

    def at(ring: int, k: int) -> int:
        return 1 + ring * n + k % n

    faces = [(0, at(0, k), at(0, k + 1)) for k in range(n)]
    for j in range(m - 2):
        faces += [(at(j, k), at(j + 1, k), at(j + 1, k + 1), at(j, k + 1)) for k in range(n)]
    faces += [(south, at(m - 2, k + 1), at(m - 2, k)) for k in range(n)]
    return unit * np.asarray(semi_axes, dtype=np.float64), tuple(faces)


def _rectangle(half_x: float, half_y: float) -> np.ndarray:
    return np.array([[-half_x, -half_y], [half_x, -half_y], [half_x, half_y], [-half_x, half_y]])


def _circle(radius: float) -> np.ndarray:
    angle = 2.0 * np.pi * np.arange(SIDES) / SIDES
    return radius * np.column_stack([np.cos(angle), np.sin(angle)])


def box(
    half_extents: ArrayLike,
    centre: ArrayLike,
    rotation: ArrayLike | None = None,
    color: tuple[float, float, float, float] = STRUCTURE_COLOR,
) -> Solid:
    """The box of ``half_extents`` (m, along its own x, y, z) centred on ``centre``, its
    axes turned to the body frame by ``rotation`` (identity if None)."""
    hx, hy, hz = np.asarray(half_extents, dtype=np.float64)
    turn = quaternion.identity() if rotation is None else rotation
    return _placed(*prism(_rectangle(hx, hy), hz), centre, turn, color)


def box_plate(size: tuple[float, float, float] | np.ndarray, centre: np.ndarray) -> Solid:
    """The box of edge lengths ``size`` (m, along body x, y, z) centred on ``centre``."""
    return box(np.asarray(size, dtype=np.float64) / 2.0, centre)


def facet_plate(facet: plates.Facet, centre_of_mass: np.ndarray) -> Solid:
    """A user's facet as a square of its area centred on its centre, in its plane (the
    facet holds no outline)."""
    side = float(np.sqrt(facet.area))
    half = np.array([PLATE_THICKNESS * side, side, side]) / 2.0
    normal = np.asarray(facet.normal, dtype=np.float64)
    return box(half, np.subtract(facet.centre, centre_of_mass), rotation_from_x(normal), PANEL_COLOR)


def preset_plates(name: str, centre_of_mass: np.ndarray) -> tuple[Solid, ...]:
    """The boxes of a ``[surfaces]`` preset: the 6U box, and for ``"6U"`` its two panels."""
    com = np.asarray(centre_of_mass, dtype=np.float64)
    out = [box_plate(plates.SIZE_6U, -com)]
    if name == "6U":
        thickness = PLATE_THICKNESS * min(PANEL_SIZE)
        x = plates.SIZE_6U[0] / 2.0
        for side in (1.0, -1.0):
            centre = np.array([x, side * PANEL_SIZE[0], 0.0]) - com
            half = np.array([thickness, *PANEL_SIZE]) / 2.0
            out.append(box(half, centre, color=PANEL_COLOR))
    return tuple(out)


def part_solid(
    shape: str,
    dimensions: Mapping[str, Any],
    position: ArrayLike,
    orientation: ArrayLike,
    centre_of_mass: ArrayLike,
) -> Solid:
    """A part of a ``[[body.parts]]`` body as the solid drawn for it (see the module's
    list), its centre at ``position`` − ``centre_of_mass`` (m, body frame), its axes turned
    to the body frame by ``orientation`` (scalar-first, the part's).

    Args:
        shape: the name of its shape's function in
            :mod:`~rigidrot_gym.physics.rotation.inertia` (``"solid_box"``...).
        dimensions: that function's arguments besides the mass, m.
        position: (3,) its centre of mass, body frame.
        orientation: (4,) unit quaternion from its frame to the body frame.
        centre_of_mass: (3,) the body's, which the drawing is about.

    Raises:
        ValueError: for a shape it does not know.
    """
    d, color = dimensions, STRUCTURE_COLOR
    if shape == "solid_box":
        hx, hy, hz = np.asarray(d["size"], dtype=np.float64) / 2.0
        points, faces = prism(_rectangle(hx, hy), hz)
    elif shape == "thin_plate":
        lx, ly = np.asarray(d["size"], dtype=np.float64)
        points, faces = prism(_rectangle(lx / 2.0, ly / 2.0), PLATE_THICKNESS * min(lx, ly) / 2.0)
        color = PANEL_COLOR
    elif shape in ("solid_cylinder", "hollow_cylinder"):
        radius = float(d["radius"] if shape == "solid_cylinder" else d["outer_radius"])
        points, faces = prism(_circle(radius), float(d["height"]) / 2.0)
    elif shape == "thin_rod":
        length = float(d["length"])
        points, faces = prism(_circle(PLATE_THICKNESS * length / 2.0), length / 2.0)
    elif shape == "solid_sphere":
        points, faces = uv_sphere(np.full(3, float(d["radius"])))
    elif shape == "ellipsoid":
        points, faces = uv_sphere(d["semi_axes"])
    else:
        raise ValueError(f"shape must be one of the inertia shapes, got {shape!r}")
    centre = np.subtract(position, centre_of_mass)
    return _placed(points, faces, centre, orientation, color)
