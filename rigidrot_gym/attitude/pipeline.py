"""The control period as one compiled call, assembled from the named stages of
:mod:`~rigidrot_gym.attitude.stages` over the named data of
:mod:`~rigidrot_gym.attitude.data`.

:func:`kernel_of` compiles, for a method's step function and the :class:`~rigidrot_gym.attitude.data.Features`
a scenario enables, one function that runs a whole control period of every body, in
passes over blocks of bodies:

1. act, 2. actuate and 3. loads (:mod:`~rigidrot_gym.attitude.stages.act`,
   :mod:`~rigidrot_gym.attitude.stages.actuate`, :mod:`~rigidrot_gym.attitude.stages.load`):
   the action read, the actuators' torques and the torque parameters held over the period;
4. integrate (:mod:`~rigidrot_gym.attitude.stages.integrate`): the method's own step
   (through the library's :func:`~rigidrot_gym.physics.rotation.integrators.base.advance`), staged,
   then checked;
5. restart (:mod:`~rigidrot_gym.attitude.stages.restart`), once every check has passed:
   the autoreset's draws;
6. advance (:mod:`~rigidrot_gym.attitude.stages.advance`): the actuators' and
   disturbances' own state moves on;
7. sense and 8. estimate (:mod:`~rigidrot_gym.attitude.stages.sense`,
   :mod:`~rigidrot_gym.attitude.stages.estimate`): a moving target, the sensors and the
   estimator at the staged states;
9. evaluate and 10. observe (:mod:`~rigidrot_gym.attitude.stages.evaluate`,
   :mod:`~rigidrot_gym.attitude.stages.observe`): observation, reward and flags, then
   the components' own columns.

A period either completes or changes nothing the caller keeps: failures are counted, not
searched (an early exit stops a loop vectorising), and the caller finds the first and
raises; once it returns zeros, the caller commits by swapping the staged states with the
bodies' states. Bodies marked ``waiting`` (a vector env's rows about to autoreset) are
staged as they are and not checked; their outputs and counters are written like every
body's, and the caller puts back what they had, unless they restart in the call.

An engine's method is not a compiled step: :func:`kernel_of` then compiles the period in
two parts, up to the loads (``"before"``) and from the commit on (``"after"``), and the
engine runs between them (:class:`~rigidrot_gym.attitude.batch.AttitudeBatch`).

The arguments are the records of :mod:`~rigidrot_gym.attitude.data` passed as plain
tuples (``tuple(record)``: numba unboxes a plain tuple of arrays and numbers through its
fast path, a ``NamedTuple`` through a slow one) and rebuilt as records in the first lines
of the compiled code, so that the components read every field by its name. Each
combination of method, features and part is compiled once and cached on disk (the kernel
is a closure over them and over the stages built for them, which numba's cache tells
apart); a branch on a feature is a branch on a constant, pruned before numba types the
code, and each stage's function, a separate compiled function, is inlined into the kernel
by LLVM. The passes run over blocks of
bodies (``prange``): compiled with ``parallel=True``, numba's threads share the blocks.

The passes create no array, so that the one-thread kernel compiles without numba's
reference counts (:func:`~rigidrot_gym.physics.plumbing.jit.kernel`; on threads numba's reductions
create their partial sums). A restart's uniforms go to ``Work.variates``; the realism
components' normals to ``Work.normals`` and the estimator's work to ``Work.estimator``,
one block after the other (the batch runs realism components on one thread only).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

from numba import prange

from rigidrot_gym.attitude.data import (
    ACTIONS_ROW,
    BLOCK,
    BODY,
    RATE_INTEGRAL,
    RESULTS,
    STATS,
    THREAD_BLOCK,
    VARIATES,
    Bodies,
    Carried,
    Equipment,
    Features,
    Outputs,
    Period,
    Rules,
    StartLaw,
    Work,
    equipment_expander,
    equipment_fields,
    unpacker,
)
from rigidrot_gym.attitude.stages import (
    act,
    actuate,
    advance,
    estimate,
    evaluate,
    integrate,
    load,
    observe,
    restart,
    sense,
)
from rigidrot_gym.physics.plumbing.jit import kernel

# The records of numbers travel packed together (data.pack); this rebuilds their fields.
_NUMBERS = unpacker(Rules, StartLaw)
PARTS = ("period", "before", "after")


def _compile(step: Callable | None, features: Features, part: str, parallel: bool) -> Callable:
    realistic, with_gyro, rotated_frames = features.realistic, features.gyro, features.rotated_frames
    # The Equipment fields these components read: the rest are None (data.equipment_fields).
    expand = equipment_expander(equipment_fields(features))
    integrates, before, after = part == "period", part in ("period", "before"), part in ("period", "after")
    per_block = THREAD_BLOCK if parallel else BLOCK
    # The stages, each built for these features (a stage with nothing to do is None).
    # The torque terms this scenario's loads hold, and no others (torques.model_of).
    torque, read = load.model(features)
    acting, actuating = act.stage(features), actuate.stage(features, load.stage(features))
    integrating = integrate.stage(step, torque, read, features, parallel)
    engine_rates = integrate.rates(torque, read)
    restarting, moving_on = restart.stage(), advance.stage(features)
    sensing = sense.stage(features, estimate.stage(features), estimate.shown(features))
    evaluating = evaluate.stage(features, observe.stage(features))
    senses = sensing is not None

    def control_period(call, settings, carried, equipment, numbers, out):
        """One control period (or its part) of every body; the arguments are plain tuples
        of the records of :mod:`~rigidrot_gym.attitude.data`: the first five fields of a
        ``Period`` and its ``Settings``, ``Carried`` (the bodies and their staging area),
        ``Equipment`` (the fields its components read:
        :func:`~rigidrot_gym.attitude.data.equipment_fields`), ``Rules`` and ``StartLaw``
        (packed together: :func:`~rigidrot_gym.attitude.data.pack`) and ``Outputs`` (see the module
        docstring). Returns how many bodies not waiting have
        (a) a non-finite action (then nothing is staged), (b) an implicit step that did not
        converge and (c) an invalid staged state; all zero once the period completed."""
        # One record per statement, each built by its class: numba's parallel loops find a
        # record's type by the call that built it, which a tuple or a function would hide.
        call = Period(*(call + settings))
        actuators = call.action.shape[1]
        carried = Carried(*carried)
        bodies = Bodies(
            state=carried.state,
            moments=carried.moments,
            principal=carried.principal,
            target=carried.target,
            limits=carried.limits,
            steps=carried.steps,
            hold=carried.hold,
            sources=carried.sources,
        )
        scratch = carried.scratch
        work = Work(
            staged=carried.staged,
            params=carried.params,
            stats=scratch[STATS],
            results=scratch[RESULTS],
            body=scratch[BODY],
            actions=scratch[ACTIONS_ROW : ACTIONS_ROW + actuators],
            commands=carried.commands,
            sensed=carried.sensed,
            variates=scratch[VARIATES],
            rate_integral=scratch[RATE_INTEGRAL],
            normals=carried.normals,
            estimator=carried.estimator,
        )
        if realistic:
            equipment = Equipment(*expand(equipment))
        rule_values, law_values = _NUMBERS(*numbers)
        rules = Rules(*rule_values)
        law = StartLaw(*law_values)
        out = Outputs(*out)
        # The frames the plain task turns between body and principal axes: None where every
        # frame is principal, which the components test first, so that numba prunes the turns.
        frames = bodies.principal if rotated_frames else None
        n = bodies.state.shape[1]
        blocks = (n + per_block - 1) // per_block
        if before:
            nonfinite = 0
            for block in prange(blocks):  # 1. act, 2. actuate and 3. loads
                lo, hi = block * per_block, min(n, (block + 1) * per_block)
                nonfinite += acting(call, bodies, frames, work, lo, hi)
                if realistic:
                    actuating(call, bodies, equipment, work, lo, hi)
            if nonfinite:
                return nonfinite, 0, 0
        if integrates:
            failed = invalid = 0
            for block in prange(blocks):  # 4. integrate
                lo, hi = block * per_block, min(n, (block + 1) * per_block)
                counts = integrating(call, bodies, equipment, work, lo, hi)
                failed += counts[0]
                invalid += counts[1]
            if failed or invalid:
                return 0, failed, invalid
        if after:
            if with_gyro and not integrates and call.stepped:  # an engine advanced the bodies
                for block in prange(blocks):
                    engine_rates(call, bodies, work, block * per_block, min(n, (block + 1) * per_block))
            # 5. Every check has passed: the restarting bodies' new episodes can be drawn.
            restarting(call, bodies, frames, law, work)
            for block in prange(blocks):  # 6. advance, 7.-8. sense and estimate, 9.-10. evaluate
                lo, hi = block * per_block, min(n, (block + 1) * per_block)
                if realistic:
                    moving_on(call, bodies, equipment, work, lo, hi)
                if senses:
                    sensing(call, bodies, equipment, work, lo, hi)
                evaluating(call, bodies, frames, equipment, rules, work, out, lo, hi)
        return 0, 0, 0

    # Numba's cache tells kernels apart by name, code and closure, not by their flags.
    control_period.__qualname__ += f"_{part}" + ("_parallel" if parallel else "")
    return kernel(control_period, parallel, allocates=parallel)


@functools.cache
def kernel_of(
    step: Callable | None, features: Features, part: str = "period", parallel: bool = False
) -> Callable:
    """The compiled control period (``part`` ``"period"``) of the method whose step function
    is ``step`` for the components ``features`` enables, or, for an engine's method
    (``step`` None), its part ``"before"`` or ``"after"`` the integration; with
    ``parallel``, its passes over blocks of bodies run on numba's threads."""
    if part not in PARTS or (part == "period") == (step is None):
        raise ValueError(
            f"part must be one of {PARTS} ('period' with a step, the others without), got {part!r}"
        )
    return _compile(step, features, part, parallel)
