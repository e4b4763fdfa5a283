"""The control benchmark: its bookkeeping against a plain single-env rollout, and the CLI."""

from __future__ import annotations

import csv
import itertools

import gymnasium as gym
import numpy as np
import pytest
from reference import WHEEL_AXES

import rigidrot_gym  # noqa: F401  (registers the ids)
from rigidrot_gym.attitude.scenario import find
from rigidrot_gym.control import CONTROLLERS
from rigidrot_gym.control.agents import Agent
from rigidrot_gym.tools.bench import control
from rigidrot_gym.tools.cli import main


def _commanded_torque(scenario, action) -> np.ndarray:
    """Body torque the action commands: a ⊙ τ_max, or −A (a ⊙ u_max) for wheels."""
    action = np.clip(action, -1, 1)
    if scenario.wheels:
        return -WHEEL_AXES[scenario.wheel_layout] @ (action * scenario.wheel_max_torque)
    return action * scenario.max_torque


def _plain_rollout(policy, seed, env_id):
    """The same episode in a single env, measured by hand from the pointing error and the
    rate against the scenario's tolerances (none of the env's flags but the episode's end):
    success is the tolerance held for ``success_hold_steps`` steps up to the end, the
    settling time the first time from which it holds to the end (None if it does not); the
    RMS error over the errors after each step (not the reset state's); the wheel momentum
    used the largest |h_k| / h_max over the wheels, from the reset state on (None without
    wheels), h_max the scenario's ``wheel_max_momentum`` (ideal wheels)."""
    env = gym.make(env_id)
    scenario = env.unwrapped.scenario
    assert not scenario.wheels or scenario.wheel_model == "ideal"

    def used(info) -> float | None:
        return (
            max(abs(h) / scenario.wheel_max_momentum for h in info["wheel_momentum"])
            if scenario.wheels
            else None
        )

    def inside(info) -> bool:
        return (
            info["pointing_error_deg"] <= scenario.pointing_tolerance_deg
            and info["rate"] <= scenario.rate_tolerance
        )

    obs, info = env.reset(seed=seed)
    effort, peak, t, since, streak = 0.0, info["rate"], 0.0, 0.0 if inside(info) else None, 0
    squares, steps, momentum = 0.0, 0, used(info)
    done = False
    while not done:
        action, _ = policy.predict(obs)
        obs, _, terminated, truncated, info = env.step(action)
        t += scenario.dt
        effort += np.linalg.norm(_commanded_torque(scenario, action)) * scenario.dt
        peak = max(peak, info["rate"])
        squares, steps = squares + info["pointing_error_deg"] ** 2, steps + 1
        momentum = max(momentum, used(info)) if scenario.wheels else None
        since = (since if since is not None else t) if inside(info) else None
        streak = streak + 1 if inside(info) else 0
        done = terminated or truncated
    success = streak >= max(scenario.success_hold_steps, 1)
    rms = np.sqrt(squares / steps)
    return success, since, info["pointing_error_deg"], rms, effort, peak, t, momentum


@pytest.mark.parametrize(
    ("env_id", "policy", "seeds"),
    [
        ("RigidRot/Reorient-v0", "quaternion_feedback", [3, 4, 5]),
        ("RigidRot/WheelReorient-v0", "quaternion_feedback", [3, 4, 5]),
        # the case: episodes that reach the 60 s limit inside the tolerance on
        # their last step only (seeds where that happens), counted a success before
        ("RigidRot/WheelReorient-v0", "sliding_mode", list(range(12))),
    ],
)
def test_episode_measurements_match_a_plain_rollout(env_id, policy, seeds):
    scenario = find(env_id)
    policy = CONTROLLERS[policy](scenario)
    episodes, trace = control.run_episodes(policy, scenario, seeds)
    inside_at_the_end_only = 0
    for seed, episode in zip(seeds, episodes, strict=True):
        success, settled, error, rms, effort, peak, duration, momentum = _plain_rollout(policy, seed, env_id)
        assert episode.success == success
        inside_at_the_end_only += settled is not None and not success
        if settled is None:
            assert np.isnan(episode.settling_time)
        else:
            assert np.isclose(episode.settling_time, settled)
        assert np.isclose(episode.final_error_deg, error, rtol=1e-6)
        assert episode.rms_error_deg == rms  # bit for bit: the same errors summed in the same order
        if momentum is None:
            assert np.isnan(episode.wheel_momentum_used)
        else:
            assert 0.0 < momentum <= 1.0
            assert episode.wheel_momentum_used == momentum
        assert np.isclose(episode.effort, effort, rtol=1e-6)
        assert np.isclose(episode.peak_rate, peak, rtol=1e-6)
        assert np.isclose(episode.duration, duration)
    assert trace["torque"].shape == (len(trace["t"]), 3)
    assert trace["pointing_error_deg"][0] > trace["pointing_error_deg"][-1]
    assert inside_at_the_end_only > 0 or len(seeds) < 10  # the sliding-mode case has them


