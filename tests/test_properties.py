"""Property-based tests of ``propagate`` (issue 12, "make it systematic"): random valid
inputs keep the invariants, random invalid inputs raise a ValueError that names the
argument. Profiles in conftest.py: a short derandomised one by default (CI), a long random
one on demand (``HYPOTHESIS_PROFILE=long``).

The methods are ours (every registered ComponentMethod); the foreign engines have their
own tests. The invariants and the references are independent of the code under test: unit
quaternions, shapes and times as documented, the conservation laws each method's docstring
claims, the angular momentum that renormalisation pins, and RK4 at a fine step.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import assume, given, note
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from reference import angle

from rigidrot_gym.physics.plumbing.validation import MAX_COUNT
from rigidrot_gym.physics.rotation import integrators
from rigidrot_gym.physics.rotation import quaternion as quat
from rigidrot_gym.physics.rotation.integrators import ComponentMethod
from rigidrot_gym.physics.rotation.propagate import propagate
from rigidrot_gym.physics.rotation.torques import (
    BodyTorque,
    GravityGradient,
    PointForce,
    WheelMomentum,
    WorldTorque,
)

OURS = [name for name in integrators.names() if isinstance(integrators.get(name), ComponentMethod)]
# Torque-free conservation as each method's docstring states it (to round-off or to the
# solver tolerance 1e-15 of nielsen_krenk).
CONSERVES = {
    "exact": ("energy", "momentum"),
    "strang": ("energy", "momentum"),
    "yoshida4": ("energy", "momentum"),
    "nielsen_krenk": ("energy", "momentum"),
    "semi_implicit": ("energy",),
}
# Relative drift allowed over a run of at most 36 sub-steps, and an absolute floor for
# quantities so small that they are subnormal.
ROUND_OFF = 1e-12
TINY = 1e-290

Q0 = quat.normalize(np.array([0.9, 0.2, -0.3, 0.25]))
W0 = np.array([0.4, 1.1, -0.3])
I_ASYM = np.array([1.0, 2.0, 3.0])


def reals(lo: float, hi: float):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def within(batch: tuple[int, ...]):
    """Shapes that broadcast to ``batch``: itself, none, its trailing part, all ones."""
    return st.sampled_from(sorted({batch, (), batch[1:], (1,) * len(batch)}))


@st.composite
def quaternions(draw, shape):
    a = draw(hnp.arrays(np.float64, (*shape, 4), elements=reals(-1.0, 1.0)))
    norm = np.linalg.norm(a, axis=-1, keepdims=True)
    assume(np.all(norm > 0.1))
    return a / norm


@st.composite
def moments(draw, lo: float, hi: float):
    """Principal moments in any order that obey the triangle inequality |a − b| ≤ c ≤ a + b."""
    a, b = draw(reals(lo, hi)), draw(reals(lo, hi))
    c = draw(reals(max(abs(a - b), lo), a + b))
    return draw(st.permutations([a, b, c]))


@st.composite
def inertias(draw, shape, lo: float = 0.1, hi: float = 10.0):
    """Principal moments (..., 3), or body tensors (..., 3, 3) with random principal axes."""
    count = int(np.prod(shape, dtype=np.int64))
    m = np.array([draw(moments(lo, hi)) for _ in range(count)]).reshape(*shape, 3)
    if not draw(st.booleans()):
        return m
    r = quat.to_matrix(draw(quaternions(shape)))
    return r @ (m[..., :, None] * np.eye(3)) @ np.swapaxes(r, -1, -2)


@st.composite
def loads(draw, batch):
    """A torque argument of every kind propagate takes, and its frame."""
    kind = draw(st.sampled_from(["none", "constant", "terms", "callable"]))
    if kind == "none":
        return None, "body"
    frame = draw(st.sampled_from(["body", "world"]))
    tau = draw(hnp.arrays(np.float64, (*draw(within(batch)), 3), elements=reals(-0.5, 0.5)))
    if kind == "constant":
        return tau, frame
    if kind == "callable":
        return (lambda t, q, w: tau * np.cos(t)), frame
    small = hnp.arrays(np.float64, (3,), elements=reals(-0.2, 0.2))
    terms = [BodyTorque(tau)]
    if draw(st.booleans()):
        terms.append(WorldTorque(draw(small)))
    if draw(st.booleans()):
        terms.append(WheelMomentum(draw(small), draw(small)))
    if draw(st.booleans()):
        terms.append(GravityGradient(draw(reals(1e-4, 1e-2)), draw(reals(-np.pi, np.pi))))
    if draw(st.booleans()):
        terms.append(PointForce(draw(small), draw(small)))
    return terms, "body"


def _bounded(drift: np.ndarray, reference: np.ndarray) -> bool:
    return bool(np.all(drift <= ROUND_OFF * reference + TINY))


@given(data=st.data())
def test_valid_inputs_keep_the_invariants(data):
    method = data.draw(st.sampled_from(OURS), label="method")
    # No batch ends in 3: moments of shape (..., 3, 3) would read as tensors.
    batch = data.draw(st.sampled_from([(), (2,), (4,), (2, 4)]), label="batch")
    shapes = [data.draw(within(batch)) for _ in range(3)]
    q0 = data.draw(quaternions(shapes[0]), label="q0")
    omega0 = data.draw(hnp.arrays(np.float64, (*shapes[1], 3), elements=reals(-3, 3)), label="omega0")
    inertia = data.draw(inertias(shapes[2]), label="inertia")
    bodies = np.broadcast_shapes(*shapes)
    dt, steps, t0 = data.draw(reals(1e-3, 0.05)), data.draw(st.integers(0, 12)), data.draw(reals(-10, 10))
    substeps = data.draw(st.integers(1, 3))
    loaded = integrators.get(method).accepts_torque and data.draw(st.booleans())
    torque, frame = data.draw(loads(bodies)) if loaded else (None, "body")
    renormalize = torque is None and data.draw(st.booleans())
    note(f"{bodies=}, {torque=}")
    try:
        traj = propagate(
            q0,
            omega0,
            inertia,
            dt,
            steps,
            method,
            torque,
            substeps=substeps,
            renormalize_momentum=renormalize,
            torque_frame=frame,
            t0=t0,
        )
    except ValueError as err:  # the only way a valid input may fail: loudly, naming the step
        assert "produced non-finite values" in str(err) and "dt = " in str(err) and "substeps = " in str(err)
        return
    assert traj.q.shape == (steps + 1, *bodies, 4) and traj.omega.shape == (steps + 1, *bodies, 3)
    np.testing.assert_array_equal(traj.t, t0 + dt * np.arange(steps + 1))
    assert np.all(np.isfinite(traj.q)) and np.all(np.isfinite(traj.omega))
    assert np.max(np.abs(traj.norm_error)) <= 1e-12
    np.testing.assert_allclose(traj.q[0], np.broadcast_to(q0, (*bodies, 4)), rtol=0, atol=1e-14)
    np.testing.assert_allclose(traj.omega[0], np.broadcast_to(omega0, (*bodies, 3)), rtol=0, atol=1e-14)
    if torque is None:
        energy = np.abs(traj.kinetic_energy[0])
        momentum = np.linalg.norm(traj.angular_momentum[0], axis=-1)
        conserved = CONSERVES.get(method, ())
        # Renormalisation resets ω from L; it keeps the energy only where L is conserved anyway.
        if "energy" in conserved and ("momentum" in conserved or not renormalize):
            assert _bounded(traj.energy_drift, energy)
        if "momentum" in conserved or renormalize:  # renormalisation pins L (Mandre 2008, §7.2)
            assert _bounded(traj.momentum_drift, momentum)


# An off-axis rate component is 0 or at least 1e-3: far closer to an intermediate axis the
# exact solution loses the attitude (issue 12, item 1, swept in its own tests). A rotated
# tensor can still put a rate on its intermediate axis up to round-off: the long profile
# finds item 1 that way (e.g. q0 = (½, ½, ½, ½), ω0 = (0, 0, 1), moments (1, 3, 2)
# rotated by 1e-15) until it is fixed.
COMPONENT = st.one_of(st.just(0.0), reals(1e-3, 2.0), reals(-2.0, -1e-3))


@given(q0=quaternions(()), inertia=inertias((), 1.0, 3.0), omega0=st.tuples(COMPONENT, COMPONENT, COMPONENT))
def test_torque_free_exact_agrees_with_rk4_at_a_fine_step(q0, inertia, omega0):
    omega0 = np.array(omega0)
    exact = propagate(q0, omega0, inertia, 1.0, 1, "exact")
    rk4 = propagate(q0, omega0, inertia, 1.0 / 2000, 2000, "rk4")
    assert angle(exact.q[-1], rk4.q[-1]) <= 1e-8
    assert np.max(np.abs(exact.omega[-1] - rk4.omega[-1])) <= 1e-8 * (1.0 + np.linalg.norm(omega0))


# ---------------------------------------------------------------- invalid input

NON_NUMBERS = st.one_of(
    st.text(max_size=4),
    st.complex_numbers(allow_nan=False, allow_infinity=False).filter(lambda z: z.imag != 0),
    st.none(),
    st.builds(object),
    st.builds(dict),
)
NON_FINITE = st.sampled_from([np.nan, np.inf, -np.inf])


@st.composite
def bad_vectors(draw, valid: np.ndarray):
    """A (..., size) argument spoiled one way: a non-finite or non-numeric entry, or the
    wrong last dimension."""
    size = valid.shape[-1]
    how = draw(st.sampled_from(["non-finite", "non-number", "size", "scalar"]))
    if how == "non-finite":
        spoiled = valid.copy()
        spoiled[draw(st.integers(0, size - 1))] = draw(NON_FINITE)
        return spoiled
    if how == "non-number":
        spoiled = valid.tolist()
        spoiled[draw(st.integers(0, size - 1))] = draw(NON_NUMBERS)
        return spoiled
    if how == "size":
        other = draw(st.integers(0, 7).filter(lambda k: k != size))
        return draw(
            hnp.arrays(np.float64, (*draw(st.sampled_from([(), (2,)])), other), elements=reals(-1, 1))
        )
    return draw(st.one_of(reals(-1, 1), st.booleans(), NON_NUMBERS))


@st.composite
def bad_moments(draw):
    a, b = draw(reals(0.1, 10)), draw(reals(0.1, 10))
    how = draw(st.sampled_from(["triangle", "sign", "asymmetric"]))
    if how == "triangle":
        return draw(st.permutations([a, b, (a + b) * draw(reals(1.01, 10))]))
    if how == "sign":
        return draw(st.permutations([a, b, -draw(reals(0, 10))]))
    tensor = np.diag([a, b, 0.5 * (a + b)])
    tensor[0, 1] = draw(reals(0.01, 1)) * a
    return tensor


def bad_bools():
    return st.one_of(st.integers(), st.floats(), NON_NUMBERS, st.just(np.array([True])))


def bad_counts(minimum: int, maximum: int):
    return st.one_of(
        st.integers(max_value=minimum - 1),
        st.integers(min_value=maximum + 1),
        st.floats().filter(lambda x: not (x.is_integer() and minimum <= x <= maximum)),
        st.booleans(),
        NON_NUMBERS,
    )


def bad_reals(positive: bool):
    below = st.floats(max_value=0.0, allow_nan=False) if positive else st.nothing()
    return st.one_of(below, NON_FINITE, st.booleans(), NON_NUMBERS, st.just([0.1, 0.2]))


BAD = {
    "q0": bad_vectors(Q0),
    "omega0": bad_vectors(W0),
    "inertia": st.one_of(bad_vectors(I_ASYM), bad_moments()),
    "dt": bad_reals(positive=True),
    "steps": bad_counts(0, MAX_COUNT),
    "substeps": bad_counts(1, MAX_COUNT),
    "t0": bad_reals(positive=False),
    "renormalize_momentum": bad_bools(),
    "check_triangle": bad_bools(),
    "torque": bad_vectors(W0).filter(lambda v: v is not None),  # None: no torque, valid
    "torque_frame": st.one_of(
        st.text().filter(lambda s: s not in ("body", "world")), NON_NUMBERS, st.integers()
    ),
    "max_iter": bad_counts(1, 10**6),
    "project_every": bad_counts(1, MAX_COUNT),
}
METHOD_OF = {"max_iter": "nielsen_krenk", "project_every": "rkn"}


@given(data=st.data(), argument=st.sampled_from(sorted(BAD)))
def test_invalid_inputs_raise_a_value_error_naming_the_argument(data, argument):
    value = data.draw(BAD[argument], label=argument)
    args = {"q0": Q0, "omega0": W0, "inertia": I_ASYM, "dt": 0.01, "steps": 2, "method": "rk4"}
    if argument == "torque_frame":
        args["torque"] = W0
    args["method"] = METHOD_OF.get(argument, "rk4")
    with pytest.raises(ValueError) as raised:
        propagate(**(args | {argument: value}))
    assert argument in str(raised.value)


@given(
    # Not 3: moments of shape (3, 3) would read as one tensor.
    sizes=st.tuples(st.sampled_from([2, 4, 5]), st.sampled_from([2, 4, 5])).filter(lambda s: s[0] != s[1]),
    pair=st.sampled_from([("q0", "omega0"), ("q0", "inertia"), ("omega0", "inertia")]),
)
def test_mismatched_batches_name_both_arguments(sizes, pair):
    args = {"q0": Q0, "omega0": W0, "inertia": I_ASYM}
    for name, n in zip(pair, sizes, strict=True):
        args[name] = np.broadcast_to(args[name], (n, args[name].shape[-1]))
    (a, n), (b, m) = zip(pair, sizes, strict=True)
    with pytest.raises(
        ValueError, match=rf"batch shapes do not broadcast together: .*{a} \({n},\).*{b} \({m},\)"
    ):
        propagate(**args, dt=0.01, steps=1)
