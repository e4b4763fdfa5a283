"""Tests of rigidrot_gym.render (PyBullet TinyRenderer frames of a rigid body).

Pixel expectations come from the camera geometry, worked out by hand: with
camera_yaw = camera_pitch = 0 PyBullet puts the eye on the −y axis looking along +y with
z up, so the world x-z plane through the origin is parallel to the image plane, world +x
points to the image's right, +z to its top, and the origin projects to the image centre.
A segment from the origin in that plane projects to a ray from the centre with the same
angle (the projection of a plane parallel to the image is a uniform scaling).
"""

from __future__ import annotations

import copy
import gc
import pickle
import subprocess
import sys

import numpy as np
import pytest

pybullet = pytest.importorskip("pybullet")

from gymnasium.error import DependencyNotInstalled  # noqa: E402

from rigidrot_gym.physics.rotation import inertia as inertia_mod  # noqa: E402
from rigidrot_gym.physics.rotation import quaternion  # noqa: E402
from rigidrot_gym.render import BodyRenderer, ellipsoid_semi_axes, tile  # noqa: E402

W, H = 320, 240
# Semi-axes (0.5, 0.5, 1): I ∝ (b² + c², a² + c², a² + b²). The x and y axes (length 1.3)
# stick out of the ellipsoid by 0.8, and the shape is symmetric under turns about z.
PROLATE_Z = (1.25, 1.25, 0.5)


def rot(axis, angle: float) -> np.ndarray:
    """Scalar-first quaternion of a turn by ``angle`` about ``axis``, written out by hand."""
    axis = np.asarray(axis, dtype=float) / np.linalg.norm(axis)
    return np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])


# Colour classes of the drawn parts, as fractions of the red channel (lighting scales all
# three channels of a face by one factor): saturated red axis, pale-red target axis,
# orange ω, magenta L, grey ellipsoid.
def red_mask(f: np.ndarray) -> np.ndarray:
    r, g, b = (f[..., i].astype(float) for i in range(3))
    return (r >= 60) & (g <= 0.3 * r) & (b <= 0.3 * r)


def pale_red_mask(f: np.ndarray) -> np.ndarray:
    r, g, b = (f[..., i].astype(float) for i in range(3))
    return (r >= 60) & (g >= 0.45 * r) & (g <= 0.75 * r) & (np.abs(g - b) <= 0.05 * r)


def orange_mask(f: np.ndarray) -> np.ndarray:
    r, g, b = (f[..., i].astype(float) for i in range(3))
    return (r >= 60) & (g >= 0.35 * r) & (g <= 0.75 * r) & (b <= 0.15 * r)


def magenta_mask(f: np.ndarray) -> np.ndarray:
    r, g, b = (f[..., i].astype(float) for i in range(3))
    return (r >= 60) & (b >= 0.8 * r) & (b <= 1.25 * r) & (g <= 0.3 * r)


def grey_mask(f: np.ndarray) -> np.ndarray:
    c = f.astype(int)
    return (c.max(axis=-1) < 240) & (c.max(axis=-1) - c.min(axis=-1) < 30)


def centroid(mask: np.ndarray) -> tuple[float, float]:
    """(x, y) of a mask's pixels relative to the image centre, y pointing up."""
    rows, cols = np.nonzero(mask)
    h, w = mask.shape
    return cols.mean() + 0.5 - w / 2, h / 2 - (rows.mean() + 0.5)


def angle_deg(mask: np.ndarray) -> float:
    x, y = centroid(mask)
    return float(np.degrees(np.arctan2(y, x)))


@pytest.fixture(scope="module")
def side_view():
    """Camera on −y (yaw = pitch = 0): image right = +x, image up = +z."""
    r = BodyRenderer(PROLATE_Z, W, H, camera_yaw=0.0, camera_pitch=0.0)
    yield r
    r.close()


