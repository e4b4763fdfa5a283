"""The ``rigidrot`` command line: the demo (the README's main job, with and without the
``[render]`` extra), ``simulate``, the version, the help texts and the output folders."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from compilations import COUNT_COMPILATIONS
from reference import angle, body_to_world, solve

from rigidrot_gym.physics.rotation import integrators
from rigidrot_gym.tools.cli import build_parser, expected_duration, main

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[1]


def _table(text: str) -> dict[str, list[str]]:
    rows = {}
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 6 and cells[0] in integrators.names():
            rows[cells[0]] = cells[1:]
    return rows


@pytest.mark.slow
def test_demo_end_to_end(tmp_path, capsys):
    assert main(["demo", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    rows = _table(out)
    assert set(rows) == set(integrators.names())
    # Against the exact solution (the demo's reference) the published orders show: the
    # accurate methods follow the flips, the game-engine step does not flip at all.
    assert float(rows["rk4"][0]) < 1e-5
    assert float(rows["exact"][0]) < 1e-6
    assert float(rows["nielsen_krenk"][2]) < 1e-12  # energy drift
    assert float(rows["semi_implicit"][0]) > 90.0
    errors = [float(m) for m in re.findall(r"^\| [\d.]+ \| ([\d.]+) \|", out, flags=re.M)]
    assert errors[0] > 10.0 and errors[-1] < 2.0  # the controller brings the body round
    assert "success" in out
    for name in ("methods.md", "attitude_error.png", "control.md", "tumbler.gif"):
        assert (tmp_path / name).stat().st_size > 0
    assert f"into {tmp_path}/" in out
    # the table file opens with the problem it ran (the README's tumbler) and names no missing engine
    methods = (tmp_path / "methods.md").read_text()
    first = methods.splitlines()[0]
    assert "I = (1, 2, 3) kg·m²" in first and "ω0 = (0.01, 2, 0.01) rad/s" in first and "dt = 0.01 s" in first
    assert "not installed" not in methods


def test_simulate_writes_a_trajectory_that_matches_dop853(tmp_path, capsys):
    path = tmp_path / "traj.csv"
    argv = ["simulate", "--inertia", "1", "2", "3", "--omega", "0.4", "1.1", "-0.3", "--dt", "0.01"]
    assert main([*argv, "--steps", "300", "--method", "rk4", "--out", str(path)]) == 0
    data = np.loadtxt(path, delimiter=",", skiprows=1)
    assert data.shape == (301, 8)
    q_ref, w_ref = solve([1, 0, 0, 0], [0.4, 1.1, -0.3], [1, 2, 3], data[:, 0])
    assert np.max(angle(data[:, 1:5], q_ref)) < 1e-9
    assert np.max(np.abs(data[:, 5:8] - w_ref)) < 1e-9
    # The drifts printed are the largest relative changes over the run, as the library
    # defines them, computed here from the written trajectory itself.
    out = capsys.readouterr().out
    energy = 0.5 * np.sum(np.array([1.0, 2.0, 3.0]) * data[:, 5:8] ** 2, axis=1)
    momentum = np.array(
        [body_to_world(q, [1.0, 2.0, 3.0] * w) for q, w in zip(data[:, 1:5], data[:, 5:8], strict=True)]
    )
    energy_drift = np.max(np.abs(energy - energy[0])) / energy[0]
    momentum_drift = np.max(np.linalg.norm(momentum - momentum[0], axis=1)) / np.linalg.norm(momentum[0])
    printed = dict(re.findall(r"^(energy|\|L\|) drift\s*=\s*(\S+)", out, flags=re.M))
    assert float(printed["energy"]) == pytest.approx(energy_drift, rel=1e-3)
    assert float(printed["|L|"]) == pytest.approx(momentum_drift, rel=1e-3)


def test_simulate_reports_bad_input_as_an_error(capsys):
    assert main(["simulate", "--inertia", "1", "1", "3"]) == 2
    assert "triangle inequality" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["simulate", "--method", "nope"])


def test_version_matches_the_package_metadata(capsys):
    pyproject = tomllib.loads((Path(__file__).resolve().parents[1] / "pyproject.toml").read_text())
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"rigidrot {pyproject['project']['version']}"


def _subparsers(parser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield name, sub
                yield from _subparsers(sub)


def test_help_is_plain_words_with_the_defaults():
    parser = build_parser()
    top = parser.format_help()
    for command in ("demo", "simulate", "crosscheck", "bench"):
        assert re.search(rf"^\s+{command}\s+\S", top, flags=re.M), command
    commands = dict(_subparsers(parser))
    for name, sub in [("rigidrot", parser), *commands.items()]:
        text = sub.format_help()
        assert "``" not in text and ":class:" not in text and ":func:" not in text, name
    simulate = commands["simulate"].format_help()
    assert (
        "(default: rk4)" in simulate
        and "(default: 0.01)" in simulate
        and "example: rigidrot simulate" in simulate
    )


def test_the_control_benchmark_help_names_every_controller_and_id():
    from rigidrot_gym.control import CONTROLLERS

    text = dict(_subparsers(build_parser()))["control"].format_help()
    flat = " ".join(text.split())
    assert all(name in flat for name in CONTROLLERS) and len(CONTROLLERS) >= 5, flat
    # the ids from the scenario files themselves, not from the code that lists them
    ids = [re.search(r'^id = "(.+)"', p.read_text(), re.M).group(1) for p in (ROOT / "envs").glob("*.toml")]
    assert len(ids) >= 7 and all(i in flat for i in ids), flat


def test_every_tool_writes_under_outputs_unless_told_otherwise():
    for name, sub in _subparsers(build_parser()):
        out = next((a for a in sub._actions if a.dest == "out"), None)
        if out is None or name == "simulate":  # simulate writes a CSV only when given a file
            continue
        assert out.default == Path("outputs") / name, name


@pytest.mark.slow
def test_demo_without_the_render_extra(tmp_path):
    # PyBullet and imageio made absent the way Python's import system knows: a None entry
    # in sys.modules makes `import pybullet` raise ModuleNotFoundError.
    code = (
        "import sys\n"
        "for name in ('pybullet', 'pybullet_data', 'imageio', 'moviepy'):\n"
        "    sys.modules[name] = None\n"
        "from rigidrot_gym.tools.cli import main\n"
        # in this process: the absent modules are absent only here
        f"sys.exit(main(['demo', '--workers', '1', '--out', {str(tmp_path)!r}]))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr[-3000:]
    extra = [line for line in out.stdout.splitlines() if "[render]" in line]
    assert len(extra) == 1 and "rigidrot-gym[render]" in extra[0]
    # one line names the engine, what its absence took away (its rows, the animation)
    assert extra[0].startswith("PyBullet not installed")
    assert "pybullet, pybullet_maximal" in extra[0] and "animation" in extra[0]
    rows = _table(out.stdout)
    bullet = {name for name in integrators.names() if integrators.get(name).engine == "PyBullet"}
    assert bullet == {"pybullet", "pybullet_maximal"}
    assert set(rows) == set(integrators.names()) - bullet
    assert sorted(p.name for p in tmp_path.iterdir()) == ["attitude_error.png", "control.md", "methods.md"]
    assert extra[0] in (tmp_path / "methods.md").read_text()


@pytest.mark.parametrize("workers", [0, -1, True, 1.5])
def test_demo_refuses_a_worker_count_that_is_not_a_positive_integer(tmp_path, workers):
    from rigidrot_gym.tools import demo

    with pytest.raises(ValueError, match="workers must be a positive integer"):
        demo.run(tmp_path / "out", workers)
    assert not (tmp_path / "out").exists()  # refused before anything is written


@pytest.mark.parametrize("engines", [True, False], ids=["with-engines", "library-only"])
def test_demo_figure_keeps_every_text_inside_it(engines):
    """The demo's figure with every registered method (or only the library's own, as
    without the engines' extras), one in three exactly on the reference (the longest note
    in a panel's title): no title, label, key or tick label runs off the figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from rigidrot_gym.physics.rotation.trajectory import Trajectory
    from rigidrot_gym.tools import demo

    t = np.linspace(0.0, 30.0, 301)
    # the reference turns about z; the other methods stay put, so their error is its angle
    q_ref = np.stack([np.cos(0.05 * t), 0 * t, 0 * t, np.sin(0.05 * t)], axis=-1)
    still = np.tile([1.0, 0.0, 0.0, 0.0], (t.size, 1))
    omega = np.tile([0.01, 2.0, 0.01], (t.size, 1))
    runs = {}
    names = [n for n in integrators.names() if engines or not integrators.get(n).engine]
    for k, name in enumerate(names):
        q = q_ref if k % 3 == 0 else still
        runs[name] = Trajectory(t, q, omega, np.diag([1.0, 2.0, 3.0]), name, np.zeros(()), np.zeros(()))
    fig = demo.figure(runs, q_ref, demo.describe())
    fig.canvas.draw()
    # Everything drawn (titles, keys, tick labels in view), in inches from the lower left.
    drawn = fig.get_tightbbox(fig.canvas.get_renderer())
    width, height = fig.get_size_inches()
    margin = 1.0 / fig.dpi  # a pixel
    assert drawn.x0 >= -margin and drawn.y0 >= -margin, drawn
    assert drawn.x1 <= width + margin and drawn.y1 <= height + margin, (drawn, width, height)
    titles = [" ".join((a.get_title(loc="left") + a.get_title()).split()) for a in fig.axes]
    assert any("exactly 0 throughout" in title for title in titles)  # the long note is there
    plt.close(fig)


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (["simulate", "--out", "{tmp}"], r"--out .* is a folder; expected a CSV file name"),
        (["simulate", "--out", "{tmp}/missing/traj.csv"], r"its folder .*missing does not exist"),
        (
            ["bench", "control", "--seeds", "1", "--out", "{tmp}/file"],
            r"--out .*file is a file; expected a folder",
        ),
        (["bench", "accuracy", "--out", "{tmp}/file/below"], r"--out .*file is a file, so the folder cannot"),
        (["demo", "--out", "{tmp}/file"], r"--out .*file is a file; expected a folder"),
    ],
)
def test_an_output_path_that_cannot_be_written_fails_before_any_work(tmp_path, capsys, argv, match):
    (tmp_path / "file").write_text("x")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    start = time.perf_counter()
    assert main(argv) == 2
    assert time.perf_counter() - start < 2.0  # no simulation, benchmark or demo ran first
    err = capsys.readouterr().err
    assert re.search(match, err) and err.count("\n") == 1, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["file"]  # nothing written


