"""Drawing a rigid body with PyBullet's TinyRenderer (the ``[render]`` extra).

* :mod:`~rigidrot_gym.render.geometry`: the ellipsoid of inertia and arrow orientations;
* :mod:`~rigidrot_gym.render.scene`: the drawn objects in a PyBullet client;
* :mod:`~rigidrot_gym.render.spacecraft`: a spacecraft's surfaces or parts and thrusters as convex solids;
* :mod:`~rigidrot_gym.render.renderer`: :class:`BodyRenderer`, client, camera and frames;
* :mod:`~rigidrot_gym.render.options`: its frame and camera options, checked without PyBullet;
* :mod:`~rigidrot_gym.render.frames`: pixels to RGB, tiling frames of a vector env;
* :mod:`~rigidrot_gym.render.overlay`: the optional legend and readout drawn onto a frame.

Importing this package does not import PyBullet; creating a renderer does.
"""

from rigidrot_gym.render.frames import tile
from rigidrot_gym.render.geometry import ellipsoid_semi_axes
from rigidrot_gym.render.renderer import BodyRenderer

__all__ = ["BodyRenderer", "ellipsoid_semi_axes", "tile"]
