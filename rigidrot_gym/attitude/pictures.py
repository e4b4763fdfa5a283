"""What the pictures of an env show of its scenario: the spacecraft its ``[surfaces]`` and
``[thrusters]`` tables declare (drawn by :mod:`rigidrot_gym.render`, which reads no
scenario), see :mod:`rigidrot_gym.render.spacecraft`."""

from __future__ import annotations

import numpy as np

from rigidrot_gym.attitude.components import surfaces, thrusters
from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.render.spacecraft import Spacecraft, box_plate, facet_plate, preset_plates


def spacecraft_of(scenario: Scenario) -> Spacecraft | None:
    """The spacecraft ``scenario`` declares (its surfaces, else the box of its thrusters,
    and its thrusters), or ``None`` when it has neither ``[surfaces]`` nor ``[thrusters]``."""
    exterior, propulsion = scenario.exterior, scenario.propulsion
    has_thrusters = propulsion.layout != "none"
    if not exterior.enabled and not has_thrusters:
        return None
    if exterior.enabled:
        com = np.asarray(exterior.centre_of_mass, dtype=np.float64)
        if isinstance(exterior.facets, str):
            drawn = preset_plates(exterior.facets, com)
        else:
            drawn = tuple(facet_plate(f, com) for f in surfaces.facets_of(exterior))
    else:
        drawn = (box_plate(2.0 * np.asarray(propulsion.half_sizes, dtype=np.float64), np.zeros(3)),)
    if has_thrusters:
        thruster_set = thrusters.thruster_set(propulsion)
        positions, directions = thruster_set.positions, thruster_set.directions
    else:
        positions, directions = np.zeros((0, 3)), np.zeros((0, 3))
    return Spacecraft(drawn, np.array(positions, dtype=np.float64), np.array(directions, dtype=np.float64))
