"""The figures of ``rigidrot crosscheck``: work-precision, long-horizon drift, and
MuJoCo's implicitfast damping per step.

Every method keeps one colour, line style and marker in every figure: solid and round
for our methods, dashed and square for PyBullet, dash-dot and triangle for MuJoCo, dotted
and diamond for Basilisk. Engines that run the same scheme give the same curve (PyBullet's
multibody and MuJoCo's Euler; PyBullet's rigid body and MuJoCo's implicit pair, torque-free):
earlier methods are drawn wider, so a curve hidden under another still shows around it.
Legends sit outside the data; titles name the body, ω0 and the steps.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from rigidrot_gym.physics.rotation import integrators
from rigidrot_gym.tools.crosscheck import (
    DAMPING_W0,
    PROBLEMS,
    TARGETS,
    DampingPoint,
    Drift,
    Point,
    curve,
    step_label,
)

_LINES = {"": "-", "PyBullet": "--", "MuJoCo": "-.", "Basilisk": ":"}
_MARKERS = {"": "o", "PyBullet": "s", "MuJoCo": "^", "Basilisk": "D"}
# Distinguishable colours (tab10, then the darker tab20b shades).
_COLOURS = [
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
    "#393b79",
    "#637939",
    "#8c6d31",
    "#843c39",
    "#7b4173",
]


def style(method: str, methods: list[str]) -> dict:
    """Colour, line style, marker and width of ``method`` (by its place in ``methods``)."""
    engine = integrators.get(method).engine
    index = methods.index(method) if method in methods else 0
    return {
        "color": _COLOURS[index % len(_COLOURS)],
        "linestyle": _LINES[engine],
        "marker": _MARKERS[engine],
        "linewidth": max(0.9, 3.2 - 0.22 * index),
        "markersize": max(3.0, 7.0 - 0.3 * index),
    }


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _label(method: str) -> str:
    engine = integrators.get(method).engine
    return f"{method} ({engine})" if engine else f"{method} (ours)"


def work_precision(points: list[Point], problems, methods: list[str], path: Path) -> None:
    """Largest attitude error against CPU per simulated second, one panel per problem."""
    plt = _pyplot()
    fig, axes = plt.subplots(1, len(problems), figsize=(5.2 * len(problems) + 2.6, 4.8), squeeze=False)
    steps = sorted({p.dt for p in points}, reverse=True)
    for ax, problem in zip(axes[0], problems, strict=True):
        for method in methods:
            line = curve(points, problem.key, method)
            if line:
                ax.loglog(
                    [p.cost for p in line],
                    [max(p.attitude_error, 1e-16) for p in line],
                    label=_label(method),
                    **style(method, methods),
                )
        for target in TARGETS:
            ax.axhline(target, color="0.8", lw=0.7, zorder=0)
        load = "" if problem.torque is None else f", τ = {problem.torque} N·m (body)"
        ax.set_title(
            f"{problem.title}\nI = {problem.inertia} kg·m², ω0 = {problem.omega0} rad/s{load}\n"
            f"{problem.duration:g} s, dt = {step_label(steps[0])} … {step_label(steps[-1])} s",
            fontsize=8.5,
        )
        ax.set_xlabel("CPU per simulated second per body (µs)")
        ax.grid(True, which="major", alpha=0.3)
    axes[0, 0].set_ylabel("largest attitude error over the run (rad)")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="center left", bbox_to_anchor=(0.86, 0.5), fontsize=7.5, frameon=False)
    fig.suptitle(
        "Work-precision: game engines and our methods against the exact solution / DOP853", fontsize=10
    )
    fig.tight_layout(rect=(0, 0, 0.86, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def drift(curves: dict, rows: list[Drift], path: Path) -> None:
    """|E/E0 − 1| and ||L|/|L0| − 1| against time over the long horizon."""
    plt = _pyplot()
    methods = list(curves)
    fig, axes = plt.subplots(1, 2, figsize=(13.5, 4.8), squeeze=False)
    for i, (method, (t, energy, momentum)) in enumerate(curves.items()):
        every = max(1, len(t) // 1500)
        # Sparse markers, shifted per method, so coinciding curves stay apart.
        kw = style(method, methods) | {"markevery": (i * 7 % 100 + 10, 100)}
        axes[0, 0].semilogy(
            t[::every], np.maximum(np.abs(energy[::every]), 1e-17), label=_label(method), **kw
        )
        axes[0, 1].semilogy(t[::every], np.maximum(np.abs(momentum[::every]), 1e-17), **kw)
    tumbler, r = PROBLEMS[0], rows[0]
    axes[0, 0].set_ylabel("|E/E0 − 1|")
    axes[0, 1].set_ylabel("||L|/|L0| − 1|")
    for ax, what in zip(axes[0], ("kinetic energy", "angular momentum |L|"), strict=True):
        ax.set_xlabel("t (s)")
        ax.set_title(f"{what} drift", fontsize=9)
        ax.grid(True, which="major", alpha=0.3)
    fig.suptitle(
        f"Long horizon: {tumbler.title}, I = {tumbler.inertia} kg·m², ω0 = {tumbler.omega0} rad/s, "
        f"{max(x.steps for x in rows)} steps of dt = {r.dt:g} s (a curve ends where its run blew up)",
        fontsize=9.5,
    )
    fig.legend(loc="center left", bbox_to_anchor=(0.83, 0.5), fontsize=7.5, frameon=False)
    fig.tight_layout(rect=(0, 0, 0.83, 0.95))
    fig.savefig(path, dpi=110)
    plt.close(fig)


def damping(points: list[DampingPoint], path: Path) -> None:
    """|ΔE/E| and |Δ|L|/|L|| of one step against h|ω|, with the (h|ω|)² line."""
    plt = _pyplot()
    methods = sorted({p.method for p in points}, key=[p.method for p in points].index)
    fig, axes = plt.subplots(1, 2, figsize=(11.5, 5.2), squeeze=False)
    rates = sorted({p.rate for p in points})
    for i, method in enumerate(methods):
        for k, rate in enumerate(rates):
            chosen = [p for p in points if p.method == method and p.rate == rate]
            x = [p.h * p.rate for p in chosen]
            kw = style(method, methods) | {
                "linestyle": "-" if k == 0 else "--",
                "marker": "os"[k % 2],
                "markersize": 9 - 4 * i,  # the second method inside the first one's markers
                "linewidth": 3.0 - 1.8 * i,
            }
            sign = "loss" if chosen[0].energy_change < 0 else "gain"
            label = f"{method}, |ω0| = {rate:.2f} rad/s: {sign}"
            axes[0, 0].loglog(x, [abs(p.energy_change) for p in chosen], label=label, **kw)
            axes[0, 1].loglog(x, [abs(p.momentum_change) for p in chosen], **kw)
    xs = np.array([min(p.h * p.rate for p in points), max(p.h * p.rate for p in points)])
    first = points[0]
    c = abs(first.energy_change) / (first.h * first.rate) ** 2
    axes[0, 0].loglog(xs, c * xs**2, color="0.5", lw=0.8, label="∝ (h|ω|)²")
    axes[0, 0].set_ylabel("|ΔE / E| in one step")
    axes[0, 1].set_ylabel("|Δ|L| / |L|| in one step")
    for ax in axes[0]:
        ax.set_xlabel("h |ω0| (rad)")
        ax.grid(True, which="major", alpha=0.3)
    fig.suptitle(
        f"One step of MuJoCo from ω0 = s · {DAMPING_W0} rad/s (s = 1, 4), I = {PROBLEMS[0].inertia} kg·m², "
        f"h = {min(p.h for p in points):g} … {max(p.h for p in points):g} s\n"
        "implicitfast loses as much energy (and |L|) per step as Euler gains",
        fontsize=9.5,
    )
    fig.legend(loc="lower center", ncol=3, fontsize=7.5, frameon=False)
    fig.tight_layout(rect=(0, 0.1, 1, 0.93))
    fig.savefig(path, dpi=110)
    plt.close(fig)
