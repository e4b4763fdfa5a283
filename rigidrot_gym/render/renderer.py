"""Draw a rigid body with PyBullet's TinyRenderer (CPU, no display needed).

:class:`BodyRenderer` owns a PyBullet client and a camera; what it draws is the
:class:`~rigidrot_gym.render.scene.Scene` (the body as the spacecraft its scenario declares,
or else as the ellipsoid of its inertia; its axes, the target's axes, L and ω, and the
directions to the Sun and to nadir on an orbit).

Conventions are those of :mod:`rigidrot_gym.physics.rotation.quaternion`: scalar-first ``[w, x, y, z]``
attitudes mapping body to world, ω in the body frame.

PyBullet is an optional dependency (``pip install "rigidrot-gym[render]"``): it is
imported only when a :class:`BodyRenderer` is created, never when this module is.

Frames are 640×480 by default. Measured on a 2-core machine: ≈4 ms per frame at 320×240
(≈5.3 ms with the target, L and ω drawn) and ≈15 ms (≈19 ms) at 640×480, ≈85% of it inside
``getCameraImage``; creating and closing a renderer ≈20 ms; each client holds ≈28 MB until
closed.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
import weakref
from typing import Any

import numpy as np
from gymnasium.error import DependencyNotInstalled
from numpy.typing import ArrayLike

from rigidrot_gym.physics.plumbing.quiet import c_output_to_stderr, import_quietly
from rigidrot_gym.physics.rotation import quaternion
from rigidrot_gym.physics.rotation.inertia import principal_frame
from rigidrot_gym.render.frames import rgb
from rigidrot_gym.render.geometry import ellipsoid_semi_axes
from rigidrot_gym.render.options import pixels, real
from rigidrot_gym.render.scene import Scene
from rigidrot_gym.render.spacecraft import Spacecraft

RENDER_MODES = ("rgb_array", "human")

# |ω| (rad/s) at or below which ω and L = Jω have no direction worth drawing.
_ZERO_OMEGA = 1e-9
_FOV_DEG = 45.0
_MESH = "sphere_smooth.obj"  # pybullet_data's unit sphere, scaled into the ellipsoid
_INSTALL_HINT = 'pybullet is not installed, run `pip install "rigidrot-gym[render]"`'


def _import_pybullet() -> tuple[Any, Any]:
    """pybullet and pybullet_data, imported on first use (they are an optional extra)."""
    try:
        pybullet = import_quietly("pybullet")
        import pybullet_data
    except ImportError as e:
        raise DependencyNotInstalled(_INSTALL_HINT) from e
    return pybullet, pybullet_data


def _disconnect(pybullet: Any, client_id: int, gui: bool) -> None:
    """Disconnect ``client_id``; the finaliser of a renderer (holds no reference to it)."""
    try:
        if pybullet.isConnected(physicsClientId=client_id):
            # A GUI client prints its threads' end to stdout as it disconnects.
            with c_output_to_stderr() if gui else contextlib.nullcontext():
                pybullet.disconnect(physicsClientId=client_id)
    except pybullet.error:
        pass  # already gone: close() must not fail on it


def _checked_vector(value: ArrayLike, size: int, name: str) -> np.ndarray:
    v = np.asarray(value, dtype=np.float64)
    if v.shape != (size,):
        raise ValueError(f"{name} must have shape ({size},), got shape {v.shape}")
    if not np.all(np.isfinite(v)):
        raise ValueError(f"{name} must be finite, got {v.tolist()}")
    return v


def _checked_direction(value: ArrayLike, name: str) -> np.ndarray:
    v = _checked_vector(value, 3, name)
    if not np.any(v):
        raise ValueError(f"{name} must be a non-zero direction (3 numbers), got {v.tolist()}")
    return v


def _checked_attitude(value: ArrayLike, name: str) -> np.ndarray:
    q = _checked_vector(value, 4, name)
    if not np.any(q):
        raise ValueError(f"{name} must be a non-zero quaternion [w, x, y, z], got {q.tolist()}")
    # Drawing tolerates a drifting norm; PyBullet would normalise too, but do it here, once.
    return quaternion.normalize(q)


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
    and a renderer can be sent to another process); a renderer with a GUI window cannot be
    copied (PyBullet allows one GUI client per process) and raises ``TypeError``.

    Args:
        inertia: (3,) principal moments or a (3, 3) body-frame tensor (kg·m²); only the
            shape of the drawn ellipsoid depends on it, and the direction of L.
        width: frame width in pixels.
        height: frame height in pixels.
        camera_distance: from the camera to the origin, in units of the largest
            semi-axis, or of the spacecraft's farthest corner (which is 1).
        camera_yaw: degrees, PyBullet's convention with z up: yaw = pitch = 0 puts the
            camera on the −y axis looking along +y (x to the right, z up); yaw turns it
            about +z.
        camera_pitch: degrees; a negative pitch raises the camera above the x-y plane.
        mode: ``"rgb_array"`` or ``"human"`` (a PyBullet GUI window; :meth:`render` still
            returns the frame). Without a display (no DISPLAY or WAYLAND_DISPLAY on
            Linux) ``"human"`` warns once and draws off-screen, like ``"rgb_array"``
            (:attr:`gui` is then False). Only an unset variable can be caught: PyBullet
            ends the whole process (exit status 1, "cannot connect to X server") when
            DISPLAY names a server that is not there.
        check_triangle: reject principal moments violating I1 + I2 ≥ I3 (as
            :func:`rigidrot_gym.physics.propagate` does); see :func:`ellipsoid_semi_axes`.
        spacecraft: drawn instead of the ellipsoid when given
            (:func:`~rigidrot_gym.attitude.pictures.spacecraft_of` a scenario).

    Raises:
        ValueError: for invalid arguments.
        gymnasium.error.DependencyNotInstalled: if pybullet is not installed.
        RuntimeError: if PyBullet cannot connect.
    """

    def __init__(
        self,
        inertia: ArrayLike,
        width: int = 640,
        height: int = 480,
        camera_distance: float = 4.5,
        camera_yaw: float = 135.0,
        camera_pitch: float = -25.0,
        mode: str = "rgb_array",
        *,
        check_triangle: bool = True,
        spacecraft: Spacecraft | None = None,
    ) -> None:
        # First, so that close() and the finaliser work whatever fails below.
        self._finalizer: weakref.finalize | None = None
        self._client = -1
        if mode not in RENDER_MODES:
            raise ValueError(f"mode must be one of {RENDER_MODES}, got {mode!r}")
        self.check_triangle = bool(check_triangle)
        self._set_inertia(inertia)
        self.width = pixels(width, "width")
        self.height = pixels(height, "height")
        self.camera_distance = real(camera_distance, "camera_distance", positive=True)
        self.camera_yaw = real(camera_yaw, "camera_yaw")
        self.camera_pitch = real(camera_pitch, "camera_pitch")
        self.mode = mode
        if spacecraft is not None and not isinstance(spacecraft, Spacecraft):
            raise ValueError(f"spacecraft must be a Spacecraft or None, got {spacecraft!r}")
        self.spacecraft = spacecraft

        p, pybullet_data = _import_pybullet()
        self._p = p
        self.gui = mode == "human" and _display_available()
        if mode == "human" and not self.gui:
            warnings.warn(
                'render_mode="human" needs a display for its PyBullet GUI window, but neither DISPLAY '
                'nor WAYLAND_DISPLAY is set: drawing off-screen instead (frames as in "rgb_array")',
                UserWarning,
                stacklevel=2,
            )
        # A GUI client prints its threads' start and arguments to stdout as it connects.
        with c_output_to_stderr() if self.gui else contextlib.nullcontext():
            client = p.connect(p.GUI if self.gui else p.DIRECT)
        if client < 0:
            raise RuntimeError(
                f"PyBullet could not connect a {'GUI' if self.gui else 'DIRECT'} client"
                + (" (only one GUI client per process is allowed)" if self.gui else "")
            )
        self._client = client
        # Holds the module and the id, not self, so it can run when self is collected.
        self._finalizer = weakref.finalize(self, _disconnect, p, client, self.gui)
        self._mesh = os.path.join(pybullet_data.getDataPath(), _MESH)
        try:
            self._set_camera(p)
            self._build_scene()
        except BaseException:
            self.close()
            raise

    def _build_scene(self) -> None:
        # Hidden objects go 1000 far planes above the scene: beyond the far plane or
        # outside the field of view for every camera pose.
        self._scene = Scene(
            self._p,
            self._client,
            self.semi_axes,
            self.principal_rotation,
            self._mesh,
            hide_height=1e3 * self._far,
            spacecraft=self.spacecraft,
        )

    def _set_inertia(self, inertia: ArrayLike) -> None:
        """Check ``inertia`` and derive what is drawn from it: the ellipsoid's semi-axes
        along the principal axes, and the rotation from principal axes to body frame that
        poses it inside the body frame (identity for moments)."""
        inertia_array = np.array(inertia, dtype=np.float64)
        if inertia_array.shape not in ((3,), (3, 3)):
            raise ValueError(
                f"inertia must be (3,) principal moments or a (3, 3) tensor, got shape {inertia_array.shape}"
            )
        moments, rotation, tensor = principal_frame(inertia_array, triangle=self.check_triangle)
        semi_axes = ellipsoid_semi_axes(moments, check_triangle=self.check_triangle)
        principal_rotation = quaternion.identity() if rotation is None else rotation
        for a in (inertia_array, semi_axes, principal_rotation):
            a.setflags(write=False)
        self.inertia, self._tensor = inertia_array, tensor
        self.semi_axes, self.principal_rotation = semi_axes, principal_rotation

    def _set_camera(self, p: Any) -> None:
        if self.gui:
            p.configureDebugVisualizer(p.COV_ENABLE_GUI, 0, physicsClientId=self._client)
            p.resetDebugVisualizerCamera(
                self.camera_distance,
                self.camera_yaw,
                self.camera_pitch,
                [0, 0, 0],
                physicsClientId=self._client,
            )
        self._view = p.computeViewMatrixFromYawPitchRoll(
            [0.0, 0.0, 0.0], self.camera_distance, self.camera_yaw, self.camera_pitch, 0.0, 2
        )
        # Far plane well beyond the scene (its radius is 1.5), near plane in front of it.
        near = min(0.1, 0.5 * self.camera_distance)
        self._far = self.camera_distance + 10.0
        self._projection = p.computeProjectionMatrixFOV(_FOV_DEG, self.width / self.height, near, self._far)

    @property
    def client_id(self) -> int:
        """The PyBullet client id, or −1 once closed."""
        return self._client if self._finalizer is not None and self._finalizer.alive else -1

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` has run (or the client was never connected)."""
        return self.client_id < 0

    def render(
        self,
        q: ArrayLike,
        omega: ArrayLike | None = None,
        target: ArrayLike | None = None,
        inertia: ArrayLike | None = None,
        *,
        sun: ArrayLike | None = None,
        nadir: ArrayLike | None = None,
        firing: ArrayLike | None = None,
    ) -> np.ndarray:
        """One RGB frame of the body at attitude ``q``.

        Args:
            q: (4,) body-to-world attitude, scalar-first (normalised here).
            omega: (3,) body-frame angular velocity (rad/s); draws the directions of ω and
                of L = R(q) J ω in the world frame. Not drawn if None or |ω| ≤ 1e-9.
            target: (4,) target attitude, scalar-first; its axes are drawn faint.
            inertia: (3,) principal moments or (3, 3) tensor (kg·m²) to draw from now on
                (a body whose inertia changed, e.g. by domain randomisation); ``None``
                keeps the current one.
            sun: (3,) non-zero direction from the body to the Sun, world frame; drawn as
                an arrow if given.
            nadir: (3,) non-zero direction from the body to the Earth's centre, world
                frame; drawn as an arrow if given.
            firing: (k,) one flag per thruster of the spacecraft: the plumes of those
                true are drawn (none if None).

        Returns:
            (height, width, 3) contiguous uint8 array.

        Raises:
            ValueError: naming the argument that is not finite or of the wrong shape.
            RuntimeError: if the renderer is closed.
        """
        q = _checked_attitude(q, "q")
        omega = None if omega is None else _checked_vector(omega, 3, "omega")
        target = None if target is None else _checked_attitude(target, "target")
        sun = None if sun is None else _checked_direction(sun, "sun")
        nadir = None if nadir is None else _checked_direction(nadir, "nadir")
        firing = None if firing is None else self._checked_firing(firing)
        if self.closed:
            raise RuntimeError("render() called on a closed BodyRenderer")
        if inertia is not None and not np.array_equal(np.asarray(inertia, dtype=np.float64), self.inertia):
            self._set_inertia(inertia)
            if self.spacecraft is None:
                # PyBullet cannot rescale a shape, and a removed body leaves its visual
                # shapes behind (≈3 kB each): start the client's scene afresh (≈10 ms). A
                # spacecraft's drawing does not depend on its inertia.
                self._p.resetSimulation(physicsClientId=self._client)
                self._build_scene()

        drawn = omega is not None and np.linalg.norm(omega) > _ZERO_OMEGA
        self._scene.pose(
            q,
            target,
            quaternion.rotate(q, omega) if drawn else None,
            quaternion.rotate(q, self._tensor @ omega) if drawn else None,
            sun,
            nadir,
            firing,
        )

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
        return rgb(pixels, width, height)

    def _checked_firing(self, firing: ArrayLike) -> np.ndarray:
        count = 0 if self.spacecraft is None else len(self.spacecraft.thruster_positions)
        flags = np.asarray(firing)
        if flags.shape != (count,) or flags.dtype != np.bool_:
            raise ValueError(
                f"firing must be {count} bools, one per thruster of the drawn spacecraft, got "
                f"{flags.tolist()!r} (shape {flags.shape}, dtype {flags.dtype})"
            )
        return flags

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
        if self.gui:
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
            "spacecraft": self.spacecraft,
        }

    def __repr__(self) -> str:
        state = "closed" if self.closed else f"client {self._client}"
        return (
            f"BodyRenderer(semi_axes={self.semi_axes.round(3).tolist()}, {self.width}x{self.height}, {state})"
        )


def _rebuild(parameters: dict[str, Any]) -> BodyRenderer:
    """A fresh renderer from :meth:`BodyRenderer._parameters` (for copy and pickle)."""
    return BodyRenderer(**parameters)