# ----------------------------------------------------------------------------------
# Frames
# ----------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [(320, 240), (64, 48), (200, 100)])
def test_frame_shape_and_dtype(size):
    width, height = size
    with BodyRenderer([1.0, 2.0, 2.5], width, height) as r:
        frame = r.render(quaternion.identity(), omega=[0.1, 0.2, 0.3], target=rot([0, 0, 1], 0.5))
    assert frame.shape == (height, width, 3)
    assert frame.dtype == np.uint8
    assert frame.flags.c_contiguous
    # Something was drawn on the white background.
    assert np.count_nonzero(frame.min(axis=-1) < 200) > 0.01 * width * height


def test_list_pixels_give_the_same_frame(side_view, monkeypatch):
    # PyBullet built without numpy returns the RGBA pixels as a flat list.
    q = rot([1, 2, 3], 0.7)
    expected = side_view.render(q)
    real = pybullet.getCameraImage

    def as_list(*args, **kwargs):
        w, h, rgba, depth, seg = real(*args, **kwargs)
        return w, h, [int(v) for v in np.asarray(rgba).ravel()], depth, seg

    monkeypatch.setattr(pybullet, "getCameraImage", as_list)
    frame = side_view.render(q)
    assert frame.shape == (H, W, 3) and frame.dtype == np.uint8 and frame.flags.c_contiguous
    np.testing.assert_array_equal(frame, expected)


def test_yaw_changes_the_image():
    with BodyRenderer([1.0, 2.0, 2.5]) as r:
        a = r.render(quaternion.identity())
        b = r.render(rot([0, 0, 1], np.pi / 2))
        c = r.render([2.0, 0.0, 0.0, 0.0])  # not unit: normalised to the identity
    assert np.count_nonzero(np.any(a != b, axis=-1)) > 500
    np.testing.assert_array_equal(a, c)


def test_x_axis_follows_the_attitude(side_view):
    # Identity: body x = world +x, to the right.
    f = side_view.render(quaternion.identity())
    assert np.count_nonzero(red_mask(f)) > 50
    x, y = centroid(red_mask(f))
    assert x > 20 and abs(y) < 5
    # 180° about z: [0, 0, 0, 1] scalar-first; body x = world −x, to the left. (Read as
    # scalar-last it would be the identity, and the axis would stay on the right.)
    x, y = centroid(red_mask(side_view.render([0.0, 0.0, 0.0, 1.0])))
    assert x < -20 and abs(y) < 5
    # +90° about y: R x = (cos 90°, 0, −sin 90°) = −z, down. (World-to-body, or the
    # quaternion read scalar-last, would send it up.)
    x, y = centroid(red_mask(side_view.render(rot([0, 1, 0], np.pi / 2))))
    assert y < -20 and abs(x) < 5


def test_target_ghost(side_view):
    body = quaternion.identity()
    assert not np.any(pale_red_mask(side_view.render(body)))
    # Target turned 180° about z: its pale x axis points to −x, left; the body's to the right.
    f = side_view.render(body, target=rot([0, 0, 1], np.pi))
    assert np.count_nonzero(pale_red_mask(f)) > 50
    assert centroid(pale_red_mask(f))[0] < -20
    assert centroid(red_mask(f))[0] > 20
    # Hidden again when the target is dropped.
    assert not np.any(pale_red_mask(side_view.render(body)))


