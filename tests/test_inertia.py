"""Tests of rigidrot_gym.physics.rotation.inertia against references computed independently here.

Standard shapes are checked against midpoint quadrature of their uniform mass
distribution, composites against clouds of point masses rotated with scipy and shifted
with plain numpy, and re-referencing against direct point-mass sums.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from rigidrot_gym.physics.rotation import inertia as ri
from rigidrot_gym.physics.rotation import quaternion

# ----------------------------------------------------------------------------------
# Independent references
# ----------------------------------------------------------------------------------


def tensor_of_points(points: np.ndarray, masses: np.ndarray) -> np.ndarray:
    """Σ m (r·r 1 − r rᵀ) about the origin, for points (N, 3) and masses (N,)."""
    second = np.einsum("n,ni,nj->ij", masses, points, points)
    return np.trace(second) * np.eye(3) - second


def midpoints(lo: float, hi: float, n: int) -> np.ndarray:
    return lo + (hi - lo) * (np.arange(n) + 0.5) / n


def grid(*axes: np.ndarray) -> list[np.ndarray]:
    return [a.ravel() for a in np.meshgrid(*axes, indexing="ij")]


def cloud(points: np.ndarray, density: np.ndarray, mass: float) -> tuple[np.ndarray, np.ndarray]:
    """Points and their masses, the uniform density scaled so the masses sum to ``mass``."""
    return points, mass * density / density.sum()


def box_cloud(mass, size, n=60):
    x, y, z = grid(*(midpoints(-s / 2, s / 2, n) for s in size))
    return cloud(np.stack([x, y, z], axis=1), np.ones_like(x), mass)


def tube_cloud(mass, r_in, r_out, height, n_r=60, n_phi=64, n_z=60):
    # Cylindrical coordinates; the volume element is ρ dρ dφ dz.
    rho, phi, z = grid(
        midpoints(r_in, r_out, n_r), midpoints(0, 2 * np.pi, n_phi), midpoints(-height / 2, height / 2, n_z)
    )
    return cloud(np.stack([rho * np.cos(phi), rho * np.sin(phi), z], axis=1), rho, mass)


def shell_cloud(mass, radius, height, n_phi=64, n_z=200):
    phi, z = grid(midpoints(0, 2 * np.pi, n_phi), midpoints(-height / 2, height / 2, n_z))
    pts = np.stack([radius * np.cos(phi), radius * np.sin(phi), z], axis=1)
    return cloud(pts, np.ones_like(z), mass)


def ellipsoid_cloud(mass, semi_axes, n_r=60, n_theta=60, n_phi=32):
    # The unit ball in spherical coordinates (volume element r² sin θ), stretched along
    # the axes: a linear map keeps a uniform density uniform.
    r, theta, phi = grid(midpoints(0, 1, n_r), midpoints(0, np.pi, n_theta), midpoints(0, 2 * np.pi, n_phi))
    unit = np.stack([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi), np.cos(theta)], axis=1)
    return cloud(r[:, None] * unit * np.asarray(semi_axes), r**2 * np.sin(theta), mass)


def rod_cloud(mass, length, n=2000):
    z = midpoints(-length / 2, length / 2, n)
    return cloud(np.stack([np.zeros(n), np.zeros(n), z], axis=1), np.ones(n), mass)


def plate_cloud(mass, size, n=200):
    x, y = grid(midpoints(-size[0] / 2, size[0] / 2, n), midpoints(-size[1] / 2, size[1] / 2, n))
    return cloud(np.stack([x, y, np.zeros_like(x)], axis=1), np.ones_like(x), mass)


def rotation_matrix(q: np.ndarray) -> np.ndarray:
    """R of a scalar-first quaternion, via scipy (scalar last), not rigidrot_gym."""
    q = np.asarray(q)
    return Rotation.from_quat(q[..., [1, 2, 3, 0]]).as_matrix()


def rel_err(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def random_tensors(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    """Physical tensors I = tr(S) 1 − S of random second-moment matrices S = B Bᵀ: each is
    symmetric positive definite and satisfies the triangle inequality."""
    b = rng.standard_normal((*shape, 3, 3))
    s = b @ np.swapaxes(b, -1, -2) + 0.1 * np.eye(3)
    return np.trace(s, axis1=-2, axis2=-1)[..., None, None] * np.eye(3) - s


# ----------------------------------------------------------------------------------
# Standard shapes against quadrature
# ----------------------------------------------------------------------------------

# Midpoint quadrature of ∫ρ^k over n cells errs by O((1/n)²) relative; with n = 60 that is
# ≈ 3e-4 at most (observed ≤ 2.8e-4), so 1e-3 separates it from any wrong coefficient.
SHAPES = [
    ("box", lambda: ri.solid_box(2.5, (0.3, 0.7, 1.1)), lambda: box_cloud(2.5, (0.3, 0.7, 1.1)), 1e-3),
    ("cylinder", lambda: ri.solid_cylinder(3.0, 0.4, 1.5), lambda: tube_cloud(3.0, 0.0, 0.4, 1.5), 1e-3),
    ("tube", lambda: ri.hollow_cylinder(1.2, 0.25, 0.4, 0.3), lambda: tube_cloud(1.2, 0.25, 0.4, 0.3), 1e-3),
    ("shell", lambda: ri.hollow_cylinder(0.8, 0.5, 0.5, 2.0), lambda: shell_cloud(0.8, 0.5, 2.0), 1e-4),
    ("sphere", lambda: ri.solid_sphere(7.0, 0.6), lambda: ellipsoid_cloud(7.0, (0.6, 0.6, 0.6)), 1e-3),
    (
        "ellipsoid",
        lambda: ri.ellipsoid(4.0, (0.2, 0.5, 0.9)),
        lambda: ellipsoid_cloud(4.0, (0.2, 0.5, 0.9)),
        1e-3,
    ),
    ("rod", lambda: ri.thin_rod(0.9, 2.4), lambda: rod_cloud(0.9, 2.4), 1e-5),
    ("plate", lambda: ri.thin_plate(1.7, (0.8, 0.3)), lambda: plate_cloud(1.7, (0.8, 0.3)), 1e-4),
]


@pytest.mark.parametrize(("name", "closed_form", "reference", "rtol"), SHAPES, ids=[s[0] for s in SHAPES])
def test_shape_matches_quadrature(name, closed_form, reference, rtol):
    tensor = closed_form()
    points, masses = reference()
    assert tensor.shape == (3, 3)
    # The clouds are symmetric about the origin, so they are about the centre of mass.
    np.testing.assert_allclose(masses @ points, 0.0, atol=1e-12)
    assert rel_err(tensor, tensor_of_points(points, masses)) < rtol


def test_solid_cylinder_is_tube_without_hole():
    np.testing.assert_allclose(
        ri.hollow_cylinder(2.0, 0.0, 0.3, 1.0), ri.solid_cylinder(2.0, 0.3, 1.0), rtol=1e-15
    )


def test_thin_plate_is_at_triangle_equality_and_validates_when_rotated():
    plate = ri.thin_plate(1.0, (0.3, 0.9))
    assert plate[0, 0] + plate[1, 1] == pytest.approx(plate[2, 2], rel=1e-15)
    rot = rotation_matrix(quaternion.random(np.random.default_rng(3), (50,)))
    ri.validate_inertia(rot @ plate @ np.swapaxes(rot, -1, -2))


def test_thin_rod_is_singular_but_valid_as_part():
    rod = ri.thin_rod(1.0, 2.0)
    with pytest.raises(ValueError, match="positive definite"):
        ri.validate_inertia(rod)
    ri.validate_inertia(rod, allow_singular=True)
    ri.Part(1.0, rod, (0.0, 0.0, 1.0))


# ----------------------------------------------------------------------------------
# Composition
# ----------------------------------------------------------------------------------


def test_box_from_eight_octants():
    mass, size, centre = 6.0, np.array([0.4, 1.0, 1.8]), np.array([0.3, -2.0, 5.0])
    # Half-turns about x, y, z map a box onto itself: exercises A I Aᵀ without changing it.
    half_turns = [np.array([0.0, 1, 0, 0]), np.array([0.0, 0, 1, 0]), np.array([0.0, 0, 0, 1])]
    parts = []
    for k, signs in enumerate(np.array(np.meshgrid([-1, 1], [-1, 1], [-1, 1])).reshape(3, -1).T):
        parts.append(
            ri.Part(mass / 8, ri.solid_box(mass / 8, size / 2), centre + signs * size / 4, half_turns[k % 3])
        )
    props = ri.compose(parts)
    assert props.mass == pytest.approx(mass, rel=1e-15)
    np.testing.assert_allclose(props.center_of_mass, centre, rtol=1e-14)
    assert rel_err(props.inertia, ri.solid_box(mass, size)) < 1e-13


def test_compose_matches_rotated_point_clouds_exactly():
    # Each part is a random point cloud; its inertia is the cloud's own tensor about its
    # centre of mass, so the composite must match the transformed cloud to round-off.
    rng = np.random.default_rng(7)
    parts, body_points, body_masses = [], [], []
    for _ in range(3):
        pts = rng.standard_normal((50, 3)) * rng.uniform(0.1, 2.0, 3)
        m = rng.uniform(0.1, 1.0, 50)
        pts -= m @ pts / m.sum()
        q = quaternion.random(rng)
        p = rng.uniform(-3, 3, 3)
        parts.append(ri.Part(m.sum(), tensor_of_points(pts, m), p, q))
        body_points.append(pts @ rotation_matrix(q).T + p)
        body_masses.append(m)
    body_points, body_masses = np.concatenate(body_points), np.concatenate(body_masses)
    com = body_masses @ body_points / body_masses.sum()
    props = ri.compose(parts)
    assert props.mass == pytest.approx(body_masses.sum(), rel=1e-14)
    np.testing.assert_allclose(props.center_of_mass, com, rtol=1e-13, atol=1e-14)
    assert rel_err(props.inertia, tensor_of_points(body_points - com, body_masses)) < 1e-12
    np.testing.assert_array_equal(props.inertia, props.inertia.T)


def test_compose_of_shapes_matches_quadrature_cloud():
    rng = np.random.default_rng(11)
    shapes = [
        (ri.solid_box(2.0, (0.3, 0.6, 0.9)), box_cloud(2.0, (0.3, 0.6, 0.9), n=40)),
        (ri.solid_cylinder(1.5, 0.2, 0.8), tube_cloud(1.5, 0.0, 0.2, 0.8, n_r=40, n_z=40)),
        (ri.thin_rod(0.5, 1.2), rod_cloud(0.5, 1.2)),
        (np.zeros((3, 3)), (np.zeros((1, 3)), np.array([0.7]))),  # a point mass
    ]
    parts, points, masses = [], [], []
    for tensor, (pts, m) in shapes:
        q, p = quaternion.random(rng), rng.uniform(-1, 1, 3)
        parts.append(ri.Part(m.sum(), tensor, p, q))
        points.append(pts @ rotation_matrix(q).T + p)
        masses.append(m)
    points, masses = np.concatenate(points), np.concatenate(masses)
    com = masses @ points / masses.sum()
    props = ri.compose(parts)
    np.testing.assert_allclose(props.center_of_mass, com, rtol=1e-13)
    # n = 40 midpoint grids: relative error ≲ 1/40² of each part's own tensor.
    assert rel_err(props.inertia, tensor_of_points(points - com, masses)) < 1e-3


def test_part_and_mass_properties_are_immutable():
    part = ri.Part(1.0, ri.solid_sphere(1.0, 1.0), [0.0, 0.0, 0.0])
    np.testing.assert_array_equal(part.orientation, [1.0, 0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="read-only"):
        part.position[0] = 1.0
    props = ri.compose([part])
    with pytest.raises(ValueError, match="read-only"):
        props.inertia[0, 0] = 1.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"mass": 0.0}, "Part mass must be positive and finite, got 0.0"),
        ({"mass": np.nan}, "Part mass must be positive and finite, got nan"),
        ({"inertia": np.diag([1.0, 1.0, 3.0])}, "triangle inequality"),
        ({"inertia": np.eye(2)}, "shape"),
        ({"inertia": np.ones((2, 3, 3))}, r"shape \(3, 3\)"),
        ({"position": [0.0, 1.0]}, "Part position must have shape"),
        ({"position": [0.0, np.inf, 0.0]}, "Part position must be finite"),
        ({"orientation": [1.0, 1.0, 0.0, 0.0]}, "unit quaternion"),
        ({"orientation": [1.0, 0.0, 0.0]}, "unit quaternion"),
    ],
)
def test_part_rejects_bad_arguments(kwargs, match):
    args = {"mass": 1.0, "inertia": np.eye(3), "position": [0.0, 0.0, 0.0]} | kwargs
    with pytest.raises(ValueError, match=match):
        ri.Part(**args)


def test_compose_rejects_no_parts():
    with pytest.raises(ValueError, match="at least one part"):
        ri.compose([])


# ----------------------------------------------------------------------------------
# Re-referencing
# ----------------------------------------------------------------------------------


def test_parallel_axis_matches_point_mass_sum():
    rng = np.random.default_rng(5)
    pts, m = rng.standard_normal((40, 3)), rng.uniform(0.1, 1.0, 40)
    pts -= m @ pts / m.sum()
    d = np.array([0.7, -1.3, 2.1])
    about_point = ri.parallel_axis(tensor_of_points(pts, m), m.sum(), d)
    assert rel_err(about_point, tensor_of_points(pts - d, m)) < 1e-13


def test_parallel_axis_round_trip_batched():
    rng = np.random.default_rng(6)
    tensors, mass, offset = random_tensors(rng, (5,)), rng.uniform(0.5, 2.0, 5), rng.standard_normal((5, 3))
    about_point = ri.parallel_axis(tensors, mass, offset)
    assert about_point.shape == (5, 3, 3)
    assert rel_err(ri.to_center_of_mass(about_point, mass, offset), tensors) < 1e-13
    assert rel_err(about_point[2], ri.parallel_axis(tensors[2], mass[2], offset[2])) < 1e-15


def test_to_center_of_mass_rejects_inconsistent_offset():
    # Removing m d² for a d far larger than the body leaves a non-physical tensor.
    with pytest.raises(ValueError, match="inertia about the centre of mass must be positive semi-definite"):
        ri.to_center_of_mass(ri.solid_sphere(1.0, 0.1), 1.0, [1.0, 0.0, 0.0])


@pytest.mark.parametrize(
    ("args", "match"),
    [
        ((np.eye(3), 0.0, [1.0, 0.0, 0.0]), "mass must be positive and finite, got 0.0"),
        ((np.eye(3), -1.0, [1.0, 0.0, 0.0]), "mass must be positive and finite, got -1.0"),
        ((np.eye(3), 1.0, [1.0, np.nan, 0.0]), "must be finite"),
        ((np.eye(3), 1.0, [1.0, 0.0]), "must have shape"),
        ((np.diag([1.0, 1.0, 3.0]), 1.0, [1.0, 0.0, 0.0]), "triangle inequality"),
    ],
)
@pytest.mark.parametrize("func", [ri.parallel_axis, ri.to_center_of_mass])
def test_re_referencing_validates(func, args, match):
    with pytest.raises(ValueError, match=match):
        func(*args)


# ----------------------------------------------------------------------------------
# Principal axes
# ----------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(), (5,), (2, 4)])
def test_principal_axes_batched(shape):
    tensors = random_tensors(np.random.default_rng(12), shape)
    moments, q = ri.principal_axes(tensors)
    assert moments.shape == (*shape, 3)
    assert q.shape == (*shape, 4)
    r = quaternion.to_matrix(q)
    np.testing.assert_allclose(np.swapaxes(r, -1, -2) @ r, np.broadcast_to(np.eye(3), r.shape), atol=1e-14)
    np.testing.assert_allclose(np.linalg.det(r), 1.0, rtol=1e-14)
    assert np.all(np.diff(moments, axis=-1) >= 0.0)
    rebuilt = r @ (moments[..., :, None] * np.swapaxes(r, -1, -2))
    scale = np.max(np.abs(tensors), axis=(-2, -1), keepdims=True)
    assert np.max(np.abs(rebuilt - tensors) / scale) < 1e-12


def test_principal_axes_handles_left_handed_eigh_output():
    tensors = random_tensors(np.random.default_rng(13), (40,))
    # The random batch must contain bases that eigh returns left-handed.
    assert np.any(np.linalg.det(np.linalg.eigh(tensors)[1]) < 0)
    moments, q = ri.principal_axes(tensors)
    r = quaternion.to_matrix(q)
    np.testing.assert_allclose(np.linalg.det(r), 1.0, rtol=1e-14)
    assert rel_err(r @ (moments[..., :, None] * np.swapaxes(r, -1, -2)), tensors) < 1e-12


def test_principal_axes_recovers_known_rotation_and_degenerate_moments():
    rot = rotation_matrix(quaternion.random(np.random.default_rng(14)))
    for diag in ([1.0, 2.0, 2.5], [2.0, 2.0, 3.0], [1.5, 1.5, 1.5]):
        tensor = rot @ np.diag(diag) @ rot.T
        moments, q = ri.principal_axes(tensor)
        np.testing.assert_allclose(moments, diag, rtol=1e-13)
        r = quaternion.to_matrix(q)
        assert rel_err(r @ np.diag(moments) @ r.T, tensor) < 1e-13
    # Distinct moments: each principal axis is ± the rotated coordinate axis.
    moments, q = ri.principal_axes(rot @ np.diag([1.0, 2.0, 2.5]) @ rot.T)
    np.testing.assert_allclose(np.abs(np.sum(quaternion.to_matrix(q) * rot, axis=0)), 1.0, rtol=1e-12)


def test_principal_frame_keeps_a_diagonal_tensors_frame_and_order():
    tensor = np.diag([0.08, 0.1, 0.05])  # principal already, moments not ascending
    moments, rotation, rebuilt = ri.principal_frame(tensor)
    assert rotation is None  # no frame change for the kernels to apply
    assert moments.tolist() == [0.08, 0.1, 0.05]
    assert np.array_equal(rebuilt, tensor)
    # a batch is principal only if every tensor is diagonal
    turned = ri.principal_frame(np.stack([tensor, [[0.08, 0.01, 0.0], [0.01, 0.1, 0.0], [0.0, 0.0, 0.05]]]))
    assert turned[1] is not None
    with pytest.raises(ValueError, match="triangle inequality"):
        ri.principal_frame(np.diag([1.0, 1.0, 3.0]))


def test_principal_axes_validates():
    with pytest.raises(ValueError, match="triangle inequality"):
        ri.principal_axes(np.diag([1.0, 1.0, 3.0]))


# ----------------------------------------------------------------------------------
# Validation
# ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tensor", "match"),
    [
        ([[1.0, 0.1, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]], "must be symmetric"),
        (np.diag([-1.0, 2.0, 2.0]), r"positive definite, got principal moments \[-1.0, 2.0, 2.0\]"),
        (np.diag([1.0, 1.0, 0.0]), "positive definite"),
        (np.diag([1.0, 1.0, 3.0]), r"triangle inequality.*\[1.0, 1.0, 3.0\]"),
        (np.diag([1.0, 1.0, np.nan]), "must be finite"),
        (np.diag([1.0, np.inf, 1.0]), "must be finite"),
        (np.eye(3)[:2], r"shape \(\.\.\., 3, 3\), got shape \(2, 3\)"),
        (np.ones(3), "shape"),
        (np.stack([np.eye(3), np.diag([1.0, 1.0, 3.0])]), r"triangle inequality.*\[1.0, 1.0, 3.0\]"),
    ],
)
def test_validate_inertia_rejects(tensor, match):
    with pytest.raises(ValueError, match=match):
        ri.validate_inertia(tensor)


def test_validate_inertia_names_argument_and_returns_float64():
    with pytest.raises(ValueError, match=r"^J must be symmetric"):
        ri.validate_inertia([[1, 2, 0], [0, 1, 0], [0, 0, 1]], name="J")
    out = ri.validate_inertia(np.eye(3, dtype=np.int64))
    assert out.dtype == np.float64


def test_validate_inertia_tolerances():
    # Asymmetry just inside and just outside 1e-9 relative.
    ri.validate_inertia(np.eye(3) + np.triu(np.full((3, 3), 0.5e-9), 1))
    with pytest.raises(ValueError, match="symmetric"):
        ri.validate_inertia(np.eye(3) + np.triu(np.full((3, 3), 2e-9), 1))
    ri.validate_inertia(np.diag([1.0, 1.0, 2.0 * (1 + 0.5e-9)]))
    with pytest.raises(ValueError, match="triangle"):
        ri.validate_inertia(np.diag([1.0, 1.0, 2.0 * (1 + 2e-9)]))


@pytest.mark.parametrize(
    ("moments", "match"),
    [
        ([1.0, 3.0, 1.0], "triangle inequality"),
        ([0.0, 1.0, 1.0], "positive definite"),
        ([1.0, np.nan, 1.0], "finite"),
        ([1.0, 1.0], "shape"),
        ([[1.0, 1.0, 1.0], [3.0, 1.0, 1.0]], r"triangle inequality.*\[3.0, 1.0, 1.0\]"),
    ],
)
def test_validate_moments_rejects(moments, match):
    with pytest.raises(ValueError, match=match):
        ri.validate_moments(moments)


def test_validate_moments_accepts_equality_in_any_order():
    np.testing.assert_array_equal(ri.validate_moments([3.0, 1.0, 2.0]), [3.0, 1.0, 2.0])


@pytest.mark.parametrize("mass", [0.0, -2.0, np.nan, np.inf])
def test_validate_mass_rejects(mass):
    with pytest.raises(ValueError, match="mass must be positive and finite"):
        ri.validate_mass(mass)


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: ri.solid_box(0.0, (1, 1, 1)), "mass must be positive and finite, got 0.0"),
        (lambda: ri.solid_box(1.0, (1, -1, 1)), r"size must be positive and finite, got \[1.0, -1.0, 1.0\]"),
        (lambda: ri.solid_box(1.0, (1, 1)), r"size must have shape \(3,\)"),
        (lambda: ri.solid_cylinder(1.0, 0.0, 1.0), "radius must be positive and finite, got 0.0"),
        (lambda: ri.solid_cylinder(1.0, 1.0, np.nan), "height must be positive and finite, got nan"),
        (lambda: ri.hollow_cylinder(1.0, 0.6, 0.5, 1.0), "inner_radius must be a scalar in"),
        (lambda: ri.hollow_cylinder(1.0, -0.1, 0.5, 1.0), "inner_radius must be a scalar in"),
        (lambda: ri.hollow_cylinder(1.0, np.nan, 0.5, 1.0), "inner_radius"),
        (lambda: ri.hollow_cylinder(1.0, 0.1, 0.0, 1.0), "outer_radius must be positive"),
        (lambda: ri.solid_sphere(-1.0, 1.0), "mass must be positive and finite, got -1.0"),
        (lambda: ri.solid_sphere(1.0, np.inf), "radius must be positive and finite, got inf"),
        (lambda: ri.ellipsoid(1.0, (1, 0, 1)), "semi_axes must be positive"),
        (lambda: ri.thin_rod(1.0, -1.0), "length must be positive and finite, got -1.0"),
        (lambda: ri.thin_rod([1.0, 2.0], 1.0), "mass must be a scalar"),
        (lambda: ri.thin_plate(1.0, (1, 1, 1)), r"size must have shape \(2,\)"),
    ],
)
def test_shapes_reject_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()
