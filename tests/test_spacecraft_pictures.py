"""Pictures of the spacecraft a scenario declares (rigidrot_gym.render.spacecraft, read from the
scenario by rigidrot_gym.attitude.pictures): the 6U box
and its panels, the parts of a [[body.parts]] body, the thrusters' plumes as they fire, the
Sun and nadir arrows, in the single and the vector env's frames.

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
import sys

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("pybullet")

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

import rigidrot_gym  # noqa: F401
from rigidrot_gym.attitude.env import surroundings
from rigidrot_gym.attitude.pictures import spacecraft_of
from rigidrot_gym.attitude.scenario import SHAPES, builtin_files, load
from rigidrot_gym.physics.rotation import inertia
from rigidrot_gym.render import BodyRenderer, tile
from rigidrot_gym.render.spacecraft import (
    PANEL_COLOR,
    PLATE_THICKNESS,
    STRUCTURE_COLOR,
    Spacecraft,
    part_solid,
)

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


def grey_mask(f: np.ndarray) -> np.ndarray:  # the structure (0.72, 0.74, 0.80), and the ellipsoid
    r, g, b = (f[..., i].astype(float) for i in range(3))
    return (b >= 40) & (b <= 250) & (r >= 0.85 * b) & (r <= 0.95 * b) & (g >= 0.88 * b) & (g <= 0.97 * b)


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
    # Surfaces off: its part, the box, without cells; no surfaces, parts nor thrusters: the ellipsoid.
    with BodyRenderer(np.eye(3), spacecraft=spacecraft_of(scenario("RigidRot/NadirPoint-v0")), **FRONT) as r:
        assert navy_mask(r.render(q)).sum() == 0
    assert spacecraft_of(scenario("RigidRot/Reorient-v0")) is None
    stowed = spacecraft_of(scenario("RigidRot/NadirPoint-v0", surfaces=True, surface_facets="6U-stowed"))
    with BodyRenderer(np.eye(3), spacecraft=stowed, **FRONT) as r:
        assert navy_mask(r.render(q)).sum() == 0
    with BodyRenderer(np.diag([1.0, 2.0, 2.5]), **FRONT) as r:
        assert navy_mask(r.render(q)).sum() == 0


def test_a_users_facet_is_a_square_of_its_area_in_its_plane():
    facets = [{"area": 0.04, "normal": [0.0, -1.0, 0.0], "centre": [0.2, 0.0, 0.0]}]
    sc = spacecraft_of(scenario("RigidRot/NadirPoint-v0", surfaces=True, surface_facets=facets))
    (plate,) = sc.solids
    # a 0.2 m square (0.04 m²) from x = 0.1 to 0.3 in the plane y = 0, facing −y
    assert np.ptp(plate.vertices, axis=0) == pytest.approx([0.2, 0.004, 0.2])
    assert plate.vertices.mean(axis=0) == pytest.approx([0.2, 0.0, 0.0])
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


# --------------------------------------------------------------------------- [[body.parts]]


def matrix(q) -> np.ndarray:
    """The rotation matrix of the unit quaternion [w, x, y, z] (the textbook formula)."""
    w, x, y, z = np.asarray(q, dtype=float) / np.linalg.norm(q)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
            [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
            [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
        ]
    )


def slew_parts() -> tuple[list[dict], np.ndarray]:
    """envs/slew.toml's parts as its file writes them, and the centre of mass that
    inertia.compose gives them."""
    (path,) = [f for f in builtin_files() if f.name == "slew.toml"]
    parts = tomllib.loads(path.read_text())["body"]["parts"]
    placed = []
    for p in parts:
        dimensions = {k: v for k, v in p.items() if k not in ("shape", "mass", "position", "orientation")}
        tensor = getattr(inertia, p["shape"])(p["mass"], **dimensions)
        placed.append(inertia.Part(p["mass"], tensor, p["position"], p.get("orientation", [1, 0, 0, 0])))
    return parts, inertia.compose(placed).center_of_mass


def own_vertices(p: dict) -> np.ndarray:
    """The vertices of a part of slew.toml in its own axes: a box's and a thin plate's
    corners (the plate PLATE_THICKNESS of its shorter side thick), a cylinder's 16-gons at
    angles 2πk/16 from x on its end circles."""
    if p["shape"] == "solid_box":
        half = np.array(p["size"]) / 2
    elif p["shape"] == "thin_plate":
        half = np.array([*p["size"], PLATE_THICKNESS * min(p["size"])]) / 2
    else:
        assert p["shape"] == "solid_cylinder"
        angle = 2 * np.pi * np.arange(16) / 16
        ring = p["radius"] * np.column_stack([np.cos(angle), np.sin(angle)])
        return np.array([[*xy, z] for z in (-p["height"] / 2, p["height"] / 2) for xy in ring])
    return np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * half


def expected_slew_vertices() -> list[np.ndarray]:
    """Each part's vertices in the body frame about the composed centre of mass."""
    parts, com = slew_parts()
    return [
        np.asarray(p["position"]) - com + own_vertices(p) @ matrix(p.get("orientation", [1, 0, 0, 0])).T
        for p in parts
    ]