def test_omega_and_momentum_directions(side_view):
    omega = np.array([1.0, 0.0, 1.0]) / np.sqrt(2.0)
    momentum = np.diag(PROLATE_Z) @ omega  # body frame: (1.25, 0, 0.5)/√2, ≠ direction of ω
    # Identity: world = body; both in the x-z plane, angles measured from +x towards +z.
    f = side_view.render(quaternion.identity(), omega=omega)
    assert np.count_nonzero(orange_mask(f)) > 50 and np.count_nonzero(magenta_mask(f)) > 50
    assert angle_deg(orange_mask(f)) == pytest.approx(45.0, abs=3.0)
    expected = np.degrees(np.arctan2(momentum[2], momentum[0]))  # 21.8°
    assert angle_deg(magenta_mask(f)) == pytest.approx(expected, abs=3.0)
    # 180° about z: world vectors are (−x, y, z) of the body ones: 135° and 180° − 21.8°.
    f = side_view.render([0.0, 0.0, 0.0, 1.0], omega=omega)
    assert angle_deg(orange_mask(f)) == pytest.approx(135.0, abs=3.0)
    assert angle_deg(magenta_mask(f)) == pytest.approx(180.0 - expected, abs=3.0)
    # +90° about y: R x = −z, R z = +x, so ω → (1, 0, −1)/√2 at −45° and L → (0.5, 0, −1.25)/√2
    # at −68.2° (the inverse turn would give 135° and 111.8°).
    f = side_view.render(rot([0, 1, 0], np.pi / 2), omega=omega)
    assert angle_deg(orange_mask(f)) == pytest.approx(-45.0, abs=3.0)
    assert angle_deg(magenta_mask(f)) == pytest.approx(np.degrees(np.arctan2(-1.25, 0.5)), abs=3.0)
    # Not drawn without ω or for ω = 0.
    for omega in (None, [0.0, 0.0, 0.0]):
        f = side_view.render(quaternion.identity(), omega=omega)
        assert not np.any(orange_mask(f)) and not np.any(magenta_mask(f))


# ----------------------------------------------------------------------------------
# Ellipsoid
# ----------------------------------------------------------------------------------


@pytest.mark.parametrize("semi", [(1.0, 0.5, 0.25), (0.3, 1.0, 0.7), (1.0, 1.0, 1.0), (0.9, 0.6, 1.0)])
def test_semi_axes_round_trip(semi):
    # Moments of a solid ellipsoid from the independent formula in rigidrot_gym.physics.rotation.inertia.
    moments = np.diag(inertia_mod.ellipsoid(3.7, semi))
    np.testing.assert_allclose(ellipsoid_semi_axes(moments), np.asarray(semi) / max(semi), rtol=1e-12)


def test_semi_axes_give_proportional_moments():
    rng = np.random.default_rng(1)
    for _ in range(20):
        moments = rng.uniform(1.0, 2.0, 3)  # any three in [1, 2] satisfy the triangle inequality
        semi = ellipsoid_semi_axes(moments)
        assert semi.max() == pytest.approx(1.0)
        ratio = np.diag(inertia_mod.ellipsoid(1.0, semi)) / moments
        np.testing.assert_allclose(ratio, ratio[0], rtol=1e-12)


def test_semi_axes_limits():
    # A thin plate (I1 + I2 = I3) has c = 0: drawn 0.05 thick.
    np.testing.assert_allclose(ellipsoid_semi_axes([1.0, 4.0, 5.0]), [1.0, 0.5, 0.05])
    with pytest.raises(ValueError, match="triangle"):
        ellipsoid_semi_axes([1.0, 1.0, 3.0])
    semi = ellipsoid_semi_axes([1.0, 1.0, 3.0], check_triangle=False)
    np.testing.assert_allclose(semi, [1.0, 1.0, 0.05])


