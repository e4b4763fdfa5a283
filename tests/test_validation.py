"""Bad input to the physics layer raises a ValueError that names the argument, shows its
value and says what is expected (issue 12, items 6 and 15): integer options and counts
against their real range, strings, complex numbers, objects, ragged and mismatched
shapes, non-finite values, truthy non-booleans, bad torque terms and torque callables."""

from __future__ import annotations

import re

import numpy as np
import pytest
from reference import angle, solve

from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.rotation import inertia as ri
from rigidrot_gym.physics.rotation import integrators
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.extrapolation import TorqueExtrapolator
from rigidrot_gym.physics.rotation.heavy_top import HeavyTop
from rigidrot_gym.physics.rotation.linear import propagate_linear
from rigidrot_gym.physics.rotation.propagate import propagate
from rigidrot_gym.physics.rotation.rigid_body import propagate_rigid_body
from rigidrot_gym.physics.rotation.torques import (
    BodyTorque,
    GravityGradient,
    PointForce,
    WheelMomentum,
    WorldTorque,
)

I_ASYM = np.array([1.0, 2.0, 3.0])
Q0 = quat.normalize(np.array([0.9, 0.2, -0.3, 0.25]))
W0 = np.array([0.4, 1.1, -0.3])
TAU = np.array([0.3, -0.2, 0.5])

# Values that are not integers in range, whatever their type; each must be refused. "beyond"
# stands for the option's own upper bound + 1.
NOT_IN_RANGE = [1e19, 2**63, 10**30, "beyond", -1, 0, 2.5, float("nan"), float("inf"), True, "3", None]


def _run(**kwargs):
    args = {"q0": Q0, "omega0": W0, "inertia": I_ASYM, "dt": 0.01, "steps": 3} | kwargs
    return propagate(**args)


# ---------------------------------------------------------------- integer options (item 6)


@pytest.mark.parametrize("value", NOT_IN_RANGE, ids=repr)
@pytest.mark.parametrize(
    ("method", "option", "range_", "top"),
    [("nielsen_krenk", "max_iter", "[1, 1000000]", 10**6), ("rkn", "project_every", "[1, 2**53]", 2**53)],
)
def test_integer_options_are_checked_against_their_range(method, option, range_, top, value):
    value = top + 1 if value == "beyond" else value
    expected = rf"method '{method}' option {option} must be an integer in {re.escape(range_)}, got "
    with pytest.raises(ValueError, match=expected + re.escape(repr(value))):
        _run(method=method, torque=TAU, **{option: value})
    # The env's integrator_options take the same path.
    with pytest.raises(ValueError, match=expected):
        integrators.get(method).pack_options({option: value})


def test_max_iter_at_its_limit_applies_the_torque():
    """The reported bug: max_iter = 1e19 wrapped to a negative int64, the solver loop never
    ran and the torque was silently dropped. At the largest accepted limit the torque acts:
    the result follows DOP853 with the torque, not without it."""
    steps, dt = 100, 0.01
    traj = _run(method="nielsen_krenk", torque=TAU, dt=dt, steps=steps, max_iter=10**6)
    q_ref, w_ref = solve(Q0, W0, I_ASYM, [steps * dt], torque=lambda t, q, w: TAU)
    q_free, _ = solve(Q0, W0, I_ASYM, [steps * dt])
    assert angle(traj.q[-1], q_ref[-1]) < 1e-4
    assert np.max(np.abs(traj.omega[-1] - w_ref[-1])) < 1e-4
    assert angle(traj.q[-1], q_free[-1]) > 1e-2


def test_env_integrator_options_take_the_same_check():
    import gymnasium as gym

    import rigidrot_gym  # noqa: F401  (registers the ids)

    with pytest.raises(ValueError, match=r"option max_iter must be an integer in \[1, 1000000\], got 1e\+19"):
        gym.make("RigidRot/Detumble-v0", integrator="nielsen_krenk", integrator_options={"max_iter": 1e19})


