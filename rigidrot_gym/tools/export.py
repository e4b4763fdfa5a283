"""``rigidrot export``: a trained agent as ONNX and as dependency-free C, for a flight computer.

From a run folder (of ``rigidrot train``, ``training/train.py`` or ``rl_zoo3.train``; the
committed agents are in ``training/agents/``) it writes into ``--out``:

* ``policy.onnx``: input ``observation`` float32 ``[batch, n]``, output ``action`` float32
  ``[batch, m]``;
* ``policy.h`` and ``policy.c``: C99 without allocation or dependencies beyond ``<math.h>``,
  the weights as ``static const float``, one function
  ``int rr_policy(const float *observation, float *action)``;
* ``policy.json``: the env id and its ``env_kwargs``, the sizes, each observation column's
  meaning, unit and bounds, each action column's actuator, unit and full scale, the
  control period, and the budget: parameters, bytes, multiply-adds, the Cortex-M4
  object's sizes (where ``arm-none-eabi-gcc`` is installed), the time per action measured
  here (where ``gcc`` is) and the estimate for a Cortex-M4 at 168 MHz (:func:`m4_estimate`).

Both give the deterministic action of the agent's ``predict(obs, deterministic=True)``
(:class:`rigidrot_gym.control.agents.Agent`): the ``VecNormalize`` observation normaliser
(clipped to its ``clip_obs``), the actor network, and what SB3's ``predict`` does to a
``Box`` action: PPO's clipped to the action space, SAC's and TD3's (tanh-squashed)
rescaled to it. PPO, SAC and TD3 MLP policies. Needs the ``[train]`` and ``[export]``
extras.
"""

from __future__ import annotations

import copy
import json
import platform
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from rigidrot_gym.attitude.scenario import Scenario
    from rigidrot_gym.control.agents import Agent

DESCRIPTION = """\
Exports a trained agent (a run folder of rigidrot train, training/train.py or
python -m rl_zoo3.train, e.g. training/agents/ppo/RigidRot-Reorient-v0_1) for a flight
computer: policy.onnx (input "observation" float32 [batch, n], output "action" float32
[batch, m]), policy.h and policy.c (C99, no allocation, int rr_policy(const float
*observation, float *action)) and policy.json (env, sizes, observation and action columns
with their units, control period, and the budget: parameters, bytes, multiply-adds, the
Cortex-M4 object's sizes where arm-none-eabi-gcc is installed, the time per action
measured here where gcc is, the estimate for a Cortex-M4 at 168 MHz). Both give the agent's
deterministic action: observation normaliser and action clipping (PPO) or rescaling (SAC,
TD3) included.
PPO, SAC and TD3 agents. Needs the [train] and [export] extras.

example: rigidrot export training/agents/ppo/RigidRot-Reorient-v0_1 --out outputs/export"""

# The algorithms whose deterministic action is exported. PPO's is the Gaussian's mean,
# action_net(mlp_extractor.policy_net(features)), clipped to the Box by predict; SAC's the
# squashed Gaussian's mode, tanh(mu(latent_pi(features))), TD3's its actor mu(features)
# (ending in tanh): both rescaled from [-1, 1] to the Box by predict, not clipped.
EXPORTED = ("ppo", "sac", "td3")
# The activations exported (torch class name -> the C expression of x); tanhf is C99 <math.h>.
_ACTIVATIONS = {"Tanh": "tanhf({x})", "ReLU": "({x} > 0.0f ? {x} : 0.0f)"}


@dataclass(frozen=True)
class Layer:
    """A dense layer, ``y = activation(weight @ x + bias)``: ``weight`` (out, in) float32,
    ``bias`` (out,), ``activation`` a key of the activations (``Tanh``, ``ReLU``) or None."""

    weight: np.ndarray
    bias: np.ndarray
    activation: str | None


