"""The named stages of a control period, one module each, in the order the period runs
them (:mod:`~rigidrot_gym.attitude.pipeline` assembles them into one compiled call):

1. :mod:`.act`: the action read (ideal torquers hold their body torque: the plain task's
   whole actuation; else the action clipped for the actuators);
2. :mod:`.actuate`: each actuator's torque after delay, noise and the wheels' limits;
3. :mod:`.load`: the torque parameters held over the period (in the same pass as 2, body
   by body);
4. :mod:`.integrate`: the method's step over the period, staged, then checked (or, after
   an engine's, the rates integrated over the period for a gyro);
5. :mod:`.restart`: once every check has passed, the autoreset's draws (the whole batch);
6. :mod:`.advance`: the actuators' and disturbances' state moves on;
7. :mod:`.sense`: a moving target, then the sensors at the staged states, and, in the
   same pass, body by body, 8. :mod:`.estimate`: the MEKF and what the observation shows;
9. :mod:`.evaluate`: observation, reward and flags, and 10. :mod:`.observe`: the
   components' own columns and flags.

Restart comes after the integration's checks, not last: a period that fails must change
nothing the caller keeps, and the new episodes are evaluated like every body's.

Each stage is a top-level factory (``stage``) that builds, for the
:class:`~rigidrot_gym.attitude.data.Features` a scenario enables (and the method's step
and torque model where it needs them), the stage's compiled function: a closure over
constants, so that numba prunes what the scenario does not use. Each works on a block of
bodies ``lo`` … ``hi`` − 1 or on one body ``i``, over the components of
:mod:`~rigidrot_gym.attitude.components`; where it runs one hook per component, the hooks
are chained when it is built (:mod:`.hooks`). Each module's docstring says what its stage
reads and writes.
"""

from __future__ import annotations

import numpy as np

FIRST_STREAM = np.uint64(0)  # the first stream's salt: each body's key as it is (variates.block_normals)