@pytest.mark.parametrize("value", [1, 100, 100.0, np.int64(7), 10**6])
def test_max_iter_accepts_whole_numbers_in_range(value):
    assert integrators.get("nielsen_krenk").pack_options({"max_iter": value})[1] == float(value)


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"tol": "1e-12"}, r"option tol must be a finite real number, got '1e-12'"),
        ({"tol": 1e-12j}, r"option tol must be a finite real number, got 1e-12j"),
        ({"tol": float("nan")}, r"option tol must be a finite real number, got nan"),
        ({"tol": 10**400}, r"option tol must be a finite real number"),
        ({"tol": 2.0}, r"option tol must be in \(0, 1\), got 2.0"),
        ({1: 2}, r"has no option\(s\) \[1\]"),
    ],
)
def test_float_options_name_option_and_value(options, match):
    with pytest.raises(ValueError, match=match):
        integrators.get("nielsen_krenk").pack_options(options)


def test_options_must_be_a_mapping():
    with pytest.raises(ValueError, match=r"options must be a mapping of names to numbers, got \['tol'\]"):
        integrators.get("nielsen_krenk").pack_options(["tol"])


# ---------------------------------------------------------------- steps and substeps (item 6)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"substeps": 2**63 - 1}, r"substeps must be an integer in \[1, 2\*\*53\], got 9223372036854775807"),
        ({"substeps": 10**30}, r"substeps must be an integer in \[1, 2\*\*53\], got 10{30}\b"),
        ({"steps": 10**20}, r"steps must be an integer in \[0, 2\*\*53\], got 10{20}\b"),
        ({"steps": 2**53 + 1}, r"steps must be an integer in \[0, 2\*\*53\]"),
        ({"steps": True}, r"steps must be an integer in \[0, 2\*\*53\], got True"),
        ({"steps": 3.0}, r"steps must be an integer in \[0, 2\*\*53\], got 3.0"),
        ({"steps": "3"}, r"steps must be an integer in \[0, 2\*\*53\], got '3'"),
        (
            {"steps": 2**26, "substeps": 2**28},
            r"steps × substeps must be at most 2\*\*53.*= 18014398509481984",
        ),
        ({"steps": 10, "dt": 1e308}, r"end time t0 \+ steps·dt must be finite"),
    ],
)
def test_counts_are_checked_against_their_real_range(kwargs, match):
    with pytest.raises(ValueError, match=match):
        _run(**kwargs)


def test_a_trajectory_beyond_memory_names_steps():
    # 2**45 recorded states of 64 bytes: 2 PiB, beyond any machine's address space.
    with pytest.raises(MemoryError, match=r"steps = 35184372088832 for 1 bodies needs 2,097,152 GiB"):
        _run(steps=2**45)
    with pytest.raises(ValueError, match=r"steps = 9007199254740992 for 1024 bodies asks for a trajectory"):
        _run(steps=2**53, omega0=np.zeros((1024, 3)))


def test_numpy_integer_counts_are_accepted():
    traj = _run(steps=np.int64(3), substeps=np.int32(2))
    assert traj.q.shape == (4, 4)


def test_count_signature_and_message():
    assert validation.count(5, "n", 0, 5) == 5
    with pytest.raises(ValueError, match=r"^n must be an integer in \[2, 5\], got 6$"):
        validation.count(6, "n", 2, 5)
    with pytest.raises(ValueError, match=r"^n must be an integer in \[1, 2\*\*53\], got 0$"):
        validation.count(0, "n", 1)
    assert validation.count(np.array(4), "n", 1) == 4


