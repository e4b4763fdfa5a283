"""The spacecraft's surfaces: aerodynamic drag and solar radiation pressure on its flat
facets, a torque evaluated at every integrator stage from the stage's attitude (the
library's :mod:`~rigidrot_gym.physics.environment.facets`, as Basilisk's
``facetDragDynamicEffector`` and ``facetSRPDynamicEffector``).

Each period a body holds what the facets need at its episode time along the orbit
(:func:`hold`): its velocity relative to the atmosphere, which turns with the Earth
(v − ω_E ẑ × r, ω_E the Earth's rotation about world z: the true pole is 0.4° from the
J2000 pole in 2026, left out) and its rate of change (two-body gravity; the velocity then
moves linearly over the period, 6 × 10⁻⁷ of it off at the end of a 1 s period in low
orbit); the density at its altitude (:mod:`~rigidrot_gym.physics.environment.atmosphere`,
Vallado's exponential model) and its rate as the body climbs or sinks (the density also
moving linearly over the period); the direction to the Sun and the radiation pressure there
with the Earth's shadow factor, all held over the period; and the facets turned into the
integrator's (principal) axes about the centre of mass.

Left out: the shadow one part of the spacecraft casts on another and the light it
reflects onto another (each facet is lit or struck whenever it faces the Sun or the flow),
lift and the facets' temperature (the drag coefficient is a constant), the Earth's albedo
and infrared, and the forces' effect on the orbit (the orbit is Keplerian).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from rigidrot_gym.attitude.components import orbit, sunlight
from rigidrot_gym.attitude.components.declaration import Component, Feature, Need, State, Torque
from rigidrot_gym.attitude.settings import Check, Table, flag, invalid, positive, setting, vector
from rigidrot_gym.physics.environment import atmosphere, earth
from rigidrot_gym.physics.environment import facets as plates
from rigidrot_gym.physics.plumbing.jit import jitable
from rigidrot_gym.physics.rotation import vector as vec
from rigidrot_gym.physics.rotation.quaternion import qrotate_inv

_FACET_KEYS = ("area", "normal", "centre", "drag_coefficient", "specular", "diffuse")
_EXPECTED = (
    f"one of {list(plates.PRESETS)} or a list of at most {plates.MAX_FACETS} facets "
    "{area, normal, centre, drag_coefficient, specular, diffuse} (the last three optional)"
)


def _facets(value: Any, where: str) -> str | tuple[plates.Facet, ...]:
    """A preset's name, or the facets of a list of tables, checked."""
    if isinstance(value, str):
        if value not in plates.PRESETS:
            raise invalid(where, _EXPECTED, value)
        return value
    if isinstance(value, tuple) and all(isinstance(f, plates.Facet) for f in value):
        value = [{key: getattr(f, key) for key in _FACET_KEYS} for f in value]
    if not isinstance(value, list | tuple) or not 0 < len(value) <= plates.MAX_FACETS:
        raise invalid(where, _EXPECTED, value)
    out = []
    for k, table in enumerate(value):
        if (
            not isinstance(table, dict)
            or set(table) - set(_FACET_KEYS)
            or not set(_FACET_KEYS[:3]) <= set(table)
        ):
            raise invalid(f"{where}[{k}]", "a table of area, normal, centre and optionally "
                          "drag_coefficient, specular, diffuse", table)  # fmt: skip
        try:
            out.append(plates.Facet(**table))
        except (TypeError, ValueError) as err:
            raise invalid(f"{where}[{k}]", f"a valid facet ({err})", table) from None
    return tuple(out)


class SurfacesTable(Table, key="surfaces"):
    """Drag and solar radiation pressure on the spacecraft's facets (needs ``[orbit]``)."""

    enabled: bool = setting(
        False,
        check=flag,
        flat="surfaces",
        switch=True,
        doc="drag and solar radiation pressure on the facets, at every integrator stage",
    )
    facets: str | tuple = setting(
        "6U",
        check=Check(_EXPECTED, _facets),
        flat="surface_facets",
        doc='"6U" (a 6U CubeSat with two deployed panels), "6U-stowed" (its box alone) or a list of facets '
        "{area (m²), normal, centre (m, body frame), drag_coefficient, specular, diffuse}",
    )
    centre_of_mass: np.ndarray = setting(
        (0.0, 0.0, 0.0),
        check=vector(3),
        unit="m",
        flat="surface_centre_of_mass",
        doc="the centre of mass in the facets' frame (body axes): each facet's arm is its centre minus it",
    )
    drag: bool = setting(True, check=flag, flat="surface_drag", doc="the atmosphere's drag on the facets")
    solar_pressure: bool = setting(
        True, check=flag, flat="surface_solar_pressure", doc="the Sun's radiation pressure on the facets"
    )
    solar_flux: float = setting(
        plates.SOLAR_FLUX,
        check=positive,
        unit="W/m²",
        flat="solar_flux",
        doc="at 1 AU (Kopp & Lean 2011; Basilisk's facetSRPDynamicEffector takes 1368)",
    )


