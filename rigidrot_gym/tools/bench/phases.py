"""Where a vector env step's time goes, and how far the integration is from the machine's limit.

* :func:`phase_costs`: nanoseconds per env-step of the native vector env, split into the
  Python around the compiled call (argument checks, result copies, ``info``), the compiled
  pipeline's call (:meth:`~rigidrot_gym.attitude.batch.AttitudeBatch.dry_run`) without
  integrating (actions, checks, commit, observation, reward, flags) and the integration
  per sub-step (the same call with
  :data:`EXTRA_SUBSTEPS` sub-steps more, minus the call, over that number: the difference of
  two best times of one more sub-step alone is within the machine's noise, and came out
  below the arithmetic peak in one run);
* :func:`arithmetic_peak`: floating-point operations per second of a tight multiply-add loop
  compiled the same way as the kernels (:func:`~rigidrot_gym.physics.plumbing.jit.kernel`: a
  multiply and an add contracted into one fused multiply-add, two operations), vectorised
  over elements with eight independent chains each (with four, a chain's multiply waits
  on its add, and an RK4 step measured faster than the loop on an Intel Xeon with
  AVX-512), the best of several runs: this core's attainable peak for such code;
* :data:`RK4_FLOPS`: the operations of one RK4 step of one body with a held body torque.

The machines are shared: each figure is the best of alternating repeats.
"""

from __future__ import annotations

import time

import gymnasium as gym
import numpy as np

from rigidrot_gym.physics.plumbing.jit import kernel

# One RK4 step of one body with a body torque (rigidrot_gym.physics.rotation.integrators.rk4.step),
# counted by hand: per stage 2 q̇ = q ⊗ ω (20; the ½ is in the coefficients) and
# ω̇ = I⁻¹(τ − ω × Iω) (18), four stages (152); the three stage inputs q + c h k, ω + c h k
# (42); the weighted sum (50); the renormalisation (11 and a square root). Besides: a
# division for |q|, three for 1/I (hoisted out of the stages).
RK4_FLOPS = 255
RK4_DIVISIONS_AND_ROOTS = 5

EXTRA_SUBSTEPS = 8
_LANES = 256  # elements, each a body of the loop (fits in L1)
_CHAIN = 16  # multiply-adds per chain and pass; eight independent chains per element
_FLOPS_PER_ELEMENT = 2 * 8 * _CHAIN  # a multiply and an add per multiply-add


@kernel
def _multiply_add(x, a, b, passes):
    for _ in range(passes):
        for i in range(x.size):
            # independent chains, as a body's components are: enough of them that the
            # multiplies and adds in flight fill the pipelines rather than wait on each other
            v0 = x[i]
            v1, v2, v3, v4, v5, v6, v7 = v0 + 1.0, v0 + 2.0, v0 + 3.0, v0 + 4.0, v0 + 5.0, v0 + 6.0, v0 + 7.0
            for _ in range(_CHAIN):
                v0, v1, v2, v3 = v0 * a + b, v1 * a + b, v2 * a + b, v3 * a + b
                v4, v5, v6, v7 = v4 * a + b, v5 * a + b, v6 * a + b, v7 * a + b
            x[i] = ((v0 + v1) + (v2 + v3)) + ((v4 + v5) + (v6 + v7)) - 28.0


def arithmetic_peak(seconds: float = 0.1, repeats: int = 9) -> float:
    """Floating-point operations per second of :func:`_multiply_add`, the best of
    ``repeats`` (a peak: what the core reaches when the shared machine lets it)."""
    x = np.ones(_LANES)
    a, b = 0.999999, 1e-7
    _multiply_add(x, a, b, 1)
    passes, rates = 100, []
    for _ in range(repeats):
        start = time.perf_counter()
        _multiply_add(x, a, b, passes)
        elapsed = time.perf_counter() - start
        rates.append(_FLOPS_PER_ELEMENT * _LANES * passes / elapsed)
        passes = max(1, int(passes * seconds / max(elapsed, 1e-6)))
    return float(max(rates))


def phase_costs(env_id: str, n: int = 4096, repeats: int = 31) -> dict[str, float]:
    """ns per env-step of each phase (see the module docstring) of ``n`` envs of ``env_id``
    (a library method: one compiled call per period), each the best of ``repeats``
    alternating runs (as :func:`arithmetic_peak`: on a shared machine the best run is the
    one the others disturbed least)."""
    env = gym.make_vec(env_id, num_envs=n, vectorization_mode="vector_entry_point")
    env.reset(seed=0)
    batch = env.unwrapped.batch
    actions = np.zeros((n, batch.actuators.count), dtype=np.float32)
    substeps = batch.scenario.substeps
    timings: dict[str, list[float]] = {"step": [], "call": [], "none": [], "more": []}
    for _ in range(repeats):
        batch.steps[:] = 0  # no episode ends (no autoreset) while timing
        for key, run in (
            ("step", lambda: env.step(actions)),
            ("call", lambda: batch.dry_run(actions, substeps)),
            ("none", lambda: batch.dry_run(actions, 0)),
            ("more", lambda: batch.dry_run(actions, substeps + EXTRA_SUBSTEPS)),
        ):
            start = time.perf_counter()
            run()
            timings[key].append((time.perf_counter() - start) * 1e9 / n)
    env.close()
    t = {key: float(np.min(values)) for key, values in timings.items()}
    per_substep = (t["more"] - t["call"]) / EXTRA_SUBSTEPS
    return {
        "vector env step": t["step"],
        "Python around the compiled call": t["step"] - t["call"],
        "compiled call": t["call"],
        "actions, checks, commit, observation, reward, flags": t["none"],
        "integration (per sub-step)": per_substep,
    }
