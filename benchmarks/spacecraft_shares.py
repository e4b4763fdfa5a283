"""Where the spacecraft's env-step goes: ``RigidRot/NadirPoint-v0`` against ``Reorient-v0``.

    python benchmarks/spacecraft_shares.py                # about 5 minutes (a first run compiles)
    python benchmarks/spacecraft_shares.py --repeats 5

Not a test: a measurement, on one machine in one run. The native vector env of 1024 envs on
one thread, under random actions with autoresets (``rigidrot bench throughput``'s timer),
steps ``NadirPoint-v0`` with its parts taken away one after the other (:data:`VARIANTS`,
each the one before with one more part left out, by the scenario's own switches), each
variant alternating with ``Reorient-v0`` in the same process, so that the machine's load
falls on both; a part's cost is the difference of two neighbouring variants' medians, its
share that difference over the full spacecraft's env-step. Then the full spacecraft's step
by phase (:func:`rigidrot_gym.tools.bench.phases.phase_costs`: the Python around the
compiled call, the integration's sub-steps, the rest). The CPU model heads the output.
"""

from __future__ import annotations

import argparse

import numpy as np

import rigidrot_gym  # noqa: F401  (registers the ids)
from rigidrot_gym.tools.bench import throughput
from rigidrot_gym.tools.bench.phases import phase_costs

SPACECRAFT, BARE = "RigidRot/NadirPoint-v0", "RigidRot/Reorient-v0"
_NO_SENSORS = {
    "gyro_model": "none",
    "star_tracker_model": "none",
    "magnetometer_model": "none",
    "sun_sensor_model": "none",
}
_NO_LOADS = {"gravity_gradient": False, "magnetorquers": False, "magnetic_field": False}
_NO_DISTURBANCES = {"disturbance_constant": 0.0, "disturbance_random_walk": 0.0}
# (what the variant leaves out, more than the one before; the scenario's overrides)
VARIANTS: tuple[tuple[str, dict], ...] = (
    ("nothing: the full spacecraft", {}),
    ("the estimator (the MEKF; the truth observed)", {"observe": "truth"}),
    (
        "the sensors (gyro, star tracker, magnetometer, Sun sensors: their noise, the Sun, the "
        "position along the orbit they read)",
        {"observe": "truth", **_NO_SENSORS},
    ),
    (
        "the orbit's loads (gravity gradient, the field and the magnetorquers)",
        {"observe": "truth", **_NO_SENSORS, **_NO_LOADS},
    ),
    ("the disturbances", {"observe": "truth", **_NO_SENSORS, **_NO_LOADS, **_NO_DISTURBANCES}),
    (
        "the wheels' motor and friction (ideal wheels)",
        {"observe": "truth", **_NO_SENSORS, **_NO_LOADS, **_NO_DISTURBANCES, "wheel_model": "ideal"},
    ),
    (
        "the orbit and the moving target (a random fixed target)",
        {
            "observe": "truth",
            **_NO_SENSORS,
            **_NO_LOADS,
            **_NO_DISTURBANCES,
            "wheel_model": "ideal",
            "orbit": False,
            "target_attitude": "random",
        },
    ),
)


def _ns_per_env_step(env_id: str, seconds: float, **overrides) -> float:
    return 1e9 / throughput._vector_rate(env_id, 1024, "vector", seconds, **overrides)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="alternating runs per variant (default 3)")
    parser.add_argument("--seconds", type=float, default=1.5, help="timed seconds per rate")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    print(f"CPU: {throughput.machine()}; 1024 envs, one thread; median of {args.repeats} alternating runs")
    rows = []
    for label, overrides in VARIANTS:
        ours, bare = [], []
        for _ in range(args.repeats):
            bare.append(_ns_per_env_step(BARE, args.seconds))
            ours.append(_ns_per_env_step(SPACECRAFT, args.seconds, **overrides))
        rows.append((label, float(np.median(ours)), float(np.median(np.array(ours) / np.array(bare)))))
    full = rows[0][1]
    print("\n| left out | ns per env-step | × Reorient-v0's | the part's cost, ns | its share |")
    print("|---|---:|---:|---:|---:|")
    for k, (label, ns, ratio) in enumerate(rows):
        part = "" if k == 0 else f"{rows[k - 1][1] - ns:,.0f}"
        share = "" if k == 0 else f"{(rows[k - 1][1] - ns) / full:.0%}"
        print(f"| {label} | {ns:,.0f} | {ratio:.1f} | {part} | {share} |")
    left, ratio = rows[-1][1], rows[-1][2]
    label = "what is left: the wheels, the integration, the evaluation, the autoreset"
    print(f"| {label} | {left:,.0f} | {ratio:.1f} | | {left / full:.0%} |")
    print("\nThe full spacecraft's step by phase (phases.phase_costs, 4096 envs), ns per env-step:\n")
    for phase, ns in phase_costs(SPACECRAFT).items():
        print(f"* {phase}: {ns:,.1f}")


if __name__ == "__main__":
    main()