@dataclass(frozen=True)
class Policy:
    """An agent's deterministic policy as plain arrays: the normaliser (``mean``, ``std``
    and ``clip`` of the observation; None without one), the layers, the action bounds and
    what the last layer's output becomes: ``"clip"``ped to them (PPO) or ``"unscale"``d
    from [-1, 1] to them (SAC, TD3: ``low + (y + 1) (high - low) / 2``)."""

    layers: tuple[Layer, ...]
    low: np.ndarray
    high: np.ndarray
    mean: np.ndarray | None = None
    std: np.ndarray | None = None
    clip: float | None = None
    output: str = "clip"

    @property
    def observation_size(self) -> int:
        """n, the observation's columns."""
        return int(self.layers[0].weight.shape[1])

    @property
    def action_size(self) -> int:
        """m, the action's columns."""
        return int(self.layers[-1].weight.shape[0])

    def budget(self) -> dict[str, int]:
        """Parameters (the network's weights and biases), the bytes of every constant of the
        C file (the network, the normaliser, the bounds: float32), multiply-adds per action."""
        parameters = sum(layer.weight.size + layer.bias.size for layer in self.layers)
        constants = parameters + self.low.size + self.high.size
        if self.mean is not None:
            constants += self.mean.size + self.std.size
        return {
            "parameters": int(parameters),
            "weight_bytes": int(4 * parameters),
            "constant_bytes": int(4 * constants),
            "multiply_adds": int(sum(layer.weight.size for layer in self.layers)),
            "activations": int(sum(layer.bias.size for layer in self.layers if layer.activation)),
        }


def _actor(agent: Agent) -> tuple[list, str]:
    """The torch modules of the agent's deterministic action in order (the agent's own,
    not copies), and what predict does with their output (``"clip"`` or ``"unscale"``)."""
    import torch

    algo, policy = agent.config.get("algo"), agent.model.policy
    if algo == "ppo":
        if policy.squash_output:
            raise ValueError(f"{agent.name}: a PPO policy with squash_output (gSDE) is not exported")
        return [policy.pi_features_extractor, *policy.mlp_extractor.policy_net, policy.action_net], "clip"
    if getattr(policy.actor, "use_sde", False):
        raise ValueError(f"{agent.name}: a SAC actor with gSDE is not exported")
    if algo == "sac":
        actor = policy.actor
        return [actor.features_extractor, *actor.latent_pi, actor.mu, torch.nn.Tanh()], "unscale"
    return [policy.actor.features_extractor, *policy.actor.mu], "unscale"


def policy_of(agent: Agent) -> Policy:
    """The deterministic policy of a loaded agent (:func:`rigidrot_gym.control.agents.load`).

    Raises:
        ValueError: for an algorithm other than PPO, SAC and TD3, a policy that is not an
            MLP on a flat ``Box`` observation, or an activation other than Tanh and ReLU.
    """
    from gymnasium import spaces
    from stable_baselines3.common.torch_layers import FlattenExtractor

    algo = agent.config.get("algo")
    if algo not in EXPORTED:
        supported = ", ".join(a.upper() for a in EXPORTED)
        raise ValueError(
            f"{agent.name}: exporting {str(algo).upper()} agents is not supported yet ({supported} only)"
        )
    obs_space, action_space = agent.model.observation_space, agent.model.action_space
    if not isinstance(obs_space, spaces.Box) or len(obs_space.shape) != 1:
        raise ValueError(f"{agent.name}: expected a flat Box observation space, got {obs_space}")
    if not isinstance(action_space, spaces.Box):
        raise ValueError(f"{agent.name}: expected a Box action space, got {action_space}")
    (features, *modules), output = _actor(agent)
    if not isinstance(features, FlattenExtractor):
        raise ValueError(f"{agent.name}: expected SB3's FlattenExtractor, got {features}")
    layers = []
    for module in modules:
        name = type(module).__name__
        if name == "Linear":
            weight = module.weight.detach().cpu().numpy().astype(np.float32)
            bias = module.bias.detach().cpu().numpy().astype(np.float32)
            layers.append(Layer(weight, bias, None))
        elif name in _ACTIVATIONS and layers and layers[-1].activation is None:
            layers[-1] = Layer(layers[-1].weight, layers[-1].bias, name)
        else:
            raise ValueError(f"{agent.name}: cannot export the layer {module} (Linear, Tanh, ReLU only)")
    mean = std = clip = None
    normalizer = agent.normalizer
    if normalizer is not None and normalizer.norm_obs:
        # VecNormalize divides by sqrt(var + epsilon) (float64); the C and ONNX do it in float32.
        mean = normalizer.obs_rms.mean.astype(np.float32)
        std = np.sqrt(normalizer.obs_rms.var + normalizer.epsilon).astype(np.float32)
        clip = float(normalizer.clip_obs)
    low = action_space.low.astype(np.float32)
    high = action_space.high.astype(np.float32)
    result = Policy(tuple(layers), low, high, mean, std, clip, output)
    arrays = [low, high, *(a for layer in layers for a in (layer.weight, layer.bias))]
    arrays += [] if mean is None else [mean, std, np.float32(clip)]
    # An infinite bound or weight has no C literal, and would make every action NaN or inf.
    if not all(np.all(np.isfinite(a)) for a in arrays):
        raise ValueError(f"{agent.name}: a weight, normaliser statistic or action bound is not finite")
    return result