# Counts the kernels a process compiles while it makes, resets and steps the single env and
# a 2-env vector env of argv[1] with the integrator argv[2].
_COMPILED_BY_A_FIRST_STEP = """
import sys
import gymnasium as gym, numpy as np, rigidrot_gym
"""
_COMPILED_BY_A_FIRST_STEP += (
    COUNT_COMPILATIONS
    + """
env_id, integrator = sys.argv[1:]
for env in (gym.make(env_id, integrator=integrator), gym.make_vec(env_id, 2, integrator=integrator)):
    env.reset(seed=1)
    env.step(np.zeros(env.action_space.shape, dtype=np.float32))
print(len(compiled))
"""
)


def _compiled_by_a_first_step(cache: Path, env_id: str, integrator: str) -> int:
    done = subprocess.run(
        [sys.executable, "-c", _COMPILED_BY_A_FIRST_STEP, env_id, integrator],
        env={**os.environ, "NUMBA_CACHE_DIR": str(cache)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


_RIGIDROT = "import sys; from rigidrot_gym.tools.cli import main; sys.exit(main(sys.argv[1:]))"


@pytest.mark.slow
def test_compile_leaves_nothing_to_compile_at_a_later_first_step(tmp_path):
    cache = tmp_path / "cache"
    argv = ["compile", "RigidRot/Detumble-v0", "--integrators", "euler", "--workers", "1"]
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from rigidrot_gym.tools.cli import main; sys.exit(main(sys.argv[1:]))",
        ]
        + argv,
        env={**os.environ, "NUMBA_CACHE_DIR": str(cache)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    assert re.search(r"^\| RigidRot/Detumble-v0 \| euler \| [\d.]+ \| [\d.]+ \|$", done.stdout, flags=re.M)
    assert _compiled_by_a_first_step(cache, "RigidRot/Detumble-v0", "euler") == 0
    # The same count, for an integrator the command was not asked for, sees the compilations.
    assert _compiled_by_a_first_step(cache, "RigidRot/Detumble-v0", "semi_implicit") > 0


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (
            ["compile", "RigidRot/Nope-v0"],
            r"env id 'RigidRot/Nope-v0' is not registered; the package's ids: .*-v\d",
        ),
        (["compile", "--workers", "0"], r"workers must be a positive integer or None, got 0"),
    ],
)
def test_compile_refuses_bad_input_in_one_line(capsys, argv, match):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert re.fullmatch(rf"rigidrot: error: {match}\n", err), err


