"""The options of a renderer (frame size and camera), checked without importing PyBullet,
so that an env rejects a bad one when it is made rather than at its first frame."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from rigidrot_gym.physics.validation import count

# Frame width and height, pixels: TinyRenderer allocates the whole frame on every call.
MAX_PIXELS = 16384
RENDER_OPTIONS = ("width", "height", "camera_distance", "camera_yaw", "camera_pitch")


def real(value: Any, name: str, positive: bool = False) -> float:
    """``value`` as a finite float (a real number, not a bool or a string)."""
    need = "a finite positive number" if positive else "a finite number"
    if not isinstance(value, numbers.Real) or isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be {need}, got {value!r}")
    try:
        x = float(value)
    except OverflowError:
        x = np.inf
    if not np.isfinite(x) or (positive and x <= 0.0):
        raise ValueError(f"{name} must be {need}, got {value!r}")
    return x


def pixels(value: Any, name: str) -> int:
    """A frame dimension in [1, :data:`MAX_PIXELS`]."""
    return count(value, name, minimum=1, maximum=MAX_PIXELS)


def render_options(options: Any) -> dict[str, Any]:
    """``options`` for :class:`~rigidrot_gym.render.BodyRenderer`, checked: a dict (or
    ``None``) with keys among :data:`RENDER_OPTIONS`.

    Raises:
        ValueError: naming the option at fault.
    """
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise ValueError(f"render_options must be a dict or None, got {options!r}")
    unknown = sorted(str(k) for k in set(options) - set(RENDER_OPTIONS))
    if unknown:
        raise ValueError(f"unknown render option(s) {unknown}; valid: {', '.join(RENDER_OPTIONS)}")
    return {
        key: pixels(value, key)
        if key in ("width", "height")
        else real(value, key, positive=key == "camera_distance")
        for key, value in options.items()
    }
