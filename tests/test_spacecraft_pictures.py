"""Pictures of the spacecraft a scenario declares (rigidrot_gym.render.spacecraft, read from the
scenario by rigidrot_gym.attitude.pictures): the 6U box
and its panels, the thrusters' plumes as they fire, the Sun and nadir arrows, in the single
and the vector env's frames.

Pixel expectations come from the camera's geometry, worked out by hand as in
tests/test_render.py: with camera_yaw = camera_pitch = 0 the eye is on the −y axis at the
camera distance d looking along +y, z up, with a vertical field of view of 45°, so a world
point (x, y, z) (in drawn units) lands on column W/2 + f x / (d + y) and row H/2 − f z / (d + y),
f = (H/2) / tan 22.5°. Colours are told apart by the ratios of their channels (lighting
scales all three channels of a face by one factor).
"""

from __future__ import annotations

import copy
import datetime

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("pybullet")

import rigidrot_gym  # noqa: F401
from rigidrot_gym.attitude.pictures import spacecraft_of
from rigidrot_gym.render import BodyRenderer, tile

W, H = 640, 480
DISTANCE = 4.5  # BodyRenderer's default camera distance
FRONT = {"camera_yaw": 0.0, "camera_pitch": 0.0}
# The 6U's box (0.1 × 0.2263 × 0.366 m) and its panels (0.2263 × 0.366 m, hinged on the +x
# face's long edges, unfolded to ±y), from the CubeSat specification's figures.
BOX = np.array([0.1, 0.2263, 0.366])
PANEL_Y, PANEL_Z = 0.2263, 0.366


def project(point: np.ndarray, width: int = W, height: int = H) -> tuple[float, float]:
    """(column, row) of a world point in drawn units, for the FRONT camera."""
    f = (height / 2) / np.tan(np.radians(22.5))
    depth = DISTANCE + point[1]
    return width / 2 + f * point[0] / depth, height / 2 - f * point[2] / depth


def rot_z(angle: float) -> np.ndarray:
    return np.array([np.cos(angle / 2), 0.0, 0.0, np.sin(angle / 2)])


def navy_mask(f: np.ndarray) -> np.ndarray:  # the panels' cells (0.10, 0.15, 0.55)
    r, g, b = (f[..., i].astype(float) for i in range(3))
    return (b >= 40) & (r <= 0.3 * b) & (g >= 0.15 * b) & (g <= 0.4 * b)


def plume_mask(f: np.ndarray) -> np.ndarray:  # pale cyan (0.55, 1, 1)
    r, g, b = (f[..., i].astype(float) for i in range(3))
    return (g >= 60) & (np.abs(g - b) <= 0.08 * g) & (r >= 0.4 * g) & (r <= 0.7 * g)


def yellow_mask(f: np.ndarray) -> np.ndarray:  # the Sun (1, 0.85, 0)
    r, g, b = (f[..., i].astype(float) for i in range(3))
    return (r >= 60) & (g >= 0.75 * r) & (g <= 0.95 * r) & (b <= 0.15 * r)


def scenario(env_id: str, **overrides):
    env = gym.make(env_id, **overrides)
    s = env.unwrapped.scenario
    env.close()
    return s


def test_a_6u_with_surfaces_renders_at_640_by_480_by_default():
    env = gym.make("RigidRot/NadirPoint-v0", surfaces=True, render_mode="rgb_array")
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (480, 640, 3) and frame.dtype == np.uint8
    assert navy_mask(frame).sum() > 100  # the panels' cells are in the picture
    env.close()


