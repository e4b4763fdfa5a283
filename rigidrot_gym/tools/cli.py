"""The ``rigidrot`` command line: ``rigidrot demo``, ``compile``, ``simulate``, ``crosscheck``,
``train``, ``evaluate``, ``export``, ``serve`` and ``bench``.

Every sub-command documents itself (``rigidrot COMMAND --help``, defaults shown). Tools
that write files write them into ``outputs/<tool>/`` unless ``--out`` names another folder;
``rigidrot train`` keeps rl-baselines3-zoo's run folders, ``logs/`` unless ``-f`` names another.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from gymnasium.error import DependencyNotInstalled

import rigidrot_gym


def _demo(args: argparse.Namespace) -> None:
    from rigidrot_gym.tools import demo

    print(demo.run(Path(args.out), args.workers))


def _compile(args: argparse.Namespace) -> None:
    from rigidrot_gym.tools import precompile

    print(precompile.run(args.ids, args.integrators, args.workers))


def _simulate(args: argparse.Namespace) -> None:
    from rigidrot_gym.physics.rotation import quaternion as quat
    from rigidrot_gym.physics.rotation.propagate import propagate

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
    print(f"method {traj.method}: {args.steps} steps of {args.dt} s", end=", ")
    print(f"{traj.torque_evaluations} torque evaluations")
    print(f"final q     = {np.array2string(traj.q[-1], precision=12)}")
    print(f"final omega = {np.array2string(traj.omega[-1], precision=12)} rad/s")
    print(f"euler 3-2-1 = {np.array2string(np.degrees(quat.to_euler321(traj.q[-1])), precision=6)} deg")
    # The library's drifts (Trajectory): the largest change over the run, relative.
    print(f"energy drift  = {traj.relative_energy_drift:.3e} (relative, max over the run)")
    print(f"|L| drift     = {traj.relative_momentum_drift:.3e} (relative, max over the run)")
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


def _train(args: argparse.Namespace) -> None:
    from rigidrot_gym.tools import train

    train.run(args.zoo_options)


def _evaluate(args: argparse.Namespace) -> None:
    from rigidrot_gym.tools import evaluate

    evaluate.run(args)


def _export(args: argparse.Namespace) -> None:
    from rigidrot_gym.tools import export

    print(export.run(args.run_dir, Path(args.out)))


def _serve(args: argparse.Namespace) -> None:
    from rigidrot_gym.tools import serve

    serve.run(args)


def _bench_accuracy(args: argparse.Namespace) -> None:
    from rigidrot_gym.tools.bench import accuracy

    print(accuracy.run(Path(args.out), quick=args.quick).text)


def _bench_throughput(args: argparse.Namespace) -> None:
    from rigidrot_gym.tools.bench import throughput

    print(throughput.run(Path(args.out), quick=args.quick).text)


def _bench_spacecraft(args: argparse.Namespace) -> None:
    from rigidrot_gym.tools.bench import spacecraft

    print(spacecraft.run(Path(args.out), quick=args.quick).text)


def _bench_control(args: argparse.Namespace) -> int:
    from rigidrot_gym.attitude.scenario import find
    from rigidrot_gym.control import CONTROLLERS
    from rigidrot_gym.tools.bench import campaign, control, policies

    # --seeds is a count (the seeds are 0 ... N-1), unlike plan's seeds: checked here, by its name.
    for option, value, what in (
        ("--seeds", args.seeds, "episodes per case"),
        ("--block-size", args.block_size, "seeds per task"),
    ):
        if value < 1:
            raise ValueError(f"{option} {value}: expected the number of {what}, a whole number >= 1")
    scales = args.inertia_scales or control.INERTIA_SCALES
    if not all(np.isfinite(scale) and scale > 0 for scale in scales):
        shown = " ".join(f"{scale:g}" for scale in scales)
        raise ValueError(f"--inertia-scales {shown}: expected positive numbers (true inertia / the estimate)")
    makers = policies.resolve(args.policies or list(CONTROLLERS))
    scenarios = [find(name) for name in args.scenarios or control.DEFAULT_SCENARIOS]
    tasks = control.plan(
        makers,
        scenarios,
        args.integrators or control.DEFAULT_INTEGRATORS,
        seeds=range(args.seeds),
        scales=scales,
        block_size=args.block_size,
    )
    out = Path(args.out).resolve()
    shards = out / "shards"
    blocks = campaign.run(
        tasks,
        makers,
        shards,
        resume=args.resume,
        use_ray=args.ray or args.address is not None,
        address=args.address,
        cpus_per_task=args.cpus_per_task,
        progress=not args.no_progress,
    )
    summaries, traces = control.gather(tasks, blocks)
    print(control.write(out, summaries, traces, tasks))
    episodes = sum(len(t.seeds) for t in tasks)
    print(f"{len(tasks)} tasks, {episodes} episodes; blocks in {shards}")
    for reason in control.pairs(makers, scenarios)[1]:
        print(f"left out: {reason}")
    print(f"wrote {out}/control.md, control.csv, control.png")
    # A failed entry is in the output (its line in control.md and above, its row in
    # control.csv with the reason) and the status: 1, the other rows written.
    return 1 if control.failure_lines(summaries) else 0


def _bench_suite(args: argparse.Namespace) -> int:
    from rigidrot_gym.tools.bench import leaderboard, suite

    chosen = suite.standard(args.tasks, args.seeds)
    makers = suite.makers_for(args.policies or ())
    out = Path(args.out).resolve()
    standard = chosen.version == suite.standard().version
    print(
        f"suite {chosen.version} ({'the standard suite' if standard else 'a part of the standard suite'}): "
        f"{len(chosen.scenarios)} tasks, {len(chosen.seeds)} seeds, {len(makers)} entries",
        flush=True,
    )
    results = suite.run(
        chosen,
        makers,
        out / "shards",
        resume=args.resume,
        use_ray=args.ray or args.address is not None,
        address=args.address,
        cpus_per_task=args.cpus_per_task,
        progress=not args.no_progress,
    )
    paths = [result.save(out / "entries") for result in results]
    print(leaderboard.write(out, leaderboard.build(results)))
    print(f"wrote {len(paths)} result files into {out / 'entries'}")
    print(f"wrote {out}/leaderboard.md, leaderboard.csv, leaderboard.png, metrics.md, metrics.csv")
    return 1 if any(run.failure for result in results for run in result.runs) else 0


def _bench_leaderboard(args: argparse.Namespace) -> None:
    from rigidrot_gym.tools.bench import leaderboard, suite

    files = []
    for path in map(Path, args.results):
        if path.is_dir():
            folder = path / "entries" if (path / "entries").is_dir() else path
            files += sorted(folder.glob("*.json"))
        elif path.is_file():
            files.append(path)
        else:
            raise ValueError(f"results: {path} is neither a result file nor a folder")
    if not files:
        raise ValueError(f"results: no result files (*.json) in {' '.join(args.results)}")
    board = leaderboard.build([suite.load(path) for path in files])
    current = suite.standard().version
    out = Path(args.out).resolve()
    print(leaderboard.write(out, board))
    print(
        f"suite {board.version}: "
        + ("this package's standard suite" if board.version == current else f"not this package's ({current})")
    )
    print(f"wrote {out}/leaderboard.md, leaderboard.csv, leaderboard.png, metrics.md, metrics.csv")


def _bench_ray(args: argparse.Namespace) -> None:
    from rigidrot_gym.tools.bench import distributed

    out = Path(args.out).resolve()
    print(
        distributed.run(
            out, args.address, args.seeds, args.block_sizes, args.repeats, progress=not args.no_progress
        )
    )
    print(f"wrote {out}/ray.md, ray.csv")


# Every tool writes into a folder of its own under outputs/ unless --out names another;
# the committed results in benchmarks/results/ change only when --out points there.
OUTPUTS = Path("outputs")


def _command(
    sub: argparse._SubParsersAction, name: str, summary: str, description: str, run
) -> argparse.ArgumentParser:
    """A sub-command whose help shows ``description`` as written and every default."""
    parser = sub.add_parser(name, help=summary, description=description, formatter_class=_Formatter)
    parser.set_defaults(run=run)
    return parser


def _out(parser: argparse.ArgumentParser, tool: str) -> None:
    parser.add_argument(
        "--out",
        type=Path,
        default=OUTPUTS / tool,
        help="output folder (created if missing); the committed results are benchmarks/results/"
        f"{tool}, written only when named here",
    )


def _campaign_options(parser: argparse.ArgumentParser) -> None:
    """The options of a campaign's run (:func:`rigidrot_gym.tools.bench.campaign.run`):
    ``--resume``, ``--ray``, ``--address``, ``--cpus-per-task``, ``--no-progress``."""
    parser.add_argument("--resume", action="store_true", help="keep the blocks already stored in OUT/shards")
    parser.add_argument("--ray", action="store_true", help="run the tasks on Ray (the [ray] extra)")
    parser.add_argument(
        "--address", help="Ray cluster to join (implies --ray): auto, IP:PORT or ray://HOST:10001"
    )
    parser.add_argument("--cpus-per-task", type=float, default=1.0, help="CPUs Ray reserves per task")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


class _Formatter(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """Defaults shown after each option's help (not the ``None`` of an option whose help
    says what happens without it, nor the ``False`` of a switch); descriptions kept as written."""

    def _get_help_string(self, action: argparse.Action) -> str:
        if action.default is None or action.default is False:
            return action.help or ""
        return super()._get_help_string(action)


def _add_bench(sub: argparse._SubParsersAction) -> None:
    """``rigidrot bench <name>``: one sub-command per benchmark."""
    bench = sub.add_parser(
        "bench",
        help="benchmarks: accuracy, throughput, spacecraft, controllers, the suite and its leaderboard, Ray",
        description="Benchmarks. Each writes a Markdown table, a CSV file and a plot into its output folder.",
        formatter_class=_Formatter,
    )
    benches = bench.add_subparsers(
        dest="bench", required=True, metavar="{accuracy,throughput,spacecraft,control,suite,leaderboard,ray}"
    )

    acc = _command(
        benches,
        "accuracy",
        "error against cost of every integrator on three problems",
        "Every integrator on a free body, an intermediate-axis tumbler and a heavy top, at\n"
        "several step sizes, against the exact solution or a tight DOP853 reference: error,\n"
        "measured order, energy and momentum drift, and cost (about 4 minutes; --quick: seconds).",
        _bench_accuracy,
    )
    _out(acc, "accuracy")
    acc.add_argument("--quick", action="store_true", help="4 bodies, short runs: seconds instead of minutes")

    thr = _command(
        benches,
        "throughput",
        "env steps per second against Gymnasium's Pendulum-v1 and CartPole-v1",
        "Steps per second of the single env and of the native vector env, as ratios against\n"
        "Gymnasium peers measured in the same run; the numba compile and cache-load times; the\n"
        "cost of a rendered frame.",
        _bench_throughput,
    )
    _out(thr, "throughput")
    thr.add_argument("--quick", action="store_true", help="short runs, small batches: seconds")

    craft = _command(
        benches,
        "spacecraft",
        "MagDetumble-v0's and NadirPoint-v0's spacecraft: our vector env against Basilisk",
        "The cost per body per simulated second of RigidRot/MagDetumble-v0's spacecraft (orbit,\n"
        "geomagnetic field, magnetorquers, RK4) and of RigidRot/NadirPoint-v0's (with the gravity\n"
        "gradient, four reaction wheels and the sensors; ours with its MEKF and with the truth\n"
        "observed, Basilisk without the filter) in our native vector env and in Basilisk running\n"
        "the same spacecraft, in one run (needs the basilisk extra; about two minutes).",
        _bench_spacecraft,
    )
    _out(craft, "spacecraft")
    craft.add_argument("--quick", action="store_true", help="short runs, a small batch: seconds")

    ctl = _command(
        benches,
        "control",
        "controllers and trained agents over scenarios, integrators and seeds",
        "Runs every policy (classical controllers by name, trained agents by folder, your own\n"
        "as package.module:Name) over scenarios x integrators x true-inertia scales x seeds,\n"
        "every integrator at every scale: success rate, settling time, final and RMS pointing\n"
        "error, control effort, peak rate, and where they apply propellant burnt and wheel\n"
        "momentum used. A policy that does not apply to a scenario (a controller that cannot\n"
        "command its actuators, an agent trained on another) is left out of it, and said so;\n"
        "with no pair left, an error. A policy that fails in a run (raises, returns an action\n"
        "of the wrong shape or not finite) is a failed entry, named with the reason\n"
        "('failed: ...'), and the others run; the exit status is then 1 (2: an error).",
        _bench_control,
    )
    from rigidrot_gym.control import CONTROLLERS

    ctl.add_argument(
        "--policies",
        nargs="+",
        help=f"controller names ({', '.join(CONTROLLERS)}), trained-agent folders and/or "
        "importable policies package.module:Name (a class or factory: built with "
        "for_scenario(scenario) where it has one, else with no arguments; the current folder "
        "is searched too) (default: every controller)",
    )
    ctl.add_argument(
        "--scenarios",
        nargs="+",
        help=f"env ids ({', '.join(rigidrot_gym.ENV_IDS)}) or scenario files "
        "(default: RigidRot/Reorient-v0 and RigidRot/WheelReorient-v0)",
    )
    ctl.add_argument("--integrators", nargs="+", help="default: semi_implicit, pybullet, rk4, nielsen_krenk")
    ctl.add_argument(
        "--inertia-scales",
        type=float,
        nargs="+",
        help="true inertia / the controllers' estimate (default: 1 0.8 1.2)",
    )
    ctl.add_argument("--seeds", type=int, default=20, help="episodes per case: seeds 0, 1, ..., SEEDS - 1")
    ctl.add_argument("--block-size", type=int, default=1000, help="seeds per task (one vector env)")
    _out(ctl, "control")
    _campaign_options(ctl)

    suite_parser = _command(
        benches,
        "suite",
        "the versioned suite: every task, held-out seeds, dispersions, a leaderboard",
        "Runs the standard suite: every task id, the held-out seeds 10000-10099 (none a\n"
        "training start), each task's dispersions (as defined, true inertia x0.8 and x1.2, a\n"
        "randomised body where the task randomises none, a failing wheel or thruster where the\n"
        "task has them and no fault of its own), on each\n"
        "task's own integrator and on the game-engine step semi_implicit. The entries: the zero\n"
        "action and every classical controller (the score's 0 and 1), and the --policies asked\n"
        "for. Writes one result file per entry (OUT/entries/*.json, stamped with the suite's\n"
        "version hash and the package version) and the leaderboard: normalised scores (IQM\n"
        "with 95% bootstrap intervals, rliable), per-task measures, a plot. --tasks or --seeds\n"
        "run a part of the suite, which has a version of its own. Exit status 1 if an entry\n"
        "failed in a run (named, 'failed: ...'), 2 on an error.",
        _bench_suite,
    )
    suite_parser.add_argument(
        "--policies",
        nargs="+",
        help="entries besides the references: trained-agent folders and/or importable policies "
        "package.module:Name (built with for_scenario(scenario) where it has one, else with no "
        "arguments; the current folder is searched too)",
    )
    suite_parser.add_argument("--tasks", nargs="+", help="only these task ids (default: every task)")
    suite_parser.add_argument("--seeds", type=int, help="only the first SEEDS held-out seeds (default: 100)")
    _out(suite_parser, "suite")
    _campaign_options(suite_parser)

    board = _command(
        benches,
        "leaderboard",
        "the leaderboard of suite result files, remade without running anything",
        "Reads result files of rigidrot bench suite (files, or folders holding them or an\n"
        "entries/ folder of them), checks each against the suite version it states and refuses\n"
        "to mix versions, and writes the leaderboard: normalised scores with 95% bootstrap\n"
        "intervals, per-task measures, a plot. It loads no model and runs no entry's code.\n\n"
        "example: rigidrot bench leaderboard benchmarks/results/suite --out benchmarks/results/suite",
        _bench_leaderboard,
    )
    board.add_argument("results", nargs="+", help="result files or folders")
    _out(board, "leaderboard")

    dist = _command(
        benches,
        "ray",
        "a control campaign in one process against a Ray cluster",
        "The control campaign of four controllers on both scenarios, run alternately in this\n"
        "process and on a Ray cluster (by default two 1-CPU nodes started on this machine):\n"
        "wall times, speed-up, the round trip of an empty task, the overhead per task; the\n"
        "cluster's tables are checked equal to the local ones bit for bit (the [ray] extra).",
        _bench_ray,
    )
    dist.add_argument("--address", help="Ray cluster (default: start two local 1-CPU nodes)")
    dist.add_argument("--seeds", type=int, default=1000, help="episodes per case (40 cases)")
    dist.add_argument("--block-sizes", type=int, nargs="+", default=[1000, 250], help="seeds per task")
    dist.add_argument("--repeats", type=int, default=3, help="alternating runs per side (median)")
    _out(dist, "ray")
    dist.add_argument("--no-progress", action="store_true", help="no progress bars")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``rigidrot`` and its subcommands."""
    import rigidrot_gym
    from rigidrot_gym.physics.rotation import integrators

    parser = argparse.ArgumentParser(
        prog="rigidrot",
        description="Accurate rigid-body rotation: run the demo, integrate one body, cross-check PyBullet,\n"
        "train, evaluate and export agents, benchmark the integrators and the controllers.\n"
        "`rigidrot COMMAND --help` explains a command.",
        formatter_class=_Formatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {rigidrot_gym.__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    demo = _command(
        sub,
        "demo",
        "every integrator on a tumbling body against the exact solution, then a controller",
        "Every integrator follows an intermediate-axis tumbler (I = (1, 2, 3) kg m^2,\n"
        "w0 = (0.01, 2, 0.01) rad/s, dt = 0.01 s, 30 s) and is compared with the exact solution;\n"
        "then a quaternion-feedback controller flies one episode of RigidRot/Reorient-v0.\n"
        "Writes a table, a plot and (with the [render] extra) an animation.",
        _demo,
    )
    _out(demo, "demo")
    demo.add_argument(
        "--workers", type=int, default=None, help="processes the demo's parts run on (default: one per core)"
    )

    sim = _command(
        sub,
        "simulate",
        "integrate one body and print its final state and drifts",
        "Integrates one rigid body from the attitude q0 and body rates --omega with the chosen\n"
        "method, optionally under a constant torque, and prints the final attitude, rates,\n"
        "3-2-1 Euler angles and the drift of energy, angular momentum and |q|.\n\n"
        "example: rigidrot simulate --inertia 1 2 3 --omega 0.01 2 0.01 --dt 0.01 --steps 3000 --method rk4",
        _simulate,
    )
    sim.add_argument(
        "--inertia",
        type=float,
        nargs="+",
        default=[1.0, 2.0, 3.0],
        help="3 principal moments or 9 tensor entries, kg m^2",
    )
    sim.add_argument("--omega", type=float, nargs=3, default=[0.01, 2.0, 0.01], help="body rates, rad/s")
    sim.add_argument(
        "--q0", type=float, nargs=4, default=[1.0, 0.0, 0.0, 0.0], help="attitude w x y z, body to world"
    )
    sim.add_argument("--dt", type=float, default=0.01, help="step, s")
    sim.add_argument("--steps", type=int, default=1000, help="number of steps")
    sim.add_argument("--substeps", type=int, default=1, help="integration steps per recorded step")
    sim.add_argument("--method", default="rk4", choices=integrators.names(), help="integrator")
    sim.add_argument(
        "--torque", type=float, nargs=3, default=None, help="constant torque, N m (default: none)"
    )
    sim.add_argument("--torque-frame", choices=("body", "world"), default="body", help="frame of --torque")
    sim.add_argument("--out", type=Path, default=None, help="also write the trajectory to this CSV file")

    comp = _command(
        sub,
        "compile",
        "compile the kernels of environment ids ahead of their first use",
        "Resets and steps each id's single env and a native vector env once, so that numba\n"
        "compiles their kernels into its on-disk cache now rather than at a first use (5 to\n"
        "16 s an id on a 2-core machine; the ids run in parallel): for a Dockerfile, a CI step\n"
        "or a cluster's set-up. The cache holds for this machine's CPU model and this\n"
        "installation of the package.",
        _compile,
    )
    comp.add_argument(
        "ids",
        nargs="*",
        help=f"environment ids (default: every built-in id: {', '.join(rigidrot_gym.ENV_IDS)})",
    )
    comp.add_argument(
        "--integrators",
        nargs="+",
        choices=integrators.names(),
        metavar="NAME",
        help="integrators to compile for (default: each scenario's own); one of "
        + ", ".join(integrators.names()),
    )
    comp.add_argument("--workers", type=int, default=None, help="processes at once (default: one per core)")

    cross = _command(
        sub,
        "crosscheck",
        "game engines (PyBullet, MuJoCo, Basilisk) against our integrators and the exact solution",
        "Runs every engine variant (PyBullet multibody and maximal coordinates; MuJoCo euler,\n"
        "implicitfast, implicit, rk4; Basilisk rk4, rkf45, rkf78) beside our methods on an\n"
        "intermediate-axis tumbler, a constant body torque and a fast symmetric spin, at steps\n"
        "0.4 s ... 1/2560 s: attitude error against the exact solution (DOP853 under torque),\n"
        "energy and |L| drift, flip period, measured order, cost, times cheaper at equal error;\n"
        "10^5 steps of drift; MuJoCo's damping per step. Needs the [render], [mujoco] and [basilisk] extras.",
        _crosscheck,
    )
    cross.add_argument(
        "--methods", nargs="+", default=None, help="methods to run (default: every engine variant and ours)"
    )
    cross.add_argument("--quick", action="store_true", help="short problems and runs: seconds, for tests")
    cross.add_argument(
        "--animation", action="store_true", help="also write tumbler.gif (exact, PyBullet, MuJoCo, game step)"
    )
    _out(cross, "crosscheck")

    _add_training(sub)
    _add_bench(sub)
    return parser


def _add_training(sub: argparse._SubParsersAction) -> None:
    """``rigidrot train`` (its options are rl_zoo3.train's, passed on unparsed: see
    :func:`main`), ``rigidrot evaluate``, ``rigidrot export`` and ``rigidrot serve``."""
    from rigidrot_gym.tools import evaluate, train

    tr = _command(
        sub,
        "train",
        "train an agent: rl-baselines3-zoo on the batched env (the [train] extra)",
        train.describe(),
        _train,
    )
    tr.usage = "%(prog)s --env ID [--algo ALGO] [other options of rl_zoo3.train ...]"
    ev = _command(
        sub,
        "evaluate",
        "a trained agent against controllers on the same episodes (the [train] extra)",
        evaluate.DESCRIPTION,
        _evaluate,
    )
    evaluate.add_arguments(ev)
    from rigidrot_gym.tools import export

    ex = _command(
        sub,
        "export",
        "a trained agent as ONNX and dependency-free C for a flight computer",
        export.DESCRIPTION,
        _export,
    )
    ex.add_argument(
        "run_dir",
        type=Path,
        metavar="RUN",
        help="a run folder of rigidrot train, training/train.py or rl_zoo3.train",
    )
    _out(ex, "export")

    from rigidrot_gym.tools import serve

    srv = _command(
        sub,
        "serve",
        "flight software in the loop: an env served over a socket, one period a frame",
        serve.DESCRIPTION,
        _serve,
    )
    srv.add_argument("id", metavar="ID", help="an env id or rigidrot export's policy.json")
    where = srv.add_mutually_exclusive_group()
    where.add_argument("--port", type=int, default=5555, help="TCP port (0: any free port, printed)")
    where.add_argument("--unix", metavar="PATH", help="listen on a Unix socket at PATH instead of TCP")
    srv.add_argument("--host", default="127.0.0.1", help="TCP address to listen on")
    srv.add_argument("--timeout", type=float, default=10.0, help="s a client may take for each frame")
    srv.add_argument(
        "--realtime", action="store_true", help="pace each reply to the control period on the wall clock"
    )
    srv.add_argument(
        "--max-episodes", type=int, help="exit after this many finished episodes (default: never)"
    )


# What the long commands take on a 2-core machine in full (not --quick), said before they
# start: a user then knows whether to wait or come back.
EXPECTED = {
    _demo: "about 20 s the first time (numba compiles every method), 3 s after",
    _crosscheck: "about 30 minutes (--quick: a minute)",
    _bench_accuracy: "about 4 minutes (--quick: seconds)",
    _bench_throughput: "about a minute (--quick: seconds)",
    _bench_suite: "about 20 minutes for the whole suite and the 16 committed agents (--tasks, --seeds: less)",
}


def expected_duration(args: argparse.Namespace) -> str | None:
    """The line said before a long command starts (stderr), or None for a short one."""
    if args.run not in EXPECTED or getattr(args, "quick", False):
        return None
    name = {_demo: "demo", _crosscheck: "crosscheck"}.get(args.run, f"bench {args.run.__name__[7:]}")
    return f"rigidrot {name}: {EXPECTED[args.run]} on a 2-core machine"


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``rigidrot`` console script."""
    parser = build_parser()
    # rigidrot train hands its options to rl_zoo3.train's own parser; every other
    # command takes only its own.
    args, unknown = parser.parse_known_args(argv)
    if unknown and args.run is not _train:
        parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    args.zoo_options = unknown
    try:
        _check_outputs(args)
        notice = expected_duration(args)
        if notice is not None:
            print(notice, file=sys.stderr, flush=True)
        status = args.run(args)
    except (ValueError, RuntimeError, DependencyNotInstalled) as err:
        # One line, never a traceback: a bad argument, an output path that cannot be
        # written, a cluster that does not start, a missing extra.
        print(f"rigidrot: error: {err}", file=sys.stderr)
        return 2
    return status or 0


def _check_outputs(args: argparse.Namespace) -> None:
    """Check the output paths before any work: an ``--out`` folder must be a folder or
    creatable, ``simulate --out`` a file in an existing folder.

    Raises:
        ValueError: naming the option, the path and what is expected.
    """
    out = getattr(args, "out", None)
    if out is None:
        return
    out = Path(out)
    if args.run is _simulate:
        if out.is_dir():
            raise ValueError(f"--out {out} is a folder; expected a CSV file name (its folder must exist)")
        if not out.parent.is_dir():
            raise ValueError(f"--out {out}: its folder {out.parent} does not exist; create it first")
        return
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file; expected a folder (created if missing)")
    existing = next(p for p in (out, *out.parents) if p.exists())
    if not existing.is_dir():
        raise ValueError(f"--out {out}: {existing} is a file, so the folder cannot be created")
    if not os.access(existing, os.W_OK):
        raise ValueError(f"--out {out}: {existing} is not writable")


if __name__ == "__main__":
    sys.exit(main())