# ---------------------------------------------------------------- propagate's arguments (item 15)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"inertia": "abc"}, r"^inertia must be real numbers, got strings: 'abc'"),
        ({"inertia": [1 + 1j, 2, 3]}, r"^inertia must be real numbers, got complex numbers"),
        ({"inertia": [True, True, True]}, r"^inertia must be real numbers, got booleans"),
        ({"inertia": [[1, 0, 0], [0, 2, 0], [0, 0]]}, r"^inertia must be a regular \(not ragged\) array"),
        ({"q0": [1 + 0j, 0, 0, 0]}, r"^q0 must be real numbers, got complex numbers"),
        ({"q0": object()}, r"^q0 must be real numbers, got objects"),
        ({"q0": None}, r"^q0 must be real numbers, got objects: None"),
        ({"q0": "1000"}, r"^q0 must be real numbers, got strings"),
        ({"omega0": [0.1j, 0, 0]}, r"^omega0 must be real numbers, got complex numbers"),
        ({"omega0": ["0.1", 0, 0]}, r"^omega0 must be real numbers, got strings"),
        ({"omega0": [10**400, 0, 0]}, r"^omega0 must be finite"),
        ({"torque": [1j, 0, 0]}, r"^torque must be real numbers, got complex numbers"),
        ({"torque": "abc"}, r"^torque must be real numbers, got strings"),
        ({"torque": object()}, r"^torque must be real numbers, got objects"),
        ({"torque": [BodyTorque(TAU), [1.0, 2.0, 3.0]]}, r"a torque list must hold only torque terms"),
        ({"dt": 0.01j}, r"^dt must be a positive finite number, got 0.01j"),
        ({"dt": "0.01"}, r"^dt must be a positive finite number, got '0.01'"),
        ({"dt": True}, r"^dt must be a positive finite number, got True"),
        ({"dt": 10**400}, r"^dt must be a positive finite number"),
        ({"t0": 1j}, r"^t0 must be a finite number, got 1j"),
        (
            {"q0": np.tile(Q0, (2, 1)), "omega0": np.tile(W0, (3, 1))},
            r"q0 \(2,\), omega0 \(3,\), inertia \(\)",
        ),
        (
            {"inertia": np.ones((4, 3)) + [0, 1, 1], "omega0": np.tile(W0, (3, 1))},
            r"omega0 \(3,\), inertia \(4,\)",
        ),
        ({"renormalize_momentum": "yes"}, r"^renormalize_momentum must be True or False, got 'yes'"),
        ({"renormalize_momentum": 1}, r"^renormalize_momentum must be True or False, got 1"),
        ({"check_triangle": "False"}, r"^check_triangle must be True or False, got 'False'"),
        ({"torque": TAU, "torque_frame": ["body"]}, r"^torque_frame must be one of \('body', 'world'\)"),
        ({"torque": TAU, "torque_frame": np.array("body")}, r"^torque_frame must be one of"),
        ({"method": "nielsen_krenk", "potential": object()}, r"^potential must have methods energy\(q\)"),
    ],
)
def test_bad_arguments_name_themselves(kwargs, match):
    with pytest.raises(ValueError, match=match):
        _run(**kwargs)


def test_float32_and_integer_inputs_are_accepted():
    traj = _run(q0=Q0.astype(np.float32), omega0=[0, 1, 0], inertia=np.array([1, 2, 3]), dt=np.float32(0.01))
    assert traj.q.dtype == np.float64 and np.all(np.isfinite(traj.q))


# ---------------------------------------------------------------- torque terms and callables


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (
            lambda: GravityGradient("a"),
            r"^GravityGradient.mean_motion must be a positive finite number, got 'a'",
        ),
        (
            lambda: GravityGradient(1e-3, phase=None),
            r"^GravityGradient.phase must be a finite number, got None",
        ),
        (lambda: BodyTorque("a"), r"^BodyTorque.torque must be real numbers, got strings"),
        (
            lambda: BodyTorque([1.0, 2.0]),
            r"^BodyTorque.torque must have shape \(\.\.\., 3\), got shape \(2,\)",
        ),
        (lambda: WorldTorque([np.nan, 0, 0]), r"^WorldTorque.torque must be finite, got \[nan, 0.0, 0.0\]"),
        (lambda: WheelMomentum([0, 0, 1j], [0, 0, 0]), r"^WheelMomentum.momentum must be real numbers"),
        (
            lambda: WheelMomentum([0, 0, 1], None),
            r"^WheelMomentum.rate must be real numbers, got objects: None",
        ),
        (lambda: PointForce([0, 0, -9.8], [0, 0]), r"^PointForce.point must have shape \(\.\.\., 3\)"),
        (lambda: PointForce([0, 0, np.inf], [0, 0, 1]), r"^PointForce.force must be finite"),
    ],
)
def test_torque_terms_validate_on_construction(build, match):
    with pytest.raises(ValueError, match=match):
        build()


