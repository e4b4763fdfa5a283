"""Draw a rigid body with PyBullet's TinyRenderer (CPU, no display needed).

The body is drawn as the solid ellipsoid whose principal moments are proportional to the
body's (the graphics display of Ganapathi 2005, §5), with its body axes (x red, y green,
z blue), a faint "ghost" of the target attitude's axes, and the directions of the angular
momentum L (magenta) and of the angular velocity ω (orange), both in the world frame.

Conventions are those of :mod:`rigidrot_gym.quaternion`: scalar-first ``[w, x, y, z]``
attitudes mapping body to world, ω in the body frame. PyBullet puts the scalar last; the
conversion happens only where poses are handed to PyBullet.

PyBullet is an optional dependency (``pip install "rigidrot-gym[render]"``): it is
imported only when a :class:`BodyRenderer` is created, never when this module is.

Measured on a 2-core machine: ≈4 ms per frame at 320×240 (≈5.3 ms with the target, L
and ω drawn) and ≈15 ms (≈19 ms) at 640×480, ≈85% of it inside ``getCameraImage``;
creating and closing a renderer ≈20 ms; each client holds ≈28 MB until closed.
"""

from __future__ import annotations

import os
import sys
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.error import DependencyNotInstalled
from numpy.typing import ArrayLike

from rigidrot_gym import quaternion
from rigidrot_gym.inertia import principal_frame

__all__ = ["BodyRenderer", "ellipsoid_semi_axes", "tile"]

RENDER_MODES = ("rgb_array", "human")

# Semi-axes below this fraction of the largest are raised to it: a thin plate (I1 + I2 = I3)
# has a zero semi-axis, and moments violating the triangle inequality (check_triangle=False)
# a negative squared one; neither can be drawn.
_MIN_SEMI_AXIS = 0.05
# Body axes and target axes are this long, relative to the largest semi-axis (1), so that
# they stick out of the ellipsoid along every axis.
_AXIS_LENGTH = 1.3
_AXIS_HALF_WIDTH = 0.025
_GHOST_HALF_WIDTH = 0.015
# L and ω are drawn as unit directions of this length, with a thicker head at the tip.
_ARROW_LENGTH = 1.5
_ARROW_HALF_WIDTH = 0.02
_HEAD_LENGTH = 0.15
_HEAD_HALF_WIDTH = 0.045
# |ω| (rad/s) at or below which ω and L = Jω have no direction worth drawing.
_ZERO_OMEGA = 1e-9

_BODY_COLOR = (0.72, 0.74, 0.80, 1.0)
_AXIS_COLORS = ((1.0, 0.0, 0.0, 1.0), (0.0, 0.8, 0.0, 1.0), (0.0, 0.0, 1.0, 1.0))
# TinyRenderer draws any alpha > 0 as opaque (measured: it only skips alpha = 0), so the ghost
# is made faint by pale colours; the alpha 0.35 is honoured by the OpenGL renderer of "human".
_GHOST_COLORS = ((1.0, 0.6, 0.6, 0.35), (0.6, 0.9, 0.6, 0.35), (0.6, 0.6, 1.0, 0.35))
_MOMENTUM_COLOR = (1.0, 0.0, 1.0, 1.0)
_OMEGA_COLOR = (1.0, 0.55, 0.0, 1.0)

_FOV_DEG = 45.0
_MESH = "sphere_smooth.obj"  # pybullet_data's unit sphere, scaled into the ellipsoid
_INSTALL_HINT = 'pybullet is not installed, run `pip install "rigidrot-gym[render]"`'


def _import_pybullet() -> tuple[Any, Any]:
    """pybullet and pybullet_data, imported on first use (they are an optional extra)."""
    try:
        import pybullet
        import pybullet_data
    except ImportError as e:
        raise DependencyNotInstalled(_INSTALL_HINT) from e
    return pybullet, pybullet_data


def _disconnect(pybullet: Any, client_id: int) -> None:
    """Disconnect ``client_id``; the finaliser of a renderer (holds no reference to it)."""
    try:
        if pybullet.isConnected(physicsClientId=client_id):
            pybullet.disconnect(physicsClientId=client_id)
    except pybullet.error:
        pass  # already gone: close() must not fail on it


