"""Row and column numbers of what a control period writes for each body: the observation's
first block and the per-body outputs and results.

A leaf module: the components' compiled code reads these numbers, and
:mod:`~rigidrot_gym.attitude.data` (which re-exports them) derives its records from the
components' declarations, so they cannot live there without an import cycle.
"""

from __future__ import annotations

# What the observation shows of the attitude and rates (Features.observed): the true
# state, the sensors' readings or the estimator's estimate.
TRUTH, SENSORS, ESTIMATE = 0, 1, 2

# Observation: error quaternion (4) and body rates (3), then the columns the components
# add (task.observation_columns).
OBS_SIZE = 7

# Rows of the per-body outputs: ``Outputs.values`` (VALUES, N) the reward, the pointing
# error (deg) and |ω| (rad/s); ``Outputs.flags`` (FLAGS, N, booleans, which a vector env
# hands out as they are) SUCCESS, the task's success (the tolerance held for
# ``success_hold_steps`` consecutive steps, at least one), TERMINATED, TRUNCATED and
# IN_TOLERANCE, the step's own.
REWARD, POINTING_DEG, RATE = range(3)
VALUES = 3
SUCCESS, TERMINATED, TRUNCATED, IN_TOLERANCE = range(4)
FLAGS = 4

# Rows of Work.results: the observation of the true state (the error quaternion, then the
# scaled rates), its pointing error (rad), |ω| (rad/s) and Σ a_k² of the clipped actions.
OBSERVED, ANGLE, SPEED, EFFORT = slice(0, 7), 7, 8, 9