def test_the_solids_of_a_body_of_parts_lie_where_its_parts_put_them():
    sc = spacecraft_of(scenario("RigidRot/Slew-v0"))
    expected = expected_slew_vertices()
    assert len(sc.solids) == 4 and len(sc.thruster_positions) == 0
    for solid, want in zip(sc.solids, expected, strict=True):
        assert solid.vertices.shape == want.shape
        gap = np.linalg.norm(solid.vertices[:, None, :] - want[None, :, :], axis=-1)
        # every drawn vertex is one of the part's, and every one of the part's is drawn
        assert gap.min(axis=1).max() < 1e-12 and gap.min(axis=0).max() < 1e-12
    # the bus and the antenna in the structure's colour, the thin plates (panels) in the cells'
    assert [s.color for s in sc.solids] == [STRUCTURE_COLOR, PANEL_COLOR, PANEL_COLOR, STRUCTURE_COLOR]
    # the farthest vertex, a panel's outer corner, is drawn at 1
    assert sc.scale == pytest.approx(1 / np.linalg.norm(np.concatenate(expected), axis=1).max(), rel=1e-12)


EXAMPLES = {  # a part of each shape, and where its vertices must lie in its own axes
    "solid_box": ({"size": [0.2, 0.3, 0.4]}, lambda v: np.abs(v) == pytest.approx([0.1, 0.15, 0.2])),
    "solid_cylinder": (
        {"radius": 0.2, "height": 0.1},
        lambda v: [np.hypot(v[0], v[1]), abs(v[2])] == pytest.approx([0.2, 0.05]),
    ),
    "hollow_cylinder": (  # drawn as its outer cylinder
        {"inner_radius": 0.1, "outer_radius": 0.15, "height": 0.3},
        lambda v: [np.hypot(v[0], v[1]), abs(v[2])] == pytest.approx([0.15, 0.15]),
    ),
    "solid_sphere": ({"radius": 0.25}, lambda v: np.linalg.norm(v) == pytest.approx(0.25)),
    "ellipsoid": (
        {"semi_axes": [0.1, 0.2, 0.3]},
        lambda v: np.sum((v / [0.1, 0.2, 0.3]) ** 2) == pytest.approx(1.0),
    ),
    "thin_rod": (  # PLATE_THICKNESS of its length across
        {"length": 0.8},
        lambda v: [np.hypot(v[0], v[1]), abs(v[2])] == pytest.approx([0.008, 0.4]),
    ),
    "thin_plate": ({"size": [0.8, 0.4]}, lambda v: np.abs(v) == pytest.approx([0.4, 0.2, 0.004])),
}


@pytest.mark.parametrize("shape", SHAPES)
def test_each_shape_is_a_convex_solid_on_its_own_geometry_with_outward_faces(shape):
    dimensions, on_it = EXAMPLES[shape]
    position, com = np.array([0.3, -0.2, 0.1]), np.array([0.05, 0.0, -0.02])
    q = np.array([0.9, 0.3, -0.2, 0.25]) / np.linalg.norm([0.9, 0.3, -0.2, 0.25])
    solid = part_solid(shape, dimensions, position, q, com)
    own = (solid.vertices - (position - com)) @ matrix(q)  # back in the part's axes
    assert len(own) >= 8 and all(on_it(v) for v in own)
    # Every face flat and every vertex on or behind each face: convex, faces wound outwards.
    points, normals, indices = solid.mesh()
    assert len(indices) % 3 == 0 and np.allclose(np.linalg.norm(normals, axis=1), 1.0)
    for n, p in zip(normals[indices[::3]], points[indices[::3]], strict=True):
        assert np.max((solid.vertices - p) @ n) < 1e-12
    for a, b, c in indices.reshape(-1, 3):
        area = np.cross(points[b] - points[a], points[c] - points[a])
        assert area @ normals[a] > 0 and np.allclose(normals[a], normals[b])
    # the faces close the solid: every edge is shared by two faces, walked once each way
    edges = [(f[k], f[(k + 1) % len(f)]) for f in solid.faces for k in range(len(f))]
    assert sorted(edges) == sorted((b, a) for a, b in edges) and len(set(edges)) == len(edges)
    with pytest.raises(ValueError, match="shape must be one of"):
        part_solid("torus", {}, position, q, com)


def test_a_body_of_parts_is_drawn_where_its_parts_project():
    # Slew-v0 unturned, seen from −y: its panels (thin plates, x-z plane after their turn)
    # face the camera, navy inside their projected outlines and nowhere else.
    sc = spacecraft_of(scenario("RigidRot/Slew-v0"))
    expected = expected_slew_vertices()
    with BodyRenderer(np.eye(3), spacecraft=sc, **FRONT) as r:
        frame = r.render(np.array([1.0, 0.0, 0.0, 0.0]))
    navy = navy_mask(frame)
    outline = np.zeros(navy.shape, dtype=bool)
    for panel in expected[1:3]:
        cols, rows = zip(*(project(sc.scale * v) for v in panel), strict=True)
        top, bottom, left, right = round(min(rows)), round(max(rows)), round(min(cols)), round(max(cols))
        # the body's x axis (red) crosses each panel in front of it: most, not all, is navy
        assert navy[top + 3 : bottom - 3, left + 3 : right - 3].mean() > 0.75
        outline[top - 3 : bottom + 3, left - 3 : right + 3] = True
    assert navy[~outline].sum() == 0
    assert grey_mask(frame).sum() > 1000  # the bus and the antenna