def _scenario_ids() -> list[str]:
    """The ids of the scenario files, read with plain TOML."""
    return sorted(tomllib.loads(p.read_text())["id"] for p in (ROOT / "envs").glob("*.toml"))


def test_train_help_names_every_env_id_and_the_algorithms_with_hyperparameters(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["train", "--help"])
    assert exit_.value.code == 0
    flat = " ".join(capsys.readouterr().out.split())
    assert len(_scenario_ids()) >= 5 and all(env_id in flat for env_id in _scenario_ids()), flat
    # the algorithms whose files are in training/hyperparams/ (ppo_fast.yml is not one)
    assert re.search(r"--algo \(default ppo\), one with a hyperparameter file: ppo, sac, td3\b", flat), flat
    assert "usage: rigidrot train --env ID" in flat


def test_every_id_train_offers_has_hyperparameters_for_the_default_algorithm(capsys):
    yaml = pytest.importorskip("yaml")
    with pytest.raises(SystemExit):
        main(["train", "--help"])
    flat = " ".join(capsys.readouterr().out.split())
    offered = re.search(r"--env, one of: (.+?) --algo \(default (\w+)\)", flat)
    ids, algo = offered.group(1).split(", "), offered.group(2)
    entries = yaml.safe_load((ROOT / "training" / "hyperparams" / f"{algo}.yml").read_text())
    assert sorted(ids) == _scenario_ids()
    assert [env_id for env_id in ids if env_id not in entries] == []


