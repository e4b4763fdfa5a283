"""Long compiled runs: cut into chunks so that Ctrl-C reaches them, and bitwise the same
as the run in one kernel call (issue 12, item 6)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from rigidrot_gym.physics.plumbing import validation
from rigidrot_gym.physics.rotation import integrators, torques
from rigidrot_gym.physics.rotation.integrators.base import FIRST_CHUNK
from rigidrot_gym.physics.rotation.propagate import propagate
from rigidrot_gym.physics.rotation.torques import BodyTorque, GravityGradient, WheelMomentum

ROOT = Path(__file__).resolve().parents[1]
I_ASYM = np.array([1.0, 2.0, 3.0])
Q0 = np.array([0.9, 0.2, -0.3, 0.25]) / np.linalg.norm([0.9, 0.2, -0.3, 0.25])
W0 = np.array([0.4, 1.1, -0.3])


def _one_call(method, steps, substeps, dt, torque=None, renormalize=False, **options):
    """The run as a single kernel call over all its sub-steps (principal axes, one body)."""
    m = integrators.get(method)
    state = np.zeros((1, 8))
    state[0, :4], state[0, 4:7] = validation.unit_quaternions(Q0), W0
    loads = torques.resolve(torque, "body", (), None, I_ASYM)
    traj, stats = m.buffers(1, steps)
    momentum = np.zeros((1, 3)) if renormalize else np.zeros((0, 3))
    opts = m.pack_options(options)
    m.kernel(not loads.params[:, torques.WORLD :].any(), renormalize)(
        state,
        I_ASYM[None],
        loads.params,
        0.0,
        dt,
        substeps,
        0,
        steps * substeps,
        opts,
        momentum,
        traj.transpose(0, 2, 1),  # the kernel records component-major
        stats,
    )
    return traj[:, 0, :4], traj[:, 0, 4:7]


@pytest.mark.parametrize(
    ("method", "kwargs"),
    [
        # Time-dependent torques (wheel momentum h(t), orbit phase), and rkn's projection
        # cadence counted on the global sub-step index.
        (
            "rkn",
            {
                "torque": [
                    BodyTorque([0.01, -0.02, 0.015]),
                    WheelMomentum([0.1, 0.0, 0.2], [0.001, 0.002, -0.001]),
                    GravityGradient(1e-3, 0.3),
                ],
                "project_every": 7,
            },
        ),
        # The initial world momentum, computed by the first chunk, carried to the others.
        ("rk4", {"renormalize": True}),
    ],
)
def test_a_run_cut_into_chunks_is_bitwise_the_run_in_one_call(method, kwargs):
    steps, substeps, dt = 30_000, 3, 0.003
    # More sub-steps than the first chunk, which ends inside a step (FIRST_CHUNK % 3 = 1).
    assert steps * substeps > FIRST_CHUNK and FIRST_CHUNK % substeps != 0
    renormalize = kwargs.pop("renormalize", False)
    traj = propagate(
        Q0, W0, I_ASYM, dt, steps, method, substeps=substeps, renormalize_momentum=renormalize, **kwargs
    )
    q, w = _one_call(method, steps, substeps, dt, renormalize=renormalize, **kwargs)
    assert np.array_equal(traj.q, q)
    assert np.array_equal(traj.omega, w)


CHILD = """
import signal, sys
# A shell starts background jobs with SIGINT ignored, and children inherit that.
signal.signal(signal.SIGINT, signal.default_int_handler)
from rigidrot_gym.physics import propagate
propagate([1, 0, 0, 0], [0.1, 0.2, 0.3], [1, 2, 3], 0.1, 1, method="rk4")  # compiled before the clock
print("running", flush=True)
try:
    propagate([1, 0, 0, 0], [0.1, 0.2, 0.3], [1, 2, 3], 1.0, 1, method="rk4", substeps=2**40)
except KeyboardInterrupt:
    print("interrupted", flush=True)
    sys.exit(3)
print("finished", flush=True)
"""


@pytest.mark.slow
def test_ctrl_c_interrupts_a_long_compiled_run():
    """2**40 sub-steps take about a day; SIGINT must stop them within seconds."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    watchdog = threading.Timer(900, child.kill)  # a first compilation may take minutes on a busy machine
    watchdog.start()
    try:
        assert child.stdout.readline().strip() == "running"
        threading.Event().wait(0.5)
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=15)
    finally:
        watchdog.cancel()
        child.kill()
    assert child.returncode == 3, (out, err)
    assert out.strip() == "interrupted"
