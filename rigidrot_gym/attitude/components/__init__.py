"""The components of a control period, one module each, in the order the pipeline runs
them (:mod:`~rigidrot_gym.attitude.pipeline`):

1. the action: :mod:`.torquers` (ideal torquers: the body torque held from the action,
   the plain task) or :mod:`.actions` (the action clipped for the actuators below);
2. the actuators: :mod:`.delay`, :mod:`.actuator_noise`, :mod:`.wheels` (the commanded
   torques after delay, noise and momentum limits);
3. the loads: :mod:`.loads` (the torque parameters held over the period: actuators,
   wheel momentum, :mod:`.disturbances`, :mod:`.gravity_gradient`, and the dipole of the
   :mod:`.magnetorquers` and the field);
4. the integration: :mod:`.integration` (the library's method over the period, staged,
   then checked, the rods off for the first sub-steps of their duty cycle; or an engine
   between two compiled calls);
5. the commit, then the actuators' and disturbances' own state moves on (wheel momenta,
   the random walk, the pending action);
6. a moving target: :mod:`.targets` (the LVLH or Sun frame and its rate); the sensors:
   :mod:`.sensors` (Gaussian noise on the state), or the spacecraft's own, :mod:`.gyro`,
   :mod:`.star_tracker`, :mod:`.magnetometer` and :mod:`.sun_sensors`, with the MEKF
   between them and the agent and the choice of what it observes (:mod:`.navigation`);
7. the evaluation: :mod:`.evaluation` (observation, reward and flags: one implementation
   for every path; with a moving target, rates relative to its), and
   :mod:`.magnetic_field` and :mod:`.sunlight` at each body's position on its
   :mod:`.orbit` at its new episode time;
8. the autoreset: :mod:`.restart` (the waiting bodies' new episodes, drawn in the call).

Each is component-wise source over :mod:`~rigidrot_gym.physics.plumbing.jit`'s primitives and the
named data of :mod:`~rigidrot_gym.attitude.data`: a function of one body, or of a block of
bodies ``lo`` … ``hi`` − 1 when its loop must vectorise. A component that a scenario does
not enable is not compiled into its kernel (:class:`~rigidrot_gym.attitude.data.Features`).
"""
