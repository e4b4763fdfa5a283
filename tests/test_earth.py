"""The Earth's time scale and frames against published values and identities."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

from rigidrot_gym.physics.environment import earth


def test_julian_dates_of_published_instants():
    assert earth.julian_date("2000-01-01T12:00:00") == 2451545.0
    # Vallado, Fundamentals of Astrodynamics, 4th ed., example 3-4: 1996 Oct 26 14:20 UT
    assert earth.julian_date("1996-10-26T14:20:00Z") == pytest.approx(2450383.09722222, abs=1e-8)
    same = earth.julian_date("1996-10-26T14:20:00+00:00")
    assert earth.julian_date(dt.datetime(1996, 10, 26, 14, 20)) == same


def test_gmst_of_vallados_example():
    # Vallado, example 3-5: 1992 Aug 20 12:14 UT1 gives 152.578787886 deg
    theta = earth.gmst(earth.julian_date("1992-08-20T12:14:00"))
    assert np.degrees(theta) == pytest.approx(152.578787886, abs=1e-6)


def test_gmst_advances_at_the_sidereal_rate():
    jd = earth.julian_date("2026-03-20T00:00:00")
    hour = 3600.0 / earth.SECONDS_PER_DAY
    step = np.mod(earth.gmst(jd + hour) - earth.gmst(jd), 2 * np.pi)
    # IAU 1982's mean sidereal rate, 7.2921158e-5 rad/s, against WGS-84's rounded 7.292115e-5
    assert step / 3600.0 == pytest.approx(earth.ROTATION_RATE, rel=2e-7)
    batch = earth.gmst(np.array([jd, jd + hour]))
    assert batch.shape == (2,) and batch[0] == earth.gmst(jd)


def test_fixed_and_inertial_frames_are_inverse_rotations():
    rng = np.random.default_rng(0)
    v = tuple(rng.normal(size=(3, 5)))
    theta = rng.uniform(0, 2 * np.pi, 5)
    back = earth.to_inertial(theta, earth.to_fixed(theta, v))
    np.testing.assert_allclose(np.array(back), np.array(v), atol=1e-15)
    # the inertial x axis seen from a frame turned by +90 deg lies along its -y
    np.testing.assert_allclose(earth.to_fixed(np.pi / 2, (1.0, 0.0, 0.0)), (0.0, -1.0, 0.0), atol=1e-16)


@pytest.mark.parametrize("bad", ["2026-13-01T00:00:00", "yesterday", 12.0, "2026-03-20T12:00:00+02:00"])
def test_an_epoch_that_is_not_a_utc_instant_is_refused(bad):
    with pytest.raises(ValueError, match="epoch"):
        earth.julian_date(bad)


def test_a_non_finite_julian_date_is_refused():
    with pytest.raises(ValueError, match="jd must be finite"):
        earth.gmst(np.array([2451545.0, np.nan]))


def test_julian_dates_count_seconds_after_the_epoch():
    jd = earth.julian_dates(np.array([[0.0, 43200.0], [86400.0, -86400.0]]), "2000-01-01T12:00:00")
    np.testing.assert_array_equal(jd, [[2451545.0, 2451545.5], [2451546.0, 2451544.0]])
    with pytest.raises(ValueError, match="t must be finite"):
        earth.julian_dates([0.0, np.inf], "2000-01-01T12:00:00")