def _module(agent: Agent, policy: Policy):
    """A torch module computing the exported action from a raw observation: normalise,
    clip, the actor (copies of the agent's own modules), then clip to the action space or
    rescale to it."""
    import torch

    actor = torch.nn.Sequential(*copy.deepcopy(_actor(agent)[0][1:])).float()

    class Exported(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.actor = actor
            n = policy.observation_size
            mean = policy.mean if policy.mean is not None else np.zeros(n, np.float32)
            std = policy.std if policy.std is not None else np.ones(n, np.float32)
            self.register_buffer("mean", torch.from_numpy(mean.copy()))
            self.register_buffer("std", torch.from_numpy(std.copy()))
            self.register_buffer("low", torch.from_numpy(policy.low.copy()))
            self.register_buffer("high", torch.from_numpy(policy.high.copy()))
            self.clip = policy.clip
            self.output = policy.output

        def forward(self, observation):
            x = (observation - self.mean) / self.std
            if self.clip is not None:
                x = torch.clamp(x, -self.clip, self.clip)
            y = self.actor(x)
            if self.output == "unscale":  # as BasePolicy.unscale_action
                return self.low + 0.5 * (y + 1.0) * (self.high - self.low)
            # minimum/maximum rather than clamp: the bounds are per-column tensors.
            return torch.maximum(torch.minimum(y, self.high), self.low)

    return Exported().eval()


def write_onnx(agent: Agent, policy: Policy, path: Path) -> Path:
    """``policy.onnx`` at ``path``: the agent's deterministic action, batch of any size."""
    import logging
    import warnings

    import torch

    module = _module(agent, policy)
    example = torch.zeros((2, policy.observation_size), dtype=torch.float32)
    # torch.export's exporter (onnxscript; the TorchScript one is deprecated), the batch
    # dimension dynamic, the weights inside the one file. Its registry warns about every
    # torchvision operator it cannot register when torchvision is absent, and torch.export
    # about its own pytree internals: neither is about this export, so neither is shown.
    registry = logging.getLogger("torch.onnx._internal.exporter._registration")
    level = registry.level
    registry.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            torch.onnx.export(
                module,
                (example,),
                str(path),
                input_names=["observation"],
                output_names=["action"],
                dynamic_shapes=({0: torch.export.Dim("batch")},),
                dynamo=True,
                external_data=False,
                verbose=False,
            )
    finally:
        registry.setLevel(level)
    return path


def _float(value: float) -> str:
    """A float32 as a C literal: %.9g round-trips every float32 exactly; a point added
    where %.9g gives an integer (``1`` -> ``1.f``: ``1f`` is not C)."""
    text = f"{float(np.float32(value)):.9g}"
    return f"{text}f" if any(c in text for c in ".e") else f"{text}.f"


def _floats(values: np.ndarray) -> str:
    """Float32 values as C literals, comma-separated, eight a line."""
    texts = [_float(v) for v in np.asarray(values, dtype=np.float32).ravel()]
    return ",\n    ".join(", ".join(texts[i : i + 8]) for i in range(0, len(texts), 8))


def c_sources(policy: Policy, name: str = "agent") -> tuple[str, str]:
    """(``policy.h``, ``policy.c``): C99, no allocation, the weights as ``static const float``."""
    n, m = policy.observation_size, policy.action_size
    header = f"""\
/* {name}: the agent's deterministic action, exported by rigidrot export. */
#ifndef RR_POLICY_H
#define RR_POLICY_H

#define RR_POLICY_OBSERVATION_SIZE {n}
#define RR_POLICY_ACTION_SIZE {m}

#ifdef __cplusplus
extern "C" {{
#endif

/* Writes the action (RR_POLICY_ACTION_SIZE floats) for the raw observation
   (RR_POLICY_OBSERVATION_SIZE floats) and returns 0; returns 1 and writes nothing when
   an observation is not finite. Reentrant: no state, no allocation. */
int rr_policy(const float *observation, float *action);

#ifdef __cplusplus
}}
#endif

#endif /* RR_POLICY_H */
"""
    width = max(layer.weight.shape[0] for layer in policy.layers)
    lines = [
        f"/* {name}: the agent's deterministic action, exported by rigidrot export. */",
        '#include "policy.h"',
        "",
        "#include <math.h>",
        "",
    ]
    if policy.mean is not None:
        lines += [
            f"static const float rr_mean[{n}] = {{\n    {_floats(policy.mean)}\n}};",
            f"static const float rr_std[{n}] = {{\n    {_floats(policy.std)}\n}};",
            f"static const float rr_clip = {_float(policy.clip)};",
        ]
    lines += [
        f"static const float rr_low[{m}] = {{\n    {_floats(policy.low)}\n}};",
        f"static const float rr_high[{m}] = {{\n    {_floats(policy.high)}\n}};",
    ]
    for i, layer in enumerate(policy.layers):
        rows, cols = layer.weight.shape
        lines.append(f"static const float rr_w{i}[{rows * cols}] = {{\n    {_floats(layer.weight)}\n}};")
        lines.append(f"static const float rr_b{i}[{rows}] = {{\n    {_floats(layer.bias)}\n}};")
    lines += [
        "",
        "/* y = w x + b, w row-major (outputs, inputs) as torch stores it. */",
        "static void rr_dense(const float *w, const float *b, int inputs, int outputs,",
        "                     const float *x, float *y)",
        "{",
        "    int o, i;",
        "    for (o = 0; o < outputs; ++o) {",
        "        float sum = b[o];",
        "        for (i = 0; i < inputs; ++i) {",
        "            sum += w[o * inputs + i] * x[i];",
        "        }",
        "        y[o] = sum;",
        "    }",
        "}",
        "",
        "int rr_policy(const float *observation, float *action)",
        "{",
        f"    float a[{max(width, n)}];",
        f"    float b[{max(width, n)}];",
        "    int i;",
        "    /* Checked first, so that a bad reading leaves the previous action in place. */",
        f"    for (i = 0; i < {n}; ++i) {{",
        "        if (!isfinite(observation[i])) {",
        "            return 1;",
        "        }",
        "    }",
        f"    for (i = 0; i < {n}; ++i) {{",
    ]
    if policy.mean is not None:
        lines += [
            "        /* VecNormalize's normaliser, clipped as in training. */",
            "        float x = (observation[i] - rr_mean[i]) / rr_std[i];",
            "        a[i] = x < -rr_clip ? -rr_clip : (x > rr_clip ? rr_clip : x);",
        ]
    else:
        lines.append("        a[i] = observation[i];")
    lines.append("    }")
    current, other = "a", "b"
    for i, layer in enumerate(policy.layers):
        rows, cols = layer.weight.shape
        lines.append(f"    rr_dense(rr_w{i}, rr_b{i}, {cols}, {rows}, {current}, {other});")
        if layer.activation:
            expr = _ACTIVATIONS[layer.activation].format(x=f"{other}[i]")
            lines.append(f"    for (i = 0; i < {rows}; ++i) {{")
            lines.append(f"        {other}[i] = {expr};")
            lines.append("    }")
        current, other = other, current
    if policy.output == "unscale":
        step = [
            "    /* predict() rescales the squashed action from [-1, 1] to the action space. */",
            f"    for (i = 0; i < {m}; ++i) {{",
            f"        action[i] = rr_low[i] + 0.5f * ({current}[i] + 1.0f) * (rr_high[i] - rr_low[i]);",
            "    }",
        ]
    else:
        step = [
            "    /* predict() clips the action to the action space (a Box). */",
            f"    for (i = 0; i < {m}; ++i) {{",
            f"        float u = {current}[i];",
            "        action[i] = u < rr_low[i] ? rr_low[i] : (u > rr_high[i] ? rr_high[i] : u);",
            "    }",
        ]
    lines += [*step, "    return 0;", "}", ""]
    return header, "\n".join(lines)


# What a command of ±1 asks of an actuator, by its kind and unit (actuators.Kind): the
# action's column j of the kind, ``{axis}`` its body axis where the kind's axes are x, y, z.
_ACTION_MEANINGS = {
    ("torquers", "N·m"): "torque about body {axis}",
    ("wheels", "N·m"): "motor torque of wheel {j} (the body turns the other way)",
    ("rods", "A·m²"): "magnetic dipole of the rod along body {axis}",
    ("thrusters", "N·m"): "torque request about body {axis} (mapped onto the thrusters, pulse-modulated)",
    ("thrusters", "s"): "on-time of thruster {j} in the control period",
}


def action_columns(scenario: Scenario) -> list[dict]:
    """The action's columns in order (:class:`~rigidrot_gym.attitude.actuators.Actuators`):
    each one's actuator kind, meaning, ``unit`` and ``full_scale``, what a command of ±1
    asks for (in ``unit``; the env clips commands to [-1, 1])."""
    from rigidrot_gym.attitude.actuators import Actuators

    found = []
    for kind in Actuators.of(scenario).kinds:
        for j in range(kind.count):
            # the kinds whose templates name an axis lie along the body's three
            axis = "xyz"[j] if kind.count == 3 else None
            meaning = _ACTION_MEANINGS[(kind.name, kind.unit)].format(axis=axis, j=j)
            found.append(
                {
                    "column": len(found),
                    "actuator": kind.name,
                    "meaning": meaning,
                    "unit": kind.unit,
                    "full_scale": float(kind.limits[j]),
                }
            )
    return found


# The Cortex-M4 estimate's model (an STM32F4-class Cortex-M4F at 168 MHz): cycles per action
# = the sum over the policy's operations of their counts times these cycle costs. The costs
# are the ARM Cortex-M4 TRM's (r0p1, section 3.3) and the FPv4-SP's (Cortex-M4 TRM section
# 7.2.3) cycle counts of the instructions arm-none-eabi-gcc 12 -O2 emits for policy.c,
# not a measurement on a chip:
M4_CLOCK_HZ = 168e6
M4_CYCLES = {
    # rr_dense's inner loop: VLDM of x (2), VLDM of w (2), VMUL.F32 (1), VADD.F32 (1; no
    # VFMA: -std=c99 turns contraction off), CMP (1), a taken BNE (2), plus 1 for the flash
    # wait states of the weight reads (5 at 168 MHz, one line fetch in 4 through the ART).
    "multiply_add": 10,
    # newlib's tanhf (not in the object: libm's, 184 + 624 bytes with expm1f): about 100
    # instructions on its path and two VDIV.F32 (14 each). An assumption, not counted.
    "tanh": 150,
    "relu": 6,  # VCMP, VMRS, a conditional move, load and store
    # each dense layer output: its bias's load, its store, the loop's set-up
    "neuron": 10,
    # the finite check (VABS, VCMP, VMRS, a branch) and the normaliser (VSUB, VDIV.F32 14,
    # the clip's two compares)
    "observation_column": 40,
    "action_column": 20,  # the clip or rescale, two bound loads, the store
}


def m4_estimate(policy: Policy, dt: float) -> dict:
    """Cycles and µs per action on a Cortex-M4F at :data:`M4_CLOCK_HZ` under the
    :data:`M4_CYCLES` model, and their share of a 1 Hz loop and of the env's control
    period ``dt`` (s)."""
    counts = {
        "multiply_add": sum(layer.weight.size for layer in policy.layers),
        "tanh": sum(layer.bias.size for layer in policy.layers if layer.activation == "Tanh"),
        "relu": sum(layer.bias.size for layer in policy.layers if layer.activation == "ReLU"),
        "neuron": sum(layer.bias.size for layer in policy.layers),
        "observation_column": policy.observation_size,
        "action_column": policy.action_size,
    }
    cycles = sum(M4_CYCLES[key] * int(count) for key, count in counts.items())
    seconds = cycles / M4_CLOCK_HZ
    return {
        "clock_hz": M4_CLOCK_HZ,
        "cycles_per_action": cycles,
        "us_per_action": seconds * 1e6,
        "share_of_1_hz_loop": seconds / 1.0,
        "share_of_control_period": seconds / dt,
        "model": "cycles = sum of count × cycles per operation (rigidrot_gym.tools.export.M4_CYCLES)",
        "cycles_per_operation": dict(M4_CYCLES),
        "operations": {key: int(count) for key, count in counts.items()},
    }


class Unavailable(RuntimeError):
    """A figure that this machine cannot give (a compiler absent); the message says why."""


# policy.c compiled for a Cortex-M4F (Thumb-2, FPv4 single precision, hardware float ABI).
M4_FLAGS = (
    "-mcpu=cortex-m4",
    "-mthumb",
    "-mfloat-abi=hard",
    "-mfpu=fpv4-sp-d16",
    "-O2",
    "-std=c99",
    "-Wall",
    "-Wextra",
    "-Werror",
)
HOST_FLAGS = ("-std=c99", "-Wall", "-Wextra", "-Werror", "-O2")


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        raise Unavailable(f"{name} is not on PATH")
    return path


def _output(command: list[str]) -> str:
    """The standard output of ``command``.

    Raises:
        RuntimeError: if it fails, with its standard error.
    """
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{Path(command[0]).name} failed ({done.returncode}): {done.stderr.strip()}")
    return done.stdout


def _version(compiler: str) -> str:
    """The compiler's first ``--version`` line."""
    return subprocess.run([compiler, "--version"], capture_output=True, text=True).stdout.splitlines()[0]


def m4_object(folder: Path) -> dict:
    """``policy.c`` in ``folder`` compiled to an object (no link) with ``arm-none-eabi-gcc``
    and :data:`M4_FLAGS`: its ``text`` (code and the ``static const`` weights, .rodata),
    ``data`` and ``bss`` bytes as ``arm-none-eabi-size`` counts them, and the symbols it
    leaves to the link (``tanhf``: newlib's libm).

    Raises:
        Unavailable: if ``arm-none-eabi-gcc`` or its binutils are not on PATH.
        RuntimeError: if the compile fails (a warning fails it: -Werror).
    """
    compiler, size, nm = _tool("arm-none-eabi-gcc"), _tool("arm-none-eabi-size"), _tool("arm-none-eabi-nm")
    with tempfile.TemporaryDirectory() as scratch:
        target = Path(scratch) / "policy.o"
        _output([compiler, *M4_FLAGS, "-c", str(folder / "policy.c"), "-o", str(target)])
        # Berkeley format: a header, then "text data bss dec hex filename".
        row = _output([size, str(target)])
        text, data, bss = (int(v) for v in row.splitlines()[1].split()[:3])
        symbols = _output([nm, "-u", str(target)])
    return {
        "compiler": _version(compiler),
        "flags": " ".join(M4_FLAGS),
        "text": text,
        "data": data,
        "bss": bss,
        "undefined": sorted(line.split()[-1] for line in symbols.splitlines() if line.strip()),
    }


# The timing harness: rr_policy (its own translation unit, so nothing is hoisted out of the
# loop) called on one observation until each repeat has run for REPEAT_S; prints, per
# repeat, the calls and the seconds.
_HARNESS = """\
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <time.h>
#include "policy.h"

static double now(void)
{{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}}

int main(void)
{{
    static const float observation[RR_POLICY_OBSERVATION_SIZE] = {{ {observation} }};
    float action[RR_POLICY_ACTION_SIZE];
    volatile float sink = 0.0f;
    int r;
    for (r = 0; r < {repeats}; ++r) {{
        long calls = 0;
        double start = now(), elapsed;
        do {{
            int k;
            for (k = 0; k < 100; ++k) {{
                rr_policy(observation, action);
                sink += action[0];
            }}
            calls += 100;
            elapsed = now() - start;
        }} while (elapsed < {repeat_s});
        printf("%ld %.9f\\n", calls, elapsed);
    }}
    return 0;
}}
"""


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``'s first, else the platform's)."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def time_per_action(folder: Path, policy: Policy, repeats: int = 9, repeat_s: float = 0.02) -> dict:
    """The time per action of ``policy.c`` in ``folder`` on this machine, compiled with
    ``gcc`` and :data:`HOST_FLAGS`: the median over ``repeats`` repeats (each calling it
    for ``repeat_s`` seconds) of µs per call, on the observation at the normaliser's mean
    (a typical one; zeros without a normaliser), with the CPU's model and the compiler.

    Raises:
        ValueError: for ``repeats`` < 1 or ``repeat_s`` not > 0.
        Unavailable: if ``gcc`` is not on PATH.
        RuntimeError: if the harness does not compile or run.
    """
    if repeats < 1:
        raise ValueError(f"repeats must be at least 1, got {repeats}")
    if not repeat_s > 0:
        raise ValueError(f"repeat_s must be positive seconds, got {repeat_s}")
    compiler = _tool("gcc")
    mean = policy.mean if policy.mean is not None else np.zeros(policy.observation_size, np.float32)
    source = _HARNESS.format(observation=_floats(mean), repeats=repeats, repeat_s=repeat_s)
    with tempfile.TemporaryDirectory() as scratch:
        harness, program = Path(scratch) / "harness.c", Path(scratch) / "harness"
        harness.write_text(source)
        sources = [str(harness), str(folder / "policy.c")]
        _output([compiler, *HOST_FLAGS, "-I", str(folder), *sources, "-o", str(program), "-lm"])
        ran = _output([str(program)])
    per_call = [float(seconds) / int(calls) for calls, seconds in (line.split() for line in ran.splitlines())]
    return {
        "us_per_action": float(np.median(per_call)) * 1e6,
        "cpu": cpu_model(),
        "compiler": _version(compiler),
        "flags": " ".join(HOST_FLAGS),
        "repeats": repeats,
    }