def test_non_diagonal_tensor_oriented_along_principal_axes():
    # Semi-axes (1, 0.4, 0.25) along the principal axes; long axis turned into (1, 0, 1)/√2.
    moments = np.diag(inertia_mod.ellipsoid(1.0, [1.0, 0.4, 0.25]))
    turn = quaternion.to_matrix(rot([0, 1, 0], -np.pi / 4))
    np.testing.assert_allclose(turn @ [1, 0, 0], np.array([1, 0, 1]) / np.sqrt(2), atol=1e-12)
    tensor = turn @ np.diag(moments) @ turn.T
    assert abs(tensor[0, 2]) > 0.05  # products of inertia

    with BodyRenderer(tensor, camera_yaw=0.0, camera_pitch=0.0) as r:
        # The pose computed for the visual shape is the principal frame of the tensor ...
        ascending, principal = inertia_mod.principal_axes(tensor)
        assert abs(np.dot(r.principal_rotation, principal)) == pytest.approx(1.0, abs=1e-12)
        np.testing.assert_allclose(r.semi_axes, ellipsoid_semi_axes(ascending), rtol=1e-12)
        # ... and PyBullet holds that pose: its mesh frame diagonalises the tensor into
        # moments whose ellipsoid has the mesh scale's semi-axes.
        meshes = [
            shape
            for body in range(pybullet.getNumBodies(physicsClientId=r.client_id))
            for shape in pybullet.getVisualShapeData(body, physicsClientId=r.client_id)
            if shape[2] == pybullet.GEOM_MESH
        ]
        assert len(meshes) == 1
        scale, orientation = np.array(meshes[0][3]), np.array(meshes[0][6])
        frame = quaternion.to_matrix(quaternion.from_scalar_last(orientation))
        in_frame = frame.T @ tensor @ frame
        np.testing.assert_allclose(in_frame, np.diag(np.diag(in_frame)), atol=1e-6)
        ratio = np.diag(inertia_mod.ellipsoid(1.0, scale)) / np.diag(in_frame)
        np.testing.assert_allclose(ratio, ratio[0], rtol=1e-6)

        # In the picture the long axis lies along (1, 0, 1): 45° from the image's x axis.
        grey = grey_mask(r.render(quaternion.identity()))
        rows, cols = np.nonzero(grey)
        x, y = cols - cols.mean(), -(rows - rows.mean())
        angle = 0.5 * np.degrees(np.arctan2(2 * np.mean(x * y), np.mean(x * x) - np.mean(y * y)))
        assert angle == pytest.approx(45.0, abs=3.0)


# ----------------------------------------------------------------------------------
# Life cycle
# ----------------------------------------------------------------------------------


def test_no_client_leaks():
    probe = pybullet.connect(pybullet.DIRECT)  # PyBullet hands out the lowest free id
    pybullet.disconnect(physicsClientId=probe)
    used = set()
    for _ in range(200):
        r = BodyRenderer([1.0, 2.0, 2.5], 16, 12)
        used.add(r.client_id)
        r.close()
        r.close()  # idempotent
        assert r.client_id == -1 and r.closed
    for _ in range(50):
        used.add(BodyRenderer([1.0, 2.0, 2.5], 16, 12).client_id)  # dropped without close()
    gc.collect()
    for i in used:
        assert not pybullet.isConnected(physicsClientId=i)
        assert pybullet.getConnectionInfo(i)["isConnected"] == 0
    again = pybullet.connect(pybullet.DIRECT)
    try:
        assert again == probe
    finally:
        pybullet.disconnect(physicsClientId=again)


def test_render_after_close_raises():
    r = BodyRenderer([1.0, 2.0, 2.5], 16, 12)
    r.close()
    with pytest.raises(RuntimeError, match="closed"):
        r.render(quaternion.identity())


def test_deepcopy_and_pickle_leave_the_original_working(side_view):
    q = rot([1, -1, 2], 1.1)
    expected = side_view.render(q)
    for make in (copy.deepcopy, copy.copy, lambda r: pickle.loads(pickle.dumps(r))):
        twin = make(side_view)
        assert twin.client_id >= 0 and twin.client_id != side_view.client_id
        np.testing.assert_array_equal(twin.render(q), expected)
        client = twin.client_id
        twin.close()
        del twin
        gc.collect()
        assert not pybullet.isConnected(physicsClientId=client)
        assert pybullet.isConnected(physicsClientId=side_view.client_id)
        np.testing.assert_array_equal(side_view.render(q), expected)