def test_inertia_mismatch_changes_the_outcome_and_is_reported():
    scenario = find("RigidRot/Reorient-v0")
    policy = CONTROLLERS["quaternion_feedback"](scenario)
    nominal, _ = control.run_episodes(policy, scenario, [0, 1])
    heavier, _ = control.run_episodes(policy, scenario, [0, 1], inertia_scale=1.2)
    assert [e.effort for e in nominal] != [e.effort for e in heavier]
    summary = control.summarise("qfr", scenario.id, "rk4", 1.2, heavier)
    assert summary.episodes == 2 and summary.inertia_scale == 1.2


def test_cli_writes_the_table(tmp_path, capsys):
    argv = ["bench", "control", "--policies", "quaternion_feedback", "lqr", "--integrators", "semi_implicit"]
    argv += ["--inertia-scales", "1.0", "--seeds", "2", "--out", str(tmp_path)]
    assert main(argv) == 0
    text = capsys.readouterr().out
    rows = [
        line
        for line in text.splitlines()
        if line.startswith("| quaternion_feedback") or line.startswith("| lqr")
    ]
    assert len(rows) == 4  # two policies × semi_implicit at ×1 × the two default scenarios
    assert sum("WheelReorient-v0" in row for row in rows) == 2
    for name in ("control.md", "control.csv", "control.png"):
        assert (tmp_path / name).stat().st_size > 0


def _cases(tmp_path) -> set[tuple[str, str, str, float]]:
    """(policy, scenario, integrator, inertia scale) of each row of the CSV written."""
    with open(tmp_path / "control.csv", newline="") as f:
        return {
            (r["policy"], r["scenario"], r["integrator"], float(r["inertia_scale"]))
            for r in csv.DictReader(f)
        }


def test_the_cli_runs_exactly_the_cases_asked(tmp_path, capsys):
    """The issue's command: nielsen_krenk at ×1.2, not rk4 at ×1.2 and nielsen_krenk at ×1."""
    argv = ["bench", "control", "--policies", "pd", "--scenarios", "RigidRot/Reorient-v0", "--seeds", "1"]
    argv += [
        "--integrators",
        "nielsen_krenk",
        "--inertia-scales",
        "1.2",
        "--out",
        str(tmp_path),
        "--no-progress",
    ]
    assert main(argv) == 0
    assert _cases(tmp_path) == {("pd", "RigidRot/Reorient-v0", "nielsen_krenk", 1.2)}


@pytest.mark.parametrize(
    ("integrators", "scales"),
    [
        (["nielsen_krenk"], [1.2]),
        (["semi_implicit", "rk4"], [0.8, 1.0]),
        (control.DEFAULT_INTEGRATORS, control.INERTIA_SCALES),
    ],
)
def test_a_plan_is_every_integrator_at_every_scale(integrators, scales):
    makers = {"pd": CONTROLLERS["pd"]}
    tasks = control.plan(makers, ["RigidRot/Reorient-v0"], integrators, [0, 1, 2], scales, block_size=2)
    asked = set(itertools.product(integrators, scales))
    assert {(t.integrator, t.inertia_scale) for t in tasks} == asked
    assert len(tasks) == 2 * len(asked)  # each case's seeds 0, 1 | 2 in two blocks
    # one trace: the scenario's own integrator (rk4) at ×1 where asked, else the first case
    (traced,) = [t for t in tasks if t.trace]
    nominal = ("rk4", 1.0) if ("rk4", 1.0) in asked else (integrators[0], scales[0])
    assert (traced.integrator, traced.inertia_scale, traced.seeds) == (*nominal, (0, 1))