def test_the_help_of_every_command_imports_no_training_library():
    code = (
        "import sys; from rigidrot_gym.tools.cli import build_parser; build_parser(); "
        "print(sorted(m for m in ('torch', 'stable_baselines3', 'rl_zoo3') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_evaluate_help_names_every_controller(capsys):
    from rigidrot_gym.control import CONTROLLERS

    with pytest.raises(SystemExit):
        main(["evaluate", "--help"])
    flat = " ".join(capsys.readouterr().out.split())
    assert all(name in flat for name in CONTROLLERS) and len(CONTROLLERS) >= 5, flat


@pytest.mark.parametrize(
    ("argv", "match"),
    [
        (
            ["train", "--env", "RigidRot/Nope-v0", "--seed", "0"],
            r"--env 'RigidRot/Nope-v0' is not one of the package's env ids: RigidRot/\S+-v\d, .*",
        ),
        (["train", "--algo", "ppo", "-n", "100"], r"--env is required; expected one of .*Reorient-v0.*"),
        (
            ["train", "--env", "RigidRot/Reorient-v0", "--algo", "a2c"],
            r"--algo 'a2c' has no hyperparameter file in \S+; "
            r"expected one of ppo, sac, td3, or a --conf-file of one's own",
        ),
        (
            ["evaluate", "{tmp}", "--episodes", "1"],
            r".* is not a training run: expected one <env>/args\.yml in it .*",
        ),
        (
            ["evaluate", str(ROOT / "training/agents/ppo/RigidRot-Reorient-v0_1"), "--episodes", "0"],
            r"episodes must be a positive integer, got 0",
        ),
    ],
)
def test_train_and_evaluate_refuse_bad_input_in_one_line_before_any_work(tmp_path, capsys, argv, match):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    start = time.perf_counter()
    assert main(argv) == 2
    assert time.perf_counter() - start < 5.0  # refused before training or an episode
    err = capsys.readouterr().err
    assert re.fullmatch(rf"rigidrot: error: {match}\n", err), err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("option", "match"),
    [
        (["--seeds", "0"], r"--seeds 0: expected the number of episodes per case, a whole number >= 1"),
        (["--seeds", "-2"], r"--seeds -2: expected the number of episodes per case, a whole number >= 1"),
        (
            ["--block-size", "0"],
            r"--block-size 0: expected the number of seeds per task, a whole number >= 1",
        ),
        (["--inertia-scales", "1", "-0.5"], r"--inertia-scales 1 -0.5: expected positive numbers .*"),
        (["--inertia-scales", "nan"], r"--inertia-scales nan: expected positive numbers .*"),
    ],
)
def test_the_control_benchmark_refuses_bad_counts_and_scales_by_option(tmp_path, capsys, option, match):
    start = time.perf_counter()
    assert main(["bench", "control", *option, "--out", str(tmp_path / "out")]) == 2
    assert time.perf_counter() - start < 5.0  # refused before an episode
    err = capsys.readouterr().err
    assert re.fullmatch(rf"rigidrot: error: {match}\n", err), err
    assert list(tmp_path.iterdir()) == []


def test_evaluate_refuses_a_controller_that_cannot_fly_the_agent(capsys):
    run = ROOT / "training/agents/ppo/RigidRot-Reorient-v0_1"
    assert main(["evaluate", str(run), "--episodes", "1", "--compare", "pd", "bdot"]) == 2
    err = capsys.readouterr().err
    assert "bdot cannot command the actuators of RigidRot/Reorient-v0" in err and err.count("\n") == 1, err
    assert main(["evaluate", str(run), "--compare", "nope"]) == 2  # neither a controller nor an entry
    err = capsys.readouterr().err
    assert err.startswith("rigidrot: error: compare: unknown controllers ['nope']; the controllers: ")