def test_the_panels_appear_where_the_camera_puts_them_and_not_without_surfaces():
    # Body x turned onto world −y (towards the camera): the panels face it, side by side at
    # world x = ±PANEL_Y, their cells (+x) lit.
    q = rot_z(-np.pi / 2)
    # Drawn units: the farthest corner (a panel's outer corner) is at 1.
    outer = np.array([BOX[0] / 2, PANEL_Y * 1.5, PANEL_Z / 2])
    scale = 1.0 / np.linalg.norm(outer)
    with_panels = spacecraft_of(scenario("RigidRot/NadirPoint-v0", surfaces=True))
    assert with_panels.scale == pytest.approx(scale, rel=0.02)  # the panels' thickness aside
    with BodyRenderer(np.eye(3), spacecraft=with_panels, **FRONT) as r:
        frame = r.render(q)
    navy = navy_mask(frame)
    outline = np.zeros(navy.shape, dtype=bool)
    for side in (1.0, -1.0):
        # The panel's corners in the world: x from PANEL_Y/2 to 3 PANEL_Y/2 on its side,
        # z within ±PANEL_Z/2, at y = −BOX[0]/2 (the +x face's plane).
        corners = [
            scale * np.array([side * x, -BOX[0] / 2, z])
            for x in (PANEL_Y / 2, 1.5 * PANEL_Y)
            for z in (-PANEL_Z / 2, PANEL_Z / 2)
        ]
        cols, rows = zip(*(project(c) for c in corners), strict=True)
        top, bottom, left, right = round(min(rows)), round(max(rows)), round(min(cols)), round(max(cols))
        # 3 pixels inside the projected outline: the cells (the body's y axis is behind them)
        assert navy[top + 3 : bottom - 3, left + 3 : right - 3].mean() > 0.95
        outline[top - 3 : bottom + 3, left - 3 : right + 3] = True
    assert navy[~outline].sum() == 0  # no cells outside the two outlines
    assert spacecraft_of(scenario("RigidRot/NadirPoint-v0")) is None  # surfaces off: the ellipsoid
    stowed = spacecraft_of(scenario("RigidRot/NadirPoint-v0", surfaces=True, surface_facets="6U-stowed"))
    with BodyRenderer(np.eye(3), spacecraft=stowed, **FRONT) as r:
        assert navy_mask(r.render(q)).sum() == 0
    with BodyRenderer(np.diag([1.0, 2.0, 2.5]), **FRONT) as r:
        assert navy_mask(r.render(q)).sum() == 0


def test_a_users_facet_is_a_square_of_its_area_in_its_plane():
    facets = [{"area": 0.04, "normal": [0.0, -1.0, 0.0], "centre": [0.2, 0.0, 0.0]}]
    sc = spacecraft_of(scenario("RigidRot/NadirPoint-v0", surfaces=True, surface_facets=facets))
    (plate,) = sc.plates
    assert plate.half_extents[1:] == pytest.approx([0.1, 0.1])  # a 0.2 m square: 0.04 m²
    # A 0.2 m square facing −y (the camera), centred at x = 0.2 m: drawn from x = 0.1 to 0.3.
    scale = 1.0 / np.linalg.norm([0.3, 0.002, 0.1])
    assert sc.scale == pytest.approx(scale, rel=1e-3)
    with BodyRenderer(np.eye(3), spacecraft=sc, **FRONT) as r:
        frame = r.render(np.array([1.0, 0.0, 0.0, 0.0]))
    left, top = project(scale * np.array([0.1, 0.0, 0.1]))
    right, bottom = project(scale * np.array([0.3, 0.0, -0.1]))
    ys, xs = np.nonzero(navy_mask(frame))
    assert xs.min() == pytest.approx(left, abs=3) and xs.max() == pytest.approx(right, abs=3)
    assert ys.min() == pytest.approx(top, abs=3) and ys.max() == pytest.approx(bottom, abs=3)


def test_a_plume_shows_only_when_its_thruster_fired():
    env = gym.make(
        "RigidRot/ThrusterSlew-v0", render_mode="rgb_array", render_options={"width": 320, "height": 240}
    )
    env.reset(seed=0)
    _, _, _, _, info = env.step(np.zeros(3, dtype=np.float32))
    assert not np.any(info["thruster_on_times"])
    assert plume_mask(env.render()).sum() == 0
    _, _, _, _, info = env.step(np.ones(3, dtype=np.float32))
    assert np.any(info["thruster_on_times"] > 0)
    assert plume_mask(env.render()).sum() > 100
    env.close()
    # One thruster at a time, the body unturned: thruster k's plume leaves its position
    # along −d_k, so the plume's pixels lie on that side of its projected position.
    sc = spacecraft_of(scenario("RigidRot/ThrusterSlew-v0"))
    with BodyRenderer(np.eye(3), spacecraft=sc, **FRONT) as r:
        for k in range(len(sc.thruster_positions)):
            d = sc.thruster_directions[k]
            if d[0] == 0.0:
                continue  # along ±y: the plume points at or away from the camera
            firing = np.zeros(len(sc.thruster_positions), dtype=bool)
            firing[k] = True
            xs = np.nonzero(plume_mask(r.render(np.array([1.0, 0.0, 0.0, 0.0]), firing=firing)))[1]
            col, _ = project(sc.scale * sc.thruster_positions[k])
            assert xs.size > 50 and np.sign(xs.mean() - col) == -np.sign(d[0])