def ellipsoid_semi_axes(moments: ArrayLike, *, check_triangle: bool = True) -> np.ndarray:
    """Semi-axes (a, b, c) of the uniform solid ellipsoid with principal moments ∝ ``moments``.

    A solid ellipsoid of mass m has I1 = m(b² + c²)/5, I2 = m(a² + c²)/5,
    I3 = m(a² + b²)/5, so a² = 5(I2 + I3 − I1)/(2m), b² = 5(I1 + I3 − I2)/(2m),
    c² = 5(I1 + I2 − I3)/(2m). The mass only scales the result, which is normalised so that
    the largest semi-axis is 1; semi-axes below 0.05 (a thin plate, or moments violating the
    triangle inequality when ``check_triangle=False``) are raised to 0.05 to stay visible.

    Args:
        moments: (3,) principal moments (kg·m²), any order.
        check_triangle: reject moments violating I1 + I2 ≥ I3.

    Returns:
        (3,) semi-axes along the principal axes of ``moments``, in its order.

    Raises:
        ValueError: for moments that are not finite and positive, or (by default) that
            violate the triangle inequality.
    """
    m = np.asarray(moments, dtype=np.float64)
    if m.shape != (3,):
        raise ValueError(f"moments must have shape (3,), got shape {m.shape}")
    moments, _, _ = principal_frame(m, triangle=check_triangle)
    squared = moments.sum() - 2.0 * moments  # I_j + I_k − I_i, ∝ the squared semi-axis i
    squared = squared / squared.max()  # > 0: at most one of the three can be ≤ 0
    return np.sqrt(np.maximum(squared, _MIN_SEMI_AXIS**2))


def _rotation_from_x(direction: np.ndarray) -> np.ndarray:
    """Unit quaternion (scalar-first) turning e_x onto the unit ``direction``, shortest arc."""
    axis = np.array([0.0, -direction[2], direction[1]])  # e_x × direction
    sine = float(np.linalg.norm(axis))
    if sine < 1e-12:
        # Parallel or antiparallel: no axis from the cross product; any ⟂ axis turns e_x to −e_x.
        return quaternion.identity() if direction[0] > 0.0 else quaternion.from_rotvec([0.0, 0.0, np.pi])
    return quaternion.from_rotvec(axis / sine * np.arctan2(sine, direction[0]))


def _rgb(pixels: Any, width: int, height: int) -> np.ndarray:
    """(height, width, 3) contiguous uint8 RGB from getCameraImage's RGBA pixels, which are a
    (height, width, 4) uint8 array when PyBullet was built with numpy and a flat list otherwise."""
    rgba = np.asarray(pixels, dtype=np.uint8).reshape(height, width, 4)
    return np.ascontiguousarray(rgba[..., :3])


def _checked_vector(value: ArrayLike, size: int, name: str) -> np.ndarray:
    v = np.asarray(value, dtype=np.float64)
    if v.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},), got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be finite, got {v.tolist()}")
    return v


def _checked_attitude(value: ArrayLike, name: str) -> np.ndarray:
    q = _checked_vector(value, 4, name)
    if not np.any(q):
        raise ValueError(f"{name} must be a non-zero quaternion [w, x, y, z], got {q.tolist()}")
    # Drawing tolerates a drifting norm; PyBullet would normalise too, but do it here, once.
    return quaternion.normalize(q)


