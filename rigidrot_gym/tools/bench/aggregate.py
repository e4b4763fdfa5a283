"""Scores across runs and tasks, the way rliable reports them (Agarwal et al., "Deep
Reinforcement Learning at the Edge of the Statistical Precipice", NeurIPS 2021).

A score matrix is ``(runs, tasks)``: one row per independent run (a training seed, or an
evaluation seed), one column per task. The interquartile mean (IQM) is the mean of the
middle 50 % of all its entries (a 25 %-trimmed mean, rliable's ``aggregate_iqm``); its
95 % confidence interval is the percentile interval of a stratified bootstrap (runs drawn
with replacement within each task, rliable's ``get_interval_estimates``) with a fixed
random state per score, so a score's interval is the same every time and whatever else is
in the table. A performance profile is, for
each threshold τ, the fraction of all entries above τ (rliable's
``create_performance_profile``), with bootstrap bands.

Needs rliable (the ``[ray]`` extra, or ``pip install rliable``).
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # matplotlib is imported where a figure is drawn
    from matplotlib.axes import Axes

BOOTSTRAP_REPS = 10_000


def _rliable():
    try:
        from rliable import library, metrics
    except ImportError as err:
        from gymnasium.error import DependencyNotInstalled

        raise DependencyNotInstalled(
            'rliable is not installed: pip install "rigidrot-gym[ray]" (or "rliable")'
        ) from err
    return library, metrics


def _matrices(scores: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each score as a float (runs, tasks) matrix; a vector is one task's runs.

    Raises:
        ValueError: naming the key, for a score that is empty, of more than two axes or not
            finite.
    """
    out = {}
    for key, value in scores.items():
        matrix = np.asarray(value, dtype=float)
        matrix = matrix.reshape(-1, 1) if matrix.ndim == 1 else matrix
        if matrix.ndim != 2 or matrix.size == 0 or not np.isfinite(matrix).all():
            raise ValueError(
                f"scores[{key!r}]: expected a finite (runs, tasks) matrix or a vector of runs, "
                f"got shape {np.shape(value)}" + ("" if matrix.size == 0 else " with non-finite entries")
            )
        out[key] = matrix
    return out


def iqm_intervals(
    scores: Mapping[str, np.ndarray], reps: int = BOOTSTRAP_REPS
) -> dict[str, tuple[float, float, float]]:
    """Per key, the IQM of its ``(runs, tasks)`` scores (or a vector of runs) and its 95 %
    stratified-bootstrap confidence interval: ``(iqm, low, high)``.

    Raises:
        ValueError: as :func:`_matrices`.
    """
    library, metrics = _rliable()
    out = {}
    for key, matrix in _matrices(scores).items():
        with warnings.catch_warnings():
            # rliable hands its random_state to arch, which asks for a Generator instead.
            warnings.filterwarnings("ignore", "random_state is deprecated", FutureWarning)
            # A random state of its own per key: a key's interval does not depend on the
            # keys bootstrapped before it (rliable draws them all from the one it is given).
            point, interval = library.get_interval_estimates(
                {key: matrix},
                lambda x: np.array([metrics.aggregate_iqm(x)]),
                reps=reps,
                random_state=np.random.RandomState(0),
            )
        out[key] = (float(point[key][0]), float(interval[key][0, 0]), float(interval[key][1, 0]))
    return out


def plot_profiles(scores: Mapping[str, np.ndarray], taus: np.ndarray, ax: Axes, reps: int = 2000) -> None:
    """Performance profiles of the ``(runs, tasks)`` scores onto ``ax``, with 95 %
    bootstrap bands (rliable's ``plot_performance_profiles``)."""
    library, _ = _rliable()
    from rliable import plot_utils

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "random_state is deprecated", FutureWarning)
        profiles, bands = library.create_performance_profile(_matrices(scores), taus, reps=reps)
    plot_utils.plot_performance_profiles(profiles, taus, performance_profile_cis=bands, ax=ax)