def sun_direction(epoch: str, t: float) -> np.ndarray:
    """The Astronomical Almanac's low-precision Sun (≈0.01°), equatorial frame: the
    direction from the Earth, within 3e-4 rad of that from a body in low orbit."""
    start = datetime.datetime.fromisoformat(epoch.replace("Z", "+00:00"))
    j2000 = datetime.datetime(2000, 1, 1, 12, tzinfo=datetime.UTC)
    n = (start - j2000).total_seconds() / 86400.0 + t / 86400.0
    g = np.radians(357.528 + 0.9856003 * n)
    ecliptic = (
        np.radians(280.460 + 0.9856474 * n)
        + np.radians(1.915) * np.sin(g)
        + np.radians(0.020) * np.sin(2 * g)
    )
    tilt = np.radians(23.439 - 4e-7 * n)
    return np.array([np.cos(ecliptic), np.cos(tilt) * np.sin(ecliptic), np.sin(tilt) * np.sin(ecliptic)])


def test_the_sun_arrow_points_where_the_sun_is():
    env = gym.make("RigidRot/NadirPoint-v0", surfaces=True, render_mode="rgb_array", render_options=FRONT)
    env.reset(seed=0)
    frame = env.render()
    s = env.unwrapped.scenario
    sun = sun_direction(s.flight.epoch, 0.0)
    # The arrow's head: from 1.35 to 1.5 along the direction.
    col, row = project(1.45 * sun)
    ys, xs = np.nonzero(yellow_mask(frame))
    assert xs.size > 50
    near = (np.abs(xs - col) < 12) & (np.abs(ys - row) < 12)
    assert near.sum() > 20  # the head is drawn where the Sun is
    # and the arrow leaves the centre on the Sun's side
    assert np.sign(xs.mean() - W / 2) == np.sign(sun[0])
    assert np.sign(H / 2 - ys.mean()) == np.sign(sun[2])
    env.close()


def test_the_vector_envs_grid_holds_each_envs_picture():
    size = {"width": 160, "height": 120}
    vec = gym.make_vec("RigidRot/ThrusterSlew-v0", 3, render_mode="rgb_array", render_options=size)
    vec.reset(seed=5)
    action = np.array([[1.0, -1.0, 0.5], [0.0, 0.0, 0.0], [-1.0, 1.0, 1.0]], dtype=np.float32)
    vec.step(action)
    frames = vec.render()
    grid = tile(frames, 2)
    assert grid.shape == (240, 320, 3)
    for i in range(3):
        env = gym.make("RigidRot/ThrusterSlew-v0", render_mode="rgb_array", render_options=size)
        env.reset(seed=5 + i)
        env.step(action[i])
        r, c = divmod(i, 2)
        np.testing.assert_array_equal(grid[r * 120 : (r + 1) * 120, c * 160 : (c + 1) * 160], env.render())
        env.close()
    assert plume_mask(grid[:120, :160]).sum() > 0 and plume_mask(grid[:120, 160:]).sum() == 0
    vec.close()


def test_bad_picture_arguments_are_named():
    sc = spacecraft_of(scenario("RigidRot/ThrusterSlew-v0"))
    with BodyRenderer(np.eye(3), 32, 24, spacecraft=sc) as r:
        q = np.array([1.0, 0.0, 0.0, 0.0])
        with pytest.raises(ValueError, match="firing must be 8 bools"):
            r.render(q, firing=[True, False])
        with pytest.raises(ValueError, match="sun must be a non-zero direction"):
            r.render(q, sun=[0.0, 0.0, 0.0])
        with pytest.raises(ValueError, match=r"nadir must have shape \(3,\)"):
            r.render(q, nadir=[1.0, 0.0])
    with BodyRenderer(np.eye(3), 64, 48, spacecraft=sc) as r:
        # a copy has its own client and draws the same spacecraft
        firing = np.ones(8, dtype=bool)
        np.testing.assert_array_equal(copy.deepcopy(r).render(q, firing=firing), r.render(q, firing=firing))
        assert plume_mask(r.render(q, firing=firing)).sum() > 0
    with pytest.raises(ValueError, match="spacecraft must be a Spacecraft or None"):
        BodyRenderer(np.eye(3), spacecraft="6U")


def test_the_overlays_legend_names_what_is_drawn():
    options = {**FRONT, "overlay": True}
    for env_id, extra, drawn in (
        ("RigidRot/NadirPoint-v0", {"surfaces": True}, True),
        ("RigidRot/Reorient-v0", {}, False),
    ):
        env = gym.make(env_id, render_mode="rgb_array", render_options=options, **extra)
        env.reset(seed=0)
        frame = env.render()
        # The legend's box: its top-left corner at (4, 4), one 12-pixel line per entry
        # (5, or 8 with the spacecraft, the Sun and nadir) and three 4-pixel margins.
        rows = 5 + 3 * drawn
        box = frame[4 : 4 + 3 * 4 + rows * 12, 4 : 4 + 4 + 20]  # the swatches' column
        assert (yellow_mask(box).sum() > 0) == drawn  # the Sun's swatch
        assert (navy_mask(box).sum() > 0) == drawn  # the cells' swatch
        env.close()