def _checked_size(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(value)


def _checked_float(value: Any, name: str, positive: bool = False) -> float:
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a finite number, got {value!r}") from None
    if not np.isfinite(x) or (positive and x <= 0.0):
        raise ValueError(f"{name} must be a finite{' positive' if positive else ''} number, got {value!r}")
    return x


def _display_available() -> bool:
    """Whether a GUI window can open; only Linux is checked (macOS and Windows always have one)."""
    if not sys.platform.startswith("linux"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


class BodyRenderer:
    """Renders a rigid body's attitude to RGB frames with PyBullet's TinyRenderer.

    Each renderer owns one PyBullet client (DIRECT for ``"rgb_array"``, GUI for
    ``"human"``), disconnected by :meth:`close`, or when the renderer is garbage-collected.
    Nothing is simulated: every :meth:`render` resets the poses and takes a picture.

    Copies: ``copy.copy``, ``copy.deepcopy`` and pickling all build a *new* renderer with
    the same parameters and its own client (so a copy can never disconnect the original's,
    and a renderer can be sent to another process); a ``"human"`` renderer cannot be copied
    (PyBullet allows one GUI client per process) and raises ``TypeError``.

    Args:
        inertia: (3,) principal moments or a (3, 3) body-frame tensor (kg·m²); only the
            shape of the drawn ellipsoid depends on it, and the direction of L.
        width, height: frame size in pixels.
        camera_distance: from the camera to the origin, in units of the largest
            semi-axis (which is 1).
        camera_yaw, camera_pitch: degrees, PyBullet's convention with z up: yaw = pitch = 0
            puts the camera on the −y axis looking along +y (x to the right, z up); yaw
            turns it about +z, a negative pitch raises it above the x-y plane.
        mode: ``"rgb_array"`` or ``"human"`` (a PyBullet GUI window, which needs a display;
            :meth:`render` still returns the frame). Only an unset DISPLAY/WAYLAND_DISPLAY
            can be caught here: PyBullet ends the whole process (exit status 1, "cannot
            connect to X server") when DISPLAY names a server that is not there.
        check_triangle: reject principal moments violating I1 + I2 ≥ I3 (as
            :func:`rigidrot_gym.propagate` does); see :func:`ellipsoid_semi_axes`.

    Raises:
        ValueError: for invalid arguments.
        gymnasium.error.DependencyNotInstalled: if pybullet is not installed.
        RuntimeError: for ``"human"`` without a display, or if PyBullet cannot connect.
    """

    def __init__(
        self,
        inertia: ArrayLike,
        width: int = 320,
        height: int = 240,
        camera_distance: float = 4.5,
        camera_yaw: float = 135.0,
        camera_pitch: float = -25.0,
        mode: str = "rgb_array",
        *,
        check_triangle: bool = True,
    ) -> None:
        # First, so that close() and the finaliser work whatever fails below.
        self._finalizer: weakref.finalize | None = None
        self._client = -1
        if mode not in RENDER_MODES:
            raise ValueError(f"mode must be one of {RENDER_MODES}, got {mode!r}")
        inertia_array = np.array(inertia, dtype=np.float64)
        if inertia_array.shape not in ((3,), (3, 3)):
            raise ValueError(
                f"inertia must be (3,) principal moments or a (3, 3) tensor, got shape {inertia_array.shape}"
            )
        moments, rotation, tensor = principal_frame(inertia_array, triangle=check_triangle)
        self.width = _checked_size(width, "width")
        self.height = _checked_size(height, "height")
        self.camera_distance = _checked_float(camera_distance, "camera_distance", positive=True)
        self.camera_yaw = _checked_float(camera_yaw, "camera_yaw")
        self.camera_pitch = _checked_float(camera_pitch, "camera_pitch")
        self.mode = mode
        self.check_triangle = bool(check_triangle)
        inertia_array.setflags(write=False)
        self.inertia = inertia_array
        self._tensor = tensor
        # Semi-axes along the principal axes, and the rotation from principal axes to body
        # frame that poses the ellipsoid inside the body frame (identity for moments).
        self.semi_axes = ellipsoid_semi_axes(moments, check_triangle=check_triangle)
        self.principal_rotation = quaternion.identity() if rotation is None else rotation
        self.semi_axes.setflags(write=False)
        self.principal_rotation.setflags(write=False)

        p, pybullet_data = _import_pybullet()
        self._p = p
        if mode == "human" and not _display_available():
            raise RuntimeError(
                'render_mode="human" opens a PyBullet GUI window and needs a display, but neither '
                'DISPLAY nor WAYLAND_DISPLAY is set; use render_mode="rgb_array" to get frames '
                "without one"
            )
        client = p.connect(p.GUI if mode == "human" else p.DIRECT)
        if client < 0:
            raise RuntimeError(
                f"PyBullet could not connect a {'GUI' if mode == 'human' else 'DIRECT'} client"
                + (" (only one GUI client per process is allowed)" if mode == "human" else "")
            )
        self._client = client
        # Holds the module and the id, not self, so it can run when self is collected.
        self._finalizer = weakref.finalize(self, _disconnect, p, client)
        try:
            self._build_scene(p, os.path.join(pybullet_data.getDataPath(), _MESH))
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------------------
    # Scene
    # ------------------------------------------------------------------------------

    def _build_scene(self, p: Any, mesh_path: str) -> None:
        kw = {"physicsClientId": self._client}
        p.setGravity(0.0, 0.0, 0.0, **kw)
        if self.mode == "human":
            p.configureDebugVisualizer(p.COV_ENABLE_GUI, 0, **kw)
            p.resetDebugVisualizerCamera(
                self.camera_distance, self.camera_yaw, self.camera_pitch, [0, 0, 0], **kw
            )

        # Far plane well beyond the scene (its radius is 1.5), near plane in front of it.
        self._view = p.computeViewMatrixFromYawPitchRoll(
            [0.0, 0.0, 0.0], self.camera_distance, self.camera_yaw, self.camera_pitch, 0.0, 2
        )
        near = min(0.1, 0.5 * self.camera_distance)
        self._far = self.camera_distance + 10.0
        self._projection = p.computeProjectionMatrixFOV(_FOV_DEG, self.width / self.height, near, self._far)

        no_turn = [0.0, 0.0, 0.0, 1.0]
        # The body: ellipsoid (its frame turned by the principal rotation) and the three axes.
        half, length = _AXIS_HALF_WIDTH, _AXIS_LENGTH
        self._body = self._multibody(
            p,
            [p.GEOM_MESH, p.GEOM_BOX, p.GEOM_BOX, p.GEOM_BOX],
            [[0.0] * 3, [length / 2, half, half], [half, length / 2, half], [half, half, length / 2]],
            [[0.0] * 3, [length / 2, 0.0, 0.0], [0.0, length / 2, 0.0], [0.0, 0.0, length / 2]],
            [quaternion.to_scalar_last(self.principal_rotation).tolist(), no_turn, no_turn, no_turn],
            [_BODY_COLOR, *_AXIS_COLORS],
            mesh_path=mesh_path,
        )
        half = _GHOST_HALF_WIDTH
        self._ghost = self._multibody(
            p,
            [p.GEOM_BOX] * 3,
            [[length / 2, half, half], [half, length / 2, half], [half, half, length / 2]],
            [[length / 2, 0.0, 0.0], [0.0, length / 2, 0.0], [0.0, 0.0, length / 2]],
            [no_turn] * 3,
            list(_GHOST_COLORS),
        )
        # Arrows along their local x: a shaft from the origin and a head at the tip.
        shaft = _ARROW_LENGTH - _HEAD_LENGTH
        arrow = (
            [p.GEOM_BOX] * 2,
            [
                [shaft / 2, _ARROW_HALF_WIDTH, _ARROW_HALF_WIDTH],
                [_HEAD_LENGTH / 2, _HEAD_HALF_WIDTH, _HEAD_HALF_WIDTH],
            ],
            [[shaft / 2, 0.0, 0.0], [_ARROW_LENGTH - _HEAD_LENGTH / 2, 0.0, 0.0]],
            [no_turn] * 2,
        )
        self._momentum_arrow = self._multibody(p, *arrow, [_MOMENTUM_COLOR] * 2)
        self._omega_arrow = self._multibody(p, *arrow, [_OMEGA_COLOR] * 2)
        for body in (self._ghost, self._momentum_arrow, self._omega_arrow):
            self._hide(body)

    def _multibody(
        self,
        p: Any,
        shape_types: list[int],
        half_extents: list[list[float]],
        positions: list[list[float]],
        orientations: list[list[float]],
        colors: list[tuple[float, ...]],
        mesh_path: str = "",
    ) -> int:
        """A static multibody whose one link carries these visual shapes and colours."""
        kw = {"physicsClientId": self._client}
        n = len(shape_types)
        scales = [list(self.semi_axes) if t == p.GEOM_MESH else [1.0, 1.0, 1.0] for t in shape_types]
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
        for i in range(n):
            p.changeVisualShape(body, -1, shapeIndex=i, rgbaColor=list(colors[i]), **kw)
        return body

    def _pose(self, body: int, q: np.ndarray) -> None:
        """Put ``body`` at the origin with scalar-first attitude ``q``."""
        self._p.resetBasePositionAndOrientation(
            body, [0.0, 0.0, 0.0], quaternion.to_scalar_last(q).tolist(), physicsClientId=self._client
        )

    def _hide(self, body: int) -> None:
        # TinyRenderer has no visibility flag: far above the scene, 1000 far planes away, a
        # body is beyond the far plane or outside the field of view for every camera pose.
        self._p.resetBasePositionAndOrientation(
            body,
            [0.0, 0.0, 1e3 * self._far],
            [0.0, 0.0, 0.0, 1.0],
            physicsClientId=self._client,
        )

    def _point(self, arrow: int, direction: np.ndarray) -> None:
        """Turn ``arrow`` (along its local x) onto the world ``direction`` (non-zero)."""
        self._pose(arrow, _rotation_from_x(direction / np.linalg.norm(direction)))

    # ------------------------------------------------------------------------------
    # Public API
    # ------------------------------------------------------------------------------

    @property
    def client_id(self) -> int:
        """The PyBullet client id, or −1 once closed."""
        return self._client if self._finalizer is not None and self._finalizer.alive else -1

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has run (or the client was never connected)."""
        return self.client_id < 0

    def render(
        self, q: ArrayLike, omega: ArrayLike | None = None, target: ArrayLike | None = None
    ) -> np.ndarray:
        """One RGB frame of the body at attitude ``q``.

        Args:
            q: (4,) body-to-world attitude, scalar-first (normalised here).
            omega: (3,) body-frame angular velocity (rad/s); draws the directions of ω and
                of L = R(q) J ω in the world frame. Not drawn if None or |ω| ≤ 1e-9.
            target: (4,) target attitude, scalar-first; its axes are drawn faint.

        Returns:
            (height, width, 3) contiguous uint8 array.

        Raises:
            ValueError: naming the argument that is not finite or of the wrong shape.
            RuntimeError: if the renderer is closed.
        """
        q = _checked_attitude(q, "q")
        omega = None if omega is None else _checked_vector(omega, 3, "omega")
        target = None if target is None else _checked_attitude(target, "target")
        if self.closed:
            raise RuntimeError("render() called on a closed BodyRenderer")

        self._pose(self._body, q)
        if target is None:
            self._hide(self._ghost)
        else:
            self._pose(self._ghost, target)
        if omega is None or np.linalg.norm(omega) <= _ZERO_OMEGA:
            self._hide(self._omega_arrow)
            self._hide(self._momentum_arrow)
        else:
            self._point(self._omega_arrow, quaternion.rotate(q, omega))
            self._point(self._momentum_arrow, quaternion.rotate(q, self._tensor @ omega))

        p = self._p
        width, height, pixels, _, _ = p.getCameraImage(
            self.width,
            self.height,
            self._view,
            self._projection,
            renderer=p.ER_TINY_RENDERER,
            flags=p.ER_NO_SEGMENTATION_MASK,
            physicsClientId=self._client,
        )
        return _rgb(pixels, width, height)

    def close(self) -> None:
        """Disconnect the PyBullet client; safe to call more than once."""
        if self._finalizer is not None:
            self._finalizer()

    def __enter__(self) -> BodyRenderer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __reduce__(self) -> tuple[Any, tuple[dict[str, Any]]]:
        # copy, deepcopy and pickle all go through here: rebuilding from the parameters gives
        # the copy its own client. Copying __dict__ instead would share the client id, and the
        # copy's close() or finaliser would disconnect the original.
        if self.mode == "human":
            raise TypeError(
                "a human-mode BodyRenderer cannot be copied or pickled: PyBullet allows one GUI "
                "client per process"
            )
        return (_rebuild, (self._parameters(),))

    def _parameters(self) -> dict[str, Any]:
        return {
            "inertia": np.array(self.inertia),
            "width": self.width,
            "height": self.height,
            "camera_distance": self.camera_distance,
            "camera_yaw": self.camera_yaw,
            "camera_pitch": self.camera_pitch,
            "mode": self.mode,
            "check_triangle": self.check_triangle,
        }

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"client {self._client}"
        return (
            f"BodyRenderer(semi_axes={self.semi_axes.round(3).tolist()}, {self.width}x{self.height}, {state})"
        )


def _rebuild(parameters: dict[str, Any]) -> BodyRenderer:
    """A fresh renderer from :meth:`BodyRenderer._parameters` (for copy and pickle)."""
    return BodyRenderer(**parameters)


def tile(frames: Sequence[np.ndarray] | np.ndarray, columns: int) -> np.ndarray:
    """Tile equally sized frames into one image, row by row, for vector envs.

    Args:
        frames: n ≥ 1 frames of shape (h, w, c), uint8.
        columns: frames per row; at most n are used. The last row is padded with black.

    Returns:
        (rows·h, columns·w, c) contiguous uint8 array, rows = ceil(n / columns).

    Raises:
        ValueError: for no frames, frames of different shapes or not uint8 images, or a
            non-positive ``columns``.
    """
    columns = _checked_size(columns, "columns")
    frames = list(frames)
    if not frames:
        raise ValueError("frames must hold at least one frame, got none")
    shape = np.shape(frames[0])
    for i, frame in enumerate(frames):
        if np.shape(frame) != shape or len(shape) != 3 or np.asarray(frame).dtype != np.uint8:
            raise ValueError(
                f"frames must be uint8 images of one shape (h, w, c), got frame {i} of shape "
                f"{np.shape(frame)} and dtype {np.asarray(frame).dtype} (frame 0: {shape})"
            )
    n = len(frames)
    columns = min(columns, n)
    rows = -(-n // columns)
    h, w, c = shape
    out = np.zeros((rows * h, columns * w, c), dtype=np.uint8)
    for i, frame in enumerate(frames):
        r, k = divmod(i, columns)
        out[r * h : (r + 1) * h, k * w : (k + 1) * w] = frame
    return out
