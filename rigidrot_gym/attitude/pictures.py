"""What the pictures of an env show of its scenario: the spacecraft its ``[surfaces]``,
``[[body.parts]]`` and ``[thrusters]`` tables declare (drawn by :mod:`rigidrot_gym.render`,
which reads no scenario), see :mod:`rigidrot_gym.render.spacecraft`."""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude.components import surfaces, thrusters
from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.physics.rotation.inertia import compose
from rigidrot_gym.render.spacecraft import Spacecraft, box_plate, facet_plate, part_solid, preset_plates


def spacecraft_of(scenario: Scenario) -> Spacecraft | None:
    """The spacecraft ``scenario`` declares, or ``None`` when it has none of
    ``[surfaces]``, ``[[body.parts]]`` and ``[thrusters]`` (its picture is then the
    ellipsoid of its inertia).

    Its body is, first found: its surfaces (the outside that the air and the Sun's light
    see, about the ``[surfaces]`` table's centre of mass; a body given by parts as well is
    drawn by its surfaces); its parts (each where ``[[body.parts]]`` puts it, about the
    centre of mass they compose to); the box of its thrusters. Its thrusters are drawn with
    any of them. Everything is in the body frame, the frame the renderer's attitude turns
    (the env draws the body frame's attitude, not the principal axes' it integrates)."""
    exterior, propulsion = scenario.exterior, scenario.propulsion
    has_thrusters = propulsion.layout != "none"
    if not exterior.enabled and not scenario.parts and not has_thrusters:
        return None
    if exterior.enabled:
        com = np.asarray(exterior.centre_of_mass, dtype=np.float64)
        if isinstance(exterior.facets, str):
            drawn = preset_plates(exterior.facets, com)
        else:
            drawn = tuple(facet_plate(f, com) for f in surfaces.facets_of(exterior))
    elif scenario.parts:
        com = compose([p.part for p in scenario.parts]).center_of_mass
        drawn = tuple(
            part_solid(p.shape, p.dimensions, p.part.position, p.part.orientation, com)
            for p in scenario.parts
        )
    else:
        drawn = (box_plate(2.0 * np.asarray(propulsion.half_sizes, dtype=np.float64), np.zeros(3)),)
    if has_thrusters:
        thruster_set = thrusters.thruster_set(propulsion)
        positions, directions = thruster_set.positions, thruster_set.directions
    else:
        positions, directions = np.zeros((0, 3)), np.zeros((0, 3))
    return Spacecraft(drawn, np.array(positions, dtype=np.float64), np.array(directions, dtype=np.float64))