class SurfaceModel(NamedTuple):
    """Equipment.surface_model: which forces act, and the solar flux (zeros when off)."""

    drag: bool
    solar_pressure: bool
    solar_flux: float  # W/m² at 1 AU


def facets_of(table: SurfacesTable) -> tuple[plates.Facet, ...]:
    """The table's facets: its preset's or its own."""
    return plates.PRESETS[table.facets] if isinstance(table.facets, str) else table.facets


def geometry(table: SurfacesTable) -> np.ndarray:
    """Equipment.facets: (MAX_FACETS, FACET_SIZE) each facet's normal and centre of pressure
    from the centre of mass (body frame), area, C_D, ρ_s, ρ_d; rows of zero area after the
    table's facets (zeros when off)."""
    out = np.zeros((plates.MAX_FACETS, plates.FACET_SIZE))
    if table.enabled:
        for k, f in enumerate(facets_of(table)):
            arm = np.subtract(f.centre, table.centre_of_mass)
            out[k] = (*f.normal, *arm, f.area, f.drag_coefficient, f.specular, f.diffuse)
    return out


def constants(table: SurfacesTable) -> SurfaceModel:
    """Equipment.surface_model."""
    on = table.enabled
    return SurfaceModel(on and table.drag, on and table.solar_pressure, table.solar_flux if on else 0.0)


@jitable
def hold(bodies, equipment, work, dt, row, i):
    """Body i's parameters of the facets' torque term over the period, from ``row`` on
    (layout :data:`~rigidrot_gym.physics.environment.facets.AIR` …), at its episode time."""
    t = dt * bodies.steps[i]
    model, p = equipment.surface_model, work.params
    r, v = orbit.state(equipment, t, i)
    distance = vec.norm(r)
    spin, gravity = earth.ROTATION_RATE, -earth.MU / distance**3
    # v − ω_E ẑ × r, and its rate a − ω_E ẑ × v with a = −μ r/|r|³
    air = (v[0] + spin * r[1], v[1] - spin * r[0], v[2])
    air_rate = (gravity * r[0] + spin * v[1], gravity * r[1] - spin * v[0], gravity * r[2])
    to_sun, shadow = sunlight.seen_from(equipment, r, t)
    far = vec.norm(to_sun)
    at = row + plates.AIR
    p[at, i], p[at + 1, i], p[at + 2, i] = air
    at = row + plates.AIR_RATE
    p[at, i], p[at + 1, i], p[at + 2, i] = air_rate
    altitude = distance - earth.RADIUS
    density = atmosphere.density(altitude) if model.drag else 0.0
    # dρ/dt = −ρ ḣ/H, ḣ = r̂·v the rate of climb
    p[row + plates.DENSITY, i] = density
    p[row + plates.DENSITY_RATE, i] = -density * vec.dot(r, v) / (distance * atmosphere.band(altitude)[2])
    at = row + plates.SUN
    p[at, i], p[at + 1, i], p[at + 2, i] = vec.scale(1.0 / far, to_sun)
    pressure = shadow * plates.pressure(far, model.solar_flux)
    p[row + plates.PRESSURE, i] = pressure if model.solar_pressure else 0.0
    g, o = equipment.facets, bodies.principal
    b = (o[0, i], o[1, i], o[2, i], o[3, i])
    for k in range(plates.MAX_FACETS):
        at = row + plates.FACETS + plates.FACET_SIZE * k
        p[at, i], p[at + 1, i], p[at + 2, i] = qrotate_inv(b, (g[k, 0], g[k, 1], g[k, 2]))
        p[at + 3, i], p[at + 4, i], p[at + 5, i] = qrotate_inv(b, (g[k, 3], g[k, 4], g[k, 5]))
        for j in range(6, plates.FACET_SIZE):
            p[at + j, i] = g[k, j]


COMPONENT = Component(
    name="surfaces",
    summary="drag and solar radiation pressure on the spacecraft's facets (Basilisk's facet effectors)",
    table=SurfacesTable,
    attribute="exterior",  # not `surfaces`: that is the switch's keyword name
    on=lambda s: s.surfaces,
    switch="surfaces.enabled",
    needs=(Need("orbit", "the air and the Sun along the orbit"),),
    features=(
        Feature(
            "surfaces",
            lambda s, f: s.surfaces,
            "drag and solar pressure on the facets, at every integrator stage",
        ),
    ),
    state=(
        State(
            "facets",
            "(MAX_FACETS, FACET_SIZE) each facet's normal, arm, area, C_D, ρ_s, ρ_d (body frame)",
            lambda b: geometry(b.scenario.exterior),
            lambda f: f.surfaces,
        ),
        State(
            "surface_model",
            "which forces act, the solar flux (SurfaceModel)",
            lambda b: constants(b.scenario.exterior),
            lambda f: f.surfaces,
            record=SurfaceModel,
        ),
    ),
    torque=Torque(plates.TERM, lambda f: f.surfaces, hold),
    keeps_digests=True,
)