def measurements(folder: Path, policy: Policy) -> dict:
    """The budget's figures that need a compiler: ``cortex_m4_object`` (:func:`m4_object`)
    and ``time_per_action_here`` (:func:`time_per_action`), each None with a
    ``..._unavailable`` reason where its compiler is absent."""
    found: dict = {}
    for key, measure in (
        ("cortex_m4_object", lambda: m4_object(folder)),
        ("time_per_action_here", lambda: time_per_action(folder, policy)),
    ):
        try:
            found[key] = measure()
        except Unavailable as reason:
            found[key], found[f"{key}_unavailable"] = None, str(reason)
    return found


def description(agent: Agent, policy: Policy) -> dict:
    """``policy.json``'s content: the env, the sizes, the observation and action columns,
    the control period and the budget but for what needs a compiler (:func:`measurements`)."""
    from rigidrot_gym.attitude.sb3 import AttitudeSB3VecEnv
    from rigidrot_gym.attitude.task import observation_columns

    config = agent.config
    env_kwargs = dict(config.get("env_kwargs") or {})
    # The env the agent was trained on, as agents.load builds it, for its scenario.
    if agent.normalizer is not None:
        scenario = agent.normalizer.venv.scenario
    else:
        scenario = AttitudeSB3VecEnv(1, config["env"], **env_kwargs).scenario
    columns = [
        {
            "name": block.name,
            "columns": [block.columns.start, block.columns.stop],
            "meaning": block.meaning,
            "unit": block.unit,
            "low": block.low,
            "high": block.high,
        }
        for block in observation_columns(scenario)
    ]
    budget = policy.budget()
    budget["cortex_m4_estimate"] = m4_estimate(policy, float(scenario.dt))
    return {
        "agent": agent.name,
        "algo": config.get("algo"),
        "env": config["env"],
        "env_kwargs": env_kwargs,
        "observation_size": policy.observation_size,
        "action_size": policy.action_size,
        "observation_columns": columns,
        "action_columns": action_columns(scenario),
        "action_low": [float(v) for v in policy.low],
        "action_high": [float(v) for v in policy.high],
        "dt": float(scenario.dt),
        "normalizer": None if policy.mean is None else {"clip": policy.clip},
        "action_output": policy.output,
        "budget": budget,
    }


