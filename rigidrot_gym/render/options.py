"""The options of a renderer (frame size and camera) and of what an env draws onto its
frames (the overlay), checked without importing PyBullet, so that an env rejects a bad one
when it is made rather than at its first frame."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from rigidrot_gym.physics.plumbing.validation import count

# Frame width and height, pixels: TinyRenderer allocates the whole frame on every call.
MAX_PIXELS = 16384
# Those a BodyRenderer takes; "overlay" is the env's, which draws it onto the renderer's frames.
RENDERER_OPTIONS = ("width", "height", "camera_distance", "camera_yaw", "camera_pitch")
RENDER_OPTIONS = (*RENDERER_OPTIONS, "overlay")


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


def flag(value: Any, name: str) -> bool:
    """``value`` as a bool: True or False (numpy's included), nothing that merely converts."""
    if not isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def render_options(options: Any) -> dict[str, Any]:
    """``options`` of an env's frames, checked: a dict (or ``None``) with keys among
    :data:`RENDER_OPTIONS`; those of :data:`RENDERER_OPTIONS` go to
    :class:`~rigidrot_gym.render.BodyRenderer`, ``overlay`` (a bool) to the env.

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
    return {key: _checked(key, value) for key, value in options.items()}


def _checked(key: str, value: Any) -> Any:
    if key in ("width", "height"):
        return pixels(value, key)
    if key == "overlay":
        return flag(value, key)
    return real(value, key, positive=key == "camera_distance")
