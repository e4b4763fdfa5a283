"""The components of a control period, one module each, by the stage that runs them
(:mod:`~rigidrot_gym.attitude.stages`, assembled by :mod:`~rigidrot_gym.attitude.pipeline`):

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
5. the autoreset: :mod:`.restart` (the waiting bodies' new episodes, drawn in the call,
   once every check has passed);
6. the actuators' and disturbances' own state moves on (wheel momenta, the random walk,
   the pending action);
7. a moving target: :mod:`.targets` (the LVLH or Sun frame and its rate); the sensors:
   :mod:`.sensors` (Gaussian noise on the state), or the spacecraft's own, :mod:`.gyro`,
   :mod:`.star_tracker`, :mod:`.magnetometer` and :mod:`.sun_sensors` (read through the
   errors :mod:`.sensor_errors` draws per episode), with the MEKF between them and the
   agent and the choice of what it observes (:mod:`.navigation`);
8. the evaluation: :mod:`.evaluation` (observation, reward and flags: one implementation
   for every path; with a moving target, rates relative to its), and
   :mod:`.magnetic_field` and :mod:`.sunlight` at each body's position on its
   :mod:`.orbit` at its new episode time.

Each model declares itself once (:class:`~.declaration.Component`, its module's
``COMPONENT``), and :data:`COMPONENTS` lists them: the one place that names every
component. The scenario's tables and consistency rules, the period's flags
(:class:`~rigidrot_gym.attitude.data.Features`) and state
(:class:`~rigidrot_gym.attitude.data.Equipment`), the per-episode draws and per-step
noise, the observation's columns, the reward's bounds, the ``info`` entries and the
stages' hooks are derived from it. Other packages add components through entry points
(:mod:`.plugins`); a component is one module (see the guide, ``docs/components.md``).

Each is component-wise source over :mod:`~rigidrot_gym.physics.plumbing.jit`'s primitives and the
named data of :mod:`~rigidrot_gym.attitude.data`: a function of one body, or of a block of
bodies ``lo`` … ``hi`` − 1 when its loop must vectorise. A component that a scenario does
not enable is not compiled into its kernel (:class:`~rigidrot_gym.attitude.data.Features`).
"""

from rigidrot_gym.attitude import randomization
from rigidrot_gym.attitude.components import (
    actuator_noise,
    declaration,
    delay,
    disturbances,
    faults,
    gravity_gradient,
    gyro,
    magnetic_field,
    magnetometer,
    magnetorquers,
    navigation,
    orbit,
    plugins,
    sensor_errors,
    sensors,
    star_tracker,
    sun_sensors,
    sunlight,
    surfaces,
    targets,
    thrusters,
    torquers,
    wheels,
)
from rigidrot_gym.attitude.components.declaration import Component

# Every component, in the order that lays out what they share: the observation's columns
# (the wheels' first, the field's last, where the controllers read it) and the normals and
# uniforms of each body's streams (each component's after those before it). A new component
# goes at the end, so that every existing id keeps its columns and its random streams.
BUILT_IN: tuple[Component, ...] = (
    torquers.COMPONENT,
    wheels.COMPONENT,
    delay.COMPONENT,
    actuator_noise.COMPONENT,
    magnetorquers.COMPONENT,
    sensors.COMPONENT,
    disturbances.COMPONENT,
    gravity_gradient.COMPONENT,
    orbit.COMPONENT,
    targets.COMPONENT,
    gyro.COMPONENT,
    star_tracker.COMPONENT,
    navigation.COMPONENT,
    magnetometer.COMPONENT,
    sun_sensors.COMPONENT,
    sunlight.COMPONENT,
    magnetic_field.COMPONENT,
    randomization.COMPONENT,
    thrusters.COMPONENT,
    surfaces.COMPONENT,
    sensor_errors.COMPONENT,
    faults.COMPONENT,
)
# Then those of other packages (entry points of the group ``rigidrot_gym.components``).
PLUGINS = plugins.discover(BUILT_IN)
COMPONENTS: tuple[Component, ...] = BUILT_IN + PLUGINS

# Where each component's per-step noise lies in each body's streams (variates).
NOISE = declaration.noise_layout(COMPONENTS)


def reference() -> str:
    """The components as a Markdown table, from their declarations (the components page):
    each one's module, what it is, its table and switch, what it needs, and what it adds:
    flags, state, draws, noise and observation columns."""
    rows = [
        "| component | what | table | switch | needs | features | state | draws | noise per step | columns |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]

    def names(items: list[str]) -> str:
        return ", ".join(f"`{item}`" for item in items)

    for c in COMPONENTS:
        module = c.table.__module__ if c.table is not None else f"{__name__}.{c.name}"  # where it is declared
        switch = c.switch if isinstance(c.switch, str) else "target.attitude"
        noise = [f"{2 * c.step_pairs} normals"] if c.step_pairs else []
        noise += [f"{c.navigation_normals} navigation normals"] if c.navigation_normals else []
        noise += [f"{c.start_normals} at the start"] if c.start_normals else []
        draws = [
            f"{d.name} ({d.size} {'normal' if d.normal else 'uniform'}{'s' if d.size > 1 else ''})"
            for d in c.draws
        ]
        cells = [
            f"[`{c.name}`][{module}]",
            c.summary,
            f"`[{c.table.key}]`" if c.table is not None else "",
            f"`{switch}`" if switch else "",
            names([need.component for need in c.needs]),
            names([f.name for f in c.features]),
            names([s.name for s in c.state]),
            ", ".join(draws),
            ", ".join(noise),
            names([column.name for column in c.columns]),
        ]
        rows.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(rows) + "\n"