# What an export imports (the [train] and [export] extras), by the name pip installs.
REQUIRED = {
    "torch": "torch",
    "stable_baselines3": "stable-baselines3",
    "onnx": "onnx",
    "onnxscript": "onnxscript",
}


def missing() -> list[str]:
    """The distributions an export needs that are not installed (by pip's names)."""
    import importlib.util

    return [name for module, name in REQUIRED.items() if importlib.util.find_spec(module) is None]


def export(run_dir: str | Path, out: str | Path) -> dict:
    """Writes ``policy.onnx``, ``policy.h``, ``policy.c`` and ``policy.json`` of the agent
    in ``run_dir`` into ``out`` (created if missing); returns ``policy.json``'s content.

    Raises:
        ValueError: for a folder that is not a run, or an agent that cannot be exported.
        RuntimeError: if an extra it needs is not installed (checked before any work).
    """
    from rigidrot_gym.control import agents

    absent = missing()
    if absent:
        raise RuntimeError(
            f'rigidrot export needs the [export] extra (pip install "rigidrot-gym[export]"): '
            f"{', '.join(absent)} not installed"
        )
    run_dir, out = Path(run_dir), Path(out)
    if not run_dir.is_dir():
        raise ValueError(
            f"{run_dir}: no such folder; expected a run folder "
            "such as training/agents/ppo/RigidRot-Reorient-v0_1"
        )
    try:
        agent = agents.load(run_dir)
    except FileNotFoundError as err:
        raise ValueError(str(err)) from None
    return write(agent, out)