def test_only_train_passes_unknown_options_on():
    with pytest.raises(SystemExit) as exit_:
        main(["demo", "--workers", "1", "--algo", "ppo"])
    assert exit_.value.code == 2


@pytest.mark.parametrize("argv", [["train", "--env", "RigidRot/Reorient-v0"], ["evaluate", "{run}"]])
def test_train_and_evaluate_without_the_train_extra_name_it(argv):
    # The [train] extra made absent the way Python's import system knows it.
    argv = [a.replace("{run}", str(ROOT / "training/agents/ppo/RigidRot-Reorient-v0_1")) for a in argv]
    code = (
        "import sys\n"
        "for name in ('torch', 'stable_baselines3', 'rl_zoo3'):\n"
        "    sys.modules[name] = None\n"
        "from rigidrot_gym.tools.cli import main\n"
        f"sys.exit(main({argv!r}))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 2, out.stderr[-3000:]
    assert out.stderr.count("\n") == 1 and 'pip install "rigidrot-gym[train]"' in out.stderr, out.stderr


def test_the_hyperparameter_files_are_the_package_s_resource(tmp_path, monkeypatch):
    from importlib import resources

    from rigidrot_gym.tools import train

    # importable as a package (editable install: mapped onto training/hyperparams/; wheel:
    # shipped in it), with the checkout's files
    folder = Path(str(resources.files("rigidrot_gym.hyperparams")))
    checkout = ROOT / "training" / "hyperparams"
    assert {p.name: p.read_bytes() for p in folder.glob("*.yml")} == {
        p.name: p.read_bytes() for p in checkout.glob("*.yml")
    }
    assert {"ppo.yml", "sac.yml", "td3.yml"} <= {p.name for p in folder.glob("*.yml")}
    # The default --conf-file rigidrot train adds: as typed inside the working folder,
    # absolute outside it (a pip user's own folder).
    argv = ["--algo", "sac", "--env", "RigidRot/Reorient-v0"]
    monkeypatch.chdir(tmp_path)
    added = train.with_default_conf_file(argv, train.hyperparameter_folder(), "rigidrot train")
    assert added[:-2] == argv and added[-2] == "--conf-file"
    assert Path(added[-1]) == folder / "sac.yml" and Path(added[-1]).is_absolute()
    monkeypatch.chdir(folder.parent)
    added = train.with_default_conf_file(argv, train.hyperparameter_folder(), "rigidrot train")
    assert added[-1] == f"{folder.name}/sac.yml"
    # a --conf-file of one's own (the zoo's spellings) is kept as given
    for option in ("--conf-file", "-conf", "--conf-file=x.yml"):
        own = [*argv, option, "x.yml"] if "=" not in option else [*argv, option]
        assert train.with_default_conf_file(own, folder, "rigidrot train") == own
    # one of the package's files by its name alone, in each spelling: its path
    monkeypatch.chdir(tmp_path)
    for named in (["--conf-file", "ppo_fast"], ["-conf", "ppo_fast"], ["--conf-file=ppo_fast"]):
        resolved = train.with_default_conf_file([*argv, *named], folder, "rigidrot train")
        assert resolved[:4] == argv and Path(resolved[-1].rsplit("=", 1)[-1]) == folder / "ppo_fast.yml"
    # a file of that name in the working folder is the user's, and is kept
    (tmp_path / "ppo_fast").write_text("")
    assert train.with_default_conf_file([*argv, "--conf-file", "ppo_fast"], folder, "x")[-1] == "ppo_fast"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["bench", "accuracy"], "rigidrot bench accuracy: about 4 minutes"),
        (["bench", "throughput"], "rigidrot bench throughput: about a minute"),
        (["crosscheck"], "rigidrot crosscheck: about 30 minutes"),
        (["demo"], "rigidrot demo: about 20 s the first time"),
        (["bench", "accuracy", "--quick"], None),
        (["crosscheck", "--quick"], None),
        (["simulate"], None),
    ],
)
def test_a_long_command_says_how_long_it_takes_before_it_starts(argv, expected):
    args, _ = build_parser().parse_known_args(argv)
    notice = expected_duration(args)
    assert notice == expected if expected is None else notice.startswith(expected)