def test_human_mode_without_display_warns_and_draws_off_screen(monkeypatch):
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    probe = pybullet.connect(pybullet.DIRECT)
    pybullet.disconnect(physicsClientId=probe)
    q = quaternion.from_rotvec([0.3, -0.2, 0.5])
    with pytest.warns(UserWarning, match=r"needs a display.*off-screen"):
        human = BodyRenderer([1.0, 2.0, 2.5], 64, 48, mode="human")
    with BodyRenderer([1.0, 2.0, 2.5], 64, 48) as reference:
        # the same picture as an off-screen renderer's (the reference), not a GUI window
        assert not human.gui
        assert pybullet.getConnectionInfo(human.client_id)["connectionMethod"] == pybullet.DIRECT
        np.testing.assert_array_equal(human.render(q, [0.1, 0.2, 0.3]), reference.render(q, [0.1, 0.2, 0.3]))
    human.close()
    gc.collect()
    again = pybullet.connect(pybullet.DIRECT)  # nothing left connected
    pybullet.disconnect(physicsClientId=again)
    assert again == probe


def test_missing_pybullet(monkeypatch):
    monkeypatch.setitem(sys.modules, "pybullet", None)  # makes `import pybullet` fail
    with pytest.raises(DependencyNotInstalled, match=r'pip install "rigidrot-gym\[render\]"'):
        BodyRenderer([1.0, 2.0, 2.5])


def test_module_import_does_not_import_pybullet():
    code = "import sys, rigidrot_gym.render; print('pybullet' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


# ----------------------------------------------------------------------------------
# Validation
# ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"q": [1.0, 0.0, 0.0]}, "q"),
        ({"q": [np.nan, 0.0, 0.0, 0.0]}, "q"),
        ({"q": [0.0, 0.0, 0.0, 0.0]}, "q"),
        ({"omega": [1.0, 2.0]}, "omega"),
        ({"omega": [1.0, np.inf, 0.0]}, "omega"),
        ({"target": [[1.0, 0.0, 0.0, 0.0]]}, "target"),
        ({"target": [1.0, 0.0, np.nan, 0.0]}, "target"),
    ],
)
def test_bad_render_inputs(side_view, kwargs, name):
    args = {"q": quaternion.identity(), **kwargs}
    with pytest.raises(ValueError, match=name):
        side_view.render(**args)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"inertia": [1.0, 2.0]}, "inertia"),
        ({"inertia": [1.0, 1.0, 3.0]}, "triangle"),
        ({"inertia": [1.0, -2.0, 2.5]}, "inertia"),
        ({"width": 0}, "width"),
        ({"height": 2.5}, "height"),
        ({"camera_distance": -1.0}, "camera_distance"),
        ({"camera_yaw": np.nan}, "camera_yaw"),
        ({"mode": "ansi"}, "mode"),
    ],
)
def test_bad_constructor_inputs(kwargs, name):
    args = {"inertia": [1.0, 2.0, 2.5], **kwargs}
    with pytest.raises(ValueError, match=name):
        BodyRenderer(**args)


# ----------------------------------------------------------------------------------
# tile
# ----------------------------------------------------------------------------------


def test_tile():
    frames = [np.full((2, 3, 3), v, dtype=np.uint8) for v in (10, 20, 30)]
    out = tile(frames, 2)
    assert out.shape == (4, 6, 3) and out.dtype == np.uint8
    np.testing.assert_array_equal(out[:2, :3], 10)
    np.testing.assert_array_equal(out[:2, 3:], 20)
    np.testing.assert_array_equal(out[2:, :3], 30)
    np.testing.assert_array_equal(out[2:, 3:], 0)  # black padding
    np.testing.assert_array_equal(tile(np.stack(frames), 5), np.concatenate(frames, axis=1))
    np.testing.assert_array_equal(tile(frames, 1), np.concatenate(frames, axis=0))


def test_tile_bad_inputs():
    frame = np.zeros((2, 3, 3), dtype=np.uint8)
    with pytest.raises(ValueError, match="columns"):
        tile([frame], 0)
    with pytest.raises(ValueError, match="frames"):
        tile([], 2)
    with pytest.raises(ValueError, match="frames"):
        tile([frame, np.zeros((3, 3, 3), dtype=np.uint8)], 2)
    with pytest.raises(ValueError, match="frames"):
        tile([frame.astype(float)], 2)
