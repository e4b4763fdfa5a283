"""The ``rigidrot`` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np


def _demo(args: argparse.Namespace) -> None:
    from rigidrot_gym.tools import demo

    print(demo.run(Path(args.out)))


def _simulate(args: argparse.Namespace) -> None:
    from rigidrot_gym.physics import quaternion as quat
    from rigidrot_gym.physics.propagate import propagate

    inertia = np.array(args.inertia, dtype=float)
    if inertia.size == 9:
        inertia = inertia.reshape(3, 3)
    traj = propagate(
        np.array(args.q0),
        np.array(args.omega),
        inertia,
        args.dt,
        args.steps,
        method=args.method,
        torque=None if args.torque is None else np.array(args.torque),
        substeps=args.substeps,
        torque_frame=args.torque_frame,
    )
    energy, momentum = traj.kinetic_energy, traj.angular_momentum
    print(f"method {traj.method}: {args.steps} steps of {args.dt} s", end=", ")
    print(f"{traj.torque_evaluations} torque evaluations")
    print(f"final q     = {np.array2string(traj.q[-1], precision=12)}")
    print(f"final omega = {np.array2string(traj.omega[-1], precision=12)} rad/s")
    print(f"euler 3-2-1 = {np.array2string(np.degrees(quat.to_euler321(traj.q[-1])), precision=6)} deg")
    print(f"energy drift  = {abs(energy[-1] - energy[0]) / energy[0]:.3e} (relative)")
    drift = np.linalg.norm(momentum[-1] - momentum[0]) / np.linalg.norm(momentum[0])
    print(f"|L| drift     = {drift:.3e} (relative)")
    print(f"max ||q| - 1| = {np.max(np.abs(traj.norm_error)):.3e}")
    if args.out:
        header = "t,qw,qx,qy,qz,wx,wy,wz"
        data = np.column_stack([traj.t, traj.q, traj.omega])
        np.savetxt(args.out, data, delimiter=",", header=header, comments="")
        print(f"wrote {args.out}")


def _crosscheck(args: argparse.Namespace) -> None:
    from rigidrot_gym.tools import crosscheck

    out = Path(args.out)
    results = crosscheck.compare(args.methods, quick=args.quick)
    print(crosscheck.write(out, results))
    if args.animation:
        from rigidrot_gym.tools import animation

        animation.side_by_side(out / "tumbler.gif", quick=args.quick)
    print(f"wrote crosscheck.md, crosscheck.csv, drift.md, drift.csv and the plots to {out}/")


def _bench_accuracy(args: argparse.Namespace) -> None:
    from rigidrot_gym.tools.bench import accuracy

    print(accuracy.run(Path(args.out), quick=args.quick).text)


def _bench_throughput(args: argparse.Namespace) -> None:
    from rigidrot_gym.tools.bench import throughput

    print(throughput.run(Path(args.out), quick=args.quick).text)


def _bench_control(args: argparse.Namespace) -> None:
    from rigidrot_gym.control import CONTROLLERS
    from rigidrot_gym.tools.bench import control

    policies = {}
    for name in args.policies or list(CONTROLLERS):
        if name in CONTROLLERS:
            policies[name] = CONTROLLERS[name]
        elif Path(name).is_dir():
            from rigidrot_gym.control import agents

            agent = agents.load(name)
            policies[f"agent {Path(name).name}"] = lambda scenario, agent=agent: agent.for_scenario(scenario)
        else:
            raise ValueError(
                f"policy {name!r} is neither a controller ({', '.join(CONTROLLERS)}) nor a run folder"
            )
    summaries, traces = control.benchmark(
        policies,
        args.scenarios or control.DEFAULT_SCENARIOS,
        args.integrators or control.DEFAULT_INTEGRATORS,
        seeds=range(args.seeds),
        scales=args.inertia_scales or control.INERTIA_SCALES,
    )
    print(control.write(Path(args.out), summaries, traces))
    print(f"wrote {args.out}/control.md, control.csv, control.png")


def _add_bench(sub: argparse._SubParsersAction) -> None:
    """``rigidrot bench <name>``: one sub-command per benchmark (add_parser on ``benches``)."""
    bench = sub.add_parser("bench", help="benchmarks of the integrators")
    benches = bench.add_subparsers(dest="bench", required=True)

    acc = benches.add_parser("accuracy", help="error against cost of every method on three problems")
    acc.add_argument(
        "--out",
        default="benchmarks/results/accuracy",
        help="output folder (default: benchmarks/results/accuracy)",
    )
    acc.add_argument("--quick", action="store_true", help="small batch, short runs: seconds, for tests")
    acc.set_defaults(run=_bench_accuracy)

    thr = benches.add_parser(
        "throughput", help="env steps/s against Pendulum-v1 and CartPole-v1's vector env"
    )
    thr.add_argument("--out", default="benchmarks/results/throughput", help="output folder")
    thr.add_argument("--quick", action="store_true", help="short runs, small batches: seconds, for tests")
    thr.set_defaults(run=_bench_throughput)

    ctl = benches.add_parser(
        "control", help="controllers and trained agents over scenarios × integrators × seeds"
    )
    ctl.add_argument(
        "--policies",
        nargs="+",
        help="controller names and/or training run folders (default: every controller)",
    )
    ctl.add_argument(
        "--scenarios", nargs="+", help="scenario ids (default: Reorient-v0 and WheelReorient-v0)"
    )
    ctl.add_argument("--integrators", nargs="+", help="default: semi_implicit, pybullet, rk4, nielsen_krenk")
    ctl.add_argument("--inertia-scales", type=float, nargs="+", help="true / estimate (default: 1, 0.8, 1.2)")
    ctl.add_argument("--seeds", type=int, default=20, help="episodes per case")
    ctl.add_argument("--out", default="benchmarks/results/control", help="output folder")
    ctl.set_defaults(run=_bench_control)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``rigidrot`` and its subcommands."""
    from rigidrot_gym.physics import integrators

    parser = argparse.ArgumentParser(prog="rigidrot", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)

    demo = sub.add_parser("demo", help="every method on a built-in tumbler, against the exact solution")
    demo.add_argument("--out", default="outputs/demo", help="output folder (default: outputs/demo)")
    demo.set_defaults(run=_demo)

    sim = sub.add_parser("simulate", help="propagate one body and print its final state and drifts")
    sim.add_argument(
        "--inertia", type=float, nargs="+", default=[1.0, 2.0, 3.0], help="3 moments or 9 tensor entries"
    )
    sim.add_argument("--omega", type=float, nargs=3, default=[0.01, 2.0, 0.01], help="body rates (rad/s)")
    sim.add_argument("--q0", type=float, nargs=4, default=[1.0, 0.0, 0.0, 0.0], help="attitude w x y z")
    sim.add_argument("--dt", type=float, default=0.01, help="step (s)")
    sim.add_argument("--steps", type=int, default=1000)
    sim.add_argument("--substeps", type=int, default=1)
    sim.add_argument("--method", default="rk4", choices=integrators.names())
    sim.add_argument("--torque", type=float, nargs=3, default=None, help="constant torque (N·m)")
    sim.add_argument("--torque-frame", choices=("body", "world"), default="body")
    sim.add_argument("--out", default=None, help="write the trajectory as CSV")
    sim.set_defaults(run=_simulate)

    cross = sub.add_parser(
        "crosscheck",
        help="game engines (PyBullet, MuJoCo, Basilisk) against our methods and the exact solution",
    )
    cross.add_argument("--methods", nargs="+", help="default: every engine variant and our methods of OURS")
    cross.add_argument("--quick", action="store_true", help="short problems and runs: seconds, for tests")
    cross.add_argument(
        "--animation", action="store_true", help="also write tumbler.gif (exact, PyBullet, MuJoCo, game step)"
    )
    cross.add_argument(
        "--out", default="outputs/crosscheck", help="output folder (default: outputs/crosscheck)"
    )
    cross.set_defaults(run=_crosscheck)

    _add_bench(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rigidrot`` console script."""
    args = build_parser().parse_args(argv)
    try:
        args.run(args)
    except ValueError as err:
        print(f"rigidrot: error: {err}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