def test_a_policy_that_fits_no_scenario_asked_is_an_error_and_writes_nothing(tmp_path, capsys):
    argv = ["bench", "control", "--policies", "rate_damping", "--scenarios", "RigidRot/MagDetumble-v0"]
    argv += ["--out", str(tmp_path / "out")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == (
        "rigidrot: error: no policy applies to any scenario asked: rate_damping cannot command the "
        "actuators of RigidRot/MagDetumble-v0; the controllers that can: bdot\n"
    )
    assert not (tmp_path / "out").exists()


def test_policies_that_do_not_fit_a_scenario_are_left_out_and_named(tmp_path, capsys):
    argv = ["bench", "control", "--policies", "pd", "bdot", "--scenarios", "RigidRot/Reorient-v0"]
    argv += ["--integrators", "rk4", "--inertia-scales", "1", "--seeds", "1", "--out", str(tmp_path)]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert _cases(tmp_path) == {("pd", "RigidRot/Reorient-v0", "rk4", 1.0)}
    # Reorient-v0 has torquers only: neither rods (B-dot) nor wheels (reallocation)
    fit = ", ".join(name for name in CONTROLLERS if name not in ("bdot", "reallocating"))
    why = f"bdot cannot command the actuators of RigidRot/Reorient-v0; the controllers that can: {fit}"
    assert f"left out: {why}\n" in out


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"seeds": []}, "seeds: expected at least one, got none"),
        ({"seeds": [0, 0]}, r"seeds must be distinct, got \(0, 0\)"),
        ({"seeds": [1.5]}, r"seeds must be an integer in \[0, 2\*\*53\], got 1.5"),
        ({"seeds": [-1]}, r"seeds must be an integer in \[0, 2\*\*53\], got -1"),
        ({"integrators": []}, "integrators: expected at least one, got none"),
        ({"integrators": ["rk4", "rk4"]}, r"integrators must be distinct, got \('rk4', 'rk4'\)"),
        ({"integrators": ["nope"]}, "override integrator: expected a registered integrator .* got 'nope'"),
        ({"scales": [1.0, 1.0]}, r"scales must be distinct, got \(1.0, 1.0\)"),
    ],
)
def test_a_plan_refuses_bad_input_by_name(kwargs, match):
    args = {"integrators": ["rk4"], "seeds": [0], "scales": [1.0]} | kwargs
    with pytest.raises(ValueError, match=match):
        control.plan({"pd": CONTROLLERS["pd"]}, ["RigidRot/Reorient-v0"], **args)


def test_an_agent_runs_only_on_the_scenario_it_was_trained_on():
    agent = Agent(model=None, config={"env": "RigidRot/Reorient-v0"})
    assert agent.for_scenario(find("RigidRot/Reorient-v0")) is agent
    assert agent.for_scenario(find("RigidRot/WheelReorient-v0")) is None  # other spaces
    with pytest.raises(ValueError, match="agent on RigidRot/WheelReorient-v0: a trained agent runs only on"):
        control.benchmark({"agent": agent.for_scenario}, ["RigidRot/WheelReorient-v0"], ["rk4"], [0], [1.0])