def write(agent: Agent, out: str | Path) -> dict:
    """Writes the four files of a loaded ``agent`` into ``out`` (created if missing) and
    returns ``policy.json``'s content; :func:`export` from a run folder.

    Raises:
        ValueError: for an agent that cannot be exported (:func:`policy_of`).
    """
    out = Path(out)
    policy = policy_of(agent)
    out.mkdir(parents=True, exist_ok=True)
    write_onnx(agent, policy, out / "policy.onnx")
    header, source = c_sources(policy, agent.name)
    (out / "policy.h").write_text(header)
    (out / "policy.c").write_text(source)
    info = description(agent, policy)
    info["budget"].update(measurements(out, policy))
    (out / "policy.json").write_text(json.dumps(info, indent=2, ensure_ascii=False) + "\n")
    return info


def run(run_dir: Path, out: Path) -> str:
    """``rigidrot export``: exports, and returns the lines to print."""
    info = export(run_dir, out)
    budget = info["budget"]
    m4, here, estimate = (
        budget["cortex_m4_object"],
        budget["time_per_action_here"],
        budget["cortex_m4_estimate"],
    )
    lines = [
        f"{info['agent']} ({info['env']}): "
        f"observation {info['observation_size']}, action {info['action_size']}, "
        f"{budget['parameters']} parameters ({budget['weight_bytes']} bytes), "
        f"{budget['multiply_adds']} multiply-adds per action",
        f"Cortex-M4 object: text {m4['text']}, data {m4['data']}, bss {m4['bss']} bytes"
        if m4
        else f"Cortex-M4 object: none ({budget['cortex_m4_object_unavailable']})",
        f"here: {here['us_per_action']:.2f} µs per action ({here['cpu']})"
        if here
        else f"here: not timed ({budget['time_per_action_here_unavailable']})",
        f"Cortex-M4 at {estimate['clock_hz'] / 1e6:g} MHz, estimated: {estimate['us_per_action']:.0f} µs "
        f"per action, {100 * estimate['share_of_1_hz_loop']:.3f} % of a 1 Hz loop",
        f"wrote policy.onnx, policy.h, policy.c, policy.json to {out}/",
    ]
    return "\n".join(lines)