def test_torque_terms_hold_a_private_read_only_copy():
    given = np.array([1.0, 2.0, 3.0])
    term = BodyTorque(given)
    given[0] = 99.0
    assert term.torque.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(ValueError, match="read-only"):
        term.torque[0] = 5.0


@pytest.mark.parametrize(
    ("result", "match"),
    [
        (np.zeros(2), r"must broadcast to shape \(3,\), got shape \(2,\)"),
        (np.zeros((2, 3)), r"must broadcast to shape \(3,\), got shape \(2, 3\)"),
        (np.array([0.0, np.inf, 0.0]), r"must be finite, got \[0.0, inf, 0.0\]"),
        ("abc", r"must be real numbers, got strings"),
        (None, r"must be real numbers, got objects: None"),
        (np.array([1j, 0, 0]), r"must be real numbers, got complex numbers"),
    ],
)
def test_torque_callable_results_are_checked(result, match):
    with pytest.raises(ValueError, match=r"^the result of torque\(t=0.0, q, omega\) " + match):
        _run(torque=lambda t, q, w: result)


class _BadPotential:
    def energy(self, q):
        return "high"

    def gradient(self, q):
        return np.zeros(4)


def test_potential_results_are_checked():
    with pytest.raises(ValueError, match=r"^potential.energy\(q\) must be real numbers, got strings"):
        _run(method="nielsen_krenk", potential=_BadPotential())