@pytest.mark.parametrize("policies", [7, 13], ids=["as-committed", "more-than-ten"])
def test_every_line_of_the_plot_can_be_told_apart_and_the_key_stays_inside(policies):
    """One line per (policy, scenario), the agents on their own scenario only, as the
    benchmark draws them: no two lines share colour and line style (tab10 has ten
    colours), the key names every policy and scenario (or, past ten policies, every
    line), and it lies beside the plots, inside the figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.colors import to_hex

    t = np.linspace(0.0, 60.0, 301)
    trace = {"t": t, "pointing_error_deg": 130.0 * np.exp(-t / 5.0), "torque": np.ones((t.size, 3)) * 1e-3}
    scenarios = ("RigidRot/Reorient-v0", "RigidRot/WheelReorient-v0")
    traces = {(f"policy {k}", s): trace for k in range(policies - 2) for s in scenarios}
    traces |= {("agent a", scenarios[0]): trace, ("agent b", scenarios[1]): trace}
    fig = control.figure(traces)
    top = fig.axes[0]
    styles = [(to_hex(line.get_color()), line.get_linestyle()) for line in top.get_lines()]
    assert len(styles) == len(traces) and len(set(styles)) == len(traces)
    (legend,) = fig.legends
    key = {text.get_text() for text in legend.get_texts()}
    if policies <= 10:  # a colour per policy, a style per scenario: an entry for each
        assert key == {policy for policy, _ in traces} | set(scenarios)
    else:
        assert key == {f"{policy} ({scenario})" for policy, scenario in traces}
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    drawn = fig.get_tightbbox(renderer)
    width, height = fig.get_size_inches()
    assert drawn.x0 >= 0 and drawn.y0 >= 0 and drawn.x1 <= width and drawn.y1 <= height, drawn
    for ax in fig.axes:  # the key hides no curve
        assert not legend.get_window_extent(renderer).overlaps(ax.get_window_extent(renderer))
    plt.close(fig)


def test_the_propellant_column_is_what_the_thrusters_fired():
    """On ThrusterSlew-v0 each episode's propellant is the mass its firings burn,
    F Σ t_on / (Isp g₀) over the on-times the env reported step by step (the MiPS preset:
    55 mN, Isp 65 s), summed here by hand in a single env; the table shows it in grams,
    and a table without thrusters has no such column."""
    scenario = find("RigidRot/ThrusterSlew-v0")
    seeds = [3, 4]
    episodes, _ = control.run_episodes(CONTROLLERS["quaternion_feedback"](scenario), scenario, seeds)
    for seed, episode in zip(seeds, episodes, strict=True):
        env = gym.make("RigidRot/ThrusterSlew-v0").unwrapped
        policy = CONTROLLERS["quaternion_feedback"](scenario)
        obs, _ = env.reset(seed=seed)
        fired, done = 0.0, False
        while not done:
            obs, _, terminated, truncated, info = env.step(policy.predict(obs)[0])
            fired += float(np.sum(info["thruster_on_times"]))
            done = terminated or truncated
        assert fired > 0.0
        assert episode.propellant == pytest.approx(0.055 * fired / (65.0 * 9.80665), rel=1e-12)
    summary = control.summarise("qf", scenario.id, "rk4", 1.0, episodes)
    table = control.format_table([summary])
    assert table.splitlines()[0].endswith("| propellant (g) |")
    assert table.splitlines()[2].endswith(f"| {1e3 * np.mean([e.propellant for e in episodes]):.3g} |")
    plain, _ = control.run_episodes(
        CONTROLLERS["pd"](find("RigidRot/Reorient-v0")), "RigidRot/Reorient-v0", [0]
    )
    assert np.isnan(plain[0].propellant)
    assert "propellant" not in control.format_table([control.summarise("pd", "r", "rk4", 1.0, plain)])


def test_reallocating_enters_the_benchmark_by_name_and_settles_a_failed_wheel_sooner():
    """``reallocating`` (quaternion feedback over the wheels its residual test has not
    flagged) in the vector env of the benchmark, one row per seed: on WheelReorient-v0 with a
    drawn wheel stopping at a drawn time in [2, 10] s, every episode succeeds, in fewer
    steps on average than plain quaternion feedback, which still asks the stopped wheel for
    its share (a quarter of the torque along its axis is lost: A_h A⁺ = I − ¾ a aᵀ); with
    no wheels it does not apply."""
    scenario = find("RigidRot/WheelReorient-v0").with_overrides(wheel_fault="stop", fault_window=[2.0, 10.0])
    seeds = range(8)
    plain, _ = control.run_episodes(CONTROLLERS["quaternion_feedback"](scenario), scenario, seeds)
    fixed, _ = control.run_episodes(CONTROLLERS["reallocating"](scenario), scenario, seeds)
    assert all(e.success for e in plain) and all(e.success for e in fixed)
    assert np.mean([e.duration for e in fixed]) < 0.8 * np.mean([e.duration for e in plain])
    assert CONTROLLERS["reallocating"](find("RigidRot/Reorient-v0")) is None


def test_on_time_thrusters_enter_through_reallocating_and_their_effort_is_what_fired():
    """Thrusters commanded by on-times take no torque law alone (None: left out), but
    ``reallocating`` (the law's request mapped and modulated over the thrusters its test
    has not flagged); the effort is ∫|Σ F t_k (r × d)_k / Δt| dt of the on-times the env
    reported, summed here by hand from the thruster set's arms, in a single env."""
    from rigidrot_gym.attitude.components import thrusters
    from rigidrot_gym.control.thruster_faults import ThrusterReallocating

    options = {"thruster_command": "on_times", "thruster_fault": "on", "fault_window": [1.0, 10.0]}
    scenario = find("RigidRot/ThrusterSlew-v0").with_overrides(**options)
    assert all(CONTROLLERS[name](scenario) is None for name in ("quaternion_feedback", "pd", "lqr"))
    assert isinstance(CONTROLLERS["reallocating"](scenario), ThrusterReallocating)
    seeds = [10000, 10001]
    episodes, _ = control.run_episodes(CONTROLLERS["reallocating"](scenario), scenario, seeds)
    fleet = thrusters.thruster_set(scenario.propulsion)
    for seed, episode in zip(seeds, episodes, strict=True):
        env = gym.make("RigidRot/ThrusterSlew-v0", **options).unwrapped
        policy = CONTROLLERS["reallocating"](scenario)
        obs, _ = env.reset(seed=seed)
        effort, done = 0.0, False
        while not done:
            obs, _, terminated, truncated, info = env.step(policy.predict(obs)[0])
            arms = fleet.torque_arms * (fleet.max_thrust * info["thruster_on_times"])[:, None]
            effort += np.linalg.norm(arms.sum(axis=0))
            done = terminated or truncated
        assert episode.success and info["is_success"]
        assert episode.effort == pytest.approx(effort, rel=1e-12)


