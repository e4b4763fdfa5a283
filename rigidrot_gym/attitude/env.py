"""The spacecraft attitude-control environment (single body)."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.envs.registration import EnvSpec

from rigidrot_gym.attitude import arguments
from rigidrot_gym.attitude import scenario as scenario_module
from rigidrot_gym.attitude.batch import AttitudeBatch
from rigidrot_gym.attitude.scenario import Scenario
from rigidrot_gym.attitude.task import (
    ObservationColumns,
    observation_bounds,
    observation_columns,
    observation_table,
    reward_bounds,
)
from rigidrot_gym.render.options import RENDERER_OPTIONS
from rigidrot_gym.render.options import render_options as checked_render_options

# Frame rate a renderer advertises: one frame per control period, within these bounds.
_FPS_RANGE = (1.0, 1000.0)


def resolve_scenario(scenario: str | os.PathLike | Scenario, overrides: dict[str, Any]) -> Scenario:
    """A :class:`Scenario` from an id, file stem, path or object, with keyword overrides."""
    base = scenario if isinstance(scenario, Scenario) else scenario_module.find(scenario)
    return base.with_overrides(**overrides) if overrides else base


def configure(
    env,
    scenario: str | os.PathLike | Scenario,
    overrides: dict[str, Any],
    render_mode: str | None,
    render_options: dict | None,
) -> None:
    """Set-up shared by every env class: check the render mode and options, resolve the
    scenario, and set ``render_mode``, ``scenario``, the ``render_fps`` of the control
    period and what the (lazily created) renderer needs. Everything is checked here, so
    a bad argument fails at construction, not at the first render."""
    if render_mode is not None and render_mode not in env.metadata["render_modes"]:
        raise ValueError(
            f"render_mode {render_mode!r} is not supported; valid: {env.metadata['render_modes']}"
        )
    env.render_mode = render_mode
    env.render_options = checked_render_options(render_options)
    env.scenario = resolve_scenario(scenario, overrides)
    fps = float(np.clip(1.0 / env.scenario.dt, *_FPS_RANGE))
    env.metadata = {**env.metadata, "render_fps": round(fps)}
    env._renderer = None


def renderer_of(env, inertia: np.ndarray):
    """The env's :class:`~rigidrot_gym.render.BodyRenderer`, created on first use (so PyBullet
    is imported, and costs, nothing until something is drawn), drawing the body of
    ``inertia`` ((3, 3), kg·m²: this episode's, which domain randomisation re-draws) as the
    spacecraft its scenario declares (:func:`~rigidrot_gym.attitude.pictures.spacecraft_of`),
    if any, else as the ellipsoid of that inertia."""
    if env._renderer is None:
        from rigidrot_gym.attitude.pictures import spacecraft_of
        from rigidrot_gym.render import BodyRenderer

        options = {k: v for k, v in env.render_options.items() if k in RENDERER_OPTIONS}
        spacecraft = spacecraft_of(env.scenario)
        env._renderer = BodyRenderer(inertia, mode=env.render_mode, spacecraft=spacecraft, **options)
    return env._renderer


def surroundings(env, i: int) -> dict[str, np.ndarray | None]:
    """What body ``i`` of the env's batch shows besides its attitude: the world-frame
    directions to the Sun and to the Earth's centre on an orbit (else None), and which of
    its thrusters fired in the last period (None without thrusters)."""
    from rigidrot_gym.attitude.components import orbit, sunlight

    batch, out = env.batch, {"sun": None, "nadir": None, "firing": None}
    equipment = batch.equipment
    if env.scenario.flight.enabled:
        t = float(batch.steps[i] * env.scenario.dt)
        out["sun"] = np.array(sunlight.sight(equipment, t, i)[0])
        out["nadir"] = -np.array(orbit.position(equipment, t, i))
    if env.scenario.propulsion.layout != "none":
        out["firing"] = equipment.thruster_on_times[i] > 0.0
    return out


def render_frames(env, count: int) -> list[np.ndarray]:
    """The (H, W, 3) uint8 frames of the env's first ``count`` bodies as they are now; with
    the ``overlay`` render option (``"rgb_array"`` only: the window of ``"human"`` shows
    PyBullet's own picture), each under a legend and a readout of its time (s), pointing
    error to its target (deg) and body rates (deg/s)."""
    q, w = env.batch.body_state()
    inertia = env.batch.inertia()
    target = env.batch.target
    renderer = renderer_of(env, inertia[0])
    frames = [
        renderer.render(q[i], w[i], target[i], inertia=inertia[i], **surroundings(env, i))
        for i in range(count)
    ]
    if not (env.render_options.get("overlay", False) and env.render_mode == "rgb_array"):
        return frames
    from rigidrot_gym.render.overlay import draw_overlay, legend_of

    legend = legend_of(
        renderer.spacecraft is not None,
        env.scenario.propulsion.layout != "none",
        env.scenario.flight.enabled,
    )

    # The pointing error the step evaluated (info's), the time from the body's own step
    # count: after an episode's end a vector env's row shows its last state until the
    # autoreset.
    return [
        draw_overlay(
            frame,
            time_s=float(env.batch.steps[i] * env.scenario.dt),
            pointing_error_deg=env.batch.info(i)["pointing_error_deg"],
            body_rates=w[i],
            legend=legend,
        )
        for i, frame in enumerate(frames)
    ]


def close_renderer(env) -> None:
    """Disconnect the env's PyBullet client, if it has one."""
    if env._renderer is not None:
        env._renderer.close()
        env._renderer = None


class ScenarioSpec:
    """The ``spec`` of an env built by ``gym.make``, reporting the scenario's episode limit
    (the ids are registered without one: the env truncates itself, so that the scenario it
    was given, not the id's, sets the limit)."""

    def __get__(self, env, owner=None) -> EnvSpec | None:
        if env is None:
            return None
        spec = env.__dict__.get("_spec")
        if spec is None:
            return None
        return dataclasses.replace(spec, max_episode_steps=env.scenario.max_episode_steps)

    def __set__(self, env, spec: EnvSpec | None) -> None:
        env.__dict__["_spec"] = spec


class AttitudeEnv(gym.Env[np.ndarray, np.ndarray]):
    """
    ## Description

    A rigid spacecraft floats in free space. The agent commands body-axis torques and
    must turn the body to a target attitude and hold it there with small body rates.
    The rotation is integrated by rigidrot_gym's own integrators (any registered name,
    ``rk4`` by default), including the gyroscopic coupling ω × Iω that makes an
    asymmetric body precess and tumble. Each registered id comes from a scenario file
    in ``envs/`` that fixes the body's inertia, the torque limits, the tolerances, the
    episode length and the start and target distributions.

    ## Action Space

    ``Box(-1, 1, (3,), float32)``: the torque about each body axis as a fraction of the
    scenario's per-axis limit ``max_torque`` (N·m). Values outside [-1, 1] are clipped;
    a NaN or infinite action, an action of another shape (no reshaping: (1, 3) is not
    (3,)) or of a complex, string or object dtype raises ``ValueError`` and changes
    nothing. The torque is held over the control period ``dt``.

    | Num | Action          | Min | Max |
    |-----|-----------------|-----|-----|
    | 0   | torque, body x  | -1  | 1   |
    | 1   | torque, body y  | -1  | 1   |
    | 2   | torque, body z  | -1  | 1   |

    With reaction wheels (``wheel_layout`` ``"orthogonal"``: 3 wheels on the body axes,
    ``"pyramid"``: 4 wheels at 54.7° from body z, 90° apart) the action is
    ``Box(-1, 1, (n,))``: each wheel's motor torque u as a fraction of
    ``wheel_max_torque``. The motors spin the wheels up (ḣ_w = u) and turn the body the
    other way (τ = −A u, A the (3, n) spin axes); the wheels' momentum h = A h_w enters
    Euler's equations, J ω̇ = τ_ext − A u − ω × (Jω + h), in the same integrator. A
    wheel at ``wheel_max_momentum`` (its top speed) can only slow down: its torque is cut
    to keep |h_w| ≤ h_max. With ``wheel_model`` a Basilisk preset (``"HR16"``,
    ``"RWP015"``, ``"RW0"``) the limits are the preset's, and each command goes through
    its motor rule (saturation, deadband, no driving beyond its top speed) and gains its
    bearing friction, at the wheel's speed relative to the body at the period's start.

    With ``magnetorquers`` the action is ``Box(-1, 1, (3,))``: each rod's magnetic dipole
    as a fraction of ``magnetorquer_max_dipole`` (A·m², rods along the body axes). With
    wheels and ``magnetorquers`` both, ``Box(-1, 1, (n + 3,))``: the wheels' commands,
    then the rods' dipoles (the rods unload the wheels).

    ## Observation Space

    ``Box((n,), float32)``: the attitude error and the body rates (7 columns), then the
    blocks that the options of the column "Added by" add, in this order
    (``env.unwrapped.observation_columns()`` lists a made env's: name, columns, meaning,
    bounds):

    OBSERVATION_TABLE

    δq takes the sign with w ≥ 0 (the short way round); the pointing error is
    θ = 2 atan2(|δq_xyz|, δq_w) ∈ [0, π]. With a moving target (``target_attitude``
    ``"nadir"``: the orbit's LVLH frame, ô₃ towards the Earth's centre, ô₂ against the
    orbit normal; ``"sun"``: body z at the Sun, body x along the equator) the target is
    the frame at the state's time, and ω everywhere (the
    observation, the reward, the tolerance, ``info["rate"]``) is the body's rate relative
    to the frame's, ω − R(q)ᵀ ω_T.

    Sensor noise (off by default) perturbs what is observed, never the reward: the
    attitude is turned by a small random body rotation with per-axis standard deviation
    ``attitude_noise_deg`` (a star tracker), and the rates get white noise of std
    ``rate_noise`` plus a bias drawn per episode with std ``rate_bias`` (a gyro), rad/s.

    The true state, whatever the observation shows (noisy, delayed, clipped, normalised),
    is read from the env itself (``env.unwrapped``):

    | Property         | Shape, unit     | Meaning                                             |
    |------------------|-----------------|-----------------------------------------------------|
    | `attitude`       | (4,)            | attitude q, scalar-first, body to world             |
    | `body_rates`     | (3,), rad/s     | angular velocity ω in the body frame                |
    | `target`         | (4,)            | the target attitude now                             |
    | `wheel_momentum` | (n,), N·m·s     | each wheel's momentum about its axis (empty without wheels) |
    | `inertia`        | (3, 3), kg·m²   | this episode's body-frame inertia tensor            |

    ## Rewards

    r = −(w_θ θ/π + w_ω min(|ω|/ω_max, 1) + w_u |a|²/n) + w_s · inside − w_x · unsafe
        + w_E clip((E − E′)/E_max, −1, 1)

    with the weights ``reward_angle``, ``reward_rate``, ``reward_torque``,
    ``reward_success``, ``reward_unsafe``, ``reward_energy`` of the scenario (defaults 1,
    0.1, 0.01, 1, 10, 0), E and E′ the rotational kinetic energy ½ ωᵀJω before and after
    the step and E_max = ½ J_max ω_max² (a free body keeps E: the term is the energy the
    step's actions took out),
    ``a`` the clipped action and n its size (3 torques, or one per wheel), inside =
    (θ ≤ ``pointing_tolerance_deg`` and |ω| ≤ ``rate_tolerance``) at this step, unsafe =
    |ω| > ``max_rate``. The reward lies in [−(w_θ + w_ω + w_u + w_x), w_s].

    ``info`` carries ``pointing_error_deg`` (θ in degrees), ``rate`` (|ω|, rad/s),
    ``in_tolerance`` (inside, at this step) and ``is_success``: the task's success, the
    body inside the tolerance for ``success_hold_steps`` consecutive steps (at least one)
    up to this step. With ``success_hold_steps`` > 0 that ends the episode, so
    ``is_success`` on an episode's last step (where stable-baselines3's ``Monitor``,
    ``EvalCallback`` and ``evaluate_policy`` read it) says whether the task was done: an
    episode that runs to its time limit inside the tolerance, but not for long enough,
    has not succeeded. All of the true state; with wheels also ``wheel_momentum`` ((n,),
    N·m·s) and ``wheel_saturated`` (a wheel at its momentum limit); with a gyro its true
    bias ``gyro_bias`` ((3,), rad/s; and ``magnetometer_bias``, T, where the magnetometer
    has one); with the estimator (``observe="estimate"``) its ``estimated_attitude`` q̂
    ((4,), body to world), ``estimated_gyro_bias`` ((3,), rad/s),
    ``estimated_magnetometer_bias`` ((3,), T, where it estimates one) and
    ``estimate_covariance`` ((n, n): δϑ, the rotation vector of q̂* ⊗ q, rad, then
    β − β̂ and m − m̂), from which the NEES (``rigidrot_gym.physics.estimation.mekf.nees``) or the
    3σ bounds follow.

    ## Starting State

    Drawn from ``self.np_random`` as the scenario says: the target attitude (uniform on
    SO(3), or fixed), the attitude (uniform, within ``start_max_angle_deg`` of the
    target, or fixed) and the body rates (``start_rate`` plus a uniform ±
    ``start_rate_spread`` per axis, rad/s). ``reset(options={"attitude": q, "rate": ω,
    "target": q_t})`` fixes any of them (not a moving target). The wheels start at rest.
    With a moving target, the start is drawn in its first frame: ``"near_target"`` within
    the angle of it, and the start rates relative to its rate.

    Domain randomisation (off by default) re-draws the body at every reset: each
    principal moment uniform within ±``randomize_inertia`` of the nominal one, the three
    conditioned on the triangle inequality I_a + I_b ≥ I_c (a draw that violates it is
    drawn again, so the tensor stays physical and no body is pushed onto the boundary of a
    flat plate), the principal
    axes turned by up to ``randomize_inertia_rotation_deg`` (products of inertia), each
    torque limit within ±``randomize_torque``, and the start ranges
    (``start_max_angle_deg``, ``start_rate_spread``) scaled within ±``randomize_start``.
    The ``inertia`` property gives the episode's true tensor.

    Disturbances (off by default), in the body frame: a constant torque of magnitude
    ``disturbance_constant`` (N·m) in a direction drawn per episode; an
    Ornstein–Uhlenbeck torque of per-axis std ``disturbance_random_walk`` (N·m) and
    correlation time ``disturbance_correlation_time`` (s), both held over each control
    period; and, with ``gravity_gradient``, the torque 3n² r̂ × (J r̂) of a circular
    orbit ``orbit_altitude`` (m) above the Earth (orbit normal = world z, phase drawn per
    episode), evaluated at every integrator stage. Actuators: ``actuator_noise`` is the
    relative std of a multiplicative error on each torque (then clipped to the limit);
    ``actuation_delay`` applies each action one control period late (the first period
    applies zero); the observation then ends with that pending action, which keeps the
    state Markov.

    Spacecraft (off by default): with ``orbit`` the body flies a Keplerian orbit from the
    elements ``orbit_*`` (world frame: the Earth-centred inertial frame), each episode
    starting at ``orbit_epoch`` at a mean anomaly drawn per episode; with
    ``magnetic_field`` the IGRF centred-dipole field at its position, as the Earth turns,
    joins the end of the observation in the body frame (B / 60 µT, clipped to ±1); with
    ``sun`` the direction to the Sun (body frame) and the Earth's shadow factor ν (1 in
    sunlight, 0 in the umbra; Basilisk's conical shadow with penumbra) join it before the
    field; with
    ``magnetorquers`` the actions are three rods' dipoles m = a ⊙
    ``magnetorquer_max_dipole`` (A·m²), whose torque m × R(q)ᵀ B acts at every integrator
    stage with the field of the period's start (``RigidRot/MagDetumble-v0``), alone or
    after the wheels' commands (magnetic momentum dumping: the controllers of
    :mod:`rigidrot_gym.control` then unload the wheels by the cross-product law).

    All draws come from ``self.np_random``: the per-episode ones at reset, the per-step
    noise from a counter-based stream keyed at reset (so a vector env's rows repeat
    single envs).

    ## Episode End

    * Termination: |ω| exceeds the scenario's ``max_rate`` (rad/s); or, if
      ``success_hold_steps`` > 0, success (the tolerance held for that many consecutive
      steps); or, with ``wheel_terminate_on_saturation``, a wheel reaches its momentum
      limit (rewarded as unsafe, −w_x, once).
    * Truncation: the scenario's ``max_episode_steps`` control steps, counted by the env
      itself; as Gymnasium's ``TimeLimit`` does, a step that reaches the limit is
      truncated even if it also terminates (both flags true). The env counts the steps so
      that whatever scenario it is given sets the limit
      (``gym.make("RigidRot/Reorient-v0", scenario="RigidRot/Slew-v0")`` truncates at
      Slew's 240). ``gym.make(id, max_episode_steps=k)`` adds Gymnasium's ``TimeLimit``,
      which can only end episodes earlier; to lengthen them, override the scenario's
      field: ``AttitudeEnv(id, max_episode_steps=k)``, ``gym.make_vec(id, n,
      max_episode_steps=k)`` or a ``Scenario`` with ``with_overrides(max_episode_steps=k)``.
      ``env.spec.max_episode_steps`` reports the scenario's limit.
    * A step whose integration does not give a valid state (a step too large for the
      motion) raises ``ValueError`` naming ``dt``, ``substeps`` and the integrator; an
      implicit method that does not converge raises ``ConvergenceError``. Either leaves
      the env exactly as it was before the step.

    ## Arguments

    ```python
    import gymnasium as gym
    import rigidrot_gym

    env = gym.make("RigidRot/Reorient-v0", integrator="nielsen_krenk", dt=0.1, substeps=4)
    ```

    * ``scenario``: a registered id, a scenario file stem or path, or a ``Scenario``.
    * ``integrator``: any name from ``rigidrot_gym.physics.rotation.integrators.names()`` that accepts a
      torque; ``integrator_options`` passes its options (e.g. ``{"tol": 1e-12}``). Foreign
      engines have one name per variant: ``"pybullet"``, ``"pybullet_maximal"``,
      ``"mujoco_euler"``, ``"mujoco_implicitfast"``, ``"mujoco_implicit"``, ``"mujoco_rk4"``,
      ``"basilisk_rk4"``, ``"basilisk_rkf45"``, ``"basilisk_rkf78"`` (extras ``[render]``,
      ``[mujoco]``, ``[basilisk]``); they hold the torque constant in the body frame over
      each (sub)step.
    * ``dt`` (control period, s), ``substeps`` (integration steps per period) and any
      other scenario field by its flat name (``max_torque``, ``inertia``,
      ``pointing_tolerance_deg``, ...; the keywords of the [scenario file format][scenario-file-format]), the
      realism options above included (``wheel_layout="pyramid"``, ``rate_noise=1e-4``,
      ``gravity_gradient=True``, ...). The wheel term −ω × h depends on ω, which makes
      the splitting methods ``strang`` and ``yoshida4`` first order; with wheels use
      ``rk4``, ``rkmk4`` (order 4) or ``nielsen_krenk`` (order 2).
    * ``render_mode``: ``"rgb_array"`` (a (H, W, 3) uint8 frame from PyBullet's
      TinyRenderer, no display needed) or ``"human"`` (a PyBullet GUI window; without a
      display it warns once and draws off-screen), 640 × 480 pixels by default. The body is
      drawn as the spacecraft its scenario declares (the ``[surfaces]`` facets: the 6U box
      and its panels for ``"6U"``; else the ``[[body.parts]]`` its body is composed of,
      each at its place about their centre of mass; else the box of its ``[thrusters]``;
      each thruster as a nozzle, with a plume when it fired in the last period), or else
      as the ellipsoid of this episode's inertia, with its axes; the target attitude as pale axes, L and ω as
      arrows, and on an orbit the directions to the Sun and to the Earth's centre (nadir)
      as arrows (:mod:`rigidrot_gym.render.spacecraft`). ``render_options`` passes
      ``width``, ``height``, ``camera_distance``, ``camera_yaw``, ``camera_pitch`` to
      :class:`~rigidrot_gym.render.BodyRenderer` (checked at construction), and
      ``overlay`` (a bool, default False): True draws onto each ``"rgb_array"`` frame a
      legend of those colours (top left) and a readout of the simulated time (s), the
      pointing error to the target (deg) and the body rates (body frame, deg/s; bottom
      left), see :mod:`rigidrot_gym.render.overlay`; without it the frames are PyBullet's
      alone. Needs the ``[render]`` extra.

    ## Vectorized environment

    ``gym.make_vec(id, num_envs=N)`` builds
    :class:`~rigidrot_gym.attitude.vector_env.AttitudeVectorEnv`, which steps all N bodies in
    one batched call of the same core (next-step autoreset).

    ## Version History

    * v0: Initial version.
    """

    metadata = {"render_modes": ["rgb_array", "human"], "render_fps": 30}
    spec = ScenarioSpec()

    def __init__(
        self,
        scenario: str | os.PathLike | Scenario = "RigidRot/Reorient-v0",
        render_mode: str | None = None,
        integrator_options: dict[str, Any] | None = None,
        render_options: dict[str, Any] | None = None,
        **overrides,
    ):
        configure(self, scenario, overrides, render_mode, render_options)
        self.batch = AttitudeBatch(self.scenario, 1, integrator_options=integrator_options)
        self.action_space = spaces.Box(-1.0, 1.0, (self.batch.actuators.count,), dtype=np.float32)
        self.observation_space = spaces.Box(*observation_bounds(self.scenario), dtype=np.float32)
        self.reward_range = reward_bounds(self.scenario)
        self._ready = False

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        fixed = arguments.reset_options(options)  # checked before anything changes
        super().reset(seed=arguments.seed(seed))
        self.batch.rngs = [self.np_random]
        self.batch.reset(fixed)
        self._ready = True
        if self.render_mode == "human":
            self.render()
        return self.batch.obs[0].copy(), self._info()

    def step(self, action):
        if not self._ready:
            raise RuntimeError("call reset() before step()")
        action = arguments.actions(action, self.action_space.shape)
        self.batch.step(action.reshape(1, -1))
        if self.render_mode == "human":
            self.render()
        return self.batch.row(0)

    def render(self):
        """The current frame (``"rgb_array"``), or draw it in the window (``"human"``)."""
        if self.render_mode is None:
            gym.logger.warn(
                "render() was called without a render mode; create the env with "
                'gym.make(id, render_mode="rgb_array") (or "human")'
            )
            return None
        if not self._ready:
            raise RuntimeError("call reset() before render()")
        (frame,) = render_frames(self, 1)
        return frame if self.render_mode == "rgb_array" else None

    def close(self):
        close_renderer(self)
        super().close()

    def _info(self) -> dict[str, Any]:
        return self.batch.info(0)

    def observation_columns(self) -> tuple[ObservationColumns, ...]:
        """The observation's blocks in column order: each one's ``name``, ``columns`` (a
        slice), ``meaning``, ``low`` and ``high``."""
        return observation_columns(self.scenario)

    @property
    def attitude(self) -> np.ndarray:
        """(4,) current attitude, body to world."""
        return self.batch.body_state()[0][0]

    @property
    def body_rates(self) -> np.ndarray:
        """(3,) current body rates, rad/s."""
        return self.batch.body_state()[1][0]

    @property
    def inertia(self) -> np.ndarray:
        """(3, 3) body-frame inertia tensor of this episode's body, kg·m² (the scenario's,
        unless ``randomize_inertia`` or ``randomize_inertia_rotation_deg`` re-drew it)."""
        return self.batch.inertia()[0]

    @property
    def wheel_momentum(self) -> np.ndarray:
        """(n,) momenta of the reaction wheels about their spin axes, N·m·s (empty
        without wheels)."""
        return self.batch.wheel_momentum[0].copy()

    @property
    def target(self) -> np.ndarray:
        """(4,) current target attitude."""
        return self.batch.target[0].copy()


# The table is made from the layout that sizes and bounds the observation, so that the two
# cannot drift apart (``python -OO`` strips docstrings).
if AttitudeEnv.__doc__:
    AttitudeEnv.__doc__ = AttitudeEnv.__doc__.replace(
        "OBSERVATION_TABLE", observation_table().replace("\n", "\n    ")
    )
