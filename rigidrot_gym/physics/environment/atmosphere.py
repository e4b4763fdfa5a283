"""The Earth's atmospheric density by altitude: the piecewise exponential model of Vallado,
*Fundamentals of Astrodynamics and Applications*, 4th ed. (2013), §8.6.2, Table 8-4.

Between two base altitudes h₀ of the table the density falls exponentially,

    ρ(h) = ρ₀ exp(−(h − h₀)/H),

with the base density ρ₀ and the scale height H of the band that holds h (the band of the
highest base altitude ≤ h; above 1000 km the last band's). The table is that of CIRA-72 at
moderate solar activity (the "exponential atmosphere" Vallado fits to it): a model of the
mean, not of a day. The thermosphere's density at 500 km swings by an order of magnitude
with the solar cycle and by a factor of about two between day and night, which this model
leaves out (as it leaves out the Earth's oblateness: h is the height above a sphere of the
equatorial radius). Within one band it is Basilisk's ``exponentialAtmosphere``, whose base
density is that of its planet radius: ρ₀ exp(h₀/H) for a band's ρ₀ and h₀.
"""

from __future__ import annotations

import numpy as np

from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.plumbing.jit import jitable, select

# Vallado (2013) Table 8-4: base altitude h₀ (m), base density ρ₀ (kg/m³), scale height H (m).
BASE_ALTITUDE = (
    0.0, 25e3, 30e3, 40e3, 50e3, 60e3, 70e3, 80e3, 90e3, 100e3, 110e3, 120e3, 130e3, 140e3,
    150e3, 180e3, 200e3, 250e3, 300e3, 350e3, 400e3, 450e3, 500e3, 600e3, 700e3, 800e3,
    900e3, 1000e3,
)  # fmt: skip
BASE_DENSITY = (
    1.225, 3.899e-2, 1.774e-2, 3.972e-3, 1.057e-3, 3.206e-4, 8.770e-5, 1.905e-5, 3.396e-6,
    5.297e-7, 9.661e-8, 2.438e-8, 8.484e-9, 3.845e-9, 2.070e-9, 5.464e-10, 2.789e-10,
    7.248e-11, 2.418e-11, 9.518e-12, 3.725e-12, 1.585e-12, 6.967e-13, 1.454e-13, 3.614e-14,
    1.170e-14, 5.245e-15, 3.019e-15,
)  # fmt: skip
SCALE_HEIGHT = (
    7.249e3, 6.349e3, 6.682e3, 7.554e3, 8.382e3, 7.714e3, 6.549e3, 5.799e3, 5.382e3, 5.877e3,
    7.263e3, 9.473e3, 12.636e3, 16.149e3, 22.523e3, 29.740e3, 37.105e3, 45.546e3, 53.628e3,
    53.298e3, 58.515e3, 60.828e3, 63.822e3, 71.835e3, 88.667e3, 124.64e3, 181.05e3, 268.00e3,
)  # fmt: skip
BANDS = len(BASE_ALTITUDE)


@jitable
def band(altitude):
    """(h₀, ρ₀, H) of the band that holds ``altitude`` (m, ≥ 0; a float or an array): that
    of the highest base altitude at or below it."""
    base, rho, scale = BASE_ALTITUDE[0], BASE_DENSITY[0], SCALE_HEIGHT[0]
    for k in range(1, BANDS):
        above = altitude >= BASE_ALTITUDE[k]
        base = select(above, BASE_ALTITUDE[k], base)
        rho = select(above, BASE_DENSITY[k], rho)
        scale = select(above, SCALE_HEIGHT[k], scale)
    return base, rho, scale


@jitable
def density(altitude):
    """ρ = ρ₀ exp(−(h − h₀)/H) (kg/m³) at ``altitude`` h (m, ≥ 0) above the equatorial
    radius, a float or an array of any shape, in its :func:`band`."""
    base, rho, scale = band(altitude)
    return rho * np.exp(-(altitude - base) / scale)


def densities(altitude) -> np.ndarray:
    """:func:`density` of altitudes (m, ≥ 0) given as a number or an array, checked.

    Raises:
        ValueError: naming ``altitude`` if one is negative or not finite.
    """
    h = validation.finite_floats(altitude, "altitude")
    if np.any(h < 0.0):
        raise ValueError(
            f"altitude must be ≥ 0 m (above the equatorial radius), got {validation.show(altitude)}"
        )
    return np.asarray(density(h))