def test_the_wheel_momentum_column_is_there_only_where_a_case_has_wheels():
    """The RMS error is a column of every table; the wheel momentum used (% of the wheels'
    capacity, the mean of each episode's peak) only of a table with a wheel case, "—" in
    the rows without wheels, and in the CSV as a fraction, NaN without wheels."""
    rows = {}
    for env_id in ("RigidRot/Reorient-v0", "RigidRot/WheelReorient-v0"):
        scenario = find(env_id)
        episodes, _ = control.run_episodes(CONTROLLERS["quaternion_feedback"](scenario), scenario, [3, 4])
        rows[env_id] = control.summarise("qf", env_id, "rk4", 1.0, episodes)
        assert rows[env_id].rms_error_deg == np.mean([e.rms_error_deg for e in episodes])
        assert rows[env_id].rms_error_deg > rows[env_id].final_error_deg  # a slew: far off at first
    plain, wheels = rows["RigidRot/Reorient-v0"], rows["RigidRot/WheelReorient-v0"]
    assert np.isnan(plain.wheel_momentum_used) and 0.0 < wheels.wheel_momentum_used <= 1.0
    alone = control.format_table([plain]).splitlines()
    assert "| RMS error (deg) |" in alone[0] and "wheel momentum" not in alone[0]
    assert alone[2].split(" | ")[8] == f"{plain.rms_error_deg:.3g}"
    both = control.format_table([plain, wheels]).splitlines()
    assert both[0].endswith("| peak rate (rad/s) | wheel momentum used (%) |")
    assert both[2].endswith("| — |")
    assert both[3].endswith(f"| {100 * wheels.wheel_momentum_used:.3g} |")
