"""The spacecraft a scenario declares, as flat boxes to draw: its surfaces and its thrusters.

:func:`~rigidrot_gym.attitude.pictures.spacecraft_of` reads a scenario's ``[surfaces]`` and
``[thrusters]`` tables into the :class:`Spacecraft` that
:class:`~rigidrot_gym.render.scene.Scene` draws instead of the ellipsoid of inertia (``None``
for a scenario with neither, which keeps the ellipsoid):

* the presets of ``[surfaces]`` as what they are: ``"6U"`` the 6U box (0.1 × 0.2263 ×
  0.366 m, :data:`~rigidrot_gym.physics.environment.facets.SIZE_6U`) and its two deployed
  panels (0.2263 × 0.366 m each, in the +x face's plane at y = ±0.2263 m), ``"6U-stowed"``
  the box alone;
* a list of the user's own facets: a facet holds its area, not its outline, so each is
  drawn as a square of its area centred on its centre, in its plane (the outline is
  assumed, the area, plane and place are the facet's);
* thrusters without surfaces: the box whose half sizes the ``[thrusters]`` table gives;
* each thruster as a small nozzle at its position, pointing its exhaust along −d (d the
  direction of its force on the body).

Everything is in the body frame about the centre of mass (the facets' centres minus the
table's ``centre_of_mass``), in metres; the scene scales it so that the farthest corner is
1 from the centre (the size the ellipsoid is drawn at). Pure numpy: nothing here needs
PyBullet.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rigidrot_gym.physics.environment import facets as plates
from rigidrot_gym.physics.rotation import quaternion
from rigidrot_gym.render.geometry import rotation_from_x

# A drawn plate (a panel, a facet) is this thick relative to its shorter side, so that it
# shows edge-on as a line and not as nothing.
PLATE_THICKNESS = 0.02
# The 6U preset's panels: the size of the box's large face, hinged on the +x face's long
# edges and unfolded to ±y (physics.environment.facets.CUBESAT_6U).
PANEL_SIZE = (plates.SIZE_6U[1], plates.SIZE_6U[2])

STRUCTURE_COLOR = (0.72, 0.74, 0.80, 1.0)  # the box: anodised aluminium
PANEL_COLOR = (0.10, 0.15, 0.55, 1.0)  # solar cells, and the user's own facets


@dataclass(frozen=True, eq=False)  # numpy fields: identity, not ==
class Plate:
    """One drawn box of the spacecraft.

    Attributes:
        centre: (3,) its centre, body frame, m, from the centre of mass.
        half_extents: (3,) its half sizes along its own axes, m.
        rotation: (4,) scalar-first rotation from its own axes to the body frame.
        color: RGBA in [0, 1].
    """

    centre: np.ndarray
    half_extents: np.ndarray
    rotation: np.ndarray
    color: tuple[float, float, float, float]

    def corners(self) -> np.ndarray:
        """(8, 3) its corners in the body frame, m."""
        signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)], dtype=float)
        return self.centre + quaternion.rotate(self.rotation, signs * self.half_extents)


@dataclass(frozen=True, eq=False)  # numpy fields: identity, not ==
class Spacecraft:
    """What is drawn of a spacecraft, body frame, m, about its centre of mass.

    Attributes:
        plates: the boxes of its structure and surfaces.
        thruster_positions: (k, 3) where each thruster's force acts (k may be 0).
        thruster_directions: (k, 3) unit directions of each force on the body; the exhaust,
            and the drawn plume, go the other way.
    """

    plates: tuple[Plate, ...]
    thruster_positions: np.ndarray
    thruster_directions: np.ndarray

    @property
    def scale(self) -> float:
        """Drawn units per metre: 1 over the distance of the farthest corner or thruster
        from the centre of mass."""
        points = [p.corners() for p in self.plates] + [self.thruster_positions]
        return 1.0 / float(np.linalg.norm(np.concatenate(points), axis=1).max())


def box_plate(size: tuple[float, float, float] | np.ndarray, centre: np.ndarray) -> Plate:
    """The box of edge lengths ``size`` (m, along body x, y, z) centred on ``centre``."""
    half = np.asarray(size, dtype=np.float64) / 2.0
    return Plate(np.asarray(centre, dtype=np.float64), half, quaternion.identity(), STRUCTURE_COLOR)


def facet_plate(facet: plates.Facet, centre_of_mass: np.ndarray) -> Plate:
    """A user's facet as a square of its area centred on its centre, in its plane (the
    facet holds no outline)."""
    side = float(np.sqrt(facet.area))
    half = np.array([PLATE_THICKNESS * side, side, side]) / 2.0
    normal = np.asarray(facet.normal, dtype=np.float64)
    return Plate(np.subtract(facet.centre, centre_of_mass), half, rotation_from_x(normal), PANEL_COLOR)


def preset_plates(name: str, centre_of_mass: np.ndarray) -> tuple[Plate, ...]:
    """The boxes of a ``[surfaces]`` preset: the 6U box, and for ``"6U"`` its two panels."""
    com = np.asarray(centre_of_mass, dtype=np.float64)
    out = [box_plate(plates.SIZE_6U, -com)]
    if name == "6U":
        thickness = PLATE_THICKNESS * min(PANEL_SIZE)
        x = plates.SIZE_6U[0] / 2.0
        for side in (1.0, -1.0):
            centre = np.array([x, side * PANEL_SIZE[0], 0.0]) - com
            half = np.array([thickness, *PANEL_SIZE]) / 2.0
            out.append(Plate(centre, half, quaternion.identity(), PANEL_COLOR))
    return tuple(out)