# ---------------------------------------------------------------- the other public functions


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: quat.multiply("abcd", [1, 0, 0, 0]), r"^p must be real numbers, got strings"),
        (lambda: quat.rotate([1, 0, 0, 0], [1j, 0, 0]), r"^v must be real numbers, got complex numbers"),
        (lambda: quat.normalize([object(), 0, 0, 0]), r"^q must be real numbers, got objects"),
        (lambda: quat.from_rotvec([np.nan, 0, 0]), r"^rotvec must be finite, got \[nan, 0.0, 0.0\]"),
        (lambda: quat.from_euler321([0, np.inf, 0]), r"^angles must be finite"),
        (lambda: quat.exp([np.nan, 0, 0]), r"^v must be finite"),
        (lambda: quat.from_matrix("abc"), r"^matrix must be real numbers, got strings"),
        (lambda: quat.identity("a"), r"^shape entries must be an integer"),
        (lambda: quat.identity(-1), r"^shape entries must be an integer in \[0, 2\*\*53\], got -1"),
        (lambda: quat.identity(1.5), r"^shape must be a tuple of non-negative integers, got 1.5"),
        (lambda: quat.random(None), r"^rng must be a numpy.random.Generator, got None"),
        (lambda: ri.solid_box("a", (1, 1, 1)), r"^mass must be real numbers, got strings"),
        (lambda: ri.solid_box(1.0, (1, 1j, 1)), r"^size must be real numbers, got complex numbers"),
        (lambda: ri.validate_inertia(np.eye(3) * 1j), r"^inertia must be real numbers, got complex numbers"),
        (lambda: ri.validate_moments([1, 2, 3], triangle="no"), r"^triangle must be True or False, got 'no'"),
        (lambda: ri.principal_frame("abc"), r"^inertia must be real numbers, got strings"),
        (lambda: ri.hollow_cylinder(1.0, "a", 1.0, 1.0), r"^inner_radius must be real numbers"),
        (lambda: ri.Part(1.0, "abc", [0, 0, 0]), r"^Part inertia must be real numbers, got strings"),
        (lambda: ri.Part(1.0, np.eye(3), [0, 0, 0], "abcd"), r"^Part orientation must be real numbers"),
        (lambda: ri.compose([1]), r"^parts\[0\] must be a Part, got 1"),
        (lambda: ri.compose(5), r"^parts must be an iterable of Part, got 5"),
        (lambda: ri.parallel_axis(np.eye(3), [1.0, 2.0], np.zeros((3, 3))), r"mass \(2,\), offset \(3,\)"),
        (lambda: ri.to_center_of_mass(np.eye(3), 1.0, "x"), r"^com_offset must be real numbers"),
        (
            lambda: propagate_linear(np.zeros((2, 3)), np.zeros((3, 3)), 1.0, 0.1, 1),
            r"batch shapes do not broadcast together: p0 \(2,\), v0 \(3,\), mass \(\)",
        ),
        (lambda: propagate_linear([0, 0, 0], [0, 0, 0], 1j, 0.1, 1), r"^mass must be real numbers"),
        (
            lambda: propagate_linear([0, 0, 0], [0, 0, 0], 1.0, 0.1, 1, force=lambda t, p, v: "up"),
            r"^force\(t=0.0, p, v\) must be real numbers, got strings",
        ),
        (
            lambda: propagate_linear(
                [0, 0, 0], [0, 0, 0], 1.0, 0.1, 1, force=lambda t, p, v: np.ones((2, 3))
            ),
            r"^force\(t=0.0, p, v\) must return finite values of a shape broadcasting to \(3,\)",
        ),
        (
            lambda: propagate_rigid_body([0, 0, 0], [0, 0, 0], Q0, W0, 1.0, I_ASYM, 0.1, 1, force=[0, 0, 1]),
            r"^force must be None or a callable, got \[0, 0, 1\]",
        ),
        (
            lambda: propagate_rigid_body([0, 0, 0], [0, 0, 0], [1j, 0, 0, 0], W0, 1.0, I_ASYM, 0.1, 1),
            r"^q0 must be real numbers, got complex numbers",
        ),
        (
            lambda: propagate_rigid_body(
                np.zeros((2, 3)), [0, 0, 0], Q0, np.zeros((5, 3)), 1.0, I_ASYM, 0.1, 1
            ),
            r"p0 \(2,\), v0 \(\), q0 \(\), omega0 \(5,\), mass \(\), inertia \(\)",
        ),
        (lambda: HeavyTop("a", [0, 0, 1], np.eye(3)), r"^HeavyTop.mass must be real numbers, got strings"),
        (lambda: HeavyTop(1.0, [0, 0, np.nan], np.eye(3)), r"^HeavyTop.center_of_mass must be finite"),
        (lambda: HeavyTop(1.0, [0, 0, 1], np.eye(2)), r"^HeavyTop.inertia must have shape \(\.\.\., 3, 3\)"),
        (
            lambda: HeavyTop(1.0, [0, 0, 1], np.eye(3), [0, 0]),
            r"^HeavyTop.gravity must have shape \(\.\.\., 3\)",
        ),
        (lambda: HeavyTop.symmetric(1.0, 0.01, 0.02, np.nan), r"^length must be a finite number, got nan"),
        (
            lambda: HeavyTop(1.0, [0, 0, 1], np.eye(3), [0, 0, 0]).vertical_momentum(Q0, W0),
            r"^vertical_momentum needs a vertical: this top's gravity is zero",
        ),
        (
            lambda: HeavyTop.symmetric(1.0, 0.01, 0.02, 0.1).total_energy(Q0, "w"),
            r"^omega must be real numbers",
        ),
        (lambda: TorqueExtrapolator(0.1).push(0.0, [1j, 0, 0]), r"^torque must be real numbers, got complex"),
    ],
)
def test_public_functions_name_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_extrapolator_refuses_a_shape_change_and_keeps_its_history():
    extrapolate = TorqueExtrapolator(0.1)
    extrapolate.push(0.0, [1.0, 0.0, 0.0])
    extrapolate.push(0.1, [2.0, 0.0, 0.0])
    with pytest.raises(ValueError, match=r"torque must have the shape of the values pushed before, \(3,\)"):
        extrapolate.push(0.2, np.ones((2, 3)))
    # Linear extrapolation through the two values kept: 1 at t = 0, 2 at t = 0.1, so 3 at t = 0.2.
    np.testing.assert_allclose(extrapolate(0.2), [3.0, 0.0, 0.0], rtol=1e-14)
    with pytest.raises(ValueError, match=r"^t must be a finite number, got 'now'"):
        extrapolate("now")
