"""The spacecraft's surroundings, in the frames and time of
:mod:`~rigidrot_gym.physics.environment.earth` (constants, time, the Earth-fixed frame):
:mod:`~rigidrot_gym.physics.environment.orbit` (Keplerian orbits with J₂ drift),
:mod:`~rigidrot_gym.physics.environment.sun` (the Sun's position and the Earth's shadow) and
:mod:`~rigidrot_gym.physics.environment.geomagnetic` (the IGRF centred dipole).
"""
