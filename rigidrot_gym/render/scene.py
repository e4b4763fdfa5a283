"""What is drawn, built once in a PyBullet client and re-posed for every frame.

The body is the spacecraft its scenario declares (:mod:`~rigidrot_gym.render.spacecraft`: its
box, panels or facets, or its parts, and its thrusters, with a plume behind each one that
fired in the last period), or else the solid ellipsoid whose principal moments are
proportional to the body's (the graphics display of Ganapathi 2005, §5); with its body axes
(x red, y green, z blue).
Beside it a faint "ghost" of the target attitude's axes, the directions of the angular
momentum L (magenta) and of the angular velocity ω (orange), and, on an orbit, the directions
to the Sun (yellow) and to the Earth's centre (nadir, teal), all in the world frame.

PyBullet's ``addUserDebugLine`` draws nothing in DIRECT mode, so axes and arrows are thin
boxes of a visual-shape array. Each solid of a spacecraft is one mesh of flat faces (a
visual shape from its vertices, which ``createVisualShapeArray`` cannot take), on a
multibody of its own posed with the body: one drawing path for boxes, plates, prisms and
spheres. Poses are scalar-first here and converted to PyBullet's
scalar-last order only where they are handed over.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from rigidrot_gym.physics.rotation import quaternion
from rigidrot_gym.render.geometry import rotation_from_x
from rigidrot_gym.render.spacecraft import Solid, Spacecraft

# Body axes and target axes are this long, relative to the largest semi-axis (1), so that
# they stick out of the ellipsoid along every axis.
AXIS_LENGTH = 1.3
_AXIS_HALF_WIDTH = 0.025
_GHOST_HALF_WIDTH = 0.015
# L and ω are drawn as unit directions of this length, with a thicker head at the tip.
ARROW_LENGTH = 1.5
_ARROW_HALF_WIDTH = 0.02
_HEAD_LENGTH = 0.15
_HEAD_HALF_WIDTH = 0.045

BODY_COLOR = (0.72, 0.74, 0.80, 1.0)
AXIS_COLORS = ((1.0, 0.0, 0.0, 1.0), (0.0, 0.8, 0.0, 1.0), (0.0, 0.0, 1.0, 1.0))
# TinyRenderer draws any alpha > 0 as opaque (measured: it only skips alpha = 0), so the ghost
# is made faint by pale colours; the alpha 0.35 is honoured by the OpenGL renderer of "human".
GHOST_COLORS = ((1.0, 0.6, 0.6, 0.35), (0.6, 0.9, 0.6, 0.35), (0.6, 0.6, 1.0, 0.35))
MOMENTUM_COLOR = (1.0, 0.0, 1.0, 1.0)
OMEGA_COLOR = (1.0, 0.55, 0.0, 1.0)
SUN_COLOR = (1.0, 0.85, 0.0, 1.0)
NADIR_COLOR = (0.0, 0.55, 0.55, 1.0)
NOZZLE_COLOR = (0.25, 0.25, 0.25, 1.0)
PLUME_COLOR = (0.55, 1.0, 1.0, 1.0)
# A thruster's nozzle and plume, in drawn units (the spacecraft's farthest corner is at 1):
# the nozzle a small box behind the thruster's point, the plume a longer one behind it.
_NOZZLE_LENGTH = 0.08
_NOZZLE_HALF_WIDTH = 0.035
_PLUME_LENGTH = 0.45
_PLUME_HALF_WIDTH = 0.05

_NO_TURN = [0.0, 0.0, 0.0, 1.0]


class Scene:
    """The body, the target ghost, the L and ω arrows, the Sun and nadir arrows and the
    thrusters' plumes in one PyBullet client.

    Args:
        p: the pybullet module.
        client: its physics client id.
        semi_axes: (3,) semi-axes of the ellipsoid along the principal axes (largest 1).
        principal_rotation: (4,) rotation from principal axes to the body frame.
        mesh_path: a unit-sphere mesh, scaled into the ellipsoid.
        hide_height: how far above the origin hidden objects are put (beyond every camera's
            far plane: TinyRenderer has no visibility flag).
        spacecraft: drawn instead of the ellipsoid when given, scaled by its
            :attr:`~rigidrot_gym.render.spacecraft.Spacecraft.scale`.
    """

    def __init__(
        self,
        p: Any,
        client: int,
        semi_axes: np.ndarray,
        principal_rotation: np.ndarray,
        mesh_path: str,
        hide_height: float,
        spacecraft: Spacecraft | None = None,
    ) -> None:
        self._p, self._client, self._semi_axes = p, client, semi_axes
        self._solids: list[int] = []
        self._hide_height = hide_height
        half, length = _AXIS_HALF_WIDTH, AXIS_LENGTH
        axes = (
            [p.GEOM_BOX] * 3,
            [[length / 2, half, half], [half, length / 2, half], [half, half, length / 2]],
            [[length / 2, 0.0, 0.0], [0.0, length / 2, 0.0], [0.0, 0.0, length / 2]],
            [_NO_TURN] * 3,
            list(AXIS_COLORS),
        )
        if spacecraft is None:
            self._body = self._multibody(
                [p.GEOM_MESH, *axes[0]],
                [[0.0] * 3, *axes[1]],
                [[0.0] * 3, *axes[2]],
                [quaternion.to_scalar_last(principal_rotation).tolist(), *axes[3]],
                [BODY_COLOR, *axes[4]],
                mesh_path=mesh_path,
            )
        else:
            self._body = self._multibody(*_joined(_nozzle_shapes(p, spacecraft), axes))
            self._solids = [self._mesh_body(solid, spacecraft.scale) for solid in spacecraft.solids]
        half = _GHOST_HALF_WIDTH
        self._ghost = self._multibody(
            [p.GEOM_BOX] * 3,
            [[length / 2, half, half], [half, length / 2, half], [half, half, length / 2]],
            [[length / 2, 0.0, 0.0], [0.0, length / 2, 0.0], [0.0, 0.0, length / 2]],
            [_NO_TURN] * 3,
            list(GHOST_COLORS),
        )
        # Arrows along their local x: a shaft from the origin and a head at the tip.
        shaft = ARROW_LENGTH - _HEAD_LENGTH
        arrow = (
            [p.GEOM_BOX] * 2,
            [
                [shaft / 2, _ARROW_HALF_WIDTH, _ARROW_HALF_WIDTH],
                [_HEAD_LENGTH / 2, _HEAD_HALF_WIDTH, _HEAD_HALF_WIDTH],
            ],
            [[shaft / 2, 0.0, 0.0], [ARROW_LENGTH - _HEAD_LENGTH / 2, 0.0, 0.0]],
            [_NO_TURN] * 2,
        )
        self._momentum_arrow = self._multibody(*arrow, [MOMENTUM_COLOR] * 2)
        self._omega_arrow = self._multibody(*arrow, [OMEGA_COLOR] * 2)
        self._sun_arrow = self._multibody(*arrow, [SUN_COLOR] * 2)
        self._nadir_arrow = self._multibody(*arrow, [NADIR_COLOR] * 2)
        # One plume per thruster, along its local x from the thruster's point.
        self._thrusters: list[tuple[int, np.ndarray, np.ndarray]] = []
        if spacecraft is not None:
            plume = (
                [p.GEOM_BOX],
                [[_PLUME_LENGTH / 2, _PLUME_HALF_WIDTH, _PLUME_HALF_WIDTH]],
                [[_NOZZLE_LENGTH + _PLUME_LENGTH / 2, 0.0, 0.0]],
                [_NO_TURN],
                [PLUME_COLOR],
            )
            for position, direction in zip(
                spacecraft.thruster_positions, spacecraft.thruster_directions, strict=True
            ):
                turn = rotation_from_x(-direction / np.linalg.norm(direction))
                self._thrusters.append((self._multibody(*plume), spacecraft.scale * position, turn))
        arrows = (self._momentum_arrow, self._omega_arrow, self._sun_arrow, self._nadir_arrow)
        for body in (self._ghost, *arrows, *(plume for plume, _, _ in self._thrusters)):
            self._hide(body)

    def pose(
        self,
        q: np.ndarray,
        target: np.ndarray | None,
        omega_world: np.ndarray | None,
        momentum_world: np.ndarray | None,
        sun_world: np.ndarray | None = None,
        nadir_world: np.ndarray | None = None,
        firing: np.ndarray | None = None,
    ) -> None:
        """Put the body at attitude ``q`` and the ghost at ``target`` (hidden if None); point
        the arrows along the world directions of ω, L, the Sun and nadir (hidden if None;
        non-zero otherwise); show the plume of each thruster whose ``firing`` is true (none
        if None)."""
        for body in (self._body, *self._solids):
            self._pose(body, q)
        if target is None:
            self._hide(self._ghost)
        else:
            self._pose(self._ghost, target)
        arrows = (
            (self._omega_arrow, omega_world),
            (self._momentum_arrow, momentum_world),
            (self._sun_arrow, sun_world),
            (self._nadir_arrow, nadir_world),
        )
        for arrow, direction in arrows:
            if direction is None:
                self._hide(arrow)
            else:
                self._pose(arrow, rotation_from_x(direction / np.linalg.norm(direction)))
        for k, (plume, position, turn) in enumerate(self._thrusters):
            if firing is not None and firing[k]:
                self._pose(plume, quaternion.multiply(q, turn), quaternion.rotate(q, position))
            else:
                self._hide(plume)

    def _multibody(
        self,
        shape_types: list[int],
        half_extents: list[list[float]],
        positions: list[list[float]],
        orientations: list[list[float]],
        colors: list[tuple[float, ...]],
        mesh_path: str = "",
    ) -> int:
        """A static multibody whose one link carries these visual shapes and colours."""
        p, kw = self._p, {"physicsClientId": self._client}
        scales = [list(self._semi_axes) if t == p.GEOM_MESH else [1.0, 1.0, 1.0] for t in shape_types]
        shape = p.createVisualShapeArray(
            shapeTypes=shape_types,
            halfExtents=half_extents,
            fileNames=[mesh_path if t == p.GEOM_MESH else "" for t in shape_types],
            meshScales=scales,
            visualFramePositions=positions,
            visualFrameOrientations=orientations,
            **kw,
        )
        if shape < 0:
            raise RuntimeError(f"PyBullet could not create the visual shapes (mesh {mesh_path!r})")
        body = p.createMultiBody(baseMass=0.0, baseVisualShapeIndex=shape, **kw)
        # createVisualShapeArray takes no colours: set them one shape at a time.
        for i, color in enumerate(colors):
            p.changeVisualShape(body, -1, shapeIndex=i, rgbaColor=list(color), **kw)
        return body

    def _mesh_body(self, solid: Solid, scale: float) -> int:
        """A static multibody drawing ``solid`` (scaled to drawn units) as flat faces."""
        p, kw = self._p, {"physicsClientId": self._client}
        vertices, normals, indices = solid.mesh()
        shape = p.createVisualShape(
            p.GEOM_MESH,
            vertices=(scale * vertices).tolist(),
            indices=indices.tolist(),
            normals=normals.tolist(),
            rgbaColor=list(solid.color),
            **kw,
        )
        if shape < 0:
            raise RuntimeError(f"PyBullet could not create the mesh of a solid ({len(vertices)} vertices)")
        return p.createMultiBody(baseMass=0.0, baseVisualShapeIndex=shape, **kw)

    def _pose(self, body: int, q: np.ndarray, position: np.ndarray | None = None) -> None:
        """Put ``body`` at ``position`` (the origin if None) with scalar-first attitude ``q``."""
        where = [0.0, 0.0, 0.0] if position is None else position.tolist()
        self._p.resetBasePositionAndOrientation(
            body, where, quaternion.to_scalar_last(q).tolist(), physicsClientId=self._client
        )

    def _hide(self, body: int) -> None:
        self._p.resetBasePositionAndOrientation(
            body, [0.0, 0.0, self._hide_height], _NO_TURN, physicsClientId=self._client
        )


_Shapes = tuple[list[int], list[list[float]], list[list[float]], list[list[float]], list[tuple[float, ...]]]


def _joined(*groups: _Shapes) -> _Shapes:
    """The visual shapes of several groups (types, half extents, positions, orientations,
    colours) as one."""
    return tuple([item for group in groups for item in group[field]] for field in range(5))  # type: ignore[return-value]


def _nozzle_shapes(p: Any, spacecraft: Spacecraft) -> _Shapes:
    """The spacecraft's thrusters' nozzles as boxes, in drawn units (scalar-last
    orientations, PyBullet's)."""
    scale = spacecraft.scale
    shapes: _Shapes = ([], [], [], [], [])
    for position, direction in zip(
        spacecraft.thruster_positions, spacecraft.thruster_directions, strict=True
    ):
        exhaust = -direction / np.linalg.norm(direction)
        shapes[0].append(p.GEOM_BOX)
        shapes[1].append([_NOZZLE_LENGTH / 2, _NOZZLE_HALF_WIDTH, _NOZZLE_HALF_WIDTH])
        shapes[2].append((scale * position + exhaust * _NOZZLE_LENGTH / 2).tolist())
        shapes[3].append(quaternion.to_scalar_last(rotation_from_x(exhaust)).tolist())
        shapes[4].append(NOZZLE_COLOR)
    return shapes