def hull_mask(points: np.ndarray, shape: tuple[int, int], margin: float) -> np.ndarray:
    """Pixels whose centres lie inside the convex hull of the 2-D ``points`` (column,
    row), pushed out by ``margin`` pixels (in by −margin)."""
    from scipy.spatial import ConvexHull

    equations = ConvexHull(points).equations  # n·x + d ≤ 0 inside, n unit
    rows, cols = np.mgrid[0 : shape[0], 0 : shape[1]]
    pixels = np.stack([cols + 0.5, rows + 0.5], axis=-1)
    return np.all(pixels @ equations[:, :2].T + equations[:, 2] <= margin, axis=-1)


def box_outline(sc: Spacecraft, q: np.ndarray, width: int, height: int) -> np.ndarray:
    """(8, 2) where NadirPoint-v0's box (0.1 × 0.226 × 0.34 m, its one part, centred on
    its centre of mass) projects at attitude q, in pixels."""
    corners = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)]) * [0.05, 0.113, 0.17]
    assert sc.scale == pytest.approx(1 / np.linalg.norm([0.05, 0.113, 0.17]), rel=1e-12)
    world = sc.scale * corners @ matrix(q).T
    return np.array([project(c, width, height) for c in world])


def assert_box_drawn(frame: np.ndarray, sc: Spacecraft, q: np.ndarray) -> None:
    """The structure's grey fills the box's projected outline (the arrows and axes from
    the centre cross some of it) and shows nowhere outside it."""
    height, width = frame.shape[:2]
    outline = box_outline(sc, q, width, height)
    grey = grey_mask(frame)
    inside = hull_mask(outline, grey.shape, -3.0)
    assert inside.sum() > 200 and grey[inside].mean() > 0.6
    assert grey[~hull_mask(outline, grey.shape, 3.0)].sum() == 0


def test_nadir_points_frames_show_its_box_not_the_ellipsoid_in_the_single_and_vector_env():
    env = gym.make("RigidRot/NadirPoint-v0", render_mode="rgb_array", render_options=FRONT)
    env.reset(seed=0)
    frame = env.render()
    assert frame.shape == (480, 640, 3)
    batch = env.unwrapped.batch
    q, w = batch.body_state()
    sc = env.unwrapped._renderer.spacecraft
    assert_box_drawn(frame, sc, q[0])
    # The ellipsoid it drew before, of the same body in the same state, in the same grey:
    # other pixels, and grey outside the box (the ellipsoid reaches farther along z).
    with BodyRenderer(batch.inertia()[0], **FRONT) as r:
        ellipsoid = r.render(q[0], w[0], batch.target[0], **surroundings(env.unwrapped, 0))
    assert np.any(ellipsoid != frame)
    outline = box_outline(sc, q[0], 640, 480)
    assert grey_mask(ellipsoid)[~hull_mask(outline, (480, 640), 3.0)].sum() > 100
    env.close()

    size = {**FRONT, "width": 320, "height": 240}
    vec = gym.make_vec("RigidRot/NadirPoint-v0", 2, render_mode="rgb_array", render_options=size)
    vec.reset(seed=3)
    frames = vec.render()
    q, _ = vec.unwrapped.batch.body_state()
    assert not np.allclose(q[0], q[1])
    for i, frame in enumerate(frames):
        assert frame.shape == (240, 320, 3)
        assert_box_drawn(frame, sc, q[i])
    vec.close()


def test_parts_with_thrusters_draw_the_parts_and_the_nozzles(tmp_path):
    (path,) = [f for f in builtin_files() if f.name == "thruster_slew.toml"]
    text = path.read_text()
    body = "[body]\nmoments = [0.08, 0.10, 0.05]"
    assert text.count(body) == 1
    parts = '[[body.parts]]\nshape = "solid_box"\nmass = 12.0\nsize = [0.1, 0.226, 0.34]\n'
    parts += "position = [0.0, 0.0, 0.02]"
    (tmp_path / "parts.toml").write_text(text.replace(body, parts))
    sc = spacecraft_of(load(tmp_path / "parts.toml"))
    (box,) = sc.solids  # the parts, not the thrusters' box (0.1 × 0.2263 × 0.366 m)
    assert np.ptp(box.vertices, axis=0) == pytest.approx([0.1, 0.226, 0.34])
    assert box.vertices.mean(axis=0) == pytest.approx([0.0, 0.0, 0.0])  # about its own centre of mass
    assert sc.thruster_positions.shape == (8, 3)
